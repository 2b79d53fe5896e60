//! One coordinate at a time (the path without SSE; on x86_64 only the tests' oracle).

use bevy::prelude::*;
use wide::f32x8;

use super::rows::{GroupRows, LANES};

/// `position_lanes::gather_deltas`.
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

/// `position_lanes::correct`.
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
