//! The wall's line: segments joining boundary samples at most 2d apart (neighbours on a row),
//! which an embedded particle may not cross. A free particle never reaches them: every point
//! of such a segment lies within d of one of its ends, inside the discs.

use bevy::prelude::*;

use crate::fluid::grid::SpatialHashGrid;

/// The segments between samples, by sample: `of(k)` lists the samples joined to k.
#[derive(Debug, Default)]
pub(super) struct WallEdges {
    /// `start[k]..start[k + 1]` index `joined`.
    start: Vec<u32>,
    joined: Vec<u32>,
    /// The boundary's generation these segments were built for.
    pub(super) generation: Option<u64>,
    /// How many samples the last warning counted too far from their neighbours (a moving
    /// boundary rebuilds every step: it warns again only when the count changes).
    warned: usize,
}

impl WallEdges {
    /// Joins every pair of `samples` at most `length` (m) apart, `length` ≤ the grid's cell
    /// `reach`. Warns when samples have their nearest neighbour farther than `length` but within
    /// `reach`: their discs do not overlap, and fast fluid can pass between them.
    pub(super) fn build(
        &mut self,
        samples: &[Vec2],
        grid: &SpatialHashGrid,
        (length, reach): (f32, f32),
    ) {
        self.start.clear();
        self.joined.clear();
        let (mut gaps, mut widest) = (0usize, 0.0f32);
        for (k, &p) in samples.iter().enumerate() {
            self.start.push(self.joined.len() as u32);
            let mut nearest = f32::INFINITY;
            grid.for_each_within(p, reach, |l, q| {
                if l as usize == k {
                    return;
                }
                let d = (q - p).length();
                nearest = nearest.min(d);
                // Within `length`, inclusive: the builders' spacing is exactly 2r.
                if d <= length * (1.0 + 1e-4) {
                    self.joined.push(l);
                }
            });
            if nearest.is_finite() && nearest > length * (1.0 + 1e-4) {
                gaps += 1;
                widest = widest.max(nearest);
            }
        }
        self.start.push(self.joined.len() as u32);
        if gaps > 0 && gaps != self.warned {
            warn!(
                "bevy_pbd2d: {gaps} boundary samples have no neighbour within {length} m (up to \
                 {widest} m): fluid can pass between their contact discs; space samples at most \
                 2.4 particle radii apart"
            );
        }
        self.warned = gaps;
    }

    /// The samples joined to sample `k`.
    pub(super) fn of(&self, k: u32) -> &[u32] {
        let k = k as usize;
        match (self.start.get(k), self.start.get(k + 1)) {
            (Some(&a), Some(&b)) => &self.joined[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The segment nearest to `p` among those of the samples `near`, as its ends, or `None`
    /// when none of them is joined to another.
    pub(super) fn nearest(&self, samples: &[Vec2], near: &[u32], p: Vec2) -> Option<(Vec2, Vec2)> {
        let mut best: Option<(f32, (Vec2, Vec2))> = None;
        for &k in near {
            let a = samples[k as usize];
            for &l in self.of(k) {
                let b = samples[l as usize];
                let d = distance_to_segment(p, a, b);
                if best.is_none_or(|(e, _)| d < e) {
                    best = Some((d, (a, b)));
                }
            }
        }
        best.map(|(_, segment)| segment)
    }

    /// The first point (as a fraction t of the motion) where the motion a → b crosses a segment
    /// of the samples `near` from the side a is on; from on a segment's line, to the side `out`
    /// does not point to (either side, where `out` runs along the segment).
    pub(super) fn first_crossing(
        &self,
        samples: &[Vec2],
        near: &[u32],
        (a, b): (Vec2, Vec2),
        out: Vec2,
    ) -> Option<f32> {
        let d = b - a;
        let mut first: Option<f32> = None;
        for &k in near {
            let p = samples[k as usize];
            for &l in self.of(k) {
                let e = samples[l as usize] - p;
                let denominator = d.perp_dot(e);
                if denominator == 0.0 {
                    continue;
                }
                // a + t d = p + u e.
                let t = (p - a).perp_dot(e) / denominator;
                let u = (p - a).perp_dot(d) / denominator;
                if !(0.0..=1.0).contains(&u) || !(0.0..=1.0).contains(&t) {
                    continue;
                }
                // Leaving the side a is on (from its line: the side `out` points to; where `out`
                // runs along it, either side).
                let across = e.perp_dot(d);
                let side = [e.perp_dot(a - p), e.perp_dot(out), -across]
                    .into_iter()
                    .find(|&s| s != 0.0)
                    .unwrap_or(0.0);
                if side * across < 0.0 && first.is_none_or(|f| t < f) {
                    first = Some(t);
                }
            }
        }
        first
    }
}

/// The distance from `p` to the segment a–b (m).
fn distance_to_segment(p: Vec2, a: Vec2, b: Vec2) -> f32 {
    let e = b - a;
    let t = ((p - a).dot(e) / e.length_squared().max(f32::MIN_POSITIVE)).clamp(0.0, 1.0);
    (a + t * e - p).length()
}
