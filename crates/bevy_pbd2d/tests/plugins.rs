//! The plugin group: a game leaves out what it does not need, and what stays computes the same.

mod common;

use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;
use bevy_pbd2d::fluid::NeighborState;
use bevy_pbd2d::fluid::density::DensityState;
use bevy_pbd2d::prelude::*;
use bevy_pbd2d::{PbdSchedule, PbdSubstepSchedule};
use common::*;

/// The names of the systems of the step and substep schedules (after they have run).
fn step_systems(app: &App) -> Vec<String> {
    let schedules = app.world().resource::<Schedules>();
    let mut names = Vec::new();
    for label in [PbdSchedule.intern(), PbdSubstepSchedule.intern()] {
        let schedule = schedules.get(label).expect("the step schedules exist");
        let systems = schedule
            .systems()
            .expect("the schedule has been initialized");
        names.extend(systems.map(|(_, system)| system.name().to_string()));
    }
    names
}
#[test]
fn a_cloth_only_app_runs_no_fluid_system_and_steps_the_cloth_with_the_same_bits() {
    let cloth = ClothBuilder {
        width: 20,
        height: 15,
        ..default()
    };
    let mut full = app(0.01);
    let mut cloth_only = app_with(0.01, PbdPlugins::default().build().disable::<FluidPlugin>());
    let a = spawn(&mut full, |c| cloth.spawn(c).unwrap());
    let b = spawn(&mut cloth_only, |c| cloth.spawn(c).unwrap());
    for _ in 0..5 {
        run_steps(&mut full, 40);
        run_steps(&mut cloth_only, 40);
        assert_eq!(
            state_bits(&full, &a.particles),
            state_bits(&cloth_only, &b.particles)
        );
    }
    let moved = position(&full, a.particles[299]) - cloth.position(19, 14);
    assert!(moved.length() > 0.5, "the cloth fell: {moved}");

    let full_systems = step_systems(&full);
    let cloth_systems = step_systems(&cloth_only);
    let fluid = |names: &[String]| {
        names
            .iter()
            .filter(|n| n.contains("::fluid::"))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert!(
        fluid(&full_systems).len() >= 5,
        "the full app has the fluid systems: {full_systems:?}"
    );
    assert_eq!(fluid(&cloth_systems), Vec::<String>::new());
    assert!(
        cloth_systems
            .iter()
            .any(|n| n.contains("solve_distance_constraints"))
    );
    let world = cloth_only.world();
    assert!(!world.contains_resource::<FluidSettings>());
    assert!(!world.contains_resource::<NeighborState>());
    assert!(!world.contains_resource::<DensityState>());
    assert_eq!(stats(&cloth_only).fluid_iterations, 0);
}

#[test]
fn fluid_particles_without_the_fluid_plugin_fall_freely() {
    // No density solve: two fluid particles spawned on top of each other stay on top of each
    // other and fall as x = x0 + v t with symplectic Euler, as plain particles.
    let dt = 0.01;
    let mut app = app_with(dt, PbdPlugins::default().build().disable::<FluidPlugin>());
    let x0 = Vec2::new(0.5, 2.0);
    let p = spawn(&mut app, |c| {
        [
            c.spawn((FluidParticle, Position(x0))).id(),
            c.spawn((FluidParticle, Position(x0))).id(),
        ]
    });
    let mut v = Vec2::ZERO;
    let mut x = x0;
    for _ in 0..50 {
        run_steps(&mut app, 1);
        v += dt * Vec2::new(0.0, -9.81);
        x += dt * v;
    }
    assert_eq!(position(&app, p[0]), x);
    assert_eq!(position(&app, p[1]), x);
}

#[test]
fn systems_in_the_outer_sets_run_before_and_after_each_step() {
    #[derive(Resource, Default)]
    struct Seen {
        before: Vec<u64>,
        after: Vec<u64>,
    }
    let mut app = app(0.01);
    app.init_resource::<Seen>().add_systems(
        FixedUpdate,
        (
            (|stats: Res<PbdStats>, mut seen: ResMut<Seen>| seen.before.push(stats.steps))
                .in_set(PbdSystems::First),
            (|stats: Res<PbdStats>, mut seen: ResMut<Seen>| seen.after.push(stats.steps))
                .in_set(PbdSystems::Last),
        ),
    );
    run_steps(&mut app, 3);
    let seen = app.world().resource::<Seen>();
    assert_eq!(seen.before, [0, 1, 2]);
    assert_eq!(seen.after, [1, 2, 3]);
}
