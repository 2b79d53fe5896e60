//! Tests of the grid projection: the Poisson solve against the discrete hydrostatic column, the
//! drift against area conservation, the velocity projection against mass conservation.

use super::cells::{CellGrid, CellKind};
use super::multigrid::{self, Hierarchy};
use super::poisson::PoissonSolve;
use super::*;
use bevy::prelude::*;

/// Cell size of the tests (m).
const H: f32 = 0.1;

/// A column of `n` fluid cells one cell wide (cell centres as particles), walled in left,
/// right and below by samples, open above.
fn column(n: i32) -> CellGrid {
    let centre = |i: i32, j: i32| Vec2::new(i as f32 + 0.5, j as f32 + 0.5) * H;
    let fluid: Vec<Vec2> = (0..n).map(|j| centre(0, j)).collect();
    let mut walls: Vec<Vec2> = (-1..=n)
        .flat_map(|j| [centre(-1, j), centre(1, j)])
        .collect();
    walls.push(centre(0, -1));
    let mut grid = CellGrid::default();
    assert!(grid.build(&fluid, &walls, H, 1 << 16));
    grid
}

/// b = 1 on the cells with an equation of `grid`, 0 elsewhere.
fn ones(grid: &CellGrid) -> Vec<f64> {
    let ones = grid.diagonal.iter().map(|&k| f64::from(u8::from(k > 0.0)));
    ones.collect()
}

#[test]
fn the_poisson_solve_gives_the_discrete_hydrostatic_column() {
    // b = 1 in every cell: the face above cell k carries the k + 1 cells below it, so
    // p_k − p_{k+1} = k + 1 with p = 0 in the air above: p_k = Σ_{j = k+1}^{n} j. With and
    // without the multigrid preconditioner.
    let n = 100;
    let grid = column(n);
    let b = ones(&grid);
    let mut hierarchy = Hierarchy::default();
    hierarchy.build(&grid);
    assert!(hierarchy.levels() >= 3, "{} levels", hierarchy.levels());
    for multigrid in [None, Some(&hierarchy)] {
        let mut solve = PoissonSolve::default();
        solve.solve(&grid, multigrid, &b, 1e-10);
        for k in 0..n {
            let c = grid.cell_of(Vec2::new(0.5, k as f32 + 0.5) * H).unwrap();
            let exact = ((k + 1)..=n).sum::<i32>() as f64;
            assert!(
                (solve.p[c] - exact).abs() <= 1e-6 * exact,
                "cell {k}: p = {}, exact {exact}",
                solve.p[c]
            );
        }
        assert!(
            solve.iterations <= n as u32 + 1,
            "CG took {} iterations",
            solve.iterations
        );
        // Started from that solution, the same equation needs no iteration.
        solve.solve(&grid, multigrid, &b, 1e-8);
        assert_eq!(solve.iterations, 0);
    }
}

/// A pool of `w` × `depth` fluid cells between two walls on a floor, open above; with
/// `obstacle`, a wall block in its middle (a quarter of its width and depth) and a sealed
/// pocket of fluid inside that block.
fn pool(w: i32, depth: i32, obstacle: bool) -> CellGrid {
    let centre = |i: i32, j: i32| Vec2::new(i as f32 + 0.5, j as f32 + 0.5) * H;
    let (x0, x1, y0, y1) = (3 * w / 8, 5 * w / 8, 3 * depth / 8, 5 * depth / 8);
    let inside = |i: i32, j: i32| obstacle && (x0..x1).contains(&i) && (y0..y1).contains(&j);
    let pocket = |i: i32, j: i32| inside(i, j) && i == x0 + 2 && j == y0 + 2;
    let fluid: Vec<Vec2> = (0..depth)
        .flat_map(|j| (0..w).map(move |i| (i, j)))
        .filter(|&(i, j)| !inside(i, j) || pocket(i, j))
        .map(|(i, j)| centre(i, j))
        .collect();
    let mut walls: Vec<Vec2> = (-1..=depth + 2)
        .flat_map(|j| [centre(-1, j), centre(w, j)])
        .collect();
    walls.extend((-1..=w).map(|i| centre(i, -1)));
    let block = (x0..x1).flat_map(|i| (y0..y1).map(move |j| (i, j)));
    let block = block.filter(|_| obstacle);
    walls.extend(
        block
            .filter(|&(i, j)| !pocket(i, j))
            .map(|(i, j)| centre(i, j)),
    );
    let mut grid = CellGrid::default();
    assert!(grid.build(&fluid, &walls, H, 1 << 20));
    grid
}

#[test]
fn multigrid_keeps_the_iteration_count_flat_as_the_pool_deepens() {
    // The hydrostatic pressure of pools 8 times deeper: plain CG's iterations grow with the
    // depth, the V-cycle's stay nearly flat, and both reach the same pressures.
    let mut counts = Vec::new();
    for (w, depth) in [(32, 16), (64, 32), (128, 64), (256, 128)] {
        let grid = pool(w, depth, true);
        let b = ones(&grid);
        let mut hierarchy = Hierarchy::default();
        hierarchy.build(&grid);
        let (mut plain, mut mg) = (PoissonSolve::default(), PoissonSolve::default());
        plain.solve(&grid, None, &b, 1e-8);
        mg.solve(&grid, Some(&hierarchy), &b, 1e-8);
        let top = plain.p.iter().fold(0.0_f64, |a, &p| a.max(p));
        for (a, b) in plain.p.iter().zip(&mg.p) {
            assert!((a - b).abs() <= 1e-5 * top, "{w}×{depth}: {a} against {b}");
        }
        counts.push((plain.iterations, mg.iterations));
    }
    let (first, last) = (counts[0], counts[counts.len() - 1]);
    assert!(last.0 >= 4 * first.0, "plain CG: {counts:?}");
    assert!(2 * last.1 <= 3 * first.1, "multigrid: {counts:?}");
    assert!(8 * last.1 <= last.0, "multigrid: {counts:?}");
}

#[test]
fn the_v_cycle_is_symmetric_and_positive_definite() {
    // Conjugate gradients need a symmetric positive definite preconditioner: r₁ · M r₂ =
    // r₂ · M r₁ and r · M r > 0, on a pool with a wall block and sealed fluid (no equation).
    let grid = pool(45, 23, true);
    let mut hierarchy = Hierarchy::default();
    hierarchy.build(&grid);
    let mut cycle = multigrid::VCycle::default();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut random = |grid: &CellGrid| -> Vec<f64> {
        let values = grid.diagonal.iter().map(|&k| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            if k > 0.0 {
                (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            } else {
                0.0
            }
        });
        values.collect()
    };
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(a, b)| a * b).sum::<f64>();
    for _ in 0..8 {
        let (r1, r2) = (random(&grid), random(&grid));
        let (mut z1, mut z2) = (vec![0.0; grid.len()], vec![0.0; grid.len()]);
        hierarchy.apply(&mut cycle, &r1, &mut z1);
        hierarchy.apply(&mut cycle, &r2, &mut z2);
        let (a, b) = (dot(&r1, &z2), dot(&r2, &z1));
        assert!(
            (a - b).abs() <= 1e-12 * (a.abs() + b.abs()),
            "{a} against {b}"
        );
        assert!(dot(&r1, &z1) > 0.0 && dot(&r2, &z2) > 0.0);
        let sealed = (0..grid.len()).filter(|&c| grid.diagonal[c] == 0.0);
        assert!(sealed.clone().all(|c| z1[c] == 0.0));
        assert!(sealed.clone().any(|c| grid.kind[c] == CellKind::Fluid));
    }
}

/// A block of 40 × 20 fluid particles spaced d = 2r on a floor between two walls of samples
/// (the default r: cells of 2d = 0.1 m), every particle with density `density` (kg/m²) and
/// velocity `v`.
fn block(settings: &FluidSettings, density: f32, v: Vec2) -> (SolverState, Vec<DensityRow>) {
    let d = 2.0 * settings.particle_radius;
    let x: Vec<Vec2> = (0..20)
        .flat_map(|j| (0..40).map(move |i| Vec2::new(i as f32 + 0.5, j as f32 + 0.5) * d))
        .collect();
    let mut boundary_x: Vec<Vec2> = (-6..=86)
        .map(|i| Vec2::new(i as f32 * 0.5 * d, -0.5 * d))
        .collect();
    for j in 0..60 {
        let y = j as f32 * 0.5 * d;
        boundary_x.extend([Vec2::new(-0.5 * d, y), Vec2::new(40.5 * d, y)]);
    }
    let n = x.len();
    let state = SolverState {
        fluid_count: n,
        x_predicted: x.clone(),
        x,
        v: vec![v; n],
        w: vec![1.0; n],
        boundary_x,
        ..default()
    };
    let row = DensityRow {
        density,
        ..default()
    };
    (state, vec![row; n])
}

/// [`project`] with the default [`GridProjection`] and [`FluidSettings`], two threads: whether
/// it was applied.
fn run(
    state: &mut SolverState,
    rows: Option<&[DensityRow]>,
    scratch: &mut GridProjectionState,
    dt: f32,
) -> bool {
    let settings = FluidSettings::default();
    project(
        &GridProjection::default(),
        &settings,
        state,
        rows,
        scratch,
        dt,
        2,
    )
}

/// The fastest fluid particle's speed (m/s).
fn fastest(state: &SolverState) -> f32 {
    let speeds = state.v[..state.fluid_count].iter().map(|v| v.length());
    speeds.fold(0.0, f32::max)
}

/// Mean of `f` over the particles of row `j` of [`block`].
fn row_mean(j: usize, f: impl Fn(usize) -> f32) -> f32 {
    (0..40).map(|i| f(j * 40 + i)).sum::<f32>() / 40.0
}

#[test]
fn the_drift_spreads_a_uniform_compression_upwards_and_keeps_velocities() {
    // Every row 1 % over ρ0: the excess area, 1 % of the block's, leaves through its top, so
    // a particle at height y rises by 0.01 y (area conservation), and no velocity changes.
    let settings = FluidSettings::default();
    let (mut state, rows) = block(&settings, 1.01 * settings.rest_density, Vec2::ZERO);
    let before = state.x.clone();
    let mut scratch = GridProjectionState::default();
    assert!(run(&mut state, Some(&rows), &mut scratch, 0.005));
    let d = 2.0 * settings.particle_radius;
    let rise = |j: usize| row_mean(j, |i| state.x[i].y - before[i].y);
    let sideways = |j: usize| row_mean(j, |i| (state.x[i].x - before[i].x).abs());
    for j in [5, 10, 15, 19] {
        let expected = 0.01 * (j as f32 + 0.5) * d;
        println!("row {j}: rise {} m, expected {expected} m", rise(j));
        assert!(
            (rise(j) - expected).abs() <= 0.25 * expected,
            "row {j} rose {} m, area conservation {expected} m",
            rise(j)
        );
        assert!(
            sideways(j) <= 0.1 * expected,
            "row {j} moved {} m sideways",
            sideways(j)
        );
    }
    for i in 0..state.fluid_count {
        assert_eq!(state.x[i], state.x_predicted[i], "x and x* moved alike");
        assert_eq!(state.v[i], Vec2::ZERO, "velocity of particle {i}");
    }
}

#[test]
fn the_velocity_projection_stops_a_block_falling_onto_its_floor() {
    // A block at rest on the floor after gravity's Δv: mass conservation in a box open only
    // above leaves each row's mean vertical velocity 0.
    let settings = FluidSettings::default();
    let dt = 0.005;
    let fall = Vec2::new(0.0, -9.81 * dt);
    let (mut state, _) = block(&settings, settings.rest_density, fall);
    let offsets: Vec<Vec2> = (0..state.fluid_count)
        .map(|i| state.x[i] - state.x_predicted[i])
        .collect();
    let mut scratch = GridProjectionState::default();
    assert!(run(&mut state, None, &mut scratch, dt));
    for j in 0..20 {
        let vy = row_mean(j, |i| state.v[i].y);
        assert!(
            vy.abs() <= 0.05 * fall.length(),
            "row {j}: mean v_y {vy} m/s of {} m/s",
            fall.y
        );
    }
    let fastest = fastest(&state);
    assert!(
        fastest <= 0.25 * fall.length(),
        "fastest particle {fastest} m/s"
    );
    for (i, offset) in offsets.iter().enumerate() {
        let now = state.x[i] - state.x_predicted[i];
        assert!(
            (now - *offset).length() <= 1e-6,
            "x − x* of particle {i} changed"
        );
    }
}

#[test]
fn parameters_outside_their_ranges_are_refused() {
    assert!(GridProjection::default().validate().is_ok());
    let bad = [
        GridProjection {
            cell_spacings: 0.5,
            ..default()
        },
        GridProjection {
            cell_spacings: f32::NAN,
            ..default()
        },
        GridProjection {
            tolerance: 0.0,
            ..default()
        },
        GridProjection {
            tolerance: 1.0,
            ..default()
        },
        GridProjection {
            surface_threshold: -0.1,
            ..default()
        },
        GridProjection {
            surface_threshold: f32::INFINITY,
            ..default()
        },
    ];
    for params in bad {
        assert!(params.validate().is_err(), "{params:?}");
        let settings = FluidSettings {
            grid_projection: Some(params),
            ..default()
        };
        assert!(
            settings.validate().is_err(),
            "FluidSettings with {params:?}"
        );
    }
}

#[test]
fn a_particle_flung_far_away_skips_the_step_and_moves_nothing() {
    let settings = FluidSettings::default();
    let (mut state, rows) = block(&settings, 1.01 * settings.rest_density, Vec2::ZERO);
    state.x[0] = Vec2::new(1.0e4, 1.0e4);
    state.x_predicted[0] = state.x[0];
    let before = state.x.clone();
    let mut scratch = GridProjectionState::default();
    assert!(!run(&mut state, Some(&rows), &mut scratch, 0.005));
    assert_eq!(state.x, before);
    // A NaN position (with every other particle in the box): skipped too.
    state.x[0] = state.x[2];
    state.x_predicted[0] = state.x[2];
    let before = state.x.clone();
    state.x_predicted[1] = Vec2::NAN;
    state.x[1] = Vec2::NAN;
    assert!(!run(&mut state, Some(&rows), &mut scratch, 0.005));
    assert!(state.x[2..].iter().zip(&before[2..]).all(|(a, b)| a == b));
    assert_eq!(scratch.cg_iterations, 0);
}

#[test]
fn fluid_sealed_in_a_full_box_gets_no_pressure_solve() {
    // With a lid on the block no fluid cell reaches air: A would be singular (the pressure's
    // level is free) and the compression has nowhere to go. The grid solves nothing there; only
    // the floor's faces still take away the velocity into the floor (rows 0 and 1, in the
    // floor's cell row).
    let settings = FluidSettings::default();
    let dt = 0.005;
    let fall = Vec2::new(0.0, -9.81 * dt);
    let (mut state, rows) = block(&settings, 1.01 * settings.rest_density, fall);
    let d = 2.0 * settings.particle_radius;
    state
        .boundary_x
        .extend((-2..=82).map(|i| Vec2::new(i as f32 * 0.5 * d, 20.5 * d)));
    let (x, v) = (state.x.clone(), state.v.clone());
    let mut scratch = GridProjectionState::default();
    assert!(run(&mut state, Some(&rows), &mut scratch, dt));
    assert_eq!(scratch.cg_iterations, 0);
    for i in 0..state.fluid_count {
        let (moved, dv) = (state.x[i] - x[i], state.v[i] - v[i]);
        if i < 80 {
            assert!(
                moved.x == 0.0 && (0.0..=dt * fall.length()).contains(&moved.y),
                "{i}"
            );
            assert!(
                (0.0..=fall.length()).contains(&dv.y),
                "particle {i}: Δv {dv}"
            );
        } else {
            assert!(
                moved == Vec2::ZERO && dv == Vec2::ZERO,
                "particle {i} moved {moved}"
            );
        }
    }
}

#[test]
fn an_expanded_block_contracts_in_position_and_draws_in_at_the_rate_of_its_deficit() {
    // Every row 2 % under ρ0 (above the −5 % surface threshold): the drift lowers a particle
    // at height y by 0.02 y, and the velocity projection draws the block in at the area rate
    // e/Δt: the top row moves down at 0.02 × the block's height / Δt. Pinned rows stay put.
    let settings = FluidSettings::default();
    let dt = 0.005;
    let (mut state, rows) = block(&settings, 0.98 * settings.rest_density, Vec2::ZERO);
    let pinned = 19 * 40 + 7;
    state.w[pinned] = 0.0;
    let before = state.x.clone();
    let mut scratch = GridProjectionState::default();
    assert!(run(&mut state, Some(&rows), &mut scratch, dt));
    let d = 2.0 * settings.particle_radius;
    let height = 20.0 * d;
    let top_v = row_mean(19, |i| state.v[i].y);
    let expected_v = -0.02 * height / dt;
    assert!(
        (top_v - expected_v).abs() <= 0.25 * expected_v.abs(),
        "top row v_y {top_v} m/s, the deficit's rate {expected_v} m/s"
    );
    // The drift's part of the move: the move minus Δt v.
    let drift = |j: usize| row_mean(j, |i| state.x[i].y - before[i].y - dt * state.v[i].y);
    for j in [5, 10, 15] {
        let expected = -0.02 * (j as f32 + 0.5) * d;
        assert!(
            (drift(j) - expected).abs() <= 0.25 * expected.abs(),
            "row {j} drifted {} m, area conservation {expected} m",
            drift(j)
        );
    }
    assert_eq!(state.x[pinned], before[pinned]);
    assert_eq!(state.v[pinned], Vec2::ZERO);
}

#[test]
fn a_block_leaving_its_floor_keeps_its_velocity() {
    // Fluid may leave a wall (the clamped density constraint lets it): a block moving up off
    // its floor as one is divergence-free and keeps its velocity.
    let settings = FluidSettings::default();
    let up = Vec2::new(0.0, 0.05);
    let (mut state, _) = block(&settings, settings.rest_density, up);
    let mut scratch = GridProjectionState::default();
    assert!(run(&mut state, None, &mut scratch, 0.005));
    for (i, v) in state.v[..state.fluid_count].iter().enumerate() {
        assert!(
            (*v - up).length() <= 0.05 * up.length(),
            "particle {i}: v {v}"
        );
    }
}

/// A pool of 12 × 8 cells (cell centres as particles) between walls on a floor, with the
/// cells `emptied` left out, under a lid of wall cells if `lid`.
fn holed_pool(emptied: &[(i32, i32)], lid: bool) -> CellGrid {
    let centre = |i: i32, j: i32| Vec2::new(i as f32 + 0.5, j as f32 + 0.5) * H;
    let fluid: Vec<Vec2> = (0..8)
        .flat_map(|j| (0..12).map(move |i| (i, j)))
        .filter(|at| !emptied.contains(at))
        .map(|(i, j)| centre(i, j))
        .collect();
    let mut walls: Vec<Vec2> = (-1..=9)
        .flat_map(|j| [centre(-1, j), centre(12, j)])
        .collect();
    walls.extend((-1..=12).map(|i| centre(i, -1)));
    if lid {
        walls.extend((-1..=12).map(|i| centre(i, 8)));
    }
    let mut grid = CellGrid::default();
    assert!(grid.build(&fluid, &walls, H, 1 << 16));
    grid
}

#[test]
fn an_empty_cell_inside_the_fluid_is_fluid_and_one_at_its_surface_air() {
    // Emptied: one cell deep inside (a void), a pair side by side (each with an air
    // neighbour: the other), one in the top row (open to the air above). Only the first is
    // filled; the margin and the air above stay air.
    let centre = |i: i32, j: i32| Vec2::new(i as f32 + 0.5, j as f32 + 0.5) * H;
    let grid = holed_pool(&[(5, 3), (8, 4), (9, 4), (3, 7)], false);
    let kind = |i: i32, j: i32| grid.kind[grid.cell_of(centre(i, j)).unwrap()];
    assert_eq!(kind(5, 3), CellKind::Fluid, "the void");
    assert!(grid.diagonal[grid.cell_of(centre(5, 3)).unwrap()] > 0.0);
    for (i, j) in [(8, 4), (9, 4), (3, 7), (3, 8), (6, 9)] {
        assert_eq!(kind(i, j), CellKind::Air, "cell ({i}, {j})");
    }
    let fluid_cells = grid.kind.iter().filter(|&&k| k == CellKind::Fluid).count();
    assert_eq!(fluid_cells, 12 * 8 - 3);
    // Under a lid, the top row's empty cell (a wall above, fluid on three sides) is the
    // closed tank's only air: it stays air, and every fluid cell keeps its equation.
    let grid = holed_pool(&[(5, 3), (3, 7)], true);
    let kind = |i: i32, j: i32| grid.kind[grid.cell_of(centre(i, j)).unwrap()];
    assert_eq!(kind(5, 3), CellKind::Fluid, "the void");
    assert_eq!(kind(3, 7), CellKind::Air, "the pocket under the lid");
    let fluid = (0..grid.len()).filter(|&c| grid.kind[c] == CellKind::Fluid);
    assert_eq!(fluid.clone().count(), 12 * 8 - 1);
    assert!(fluid.into_iter().all(|c| grid.diagonal[c] > 0.0));
}

#[test]
fn a_void_deep_in_a_block_at_rest_draws_no_jet() {
    // The block at rest on its floor after gravity's Δv, with the four particles of one cell
    // 8 cells under its surface taken out. As air, that cell's p = 0 drew the fluid around it
    // in at twice gravity's Δv (0.10 m/s; the deeper, the faster); as a void inside the
    // fluid, every particle keeps to the bound of the block without a void.
    let settings = FluidSettings::default();
    let dt = 0.005;
    let fall = Vec2::new(0.0, -9.81 * dt);
    let (full, _) = block(&settings, settings.rest_density, fall);
    let d = 2.0 * settings.particle_radius;
    let hole = |p: Vec2| (10.0..12.0).contains(&(p.x / d)) && (2.0..4.0).contains(&(p.y / d));
    let keep: Vec<usize> = (0..full.fluid_count)
        .filter(|&i| !hole(full.x[i]))
        .collect();
    assert_eq!(keep.len(), full.fluid_count - 4);
    let pick = |a: &[Vec2]| keep.iter().map(|&i| a[i]).collect::<Vec<_>>();
    let mut state = SolverState {
        fluid_count: keep.len(),
        x: pick(&full.x),
        x_predicted: pick(&full.x_predicted),
        v: pick(&full.v),
        w: vec![1.0; keep.len()],
        boundary_x: full.boundary_x.clone(),
        ..default()
    };
    let mut scratch = GridProjectionState::default();
    assert!(run(&mut state, None, &mut scratch, dt));
    let fastest = fastest(&state);
    assert!(
        fastest <= 0.25 * fall.length(),
        "fastest particle {fastest} m/s, gravity's Δv {} m/s",
        fall.length()
    );
}
