//! How deep the fluid is, for [`GridProjection::min_depth`]: the grid projection pays only in
//! deep water.
//!
//! The fluid rows are counted in square cells H wide (H = [`GridProjection::cell_spacings`]
//! spacings 2r) over their bounding box; a cell holding at least half the particles a full
//! cell holds at rest ((H/2r)² / 2) is full, and the depth is the longest run of full cells
//! in a column, in spacings. A falling stream or a spray is no deeper than its full cells: a
//! jet one particle wide fills no cell of two spacings. Bounding boxes of more than
//! [`MAX_CELLS_PER_PARTICLE`] cells per row (and 65 536 in all) count as shallow: the
//! projection would skip them anyway.

use bevy::prelude::*;

use super::buffers::GridProjectionState;
use super::params::{GridProjection, MAX_CELLS_PER_PARTICLE, MIN_DEPTH_HYSTERESIS};

impl GridProjectionState {
    /// Whether the projection runs in this step by [`GridProjection::min_depth`]: measures the
    /// depth of the fluid at `x` (particles spaced `spacing`, m) into
    /// [`depth`](Self::depth) and sets [`deep`](Self::deep) against the minimum (or, if it
    /// was deep, [`MIN_DEPTH_HYSTERESIS`] of it). Always `true` with no minimum (0).
    pub(crate) fn deep_enough(
        &mut self,
        x: &[Vec2],
        spacing: f32,
        params: &GridProjection,
    ) -> bool {
        if params.min_depth <= 0.0 {
            return true;
        }
        let least = match self.deep {
            true => MIN_DEPTH_HYSTERESIS * params.min_depth,
            false => params.min_depth,
        };
        self.depth = fluid_depth(x, spacing, params, &mut self.depth_counts, least);
        self.deep = self.depth >= least;
        self.deep
    }
}

/// The depth (in particle spacings 2r) of the deepest column of full cells of the fluid at
/// `x`, with particles spaced `spacing` (m) and cells of `params`; 0 for no fluid or for a
/// position that is not finite. A bounding box whose rows of cells cannot hold a run of
/// `enough` spacings gives its rows' height instead (in spacings: an upper bound of the depth,
/// below `enough`) without counting the cells, so the shallow water of most scenes pays one
/// pass over `x`; a taller box too large for the grid gives 0. `counts` is scratch.
fn fluid_depth(
    x: &[Vec2],
    spacing: f32,
    params: &GridProjection,
    counts: &mut Vec<u16>,
    enough: f32,
) -> f32 {
    let (lo, hi, finite) = x.iter().fold(
        (
            Vec2::splat(f32::INFINITY),
            Vec2::splat(f32::NEG_INFINITY),
            true,
        ),
        |(lo, hi, finite), &p| (lo.min(p), hi.max(p), finite && p.is_finite()),
    );
    if x.is_empty() || !finite || spacing.is_nan() || spacing <= 0.0 {
        return 0.0;
    }
    let size = params.cell_spacings * spacing;
    let cells = ((hi - lo) / size).floor();
    // (`as` saturates: a box of more cells than a usize counts is too large below.)
    let (columns, rows) = (
        (cells.x as usize).saturating_add(1),
        (cells.y as usize).saturating_add(1),
    );
    let tallest = rows as f32 * params.cell_spacings;
    if tallest < enough {
        return tallest;
    }
    let total = columns.saturating_mul(rows);
    if total > (MAX_CELLS_PER_PARTICLE * x.len()).max(65_536) {
        return 0.0;
    }
    counts.clear();
    counts.resize(total, 0);
    for &p in x {
        let c = ((p - lo) / size).floor();
        let (i, j) = (
            (c.x as usize).min(columns - 1),
            (c.y as usize).min(rows - 1),
        );
        let count = &mut counts[j * columns + i];
        *count = count.saturating_add(1);
    }
    let full = (0.5 * params.cell_spacings * params.cell_spacings).max(1.0);
    let mut deepest = 0;
    for i in 0..columns {
        let mut run = 0;
        for j in 0..rows {
            run = if f32::from(counts[j * columns + i]) >= full {
                run + 1
            } else {
                0
            };
            deepest = deepest.max(run);
        }
    }
    deepest as f32 * params.cell_spacings
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block `w` × `h` particles on a lattice of `d`, lower-left corner at `at`.
    fn block(w: usize, h: usize, d: f32, at: Vec2) -> Vec<Vec2> {
        (0..w * h)
            .map(|k| at + Vec2::new((k % w) as f32, (k / w) as f32) * d)
            .collect()
    }

    #[test]
    fn a_block_is_as_deep_as_its_full_cells() {
        let (d, params, mut counts) = (0.05, GridProjection::default(), Vec::new());
        // 40 rows: 20 full cells of 2 spacings (the lattice fills each cell with 4).
        let depth = fluid_depth(&block(30, 40, d, Vec2::ZERO), d, &params, &mut counts, 0.0);
        assert!((38.0..=40.0).contains(&depth), "{depth}");
        // Half as deep, twice as wide: half the depth.
        let depth = fluid_depth(&block(60, 20, d, Vec2::ZERO), d, &params, &mut counts, 0.0);
        assert!((18.0..=20.0).contains(&depth), "{depth}");
    }

    #[test]
    fn a_stream_or_spray_is_shallow() {
        let (d, params, mut counts) = (0.05, GridProjection::default(), Vec::new());
        // A jet one particle wide, its particles 3 spacings apart: no cell of 2 spacings
        // holds the 2 particles of half a full one.
        let jet = block(1, 200, 3.0 * d, Vec2::ZERO);
        assert_eq!(fluid_depth(&jet, d, &params, &mut counts, 0.0), 0.0);
        // A pool 10 deep with a tall sparse column above it: the pool's depth.
        let mut x = block(40, 10, d, Vec2::ZERO);
        x.extend(block(1, 60, 3.0 * d, Vec2::new(0.5, 1.0)));
        let depth = fluid_depth(&x, d, &params, &mut counts, 0.0);
        assert!((8.0..=10.0).contains(&depth), "{depth}");
    }

    #[test]
    fn no_fluid_or_no_finite_box_is_no_depth() {
        let (d, params, mut counts) = (0.05, GridProjection::default(), Vec::new());
        assert_eq!(fluid_depth(&[], d, &params, &mut counts, 0.0), 0.0);
        let mut x = block(10, 10, d, Vec2::ZERO);
        x.push(Vec2::new(f32::NAN, 0.0));
        assert_eq!(fluid_depth(&x, d, &params, &mut counts, 0.0), 0.0);
        // A particle flung 1 km away: the box needs more cells than the grid allows.
        let mut x = block(10, 10, d, Vec2::ZERO);
        x.push(Vec2::new(1000.0, 1000.0));
        assert_eq!(fluid_depth(&x, d, &params, &mut counts, 0.0), 0.0);
    }

    #[test]
    fn a_box_too_low_for_enough_depth_is_not_counted_and_decides_the_same() {
        let (d, params, mut counts) = (0.05, GridProjection::default(), Vec::new());
        // 40 rows of particles span 39 spacings: 20 rows of cells of 2 spacings, at most 40
        // deep. Asked for 64 it stops at that bound without counting (the scratch untouched).
        let x = block(30, 40, d, Vec2::ZERO);
        let bound = fluid_depth(&x, d, &params, &mut counts, 64.0);
        assert_eq!(bound, 40.0);
        assert!(counts.is_empty(), "{} cells counted", counts.len());
        let counted = fluid_depth(&x, d, &params, &mut counts, 0.0);
        assert!(
            counted <= bound && (38.0..=40.0).contains(&counted),
            "{counted}"
        );
        // Asked for no more than the box can hold, it counts: the same depth as always.
        assert_eq!(fluid_depth(&x, d, &params, &mut counts, 40.0), counted);
        // A box exactly as tall as asked for, its top row of cells sparse: counted, and
        // shallower than asked (the bound alone would call it deep enough).
        let mut x = block(30, 38, d, Vec2::ZERO);
        x.push(Vec2::new(0.0, 39.0 * d));
        let depth = fluid_depth(&x, d, &params, &mut counts, 40.0);
        assert!((36.0..40.0).contains(&depth), "{depth}");
        // A sparse column above a shallow pool makes the box tall: counted, and shallow.
        let mut x = block(40, 10, d, Vec2::ZERO);
        x.extend(block(1, 60, 3.0 * d, Vec2::new(0.5, 1.0)));
        let depth = fluid_depth(&x, d, &params, &mut counts, 64.0);
        assert!((8.0..=10.0).contains(&depth), "{depth}");
        // Through `deep_enough`, a 40-deep block is shallow for 64 and deep for 32.
        let mut state = GridProjectionState::default();
        let x = block(30, 40, d, Vec2::ZERO);
        let at = |min_depth| GridProjection {
            min_depth,
            ..params
        };
        assert!(!state.deep_enough(&x, d, &at(64.0)));
        assert!(state.deep_enough(&x, d, &at(32.0)));
    }
}
