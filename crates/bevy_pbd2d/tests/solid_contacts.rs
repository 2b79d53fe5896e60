//! Contacts between solid particles (issue 20, item 5): a pile at rest, a cloth folding onto
//! itself, a rope on a rope, a teleported corner that untangles.

mod common;

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;
use bevy_pbd2d::scenes::Rope;

use common::*;

/// A box of walls (frictionless floor at y = 0, walls at x = 0 and x = `width`).
fn open_box(app: &mut App, width: f32) {
    for (shape, at) in [
        (
            Rectangle::new(width + 2.0, 1.0),
            Vec2::new(width / 2.0, -0.5),
        ),
        (Rectangle::new(1.0, 20.0), Vec2::new(-0.5, 10.0)),
        (Rectangle::new(1.0, 20.0), Vec2::new(width + 0.5, 10.0)),
    ] {
        collider(
            app,
            shape,
            Transform::from_translation(at.extend(0.0)),
            ColliderMaterial::default(),
        );
    }
}

/// The smallest ‖x₁ − x₂‖/(r₁ + r₂) over pairs of `particles` not joined by a constraint.
fn closest_unjoined(app: &mut App, particles: &[Entity], radius: f32) -> f32 {
    let joined: Vec<[Entity; 2]> = app
        .world_mut()
        .query::<&DistanceConstraint>()
        .iter(app.world())
        .map(|c| c.particles)
        .collect();
    let x: Vec<Vec2> = particles.iter().map(|&p| position(app, p)).collect();
    let mut closest = f32::INFINITY;
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let (a, b) = (particles[i], particles[j]);
            if joined
                .iter()
                .any(|&[p, q]| (p, q) == (a, b) || (p, q) == (b, a))
            {
                continue;
            }
            closest = closest.min(x[i].distance(x[j]) / (2.0 * radius));
        }
    }
    closest
}

#[test]
fn a_pile_of_200_grains_rests_without_overlaps() {
    // 200 discs of r = 5 cm, one body with self-collision, poured into a 1 m box as 20 rows
    // of 10 (a little apart); after 5 s they rest, no two closer than 0.99 (r₁ + r₂).
    let r = 0.05;
    let mut app = solver_app(1.0 / 60.0, 20, 4);
    open_box(&mut app, 1.0);
    let grains = spawn(&mut app, |c| {
        let root = c
            .spawn((Name::new("Grains"), SolidContacts::default()))
            .id();
        (0..200)
            .map(|k| {
                let (i, j) = (k / 10, k % 10);
                let at = Vec2::new(
                    0.05 + 0.1 * j as f32 + 0.01 * (i % 2) as f32,
                    0.06 + 0.11 * i as f32,
                );
                c.spawn((
                    Particle,
                    Position(at),
                    InverseMass(10.0),
                    ParticleRadius::new(r).unwrap(),
                    bevy_pbd2d::body::ParticleOf(root),
                ))
                .id()
            })
            .collect::<Vec<_>>()
    });
    run_steps(&mut app, 300);
    let before: Vec<Vec2> = grains.iter().map(|&p| position(&app, p)).collect();
    run_steps(&mut app, 60);
    let drift = grains
        .iter()
        .zip(&before)
        .map(|(&p, &x)| position(&app, p).distance(x))
        .fold(0.0, f32::max);
    let closest = closest_unjoined(&mut app, &grains, r);
    assert!(closest >= 0.99, "two grains at {closest} of r₁ + r₂");
    // At rest: over the sixth second no grain moves a tenth of its radius. (Their velocities
    // jitter at ~0.07 m/s: Gauss-Seidel leaves ~0.1 % of r of overlap per substep, which the
    // next substep's velocity update turns into motion, 1/1200 s apart.)
    assert!(
        drift < 0.1 * r,
        "at rest: a grain moved {drift} m in a second"
    );
    let top = grains
        .iter()
        .map(|&p| position(&app, p).y)
        .fold(0.0, f32::max);
    assert!(top < 2.3, "piled up, not floating: top at {top} m");
    assert!(
        stats(&app).solid_contacts > 100,
        "{} contacts",
        stats(&app).solid_contacts
    );
}

/// A free rope of 60 links of 5 cm (r = 2.5 cm: neighbours touch) hanging straight down
/// with its end 0.2 m above the floor of a 0.3 m wide box: released, 3 m of rope piles up in
/// it, folding onto itself.
fn coiling_rope(self_collision: bool) -> (App, Rope) {
    let mut app = solver_app(1.0 / 60.0, 10, 2);
    open_box(&mut app, 0.3);
    let builder = RopeBuilder {
        segment_length: 0.05,
        radius: 0.025,
        pinned: RopeEnds::Free,
        ..RopeBuilder::between(Vec2::new(0.14, 3.2), Vec2::new(0.16, 0.2))
    };
    let rope = spawn(&mut app, |c| builder.spawn(c).unwrap());
    app.world_mut().entity_mut(rope.root).insert(SolidContacts {
        self_collision,
        ..default()
    });
    (app, rope)
}

/// The closest unjoined pair of `rope` over 3 s, sampled every 10 steps.
fn closest_while_coiling(app: &mut App, rope: &Rope) -> f32 {
    let mut closest: f32 = f32::INFINITY;
    for _ in 0..18 {
        run_steps(app, 10);
        closest = closest.min(closest_unjoined(app, &rope.particles, 0.025));
    }
    closest
}

#[test]
fn a_rope_piling_up_on_itself_does_not_pass_through_itself() {
    let (mut without, rope) = coiling_rope(false);
    let overlapped = closest_while_coiling(&mut without, &rope);
    assert!(
        overlapped < 0.5,
        "without self-collision it folds through itself: {overlapped}"
    );
    let (mut with, rope) = coiling_rope(true);
    let closest = closest_while_coiling(&mut with, &rope);
    // Two discs that never come closer than 0.9 (r₁ + r₂) never swap sides.
    assert!(
        closest >= 0.9,
        "with self-collision: two particles at {closest} of r₁ + r₂"
    );
}

#[test]
fn a_rope_falling_on_another_rests_on_it() {
    // A slack rope pinned at both ends 2 m apart, and a free rope of 1 m dropped across it
    // from 0.5 m above: without self-collision (two bodies collide anyway), it lands on the
    // first one and stays above it.
    let mut app = solver_app(1.0 / 60.0, 10, 4);
    let bridge = RopeBuilder {
        pinned: RopeEnds::Both,
        ..RopeBuilder::between(Vec2::new(-1.0, 0.0), Vec2::new(1.0, 0.0))
    };
    let falling = RopeBuilder {
        pinned: RopeEnds::Free,
        ..RopeBuilder::between(Vec2::new(-0.5, 0.5), Vec2::new(0.5, 0.5))
    };
    let (lower, upper) = spawn(&mut app, |c| {
        let lower = bridge.spawn(c).unwrap();
        let upper = falling.spawn(c).unwrap();
        for root in [lower.root, upper.root] {
            c.entity(root).insert(SolidContacts {
                self_collision: false,
                ..default()
            });
        }
        (lower, upper)
    });
    run_steps(&mut app, 120);
    let bridge_at = |x: f32, app: &App| {
        lower
            .particles
            .windows(2)
            .map(|p| (position(app, p[0]), position(app, p[1])))
            .find(|(a, b)| a.x <= x && x <= b.x)
            .map(|(a, b)| a.lerp(b, (x - a.x) / (b.x - a.x)).y)
    };
    for &p in &upper.particles {
        let x = position(&app, p);
        if let Some(y) = bridge_at(x.x, &app) {
            assert!(
                x.y > y + 0.09,
                "a particle at {x} is not above the bridge ({y})"
            );
        }
    }
}

/// The robustness issue's cloth (20 × 20, spacing 5 cm, long-range attachments, 20
/// iterations, particles of r = 2.5 cm: neighbours touch) with a bottom corner's Position
/// written 5 m away: its largest stretch one second later.
fn stretch_after_a_teleported_corner(contacts: Option<SolidContacts>) -> f32 {
    let mut app = solver_app(1.0 / 60.0, 1, 20);
    let cloth = spawn(&mut app, |c| c0_cloth().spawn(c).unwrap());
    if let Some(contacts) = contacts {
        app.world_mut().entity_mut(cloth.root).insert(contacts);
    }
    for &p in &cloth.particles {
        app.world_mut()
            .entity_mut(p)
            .insert(ParticleRadius::new(0.025).unwrap());
    }
    run_steps(&mut app, 60);
    let corner = cloth.particles[19 * 20 + 19];
    let far = position(&app, corner) + Vec2::new(5.0, 0.0);
    app.world_mut().get_mut::<Position>(corner).unwrap().0 = far;
    run_steps(&mut app, 60);
    stats(&app).max_relative_stretch
}

#[test]
fn a_cloth_whose_corner_was_teleported_untangles_with_self_collision() {
    // Without contacts its constraints pull the corner back through the cloth, which folds
    // through itself and stays stretched (115 %); with self-collision it cannot pass through
    // itself and recovers (0.2 %).
    let tangled = stretch_after_a_teleported_corner(None);
    assert!(tangled > 0.5, "without contacts: {tangled}");
    let recovered = stretch_after_a_teleported_corner(Some(SolidContacts::default()));
    assert!(
        recovered < 0.05,
        "with self-collision, a second later: {recovered}"
    );
}
