//! avian colliders' shapes (parry) as the contacts' geometries, exactly: a ball is a rounded
//! point, a cuboid a polygon, a capsule a rounded segment, round shapes keep their border
//! radius, a compound or triangle mesh gives one geometry per part, a heightfield or polyline
//! an open chain of segments.

use avian2d::parry::shape::{Shape, TypedShape};
use bevy::prelude::*;

use crate::collider::geometry::Geometry;

/// A half-space becomes a box this deep and wide behind its plane (m): the runaway guard's
/// default bounds (±10 km), beyond which no particle goes.
const HALF_SPACE_EXTENT: f32 = 2.0e4;

/// The geometries of `shape` in its collider's frame, transformed by `pose` (a compound's part
/// pose; identity at the top). `Err` names a shape that has no geometry here (voxels, a
/// custom shape).
pub(crate) fn geometries(
    shape: &dyn Shape,
    pose: Isometry2d,
    out: &mut Vec<Geometry>,
) -> Result<(), &'static str> {
    let at = |p: Vec2| pose.transform_point(p);
    let polygon = |v: &[Vec2], rounding: f32, out: &mut Vec<Geometry>| {
        let v: Vec<Vec2> = v.iter().map(|&p| at(p)).collect();
        if let Ok(g) = Geometry::polygon(&v, rounding) {
            out.push(g);
        }
    };
    let open = |segments: Vec<[Vec2; 2]>, rounding: f32, out: &mut Vec<Geometry>| {
        let segments: Vec<[Vec2; 2]> = segments
            .into_iter()
            .map(|[a, b]| [at(a), at(b)])
            .filter(|s| s[0].is_finite() && s[1].is_finite())
            .collect();
        if !segments.is_empty() {
            out.push(Geometry::from_parts(segments, rounding, false));
        }
    };
    let cuboid = |h: Vec2| [-h, Vec2::new(h.x, -h.y), h, Vec2::new(-h.x, h.y)];
    match shape.as_typed_shape() {
        TypedShape::Ball(b) => open(vec![[Vec2::ZERO; 2]], b.radius, out),
        TypedShape::Cuboid(c) => polygon(&cuboid(c.half_extents), 0.0, out),
        TypedShape::RoundCuboid(c) => {
            polygon(&cuboid(c.inner_shape.half_extents), c.border_radius, out)
        }
        TypedShape::Capsule(c) => open(vec![[c.segment.a, c.segment.b]], c.radius, out),
        TypedShape::Segment(s) => open(vec![[s.a, s.b]], 0.0, out),
        TypedShape::Triangle(t) => polygon(&[t.a, t.b, t.c], 0.0, out),
        TypedShape::RoundTriangle(t) => {
            let t2 = &t.inner_shape;
            polygon(&[t2.a, t2.b, t2.c], t.border_radius, out)
        }
        TypedShape::ConvexPolygon(p) => polygon(p.points(), 0.0, out),
        TypedShape::RoundConvexPolygon(p) => polygon(p.inner_shape.points(), p.border_radius, out),
        TypedShape::Polyline(p) => {
            let v = p.vertices();
            let segments = p
                .indices()
                .iter()
                .map(|&[a, b]| [v[a as usize], v[b as usize]])
                .collect();
            open(segments, 0.0, out);
        }
        TypedShape::HeightField(h) => open(h.segments().map(|s| [s.a, s.b]).collect(), 0.0, out),
        TypedShape::TriMesh(m) => {
            let v = m.vertices();
            for &[a, b, c] in m.indices() {
                polygon(&[v[a as usize], v[b as usize], v[c as usize]], 0.0, out);
            }
        }
        TypedShape::HalfSpace(h) => {
            let n = h.normal;
            let t = n.perp() * HALF_SPACE_EXTENT;
            let back = -n * HALF_SPACE_EXTENT;
            polygon(&[-t, t, t + back, -t + back], 0.0, out);
        }
        TypedShape::Compound(c) => {
            for (part_pose, part) in c.shapes() {
                let x = part_pose.transform_point(Vec2::X) - part_pose.translation;
                let part_pose = Isometry2d::new(
                    part_pose.translation,
                    Rot2::from_sin_cos(x.y, x.x).normalize(),
                );
                geometries(part.0.as_ref(), pose * part_pose, out)?;
            }
        }
        TypedShape::Voxels(_) => return Err("voxels"),
        TypedShape::Custom(_) => return Err("a custom shape"),
    }
    Ok(())
}
