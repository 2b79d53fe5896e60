//! [`ParticleBodies`]: one call to change a shared parameter of one body.

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

use crate::body::components::{BodyConstraints, BodyParticles, ParticleBody};
use crate::constraints::DistanceConstraint;
use crate::error::{PbdError, non_negative};
use crate::particle::{FluidParticle, InverseMass, Particle};

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
    /// [`PbdError::NotPositive`] when `mass` is not finite and > 0 (nothing is changed);
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
    /// [`PbdError::Negative`] when `compliance` is negative, NaN or infinite (nothing is
    /// changed); [`PbdError::NotABody`] when `body` has no [`ParticleBody`].
    pub fn set_compliance(&mut self, body: Entity, compliance: f32) -> Result<usize, PbdError> {
        let compliance = non_negative("compliance (m/N)", compliance)?;
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
