//! Two-way coupling with [avian2d](https://docs.rs/avian2d) rigid bodies (feature `avian`).
//!
//! - **Obstacles with no extra component.** Every avian `Collider` (not a `Sensor`, and not
//!   an entity that also has a [`ParticleCollider`], which takes precedence) is an obstacle
//!   for particles exactly as a [`ParticleCollider`] is ([`collider`](crate::collider)): its
//!   shape converted exactly (balls, cuboids, capsules, segments, triangles, convex polygons,
//!   their rounded forms, polylines, heightfields, triangle meshes and compounds; voxels and
//!   custom shapes are left out with a warning; a `ColliderDisabled` one is left out), placed
//!   by avian's `Position` and `Rotation`,
//!   its motion between two of our steps its velocity. Its avian `Friction` and `Restitution`
//!   are its material (else a [`ColliderMaterial`] on it, else the default). Like any
//!   collider it carries boundary samples while there is fluid
//!   ([`collider::samples`](crate::collider::samples)), so water rests on it at ρ0.
//! - **Dynamic bodies receive the particles' impulses.** A particle's contacts change its
//!   momentum by m Δx/Δt (the velocity-changing part of their displacement, friction included)
//!   plus m Δv of restitution; the collider's `RigidBody::Dynamic` body receives the opposite
//!   impulse at the contact point (on the surface under the particle), through avian's
//!   `Forces`, at the end of our step. The fluid's pressure on its samples (the boundary
//!   part of the density solve's corrections) reaches it the same way, at the samples, after
//!   the density solve: a box of 0.25, 0.5 and 0.75 ρ0 floats 22.1, 43.7 and 67.1 %
//!   submerged (Archimedes: 25, 50, 75 %). Particle and body momentum together are conserved
//!   exactly. The body is of infinite mass within our step and reacts in avian's next step
//!   (explicit coupling, as LiquidFun's particle–body contacts): stable while a body is
//!   heavier than the particles that hit it in one step.
//!
//! - **Collision layers.** avian's `CollisionLayers` on a particle, or on its
//!   [`ParticleBody`](crate::body::ParticleBody)'s root (the particle's own win), and on a
//!   collider (avian's or a [`ParticleCollider`]) filter the particles' contacts by avian's
//!   rule (`CollisionLayers::interacts_with`). A particle passes a collider it does not
//!   interact with: no contact, and a fluid particle takes no density from its boundary
//!   samples. A particle without layers meets every collider, whatever the collider's layers
//!   (the layers a game gives its rigid bodies do not change its particles until it gives
//!   them layers too); a collider without them has avian's default
//!   ([`collider::layers`](crate::collider::layers)).
//! - **Gravity.** Our [`Gravity`](crate::dynamics::Gravity) follows avian's `Gravity` (copied
//!   before each step) while ours holds the value last copied (at first its default); once
//!   the game (or the panel) writes another value into ours, ours is the game's and is no
//!   longer changed. Particles and bodies then fall alike without setting both. (The takeover
//!   is seen by value: a game that writes the value ours already holds is not seen, and ours
//!   goes on following avian's.)
//! - **Contact messages** for particles touching an avian collider work as for any collider:
//!   [`ReportParticleContacts`](crate::collider::ReportParticleContacts) on it; the message's
//!   `body` is its `ColliderOf` body.
//!
//! **Order.** The simulation steps in `FixedUpdate` ([`PbdSystems::StepSimulation`](crate::PbdSystems)); avian
//! in `FixedPostUpdate` by default. Each fixed step: our step (particles against the bodies'
//! current poses; impulses into the bodies' velocities), then avian's (bodies move with those
//! impulses, gravity and their own contacts). Step avian elsewhere and ours follows it with
//! [`PbdPlugins::new`](crate::PbdPlugins::new) (e.g. both in `FixedPostUpdate`, ours
//! `.before(PhysicsSystems::First)` through the set [`PbdSystems`](crate::PbdSystems)).
//!
//! **Names.** Both preludes export a `Position` and a `Gravity`. Import both preludes with
//! globs and name the one you mean explicitly (an explicit `use` wins over a glob):
//! `use bevy_pbd2d::prelude::{Position, Gravity};` for particles, or
//! `avian2d::prelude::Position` for bodies. This crate's collider is [`ParticleCollider`],
//! so `Collider` is always avian's.

mod gravity;
mod layers;
mod shapes;

use std::sync::Arc;

use avian2d::prelude::{
    Collider, ColliderDisabled, ColliderOf, Forces, Friction, Restitution, RigidBody, Rotation,
    Sensor, WriteRigidBodyForces,
};
use bevy::prelude::*;

use crate::collider::geometry::Geometry;
use crate::collider::restitution::apply_restitution;
use crate::collider::samples::{
    BodyRows, ColliderSampleOf, SampledShapes, sample_impulses, update_collider_samples,
};
use crate::collider::sync::{collect_particle_colliders, finish_colliders};
use crate::collider::{
    ColliderContactState, ColliderContactSystems, ColliderMaterial, ParticleCollider,
};
use crate::fluid::boundary::update_boundary;
use crate::fluid::contacts::resolve_boundary_contacts;
use crate::fluid::density::{DensityState, solve_density_constraints};
use crate::fluid::{FluidSettings, NeighborState};
use crate::particle::SolverState;
use crate::schedule::{
    PbdPrepared, PbdSchedule, PbdStepSystems, PbdSubstepSchedule, PbdSubstepSystems,
};

/// avian colliders as obstacles, and the particles' impulses on avian's dynamic bodies (module
/// docs). Part of [`PbdPlugins`](crate::PbdPlugins) with the feature `avian`; needs avian's
/// `PhysicsPlugins` in the app for bodies to move.
#[derive(Debug, Clone, Copy, Default)]
pub struct AvianCouplingPlugin;

impl Plugin for AvianCouplingPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(
            PbdSchedule,
            (
                collect_avian_colliders
                    .in_set(PbdPrepared)
                    .after(collect_particle_colliders)
                    .before(finish_colliders),
                track_sample_pushes
                    .in_set(PbdPrepared)
                    .after(update_collider_samples),
                layers::collect_collision_layers
                    .in_set(PbdPrepared)
                    .after(finish_colliders)
                    .after(update_boundary),
                gravity::follow_avian_gravity
                    .in_set(PbdStepSystems::Prepare)
                    .before(PbdPrepared),
            ),
        )
        .add_systems(
            PbdSubstepSchedule,
            (
                apply_contact_impulses
                    .in_set(PbdSubstepSystems::UpdateVelocities)
                    .in_set(ColliderContactSystems)
                    .after(apply_restitution),
                apply_sample_impulses
                    .in_set(PbdSubstepSystems::SolveConstraints)
                    .after(solve_density_constraints)
                    .before(resolve_boundary_contacts)
                    .run_if(resource_exists::<FluidSettings>),
            ),
        );
    }
}

/// What [`collect_avian_colliders`] reads of a collider.
type AvianCollider = (
    Entity,
    Ref<'static, Collider>,
    Option<&'static ColliderOf>,
    Option<&'static avian2d::prelude::Position>,
    Option<&'static Rotation>,
    Option<&'static GlobalTransform>,
    (
        Option<&'static Friction>,
        Option<&'static Restitution>,
        Option<&'static ColliderMaterial>,
    ),
);

/// The avian colliders that are obstacles: not sensors, not disabled, not [`ParticleCollider`]s.
type Obstacles = (
    Without<Sensor>,
    Without<ColliderDisabled>,
    Without<ParticleCollider>,
);

/// [`Prepare`](crate::PbdStepSystems::Prepare): adds every avian collider to the step's
/// colliders, with its body when that is dynamic.
fn collect_avian_colliders(
    colliders: Query<AvianCollider, Obstacles>,
    bodies: Query<&RigidBody>,
    mut contacts: ResMut<ColliderContactState>,
    mut scratch: Local<Vec<Arc<Geometry>>>,
) {
    for (entity, collider, of, position, rotation, global, materials) in &colliders {
        let pose = match (position, rotation, global) {
            (Some(p), Some(r), _) => Isometry2d::new(p.0, Rot2::from_sin_cos(r.sin, r.cos)),
            (_, _, Some(g)) => crate::collider::sync::pose(g),
            _ => continue,
        };
        if !(pose.translation.is_finite() && pose.rotation.is_finite()) {
            continue;
        }
        let changed = collider.is_changed();
        let parts = contacts.geometries.parts(entity, changed, || {
            let mut parts = Vec::new();
            let shape = collider.shape_scaled().0.as_ref();
            if let Err(kind) = shapes::geometries(shape, Isometry2d::IDENTITY, &mut parts) {
                warn!("avian collider {entity}: {kind} has no particle contacts, left out");
            }
            parts
        });
        scratch.clear();
        scratch.extend_from_slice(parts);
        let material = match materials {
            (friction, restitution, own) if friction.is_some() || restitution.is_some() => {
                let base = own.copied().unwrap_or_default();
                ColliderMaterial {
                    static_friction: friction
                        .map_or(base.static_friction, |f| f.static_coefficient),
                    dynamic_friction: friction
                        .map_or(base.dynamic_friction, |f| f.dynamic_coefficient),
                    restitution: restitution.map_or(base.restitution, |r| r.coefficient),
                }
            }
            (_, _, own) => own.copied().unwrap_or_default(),
        };
        let material = material.checked().unwrap_or_default();
        let body = of.map(|of| {
            let dynamic = bodies.get(of.body).is_ok_and(|rb| rb.is_dynamic());
            (of.body, dynamic)
        });
        for (k, geometry) in scratch.drain(..).enumerate() {
            contacts.push_collider((entity, k as u32), geometry, pose, material, body, false);
        }
    }
}

/// [`UpdateVelocities`](crate::PbdSubstepSystems::UpdateVelocities), after restitution: every
/// particle's contact impulse, opposite, on the dynamic body it touched.
fn apply_contact_impulses(
    time: Res<Time>,
    contacts: Res<ColliderContactState>,
    state: Res<crate::particle::SolverState>,
    mut bodies: Query<Forces>,
) {
    let inv_dt = 1.0 / time.delta_secs();
    for (impulse, at, body) in contacts.body_impulses(&state, inv_dt) {
        if let Ok(mut forces) = bodies.get_mut(body) {
            forces.apply_linear_impulse_at_point(-impulse, at);
        }
    }
}

/// [`Prepare`](crate::PbdStepSystems::Prepare): the density solve sums the fluid's boundary
/// pushes while a dynamic body's collider carries samples.
fn track_sample_pushes(sampled: Res<SampledShapes>, density: Option<ResMut<DensityState>>) {
    if let Some(mut density) = density {
        let track = sampled.has_bodies();
        if density.track_boundary_push != track {
            density.track_boundary_push = track;
        }
    }
}

/// [`SolveConstraints`](crate::PbdSubstepSystems::SolveConstraints), after the density solve:
/// the fluid's pressure on the samples of dynamic bodies' colliders, as impulses on the
/// bodies ([`collider::samples`](crate::collider::samples)).
fn apply_sample_impulses(
    time: Res<Time>,
    settings: Res<FluidSettings>,
    (state, density, neighbors): (Res<SolverState>, Res<DensityState>, Res<NeighborState>),
    (sampled, sample_of): (Res<SampledShapes>, Query<&ColliderSampleOf>),
    mut bodies: Query<Forces>,
    mut impulses: Local<Vec<(Vec2, Vec2, Entity)>>,
    mut body_rows: Local<BodyRows>,
) {
    if !density.track_boundary_push {
        return;
    }
    let inv_dt = 1.0 / time.delta_secs();
    sample_impulses(
        (&state, &density, &neighbors),
        (&sampled, &sample_of, &mut body_rows),
        &settings,
        inv_dt,
        &mut impulses,
    );
    for &(impulse, at, body) in impulses.iter() {
        if let Ok(mut forces) = bodies.get_mut(body) {
            forces.apply_linear_impulse_at_point(impulse, at);
        }
    }
}
