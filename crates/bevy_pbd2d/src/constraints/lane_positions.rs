//! Reading and correcting the particle positions (m) of [`LANES`] constraints at once, for the
//! batched distance projection ([`distance_batch`](super::distance_batch)).
//!
//! A group's particle rows (`GroupRows`) are any rows, or — as a grid's edges of one direction
//! are, once the constraints are coloured direction by direction and sorted by row — runs of
//! consecutive rows, or pairs of adjacent rows. On x86_64 the (x, y) rows of two lanes share one
//! SSE register (`movsd` + `movhpd` for scattered rows, one `movups` for two consecutive ones),
//! so that a lane costs one subtraction or addition instead of two and no per-coordinate insert
//! or extract; with AVX2, consecutive and paired rows are moved four per 32-byte load or store
//! and shuffled into lanes in registers. Elsewhere each coordinate is moved on its own. All
//! paths do the same IEEE operations on the same values: the bits do not depend on the path
//! (NaN included).

use bevy::prelude::*;
use wide::f32x8;

use crate::simd::Lanes8;

/// Constraints projected together: the lanes of an `f32x8` (two SSE vectors, one AVX vector).
pub const LANES: usize = 8;

/// Which of a consecutive group's rows each lane takes: lane l joins rows a + `ORDER`\[l\] and
/// b + `ORDER`\[l\]. Four rows fill one AVX register, and AVX shuffles stay within 128-bit
/// halves: in this order the rows of two registers separate into x and y lanes, and back, with
/// in-half shuffles only.
pub(crate) const CONSECUTIVE_ORDER: [u32; LANES] = [0, 1, 4, 5, 2, 3, 6, 7];

/// Which pair of a paired group each lane takes: lane l joins rows a + 2 `ORDER`\[l\] and
/// a + 2 `ORDER`\[l\] + 1 (the reason is that of [`CONSECUTIVE_ORDER`]).
pub(crate) const PAIRED_ORDER: [u32; LANES] = [0, 2, 4, 6, 1, 3, 5, 7];

/// The particle rows of a group of constraints; lane l joins particles a(l) and b(l).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GroupRows {
    /// a(l) = `a[l]`, b(l) = `b[l]`; lanes past the group's count repeat lane 0.
    Scattered {
        /// First particle of each lane.
        a: [u32; LANES],
        /// Second particle of each lane.
        b: [u32; LANES],
    },
    /// a(l) = `a` + o(l), b(l) = `b` + o(l) (o = [`CONSECUTIVE_ORDER`]; e.g. a grid's vertical
    /// edges). Lanes past a smaller group's count are holes: their rows, distinct particle rows
    /// too, are read and written back unchanged.
    Consecutive {
        /// a(0).
        a: u32,
        /// b(0).
        b: u32,
    },
    /// a(l) = `a` + 2 o(l), b(l) = a(l) + 1 (o = [`PAIRED_ORDER`]; e.g. every other edge of a
    /// row); holes as for `Consecutive`.
    Paired {
        /// a(0).
        a: u32,
    },
}

impl GroupRows {
    /// a(l) and b(l) of every lane.
    pub(crate) fn lanes(&self) -> ([u32; LANES], [u32; LANES]) {
        match *self {
            Self::Scattered { a, b } => (a, b),
            Self::Consecutive { a, b } => (
                CONSECUTIVE_ORDER.map(|o| a + o),
                CONSECUTIVE_ORDER.map(|o| b + o),
            ),
            Self::Paired { a } => (
                PAIRED_ORDER.map(|o| a + 2 * o),
                PAIRED_ORDER.map(|o| a + 2 * o + 1),
            ),
        }
    }
}

/// `v[start .. start + count]` (`count` ≤ [`LANES`]); the unused lanes repeat the first entry
/// (their results are dropped).
#[inline(always)]
pub(crate) fn lane_rows(v: &[u32], start: usize, count: usize) -> [u32; LANES] {
    let mut lanes = [v[start]; LANES];
    lanes[..count].copy_from_slice(&v[start..start + count]);
    lanes
}

/// x[a(l)] − x[b(l)] (m) of every lane as (x, y) vectors of lanes `V`.
///
/// # Safety
/// Every row of `rows` (all [`LANES`] lanes) indexes `x`.
#[inline(always)]
pub(crate) unsafe fn gather_deltas<V: Lanes8>(x: &[Vec2], rows: &GroupRows) -> (V, V) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: passed on from the caller.
    let (dx, dy) = unsafe { sse::gather_deltas(x, rows) };
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: passed on from the caller.
    let (dx, dy) = unsafe { portable::gather_deltas(x, rows) };
    (V::from_f32x8(dx), V::from_f32x8(dy))
}

/// x[a(l)] += `step_a`[l] and x[b(l)] −= `step_b`[l] ((x, y) vectors of lanes `V`, m) for the
/// lanes l < `count`. Consecutive and paired rows are moved in every lane: the rows of the lanes
/// past `count` (holes) are written back as they were read ([`without_holes`]).
///
/// # Safety
/// Every row of `rows` indexes `x`; the rows of the first `count` lanes are distinct, and for
/// consecutive and paired rows those of all lanes.
#[inline(always)]
pub(crate) unsafe fn correct<V: Lanes8>(
    x: &mut [Vec2],
    rows: &GroupRows,
    count: usize,
    step_a: (V, V),
    step_b: (V, V),
) {
    let ((ax, ay), (bx, by)) = without_holes(rows, count, step_a, step_b);
    let (step_a, step_b) = (
        (ax.to_f32x8(), ay.to_f32x8()),
        (bx.to_f32x8(), by.to_f32x8()),
    );
    #[cfg(target_arch = "x86_64")]
    // SAFETY: passed on from the caller.
    unsafe {
        sse::correct(x, rows, count, step_a, step_b)
    };
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: passed on from the caller.
    unsafe {
        portable::correct(x, rows, count, step_a, step_b)
    };
}

/// `step_a` and `step_b` with −0 and +0 in the holes of contiguous `rows` (the lanes past
/// `count`): x + (−0) and x − (+0) are x (−0, ±∞ and quiet NaN included), so moving every lane
/// writes the holes' rows back as they were read.
#[inline(always)]
fn without_holes<V: Lanes8>(
    rows: &GroupRows,
    count: usize,
    step_a: (V, V),
    step_b: (V, V),
) -> ((V, V), (V, V)) {
    if count >= LANES || matches!(rows, GroupRows::Scattered { .. }) {
        return (step_a, step_b);
    }
    (
        (
            step_a.0.where_lane_below(count, -0.0),
            step_a.1.where_lane_below(count, -0.0),
        ),
        (
            step_b.0.where_lane_below(count, 0.0),
            step_b.1.where_lane_below(count, 0.0),
        ),
    )
}

/// Lanes `Self` that positions are read into and corrected from: by default through
/// [`gather_deltas`] and [`correct`] (on [`f32x8`] registers).
pub(crate) trait PositionLanes: Lanes8 {
    /// [`gather_deltas`] as lanes `Self`.
    ///
    /// # Safety
    /// As [`gather_deltas`].
    #[inline(always)]
    unsafe fn gather_deltas(x: &[Vec2], rows: &GroupRows) -> (Self, Self) {
        // SAFETY: passed on from the caller.
        unsafe { gather_deltas(x, rows) }
    }

    /// [`correct`] from lanes `Self`.
    ///
    /// # Safety
    /// As [`correct`].
    #[inline(always)]
    unsafe fn correct(
        x: &mut [Vec2],
        rows: &GroupRows,
        count: usize,
        step_a: (Self, Self),
        step_b: (Self, Self),
    ) {
        // SAFETY: passed on from the caller.
        unsafe { correct(x, rows, count, step_a, step_b) }
    }
}

impl PositionLanes for f32x8 {}

/// One coordinate at a time (the path without SSE; on x86_64 only the tests' oracle).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
mod portable {
    use super::*;

    /// [`super::gather_deltas`].
    #[inline(always)]
    pub(super) unsafe fn gather_deltas(x: &[Vec2], rows: &GroupRows) -> (f32x8, f32x8) {
        let (a, b) = rows.lanes();
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
    pub(super) unsafe fn correct(
        x: &mut [Vec2],
        rows: &GroupRows,
        count: usize,
        step_a: (f32x8, f32x8),
        step_b: (f32x8, f32x8),
    ) {
        let (a, b) = rows.lanes();
        let (ax, ay) = (step_a.0.to_array(), step_a.1.to_array());
        let (bx, by) = (step_b.0.to_array(), step_b.1.to_array());
        for l in 0..count {
            // SAFETY: every row indexes `x`.
            unsafe {
                *x.get_unchecked_mut(a[l] as usize) += Vec2::new(ax[l], ay[l]);
                *x.get_unchecked_mut(b[l] as usize) -= Vec2::new(bx[l], by[l]);
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

    /// [`super::gather_deltas`].
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

    /// [`super::correct`].
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
                            let new = _mm_shuffle_ps::<A_PLUS_B_MINUS>(
                                _mm_add_ps(p, d),
                                _mm_sub_ps(p, d),
                            );
                            store_run(x, i, new);
                        }
                    }
                }
            }
        }
    }
}

/// Consecutive and paired rows four at a time (one AVX register holds four rows). No closures
/// here: one that is not inlined is compiled without AVX ([`Avx8`]).
#[cfg(target_arch = "x86_64")]
mod avx {
    use core::arch::x86_64::*;

    use super::*;
    use crate::simd::Avx8;

    /// The four rows `i .. i + 4` of `x` as (xᵢ, yᵢ, …, xᵢ₊₃, yᵢ₊₃).
    ///
    /// # Safety
    /// `i + 3` indexes `x`; the CPU has AVX.
    #[inline(always)]
    unsafe fn load_four(x: &[Vec2], i: u32) -> __m256 {
        // SAFETY: four `Vec2` are 32 bytes (eight f32).
        unsafe { _mm256_loadu_ps(x.as_ptr().add(i as usize).cast::<f32>()) }
    }

    /// Stores `v` to the rows `i .. i + 4`.
    ///
    /// # Safety
    /// `i + 3` indexes `x`; the CPU has AVX.
    #[inline(always)]
    unsafe fn store_four(x: &mut [Vec2], i: u32, v: __m256) {
        // SAFETY: four `Vec2` are 32 bytes (eight f32).
        unsafe { _mm256_storeu_ps(x.as_mut_ptr().add(i as usize).cast::<f32>(), v) }
    }

    /// (x, y) vectors of lanes 0 .. 8 from two registers of four rows each, (r₀, r₁ | r₂, r₃)
    /// and (r₄, r₅ | r₆, r₇): lane l takes row r(o(l)), o = [`CONSECUTIVE_ORDER`]. Each 128-bit
    /// half of the result draws on the same half of both registers.
    #[inline(always)]
    fn deinterleave(first: __m256, second: __m256) -> (Avx8, Avx8) {
        const EVEN: i32 = 0b10_00_10_00;
        const ODD: i32 = 0b11_01_11_01;
        // SAFETY: only reached from code compiled for AVX2.
        unsafe {
            (
                Avx8::from_m256(_mm256_shuffle_ps::<EVEN>(first, second)),
                Avx8::from_m256(_mm256_shuffle_ps::<ODD>(first, second)),
            )
        }
    }

    /// The inverse of [`deinterleave`]: the two registers of rows.
    #[inline(always)]
    fn interleave((vx, vy): (Avx8, Avx8)) -> [__m256; 2] {
        // SAFETY: only reached from code compiled for AVX2.
        unsafe {
            [
                _mm256_unpacklo_ps(vx.m256(), vy.m256()),
                _mm256_unpackhi_ps(vx.m256(), vy.m256()),
            ]
        }
    }

    /// The a and b rows of the pairs of rows `a .. a + 16` (pair p joins a + 2p and a + 2p + 1),
    /// as ((a rows, b rows) of pairs 0, 2 | 1, 3; the same of pairs 4, 6 | 5, 7): as
    /// [`deinterleave`] and [`interleave`] take the rows of lanes in [`PAIRED_ORDER`].
    ///
    /// # Safety
    /// `a + 15` indexes `x`; the CPU has AVX.
    #[inline(always)]
    unsafe fn paired_rows(x: &[Vec2], a: u32) -> [(__m256, __m256); 2] {
        // SAFETY: passed on from the caller.
        unsafe { [split_pairs(x, a), split_pairs(x, a + 8)] }
    }

    /// The a rows and the b rows of the pairs of rows `i .. i + 8`, pairs 0, 2 | 1, 3 of them.
    ///
    /// # Safety
    /// `i + 7` indexes `x`; the CPU has AVX.
    #[inline(always)]
    unsafe fn split_pairs(x: &[Vec2], i: u32) -> (__m256, __m256) {
        // SAFETY: passed on from the caller.
        unsafe {
            let (p, q) = (
                _mm256_castps_pd(load_four(x, i)),
                _mm256_castps_pd(load_four(x, i + 4)),
            );
            (
                _mm256_castpd_ps(_mm256_shuffle_pd::<0b0000>(p, q)),
                _mm256_castpd_ps(_mm256_shuffle_pd::<0b1111>(p, q)),
            )
        }
    }

    impl PositionLanes for Avx8 {
        #[inline(always)]
        unsafe fn gather_deltas(x: &[Vec2], rows: &GroupRows) -> (Self, Self) {
            // SAFETY (all): every row indexes `x`; only reached from code compiled for AVX2.
            match *rows {
                GroupRows::Consecutive { a, b } => unsafe {
                    let first = _mm256_sub_ps(load_four(x, a), load_four(x, b));
                    let second = _mm256_sub_ps(load_four(x, a + 4), load_four(x, b + 4));
                    deinterleave(first, second)
                },
                GroupRows::Paired { a } => unsafe {
                    let [(a01, b01), (a23, b23)] = paired_rows(x, a);
                    deinterleave(_mm256_sub_ps(a01, b01), _mm256_sub_ps(a23, b23))
                },
                GroupRows::Scattered { .. } => unsafe { super::gather_deltas(x, rows) },
            }
        }

        #[inline(always)]
        unsafe fn correct(
            x: &mut [Vec2],
            rows: &GroupRows,
            count: usize,
            step_a: (Self, Self),
            step_b: (Self, Self),
        ) {
            let (step_a, step_b) = without_holes(rows, count, step_a, step_b);
            // SAFETY (all): every row indexes `x` and they are distinct; only reached from code
            // compiled for AVX2.
            match *rows {
                GroupRows::Consecutive { a, b } => unsafe {
                    let (step_a, step_b) = (interleave(step_a), interleave(step_b));
                    for (h, i) in [a, a + 4].into_iter().enumerate() {
                        store_four(x, i, _mm256_add_ps(load_four(x, i), step_a[h]));
                    }
                    for (h, i) in [b, b + 4].into_iter().enumerate() {
                        store_four(x, i, _mm256_sub_ps(load_four(x, i), step_b[h]));
                    }
                },
                GroupRows::Paired { a } => unsafe {
                    let (step_a, step_b) = (interleave(step_a), interleave(step_b));
                    let rows = paired_rows(x, a);
                    for (h, (a_rows, b_rows)) in rows.into_iter().enumerate() {
                        let new_a = _mm256_castps_pd(_mm256_add_ps(a_rows, step_a[h]));
                        let new_b = _mm256_castps_pd(_mm256_sub_ps(b_rows, step_b[h]));
                        let i = a + 8 * h as u32;
                        store_four(
                            x,
                            i,
                            _mm256_castpd_ps(_mm256_shuffle_pd::<0b0000>(new_a, new_b)),
                        );
                        store_four(
                            x,
                            i + 4,
                            _mm256_castpd_ps(_mm256_shuffle_pd::<0b1111>(new_a, new_b)),
                        );
                    }
                },
                GroupRows::Scattered { .. } => unsafe {
                    super::correct(x, rows, count, step_a, step_b)
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(x: &[Vec2]) -> Vec<[u32; 2]> {
        x.iter().map(|p| p.to_array().map(f32::to_bits)).collect()
    }

    #[test]
    fn paths_agree_bitwise() {
        let x0: Vec<Vec2> = (0..40)
            .map(|i| Vec2::new(i as f32 * 0.37 - 3.0, (i * i) as f32 * -0.11))
            .collect();
        let layouts = [
            GroupRows::Scattered {
                a: [0, 2, 4, 6, 8, 10, 12, 14],
                b: [1, 3, 5, 7, 9, 11, 13, 19],
            },
            GroupRows::Consecutive { a: 21, b: 3 },
            GroupRows::Paired { a: 5 },
        ];
        let lane_bits = |v: f32x8| v.to_array().map(f32::to_bits);
        for rows in layouts {
            let (a, b) = rows.lanes();
            let full = matches!(rows, GroupRows::Scattered { .. });
            // SAFETY: all rows < 40, distinct.
            unsafe {
                let (dx, dy): (f32x8, f32x8) = gather_deltas(&x0, &rows);
                let (px, py) = portable::gather_deltas(&x0, &rows);
                assert_eq!(
                    (lane_bits(dx), lane_bits(dy)),
                    (lane_bits(px), lane_bits(py))
                );
                for l in 0..LANES {
                    let d = x0[a[l] as usize] - x0[b[l] as usize];
                    assert_eq!((dx.to_array()[l], dy.to_array()[l]), (d.x, d.y), "{rows:?}");
                }
                let counts: &[usize] = if full { &[1, 4, 7, 8] } else { &[LANES] };
                for count in (!full).then_some(6..LANES).into_iter().flatten() {
                    // A contiguous group with holes: the unused lanes' rows (here −0, ∞ and NaN
                    // coordinates) come back bit for bit.
                    let mut x_holes = x0.clone();
                    for l in count..LANES {
                        x_holes[a[l] as usize] = Vec2::new(-0.0, f32::INFINITY);
                        x_holes[b[l] as usize] = Vec2::new(f32::NAN, -0.0);
                    }
                    // Whatever the steps of the holes (here NaN and +0), they are not applied.
                    let hole = |v: f32x8, value: f32| {
                        let mut lanes = v.to_array();
                        lanes[count..].fill(value);
                        f32x8::new(lanes)
                    };
                    let step_a = (hole(dx, f32::NAN), hole(dy, 0.0));
                    let step_b = (hole(dy, f32::NAN), hole(dx, -0.0));
                    let (mut x, mut y) = (x_holes.clone(), x_holes.clone());
                    correct(&mut x, &rows, count, step_a, step_b);
                    portable::correct(&mut y, &rows, count, step_a, step_b);
                    assert_eq!(bits(&x), bits(&y), "{rows:?} count {count}");
                    let (new, old) = (bits(&x), bits(&x_holes));
                    let moved = new.iter().zip(&old).filter(|(p, q)| p != q).count();
                    assert_eq!(
                        moved,
                        2 * count,
                        "{rows:?}: the holes' rows keep their bits"
                    );
                }
                for &count in counts {
                    let (mut x, mut y) = (x0.clone(), x0.clone());
                    correct(&mut x, &rows, count, (dx, dy), (dy, dx));
                    portable::correct(&mut y, &rows, count, (dx, dy), (dy, dx));
                    assert_eq!(bits(&x), bits(&y), "{rows:?} count {count}");
                    let l = count - 1;
                    let (dxl, dyl) = (dx.to_array()[l], dy.to_array()[l]);
                    assert_eq!(x[a[l] as usize], x0[a[l] as usize] + Vec2::new(dxl, dyl));
                    assert_eq!(x[b[l] as usize], x0[b[l] as usize] - Vec2::new(dyl, dxl));
                    let moved = x.iter().zip(&x0).filter(|(p, q)| p != q).count();
                    assert_eq!(moved, 2 * count, "{rows:?}: only the used lanes' rows move");
                }
                // A NaN step (the one ∞·0 gives: sign bit set) leaves the same bits on every
                // path: a − NaN keeps the NaN's sign, a + (−NaN) would not.
                let nan = f32::from_bits(0xffc0_0000);
                let mut nans = dy.to_array();
                nans[1] = nan;
                let steps = (f32x8::new(nans), f32x8::new(nans));
                let (mut x, mut y) = (x0.clone(), x0.clone());
                correct(&mut x, &rows, LANES, steps, steps);
                portable::correct(&mut y, &rows, LANES, steps, steps);
                assert_eq!(bits(&x), bits(&y), "{rows:?} with a NaN step");
                assert_eq!(x[b[1] as usize].x.to_bits(), 0xffc0_0000, "{rows:?}");
            }
        }
    }
}
