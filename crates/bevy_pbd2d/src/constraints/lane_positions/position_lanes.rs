//! Reading and correcting the positions of any rows (gathered lane by lane), and the
//! [`PositionLanes`] trait through which the projection moves positions.

use bevy::prelude::*;
use wide::f32x8;

#[cfg(not(target_arch = "x86_64"))]
use super::portable;
use super::rows::{GroupRows, LANES};
#[cfg(target_arch = "x86_64")]
use super::sse;
use crate::simd::Lanes8;

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
pub(super) fn without_holes<V: Lanes8>(
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
