//! `bevy_pbd2d_bench`: a headless benchmark of the bevy_pbd2d plugin.
//!
//! Builds the reference demos' scenes (cloth, dam-break fluid) through the plugin's public API,
//! steps a real `App` (`MinimalPlugins` + `PbdPlugins`, one fixed step per `App::update`) and
//! prints one JSON line with the same keys as `../shared/tools/seed-bench.js` plus thread
//! count, peak RSS, a hash of the final state and per-phase times. With `--compare-seed` it
//! then runs `seed-bench.js` with the same parameters and prints its line and a speedup line;
//! `--repeat N` does all that N times, interleaved, and adds a line of medians.
//!
//! ```text
//! cargo run --release -p bevy_pbd2d_bench -- cloth --steps 500 --threads 2
//! cargo run --release -p bevy_pbd2d_bench -- fluid --width 100 --height 100 --steps 100 --compare-seed
//! cargo run --release -p bevy_pbd2d_bench -- soak --steps 100000 --every 10000
//! cargo run --release -p bevy_pbd2d_bench -- render --frames 60 --threads 2
//! ```
//!
//! Exit status: 0 success, 1 the run (or the seed script) failed, 2 bad arguments.

#![warn(missing_docs)]

mod args;
#[cfg(test)]
mod args_tests;
mod measure;
mod render;
mod report;
mod scene;
mod seed;
mod soak;
mod summary;

use std::process::ExitCode;

use args::{Command, Scene, USAGE};

fn main() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        Some("soak") => return soak_main(std::env::args().skip(2)),
        Some("render") => return render_main(std::env::args().skip(2)),
        _ => {}
    }
    let args = match args::parse(std::env::args().skip(1)) {
        Ok(Command::Run(args)) => args,
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };

    let (mut ours, mut seeds) = (Vec::new(), Vec::new());
    for _ in 0..args.repeat {
        match run_once(&args) {
            Ok((our_ms, seed_ms)) => {
                ours.push(our_ms);
                seeds.extend(seed_ms);
            }
            Err(code) => return code,
        }
    }
    if args.repeat > 1 {
        println!(
            "{}",
            summary::summary_line(args.scene.name(), args.threads, &ours, &seeds)
        );
    }
    ExitCode::SUCCESS
}

/// One run: builds the scene, measures it and prints its line, then (with `--compare-seed`)
/// runs the seed and prints its line and the comparison. Returns both `ms_per_step`.
fn run_once(args: &args::Args) -> Result<(f64, Option<f64>), ExitCode> {
    let mut app = match scene::build_app(args) {
        Ok(app) => app,
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            return Err(ExitCode::from(2));
        }
    };
    let warmup = args.scene.warmup_steps();
    // The median height's samples over the warm-up's second half (`--heights`).
    let mut heights = Vec::new();
    let mut warm = |step: u64, world: &bevy::prelude::World| {
        if let Scene::Fluid(f) = &args.scene
            && measure::samples_height(step, warmup, f.heights)
        {
            heights.extend(report::median_height_ratio(world, f));
        }
    };
    let measurement = match measure::run(&mut app, warmup, args.scene.steps(), &mut warm) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return Err(ExitCode::FAILURE);
        }
    };
    let world = app.world();
    let line = match &args.scene {
        Scene::Cloth(c) => report::cloth_line(world, c, args.threads, &measurement),
        Scene::Fluid(f) => report::fluid_line(world, f, args.threads, &measurement, &heights),
    };
    println!("{line}");
    if !args.compare_seed {
        return Ok((measurement.ms_per_step, None));
    }
    if let Scene::Cloth(c) = &args.scene
        && c.mass != 0.5
    {
        eprintln!(
            "note: seed-bench.js always uses a particle mass of 0.5 kg (ours: {})",
            c.mass
        );
    }
    match seed::run_seed(&args.scene) {
        Ok(seed_line) => {
            println!("{seed_line}");
            println!(
                "{}",
                seed::comparison_line(&args.scene, args.threads, &line, &seed_line)
            );
            match seed::json_number(&seed_line, "ms_per_step") {
                Some(seed_ms) => Ok((measurement.ms_per_step, Some(seed_ms))),
                None => {
                    eprintln!("error: --compare-seed: the seed's line has no ms_per_step");
                    Err(ExitCode::FAILURE)
                }
            }
        }
        Err(e) => {
            eprintln!("error: --compare-seed: {e}");
            Err(ExitCode::FAILURE)
        }
    }
}

/// The `--name N` pairs of a subcommand (N > 0) into `values`, in the order of `names`.
fn counts(
    args: impl Iterator<Item = String>,
    names: &[&str],
    values: &mut [u64],
) -> Result<(), String> {
    let args: Vec<String> = args.collect();
    for pair in args.chunks(2) {
        let value = pair
            .get(1)
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|&v| v > 0);
        match (names.iter().position(|n| *n == pair[0]), value) {
            (Some(k), Some(v)) => values[k] = v,
            _ => return Err(format!("takes {} (each N > 0)", names.join(" N, ") + " N")),
        }
    }
    Ok(())
}

/// `render [--frames N] [--threads N]`: [`render`]'s CPU time of the render update per frame,
/// one JSON line per scene (defaults: 60 frames, 1 thread).
fn render_main(args: impl Iterator<Item = String>) -> ExitCode {
    let mut values = [60, 1];
    if let Err(e) = counts(args, &["--frames", "--threads"], &mut values) {
        eprintln!("error: render {e}");
        return ExitCode::from(2);
    }
    match render::run(values[0] as usize, values[1] as usize) {
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `soak [--steps N] [--every N] [--threads N]`: [`soak`]'s long run, one JSON line per window
/// of `--every` steps (defaults: 100 000 steps, windows of 10 000, 1 thread).
fn soak_main(args: impl Iterator<Item = String>) -> ExitCode {
    let mut values = [100_000, 10_000, 1];
    if let Err(e) = counts(args, &["--steps", "--every", "--threads"], &mut values) {
        eprintln!("error: soak {e}");
        return ExitCode::from(2);
    }
    let [steps, every, threads] = values;
    let mut app = soak::soak_app(threads as usize);
    soak::run(&mut app, steps, every, |w| println!("{}", soak::line(w)));
    ExitCode::SUCCESS
}
