//! Tests of the command-line parsing ([`args`](crate::args)).

use crate::args::*;

fn run(args: &[&str]) -> Args {
    match parse(args.iter().copied()) {
        Ok(Command::Run(a)) => a,
        other => panic!("{args:?} gave {other:?}"),
    }
}

fn error(args: &[&str]) -> String {
    match parse(args.iter().copied()) {
        Err(e) => e.0,
        Ok(c) => panic!("{args:?} accepted as {c:?}"),
    }
}

#[test]
fn defaults_are_the_seeds() {
    let a = run(&["cloth"]);
    assert_eq!(a.scene, Scene::Cloth(ClothArgs::default()));
    assert_eq!(
        ClothArgs::default(),
        ClothArgs {
            width: 40,
            height: 30,
            iterations: 5,
            substeps: 1,
            direct_lines: false,
            dt: 0.01,
            fixed: 2,
            steps: 500,
            mass: 0.5
        }
    );
    assert!(!a.compare_seed);
    assert_eq!(a.repeat, 1);
    assert_eq!(a.threads, default_threads());
    let f = run(&["fluid"]);
    assert_eq!(
        f.scene,
        Scene::Fluid(FluidArgs {
            width: 30,
            height: 30,
            dt: 0.005,
            max_error: 0.1,
            max_iterations: 100,
            viscosity: 0.05,
            relaxation: 1.0,
            resort: 0,
            warmup: None,
            chebyshev: None,
            grid: GridArg::Off,
            forces: ForceArgs::default(),
            steps: 400,
            heights: 0,
            collider_walls: false,
            bodies: 0,
        })
    );
    assert_eq!(f.scene.warmup_steps(), 20);
}

#[test]
fn all_flags_are_read() {
    let a = run(&[
        "cloth",
        "--width",
        "10",
        "--height=7",
        "--iterations",
        "3",
        "--substeps=1",
        "--dt",
        "0.02",
        "--fixed",
        "4",
        "--steps",
        "9",
        "--mass",
        "2",
        "--threads",
        "3",
        "--compare-seed",
    ]);
    assert_eq!(
        a,
        Args {
            scene: Scene::Cloth(ClothArgs {
                width: 10,
                height: 7,
                iterations: 3,
                substeps: 1,
                direct_lines: false,
                dt: 0.02,
                fixed: 4,
                steps: 9,
                mass: 2.0
            }),
            threads: 3,
            compare_seed: true,
            repeat: 1,
        }
    );
    assert_eq!(a.scene.warmup_steps(), 9);
    let f = run(&[
        "fluid",
        "--width",
        "32",
        "--height",
        "33",
        "--dt",
        "0.004",
        "--max-error",
        "0",
        "--max-iterations",
        "7",
        "--viscosity",
        "1",
        "--relaxation",
        "1.5",
        "--resort",
        "50",
        "--heights",
        "25",
        "--warmup",
        "7",
        "--chebyshev",
        "0.9",
        "--grid",
        "on",
        "--steps",
        "60",
        "--walls",
        "colliders",
        "--threads",
        "1",
    ]);
    assert_eq!(
        f.scene,
        Scene::Fluid(FluidArgs {
            width: 32,
            height: 33,
            dt: 0.004,
            max_error: 0.0,
            max_iterations: 7,
            viscosity: 1.0,
            relaxation: 1.5,
            resort: 50,
            warmup: Some(7),
            chebyshev: Some(0.9),
            grid: GridArg::Multigrid,
            forces: ForceArgs::default(),
            steps: 60,
            heights: 25,
            collider_walls: true,
            bodies: 0,
        })
    );
    assert_eq!(f.threads, 1);
}

#[test]
fn help() {
    assert_eq!(parse(["--help"]), Ok(Command::Help));
    assert_eq!(parse(["fluid", "-h"]), Ok(Command::Help));
}

#[test]
fn bad_arguments_are_errors() {
    let cases: &[&[&str]] = &[
        &[],
        &["water"],
        &["cloth", "--width"],
        &["cloth", "--width", "0"],
        &["cloth", "--width", "2001"],
        &["cloth", "--width", "-3"],
        &["cloth", "--width", "4.5"],
        &["cloth", "--width", "abc"],
        &["cloth", "--width", "10", "--width", "12"],
        &["cloth", "--dt", "0"],
        &["cloth", "--dt", "-0.01"],
        &["cloth", "--dt", "NaN"],
        &["cloth", "--dt", "inf"],
        &["cloth", "--fixed", "3"],
        &["cloth", "--fixed", "5"],
        &["cloth", "--fixed", "0"],
        &["cloth", "--iterations", "0"],
        &["cloth", "--substeps", "0"],
        &["cloth", "--substeps", "1001"],
        &["cloth", "--substeps", "10", "--compare-seed"],
        &["cloth", "--direct-lines", "on", "--compare-seed"],
        &["cloth", "--direct-lines", "yes"],
        &["fluid", "--substeps", "2"],
        &["cloth", "--steps", "0"],
        &["cloth", "--mass", "0"],
        &["cloth", "--viscosity", "0.1"],
        &["cloth", "--max-error", "0.1"],
        &["cloth", "--threads", "0"],
        &["cloth", "--threads", "99999"],
        &["cloth", "--repeat", "0"],
        &["fluid", "--repeat", "101"],
        &["cloth", "40"],
        &["cloth", "--bogus", "1"],
        &["cloth", "--compare-seed=yes"],
        &["cloth", "--compare-seed", "--compare-seed"],
        &["fluid", "--iterations", "5"],
        &["fluid", "--fixed", "2"],
        &["fluid", "--mass", "1"],
        &["fluid", "--viscosity", "1.5"],
        &["fluid", "--viscosity", "-0.1"],
        &["fluid", "--relaxation", "0"],
        &["fluid", "--relaxation", "2"],
        &["fluid", "--resort", "-1"],
        &["fluid", "--resort", "10", "--compare-seed"],
        &["fluid", "--warmup", "0"],
        &["fluid", "--chebyshev", "1.5"],
        &["fluid", "--chebyshev", "0.9", "--compare-seed"],
        &["fluid", "--grid", "yes"],
        &["fluid", "--grid", "cg", "--compare-seed"],
        &["fluid", "--grid", "on", "--compare-seed"],
        &["cloth", "--grid", "on"],
        &["cloth", "--warmup", "5"],
        &["fluid", "--max-error", "-1"],
        &["fluid", "--max-iterations", "0"],
        &["fluid", "--max-iterations", "10001"],
        &["fluid", "--steps", "-1"],
        &["fluid", "--dt="],
        &["fluid", "--walls", "bricks"],
        &["cloth", "--walls", "colliders"],
    ];
    for case in cases {
        let message = error(case);
        assert!(!message.is_empty(), "{case:?}");
    }
    assert!(error(&["cloth", "--width", "0"]).contains("--width"));
    assert!(error(&["fluid", "--iterations", "5"]).contains("fluid"));
}
