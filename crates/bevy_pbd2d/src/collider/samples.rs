//! Fluid walls from colliders: every [`ParticleCollider`] carries Akinci boundary samples
//! (\[AIA+12\]) on its surface, so fluid next to it gets its density support from it, rests on
//! it with the density error and spacing it has on hand-placed samples, and is kept off it by
//! the samples' contact discs as well as by the collider.
//!
//! The samples are [`BoundaryParticle`] entities related to their collider by
//! [`ColliderSampleOf`] (despawned with it), placed at most 2r apart along its outline
//! (every vertex included; r = `FluidSettings::particle_radius`, the spacing of the builders'
//! walls), regenerated when the shape or the fluid settings change and moved with the
//! collider. They exist only while there are fluid particles in the simulation, or were once:
//! a game without fluid pays nothing for them.

use bevy::prelude::*;

use crate::collider::components::ParticleCollider;
use crate::collider::geometry::Geometry;
use crate::collider::sync::{Ancestors, ColliderPose, collider_pose};
use crate::fluid::{BoundaryParticle, FluidSettings};
use crate::particle::{Position, SolverState};

/// Joins a boundary sample to the [`ParticleCollider`] it was generated for; the other side
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

/// The boundary samples of a [`ParticleCollider`], despawned with it. Maintained by Bevy from
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

/// [`Prepare`](crate::PbdStepSystems::Prepare), before the boundary arrays are rebuilt:
/// generates the samples of new or reshaped colliders (and of all when the fluid's radius
/// changed) and moves those of moved colliders.
pub(crate) fn update_collider_samples(
    mut commands: Commands,
    colliders: Query<(
        Entity,
        Ref<ParticleCollider>,
        ColliderPose,
        Option<&ColliderSamples>,
    )>,
    ancestors: Ancestors,
    mut samples: Query<(&ColliderSample, &mut Position)>,
    settings: Option<Res<FluidSettings>>,
    state: Res<SolverState>,
    mut active: Local<bool>,
) {
    let Some(settings) = settings else {
        return;
    };
    *active |= state.fluid_count > 0;
    if !*active {
        return;
    }
    let r = settings.particle_radius;
    for (entity, shape, pose, existing) in &colliders {
        let Some(pose) = collider_pose(pose, &ancestors) else {
            continue;
        };
        let stale = existing.is_none_or(|list| {
            shape.is_changed()
                || list.is_empty()
                || samples
                    .get(list[0])
                    .is_ok_and(|(s, _)| s.spacing_radius != r)
        });
        if stale {
            if let Some(list) = existing {
                for sample in list.iter() {
                    commands.entity(sample).despawn();
                }
            }
            let Ok(geometry) = Geometry::new(&shape.0) else {
                continue;
            };
            for local in geometry.outline(2.0 * r) {
                commands.spawn((
                    BoundaryParticle,
                    Position(pose.transform_point(local)),
                    ColliderSample {
                        local,
                        spacing_radius: r,
                    },
                    ColliderSampleOf(entity),
                ));
            }
            continue;
        }
        for sample in existing.into_iter().flat_map(|l| l.iter()) {
            if let Ok((s, mut position)) = samples.get_mut(sample) {
                let at = pose.transform_point(s.local);
                if position.0 != at {
                    position.0 = at;
                }
            }
        }
    }
}
