//! The two passes of a density iteration on a group of 8 fluid rows: ρ, C and λ (the density
//! pass), then Δx (the correction pass), on 8-lane vectors over slot-major neighbour lists.

use bevy::prelude::*;
use wide::f32x8;

use crate::dynamics::coincident::pair_direction;
use crate::fluid::artificial_pressure::ArtificialPressureTerms;
use crate::fluid::density::state::DensityRow;
use crate::fluid::kernel::{CubicSpline, KernelLanes};
use crate::fluid::neighbors::NeighborChunk;
use crate::fluid::slots::{GROUP, Slot, SlotLists};
use crate::simd::Lanes8;

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
    /// Chebyshev weight w_k of correction k ([`FluidSettings::chebyshev`]; empty: none).
    ///
    /// [`FluidSettings::chebyshev`]: crate::fluid::FluidSettings::chebyshev
    pub chebyshev: &'a [f32],
    /// Longest correction ω Δxᵢ of one iteration (m): [`MAX_STEP_RADII`] r.
    pub max_step: f32,
    /// When the fluid rows' masses differ (phases), the largest mobility μ_max = max wᵢ m:
    /// λᵢ is divided by it and each row's Δxᵢ multiplied by its own μᵢ
    /// ([`phases`](crate::fluid::phases)).
    pub largest_mobility: Option<f32>,
    /// s_corr's constants, when on ([`artificial_pressure`](crate::fluid::artificial_pressure)).
    pub artificial_pressure: Option<ArtificialPressureTerms>,
    pub boundary_x: &'a [Vec2],
    pub boundary_psi: &'a [f32],
}

/// ρᵢ (kg/m²), λᵢ, Σₖ Ψₖ∇Wᵢₖ (kg/m³) and, with s_corr, Σⱼ s_corr ∇Wᵢⱼ (1/m³) of the rows of
/// a group, lane l for its l-th row.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct GroupRows {
    pub density: f32x8,
    pub lambda: f32x8,
    pub boundary_x: f32x8,
    pub boundary_y: f32x8,
    pub s_corr_x: f32x8,
    pub s_corr_y: f32x8,
}

/// The lanes `f(0), …, f(7)`.
#[inline(always)]
pub(super) fn lanes<V: Lanes8>(f: impl Fn(usize) -> f32) -> V {
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
    fn density_group<V: PairLanes, const WIDE: bool, const SCORR: bool>(
        &self,
        x: &[Vec2],
        slots: &mut SlotLists,
        g: usize,
    ) -> GroupRows {
        match self.density_group_with::<V, false, WIDE, SCORR>(x, slots, g) {
            Some(rows) => rows,
            // Out of line, so on the baseline lanes (the same bits): code not compiled for
            // AVX2 may not hold `Avx8` values.
            None => self.density_group_coincident::<WIDE, SCORR>(x, slots, g),
        }
    }

    /// [`Fluid::density_group`] of a group with a coincident pair (rare), on the baseline
    /// lanes.
    #[cold]
    #[inline(never)]
    fn density_group_coincident<const WIDE: bool, const SCORR: bool>(
        &self,
        x: &[Vec2],
        slots: &mut SlotLists,
        g: usize,
    ) -> GroupRows {
        (self.density_group_with::<f32x8, true, WIDE, SCORR>(x, slots, g)).unwrap_or_default()
    }

    /// [`Fluid::density_group`]. Coincident fluid pairs (‖r‖ ≤ 10⁻⁶ h, where ∇W has no
    /// direction) are treated as 2·10⁻⁶ h apart along an antisymmetric pair direction with
    /// `PATCH`; without it, a group with such a pair gives `None` (the caller retries on a
    /// cold path, which keeps the hot loop free of calls). With `SCORR`, also Σⱼ s_corr ∇Wᵢⱼ
    /// ([`artificial_pressure`](crate::fluid::artificial_pressure)).
    #[inline(always)]
    fn density_group_with<V: PairLanes, const PATCH: bool, const WIDE: bool, const SCORR: bool>(
        &self,
        x: &[Vec2],
        slots: &mut SlotLists,
        g: usize,
    ) -> Option<GroupRows> {
        let splat = <V as Lanes8>::splat;
        let zero = splat(0.0);
        // SAFETY: g is one of the chunk's groups, and the slots were built in this solve from
        // the lists `solve::solve_in` checked (`lists_fit`): every row and fluid index is
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
        let (mut sx, mut sy) = (zero, zero);
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
            if SCORR && let Some(terms) = &self.artificial_pressure {
                // Padding lanes have ∇W = 0, so they add nothing.
                let s_corr = terms.of(kw);
                sx = sx + s_corr * kgx;
                sy = sy + s_corr * kgy;
            }
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
            s_corr_x: sx.to_f32x8(),
            s_corr_y: sy.to_f32x8(),
        })
    }

    /// ρ and λ of the rows `block` (the chunk's rows) into `out` (and with s_corr, its part of
    /// the correction, (m/ρ0) Σⱼ s_corr ∇Wᵢⱼ, divided by μ_max with phases, into `s_corr`);
    /// returns their
    /// Σ max(ρᵢ − ρ0, 0) (kg/m²). The first pass of a solve (`first`) builds the chunk's
    /// slots from its lists. A row with w = 0 (`w`: the block's inverse masses) is not corrected
    /// and is treated like a boundary sample: λ = 0 (it asks its neighbours for no room of its
    /// own; they keep theirs from its density) and no part of the error. With a Chebyshev
    /// weight `chebyshev` ≠ 1 (w_k of the correction that follows), each row stores its
    /// extrapolated multiplier μ in place of λ (module docs; `out` holds the last pass's μ).
    ///
    /// # Safety
    /// [`NeighborLists::indices_within`](crate::fluid::neighbors::NeighborLists::indices_within)
    /// holds for `chunk`, `block`, `x.len()` fluid rows and the boundary samples. Unless `first`, the chunk's slots were built from these lists (by
    /// a pass with `first` in this solve).
    #[inline(always)]
    pub(super) unsafe fn density_block<V: PairLanes>(
        &self,
        x: &[Vec2],
        chunk: &mut NeighborChunk,
        block: core::ops::Range<usize>,
        out: &mut [DensityRow],
        (w, first, mut s_corr): (&[f32], bool, Option<&mut [Vec2]>),
        chebyshev: f32,
    ) -> f64 {
        if first {
            chunk.build_slots(block.start);
        }
        // The scratch may be a buffer lent by the pipeline.
        (chunk.slots.gradient).resize(chunk.slots.fluid_slots(), [f32x8::ZERO; 2]);
        let mut error = 0.0f64;
        let wide = chunk.slots.wide();
        let slots = &mut chunk.slots;
        for (g, out) in out.chunks_mut(GROUP).enumerate().take(slots.groups()) {
            let group = match (wide, s_corr.is_some()) {
                (true, false) => self.density_group::<V, true, false>(x, slots, g),
                (false, false) => self.density_group::<V, false, false>(x, slots, g),
                (true, true) => self.density_group::<V, true, true>(x, slots, g),
                (false, true) => self.density_group::<V, false, true>(x, slots, g),
            };
            if let Some(s_corr) = s_corr.as_deref_mut() {
                // (m/ρ0) Σⱼ s_corr ∇Wᵢⱼ, over μ_max with phases (as λ).
                let scale =
                    self.mass * self.inv_rest_density / self.largest_mobility.unwrap_or(1.0);
                let (sx, sy) = (group.s_corr_x.to_array(), group.s_corr_y.to_array());
                let rows = s_corr.iter_mut().skip(g * GROUP).take(out.len());
                for (l, row) in rows.enumerate() {
                    *row = scale * Vec2::new(sx[l], sy[l]);
                }
            }
            // Rows with w = 0 (and padding lanes) have λ = 0 and no share of the error.
            let zero = <V as Lanes8>::splat(0.0);
            let movable: V = match w.get(g * GROUP..g * GROUP + GROUP) {
                Some(full) => V::from_f32x8(f32x8::new(full.try_into().expect("a group"))),
                None => lanes(|l| w.get(g * GROUP + l).copied().unwrap_or(0.0)),
            };
            let density_v = V::from_f32x8(group.density);
            let lambda = V::from_f32x8(group.lambda);
            // Phases: λᵢ / μ_max (the denominator's mobilities bounded by the largest).
            let lambda = match self.largest_mobility {
                Some(mu) => lambda / <V as Lanes8>::splat(mu),
                None => lambda,
            };
            let excess = zero.larger(density_v - <V as Lanes8>::splat(self.rest_density));
            let [density, lambda, bx, by, excess] = [
                group.density,
                lambda.where_gt(movable, zero).to_f32x8(),
                group.boundary_x,
                group.boundary_y,
                excess.where_gt(movable, zero).to_f32x8(),
            ]
            .map(|v| v.to_array());
            // The fields are written one by one (a whole-row value assembled on the stack and
            // copied out stalls store forwarding on x86).
            for (l, row) in out.iter_mut().enumerate() {
                row.density = density[l];
                // Chebyshev on the multipliers (module docs): μᵢ⁽ᵏ⁾ = w_k λᵢ⁽ᵏ⁾ + (w_k − 1) μᵢ⁽ᵏ⁻¹⁾,
                // μᵢ⁽ᵏ⁻¹⁾ being what the row held; a row with λ = 0 (free) is not extrapolated,
                // and one that held μ = 0 (inactive) starts again from w = 1.
                row.lambda = match lambda[l] {
                    lambda if chebyshev == 1.0 || lambda == 0.0 || row.lambda == 0.0 => lambda,
                    lambda => chebyshev * lambda + (chebyshev - 1.0) * row.lambda,
                };
                row.boundary_gradient = Vec2::new(bx[l], by[l]);
                error += excess[l] as f64;
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
    ) -> (V, V) {
        // SAFETY: the caller's guarantees; `WIDE` is the slots' kind.
        unsafe {
            if slots.wide() {
                self.correction_group::<V, true>(slots, g, rows)
            } else {
                self.correction_group::<V, false>(slots, g, rows)
            }
        }
    }

    /// Δxᵢ (m) of group `g`'s rows, x and y (lane l for its l-th row), from the gradients the
    /// density pass of this iteration stored.
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
    ) -> (V, V) {
        let splat = <V as Lanes8>::splat;
        // SAFETY: the block's density pass ran before in this solve (the schedules in
        // `solve` guarantee it) and built the slots from the checked lists: g is one of its
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
        ((mass * x + li * bx) * scale, (mass * y + li * by) * scale)
    }
}
