//! The lines of a grid solved directly (`SolverSettings::direct_lines`, issue 20): the rigid
//! reference cloth stays within 1 % with 10 substeps of one iteration, and turning the option
//! off gives back the reference's Gauss-Seidel layout, row for row.

mod common;

use bevy::prelude::*;
use bevy_pbd2d::constraints::ConstraintState;
use bevy_pbd2d::constraints::row::DistanceRow;
use bevy_pbd2d::prelude::*;

use common::*;

/// The reference cloth (40 × 30, α = 0, two pinned corners) after 500 steps of 0.01 s with
/// `substeps` × `iterations`: its largest relative stretch, from the statistics and measured
/// over every constraint here.
fn cloth_stretch(substeps: u32, iterations: u32, direct_lines: bool) -> f32 {
    let mut app = solver_app(0.01, substeps, iterations);
    app.world_mut()
        .resource_mut::<SolverSettings>()
        .direct_lines = direct_lines;
    let cloth = spawn(&mut app, |c| ClothBuilder::default().spawn(c).unwrap());
    run_steps(&mut app, 500);
    let measured = cloth
        .constraints
        .iter()
        .map(|&e| {
            let c = *app.world().get::<DistanceConstraint>(e).unwrap();
            let [a, b] = c.particles.map(|p| position(&app, p));
            ((a - b).length() - c.rest_length).abs() / c.rest_length
        })
        .fold(0.0, f32::max);
    let reported = stats(&app).max_relative_stretch;
    assert!(
        (measured - reported).abs() < 1e-5,
        "statistic {reported} vs measured {measured}"
    );
    assert_eq!(stats(&app).constraints, cloth.constraints.len());
    measured
}

#[test]
fn direct_lines_hold_a_rigid_cloth_within_one_percent_at_ten_substeps_of_one_iteration() {
    let gauss_seidel = cloth_stretch(10, 1, false);
    let lines = cloth_stretch(10, 1, true);
    assert!(lines < 0.01, "10 × 1 with direct lines: stretch {lines}");
    assert!(
        lines < 0.1 * gauss_seidel,
        "10 × 1: lines {lines} against Gauss-Seidel {gauss_seidel}"
    );
    // Half the substeps still hold it (Gauss-Seidel needs 20 for 0.43 %).
    let five = cloth_stretch(5, 1, true);
    assert!(five < 0.01, "5 × 1 with direct lines: stretch {five}");
}

/// The constraint layout of the reference cloth (rows in projection order and their entities)
/// after one step with `direct_lines` set to each value of `toggles` in turn.
fn layouts(toggles: &[bool]) -> Vec<(Vec<DistanceRow>, Vec<Entity>)> {
    let mut app = solver_app(0.01, 1, 5);
    spawn(&mut app, |c| ClothBuilder::default().spawn(c).unwrap());
    toggles
        .iter()
        .map(|&on| {
            app.world_mut()
                .resource_mut::<SolverSettings>()
                .direct_lines = on;
            run_steps(&mut app, 1);
            let state = app.world().resource::<ConstraintState>();
            (state.rows.clone(), state.entities.clone())
        })
        .collect()
}

#[test]
fn turning_direct_lines_off_again_gives_back_the_reference_layout() {
    let reference = layouts(&[false]).remove(0);
    let toggled = layouts(&[true, false]);
    let (with_lines, back) = (&toggled[0], &toggled[1]);
    // Every constraint is still there, in another order: the rows and columns last.
    assert_eq!(with_lines.0.len(), reference.0.len());
    assert_ne!(with_lines.1, reference.1);
    // Off again: the reference's Gauss-Seidel order, row for row.
    assert_eq!(back.0, reference.0);
    assert_eq!(back.1, reference.1);
}
