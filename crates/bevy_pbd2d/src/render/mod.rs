//! Rendering for games (feature `render`): cloth, ropes and blobs as textured meshes skinned to
//! their particles, and fluid as a smooth, shaded surface, all in Bevy's own 2D pipeline
//! (`Mesh2d`, `Material2d`, render layers and a camera rendering to an `Image`; no compute
//! shader, nothing WebGL2 lacks). The gizmo drawing of feature `debug_render` stays the
//! reference look; this is the look of a game.
//!
//! A body opts in with a component on its root (the builders' roots carry what the defaults
//! need: [`ClothGrid`](crate::scenes::ClothGrid), [`RopeBody`](crate::scenes::RopeBody), the
//! particles' [`ParticleRadius`](crate::collider::ParticleRadius) and
//! [`ShapeRest`](crate::shape_matching::ShapeRest)):
//!
//! | on a body's root | draws |
//! |---|---|
//! | [`ClothMesh`] | the cloth's grid as a triangle mesh with UVs; a torn constraint takes its triangles away |
//! | [`RopeMesh`] | a strip of a given width along the rope, UVs along its rest length so that a texture repeats |
//! | [`BlobMesh`] | the blob's rest shape triangulated, its outline pushed out by the particles' radius, skinned to its particles |
//! | [`FluidSurface`] | the body's fluid particles as one smooth surface ([`fluid`]) |
//!
//! The three meshes go on the root itself: a `Mesh2d` whose vertices are the particles' world
//! positions, brought into the root's frame (keep the root's `Transform` at the origin, or
//! anywhere: the mesh follows the particles either way; its z orders the body among sprites).
//! Its material is the root's `MeshMaterial2d<M>` for any `Material2d` `M` with
//! [`BodyFill::Custom`], or a `ColorMaterial` the plugin makes and keeps from the fill
//! ([`BodyFill::Color`], [`BodyFill::Texture`]). A texture that should repeat along a rope needs
//! a sampler with `ImageAddressMode::Repeat`.
//!
//! The vertices are written in place every frame in `PostUpdate` ([`PbdRenderSystems::Update`],
//! after the last fixed step of the frame, before Bevy sends changed meshes to the GPU): after
//! each frame's steps the mesh's vertices are the particles' positions, and nothing is
//! allocated per frame once a body's mesh is built. [`PbdRender::enabled`] hides everything
//! (the demos' switch back to the reference dots and lines).
//!
//! Needs Bevy's 2D renderer (`DefaultPlugins` with `bevy_sprite_render`) added before
//! [`PbdPlugins`](crate::PbdPlugins); without a renderer (tests, servers) the meshes are still
//! built and updated, and nothing is drawn.

pub mod blob;
pub mod cloth;
mod fill;
pub mod fluid;
pub mod rope;
mod skin;

pub use blob::BlobMesh;
pub use cloth::ClothMesh;
pub use fill::BodyFill;
pub use fluid::{ColorMixing, FluidSurface, FluidSurfaceSettings, ParticleColor};
pub use rope::RopeMesh;

use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy::prelude::*;

/// Draws bodies whose roots carry [`ClothMesh`], [`RopeMesh`], [`BlobMesh`] or
/// [`FluidSurface`] (module docs). Part of [`PbdPlugins`](crate::PbdPlugins) with the
/// `render` feature; add it after Bevy's `DefaultPlugins`.
#[derive(Debug, Clone, Copy)]
pub struct PbdRenderPlugin {
    /// The schedule its systems run in ([`PbdRenderSystems`]). Default `PostUpdate`, where
    /// they are ordered after transform propagation and camera updates and before Bevy sends
    /// changed assets to the GPU; in another schedule the game orders them.
    pub schedule: InternedScheduleLabel,
}

impl Default for PbdRenderPlugin {
    fn default() -> Self {
        Self::new(PostUpdate)
    }
}

impl PbdRenderPlugin {
    /// Runs the render systems in `schedule` instead of `PostUpdate`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
        }
    }
}

/// The render plugin's systems, in `PostUpdate`, in this order, after transform propagation
/// and before Bevy's `AssetEventSystems` and visibility propagation (so that the meshes
/// written and shown or hidden this frame are drawn so this frame).
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PbdRenderSystems {
    /// Builds a body's mesh when its render component is added or its particles, grid or
    /// constraints change (allocates), and keeps the materials made from [`BodyFill`].
    Build,
    /// Writes the vertices from the particles' positions (allocates nothing).
    Update,
}

/// The render plugin's switch.
#[derive(Resource, Reflect, Debug, Clone, PartialEq)]
#[reflect(Resource, Default)]
pub struct PbdRender {
    /// Draw the bodies and the fluid surface. Off, every mesh the plugin manages is hidden
    /// (its `Visibility` set to `Hidden`, and restored when switched back on) and the fluid's
    /// off-screen pass is not run. Default `true`.
    pub enabled: bool,
}

impl Default for PbdRender {
    fn default() -> Self {
        Self { enabled: true }
    }
}

impl Plugin for PbdRenderPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<PbdRender>()
            .init_resource::<PbdRender>();
        // Colour mixing is part of the step (it needs no assets), and of the fluid's (a
        // game that disabled the fluid plugin has no fluid system).
        app.register_type::<ColorMixing>();
        if app.is_plugin_added::<crate::fluid::FluidPlugin>() {
            app.add_systems(
                crate::schedule::PbdSchedule,
                fluid::mixing::mix_colors
                    .in_set(crate::schedule::PbdWritten)
                    .run_if(crate::schedule::step_allowed),
            );
        }
        // Meshes and materials are assets: without Bevy's asset and mesh plugins (a headless
        // app of `MinimalPlugins`) there is nothing to draw with.
        if !app.world().contains_resource::<Assets<Mesh>>() {
            debug!(
                "bevy_pbd2d: no mesh assets (add Bevy's AssetPlugin and MeshPlugin before PbdPlugins): the render plugin draws nothing"
            );
            return;
        }
        let schedule = self.schedule;
        app.configure_sets(
            schedule,
            (PbdRenderSystems::Build, PbdRenderSystems::Update)
                .chain()
                .after(TransformSystems::Propagate)
                .before(bevy::asset::AssetEventSystems),
        )
        .add_plugins((
            fill::FillPlugin(schedule),
            cloth::ClothMeshPlugin(schedule),
            rope::RopeMeshPlugin(schedule),
            blob::BlobMeshPlugin(schedule),
            fluid::FluidSurfacePlugin(schedule),
        ))
        .add_systems(
            schedule,
            skin::show_or_hide.in_set(PbdRenderSystems::Update),
        );
    }
}
