//! [`ParticleBodies`]: one call to change a shared parameter of one body.

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

use crate::body::components::{BodyConstraints, BodyParticles, ParticleBody};
use crate::constraints::DistanceConstraint;
use crate::constraints::distance::check_compliance;
use crate::error::{PbdError, finite_vec2};
use crate::particle::{FluidParticle, InverseMass, KinematicTarget, Particle, Position};

/// Reads and edits whole bodies through their root ([`ParticleBody`]): a system parameter.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_pbd2d::prelude::*;
/// # #[derive(Component)] struct Flag;
/// fn stiffen_flags(mut bodies: ParticleBodies, flags: Query<Entity, With<Flag>>) {
///     for flag in &flags {
///         bodies.set_compliance(flag, 1e-6).expect("a valid compliance for a body");
///     }
/// }
/// ```
///
/// Each edit writes the members' components, so the solver takes it at the next step exactly as
/// it takes an edit of one particle or constraint; other bodies are untouched.
#[derive(SystemParam)]
pub struct ParticleBodies<'w, 's> {
    bodies: Query<
        'w,
        's,
        (
            Option<&'static BodyParticles>,
            Option<&'static BodyConstraints>,
        ),
        With<ParticleBody>,
    >,
    masses: Query<'w, 's, &'static mut InverseMass, (With<Particle>, Without<FluidParticle>)>,
    distances: Query<'w, 's, &'static mut DistanceConstraint>,
    positions: Query<'w, 's, (&'static mut Position, Option<&'static mut KinematicTarget>)>,
}

impl ParticleBodies<'_, '_> {
    /// The particles (and boundary samples) of `body`, in the order they joined it (see
    /// [`BodyParticles`]); empty for a body that has none (left).
    ///
    /// # Errors
    /// [`PbdError::NotABody`] when `body` has no [`ParticleBody`].
    pub fn particles(&self, body: Entity) -> Result<&[Entity], PbdError> {
        let (particles, _) = self.body(body)?;
        Ok(particles.map_or(&[], |p| &p[..]))
    }

    /// The constraints of `body` (distance constraints and long-range attachments), in the
    /// order they joined it; empty for a body that has none.
    ///
    /// # Errors
    /// [`PbdError::NotABody`] when `body` has no [`ParticleBody`].
    pub fn constraints(&self, body: Entity) -> Result<&[Entity], PbdError> {
        let (_, constraints) = self.body(body)?;
        Ok(constraints.map_or(&[], |c| &c[..]))
    }

    /// Gives every free particle of `body` the mass `mass` (kg): w = 1/m. Pinned particles
    /// (w = 0) stay pinned; fluid particles keep the mass of
    /// [`FluidSettings`](crate::fluid::FluidSettings) (ρ0 (2r)², which the density solve
    /// assumes); boundary samples have none. Returns how many particles it set.
    ///
    /// # Errors
    /// As [`InverseMass::from_mass`] (nothing is changed);
    /// [`PbdError::NotABody`] when `body` has no [`ParticleBody`].
    pub fn set_particle_mass(&mut self, body: Entity, mass: f32) -> Result<usize, PbdError> {
        let w = InverseMass::from_mass(mass)?;
        let (particles, _) = self.bodies.get(body).map_err(|_| not_a_body(body))?;
        let mut count = 0;
        for particle in particles.into_iter().flat_map(|p| p.iter()) {
            if let Ok(mut inverse_mass) = self.masses.get_mut(particle)
                && !inverse_mass.is_pinned()
            {
                inverse_mass.set_if_neq(w);
                count += 1;
            }
        }
        Ok(count)
    }

    /// Gives every distance constraint of `body` the compliance α = `compliance` (m/N; 0 is
    /// rigid). Returns how many constraints it set (long-range attachments have no
    /// compliance and are left as they are).
    ///
    /// # Errors
    /// As [`check_compliance`] (nothing is changed); [`PbdError::NotABody`] when `body` has no
    /// [`ParticleBody`].
    pub fn set_compliance(&mut self, body: Entity, compliance: f32) -> Result<usize, PbdError> {
        let compliance = check_compliance(compliance)?;
        let (_, constraints) = self.bodies.get(body).map_err(|_| not_a_body(body))?;
        let mut count = 0;
        for constraint in constraints.into_iter().flat_map(|c| c.iter()) {
            if let Ok(mut distance) = self.distances.get_mut(constraint) {
                if distance.compliance != compliance {
                    distance.compliance = compliance;
                }
                count += 1;
            }
        }
        Ok(count)
    }

    /// Moves the whole body by `offset` (m): every particle's and boundary sample's
    /// [`Position`], and the target of every held particle ([`KinematicTarget`]). Velocities
    /// are kept, so the body goes on moving as it did, somewhere else: the way to teleport a
    /// connected structure. Writing one particle's `Position` far away instead stretches it
    /// across the distance; its constraints pull the particle back fast enough to fold the
    /// structure through itself, which without contacts between its particles it cannot undo
    /// (a 20 × 20 cloth whose corner was written 1 m away recovers to 0.2 % strain within
    /// 0.5 s with long-range attachments and 20 iterations; 5 m away, it stays at 98 %, unless
    /// its root has [`SolidContacts`](crate::solid_contacts::SolidContacts)).
    /// Returns how many entities it moved.
    ///
    /// # Errors
    /// [`PbdError::NotFinite`] when `offset` is not finite (nothing is moved);
    /// [`PbdError::NotABody`] when `body` has no [`ParticleBody`].
    pub fn translate(&mut self, body: Entity, offset: Vec2) -> Result<usize, PbdError> {
        let offset = finite_vec2("offset (m)", offset)?;
        let (particles, _) = self.bodies.get(body).map_err(|_| not_a_body(body))?;
        let mut count = 0;
        for particle in particles.into_iter().flat_map(|p| p.iter()) {
            if let Ok((mut position, target)) = self.positions.get_mut(particle) {
                position.0 += offset;
                if let Some(mut target) = target {
                    target.0 += offset;
                }
                count += 1;
            }
        }
        Ok(count)
    }

    fn body(
        &self,
        body: Entity,
    ) -> Result<(Option<&BodyParticles>, Option<&BodyConstraints>), PbdError> {
        self.bodies.get(body).map_err(|_| not_a_body(body))
    }
}

fn not_a_body(entity: Entity) -> PbdError {
    PbdError::NotABody { entity }
}
