//! The colliders of a step: their shapes, poses at the step's start and end, materials and
//! broad phase, read from the components at [`Prepare`](crate::PbdStepSystems::Prepare); and
//! every particle row's collision radius.

use bevy::platform::collections::HashMap;
use bevy::prelude::*;

use crate::collider::ColliderContactState;
use crate::collider::components::{ColliderMaterial, ParticleCollider, ParticleRadius};
use crate::collider::geometry::Geometry;
use crate::fluid::FluidSettings;
use crate::particle::{SolverIndex, SolverState};
use crate::stats::PbdStats;

/// One collider as a step sees it.
#[derive(Debug, Clone)]
pub(crate) struct StepCollider {
    /// Its entity.
    pub(crate) entity: Entity,
    /// Its shape in its local frame.
    pub(crate) geometry: Geometry,
    /// Its pose at the start of the step (the end of the previous one) and at its end (now).
    pub(crate) start: Isometry2d,
    /// See [`StepCollider::start`].
    pub(crate) end: Isometry2d,
    /// Its material (checked).
    pub(crate) material: ColliderMaterial,
}

/// The 2D pose of a transform: translation in x, y and the rotation about z.
pub(crate) fn pose(transform: &GlobalTransform) -> Isometry2d {
    let (_, rotation, translation) = transform.to_scale_rotation_translation();
    let x = (rotation * Vec3::X).truncate();
    let rotation = x
        .try_normalize()
        .map_or(Rot2::IDENTITY, |x| Rot2::from_sin_cos(x.y, x.x));
    Isometry2d::new(translation.truncate(), rotation)
}

/// What a collider's pose is read from: its `Transform`, and its parent if it has one.
pub(crate) type ColliderPose = (&'static Transform, Option<&'static ChildOf>);

/// The pose of a collider now: the parent's `GlobalTransform` (propagated last frame) times
/// its own `Transform` (as set now), so that a collider moved in this frame's fixed step is
/// seen where it was put. `None` if it is not finite.
pub(crate) fn collider_pose(
    (transform, parent): (&Transform, Option<&ChildOf>),
    globals: &Query<&GlobalTransform>,
) -> Option<Isometry2d> {
    let world = match parent.and_then(|p| globals.get(p.parent()).ok()) {
        Some(parent) => parent.mul_transform(*transform),
        None => GlobalTransform::from(*transform),
    };
    let pose = pose(&world);
    (pose.translation.is_finite() && pose.rotation.is_finite()).then_some(pose)
}

/// The world bounds of local bounds `aabb` under `pose`.
fn world_bounds(aabb: (Vec2, Vec2), pose: Isometry2d) -> (Vec2, Vec2) {
    let (lo, hi) = aabb;
    let corners = [lo, Vec2::new(hi.x, lo.y), hi, Vec2::new(lo.x, hi.y)];
    let mut out = (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY));
    for c in corners {
        let p = pose.transform_point(c);
        out = (out.0.min(p), out.1.max(p));
    }
    out
}

/// What [`sync_colliders`] reads of a collider.
type ColliderData = (
    Entity,
    Ref<'static, ParticleCollider>,
    ColliderPose,
    Ref<'static, ColliderMaterial>,
);

/// [`Prepare`](crate::PbdStepSystems::Prepare), after the particles are copied in: the step's
/// colliders (sorted by entity), their poses, bounds and bins; the particles' radii when
/// there are colliders.
pub(crate) fn sync_colliders(
    colliders: Query<ColliderData>,
    globals: Query<&GlobalTransform>,
    radii: Query<(Entity, &SolverIndex, &ParticleRadius)>,
    fluid: Option<Res<FluidSettings>>,
    state: Res<SolverState>,
    mut contacts: ResMut<ColliderContactState>,
    mut stats: ResMut<PbdStats>,
) {
    stats.collider_contacts = 0;
    let contacts = &mut *contacts;
    let previous = std::mem::take(&mut contacts.poses);
    contacts.colliders.clear();
    for (entity, shape, transform, material) in &colliders {
        let geometry = match Geometry::new(&shape.0) {
            Ok(g) => g,
            Err(e) => {
                if shape.is_changed() {
                    warn!("collider {entity} is left out: {e}");
                }
                continue;
            }
        };
        let material = material.checked().unwrap_or_else(|| {
            if material.is_changed() {
                warn!(
                    "collider {entity}: {:?} is out of range, using the default material",
                    *material
                );
            }
            ColliderMaterial::default()
        });
        let Some(end) = collider_pose(transform, &globals) else {
            if shape.is_changed() {
                warn!("collider {entity} is left out: its transform is not finite");
            }
            continue;
        };
        let start = previous.get(&entity).copied().unwrap_or(end);
        contacts.colliders.push(StepCollider {
            entity,
            geometry,
            start,
            end,
            material,
        });
    }
    contacts.colliders.sort_by_key(|c| c.entity);
    contacts.poses = contacts
        .colliders
        .iter()
        .map(|c| (c.entity, c.end))
        .collect::<HashMap<_, _>>();
    if contacts.colliders.is_empty() || state.is_empty() {
        return;
    }

    // Radii: fluid rows from the fluid settings, others from their component or the default.
    let n = state.len();
    let fluid_radius = fluid.map_or(ParticleRadius::DEFAULT.0, |f| f.particle_radius);
    contacts.radius.clear();
    contacts.radius.resize(n, ParticleRadius::DEFAULT.0);
    contacts.radius[..state.fluid_count].fill(fluid_radius);
    for (entity, index, radius) in &radii {
        let row = index.row() as usize;
        if row >= state.fluid_count && row < n && state.entities[row] == entity {
            contacts.radius[row] = radius.0;
        }
    }
    let max_radius = contacts.radius.iter().copied().fold(0.0, f32::max);

    let bounds: Vec<(Vec2, Vec2)> = contacts
        .colliders
        .iter()
        .map(|c| {
            let (a0, a1) = world_bounds(c.geometry.aabb, c.start);
            let (b0, b1) = world_bounds(c.geometry.aabb, c.end);
            (a0.min(b0) - max_radius, a1.max(b1) + max_radius)
        })
        .collect();
    // Cells about the size of a collider, and not smaller than a few particles.
    let mean_extent = bounds
        .iter()
        .map(|(lo, hi)| (*hi - *lo).max_element())
        .sum::<f32>()
        / bounds.len() as f32;
    let cell = mean_extent.max(4.0 * max_radius).max(1e-3);
    contacts.bins.rebuild(&bounds, cell);
}
