//! Colliders for particles: obstacles made of Bevy math primitives ([`ParticleCollider`]),
//! static or moved by the game, that every particle collides with.
//!
//! A particle is a disc: fluid particles of radius `FluidSettings::particle_radius`, others of
//! their [`ParticleRadius`] (default 1 cm). Contacts are position constraints in the step
//! (\[MMCK14\] §6), in the collider's own frame: a particle's motion over the step is taken
//! from x₀ in the collider's pose at the step's start to x in its pose at the end, so a moving
//! collider carries what rests on it and sweeps what is in its way.
//!
//! Per step, for every particle with w > 0 whose motion's bounds overlap a collider's (a grid
//! of cells about a collider's size lists the colliders; a particle only looks at the cells
//! its motion covers):
//! 1. **After the prediction** ([`Predict`](crate::PbdSubstepSystems::Predict)): its motion x₀ → x*
//!    is swept against the collider (continuous collision). The shape is a set of core segments
//!    rounded by R (a circle is a rounded point, a capsule a rounded segment, a polygon a loop
//!    of segments with R = 0, a polyline an open chain), and the particle's centre a ray
//!    against the capsules of radius R + r around the segments: an exact first contact, with no
//!    step size, at any speed. At the contact the motion stops and its rest slides along the
//!    surface (its inward part removed, up to [`MAX_SLIDES`] times). A particle within R + r
//!    of a segment that moves toward its line is stopped at once, so nothing (a fast motion, a
//!    constraint pulling) takes it through a zero-thickness segment: that is the tunnelling
//!    guarantee. Then a particle closer than r to the surface (inside a polygon: nearest edge)
//!    is pushed out along the normal; the part of that push that undoes a penetration it
//!    started the step with is applied to x* as well, so it adds no velocity (pre-stabilisation,
//!    \[MMCK14\] §6.2).
//! 2. **After the constraint and density solves** ([`SolveContacts`](crate::PbdSubstepSystems::SolveContacts)):
//!    the same for its motion x₀ → x as the solves left it; then Coulomb friction
//!    (\[MMCK14\] §6.1): the tangential part Δxₜ of its motion relative to the collider's
//!    surface is undone if |Δxₜ| < μs d, else reduced by μk d, where d is the normal correction
//!    the contacts made in the step. Fluid particles slip (no Coulomb friction, as at the
//!    boundaries of SPH solvers: water's drag along a wall is viscosity, and with friction the
//!    lone drops of a splash stayed on any slope below atan μs).
//! 3. **After the velocity update** ([`UpdateVelocities`](crate::PbdSubstepSystems::UpdateVelocities)):
//!    restitution (Müller et al. 2020, eq. 34): an impact (normal speed before the contacts
//!    above 2 |g| Δt) leaves with e times its normal speed; a slower one keeps no speed into the
//!    surface.
//!
//! Fluid gets its density support from a collider as from hand-placed samples: every
//! collider carries Akinci boundary samples 2r apart, one particle radius inside its surface
//! (on it for a segment or polyline), moved with it, giving density only (the collider's
//! contacts are the wall) ([`samples`]); water rests on it with the density error and height
//! it has in a sample-built box (`DamBreakWalls::Collider` builds the demo's box that way), and
//! with `avian` a dynamic body receives the fluid's pressure on its samples.
//!
//! Contacts can be reported as messages, per collider ([`reports`]), and (feature `avian`)
//! filtered by collision layers ([`layers`]).
//!
//! A collider's velocity is its pose change over the step, nothing else: moving one far in a
//! step sweeps everything between its two poses at that speed; mark a teleport with
//! [`TeleportCollider`]. Colliders are obstacles of infinite mass (their
//! two-way coupling with rigid bodies is the `avian` feature's, to come). Corners where two
//! colliders meet are resolved in two rounds. A polyline's segments are all tested for a
//! particle near its bounds: a long terrain is better split into several colliders.

mod broad_phase;
pub mod components;
pub(crate) mod contacts;
pub(crate) mod geometry;
#[cfg(test)]
mod geometry_tests;
pub mod layers;
mod outline;
pub mod reports;
pub(crate) mod restitution;
pub mod samples;
pub(crate) mod sync;

use bevy::prelude::*;

pub use components::{
    ColliderMaterial, ColliderShape, FRICTION_RANGE, PARTICLE_RADIUS_RANGE, ParticleCollider,
    ParticleRadius, TeleportCollider,
};
pub use contacts::MAX_SLIDES;
pub use geometry::MAX_COLLIDER_EXTENT;
pub use layers::CollisionFilter;
pub use reports::{
    CONTACT_SLACK, ParticleContactEnd, ParticleContactStart, ReportParticleContacts,
};
pub use samples::{ColliderSample, ColliderSampleOf, ColliderSamples};

use crate::dynamics::integrator::{predict, update_velocities};
use crate::fluid::boundary::update_boundary;
use crate::fluid::settling::{restabilise_settling_fluid, stabilise_settling_fluid};
use crate::particle::state::SolverState;
use crate::particle::sync::copy_particles_in;
use crate::schedule::{
    PbdPrepared, PbdSchedule, PbdStepSystems, PbdSubstepSchedule, PbdSubstepSystems,
};

/// The contact systems in their step's sets; they run only where [`colliders_and_particles`]
/// holds (no cost in a scene without colliders).
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ColliderContactSystems;

/// The step's colliders and what the contacts did to each particle.
#[derive(Resource, Debug, Default)]
pub struct ColliderContactState {
    pub(crate) colliders: Vec<sync::StepCollider>,
    bins: broad_phase::Bins,
    /// The colliders' shapes, kept while they do not change.
    pub(crate) geometries: sync::GeometryCache,
    /// Each collider part's pose at the end of the last step.
    poses: bevy::platform::collections::HashMap<sync::ColliderKey, Isometry2d>,
    /// Collision radius of each row (m).
    radius: Vec<f32>,
    /// x₀ of each row (m).
    start: Vec<Vec2>,
    touch: Vec<contacts::Touch>,
    candidates: Vec<u32>,
    /// The contact passes' candidate lists, per block of rows: the colliders near the block,
    /// and a row's own.
    block_candidates: Vec<[Vec<u32>; 2]>,
}

/// Whether there are colliders and particles (the contacts have work).
pub fn colliders_and_particles(
    contacts: Res<ColliderContactState>,
    state: Res<SolverState>,
) -> bool {
    !contacts.colliders.is_empty() && !state.is_empty()
}

/// Colliders for particles ([`ParticleCollider`], [`ColliderMaterial`], [`ParticleRadius`])
/// and their contacts (module docs), in the sets
/// [`Prepare`](PbdStepSystems::Prepare), [`Predict`](PbdSubstepSystems::Predict),
/// [`SolveContacts`](PbdSubstepSystems::SolveContacts) and
/// [`UpdateVelocities`](PbdSubstepSystems::UpdateVelocities).
#[derive(Debug, Clone, Copy, Default)]
pub struct ColliderPlugin;

impl Plugin for ColliderPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<ParticleCollider>()
            .register_type::<ColliderMaterial>()
            .register_type::<ParticleRadius>()
            .register_type::<TeleportCollider>()
            .register_type::<ColliderSample>()
            .register_type::<ColliderSampleOf>()
            .register_type::<ColliderSamples>()
            .register_type::<ReportParticleContacts>()
            .add_message::<ParticleContactStart>()
            .add_message::<ParticleContactEnd>()
            .init_resource::<ColliderContactState>()
            .init_resource::<CollisionFilter>()
            .init_resource::<reports::ContactReports>()
            .init_resource::<samples::SampledShapes>();
        app.configure_sets(
            PbdSubstepSchedule,
            ColliderContactSystems.run_if(colliders_and_particles),
        );
        app.add_systems(
            PbdSchedule,
            ((
                sync::collect_particle_colliders,
                sync::finish_colliders,
                reports::mark_reported_colliders,
                samples::update_collider_samples.before(update_boundary),
            )
                .chain(),)
                .in_set(PbdPrepared)
                .after(copy_particles_in),
        );
        app.add_systems(
            PbdSchedule,
            (sync::clear_teleports, reports::send_contact_messages)
                .in_set(PbdStepSystems::Writeback),
        )
        .add_systems(
            PbdSubstepSchedule,
            (
                (sync::substep_poses, contacts::record_collider_starts)
                    .chain()
                    .in_set(PbdSubstepSystems::Predict)
                    .before(predict),
                contacts::collide_predicted
                    .in_set(PbdSubstepSystems::Predict)
                    .after(predict),
                contacts::push_settling_fluid_out
                    .in_set(PbdSubstepSystems::SolveConstraints)
                    .after(stabilise_settling_fluid)
                    .before(restabilise_settling_fluid),
                contacts::collide_solved.in_set(PbdSubstepSystems::SolveContacts),
                (
                    restitution::apply_restitution,
                    reports::record_reported_contacts,
                )
                    .chain()
                    .in_set(PbdSubstepSystems::UpdateVelocities)
                    .after(update_velocities),
            )
                .in_set(ColliderContactSystems),
        );
    }
}
