//! The neighbour lists of one block of fluid rows (CSR form, padded to the XSPH pass's SIMD
//! batches), as the neighbour search ([`neighbors`](super::neighbors)) fills them and the
//! solver passes read them.

use crate::fluid::kernel::{LANES, Lanes};

/// Neighbour lists of a block of consecutive fluid rows, in CSR form. Each row's fluid list is
/// padded with the row itself to a whole number of [`LANES`]-wide batches, so the XSPH pass
/// reads whole batches.
#[derive(Debug, Default, Clone)]
pub struct NeighborLists {
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
}

impl NeighborLists {
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

    /// Keeps in each row's boundary list only the samples `keep(k, sample)` accepts (k the
    /// row's index in the chunk), in order.
    pub(crate) fn retain_boundary(&mut self, mut keep: impl FnMut(usize, u32) -> bool) {
        let mut kept = 0;
        for k in 0..self.boundary_start.len().saturating_sub(1) {
            let (start, end) = (self.boundary_start[k], self.boundary_start[k + 1]);
            self.boundary_start[k] = kept as u32;
            for j in start as usize..end as usize {
                let sample = self.boundary[j];
                if keep(k, sample) {
                    self.boundary[kept] = sample;
                    kept += 1;
                }
            }
        }
        if let Some(last) = self.boundary_start.last_mut() {
            *last = kept as u32;
        }
        self.boundary.truncate(kept);
    }

    /// Whether the lists are well formed for the chunk of `rows` rows starting at row
    /// `first_row`, `fluid` fluid rows in all and `boundary` boundary samples: every index in
    /// range; each row's fluid list a whole number of batches within `fluid`, its real
    /// neighbours first, then fewer than [`LANES`] padding entries that are the row itself; the
    /// boundary ranges within `boundary`. The density solve checks this once per writing of the
    /// lists ([`NeighborChunk::fits`](super::neighbors::NeighborChunk::fits)) and then reads
    /// them without bounds checks.
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

/// Mask of the lanes with index < `n`.
#[inline(always)]
pub fn lanes_below(n: usize) -> Lanes {
    Lanes::from(core::array::from_fn(|l| l as f32)).simd_lt(Lanes::splat(n as f32))
}

#[cfg(test)]
mod tests {
    use super::NeighborLists;

    /// Three rows' boundary lists [1 2 3] [] [4 5]: keeping the even samples of rows 0 and 2
    /// gives [2] [] [4], with the ranges rebuilt.
    #[test]
    fn retain_boundary_keeps_the_accepted_samples_in_order() {
        let mut lists = NeighborLists {
            boundary_start: vec![0, 3, 3, 5],
            boundary: vec![1, 2, 3, 4, 5],
            ..Default::default()
        };
        lists.retain_boundary(|_, sample| sample % 2 == 0);
        assert_eq!(lists.boundary_start, [0, 1, 1, 2]);
        assert_eq!(lists.boundary, [2, 4]);
        assert_eq!(lists.boundary_of(2), [4]);
        lists.retain_boundary(|k, _| k != 0);
        assert_eq!(
            (lists.boundary_start, lists.boundary),
            (vec![0, 0, 0, 1], vec![4])
        );
    }
}
