//! Pausing and single-stepping the simulation with `PbdClock`, headless.

mod common;

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;
use common::*;

/// An app with a 10 × 8 cloth, and its particles.
fn cloth_app() -> (App, Vec<Entity>) {
    let mut app = app(0.01);
    let cloth = spawn(&mut app, |c| {
        ClothBuilder {
            width: 10,
            height: 8,
            ..default()
        }
        .spawn(c)
        .unwrap()
    });
    (app, cloth.particles)
}

fn positions(app: &App, particles: &[Entity]) -> Vec<Vec2> {
    particles.iter().map(|&e| position(app, e)).collect()
}

fn clock(app: &mut App) -> Mut<'_, PbdClock> {
    app.world_mut().resource_mut::<PbdClock>()
}

#[test]
fn a_paused_simulation_holds_while_the_app_runs_and_steps_once_per_request() {
    let (mut paused, particles) = cloth_app();
    let (mut reference, reference_particles) = cloth_app();
    run_steps(&mut paused, 10);
    run_steps(&mut reference, 10);

    clock(&mut paused).pause();
    let held = positions(&paused, &particles);
    let virtual_before = paused.world().resource::<Time<Virtual>>().elapsed();
    for _ in 0..20 {
        paused.update();
    }
    assert_eq!(steps(&paused), 10, "no step while paused");
    assert_eq!(positions(&paused, &particles), held);
    assert!(
        paused.world().resource::<Time<Virtual>>().elapsed() > virtual_before,
        "the app's time goes on"
    );

    // Single steps: each request runs exactly one step, the one an unpaused app runs next.
    for k in 1..=3 {
        clock(&mut paused).step(1);
        assert_eq!(clock(&mut paused).pending_steps(), 1);
        for _ in 0..5 {
            paused.update();
        }
        run_steps(&mut reference, 1);
        assert_eq!(steps(&paused), 10 + k);
        assert_eq!(clock(&mut paused).pending_steps(), 0);
        assert!(clock(&mut paused).is_paused());
        assert_eq!(
            positions(&paused, &particles),
            positions(&reference, &reference_particles),
            "single step {k}"
        );
    }

    // Several at once, then continuing.
    clock(&mut paused).step(4);
    for _ in 0..10 {
        paused.update();
    }
    assert_eq!(steps(&paused), 17);
    clock(&mut paused).unpause();
    run_steps(&mut paused, 3);
    run_steps(&mut reference, 7);
    assert_eq!(
        positions(&paused, &particles),
        positions(&reference, &reference_particles)
    );
    assert_ne!(positions(&paused, &particles), held, "the cloth moved on");
}

#[test]
fn toggle_and_unpause_drop_pending_steps() {
    let (mut app, _) = cloth_app();
    clock(&mut app).step(5);
    clock(&mut app).toggle();
    assert!(!clock(&mut app).is_paused());
    assert_eq!(clock(&mut app).pending_steps(), 0);
    clock(&mut app).toggle();
    assert!(clock(&mut app).is_paused());
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(steps(&app), 0);
}

#[test]
fn a_single_step_waits_while_the_settings_block_the_simulation() {
    let (mut app, _) = cloth_app();
    run_steps(&mut app, 2);
    clock(&mut app).step(1);
    app.world_mut().resource_mut::<SolverSettings>().iterations = 0;
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(steps(&app), 2, "the gate refused the step");
    assert_eq!(clock(&mut app).pending_steps(), 1, "the step is still owed");
    app.world_mut().resource_mut::<SolverSettings>().iterations = 5;
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(steps(&app), 3);
    assert_eq!(clock(&mut app).pending_steps(), 0);
}
