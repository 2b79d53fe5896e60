//! A collider's outline and inset shape: where its boundary samples go
//! ([`samples`](super::samples)).

use bevy::prelude::*;

use crate::collider::geometry::Geometry;

impl Geometry {
    /// Points along the surface at most `spacing` apart (m, > 0): every vertex, and evenly
    /// spaced points between; around a rounded core, its outline at distance R (a circle's
    /// circumference, a capsule's sides and caps). Where boundary samples of a collider go.
    pub(crate) fn outline(&self, spacing: f32) -> Vec<Vec2> {
        self.outline_within(spacing, None)
    }

    /// The length of [`Geometry::outline`]'s path (m): the perimeter, both sides of a rounded
    /// open chain, one side of a bare one.
    pub(crate) fn outline_length(&self) -> f32 {
        let core: f32 = self.segments.iter().map(|s| s[0].distance(s[1])).sum();
        let arcs = core::f32::consts::TAU * self.rounding;
        match (self.polygon, self.rounding > 0.0) {
            (true, _) => core + arcs,
            (false, true) => 2.0 * core + arcs,
            (false, false) => core,
        }
    }

    /// [`Geometry::outline`]'s points within `bounds` (local min and max corners, m), the same
    /// points as the whole outline has there; a bare shape's segments are clipped to the bounds
    /// first, so a huge shape (a half-space's box, a long terrain) costs only what is kept.
    pub(crate) fn outline_within(&self, spacing: f32, bounds: Option<(Vec2, Vec2)>) -> Vec<Vec2> {
        let inside =
            |p: &Vec2| bounds.is_none_or(|(lo, hi)| p.cmpge(lo).all() && p.cmple(hi).all());
        if self.rounding > 0.0 {
            let mut all = self.outline_all(spacing);
            all.retain(inside);
            return all;
        }
        let pieces = |length: f32| ((length / spacing * (1.0 - 1e-5)).ceil() as usize).max(1);
        let mut out = Vec::new();
        for s in &self.segments {
            let n = pieces(s[0].distance(s[1]));
            let (t0, t1) = bounds
                .map_or(Some((0.0, 1.0)), |b| clip(s, b))
                .unwrap_or((1.0, 0.0));
            let first = (t0 * n as f32).ceil().max(0.0) as usize;
            let last = ((t1 * n as f32).floor() as usize).min(n - 1);
            out.extend(
                (first..=last)
                    .filter(|_| first <= last && t0 <= t1)
                    .map(|k| s[0].lerp(s[1], k as f32 / n as f32))
                    .filter(inside),
            );
        }
        if !self.polygon
            && let Some(last) = self.segments.last()
            && inside(&last[1])
        {
            out.push(last[1]);
        }
        out
    }

    /// The whole outline (see [`Geometry::outline`]).
    fn outline_all(&self, spacing: f32) -> Vec<Vec2> {
        let mut out = Vec::new();
        // Pieces of at most `spacing` (a length a rounding error above a multiple of it is
        // that multiple).
        let pieces = |length: f32| ((length / spacing * (1.0 - 1e-5)).ceil() as usize).max(1);
        if self.rounding > 0.0 && self.polygon {
            // Each edge pushed out by R, and an arc around each vertex between them.
            let m = self.segments.len();
            let offset = |s: [Vec2; 2]| -(s[1] - s[0]).normalize_or_zero().perp() * self.rounding;
            for k in 0..m {
                let [a, b] = self.segments[k];
                let here = offset(self.segments[k]);
                let n = pieces(a.distance(b));
                out.extend((0..n).map(|j| (a + here).lerp(b + here, j as f32 / n as f32)));
                let next = offset(self.segments[(k + 1) % m]);
                let angle = here.angle_to(next);
                let arcs = pieces(angle.abs() * self.rounding);
                out.extend(
                    (0..arcs).map(|j| b + Rot2::radians(angle * j as f32 / arcs as f32) * here),
                );
            }
            return out;
        }
        if self.rounding > 0.0 {
            // One core segment (a point for a circle): two sides and two half circles.
            let [a, b] = self.segments[0];
            let along = (b - a).try_normalize().unwrap_or(Vec2::X);
            let side = along.perp() * self.rounding;
            let length = a.distance(b);
            let arc = core::f32::consts::PI * self.rounding;
            for (from, to, centre) in [(a - side, b - side, b), (b + side, a + side, a)] {
                if length > 0.0 {
                    let n = pieces(length);
                    out.extend((0..n).map(|k| from.lerp(to, k as f32 / n as f32)));
                }
                // The half circle around `centre` from `to` on.
                let n = pieces(arc);
                let start = to - centre;
                out.extend((0..n).map(|k| {
                    let angle = core::f32::consts::PI * k as f32 / n as f32;
                    centre + Rot2::radians(angle) * start
                }));
            }
            return out;
        }
        for s in &self.segments {
            let n = pieces(s[0].distance(s[1]));
            out.extend((0..n).map(|k| s[0].lerp(s[1], k as f32 / n as f32)));
        }
        if !self.polygon
            && let Some(last) = self.segments.last()
        {
            out.push(last[1]);
        }
        out
    }
}

impl Geometry {
    /// The shape whose surface lies `depth` (m, ≥ 0) inside this one's: a rounding reduced by
    /// `depth`, or a polygon's core moved in along its edges' normals (mitred corners). `None`
    /// for a shape with no inside there: an open chain without rounding, or a polygon thinner
    /// than 2 `depth` (an inset vertex would not lie `depth` inside every edge near it).
    pub(crate) fn inset(&self, depth: f32) -> Option<Self> {
        if self.rounding >= depth {
            let mut inner = self.clone();
            inner.rounding -= depth;
            inner.aabb = (self.aabb.0 + depth, self.aabb.1 - depth);
            return Some(inner);
        }
        if !self.polygon {
            return None;
        }
        let d = depth - self.rounding;
        let m = self.segments.len();
        let inward = |s: [Vec2; 2]| (s[1] - s[0]).normalize_or_zero().perp();
        let mut vertices = Vec::with_capacity(m);
        for k in 0..m {
            let (n1, n2) = (inward(self.segments[k]), inward(self.segments[(k + 1) % m]));
            let miter = 1.0 + n1.dot(n2);
            if miter < 0.1 {
                return None;
            }
            vertices.push(self.segments[k][1] + d * (n1 + n2) / miter);
        }
        // Each inset vertex lies at least d inside the core (within 1 %; a reflex corner's
        // mitre lies deeper, up to d/sin(θ/2) from its vertex), and each edge keeps its
        // direction (a thin part of the polygon would fold over).
        let core = Self::from_parts(self.segments.clone(), 0.0, true);
        let deep = |p: Vec2| core.surface(p, Vec2::ZERO).distance <= -0.99 * d;
        let kept = (0..m).all(|k| {
            let (a, b) = (vertices[(k + m - 1) % m], vertices[k]);
            (b - a).dot(self.segments[k][1] - self.segments[k][0]) > 0.0
        });
        if !(kept && vertices.iter().all(|&p| deep(p))) {
            return None;
        }
        let segments = (0..m)
            .map(|k| [vertices[(k + m - 1) % m], vertices[k]])
            .collect();
        let inner = Self::from_parts(segments, 0.0, true);
        // Along the edges too: inset edges of a neck thinner than 2d cross each other, with
        // only sound vertices (checked at d spacing, up to 4096 points).
        let step = (inner.outline_length() / 4096.0).max(d);
        inner.outline(step).into_iter().all(deep).then_some(inner)
    }
}

/// The parameter interval [t0, t1] ⊂ [0, 1] of segment `s` inside the box `(lo, hi)`
/// (Liang–Barsky), if any.
fn clip(s: &[Vec2; 2], (lo, hi): (Vec2, Vec2)) -> Option<(f32, f32)> {
    let (a, d) = (s[0], s[1] - s[0]);
    let (mut t0, mut t1) = (0.0f32, 1.0f32);
    for axis in 0..2 {
        let (p, q_lo, q_hi) = (d[axis], lo[axis] - a[axis], hi[axis] - a[axis]);
        if p == 0.0 {
            if q_lo > 0.0 || q_hi < 0.0 {
                return None;
            }
            continue;
        }
        let (u, v) = (q_lo / p, q_hi / p);
        t0 = t0.max(u.min(v));
        t1 = t1.min(u.max(v));
    }
    (t0 <= t1).then_some((t0, t1))
}
