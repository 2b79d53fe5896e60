//! Shape queries against closed forms: distances and normals of each primitive, sweeps that
//! find the first contact and never let a path cross a segment.

use bevy::prelude::*;

use super::components::ColliderShape;
use super::geometry::Geometry;

fn geometry(shape: impl Into<ColliderShape>) -> Geometry {
    Geometry::new(&shape.into()).unwrap()
}

#[test]
fn distances_and_normals_match_the_closed_forms() {
    let circle = geometry(Circle::new(0.5));
    let s = circle.surface(Vec2::new(0.0, 2.0), Vec2::ZERO);
    assert!((s.distance - 1.5).abs() < 1e-6 && s.normal.abs_diff_eq(Vec2::Y, 1e-6));
    let s = circle.surface(Vec2::new(0.3, 0.0), Vec2::ZERO);
    assert!((s.distance + 0.2).abs() < 1e-6 && s.normal.abs_diff_eq(Vec2::X, 1e-6));

    let capsule = geometry(Capsule2d::new(0.25, 2.0));
    let s = capsule.surface(Vec2::new(1.0, 0.5), Vec2::ZERO);
    assert!((s.distance - 0.75).abs() < 1e-6 && s.normal.abs_diff_eq(Vec2::X, 1e-6));
    let s = capsule.surface(Vec2::new(0.0, 2.0), Vec2::ZERO);
    assert!((s.distance - 0.75).abs() < 1e-6 && s.normal.abs_diff_eq(Vec2::Y, 1e-6));

    let rect = geometry(Rectangle::new(2.0, 1.0));
    let s = rect.surface(Vec2::new(0.2, 0.4), Vec2::ZERO);
    assert!(
        (s.distance + 0.1).abs() < 1e-6,
        "inside, 0.1 below the top: {s:?}"
    );
    assert!(s.normal.abs_diff_eq(Vec2::Y, 1e-6));
    let s = rect.surface(Vec2::new(2.0, 1.5), Vec2::ZERO);
    let corner = Vec2::new(1.0, 0.5);
    assert!((s.distance - (Vec2::new(2.0, 1.5) - corner).length()).abs() < 1e-6);

    // A concave L, given clockwise: solid in both arms, not in the notch.
    let l = geometry(Polygon::new([
        Vec2::new(0.0, 0.0),
        Vec2::new(0.0, 2.0),
        Vec2::new(1.0, 2.0),
        Vec2::new(1.0, 1.0),
        Vec2::new(2.0, 1.0),
        Vec2::new(2.0, 0.0),
    ]));
    assert!(l.surface(Vec2::new(0.5, 1.5), Vec2::ZERO).distance < 0.0);
    assert!(l.surface(Vec2::new(1.5, 0.5), Vec2::ZERO).distance < 0.0);
    let notch = l.surface(Vec2::new(1.5, 1.5), Vec2::ZERO);
    assert!((notch.distance - 0.5).abs() < 1e-6, "{notch:?}");

    // An open segment is two-sided; on its line, the side given decides.
    let seg = geometry(Segment2d::new(Vec2::new(-1.0, 0.0), Vec2::new(1.0, 0.0)));
    let below = seg.surface(Vec2::new(0.0, -0.3), Vec2::ZERO);
    assert!((below.distance - 0.3).abs() < 1e-6 && below.normal.abs_diff_eq(-Vec2::Y, 1e-6));
    let on = seg.surface(Vec2::ZERO, Vec2::new(0.1, -1.0));
    assert!(on.distance == 0.0 && on.normal.abs_diff_eq(-Vec2::Y, 1e-6));

    // With no side given, a point on an open chain's line goes to the chain's inside: a box
    // drawn as an open U, either way round, sends a point on its floor up.
    let u = [
        Vec2::new(-1.0, 1.0),
        Vec2::new(-1.0, 0.0),
        Vec2::new(1.0, 0.0),
        Vec2::new(1.0, 1.0),
    ];
    for points in [u, [u[3], u[2], u[1], u[0]]] {
        let on = geometry(Polyline2d::new(points)).surface(Vec2::new(0.3, 0.0), Vec2::ZERO);
        assert!(
            on.distance == 0.0 && on.normal.abs_diff_eq(Vec2::Y, 1e-6),
            "{on:?}"
        );
    }
}

#[test]
fn a_sweep_finds_the_first_contact_of_the_inflated_shape() {
    let r = 0.1;
    let circle = geometry(Circle::new(1.0));
    let hit = circle
        .sweep(Vec2::new(0.0, 3.0), Vec2::new(0.0, -3.0), r, None)
        .unwrap();
    assert!((hit.t - (3.0 - 1.1) / 6.0).abs() < 1e-6, "{hit:?}");
    assert!(hit.normal.abs_diff_eq(Vec2::Y, 1e-6));
    assert!(
        circle
            .sweep(Vec2::new(2.0, 3.0), Vec2::new(2.0, -3.0), r, None)
            .is_none()
    );

    let rect = geometry(Rectangle::new(2.0, 2.0));
    let hit = rect
        .sweep(Vec2::new(-5.0, 0.5), Vec2::new(5.0, 0.5), r, None)
        .unwrap();
    assert!((hit.t - (5.0 - 1.1) / 10.0).abs() < 1e-6, "{hit:?}");
    assert!(hit.normal.abs_diff_eq(-Vec2::X, 1e-6));
}

#[test]
fn no_path_crosses_a_zero_thickness_segment() {
    let seg = geometry(Segment2d::new(Vec2::new(-1.0, 0.0), Vec2::new(1.0, 0.0)));
    let mut seed = 7u64;
    let mut random = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 40) as f32 / (1u64 << 24) as f32
    };
    for _ in 0..10_000 {
        // From above (up to on the line) to below, any length, radius 0 to 0.05.
        let a = Vec2::new(random() * 2.4 - 1.2, random() * random() * 0.5);
        let b = Vec2::new(random() * 4.0 - 2.0, -random() * 100.0);
        let r = [0.0, 1e-4, 0.05][(random() * 3.0) as usize % 3];
        let crosses_core = {
            let t = a.y / (a.y - b.y);
            let x = a.x + t * (b.x - a.x);
            a.y > 0.0 && (-1.0..=1.0).contains(&x)
        };
        let hit = seg.sweep(a, b, r, None);
        if crosses_core {
            let hit = hit.unwrap_or_else(|| panic!("{a} → {b} (r {r}) crossed unseen"));
            let at = a + (b - a) * hit.t;
            assert!(at.y >= -1e-6, "{a} → {b}: stopped below the line at {at}");
            assert!(hit.normal.y > 0.0, "pushed to the far side: {hit:?}");
        }
    }
}

#[test]
fn a_disc_resting_on_a_segment_is_stopped_before_its_line() {
    let seg = geometry(Segment2d::new(Vec2::new(-1.0, 0.0), Vec2::new(1.0, 0.0)));
    // Within r of the line, moving down by more than r: stopped now.
    let hit = seg
        .sweep(Vec2::new(0.0, 0.05), Vec2::new(0.3, -0.5), 0.1, None)
        .unwrap();
    assert_eq!(hit.t, 0.0);
    assert!(hit.normal.abs_diff_eq(Vec2::Y, 1e-6));
    // Exactly on the line, moving down: pushed back up (the side it came from).
    let hit = seg
        .sweep(Vec2::ZERO, Vec2::new(0.0, -0.5), 0.1, None)
        .unwrap();
    assert!(hit.normal.abs_diff_eq(Vec2::Y, 1e-6));
    // On the line after a contact chose the upper side: leaving upward is free, downward not.
    let up = Some(Vec2::Y);
    assert!(
        seg.sweep(Vec2::ZERO, Vec2::new(0.0, 0.5), 0.1, up)
            .is_none()
    );
    let hit = seg
        .sweep(Vec2::ZERO, Vec2::new(0.0, -0.5), 0.1, up)
        .unwrap();
    assert!(hit.t == 0.0 && hit.normal.abs_diff_eq(Vec2::Y, 1e-6));
    // Moving along it or away from it: no contact.
    assert!(
        seg.sweep(Vec2::new(0.0, 0.05), Vec2::new(0.5, 0.05), 0.1, None)
            .is_none()
    );
    assert!(
        seg.sweep(Vec2::new(0.0, 0.05), Vec2::new(0.0, 0.5), 0.1, None)
            .is_none()
    );
}

#[test]
fn bad_shapes_are_refused_with_a_reason() {
    for shape in [
        ColliderShape::from(Circle::new(0.0)),
        ColliderShape::from(Circle::new(f32::NAN)),
        ColliderShape::from(Rectangle::new(1.0, -1.0)),
        ColliderShape::from(Capsule2d::new(0.0, 1.0)),
        ColliderShape::from(Segment2d::new(Vec2::ONE, Vec2::ONE)),
        ColliderShape::from(Polyline2d::new([Vec2::ZERO])),
        ColliderShape::from(Polygon::new([Vec2::ZERO, Vec2::X, Vec2::new(2.0, 0.0)])),
        ColliderShape::from(Polygon::new([
            Vec2::ZERO,
            Vec2::X,
            Vec2::new(f32::INFINITY, 1.0),
        ])),
    ] {
        let e = shape.validate().unwrap_err();
        assert!(!e.to_string().is_empty(), "{shape:?}");
    }
}

#[test]
fn an_inset_surface_lies_its_depth_inside_every_solid_shape_and_thin_ones_have_none() {
    let d = 0.1;
    // Every point of the inset outline is d inside the shape (signed distance −d).
    let solid = [
        geometry(Rectangle::new(1.0, 0.6)),
        geometry(Circle::new(0.5)),
        geometry(Capsule2d::new(0.3, 1.0)),
        geometry(Polygon::new((0..5).map(|k| {
            Vec2::from_angle(k as f32 * core::f32::consts::TAU / 5.0) * 0.5
        }))),
        // A concave L: its reflex corner moves out of the solid's material, into the notch.
        geometry(Polygon::new([
            Vec2::ZERO,
            Vec2::new(1.0, 0.0),
            Vec2::new(1.0, 0.4),
            Vec2::new(0.4, 0.4),
            Vec2::new(0.4, 1.0),
            Vec2::new(0.0, 1.0),
        ])),
    ];
    // (Near the L's reflex corner, deeper: the mitre, up to d√2 from the corner.)
    for (k, shape) in solid.iter().enumerate() {
        let inner = shape
            .inset(d)
            .unwrap_or_else(|| panic!("{shape:?} has no inset"));
        for p in inner.outline(0.02) {
            let depth = -shape.surface(p, Vec2::ZERO).distance;
            let near_reflex = k == 4 && p.distance(Vec2::splat(0.4)) < 2.0 * d;
            let exact = (depth - d).abs() < 1e-4;
            let deeper = depth > d - 1e-4 && depth < d * 2f32.sqrt() + 1e-4;
            assert!(
                exact || near_reflex && deeper,
                "{shape:?}: {p} is {depth} deep"
            );
        }
    }
    // A rounded rectangle thinner than 2d but rounded by more than d keeps its core.
    let capsule = geometry(Capsule2d::new(0.15, 1.0));
    assert!((capsule.inset(d).unwrap().rounding - 0.05).abs() < 1e-6);
    // No inside: a segment, a polyline; thinner than 2d: a plate 0.1 m thick.
    assert!(
        geometry(Segment2d::new(Vec2::ZERO, Vec2::X))
            .inset(d)
            .is_none()
    );
    let terrain = Polyline2d::new([Vec2::ZERO, Vec2::X, Vec2::new(2.0, 0.5)]);
    assert!(geometry(terrain).inset(d).is_none());
    assert!(geometry(Rectangle::new(2.0, 0.1)).inset(d).is_none());
}

#[test]
fn an_outline_within_bounds_is_the_whole_outline_cut_to_them() {
    let bounds = (Vec2::new(-0.33, -1.0), Vec2::new(0.71, 0.2));
    for shape in [
        geometry(Rectangle::new(3.0, 0.4)),
        geometry(Polyline2d::new([
            Vec2::new(-2.0, 0.1),
            Vec2::new(0.5, -0.3),
            Vec2::new(2.0, 0.0),
        ])),
        geometry(Capsule2d::new(0.1, 2.0)),
    ] {
        let inside = |p: &Vec2| p.cmpge(bounds.0).all() && p.cmple(bounds.1).all();
        let mut whole: Vec<Vec2> = shape.outline(0.05).into_iter().filter(inside).collect();
        let mut cut = shape.outline_within(0.05, Some(bounds));
        let key = |p: &Vec2| (p.x.to_bits(), p.y.to_bits());
        whole.sort_by_key(key);
        cut.sort_by_key(key);
        assert!(!cut.is_empty());
        assert_eq!(whole, cut, "{shape:?}");
    }
}

#[test]
fn a_polygon_with_a_neck_thinner_than_twice_the_depth_has_no_inset() {
    // Two 1 m squares joined by a neck 0.1 m wide: inset by 0.1 its edges would cross.
    let dumbbell = geometry(Polygon::new([
        Vec2::new(0.0, 0.0),
        Vec2::new(1.0, 0.0),
        Vec2::new(1.0, 0.45),
        Vec2::new(1.5, 0.45),
        Vec2::new(1.5, 0.0),
        Vec2::new(2.5, 0.0),
        Vec2::new(2.5, 1.0),
        Vec2::new(1.5, 1.0),
        Vec2::new(1.5, 0.55),
        Vec2::new(1.0, 0.55),
        Vec2::new(1.0, 1.0),
        Vec2::new(0.0, 1.0),
    ]));
    let d = 0.1;
    if let Some(inner) = dumbbell.inset(d) {
        for p in inner.outline(0.01) {
            let depth = -dumbbell.surface(p, Vec2::ZERO).distance;
            assert!(depth > 0.99 * d, "{p} is {depth} deep");
        }
    }
    assert!(
        dumbbell.inset(0.04).is_some(),
        "a neck 0.1 wide has room for 0.04"
    );
}
