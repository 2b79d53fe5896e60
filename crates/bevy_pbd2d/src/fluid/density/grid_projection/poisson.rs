//! The pressure Poisson equation on a [`CellGrid`], by conjugate gradients started from the
//! last solution.
//!
//! On every fluid cell c, Σₙ (p_c − pₙ) = b_c over its neighbours n that are not solid, with
//! p = 0 on air cells (the free surface) and no term for solid ones (walls): −H² times the
//! 5-point Laplacian with Dirichlet and Neumann boundaries, symmetric and positive definite
//! on the cells [`CellGrid::diagonal`] gives an equation (fluid linked to air), preconditioned
//! by a [`multigrid`](super::multigrid) V-cycle or not. It runs on one thread, in a fixed order:
//! the same bits for any thread count.

use bevy::prelude::*;

use super::cells::{CellGrid, neighbour_sum};
use super::multigrid::{Hierarchy, VCycle};

/// Conjugate-gradient iterations at most per solve.
pub(crate) const MAX_CG_ITERATIONS: u32 = 1000;

/// One pressure field and its solver's scratch, kept between steps for the warm start.
#[derive(Debug, Default, Clone)]
pub(crate) struct PoissonSolve {
    /// The solution p, 0 off the fluid cells.
    pub p: Vec<f64>,
    /// The residual r = b − A p.
    r: Vec<f64>,
    /// The search direction.
    d: Vec<f64>,
    /// A d.
    q: Vec<f64>,
    /// The preconditioned residual z = M⁻¹ r and the V-cycle's vectors.
    z: Vec<f64>,
    cycle: VCycle,
    /// The last solution and the grid it was on: origin and cells per row and column.
    last: Vec<f64>,
    last_grid: (IVec2, usize, usize, f32),
    /// Iterations of the last solve.
    pub iterations: u32,
}

impl PoissonSolve {
    /// Solves A p = `b` on `grid` until ‖b − A p‖ ≤ `tolerance` ‖b‖, or for
    /// [`MAX_CG_ITERATIONS`]. Starts from the last solve's p where it has a value for the same
    /// cell (its grid may have moved or grown; not after a solve that hit the cap or on cells of
    /// another size), else from 0. `b` is read on the cells with an equation
    /// ([`CellGrid::diagonal`] > 0); p stays 0 on the others, and everywhere if b is 0. With
    /// `multigrid` (built on `grid`), each iteration is preconditioned by one of its V-cycles
    /// ([`multigrid`](super::multigrid)).
    pub fn solve(
        &mut self,
        grid: &CellGrid,
        multigrid: Option<&Hierarchy>,
        b: &[f64],
        tolerance: f64,
    ) {
        let cells = grid.len();
        let nx = grid.nx;
        for v in [
            &mut self.p,
            &mut self.r,
            &mut self.d,
            &mut self.q,
            &mut self.z,
        ] {
            v.clear();
            v.resize(cells, 0.0);
        }
        let diagonal = &grid.diagonal[..];
        let active = |c: &usize| diagonal[*c] > 0.0;
        let (origin, last_nx, last_ny, size) = self.last_grid;
        if self.last.len() == last_nx * last_ny && size == grid.size {
            for c in (0..cells).filter(active) {
                let at = grid.origin + IVec2::new((c % nx) as i32, (c / nx) as i32) - origin;
                if at.x >= 0 && at.y >= 0 && (at.x as usize) < last_nx && (at.y as usize) < last_ny
                {
                    self.p[c] = self.last[at.y as usize * last_nx + at.x as usize];
                }
            }
        }
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(a, b)| a * b).sum::<f64>();
        let bb = (0..cells).filter(active).map(|c| b[c] * b[c]).sum::<f64>();
        self.iterations = 0;
        if bb == 0.0 || !bb.is_finite() {
            self.p.fill(0.0);
            self.last.clear();
            return;
        }
        let stop = bb * tolerance * tolerance;
        apply(diagonal, nx, &self.p, &mut self.q);
        for c in (0..cells).filter(active) {
            self.r[c] = b[c] - self.q[c];
        }
        let mut rr = dot(&self.r, &self.r);
        // z = M⁻¹ r (z = r without a preconditioner); d = z; rz = r · z.
        let precondition = |r: &[f64], z: &mut [f64], cycle: &mut VCycle| match multigrid {
            Some(multigrid) => multigrid.apply(cycle, r, z),
            None => z.copy_from_slice(r),
        };
        precondition(&self.r, &mut self.z, &mut self.cycle);
        self.d.copy_from_slice(&self.z);
        let mut rz = dot(&self.r, &self.z);
        while rr > stop && self.iterations < MAX_CG_ITERATIONS {
            // Fused passes (the sums in cell order, as separate dot products would take
            // them: the same bits).
            let dq = apply(diagonal, nx, &self.d, &mut self.q);
            if dq <= 0.0 || !dq.is_finite() {
                break;
            }
            let alpha = rz / dq;
            let mut next = 0.0;
            for ((p, r), (d, q)) in self
                .p
                .iter_mut()
                .zip(&mut self.r)
                .zip(self.d.iter().zip(&self.q))
            {
                *p += alpha * d;
                *r -= alpha * q;
                next += *r * *r;
            }
            rr = next;
            self.iterations += 1;
            if rr <= stop {
                break;
            }
            let rz_next = if multigrid.is_some() {
                precondition(&self.r, &mut self.z, &mut self.cycle);
                dot(&self.r, &self.z)
            } else {
                rr
            };
            if rz_next <= 0.0 || !rz_next.is_finite() {
                break;
            }
            let beta = rz_next / rz;
            rz = rz_next;
            let z = if multigrid.is_some() {
                &self.z
            } else {
                &self.r
            };
            for (d, z) in self.d.iter_mut().zip(z) {
                *d = z + beta * *d;
            }
        }
        if !self.p.iter().all(|p| p.is_finite()) {
            self.p.fill(0.0);
        }
        if self.iterations < MAX_CG_ITERATIONS {
            self.last.clone_from(&self.p);
            self.last_grid = (grid.origin, grid.nx, grid.ny, grid.size);
        } else {
            self.last.clear();
        }
    }
}

/// out = A x on the fluid cells (`diagonal` > 0), untouched elsewhere (where it must be 0);
/// returns Σ x · out in cell order. `x` is 0 off the fluid cells, so a cell's four neighbours
/// can be summed whatever their kind.
fn apply(diagonal: &[f64], nx: usize, x: &[f64], out: &mut [f64]) -> f64 {
    let cells = x.len();
    let mut sum = 0.0;
    for c in nx..cells - nx {
        let k = diagonal[c];
        if k > 0.0 {
            let y = k * x[c] - neighbour_sum(x, c, nx);
            out[c] = y;
            sum += x[c] * y;
        }
    }
    sum
}
