//! Fluid rows re-sorted by grid cell (`FluidSettings::resort_interval`, issue 21 item 2): the
//! rows end up in cell order, every particle's index names its row, nothing moves, and the
//! results stay the same for any thread count.

mod common;

use bevy::prelude::*;
use bevy_pbd2d::SolverThreads;
use bevy_pbd2d::particle::SolverIndex;
use bevy_pbd2d::prelude::*;
use common::*;

/// The 30 × 30 dam break, re-sorted every `interval` steps (0: never), on `threads` threads.
fn dam_break(interval: u32, threads: usize) -> (App, Vec<Entity>) {
    let mut app = app(0.005);
    let settings = FluidSettings {
        resort_interval: interval,
        ..default()
    };
    app.insert_resource(settings);
    app.insert_resource(SolverThreads {
        max_threads: Some(threads),
        ..default()
    });
    let scene = spawn(&mut app, |c| {
        DamBreakBuilder::default().spawn(c, &settings).unwrap()
    });
    (app, scene.fluid)
}

/// The grid cell (row, column) of `p` for cells of h.
fn cell(p: Vec2, h: f32) -> (i32, i32) {
    ((p.y / h).floor() as i32, (p.x / h).floor() as i32)
}

#[test]
fn a_re_sort_puts_the_rows_in_cell_order_and_moves_nothing() {
    let (mut sorted, fluid) = dam_break(100, 1);
    let (mut plain, _) = dam_break(0, 1);
    // 100 steps of the dam break: its rows are still in spawn order, not the cells'.
    run_steps(&mut sorted, 100);
    run_steps(&mut plain, 100);
    let h = FluidSettings::default().support_radius;
    let before: Vec<Vec2> = fluid.iter().map(|&e| position(&sorted, e)).collect();
    let keys = |app: &App| -> Vec<(i32, i32)> {
        let rows = &solver(app).entities[..solver(app).fluid_count];
        rows.iter()
            .map(|&e| cell(before[fluid.iter().position(|&f| f == e).unwrap()], h))
            .collect()
    };
    assert!(!keys(&sorted).is_sorted(), "already in cell order before");
    // 100 steps have run: the next one re-sorts first.
    run_steps(&mut sorted, 1);
    run_steps(&mut plain, 1);
    let state = solver(&sorted);
    assert_eq!(state.fluid_count, fluid.len());
    assert!(keys(&sorted).is_sorted(), "rows not in cell order");
    // Every particle's index names its row.
    for (row, &e) in state.entities.iter().enumerate() {
        let index = sorted.world().get::<SolverIndex>(e).unwrap();
        assert_eq!(index.row(), row as u32, "row {row}");
    }
    // The step after the re-sort moves every particle as the unsorted one does, but for the
    // order of the sums' terms.
    let apart = fluid
        .iter()
        .map(|&e| (position(&sorted, e) - position(&plain, e)).length())
        .fold(0.0, f32::max);
    assert!(
        apart < 1e-5,
        "a re-sorted step moved a particle {apart} m further"
    );
}

#[test]
fn re_sorted_rows_give_the_same_bits_on_one_and_two_threads() {
    let runs: Vec<Vec<[u32; 4]>> = [1, 2]
        .into_iter()
        .map(|threads| {
            let (mut app, fluid) = dam_break(10, threads);
            run_steps(&mut app, 60);
            state_bits(&app, &fluid)
        })
        .collect();
    assert_eq!(runs[0], runs[1]);
}
