//! The spatial hash grid of the neighbour search: cells of the support radius h and a 3 × 3 cell
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

#[cfg(target_arch = "x86_64")]
mod avx2;

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

    /// The candidates near `p`: for each of the first `n` runs, its point indices and their
    /// positions.
    #[inline(always)]
    fn candidates(&self, p: Vec2) -> ([Run<'_>; 6], usize) {
        let mut slices: [Run<'_>; 6] = [(&[], &[]); 6];
        if self.entries.is_empty() {
            return (slices, 0);
        }
        let (runs, n) = self.runs(p);
        for (slice, &(start, end)) in slices.iter_mut().zip(&runs[..n]) {
            let range = start as usize..end as usize;
            *slice = (&self.entries[range.clone()], &self.sorted[range]);
        }
        (slices, n)
    }

    /// Calls `f(j, xⱼ)` for every point j with ‖p − xⱼ‖ < `radius`, where `radius` ≤ the cell
    /// size.
    #[inline]
    pub fn for_each_within(&self, p: Vec2, radius: f32, mut f: impl FnMut(u32, Vec2)) {
        let r2 = radius * radius;
        let (runs, n) = self.candidates(p);
        for (entries, positions) in &runs[..n] {
            for (&j, &q) in entries.iter().zip(*positions) {
                if (p - q).length_squared() < r2 {
                    f(j, q);
                }
            }
        }
    }

    /// Appends to `out` every point j ≠ `exclude` with ‖p − xⱼ‖ < `radius` (≤ the cell size),
    /// in the order of [`SpatialHashGrid::for_each_within`]: eight candidates at a time where
    /// the CPU has AVX2, else branch-free per candidate (`out` grows once by the candidate
    /// count, every candidate is written, and the cursor advances only past the kept ones).
    #[inline]
    pub fn collect_within(&self, p: Vec2, radius: f32, exclude: u32, out: &mut Vec<u32>) {
        #[cfg(target_arch = "x86_64")]
        if crate::simd::has_avx2() {
            // SAFETY: the CPU has AVX2.
            unsafe { self.collect_within_avx2(p, radius, exclude, out) };
            return;
        }
        self.collect_within_scalar(p, radius, exclude, out);
    }

    /// [`SpatialHashGrid::collect_within`] with the AVX2 filter.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[cfg(target_arch = "x86_64")]
    #[inline]
    unsafe fn collect_within_avx2(&self, p: Vec2, radius: f32, exclude: u32, out: &mut Vec<u32>) {
        let (runs, n) = self.candidates(p);
        let runs = &runs[..n];
        let candidates: usize = runs.iter().map(|(entries, _)| entries.len()).sum();
        // Room for the filter's whole-vector stores past the last candidate.
        out.reserve(candidates + 8);
        let spare = out.spare_capacity_mut();
        let mut kept = 0;
        for (entries, positions) in runs {
            // SAFETY: the CPU has AVX2; `kept` counts kept candidates of the runs before, so
            // at least this run's length + 8 entries follow `kept` in `spare`.
            kept += unsafe {
                avx2::filter_run(
                    p,
                    radius * radius,
                    exclude,
                    entries,
                    positions,
                    &mut spare[kept..],
                )
            };
        }
        // SAFETY: `filter_run` initialised the first `kept` entries of `spare`.
        unsafe { out.set_len(out.len() + kept) };
    }

    /// [`SpatialHashGrid::collect_within`] one candidate at a time.
    #[inline]
    fn collect_within_scalar(&self, p: Vec2, radius: f32, exclude: u32, out: &mut Vec<u32>) {
        let r2 = radius * radius;
        let (runs, n) = self.candidates(p);
        let runs = &runs[..n];
        let candidates: usize = runs.iter().map(|(entries, _)| entries.len()).sum();
        let first = out.len();
        out.resize(first + candidates, 0);
        let slots = &mut out[first..];
        let mut kept = 0;
        for (entries, positions) in runs {
            for (&j, &q) in entries.iter().zip(*positions) {
                // SAFETY: `kept` counts kept candidates among those visited before this one,
                // so it is below `candidates` = slots.len().
                unsafe { *slots.get_unchecked_mut(kept) = j };
                kept += ((p - q).length_squared() < r2 && j != exclude) as usize;
            }
        }
        out.truncate(first + kept);
    }
}

/// One run of candidates: point indices and their positions.
type Run<'a> = (&'a [u32], &'a [Vec2]);

/// Points and brute-force neighbour lists for the tests of the grid and of the lists.
#[cfg(test)]
pub(crate) mod test_points {
    use super::*;

    /// Deterministic pseudo-random numbers in [0, 1).
    pub(crate) fn lcg(seed: &mut u64) -> f32 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 40) as f32) / (1u64 << 24) as f32
    }

    pub(crate) fn brute(points: &[Vec2], i: usize, h: f32) -> Vec<u32> {
        (0..points.len() as u32)
            .filter(|&j| {
                j as usize != i && (points[i] - points[j as usize]).length_squared() < h * h
            })
            .collect()
    }

    pub(crate) fn grid_lists(points: &[Vec2], h: f32) -> Vec<Vec<u32>> {
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
                let mut collected = vec![u32::MAX];
                grid.collect_within(points[i], h, i as u32, &mut collected);
                assert_eq!(collected[0], u32::MAX, "appends");
                // The same points in the same order (the density sums add in list order).
                assert_eq!(collected[1..], v[..], "collect_within = for_each_within");
                let mut scalar = vec![u32::MAX];
                grid.collect_within_scalar(points[i], h, i as u32, &mut scalar);
                assert_eq!(scalar, collected, "the scalar filter = the filter used");
                v.sort_unstable();
                v
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::test_points::*;
    use super::*;

    /// Points exactly the radius apart are not neighbours (the test is ‖r‖ < h), and a NaN
    /// point is nobody's neighbour, on every filter.
    #[test]
    fn points_at_the_radius_and_nan_points_are_not_neighbours() {
        let h = 0.5;
        // A lattice of spacing h (exact in binary: the distances are exactly h and h√2), 3
        // points near the middle, and a NaN point.
        let mut points: Vec<Vec2> = (0..36)
            .map(|k| Vec2::new((k % 6) as f32, (k / 6) as f32) * h)
            .collect();
        points.extend([Vec2::splat(1.1), Vec2::splat(1.2), Vec2::new(1.15, 1.4)]);
        points.push(Vec2::new(f32::NAN, 0.25));
        let lists = grid_lists(&points, h);
        for (i, list) in lists.iter().enumerate() {
            assert_eq!(*list, brute(&points, i, h), "particle {i}");
            if i < 36 {
                assert!(list.iter().all(|&j| j >= 36), "lattice point {i}: {list:?}");
            }
        }
        assert_eq!(lists[36], vec![14, 15, 20, 37, 38]);
        assert!(lists[39].is_empty() && lists.iter().all(|l| !l.contains(&39)));
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
}
