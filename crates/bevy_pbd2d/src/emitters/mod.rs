//! Taps, drains and lifetimes for fluid (issue 35, item 6): [`FluidEmitter`] pours particles
//! that never overlap anything, [`FluidSink`] despawns the fluid that enters it and
//! [`ParticleLifetime`] the fluid whose time is up; [`EmitterStopped`] says when an emitter
//! stops at a limit. All of it runs at the end of a step, after the positions are written
//! (the particles emitted join the next step); with none of these components in the world
//! it costs a look at three empty queries.
//!
//! As LiquidFun's testbed faucet (`RadialEmitter`: rate, speed, size, lifetime) and
//! `b2ParticleSystem::SetMaxParticleCount` / `SetParticleLifetime` /
//! `DestroyParticlesInShape`, with two differences: our nozzle emits on a lattice of slots
//! 2r apart and only into free ones (LiquidFun's places particles at random in its box,
//! overlapping), and a limit is reported once as a message rather than by a silent refusal.

mod components;
mod drain;
mod emit;

use bevy::prelude::*;

pub use components::{
    DrainedCount, EmittedBy, EmittedParticles, EmitterState, FluidEmitter, FluidSink,
    ParticleLifetime,
};

use crate::error::PbdError;
use crate::schedule::{PbdSchedule, PbdWritten, step_allowed};

/// A slot of a [`FluidEmitter`] emits only when no particle is closer to it than this times
/// the spacing 2r: 0.95 (a particle leaving the slot frees it a little before it is a full
/// spacing away, whatever rounding its path had).
pub const SPAWN_CLEARANCE: f32 = 0.95;

/// Written once when a [`FluidEmitter`] stops pouring: at its
/// [`max_count`](FluidEmitter::max_count) or the crate's
/// [`MAX_PARTICLES`](crate::error::MAX_PARTICLES) ([`PbdError::TooManyParticles`]), or with an
/// invalid setting (the error names it). It resumes by itself when the limit allows (a
/// drain, a lifetime, a despawn) or the setting is mended, and writes this again at its next
/// stop.
#[derive(Message, Debug, Clone, PartialEq)]
pub struct EmitterStopped {
    /// The emitter.
    pub emitter: Entity,
    /// Why.
    pub reason: PbdError,
}

/// [`FluidEmitter`], [`FluidSink`] and [`ParticleLifetime`] (module docs), at the end of each
/// step that ran, in [`PbdStepSystems::Writeback`](crate::PbdStepSystems::Writeback).
#[derive(Debug, Clone, Copy, Default)]
pub struct EmitterPlugin;

impl Plugin for EmitterPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<FluidEmitter>()
            .register_type::<EmitterState>()
            .register_type::<EmittedBy>()
            .register_type::<EmittedParticles>()
            .register_type::<FluidSink>()
            .register_type::<DrainedCount>()
            .register_type::<ParticleLifetime>()
            .add_message::<EmitterStopped>()
            .add_systems(
                PbdSchedule,
                (
                    drain::drain_fluid,
                    drain::expire_particles,
                    emit::emit_fluid,
                )
                    .chain()
                    .in_set(PbdWritten)
                    .run_if(step_allowed),
            );
    }
}
