//! A collider's shape in its own frame, as its solver sees it: core segments (a point is a
//! segment of length 0) rounded by a radius R. A circle is a rounded point, a capsule a rounded
//! segment; a rectangle or polygon is a closed counter-clockwise loop of segments, solid inside;
//! a segment or polyline is an open chain of zero thickness, two-sided.
//!
//! Queries: the signed distance to the surface and its outward normal, and the first contact
//! of a disc of radius r moving along a straight path (a ray against the capsules of radius
//! R + r around the core segments: exact, no step size, so no path crosses a segment
//! unseen).

use bevy::prelude::*;

use crate::collider::components::ColliderShape;
use crate::error::{PbdError, finite_vec2, positive};

/// Relative tolerance under which a motion counts as tangential (moving neither into nor out
/// of the surface): a particle slid along a surface stays on it.
const TANGENTIAL: f32 = 1e-5;

/// Relative margin (of the squared reach) within which a path counts as grazing a disc.
const GRAZING: f32 = 1e-3;

/// A collider shape in its local frame.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Geometry {
    /// Core segments (m).
    pub(crate) segments: Vec<[Vec2; 2]>,
    /// Rounding radius R of the core (m).
    pub(crate) rounding: f32,
    /// Whether the segments form a closed counter-clockwise loop (solid inside).
    pub(crate) polygon: bool,
    /// Local bounds of the rounded shape (m).
    pub(crate) aabb: (Vec2, Vec2),
}

/// Where a point is relative to a shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Surface {
    /// Signed distance to the surface (m): negative inside.
    pub(crate) distance: f32,
    /// Outward unit normal of the surface at the closest point.
    pub(crate) normal: Vec2,
}

/// The first contact of a moving disc.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Hit {
    /// Fraction of the path travelled at contact, in [0, 1].
    pub(crate) t: f32,
    /// Outward unit normal at the contact.
    pub(crate) normal: Vec2,
}

impl ColliderShape {
    /// Checks the shape: sizes finite and > 0, vertices finite, a polyline of at least 2
    /// vertices, a polygon of at least 3 with an area, a segment of non-zero length.
    ///
    /// # Errors
    /// [`PbdError::NotPositive`] or [`PbdError::NotFinite`] naming the size or vertex,
    /// [`PbdError::InvalidShape`] for too few vertices or no area.
    pub fn validate(&self) -> Result<(), PbdError> {
        Geometry::new(self).map(|_| ())
    }
}

/// Largest coordinate or size of a collider shape (m): 1000 km. Beyond, squared lengths
/// leave the range of f32 (and the runaway guard's default bounds are ±10 km).
pub const MAX_COLLIDER_EXTENT: f32 = 1e6;

fn extent(name: &'static str, value: f32) -> Result<f32, PbdError> {
    crate::error::at_most(name, value.abs(), MAX_COLLIDER_EXTENT).map(|_| value)
}

fn invalid(reason: &'static str) -> PbdError {
    PbdError::InvalidShape { reason }
}

fn vertices(name: &'static str, vertices: &[Vec2]) -> Result<(), PbdError> {
    for &v in vertices {
        let v = finite_vec2(name, v)?;
        extent(name, v.x)?;
        extent(name, v.y)?;
    }
    Ok(())
}

fn signed_area(loop_: &[Vec2]) -> f32 {
    let n = loop_.len();
    (0..n)
        .map(|i| loop_[i].perp_dot(loop_[(i + 1) % n]))
        .sum::<f32>()
        * 0.5
}

impl Geometry {
    /// The geometry of a shape.
    ///
    /// # Errors
    /// As [`ColliderShape::validate`].
    pub(crate) fn new(shape: &ColliderShape) -> Result<Self, PbdError> {
        let (segments, rounding, polygon) = match shape {
            ColliderShape::Circle(c) => (
                vec![[Vec2::ZERO; 2]],
                positive("circle radius (m)", c.radius)?,
                false,
            ),
            ColliderShape::Capsule(c) => {
                let r = extent(
                    "capsule radius (m)",
                    positive("capsule radius (m)", c.radius)?,
                )?;
                let h = crate::error::non_negative("capsule half length (m)", c.half_length)?;
                let h = extent("capsule half length (m)", h)?;
                (vec![[Vec2::new(0.0, -h), Vec2::new(0.0, h)]], r, false)
            }
            ColliderShape::Rectangle(r) => {
                let hx = extent(
                    "rectangle half width (m)",
                    positive("rectangle half width (m)", r.half_size.x)?,
                )?;
                let hy = extent(
                    "rectangle half height (m)",
                    positive("rectangle half height (m)", r.half_size.y)?,
                )?;
                let corners = [
                    Vec2::new(-hx, -hy),
                    Vec2::new(hx, -hy),
                    Vec2::new(hx, hy),
                    Vec2::new(-hx, hy),
                ];
                (closed(&corners), 0.0, true)
            }
            ColliderShape::Segment(s) => {
                vertices("segment vertex (m)", &s.vertices)?;
                if s.vertices[0] == s.vertices[1] {
                    return Err(invalid("a segment needs two distinct vertices"));
                }
                (vec![s.vertices], 0.0, false)
            }
            ColliderShape::Polyline(p) => {
                vertices("polyline vertex (m)", &p.vertices)?;
                if p.vertices.len() < 2 {
                    return Err(invalid("a polyline needs at least 2 vertices"));
                }
                let segments: Vec<[Vec2; 2]> = p
                    .vertices
                    .windows(2)
                    .filter(|w| w[0] != w[1])
                    .map(|w| [w[0], w[1]])
                    .collect();
                if segments.is_empty() {
                    return Err(invalid("a polyline needs two distinct vertices"));
                }
                (segments, 0.0, false)
            }
            ColliderShape::Polygon(p) => (polygon_loop(&p.vertices)?, 0.0, true),
            ColliderShape::ConvexPolygon(p) => (polygon_loop(p.vertices())?, 0.0, true),
        };
        Ok(Self::from_parts(segments, rounding, polygon))
    }

    /// A geometry of core `segments` (non-empty, finite), rounded by `rounding` (m, ≥ 0);
    /// `polygon`: they form a closed counter-clockwise loop.
    pub(crate) fn from_parts(segments: Vec<[Vec2; 2]>, rounding: f32, polygon: bool) -> Self {
        let mut lo = Vec2::splat(f32::INFINITY);
        let mut hi = Vec2::splat(f32::NEG_INFINITY);
        for s in &segments {
            lo = lo.min(s[0].min(s[1]));
            hi = hi.max(s[0].max(s[1]));
        }
        Self {
            segments,
            rounding,
            polygon,
            aabb: (lo - rounding, hi + rounding),
        }
    }

    /// A closed polygon of `vertices` (either winding), rounded by `rounding` (m).
    ///
    /// # Errors
    /// As [`ColliderShape::validate`] for a polygon.
    #[cfg_attr(not(feature = "avian"), allow(dead_code))]
    pub(crate) fn polygon(vertices: &[Vec2], rounding: f32) -> Result<Self, PbdError> {
        Ok(Self::from_parts(polygon_loop(vertices)?, rounding, true))
    }

    /// Signed distance and outward normal at `p`. `side` says which way is out where the
    /// closest point gives no direction (`p` on an open chain's line, or at a circle's
    /// centre): the side `p` came from.
    pub(crate) fn surface(&self, p: Vec2, side: Vec2) -> Surface {
        let mut best = (f32::INFINITY, 0usize);
        for (k, s) in self.segments.iter().enumerate() {
            let d2 = p.distance_squared(closest_on_segment(p, s));
            if d2 < best.0 {
                best = (d2, k);
            }
        }
        let inside = self.polygon && self.contains(p);
        let [a, b] = self.segments[best.1];
        let ab = b - a;
        let len2 = ab.length_squared();
        let t = if len2 > 0.0 {
            (p - a).dot(ab) / len2
        } else {
            0.0
        };
        // The segment's left normal: outward for a counter-clockwise loop.
        let edge_normal = if len2 > 0.0 {
            -ab.perp() / len2.sqrt()
        } else {
            Vec2::Y
        };
        // With no side to go by (`p` placed exactly on the line and not moving), the side of
        // the chain's vertex centroid: inside a box drawn as an open chain.
        let by_side = |n: Vec2| {
            let towards = if side.dot(n) == 0.0 {
                self.vertex_centroid() - p
            } else {
                side
            };
            if towards.dot(n) < 0.0 { -n } else { n }
        };
        let (d, normal) = if t > 0.0 && t < 1.0 {
            // Beside the segment: the perpendicular distance (a point a rounding error off
            // the line still gets the line's normal, not the direction of that error).
            let dp = (p - a).dot(edge_normal);
            let normal = if self.polygon {
                edge_normal
            } else if dp != 0.0 {
                dp.signum() * edge_normal
            } else {
                by_side(edge_normal)
            };
            (dp.abs(), normal)
        } else {
            let c = if t <= 0.0 { a } else { b };
            let d = p.distance(c);
            let normal = if d > 0.0 {
                let away = (p - c) / d;
                if inside { -away } else { away }
            } else if self.polygon {
                edge_normal
            } else {
                by_side(edge_normal)
            };
            (d, normal)
        };
        let distance = if inside {
            -d - self.rounding
        } else {
            d - self.rounding
        };
        Surface { distance, normal }
    }

    /// The mean of the segments' end points (m, the geometry's frame).
    fn vertex_centroid(&self) -> Vec2 {
        let ends = self.segments.iter().flat_map(|&[a, b]| [a, b]);
        ends.sum::<Vec2>() / (2 * self.segments.len()).max(1) as f32
    }

    /// Whether `p` is inside the closed loop (crossing number; a polygon only).
    fn contains(&self, p: Vec2) -> bool {
        let mut inside = false;
        for [a, b] in &self.segments {
            if (a.y > p.y) != (b.y > p.y) {
                let x = a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x);
                if p.x < x {
                    inside = !inside;
                }
            }
        }
        inside
    }

    /// Whether a disc of radius `r` anywhere in `lo..hi` (local) may touch the shape: a core
    /// segment's bounds come within R + r of the box, or (a polygon) the box's corner `lo` is
    /// inside. `false` means no contact, for certain.
    pub(crate) fn near(&self, lo: Vec2, hi: Vec2, r: f32) -> bool {
        let reach = self.rounding + r;
        let (lo, hi) = (lo - reach, hi + reach);
        self.segments
            .iter()
            .any(|s| s[0].max(s[1]).cmpge(lo).all() && s[0].min(s[1]).cmple(hi).all())
            || (self.polygon && self.contains(lo))
    }

    /// The first contact of a disc of radius `r` moving from `a` to `b` (local frame) with
    /// the shape: where its centre first comes within R + r of the core, moving inward. A disc
    /// that starts within R + r of a segment and moves toward its line hits at t = 0 (so a
    /// particle resting on a zero-thickness segment cannot be pushed through it); one that
    /// starts inside a polygon is not swept (the projection moves it out). One exactly on a
    /// segment's line is on the side of `side` (the way out an earlier contact of the step
    /// chose), or without one on the side it moves from. `None`: no contact on the path.
    pub(crate) fn sweep(&self, a: Vec2, b: Vec2, r: f32, side: Option<Vec2>) -> Option<Hit> {
        if self.polygon && self.contains(a) {
            // Inside (placed there, or a rounding error inside after a rest on the surface):
            // the motion is swept from the nearest surface point, so it cannot pass through
            // a thin plate; a stop there is a push out of the polygon.
            let s = self.surface(a, Vec2::ZERO);
            let on_surface = a + s.normal * (-s.distance - self.rounding);
            let normal = self
                .sweep_outside(on_surface, b, r, side)
                .map_or(s.normal, |hit| hit.normal);
            return Some(Hit { t: 0.0, normal });
        }
        self.sweep_outside(a, b, r, side)
    }

    fn sweep_outside(&self, a: Vec2, b: Vec2, r: f32, side: Option<Vec2>) -> Option<Hit> {
        let d = b - a;
        let reach = self.rounding + r;
        let (lo, hi) = (a.min(b) - reach, a.max(b) + reach);
        let mut best: Option<Hit> = None;
        for s in &self.segments {
            if s[0].max(s[1]).cmplt(lo).any() || s[0].min(s[1]).cmpgt(hi).any() {
                continue;
            }
            if let Some(hit) = sweep_capsule(a, d, s, reach, side)
                && best.is_none_or(|b| hit.t < b.t)
            {
                best = Some(hit);
            }
        }
        best
    }
}

/// A polygon's vertices as a counter-clockwise loop of segments.
fn polygon_loop(v: &[Vec2]) -> Result<Vec<[Vec2; 2]>, PbdError> {
    vertices("polygon vertex (m)", v)?;
    if v.len() < 3 {
        return Err(invalid("a polygon needs at least 3 vertices"));
    }
    let area = signed_area(v);
    if area.is_nan() || area == 0.0 {
        return Err(invalid("a polygon needs an area"));
    }
    let mut v = v.to_vec();
    if area < 0.0 {
        v.reverse();
    }
    Ok(closed(&v))
}

/// The segments of a closed loop (repeated vertices dropped).
fn closed(v: &[Vec2]) -> Vec<[Vec2; 2]> {
    let n = v.len();
    (0..n)
        .map(|i| [v[i], v[(i + 1) % n]])
        .filter(|s| s[0] != s[1])
        .collect()
}

/// The point of segment `s` closest to `p`.
pub(crate) fn closest_on_segment(p: Vec2, s: &[Vec2; 2]) -> Vec2 {
    let [a, b] = *s;
    let ab = b - a;
    let len2 = ab.length_squared();
    if len2 == 0.0 {
        return a;
    }
    a + ab * ((p - a).dot(ab) / len2).clamp(0.0, 1.0)
}

/// The first t ∈ [0, 1] at which `a + t d` comes within `reach` of segment `s` while moving
/// toward it (0 if it starts within and moves inward).
fn sweep_capsule(a: Vec2, d: Vec2, s: &[Vec2; 2], reach: f32, side: Option<Vec2>) -> Option<Hit> {
    let mut best = sweep_disc(a, d, s[0], reach);
    let ab = s[1] - s[0];
    let len = ab.length();
    if len > 0.0 {
        let u = ab / len;
        let n = u.perp();
        let da = (a - s[0]).dot(n);
        let dn = d.dot(n);
        let slack = TANGENTIAL * d.length();
        let hit = if da.abs() <= reach {
            // In the strip around the line: a hit now if it moves toward the line.
            let along = (a - s[0]).dot(u);
            let out = match side.map(|s| s.dot(n)) {
                _ if da != 0.0 => da.signum(),
                Some(s) if s != 0.0 => s.signum(),
                _ => -dn.signum(),
            };
            let toward = out * dn < -slack;
            (toward && (0.0..=len).contains(&along)).then_some(Hit {
                t: 0.0,
                normal: out * n,
            })
        } else if da * dn < 0.0 {
            let t = (da.signum() * reach - da) / dn;
            let along = (a + t * d - s[0]).dot(u);
            ((0.0..=1.0).contains(&t) && (0.0..=len).contains(&along)).then(|| Hit {
                t,
                normal: da.signum() * n,
            })
        } else {
            None
        };
        best = earlier(best, hit);
        best = earlier(best, sweep_disc(a, d, s[1], reach));
    }
    best
}

fn earlier(a: Option<Hit>, b: Option<Hit>) -> Option<Hit> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.t < x.t { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    }
}

/// The first t ∈ [0, 1] at which `a + t d` comes within `reach` of `c` while moving toward it.
fn sweep_disc(a: Vec2, d: Vec2, c: Vec2, reach: f32) -> Option<Hit> {
    let m = a - c;
    let md = m.dot(d);
    let mm = m.length_squared() - reach * reach;
    let slack = TANGENTIAL * d.length() * m.length();
    if mm <= 0.0 {
        // Within reach: a hit now if it moves toward the centre.
        return (md < -slack).then(|| Hit {
            t: 0.0,
            normal: m.try_normalize().unwrap_or(-d.normalize_or_zero()),
        });
    }
    if md >= 0.0 {
        return None;
    }
    let dd = d.length_squared();
    // A path that only grazes the disc (closest approach within a hair of `reach`, as over a
    // polyline's inner vertex while sliding along it) is no contact: the quadratic's root is
    // ill-conditioned there, and its tilted normal would kick the particle off the surface.
    // A penetration that small is left to the projection.
    let cross = m.perp_dot(d);
    if cross * cross >= dd * reach * reach * (1.0 - GRAZING) {
        return None;
    }
    let disc = md * md - dd * mm;
    if disc < 0.0 {
        return None;
    }
    let t = (-md - disc.sqrt()) / dd;
    let t = t.max(0.0);
    let normal = (m + t * d).normalize_or(Vec2::Y);
    // A grazing touch (the motion along the surface there, as over a polyline's inner
    // vertex while sliding along it) is no contact.
    (t <= 1.0 && normal.dot(d) < -TANGENTIAL * d.length()).then_some(Hit { t, normal })
}
