//! The colliders of a step: their shapes, poses at the step's start and end, materials and
//! broad phase, read from the components at [`Prepare`](crate::PbdStepSystems::Prepare); and
//! every particle row's collision radius.

use std::sync::Arc;

use bevy::platform::collections::HashMap;
use bevy::prelude::*;

use crate::collider::ColliderContactState;
use crate::collider::components::{
    ColliderMaterial, ParticleCollider, ParticleRadius, TeleportCollider,
};
use crate::collider::geometry::Geometry;
use crate::collider::layers::Layers;
use crate::dynamics::PbdSubsteps;
use crate::fluid::FluidSettings;
use crate::particle::{SolverIndex, SolverState};
use crate::stats::PbdStats;

/// A collider part of a step: its entity and the index of the part (a compound shape has
/// several).
pub(crate) type ColliderKey = (Entity, u32);

/// One collider (part) as a step sees it.
#[derive(Debug, Clone)]
pub(crate) struct StepCollider {
    /// Its entity and part.
    pub(crate) key: ColliderKey,
    /// Its shape in its local frame, shared with the cache that keeps it while the
    /// collider's shape does not change ([`GeometryCache`]).
    pub(crate) geometry: Arc<Geometry>,
    /// Its pose at the start of the running substep and at its end: the step's poses
    /// ([`StepCollider::step`]) in a step of one substep, else the pose interpolated between
    /// them ([`substep_poses`]).
    pub(crate) start: Isometry2d,
    /// See [`StepCollider::start`].
    pub(crate) end: Isometry2d,
    /// Its pose at the start of the step (the end of the previous one) and at its end (now).
    pub(crate) step: [Isometry2d; 2],
    /// Its material (checked).
    pub(crate) material: ColliderMaterial,
    /// The dynamic rigid body that receives the particles' contact impulses, if any.
    #[cfg_attr(not(feature = "avian"), allow(dead_code))]
    pub(crate) body: Option<Entity>,
    /// The rigid body it belongs to (with `avian`: dynamic, kinematic or static), if any.
    pub(crate) rigid_body: Option<Entity>,
    /// Its collision layers ([`layers`](crate::collider::layers)).
    pub(crate) layers: Layers,
    /// Whether its contacts are reported ([`ReportParticleContacts`](crate::collider::ReportParticleContacts)).
    pub(crate) report: bool,
}

/// The rigid body of a collider: its entity and whether it is dynamic (receives the
/// particles' impulses).
pub(crate) type ColliderBody = Option<(Entity, bool)>;

/// The colliders' shapes of the last step and of this one, by entity: a collider whose shape
/// has not changed (Bevy's change detection) keeps its geometry, parts and all, instead of
/// having it built again every step (a triangle mesh is a part per triangle).
#[derive(Debug, Default)]
pub(crate) struct GeometryCache {
    last: HashMap<Entity, Vec<Arc<Geometry>>>,
    now: HashMap<Entity, Vec<Arc<Geometry>>>,
}

impl GeometryCache {
    /// Starts a step: what the last one did not use is dropped at the end of this one.
    pub(crate) fn begin_step(&mut self) {
        core::mem::swap(&mut self.last, &mut self.now);
        self.now.clear();
    }

    /// The parts of `entity`'s shape: the last step's if `changed` is false and it had them,
    /// else `build`'s. Kept for the next step.
    pub(crate) fn parts(
        &mut self,
        entity: Entity,
        changed: bool,
        build: impl FnOnce() -> Vec<Geometry>,
    ) -> &[Arc<Geometry>] {
        let parts = match self.last.remove(&entity) {
            Some(parts) if !changed => parts,
            _ => build().into_iter().map(Arc::new).collect(),
        };
        self.now.entry(entity).insert(parts).into_mut()
    }
}

impl ColliderContactState {
    /// Adds a collider part to this step; it starts the step where it ended the last one
    /// (where it is now, if it is new).
    pub(crate) fn push_collider(
        &mut self,
        key: ColliderKey,
        geometry: Arc<Geometry>,
        end: Isometry2d,
        material: ColliderMaterial,
        body: ColliderBody,
        teleported: bool,
    ) {
        let start = match self.poses.get(&key) {
            Some(&start) if !teleported => start,
            _ => end,
        };
        self.colliders.push(StepCollider {
            key,
            geometry,
            start,
            end,
            step: [start, end],
            material,
            body: body
                .filter(|&(_, dynamic)| dynamic)
                .map(|(entity, _)| entity),
            rigid_body: body.map(|(entity, _)| entity),
            layers: Layers::DEFAULT,
            report: false,
        });
    }
}

impl ColliderContactState {
    /// The parts of `entity` among the step's colliders (empty if it has none); valid once
    /// [`finish_colliders`] has sorted them.
    pub(crate) fn parts_of_mut(&mut self, entity: Entity) -> &mut [StepCollider] {
        let parts = self.parts(entity);
        &mut self.colliders[parts]
    }

    /// The indices of [`ColliderContactState::parts_of_mut`].
    pub(crate) fn parts(&self, entity: Entity) -> core::ops::Range<usize> {
        let from = self.colliders.partition_point(|c| c.key.0 < entity);
        from..self.colliders.partition_point(|c| c.key.0 <= entity)
    }
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

/// The ancestors of a collider, for its pose.
pub(crate) type Ancestors<'w, 's> = Query<'w, 's, (&'static Transform, Option<&'static ChildOf>)>;

/// Deepest hierarchy [`collider_pose`] follows.
const MAX_DEPTH: usize = 64;

/// The pose of a collider now: its `Transform` composed with its ancestors' `Transform`s (as
/// set now, not as propagated last frame), so that a collider moved in this frame's fixed
/// step, or the child of one, is seen where it was put. `None` if it is not finite.
pub(crate) fn collider_pose(
    (transform, parent): (&Transform, Option<&ChildOf>),
    ancestors: &Ancestors,
) -> Option<Isometry2d> {
    let mut world = GlobalTransform::from(*transform);
    let mut next = parent.map(ChildOf::parent);
    for _ in 0..MAX_DEPTH {
        let Some((t, up)) = next.and_then(|e| ancestors.get(e).ok()) else {
            break;
        };
        world = GlobalTransform::from(*t).mul_transform(world.compute_transform());
        next = up.map(ChildOf::parent);
    }
    let pose = pose(&world);
    (pose.translation.is_finite() && pose.rotation.is_finite()).then_some(pose)
}

/// The bounds of the box `aabb` under `pose` (a collider's local bounds in the world, or
/// with the inverse pose world bounds in its frame).
pub(crate) fn world_bounds(aabb: (Vec2, Vec2), pose: Isometry2d) -> (Vec2, Vec2) {
    let (lo, hi) = aabb;
    let corners = [lo, Vec2::new(hi.x, lo.y), hi, Vec2::new(lo.x, hi.y)];
    let mut out = (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY));
    for c in corners {
        let p = pose.transform_point(c);
        out = (out.0.min(p), out.1.max(p));
    }
    out
}

/// What [`collect_particle_colliders`] reads of a collider.
type ColliderData = (
    Entity,
    Ref<'static, ParticleCollider>,
    ColliderPose,
    Ref<'static, ColliderMaterial>,
    Has<TeleportCollider>,
);

/// [`Prepare`](crate::PbdStepSystems::Prepare), after the particles are copied in: starts the
/// step's list of colliders with the [`ParticleCollider`]s.
pub(crate) fn collect_particle_colliders(
    colliders: Query<ColliderData>,
    ancestors: Ancestors,
    mut contacts: ResMut<ColliderContactState>,
    mut stats: ResMut<PbdStats>,
) {
    stats.collider_contacts = 0;
    contacts.colliders.clear();
    contacts.geometries.begin_step();
    for (entity, shape, transform, material, teleported) in &colliders {
        let changed = shape.is_changed();
        let mut error = None;
        let parts = contacts.geometries.parts(entity, changed, || {
            Geometry::new(&shape.0)
                .map_err(|e| error = Some(e))
                .into_iter()
                .collect()
        });
        let Some(geometry) = parts.first().cloned() else {
            if let Some(e) = error.filter(|_| changed) {
                warn!("collider {entity} is left out: {e}");
            }
            continue;
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
        let Some(end) = collider_pose(transform, &ancestors) else {
            if changed {
                warn!("collider {entity} is left out: its transform is not finite");
            }
            continue;
        };
        contacts.push_collider((entity, 0), geometry, end, material, None, teleported);
    }
}

/// [`Prepare`](crate::PbdStepSystems::Prepare), after every collider of the step is listed:
/// sorts them (by entity and part: the order, and so the bits, do not depend on the ECS's
/// storage), keeps their poses for the next step, and gives the particles their radii and the
/// colliders their bins when there are colliders.
pub(crate) fn finish_colliders(
    radii: Query<(Entity, &SolverIndex, &ParticleRadius)>,
    fluid: Option<Res<FluidSettings>>,
    state: Res<SolverState>,
    mut contacts: ResMut<ColliderContactState>,
) {
    let contacts = &mut *contacts;
    contacts.colliders.sort_by_key(|c| c.key);
    contacts.poses = contacts
        .colliders
        .iter()
        .map(|c| (c.key, c.end))
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
            let (mut lo, mut hi) = (a0.min(b0), a1.max(b1));
            if c.start.rotation != c.end.rotation {
                // Substeps see it at rotations between the two: its shape stays within the
                // circle of its farthest corner about its origin.
                let (l, h) = c.geometry.aabb;
                let reach = [l, h, Vec2::new(l.x, h.y), Vec2::new(h.x, l.y)]
                    .iter()
                    .map(|p| p.length())
                    .fold(0.0, f32::max);
                for t in [c.start.translation, c.end.translation] {
                    (lo, hi) = (lo.min(t - reach), hi.max(t + reach));
                }
            }
            (lo - max_radius, hi + max_radius)
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

/// [`Predict`](crate::PbdSubstepSystems::Predict), first: each collider's poses at the start
/// and the end of the running substep, on the straight way from its pose at the step's start to
/// the one at its end (translation lerped, rotation slerped), so that a moving collider sweeps
/// each substep's share of its motion. The step's own poses at the step's ends (bit for bit).
pub(crate) fn substep_poses(
    substeps: Option<Res<Time<PbdSubsteps>>>,
    mut contacts: ResMut<ColliderContactState>,
) {
    let (t0, t1) = substeps.map_or((0.0, 1.0), |s| s.context().span());
    let at = |[from, to]: [Isometry2d; 2], t: f32| match t {
        0.0 => from,
        1.0 => to,
        t => Isometry2d::new(
            from.translation.lerp(to.translation, t),
            from.rotation.slerp(to.rotation, t),
        ),
    };
    for c in &mut contacts.colliders {
        (c.start, c.end) = (at(c.step, t0), at(c.step, t1));
    }
}

/// [`Writeback`](crate::PbdStepSystems::Writeback): removes the [`TeleportCollider`] markers
/// the step used.
pub(crate) fn clear_teleports(
    mut commands: Commands,
    teleported: Query<Entity, With<TeleportCollider>>,
) {
    for entity in &teleported {
        commands.entity(entity).remove::<TeleportCollider>();
    }
}
