//! Particle–collider contact messages (issue 35, item 7): opt-in per collider, written once
//! per contact, with the impulse the contact gave (momentum balance of the impact step).

#[path = "common/mod.rs"]
mod common;

use bevy::ecs::message::Messages;
use bevy::prelude::*;
use bevy_pbd2d::prelude::*;

use common::*;

const DT: f32 = 1.0 / 60.0;
const R: f32 = 0.05;

/// The messages written since the last call.
fn drain(app: &mut App) -> (Vec<ParticleContactStart>, Vec<ParticleContactEnd>) {
    let world = app.world_mut();
    let started = world
        .resource_mut::<Messages<ParticleContactStart>>()
        .drain()
        .collect();
    let ended = world
        .resource_mut::<Messages<ParticleContactEnd>>()
        .drain()
        .collect();
    (started, ended)
}

/// A 1 kg ball of radius [`R`] dropped from 1 m onto a floor (top face at y = 0), the floor
/// reporting its contacts or not, with `substeps` per step.
fn drop_on_floor(report: bool, substeps: u32) -> (App, Entity, Entity) {
    let mut app = app(DT);
    (app.world_mut().resource_mut::<SolverSettings>())
        .set_substeps(substeps)
        .unwrap();
    let floor = collider(
        &mut app,
        Rectangle::new(4.0, 1.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
        ColliderMaterial::default(),
    );
    if report {
        app.world_mut()
            .entity_mut(floor)
            .insert(ReportParticleContacts);
    }
    let ball = ball(&mut app, Vec2::new(0.2, 1.0 + R), Vec2::ZERO, R);
    (app, floor, ball)
}

/// One message when the ball lands, with the impulse that stopped it (summed over the step's
/// substeps): the contact's impulse equals the ball's momentum change plus gravity's impulse
/// over the step (to 1e-3), about m √(2 g h); none while it rests for 3 s; one end when it is
/// thrown up, one start when it lands again; an end when the marker goes, a start when it
/// comes back, an end when the ball is despawned.
#[test]
fn a_landing_is_reported_once_with_the_impulse_that_stopped_it() {
    for substeps in [1, 4] {
        let (mut app, floor, ball) = drop_on_floor(true, substeps);
        let g = app.world().resource::<Gravity>().0;
        let mut landings = Vec::new();
        for step in 0..240 {
            let before = velocity(&app, ball);
            run_steps(&mut app, 1);
            let (started, ended) = drain(&mut app);
            assert!(
                ended.is_empty(),
                "{substeps} substeps, step {step}: {ended:?}"
            );
            if let Some(start) = started.first() {
                landings.push((step, before, velocity(&app, ball), *start));
            }
            assert!(started.len() <= 1);
        }
        assert_eq!(landings.len(), 1, "{substeps} substeps: {landings:?}");
        let (step, before, after, start) = landings[0];
        assert_eq!(
            (start.particle, start.collider, start.body),
            (ball, floor, None)
        );
        // Momentum: m (v_after − v_before) = J + m g Δt, with m = 1 kg.
        let expected = after - before - g * DT;
        assert!(
            (start.impulse - expected).length() < 1e-3 * expected.length(),
            "{substeps} substeps, step {step}: impulse {} against Δp − m g Δt = {expected}",
            start.impulse
        );
        let free_fall = (2.0 * g.length() * 1.0).sqrt();
        assert!(
            (start.impulse.y - free_fall).abs() < 0.05 * free_fall,
            "{substeps} substeps: impulse {} against m √(2 g h) = {free_fall}",
            start.impulse.y
        );
        assert!((start.normal - Vec2::Y).length() < 1e-4, "{}", start.normal);
        assert!(
            (start.point - Vec2::new(0.2, 0.0)).length() < 1e-3,
            "{}",
            start.point
        );

        // Thrown up at 3 m/s: it leaves (one end), lands again (one start).
        app.world_mut().get_mut::<Velocity>(ball).unwrap().0 = Vec2::new(0.0, 3.0);
        let (mut starts, mut ends) = (0, 0);
        for _ in 0..120 {
            run_steps(&mut app, 1);
            let (started, ended) = drain(&mut app);
            assert!(
                ended
                    .iter()
                    .all(|e| (e.particle, e.collider) == (ball, floor))
            );
            ends += ended.len();
            starts += started.len();
            assert!(ends >= starts, "a start before its end");
        }
        assert_eq!((starts, ends), (1, 1), "{substeps} substeps");

        // The marker removed while it rests: the contact ends; back, a contact starts; the
        // ball despawned: it ends.
        let mut marker = |on: bool| {
            let mut floor = app.world_mut().entity_mut(floor);
            if on {
                floor.insert(ReportParticleContacts);
            } else {
                floor.remove::<ReportParticleContacts>();
            }
            run_steps(&mut app, 1);
            let (started, ended) = drain(&mut app);
            (started.len(), ended.len())
        };
        assert_eq!(marker(false), (0, 1), "the marker removed");
        assert_eq!(marker(true), (1, 0), "the marker back");
        app.world_mut().despawn(ball);
        run_steps(&mut app, 1);
        let (started, ended) = drain(&mut app);
        assert_eq!((started.len(), ended.len()), (0, 1), "the ball despawned");
    }
}

/// A floor without the marker writes nothing, for a landing ball or a block of water.
#[test]
fn no_message_is_written_when_reports_are_off() {
    let (mut app, _, _) = drop_on_floor(false, 1);
    fluid_block(&mut app, Vec2::new(0.5, 0.2), (10, 10), Vec2::ZERO);
    for _ in 0..120 {
        run_steps(&mut app, 1);
        assert_eq!(drain(&mut app), (vec![], vec![]));
    }
}

/// Water poured on a reporting floor: every particle that touches it starts one contact; once
/// the pool has settled (2 s), its resting particles start (almost) no new ones.
#[test]
fn water_resting_on_a_reporting_floor_does_not_start_new_contacts() {
    let (mut app, floor, ball) = drop_on_floor(true, 1);
    app.world_mut().despawn(ball);
    // Walls (not reporting) 1.1 m apart hold the water.
    for x in [0.2, 1.8] {
        let wall = Transform::from_xyz(x, 1.0, 0.0);
        collider(
            &mut app,
            Rectangle::new(0.5, 2.0),
            wall,
            ColliderMaterial::default(),
        );
    }
    let water = fluid_block(&mut app, Vec2::new(0.5, 0.2), (20, 10), Vec2::ZERO);
    let touching = |app: &App| -> usize {
        water
            .iter()
            .filter(|&&e| position(app, e).y < 2.0 * FluidSettings::default().particle_radius)
            .count()
    };
    // Contacts the water started with the floor in `steps` steps.
    let starts = |app: &mut App, steps: u32| {
        let mut count = 0;
        for _ in 0..steps {
            run_steps(app, 1);
            let (started, _) = drain(app);
            assert!(started.iter().all(|s| s.collider == floor));
            count += started
                .iter()
                .filter(|s| water.contains(&s.particle))
                .count();
        }
        count
    };
    let first = starts(&mut app, 120);
    let bottom = touching(&app);
    assert!(first >= 20, "{first} contacts started for a 20-wide block");
    let later = starts(&mut app, 60);
    eprintln!(
        "contacts started: {first} in the first 2 s, {later} in the next 1 s; {bottom} particles in the bottom layer"
    );
    assert!(
        later <= bottom / 10,
        "{later} new contacts in 1 s of rest ({bottom} at the bottom)"
    );
}
