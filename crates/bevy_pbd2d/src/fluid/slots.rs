//! Slot-major neighbour lists of the density solve.
//!
//! The rows of a [`NeighborChunk`] are taken in groups of [`GROUP`], the lanes of one 8-lane
//! vector. A group's *slot* s holds the s-th neighbour of each of its rows, so the density and
//! correction passes evaluate the 8 pairs of a slot in one vector: every sum over a row's
//! neighbours is a sum within its lane (no sums across lanes), and the per-row tail (C, λ, Δx)
//! runs on 8 rows at once. A group has as many slots as its longest list; a row's entries past
//! its own count are padding, masked by the counts.

use core::ops::Range;

use bevy::prelude::*;
use wide::f32x8;

use crate::neighbors::NeighborChunk;

/// Rows per group: the lanes of one 8-lane vector.
pub(crate) const GROUP: usize = 8;

/// One slot of a group: an index per lane.
pub(crate) type Slot = [u32; GROUP];

/// The slot-major copy of one [`NeighborChunk`]'s lists, and the per-pair scratch of the density
/// solve. Rebuilt from the row lists by the first density pass of every solve, so it always
/// matches them.
#[derive(Debug, Default, Clone)]
pub(crate) struct SlotLists {
    /// Per group, the row of each lane; the spare lanes of a last, partial group repeat the
    /// chunk's last row.
    pub rows: Vec<Slot>,
    /// Per group, the number of real fluid neighbours (first) and boundary neighbours (second)
    /// of each lane's row, 0 in spare lanes; as `f32` for the lane masks.
    pub counts: Vec<[f32x8; 2]>,
    /// `fluid_start[g]..fluid_start[g + 1]` are group g's slots in `fluid`.
    pub fluid_start: Vec<u32>,
    /// Fluid neighbour rows; padding entries are the lane's own row (r = 0: ∇W = 0).
    pub fluid: Vec<Slot>,
    /// `boundary_start[g]..boundary_start[g + 1]` are group g's slots in `boundary`.
    pub boundary_start: Vec<u32>,
    /// Boundary sample indices; padding entries are 0 (a group with boundary slots has a real
    /// sample, so index 0 exists), masked by the counts.
    pub boundary: Vec<Slot>,
    /// Per fluid slot, the x (first) and y (second) components of ∇Wᵢⱼ (1/m³) in each lane:
    /// sized and written by the density pass, read by the correction pass of the same
    /// iteration (0 in padding lanes). The one-thread sweep swaps in a buffer of its ring.
    pub gradient: Vec<[f32x8; 2]>,
}

impl SlotLists {
    /// Rebuilds the slots from `chunk`'s row lists, whose first row is `first_row`, reusing
    /// the buffers.
    pub fn build(&mut self, chunk: &NeighborChunk, first_row: usize) {
        let rows = chunk.fluid_count.len();
        for list in [&mut self.fluid_start, &mut self.boundary_start] {
            list.clear();
            list.push(0);
        }
        self.rows.clear();
        self.counts.clear();
        self.fluid.clear();
        self.boundary.clear();
        for g in 0..rows.div_ceil(GROUP) {
            let real = (rows - g * GROUP).min(GROUP);
            let k: [usize; GROUP] = core::array::from_fn(|l| g * GROUP + l.min(real - 1));
            let row = k.map(|k| (first_row + k) as u32);
            let count = |l: usize, n: usize| if l < real { n } else { 0 };
            let fluid: [usize; GROUP] =
                core::array::from_fn(|l| count(l, chunk.fluid_count[k[l]] as usize));
            let boundary: [usize; GROUP] = core::array::from_fn(|l| {
                let (start, end) = (chunk.boundary_start[k[l]], chunk.boundary_start[k[l] + 1]);
                count(l, (end - start) as usize)
            });
            // Slots of padding, then each row's list down its lane.
            let longest = |n: [usize; GROUP]| n.into_iter().max().unwrap_or(0);
            let (first_fluid, first_boundary) = (self.fluid.len(), self.boundary.len());
            self.fluid.resize(first_fluid + longest(fluid), row);
            self.boundary
                .resize(first_boundary + longest(boundary), [0; GROUP]);
            for l in 0..real {
                let start = chunk.fluid_start[k[l]] as usize;
                let list = &chunk.fluid[start..start + fluid[l]];
                for (slot, &j) in self.fluid[first_fluid..].iter_mut().zip(list) {
                    slot[l] = j;
                }
                let start = chunk.boundary_start[k[l]] as usize;
                let list = &chunk.boundary[start..start + boundary[l]];
                for (slot, &j) in self.boundary[first_boundary..].iter_mut().zip(list) {
                    slot[l] = j;
                }
            }
            let lanes = |n: [usize; GROUP]| f32x8::new(n.map(|n| n as f32));
            self.rows.push(row);
            self.counts.push([lanes(fluid), lanes(boundary)]);
            self.fluid_start.push(self.fluid.len() as u32);
            self.boundary_start.push(self.boundary.len() as u32);
        }
    }

    /// Number of groups.
    pub fn groups(&self) -> usize {
        self.rows.len()
    }

    /// Group g's slots: its range of `fluid` and its range of `boundary`.
    ///
    /// # Safety
    /// g < [`SlotLists::groups`].
    #[inline(always)]
    pub unsafe fn ranges(&self, g: usize) -> (Range<usize>, Range<usize>) {
        // SAFETY: both start lists have one entry more than there are groups.
        let range = |start: &[u32]| unsafe {
            *start.get_unchecked(g) as usize..*start.get_unchecked(g + 1) as usize
        };
        (range(&self.fluid_start), range(&self.boundary_start))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neighbors::find_neighbors;
    use crate::parallel::CHUNK;
    use crate::spatial_grid::SpatialHashGrid;
    use crate::spatial_grid::test_points::lcg;

    #[test]
    fn slots_hold_each_rows_lists_in_its_lane() {
        let h = 0.1;
        let mut seed = 11;
        // 150 rows: two full chunks and a partial one with a partial last group.
        let fluid: Vec<Vec2> = (0..150)
            .map(|_| Vec2::new(lcg(&mut seed), lcg(&mut seed)) * 0.4)
            .collect();
        let boundary: Vec<Vec2> = (0..40).map(|k| Vec2::new(k as f32 * 0.01, 0.0)).collect();
        let (mut fg, mut bg) = (SpatialHashGrid::default(), SpatialHashGrid::default());
        fg.build(&fluid, h);
        bg.build(&boundary, h);
        let mut chunks = Vec::new();
        find_neighbors(&mut chunks, &fg, &fluid, &bg, h);
        for (c, chunk) in chunks.iter().enumerate() {
            let mut slots = SlotLists::default();
            slots.build(chunk, c * CHUNK);
            let rows = chunk.fluid_count.len();
            assert_eq!(slots.groups(), rows.div_ceil(GROUP));
            for g in 0..slots.groups() {
                let [fluid_count, boundary_count] = slots.counts[g].map(|v| v.to_array());
                // SAFETY: g < groups().
                let (fluid_range, boundary_range) = unsafe { slots.ranges(g) };
                let fluid_slots = &slots.fluid[fluid_range];
                let boundary_slots = &slots.boundary[boundary_range];
                for l in 0..GROUP {
                    let k = g * GROUP + l;
                    let row = slots.rows[g][l] as usize;
                    if k >= rows {
                        assert_eq!(row, c * CHUNK + rows - 1, "spare lane");
                        assert_eq!((fluid_count[l], boundary_count[l]), (0.0, 0.0));
                        continue;
                    }
                    assert_eq!(row, c * CHUNK + k);
                    let lane = |s: &[Slot]| s.iter().map(|s| s[l]).collect::<Vec<_>>();
                    let (f, b) = (lane(fluid_slots), lane(boundary_slots));
                    let (nf, nb) = (fluid_count[l] as usize, boundary_count[l] as usize);
                    assert_eq!(f[..nf], *chunk.fluid_of(k), "row {row}");
                    assert_eq!(b[..nb], *chunk.boundary_of(k), "row {row}");
                    assert!(f[nf..].iter().all(|&j| j as usize == row), "fluid padding");
                    assert!(b[nb..].iter().all(|&j| j == 0), "boundary padding");
                }
                // As many slots as the longest list.
                let longest = |counts: [f32; GROUP]| counts.into_iter().fold(0.0, f32::max);
                assert_eq!(fluid_slots.len(), longest(fluid_count) as usize);
                assert_eq!(boundary_slots.len(), longest(boundary_count) as usize);
            }
        }
    }
}
