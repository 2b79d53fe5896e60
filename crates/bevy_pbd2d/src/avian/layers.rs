//! avian's `CollisionLayers` on particles, their bodies and colliders, as the step's
//! [`CollisionFilter`] ([`collider::layers`](crate::collider::layers)).

use avian2d::prelude::{Collider, CollisionLayers};
use bevy::prelude::*;

use crate::body::{BodyParticles, ParticleBody};
use crate::collider::layers::{CollisionFilter, Layers};
use crate::collider::samples::ColliderSampleOf;
use crate::collider::{ColliderContactState, ParticleCollider};
use crate::particle::{SolverIndex, SolverState};

impl From<CollisionLayers> for Layers {
    fn from(layers: CollisionLayers) -> Self {
        Self {
            memberships: layers.memberships.0,
            filters: layers.filters.0,
        }
    }
}

/// The particles with layers of their own.
type LayeredParticles<'w, 's> =
    Query<'w, 's, (Entity, &'static SolverIndex, &'static CollisionLayers)>;

/// The bodies with layers.
type LayeredBodies<'w, 's> =
    Query<'w, 's, (&'static CollisionLayers, &'static BodyParticles), With<ParticleBody>>;

/// What [`collect_collision_layers`] reads of the colliders with layers.
type LayeredColliders<'w, 's> =
    Query<'w, 's, (Entity, &'static CollisionLayers), Or<(With<Collider>, With<ParticleCollider>)>>;

/// [`Prepare`](crate::PbdStepSystems::Prepare), once the step's particle rows, colliders and
/// boundary samples are built. Only while some particle, or the root of some
/// [`ParticleBody`], has `CollisionLayers` (avian gives every collider the component, so the
/// colliders' alone do not switch the filter on): the layers of every particle row (its own,
/// else its body's, else [`Layers::ALL`]: a particle without layers meets every collider, as
/// before layers), of every collider part, and of every boundary sample (its collider's; a
/// sample of no collider meets every particle). Otherwise the filter is left empty, and
/// nothing is filtered.
pub(crate) fn collect_collision_layers(
    (particles, bodies, colliders): (LayeredParticles, LayeredBodies, LayeredColliders),
    (indices, sample_of): (Query<&SolverIndex>, Query<&ColliderSampleOf>),
    state: Res<SolverState>,
    mut contacts: ResMut<ColliderContactState>,
    mut filter: ResMut<CollisionFilter>,
) {
    let filter = &mut *filter;
    filter.rows.clear();
    filter.boundary.clear();
    if (particles.is_empty() && bodies.is_empty()) || state.is_empty() {
        return;
    }
    filter.rows.resize(state.len(), Layers::ALL);
    for (layers, members) in &bodies {
        for entity in members.iter() {
            let row = indices
                .get(entity)
                .ok()
                .and_then(|&index| state.row_of(entity, index));
            if let Some(row) = row {
                filter.rows[row] = (*layers).into();
            }
        }
    }
    for (entity, &index, layers) in &particles {
        if let Some(row) = state.row_of(entity, index) {
            filter.rows[row] = (*layers).into();
        }
    }
    for (entity, layers) in &colliders {
        for part in contacts.parts_of_mut(entity) {
            part.layers = (*layers).into();
        }
    }
    // A sample has its collider's layers (the step's parts of a collider share them).
    let contacts = &*contacts;
    filter
        .boundary
        .extend(state.boundary_entities.iter().map(|&sample| {
            sample_of.get(sample).map_or(Layers::ALL, |of| {
                (contacts.colliders[contacts.parts(of.0)].first())
                    .map_or(Layers::DEFAULT, |part| part.layers)
            })
        }));
}
