//! Building the headless [`App`] and the seeds' scenes through the plugin's public API.
//!
//! The app is what the demos run minus rendering: `MinimalPlugins` (with the compute task pool
//! sized by `--threads`) and `PbdPlugins::default()` in `FixedUpdate`. `Time<Fixed>` is set to
//! Δt with [`set_time_step`] and time advances by exactly that timestep per `App::update`
//! ([`TimeUpdateStrategy::ManualDuration`]), so every update after the first runs one fixed step
//! (the first update only starts the clock).

use core::time::Duration;

use bevy::app::{TaskPoolOptions, TaskPoolPlugin, TaskPoolThreadAssignmentPolicy};
use bevy::ecs::schedule::SingleThreadedExecutor;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_pbd2d::error::PbdError;
use bevy_pbd2d::prelude::{
    DamBreakBuilder, DamBreakWalls, FixedCorners, FluidSettings, PbdPlugins, SolverSettings,
    set_time_step,
};
use bevy_pbd2d::scenes::cloth::ClothBuilder;

use crate::args::{Args, ClothArgs, FluidArgs, GridArg, Scene};
use bevy_pbd2d::fluid::{ArtificialPressure, GridProjection};

/// Task pool options with exactly `threads` compute threads (one IO and one async-compute
/// thread, which the simulation does not use).
pub fn task_pool_options(threads: usize) -> TaskPoolOptions {
    let one = |min_threads, max_threads| TaskPoolThreadAssignmentPolicy {
        min_threads,
        max_threads,
        percent: 1.0,
        on_thread_spawn: None,
        on_thread_destroy: None,
    };
    TaskPoolOptions {
        min_total_threads: threads + 2,
        max_total_threads: threads + 2,
        io: one(1, 1),
        async_compute: one(1, 1),
        compute: one(threads, threads),
    }
}

/// Builds the app with the scene of `args` spawned (not yet stepped: `finish` and `cleanup`
/// have run, the first `update` will run `Startup` and start the clock).
///
/// # Errors
/// [`PbdError`] when the plugin's setters or builders refuse a parameter.
pub fn build_app(args: &Args) -> Result<App, PbdError> {
    let mut app = headless_app(args.threads, args.scene.dt() as f32)?;
    if let Scene::Fluid(f) = args.scene
        && f.bodies > 0
    {
        // avian in its default schedule (FixedPostUpdate, after our step), with our gravity.
        app.add_plugins(avian2d::prelude::PhysicsPlugins::default());
        let g = app.world().resource::<bevy_pbd2d::prelude::Gravity>().0;
        app.insert_resource(avian2d::prelude::Gravity(g));
    }
    let world = app.world_mut();
    match args.scene {
        Scene::Cloth(c) => spawn_cloth(world, &c)?,
        Scene::Fluid(f) => spawn_fluid(world, &f)?,
    }
    finish(&mut app);
    Ok(app)
}

/// The bench's app without a scene: `MinimalPlugins` with `threads` compute threads and
/// `PbdPlugins`, Δt = `dt` (s), one timestep of time per update.
///
/// # Errors
/// [`PbdError`] when `set_time_step` refuses `dt`.
pub fn headless_app(threads: usize, dt: f32) -> Result<App, PbdError> {
    headless_app_with(threads, dt, PbdPlugins::default())
}

/// [`headless_app`] with `plugins` instead of `PbdPlugins` (which they must include).
///
/// # Errors
/// [`PbdError`] when `set_time_step` refuses `dt`.
pub fn headless_app_with<M>(
    threads: usize,
    dt: f32,
    plugins: impl bevy::app::Plugins<M>,
) -> Result<App, PbdError> {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins.set(TaskPoolPlugin {
            task_pool_options: task_pool_options(threads),
        }),
        plugins,
    ));

    let world = app.world_mut();
    let step = {
        let mut fixed = world.resource_mut::<Time<Fixed>>();
        set_time_step(&mut fixed, dt)?;
        fixed.timestep()
    };
    // Exactly one timestep of real (and so virtual) time per update; a Δt above the virtual
    // clock's default 250 ms clamp must not be cut.
    world.insert_resource(TimeUpdateStrategy::ManualDuration(step));
    let mut virtual_time = world.resource_mut::<Time<Virtual>>();
    let max_delta = virtual_time
        .max_delta()
        .max(step + Duration::from_millis(1));
    virtual_time.set_max_delta(max_delta);
    Ok(app)
}

/// Applies what was spawned and finishes the app's plugins (the first `update` then runs
/// `Startup` and starts the clock), with single-threaded schedules.
pub fn finish(app: &mut App) {
    app.world_mut().flush();
    app.finish();
    app.cleanup();
    single_threaded_schedules(app);
}

/// Gives every schedule of the app the single-threaded executor. A headless simulation has
/// nothing to run beside the solver, whose systems are chained anyway; the multi-threaded
/// executor would only add its per-schedule wake-up cost to every update. The solver's own
/// passes still run on the compute task pool.
fn single_threaded_schedules(app: &mut App) {
    let mut schedules = app.world_mut().resource_mut::<Schedules>();
    for (_, schedule) in schedules.iter_mut() {
        schedule.set_executor(SingleThreadedExecutor::new());
    }
}

/// The PBD demo's cloth: [`ClothBuilder`] defaults (spacing 0.2 m, origin at the top-left
/// particle) with the command line's size, mass, pinned corners, iterations, substeps and
/// line solve.
fn spawn_cloth(world: &mut World, c: &ClothArgs) -> Result<(), PbdError> {
    let mut settings = world.resource_mut::<SolverSettings>();
    settings.set_iterations(c.iterations)?;
    settings.set_substeps(c.substeps)?;
    settings.direct_lines = c.direct_lines;
    let builder = ClothBuilder {
        width: c.width,
        height: c.height,
        mass: c.mass as f32,
        fixed: FixedCorners::from_count(c.fixed)?,
        ..default()
    };
    builder.spawn(&mut world.commands())?;
    Ok(())
}

/// The command line's dam break: its block size and walls, at any size the line accepts (up to
/// 2000 × 2000, past the builder's default limit).
pub fn dam_break_builder(f: &FluidArgs) -> DamBreakBuilder {
    DamBreakBuilder {
        width: f.width,
        height: f.height,
        walls: if f.collider_walls {
            DamBreakWalls::Collider
        } else {
            DamBreakWalls::Samples
        },
        max_particles: u64::MAX,
        ..default()
    }
}

/// The PBF demo's dam break: [`DamBreakBuilder`] with the command line's block size and
/// [`FluidSettings`] defaults except tolerance, iteration cap and viscosity.
fn spawn_fluid(world: &mut World, f: &FluidArgs) -> Result<(), PbdError> {
    let settings = {
        let mut settings = world.resource_mut::<FluidSettings>();
        settings.set_max_density_error_percent(f.max_error as f32)?;
        settings.set_max_iterations(f.max_iterations)?;
        settings.set_viscosity(f.viscosity as f32)?;
        settings.set_over_relaxation(f.relaxation as f32)?;
        settings.resort_interval = f.resort;
        settings.set_chebyshev(f.chebyshev.map(|rho| rho as f32))?;
        settings.grid_projection = match f.grid {
            GridArg::Off => None,
            GridArg::Cg => Some(GridProjection {
                multigrid: false,
                ..default()
            }),
            GridArg::Multigrid => Some(GridProjection::default()),
            GridArg::Deep => FluidSettings::game().grid_projection,
        };
        settings.artificial_pressure = f.forces.s_corr.then(ArtificialPressure::default);
        settings.vorticity_confinement = f.forces.vorticity as f32;
        settings.surface_tension = f.forces.surface_tension as f32;
        settings.adhesion = f.forces.adhesion as f32;
        settings.validate()?;
        *settings
    };
    let builder = dam_break_builder(f);
    let dam_break = builder.spawn(&mut world.commands(), &settings)?;
    if f.bodies > 0 {
        world.flush();
        spawn_bodies(world, &builder, &settings, dam_break.collider, f.bodies);
    }
    Ok(())
}

/// `count` avian dynamic boxes of side 0.4 m and density 0.5 ρ0 in rows above the fluid,
/// and the dam break's box made avian's too (a static polyline on its collider's entity, which
/// stays a [`ParticleCollider`](bevy_pbd2d::prelude::ParticleCollider) for the particles).
fn spawn_bodies(
    world: &mut World,
    builder: &DamBreakBuilder,
    settings: &FluidSettings,
    walls: Option<Entity>,
    count: u32,
) {
    use avian2d::prelude::{Collider, ColliderDensity, RigidBody};
    let (lo, hi) = builder.box_bounds(settings);
    if let Some(walls) = walls {
        let corners = builder.box_polyline(settings).vertices;
        world
            .entity_mut(walls)
            .insert((RigidBody::Static, Collider::polyline(corners, None)));
    }
    // Above the block (its height is 2r per row), in rows of up to 10 across the box.
    let top = lo.y + 2.0 * settings.particle_radius * builder.height as f32 + 0.5;
    let side = 0.4;
    let across = count.min(10);
    let step = (hi.x - lo.x) / across as f32;
    for k in 0..count {
        let (row, column) = (k / across, k % across);
        let at = Vec2::new(
            lo.x + (column as f32 + 0.5) * step,
            top + row as f32 * 2.0 * side,
        );
        world.spawn((
            RigidBody::Dynamic,
            Collider::rectangle(side, side),
            ColliderDensity(0.5 * settings.rest_density),
            Transform::from_translation(at.extend(0.0)),
        ));
    }
}
