//! Neighbour search: a spatial hash grid with cells of the support radius h and a 3 × 3 cell
//! lookup ([Teschner et al. 2003], as in the PBF demo).
//!
//! Cells are integer coordinates ⌊x/h⌋ (any sign, any extent: no offset is added), hashed into
//! a power-of-two table at least twice the particle count. Particles are counting-sorted by
//! bucket, so a bucket holds any number of particles (no overflow) and the grid is rebuilt
//! every step without allocating once its buffers have grown. A query visits each distinct
//! bucket of the 3 × 3 cells once (two cells that hash to the same bucket are not visited twice)
//! and keeps the particles closer than h.

use bevy::prelude::*;

use crate::parallel::{CHUNK, for_each_item};

/// A spatial hash grid over a set of points.
#[derive(Debug, Default, Clone)]
pub struct SpatialHashGrid {
    inv_cell: f32,
    mask: usize,
    /// `bucket_start[b]..bucket_start[b + 1]` are the entries of bucket `b`.
    bucket_start: Vec<u32>,
    /// Point indices, sorted by bucket (and by index within a bucket).
    entries: Vec<u32>,
    /// Bucket of each point.
    bucket_of: Vec<u32>,
    /// Fill cursor per bucket (scratch of `build`).
    cursor: Vec<u32>,
}

impl SpatialHashGrid {
    /// Integer cell of a point for cells of size 1/`inv_cell`. Saturates for huge coordinates;
    /// NaN lands in cell (0, 0) (it is never anyone's neighbour: its distances are NaN).
    #[inline]
    fn cell(&self, p: Vec2) -> IVec2 {
        IVec2::new(
            (p.x * self.inv_cell).floor() as i32,
            (p.y * self.inv_cell).floor() as i32,
        )
    }

    #[inline]
    fn bucket(&self, c: IVec2) -> usize {
        let h = (c.x as u32).wrapping_mul(73_856_093) ^ (c.y as u32).wrapping_mul(19_349_663);
        h as usize & self.mask
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
            let b = self.bucket(self.cell(p));
            self.bucket_of.push(b as u32);
            self.bucket_start[b + 1] += 1;
        }
        for b in 0..table {
            self.bucket_start[b + 1] += self.bucket_start[b];
        }
        self.entries.clear();
        self.entries.resize(points.len(), 0);
        // Fill from the back of each bucket so that entries stay in index order.
        self.cursor.clear();
        self.cursor.extend_from_slice(&self.bucket_start[1..]);
        for (i, &b) in self.bucket_of.iter().enumerate().rev() {
            let slot = &mut self.cursor[b as usize];
            *slot -= 1;
            self.entries[*slot as usize] = i as u32;
        }
    }

    /// Calls `f(j, xⱼ)` for every point j with ‖p − xⱼ‖ < `radius`, where `points` are the
    /// points the grid was built from and `radius` ≤ the cell size.
    #[inline]
    pub fn for_each_within(
        &self,
        points: &[Vec2],
        p: Vec2,
        radius: f32,
        mut f: impl FnMut(u32, Vec2),
    ) {
        if self.entries.is_empty() {
            return;
        }
        let r2 = radius * radius;
        let c = self.cell(p);
        let mut seen = [usize::MAX; 9];
        let mut n = 0;
        for dy in -1..=1 {
            for dx in -1..=1 {
                let b = self.bucket(IVec2::new(c.x.wrapping_add(dx), c.y.wrapping_add(dy)));
                if seen[..n].contains(&b) {
                    continue;
                }
                seen[n] = b;
                n += 1;
                let range = self.bucket_start[b] as usize..self.bucket_start[b + 1] as usize;
                for &j in &self.entries[range] {
                    let q = points[j as usize];
                    if (p - q).length_squared() < r2 {
                        f(j, q);
                    }
                }
            }
        }
    }
}

/// Neighbour lists of a block of [`CHUNK`] consecutive fluid rows, in CSR form.
#[derive(Debug, Default, Clone)]
pub struct NeighborChunk {
    /// `fluid_start[k]..fluid_start[k + 1]` index `fluid` for the chunk's k-th row.
    pub fluid_start: Vec<u32>,
    /// Fluid neighbour rows (excluding the particle itself).
    pub fluid: Vec<u32>,
    /// `boundary_start[k]..boundary_start[k + 1]` index `boundary`.
    pub boundary_start: Vec<u32>,
    /// Boundary sample indices.
    pub boundary: Vec<u32>,
    /// Per-pair scratch aligned with `fluid`: the density solve stores ∇Wᵢⱼ here in its
    /// density pass and reuses it in the correction pass of the same iteration.
    pub gradient: Vec<Vec2>,
}

impl NeighborChunk {
    /// Fluid neighbours of the chunk's k-th row.
    #[inline]
    pub fn fluid_of(&self, k: usize) -> &[u32] {
        &self.fluid[self.fluid_start[k] as usize..self.fluid_start[k + 1] as usize]
    }

    /// Boundary neighbours of the chunk's k-th row.
    #[inline]
    pub fn boundary_of(&self, k: usize) -> &[u32] {
        &self.boundary[self.boundary_start[k] as usize..self.boundary_start[k + 1] as usize]
    }
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
/// `0..fluid.len()`, in parallel, reusing the chunks' buffers.
pub fn find_neighbors(
    chunks: &mut Vec<NeighborChunk>,
    fluid_grid: &SpatialHashGrid,
    fluid: &[Vec2],
    boundary_grid: &SpatialHashGrid,
    boundary: &[Vec2],
    h: f32,
) {
    chunks.resize_with(fluid.len().div_ceil(CHUNK), NeighborChunk::default);
    for_each_item(chunks, |c, chunk: &mut NeighborChunk| {
        chunk.fluid.clear();
        chunk.boundary.clear();
        chunk.fluid_start.clear();
        chunk.boundary_start.clear();
        chunk.fluid_start.push(0);
        chunk.boundary_start.push(0);
        let rows = c * CHUNK..((c + 1) * CHUNK).min(fluid.len());
        for i in rows {
            let p = fluid[i];
            fluid_grid.for_each_within(fluid, p, h, |j, _| {
                if j as usize != i {
                    chunk.fluid.push(j);
                }
            });
            boundary_grid.for_each_within(boundary, p, h, |k, _| chunk.boundary.push(k));
            chunk.fluid_start.push(chunk.fluid.len() as u32);
            chunk.boundary_start.push(chunk.boundary.len() as u32);
        }
    });
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
                grid.for_each_within(points, points[i], h, |j, _| {
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
        find_neighbors(&mut chunks, &fg, &fluid, &bg, &boundary, h);
        for i in 0..fluid.len() {
            let chunk = &chunks[i / CHUNK];
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
