//! Runaway particles: a NaN written into a cloth particle, a particle flying out of the world.
//!
//! Naive: a NaN position enters the step, and through its distance constraints makes the whole
//! cloth NaN in one step; a particle that escaped keeps flying at the speed limit forever.

use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::message::Messages;
use bevy::prelude::*;
use bevy_pbd2d::particle::{ParticleRunaway, RunawayAction, RunawayGuard, RunawayReason};
use bevy_pbd2d::prelude::*;

use crate::common::*;

/// The guard's messages of the last update.
fn reports(app: &App) -> Vec<ParticleRunaway> {
    let messages = app.world().resource::<Messages<ParticleRunaway>>();
    messages.get_cursor().read(messages).copied().collect()
}

#[test]
fn a_nan_written_into_a_cloth_particle_is_taken_out_before_it_spreads() {
    let (mut app, cloth) = crate::c0_app();
    run_steps(&mut app, 20);
    let bad = cloth.particles[210];
    let last_good = position(&app, bad);
    app.world_mut().get_mut::<Position>(bad).unwrap().0 = Vec2::new(f32::NAN, 1.0);
    run_steps(&mut app, 1);
    let report = reports(&app);
    assert_eq!(report.len(), 1, "{report:?}");
    assert_eq!(report[0].entity, bad);
    assert_eq!(report[0].reason, RunawayReason::NotFinite);
    assert!(report[0].before_step);
    assert!(
        app.world().get::<Disabled>(bad).is_some(),
        "disabled, not despawned"
    );
    // Its neighbours step on without it, and nothing is NaN.
    for _ in 0..100 {
        run_steps(&mut app, 1);
        assert!(all_finite(&mut app));
    }
    assert_eq!(stats(&app).particles, 20 * 20 - 1);
    // Enabled again with a good position, it rejoins the cloth.
    let world = app.world_mut();
    world.get_mut::<Position>(bad).unwrap().0 = last_good;
    world.entity_mut(bad).remove::<Disabled>();
    run_steps(&mut app, 10);
    assert_eq!(stats(&app).particles, 20 * 20);
    assert!(all_finite(&mut app));
}

/// A lone fluid particle flying right at 5 m/s without gravity, in bounds of ±1 m, with `action`.
fn flyer(action: RunawayAction) -> (App, Entity) {
    let mut app = app(0.005);
    app.world_mut().resource_mut::<Gravity>().0 = Vec2::ZERO;
    let mut guard = RunawayGuard {
        action,
        ..default()
    };
    guard.set_bounds(Rect::new(-1.0, -1.0, 1.0, 1.0)).unwrap();
    app.insert_resource(guard);
    let w = InverseMass::from_mass(FluidSettings::default().particle_mass()).unwrap();
    let particle = spawn(&mut app, |c| {
        c.spawn((
            FluidParticle,
            Position(Vec2::ZERO),
            Velocity(Vec2::X * 5.0),
            w,
        ))
        .id()
    });
    (app, particle)
}

#[test]
fn a_particle_leaving_the_world_bounds_is_disabled_at_its_last_position_inside() {
    let (mut app, particle) = flyer(RunawayAction::Disable);
    let mut caught = None;
    for step in 1..=100 {
        run_steps(&mut app, 1);
        if let Some(&report) = reports(&app).first() {
            caught = Some((step, report));
            break;
        }
    }
    let (step, report) = caught.expect("never reported");
    // 5 m/s × 0.005 s = 2.5 cm a step: it passes x = 1 m in step 40 (x = 1.0 after it, in
    // float arithmetic a hair either side) or 41.
    assert!((40..=41).contains(&step), "caught at step {step}");
    assert_eq!(report.reason, RunawayReason::OutOfBounds);
    assert!(!report.before_step);
    assert!(report.position.x > 1.0);
    let world = app.world();
    assert!(world.get::<Disabled>(particle).is_some());
    let kept = world.get::<Position>(particle).unwrap().0;
    assert!(
        kept.x <= 1.0 && kept.x > 0.9,
        "last good position kept: {kept}"
    );
    run_steps(&mut app, 10);
    assert_eq!(stats(&app).particles, 0);
}

#[test]
fn a_particle_leaving_the_world_bounds_can_be_despawned_instead() {
    let (mut app, particle) = flyer(RunawayAction::Despawn);
    run_steps(&mut app, 45);
    assert!(app.world().get_entity(particle).is_err(), "despawned");
    assert_eq!(stats(&app).particles, 0);
}
