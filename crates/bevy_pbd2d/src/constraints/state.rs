//! The constraints' per-step data: rows into the particle arrays, their colour-ordered batches
//! and multipliers λ.

use bevy::prelude::*;

use crate::constraints::batches::DistanceBatches;
use crate::constraints::row::DistanceRow;
use crate::constraints::tether::TetherRow;

/// Contiguous per-step data of all distance constraints and long-range attachments, rebuilt
/// from their components when they, or the particle rows, change (`rebuild_constraint_rows`).
///
/// A cache of the components, rebuilt from them: reflected, but not as a resource
/// (`ReflectResource`), so that saving a world (Bevy's world serialization) leaves it out and a
/// loaded world rebuilds it.
#[derive(Resource, Reflect, Debug, Default)]
pub struct ConstraintState {
    /// Distance constraints as rows into the particle arrays, in projection (colour) order.
    pub rows: Vec<DistanceRow>,
    /// The same constraints laid out for batched projection, with per-step coefficients.
    #[reflect(ignore)]
    pub(crate) batches: DistanceBatches,
    /// Constraint row → constraint entity.
    pub entities: Vec<Entity>,
    /// Accumulated XPBD Lagrange multiplier λ per constraint row (reset every step; λ/Δt² is
    /// the constraint's force, N).
    pub lambda: Vec<f32>,
    /// Long-range attachments as rows into the particle arrays.
    pub tethers: Vec<TetherRow>,
    /// Whether the rows must be rebuilt at the next step (a constraint was added, removed or
    /// edited in place).
    pub(crate) dirty: bool,
    /// The particle row layout the rows were built for
    /// ([`SolverState::rows_generation`](crate::particle::SolverState::rows_generation)).
    pub(crate) particle_rows: Option<u64>,
}
