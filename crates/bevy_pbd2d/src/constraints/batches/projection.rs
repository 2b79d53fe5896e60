//! The Gauss-Seidel sweep over [`DistanceBatches`] and the stretch statistic, 8 constraints
//! at a time on [`Lanes8`] vectors (compiled for AVX2 where the CPU has it).

use bevy::prelude::*;
use wide::f32x8;

use super::{ColourRun, DistanceBatches};
use crate::constraints::lane_positions::{GroupRows, LANES, PositionLanes};
use crate::constraints::row::COINCIDENT;
use crate::dynamics::coincident::separation_direction;
use crate::simd::Lanes8;
#[cfg(target_arch = "x86_64")]
use crate::simd::{Avx8, has_avx2};

impl DistanceBatches {
    /// One Gauss-Seidel sweep over all constraints in row order, with the coefficients of the
    /// last [`set_coefficients`](Self::set_coefficients). `x` are the particle positions (m),
    /// `lambda` the accumulated Lagrange multiplier λ (kg·m) of each constraint. Positions no
    /// constraint moves keep their bits, except that a signalling NaN next to a group's
    /// particles may come back quiet (the plugin's prediction step has quieted them already).
    ///
    /// # Panics
    /// If `lambda` has not one entry per constraint, if `set_coefficients` did not get one
    /// inverse mass per position, or if `x` has fewer positions than the particle count the
    /// layout was made for ([`new`](Self::new)).
    pub fn project_sweep(&self, x: &mut [Vec2], lambda: &mut [f32]) {
        assert_eq!(lambda.len(), self.len(), "one λ per constraint");
        self.check_rows(x);
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            // SAFETY: the CPU has AVX2.
            return unsafe { self.project_sweep_avx2(x, lambda) };
        }
        // SAFETY: `f32x8` runs on every CPU.
        unsafe { self.project_sweep_unchecked::<f32x8>(x, lambda) };
    }

    /// [`project_sweep_unchecked`](Self::project_sweep_unchecked) compiled for AVX2, on
    /// 8-lane AVX vectors.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn project_sweep_avx2(&self, x: &mut [Vec2], lambda: &mut [f32]) {
        // SAFETY: compiled for AVX2, and called only where the CPU has it.
        unsafe { self.project_sweep_unchecked::<Avx8>(x, lambda) };
    }

    /// [`project_sweep`](Self::project_sweep) after its checks, on lanes `V`.
    ///
    /// # Safety
    /// The CPU runs `V`'s instructions ([`Avx8`]: AVX2), and this is inlined into a function
    /// compiled for them.
    #[inline(always)]
    pub(super) unsafe fn project_sweep_unchecked<V: PositionLanes>(
        &self,
        x: &mut [Vec2],
        lambda: &mut [f32],
    ) {
        for run in &self.runs {
            // SAFETY: passed on from the caller.
            unsafe {
                if run.rigid {
                    self.project_run::<V, true>(run, x, lambda);
                } else {
                    self.project_run::<V, false>(run, x, lambda);
                }
            }
        }
    }

    /// Projects the constraints of `run` on lanes `V`; `RIGID`: all of them have α = 0.
    ///
    /// # Safety
    /// As [`project_sweep_unchecked`](Self::project_sweep_unchecked).
    #[inline(always)]
    pub(super) unsafe fn project_run<V: PositionLanes, const RIGID: bool>(
        &self,
        run: &ColourRun,
        x: &mut [Vec2],
        lambda: &mut [f32],
    ) {
        let groups = &self.groups[run.first_group..run.end_group];
        self.for_each_group(
            groups,
            #[inline(always)]
            |start, count, rows| project_group::<V, RIGID>(self, start, count, rows, x, lambda),
        );
    }

    /// Largest |‖x₁ − x₂‖ − d| / d over constraints with d > 0 (dimensionless), computed as the
    /// larger of √r − 1 and 1 − √r for the largest and the smallest
    /// r = (Δx/d)² + (Δy/d)² (no square root or division per constraint; within 10⁻⁶ (1 + s)
    /// of the direct formula's s, ∞ for a stretch beyond 10¹⁹). Constraints whose r is NaN, and
    /// those whose 1/d is not finite (d below 10⁻³⁸), are left out.
    pub fn max_relative_stretch(&self, x: &[Vec2]) -> f32 {
        self.check_rows(x);
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            // SAFETY: the CPU has AVX2.
            return unsafe { self.max_relative_stretch_avx2(x) };
        }
        // SAFETY: `f32x8` runs on every CPU.
        unsafe { self.max_relative_stretch_unchecked::<f32x8>(x) }
    }

    /// [`max_relative_stretch_unchecked`](Self::max_relative_stretch_unchecked) compiled for
    /// AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn max_relative_stretch_avx2(&self, x: &[Vec2]) -> f32 {
        // SAFETY: compiled for AVX2, and called only where the CPU has it.
        unsafe { self.max_relative_stretch_unchecked::<Avx8>(x) }
    }

    /// [`max_relative_stretch`](Self::max_relative_stretch) after its checks, on lanes `V`.
    ///
    /// # Safety
    /// As [`project_sweep_unchecked`](Self::project_sweep_unchecked).
    #[inline(always)]
    unsafe fn max_relative_stretch_unchecked<V: PositionLanes>(&self, x: &[Vec2]) -> f32 {
        let (mut largest, mut smallest) = (V::splat(1.0), V::splat(1.0));
        self.for_each_group(
            &self.groups,
            #[inline(always)]
            |start, count, rows| {
                let ratio = squared_length_ratio(self, start, count, rows, x);
                // Both keep the old lanes where the candidate is NaN.
                largest = largest.larger(ratio);
                smallest = smallest.smaller(ratio);
            },
        );
        let lanes = |v: V| v.to_f32x8().to_array();
        let r_max = lanes(largest).into_iter().fold(1.0, f32::max);
        let r_min = lanes(smallest).into_iter().fold(1.0, f32::min);
        (r_max.sqrt() - 1.0).max(1.0 - r_min.sqrt())
    }
}

/// Entries `start .. start + count` of `v` (`count` ≤ [`LANES`]) as lanes `V`, 0 in the
/// unused lanes.
///
/// # Safety
/// `start + count` ≤ `v.len()`.
#[inline(always)]
unsafe fn load_lanes<V: Lanes8>(v: &[f32], start: usize, count: usize) -> V {
    debug_assert!(start + count <= v.len());
    let mut lanes = [0.0; LANES];
    // SAFETY: passed on from the caller.
    lanes[..count].copy_from_slice(unsafe { v.get_unchecked(start..start + count) });
    V::from_f32x8(f32x8::new(lanes))
}

/// Projects constraints `start .. start + count` (`count` ≤ [`LANES`]) on lanes `V`; they
/// must share no particle when `count` > 1 (nor with the holes of contiguous `rows`). `RIGID`:
/// every one has α = 0, so α̃ λ (±0 while λ is finite) is left out, which gives the same bits:
/// d − ‖x₁ − x₂‖ is never −0.
#[inline(always)]
fn project_group<V: PositionLanes, const RIGID: bool>(
    batches: &DistanceBatches,
    start: usize,
    count: usize,
    rows: &GroupRows,
    x: &mut [Vec2],
    lambda: &mut [f32],
) {
    // SAFETY: `check_rows` ran: every `a` and `b` is less than `x.len()`, and `rows` are rows
    // of constraints (or repeat lane 0), or holes' rows, less than the particle count of the
    // layout, which is at most `x.len()`.
    let (dx, dy) = unsafe { V::gather_deltas(x, rows) };
    let length = (dx * dx + dy * dy).sqrt();
    let inv_length = V::splat(1.0) / length;
    let coincident = V::splat(COINCIDENT);
    let (mut nx, mut ny) = (
        (dx * inv_length).where_gt(length, coincident),
        (dy * inv_length).where_gt(length, coincident),
    );
    let separated = length.gt_bits(coincident);
    if separated != (1 << LANES) - 1 {
        let (mut x_lanes, mut y_lanes) = (nx.to_f32x8().to_array(), ny.to_f32x8().to_array());
        for l in (0..count).filter(|&l| separated & (1 << l) == 0) {
            let n = separation_direction(start + l);
            (x_lanes[l], y_lanes[l]) = (n.x, n.y);
        }
        (nx, ny) = (
            V::from_f32x8(f32x8::new(x_lanes)),
            V::from_f32x8(f32x8::new(y_lanes)),
        );
    }
    // SAFETY (the loads): groups lie within the constraint rows, and every per-constraint array
    // (λ included, checked by `project_sweep`) has one entry per row (`new`,
    // `set_coefficients`). No closure for them: one that is not inlined would be compiled
    // without AVX (`Avx8`).
    let (rest_length, inv_denominator, lambda_old): (V, V, V) = unsafe {
        (
            load_group_lanes(&batches.rest_length, start, count),
            load_group_lanes(&batches.inv_denominator, start, count),
            load_group_lanes(lambda, start, count),
        )
    };
    let minus_c = rest_length - length;
    let d_lambda = if RIGID {
        minus_c * inv_denominator
    } else {
        // SAFETY: as above.
        let alpha_tilde: V = unsafe { load_group_lanes(&batches.alpha_tilde, start, count) };
        (minus_c - alpha_tilde * lambda_old) * inv_denominator
    };
    let lambda_new = (lambda_old + d_lambda).to_f32x8().to_array();
    debug_assert!(start + count <= lambda.len());
    // SAFETY: as for `load`.
    unsafe { lambda.get_unchecked_mut(start..start + count) }.copy_from_slice(&lambda_new[..count]);
    // SAFETY: as above.
    let (w_a, w_b): (V, V) = unsafe {
        (
            load_group_lanes(&batches.w_a, start, count),
            load_group_lanes(&batches.w_b, start, count),
        )
    };
    let (step_a, step_b) = (w_a * d_lambda, w_b * d_lambda);
    let (step_a, step_b) = ((step_a * nx, step_a * ny), (step_b * nx, step_b * ny));
    // SAFETY: as above; the used lanes' particles are distinct (one colour, or one lane), and
    // a contiguous group's holes are particle rows distinct from them (`contiguous_layout`,
    // `check_rows`).
    unsafe { V::correct(x, rows, count, step_a, step_b) };
}

/// Entries `start .. start + count` of `v` (`count` ≤ [`LANES`]) as lanes `V`; the unused lanes
/// hold the entries that follow where `v` has them (a group's unused lanes are dropped), else 0.
///
/// # Safety
/// `start + count` ≤ `v.len()`.
#[inline(always)]
unsafe fn load_group_lanes<V: Lanes8>(v: &[f32], start: usize, count: usize) -> V {
    if count < LANES && start + LANES <= v.len() {
        // SAFETY: `start + LANES` ≤ `v.len()`.
        let lanes = unsafe {
            v.as_ptr()
                .add(start)
                .cast::<[f32; LANES]>()
                .read_unaligned()
        };
        V::from_f32x8(f32x8::new(lanes))
    } else {
        // SAFETY: passed on from the caller.
        unsafe { load_lanes(v, start, count) }
    }
}

/// r = (Δx/d)² + (Δy/d)² of constraints `start .. start + count` (particle rows `rows`) on lanes
/// `V`; 1 (no stretch) where 1/d is stored as 0 and in the unused lanes.
#[inline(always)]
fn squared_length_ratio<V: PositionLanes>(
    batches: &DistanceBatches,
    start: usize,
    count: usize,
    rows: &GroupRows,
    x: &[Vec2],
) -> V {
    // SAFETY: `check_rows` ran: every `a` and `b` is less than `x.len()`.
    let (dx, dy) = unsafe { V::gather_deltas(x, rows) };
    // SAFETY: `start + count` ≤ the number of constraints, the length of the array.
    let inv_d: V = unsafe { load_lanes(&batches.inv_rest_length, start, count) };
    let (u, v) = (dx * inv_d, dy * inv_d);
    let (zero, one) = (V::splat(0.0), V::splat(1.0));
    // r + 0 or 0 + 1: both exact.
    (u * u + v * v).where_gt(inv_d, zero) + (one - one.where_gt(inv_d, zero))
}
