//! Fluid walls from colliders: every collider of the step (a [`ParticleCollider`](crate::collider::ParticleCollider), or with
//! the feature `avian` an avian `Collider`) carries Akinci boundary samples (\[AIA+12\]) on
//! its surface, so fluid next to it gets its density support from it and rests on it with
//! the density error and spacing it has on hand-placed samples.
//!
//! The samples are [`BoundaryParticle`]s with [`BoundaryDensityOnly`]: the collider's own
//! contacts, at the particle radius r and following its motion, keep the fluid off its
//! surface, so the samples need no contact discs. They are related to their collider by
//! [`ColliderSampleOf`] (despawned with it), placed at most 2r apart along its outline moved
//! r inwards (where the fluid's volume would go on: its particles rest r off the surface and
//! so 2r, the fluid's spacing, from the samples; without it, a floating box displaced a
//! shell r thick more than itself and floated high, 31 % submerged instead of 50 %), or on
//! the surface of a shape with no room inside (a segment, a polyline, a part thinner than 2r)
//! (every vertex included; r = `FluidSettings::particle_radius`, the spacing of the builders'
//! walls), regenerated when the shape or the fluid's radius changes, moved with the collider
//! and despawned when it stops being one. They exist only while there are fluid particles
//! in the simulation, or were once: a game without fluid pays nothing for them.
//!
//! **Pressure on bodies.** A sample of a dynamic body's collider passes the density solve's
//! push on the fluid back to the body: the boundary part of each fluid
//! particle's corrections, m Σ ω λᵢ Σₖ Ψₖ∇Wᵢₖ / (ρ0 Δt) (\[MM13\] eq. 12), is an impulse on
//! the particle, and its opposite is shared among the samples k near it in proportion to
//! their part of Σₖ Ψₖ∇Wᵢₖ (the reaction of \[AIA+12\] eq. 10, whose boundary forces
//! are the opposite of the fluid's). Fluid and bodies exchange momentum exactly.

use std::sync::Arc;

use bevy::ecs::entity_disabling::Disabled;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;

use crate::collider::ColliderContactState;
use crate::collider::geometry::Geometry;
use crate::collider::sync::world_bounds;
use crate::fluid::density::DensityState;
use crate::fluid::kernel::CubicSpline;
use crate::fluid::{BoundaryDensityOnly, BoundaryParticle, FluidSettings, NeighborState};
use crate::particle::{Position, SolverState};

/// Joins a boundary sample to the collider it was generated for; the other side
/// is [`ColliderSamples`].
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, FromWorld, Debug, PartialEq)]
#[relationship(relationship_target = ColliderSamples)]
pub struct ColliderSampleOf(#[entities] pub Entity);

impl FromWorld for ColliderSampleOf {
    /// A placeholder, for reflection (a loaded world writes the real entity).
    fn from_world(_: &mut World) -> Self {
        Self(Entity::PLACEHOLDER)
    }
}

/// The boundary samples of a collider, despawned with it. Maintained by Bevy from
/// the [`ColliderSampleOf`] components.
#[derive(Component, Reflect, Debug, Default, PartialEq, Eq)]
#[reflect(Component, FromWorld, Default)]
#[relationship_target(relationship = ColliderSampleOf, linked_spawn)]
pub struct ColliderSamples(Vec<Entity>);

impl core::ops::Deref for ColliderSamples {
    type Target = [Entity];

    fn deref(&self) -> &[Entity] {
        &self.0
    }
}

/// Where a collider's boundary sample sits in the collider's frame (m).
#[derive(Component, Reflect, Debug, Default, Clone, Copy, PartialEq)]
#[reflect(Component, Default)]
pub struct ColliderSample {
    /// Its position in the collider's frame (m).
    pub local: Vec2,
    /// The fluid particle radius it was spaced for (m).
    spacing_radius: f32,
}

/// Outlines of more samples than this (2r apart) are sampled only near the fluid, within
/// [`SAMPLED_MARGIN`] of its bounds: an avian half-space (a box 40 km wide) would have 2.4
/// million samples. Such a collider's samples are regenerated when the fluid comes within h
/// of the sampled region's edge, or the collider moves.
pub const MAX_OUTLINE_SAMPLES: usize = 4096;

/// How far beyond the fluid's bounds a long outline is sampled (m).
pub const SAMPLED_MARGIN: f32 = 2.0;

/// What a collider's samples were generated from.
#[derive(Debug)]
struct Sampled {
    /// Its parts.
    parts: Vec<Arc<Geometry>>,
    /// The fluid radius r they were spaced for (m).
    spacing: f32,
    /// For a long outline, the world region sampled and the collider's pose then.
    region: Option<((Vec2, Vec2), Isometry2d)>,
}

/// The samples' view of the last generated shape of each collider.
#[derive(Resource, Debug, Default)]
pub(crate) struct SampledShapes {
    shapes: HashMap<Entity, Sampled>,
    /// Whether there were fluid particles once.
    active: bool,
    /// The dynamic body of each collider of the step that has one.
    bodies: HashMap<Entity, Entity>,
}

/// The dynamic body of each boundary row (the samples of dynamic bodies' colliders), kept
/// while the boundary rows hold the same samples in the same order and each collider has the
/// same body: built once for them, not in every substep (comparing the inputs costs a pass
/// over the rows' entities and the colliders' bodies).
#[derive(Debug, Default)]
pub(crate) struct BodyRows {
    body_of: Vec<Option<Entity>>,
    /// The boundary rows' samples it was built for.
    rows: Vec<Entity>,
    /// The colliders' bodies it was built for.
    bodies: HashMap<Entity, Entity>,
}

impl BodyRows {
    /// The table for the current rows and bodies, rebuilt if either changed.
    fn update(
        &mut self,
        state: &SolverState,
        sampled: &SampledShapes,
        sample_of: &Query<&ColliderSampleOf>,
    ) -> &[Option<Entity>] {
        if self.rows != state.boundary_entities || self.bodies != sampled.bodies {
            self.rows.clone_from(&state.boundary_entities);
            self.bodies.clone_from(&sampled.bodies);
            self.body_of.clear();
            self.body_of
                .extend(state.boundary_entities.iter().map(|&e| {
                    let collider = sample_of.get(e).ok()?.0;
                    sampled.bodies.get(&collider).copied()
                }));
        }
        &self.body_of
    }
}

#[cfg_attr(not(feature = "avian"), allow(dead_code))]
impl SampledShapes {
    /// Whether a collider of the step with samples belongs to a dynamic body.
    pub(crate) fn has_bodies(&self) -> bool {
        !self.bodies.is_empty()
    }
}

/// [`Prepare`](crate::PbdStepSystems::Prepare), after the step's colliders are collected and
/// before the boundary arrays are rebuilt: generates the samples of new or reshaped colliders
/// (and of all when the fluid's radius changed), moves those of moved colliders and despawns
/// those of entities that are no colliders any more.
pub(crate) fn update_collider_samples(
    mut commands: Commands,
    contacts: Res<ColliderContactState>,
    owners: Query<(Entity, &ColliderSamples), Allow<Disabled>>,
    mut samples: Query<(&ColliderSample, &mut Position)>,
    settings: Option<Res<FluidSettings>>,
    state: Res<SolverState>,
    mut sampled: ResMut<SampledShapes>,
) {
    let Some(settings) = settings else {
        return;
    };
    let sampled = &mut *sampled;
    sampled.active |= state.fluid_count > 0;
    if !sampled.active {
        return;
    }
    let r = settings.particle_radius;
    let h = settings.support_radius;
    sampled.bodies.clear();
    // The fluid's bounds, for long outlines (computed once, if one asks).
    let mut fluid_bounds = None;
    let mut bounds = || {
        *fluid_bounds.get_or_insert_with(|| {
            let points = state.x[..state.fluid_count]
                .iter()
                .filter(|p| p.is_finite());
            points.fold(
                (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY)),
                |(lo, hi), &p| (lo.min(p), hi.max(p)),
            )
        })
    };
    let colliders = &contacts.colliders;
    // The step's colliders are sorted by (entity, part): one run of parts per entity.
    let mut at = 0;
    let mut present = HashMap::<Entity, ()>::default();
    while at < colliders.len() {
        let entity = colliders[at].key.0;
        let run = colliders[at..].partition_point(|c| c.key.0 == entity);
        let parts = &colliders[at..at + run];
        at += run;
        present.insert(entity, ());
        if let Some(body) = parts[0].body {
            sampled.bodies.insert(entity, body);
        }
        let pose = parts[0].end;
        let existing = owners.get(entity).ok().map(|(_, list)| list);
        let unchanged = sampled.shapes.get(&entity).is_some_and(|old| {
            old.spacing == r
                && old.parts.len() == parts.len()
                && (old.parts.iter().zip(parts))
                    .all(|(a, b)| Arc::ptr_eq(a, &b.geometry) || **a == *b.geometry)
                && old.region.is_none_or(|((lo, hi), at)| {
                    let (f_lo, f_hi) = bounds();
                    at == pose && (f_lo - h).cmpge(lo).all() && (f_hi + h).cmple(hi).all()
                })
        }) && existing.is_some_and(|list| !list.is_empty());
        if unchanged {
            for sample in existing.into_iter().flat_map(|l| l.iter()) {
                if let Ok((s, mut position)) = samples.get_mut(sample) {
                    let at = pose.transform_point(s.local);
                    if position.0 != at {
                        position.0 = at;
                    }
                }
            }
            continue;
        }
        for sample in existing.into_iter().flat_map(|l| l.iter()) {
            commands.entity(sample).despawn();
        }
        let length: f32 = parts.iter().map(|p| p.geometry.outline_length()).sum();
        let region = (length / (2.0 * r) > MAX_OUTLINE_SAMPLES as f32).then(|| {
            let (lo, hi) = bounds();
            ((lo - SAMPLED_MARGIN, hi + SAMPLED_MARGIN), pose)
        });
        // The region in the collider's frame: the bounds of its corners there.
        let local_region = region.map(|(world, _)| world_bounds(world, pose.inverse()));
        for part in parts {
            // One particle radius inside the surface, where the fluid's volume would go on
            // (its particles rest with their centres r off the surface, 2r from the samples:
            // the fluid's spacing), on the surface of a shape with no room inside.
            let inner = part.geometry.inset(r);
            let shape = inner.as_ref().unwrap_or(part.geometry.as_ref());
            for local in shape.outline_within(2.0 * r, local_region) {
                commands.spawn((
                    BoundaryParticle,
                    BoundaryDensityOnly,
                    Position(pose.transform_point(local)),
                    ColliderSample {
                        local,
                        spacing_radius: r,
                    },
                    ColliderSampleOf(entity),
                ));
            }
        }
        let sampled_parts = parts.iter().map(|p| p.geometry.clone()).collect();
        sampled.shapes.insert(
            entity,
            Sampled {
                parts: sampled_parts,
                spacing: r,
                region,
            },
        );
    }
    // Entities that are no colliders in this step (the component removed, the entity
    // disabled, an avian collider made a sensor) lose their samples.
    for (entity, list) in &owners {
        if !present.contains_key(&entity) {
            for sample in list.iter() {
                commands.entity(sample).despawn();
            }
        }
    }
    sampled
        .shapes
        .retain(|entity, _| present.contains_key(entity));
}

/// Each fluid particle's boundary push of this step ([`DensityState::boundary_push`]), as
/// opposite impulses (kg·m/s) at the samples near it that belong to dynamic bodies, with
/// their body, into `out` (module docs). `inv_dt` = 1/Δt (1/s).
#[cfg_attr(not(feature = "avian"), allow(dead_code))]
pub(crate) fn sample_impulses(
    (state, density, neighbors): (&SolverState, &DensityState, &NeighborState),
    (sampled, sample_of, body_rows): (&SampledShapes, &Query<&ColliderSampleOf>, &mut BodyRows),
    settings: &FluidSettings,
    inv_dt: f32,
    out: &mut Vec<(Vec2, Vec2, Entity)>,
) {
    out.clear();
    if sampled.bodies.is_empty() {
        return;
    }
    let kernel = CubicSpline::new(settings.support_radius);
    let mass = settings.particle_mass();
    let body_of = body_rows.update(state, sampled, sample_of);
    let rows = density.boundary_push.len().min(state.fluid_count);
    for i in 0..rows {
        let push = density.boundary_push[i];
        let list = neighbors.boundary_neighbors(i);
        if push == Vec2::ZERO || !list.iter().any(|&k| body_of[k as usize].is_some()) {
            continue;
        }
        let x = state.x[i];
        let gradient = |k: u32| {
            let k = k as usize;
            state.boundary_psi[k] * kernel.gradient(x - state.boundary_x[k])
        };
        let total: Vec2 = list.iter().map(|&k| gradient(k)).sum();
        let impulse = mass * inv_dt * push;
        for &k in list {
            let Some(body) = body_of[k as usize] else {
                continue;
            };
            let share = match total.length_squared() > 0.0 {
                true => gradient(k).dot(total) / total.length_squared(),
                false => 1.0 / list.len() as f32,
            };
            out.push((-share * impulse, state.boundary_x[k as usize], body));
        }
    }
}
