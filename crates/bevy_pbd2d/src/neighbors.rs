//! Neighbour lists of the fluid particles, built each step from the
//! [`SpatialHashGrid`]s over the fluid and the boundary samples, in blocks of [`CHUNK`] rows and
//! padded to the SIMD batches of the XSPH pass (the density solve walks a slot-major copy, rows
//! 8 at a time).

use bevy::prelude::*;

use crate::fluid::slots::SlotLists;
use crate::kernel::{LANES, Lanes};
use crate::parallel::{CHUNK, threads_for};
use crate::phased::for_blocks_mut;
pub use crate::spatial_grid::SpatialHashGrid; // (its old path)

/// Neighbour lists of a block of [`CHUNK`] consecutive fluid rows, in CSR form. Each row's
/// fluid list is padded with the row itself to a whole number of [`LANES`]-wide batches, so the
/// XSPH pass reads whole batches.
#[derive(Debug, Default, Clone)]
pub struct NeighborChunk {
    /// `fluid_start[k]` (a multiple of [`LANES`]) is where the chunk's k-th row's list begins
    /// in `fluid`; `fluid_start[k + 1]` is where it ends, padding included.
    pub fluid_start: Vec<u32>,
    /// Number of real fluid neighbours of the chunk's k-th row (the rest of its batches is
    /// padding).
    pub fluid_count: Vec<u32>,
    /// Fluid neighbour rows (excluding the particle itself), then padding.
    pub fluid: Vec<u32>,
    /// `boundary_start[k]..boundary_start[k + 1]` index `boundary`.
    pub boundary_start: Vec<u32>,
    /// Boundary sample indices.
    pub boundary: Vec<u32>,
    /// The slot-major copy of the lists and the per-pair scratch of the density solve (its
    /// first density pass rebuilds them from the lists above).
    pub(crate) slots: SlotLists,
}

impl NeighborChunk {
    /// Rebuilds the slot-major copy of the lists (the chunk's first row is `first_row`).
    pub(crate) fn build_slots(&mut self, first_row: usize) {
        let mut slots = core::mem::take(&mut self.slots);
        slots.build(self, first_row);
        self.slots = slots;
    }

    /// Fluid neighbours of the chunk's k-th row (without padding).
    #[inline]
    pub fn fluid_of(&self, k: usize) -> &[u32] {
        let start = self.fluid_start[k] as usize;
        &self.fluid[start..start + self.fluid_count[k] as usize]
    }

    /// The chunk's k-th row's padded fluid list, cut into batches of [`LANES`], each with its
    /// index in the chunk's batches and the mask of its real (non-padding) lanes.
    #[inline]
    pub fn fluid_batches(
        &self,
        k: usize,
    ) -> impl Iterator<Item = (usize, &[u32; LANES], Lanes)> + '_ {
        let (start, end) = (
            self.fluid_start[k] as usize,
            self.fluid_start[k + 1] as usize,
        );
        let count = self.fluid_count[k] as usize;
        self.fluid[start..end]
            .as_chunks::<LANES>()
            .0
            .iter()
            .enumerate()
            .map(move |(b, js)| (start / LANES + b, js, lanes_below(count - b * LANES)))
    }

    /// Whether the lists are well formed for the chunk of `rows` rows starting at row
    /// `first_row`, `fluid` fluid rows in all and `boundary` boundary samples: every index in
    /// range; each row's fluid list a whole number of batches within `fluid`, its real
    /// neighbours first, then fewer than [`LANES`] padding entries that are the row itself; the
    /// boundary ranges within `boundary`. The density solve checks this once per step and then
    /// reads the lists without bounds checks.
    pub fn indices_within(
        &self,
        first_row: usize,
        rows: usize,
        fluid: usize,
        boundary: usize,
    ) -> bool {
        if self.fluid_count.len() != rows {
            return false;
        }
        let fluid_ranges = self.fluid_start.len() == rows + 1
            && (self
                .fluid_start
                .windows(2)
                .zip(&self.fluid_count)
                .enumerate())
            .all(|(k, (w, &count))| {
                let (start, end, count) = (w[0] as usize, w[1] as usize, count as usize);
                // Padding: fewer than LANES entries, all the row itself (∇W = 0 there).
                let row = (first_row + k) as u32;
                let padding = self.fluid.get(start + count..end);
                start <= end
                    && start.is_multiple_of(LANES)
                    && count <= end - start
                    && end - start - count < LANES
                    && padding.is_some_and(|p| p.iter().all(|&j| j == row))
            })
            && self.fluid_start.last().map(|&e| e as usize) == Some(self.fluid.len())
            && self.fluid.len().is_multiple_of(LANES);
        let boundary_ranges = self.boundary_start.len() == rows + 1
            && self.boundary_start.windows(2).all(|w| w[0] <= w[1])
            && self.boundary_start.last().map(|&e| e as usize) == Some(self.boundary.len());
        fluid_ranges
            && boundary_ranges
            && self.fluid.iter().all(|&j| (j as usize) < fluid)
            && self.boundary.iter().all(|&k| (k as usize) < boundary)
    }

    /// Boundary neighbours of the chunk's k-th row.
    #[inline]
    pub fn boundary_of(&self, k: usize) -> &[u32] {
        &self.boundary[self.boundary_start[k] as usize..self.boundary_start[k + 1] as usize]
    }
}

/// Whether `chunks` has one chunk per block of [`CHUNK`] of the `n` fluid rows and `each(chunk,
/// first row, rows)` holds for every block.
pub(crate) fn chunks_fit(
    chunks: &[NeighborChunk],
    n: usize,
    each: impl Fn(&NeighborChunk, usize, usize) -> bool,
) -> bool {
    chunks.len() == n.div_ceil(CHUNK)
        && (chunks.iter().enumerate())
            .all(|(c, chunk)| each(chunk, c * CHUNK, CHUNK.min(n - c * CHUNK)))
}

/// Mask of the lanes with index < `n`.
#[inline(always)]
pub fn lanes_below(n: usize) -> Lanes {
    Lanes::from(core::array::from_fn(|l| l as f32)).simd_lt(Lanes::splat(n as f32))
}

/// Grids and neighbour lists of the current step.
#[derive(Resource, Debug, Default)]
pub struct NeighborState {
    /// Grid over fluid particle positions (rebuilt every step).
    pub fluid_grid: SpatialHashGrid,
    /// Grid over boundary samples (rebuilt when they change).
    pub boundary_grid: SpatialHashGrid,
    /// Neighbour lists, one entry per [`CHUNK`] fluid rows.
    pub chunks: Vec<NeighborChunk>,
}

/// Fills `chunks` with the fluid and boundary neighbours (within `h`) of fluid rows
/// `0..fluid.len()`, in parallel from [`PARALLEL_FROM`](crate::parallel::PARALLEL_FROM) rows
/// up, reusing the chunks' buffers.
pub fn find_neighbors(
    chunks: &mut Vec<NeighborChunk>,
    fluid_grid: &SpatialHashGrid,
    fluid: &[Vec2],
    boundary_grid: &SpatialHashGrid,
    h: f32,
) {
    chunks.resize_with(fluid.len().div_ceil(CHUNK), NeighborChunk::default);
    let threads = threads_for(fluid.len());
    for_blocks_mut(chunks, 1, threads, |c, chunk| {
        fill_chunk(&mut chunk[0], c, fluid_grid, fluid, boundary_grid, h);
    });
}

/// Fills the neighbour lists of the c-th block of [`CHUNK`] fluid rows.
fn fill_chunk(
    chunk: &mut NeighborChunk,
    c: usize,
    fluid_grid: &SpatialHashGrid,
    fluid: &[Vec2],
    boundary_grid: &SpatialHashGrid,
    h: f32,
) {
    chunk.fluid.clear();
    chunk.boundary.clear();
    chunk.fluid_start.clear();
    chunk.fluid_count.clear();
    chunk.boundary_start.clear();
    chunk.fluid_start.push(0);
    chunk.boundary_start.push(0);
    for (i, &p) in fluid.iter().enumerate().skip(c * CHUNK).take(CHUNK) {
        let start = chunk.fluid.len();
        fluid_grid.collect_within(p, h, i as u32, &mut chunk.fluid);
        chunk.fluid_count.push((chunk.fluid.len() - start) as u32);
        let padded = chunk.fluid.len().next_multiple_of(LANES);
        chunk.fluid.resize(padded, i as u32);
        boundary_grid.collect_within(p, h, u32::MAX, &mut chunk.boundary);
        chunk.fluid_start.push(chunk.fluid.len() as u32);
        chunk.boundary_start.push(chunk.boundary.len() as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial_grid::test_points::*;

    #[test]
    fn malformed_lists_are_detected() {
        let h = 0.1;
        let points: Vec<Vec2> = (0..50).map(|k| Vec2::new(0.03 * k as f32, 0.0)).collect();
        let mut grid = SpatialHashGrid::default();
        grid.build(&points, h);
        let mut chunks = Vec::new();
        find_neighbors(&mut chunks, &grid, &points, &SpatialHashGrid::default(), h);
        let rows = chunks[0].fluid_count.len();
        assert!(chunks[0].indices_within(0, rows, points.len(), 0));
        assert!(!chunks[0].indices_within(0, rows - 1, points.len(), 0));
        assert!(
            !chunks[0].indices_within(1, rows, points.len(), 0),
            "padding of another row"
        );
        // An index past the fluid rows, a boundary index with no samples, a broken range.
        let mut bad = chunks[0].clone();
        bad.fluid[0] = points.len() as u32;
        assert!(!bad.indices_within(0, rows, points.len(), 0));
        let mut bad = chunks[0].clone();
        bad.boundary.push(0);
        *bad.boundary_start.last_mut().unwrap() += 1;
        assert!(!bad.indices_within(0, rows, points.len(), 0));
        let mut bad = chunks[0].clone();
        bad.fluid_start[1] += 1;
        assert!(!bad.indices_within(0, rows, points.len(), 0));
        let mut bad = chunks[0].clone();
        bad.fluid_count[0] = bad.fluid_start[1] + 1;
        assert!(!bad.indices_within(0, rows, points.len(), 0));
    }

    #[test]
    fn chunked_lists_equal_grid_queries() {
        let h = 0.1;
        let mut seed = 3;
        let fluid: Vec<Vec2> = (0..1000)
            .map(|_| Vec2::new(lcg(&mut seed) - 0.5, lcg(&mut seed) - 0.5))
            .collect();
        let boundary: Vec<Vec2> = (0..300)
            .map(|_| Vec2::new(lcg(&mut seed) - 0.5, lcg(&mut seed) - 0.5))
            .collect();
        let (mut fg, mut bg) = (SpatialHashGrid::default(), SpatialHashGrid::default());
        fg.build(&fluid, h);
        bg.build(&boundary, h);
        let mut chunks = Vec::new();
        find_neighbors(&mut chunks, &fg, &fluid, &bg, h);
        for i in 0..fluid.len() {
            let chunk = &chunks[i / CHUNK];
            // Whole batches, padded with the particle itself.
            assert_eq!(chunk.fluid.len() % LANES, 0);
            let k = i % CHUNK;
            let padded = chunk.fluid_start[k] as usize..chunk.fluid_start[k + 1] as usize;
            let real = chunk.fluid_count[k] as usize;
            assert!(padded.len() - real < LANES);
            assert!(chunk.fluid[padded][real..].iter().all(|&j| j as usize == i));
            let rows = chunk.fluid_count.len();
            assert!(chunk.indices_within(i / CHUNK * CHUNK, rows, fluid.len(), boundary.len()));
            let mut f = chunk.fluid_of(i % CHUNK).to_vec();
            f.sort_unstable();
            assert_eq!(f, brute(&fluid, i, h));
            let mut b = chunk.boundary_of(i % CHUNK).to_vec();
            b.sort_unstable();
            let expected: Vec<u32> = (0..boundary.len() as u32)
                .filter(|&k| (fluid[i] - boundary[k as usize]).length_squared() < h * h)
                .collect();
            assert_eq!(b, expected);
        }
    }
}
