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
//! Each iteration computes ρ, C and λ for all particles (Jacobi), then Δx, then applies ω Δx
//! to particles with w > 0 (ω = [`FluidSettings::over_relaxation`], 1 by default); the
//! passes run in parallel on the compute task pool, or as one pipelined sweep on one thread
//! (the same bits). The loop stops before correcting once the average density error
//! Σᵢ max(ρᵢ − ρ0, 0)/(N ρ0) is at or below the tolerance, so the error reported is that of the
//! final positions; at the iteration cap the error is measured once more after the last
//! correction.

use bevy::prelude::*;
use wide::f32x8;

use crate::degenerate::pair_direction;
use crate::fluid::{FluidSettings, jacobi};
use crate::kernel::{CubicSpline, KernelLanes, LANES, Lanes, lengths, sum_lanes};
use crate::neighbors::{NeighborChunk, NeighborState, RowRanges, lanes_below};
use crate::simd::Lanes8;
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
    /// Σ max(ρᵢ − ρ0, 0) (kg/m²) of each block of [`CHUNK`](crate::parallel::CHUNK) rows in the
    /// last density pass.
    pub block_errors: Vec<f64>,
    /// The second buffer of fluid positions (m): the correction passes write x + ωΔx to it and
    /// to [`SolverState::x`] in turn, so that none reads a position it writes. Scratch: the
    /// solve leaves its result in [`SolverState::x`].
    pub positions: Vec<Vec2>,
    /// Per block of [`CHUNK`](crate::parallel::CHUNK) rows, the last block holding one of its
    /// rows' fluid neighbours, or the block itself if later (one-thread solves only; scratch).
    pub reach: Vec<u32>,
}

/// The vectors of two neighbour batches (2 [`LANES`] lanes) the density pass evaluates the
/// kernel on: [`f32x8`] (two SSE vectors, or portable), or one AVX register inside code
/// compiled for AVX2. Both give the same bits.
pub(crate) trait PairLanes: Lanes8 + KernelLanes {}
impl<V: Lanes8 + KernelLanes> PairLanes for V {}

/// Constants of one solve.
#[derive(Clone, Copy)]
pub(crate) struct Fluid<'a> {
    pub kernel: CubicSpline,
    pub mass: f32,
    pub rest_density: f32,
    pub inv_rest_density: f32,
    pub epsilon: f32,
    pub over_relaxation: f32,
    pub boundary_x: &'a [Vec2],
    pub boundary_psi: &'a [f32],
}

impl Fluid<'_> {
    /// Offsets rᵢⱼ = xᵢ − xⱼ (m) and their lengths for a batch of fluid neighbours `js` of row
    /// `i` whose real lanes are `valid`. Coincident particles (‖r‖ ≤ 10⁻⁶ h, where ∇W has no
    /// direction) are treated as 2·10⁻⁶ h apart along an antisymmetric pair direction, so a
    /// duplicated particle is pushed away from its twin instead of moving with it; without
    /// `PATCH`, a batch with such a pair gives `None` (the caller retries on a cold path, which
    /// keeps the hot loop free of calls).
    #[inline(always)]
    fn fluid_offsets<const PATCH: bool>(
        &self,
        x: &[Vec2],
        i: usize,
        js: &[u32; LANES],
        valid: Lanes,
    ) -> Option<(Lanes, Lanes, Lanes)> {
        let (mut rx, mut ry, xi) = ([0.0; LANES], [0.0; LANES], x[i]);
        for l in 0..LANES {
            // SAFETY: `jacobi::solve_on` checked that every neighbour index is < x.len().
            let r = xi - unsafe { *x.get_unchecked(js[l] as usize) };
            rx[l] = r.x;
            ry[l] = r.y;
        }
        let d = lengths(Lanes::from(rx), Lanes::from(ry));
        let tiny = 1e-6 * self.kernel.support_radius();
        let coincident = d.simd_le(Lanes::splat(tiny)) & valid;
        if !coincident.any() {
            return Some((Lanes::from(rx), Lanes::from(ry), d));
        }
        if !PATCH {
            return None;
        }
        let (mut d, coincident) = (d.to_array(), coincident.to_array());
        for l in 0..LANES {
            if coincident[l] != 0.0 {
                let r = 2.0 * tiny * pair_direction(i, js[l] as usize);
                (rx[l], ry[l], d[l]) = (r.x, r.y, 2.0 * tiny);
            }
        }
        Some((Lanes::from(rx), Lanes::from(ry), Lanes::from(d)))
    }

    /// Offsets and lengths from row `i` to up to [`LANES`] boundary samples `ks`, and the
    /// samples' Ψ (kg; 0 in unused lanes).
    #[inline(always)]
    fn boundary_offsets(&self, xi: Vec2, ks: &[u32]) -> (Lanes, Lanes, Lanes, Lanes) {
        let h = self.kernel.support_radius();
        let (mut rx, mut ry, mut psi) = ([2.0 * h; LANES], [0.0; LANES], [0.0; LANES]);
        for (l, &k) in ks.iter().enumerate() {
            // SAFETY: `jacobi::solve_on` checked that every boundary index is < the sample
            // count, the length of both arrays.
            let (xk, psi_k) = unsafe {
                (
                    *self.boundary_x.get_unchecked(k as usize),
                    *self.boundary_psi.get_unchecked(k as usize),
                )
            };
            let r = xi - xk;
            rx[l] = r.x;
            ry[l] = r.y;
            psi[l] = psi_k;
        }
        let (rx, ry) = (Lanes::from(rx), Lanes::from(ry));
        (rx, ry, lengths(rx, ry), Lanes::from(psi))
    }

    /// ρᵢ, λᵢ and Σₖ Ψₖ∇Wᵢₖ of row `i` (the chunk's k-th) into `row`, in one pass over the
    /// neighbours, two batches of [`LANES`] pairs at a time on lanes `V` (8: one AVX register
    /// where the CPU has AVX2; the fluid sums are lane-wise over the batch pairs, then lanes l
    /// and l + 4, then as [`sum_lanes`]: the same bits on every path); stores ∇Wᵢⱼ in the
    /// chunk's per-batch scratch for [`Fluid::correction`]. The fields are written one by one (a
    /// whole-row value assembled on the stack and copied out stalls store forwarding on x86).
    #[inline(always)]
    fn density_and_lambda<V: PairLanes>(
        &self,
        x: &[Vec2],
        chunk: &mut NeighborChunk,
        k: usize,
        i: usize,
        row: &mut DensityRow,
    ) {
        if self
            .density_and_lambda_with::<V, false>(x, chunk, k, i, row)
            .is_none()
        {
            // Out of line, so on the baseline lanes (the same bits): code not compiled for
            // AVX2 may not hold `Avx8` values.
            self.density_and_lambda_coincident(x, chunk, k, i, row);
        }
    }

    /// [`Fluid::density_and_lambda`] of a row with a coincident neighbour (rare), on the
    /// baseline lanes.
    #[cold]
    #[inline(never)]
    fn density_and_lambda_coincident(
        &self,
        x: &[Vec2],
        chunk: &mut NeighborChunk,
        k: usize,
        i: usize,
        row: &mut DensityRow,
    ) {
        if self
            .density_and_lambda_with::<f32x8, true>(x, chunk, k, i, row)
            .is_none()
        {
            *row = DensityRow::default();
        }
    }

    /// [`Fluid::density_and_lambda`]; `None` for a coincident neighbour without `PATCH`.
    #[inline(always)]
    fn density_and_lambda_with<V: PairLanes, const PATCH: bool>(
        &self,
        x: &[Vec2],
        chunk: &mut NeighborChunk,
        k: usize,
        i: usize,
        row: &mut DensityRow,
    ) -> Option<()> {
        let xi = x[i];
        let zero = <V as Lanes8>::splat(0.0);
        let (mut w, mut gx, mut gy, mut g2) = (zero, zero, zero, zero);
        // SAFETY: `jacobi::solve_on` checked the lists (indices_within), and k is one of the
        // chunk's rows.
        let RowRanges {
            fluid,
            count,
            boundary,
        } = unsafe { chunk.row_ranges(k) };
        let start = fluid.start;
        let batches = unsafe { chunk.fluid.get_unchecked(fluid) }
            .as_chunks::<LANES>()
            .0;
        // Two batches per vector of 2 LANES lanes; an odd last batch is paired with offsets of
        // zero, like its padding lanes (r = 0: ∇W = 0, and W is masked below).
        for (p, pair) in batches.chunks(2).enumerate() {
            let b = 2 * p;
            let offsets = |b: usize, js| {
                self.fluid_offsets::<PATCH>(x, i, js, lanes_below(count - b * LANES))
            };
            let (rx0, ry0, d0) = offsets(b, &pair[0])?;
            let (rx1, ry1, d1) = match pair.get(1) {
                Some(js) => offsets(b + 1, js)?,
                None => (Lanes::ZERO, Lanes::ZERO, Lanes::ZERO),
            };
            let (kw, kgx, kgy) = self.kernel.batch_of(
                V::from_halves(rx0, rx1),
                V::from_halves(ry0, ry1),
                V::from_halves(d0, d1),
            );
            // Padding lanes are the particle itself (r = 0: ∇W = 0, but W = W(0)).
            w = w + kw.where_lane_below(count - b * LANES, 0.0);
            gx = gx + kgx;
            gy = gy + kgy;
            g2 = g2 + (kgx * kgx + kgy * kgy);
            let at = start / LANES + b;
            let ((gx0, gx1), (gy0, gy1)) = (kgx.halves(), kgy.halves());
            // SAFETY: the scratch arrays have one entry per batch of `fluid` (density_block
            // sized them) and `jacobi::solve_on` checked that the rows' batches lie within
            // `fluid`.
            unsafe {
                *chunk.gradient_x.get_unchecked_mut(at) = gx0;
                *chunk.gradient_y.get_unchecked_mut(at) = gy0;
                if pair.len() == 2 {
                    *chunk.gradient_x.get_unchecked_mut(at + 1) = gx1;
                    *chunk.gradient_y.get_unchecked_mut(at + 1) = gy1;
                }
            }
        }
        // Lanes l and l + LANES, then as `sum_lanes`.
        let fold = |v: V| {
            let (low, high) = v.halves();
            low + high
        };
        let (w, gx, gy, g2) = (fold(w), fold(gx), fold(gy), fold(g2));
        let (mut bw, mut bgx, mut bgy) = (Lanes::ZERO, Lanes::ZERO, Lanes::ZERO);
        // SAFETY: as above.
        for ks in unsafe { chunk.boundary.get_unchecked(boundary) }.chunks(LANES) {
            let (rx, ry, d, psi) = self.boundary_offsets(xi, ks);
            let b = self.kernel.batch(rx, ry, d);
            bw += psi * b.w;
            bgx += psi * b.gx;
            bgy += psi * b.gy;
        }
        let fluid_w = self.kernel.w0() + sum_lanes(w);
        let fluid_grad = Vec2::new(sum_lanes(gx), sum_lanes(gy));
        let boundary_gradient = Vec2::new(sum_lanes(bgx), sum_lanes(bgy));
        let density = self.mass * fluid_w + sum_lanes(bw);
        row.density = density;
        row.boundary_gradient = boundary_gradient;
        let c = (density * self.inv_rest_density - 1.0).max(0.0);
        if c == 0.0 {
            row.lambda = 0.0;
            return Some(());
        }
        // ∇ⱼCᵢ = −(m/ρ0)∇Wᵢⱼ, ∇ᵢCᵢ = (m Σ∇Wᵢⱼ + Σ Ψₖ∇Wᵢₖ)/ρ0.
        let scale = self.inv_rest_density;
        let grad_i = (self.mass * fluid_grad + boundary_gradient) * scale;
        let sum =
            (self.mass * scale) * (self.mass * scale) * sum_lanes(g2) + grad_i.length_squared();
        row.lambda = -c / (sum + self.epsilon);
        Some(())
    }

    /// ρ and λ of the rows `block` (the chunk's rows) into `out`; returns their
    /// Σ max(ρᵢ − ρ0, 0) (kg/m²).
    #[inline(always)]
    pub(super) fn density_block<V: PairLanes>(
        &self,
        x: &[Vec2],
        chunk: &mut NeighborChunk,
        block: core::ops::Range<usize>,
        out: &mut [DensityRow],
    ) -> f64 {
        let batches = chunk.fluid.len() / LANES;
        chunk.gradient_x.resize(batches, Lanes::ZERO);
        chunk.gradient_y.resize(batches, Lanes::ZERO);
        let mut error = 0.0f64;
        for (k, row) in out.iter_mut().enumerate() {
            self.density_and_lambda::<V>(x, chunk, k, block.start + k, row);
            error += (row.density - self.rest_density).max(0.0) as f64;
        }
        error
    }

    /// Δxᵢ (m) of row `i` (the chunk's k-th), from the gradients the density pass of this
    /// iteration stored.
    #[inline(always)]
    pub(super) fn correction(
        &self,
        chunk: &NeighborChunk,
        k: usize,
        i: usize,
        rows: &[DensityRow],
    ) -> Vec2 {
        // SAFETY: `jacobi::solve_on` checked the lists and the rows: i < rows.len(), k < the
        // chunk's rows.
        let (own, lists) = unsafe { (rows.get_unchecked(i), chunk.row_ranges(k)) };
        let li = own.lambda;
        let (mut x, mut y) = (Lanes::ZERO, Lanes::ZERO);
        let first = lists.fluid.start / LANES;
        let batches = unsafe { chunk.fluid.get_unchecked(lists.fluid) }
            .as_chunks::<LANES>()
            .0;
        for (b, js) in batches.iter().enumerate() {
            let at = first + b;
            let mut lj = [0.0; LANES];
            for l in 0..LANES {
                // SAFETY: `jacobi::solve_on` checked that every neighbour index is < rows.len().
                lj[l] = unsafe { rows.get_unchecked(js[l] as usize) }.lambda;
            }
            // Padding lanes have ∇W = 0.
            let s = Lanes::splat(li) + Lanes::from(lj);
            // SAFETY: as in `density_and_lambda_with`, `at` is a batch of `fluid`, and the
            // block's density pass ran before in this solve (both schedules in `jacobi`
            // guarantee it), sizing the scratch to the batches of `fluid`.
            let (gx, gy) = unsafe {
                (
                    *chunk.gradient_x.get_unchecked(at),
                    *chunk.gradient_y.get_unchecked(at),
                )
            };
            x += s * gx;
            y += s * gy;
        }
        (self.mass * Vec2::new(sum_lanes(x), sum_lanes(y)) + li * own.boundary_gradient)
            * self.inv_rest_density
    }
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
    let (iterations, error) =
        jacobi::solve(&settings, &mut state, &mut neighbors.chunks, &mut scratch);
    stats.fluid_iterations = iterations;
    stats.avg_density_error_percent = error;
    stats.end_phase(Phase::Solve, started);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neighbors::find_neighbors;
    use crate::parallel::CHUNK;
    #[cfg(target_arch = "x86_64")]
    use crate::simd::{Avx8, has_avx2};
    use crate::spatial_grid::SpatialHashGrid;
    use crate::spatial_grid::test_points::lcg;

    /// The density pass of the block `c` on the baseline lanes, and on AVX where the CPU has it
    /// (the same bits); returns the rows.
    fn density_blocks(
        fluid: &Fluid,
        x: &[Vec2],
        chunk: &mut NeighborChunk,
        c: usize,
    ) -> Vec<DensityRow> {
        let block = c * CHUNK..(c * CHUNK + CHUNK).min(x.len());
        let mut out = vec![DensityRow::default(); block.len()];
        let mut results = vec![fluid.density_block::<f32x8>(x, chunk, block.clone(), &mut out)];
        let baseline = (
            out.clone(),
            chunk.gradient_x.clone(),
            chunk.gradient_y.clone(),
        );
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            #[target_feature(enable = "avx2")]
            fn avx2(
                fluid: &Fluid,
                x: &[Vec2],
                chunk: &mut NeighborChunk,
                block: core::ops::Range<usize>,
                out: &mut [DensityRow],
            ) -> f64 {
                fluid.density_block::<Avx8>(x, chunk, block, out)
            }
            out.fill(DensityRow::default());
            // Every scratch entry must be written again.
            chunk.gradient_x.fill(Lanes::splat(f32::NAN));
            chunk.gradient_y.fill(Lanes::splat(f32::NAN));
            // SAFETY: the CPU has AVX2.
            results.push(unsafe { avx2(fluid, x, chunk, block, &mut out) });
            let bits = |rows: &[DensityRow]| {
                let row = |r: &DensityRow| {
                    let g = r.boundary_gradient;
                    [r.density, r.lambda, g.x, g.y].map(f32::to_bits)
                };
                rows.iter().map(row).collect::<Vec<_>>()
            };
            let lanes = |v: &[Lanes]| -> Vec<[u32; LANES]> {
                v.iter().map(|l| l.to_array().map(f32::to_bits)).collect()
            };
            assert_eq!(bits(&out), bits(&baseline.0), "ρ, λ: AVX and baseline");
            assert_eq!(lanes(&chunk.gradient_x), lanes(&baseline.1));
            assert_eq!(lanes(&chunk.gradient_y), lanes(&baseline.2));
        }
        #[cfg(target_arch = "x86_64")]
        if !has_avx2() {
            eprintln!("no AVX2: only the baseline density pass was run");
        }
        let expected = (out.iter())
            .map(|r| (r.density - fluid.rest_density).max(0.0) as f64)
            .sum::<f64>();
        assert!(results.iter().all(|&e| e == expected));
        out
    }

    #[test]
    fn density_pass_has_the_same_bits_on_every_path_and_the_direct_sums() {
        let settings = FluidSettings::default();
        let h = settings.support_radius;
        let spacing = 2.0 * settings.particle_radius;
        let mut seed = 7;
        // A jittered block (rows with odd and even numbers of neighbour batches), one particle
        // duplicated (a coincident pair), and a wall of boundary samples below it.
        let mut x: Vec<Vec2> = (0..400)
            .map(|k| {
                let jitter = Vec2::new(lcg(&mut seed), lcg(&mut seed)) - 0.5;
                Vec2::new((k % 20) as f32, (k / 20) as f32 + 0.5) * spacing + 0.3 * spacing * jitter
            })
            .collect();
        x[77] = x[78];
        let boundary_x: Vec<Vec2> = (0..40)
            .map(|k| Vec2::new(k as f32 * 0.5 * spacing, 0.0))
            .collect();
        let boundary_psi = vec![0.6 * settings.particle_mass(); boundary_x.len()];
        let (mut fluid_grid, mut boundary_grid) =
            (SpatialHashGrid::default(), SpatialHashGrid::default());
        fluid_grid.build(&x, h);
        boundary_grid.build(&boundary_x, h);
        let mut chunks = Vec::new();
        find_neighbors(&mut chunks, &fluid_grid, &x, &boundary_grid, h);
        let fluid = Fluid {
            kernel: CubicSpline::new(h),
            mass: settings.particle_mass(),
            rest_density: settings.rest_density,
            inv_rest_density: 1.0 / settings.rest_density,
            epsilon: settings.epsilon,
            over_relaxation: 1.0,
            boundary_x: &boundary_x,
            boundary_psi: &boundary_psi,
        };
        let mut batch_counts = [0; 2];
        for (c, chunk) in chunks.iter_mut().enumerate() {
            for k in 0..chunk.fluid_count.len() {
                let batches = (chunk.fluid_start[k + 1] - chunk.fluid_start[k]) as usize / LANES;
                batch_counts[batches % 2] += 1;
            }
            let out = density_blocks(&fluid, &x, chunk, c);
            for (k, row) in out.iter().enumerate() {
                let i = c * CHUNK + k;
                // Each pair's scratch lane holds ∇Wᵢⱼ of the pairwise kernel, bit for bit
                // (the coincident pair, pushed apart, is left out), padding lanes 0.
                for (at, js, valid) in chunk.fluid_batches(k) {
                    let (gx, gy) = (
                        chunk.gradient_x[at].to_array(),
                        chunk.gradient_y[at].to_array(),
                    );
                    for l in 0..LANES {
                        let j = js[l] as usize;
                        if valid.to_array()[l] == 0.0 {
                            assert!(gx[l] == 0.0 && gy[l] == 0.0, "padding of {i}");
                        } else if x[i] != x[j] {
                            let g = fluid.kernel.gradient(x[i] - x[j]);
                            let bits = |v: Vec2| (v.x.to_bits(), v.y.to_bits());
                            assert_eq!(bits(Vec2::new(gx[l], gy[l])), bits(g), "{i}–{j}");
                        }
                    }
                }
                // ρᵢ against the direct sum m W(0) + Σⱼ m Wᵢⱼ + Σₖ Ψₖ Wᵢₖ (another order).
                let w = |p: Vec2| fluid.kernel.w((x[i] - p).length());
                let direct = fluid.mass * fluid.kernel.w0()
                    + (x.iter())
                        .enumerate()
                        .filter(|&(j, _)| j != i)
                        .map(|(_, &p)| fluid.mass * w(p))
                        .sum::<f32>()
                    + (boundary_x.iter().zip(&boundary_psi))
                        .map(|(&p, &psi)| psi * w(p))
                        .sum::<f32>();
                assert!(
                    (row.density - direct).abs() <= 1e-4 * direct,
                    "row {i}: {} vs {direct}",
                    row.density
                );
            }
        }
        assert!(
            batch_counts.iter().all(|&n| n > 0),
            "odd and even batch counts: {batch_counts:?}"
        );
    }
}
