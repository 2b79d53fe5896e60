//! Tests of the density solve: schedules, thread counts and buffer reuse give the same bits.

use super::solve::*;
use super::state::*;
use super::*;
use crate::fluid::boundary::pseudo_masses;
use crate::fluid::grid::SpatialHashGrid;
use crate::fluid::kernel::CubicSpline;
use crate::fluid::neighbors::NeighborChunk;
use crate::fluid::neighbors::find_neighbors;
use crate::parallel::CHUNK;
use crate::parallel::phases::threads_used;
use crate::scenes::dam_break::DamBreakBuilder;
use bevy::prelude::*;

/// The average density error (%) of the fluid at `x` next to the samples at `boundary_x`
/// with Ψ `psi`, from direct sums over all pairs.
fn direct_error(settings: &FluidSettings, x: &[Vec2], boundary_x: &[Vec2], psi: &[f32]) -> f32 {
    let kernel = CubicSpline::new(settings.support_radius);
    let w = |a: Vec2, b: Vec2| kernel.w((a - b).length());
    let excess = x.iter().map(|&xi| {
        let fluid = x.iter().map(|&xj| settings.particle_mass() * w(xi, xj));
        let walls = boundary_x.iter().zip(psi).map(|(&xk, &p)| p * w(xi, xk));
        let density = fluid.sum::<f32>() + walls.sum::<f32>();
        (density - settings.rest_density).max(0.0) as f64
    });
    (excess.sum::<f64>() * 100.0 / (x.len() as f64 * settings.rest_density as f64)) as f32
}

/// The first `count` particles of a 40 × 40 dam break squeezed vertically by the fraction
/// `squeeze` towards the floor, with particle 5 pinned (w = 0), and its boundary samples.
fn squeezed(settings: &FluidSettings, squeeze: f32, count: usize) -> SolverState {
    let scene = DamBreakBuilder {
        width: 40,
        height: 40,
        ..default()
    };
    let mut state = SolverState {
        x: scene.fluid_positions(settings),
        boundary_x: scene.boundary_positions(settings),
        ..default()
    };
    state.x.truncate(count);
    let (n, h) = (state.x.len(), settings.support_radius);
    for x in &mut state.x {
        x.y *= 1.0 - squeeze;
    }
    state.fluid_count = n;
    state.w = vec![1.0 / settings.particle_mass(); n];
    state.w[5] = 0.0;
    let mut boundary_grid = SpatialHashGrid::default();
    boundary_grid.build(&state.boundary_x, h);
    let kernel = CubicSpline::new(h);
    state.boundary_psi = pseudo_masses(
        &state.boundary_x,
        &boundary_grid,
        &kernel,
        settings.rest_density,
    );
    state
}

/// A schedule of the solve: (up to how many threads, from how many threads up in phases).
type Schedule = (usize, usize);
/// One thread, the pipeline.
const PIPELINE: Schedule = (1, PHASES_FROM);
/// Pipelines from both ends (if the pool has two threads).
const PIPELINES: Schedule = (2, PHASES_FROM);
/// Phases on every thread of the pool.
const PHASES: Schedule = (usize::MAX, 2);

/// One density solve of `state` on `schedule`, with the neighbour lists built into `chunks`
/// and the scratch `scratch` (both possibly from an earlier solve).
fn solve_state(
    settings: &FluidSettings,
    state: &mut SolverState,
    chunks: &mut Vec<NeighborChunk>,
    scratch: &mut DensityState,
    (threads, phases_from): Schedule,
) -> (u32, f32) {
    let h = settings.support_radius;
    let (mut fluid_grid, mut boundary_grid) =
        (SpatialHashGrid::default(), SpatialHashGrid::default());
    fluid_grid.build(&state.x, h);
    boundary_grid.build(&state.boundary_x, h);
    find_neighbors(chunks, &fluid_grid, &state.x, &boundary_grid, h, usize::MAX);
    solve_on(settings, state, chunks, scratch, threads, phases_from)
}

/// The positions after one density solve of [`squeezed`] (all 1600 particles) on
/// `schedule`; (iterations, error) as returned, and the error of the positions by direct
/// sums.
fn solved(
    settings: &FluidSettings,
    squeeze: f32,
    schedule: Schedule,
) -> (Vec<Vec2>, u32, f32, f32) {
    let mut state = squeezed(settings, squeeze, 1600);
    let (mut chunks, mut scratch) = (Vec::new(), DensityState::default());
    let (iterations, error) =
        solve_state(settings, &mut state, &mut chunks, &mut scratch, schedule);
    let direct = direct_error(settings, &state.x, &state.boundary_x, &state.boundary_psi);
    (state.x, iterations, error, direct)
}

/// The bits of positions.
fn bits(x: &[Vec2]) -> Vec<[u32; 2]> {
    x.iter().map(|p| [p.x.to_bits(), p.y.to_bits()]).collect()
}

/// Solves reuse the lists and scratch of the step before, built for other particles (as
/// many blocks, fewer, more; squeezed more) and possibly on the other schedule: the same
/// bits as with fresh buffers.
#[test]
fn reused_buffers_give_the_bits_of_fresh_ones() {
    let settings = FluidSettings::default();
    for (before_threads, threads, before_count, count) in [
        (PIPELINE, PIPELINE, 1600, 1590),
        (PHASES, PHASES, 1600, 1590),
        (PIPELINES, PIPELINES, 1600, 1590),
        (PIPELINE, PHASES, 1600, 1300),
        (PHASES, PIPELINE, 1000, 1600),
        (PIPELINE, PIPELINES, 1000, 1600),
        (PIPELINES, PIPELINE, 1600, 1300),
    ] {
        let (mut chunks, mut scratch) = (Vec::new(), DensityState::default());
        let mut before = squeezed(&settings, 0.01, before_count);
        solve_state(
            &settings,
            &mut before,
            &mut chunks,
            &mut scratch,
            before_threads,
        );
        let mut reused = squeezed(&settings, 0.02, count);
        let mut fresh = squeezed(&settings, 0.02, count);
        let a = solve_state(&settings, &mut reused, &mut chunks, &mut scratch, threads);
        let b = solve_state(
            &settings,
            &mut fresh,
            &mut Vec::new(),
            &mut DensityState::default(),
            threads,
        );
        assert!(a.0 > 1, "iterations: {}", a.0);
        assert_eq!(
            (a.0, a.1.to_bits()),
            (b.0, b.1.to_bits()),
            "{before_threads:?} then {threads:?}, {before_count} then {count}"
        );
        assert_eq!(
            bits(&reused.x),
            bits(&fresh.x),
            "{before_threads:?} then {threads:?}, {before_count} then {count}"
        );
    }
}

/// Rows `0..SPLIT` of an embedded scene are the scene's; the rest move up by `GAP`, and
/// `GAP` isolated rows (no neighbours) fill the hole, so the lists of some chunks spread
/// over more rows than 16-bit offsets hold and others count from a base ≥ 65 536.
const SPLIT: usize = 640;
const GAP: usize = 65_536;

/// The row of the embedded scene that holds row `i` of the scene.
fn embed_row(i: usize) -> usize {
    if i < SPLIT { i } else { i + GAP }
}

/// The fluid rows and boundary samples of `state` (nothing else).
fn copy(state: &SolverState) -> SolverState {
    SolverState {
        x: state.x.clone(),
        w: state.w.clone(),
        fluid_count: state.fluid_count,
        boundary_x: state.boundary_x.clone(),
        boundary_psi: state.boundary_psi.clone(),
        ..default()
    }
}

/// `state` embedded ([`embed_row`]); the filler rows lie 10 m apart, far from the rest.
fn embedded(state: &SolverState) -> SolverState {
    let total = state.fluid_count + GAP;
    let far = |r: usize| Vec2::new((r % 256) as f32, (r / 256) as f32) * 10.0 + 1.0e4;
    let mut out = copy(state);
    out.x = (0..total).map(far).collect();
    out.w = vec![state.w[0]; total];
    out.fluid_count = total;
    for i in 0..state.fluid_count {
        out.x[embed_row(i)] = state.x[i];
        out.w[embed_row(i)] = state.w[i];
    }
    out
}

/// The row lists of `rows` rows, `list(r)` giving row r's fluid neighbours and boundary
/// samples (`None`: none), into the list fields of `out`; the chunks' slot buffers are
/// kept, so a solve on them reuses them.
fn put_lists<'a>(
    rows: usize,
    list: impl Fn(usize) -> Option<(Vec<u32>, &'a [u32], u32)>,
    out: &mut Vec<NeighborChunk>,
) {
    out.resize_with(rows.div_ceil(CHUNK), NeighborChunk::default);
    for chunk in out.iter_mut() {
        let keep = core::mem::take(&mut chunk.slots);
        *chunk = NeighborChunk::default();
        chunk.slots = keep;
        chunk.lists_mut().fluid_start.push(0);
        chunk.lists_mut().boundary_start.push(0);
    }
    for r in 0..rows {
        let chunk = out[r / CHUNK].lists_mut();
        let (fluid, boundary, count) = list(r).unwrap_or_default();
        chunk.fluid.extend(fluid);
        chunk.fluid_count.push(count);
        chunk.boundary.extend_from_slice(boundary);
        chunk.fluid_start.push(chunk.fluid.len() as u32);
        chunk.boundary_start.push(chunk.boundary.len() as u32);
    }
}

/// The lists of the scene (`lists`, `n` rows) or of the embedded scene, into `out`.
fn scene_lists(lists: &[NeighborChunk], n: usize, embed: bool, out: &mut Vec<NeighborChunk>) {
    let scene_row = |r: usize| match embed {
        false => Some(r),
        true if r < SPLIT => Some(r),
        true => r.checked_sub(GAP).filter(|&i| i >= SPLIT),
    };
    let rows = if embed { n + GAP } else { n };
    let row = |r: usize| -> Option<(Vec<u32>, &[u32], u32)> {
        let i = scene_row(r)?;
        let chunk = &lists[i / CHUNK];
        let k = i % CHUNK;
        let padded = chunk.fluid_start[k] as usize..chunk.fluid_start[k + 1] as usize;
        let to = |j: &u32| {
            if embed {
                embed_row(*j as usize) as u32
            } else {
                *j
            }
        };
        let fluid = chunk.fluid[padded].iter().map(to).collect();
        Some((fluid, chunk.boundary_of(k), chunk.fluid_count[k]))
    };
    put_lists(rows, row, out);
}

/// The bits of the scene's rows of an embedded solve.
fn scene_bits(embedded: &SolverState, n: usize) -> Vec<[u32; 2]> {
    bits(&(0..n).map(|i| embedded.x[embed_row(i)]).collect::<Vec<_>>())
}

/// The same lists with rows far apart give the bits of the compact rows, on every
/// schedule, with fresh buffers and with buffers reused across the kinds of slots (16-bit
/// offsets, then rows, then offsets).
#[test]
fn rows_far_apart_give_the_bits_of_close_ones() {
    let settings = FluidSettings {
        max_density_error_percent: 0.0,
        max_iterations: 4,
        ..default()
    };
    let h = settings.support_radius;
    let scene = squeezed(&settings, 0.02, 1600);
    let n = scene.fluid_count;
    let (mut fluid_grid, mut boundary_grid) =
        (SpatialHashGrid::default(), SpatialHashGrid::default());
    fluid_grid.build(&scene.x, h);
    boundary_grid.build(&scene.boundary_x, h);
    let mut lists = Vec::new();
    find_neighbors(
        &mut lists,
        &fluid_grid,
        &scene.x,
        &boundary_grid,
        h,
        usize::MAX,
    );
    for (threads, phases_from) in [PIPELINE, PIPELINES, PHASES] {
        let solve = |state: &mut SolverState, chunks: &mut Vec<_>, scratch: &mut _| {
            solve_on(&settings, state, chunks, scratch, threads, phases_from).0
        };
        let mut close = copy(&scene);
        let mut close_lists = Vec::new();
        scene_lists(&lists, n, false, &mut close_lists);
        assert_eq!(solve(&mut close, &mut close_lists, &mut default()), 4);
        let expected = bits(&close.x);

        let mut far = embedded(&scene);
        let mut far_lists = Vec::new();
        scene_lists(&lists, n, true, &mut far_lists);
        assert_eq!(solve(&mut far, &mut far_lists, &mut default()), 4);
        let wide = far_lists.iter().filter(|c| c.slots.wide()).count();
        let far_base = far_lists.iter().filter(|c| {
            !c.slots.wide() && c.slots.fluid_slots() > 0 && c.slots.fluid_base >= 65_536
        });
        assert!(wide > 0 && far_base.count() > 0, "wide chunks: {wide}");
        assert_eq!(scene_bits(&far, n), expected, "{threads} threads, fresh");

        // One set of chunks and scratch: close, far, close.
        let (mut chunks, mut scratch) = (Vec::new(), DensityState::default());
        for embed in [false, true, false] {
            let mut state = if embed {
                embedded(&scene)
            } else {
                copy(&scene)
            };
            scene_lists(&lists, n, embed, &mut chunks);
            assert_eq!(solve(&mut state, &mut chunks, &mut scratch), 4);
            assert_eq!(chunks.iter().any(|c| c.slots.wide()), embed);
            let got = if embed {
                scene_bits(&state, n)
            } else {
                bits(&state.x)
            };
            assert_eq!(got, expected, "{threads} threads, reused, far: {embed}");
        }
    }
}

#[test]
fn the_pipelines_have_the_bits_of_the_phases() {
    let parallel = threads_used(1600usize.div_ceil(CHUNK), usize::MAX) > 1;
    if !parallel {
        eprintln!("the compute task pool has one thread: only one thread was checked");
    }
    let default = FluidSettings::default();
    let capped = FluidSettings {
        max_iterations: 3,
        ..default
    };
    let relaxed = FluidSettings {
        over_relaxation: 1.6,
        ..default
    };
    // Chebyshev extrapolates each row's multiplier from the one its row held.
    let chebyshev = FluidSettings {
        chebyshev: Some(0.95),
        ..default
    };
    for (settings, squeeze, ends) in [
        (&default, 0.01, "within the tolerance"),
        (&capped, 0.01, "at the cap"),
        (&relaxed, 0.01, "within the tolerance, ω = 1.6"),
        (&chebyshev, 0.01, "within the tolerance, Chebyshev"),
        (&default, 0.0, "at once (no correction)"),
    ] {
        let pipeline = solved(settings, squeeze, PIPELINE);
        // Both ends may meet anywhere: several runs.
        let runs = if parallel { 8 } else { 1 };
        let others = (0..runs)
            .map(|_| ("pipelines", PIPELINES))
            .chain([("phases", PHASES)]);
        for (name, schedule) in others {
            let other = solved(settings, squeeze, schedule);
            let (a, b) = (bits(&pipeline.0), bits(&other.0));
            let differ = a.iter().zip(&b).filter(|(a, b)| a != b);
            assert_eq!(differ.count(), 0, "positions that differ, {name}; {ends}");
            assert_eq!(pipeline.1, other.1, "iterations, {name}; {ends}");
            assert_eq!(
                pipeline.2.to_bits(),
                other.2.to_bits(),
                "error, {name}; {ends}"
            );
        }
        // The error returned is that of the positions returned.
        let (error, direct) = (pipeline.2, pipeline.3);
        assert!(
            (error - direct).abs() <= 1e-3 * direct,
            "{ends}: {error} vs {direct}"
        );
        let tolerance = settings.max_density_error_percent;
        match ends {
            "at the cap" => assert!(
                pipeline.1 == 3 && pipeline.2 > tolerance,
                "{:?}",
                (pipeline.1, pipeline.2)
            ),
            "at once (no correction)" => assert_eq!(pipeline.1, 0),
            _ => assert!(
                pipeline.1 > 1 && pipeline.2 <= tolerance,
                "{ends}: {:?}",
                (pipeline.1, pipeline.2)
            ),
        }
    }
}

/// One fluid particle 10⁻⁴ m above a floor sample of the dam break's box (and the box's
/// samples), and where it starts.
fn above_a_floor_sample(settings: &FluidSettings) -> (SolverState, Vec2) {
    let scene = DamBreakBuilder::default();
    let floor = scene.boundary_positions(settings)[60];
    let start = floor + Vec2::new(0.0, 1e-4);
    let mut state = SolverState {
        x: vec![start],
        boundary_x: scene.boundary_positions(settings),
        fluid_count: 1,
        w: vec![1.0 / settings.particle_mass()],
        ..default()
    };
    let mut boundary_grid = SpatialHashGrid::default();
    boundary_grid.build(&state.boundary_x, settings.support_radius);
    let kernel = CubicSpline::new(settings.support_radius);
    state.boundary_psi = pseudo_masses(
        &state.boundary_x,
        &boundary_grid,
        &kernel,
        settings.rest_density,
    );
    (state, start)
}

/// One iteration of a particle 10⁻⁴ m above a floor sample, where ∇C nearly vanishes while C > 0:
/// its Newton step is ~100 r long; the iteration moves it by [`MAX_STEP_RADII`] r, along the
/// same direction (up, away from the floor), on every schedule.
#[test]
fn one_iteration_moves_a_particle_at_most_the_step_cap() {
    let settings = FluidSettings {
        max_iterations: 1,
        ..default()
    };
    let r = settings.particle_radius;
    for schedule in [PIPELINE, PIPELINES, PHASES] {
        let (mut state, start) = above_a_floor_sample(&settings);
        let (mut chunks, mut scratch) = (Vec::new(), DensityState::default());
        solve_state(&settings, &mut state, &mut chunks, &mut scratch, schedule);
        let step = state.x[0] - start;
        assert!(
            (step.length() - MAX_STEP_RADII * r).abs() < 1e-6,
            "moved {} r",
            step.length() / r
        );
        assert!(
            step.y > 0.99 * step.length(),
            "along the Newton step: {step}"
        );
    }
}

/// The particle of [`one_iteration_moves_a_particle_at_most_the_step_cap`] with Chebyshev
/// acceleration (ρ = 0.98, the largest accepted) and n iterations: n cut steps, each within
/// the cap (extrapolating a cut step would move it up to 4.3 r in one iteration).
#[test]
fn chebyshev_iterations_stay_within_the_step_cap() {
    for iterations in [2, 3, 5] {
        let settings = FluidSettings {
            max_iterations: iterations,
            chebyshev: Some(0.98),
            ..default()
        };
        let r = settings.particle_radius;
        for schedule in [PIPELINE, PIPELINES, PHASES] {
            let (mut state, start) = above_a_floor_sample(&settings);
            let (mut chunks, mut scratch) = (Vec::new(), DensityState::default());
            let (done, _) = solve_state(&settings, &mut state, &mut chunks, &mut scratch, schedule);
            let moved = (state.x[0] - start).length();
            let bound = done as f32 * MAX_STEP_RADII * r;
            assert!(
                moved <= bound * (1.0 + 1e-5),
                "{done} iterations moved it {} r (cap {} r each)",
                moved / r,
                MAX_STEP_RADII
            );
        }
    }
}

#[test]
fn chebyshev_weights_follow_the_recurrence_and_approach_their_limit() {
    let rho = 0.95f32;
    let w: Vec<f32> = chebyshev_weights(rho, 200).collect();
    assert_eq!(w[0], 1.0);
    assert!((w[1] - 2.0 / (2.0 - rho * rho)).abs() < 1e-6);
    for k in 2..w.len() {
        assert!((w[k] - 4.0 / (4.0 - rho * rho * w[k - 1])).abs() < 1e-6);
    }
    // Between 1 and 2, falling from w_1 to the optimal SOR factor 2 / (1 + √(1 − ρ²)).
    let limit = 2.0 / (1.0 + (1.0 - rho * rho).sqrt());
    assert!(
        w[1..]
            .windows(2)
            .all(|p| p[1] <= p[0] && p[1] >= 1.0 && p[0] < 2.0)
    );
    assert!((w[199] - limit).abs() < 1e-4, "{} vs {limit}", w[199]);
}
