//! Shared set-up of the headless App tests: `MinimalPlugins` + `PbdPlugins`, a fixed Δt and a
//! manual clock so that every `app.update()` advances virtual time by exactly Δt.
#![allow(dead_code)]

use core::time::Duration;

use bevy::app::Plugins;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_pbd2d::particle::SolverState;
use bevy_pbd2d::prelude::*;

/// A headless app stepping the simulation with step `dt` (s).
pub fn app(dt: f32) -> App {
    app_with(dt, PbdPlugins::default())
}

/// A headless app with `plugins` (some or all of bevy_pbd2d's) stepping with step `dt` (s).
pub fn app_with<M>(dt: f32, plugins: impl Plugins<M>) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, plugins));
    set_time_step(&mut app.world_mut().resource_mut::<Time<Fixed>>(), dt).unwrap();
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        dt,
    )));
    app.finish();
    app.cleanup();
    app
}

/// Runs `f` with `Commands` on the app's world and applies them.
pub fn spawn<R>(app: &mut App, f: impl FnOnce(&mut Commands) -> R) -> R {
    let world = app.world_mut();
    let mut commands = world.commands();
    let result = f(&mut commands);
    world.flush();
    result
}

/// Updates the app until `n` more fixed steps have run.
pub fn run_steps(app: &mut App, n: u64) {
    let target = steps(app) + n;
    let mut guard = 0;
    while steps(app) < target {
        app.update();
        guard += 1;
        assert!(guard < 4 * n + 10, "fixed steps are not running");
    }
}

/// Steps run so far.
pub fn steps(app: &App) -> u64 {
    app.world().resource::<PbdStats>().steps
}

/// Position of a particle (m).
pub fn position(app: &App, entity: Entity) -> Vec2 {
    app.world().get::<Position>(entity).unwrap().0
}

/// Velocity of a particle (m/s).
pub fn velocity(app: &App, entity: Entity) -> Vec2 {
    app.world().get::<Velocity>(entity).unwrap().0
}

/// The solver's arrays.
pub fn solver(app: &App) -> &SolverState {
    app.world().resource::<SolverState>()
}

/// The last step's statistics.
pub fn stats(app: &App) -> &PbdStats {
    app.world().resource::<PbdStats>()
}

/// Whether every particle position and velocity component is finite.
pub fn all_finite(app: &mut App) -> bool {
    let world = app.world_mut();
    let mut q = world.query::<(&Position, &Velocity)>();
    q.iter(world)
        .all(|(p, v)| p.0.is_finite() && v.0.is_finite())
}

/// The bits of each particle's position and velocity, in the order given.
pub fn state_bits(app: &App, particles: &[Entity]) -> Vec<[u32; 4]> {
    particles
        .iter()
        .map(|&e| {
            let (x, v) = (position(app, e), velocity(app, e));
            [x.x, x.y, v.x, v.y].map(f32::to_bits)
        })
        .collect()
}
