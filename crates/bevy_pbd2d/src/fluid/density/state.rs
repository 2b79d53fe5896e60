//! The density solve's per-particle values and scratch, kept between steps.

use bevy::prelude::*;
use wide::f32x8;

use crate::fluid::density::grid_projection::buffers::GridProjectionState;

/// Density ρᵢ (kg/m²), Lagrange multiplier λᵢ and boundary gradient Σₖ Ψₖ∇Wᵢₖ (kg/m³) of a
/// fluid particle from the last density pass.
#[derive(Reflect, Debug, Default, Clone, Copy, PartialEq)]
pub struct DensityRow {
    /// ρᵢ (kg/m²).
    pub density: f32,
    /// λᵢ.
    pub lambda: f32,
    /// Σₖ Ψₖ ∇Wᵢₖ over boundary neighbours (kg/m³).
    pub boundary_gradient: Vec2,
}

/// Per-fluid-particle solver values of the current step (buffers reused between steps).
///
/// Solver scratch, recomputed every step: reflected, but not as a resource
/// (`ReflectResource`), so that saving a world (Bevy's world serialization) leaves it out and a
/// loaded world rebuilds it.
#[derive(Resource, Reflect, Debug, Default)]
pub struct DensityState {
    /// ρ and λ per fluid row.
    pub rows: Vec<DensityRow>,
    /// Σ max(ρᵢ − ρ0, 0) (kg/m²) of each block of [`CHUNK`](crate::parallel::CHUNK) rows in the
    /// last density pass.
    pub(crate) block_errors: Vec<f64>,
    /// The second buffer of fluid positions (m): the correction passes write x + ωΔx to it and
    /// to [`SolverState::x`](crate::particle::SolverState::x) in turn, so that none reads a position it writes. Scratch: the
    /// solve leaves its result in [`SolverState::x`](crate::particle::SolverState::x).
    pub(crate) positions: Vec<Vec2>,
    /// Per block of [`CHUNK`](crate::parallel::CHUNK) rows, the first and the last block
    /// holding one of its rows' fluid neighbours or the block itself (pipelines only; scratch).
    pub(crate) spans: Vec<[u32; 2]>,
    /// The ∇W scratch buffers a pipeline lends to the blocks between their density and
    /// correction passes, a ring per side (block c borrows entry c mod the ring's length of
    /// its side's ring), so that the scratch is reused while in cache.
    #[reflect(ignore)]
    pub(crate) ring: GradientRing,
    /// Whether the solve sums [`boundary_push`](Self::boundary_push) (set by whoever reads
    /// it, e.g. the avian coupling; off by default: the sums cost a pass over the rows per
    /// iteration).
    pub track_boundary_push: bool,
    /// Per fluid row, when tracked: the boundary part of the corrections the solve applied,
    /// Σ over its iterations of ω λᵢ Σₖ Ψₖ∇Wᵢₖ / ρ0 (m; \[MM13\] eq. 12, the boundary term).
    /// The particle's momentum changed by m times this over Δt through the boundary samples,
    /// so they received the opposite impulse. With [phases](crate::fluid::phases) the sum is
    /// of λᵢ/μ_max and the particle moved μᵢ times as far: m times the sum is still its
    /// momentum change, m the reference mass of
    /// [`FluidSettings`](crate::fluid::FluidSettings). A correction cut to
    /// [`MAX_STEP_RADII`](crate::fluid::density::MAX_STEP_RADII) counts as far as it was
    /// applied.
    pub boundary_push: Vec<Vec2>,
    /// Per fluid row, when tracked: the fraction of its last correction that was applied (1,
    /// or less where it was cut; scratch).
    pub(crate) push_applied: Vec<f32>,
    /// The Chebyshev weight of each correction of a solve (scratch; empty without
    /// [`FluidSettings::chebyshev`](crate::fluid::FluidSettings::chebyshev)).
    pub(crate) chebyshev_weights: Vec<f32>,
    /// Per fluid row with s_corr on, its part of the correction (m; scratch,
    /// [`artificial_pressure`](crate::fluid::artificial_pressure)).
    pub(crate) s_corr: Vec<Vec2>,
    /// The grid projection's buffers and last pressures
    /// ([`FluidSettings::grid_projection`](crate::fluid::FluidSettings::grid_projection)).
    #[reflect(ignore)]
    pub grid: GridProjectionState,
}

/// The ∇W scratch buffers of the pipelines, one ring per
/// `Side` (`DensityState::ring`; opaque).
#[derive(Debug, Default)]
pub struct GradientRing(pub(crate) [Vec<Vec<[f32x8; 2]>>; 2]);
