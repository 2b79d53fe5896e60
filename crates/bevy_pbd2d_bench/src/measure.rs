//! Stepping the app: warm-up, then the timed steps, checking that every `App::update` runs
//! exactly one fixed step ([`PbdStats::steps`] + 1).

use core::fmt;
use std::time::Instant;

use bevy::prelude::*;
use bevy_pbd2d::prelude::PbdStats;

/// Why stepping failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepError(pub String);

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StepError {}

/// Per-step averages over the timed steps of [`PbdStats::phases`] (ms).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseAverages {
    /// Prediction.
    pub predict: f64,
    /// Grid and neighbour lists.
    pub neighbors: f64,
    /// Constraint projection (distance and density).
    pub solve: f64,
    /// The fluid's grid projection.
    pub grid: f64,
    /// Velocity update.
    pub velocities: f64,
    /// XSPH viscosity.
    pub viscosity: f64,
    /// Particle–collider contacts.
    pub contacts: f64,
    /// Copying in and out of the solver arrays, Ψ.
    pub sync: f64,
}

/// What the timed steps measured.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measurement {
    /// Timed steps.
    pub steps: u32,
    /// Wall time of `App::update` per step (ms).
    pub ms_per_step: f64,
    /// [`PbdStats::step_time_ms`] (the plugin's own step clock, first to last system) per step (ms).
    pub plugin_step_ms: f64,
    /// Process CPU time (user + system, all threads) per step (ms), when `/proc` has it.
    pub cpu_ms_per_step: Option<f64>,
    /// Average density solver iterations per step ([`PbdStats::fluid_iterations`]).
    pub avg_fluid_iterations: f64,
    /// Average grid-projection CG iterations per step ([`PbdStats::grid_iterations`]).
    pub avg_grid_iterations: f64,
    /// Timed steps in which the grid projection ran (some CG iterations).
    pub grid_steps: u64,
    /// Average over the timed steps of the density error the solve ended each step with
    /// ([`PbdStats::avg_density_error_percent`], %).
    pub mean_density_error_percent: f64,
    /// The largest density error a timed step ended with (%): at most the tolerance if every
    /// step met it.
    pub max_density_error_percent: f64,
    /// The most density iterations a timed step took.
    pub max_fluid_iterations: u32,
    /// Average phase times per step.
    pub phases: PhaseAverages,
}

fn steps_run(app: &App) -> u64 {
    app.world().resource::<PbdStats>().steps
}

fn not_one_step(app: &App, update: u64, ran: u64) -> StepError {
    let blocked = app.world().resource::<PbdStats>().blocked.clone();
    let why = blocked
        .map(|b| format!(" (plugin: {b})"))
        .unwrap_or_default();
    StepError(format!(
        "update {update} ran {ran} fixed steps instead of 1{why}"
    ))
}

/// Runs `warmup` (≥ 1) untimed steps, then `steps` timed ones; `warm(step, world)` runs after
/// each warm-up step (`step` counts the steps run), outside the timing.
///
/// The first `App::update` only starts the virtual clock, so it may run no fixed step (it
/// belongs to the warm-up); every later update must run exactly one.
///
/// # Errors
/// [`StepError`] when `warmup` is 0 or an update runs another number of steps (e.g. the
/// plugin refused to step).
pub fn run(
    app: &mut App,
    warmup: u32,
    steps: u32,
    warm: &mut dyn FnMut(u64, &World),
) -> Result<Measurement, StepError> {
    if warmup == 0 {
        return Err(StepError(
            "at least one warm-up step is needed to start the clock".into(),
        ));
    }
    let mut updates = 0u64;
    while steps_run(app) < warmup as u64 {
        let before = steps_run(app);
        app.update();
        updates += 1;
        let ran = steps_run(app) - before;
        if ran > 1 || (ran == 0 && updates > 1) {
            return Err(not_one_step(app, updates, ran));
        }
        if ran == 1 {
            warm(steps_run(app), app.world());
        }
    }

    let mut m = Measurement { steps, ..default() };
    let mut wall = 0.0f64;
    let cpu_before = cpu_time_ms();
    for _ in 0..steps {
        let before = steps_run(app);
        let started = Instant::now();
        app.update();
        wall += started.elapsed().as_secs_f64() * 1e3;
        updates += 1;
        let stats = app.world().resource::<PbdStats>();
        if stats.steps != before + 1 {
            return Err(not_one_step(app, updates, stats.steps - before));
        }
        m.plugin_step_ms += stats.step_time_ms as f64;
        m.avg_fluid_iterations += stats.fluid_iterations as f64;
        m.mean_density_error_percent += stats.avg_density_error_percent as f64;
        let error = stats.avg_density_error_percent as f64;
        m.max_density_error_percent = m.max_density_error_percent.max(error);
        m.max_fluid_iterations = m.max_fluid_iterations.max(stats.fluid_iterations);
        let (p, a) = (stats.phases, &mut m.phases);
        a.predict += p.predict as f64;
        a.neighbors += p.neighbors as f64;
        a.solve += p.solve as f64;
        a.grid += p.grid as f64;
        m.avg_grid_iterations += stats.grid_iterations as f64;
        m.grid_steps += u64::from(stats.grid_iterations > 0);
        a.velocities += p.velocities as f64;
        a.viscosity += p.viscosity as f64;
        a.contacts += p.contacts as f64;
        a.sync += p.sync as f64;
    }
    let cpu_after = cpu_time_ms();

    let n = steps.max(1) as f64;
    m.ms_per_step = wall / n;
    m.plugin_step_ms /= n;
    m.avg_fluid_iterations /= n;
    m.avg_grid_iterations /= n;
    m.mean_density_error_percent /= n;
    m.cpu_ms_per_step = cpu_before.zip(cpu_after).map(|(a, b)| (b - a) / n);
    let a = &mut m.phases;
    for v in [
        &mut a.predict,
        &mut a.neighbors,
        &mut a.solve,
        &mut a.grid,
        &mut a.velocities,
        &mut a.viscosity,
        &mut a.contacts,
        &mut a.sync,
    ] {
        *v /= n;
    }
    Ok(m)
}

/// Whether warm-up step `step` (1-based) of `warmup` is one `--heights every` samples: every
/// `every`-th step of the warm-up's second half; none when `every` is 0.
pub fn samples_height(step: u64, warmup: u32, every: u32) -> bool {
    every > 0 && 2 * step > u64::from(warmup) && step.is_multiple_of(u64::from(every))
}

/// Process CPU time so far, user + system, all threads (ms), from `/proc/self/stat`
/// (fields 14 and 15, in clock ticks of 1/100 s, Linux's fixed `USER_HZ`).
pub fn cpu_time_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may contain spaces.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // after_name starts at field 3 (state): utime is field 14 → index 11, stime 15 → 12.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) * 10.0)
}

/// Peak resident set size (MiB), `VmHWM` of `/proc/self/status`.
pub fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Args, ClothArgs, FluidArgs, Scene};
    use crate::scene::build_app;
    use bevy_pbd2d::particle::SolverState;

    fn small(scene: Scene) -> (App, Measurement) {
        let args = Args {
            scene,
            threads: 1,
            compare_seed: false,
            repeat: 1,
        };
        let mut app = build_app(&args).expect("valid scene");
        let mut warm = 0;
        let m = run(
            &mut app,
            scene.warmup_steps(),
            scene.steps(),
            &mut |step, _| {
                warm += 1;
                assert_eq!(step, warm);
            },
        )
        .expect("one step per update");
        assert_eq!(warm, u64::from(scene.warmup_steps()));
        (app, m)
    }

    #[test]
    fn every_update_runs_one_step() {
        let scene = Scene::Cloth(ClothArgs {
            width: 6,
            height: 4,
            steps: 25,
            ..default()
        });
        let (app, m) = small(scene);
        let stats = app.world().resource::<PbdStats>();
        assert_eq!(stats.steps, 45);
        assert!(
            (stats.sim_time - 45.0 * 0.01).abs() < 1e-6,
            "{}",
            stats.sim_time
        );
        assert_eq!(m.steps, 25);
        assert!(m.ms_per_step > 0.0 && m.phases.solve > 0.0);
        assert_eq!(app.world().resource::<SolverState>().len(), 24);

        let scene = Scene::Fluid(FluidArgs {
            width: 4,
            height: 3,
            steps: 3,
            ..default()
        });
        let (app, m) = small(scene);
        assert_eq!(app.world().resource::<PbdStats>().steps, 6);
        assert_eq!(app.world().resource::<SolverState>().fluid_count, 12);
        assert_eq!(m.steps, 3);
    }

    #[test]
    fn same_scene_same_state() {
        let scene = Scene::Fluid(FluidArgs {
            width: 5,
            height: 5,
            steps: 10,
            ..default()
        });
        let hash = |app: &App| crate::report::state_hash(app.world().resource::<SolverState>());
        assert_eq!(hash(&small(scene).0), hash(&small(scene).0));
    }

    #[test]
    fn heights_are_sampled_over_the_second_half() {
        let steps = |warmup, every| {
            (1..=u64::from(warmup))
                .filter(|&s| samples_height(s, warmup, every))
                .collect::<Vec<_>>()
        };
        assert_eq!(steps(1000, 100), [600, 700, 800, 900, 1000]);
        assert_eq!(steps(8000, 100).len(), 40);
        assert_eq!(steps(9, 3), [6, 9]);
        assert!(steps(1000, 0).is_empty());
    }

    #[test]
    fn warmup_is_required() {
        let args = Args {
            scene: Scene::Cloth(ClothArgs::default()),
            threads: 1,
            compare_seed: false,
            repeat: 1,
        };
        let mut app = build_app(&args).expect("valid scene");
        assert!(run(&mut app, 0, 5, &mut |_, _| {}).is_err());
    }

    #[test]
    fn proc_figures_are_read() {
        if std::path::Path::new("/proc/self/status").exists() {
            assert!(peak_rss_mb().is_some_and(|mb| mb > 0.0));
            assert!(cpu_time_ms().is_some_and(|ms| ms >= 0.0));
        }
    }
}
