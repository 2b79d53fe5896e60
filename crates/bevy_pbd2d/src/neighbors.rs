//! Neighbour search: a spatial hash grid with cells of the support radius h and a 3 × 3 cell
//! lookup ([Teschner et al. 2003], as in the PBF demo).
//!
//! Cells are integer coordinates (cx, cy) = ⌊x/h⌋ (any sign, any extent: no offset is added).
//! A cell's bucket is (cx + P·cy) mod T in a power-of-two table of T ≥ 2N buckets, so the three
//! cells of one grid row, (cx − 1 ..= cx + 1, cy), are three consecutive buckets. Points are
//! counting-sorted by bucket together with a copy of their positions, so a 3 × 3 query reads three
//! contiguous runs of positions. Because P ≡ 3 (mod 8), the runs of rows cy − 1, cy and cy + 1
//! are at least three buckets apart for every table size and never overlap: each point is
//! visited at most once. Distinct cells may share a bucket; their points are filtered out by the
//! distance test. A bucket holds any number of points (no overflow), and the grid is rebuilt
//! every step without allocating once its buffers have grown.

use bevy::prelude::*;

use crate::kernel::{LANES, Lanes};
use crate::parallel::{CHUNK, threads_for};
use crate::phased::for_blocks_mut;

/// Row multiplier P of the bucket function (≡ 3 mod 8; the golden-ratio constant spreads rows
/// over the table).
const ROW: u32 = 0x9E37_79B3;

/// ⌊v⌋ as an integer, saturating for huge values; NaN gives 0 (cheaper than `f32::floor`,
/// which is a library call without SSE4.1).
#[inline(always)]
fn floor_to_i32(v: f32) -> i32 {
    let t = v as i32;
    t.saturating_sub(((t as f32) > v) as i32)
}

/// A spatial hash grid over a set of points.
#[derive(Debug, Default, Clone)]
pub struct SpatialHashGrid {
    inv_cell: f32,
    mask: usize,
    /// `bucket_start[b]..bucket_start[b + 1]` are the entries of bucket `b`.
    bucket_start: Vec<u32>,
    /// Point indices, sorted by bucket (and by index within a bucket).
    entries: Vec<u32>,
    /// Positions of `entries`, in the same order.
    sorted: Vec<Vec2>,
    /// Bucket of each point.
    bucket_of: Vec<u32>,
}

impl SpatialHashGrid {
    /// First of the three consecutive buckets of cells (cx − 1 ..= cx + 1, cy).
    #[inline(always)]
    fn row_bucket(&self, cx: i32, cy: i32) -> usize {
        ((cx as u32).wrapping_sub(1)).wrapping_add((cy as u32).wrapping_mul(ROW)) as usize
            & self.mask
    }

    /// Integer cell of a point for cells of size 1/`inv_cell`.
    #[inline(always)]
    fn cell(&self, p: Vec2) -> (i32, i32) {
        (
            floor_to_i32(p.x * self.inv_cell),
            floor_to_i32(p.y * self.inv_cell),
        )
    }

    /// Rebuilds the grid for `points` with cell size `cell_size` (m), reusing buffers.
    pub fn build(&mut self, points: &[Vec2], cell_size: f32) {
        self.inv_cell = 1.0 / cell_size;
        let table = (2 * points.len()).next_power_of_two().max(16);
        self.mask = table - 1;
        self.bucket_start.clear();
        self.bucket_start.resize(table + 1, 0);
        self.bucket_of.clear();
        for &p in points {
            let (cx, cy) = self.cell(p);
            // The cell's own bucket is one after its row run's first.
            let b = (self.row_bucket(cx, cy) + 1) & self.mask;
            self.bucket_of.push(b as u32);
            self.bucket_start[b + 1] += 1;
        }
        for b in 0..table {
            self.bucket_start[b + 1] += self.bucket_start[b];
        }
        self.entries.clear();
        self.entries.resize(points.len(), 0);
        self.sorted.clear();
        self.sorted.resize(points.len(), Vec2::ZERO);
        // Fill each bucket from its back (iterating points backwards), so that entries stay in
        // index order; `bucket_start[b + 1]` serves as the cursor and ends up at `start[b]`.
        for (i, &b) in self.bucket_of.iter().enumerate().rev() {
            let slot = &mut self.bucket_start[b as usize + 1];
            *slot -= 1;
            self.entries[*slot as usize] = i as u32;
            self.sorted[*slot as usize] = points[i];
        }
        // Undo the cursor shift: bucket b now starts at bucket_start[b + 1].
        self.bucket_start.rotate_left(1);
        self.bucket_start[table] = points.len() as u32;
    }

    /// The up to six runs of entry positions (`start..end`) covering the 3 × 3 cells around `p`
    /// (a row's run is split in two where it wraps around the end of the table).
    #[inline(always)]
    fn runs(&self, p: Vec2) -> ([(u32, u32); 6], usize) {
        let (cx, cy) = self.cell(p);
        let mut runs = [(0, 0); 6];
        let mut n = 0;
        for dy in -1..=1 {
            let b = self.row_bucket(cx, cy.wrapping_add(dy));
            if b + 3 <= self.mask + 1 {
                runs[n] = (self.bucket_start[b], self.bucket_start[b + 3]);
                n += 1;
            } else {
                let table = self.mask + 1;
                runs[n] = (self.bucket_start[b], self.bucket_start[table]);
                runs[n + 1] = (self.bucket_start[0], self.bucket_start[b + 3 - table]);
                n += 2;
            }
        }
        (runs, n)
    }

    /// The candidates near `p`: for each run, its point indices and their positions.
    #[inline(always)]
    fn candidates(&self, p: Vec2) -> impl Iterator<Item = (&[u32], &[Vec2])> {
        let (runs, n) = if self.entries.is_empty() {
            ([(0, 0); 6], 0)
        } else {
            self.runs(p)
        };
        (0..n).map(move |r| {
            let range = runs[r].0 as usize..runs[r].1 as usize;
            (&self.entries[range.clone()], &self.sorted[range])
        })
    }

    /// Calls `f(j, xⱼ)` for every point j with ‖p − xⱼ‖ < `radius`, where `radius` ≤ the cell
    /// size.
    #[inline]
    pub fn for_each_within(&self, p: Vec2, radius: f32, mut f: impl FnMut(u32, Vec2)) {
        let r2 = radius * radius;
        for (entries, positions) in self.candidates(p) {
            for (&j, &q) in entries.iter().zip(positions) {
                if (p - q).length_squared() < r2 {
                    f(j, q);
                }
            }
        }
    }

    /// Appends to `out` every point j ≠ `exclude` with ‖p − xⱼ‖ < `radius` (≤ the cell size),
    /// branch-free per candidate.
    #[inline]
    pub fn collect_within(&self, p: Vec2, radius: f32, exclude: u32, out: &mut Vec<u32>) {
        let r2 = radius * radius;
        for (entries, positions) in self.candidates(p) {
            let first = out.len();
            out.resize(first + entries.len(), 0);
            let slots = &mut out[first..];
            let mut kept = 0;
            for (&j, &q) in entries.iter().zip(positions) {
                slots[kept] = j;
                kept += ((p - q).length_squared() < r2 && j != exclude) as usize;
            }
            out.truncate(first + kept);
        }
    }
}

/// Neighbour lists of a block of [`CHUNK`] consecutive fluid rows, in CSR form. Each row's
/// fluid list is padded with the row itself to a whole number of [`LANES`]-wide batches, so the
/// density solve reads and writes whole batches.
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
    /// Per-batch scratch, one entry per [`LANES`] entries of `fluid`: x components of ∇Wᵢⱼ
    /// (1/m³), stored by the density pass and reused by the correction pass of the same
    /// iteration (0 in padding lanes).
    pub gradient_x: Vec<Lanes>,
    /// y components of ∇Wᵢⱼ (1/m³), as `gradient_x`.
    pub gradient_y: Vec<Lanes>,
    /// Wᵢⱼ (1/m²) of the last density pass, which ran on the step's final positions (XSPH
    /// reuses it; 0 in padding lanes).
    pub kernel: Vec<Lanes>,
}

impl NeighborChunk {
    /// Fluid neighbours of the chunk's k-th row (without padding).
    #[inline]
    pub fn fluid_of(&self, k: usize) -> &[u32] {
        let start = self.fluid_start[k] as usize;
        &self.fluid[start..start + self.fluid_count[k] as usize]
    }

    /// The chunk's k-th row's padded fluid list, cut into batches of [`LANES`], each with the
    /// index of its per-batch scratch entry and the mask of its real (non-padding) lanes.
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

    /// Where the chunk's k-th row's lists are, without bounds checks.
    ///
    /// # Safety
    /// [`NeighborChunk::indices_within`] holds for this chunk and `k` is below its row count.
    #[inline(always)]
    pub unsafe fn row_ranges(&self, k: usize) -> RowRanges {
        // SAFETY: `fluid_start` and `boundary_start` have rows + 1 entries, `fluid_count` rows.
        unsafe {
            RowRanges {
                fluid: *self.fluid_start.get_unchecked(k) as usize
                    ..*self.fluid_start.get_unchecked(k + 1) as usize,
                count: *self.fluid_count.get_unchecked(k) as usize,
                boundary: *self.boundary_start.get_unchecked(k) as usize
                    ..*self.boundary_start.get_unchecked(k + 1) as usize,
            }
        }
    }

    /// Boundary neighbours of the chunk's k-th row.
    #[inline]
    pub fn boundary_of(&self, k: usize) -> &[u32] {
        &self.boundary[self.boundary_start[k] as usize..self.boundary_start[k + 1] as usize]
    }
}

/// Where one row's lists are in its [`NeighborChunk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowRanges {
    /// The padded fluid list: a range of `fluid`, whole batches.
    pub fluid: core::ops::Range<usize>,
    /// Real fluid neighbours at the start of that range.
    pub count: usize,
    /// The boundary list: a range of `boundary`.
    pub boundary: core::ops::Range<usize>,
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

    /// Deterministic pseudo-random numbers in [0, 1).
    fn lcg(seed: &mut u64) -> f32 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 40) as f32) / (1u64 << 24) as f32
    }

    fn brute(points: &[Vec2], i: usize, h: f32) -> Vec<u32> {
        (0..points.len() as u32)
            .filter(|&j| {
                j as usize != i && (points[i] - points[j as usize]).length_squared() < h * h
            })
            .collect()
    }

    fn grid_lists(points: &[Vec2], h: f32) -> Vec<Vec<u32>> {
        let mut grid = SpatialHashGrid::default();
        grid.build(points, h);
        (0..points.len())
            .map(|i| {
                let mut v = Vec::new();
                grid.for_each_within(points[i], h, |j, _| {
                    if j as usize != i {
                        v.push(j);
                    }
                });
                v.sort_unstable();
                v
            })
            .collect()
    }

    #[test]
    fn grid_equals_brute_force_on_hard_sets() {
        let h = 0.1;
        let mut seed = 7;
        let mut points = Vec::new();
        // Around the origin, negative and positive.
        for _ in 0..800 {
            points.push(Vec2::new(
                lcg(&mut seed) * 2.0 - 1.0,
                lcg(&mut seed) * 2.0 - 1.0,
            ));
        }
        // Far apart, both signs.
        for _ in 0..200 {
            points.push(Vec2::new(
                lcg(&mut seed) * 2e4 - 1e4,
                lcg(&mut seed) * 2e4 - 1e4,
            ));
        }
        // Far away clusters (cells with large indices).
        for _ in 0..100 {
            points.push(Vec2::new(
                -5000.0 + lcg(&mut seed) * 0.2,
                3000.0 + lcg(&mut seed) * 0.2,
            ));
        }
        // 500 particles inside one cell.
        for _ in 0..500 {
            points.push(Vec2::new(
                0.31 + lcg(&mut seed) * 0.09,
                -0.72 + lcg(&mut seed) * 0.09,
            ));
        }
        let lists = grid_lists(&points, h);
        for (i, list) in lists.iter().enumerate() {
            assert_eq!(*list, brute(&points, i, h), "particle {i} at {}", points[i]);
        }
        // The cluster really is dense: its particles see hundreds of neighbours.
        assert!(lists[1100..].iter().all(|l| l.len() >= 250));
    }

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
    fn small_tables_visit_each_point_once() {
        // Few points: a 16-bucket table, where row runs wrap around its end and distinct rows
        // land close together. A point visited twice would appear twice in its list.
        let h = 0.1;
        for offset in [-3.0f32, -0.05, 0.0, 0.07, 12.34] {
            let points: Vec<Vec2> = (0..7)
                .map(|k| Vec2::new(offset + 0.04 * (k % 3) as f32, offset + 0.045 * k as f32))
                .collect();
            for (i, list) in grid_lists(&points, h).iter().enumerate() {
                assert_eq!(*list, brute(&points, i, h), "offset {offset}, particle {i}");
            }
        }
    }

    #[test]
    fn floor_to_i32_is_floor() {
        for v in [
            -2.5f32, -1.0, -0.1, -0.0, 0.0, 0.3, 1.0, 7.9, -1e-7, 3e9, -3e9,
        ] {
            assert_eq!(floor_to_i32(v), v.floor() as i32, "{v}");
        }
        assert_eq!(floor_to_i32(f32::NAN), 0);
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
