//! Slot-major neighbour lists of the density solve.
//!
//! The rows of a chunk's [`NeighborLists`] are taken in groups of [`GROUP`], the lanes of one 8-lane
//! vector. A group's *slot* s holds the s-th neighbour of each of its rows, so the density and
//! correction passes evaluate the 8 pairs of a slot in one vector: every sum over a row's
//! neighbours is a sum within its lane (no sums across lanes), and the per-row tail (C, λ, Δx)
//! runs on 8 rows at once. A group has as many slots as its longest list; a row's entries past
//! its own count are padding, masked by the counts.
//!
//! The fluid slots, which every iteration reads again, hold 16-bit offsets from the chunk's
//! lowest row: half the bytes of row indices, which at 100 000 particles stream from memory
//! every iteration. Rows are not sorted by position (they keep the order particles were
//! spawned in); particles spawned near each other, as a dam break's are, have their neighbours
//! close by in the order. A chunk whose rows and neighbours spread over more than 65 535 rows
//! keeps 32-bit rows instead.

use core::ops::Range;

use bevy::prelude::*;
use wide::f32x8;

use crate::fluid::neighbor_lists::NeighborLists;

/// Rows per group: the lanes of one 8-lane vector.
pub(crate) const GROUP: usize = 8;

/// One slot of a group: an index per lane.
pub(crate) type Slot = [u32; GROUP];

/// One slot of fluid neighbours as offsets from [`SlotLists::fluid_base`].
pub(crate) type NarrowSlot = [u16; GROUP];

/// The widest spread (last − first) of a chunk's fluid rows that [`NarrowSlot`]s can hold.
const NARROW_SPREAD: u32 = u16::MAX as u32;

/// The slot-major copy of one chunk's [`NeighborLists`], and the per-pair scratch of the density
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
    /// Fluid neighbour rows as offsets from `fluid_base` (all slots of the chunk, unless it is
    /// [`wide`](Self::wide)); padding entries are the lane's own row (r = 0: ∇W = 0).
    pub fluid: Vec<NarrowSlot>,
    /// The row that the offsets in `fluid` count from.
    pub fluid_base: u32,
    /// Fluid neighbour rows of a chunk whose rows spread too far for offsets (else empty),
    /// with the same padding.
    pub fluid_wide: Vec<Slot>,
    /// `boundary_start[g]..boundary_start[g + 1]` are group g's slots in `boundary`.
    pub boundary_start: Vec<u32>,
    /// Boundary sample indices; padding entries are 0 (a group with boundary slots has a real
    /// sample, so index 0 exists), masked by the counts.
    pub boundary: Vec<Slot>,
    /// Per fluid slot, the x (first) and y (second) components of ∇Wᵢⱼ (1/m³) in each lane:
    /// sized and written by the density pass, read by the correction pass of the same
    /// iteration (0 in padding lanes). A pipeline lends a buffer of its side's ring here.
    pub gradient: Vec<[f32x8; 2]>,
}

/// The fluid slots of a [`SlotLists`] ([`SlotLists::fluid_reader`]): valid while the lists
/// are not rebuilt.
#[derive(Clone, Copy)]
pub(crate) struct FluidReader {
    narrow: *const NarrowSlot,
    wide: *const Slot,
    base: u32,
}

impl FluidReader {
    /// The rows of fluid slot `at`, of lists that are [`wide`](SlotLists::wide) if `WIDE`.
    ///
    /// # Safety
    /// `WIDE` is whether the lists are wide, they were not rebuilt or dropped since the
    /// reader was made, and `at` < [`SlotLists::fluid_slots`].
    #[inline(always)]
    pub unsafe fn rows<const WIDE: bool>(self, at: usize) -> Slot {
        // SAFETY: the caller's guarantees; `WIDE` says which list holds the slots.
        unsafe {
            if WIDE {
                *self.wide.add(at)
            } else {
                (*self.narrow.add(at)).map(|o| self.base + u32::from(o))
            }
        }
    }

    /// `data[j]` for the row j of each lane of fluid slot `at` (a constant `WIDE` keeps the
    /// choice of list out of the loops).
    ///
    /// # Safety
    /// As for [`FluidReader::rows`], and `data` points to at least as many elements as there
    /// are fluid rows.
    #[inline(always)]
    pub unsafe fn gather<T: Copy, const WIDE: bool>(self, at: usize, data: *const T) -> [T; GROUP] {
        // SAFETY: the caller's guarantees; every row (base + offset) indexes `data`. Each
        // offset is read on its own (volatile: not combined into a vector load, whose lanes
        // would then be moved out one by one to address the loads).
        unsafe {
            if WIDE {
                let rows = *self.wide.add(at);
                rows.map(|j| *data.add(j as usize))
            } else {
                let (data, offsets) = (
                    data.add(self.base as usize),
                    self.narrow.add(at).cast::<u16>(),
                );
                core::array::from_fn(|l| *data.add(offsets.add(l).read_volatile() as usize))
            }
        }
    }
}

impl SlotLists {
    /// Rebuilds the slots from `chunk`'s row lists, whose first row is `first_row`, reusing
    /// the buffers.
    pub fn build(&mut self, chunk: &NeighborLists, first_row: usize) {
        self.build_with(chunk, first_row, NARROW_SPREAD);
    }

    /// [`SlotLists::build`], with offsets only if the chunk's rows and their fluid neighbours
    /// spread over at most `narrow_spread` rows.
    pub fn build_with(&mut self, chunk: &NeighborLists, first_row: usize, narrow_spread: u32) {
        let rows = chunk.fluid_count.len();
        let (own_first, own_last) = (first_row as u32, (first_row + rows.max(1) - 1) as u32);
        let (lo, hi) = chunk
            .fluid
            .iter()
            .fold((own_first, own_last), |(lo, hi), &j| (lo.min(j), hi.max(j)));
        let narrow = hi - lo <= narrow_spread.min(NARROW_SPREAD);
        // Only used when narrow: every row is then within lo..=lo + u16::MAX.
        let offset = |j: u32| (j - lo) as u16;
        self.fluid_base = lo;
        self.fluid_wide.clear();
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
            let (first_fluid, first_boundary) = (self.fluid_slots(), self.boundary.len());
            let end_fluid = first_fluid + longest(fluid);
            if narrow {
                self.fluid.resize(end_fluid, row.map(offset));
            } else {
                self.fluid_wide.resize(end_fluid, row);
            }
            self.boundary
                .resize(first_boundary + longest(boundary), [0; GROUP]);
            for l in 0..real {
                let start = chunk.fluid_start[k[l]] as usize;
                let list = &chunk.fluid[start..start + fluid[l]];
                if narrow {
                    for (slot, &j) in self.fluid[first_fluid..].iter_mut().zip(list) {
                        slot[l] = offset(j);
                    }
                } else {
                    for (slot, &j) in self.fluid_wide[first_fluid..].iter_mut().zip(list) {
                        slot[l] = j;
                    }
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
            self.fluid_start.push(end_fluid as u32);
            self.boundary_start.push(self.boundary.len() as u32);
        }
    }

    /// Whether the fluid slots are rows (in `fluid_wide`) rather than offsets (in `fluid`).
    #[inline(always)]
    pub fn wide(&self) -> bool {
        !self.fluid_wide.is_empty()
    }

    /// Number of fluid slots of all groups.
    #[inline(always)]
    pub fn fluid_slots(&self) -> usize {
        self.fluid.len() + self.fluid_wide.len()
    }

    /// The rows of fluid slot `at` (for tests: the passes read the slots through a
    /// [`FluidReader`]).
    ///
    /// # Safety
    /// `at` < [`SlotLists::fluid_slots`].
    #[cfg(test)]
    pub unsafe fn fluid_rows(&self, at: usize) -> Slot {
        // SAFETY: the caller's bound; `wide` says which list holds the slots.
        unsafe {
            let reader = self.fluid_reader();
            if self.wide() {
                reader.rows::<true>(at)
            } else {
                reader.rows::<false>(at)
            }
        }
    }

    /// A reader of the fluid slots that holds no borrow, for loops that also write the
    /// scratch (its fields stay in registers).
    #[inline(always)]
    pub fn fluid_reader(&self) -> FluidReader {
        FluidReader {
            narrow: self.fluid.as_ptr(),
            wide: self.fluid_wide.as_ptr(),
            base: self.fluid_base,
        }
    }

    /// Real pairs and lanes (slots × [`GROUP`], padding included) of the fluid slots (first)
    /// and the boundary slots (second).
    pub fn fill(&self) -> [(u64, u64); 2] {
        let pairs = |kind: usize| {
            let counts = self.counts.iter().flat_map(|c| c[kind].to_array());
            counts.map(|n| n as u64).sum::<u64>()
        };
        let lanes = |slots: usize| (slots * GROUP) as u64;
        [
            (pairs(0), lanes(self.fluid_slots())),
            (pairs(1), lanes(self.boundary.len())),
        ]
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

    /// A chunk of `lists.len()` rows from `first_row` with these fluid lists, padded as the
    /// neighbour search pads them.
    fn chunk_of(first_row: usize, lists: &[Vec<u32>]) -> NeighborLists {
        use crate::fluid::kernel::LANES;
        let mut c = NeighborLists::default();
        c.fluid_start.push(0);
        c.boundary_start.push(0);
        for (k, list) in lists.iter().enumerate() {
            c.fluid.extend_from_slice(list);
            c.fluid_count.push(list.len() as u32);
            let padded = c.fluid.len().next_multiple_of(LANES);
            c.fluid.resize(padded, (first_row + k) as u32);
            c.fluid_start.push(c.fluid.len() as u32);
            c.boundary_start.push(0);
        }
        c
    }

    /// Spreads of exactly u16::MAX rows and one more, below and above the chunk, with a large
    /// base; one `SlotLists` rebuilt from one kind to the other in both directions; gathers at
    /// a large base.
    #[test]
    fn offsets_hold_spreads_up_to_u16_max() {
        let first = 70_000usize;
        let rows = 9; // a partial last group
        let own_last = (first + rows - 1) as u32;
        let lists = |far: u32| -> Vec<Vec<u32>> {
            (0..rows)
                .map(|k| {
                    let mut l = vec![(first + (k + 1) % rows) as u32];
                    if k == 0 {
                        l.insert(0, far);
                    }
                    l
                })
                .collect()
        };
        let data: Vec<u32> = (0..200_000u32).collect();
        let mut slots = SlotLists::default();
        let cases = [
            (first, own_last - 65_535, false), // below, exactly u16::MAX
            (first, own_last - 65_536, true),  // below, one more
            (first, own_last - 65_535, false),
            (first, first as u32 + 65_535, false), // above: spread = 65_535
            (first, first as u32 + 65_536, true),
            (0, 65_535, false), // base 0, offset u16::MAX
            (0, 65_536, true),
            (first, own_last - 65_535, false),
        ];
        for (first_row, far, wide) in cases {
            let lists = if first_row == first {
                lists(far)
            } else {
                (0..rows)
                    .map(|k| if k == 3 { vec![far] } else { vec![] })
                    .collect()
            };
            let chunk = chunk_of(first_row, &lists);
            assert!(chunk.indices_within(first_row, rows, 200_000, 0));
            slots.build(&chunk, first_row);
            assert_eq!(slots.wide(), wide, "far {far}");
            assert!(slots.fluid.is_empty() || slots.fluid_wide.is_empty());
            for g in 0..slots.groups() {
                // SAFETY (all): g < groups(), `at` < fluid_slots(), `WIDE` is the kind, and
                // `data` covers every row.
                let (range, _) = unsafe { slots.ranges(g) };
                for (s, at) in range.enumerate() {
                    let rows_at = unsafe { slots.fluid_rows(at) };
                    let reader = slots.fluid_reader();
                    let got = unsafe {
                        if wide {
                            reader.gather::<u32, true>(at, data.as_ptr())
                        } else {
                            reader.gather::<u32, false>(at, data.as_ptr())
                        }
                    };
                    assert_eq!(got, rows_at);
                    for (l, &row) in rows_at.iter().enumerate() {
                        let k = g * GROUP + l;
                        let own = (first_row + k.min(rows - 1)) as u32;
                        let want = if k < rows && s < lists[k].len() {
                            lists[k][s]
                        } else {
                            own
                        };
                        assert_eq!(row, want, "far {far} g {g} s {s} l {l}");
                    }
                }
            }
        }
        // Rows but no neighbours; no rows at all (large first row).
        slots.build(&chunk_of(first, &vec![vec![]; rows]), first);
        assert_eq!((slots.fluid_slots(), slots.groups()), (0, 2));
        slots.build(&NeighborLists::default(), 4_000_000_000);
        assert_eq!((slots.fluid_slots(), slots.groups()), (0, 0));
    }
}
