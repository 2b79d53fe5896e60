//! The PBF density constraint (\[MM13\] §3, with the Akinci boundary term of \[AIA+12\]).
//!
//! Density of fluid particle i, with its own term, fluid neighbours j and boundary samples k:
//!
//! ```text
//! ρᵢ = m W(0) + Σⱼ m Wᵢⱼ + Σₖ Ψₖ Wᵢₖ
//! Cᵢ = max(ρᵢ/ρ0 − 1, 0)                                   (clamped: no surface clumping)
//! λᵢ = −Cᵢ / (Σⱼ |∇ⱼCᵢ|² + |∇ᵢCᵢ|² + ε)                    (\[MM13\] eq. 11)
//!   with ∇ⱼCᵢ = −(m/ρ0) ∇Wᵢⱼ,  ∇ᵢCᵢ = (1/ρ0)(Σⱼ m ∇Wᵢⱼ + Σₖ Ψₖ ∇Wᵢₖ)
//! Δxᵢ = (1/ρ0) (Σⱼ m (λᵢ + λⱼ) ∇Wᵢⱼ + Σₖ Ψₖ λᵢ ∇Wᵢₖ)          (\[MM13\] eq. 12)
//! ```
//!
//! As in the PBF demo, boundary samples enter ∇ᵢCᵢ but not the Σⱼ term (they do not move), and
//! the masses of the general PBD form cancel because all fluid particles weigh the same.
//! Each iteration computes ρ, C and λ for all particles (Jacobi, in parallel), then Δx, then
//! applies Δx to particles with w > 0. The loop stops before correcting once the average
//! density error Σᵢ max(ρᵢ − ρ0, 0)/(N ρ0) is at or below the tolerance, so the error
//! reported is that of the final positions; at the iteration cap the error is measured once
//! more after the last correction.

use bevy::prelude::*;

use crate::degenerate::pair_direction;
use crate::fluid::FluidSettings;
use crate::kernel::CubicSpline;
use crate::neighbors::{NeighborChunk, NeighborState};
use crate::parallel::{CHUNK, for_chunks, for_items_with_rows};
use crate::solver::SolverState;
use crate::stats::{PbdStats, Phase};

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
#[derive(Resource, Reflect, Debug, Default)]
#[reflect(Resource)]
pub struct DensityState {
    /// ρ and λ per fluid row.
    pub rows: Vec<DensityRow>,
    /// Position correction Δxᵢ (m) of the last iteration.
    pub correction: Vec<Vec2>,
}

/// Constants of one solve.
#[derive(Clone, Copy)]
pub(crate) struct Fluid<'a> {
    pub kernel: CubicSpline,
    pub mass: f32,
    pub rest_density: f32,
    pub epsilon: f32,
    pub x: &'a [Vec2],
    pub boundary_x: &'a [Vec2],
    pub boundary_psi: &'a [f32],
}

impl Fluid<'_> {
    /// Offset, distance and kernel gradient for fluid rows i ≠ j. Coincident particles
    /// (‖r‖ ≤ 10⁻⁶ h, where ∇W has no direction) are treated as 2·10⁻⁶ h apart along an
    /// antisymmetric pair direction, so a duplicated particle is pushed away from its twin
    /// instead of moving with it.
    #[inline]
    fn pair(&self, i: usize, j: usize) -> (Vec2, f32) {
        let r = self.x[i] - self.x[j];
        let d = r.length();
        let tiny = 1e-6 * self.kernel.support_radius();
        if d > tiny {
            (r, d)
        } else {
            (2.0 * tiny * pair_direction(i, j), 2.0 * tiny)
        }
    }

    /// (ρᵢ, λᵢ) of row `i` (the chunk's k-th), in one pass over the neighbours; stores ∇Wᵢⱼ in
    /// the chunk's per-pair scratch for [`Fluid::correction`].
    #[inline]
    fn density_and_lambda(&self, chunk: &mut NeighborChunk, k: usize, i: usize) -> DensityRow {
        let xi = self.x[i];
        let mut fluid_w = self.kernel.w0();
        let mut fluid_grad = Vec2::ZERO;
        let mut sum_grad2 = 0.0;
        let range = chunk.fluid_start[k] as usize..chunk.fluid_start[k + 1] as usize;
        for (&j, stored) in chunk.fluid[range.clone()]
            .iter()
            .zip(&mut chunk.gradient[range])
        {
            let (r, d) = self.pair(i, j as usize);
            let (w, grad) = self.kernel.value_and_gradient(r, d);
            *stored = grad;
            fluid_w += w;
            fluid_grad += grad;
            sum_grad2 += grad.length_squared();
        }
        let mut boundary_w = 0.0;
        let mut boundary_gradient = Vec2::ZERO;
        for &b in chunk.boundary_of(k) {
            let b = b as usize;
            let r = xi - self.boundary_x[b];
            let (w, grad) = self.kernel.value_and_gradient(r, r.length());
            boundary_w += self.boundary_psi[b] * w;
            boundary_gradient += self.boundary_psi[b] * grad;
        }
        let density = self.mass * fluid_w + boundary_w;
        let c = (density / self.rest_density - 1.0).max(0.0);
        if c == 0.0 {
            return DensityRow {
                density,
                lambda: 0.0,
                boundary_gradient,
            };
        }
        // ∇ⱼCᵢ = −(m/ρ0)∇Wᵢⱼ, ∇ᵢCᵢ = (m Σ∇Wᵢⱼ + Σ Ψₖ∇Wᵢₖ)/ρ0.
        let scale = 1.0 / self.rest_density;
        let grad_i = (self.mass * fluid_grad + boundary_gradient) * scale;
        let sum = (self.mass * scale) * (self.mass * scale) * sum_grad2 + grad_i.length_squared();
        DensityRow {
            density,
            lambda: -c / (sum + self.epsilon),
            boundary_gradient,
        }
    }

    /// Δxᵢ (m) of row `i` (the chunk's k-th), from the gradients the density pass of this
    /// iteration stored.
    #[inline]
    fn correction(&self, chunk: &NeighborChunk, k: usize, i: usize, rows: &[DensityRow]) -> Vec2 {
        let li = rows[i].lambda;
        let range = chunk.fluid_start[k] as usize..chunk.fluid_start[k + 1] as usize;
        let mut fluid = Vec2::ZERO;
        for (&j, &gradient) in chunk.fluid[range.clone()]
            .iter()
            .zip(&chunk.gradient[range])
        {
            fluid += (li + rows[j as usize].lambda) * gradient;
        }
        (self.mass * fluid + li * rows[i].boundary_gradient) / self.rest_density
    }
}

/// Computes ρ and λ of all fluid rows; returns Σ max(ρᵢ − ρ0, 0) (kg/m²).
fn density_pass(fluid: &Fluid, chunks: &mut [NeighborChunk], rows: &mut [DensityRow]) -> f64 {
    for_items_with_rows(chunks, rows, |c, chunk, out| {
        chunk.gradient.resize(chunk.fluid.len(), Vec2::ZERO);
        let mut error = 0.0f64;
        for (k, row) in out.iter_mut().enumerate() {
            *row = fluid.density_and_lambda(chunk, k, c * CHUNK + k);
            error += (row.density - fluid.rest_density).max(0.0) as f64;
        }
        error
    })
    .into_iter()
    .sum()
}

/// Runs the density solve on `x[..fluid_count]`; returns (iterations, average error in %).
pub(crate) fn solve(
    settings: &FluidSettings,
    state: &mut SolverState,
    chunks: &mut [NeighborChunk],
    scratch: &mut DensityState,
) -> (u32, f32) {
    let n = state.fluid_count;
    if n == 0 {
        return (0, 0.0);
    }
    scratch.rows.resize(n, DensityRow::default());
    scratch.correction.resize(n, Vec2::ZERO);
    let tolerance = settings.max_density_error_percent as f64;
    let to_percent = 100.0 / (n as f64 * settings.rest_density as f64);
    let mut iterations = 0;
    let error = loop {
        let fluid = Fluid {
            kernel: CubicSpline::new(settings.support_radius),
            mass: settings.particle_mass(),
            rest_density: settings.rest_density,
            epsilon: settings.epsilon,
            x: &state.x[..n],
            boundary_x: &state.boundary_x,
            boundary_psi: &state.boundary_psi,
        };
        let error = density_pass(&fluid, chunks, &mut scratch.rows) * to_percent;
        if error <= tolerance || iterations == settings.max_iterations {
            break error;
        }
        let rows = &scratch.rows;
        let lists: &[NeighborChunk] = chunks;
        for_chunks(&mut scratch.correction, |first, out| {
            let chunk = &lists[first / CHUNK];
            for (k, dx) in out.iter_mut().enumerate() {
                *dx = fluid.correction(chunk, k, first + k, rows);
            }
        });
        for ((x, &dx), &w) in state.x[..n]
            .iter_mut()
            .zip(&scratch.correction)
            .zip(&state.w[..n])
        {
            if w > 0.0 {
                *x += dx;
            }
        }
        iterations += 1;
    };
    (iterations, error as f32)
}

/// [`PbdSystems::SolveConstraints`](crate::PbdSystems::SolveConstraints): the PBF density
/// solve of all fluid particles.
pub fn solve_density_constraints(
    settings: Res<FluidSettings>,
    mut state: ResMut<SolverState>,
    mut neighbors: ResMut<NeighborState>,
    mut scratch: ResMut<DensityState>,
    mut stats: ResMut<PbdStats>,
) {
    let started = stats.begin_phase();
    let (iterations, error) = solve(&settings, &mut state, &mut neighbors.chunks, &mut scratch);
    stats.fluid_iterations = iterations;
    stats.avg_density_error_percent = error;
    stats.end_phase(Phase::Solve, started);
}
