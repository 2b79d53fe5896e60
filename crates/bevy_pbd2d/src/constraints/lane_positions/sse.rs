//! Two rows per SSE register.

use core::arch::x86_64::*;

use bevy::prelude::*;
use wide::f32x8;

use super::rows::{CONSECUTIVE_ORDER, GroupRows, LANES, PAIRED_ORDER};

/// The rows `i` and `j` of `x` as (xᵢ, yᵢ, xⱼ, yⱼ).
///
/// # Safety
/// `i` and `j` index `x`.
#[inline(always)]
unsafe fn load_two(x: &[Vec2], i: u32, j: u32) -> __m128 {
    let p = x.as_ptr().cast::<f64>();
    // SAFETY: a `Vec2` is 8 bytes (two f32), read as the bits of one f64.
    unsafe {
        let lo = _mm_set_sd(p.add(i as usize).read_unaligned());
        let hi = _mm_set_sd(p.add(j as usize).read_unaligned());
        _mm_castpd_ps(_mm_unpacklo_pd(lo, hi))
    }
}

/// Stores (xᵢ, yᵢ) of `v` to row `i` and, when `both`, (xⱼ, yⱼ) to row `j`.
///
/// # Safety
/// `i` and `j` index `x`.
#[inline(always)]
unsafe fn store_two(x: &mut [Vec2], i: u32, j: u32, v: __m128, both: bool) {
    let p = x.as_mut_ptr().cast::<f64>();
    // SAFETY: a `Vec2` is 8 bytes (two f32), written as the bits of one f64.
    unsafe {
        let v = _mm_castps_pd(v);
        p.add(i as usize).write_unaligned(_mm_cvtsd_f64(v));
        if both {
            p.add(j as usize)
                .write_unaligned(_mm_cvtsd_f64(_mm_unpackhi_pd(v, v)));
        }
    }
}

/// The rows `i` and `i + 1` of `x` as (xᵢ, yᵢ, xᵢ₊₁, yᵢ₊₁).
///
/// # Safety
/// `i + 1` indexes `x`.
#[inline(always)]
unsafe fn load_run(x: &[Vec2], i: u32) -> __m128 {
    // SAFETY: two `Vec2` are 16 bytes (four f32).
    unsafe { _mm_loadu_ps(x.as_ptr().add(i as usize).cast::<f32>()) }
}

/// Stores `v` to the rows `i` and `i + 1`.
///
/// # Safety
/// `i + 1` indexes `x`.
#[inline(always)]
unsafe fn store_run(x: &mut [Vec2], i: u32, v: __m128) {
    // SAFETY: two `Vec2` are 16 bytes (four f32).
    unsafe { _mm_storeu_ps(x.as_mut_ptr().add(i as usize).cast::<f32>(), v) }
}

/// The lanes 0..4 and 4..8 of `v`.
#[inline(always)]
fn halves(v: f32x8) -> [__m128; 2] {
    // SAFETY: both are 8 f32 in lane order.
    unsafe { core::mem::transmute::<f32x8, [__m128; 2]>(v) }
}

/// (xₗ, yₗ, xₗ₊₁, yₗ₊₁) of the lanes l = 0, 2, 4, 6 of the vectors `vx`, `vy`.
#[inline(always)]
fn lane_pairs(vx: f32x8, vy: f32x8) -> [__m128; 4] {
    let ([x_lo, x_hi], [y_lo, y_hi]) = (halves(vx), halves(vy));
    // SAFETY: SSE is part of x86_64.
    unsafe {
        [
            _mm_unpacklo_ps(x_lo, y_lo),
            _mm_unpackhi_ps(x_lo, y_lo),
            _mm_unpacklo_ps(x_hi, y_hi),
            _mm_unpackhi_ps(x_hi, y_hi),
        ]
    }
}

/// The inverse of [`lane_pairs`].
#[inline(always)]
fn from_lane_pairs([d0, d1, d2, d3]: [__m128; 4]) -> (f32x8, f32x8) {
    const EVEN: i32 = 0b10_00_10_00;
    const ODD: i32 = 0b11_01_11_01;
    // SAFETY: SSE is part of x86_64; both are 8 f32 in lane order.
    unsafe {
        let dx = [
            _mm_shuffle_ps::<EVEN>(d0, d1),
            _mm_shuffle_ps::<EVEN>(d2, d3),
        ];
        let dy = [_mm_shuffle_ps::<ODD>(d0, d1), _mm_shuffle_ps::<ODD>(d2, d3)];
        (
            core::mem::transmute::<[__m128; 2], f32x8>(dx),
            core::mem::transmute::<[__m128; 2], f32x8>(dy),
        )
    }
}

/// `position_lanes::gather_deltas`.
#[inline(always)]
pub(super) unsafe fn gather_deltas(x: &[Vec2], rows: &GroupRows) -> (f32x8, f32x8) {
    // (dx, dy) of lanes l and l + 1.
    // SAFETY (all three): every row indexes `x`.
    let delta = |l: usize| unsafe {
        match *rows {
            GroupRows::Scattered { a, b } => {
                _mm_sub_ps(load_two(x, a[l], a[l + 1]), load_two(x, b[l], b[l + 1]))
            }
            GroupRows::Consecutive { a, b } => {
                // Lanes l and l + 1 take consecutive rows.
                let o = CONSECUTIVE_ORDER[l];
                _mm_sub_ps(load_run(x, a + o), load_run(x, b + o))
            }
            GroupRows::Paired { a } => {
                // (a(l), b(l)) and (a(l + 1), b(l + 1)).
                let p = _mm_castps_pd(load_run(x, a + 2 * PAIRED_ORDER[l]));
                let q = _mm_castps_pd(load_run(x, a + 2 * PAIRED_ORDER[l + 1]));
                _mm_sub_ps(
                    _mm_castpd_ps(_mm_unpacklo_pd(p, q)),
                    _mm_castpd_ps(_mm_unpackhi_pd(p, q)),
                )
            }
        }
    };
    from_lane_pairs([delta(0), delta(2), delta(4), delta(6)])
}

/// `position_lanes::correct`.
#[inline(always)]
pub(super) unsafe fn correct(
    x: &mut [Vec2],
    rows: &GroupRows,
    count: usize,
    step_a: (f32x8, f32x8),
    step_b: (f32x8, f32x8),
) {
    let (step_a, step_b) = (
        lane_pairs(step_a.0, step_a.1),
        lane_pairs(step_b.0, step_b.1),
    );
    // SAFETY (all): SSE is part of x86_64; every row indexes `x`; the used lanes' rows are
    // distinct (for contiguous rows, those of every lane: holes included), and a scattered
    // lane l + 1 is stored only when used.
    unsafe {
        match *rows {
            GroupRows::Scattered { a, b } => {
                for m in 0..count.div_ceil(2) {
                    let l = 2 * m;
                    let p = _mm_add_ps(load_two(x, a[l], a[l + 1]), step_a[m]);
                    store_two(x, a[l], a[l + 1], p, l + 1 < count);
                    let p = _mm_sub_ps(load_two(x, b[l], b[l + 1]), step_b[m]);
                    store_two(x, b[l], b[l + 1], p, l + 1 < count);
                }
            }
            GroupRows::Consecutive { a, b } => {
                for m in 0..LANES / 2 {
                    let o = CONSECUTIVE_ORDER[2 * m];
                    store_run(x, a + o, _mm_add_ps(load_run(x, a + o), step_a[m]));
                    store_run(x, b + o, _mm_sub_ps(load_run(x, b + o), step_b[m]));
                }
            }
            GroupRows::Paired { a } => {
                // The a row (lanes 0, 1) of the sum and the b row (lanes 2, 3) of the
                // difference: a real subtraction, so a NaN step keeps its sign bit as on
                // the other paths.
                const A_PLUS_B_MINUS: i32 = 0b11_10_01_00;
                for m in 0..LANES / 2 {
                    let l = 2 * m;
                    // (Δaₗ, Δbₗ) and (Δaₗ₊₁, Δbₗ₊₁).
                    let d0 = _mm_movelh_ps(step_a[m], step_b[m]);
                    let d1 = _mm_movehl_ps(step_b[m], step_a[m]);
                    let (i0, i1) = (a + 2 * PAIRED_ORDER[l], a + 2 * PAIRED_ORDER[l + 1]);
                    for (i, d) in [(i0, d0), (i1, d1)] {
                        let p = load_run(x, i);
                        let new =
                            _mm_shuffle_ps::<A_PLUS_B_MINUS>(_mm_add_ps(p, d), _mm_sub_ps(p, d));
                        store_run(x, i, new);
                    }
                }
            }
        }
    }
}
