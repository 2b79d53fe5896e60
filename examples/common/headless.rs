//! `PBD2D_HEADLESS_STEPS=N`: a demo's scene without a window or a renderer, one fixed step per
//! update, for N steps as fast as the machine runs them; then one log line of what the steps
//! cost over the last [`WINDOW`] of them (or the last half, if fewer), and exit.
//!
//! This is how the playground's own scene is timed (issue 36: its 3 000 particles in under
//! 2 ms per step on two threads): `PBD2D_HEADLESS_STEPS=3000 cargo run --release --example
//! playground`. `PBD2D_THREADS=N` sizes the compute pool as the bench's `--threads` does.

use std::time::Instant;

use bevy::app::ScheduleRunnerPlugin;
use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::render::settings::WgpuSettings;
use bevy::tasks::available_parallelism;
use bevy::time::TimeUpdateStrategy;
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use bevy_pbd2d::prelude::*;
use bevy_pbd2d::stats::PhaseTimes;

use super::number_from_env;

/// Steps at the end of a run that its log line describes.
const WINDOW: usize = 500;

/// The run's length from `PBD2D_HEADLESS_STEPS`, if set.
///
/// # Panics
/// When the variable is set to anything but a whole number of steps, at least 1.
pub fn steps_from_env() -> Option<u32> {
    number_from_env("PBD2D_HEADLESS_STEPS", "steps", 1)
}

/// Bevy's default plugins with no window, no winit event loop and no GPU (wgpu without a
/// backend: nothing is drawn, the render sub-app is not built), updated in a loop.
///
/// # Panics
/// When `PBD2D_THREADS` is set to anything but a whole number of threads, at least 1.
pub fn default_plugins() -> impl PluginGroup {
    let threads = number_from_env("PBD2D_THREADS", "threads", 1)
        .map_or_else(available_parallelism, |t| t as usize);
    DefaultPlugins
        .set(WindowPlugin {
            primary_window: None,
            exit_condition: ExitCondition::DontExit,
            ..default()
        })
        .set(RenderPlugin {
            render_creation: WgpuSettings {
                backends: None,
                ..default()
            }
            .into(),
            ..default()
        })
        .set(TaskPoolPlugin {
            task_pool_options: TaskPoolOptions::with_num_threads(threads),
        })
        .disable::<WinitPlugin>()
        .add(ScheduleRunnerPlugin::run_loop(std::time::Duration::ZERO))
}

/// Adds the timing of a headless run of `steps` steps of `time_step` seconds: every update
/// advances the game's time by exactly one step.
pub fn add(app: &mut App, steps: u32, time_step: f32) {
    app.insert_resource(TimeUpdateStrategy::ManualDuration(
        std::time::Duration::from_secs_f32(time_step),
    ))
    .insert_resource(HeadlessRun { steps, ..default() })
    .add_systems(First, start_update)
    .add_systems(Last, record_update);
}

/// One step's figures.
#[derive(Clone, Copy)]
struct Sample {
    /// The simulation step's wall time (`PbdStats::step_time_ms`).
    step_ms: f32,
    /// The whole update's wall time (the scene's systems, avian and ours).
    update_ms: f64,
    phases: PhaseTimes,
    iterations: u32,
}

#[derive(Resource, Default)]
struct HeadlessRun {
    steps: u32,
    started: Option<Instant>,
    last_step: u64,
    samples: Vec<Sample>,
}

fn start_update(mut run: ResMut<HeadlessRun>) {
    run.started = Some(Instant::now());
}

fn record_update(
    mut run: ResMut<HeadlessRun>,
    stats: Res<PbdStats>,
    mut exit: MessageWriter<AppExit>,
) {
    let update_ms = run.started.map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3);
    if stats.steps == run.last_step {
        return;
    }
    run.last_step = stats.steps;
    run.samples.push(Sample {
        step_ms: stats.step_time_ms,
        update_ms,
        phases: stats.phases,
        iterations: stats.fluid_iterations,
    });
    if stats.steps < u64::from(run.steps) {
        return;
    }
    let window = WINDOW.min(run.samples.len().div_ceil(2));
    let last = &run.samples[run.samples.len() - window..];
    let mean = |f: &dyn Fn(&Sample) -> f64| last.iter().map(f).sum::<f64>() / window as f64;
    let mut steps: Vec<f32> = last.iter().map(|s| s.step_ms).collect();
    steps.sort_by(f32::total_cmp);
    let p = |f: fn(&PhaseTimes) -> f32| mean(&|s| f64::from(f(&s.phases)));
    info!(
        "bevy_pbd2d headless: {} steps, {} particles ({} fluid), {} boundary samples; last {window} \
         steps: step {:.3} ms mean, {:.3} median, {:.3} max; whole update {:.3} ms mean; \
         density iterations {:.2}; phases (ms, mean): sync {:.3}, predict {:.3}, neighbours \
         {:.3}, solve {:.3}, grid {:.3}, velocities {:.3}, viscosity {:.3}, contacts {:.3}",
        stats.steps,
        stats.particles,
        stats.fluid_particles,
        stats.boundary_particles,
        mean(&|s| f64::from(s.step_ms)),
        steps[window / 2],
        steps[window - 1],
        mean(&|s| s.update_ms),
        mean(&|s| f64::from(s.iterations)),
        p(|t| t.sync),
        p(|t| t.predict),
        p(|t| t.neighbors),
        p(|t| t.solve),
        p(|t| t.grid),
        p(|t| t.velocities),
        p(|t| t.viscosity),
        p(|t| t.contacts),
    );
    exit.write(AppExit::Success);
}
