//! Tearing: a distance constraint with a [`BreakingStrain`] breaks when it is stretched past
//! it. At the end of every step (after its substeps), each such constraint's strain
//! ε = (‖x₁ − x₂‖ − d)/d is compared with its limit; one past it is despawned (its particles
//! stay) and a [`ConstraintBroken`] message names it, its particles and the strain.
//!
//! With compliance α > 0 the strain measures the force, F = ε d/α (N). A rigid constraint
//! (α = 0) stretches only as far as the solver leaves it unsolved: its strain grows with the
//! load and shrinks with more iterations and substeps, so a limit for rigid cloth is tuned
//! with the solver settings it runs with (the reference cloth, 5 iterations, stretches up to
//! 37 % below its pinned corners while it settles, 28 % after 5 s).

use bevy::prelude::*;

use crate::constraints::state::ConstraintState;
use crate::error::{PbdError, positive};
use crate::particle::SolverState;

/// On a [`DistanceConstraint`](super::DistanceConstraint)'s entity: the strain ε = (ℓ − d)/d
/// past which it breaks (module docs). Edits, insertions and removals take effect at the next
/// step.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq)]
pub struct BreakingStrain(pub(crate) f32);

impl BreakingStrain {
    /// A limit of `strain` (dimensionless: 0.5 breaks at 1.5 times the rest length).
    ///
    /// # Errors
    /// [`PbdError::NotPositive`] for 0, negative, NaN or infinite strains.
    pub fn new(strain: f32) -> Result<Self, PbdError> {
        Ok(Self(positive("breaking strain", strain)?))
    }

    /// The strain limit.
    pub fn get(self) -> f32 {
        self.0
    }
}

/// Written when a constraint breaks ([`BreakingStrain`]): it is despawned at the end of the
/// step that wrote this.
#[derive(Message, Debug, Clone, Copy, PartialEq)]
pub struct ConstraintBroken {
    /// The constraint's entity (despawned).
    pub constraint: Entity,
    /// Its two particles (not despawned).
    pub particles: [Entity; 2],
    /// Its strain ε = (ℓ − d)/d when it broke (above its limit).
    pub strain: f32,
}

/// [`Writeback`](crate::PbdStepSystems::Writeback): breaks the constraints stretched past
/// their [`BreakingStrain`] at the end of the step.
pub(crate) fn break_constraints(
    mut commands: Commands,
    state: Res<SolverState>,
    constraints: Res<ConstraintState>,
    particles: Query<&super::DistanceConstraint>,
    mut broken: MessageWriter<ConstraintBroken>,
) {
    if !constraints.breakable {
        return;
    }
    for (k, row) in constraints.rows.iter().enumerate() {
        let limit = constraints.breaking_strain[k];
        if !limit.is_finite() || row.rest_length <= 0.0 {
            continue;
        }
        let (a, b) = (row.a as usize, row.b as usize);
        if a.max(b) >= state.len() {
            continue;
        }
        let strain = ((state.x[a] - state.x[b]).length() - row.rest_length) / row.rest_length;
        if strain > limit {
            let constraint = constraints.entities[k];
            let Ok(c) = particles.get(constraint) else {
                continue;
            };
            broken.write(ConstraintBroken {
                constraint,
                particles: c.particles,
                strain,
            });
            commands.entity(constraint).despawn();
        }
    }
}
