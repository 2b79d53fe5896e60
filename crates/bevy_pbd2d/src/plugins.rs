//! [`PbdPlugins`]: every plugin of the crate, one per concern.

use bevy::app::PluginGroupBuilder;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

use crate::body::BodyPlugin;
use crate::collider::ColliderPlugin;
use crate::constraints::ConstraintsPlugin;
use crate::dynamics::IntegratorPlugin;
use crate::emitters::EmitterPlugin;
use crate::fluid::FluidPlugin;
use crate::particle::ParticlePlugin;
use crate::scenes::ScenesPlugin;
use crate::schedule::PbdSchedulePlugin;
use crate::shape_matching::ShapeMatchingPlugin;
use crate::solid_contacts::SolidContactsPlugin;

/// All of bevy_pbd2d's plugins, in this order (the crate docs have a table of them):
/// [`PbdSchedulePlugin`], [`ParticlePlugin`], [`IntegratorPlugin`], [`ConstraintsPlugin`],
/// [`FluidPlugin`], [`ColliderPlugin`], [`SolidContactsPlugin`], [`ShapeMatchingPlugin`], [`BodyPlugin`], [`ScenesPlugin`], and with the `picking`, `debug_render` and `render` features the picking backend
/// (`PbdPickingPlugin`), gizmo drawing (`PbdDebugRenderPlugin`) and the game look
/// (`PbdRenderPlugin`).
///
/// The simulation steps once per run of `FixedUpdate` (Δt = `Time<Fixed>::timestep()`), or of
/// the schedule given to [`PbdPlugins::new`]. Leave out what a game does not need, e.g. a
/// cloth-only game: `PbdPlugins::default().build().disable::<FluidPlugin>()`.
#[derive(Debug, Clone, Default)]
pub struct PbdPlugins {
    schedule: PbdSchedulePlugin,
}

impl PbdPlugins {
    /// Steps the simulation in `schedule` instead of `FixedUpdate` (e.g. `Update`, one step per
    /// frame of variable length).
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: PbdSchedulePlugin::new(schedule),
        }
    }
}

impl PluginGroup for PbdPlugins {
    fn build(self) -> PluginGroupBuilder {
        let group = PluginGroupBuilder::start::<Self>()
            .add(self.schedule)
            .add(ParticlePlugin)
            .add(IntegratorPlugin)
            .add(ConstraintsPlugin)
            .add(FluidPlugin)
            .add(EmitterPlugin)
            .add(ColliderPlugin)
            .add(SolidContactsPlugin)
            .add(ShapeMatchingPlugin)
            .add(BodyPlugin)
            .add(ScenesPlugin);
        #[cfg(feature = "avian")]
        let group = group.add(crate::avian::AvianCouplingPlugin);
        #[cfg(feature = "picking")]
        let group = group.add(crate::picking::PbdPickingPlugin);
        #[cfg(feature = "debug_render")]
        let group = group.add(crate::debug_render::PbdDebugRenderPlugin);
        #[cfg(feature = "render")]
        let group = group.add(crate::render::PbdRenderPlugin::default());
        group
    }
}
