//! The constraints' per-step data: rows into the particle arrays, the distance constraints'
//! colour-ordered batches and the multipliers λ.

use bevy::prelude::*;

use crate::constraints::angle::AngleRow;
use crate::constraints::batches::DistanceBatches;
use crate::constraints::chains::Chains;
use crate::constraints::row::DistanceRow;
use crate::constraints::tether::TetherRow;

/// Contiguous per-step data of all distance, angle and long-range constraints, rebuilt
/// from their components when they, or the particle rows, change (`rebuild_constraint_rows`).
///
/// A cache of the components, rebuilt from them: reflected, but not as a resource
/// (`ReflectResource`), so that saving a world (Bevy's world serialization) leaves it out and a
/// loaded world rebuilds it.
#[derive(Resource, Reflect, Debug, Default)]
pub struct ConstraintState {
    /// Distance constraints as rows into the particle arrays: first those projected by
    /// Gauss-Seidel, in colour order, then those of chains, chain by chain in path order
    /// ([`chains`](super::chains)), then those of lines ([`lines`](super::lines)), line by line.
    pub rows: Vec<DistanceRow>,
    /// The Gauss-Seidel rows laid out for batched projection, with per-step coefficients.
    #[reflect(ignore)]
    pub(crate) batches: DistanceBatches,
    /// The chains' rows, solved directly.
    #[reflect(ignore)]
    pub(crate) chains: Chains,
    /// Constraint row → constraint entity.
    pub entities: Vec<Entity>,
    /// Constraint row → its [`BreakingStrain`](super::breaking::BreakingStrain) (∞: none).
    pub breaking_strain: Vec<f32>,
    /// Whether any constraint has a breaking strain.
    pub(crate) breakable: bool,
    /// Accumulated XPBD Lagrange multiplier λ per constraint row (reset every substep; λ/Δt²
    /// is the constraint's force, N, with Δt the substep's).
    pub lambda: Vec<f32>,
    /// Long-range attachments as rows into the particle arrays.
    pub tethers: Vec<TetherRow>,
    /// Angle (bending) constraints as rows into the particle arrays, in projection order.
    pub angles: Vec<AngleRow>,
    /// Angle constraint row → its entity.
    pub angle_entities: Vec<Entity>,
    /// Accumulated XPBD multiplier λ per angle constraint row (reset every substep; λ/Δt² is
    /// the constraint's torque, N·m).
    pub angle_lambda: Vec<f32>,
    /// Whether the rows must be rebuilt at the next step (a constraint was added, removed or
    /// edited in place).
    pub(crate) dirty: bool,
    /// The particle row layout the rows were built for
    /// ([`SolverState::rows_generation`](crate::particle::SolverState::rows_generation)).
    pub(crate) particle_rows: Option<u64>,
    /// The [`SolverSettings::direct_lines`](crate::dynamics::SolverSettings::direct_lines) the
    /// rows were laid out with.
    pub(crate) direct_lines: bool,
}

impl ConstraintState {
    /// Whether there is no constraint of any kind.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.tethers.is_empty() && self.angles.is_empty()
    }
}
