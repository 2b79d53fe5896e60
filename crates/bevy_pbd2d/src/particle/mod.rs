//! Particles: an entity with [`Particle`] gets [`Position`], [`Velocity`] and [`InverseMass`].

mod components;
pub(crate) mod order;
pub mod runaway;
pub mod state;
pub(crate) mod sync;

use bevy::ecs::entity_disabling::Disabled;
use bevy::prelude::*;

pub use components::{
    FluidParticle, InverseMass, KinematicTarget, MASS_RANGE, Particle, Position, SolverIndex,
    Velocity,
};
pub use runaway::{ParticleRunaway, RunawayAction, RunawayGuard, RunawayReason};
pub use state::SolverState;

use crate::schedule::{PbdPrepared, PbdSchedule, PbdWritten, StepChecks};

/// Particles and the solver arrays: registers the particle components, keeps [`SolverState`]
/// in step with them (entity ↔ row maps, copy in at
/// [`Prepare`](crate::schedule::PbdStepSystems::Prepare), copy out at
/// [`Writeback`](crate::schedule::PbdStepSystems::Writeback)), and guards against runaway
/// particles ([`runaway`]). Every other simulation plugin works on its arrays.
#[derive(Debug, Clone, Copy, Default)]
pub struct ParticlePlugin;

impl Plugin for ParticlePlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<Particle>()
            .register_type::<FluidParticle>()
            .register_type::<Position>()
            .register_type::<Velocity>()
            .register_type::<InverseMass>()
            .register_type::<KinematicTarget>()
            .register_type::<SolverIndex>()
            .register_type::<SolverState>()
            .register_type::<RunawayGuard>()
            .init_resource::<SolverState>()
            .add_message::<ParticleRunaway>();
        StepChecks::add::<RunawayGuard>(app);
        app.add_observer(sync::mark_particles_dirty::<Add, Particle>)
            .add_observer(sync::mark_particles_dirty::<Remove, Particle>)
            .add_observer(sync::mark_particles_dirty::<Add, FluidParticle>)
            .add_observer(sync::mark_particles_dirty::<Remove, FluidParticle>)
            .add_observer(sync::mark_particles_dirty::<Add, Disabled>)
            .add_observer(sync::mark_particles_dirty::<Remove, Disabled>)
            .add_observer(sync::forget_row)
            .add_observer(sync::mark_particles_stale::<KinematicTarget>)
            .add_observer(sync::check_written_tick);
        app.add_systems(
            PbdSchedule,
            (
                (
                    sync::detect_edits,
                    runaway::guard_components,
                    sync::rebuild_particle_rows,
                    sync::copy_particles_in,
                )
                    .chain()
                    .in_set(PbdPrepared),
                sync::copy_particles_out.in_set(PbdWritten),
            ),
        );
    }
}
