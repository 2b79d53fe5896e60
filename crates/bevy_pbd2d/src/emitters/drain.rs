//! [`drain_fluid`] and [`expire_particles`]: fluid leaves through drains and when its time is
//! up.

use bevy::ecs::entity::EntityHashSet;
use bevy::prelude::*;

use super::components::{DrainedCount, FluidSink, ParticleLifetime};
use crate::collider::sync::{Ancestors, collider_pose};
use crate::fluid::FluidParticle;
use crate::particle::Position;

/// [`PbdWritten`](crate::schedule::PbdWritten): every [`FluidSink`] despawns the fluid
/// particles inside it at the end of the step, and counts them (before lifetimes end, so a
/// particle drained as its time ends is counted).
#[allow(clippy::type_complexity)]
pub(crate) fn drain_fluid(
    mut commands: Commands,
    mut sinks: Query<(
        &FluidSink,
        (&Transform, Option<&ChildOf>),
        &mut DrainedCount,
    )>,
    ancestors: Ancestors,
    fluid: Query<(Entity, &Position), With<FluidParticle>>,
) {
    // A particle where two drains overlap is counted by the first only.
    let mut gone = EntityHashSet::default();
    for (sink, at, mut drained) in &mut sinks {
        let Some(pose) = collider_pose(at, &ancestors) else {
            continue;
        };
        let inverse = pose.inverse();
        for (entity, position) in &fluid {
            let local = inverse.transform_point(position.0).abs();
            if local.cmple(sink.half_size).all() && gone.insert(entity) {
                commands.entity(entity).try_despawn();
                drained.0 += 1;
            }
        }
    }
}

/// What is left of a lifetime, in steps, that counts as none: 10⁻³ (the rounding of the
/// sum of Δt's, so a 0.1 s lifetime ends after 20 steps of 5 ms, not 21).
const EXPIRY_SLACK: f32 = 1e-3;

/// [`PbdWritten`](crate::schedule::PbdWritten): every fluid particle's [`ParticleLifetime`]
/// loses the step's Δt; those at 0 or below (within [`EXPIRY_SLACK`] of a step) are
/// despawned.
pub(crate) fn expire_particles(
    mut commands: Commands,
    time: Res<Time>,
    mut particles: Query<(Entity, &mut ParticleLifetime), With<FluidParticle>>,
) {
    let dt = time.delta_secs();
    for (entity, mut lifetime) in &mut particles {
        lifetime.0 -= dt;
        // A NaN lifetime ends too.
        if lifetime.0.partial_cmp(&(EXPIRY_SLACK * dt)) != Some(core::cmp::Ordering::Greater) {
            commands.entity(entity).try_despawn();
        }
    }
}
