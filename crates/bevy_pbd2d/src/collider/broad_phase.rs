//! The colliders' broad phase: a uniform grid of cells, each listing the colliders whose
//! bounds (over the step's motion) overlap it. A particle looks up the cells its own motion's
//! bounds cover, so it is tested only against colliders near it, never against all of them.

use bevy::platform::collections::HashMap;
use bevy::prelude::*;

/// Largest number of cells one collider is listed in; a larger one (a floor kilometres wide
/// with small cells) is tested by every particle whose bounds overlap its own.
const MAX_CELLS_PER_COLLIDER: i64 = 4096;

/// Largest number of cells one query visits; a longer motion tests every collider's bounds.
const MAX_CELLS_PER_QUERY: i64 = 64;

/// Colliders by grid cell.
#[derive(Debug, Default)]
pub(crate) struct Bins {
    /// Cell edge (m).
    cell: f32,
    /// Cell → colliders (indices, ascending).
    cells: HashMap<IVec2, Vec<u32>>,
    /// Colliders too large for the cells, ascending.
    large: Vec<u32>,
    /// Every collider's bounds (m).
    bounds: Vec<(Vec2, Vec2)>,
}

impl Bins {
    /// Lists `bounds` (one per collider) in cells of edge `cell` (m, > 0).
    pub(crate) fn rebuild(&mut self, bounds: &[(Vec2, Vec2)], cell: f32) {
        self.cell = cell;
        self.cells.clear();
        self.large.clear();
        self.bounds.clear();
        self.bounds.extend_from_slice(bounds);
        for (k, &(lo, hi)) in bounds.iter().enumerate() {
            let (a, b) = (self.key(lo), self.key(hi));
            let count = (b.x as i64 - a.x as i64 + 1) * (b.y as i64 - a.y as i64 + 1);
            if count > MAX_CELLS_PER_COLLIDER {
                self.large.push(k as u32);
                continue;
            }
            for y in a.y..=b.y {
                for x in a.x..=b.x {
                    self.cells
                        .entry(IVec2::new(x, y))
                        .or_default()
                        .push(k as u32);
                }
            }
        }
    }

    fn key(&self, p: Vec2) -> IVec2 {
        let c = (p / self.cell).floor();
        // Far outside the i32 range a particle is a runaway; clamp to keep the keys valid.
        c.clamp(Vec2::splat(-1e9), Vec2::splat(1e9)).as_ivec2()
    }

    /// The colliders whose bounds overlap `lo..hi`, ascending and without repeats, in `out`.
    pub(crate) fn query(&self, lo: Vec2, hi: Vec2, out: &mut Vec<u32>) {
        out.clear();
        if self.bounds.is_empty() {
            return;
        }
        let overlaps = |k: u32| {
            let (blo, bhi) = self.bounds[k as usize];
            blo.cmple(hi).all() && bhi.cmpge(lo).all()
        };
        let (a, b) = (self.key(lo), self.key(hi));
        let count = (b.x as i64 - a.x as i64 + 1) * (b.y as i64 - a.y as i64 + 1);
        if count > MAX_CELLS_PER_QUERY {
            out.extend((0..self.bounds.len() as u32).filter(|&k| overlaps(k)));
            return;
        }
        for y in a.y..=b.y {
            for x in a.x..=b.x {
                if let Some(list) = self.cells.get(&IVec2::new(x, y)) {
                    out.extend(list.iter().copied().filter(|&k| overlaps(k)));
                }
            }
        }
        out.extend(self.large.iter().copied().filter(|&k| overlaps(k)));
        out.sort_unstable();
        out.dedup();
    }

    /// The colliders of `from` (a [`Bins::query`]'s result) whose bounds overlap `lo..hi`, in
    /// `out`: for bounds within the queried ones, the same list as `query(lo, hi)`.
    pub(crate) fn overlapping(&self, from: &[u32], lo: Vec2, hi: Vec2, out: &mut Vec<u32>) {
        out.clear();
        out.extend(from.iter().copied().filter(|&k| {
            let (blo, bhi) = self.bounds[k as usize];
            blo.cmple(hi).all() && bhi.cmpge(lo).all()
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_finds_exactly_the_overlapping_bounds() {
        let bounds: Vec<(Vec2, Vec2)> = (0..50)
            .map(|k| {
                let lo = Vec2::new((k % 10) as f32 * 0.7 - 3.0, (k / 10) as f32 * 0.9 - 2.0);
                (lo, lo + Vec2::new(0.3 + (k % 3) as f32, 0.2))
            })
            .chain([(Vec2::splat(-1e4), Vec2::splat(1e4))])
            .collect();
        let mut bins = Bins::default();
        bins.rebuild(&bounds, 0.5);
        let mut out = Vec::new();
        for q in 0..200 {
            let lo = Vec2::new((q % 20) as f32 * 0.4 - 4.0, (q / 20) as f32 * 0.5 - 3.0);
            let hi = lo + Vec2::splat(0.05 + (q % 7) as f32 * 0.6);
            bins.query(lo, hi, &mut out);
            let brute: Vec<u32> = (0..bounds.len() as u32)
                .filter(|&k| {
                    let (blo, bhi) = bounds[k as usize];
                    blo.cmple(hi).all() && bhi.cmpge(lo).all()
                })
                .collect();
            assert_eq!(out, brute, "query {lo} .. {hi}");
            // Within a larger query's result, the same list.
            let mut near = Vec::new();
            bins.query(lo - 0.7, hi + 1.3, &mut near);
            let mut within = Vec::new();
            bins.overlapping(&near, lo, hi, &mut within);
            assert_eq!(within, brute, "within {lo} .. {hi}");
        }
    }
}
