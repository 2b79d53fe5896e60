//! Particles against colliders (issue 18, item 1): resting contact, no tunnelling at any
//! speed, moving platforms, Coulomb friction on an incline, restitution.

#[path = "common/mod.rs"]
mod common;

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;

use common::*;

const DT: f32 = 1.0 / 60.0;

#[test]
fn a_particle_resting_on_a_box_for_ten_seconds_penetrates_under_one_percent_of_its_radius() {
    for r in [0.005, 0.05, 0.2] {
        let mut app = app(DT);
        // The box's top face is at y = 0.
        collider(
            &mut app,
            Rectangle::new(4.0, 1.0),
            Transform::from_xyz(0.0, -0.5, 0.0),
            ColliderMaterial::default(),
        );
        let p = ball(&mut app, Vec2::new(0.3, r + 0.02), Vec2::ZERO, r);
        let mut deepest: f32 = 0.0;
        for _ in 0..600 {
            run_steps(&mut app, 1);
            deepest = deepest.max(r - position(&app, p).y);
        }
        assert!(deepest < 0.01 * r, "r = {r}: penetrated {} r", deepest / r);
        let rest = position(&app, p);
        assert!(
            (rest.y - r).abs() < 0.01 * r && (rest.x - 0.3).abs() < 1e-4,
            "rests at {rest}"
        );
        assert!(
            velocity(&app, p).length() < 1e-3,
            "still moving: {}",
            velocity(&app, p)
        );
    }
}

#[test]
fn no_particle_crosses_a_segment_at_any_speed_or_angle() {
    // Fluid particles at the fluid's speed limit (C h / Δt) and solid ones at 1 km/s, aimed
    // at a zero-thickness segment from above at angles from 5° to 175°, gravity off.
    let mut app = app(DT);
    app.world_mut().resource_mut::<Gravity>().0 = Vec2::ZERO;
    collider(
        &mut app,
        Segment2d::new(Vec2::new(-50.0, 0.0), Vec2::new(50.0, 0.0)),
        Transform::default(),
        ColliderMaterial::frictionless(0.0).unwrap(),
    );
    let settings = FluidSettings::default();
    let limit = settings.max_speed(DT);
    let w = InverseMass::from_mass(settings.particle_mass()).unwrap();
    let mut particles = Vec::new();
    for k in 0..35 {
        let angle = (5.0 + 5.0 * k as f32).to_radians();
        let dir = Vec2::new(angle.cos(), -angle.sin());
        for height in [0.0, 1e-6, 0.01, 0.3] {
            let at = Vec2::new(-20.0 + k as f32, height);
            particles.push(spawn(&mut app, |c| {
                c.spawn((FluidParticle, Position(at), Velocity(dir * limit), w))
                    .id()
            }));
            particles.push(ball(&mut app, at + Vec2::X * 0.5, dir * 1000.0, 0.0));
        }
    }
    for step in 0..120 {
        run_steps(&mut app, 1);
        for &p in &particles {
            let y = position(&app, p).y;
            assert!(
                y >= -1e-5,
                "step {step}: particle {} crossed to {}",
                particles.iter().position(|&q| q == p).unwrap(),
                position(&app, p)
            );
        }
    }
}

#[test]
fn a_particle_on_a_moving_platform_moves_with_it() {
    // With substeps, each sweeps its share of the platform's motion in the step.
    for substeps in [1, 4] {
        ride_a_moving_platform(substeps);
    }
}

fn ride_a_moving_platform(substeps: u32) {
    let mut app = app(DT);
    app.world_mut()
        .resource_mut::<SolverSettings>()
        .set_substeps(substeps)
        .unwrap();
    let platform = collider(
        &mut app,
        Rectangle::new(4.0, 0.2),
        Transform::from_xyz(0.0, -0.1, 0.0),
        ColliderMaterial::default(),
    );
    let r = 0.05;
    let p = ball(&mut app, Vec2::new(0.0, r), Vec2::ZERO, r);
    run_steps(&mut app, 30);
    // The platform moves right at 1 m/s and up at 0.5 m/s, set before each step.
    let speed = Vec2::new(1.0, 0.5);
    let mut platform_at = Vec2::new(0.0, -0.1);
    let start = position(&app, p);
    for step in 0..120 {
        platform_at += speed * DT;
        app.world_mut()
            .get_mut::<Transform>(platform)
            .unwrap()
            .translation = platform_at.extend(0.0);
        run_steps(&mut app, 1);
        let x = position(&app, p);
        assert!(
            (x.y - (platform_at.y + 0.1 + r)).abs() < 0.01 * r,
            "{substeps} substeps, step {step}: {} above the platform's top, not resting on it",
            x.y - platform_at.y - 0.1
        );
    }
    // Kinetic friction (μk g = 4.9 m/s²) takes it to the platform's speed in ~0.2 s; then
    // static friction holds it.
    let v = velocity(&app, p);
    assert!(
        (v - speed).length() < 1e-3,
        "{substeps} substeps: velocity {v}, platform {speed}"
    );
    let travelled = position(&app, p) - start;
    let platform = speed * 120.0 * DT;
    assert!(
        (travelled.y - platform.y).abs() < 1e-3 && travelled.x > platform.x - 0.15,
        "{substeps} substeps: travelled {travelled}, platform {platform}"
    );
}

/// A plane inclined 30° with `material` (a long thin box rotated 30°, its top face through
/// the origin): its normal and its downhill direction.
fn incline(app: &mut App, material: ColliderMaterial) -> (Vec2, Vec2) {
    let angle = 30f32.to_radians();
    let normal = Vec2::new(-angle.sin(), angle.cos());
    collider(
        app,
        Rectangle::new(20.0, 1.0),
        Transform::from_translation((-0.5 * normal).extend(0.0))
            .with_rotation(Quat::from_rotation_z(angle)),
        material,
    );
    (normal, -Vec2::new(angle.cos(), angle.sin()))
}

/// A particle resting on a plane inclined 30° with `material`: its displacement along the
/// slope after `steps` steps, and its final velocity along it (downhill positive).
fn on_incline(material: ColliderMaterial, steps: u64) -> (f32, f32) {
    let mut app = app(DT);
    let (normal, downhill) = incline(&mut app, material);
    let r = 0.05;
    let p = ball(&mut app, normal * r, Vec2::ZERO, r);
    let x0 = position(&app, p);
    run_steps(&mut app, steps);
    let x = position(&app, p);
    let off_plane = (x.dot(normal) - r).abs();
    assert!(off_plane < 0.01 * r, "left the plane by {off_plane} m");
    ((x - x0).dot(downhill), velocity(&app, p).dot(downhill))
}

#[test]
fn static_friction_holds_a_particle_on_a_30_degree_incline() {
    let tan = 30f32.to_radians().tan();
    let (moved, _) = on_incline(ColliderMaterial::new(tan + 0.01, 0.5, 0.0).unwrap(), 120);
    assert!(moved.abs() < 1e-3, "slid {moved} m in 2 s");
    // Below tan 30° it slides, at g (sin 30° − μk cos 30°).
    let (_, v) = on_incline(ColliderMaterial::new(tan - 0.1, 0.3, 0.0).unwrap(), 60);
    let a = 9.81 * (0.5 - 0.3 * 30f32.to_radians().cos());
    assert!(
        (v - a).abs() < 0.02 * a,
        "accelerated at {v} m/s², expected {a}"
    );
}

#[test]
fn a_frictionless_incline_accelerates_at_g_sin_30() {
    let (_, v) = on_incline(ColliderMaterial::frictionless(0.0).unwrap(), 60);
    let a = 9.81 * 0.5;
    assert!(
        (v - a).abs() < 0.02 * a,
        "accelerated at {v} m/s² after 1 s, expected {a}"
    );
}

#[test]
fn successive_bounce_heights_shrink_by_e_squared() {
    // At a game's Δt and a finer one.
    for (e, dt) in [
        (0.3, 1.0 / 60.0),
        (0.5, 1.0 / 60.0),
        (0.8, 1.0 / 60.0),
        (0.5, 1.0 / 240.0),
    ] {
        let mut app = app(dt);
        collider(
            &mut app,
            Rectangle::new(4.0, 1.0),
            Transform::from_xyz(0.0, -0.5, 0.0),
            ColliderMaterial::frictionless(e).unwrap(),
        );
        let r = 0.02;
        let p = ball(&mut app, Vec2::new(0.0, 1.0 + r), Vec2::ZERO, r);
        // Apex heights (above the resting height r) between bounces.
        let mut apexes = Vec::new();
        let (mut top, mut last_vy) = (0.0f32, 0.0f32);
        for _ in 0..(4.0 / dt) as u32 {
            run_steps(&mut app, 1);
            let (y, vy) = (position(&app, p).y - r, velocity(&app, p).y);
            top = top.max(y);
            if last_vy > 0.0 && vy <= 0.0 {
                apexes.push(top);
            }
            if vy > 0.0 && last_vy <= 0.0 {
                top = 0.0;
            }
            last_vy = vy;
        }
        assert!(apexes.len() >= 2, "e = {e}, Δt = {dt}: apexes {apexes:?}");
        let heights: Vec<f32> = std::iter::once(1.0).chain(apexes.iter().copied()).collect();
        for pair in heights.windows(2).take(3).filter(|h| h[1] > 0.01) {
            let ratio = pair[1] / pair[0];
            assert!(
                (ratio - e * e).abs() < 0.05 * e * e,
                "e = {e}, Δt = {dt}: heights {heights:?}, ratio {ratio} against e² = {}",
                e * e
            );
        }
    }
}

#[test]
fn a_cloth_strip_dropped_on_a_ball_drapes_over_it_without_entering_it() {
    let mut app = app(DT);
    let (radius, r) = (0.4, 0.01);
    collider(
        &mut app,
        Circle::new(radius),
        Transform::default(),
        ColliderMaterial::default(),
    );
    let cloth = spawn(&mut app, |c| {
        ClothBuilder {
            width: 30,
            height: 2,
            spacing: 0.04,
            mass: 0.01,
            fixed: FixedCorners::One,
            origin: Vec2::new(-0.58, 0.5),
            ..default()
        }
        .spawn(c)
        .unwrap()
    });
    // Nothing pinned: it falls freely onto the ball.
    app.world_mut()
        .get_mut::<InverseMass>(cloth.particles[0])
        .unwrap()
        .0 = 100.0;
    let mut closest = f32::INFINITY;
    for _ in 0..180 {
        run_steps(&mut app, 1);
        for &p in &cloth.particles {
            closest = closest.min(position(&app, p).length());
        }
    }
    assert!(
        closest > (radius + r) * (1.0 - 1e-4),
        "a particle came {closest} m from the centre (surface at {})",
        radius + r
    );
    // It rests on the ball: its middle on top, its edges hanging below the top.
    let middle = position(&app, cloth.particles[30 + 15]);
    assert!(
        (middle.length() - (radius + r)).abs() < 0.02,
        "middle at {middle}"
    );
    let corner = position(&app, cloth.particles[0]);
    assert!(
        corner.y < middle.y - 0.2,
        "corner at {corner}, middle at {middle}"
    );
}

/// A collider that is disabled (Bevy's `Disabled`) loses its boundary samples, so water does
/// not rest on an invisible shape; enabled again, it has them back.
#[test]
fn a_disabled_collider_keeps_no_samples() {
    use bevy::ecs::entity_disabling::Disabled;
    use bevy_pbd2d::collider::ColliderSampleOf;
    let mut app = common::app(0.005);
    let settings = *app.world().resource::<FluidSettings>();
    let w = InverseMass::from_mass(settings.particle_mass()).unwrap();
    let wall = app
        .world_mut()
        .spawn((
            ParticleCollider::from(Rectangle::new(1.0, 0.2)),
            Transform::default(),
        ))
        .id();
    app.world_mut()
        .spawn((FluidParticle, Position(Vec2::new(0.0, 0.5)), w));
    let samples = |app: &mut App| {
        app.world_mut()
            .query_filtered::<&ColliderSampleOf, With<BoundaryParticle>>()
            .iter(app.world())
            .count()
    };
    for _ in 0..3 {
        app.update();
    }
    let sampled = samples(&mut app);
    assert!(sampled > 20, "{sampled} samples");
    app.world_mut().entity_mut(wall).insert(Disabled);
    app.update();
    app.update();
    assert_eq!(samples(&mut app), 0);
    app.world_mut().entity_mut(wall).remove::<Disabled>();
    app.update();
    app.update();
    assert_eq!(samples(&mut app), sampled);
}

/// Fluid slips on colliders: a lone fluid particle on a 30° incline whose static friction
/// (μs = 1 > tan 30°) holds any other particle slides down at g sin 30° (within 3 %, over
/// 0.5 s at Δt = 1/120 s).
#[test]
fn fluid_slips_on_an_incline_that_holds_other_particles() {
    let dt = 1.0 / 120.0;
    let mut app = app(dt);
    let (normal, downhill) = incline(&mut app, ColliderMaterial::new(1.0, 1.0, 0.0).unwrap());
    let settings = *app.world().resource::<FluidSettings>();
    let r = settings.particle_radius;
    let w = InverseMass::from_mass(settings.particle_mass()).unwrap();
    let drop = app
        .world_mut()
        .spawn((FluidParticle, Position(normal * r), w))
        .id();
    let steps = 60;
    run_steps(&mut app, steps);
    let v = velocity(&app, drop).dot(downhill);
    let expected = 9.81 * 0.5 * steps as f32 * dt;
    assert!(
        (v - expected).abs() < 0.03 * expected,
        "slid at {v} m/s after 0.5 s, expected {expected}"
    );
}

/// A collider's shape is kept between steps while it does not change, and rebuilt when it
/// does: a ball resting on a box rides up when the box is made taller, and falls when it is
/// made lower, to rest on the new top face each time.
#[test]
fn a_collider_whose_shape_changes_is_met_with_its_new_shape() {
    let r = 0.05;
    let mut app = app(DT);
    let floor = collider(
        &mut app,
        Rectangle::new(4.0, 1.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
        ColliderMaterial::default(),
    );
    let p = ball(&mut app, Vec2::new(0.3, r), Vec2::ZERO, r);
    for height in [1.0, 1.2, 0.6] {
        app.world_mut()
            .get_mut::<ParticleCollider>(floor)
            .unwrap()
            .0 = ColliderShape::Rectangle(Rectangle::new(4.0, height));
        run_steps(&mut app, 120);
        let top = -0.5 + height / 2.0;
        let y = position(&app, p).y;
        assert!(
            (y - (top + r)).abs() < 0.01 * r,
            "box {height} m tall: ball at {y}, top face at {top}"
        );
    }
}

/// The contact passes run in blocks of rows on the pool's threads: a dam break in a box of
/// colliders, with grains and their friction on a collider shelf, ends in the same bits on one
/// and two threads.
#[test]
fn contacts_have_the_same_bits_on_one_and_two_threads() {
    let runs: Vec<Vec<[u32; 4]>> = [1, 2]
        .into_iter()
        .map(|threads| {
            let mut app = app(0.005);
            let settings = *app.world().resource::<FluidSettings>();
            app.insert_resource(bevy_pbd2d::SolverThreads {
                max_threads: Some(threads),
                ..default()
            });
            let scene = spawn(&mut app, |c| {
                DamBreakBuilder {
                    walls: DamBreakWalls::Collider,
                    ..default()
                }
                .spawn(c, &settings)
                .unwrap()
            });
            collider(
                &mut app,
                Rectangle::new(0.6, 0.1),
                Transform::from_xyz(0.3, 1.5, 0.0).with_rotation(Quat::from_rotation_z(0.2)),
                ColliderMaterial::default(),
            );
            let grains: Vec<Entity> = (0..600)
                .map(|k| {
                    let at = Vec2::new(0.05 + 0.02 * (k % 25) as f32, 1.7 + 0.02 * (k / 25) as f32);
                    ball(&mut app, at, Vec2::ZERO, 0.008)
                })
                .collect();
            run_steps(&mut app, 100);
            assert!(stats(&app).collider_contacts > 100, "the contacts ran");
            let mut bits = state_bits(&app, &scene.fluid);
            bits.extend(state_bits(&app, &grains));
            bits
        })
        .collect();
    assert_eq!(runs[0], runs[1]);
}
