//! The schedule of the PBF density solve (\[MM13\] Algorithm 1, lines 8–19): Jacobi iterations
//! of two passes over blocks of [`CHUNK`] fluid rows, the density pass (ρ, C and λ of each row,
//! the per-pair scratch, the block's error) and the correction pass (Δx of each row).
//!
//! The positions are double-buffered: a correction pass reads the current positions and
//! writes x + ωΔx into the other buffer, which becomes the current one. No pass reads a
//! position that it writes, so the two schedules below give the same bits:
//! - one or two threads: pipelined sweeps ([`run_sweeps`]; two threads take the blocks from
//!   either end). Block c's correction runs as soon as every block holding one of its
//!   neighbours has had its density pass, while the block's slots and scratch are still in
//!   cache. With 100 000 particles they take ~18 MB, far more than a core's L2, and separate
//!   passes read them from L3 or memory twice per iteration. The ∇W scratch a block needs
//!   between its two passes is lent from a ring (one per side) of as many buffers as blocks
//!   can be in flight (from a block's density pass to its correction), so it is reused while
//!   in cache instead of being written to memory and read back: 100 000 particles, one
//!   thread, step 277 → 224 ms. The corrections run early in every iteration, also in the one
//!   whose error ends the solve, before that is known: theirs write the buffer that the end of
//!   the solve discards (one correction pass more per solve: +1 % at 30×30).
//! - three threads or more: each pass is a phase of [`run_phases`] (every block, then the
//!   next pass), which any number of threads share.

use bevy::prelude::*;
use wide::f32x8;

use crate::fluid::FluidSettings;
use crate::fluid::density::{DensityRow, DensityState, Fluid, PairLanes};
use crate::fluid::slots::GROUP;
use crate::kernel::CubicSpline;
use crate::neighbors::{NeighborChunk, chunks_fit};
use crate::parallel::{CHUNK, threads_for};
use crate::phased::{FINISHED, PhaseShared, run_phases, threads_used};
#[cfg(target_arch = "x86_64")]
use crate::simd::{Avx8, has_avx2};
use crate::solver::SolverState;
use crate::sweep::{Side, run_sweeps};

/// Phase of the solve: ρ, C and λ of every row, and the block's error.
const DENSITY: u32 = 0;
/// Phase bit of the solve: Δx of every row, added to the current x into the other buffer.
const CORRECTION: u32 = 1;
/// Phase bit of the solve: the current positions are in [`DensityState::positions`].
const SWAPPED: u32 = 2;
/// Phase bit of the solve: the first density pass, which also builds each chunk's slots.
const FIRST: u32 = 4;

/// The data the blocks of a solve share (see [`run_phases`]).
struct Shared<'s, 'a> {
    /// The two position buffers: [`SWAPPED`] in the phase id says which one is current.
    x: [&'s PhaseShared<'a, Vec2>; 2],
    w: &'s [f32],
    rows: &'s PhaseShared<'a, DensityRow>,
    errors: &'s PhaseShared<'a, f64>,
    lists: &'s PhaseShared<'a, NeighborChunk>,
}

impl Fluid<'_> {
    /// Block `c` of `phase`.
    #[inline(always)]
    fn phase_block<V: PairLanes>(&self, phase: u32, c: usize, s: &Shared) {
        let block = c * CHUNK..(c + 1) * CHUNK;
        let current = usize::from(phase & SWAPPED != 0);
        // SAFETY: each pass of a block runs on one thread. The density pass writes only block
        // c of `rows`, `errors` and `lists` and reads the current `x`; the correction pass
        // writes only block c of the other `x` and of `lists`, and reads the current `x` and
        // the rows of block c and of its neighbours, whose density passes have completed
        // (in a sweep, the other thread may meanwhile write other blocks' rows: they are read
        // through a pointer, without a reference to the whole slice). `solve_on` checked the
        // lists (indices_within); the first density pass of the solve (FIRST) builds each
        // chunk's slots from them, and a block's correction runs after its density pass in
        // the same solve.
        unsafe {
            let chunk = &mut s.lists.block_mut(c..c + 1)[0];
            let x = s.x[current].read();
            if phase & CORRECTION == 0 {
                let out = s.rows.block_mut(block.clone());
                let first = phase & FIRST != 0;
                let block_error = self.density_block::<V>(x, chunk, block, out, first);
                s.errors.block_mut(c..c + 1)[0] = block_error;
            } else {
                let rows = s.rows.as_ptr();
                let corrected = s.x[1 - current].block_mut(block.clone());
                let w = &s.w[block.start..block.start + corrected.len()];
                // An internal invariant (the schedules keep a block's scratch from its density
                // pass to its correction), checked once per block: the reads rely on it.
                let slots = &chunk.slots;
                assert_eq!(
                    slots.gradient.len(),
                    slots.fluid_slots(),
                    "∇W scratch of block {c}"
                );
                let groups = corrected.chunks_mut(GROUP).zip(w.chunks(GROUP));
                for (g, (corrected, w)) in groups.enumerate().take(slots.groups()) {
                    let delta = self.correction_group_of::<V>(slots, g, rows);
                    for (l, (next, &wi)) in corrected.iter_mut().zip(w).enumerate() {
                        *next = x[block.start + g * GROUP + l];
                        if wi > 0.0 {
                            *next += self.over_relaxation * delta[l];
                        }
                    }
                }
            }
        }
    }

    /// [`Fluid::phase_block`] compiled for AVX2 ([`has_avx2`]), on AVX registers.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn phase_block_avx2(&self, phase: u32, c: usize, s: &Shared) {
        self.phase_block::<Avx8>(phase, c, s);
    }
}

/// Runs the density solve on `x[..fluid_count]`; returns (iterations, average error in %).
///
/// The loop stops before correcting once the average error is within the tolerance, or at the
/// iteration cap.
pub(crate) fn solve(
    settings: &FluidSettings,
    state: &mut SolverState,
    chunks: &mut [NeighborChunk],
    scratch: &mut DensityState,
) -> (u32, f32) {
    let threads = threads_for(state.fluid_count);
    solve_on(settings, state, chunks, scratch, threads, PHASES_FROM)
}

/// From this many threads up, the solve runs in phases ([`run_phases`]); below, in sweeps
/// ([`run_sweeps`], at most two threads).
const PHASES_FROM: usize = 3;

/// [`solve`] on up to `max_threads` threads: in phases from `phases_from` threads up, else in
/// sweeps.
fn solve_on(
    settings: &FluidSettings,
    state: &mut SolverState,
    chunks: &mut [NeighborChunk],
    scratch: &mut DensityState,
    max_threads: usize,
    phases_from: usize,
) -> (u32, f32) {
    let n = state.fluid_count;
    if n == 0 {
        return (0, 0.0);
    }
    let boundary = state.boundary_x.len().min(state.boundary_psi.len());
    let well_formed = chunks_fit(chunks, n, |list, first, rows| {
        list.indices_within(first, rows, n, boundary)
    });
    if !well_formed {
        // Only reachable if the lists were edited by hand: the hot loops rely on this check.
        error!("PBF neighbour lists do not match the particles; density solve skipped");
        return (0, 0.0);
    }
    let blocks = chunks.len();
    let threads = threads_used(blocks, max_threads);
    let sweeps = threads < phases_from;
    if sweeps {
        neighbour_spans(chunks, &mut scratch.spans);
    }
    scratch.rows.resize(n, DensityRow::default());
    scratch.block_errors.resize(blocks, 0.0);
    scratch.positions.resize(n, Vec2::ZERO);
    let fluid = Fluid {
        kernel: CubicSpline::new(settings.support_radius),
        mass: settings.particle_mass(),
        rest_density: settings.rest_density,
        inv_rest_density: 1.0 / settings.rest_density,
        epsilon: settings.epsilon,
        over_relaxation: settings.over_relaxation,
        boundary_x: &state.boundary_x,
        boundary_psi: &state.boundary_psi,
    };
    let to_percent = 100.0 / (n as f64 * settings.rest_density as f64);
    let (tolerance, cap) = (
        settings.max_density_error_percent as f64,
        settings.max_iterations,
    );
    // Whether the iteration whose density pass gave the error sum `sum` (kg/m²) ends the solve.
    let finished = |sum: f64, iterations| sum * to_percent <= tolerance || iterations == cap;
    let x = PhaseShared::new(&mut state.x[..n]);
    let positions = PhaseShared::new(&mut scratch.positions[..]);
    let rows = PhaseShared::new(&mut scratch.rows);
    let errors = PhaseShared::new(&mut scratch.block_errors);
    let lists = PhaseShared::new(chunks);
    #[cfg(target_arch = "x86_64")]
    let avx2 = has_avx2();
    let shared = Shared {
        x: [&x, &positions],
        w: &state.w[..n],
        rows: &rows,
        errors: &errors,
        lists: &lists,
    };
    let work = |phase, c| {
        #[cfg(target_arch = "x86_64")]
        if avx2 {
            // SAFETY: the CPU has AVX2.
            return unsafe { fluid.phase_block_avx2(phase, c, &shared) };
        }
        fluid.phase_block::<f32x8>(phase, c, &shared);
    };
    // SAFETY (every `errors.read()` below): no block runs at that point.
    let (mut iterations, mut error, mut last) = (0, 0.0, DENSITY);
    // After the density pass of `phase`: records its error; whether the solve ends there.
    let mut ends_after = |phase: u32, iterations: u32| {
        let sum = unsafe { errors.read() }.iter().sum::<f64>();
        (error, last) = (sum * to_percent, phase);
        finished(sum, iterations)
    };
    if sweeps {
        let spans = &scratch.spans[..];
        // Blocks in flight on a side: from its oldest uncorrected block to the block whose
        // density pass runs, so at most the longest reach of a span + 1 (a shorter ring would
        // still be correct, only not reused in cache).
        let reach = spans.iter().enumerate();
        let reach = reach.map(|(c, &[lo, hi])| (hi as usize - c).max(c - lo as usize));
        let ring = reach.max().unwrap_or(0) + 1;
        for side in &mut scratch.ring.0 {
            side.resize_with(ring, Vec::new);
        }
        let rings = PhaseShared::new(&mut scratch.ring.0[..]);
        // Swaps block c's scratch with its entry in `side`'s ring: lends it before the block's
        // density pass, takes it back after its correction (each block keeps the buffer in
        // between).
        // SAFETY: only `side`'s thread uses its ring, and block c is its block.
        let lend = |side: Side, c: usize| unsafe {
            let chunk = &mut lists.block_mut(c..c + 1)[0];
            let ring = &mut rings.block_mut(side as usize..side as usize + 1)[0];
            let len = ring.len();
            core::mem::swap(&mut chunk.slots.gradient, &mut ring[c % len]);
        };
        run_sweeps(
            spans,
            threads,
            DENSITY | FIRST,
            |phase, side, c| {
                lend(side, c);
                work(phase, c);
            },
            |phase, side, c| {
                work(phase | CORRECTION, c);
                lend(side, c);
            },
            |phase| {
                if ends_after(phase, iterations) {
                    return FINISHED;
                }
                iterations += 1;
                (phase ^ SWAPPED) & !FIRST
            },
        );
    } else {
        run_phases(blocks, threads, DENSITY | FIRST, work, |phase| {
            if phase & CORRECTION != 0 {
                iterations += 1;
                // The density pass of the buffer just written.
                return (phase ^ SWAPPED) & !(CORRECTION | FIRST);
            }
            if ends_after(phase, iterations) {
                FINISHED
            } else {
                phase | CORRECTION
            }
        });
    }
    if last & SWAPPED != 0 {
        state.x[..n].copy_from_slice(&scratch.positions);
    }
    (iterations, error as f32)
}

/// For each block of `chunks`, the first and the last block holding one of its rows' fluid
/// neighbours or the block itself, into `out`.
fn neighbour_spans(chunks: &[NeighborChunk], out: &mut Vec<[u32; 2]>) {
    out.clear();
    out.extend(chunks.iter().enumerate().map(|(c, chunk)| {
        let rows = chunk.fluid.iter().copied();
        let (lo, hi) = rows.fold((u32::MAX, 0), |(lo, hi), j| (lo.min(j), hi.max(j)));
        let block = |row: u32| row as usize / CHUNK;
        [block(lo).min(c) as u32, block(hi).max(c) as u32]
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fluid::boundary::pseudo_masses;
    use crate::fluid::scene::DamBreakBuilder;
    use crate::neighbors::find_neighbors;
    use crate::spatial_grid::SpatialHashGrid;

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
    /// One thread, the sweep.
    const SWEEP: Schedule = (1, PHASES_FROM);
    /// Sweeps from both ends (if the pool has two threads).
    const SWEEPS: Schedule = (2, PHASES_FROM);
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
        find_neighbors(chunks, &fluid_grid, &state.x, &boundary_grid, h);
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
            (SWEEP, SWEEP, 1600, 1590),
            (PHASES, PHASES, 1600, 1590),
            (SWEEPS, SWEEPS, 1600, 1590),
            (SWEEP, PHASES, 1600, 1300),
            (PHASES, SWEEP, 1000, 1600),
            (SWEEP, SWEEPS, 1000, 1600),
            (SWEEPS, SWEEP, 1600, 1300),
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
            chunk.fluid_start.push(0);
            chunk.boundary_start.push(0);
        }
        for r in 0..rows {
            let chunk = &mut out[r / CHUNK];
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
        find_neighbors(&mut lists, &fluid_grid, &scene.x, &boundary_grid, h);
        for (threads, phases_from) in [SWEEP, SWEEPS, PHASES] {
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
    fn the_sweeps_have_the_bits_of_the_phases() {
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
        for (settings, squeeze, ends) in [
            (&default, 0.01, "within the tolerance"),
            (&capped, 0.01, "at the cap"),
            (&relaxed, 0.01, "within the tolerance, ω = 1.6"),
            (&default, 0.0, "at once (no correction)"),
        ] {
            let sweep = solved(settings, squeeze, SWEEP);
            // Both ends may meet anywhere: several runs.
            let runs = if parallel { 8 } else { 1 };
            let others = (0..runs)
                .map(|_| ("sweeps", SWEEPS))
                .chain([("phases", PHASES)]);
            for (name, schedule) in others {
                let other = solved(settings, squeeze, schedule);
                let (a, b) = (bits(&sweep.0), bits(&other.0));
                let differ = a.iter().zip(&b).filter(|(a, b)| a != b);
                assert_eq!(differ.count(), 0, "positions that differ, {name}; {ends}");
                assert_eq!(sweep.1, other.1, "iterations, {name}; {ends}");
                assert_eq!(
                    sweep.2.to_bits(),
                    other.2.to_bits(),
                    "error, {name}; {ends}"
                );
            }
            // The error returned is that of the positions returned.
            let (error, direct) = (sweep.2, sweep.3);
            assert!(
                (error - direct).abs() <= 1e-3 * direct,
                "{ends}: {error} vs {direct}"
            );
            let tolerance = settings.max_density_error_percent;
            match ends {
                "at the cap" => assert!(
                    sweep.1 == 3 && sweep.2 > tolerance,
                    "{:?}",
                    (sweep.1, sweep.2)
                ),
                "at once (no correction)" => assert_eq!(sweep.1, 0),
                _ => assert!(
                    sweep.1 > 1 && sweep.2 <= tolerance,
                    "{ends}: {:?}",
                    (sweep.1, sweep.2)
                ),
            }
        }
    }
}
