//! Particle–collider contact messages, opt-in per collider ([`ReportParticleContacts`]): a
//! game plays a splash or opens a door when particles hit a collider.
//!
//! A contact starts in a step in which the contacts move a particle out of (or stop it at) a
//! collider it was not in contact with, and lasts while they do so in every step, or the
//! particle stays within [`CONTACT_SLACK`] of its radius from the surface (a particle at rest
//! on a floor is not pushed in every step: a landing leaves it g Δt of upward speed, which the
//! next step's gravity cancels before it reaches the floor). It ends in the first step in
//! which neither holds. [`ParticleContactStart`] and [`ParticleContactEnd`] are each written
//! once per contact, at the end of the step ([`Writeback`](crate::PbdStepSystems::Writeback)),
//! sorted by particle and collider.
//!
//! Limits:
//! - Where a particle touches several colliders in one substep (a corner, a seam between two
//!   tiles), the last one it touched is credited with the whole contact, impulse and normal
//!   (as the `avian` coupling's impulses are): a reported collider can miss a start there, or
//!   take its neighbour's impulse.
//! - Fluid resting on a collider is held by the density of the collider's boundary samples,
//!   not by its contacts: the messages are of the contacts (a drop that lands, water that
//!   presses onto the surface), and their impulses leave out the pressure of the samples.
//! - Particles do not meet avian sensors (they are not obstacles), so the marker on a sensor
//!   reports nothing; a region that watches particles is a query of their positions (as
//!   [`FluidSink`](crate::emitters::FluidSink) does).

use bevy::platform::collections::HashMap;
use bevy::prelude::*;

use crate::collider::ColliderContactState;
use crate::particle::{SolverIndex, SolverState};

/// Marker on a collider ([`ParticleCollider`](crate::collider::ParticleCollider), or with the
/// feature `avian` an avian `Collider`): its particle contacts are written as
/// [`ParticleContactStart`] and [`ParticleContactEnd`] messages (module docs). Without it,
/// none are (nothing is recorded: no cost).
#[derive(Component, Reflect, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[reflect(Component, Default)]
pub struct ReportParticleContacts;

/// A particle began touching a collider with [`ReportParticleContacts`] in this step.
#[derive(Message, Debug, Clone, Copy, PartialEq)]
pub struct ParticleContactStart {
    /// The particle.
    pub particle: Entity,
    /// The collider's entity.
    pub collider: Entity,
    /// The collider's rigid body (with `avian`, its `ColliderOf`; `None` for a
    /// [`ParticleCollider`](crate::collider::ParticleCollider), also on an entity that has an
    /// avian collider too), if any.
    pub body: Option<Entity>,
    /// Where it touched: the collider's surface under the particle (m), at the last substep
    /// of the step that touched it.
    pub point: Vec2,
    /// The collider's outward normal there (unit).
    pub normal: Vec2,
    /// The impulse the contact gave the particle over the step (N·s): its mass times the
    /// velocity the contact changed (the push out and friction, and restitution). Against a
    /// still collider its normal part is about m |vₙ| at impact, plus m |g| Δt of the resting
    /// contact's share of the step.
    pub impulse: Vec2,
}

/// A particle stopped touching a collider with [`ReportParticleContacts`] in this step (or one
/// of them was despawned or lost the marker).
#[derive(Message, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParticleContactEnd {
    /// The particle.
    pub particle: Entity,
    /// The collider's entity.
    pub collider: Entity,
    /// The collider's rigid body, if any.
    pub body: Option<Entity>,
}

/// A contact lasts while the particle's centre is within (1 + `CONTACT_SLACK`) r of the
/// collider's surface, r its radius.
pub const CONTACT_SLACK: f32 = 0.25;

/// A contact in the running step.
#[derive(Debug, Clone, Copy)]
struct Touching {
    body: Option<Entity>,
    point: Vec2,
    normal: Vec2,
    impulse: Vec2,
}

/// The reported contacts of the running step and of the last one.
#[derive(Resource, Debug, Default)]
pub(crate) struct ContactReports {
    /// (particle, collider) → the contact, in this step.
    step: HashMap<(Entity, Entity), Touching>,
    /// The contacts of the last step, sorted, with their bodies.
    last: Vec<((Entity, Entity), Option<Entity>)>,
    /// Scratch: this step's contacts, sorted.
    sorted: Vec<((Entity, Entity), Touching)>,
}

/// [`Prepare`](crate::PbdStepSystems::Prepare), after the step's colliders are listed: marks
/// those with [`ReportParticleContacts`].
pub(crate) fn mark_reported_colliders(
    reported: Query<Entity, With<ReportParticleContacts>>,
    mut contacts: ResMut<ColliderContactState>,
) {
    for entity in &reported {
        for collider in contacts.parts_of_mut(entity) {
            collider.report = true;
        }
    }
}

/// [`UpdateVelocities`](crate::PbdSubstepSystems::UpdateVelocities), after restitution: adds
/// the substep's contacts with reported colliders to the step's.
pub(crate) fn record_reported_contacts(
    time: Res<Time>,
    state: Res<SolverState>,
    contacts: Res<ColliderContactState>,
    mut reports: ResMut<ContactReports>,
) {
    if !contacts.colliders.iter().any(|c| c.report) {
        return;
    }
    let inv_dt = 1.0 / time.delta_secs();
    for (row, collider, impulse, point, normal) in contacts.contact_impulses(&state, inv_dt) {
        if !collider.report || !impulse.is_finite() {
            continue;
        }
        let key = (state.entities[row], collider.key.0);
        let touching = reports.step.entry(key).or_insert(Touching {
            body: collider.rigid_body,
            point,
            normal,
            impulse: Vec2::ZERO,
        });
        touching.point = point;
        touching.normal = normal;
        touching.impulse += impulse;
    }
}

/// [`Writeback`](crate::PbdStepSystems::Writeback): the contacts that started and ended in
/// this step, as messages.
pub(crate) fn send_contact_messages(
    mut reports: ResMut<ContactReports>,
    (state, contacts, indices): (
        Res<SolverState>,
        Res<ColliderContactState>,
        Query<&SolverIndex>,
    ),
    mut started: MessageWriter<ParticleContactStart>,
    mut ended: MessageWriter<ParticleContactEnd>,
) {
    let reports = &mut *reports;
    if reports.step.is_empty() && reports.last.is_empty() {
        return;
    }
    reports.sorted.clear();
    reports.sorted.extend(reports.step.drain());
    reports.sorted.sort_unstable_by_key(|&(key, _)| key);
    let (now, last) = (&reports.sorted, &reports.last);
    let was = |key| last.binary_search_by_key(&key, |&(k, _)| k).is_ok();
    for &((particle, collider), t) in now.iter().filter(|(key, _)| !was(*key)) {
        started.write(ParticleContactStart {
            particle,
            collider,
            body: t.body,
            point: t.point,
            normal: t.normal,
            impulse: t.impulse,
        });
    }
    let is = |key| now.binary_search_by_key(&key, |&(k, _)| k).is_ok();
    let mut kept = Vec::new();
    for &((particle, collider), body) in last.iter().filter(|(key, _)| !is(*key)) {
        if still_touching(&state, &contacts, &indices, particle, collider) {
            kept.push(((particle, collider), body));
            continue;
        }
        ended.write(ParticleContactEnd {
            particle,
            collider,
            body,
        });
    }
    reports.last.clear();
    (reports.last).extend(now.iter().map(|&(key, t)| (key, t.body)));
    reports.last.extend(kept);
    reports.last.sort_unstable_by_key(|&(key, _)| key);
}

/// Whether `particle` is within (1 + [`CONTACT_SLACK`]) r of a reported part of `collider`
/// at the end of the step.
fn still_touching(
    state: &SolverState,
    contacts: &ColliderContactState,
    indices: &Query<&SolverIndex>,
    particle: Entity,
    collider: Entity,
) -> bool {
    let Some(row) = indices
        .get(particle)
        .ok()
        .and_then(|&index| state.row_of(particle, index))
    else {
        return false;
    };
    let (x, r) = (
        state.x[row],
        contacts.radius.get(row).copied().unwrap_or(0.0),
    );
    contacts.colliders[contacts.parts(collider)]
        .iter()
        .filter(|c| c.report)
        .any(|c| {
            let local = c.end.inverse_transform_point(x);
            c.geometry.surface(local, Vec2::ZERO).distance < r * (1.0 + CONTACT_SLACK)
        })
}
