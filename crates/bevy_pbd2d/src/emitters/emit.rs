//! [`emit_fluid`]: the taps pour, slot by slot, where nothing is in the way.

use bevy::prelude::*;

use super::components::{
    EmittedBy, EmittedParticles, EmitterState, FluidEmitter, ParticleLifetime,
};
use super::{EmitterStopped, SPAWN_CLEARANCE};
use crate::body::ParticleOf;
use crate::collider::sync::{Ancestors, collider_pose};
use crate::error::{MAX_PARTICLES, PbdError, particle_budget_within};
use crate::fluid::{FluidParticle, FluidSettings};
use crate::particle::{InverseMass, Particle, Position, Velocity};

/// An emitter's slot positions in the world (m): one every 2r across the nozzle, centred.
fn slots(emitter: &FluidEmitter, at: Isometry2d, spacing: f32) -> Vec<Vec2> {
    let count = ((emitter.nozzle_width / spacing + 1e-4).floor() as u32).max(1);
    let middle = 0.5 * (count - 1) as f32;
    (0..count)
        .map(|j| at.transform_point(Vec2::new((j as f32 - middle) * spacing, 0.0)))
        .collect()
}

/// [`PbdWritten`](crate::schedule::PbdWritten), after the step's positions are written: each
/// enabled [`FluidEmitter`] adds rate · Δt to what it owes and emits what it owes into its
/// free slots, in turn from where it left off, within its limits (component docs). Emitters
/// are taken in entity order and slots in order: the same world pours the same particles.
#[allow(clippy::type_complexity)]
pub(crate) fn emit_fluid(
    mut commands: Commands,
    time: Res<Time>,
    settings: Option<Res<FluidSettings>>,
    mut emitters: Query<(
        Entity,
        &FluidEmitter,
        (&Transform, Option<&ChildOf>),
        &mut EmitterState,
        Option<&EmittedParticles>,
    )>,
    ancestors: Ancestors,
    particles: Query<&Position, With<Particle>>,
    mut stopped: MessageWriter<EmitterStopped>,
) {
    // (No fluid without the fluid plugin: the emitters wait.)
    let Some(settings) = settings.filter(|_| !emitters.is_empty()) else {
        return;
    };
    let dt = time.delta_secs();
    let spacing = 2.0 * settings.particle_radius;
    let clearance2 = (SPAWN_CLEARANCE * spacing).powi(2);
    let Ok(w) = InverseMass::from_mass(settings.particle_mass()) else {
        return;
    };
    let mut alive = particles.iter().len() as u64;
    let mut order: Vec<_> = emitters.iter_mut().collect();
    order.sort_by_key(|e| e.0);
    // Particles this step's emitters placed (their positions are not components yet).
    let mut placed: Vec<Vec2> = Vec::new();
    for (entity, emitter, at, mut state, own) in order {
        if !emitter.enabled {
            continue;
        }
        let mut stop = |state: &mut EmitterState, reason: PbdError| {
            if !state.stopped {
                state.stopped = true;
                stopped.write(EmitterStopped {
                    emitter: entity,
                    reason,
                });
            }
        };
        if let Err(reason) = emitter.validate() {
            stop(&mut state, reason);
            continue;
        }
        let Some(at) = collider_pose(at, &ancestors) else {
            continue;
        };
        let slots = slots(emitter, at, spacing);
        state.owed = (state.owed + emitter.rate * dt).min(slots.len() as f32);
        let own = own.map_or(0, |p| p.len()) as u64;
        let (min, max) = slots
            .iter()
            .fold((Vec2::MAX, Vec2::MIN), |(a, b), &p| (a.min(p), b.max(p)));
        let mut near: Vec<Vec2> = particles
            .iter()
            .map(|p| p.0)
            .chain(placed.iter().copied())
            .filter(|p| p.cmpge(min - spacing).all() && p.cmple(max + spacing).all())
            .collect();
        let velocity = at.rotation * Vec2::Y * emitter.speed;
        let (mut emitted, mut limited) = (0u64, None);
        let first = state.next_slot as usize;
        for k in 0..slots.len() {
            if state.owed < 1.0 {
                break;
            }
            let slot = (first + k) % slots.len();
            let p = slots[slot];
            if near.iter().any(|q| q.distance_squared(p) < clearance2) {
                continue;
            }
            let limits = [
                emitter.max_count.map(|m| (own + emitted + 1, u64::from(m))),
                Some((alive + 1, MAX_PARTICLES)),
            ];
            if let Some(Err(reason)) = limits
                .into_iter()
                .flatten()
                .map(|(count, limit)| particle_budget_within(count, limit))
                .find(Result::is_err)
            {
                limited = Some(reason);
                break;
            }
            let mut particle = commands.spawn((
                FluidParticle,
                Position(p),
                Velocity(velocity),
                w,
                EmittedBy(entity),
            ));
            if let Some(body) = emitter.body {
                particle.insert(ParticleOf(body));
            }
            if let Some(lifetime) = emitter.lifetime {
                particle.insert(ParticleLifetime(lifetime));
            }
            if let Some(phase) = emitter.phase {
                // Its hook sets the particle's mass.
                particle.insert(phase);
            }
            placed.push(p);
            near.push(p);
            state.owed -= 1.0;
            state.next_slot = (slot as u32 + 1) % slots.len() as u32;
            emitted += 1;
            alive += 1;
        }
        state.emitted += emitted;
        match limited {
            Some(reason) => {
                state.owed = state.owed.min(1.0);
                stop(&mut state, reason);
            }
            None => state.stopped = false,
        }
    }
}
