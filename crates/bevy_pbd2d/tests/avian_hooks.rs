//! Game hooks with avian2d (issue 35, item 7; feature `avian`): avian's `CollisionLayers`
//! filter particle–body contacts (on particles, on their body, on colliders), and our
//! `Gravity` follows avian's unless the game sets ours.
#![cfg(feature = "avian")]

#[path = "common/mod.rs"]
mod common;

use avian2d::prelude::{Collider, CollisionLayers, LayerMask, PhysicsPlugins, RigidBody};
use bevy::prelude::*;
use bevy_pbd2d::prelude::*;

use common::{ball, fluid_block, position, run_steps, velocity};

const DT: f32 = 1.0 / 60.0;
const R: f32 = 0.05;

/// Our plugins and avian's, one step of [`DT`] per update; gravity left as the plugins set
/// it (both default to (0, −9.81)).
fn game_app() -> App {
    common::app_with(
        DT,
        (
            TransformPlugin,
            PbdPlugins::default(),
            PhysicsPlugins::default(),
        ),
    )
}

/// Layers of the second layer only: members of it, interacting with it alone.
fn second() -> CollisionLayers {
    CollisionLayers::new(LayerMask(0b10), LayerMask(0b10))
}

/// A static avian floor 4 m wide, its top face at y = 0, with `layers` if given.
fn floor(app: &mut App, layers: Option<CollisionLayers>) -> Entity {
    let mut floor = app.world_mut().spawn((
        RigidBody::Static,
        Collider::rectangle(4.0, 0.2),
        Transform::from_xyz(0.0, -0.1, 0.0),
    ));
    if let Some(layers) = layers {
        floor.insert(layers);
    }
    floor.id()
}

/// Free fall from rest for `steps` steps of symplectic Euler: the drop (m) and speed (m/s).
fn free_fall(g: f32, steps: u32) -> (f32, f32) {
    let n = steps as f32;
    (g * DT * DT * n * (n + 1.0) / 2.0, g * DT * n)
}

/// Balls dropped on a floor, on the default floor and on one of the second layer: a ball
/// whose layers (its own, or its body's, its own winning) exclude the floor falls through it
/// as if it were not there; one whose layers meet the floor's, or that has none, rests on it.
#[test]
fn a_particle_whose_layers_exclude_a_body_passes_it() {
    // (its own layers, its body's layers) of each ball.
    let balls = [
        (None, None),
        (Some(second()), None),
        (None, Some(second())),
        (Some(CollisionLayers::DEFAULT), None),
        (Some(CollisionLayers::DEFAULT), Some(second())),
    ];
    for (floor_layers, passing) in [
        (None, [false, true, true, false, false]),
        (Some(second()), [false, false, false, true, true]),
    ] {
        let mut app = game_app();
        floor(&mut app, floor_layers);
        let spawned: Vec<Entity> = (balls.iter().enumerate())
            .map(|(k, &(own, body))| {
                let p = ball(
                    &mut app,
                    Vec2::new(k as f32 * 0.3 - 0.6, 0.5),
                    Vec2::ZERO,
                    R,
                );
                if let Some(layers) = own {
                    app.world_mut().entity_mut(p).insert(layers);
                }
                if let Some(layers) = body {
                    let root = app.world_mut().spawn((ParticleBody, layers)).id();
                    app.world_mut().entity_mut(p).insert(ParticleOf(root));
                }
                p
            })
            .collect();
        run_steps(&mut app, 60);
        let (drop, speed) = free_fall(9.81, 60);
        for (k, (&p, &passes)) in spawned.iter().zip(&passing).enumerate() {
            let (y, v) = (position(&app, p).y, velocity(&app, p));
            let case = format!("floor {floor_layers:?}, ball {:?}", balls[k]);
            if passes {
                assert!(
                    (0.5 - y - drop).abs() < 1e-3 * drop && (v.y + speed).abs() < 1e-3 * speed,
                    "{case}: fell {} m at {v} m/s, free fall {drop} m",
                    0.5 - y
                );
            } else {
                assert!(
                    (y - R).abs() < 0.01 * R && v.length() < 1e-3,
                    "{case}: at {y} m, {v} m/s, not resting"
                );
            }
        }
    }
}

/// Water whose body has layers that exclude the floor falls through it: its centre of mass
/// follows the same water's with no floor at all (nothing pushes it, not even the floor's
/// boundary samples through the density; its fall is that of the fluid's speed limit, not
/// free fall). Water with the default layers stays on the floor.
#[test]
fn water_whose_body_excludes_a_floor_falls_through_it() {
    // The water's mean position and velocity after 0.5 s.
    let pour = |with_floor: bool, layers: Option<CollisionLayers>| {
        let mut app = game_app();
        if with_floor {
            floor(&mut app, None);
        }
        let water = fluid_block(&mut app, Vec2::new(-0.5, R), (20, 6), Vec2::ZERO);
        let root = app
            .world_mut()
            .spawn((ParticleBody, Name::new("water")))
            .id();
        if let Some(layers) = layers {
            app.world_mut().entity_mut(root).insert(layers);
        }
        for &e in &water {
            app.world_mut().entity_mut(e).insert(ParticleOf(root));
        }
        run_steps(&mut app, 30);
        let n = water.len() as f32;
        let lowest = water
            .iter()
            .map(|&e| position(&app, e).y)
            .fold(f32::INFINITY, f32::min);
        let x = water.iter().map(|&e| position(&app, e)).sum::<Vec2>() / n;
        let v = water.iter().map(|&e| velocity(&app, e)).sum::<Vec2>() / n;
        (x, v, lowest)
    };
    let (free, free_v, _) = pour(false, None);
    let (passed, passed_v, _) = pour(true, Some(second()));
    assert!(free.y < -0.5, "no floor: the water's centre at {free}");
    assert!(
        (passed - free).length() < 1e-3 && (passed_v - free_v).length() < 1e-3,
        "through the floor: {passed} at {passed_v}; with no floor: {free} at {free_v}"
    );
    let (held, _, lowest) = pour(true, None);
    assert!(
        held.y > 0.0 && lowest > 0.0,
        "on the floor: centre {held}, lowest {lowest}"
    );
}

/// Our gravity follows avian's (changed at start and in play) while the game leaves ours
/// alone; once the game sets ours, ours holds, whatever avian's becomes.
#[test]
fn our_gravity_follows_avians_until_the_game_sets_ours() {
    let mut app = game_app();
    app.insert_resource(avian2d::prelude::Gravity(Vec2::new(0.0, -3.0)));
    let p = ball(&mut app, Vec2::ZERO, Vec2::ZERO, R);
    run_steps(&mut app, 30);
    assert!((velocity(&app, p).y + 3.0 * 30.0 * DT).abs() < 1e-4);
    assert_eq!(app.world().resource::<Gravity>().0, Vec2::new(0.0, -3.0));

    app.insert_resource(avian2d::prelude::Gravity(Vec2::new(1.0, 0.0)));
    app.world_mut().get_mut::<Velocity>(p).unwrap().0 = Vec2::ZERO;
    run_steps(&mut app, 30);
    assert!((velocity(&app, p) - Vec2::new(30.0 * DT, 0.0)).length() < 1e-4);

    app.world_mut().resource_mut::<Gravity>().0 = Vec2::new(0.0, -1.0);
    app.insert_resource(avian2d::prelude::Gravity(Vec2::new(0.0, -7.0)));
    app.world_mut().get_mut::<Velocity>(p).unwrap().0 = Vec2::ZERO;
    run_steps(&mut app, 30);
    assert!((velocity(&app, p) - Vec2::new(0.0, -30.0 * DT)).length() < 1e-4);
    assert_eq!(app.world().resource::<Gravity>().0, Vec2::new(0.0, -1.0));

    // Set by the game before the first step.
    let mut app = game_app();
    app.insert_resource(Gravity(Vec2::new(0.0, -2.0)));
    app.insert_resource(avian2d::prelude::Gravity(Vec2::new(0.0, -3.0)));
    let p = ball(&mut app, Vec2::ZERO, Vec2::ZERO, R);
    run_steps(&mut app, 30);
    assert!((velocity(&app, p).y + 2.0 * 30.0 * DT).abs() < 1e-4);
}
