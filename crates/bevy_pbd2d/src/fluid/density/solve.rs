//! The schedule of the PBF density solve (\[MM13\] Algorithm 1, lines 8–19): Jacobi iterations
//! of two passes over blocks of [`CHUNK`] fluid rows, the density pass (ρ, C and λ of each row,
//! the per-pair scratch, the block's error) and the correction pass (Δx of each row).
//!
//! The positions are double-buffered: a correction pass reads the current positions and
//! writes x + ωΔx into the other buffer, which becomes the current one. No pass reads a
//! position that it writes, so the two schedules below give the same bits:
//! - one or two threads: pipelines ([`run_pipeline`]; two threads take the blocks from
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

use crate::fluid::density::MAX_STEP_RADII;
use crate::fluid::density::passes::{Fluid, PairLanes, lanes};
use crate::fluid::density::state::{DensityRow, DensityState};
use crate::fluid::kernel::CubicSpline;
use crate::fluid::neighbors::{NeighborChunk, lists_fit};
use crate::fluid::settings::FluidSettings;
use crate::fluid::slots::GROUP;
use crate::parallel::phases::{PhaseShared, run_phases, threads_used};
use crate::parallel::pipeline::{Side, run_pipeline};
use crate::parallel::progress::FINISHED;
use crate::parallel::{CHUNK, threads_for};
use crate::particle::state::SolverState;
use crate::simd::Lanes8;
#[cfg(target_arch = "x86_64")]
use crate::simd::{Avx8, has_avx2};

/// Phase of the solve: ρ, C and λ of every row, and the block's error.
const DENSITY: u32 = 0;
/// Phase bit of the solve: Δx of every row, added to the current x into the other buffer.
const CORRECTION: u32 = 1;
/// Phase bit of the solve: the current positions are in [`DensityState::positions`].
const SWAPPED: u32 = 2;
/// Phase bit of the solve: the first density pass, which also builds each chunk's slots.
const FIRST: u32 = 4;
/// The phase id's iteration count (corrections done before this phase) starts at this bit.
const ITERATION: u32 = 1 << 8;

/// The data the blocks of a solve share (see [`run_phases`]).
struct Shared<'s, 'a> {
    /// The two position buffers: [`SWAPPED`] in the phase id says which one is current.
    x: [&'s PhaseShared<'a, Vec2>; 2],
    w: &'s [f32],
    rows: &'s PhaseShared<'a, DensityRow>,
    errors: &'s PhaseShared<'a, f64>,
    lists: &'s PhaseShared<'a, NeighborChunk>,
    /// [`DensityState::boundary_push`] and the part of each row's last correction that was
    /// applied (1, or less where it was cut to the longest step), when they are tracked.
    push: Option<(&'s PhaseShared<'a, Vec2>, &'s PhaseShared<'a, f32>)>,
    /// With s_corr, each row's part of the correction from it (m; [`Fluid::density_block`]).
    s_corr: Option<&'s PhaseShared<'a, Vec2>>,
}

impl Fluid<'_> {
    /// Block `c` of `phase`.
    #[inline(always)]
    fn phase_block<V: PairLanes>(&self, phase: u32, c: usize, s: &Shared) {
        let block = c * CHUNK..(c + 1) * CHUNK;
        let current = usize::from(phase & SWAPPED != 0);
        // SAFETY: each pass of a block runs on one thread. The density pass writes only block
        // c of `rows`, `errors`, `lists` and `push` and reads the current `x` (and block c of
        // `push`'s applied parts); the correction pass writes only block c of the other `x`,
        // of `lists` and of the applied parts, and reads the current `x` and
        // the rows of block c and of its neighbours, whose density passes have completed
        // (in a pipeline, the other thread may meanwhile write other blocks' rows: they are read
        // through a pointer, without a reference to the whole slice). `solve_in` checked the
        // lists (`lists_fit`); the first density pass of the solve (FIRST) builds each chunk's
        // slots from them, and a block's correction runs after its density pass in the same
        // solve.
        unsafe {
            let chunk = &mut s.lists.block_mut(c..c + 1)[0];
            let x = s.x[current].read();
            if phase & CORRECTION == 0 {
                let out = s.rows.block_mut(block.clone());
                let first = phase & FIRST != 0;
                if let Some((push, applied)) = s.push {
                    // The boundary part of the last correction, as far as it was applied, since
                    // this block's last density pass, before its rows are overwritten.
                    let scale = self.over_relaxation * self.inv_rest_density;
                    let applied = applied.block_mut(block.clone());
                    let rows = push.block_mut(block.clone()).iter_mut().zip(&*out);
                    for ((push, row), &part) in rows.zip(&*applied) {
                        *push = match first {
                            true => Vec2::ZERO,
                            false => *push + part * scale * row.lambda * row.boundary_gradient,
                        };
                    }
                }
                let w = &s.w[block.start..block.start + out.len()];
                let s_corr = s.s_corr.map(|p| p.block_mut(block.clone()));
                // Chebyshev's weight of the correction that follows (module docs).
                let k = (phase / ITERATION) as usize;
                let chebyshev = self.chebyshev.get(k).copied().unwrap_or(1.0);
                let block_error =
                    self.density_block::<V>(x, chunk, block, out, (w, first, s_corr), chebyshev);
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
                let (omega, max) = (<V as Lanes8>::splat(self.over_relaxation), self.max_step);
                let mut applied = s.push.map(|(_, applied)| applied.block_mut(block.clone()));
                let s_corr = s.s_corr.map(|p| p.block_mut(block.clone()));
                for (g, (corrected, w)) in groups.enumerate().take(slots.groups()) {
                    let (mut dx, mut dy) = self.correction_group_of::<V>(slots, g, rows);
                    if let Some(s_corr) = s_corr.as_deref() {
                        // The rows' s_corr part (artificial_pressure module docs).
                        let own = |l: usize| s_corr.get(g * GROUP + l).copied().unwrap_or_default();
                        dx = dx + lanes::<V>(|l| own(l).x);
                        dy = dy + lanes::<V>(|l| own(l).y);
                    }
                    let (sx, sy) = (omega * dx, omega * dy);
                    // Lanes whose step is longer than the cap (rare) are cut below.
                    let long = (sx * sx + sy * sy).gt_bits(<V as Lanes8>::splat(max * max));
                    let (sx, sy) = (sx.to_f32x8().to_array(), sy.to_f32x8().to_array());
                    for (l, (next, &wi)) in corrected.iter_mut().zip(w).enumerate() {
                        let current = x[block.start + g * GROUP + l];
                        *next = current;
                        let part = applied.as_deref_mut().map(|a| &mut a[g * GROUP + l]);
                        if wi > 0.0 {
                            let step = Vec2::new(sx[l], sy[l]);
                            let (step, cut) = match self.largest_mobility {
                                // Phases: Δxᵢ = μᵢ Σ λ ∇ᵢC with the mobility μᵢ = wᵢ m; the
                                // cap applies to the step taken.
                                Some(_) => {
                                    let step = step * (wi * self.mass);
                                    (step, step.length_squared() > max * max)
                                }
                                None => (step, long & (1 << l) != 0),
                            };
                            if let Some(part) = part {
                                *part = if cut { max / step.length() } else { 1.0 };
                            }
                            *next += if cut {
                                step.clamp_length_max(max)
                            } else {
                                step
                            };
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

/// Runs the density solve on `x[..fluid_count]` on up to `max_threads` threads; returns (iterations, average error in %).
///
/// The loop stops before correcting once the average error is within the tolerance, or at the
/// iteration cap.
pub(crate) fn solve(
    settings: &FluidSettings,
    state: &mut SolverState,
    chunks: &mut [NeighborChunk],
    scratch: &mut DensityState,
    max_threads: usize,
) -> (u32, f32) {
    let threads = threads_for(state.fluid_count, max_threads);
    solve_on(settings, state, chunks, scratch, threads, PHASES_FROM)
}

/// [`solve`] on the blocks `active` only (ids of `chunks`, ascending): the rows of the other
/// blocks keep their positions and count as rows with w = 0 (λ = 0, no part of the error),
/// which the caller must make them be (settling's islands,
/// [`settling`](crate::fluid::settling)). Costs what the active blocks do, in phases on up to
/// `max_threads` threads (same bits for any count).
pub(crate) fn solve_blocks(
    settings: &FluidSettings,
    state: &mut SolverState,
    chunks: &mut [NeighborChunk],
    scratch: &mut DensityState,
    max_threads: usize,
    active: &[u32],
) -> (u32, f32) {
    let threads = threads_for(active.len() * CHUNK, max_threads);
    solve_in(settings, state, chunks, scratch, (threads, 1), Some(active))
}

/// From this many threads up, the solve runs in phases ([`run_phases`]); below, in pipelines
/// ([`run_pipeline`], at most two threads).
pub(super) const PHASES_FROM: usize = 3;

/// [`solve`] on up to `max_threads` threads: in phases from `phases_from` threads up, else in
/// pipelines.
pub(super) fn solve_on(
    settings: &FluidSettings,
    state: &mut SolverState,
    chunks: &mut [NeighborChunk],
    scratch: &mut DensityState,
    max_threads: usize,
    phases_from: usize,
) -> (u32, f32) {
    solve_in(
        settings,
        state,
        chunks,
        scratch,
        (max_threads, phases_from),
        None,
    )
}

/// [`solve_on`], on the blocks `active` only when given ([`solve_blocks`]).
fn solve_in(
    settings: &FluidSettings,
    state: &mut SolverState,
    chunks: &mut [NeighborChunk],
    scratch: &mut DensityState,
    (max_threads, phases_from): (usize, usize),
    active: Option<&[u32]>,
) -> (u32, f32) {
    let n = state.fluid_count;
    if n == 0 {
        return (0, 0.0);
    }
    let boundary = state.boundary_x.len().min(state.boundary_psi.len());
    if !lists_fit(chunks, n, boundary) {
        // Only reachable if the lists were edited by hand: the hot loops rely on this check.
        error!("PBF neighbour lists do not match the particles; density solve skipped");
        return (0, 0.0);
    }
    let blocks = chunks.len();
    let active = active.map(|active| {
        let real = active.iter().take_while(|&&c| (c as usize) < blocks);
        &active[..real.count()]
    });
    let threads = threads_used(active.map_or(blocks, <[u32]>::len), max_threads);
    let pipelines = active.is_none() && threads < phases_from;
    if pipelines {
        neighbour_spans(chunks, &mut scratch.spans);
    }
    scratch.rows.resize(n, DensityRow::default());
    scratch.block_errors.resize(blocks, 0.0);
    scratch.positions.resize(n, Vec2::ZERO);
    if active.is_some() {
        // The other blocks' rows are read, never written: still, no λ, no error.
        scratch.rows.fill(DensityRow::default());
        scratch.block_errors.fill(0.0);
        scratch.positions.copy_from_slice(&state.x[..n]);
    }
    let track = scratch.track_boundary_push;
    let tracked = if track { n } else { 0 };
    scratch.boundary_push.resize(tracked, Vec2::ZERO);
    scratch.push_applied.clear();
    scratch.push_applied.resize(tracked, 1.0);
    let s_corr_rows = if settings.artificial_pressure.is_some() {
        n
    } else {
        0
    };
    scratch.s_corr.resize(s_corr_rows, Vec2::ZERO);
    // Chebyshev weights by correction (0-based), when accelerated (module docs).
    let weights = &mut scratch.chebyshev_weights;
    weights.clear();
    if let Some(rho) = settings.chebyshev {
        weights.extend(chebyshev_weights(rho, settings.max_iterations as usize + 1));
    }
    let kernel = CubicSpline::new(settings.support_radius);
    let fluid = Fluid {
        kernel,
        mass: settings.particle_mass(),
        rest_density: settings.rest_density,
        inv_rest_density: 1.0 / settings.rest_density,
        epsilon: settings.epsilon,
        over_relaxation: settings.over_relaxation,
        chebyshev: &scratch.chebyshev_weights,
        max_step: MAX_STEP_RADII * settings.particle_radius,
        largest_mobility: largest_mobility(&state.w[..n], settings.particle_mass()),
        artificial_pressure: (settings.artificial_pressure)
            .map(|p| p.terms(&kernel, 2.0 * settings.particle_radius)),
        boundary_x: &state.boundary_x,
        boundary_psi: &state.boundary_psi,
    };
    let to_percent = 100.0 / (n as f64 * settings.rest_density as f64);
    let (tolerance, cap) = (
        settings.max_density_error_percent as f64,
        settings.max_iterations,
    );
    // With s_corr at least one correction (s_corr acts only in corrections).
    let least = u32::from(settings.artificial_pressure.is_some());
    // Whether the iteration whose density pass gave the error sum `sum` (kg/m²) ends the solve.
    let finished = |sum: f64, iterations| {
        (sum * to_percent <= tolerance && iterations >= least) || iterations == cap
    };
    let x = PhaseShared::new(&mut state.x[..n]);
    let positions = PhaseShared::new(&mut scratch.positions[..]);
    let rows = PhaseShared::new(&mut scratch.rows);
    let errors = PhaseShared::new(&mut scratch.block_errors);
    let lists = PhaseShared::new(chunks);
    let push = PhaseShared::new(&mut scratch.boundary_push[..]);
    let applied = PhaseShared::new(&mut scratch.push_applied[..]);
    let s_corr = PhaseShared::new(&mut scratch.s_corr[..]);
    #[cfg(target_arch = "x86_64")]
    let avx2 = has_avx2();
    let shared = Shared {
        x: [&x, &positions],
        w: &state.w[..n],
        rows: &rows,
        errors: &errors,
        lists: &lists,
        push: track.then_some((&push, &applied)),
        s_corr: fluid.artificial_pressure.map(|_| &s_corr),
    };
    let work = |phase, c: usize| {
        let c = active.map_or(c, |active| active[c] as usize);
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
    if pipelines {
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
        run_pipeline(
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
                ((phase ^ SWAPPED) & !FIRST) + ITERATION
            },
        );
    } else {
        let blocks = active.map_or(blocks, <[u32]>::len);
        run_phases(blocks, threads, DENSITY | FIRST, work, |phase| {
            if phase & CORRECTION != 0 {
                iterations += 1;
                // The density pass of the buffer just written.
                return ((phase ^ SWAPPED) & !(CORRECTION | FIRST)) + ITERATION;
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

/// The largest mobility μᵢ = wᵢ `mass` of the movable rows, if some row's differs from 1
/// (relative 10⁻⁶): fluid of several phases, whose corrections the solve weights by mobility
/// ([`phases`](crate::fluid::phases)).
fn largest_mobility(w: &[f32], mass: f32) -> Option<f32> {
    let mobilities = w.iter().filter(|&&w| w > 0.0).map(|&w| w * mass);
    let (differ, largest) = mobilities.fold((false, 0.0f32), |(differ, largest), mu| {
        (differ || (mu - 1.0).abs() > 1e-6, largest.max(mu))
    });
    differ.then_some(largest)
}

/// The Chebyshev semi-iterative weights w_k of corrections k = 0 .. `count` for spectral radius
/// `rho` (\[Wan15\] eq. 11, from the second correction on): w_0 = 1, w_1 = 2/(2 − ρ²),
/// w_(k+1) = 4/(4 − ρ² w_k).
pub(super) fn chebyshev_weights(rho: f32, count: usize) -> impl Iterator<Item = f32> {
    let rho2 = rho * rho;
    (0..count).scan(1.0f32, move |w, k| {
        *w = match k {
            0 => 1.0,
            1 => 2.0 / (2.0 - rho2),
            _ => 4.0 / (4.0 - rho2 * *w),
        };
        Some(*w)
    })
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
