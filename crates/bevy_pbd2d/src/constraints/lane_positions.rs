//! Reading and correcting the particle positions (m) of [`LANES`] constraints at once, for the
//! batched distance projection ([`distance_batch`](super::distance_batch)).
//!
//! On x86_64 the (x, y) rows of two lanes share one SSE register (`movsd` + `movhpd` loads,
//! `movlpd` + `movhpd` stores), so that a lane costs one subtraction or addition instead of two
//! and no per-coordinate insert or extract; elsewhere each coordinate is moved on its own. Both
//! do the same IEEE operations on the same values: the bits do not depend on the path.

use bevy::prelude::*;
use wide::f32x8;

/// Constraints projected together: the lanes of an `f32x8` (two SSE vectors, one AVX vector).
pub const LANES: usize = 8;

/// `v[start .. start + count]` (`count` ≤ [`LANES`]); the unused lanes repeat the first entry
/// (their results are dropped).
#[inline(always)]
pub(crate) fn lane_rows(v: &[u32], start: usize, count: usize) -> [u32; LANES] {
    let mut lanes = [v[start]; LANES];
    lanes[..count].copy_from_slice(&v[start..start + count]);
    lanes
}

/// x[a[l]] − x[b[l]] (m) of every lane as (x, y) vectors.
///
/// # Safety
/// Every row of `a` and `b` indexes `x`.
#[inline(always)]
pub(crate) unsafe fn gather_deltas(
    x: &[Vec2],
    a: &[u32; LANES],
    b: &[u32; LANES],
) -> (f32x8, f32x8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: passed on from the caller.
    return unsafe { sse::gather_deltas(x, a, b) };
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: passed on from the caller.
    return unsafe { portable::gather_deltas(x, a, b) };
}

/// x[rows[l]] += (dx, dy)[l] (or −= when `SUBTRACT`) for the lanes l < `count`.
///
/// # Safety
/// Every row indexes `x`; the first `count` rows are distinct.
#[inline(always)]
pub(crate) unsafe fn correct<const SUBTRACT: bool>(
    x: &mut [Vec2],
    rows: &[u32; LANES],
    count: usize,
    dx: f32x8,
    dy: f32x8,
) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: passed on from the caller.
    unsafe {
        sse::correct::<SUBTRACT>(x, rows, count, dx, dy)
    };
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: passed on from the caller.
    unsafe {
        portable::correct::<SUBTRACT>(x, rows, count, dx, dy)
    };
}

/// One coordinate at a time (the path without SSE; on x86_64 only the tests' oracle).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
mod portable {
    use super::*;

    /// [`super::gather_deltas`].
    #[inline(always)]
    pub(super) unsafe fn gather_deltas(
        x: &[Vec2],
        a: &[u32; LANES],
        b: &[u32; LANES],
    ) -> (f32x8, f32x8) {
        // SAFETY: every row indexes `x`.
        let delta =
            |l: usize| unsafe { *x.get_unchecked(a[l] as usize) - *x.get_unchecked(b[l] as usize) };
        let deltas: [Vec2; LANES] = core::array::from_fn(delta);
        (
            f32x8::new(deltas.map(|d| d.x)),
            f32x8::new(deltas.map(|d| d.y)),
        )
    }

    /// [`super::correct`].
    #[inline(always)]
    pub(super) unsafe fn correct<const SUBTRACT: bool>(
        x: &mut [Vec2],
        rows: &[u32; LANES],
        count: usize,
        dx: f32x8,
        dy: f32x8,
    ) {
        let (dx, dy) = (dx.to_array(), dy.to_array());
        for l in 0..count {
            // SAFETY: every row indexes `x`.
            let p = unsafe { x.get_unchecked_mut(rows[l] as usize) };
            let d = Vec2::new(dx[l], dy[l]);
            if SUBTRACT {
                *p -= d;
            } else {
                *p += d;
            }
        }
    }
}

/// Two rows per SSE register.
#[cfg(target_arch = "x86_64")]
mod sse {
    use core::arch::x86_64::*;

    use super::*;

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

    /// The lanes 0..4 and 4..8 of `v`.
    #[inline(always)]
    fn halves(v: f32x8) -> [__m128; 2] {
        // SAFETY: both are 8 f32 in lane order.
        unsafe { core::mem::transmute::<f32x8, [__m128; 2]>(v) }
    }

    /// [`super::gather_deltas`].
    #[inline(always)]
    pub(super) unsafe fn gather_deltas(
        x: &[Vec2],
        a: &[u32; LANES],
        b: &[u32; LANES],
    ) -> (f32x8, f32x8) {
        // SAFETY: every row indexes `x`. (dx, dy) of lanes l and l + 1.
        let delta = |l: usize| unsafe {
            _mm_sub_ps(load_two(x, a[l], a[l + 1]), load_two(x, b[l], b[l + 1]))
        };
        let (d0, d1, d2, d3) = (delta(0), delta(2), delta(4), delta(6));
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

    /// [`super::correct`].
    #[inline(always)]
    pub(super) unsafe fn correct<const SUBTRACT: bool>(
        x: &mut [Vec2],
        rows: &[u32; LANES],
        count: usize,
        dx: f32x8,
        dy: f32x8,
    ) {
        let ([x_lo, x_hi], [y_lo, y_hi]) = (halves(dx), halves(dy));
        // (dx, dy) of lanes 2m and 2m + 1.
        // SAFETY: SSE is part of x86_64.
        let pairs = unsafe {
            [
                _mm_unpacklo_ps(x_lo, y_lo),
                _mm_unpackhi_ps(x_lo, y_lo),
                _mm_unpacklo_ps(x_hi, y_hi),
                _mm_unpackhi_ps(x_hi, y_hi),
            ]
        };
        for (m, &d) in pairs.iter().enumerate() {
            let l = 2 * m;
            if l >= count {
                break;
            }
            let (i, j) = (rows[l], rows[l + 1]);
            // SAFETY: every row indexes `x`; lane l + 1 is stored only when used (distinct).
            unsafe {
                let p = load_two(x, i, j);
                let p = if SUBTRACT {
                    _mm_sub_ps(p, d)
                } else {
                    _mm_add_ps(p, d)
                };
                store_two(x, i, j, p, l + 1 < count);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_agree_bitwise() {
        let x0: Vec<Vec2> = (0..20)
            .map(|i| Vec2::new(i as f32 * 0.37 - 3.0, (i * i) as f32 * -0.11))
            .collect();
        let a = [0, 2, 4, 6, 8, 10, 12, 14];
        let b = [1, 3, 5, 7, 9, 11, 13, 19];
        let bits = |v: f32x8| v.to_array().map(f32::to_bits);
        // SAFETY: all rows < 20, distinct.
        unsafe {
            let (dx, dy) = gather_deltas(&x0, &a, &b);
            let (px, py) = portable::gather_deltas(&x0, &a, &b);
            assert_eq!((bits(dx), bits(dy)), (bits(px), bits(py)));
            assert_eq!(dx.to_array()[7], x0[14].x - x0[19].x);
            for count in [1, 4, 7, 8] {
                let (mut x, mut y) = (x0.clone(), x0.clone());
                correct::<false>(&mut x, &a, count, dx, dy);
                correct::<true>(&mut x, &b, count, dy, dx);
                portable::correct::<false>(&mut y, &a, count, dx, dy);
                portable::correct::<true>(&mut y, &b, count, dy, dx);
                let x_bits: Vec<_> = x.iter().map(|p| p.to_array().map(f32::to_bits)).collect();
                let y_bits: Vec<_> = y.iter().map(|p| p.to_array().map(f32::to_bits)).collect();
                assert_eq!(x_bits, y_bits, "count {count}");
                assert_eq!(
                    x[a[count - 1] as usize],
                    x0[a[count - 1] as usize]
                        + Vec2::new(dx.to_array()[count - 1], dy.to_array()[count - 1])
                );
                assert_eq!(
                    x[a[7] as usize] == x0[a[7] as usize],
                    count < 8,
                    "unused lanes untouched"
                );
            }
        }
    }
}
