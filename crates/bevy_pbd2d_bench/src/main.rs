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
//! ```
//!
//! Exit status: 0 success, 1 the run (or the seed script) failed, 2 bad arguments.

#![warn(missing_docs)]

mod args;
mod measure;
mod report;
mod scene;
mod seed;
mod soak;
mod summary;

use std::process::ExitCode;

use args::{Command, Scene, USAGE};

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some("soak") {
        return soak_main(std::env::args().skip(2));
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
    let measurement = match measure::run(&mut app, args.scene.warmup_steps(), args.scene.steps()) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return Err(ExitCode::FAILURE);
        }
    };
    let world = app.world();
    let line = match &args.scene {
        Scene::Cloth(c) => report::cloth_line(world, c, args.threads, &measurement),
        Scene::Fluid(f) => report::fluid_line(world, f, args.threads, &measurement),
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

/// `soak [--steps N] [--every N] [--threads N]`: [`soak`]'s long run, one JSON line per window
/// of `--every` steps (defaults: 100 000 steps, windows of 10 000, 1 thread).
fn soak_main(args: impl Iterator<Item = String>) -> ExitCode {
    let (mut steps, mut every, mut threads) = (100_000u64, 10_000u64, 1usize);
    let args: Vec<String> = args.collect();
    for pair in args.chunks(2) {
        let value = pair
            .get(1)
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|&v| v > 0);
        match (pair[0].as_str(), value) {
            ("--steps", Some(v)) => steps = v,
            ("--every", Some(v)) => every = v,
            ("--threads", Some(v)) => threads = v as usize,
            _ => {
                eprintln!("error: soak takes --steps N, --every N, --threads N (N > 0)");
                return ExitCode::from(2);
            }
        }
    }
    let mut app = soak::soak_app(threads);
    soak::run(&mut app, steps, every, |w| println!("{}", soak::line(w)));
    ExitCode::SUCCESS
}
