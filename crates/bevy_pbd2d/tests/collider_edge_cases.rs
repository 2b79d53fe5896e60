//! Edge cases of the particle colliders, from a review that set out to break them (issue 18,
//! item 1): colliders that meet (a box crushing a particle onto a segment, a wedge, a box of
//! four walls), thin plates and point particles, sliding over many vertices, teleports,
//! parents that move, particles spawned inside, spinning paddles. The extremes (grazing at
//! 1 km/s, degenerate polylines, non-finite and huge values, far and tiny colliders, dragged ropes, elastic bounces) are in
//! `collider_extremes.rs`.

#[path = "common/mod.rs"]
mod common;

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;

use common::*;

const DT: f32 = 1.0 / 60.0;

fn seg_dist(p: Vec2, a: Vec2, b: Vec2) -> f32 {
    let ab = b - a;
    let t = ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0);
    p.distance(a + ab * t)
}

/// Signed distance to an axis-aligned box of half size `h` centred at the origin (negative
/// inside).
fn box_sdf(p: Vec2, h: Vec2) -> f32 {
    let q = p.abs() - h;
    q.max(Vec2::ZERO).length() + q.x.max(q.y).min(0.0)
}

/// World point into the local frame of a transform (translation + z rotation).
fn to_local(t: &Transform, p: Vec2) -> Vec2 {
    let inv = t.rotation.inverse();
    (inv * (p.extend(0.0) - t.translation)).truncate()
}

fn poly_contains(v: &[Vec2], p: Vec2) -> bool {
    let mut inside = false;
    let n = v.len();
    for i in 0..n {
        let (a, b) = (v[i], v[(i + 1) % n]);
        if (a.y > p.y) != (b.y > p.y) {
            let x = a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x);
            if p.x < x {
                inside = !inside;
            }
        }
    }
    inside
}

fn poly_sdf(v: &[Vec2], p: Vec2) -> f32 {
    let n = v.len();
    let d = (0..n)
        .map(|i| seg_dist(p, v[i], v[(i + 1) % n]))
        .fold(f32::INFINITY, f32::min);
    if poly_contains(v, p) { -d } else { d }
}

// ---------------------------------------------------------------------------------------
// 1. Point particles (r = 0) resting on a thin plate.
// ---------------------------------------------------------------------------------------

#[test]
fn point_particles_resting_on_a_thin_plate_stay_on_it() {
    for (angle_deg, thickness) in [
        (0.0f32, 0.001f32),
        (10.0, 0.001),
        (10.0, 0.002),
        (33.0, 0.001),
    ] {
        let mut app = app(DT);
        let at = Transform::from_xyz(0.3, -0.2, 0.0)
            .with_rotation(Quat::from_rotation_z(angle_deg.to_radians()));
        collider(
            &mut app,
            Rectangle::new(4.0, thickness),
            at,
            ColliderMaterial::new(2.0, 2.0, 0.0).unwrap(),
        );
        let half = Vec2::new(2.0, thickness / 2.0);
        let mut ps = Vec::new();
        for k in 0..40 {
            let local = Vec2::new(-1.5 + 0.075 * k as f32, half.y + 0.05);
            let world = (at.rotation * local.extend(0.0) + at.translation).truncate();
            ps.push(ball(&mut app, world, Vec2::ZERO, 0.0));
        }
        let mut fell = 0;
        let mut worst: f32 = 0.0;
        for _ in 0..300 {
            run_steps(&mut app, 1);
        }
        for &p in &ps {
            let l = to_local(&at, position(&app, p));
            worst = worst.min(box_sdf(l, half));
            if l.y < -half.y {
                fell += 1;
            }
        }
        println!(
            "thin plate {angle_deg} deg, {thickness} m: {fell}/40 point particles below it, deepest sdf {worst}"
        );
        assert_eq!(
            fell, 0,
            "{angle_deg} deg, thickness {thickness}: {fell} fell through"
        );
    }
}

// ---------------------------------------------------------------------------------------
// 2. Squeezed between a moving box and a zero-thickness segment.
// ---------------------------------------------------------------------------------------

fn squeeze(segment_first: bool, speed: f32) -> (f32, f32) {
    let mut app = app(DT);
    let seg = || {
        (
            ParticleCollider::from(Segment2d::new(Vec2::new(-5.0, 0.0), Vec2::new(5.0, 0.0))),
            Transform::default(),
            ColliderMaterial::default(),
        )
    };
    let bx = |y: f32| {
        (
            ParticleCollider::from(Rectangle::new(1.0, 0.2)),
            Transform::from_xyz(0.0, y, 0.0),
            ColliderMaterial::default(),
        )
    };
    let r = 0.05;
    let mut box_y = 0.5;
    let b;
    if segment_first {
        spawn(&mut app, |c| {
            c.spawn(seg());
        });
        b = spawn(&mut app, |c| c.spawn(bx(box_y)).id());
    } else {
        b = spawn(&mut app, |c| c.spawn(bx(box_y)).id());
        spawn(&mut app, |c| {
            c.spawn(seg());
        });
    }
    let p = ball(&mut app, Vec2::new(0.1, r), Vec2::ZERO, r);
    run_steps(&mut app, 10);
    let mut lowest = f32::INFINITY;
    let mut max_speed: f32 = 0.0;
    for _ in 0..120 {
        box_y -= speed * DT;
        app.world_mut()
            .get_mut::<Transform>(b)
            .unwrap()
            .translation
            .y = box_y;
        run_steps(&mut app, 1);
        lowest = lowest.min(position(&app, p).y);
        max_speed = max_speed.max(velocity(&app, p).length());
    }
    (lowest, max_speed)
}

#[test]
fn a_particle_squeezed_by_a_box_against_a_segment_does_not_cross_it() {
    let mut bad = Vec::new();
    for segment_first in [true, false] {
        for speed in [0.5f32, 3.0] {
            let (lowest, vmax) = squeeze(segment_first, speed);
            println!(
                "squeeze segment_first={segment_first} box speed {speed}: lowest y {lowest}, max speed {vmax}"
            );
            // The particle is held still between the two (or crosses): its velocity should stay
            // near the box's.
            if lowest < 0.0 || vmax > 2.0 * speed + 0.5 {
                bad.push((segment_first, speed, lowest, vmax));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "(segment spawned first, box speed, lowest y, max speed): {bad:?}"
    );
}

// ---------------------------------------------------------------------------------------
// 3. Concave polygon: a narrow notch.
// ---------------------------------------------------------------------------------------

#[test]
fn particles_in_the_notch_of_a_concave_polygon_stay_out_of_it() {
    for half_width in [0.2f32, 0.5] {
        let v = vec![
            Vec2::new(-1.0, -1.0),
            Vec2::new(1.0, -1.0),
            Vec2::new(1.0, 1.0),
            Vec2::new(half_width, 1.0),
            Vec2::new(0.0, -0.5),
            Vec2::new(-half_width, 1.0),
            Vec2::new(-1.0, 1.0),
        ];
        let mut app = app(DT);
        collider(
            &mut app,
            Polygon::new(v.clone()),
            Transform::default(),
            ColliderMaterial::frictionless(0.0).unwrap(),
        );
        let r = 0.03;
        let mut ps = Vec::new();
        for k in 0..30 {
            let x = -0.1 + 0.2 * (k % 5) as f32 / 4.0 * (half_width / 0.2);
            let y = 1.1 + 0.07 * (k / 5) as f32;
            ps.push(ball(
                &mut app,
                Vec2::new(x * 0.5, y),
                Vec2::new(0.0, -3.0),
                r,
            ));
        }
        let mut worst = f32::INFINITY;
        let mut vmax: f32 = 0.0;
        for _ in 0..240 {
            run_steps(&mut app, 1);
            for &p in &ps {
                worst = worst.min(poly_sdf(&v, position(&app, p)));
                vmax = vmax.max(velocity(&app, p).length());
            }
        }
        println!(
            "notch half width {half_width}: min distance centre-surface {worst} (r = {r}, penetration {}% r), max speed {vmax}",
            (r - worst) / r * 100.0
        );
        assert!(worst > 0.99 * r, "penetration {} r", (r - worst) / r);
    }
}

// ---------------------------------------------------------------------------------------
// 4. A wedge of two overlapping rectangles.
// ---------------------------------------------------------------------------------------

#[test]
fn particles_in_a_wedge_of_two_rectangles_stay_out_of_both() {
    let mut bad = Vec::new();
    for half_angle_deg in [5.0f32, 15.0, 45.0] {
        let mut app = app(DT);
        let a = half_angle_deg.to_radians();
        // Two 2 m × 0.1 m plates leaning on each other, their inner faces meeting at the origin
        // with an opening 2a.
        let mut plates = Vec::new();
        for s in [-1.0f32, 1.0] {
            // Inner face direction (upward) of plate s.
            let dir = Vec2::new(s * a.sin(), a.cos());
            let outward = Vec2::new(s * a.cos(), -a.sin()); // into the plate
            let centre = dir * 1.0 + outward * 0.05;
            let t = Transform::from_translation(centre.extend(0.0)).with_rotation(
                Quat::from_rotation_z(dir.to_angle() - core::f32::consts::FRAC_PI_2),
            );
            collider(
                &mut app,
                Rectangle::new(0.1, 2.0),
                t,
                ColliderMaterial::frictionless(0.0).unwrap(),
            );
            plates.push(t);
        }
        let r = 0.02;
        let mut ps = Vec::new();
        for k in 0..20 {
            ps.push(ball(
                &mut app,
                Vec2::new(0.0, 0.5 + 0.05 * k as f32),
                Vec2::ZERO,
                r,
            ));
        }
        let mut worst = f32::INFINITY;
        for _ in 0..300 {
            run_steps(&mut app, 1);
            for &p in &ps {
                let x = position(&app, p);
                for t in &plates {
                    worst = worst.min(box_sdf(to_local(t, x), Vec2::new(0.05, 1.0)));
                }
            }
        }
        println!(
            "wedge half angle {half_angle_deg}: min distance {worst} (r = {r}): penetration {}% r",
            (r - worst) / r * 100.0
        );
        if worst < 0.99 * r {
            bad.push((half_angle_deg, (r - worst) / r));
        }
    }
    assert!(
        bad.is_empty(),
        "penetration (half angle, depth / r): {bad:?}"
    );
}

// ---------------------------------------------------------------------------------------
// 5. A spinning paddle.
// ---------------------------------------------------------------------------------------

#[test]
fn a_spinning_paddle_neither_passes_through_nor_launches_particles() {
    let mut bad = Vec::new();
    for omega in [5.0f32, 20.0, 60.0] {
        let mut app = app(DT);
        app.world_mut().resource_mut::<Gravity>().0 = Vec2::ZERO;
        let paddle = collider(
            &mut app,
            Rectangle::new(2.0, 0.05),
            Transform::default(),
            ColliderMaterial::frictionless(0.0).unwrap(),
        );
        let r = 0.02;
        let mut ps = Vec::new();
        for k in 0..24 {
            let ang = 0.3 + k as f32 * core::f32::consts::TAU / 24.0;
            let rad = 0.2 + 0.75 * (k % 6) as f32 / 5.0;
            ps.push(ball(&mut app, Vec2::from_angle(ang) * rad, Vec2::ZERO, r));
        }
        let half = Vec2::new(1.0, 0.025);
        // One step at rest first, so that the paddle's first pose is known (a collider's first
        // step has no motion).
        run_steps(&mut app, 1);
        let mut angle = 0.0f32;
        let mut worst = f32::INFINITY;
        let mut vmax: f32 = 0.0;
        let mut tunnelled = 0;
        let mut prev: Vec<Vec2> = ps.iter().map(|&p| position(&app, p)).collect();
        for _ in 0..60 {
            let t0 = Transform::from_rotation(Quat::from_rotation_z(angle));
            angle += omega * DT;
            let t1 = Transform::from_rotation(Quat::from_rotation_z(angle));
            app.world_mut()
                .get_mut::<Transform>(paddle)
                .unwrap()
                .rotation = t1.rotation;
            run_steps(&mut app, 1);
            for (k, &p) in ps.iter().enumerate() {
                let x = position(&app, p);
                let l1 = to_local(&t1, x);
                let l0 = to_local(&t0, prev[k]);
                worst = worst.min(box_sdf(l1, half));
                vmax = vmax.max(velocity(&app, p).length());
                if l0.y.signum() != l1.y.signum() && l0.x.abs() < 0.95 && l1.x.abs() < 0.95 {
                    tunnelled += 1;
                }
                prev[k] = x;
            }
        }
        let tip = omega * 1.0;
        println!(
            "paddle ω {omega}: min sdf {worst} (r {r}), max particle speed {vmax} (tip speed {tip}), tunnelled {tunnelled}"
        );
        if !(worst > 0.99 * r && tunnelled == 0 && vmax < 2.5 * tip) {
            bad.push((omega, worst, tunnelled, vmax));
        }
    }
    assert!(
        bad.is_empty(),
        "(ω, min sdf, tunnelled, max speed): {bad:?}"
    );
}

// ---------------------------------------------------------------------------------------
// 6. A child collider of a moving parent (TransformPlugin propagates as in a game).
// ---------------------------------------------------------------------------------------

#[test]
fn a_particle_on_a_child_collider_of_a_moving_parent_rests_on_it() {
    let mut app = app_with(DT, (PbdPlugins::default(), TransformPlugin));
    let parent = spawn(&mut app, |c| {
        c.spawn(Transform::from_xyz(0.0, -0.1, 0.0)).id()
    });
    let child = spawn(&mut app, |c| {
        c.spawn((
            ParticleCollider::from(Rectangle::new(4.0, 0.2)),
            Transform::default(),
            ColliderMaterial::default(),
            ChildOf(parent),
        ))
        .id()
    });
    let r = 0.05;
    app.update();
    let p = ball(&mut app, Vec2::new(0.0, r), Vec2::ZERO, r);
    run_steps(&mut app, 30);
    let mut y = -0.1;
    let mut worst_pen: f32 = 0.0;
    let mut worst_gap: f32 = 0.0;
    for _ in 0..120 {
        y += 1.0 * DT;
        app.world_mut()
            .get_mut::<Transform>(parent)
            .unwrap()
            .translation
            .y = y;
        run_steps(&mut app, 1);
        let top = app
            .world()
            .get::<GlobalTransform>(child)
            .unwrap()
            .translation()
            .y
            + 0.1;
        // `top` is propagated after the step: the collider's actual pose this frame.
        let gap = position(&app, p).y - r - (y + 0.1);
        worst_pen = worst_pen.min(gap);
        worst_gap = worst_gap.max(gap);
        let _ = top;
    }
    println!(
        "child collider rising 1 m/s: gap to the parent-placed top: min {worst_pen}, max {worst_gap} (r {r})"
    );
    assert!(
        worst_pen > -0.01 * r,
        "penetrates the child collider by {} r",
        -worst_pen / r
    );
}

// ---------------------------------------------------------------------------------------
// 7. Teleporting a collider.
// ---------------------------------------------------------------------------------------

#[test]
fn a_teleported_collider_does_not_launch_particles() {
    let mut app = app(DT);
    let r = 0.05;
    let b = collider(
        &mut app,
        Rectangle::new(1.0, 1.0),
        Transform::from_xyz(-10.0, 0.0, 0.0),
        ColliderMaterial::default(),
    );
    // A floor and a particle on it.
    collider(
        &mut app,
        Rectangle::new(40.0, 1.0),
        Transform::from_xyz(0.0, -1.0, 0.0),
        ColliderMaterial::default(),
    );
    let p = ball(&mut app, Vec2::new(0.0, -0.5 + r), Vec2::ZERO, r);
    run_steps(&mut app, 20);
    // Teleport the box across the particle to the other side (a respawn, a level reset),
    // marked as such.
    let mut entity = app.world_mut().entity_mut(b);
    entity.get_mut::<Transform>().unwrap().translation.x = 10.0;
    entity.insert(TeleportCollider);
    run_steps(&mut app, 1);
    let v = velocity(&app, p);
    let x = position(&app, p);
    println!("after teleporting the box 20 m across the particle: at {x}, velocity {v}");
    assert!(
        v.length() < 1e-3 && (x.x).abs() < 1e-4,
        "launched at {v}, to {x}"
    );
    assert!(
        app.world().get::<TeleportCollider>(b).is_none(),
        "the marker stays"
    );
    // Unmarked, the same jump is a motion at 1200 m/s: it sweeps the particle along.
    app.world_mut()
        .get_mut::<Transform>(b)
        .unwrap()
        .translation
        .x = -10.0;
    run_steps(&mut app, 1);
    assert!(velocity(&app, p).length() > 100.0, "{}", velocity(&app, p));
}

// ---------------------------------------------------------------------------------------
// 8. Particles spawned inside colliders.
// ---------------------------------------------------------------------------------------

#[test]
fn particles_spawned_inside_colliders_come_out_without_speed() {
    let cases: Vec<(&str, ParticleCollider, Vec2, f32)> = vec![
        ("circle centre", Circle::new(0.5).into(), Vec2::ZERO, 0.05),
        (
            "circle near centre",
            Circle::new(0.5).into(),
            Vec2::new(1e-7, 0.0),
            0.05,
        ),
        (
            "box centre",
            Rectangle::new(1.0, 1.0).into(),
            Vec2::ZERO,
            0.05,
        ),
        (
            "box deep",
            Rectangle::new(1.0, 1.0).into(),
            Vec2::new(0.1, -0.3),
            0.05,
        ),
        (
            "box on edge",
            Rectangle::new(1.0, 1.0).into(),
            Vec2::new(0.1, 0.5),
            0.05,
        ),
        (
            "box on vertex",
            Rectangle::new(1.0, 1.0).into(),
            Vec2::new(0.5, 0.5),
            0.05,
        ),
        (
            "box on vertex r0",
            Rectangle::new(1.0, 1.0).into(),
            Vec2::new(0.5, 0.5),
            0.0,
        ),
        (
            "capsule centre",
            Capsule2d::new(0.3, 1.0).into(),
            Vec2::ZERO,
            0.05,
        ),
        (
            "capsule half 0 centre",
            Capsule2d::new(0.3, 0.0).into(),
            Vec2::ZERO,
            0.05,
        ),
        (
            "segment on",
            Segment2d::new(Vec2::new(-1.0, 0.0), Vec2::new(1.0, 0.0)).into(),
            Vec2::ZERO,
            0.05,
        ),
        (
            "segment endpoint",
            Segment2d::new(Vec2::new(-1.0, 0.0), Vec2::new(1.0, 0.0)).into(),
            Vec2::new(1.0, 0.0),
            0.05,
        ),
        (
            "segment on r0",
            Segment2d::new(Vec2::new(-1.0, 0.0), Vec2::new(1.0, 0.0)).into(),
            Vec2::ZERO,
            0.0,
        ),
        (
            "concave centre",
            Polygon::new([
                Vec2::new(-1.0, -1.0),
                Vec2::new(1.0, -1.0),
                Vec2::new(1.0, 1.0),
                Vec2::new(0.0, 0.0),
                Vec2::new(-1.0, 1.0),
            ])
            .into(),
            Vec2::new(0.0, -0.5),
            0.05,
        ),
    ];
    let mut bad = Vec::new();
    for (name, shape, at, r) in cases {
        let mut app = app(DT);
        app.world_mut().resource_mut::<Gravity>().0 = Vec2::ZERO;
        spawn(&mut app, |c| {
            c.spawn((
                shape.clone(),
                Transform::default(),
                ColliderMaterial::default(),
            ));
        });
        let p = ball(&mut app, at, Vec2::ZERO, r);
        let mut vmax: f32 = 0.0;
        for _ in 0..30 {
            run_steps(&mut app, 1);
            vmax = vmax.max(velocity(&app, p).length());
        }
        let x = position(&app, p);
        println!(
            "inside {name}: now at {x}, max speed {vmax}, finite {}",
            x.is_finite()
        );
        if !x.is_finite() || vmax > 0.1 {
            bad.push((name, x, vmax));
        }
    }
    assert!(bad.is_empty(), "{bad:?}");
}
