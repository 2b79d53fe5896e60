//! Taps, drains and lifetimes (issue 35, item 6): an emitter pours its rate and never onto a
//! particle, stops at its limits once and says so, a sink removes every fluid particle that
//! enters it, a lifetime ends on time.

mod common;

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;
use common::*;

/// Fluid particle radius r of the reference settings (m).
const R: f32 = 0.025;

/// The [`EmitterStopped`] messages seen so far.
#[derive(Resource, Default)]
struct Stops(Vec<EmitterStopped>);

fn collect_stops(mut reader: MessageReader<EmitterStopped>, mut stops: ResMut<Stops>) {
    stops.0.extend(reader.read().cloned());
}

/// A reference-settings app at Δt = 5 ms, gravity as given, recording [`EmitterStopped`].
fn emitter_app(g: Vec2) -> App {
    let mut app = app(0.005);
    app.world_mut().resource_mut::<Gravity>().0 = g;
    app.init_resource::<Stops>()
        .add_systems(PostUpdate, collect_stops);
    app
}

/// An emitter at `at` pointing down (rotated by π).
fn tap(app: &mut App, emitter: FluidEmitter, at: Vec2) -> Entity {
    let pose = Transform::from_translation(at.extend(0.0))
        .with_rotation(Quat::from_rotation_z(core::f32::consts::PI));
    spawn(app, |c| c.spawn((emitter, pose)).id())
}

fn fluid(app: &mut App) -> Vec<(Entity, Vec2)> {
    let world = app.world_mut();
    let mut q = world.query_filtered::<(Entity, &Position), With<FluidParticle>>();
    q.iter(world).map(|(e, p)| (e, p.0)).collect()
}

fn state(app: &App, emitter: Entity) -> EmitterState {
    *app.world().get::<EmitterState>(emitter).unwrap()
}

/// 1 000 particles/s for 2 s (400 steps of 5 ms) from a 1 m nozzle (20 slots) pouring down
/// at 5 m/s: 2 000 ± 1 particles, and none closer than 0.9 · 2r to another particle when it
/// appears.
#[test]
fn an_emitter_pours_its_rate_and_never_onto_a_particle() {
    let mut app = emitter_app(Vec2::new(0.0, -9.81));
    let emitter = FluidEmitter::new(1000.0, 5.0, 1.0).unwrap();
    let tap = tap(&mut app, emitter, Vec2::new(0.0, 10.0));
    let mut seen = bevy::ecs::entity::EntityHashSet::default();
    let mut closest = f32::INFINITY;
    for _ in 0..400 {
        run_steps(&mut app, 1);
        let now = fluid(&mut app);
        for &(e, p) in now.iter().filter(|(e, _)| !seen.contains(e)) {
            let others = now.iter().filter(|&&(o, _)| o != e);
            let nearest = others.map(|&(_, q)| q.distance(p)).fold(f32::MAX, f32::min);
            closest = closest.min(nearest);
        }
        seen.extend(now.iter().map(|&(e, _)| e));
    }
    let emitted = state(&app, tap).emitted;
    assert!(emitted.abs_diff(2000) <= 1, "{emitted} emitted");
    assert_eq!(fluid(&mut app).len() as u64, emitted, "none lost");
    assert!(
        closest >= 0.9 * 2.0 * R,
        "two particles {} r apart",
        closest / R
    );
    assert!(app.world().resource::<Stops>().0.is_empty());
}

/// A nozzle whose particles do not leave it (speed 0, no gravity) pours one row, one particle
/// per slot, and then nothing, however much it owes: it never emits onto its own particles.
#[test]
fn a_blocked_nozzle_pours_nothing_more() {
    let mut app = emitter_app(Vec2::ZERO);
    let tap = tap(
        &mut app,
        FluidEmitter::new(1000.0, 0.0, 0.5).unwrap(),
        Vec2::ZERO,
    );
    run_steps(&mut app, 100);
    assert_eq!(state(&app, tap).emitted, 10);
    let row = fluid(&mut app);
    assert_eq!(row.len(), 10);
    for (k, &(_, p)) in row.iter().enumerate() {
        for &(_, q) in &row[k + 1..] {
            assert!(p.distance(q) >= 1.99 * R, "{p} and {q}");
        }
    }
}

/// An emitter limited to 30 live particles stops at 30 and says so once, with the limit; a
/// sink under it then drains them and it pours again, saying so again at its next stop.
#[test]
fn an_emitter_stops_at_its_limit_once_and_resumes_when_there_is_room() {
    let mut app = emitter_app(Vec2::new(0.0, -9.81));
    let emitter = FluidEmitter::new(400.0, 2.0, 0.25)
        .unwrap()
        .with_max_count(30);
    let tap = tap(&mut app, emitter, Vec2::ZERO);
    run_steps(&mut app, 100);
    assert_eq!(fluid(&mut app).len(), 30);
    let stops = &app.world().resource::<Stops>().0;
    assert_eq!(stops.len(), 1, "{stops:?}");
    assert_eq!(stops[0].emitter, tap);
    assert_eq!(
        stops[0].reason,
        PbdError::TooManyParticles {
            requested: 31,
            limit: 30
        }
    );
    // A drain from 0.5 m below the tap down to 100.5 m: the particles fall into it, the tap
    // pours again.
    let drain = FluidSink {
        half_size: Vec2::new(1.0, 50.0),
    };
    spawn(&mut app, |c| {
        c.spawn((drain, Transform::from_xyz(0.0, -50.5, 0.0))).id()
    });
    run_steps(&mut app, 400);
    assert!(state(&app, tap).emitted > 60, "{:?}", state(&app, tap));
    assert!(app.world().resource::<Stops>().0.len() >= 2);
}

/// Water poured into a drain: at the end of every step no fluid particle lies inside it, and
/// every particle emitted is either alive or counted by the drain.
#[test]
fn a_sink_removes_every_fluid_particle_that_enters() {
    let mut app = emitter_app(Vec2::new(0.0, -9.81));
    let tap = tap(
        &mut app,
        FluidEmitter::new(500.0, 1.0, 0.25).unwrap(),
        Vec2::ZERO,
    );
    let (half, centre) = (Vec2::new(0.5, 0.1), Vec2::new(0.0, -1.0));
    let sink = spawn(&mut app, |c| {
        let at = Transform::from_translation(centre.extend(0.0));
        c.spawn((FluidSink { half_size: half }, at)).id()
    });
    for _ in 0..400 {
        run_steps(&mut app, 1);
        for (_, p) in fluid(&mut app) {
            let inside = ((p - centre).abs()).cmple(half).all();
            assert!(!inside, "a particle at {p} inside the drain");
        }
    }
    let drained = app.world().get::<DrainedCount>(sink).unwrap().0;
    let emitted = state(&app, tap).emitted;
    assert!(drained > 100, "{drained} drained");
    assert_eq!(drained + fluid(&mut app).len() as u64, emitted);
}

/// A particle given 0.1 s lives 20 steps of 5 ms and is gone after the 20th; an emitter's
/// lifetime ends each of its particles 20 steps after it appeared.
#[test]
fn a_lifetime_removes_its_particle_on_time() {
    let mut app = emitter_app(Vec2::ZERO);
    let w = InverseMass::from_mass(FluidSettings::default().particle_mass()).unwrap();
    let drop = spawn(&mut app, |c| {
        c.spawn((
            FluidParticle,
            Position(Vec2::ZERO),
            w,
            ParticleLifetime(0.1),
        ))
        .id()
    });
    run_steps(&mut app, 19);
    assert!(app.world().get_entity(drop).is_ok(), "gone early");
    run_steps(&mut app, 1);
    assert!(app.world().get_entity(drop).is_err(), "still there");

    let emitter = FluidEmitter::new(200.0, 3.0, 0.05)
        .unwrap()
        .with_lifetime(0.1)
        .unwrap();
    tap(&mut app, emitter, Vec2::new(5.0, 0.0));
    let mut born = bevy::ecs::entity::EntityHashMap::default();
    for step in 1..=100u32 {
        run_steps(&mut app, 1);
        let now = fluid(&mut app);
        for &(e, _) in &now {
            born.entry(e).or_insert(step);
        }
        let alive: bevy::ecs::entity::EntityHashSet = now.iter().map(|&(e, _)| e).collect();
        for (&e, &at) in &born {
            // Appears at the end of step `at`, lives steps at + 1 ..= at + 20.
            assert_eq!(
                alive.contains(&e),
                step <= at + 19,
                "born {at}, step {step}"
            );
        }
    }
}

/// An emitter whose rate was written as NaN stops with the reason and pours nothing; mended,
/// it pours.
#[test]
fn an_invalid_emitter_says_why_and_pours_nothing() {
    let mut app = emitter_app(Vec2::ZERO);
    let tap = tap(
        &mut app,
        FluidEmitter::new(100.0, 1.0, 0.1).unwrap(),
        Vec2::ZERO,
    );
    app.world_mut().get_mut::<FluidEmitter>(tap).unwrap().rate = f32::NAN;
    run_steps(&mut app, 10);
    assert!(fluid(&mut app).is_empty());
    let stops = &app.world().resource::<Stops>().0;
    assert_eq!(stops.len(), 1);
    assert!(
        matches!(stops[0].reason, PbdError::Negative { .. }),
        "{stops:?}"
    );
    app.world_mut().get_mut::<FluidEmitter>(tap).unwrap().rate = 100.0;
    run_steps(&mut app, 10);
    assert!(!fluid(&mut app).is_empty());
}
