//! Settling: fluid placed where it does not fit is moved out, not shot out.
//!
//! PBF turns every position correction of a step into velocity, v = v* + (x − x*)/Δt
//! (\[MM13\] Algorithm 1). That is right for the compression a step's own motion makes, and
//! wrong for an error the particle started the step with: a row of fluid spawned on a floor's
//! samples starts at C = 0.227, the density solve lifts it 0.48 r in one step, and at
//! Δt = 5 ms the row was thrown a metre up (129 J; the energy grows as 1/Δt²). Blocks spawned
//! into a wall, onto a collider's surface (which pushes their bottom row into the next) or into
//! a corner did the same. The contacts already push such particles out of a wall without
//! velocity (the pre-stabilisation of \[MMCK14\] §6.2, on x and x* alike); settling does the same
//! for the density error that placement leaves, in two parts, per substep:
//!
//! 1. **Stabilisation** ([`stabilise_settling_fluid`], before the density solve): the density
//!    solve runs once on the settling particles' island at the start of the substep, x₀ = x* − Δt v* (with this substep's
//!    wall pushes), the rest of the fluid held still (w = 0) and so are the rows a wall holds
//!    (they are where the contacts put them), to the solver's tolerance averaged over the
//!    island. A placement's island is every fluid row connected to a settling one by
//!    neighbour lists; where no placement settles, only rows a wall holds (and the neighbours
//!    they compress), theirs is the fluid within [`ISLAND_RINGS`] neighbour lists of them,
//!    solved on the blocks that hold it. Its correction d moves x and x* alike: the error placement
//!    left is removed without velocity. (The walls' sweep after the solve still covers the
//!    motion from x₀, so d cannot carry a particle through a wall.) Where d moved island
//!    rows into a collider (a block on a collider's surface: the solve spreads the bottom
//!    row, pressed by the rows above, back towards the surface), the colliders push them out
//!    without velocity as well ([`collider`](crate::collider)'s `push_settling_fluid_out`) and
//!    [`restabilise_settling_fluid`] solves the islands again with those rows held. (Without
//!    it, the colliders' contact pass after the density solve pushed them out with velocity:
//!    a 10 × 5 block on a rectangle got 2.8 J at Δt = 5 ms, 66 J at 1 ms.)
//! 2. **Guard** ([`guard_settling_fluid`], after the density solve): the settling rows and
//!    their fluid neighbours leave the solve with no more kinetic energy than they began the
//!    substep with plus gravity's work over their motion, |v|² ≤ |v* − gΔt|² + 2 g·(x − x₀)
//!    with v = v* + (x − x*)/Δt; a faster particle keeps its direction and the bound's speed,
//!    the rest of its correction is added to x* too. The solve may take speed from them, and
//!    gravity may give it; placement may not.
//!
//! **Who settles:** a fluid particle in its first substep whose density exceeds ρ0 by more than
//! the tolerance (spawned into walls, colliders or other fluid); a particle a wall holds this
//! substep (embedded, [`contacts`](super::contacts)); and a particle that was settling or is
//! a fluid neighbour of one, compressed by more than the tolerance plus what gravity presses
//! fluid on a wall by in a substep, g Δt² / 2r, that at most [`SETTLING_ERROR_FACTOR`] − 1
//! times the tolerance. (Gravity keeps the rows on a wall compressed; settling them would
//! lift them every substep. Without gravity a block settles to the tolerance: released at
//! 10× it, a 5 × 5 block in a corner drifted off at 0.2–0.3 m/s.) It stops when none of
//! these holds. Rows a wall holds, and the neighbours they compress, settle for that substep
//! only unless a placement settles with them (they are held again if they need to be): in
//! deep water the pressure holds some row on a wall in every substep, and as settling rows
//! they kept the whole pool settling, solved twice per substep (24.8 % of the samples of a
//! 316 × 316 dam break's collapse; now the settling solve takes 12.1–12.2 ms of its step
//! against 23.7–26.0, steps 21–220). Densities are taken at the substep's start x₀, where a placement error still
//! is but the compression the substep's own motion makes is not: measured at the predicted
//! positions, the compression of an impact (two 10 × 10 blocks spawned at rest spacing,
//! 2.5 r apart, one at 1 m/s, no gravity) made the struck rows settle, the island grew with
//! the impact, the guard capped their speed, and 70 % of the momentum was lost in a second. What is left: fluid
//! that runs into fluid while the latter is still settling (placed compressed, for its first
//! few substeps) meets rows whose speed the guard caps, so that impact is not momentum
//! conserving (the same blocks with the struck one placed at spacing 1.8 r: 14 % of the
//! momentum lost). Boundary samples are taken where they are in the substep, so fluid on a
//! moving collider is judged against the collider's new place. The tolerance is the substep's
//! ([`FluidSettings::density_tolerance_percent`]). Settling is kept per entity, so it
//! survives the rows' rebuilds and re-sorts.
//!
//! **Cost:** nothing while no particle settles (one look at the spawned particles'
//! densities); while some do, a density solve over their islands (a resting island is within
//! tolerance after one or two iterations) and a pass over their neighbours. In the 420 steps of
//! the reference dam break (the bench's regression run) no particle settles: its bits are
//! unchanged.
//!
//! **Known limit:** a placement's island is solved to the tolerance averaged over all of it,
//! so in a large block the compression its settling rows pass on to their neighbours stays
//! and the density solve turns it into velocity. A 34 × 30 block placed at rest spacing in the
//! dam-break box's corner (its bottom row 1.32 r above the floor's samples, its left column 2r
//! from the wall's) gains 136 J more than gravity gives in 3 steps at Δt = 5 ms, one particle
//! at the 8 m/s speed limit; without gravity 414 J. Asking it of each row instead does not
//! converge in 100 Jacobi iterations across 30 rows (measured 2026-12-07); a solve that
//! reaches across a block at once (the grid projection's) is the way left.
//!
//! **State:** each fluid particle's [`FluidSettling`] (required by
//! [`FluidParticle`] with the fluid plugin, saved with the world): a world written into
//! another one settles exactly as the original would have. Teleporting fluid (writing a
//! particle's position) into a wall or other fluid is not a spawn; insert
//! [`FluidSettling::Placed`] with the new position to have it settle.

use bevy::ecs::entity::EntityHashSet;
use bevy::prelude::*;

use crate::dynamics::Gravity;
use crate::fluid::contacts::BoundaryContactState;
use crate::fluid::density::{DensityState, solve, solve_blocks};
use crate::fluid::kernel::CubicSpline;
use crate::fluid::neighbors::{NeighborChunk, NeighborState};
use crate::fluid::settings::FluidSettings;
use crate::parallel::{CHUNK, SolverThreads};
#[cfg(doc)]
use crate::particle::FluidParticle;
use crate::particle::SolverIndex;
use crate::particle::state::SolverState;
use crate::stats::{PbdStats, Phase};

/// A particle that was settling, or is a fluid neighbour of one, keeps settling while its
/// density error C exceeds the tolerance ([`FluidSettings::density_tolerance_percent`]) plus
/// gravity's press in a substep, g Δt² / 2r, the sum capped at this many times the
/// tolerance: 10 (module docs). At the reference settings and Δt = 5 ms the limit is
/// 0.1 % + 0.49 % = 0.59 %; at 1/60 s the cap's 1 %; without gravity the tolerance.
pub const SETTLING_ERROR_FACTOR: f32 = 10.0;

/// How far the islands of rows a wall holds, when no placement settles, reach from them: 3
/// neighbour lists (hops of at most the support radius h). Beyond, the fluid is held still
/// while they are solved (module docs).
pub const ISLAND_RINGS: usize = 3;

/// Where a fluid particle stands in settling (module docs). Required by [`FluidParticle`]
/// (with [`FluidPlugin`](super::FluidPlugin)); default [`Placed`](Self::Placed).
#[derive(Component, Reflect, Debug, Default, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Default, Debug, PartialEq)]
pub enum FluidSettling {
    /// Just placed: at its next substep it settles if its density exceeds ρ0 by more than the
    /// tolerance. Insert it again after moving a particle by hand to have it checked again.
    #[default]
    Placed,
    /// Settling: its density error is being removed without velocity.
    Settling,
    /// Settled or never needed to: the density solve treats it as any fluid particle.
    Settled,
}

/// Settling's lists between substeps (module docs); rebuilt from the particles'
/// [`FluidSettling`], so not saved with the world.
#[derive(Resource, Debug, Default)]
pub struct SettlingState {
    /// The settling particles.
    settling: EntityHashSet,
    /// Fluid particles whose [`FluidSettling`] was inserted since the last substep looked.
    fresh: Vec<Entity>,
    /// The settling particles and those just looked at, before this substep's choice.
    looked: Vec<Entity>,
    /// Settling rows of this substep, in row order.
    rows: Vec<u32>,
    /// Rows the guard applies to: the settling rows and their fluid neighbours.
    guard: Vec<u32>,
    /// Per fluid row (scratch): 0 not settling; 1 settling; 3 was settling; 4 a compressed
    /// neighbour of a settling row; 2 in the island; 5 in the island and guarded.
    mark: Vec<u8>,
    /// The island's rows (scratch), the positions and inverse masses set aside (scratch).
    island: Vec<u32>,
    saved_x: Vec<Vec2>,
    saved_w: Vec<f32>,
    /// The blocks of [`CHUNK`] rows that hold the island rows, ascending, when the islands are
    /// held rows' (scratch; empty: the whole fluid is solved).
    blocks: Vec<u32>,
    /// Island rows a collider pushed out after the first solve: held in the second.
    pushed: Vec<u32>,
}

impl SettlingState {
    /// Number of settling fluid particles.
    pub fn len(&self) -> usize {
        self.settling.len()
    }

    /// Whether no fluid particle settles.
    pub fn is_empty(&self) -> bool {
        self.settling.is_empty()
    }

    /// This substep's island rows (empty when none settles), between
    /// [`stabilise_settling_fluid`] and [`restabilise_settling_fluid`].
    pub(crate) fn island_rows(&self) -> &[u32] {
        &self.island
    }

    /// Holds an island row in the second solve (a collider pushed it out of the first).
    pub(crate) fn hold(&mut self, row: u32) {
        self.pushed.push(row);
    }
}

/// Observer: a fluid particle placed (spawned, written from a saved world, or given
/// [`FluidSettling`] again) is looked at in its next substep.
pub(crate) fn note_placed_fluid(
    placed: On<Insert, FluidSettling>,
    mut settling: ResMut<SettlingState>,
) {
    settling.fresh.push(placed.entity);
}

/// ρᵢ = m W(0) + Σⱼ m Wᵢⱼ + Σₖ Ψₖ Wᵢₖ (kg/m²) with the fluid rows at `at(row)`, over row
/// `i`'s lists.
fn density_of(
    state: &SolverState,
    chunk: &NeighborChunk,
    (kernel, m): (&CubicSpline, f32),
    i: usize,
    at: impl Fn(usize) -> Vec2,
) -> f32 {
    let (k, xi) = (i % CHUNK, at(i));
    let fluid = chunk.fluid_of(k).iter();
    let fluid = fluid.map(|&j| m * kernel.w((xi - at(j as usize)).length()));
    let walls = chunk.boundary_of(k).iter().map(|&b| {
        let b = b as usize;
        state.boundary_psi[b] * kernel.w((xi - state.boundary_x[b]).length())
    });
    m * kernel.w0() + fluid.sum::<f32>() + walls.sum::<f32>()
}

/// [`SolveConstraints`](crate::PbdSubstepSystems::SolveConstraints), after the walls' contacts
/// have found the embedded particles and before the density solve: which fluid particles
/// settle, and the stabilisation of their islands (module docs).
#[allow(clippy::too_many_arguments)]
pub fn stabilise_settling_fluid(
    time: Res<Time>,
    settings: Res<FluidSettings>,
    mut state: ResMut<SolverState>,
    mut neighbors: ResMut<NeighborState>,
    mut scratch: ResMut<DensityState>,
    contacts: Res<BoundaryContactState>,
    gravity: Option<Res<Gravity>>,
    threads: Res<SolverThreads>,
    mut particles: Query<(&SolverIndex, &mut FluidSettling)>,
    mut settling: ResMut<SettlingState>,
    mut stats: ResMut<PbdStats>,
) {
    let s = &mut *settling;
    s.guard.clear();
    let n = state.fluid_count;
    // The rows a wall holds in this substep (w = 0 for the solve).
    s.island.clear();
    let held = contacts.held.iter().map(|h| h.row as usize);
    let held = held.filter(|&i| i < n && state.w[i] == 0.0);
    s.island.extend(held.map(|i| i as u32));
    s.pushed.clear();
    if s.settling.is_empty() && s.fresh.is_empty() && s.island.is_empty() {
        stats.settling_particles = 0;
        return;
    }
    let started = stats.begin_phase();
    let state = &mut *state;
    let row_of = |e: Entity, particles: &Query<(&SolverIndex, &mut FluidSettling)>| {
        let (index, phase) = particles.get(e).ok()?;
        let row = index.row() as usize;
        (row < n && state.entities[row] == e).then_some((row, *phase))
    };
    let kernel = CubicSpline::new(settings.support_radius);
    let m = settings.particle_mass();
    let dt = time.delta_secs();
    let tolerance = settings.density_tolerance_percent(dt) / 100.0;
    let chunks = &neighbors.chunks;
    // The density error at the substep's start x₀ = x* − Δt v*: what placement left, not
    // what this substep's motion presses (a block running into fluid at rest is compressed at
    // x*, and settling it would cap the speed its guard lets the solve give: the impact's
    // momentum was lost).
    let error = |i: usize| {
        chunks.get(i / CHUNK).map_or(0.0, |c| {
            let start = |j: usize| state.substep_start(j, dt);
            density_of(state, c, (&kernel, m), i, start) / settings.rest_density - 1.0
        })
    };
    // 1: settling now; 3: was settling (kept while compressed).
    s.mark.clear();
    s.mark.resize(n, 0);
    s.looked.clear();
    s.looked.extend(s.settling.drain());
    s.looked.append(&mut s.fresh);
    for &e in &s.looked {
        match row_of(e, &particles) {
            Some((i, FluidSettling::Settling)) => s.mark[i] = 3,
            Some((i, FluidSettling::Placed)) if error(i) > tolerance => s.mark[i] = 1,
            _ => {}
        }
    }
    // Held rows that were settling go on settling.
    for &i in &s.island {
        if s.mark[i as usize] == 3 {
            s.mark[i as usize] = 1;
        }
    }
    // What gravity alone compresses fluid on a wall by in a substep: g Δt² over the spacing.
    let g = gravity.map_or(0.0, |g| g.0.length());
    let pressed = g * dt * dt / (2.0 * settings.particle_radius);
    let limit = tolerance + pressed.min((SETTLING_ERROR_FACTOR - 1.0) * tolerance);
    for i in 0..n {
        if s.mark[i] == 3 {
            s.mark[i] = u8::from(error(i) > limit);
        }
    }
    // A placement settles (mark 1): the rows a wall holds join it. Without one, the held
    // rows settle alone, this substep only (they are held again if they need to), in islands
    // of the fluid within ISLAND_RINGS neighbour lists of them. Compressed fluid neighbours
    // of either settle too (mark 4), and go on settling; the islands of a placement or of
    // such a neighbour are all the fluid connected to them.
    let placement = s.mark.contains(&1);
    for &i in &s.island {
        s.mark[i as usize] = 1;
    }
    s.rows.clear();
    s.rows
        .extend((0..n as u32).filter(|&i| s.mark[i as usize] == 1));
    for &i in &s.rows {
        let i = i as usize;
        let Some(chunk) = chunks.get(i / CHUNK) else {
            continue;
        };
        for &j in chunk.fluid_of(i % CHUNK) {
            let j = j as usize;
            if s.mark[j] == 0 && state.w[j] > 0.0 && error(j) > limit {
                s.mark[j] = 4;
            }
        }
    }
    s.rows.clear();
    s.rows
        .extend((0..n as u32).filter(|&i| s.mark[i as usize] != 0));
    if placement {
        s.settling
            .extend(s.rows.iter().map(|&i| state.entities[i as usize]));
    }
    stats.settling_particles = s.rows.len();
    for &e in s.looked.iter().chain(&s.settling) {
        if let Ok((_, mut phase)) = particles.get_mut(e) {
            let now = if s.settling.contains(&e) {
                FluidSettling::Settling
            } else {
                FluidSettling::Settled
            };
            phase.set_if_neq(now);
        }
    }
    if s.rows.is_empty() {
        s.island.clear();
        stats.end_phase(Phase::Solve, started);
        return;
    }
    // The islands (mark 2), and for the held rows' the blocks that hold them.
    s.island.clear();
    for &i in &s.rows {
        s.mark[i as usize] = 2;
        s.island.push(i);
    }
    let rings = if placement { usize::MAX } else { ISLAND_RINGS };
    let mut ring = 0..s.island.len();
    for _ in 0..rings {
        for next in ring.clone() {
            let i = s.island[next] as usize;
            let Some(chunk) = chunks.get(i / CHUNK) else {
                continue;
            };
            for &j in chunk.fluid_of(i % CHUNK) {
                if s.mark[j as usize] != 2 {
                    s.mark[j as usize] = 2;
                    s.island.push(j);
                }
            }
        }
        ring = ring.end..s.island.len();
        if ring.start == ring.end {
            break;
        }
    }
    s.blocks.clear();
    if !placement {
        s.blocks.extend(s.island.iter().map(|&i| i / CHUNK as u32));
        s.blocks.sort_unstable();
        s.blocks.dedup();
    }
    stats.fluid_iterations += solve_islands(
        s,
        &settings,
        state,
        &mut neighbors,
        &mut scratch,
        &threads,
        dt,
    );
    // The guard's rows: the settling rows and their fluid neighbours (mark 5).
    for &i in &s.rows {
        let i = i as usize;
        s.mark[i] = 5;
        let Some(chunk) = neighbors.chunks.get(i / CHUNK) else {
            continue;
        };
        for &j in chunk.fluid_of(i % CHUNK) {
            s.mark[j as usize] = 5;
        }
    }
    s.guard
        .extend((0..n as u32).filter(|&i| s.mark[i as usize] == 5 && state.w[i as usize] > 0.0));
    stats.end_phase(Phase::Solve, started);
}

/// Stabilisation: the density solve on the islands (mark 2) at x₀ = x* − Δt v*, the rest of
/// the fluid and the rows held (`pushed`) still; its correction d moves x and x* alike.
/// Returns the iterations.
fn solve_islands(
    s: &mut SettlingState,
    settings: &FluidSettings,
    state: &mut SolverState,
    neighbors: &mut NeighborState,
    scratch: &mut DensityState,
    threads: &SolverThreads,
    dt: f32,
) -> u32 {
    let n = state.fluid_count;
    s.saved_x.clear();
    s.saved_x.extend_from_slice(&state.x[..n]);
    s.saved_w.clear();
    s.saved_w.extend_from_slice(&state.w[..n]);
    for i in 0..n {
        if matches!(s.mark[i], 2 | 5) {
            state.x[i] = state.substep_start(i, dt);
        } else {
            state.w[i] = 0.0;
        }
    }
    for &i in &s.pushed {
        state.w[i as usize] = 0.0;
    }
    let mut island_settings = *settings;
    island_settings.max_density_error_percent =
        settings.density_tolerance_percent(dt) * s.island.len() as f32 / n as f32;
    let track = core::mem::replace(&mut scratch.track_boundary_push, false);
    let chunks = &mut neighbors.chunks;
    let (iterations, _) = match s.blocks.is_empty() {
        true => solve(&island_settings, state, chunks, scratch, threads.cap()),
        false => solve_blocks(
            &island_settings,
            state,
            chunks,
            scratch,
            threads.cap(),
            &s.blocks,
        ),
    };
    scratch.track_boundary_push = track;
    for i in 0..n {
        let x0 = state.substep_start(i, dt);
        let d = if matches!(s.mark[i], 2 | 5) && s.saved_w[i] > 0.0 {
            state.x[i] - x0
        } else {
            Vec2::ZERO
        };
        state.x[i] = s.saved_x[i] + d;
        state.x_predicted[i] += d;
        state.w[i] = s.saved_w[i];
    }
    iterations
}

/// [`SolveConstraints`](crate::PbdSubstepSystems::SolveConstraints), after the colliders have
/// pushed the island rows the first solve moved into them (without velocity): the islands
/// are solved again with those rows held where the colliders put them (module docs).
#[allow(clippy::too_many_arguments)]
pub fn restabilise_settling_fluid(
    time: Res<Time>,
    settings: Res<FluidSettings>,
    mut state: ResMut<SolverState>,
    mut neighbors: ResMut<NeighborState>,
    mut scratch: ResMut<DensityState>,
    threads: Res<SolverThreads>,
    mut settling: ResMut<SettlingState>,
    mut stats: ResMut<PbdStats>,
) {
    if settling.pushed.is_empty() {
        return;
    }
    let started = stats.begin_phase();
    let iterations = solve_islands(
        &mut settling,
        &settings,
        &mut state,
        &mut neighbors,
        &mut scratch,
        &threads,
        time.delta_secs(),
    );
    settling.pushed.clear();
    stats.fluid_iterations += iterations;
    stats.end_phase(Phase::Solve, started);
}

/// [`SolveConstraints`](crate::PbdSubstepSystems::SolveConstraints), after the density solve
/// and before the walls push their embedded particles out: the settling rows and their
/// neighbours leave the solve with no more kinetic energy than they started the substep with
/// plus gravity's work over their motion (module docs).
pub fn guard_settling_fluid(
    time: Res<Time>,
    gravity: Option<Res<Gravity>>,
    mut state: ResMut<SolverState>,
    settling: Res<SettlingState>,
) {
    let dt = time.delta_secs();
    let g = gravity.map_or(Vec2::ZERO, |g| g.0);
    let state = &mut *state;
    for &row in &settling.guard {
        let i = row as usize;
        let (x, predicted, v_star) = (state.x[i], state.x_predicted[i], state.v[i]);
        let start = predicted - dt * v_star;
        let v = v_star + (x - predicted) / dt;
        let v0 = v_star - dt * g;
        let budget = (v0.length_squared() + 2.0 * g.dot(x - start)).max(0.0);
        let speed2 = v.length_squared();
        if !(speed2 > budget && speed2.is_finite()) {
            continue;
        }
        let kept = v * (budget / speed2).sqrt();
        state.x_predicted[i] = x - dt * (kept - v_star);
    }
}
