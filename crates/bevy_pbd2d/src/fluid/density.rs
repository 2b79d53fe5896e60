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
//! (the same bits). Both passes take the rows 8 at a time, one per lane of an 8-lane vector,
//! and walk their neighbour lists side by side (slot-major lists, padded to the group's
//! longest list and masked): each row's sums stay in its lane, in list order, and C, λ and Δx
//! are computed for 8 rows at once. The loop stops before correcting once the average density
//! error Σᵢ max(ρᵢ − ρ0, 0)/(N ρ0) is at or below the tolerance, so the error reported is that
//! of the final positions; at the iteration cap the error is measured once more after the last
//! correction.

use bevy::prelude::*;
use wide::f32x8;

use crate::degenerate::pair_direction;
use crate::fluid::slots::{GROUP, Slot, SlotLists};
use crate::fluid::{FluidSettings, jacobi};
use crate::kernel::{CubicSpline, KernelLanes};
use crate::neighbors::{NeighborChunk, NeighborState};
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
    /// Per block of [`CHUNK`](crate::parallel::CHUNK) rows, the first and the last block
    /// holding one of its rows' fluid neighbours or the block itself (sweeps only; scratch).
    pub spans: Vec<[u32; 2]>,
    /// The ∇W scratch buffers a sweep lends to the blocks between their density and
    /// correction passes, a ring per side (block c borrows entry c mod the ring's length of
    /// its side's ring), so that the scratch is reused while in cache.
    #[reflect(ignore)]
    pub ring: GradientRing,
}

/// The ∇W scratch buffers of the sweeps, one ring per
/// [`Side`](crate::sweep::Side) ([`DensityState::ring`]; opaque).
#[derive(Debug, Default)]
pub struct GradientRing(pub(crate) [Vec<Vec<[f32x8; 2]>>; 2]);

/// The vectors of one slot (8 pairs, one per row of a group) the density solve evaluates the
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

/// ρᵢ (kg/m²), λᵢ and Σₖ Ψₖ∇Wᵢₖ (kg/m³) of the rows of a group, lane l for its l-th row.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct GroupRows {
    pub density: f32x8,
    pub lambda: f32x8,
    pub boundary_x: f32x8,
    pub boundary_y: f32x8,
}

/// The lanes `f(0), …, f(7)`.
#[inline(always)]
fn lanes<V: Lanes8>(f: impl Fn(usize) -> f32) -> V {
    V::from_f32x8(f32x8::new(core::array::from_fn(f)))
}

/// `(rx, ry, d)` with the `coincident` lanes (bit l set) replaced by an offset of length
/// 2·`tiny` along the pair direction of rows `rows[l]` and `js[l]` (antisymmetric, so a
/// duplicated particle is pushed away from its twin instead of moving with it).
#[inline(always)]
fn separate_coincident<V: Lanes8>(
    (rx, ry, d): (V, V, V),
    coincident: u32,
    rows: &Slot,
    js: &Slot,
    tiny: f32,
) -> (V, V, V) {
    let [mut rx, mut ry, mut d] = [rx, ry, d].map(|v| v.to_f32x8().to_array());
    for l in (0..GROUP).filter(|l| coincident & (1 << l) != 0) {
        let r = 2.0 * tiny * pair_direction(rows[l] as usize, js[l] as usize);
        (rx[l], ry[l], d[l]) = (r.x, r.y, 2.0 * tiny);
    }
    let v = |a: [f32; GROUP]| V::from_f32x8(f32x8::new(a));
    (v(rx), v(ry), v(d))
}

impl Fluid<'_> {
    /// ρ, λ and Σₖ Ψₖ∇Wᵢₖ of group `g`'s rows, on lanes `V` (8: one AVX register where the CPU
    /// has AVX2; every operation is lane-wise, so every path gives the same bits); stores
    /// ∇Wᵢⱼ of each slot in the group's scratch for [`Fluid::correction_group`].
    #[inline(always)]
    fn density_group<V: PairLanes, const WIDE: bool>(
        &self,
        x: &[Vec2],
        slots: &mut SlotLists,
        g: usize,
    ) -> GroupRows {
        match self.density_group_with::<V, false, WIDE>(x, slots, g) {
            Some(rows) => rows,
            // Out of line, so on the baseline lanes (the same bits): code not compiled for
            // AVX2 may not hold `Avx8` values.
            None => self.density_group_coincident::<WIDE>(x, slots, g),
        }
    }

    /// [`Fluid::density_group`] of a group with a coincident pair (rare), on the baseline
    /// lanes.
    #[cold]
    #[inline(never)]
    fn density_group_coincident<const WIDE: bool>(
        &self,
        x: &[Vec2],
        slots: &mut SlotLists,
        g: usize,
    ) -> GroupRows {
        (self.density_group_with::<f32x8, true, WIDE>(x, slots, g)).unwrap_or_default()
    }

    /// [`Fluid::density_group`]. Coincident fluid pairs (‖r‖ ≤ 10⁻⁶ h, where ∇W has no
    /// direction) are treated as 2·10⁻⁶ h apart along an antisymmetric pair direction with
    /// `PATCH`; without it, a group with such a pair gives `None` (the caller retries on a
    /// cold path, which keeps the hot loop free of calls).
    #[inline(always)]
    fn density_group_with<V: PairLanes, const PATCH: bool, const WIDE: bool>(
        &self,
        x: &[Vec2],
        slots: &mut SlotLists,
        g: usize,
    ) -> Option<GroupRows> {
        let splat = <V as Lanes8>::splat;
        let zero = splat(0.0);
        // SAFETY: g is one of the chunk's groups, and the slots were built in this solve from
        // the lists `jacobi::solve_on` checked (indices_within): every row and fluid index is
        // < x.len(), every boundary index < the sample count, the length of both arrays.
        let (fluid, boundary) = unsafe { slots.ranges(g) };
        let (rows, [fluid_count, boundary_count]) =
            unsafe { (*slots.rows.get_unchecked(g), *slots.counts.get_unchecked(g)) };
        let (fluid_count, boundary_count) =
            (V::from_f32x8(fluid_count), V::from_f32x8(boundary_count));
        let xi = rows.map(|i| unsafe { *x.get_unchecked(i as usize) });
        let (xix, xiy): (V, V) = (lanes(|l| xi[l].x), lanes(|l| xi[l].y));
        let tiny = 1e-6 * self.kernel.support_radius();
        let (mut w, mut gx, mut gy, mut g2) = (zero, zero, zero, zero);
        let reader = slots.fluid_reader();
        for (s, at) in fluid.enumerate() {
            // SAFETY: the loop writes only the scratch, not the lists.
            let xj = unsafe { reader.gather::<_, WIDE>(at, x.as_ptr()) };
            let (rx, ry) = (xix - lanes(|l| xj[l].x), xiy - lanes(|l| xj[l].y));
            let mut r = (rx, ry, (rx * rx + ry * ry).sqrt());
            let slot = splat(s as f32);
            let coincident = r.2.le_bits(splat(tiny)) & fluid_count.gt_bits(slot);
            if coincident != 0 {
                if !PATCH {
                    return None;
                }
                // SAFETY: as above.
                let js = unsafe { reader.rows::<WIDE>(at) };
                r = separate_coincident(r, coincident, &rows, &js, tiny);
            }
            let (kw, kgx, kgy) = self.kernel.batch_of(r.0, r.1, r.2);
            // Padding lanes are the row itself (r = 0: ∇W = 0, but W = W(0)).
            w = w + kw.where_gt(fluid_count, slot);
            gx = gx + kgx;
            gy = gy + kgy;
            g2 = g2 + (kgx * kgx + kgy * kgy);
            // SAFETY: `density_block` sized the scratch to the slots before this group.
            unsafe { *slots.gradient.get_unchecked_mut(at) = [kgx.to_f32x8(), kgy.to_f32x8()] };
        }
        let (mut bw, mut bgx, mut bgy) = (zero, zero, zero);
        for (s, at) in boundary.enumerate() {
            let ks = unsafe { *slots.boundary.get_unchecked(at) };
            let (xk, psi) = unsafe {
                (
                    ks.map(|k| *self.boundary_x.get_unchecked(k as usize)),
                    ks.map(|k| *self.boundary_psi.get_unchecked(k as usize)),
                )
            };
            let (rx, ry) = (xix - lanes(|l| xk[l].x), xiy - lanes(|l| xk[l].y));
            let (kw, kgx, kgy) = self.kernel.batch_of(rx, ry, (rx * rx + ry * ry).sqrt());
            // Padding lanes (sample 0) add nothing, even where sample 0 is not finite.
            let psi: V = lanes(|l| psi[l]);
            let real = |v: V| v.where_gt(boundary_count, splat(s as f32));
            bw = bw + real(psi * kw);
            bgx = bgx + real(psi * kgx);
            bgy = bgy + real(psi * kgy);
        }
        let mass = splat(self.mass);
        let density = mass * (splat(self.kernel.w0()) + w) + bw;
        let scale = splat(self.inv_rest_density);
        let c = (density * scale - splat(1.0)).fast_max(zero);
        // ∇ⱼCᵢ = −(m/ρ0)∇Wᵢⱼ, ∇ᵢCᵢ = (m Σ∇Wᵢⱼ + Σ Ψₖ∇Wᵢₖ)/ρ0; λ = 0 where C = 0.
        let (gix, giy) = ((mass * gx + bgx) * scale, (mass * gy + bgy) * scale);
        let m_scale = self.mass * self.inv_rest_density;
        let sum = splat(m_scale * m_scale) * g2 + (gix * gix + giy * giy);
        let lambda = ((zero - c) / (sum + splat(self.epsilon))).where_gt(c, zero);
        Some(GroupRows {
            density: density.to_f32x8(),
            lambda: lambda.to_f32x8(),
            boundary_x: bgx.to_f32x8(),
            boundary_y: bgy.to_f32x8(),
        })
    }

    /// ρ and λ of the rows `block` (the chunk's rows) into `out`; returns their
    /// Σ max(ρᵢ − ρ0, 0) (kg/m²). The first pass of a solve (`first`) builds the chunk's
    /// slots from its lists.
    ///
    /// # Safety
    /// [`NeighborChunk::indices_within`] holds for `chunk`, `block`, `x.len()` fluid rows and
    /// the boundary samples. Unless `first`, the chunk's slots were built from these lists (by
    /// a pass with `first` in this solve).
    #[inline(always)]
    pub(super) unsafe fn density_block<V: PairLanes>(
        &self,
        x: &[Vec2],
        chunk: &mut NeighborChunk,
        block: core::ops::Range<usize>,
        out: &mut [DensityRow],
        first: bool,
    ) -> f64 {
        if first {
            chunk.build_slots(block.start);
        }
        // The scratch may be a buffer lent by the sweep.
        (chunk.slots.gradient).resize(chunk.slots.fluid_slots(), [f32x8::ZERO; 2]);
        let mut error = 0.0f64;
        let wide = chunk.slots.wide();
        for (g, out) in out.chunks_mut(GROUP).enumerate().take(chunk.slots.groups()) {
            let group = if wide {
                self.density_group::<V, true>(x, &mut chunk.slots, g)
            } else {
                self.density_group::<V, false>(x, &mut chunk.slots, g)
            };
            let [density, lambda, bx, by] = [
                group.density,
                group.lambda,
                group.boundary_x,
                group.boundary_y,
            ]
            .map(|v| v.to_array());
            // The fields are written one by one (a whole-row value assembled on the stack and
            // copied out stalls store forwarding on x86).
            for (l, row) in out.iter_mut().enumerate() {
                row.density = density[l];
                row.lambda = lambda[l];
                row.boundary_gradient = Vec2::new(bx[l], by[l]);
                error += (density[l] - self.rest_density).max(0.0) as f64;
            }
        }
        error
    }

    /// [`Fluid::correction_group`] of the slots' own kind ([`SlotLists::wide`]).
    ///
    /// # Safety
    /// As for [`Fluid::correction_group`].
    #[inline(always)]
    pub(super) unsafe fn correction_group_of<V: PairLanes>(
        &self,
        slots: &SlotLists,
        g: usize,
        rows: *const DensityRow,
    ) -> [Vec2; GROUP] {
        // SAFETY: the caller's guarantees; `WIDE` is the slots' kind.
        unsafe {
            if slots.wide() {
                self.correction_group::<V, true>(slots, g, rows)
            } else {
                self.correction_group::<V, false>(slots, g, rows)
            }
        }
    }

    /// Δxᵢ (m) of group `g`'s rows (lane l for its l-th row), from the gradients the density
    /// pass of this iteration stored.
    ///
    /// `rows` points to the fluid's rows: only the rows of the group and of its fluid
    /// neighbours are read, so other threads may write the others meanwhile.
    ///
    /// # Safety
    /// The slots were built by [`Fluid::density_block`] in this solve, from lists checked for
    /// as many fluid rows as `rows` points to, g is one of their groups, `WIDE` is whether they
    /// are [wide](SlotLists::wide), the chunk's ∇W scratch is the buffer its last density pass
    /// sized and wrote, and no thread writes the group's rows or its neighbours' during the
    /// call.
    #[inline(always)]
    pub(super) unsafe fn correction_group<V: PairLanes, const WIDE: bool>(
        &self,
        slots: &SlotLists,
        g: usize,
        rows: *const DensityRow,
    ) -> [Vec2; GROUP] {
        let splat = <V as Lanes8>::splat;
        // SAFETY: the block's density pass ran before in this solve (the schedules in
        // `jacobi` guarantee it) and built the slots from the checked lists: g is one of its
        // groups and every row index is one of the rows `rows` points to.
        let (own, (fluid, _)) = unsafe { (*slots.rows.get_unchecked(g), slots.ranges(g)) };
        let own = own.map(|i| unsafe { *rows.add(i as usize) });
        let li: V = lanes(|l| own[l].lambda);
        let (mut x, mut y) = (splat(0.0), splat(0.0));
        let reader = slots.fluid_reader();
        for at in fluid {
            let (lj, [gx, gy]) = unsafe {
                (
                    reader.gather::<_, WIDE>(at, rows),
                    *slots.gradient.get_unchecked(at),
                )
            };
            let lj = lj.map(|row| row.lambda);
            // Padding lanes have ∇W = 0.
            let s = li + lanes(|l| lj[l]);
            x = x + s * V::from_f32x8(gx);
            y = y + s * V::from_f32x8(gy);
        }
        let (mass, scale) = (splat(self.mass), splat(self.inv_rest_density));
        let (bx, by): (V, V) = (
            lanes(|l| own[l].boundary_gradient.x),
            lanes(|l| own[l].boundary_gradient.y),
        );
        let dx = ((mass * x + li * bx) * scale).to_f32x8().to_array();
        let dy = ((mass * y + li * by) * scale).to_f32x8().to_array();
        core::array::from_fn(|l| Vec2::new(dx[l], dy[l]))
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

    /// The bits of rows.
    fn row_bits(rows: &[DensityRow]) -> Vec<[u32; 4]> {
        let row = |r: &DensityRow| {
            let g = r.boundary_gradient;
            [r.density, r.lambda, g.x, g.y].map(f32::to_bits)
        };
        rows.iter().map(row).collect()
    }

    /// The bits of vectors.
    fn vec_bits(v: &[Vec2]) -> Vec<[u32; 2]> {
        v.iter().map(|v| [v.x.to_bits(), v.y.to_bits()]).collect()
    }

    /// The density pass of every chunk, then Δx of every row from the rows, on the baseline
    /// lanes, on AVX where the CPU has it, and with rows instead of offsets in the fluid
    /// slots (the same bits); returns the rows and Δx.
    fn both_passes(
        fluid: &Fluid,
        x: &[Vec2],
        chunks: &mut [NeighborChunk],
    ) -> (Vec<DensityRow>, Vec<Vec2>) {
        /// With `wide`, the slots are built beforehand with rows.
        fn run<V: PairLanes>(
            fluid: &Fluid,
            x: &[Vec2],
            chunks: &mut [NeighborChunk],
            wide: bool,
        ) -> (Vec<DensityRow>, Vec<Vec2>) {
            let mut rows = vec![DensityRow::default(); x.len()];
            for (c, (chunk, out)) in chunks.iter_mut().zip(rows.chunks_mut(CHUNK)).enumerate() {
                let block = c * CHUNK..c * CHUNK + out.len();
                assert!(chunk.indices_within(
                    block.start,
                    out.len(),
                    x.len(),
                    fluid.boundary_x.len()
                ));
                if wide {
                    let mut slots = core::mem::take(&mut chunk.slots);
                    slots.build_with(chunk, block.start, 0);
                    chunk.slots = slots;
                }
                // SAFETY: the lists were checked just above; `first` builds the slots (else
                // they were built from them just above).
                let error = unsafe { fluid.density_block::<V>(x, chunk, block, out, !wide) };
                let excess = out
                    .iter()
                    .map(|r| (r.density - fluid.rest_density).max(0.0));
                assert_eq!(
                    error,
                    excess.map(f64::from).sum::<f64>(),
                    "error of block {c}"
                );
            }
            let mut delta = Vec::new();
            for chunk in chunks.iter() {
                for g in 0..chunk.slots.groups() {
                    // SAFETY: the slots were built above from the checked lists.
                    let group =
                        unsafe { fluid.correction_group_of::<V>(&chunk.slots, g, rows.as_ptr()) };
                    let real = (chunk.fluid_count.len() - g * GROUP).min(GROUP);
                    delta.extend_from_slice(&group[..real]);
                }
            }
            (rows, delta)
        }
        let wide = run::<f32x8>(fluid, x, chunks, true);
        assert!(
            chunks.iter().any(|c| c.slots.wide()),
            "no chunk has wide slots"
        );
        let baseline = run::<f32x8>(fluid, x, chunks, false);
        assert!(
            chunks.iter().all(|c| !c.slots.wide()),
            "a chunk has wide slots"
        );
        // The same ρ, λ and Δx bits as the baseline passes over offsets.
        let same = |(rows, delta): &(Vec<DensityRow>, Vec<Vec2>), what: &str| {
            assert_eq!(row_bits(rows), row_bits(&baseline.0), "ρ, λ: {what}");
            assert_eq!(vec_bits(delta), vec_bits(&baseline.1), "Δx: {what}");
        };
        same(&wide, "rows, offsets");
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            #[target_feature(enable = "avx2")]
            fn avx2(
                fluid: &Fluid,
                x: &[Vec2],
                chunks: &mut [NeighborChunk],
                wide: bool,
            ) -> (Vec<DensityRow>, Vec<Vec2>) {
                run::<Avx8>(fluid, x, chunks, wide)
            }
            let scratch: Vec<_> = chunks.iter().map(|c| c.slots.gradient.clone()).collect();
            // Every scratch entry must be written again.
            let poison = |chunks: &mut [NeighborChunk]| {
                for chunk in chunks.iter_mut() {
                    chunk.slots.gradient.fill([f32x8::splat(f32::NAN); 2]);
                }
            };
            poison(chunks);
            // SAFETY: the CPU has AVX2.
            let wide = unsafe { avx2(fluid, x, chunks, true) };
            same(&wide, "AVX rows");
            poison(chunks);
            // SAFETY: the CPU has AVX2.
            let avx = unsafe { avx2(fluid, x, chunks, false) };
            same(&avx, "AVX and baseline");
            let lane_bits = |g: &[[f32x8; 2]]| -> Vec<[[u32; GROUP]; 2]> {
                g.iter()
                    .map(|g| g.map(|v| v.to_array().map(f32::to_bits)))
                    .collect()
            };
            for (chunk, before) in chunks.iter().zip(&scratch) {
                assert_eq!(lane_bits(&chunk.slots.gradient), lane_bits(before));
            }
        }
        #[cfg(target_arch = "x86_64")]
        if !has_avx2() {
            eprintln!("no AVX2: only the baseline passes were run");
        }
        baseline
    }

    #[test]
    fn density_and_correction_have_the_same_bits_on_every_path_and_the_direct_sums() {
        let settings = FluidSettings::default();
        let h = settings.support_radius;
        let spacing = 2.0 * settings.particle_radius;
        let mut seed = 7;
        // A jittered, squeezed block of 403 rows (a partial last chunk and group), one particle
        // duplicated (a coincident pair), and a wall of boundary samples below it.
        let mut x: Vec<Vec2> = (0..403)
            .map(|k| {
                let jitter = Vec2::new(lcg(&mut seed), lcg(&mut seed)) - 0.5;
                Vec2::new((k % 20) as f32, (k / 20) as f32 * 0.8 + 0.5) * spacing
                    + 0.3 * spacing * jitter
            })
            .collect();
        x[77] = x[78];
        // Sample 0 is not finite and nobody's neighbour: padding lanes read it, and must not
        // turn its NaN offsets into NaN rows.
        let mut boundary_x: Vec<Vec2> = (0..40)
            .map(|k| Vec2::new(k as f32 * 0.5 * spacing, 0.0))
            .collect();
        boundary_x[0] = Vec2::new(f32::INFINITY, 0.0);
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
            // Large enough to matter in λ (the default 10⁻⁶ is negligible against the sums,
            // ~300 m⁻² here).
            epsilon: 100.0,
            over_relaxation: 1.0,
            boundary_x: &boundary_x,
            boundary_psi: &boundary_psi,
        };
        let (rows, delta) = both_passes(&fluid, &x, &mut chunks);
        assert_eq!(delta.len(), x.len());
        let close = |a: f32, b: f32, scale: f32| (a - b).abs() <= 1e-4 * scale;
        let mut compressed = 0;
        for (c, chunk) in chunks.iter().enumerate() {
            let slots = &chunk.slots;
            for g in 0..slots.groups() {
                let fluid_count = slots.counts[g][0].to_array();
                // SAFETY: g < groups().
                let (range, _) = unsafe { slots.ranges(g) };
                // Each pair's scratch lane holds ∇Wᵢⱼ of the pairwise kernel, bit for bit
                // (the coincident pair, pushed apart, is left out), padding lanes 0.
                for (s, at) in range.enumerate() {
                    let [gx, gy] = slots.gradient[at].map(|v| v.to_array());
                    for l in 0..GROUP {
                        let (i, j) = (
                            slots.rows[g][l] as usize,
                            unsafe { slots.fluid_rows(at) }[l] as usize,
                        );
                        if s as f32 >= fluid_count[l] {
                            assert!(gx[l] == 0.0 && gy[l] == 0.0, "padding of {i}");
                        } else if x[i] != x[j] {
                            let g = fluid.kernel.gradient(x[i] - x[j]);
                            let bits = |v: Vec2| (v.x.to_bits(), v.y.to_bits());
                            assert_eq!(bits(Vec2::new(gx[l], gy[l])), bits(g), "{i}–{j}");
                        }
                    }
                }
            }
            for k in 0..chunk.fluid_count.len() {
                let i = c * CHUNK + k;
                let row = rows[i];
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
                    close(row.density, direct, direct),
                    "ρ of {i}: {}",
                    row.density
                );
                if row.lambda < 0.0 {
                    compressed += 1;
                }
                assert!(
                    row.lambda.is_finite() && row.boundary_gradient.is_finite(),
                    "row {i}"
                );
                if i == 77 || i == 78 {
                    continue; // the coincident pair, pushed apart
                }
                // Σₖ Ψₖ∇Wᵢₖ and λᵢ = −Cᵢ / (Σⱼ (m/ρ0)² |∇Wᵢⱼ|² + |∇ᵢCᵢ|² + ε) from direct sums.
                let near = |p: Vec2| (x[i] - p).length() < h;
                let boundary_gradient = (boundary_x.iter().zip(&boundary_psi))
                    .filter(|&(&p, _)| near(p))
                    .map(|(&p, &psi)| psi * fluid.kernel.gradient(x[i] - p))
                    .sum::<Vec2>();
                let scale = boundary_gradient.length().max(1e-3);
                let (a, b) = (row.boundary_gradient, boundary_gradient);
                assert!(
                    close(a.x, b.x, scale) && close(a.y, b.y, scale),
                    "Σ Ψ∇W of {i}"
                );
                let gradients: Vec<Vec2> = (x.iter().enumerate())
                    .filter(|&(j, &p)| j != i && near(p))
                    .map(|(_, &p)| fluid.kernel.gradient(x[i] - p))
                    .collect();
                let m_scale = fluid.mass / fluid.rest_density;
                let grad_i = (fluid.mass * gradients.iter().sum::<Vec2>() + boundary_gradient)
                    / fluid.rest_density;
                let sum = (gradients.iter())
                    .map(|g| m_scale * m_scale * g.length_squared())
                    .sum::<f32>()
                    + grad_i.length_squared();
                let c = (row.density / fluid.rest_density - 1.0).max(0.0);
                let lambda = -c / (sum + fluid.epsilon);
                assert!(
                    close(row.lambda, lambda, lambda.abs().max(1e-9)),
                    "λ of {i}: {} vs {lambda}",
                    row.lambda
                );
                // Δxᵢ against (1/ρ0)(Σⱼ m (λᵢ + λⱼ) ∇Wᵢⱼ + λᵢ Σₖ Ψₖ ∇Wᵢₖ).
                let fluid_part = (x.iter().enumerate())
                    .filter(|&(j, _)| j != i)
                    .map(|(j, &p)| {
                        fluid.mass * (row.lambda + rows[j].lambda) * fluid.kernel.gradient(x[i] - p)
                    })
                    .sum::<Vec2>();
                let direct = (fluid_part + row.lambda * row.boundary_gradient) / fluid.rest_density;
                let scale = direct.length().max(1e-9);
                assert!(
                    close(delta[i].x, direct.x, scale) && close(delta[i].y, direct.y, scale),
                    "Δx of {i}: {} vs {direct}",
                    delta[i]
                );
            }
        }
        assert!(compressed > 50, "rows with λ < 0: {compressed}");
    }
}
