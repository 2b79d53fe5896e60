//! Extreme cases of the particle colliders, from the review that set out to break them (issue
//! 18, item 1; the first part is `collider_edge_cases.rs`): point particles grazing a segment
//! at 1 km/s, polylines with duplicated vertices, non-finite values written directly
//! and despawns, a kilometre floor far from the origin, millimetre colliders, a dam break in a
//! box of colliders, a rope dragged across a segment, elastic bounces.

#[path = "common/mod.rs"]
mod common;

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;

use common::*;

const DT: f32 = 1.0 / 60.0;

// ---------------------------------------------------------------------------------------
// 9. Point particles grazing a segment at 1 km/s (the "tangential" slack).
// ---------------------------------------------------------------------------------------

#[test]
fn grazing_point_particles_do_not_cross_a_segment() {
    let mut app = app(DT);
    app.world_mut().resource_mut::<Gravity>().0 = Vec2::ZERO;
    collider(
        &mut app,
        Segment2d::new(Vec2::new(-1000.0, 0.0), Vec2::new(1000.0, 0.0)),
        Transform::default(),
        ColliderMaterial::frictionless(0.0).unwrap(),
    );
    let mut ps = Vec::new();
    for k in 0..20 {
        // A slope of 2e-6 .. 9e-6 (below the 1e-5 tangential tolerance).
        let slope = (1.0 + 0.4 * k as f32) * 1e-6;
        let v = Vec2::new(1000.0, -1000.0 * slope);
        ps.push(ball(&mut app, Vec2::new(-900.0, 1e-4), v, 0.0));
        ps.push(ball(&mut app, Vec2::new(-900.0, 1e-4), v / 10.0, 0.0));
    }
    let mut lowest = f32::INFINITY;
    for _ in 0..60 {
        run_steps(&mut app, 1);
        for &p in &ps {
            lowest = lowest.min(position(&app, p).y);
        }
    }
    println!("grazing point particles: lowest y {lowest}");
    assert!(lowest >= 0.0, "crossed to {lowest}");
}

// ---------------------------------------------------------------------------------------
// 10. Polylines with duplicated and collinear vertices.
// ---------------------------------------------------------------------------------------

#[test]
fn a_particle_slides_along_a_polyline_with_collinear_and_duplicated_vertices() {
    let mut verts = Vec::new();
    for k in 0..=40 {
        let x = -2.0 + 0.1 * k as f32;
        verts.push(Vec2::new(x, 0.0));
        if k % 5 == 0 {
            verts.push(Vec2::new(x, 0.0)); // duplicate
        }
    }
    let mut bad = Vec::new();
    for speed in [1.0f32, 10.0, 50.0] {
        let mut app = app(DT);
        collider(
            &mut app,
            Polyline2d::new(verts.clone()),
            Transform::default(),
            ColliderMaterial::frictionless(0.0).unwrap(),
        );
        let r = 0.01;
        let p = ball(&mut app, Vec2::new(-1.95, r), Vec2::new(speed, 0.0), r);
        let mut min_y = f32::INFINITY;
        let mut min_vx = f32::INFINITY;
        let mut max_vy: f32 = 0.0;
        for _ in 0..((3.5 / speed / DT) as u32).max(1) {
            run_steps(&mut app, 1);
            let (x, v) = (position(&app, p), velocity(&app, p));
            if x.x < 1.95 {
                min_y = min_y.min(x.y);
                min_vx = min_vx.min(v.x);
                max_vy = max_vy.max(v.y.abs());
            }
        }
        println!(
            "polyline slide at {speed}: min y {min_y} (r {r}), min vx {min_vx}, max |vy| {max_vy}"
        );
        if !(min_y > 0.99 * r && min_vx > 0.99 * speed && max_vy < 0.05) {
            bad.push((speed, min_vx, max_vy));
        }
    }
    assert!(bad.is_empty(), "(speed, min vx, max |vy|): {bad:?}");
}

// ---------------------------------------------------------------------------------------
// 11. NaN / inf written directly; despawn mid-simulation.
// ---------------------------------------------------------------------------------------

#[test]
fn non_finite_collider_values_and_despawns_do_not_poison_particles() {
    let mut app = app(DT);
    let c = collider(
        &mut app,
        Rectangle::new(4.0, 1.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
        ColliderMaterial::default(),
    );
    let r = 0.05;
    let ps: Vec<Entity> = (0..10)
        .map(|k| ball(&mut app, Vec2::new(-1.0 + 0.2 * k as f32, r), Vec2::ZERO, r))
        .collect();
    run_steps(&mut app, 20);
    type Edit = Box<dyn Fn(&mut World)>;
    let edits: Vec<(&str, Edit)> = vec![
        (
            "material NaN",
            Box::new(move |w| {
                *w.get_mut::<ColliderMaterial>(c).unwrap() = ColliderMaterial {
                    static_friction: f32::NAN,
                    dynamic_friction: f32::NAN,
                    restitution: f32::NAN,
                }
            }),
        ),
        (
            "material inf friction",
            Box::new(move |w| {
                w.get_mut::<ColliderMaterial>(c).unwrap().static_friction = f32::INFINITY;
            }),
        ),
        (
            "rotation NaN",
            Box::new(move |w| {
                w.get_mut::<Transform>(c).unwrap().rotation =
                    Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0);
            }),
        ),
        (
            "rotation zero quat",
            Box::new(move |w| {
                w.get_mut::<Transform>(c).unwrap().rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
            }),
        ),
        (
            "rotation unnormalised",
            Box::new(move |w| {
                w.get_mut::<Transform>(c).unwrap().rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 3.0);
            }),
        ),
        (
            "scale 0",
            Box::new(move |w| {
                let mut t = w.get_mut::<Transform>(c).unwrap();
                t.rotation = Quat::IDENTITY;
                t.scale = Vec3::ZERO;
            }),
        ),
        (
            "translation inf",
            Box::new(move |w| {
                let mut t = w.get_mut::<Transform>(c).unwrap();
                t.scale = Vec3::ONE;
                t.translation.x = f32::INFINITY;
            }),
        ),
        (
            "translation back",
            Box::new(move |w| {
                w.get_mut::<Transform>(c).unwrap().translation = Vec3::new(0.0, -0.5, 0.0);
            }),
        ),
        (
            "rect NaN",
            Box::new(move |w| {
                w.get_mut::<ParticleCollider>(c).unwrap().0 = ColliderShape::Rectangle(Rectangle {
                    half_size: Vec2::new(f32::NAN, 0.5),
                });
            }),
        ),
        (
            "rect huge",
            Box::new(move |w| {
                w.get_mut::<ParticleCollider>(c).unwrap().0 = ColliderShape::Rectangle(Rectangle {
                    half_size: Vec2::new(f32::MAX, 0.5),
                });
            }),
        ),
        (
            "polygon huge",
            Box::new(move |w| {
                w.get_mut::<ParticleCollider>(c).unwrap().0 =
                    ColliderShape::Polygon(Polygon::new([
                        Vec2::new(-3e38, -0.5),
                        Vec2::new(3e38, -0.5),
                        Vec2::new(3e38, 0.5),
                        Vec2::new(-3e38, 0.5),
                    ]));
            }),
        ),
        (
            "circle inf",
            Box::new(move |w| {
                w.get_mut::<ParticleCollider>(c).unwrap().0 = ColliderShape::Circle(Circle {
                    radius: f32::INFINITY,
                });
            }),
        ),
        (
            "rect ok",
            Box::new(move |w| {
                w.get_mut::<ParticleCollider>(c).unwrap().0 =
                    ColliderShape::Rectangle(Rectangle::new(4.0, 1.0));
            }),
        ),
        (
            "despawn",
            Box::new(move |w| {
                w.despawn(c);
            }),
        ),
    ];
    let mut bad = Vec::new();
    for (name, edit) in edits {
        edit(app.world_mut());
        run_steps(&mut app, 5);
        let finite = all_finite(&mut app);
        let ys: Vec<f32> = ps.iter().map(|&p| position(&app, p).y).collect();
        let vmax = ps
            .iter()
            .map(|&p| velocity(&app, p).length())
            .fold(0.0, f32::max);
        println!("{name}: finite {finite}, y[0] {}, max speed {vmax}", ys[0]);
        if !finite || vmax > 5.0 {
            bad.push(name);
        }
    }
    assert!(bad.is_empty(), "{bad:?}");
}

// ---------------------------------------------------------------------------------------
// 12. Huge and tiny colliders.
// ---------------------------------------------------------------------------------------

#[test]
fn a_particle_rests_on_a_kilometre_floor_far_from_the_origin() {
    for (x, r) in [
        (0.0f32, 0.01f32),
        (400.0, 0.01),
        (400.0, 0.001),
        (-450.0, 0.0),
    ] {
        let mut app = app(DT);
        collider(
            &mut app,
            Rectangle::new(1000.0, 1.0),
            Transform::from_xyz(0.0, -0.5, 0.0),
            ColliderMaterial::default(),
        );
        let p = ball(&mut app, Vec2::new(x, r + 0.01), Vec2::ZERO, r);
        let mut deepest: f32 = 0.0;
        for _ in 0..300 {
            run_steps(&mut app, 1);
            deepest = deepest.max(r - position(&app, p).y);
        }
        println!(
            "km floor x {x} r {r}: deepest {deepest} m, rest at {}",
            position(&app, p)
        );
        assert!(deepest <= 0.01 * r + 1e-6 && position(&app, p).y > -1e-6);
    }
}

#[test]
fn particles_hit_a_millimetre_circle_and_segment() {
    let mut app = app(DT);
    app.world_mut().resource_mut::<Gravity>().0 = Vec2::ZERO;
    collider(
        &mut app,
        Circle::new(0.0005),
        Transform::default(),
        ColliderMaterial::frictionless(0.0).unwrap(),
    );
    collider(
        &mut app,
        Segment2d::new(Vec2::new(9.9995, 0.0), Vec2::new(10.0005, 0.0)),
        Transform::default(),
        ColliderMaterial::frictionless(0.0).unwrap(),
    );
    let mut ps = Vec::new();
    for k in 0..10 {
        let off = (k as f32 - 4.5) * 0.0002;
        ps.push((
            0.0,
            ball(&mut app, Vec2::new(off, 1.0), Vec2::new(0.0, -30.0), 0.001),
        ));
        ps.push((
            10.0,
            ball(
                &mut app,
                Vec2::new(10.0 + off * 2.0, 1.0),
                Vec2::new(0.0, -30.0),
                0.0,
            ),
        ));
    }
    let mut worst = f32::INFINITY;
    for _ in 0..60 {
        run_steps(&mut app, 1);
        for &(cx, p) in &ps {
            let x = position(&app, p);
            if cx == 0.0 {
                worst = worst.min(x.length() - 0.0005 - 0.001);
            }
        }
    }
    let crossed = ps
        .iter()
        .filter(|(cx, p)| {
            *cx == 10.0 && {
                let x = position(&app, *p);
                (x.x - 10.0).abs() < 0.0005 && x.y < 0.0
            }
        })
        .count();
    println!("mm circle: min gap {worst}; mm segment crossings {crossed}");
    assert!(worst > -1e-5 && crossed == 0);
}

// ---------------------------------------------------------------------------------------
// 13. Fluid dam break in a box of four colliders.
// ---------------------------------------------------------------------------------------

#[test]
fn a_fluid_dam_break_stays_in_a_box_of_colliders() {
    let mut bad = Vec::new();
    for walls_as_segments in [false, true] {
        let mut app = app(DT);
        let settings = *app.world().resource::<FluidSettings>();
        let pr = settings.particle_radius;
        let (w, h) = (2.0f32, 1.5f32);
        let m = ColliderMaterial::frictionless(0.0).unwrap();
        if walls_as_segments {
            let c = [
                Vec2::new(0.0, 0.0),
                Vec2::new(w, 0.0),
                Vec2::new(w, h),
                Vec2::new(0.0, h),
            ];
            for i in 0..4 {
                collider(
                    &mut app,
                    Segment2d::new(c[i], c[(i + 1) % 4]),
                    Transform::default(),
                    m,
                );
            }
        } else {
            collider(
                &mut app,
                Rectangle::new(w + 0.2, 0.1),
                Transform::from_xyz(w / 2.0, -0.05, 0.0),
                m,
            );
            collider(
                &mut app,
                Rectangle::new(w + 0.2, 0.1),
                Transform::from_xyz(w / 2.0, h + 0.05, 0.0),
                m,
            );
            collider(
                &mut app,
                Rectangle::new(0.1, h),
                Transform::from_xyz(-0.05, h / 2.0, 0.0),
                m,
            );
            collider(
                &mut app,
                Rectangle::new(0.1, h),
                Transform::from_xyz(w + 0.05, h / 2.0, 0.0),
                m,
            );
        }
        let mass = InverseMass::from_mass(settings.particle_mass()).unwrap();
        let d = 2.0 * pr;
        let mut ps = Vec::new();
        let (nx, ny) = ((0.6 / d) as i32, (0.9 / d) as i32);
        for j in 0..ny {
            for i in 0..nx {
                let at = Vec2::new(pr + d * i as f32 + 0.001, pr + d * j as f32 + 0.001);
                ps.push(spawn(&mut app, |c| {
                    c.spawn((FluidParticle, Position(at), Velocity(Vec2::ZERO), mass))
                        .id()
                }));
            }
        }
        let mut worst_pen: f32 = 0.0;
        let mut outside = 0;
        let mut vmax: f32 = 0.0;
        let mut nonfinite = false;
        for _ in 0..300 {
            run_steps(&mut app, 1);
            for &p in &ps {
                let x = position(&app, p);
                if !x.is_finite() {
                    nonfinite = true;
                    continue;
                }
                let gap = x.x.min(x.y).min(w - x.x).min(h - x.y);
                worst_pen = worst_pen.max(pr - gap);
                if gap < 0.0 {
                    outside += 1;
                }
                vmax = vmax.max(velocity(&app, p).length());
            }
        }
        println!(
            "dam break ({} particles, segments {walls_as_segments}): deepest penetration {worst_pen} m ({}% r), particle-steps outside {outside}, max speed {vmax}, non-finite {nonfinite}",
            ps.len(),
            worst_pen / pr * 100.0
        );
        if !(!nonfinite && outside == 0 && worst_pen < 0.01 * pr) {
            bad.push((walls_as_segments, worst_pen / pr, outside, nonfinite));
        }
    }
    assert!(
        bad.is_empty(),
        "(segments, penetration / r, outside, non-finite): {bad:?}"
    );
}

// ---------------------------------------------------------------------------------------
// 14. A rope dragged by a kinematic particle across a segment.
// ---------------------------------------------------------------------------------------

#[test]
fn a_rope_dragged_across_a_segment_stays_on_its_side() {
    let mut app = app(DT);
    collider(
        &mut app,
        Segment2d::new(Vec2::new(-1.0, 0.0), Vec2::new(1.0, 0.0)),
        Transform::default(),
        ColliderMaterial::default(),
    );
    let n = 20;
    let r = 0.01;
    let ps: Vec<Entity> = (0..n)
        .map(|k| {
            ball(
                &mut app,
                Vec2::new(-0.5 + 0.05 * k as f32, 0.3),
                Vec2::ZERO,
                r,
            )
        })
        .collect();
    spawn(&mut app, |c| {
        for k in 0..n - 1 {
            c.spawn(DistanceConstraint::new(ps[k], ps[k + 1], 0.05).unwrap());
        }
    });
    // Hold the middle and drag it down through the segment, fast.
    let held = ps[n / 2];
    let mut target = Vec2::new(0.0, 0.3);
    app.world_mut()
        .entity_mut(held)
        .insert(KinematicTarget(target));
    let mut crossed = Vec::new();
    let mut vmax: f32 = 0.0;
    for step in 0..120 {
        target.y -= 0.05;
        app.world_mut().get_mut::<KinematicTarget>(held).unwrap().0 = target;
        run_steps(&mut app, 1);
        for (k, &p) in ps.iter().enumerate() {
            if p == held {
                continue;
            }
            let x = position(&app, p);
            vmax = vmax.max(velocity(&app, p).length());
            if x.y < 0.0 && x.x.abs() < 1.0 {
                crossed.push((step, k, x));
            }
        }
    }
    println!(
        "rope dragged through a segment: held at {}, crossings {}, first {:?}, max speed {vmax}, finite {}",
        position(&app, held),
        crossed.len(),
        crossed.first(),
        all_finite(&mut app)
    );
    assert!(crossed.is_empty());
}

// ---------------------------------------------------------------------------------------
// 15. Restitution 1: no energy gain.
// ---------------------------------------------------------------------------------------

#[test]
fn elastic_bounces_do_not_gain_height() {
    for dt in [1.0 / 60.0f32, 1.0 / 30.0] {
        let mut app = app(dt);
        collider(
            &mut app,
            Rectangle::new(4.0, 1.0),
            Transform::from_xyz(0.0, -0.5, 0.0),
            ColliderMaterial::frictionless(1.0).unwrap(),
        );
        let r = 0.02;
        let p = ball(&mut app, Vec2::new(0.0, 1.0 + r), Vec2::ZERO, r);
        let mut top: f32 = 0.0;
        let mut late_top: f32 = 0.0;
        let n = (20.0 / dt) as u32;
        for s in 0..n {
            run_steps(&mut app, 1);
            let y = position(&app, p).y - r;
            top = top.max(y);
            if s > n / 2 {
                late_top = late_top.max(y);
            }
        }
        println!(
            "e = 1, dt {dt}: highest {top}, highest in the last 10 s {late_top} (dropped from 1)"
        );
        assert!(top < 1.02 && late_top > 0.9);
    }
}
