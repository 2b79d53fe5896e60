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

#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
mod portable;

#[cfg(target_arch = "x86_64")]
mod sse;

#[cfg(target_arch = "x86_64")]
mod avx;

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
