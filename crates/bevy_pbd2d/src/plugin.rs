//! [`PbdPlugin`]: registers components, resources and the step systems.

use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel, SingleThreadedExecutor};
use bevy::prelude::*;

use crate::cloth::{ClothParticle, FixedCorners};
use crate::constraints::distance::{DistanceConstraint, solve_distance_constraints};
use crate::constraints::tether::LongRangeAttachment;
use crate::fluid::{self, BoundaryParticle, FluidParticle, FluidSettings, PseudoMass};
use crate::integrator::{predict, update_velocities};
use crate::neighbors::NeighborState;
use crate::particle::{InverseMass, KinematicTarget, Particle, Position, SolverIndex, Velocity};
use crate::schedule::{PbdSchedule, PbdSystems};
use crate::settings::{Gravity, SolverSettings};
use crate::solver::SolverState;
use crate::stats::{self, PbdStats};
use crate::sync;

/// Adds 2D position-based dynamics to an app.
///
/// Runs the [`PbdSystems`] sets (in [`PbdSchedule`]) once per run of `schedule` (default
/// `FixedUpdate`, so one step per fixed timestep, Δt = `Time<Fixed>::timestep()`). Inserts [`Gravity`], [`SolverSettings`],
/// [`FluidSettings`], [`PbdStats`] with their defaults unless the app already has them.
/// Needs `TaskPoolPlugin` and `TimePlugin` (part of `MinimalPlugins` and `DefaultPlugins`).
#[derive(Debug, Clone)]
pub struct PbdPlugin {
    schedule: InternedScheduleLabel,
}

impl Default for PbdPlugin {
    fn default() -> Self {
        Self::new(FixedUpdate)
    }
}

impl PbdPlugin {
    /// Runs the simulation in `schedule` instead of `FixedUpdate`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
        }
    }
}

/// Runs one simulation step: the [`PbdSchedule`].
fn run_step(world: &mut World) {
    world.run_schedule(PbdSchedule);
}

/// Whether a step may run: Δt > 0 and all settings valid (else the reason is in
/// [`PbdStats::blocked`]).
fn step_allowed(stats: Res<PbdStats>) -> bool {
    stats.blocked.is_none()
}

/// First system of a step: checks Δt and settings, which may have been edited directly.
fn gate_step(
    time: Res<Time>,
    gravity: Res<Gravity>,
    solver: Res<SolverSettings>,
    fluid: Res<FluidSettings>,
    mut stats: ResMut<PbdStats>,
) {
    let dt = time.delta_secs();
    let reason = if !(dt > 0.0 && dt.is_finite()) {
        Some(format!("time step {dt} s is not > 0"))
    } else if !gravity.0.is_finite() {
        Some(format!("gravity {} is not finite", gravity.0))
    } else {
        solver
            .validate()
            .and(fluid.validate())
            .err()
            .map(|e| e.to_string())
    };
    if reason != stats.blocked {
        if let Some(reason) = reason.as_ref().filter(|_| dt > 0.0) {
            error!("bevy_pbd2d: simulation paused: {reason}");
        }
        stats.blocked = reason;
    }
}

impl Plugin for PbdPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<Particle>()
            .register_type::<Position>()
            .register_type::<Velocity>()
            .register_type::<InverseMass>()
            .register_type::<KinematicTarget>()
            .register_type::<SolverIndex>()
            .register_type::<DistanceConstraint>()
            .register_type::<LongRangeAttachment>()
            .register_type::<ClothParticle>()
            .register_type::<FixedCorners>()
            .register_type::<FluidParticle>()
            .register_type::<BoundaryParticle>()
            .register_type::<PseudoMass>()
            .register_type::<Gravity>()
            .register_type::<SolverSettings>()
            .register_type::<FluidSettings>()
            .register_type::<PbdStats>()
            .register_type::<SolverState>()
            .register_type::<fluid::density::DensityState>()
            .register_type::<fluid::viscosity::XsphState>();
        app.init_resource::<Gravity>()
            .init_resource::<SolverSettings>()
            .init_resource::<FluidSettings>()
            .init_resource::<PbdStats>()
            .init_resource::<SolverState>()
            .init_resource::<NeighborState>()
            .init_resource::<fluid::density::DensityState>()
            .init_resource::<fluid::viscosity::XsphState>();
        stats::register(app);

        app.add_observer(sync::mark_particles_dirty::<Add, Particle>)
            .add_observer(sync::mark_particles_dirty::<Remove, Particle>)
            .add_observer(sync::mark_particles_dirty::<Add, FluidParticle>)
            .add_observer(sync::mark_particles_dirty::<Remove, FluidParticle>)
            .add_observer(sync::mark_constraints_dirty::<Add, DistanceConstraint>)
            .add_observer(sync::mark_constraints_dirty::<Remove, DistanceConstraint>)
            .add_observer(sync::mark_constraints_dirty::<Add, LongRangeAttachment>)
            .add_observer(sync::mark_constraints_dirty::<Remove, LongRangeAttachment>)
            .add_observer(sync::mark_particles_stale::<KinematicTarget>)
            .add_observer(sync::mark_particles_stale::<Disabled>)
            .add_observer(sync::check_written_tick)
            .add_observer(fluid::boundary::mark_boundary_dirty::<Add, BoundaryParticle>)
            .add_observer(fluid::boundary::mark_boundary_dirty::<Remove, BoundaryParticle>);

        let mut step = Schedule::new(PbdSchedule);
        step.set_executor(SingleThreadedExecutor::new());
        app.add_schedule(step);
        app.add_systems(self.schedule, run_step);
        let schedule = PbdSchedule;
        for pair in PbdSystems::ORDER.windows(2) {
            app.configure_sets(schedule, pair[1].after(pair[0]));
        }
        for set in &PbdSystems::ORDER[1..] {
            app.configure_sets(schedule, set.run_if(step_allowed));
        }
        app.add_systems(
            schedule,
            (
                (stats::begin_step, gate_step).chain(),
                (
                    sync::detect_edits,
                    sync::rebuild_particle_rows,
                    sync::rebuild_constraint_rows,
                    sync::copy_particles_in,
                    fluid::boundary::update_boundary,
                )
                    .chain()
                    .run_if(step_allowed),
            )
                .chain()
                .in_set(PbdSystems::Prepare),
        )
        .add_systems(
            schedule,
            (fluid::cfl::limit_fluid_speed, predict)
                .chain()
                .in_set(PbdSystems::Predict),
        )
        .add_systems(
            schedule,
            fluid::find_fluid_neighbors.in_set(PbdSystems::FindNeighbors),
        )
        .add_systems(
            schedule,
            (
                solve_distance_constraints,
                fluid::density::solve_density_constraints,
            )
                .chain()
                .in_set(PbdSystems::SolveConstraints),
        )
        .add_systems(
            schedule,
            update_velocities.in_set(PbdSystems::UpdateVelocities),
        )
        .add_systems(
            schedule,
            (
                fluid::viscosity::apply_xsph_viscosity,
                fluid::cfl::limit_fluid_speed,
            )
                .chain()
                .in_set(PbdSystems::ApplyViscosity),
        )
        .add_systems(
            schedule,
            (sync::copy_particles_out, stats::end_step)
                .chain()
                .in_set(PbdSystems::Writeback),
        );
    }
}

/// [`PbdPlugin`] plus, with the `picking` and `debug_render` features, the picking backend
/// (`PbdPickingPlugin`) and gizmo drawing (`PbdDebugRenderPlugin`).
#[derive(Debug, Clone, Default)]
pub struct PbdPlugins {
    /// The simulation plugin (choose its schedule with [`PbdPlugin::new`]).
    pub core: PbdPlugin,
}

impl PluginGroup for PbdPlugins {
    fn build(self) -> bevy::app::PluginGroupBuilder {
        let group = bevy::app::PluginGroupBuilder::start::<Self>().add(self.core);
        #[cfg(feature = "picking")]
        let group = group.add(crate::picking::PbdPickingPlugin);
        #[cfg(feature = "debug_render")]
        let group = group.add(crate::debug_render::PbdDebugRenderPlugin);
        group
    }
}
