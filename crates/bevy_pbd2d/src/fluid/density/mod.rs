//! The PBF density constraint (\[MM13\] §3, with the Akinci boundary term of \[AIA+12\]).
//!
//! Density of fluid particle i, with its own term, fluid neighbours j and boundary samples k:
//!
//! ```text
//! ρᵢ = m W(0) + Σⱼ m Wᵢⱼ + Σₖ Ψₖ Wᵢₖ
//! Cᵢ = max(ρᵢ/ρ0 − 1, 0)                                   (clamped: no surface clumping)
//! λᵢ = −Cᵢ / (Σⱼ |∇ⱼCᵢ|² + |∇ᵢCᵢ|² + ε)                    (\[MM13\] eq. 11)
//!   with ∇ⱼCᵢ = −(m/ρ0) ∇Wᵢⱼ,  ∇ᵢCᵢ = (1/ρ0)(Σⱼ m ∇Wᵢⱼ + Σₖ Ψₖ ∇Wᵢₖ)
//! Δxᵢ = (1/ρ0) (Σⱼ m (λᵢ + λⱼ) ∇Wᵢⱼ + Σₖ Ψₖ λᵢ ∇Wᵢₖ)          (\[MM13\] eq. 12)
//! ```
//!
//! As in the PBF demo, boundary samples enter ∇ᵢCᵢ but not the Σⱼ term (they do not move), and
//! the masses of the general PBD form cancel because all fluid particles weigh the same.
//! Each iteration computes ρ, C and λ for all particles (Jacobi), then Δx, then applies ω Δx
//! to particles with w > 0 (ω = [`FluidSettings::over_relaxation`], 1 by default); the
//! passes run in parallel on the compute task pool, or as one pipeline on one thread
//! (the same bits). Both passes take the rows 8 at a time, one per lane of an 8-lane vector,
//! and walk their neighbour lists side by side (slot-major lists, padded to the group's
//! longest list and masked): each row's sums stay in its lane, in list order, and C, λ and Δx
//! are computed for 8 rows at once. The loop stops before correcting once the average density
//! error Σᵢ max(ρᵢ − ρ0, 0)/(N ρ0) (over the particles it can move: one with w = 0, pinned,
//! held or embedded in a wall, has λ = 0 and no part of the sum, like a boundary sample) is at
//! or below the tolerance, so the error reported is that
//! of the final positions; at the iteration cap the error is measured once more after the last
//! correction.
//!
//! ## Chebyshev acceleration ([`FluidSettings::chebyshev`])
//!
//! With `Some(ρ)`, the multipliers are extrapolated, not the positions: the density pass of
//! iteration k stores in each row μᵢ⁽ᵏ⁾ = w_k λᵢ⁽ᵏ⁾ + (w_k − 1) μᵢ⁽ᵏ⁻¹⁾ in place of λᵢ⁽ᵏ⁾, with
//! Chebyshev's weights w_k for spectral radius ρ (\[Wan15\] eq. 11), and the correction
//! applies Δx from the μ as it would from the λ. For a fixed gradient the correction is linear
//! in the multipliers, so this is \[Wan15\]'s x⁽ᵏ⁺¹⁾ = w_k (x⁽ᵏ⁾ + Δx⁽ᵏ⁾ − x⁽ᵏ⁻¹⁾) + x⁽ᵏ⁻¹⁾
//! written for the multipliers; unlike it, every pair's correction stays equal and opposite
//! whatever each row's weight, so the fluid keeps its momentum, and the push the boundary term
//! gives a body ([`DensityState::boundary_push`]) is the one the fluid took. A row
//! whose constraint is inactive (λ = 0, not compressed) is not extrapolated and holds μ = 0;
//! a row that turns active starts again from w = 1 (μ = λ): without that restart the settled
//! 100 × 100 pool sprayed (highest particle 3.04 m against 2.62, up to 42 iterations in a
//! step against 9). It costs no memory: the row's μ⁽ᵏ⁻¹⁾ is the λ it holds.
//!
//! Until 2026-12-07 the positions of the compressed rows were extrapolated
//! (x⁽ᵏ⁺¹⁾ = w_k (x̂⁽ᵏ⁺¹⁾ − x⁽ᵏ⁻¹⁾) + x⁽ᵏ⁻¹⁾ where λ ≠ 0), which broke that symmetry between a
//! compressed row and a free neighbour: two blocks colliding in free space lost 7.6 % of
//! their momentum (0.11 % now, plain Jacobi 0.04 %; `tests/fluid.rs`), a jet hitting a free
//! avian box 2.3 %, so with dynamic bodies in the water the solve was plain Jacobi. The loss
//! also damped the splash: at step 420 of the 30 × 30 dam break (0.3 %) its highest particle
//! was at 1.04 m, against 2.25 m now and 2.07 m with plain Jacobi. Iterations per step, game
//! preset (0.3 %, ρ = 0.9), positions extrapolated → multipliers, plain Jacobi in brackets:
//!
//! | dam break | positions | multipliers |
//! |---|---|---|
//! | 30 × 30, steps 21–420 | 3.08 | 3.08 (5.27) |
//! | 30 × 30, steps 4 021–4 420 | 2.33 | 2.33 |
//! | 100 × 100, steps 4 021–4 120 | 6.66 | 7.93 |
//! | 100 × 100 with 20 avian boxes, steps 21–120 | (26.8, plain) | 15.2 |
//!
//! It divides the count by two to three but leaves its growth with depth (figures of
//! 2026-12-01, positions extrapolated, 0.1 %: 22.6 iterations per step in the 100 × 100 dam
//! break's steps 11–20, 59.1 in the 316 × 316 one's).
//!
//! [`FluidSettings::chebyshev`]: crate::fluid::FluidSettings::chebyshev
//! [`FluidSettings::grid_projection`]: crate::fluid::FluidSettings::grid_projection
//!
//! ## Warm starting: measured, not kept (issue 21)
//!
//! The iteration count grows with the fluid's depth (the dam break's steps 10–20 at the 0.1 %
//! tolerance: 59 per step at 100 × 100, 176 at 316 × 316), because a Jacobi correction travels
//! a few particles per iteration and the hydrostatic pressure has to be rebuilt from nothing in
//! every step. Starting from the last step's pressures, as IISPH and DFSPH do, was tried as an
//! accumulated multiplier Λᵢ = Σ ω λᵢ per row (≤ 0, the total push), the first correction
//! starting from γ Λᵢ of the last step (30 × 30 and 100 × 100 dam breaks, ω = 1 unless said):
//! - Letting Λᵢ shrink where the fluid is sparse (C < 0), which a warm start needs to undo an
//!   overshoot, made plain Jacobi diverge: even with γ = 0 the 30 × 30 dam break blew up
//!   (average density 886 kg/m² after 100 steps against 994, particles at the 8 m/s speed
//!   limit). With ω = 0.8 it stayed stable at γ = 0 (27 iterations against 21), but γ = 1
//!   blew up: within 20 steps the most negative Λ, ~30 times the mean, sat in the bottom-left
//!   corner, on particles pushed through the floor's single layer of samples. With ω = 0.5 the
//!   30 × 30 dam break held (γ = 0.9: 10 iterations against the reference's 17 over 200
//!   steps), but the 100 × 100 one needed 117 iterations in steps 11–20 (plain Jacobi: 59; the
//!   warm start has little to start from yet) and after 400 steps, at 15 iterations against
//!   43, its average density had fallen to 885 kg/m² (plain: 999): the fluid had gained energy
//!   and sprayed.
//! - With pushes only (Λ never shrinks within a step, the stopping rule unchanged), γ = 0.5
//!   halved the 30 × 30 iterations (11 against 21) at the same density, but at 100 × 100 and
//!   316 × 316 it gave 39 and 113 iterations against 59 and 176: the same growth with depth,
//!   since half the pressure still has to travel. γ ≥ 0.8 blew up.
//! - As a complementarity problem: Λᵢ ≤ 0 may shrink back to 0 within the step (Jacobi on the
//!   unclamped C, the correction applying the change of Λ), the first correction applies γ Λ
//!   of the last step, and the stopping error also counts max(ρ0 − ρᵢ, 0) of every row still
//!   pushing (Λᵢ < 0), so that a push the fluid no longer needs is an error. With ω = 1 it
//!   ran to the cap (30 × 30: 66 iterations at γ = 0); with ω = 0.7 it held for γ up to 1
//!   (30 × 30, 400 steps: 20.6, 11.6, 7.2 and 6.5 iterations at γ = 0, 0.5, 0.9 and 1
//!   against 13.6; average density 981, 978 and 972 kg/m² at 0.5, 0.9 and 1 against 978). But
//!   the 100 × 100 and 316 × 316 dam breaks took 79–82 and 141–164 iterations in steps 11–20
//!   (plain: 59 and 176). The spawned block is below ρ0 for its first ~12 steps (1–2
//!   iterations each), then its pressure builds step after step (mean Λ × 14 from step 13 to
//!   25): the last step's pressure is only part of this one's. After 1 000 steps the
//!   100 × 100 dam break took 5.3 iterations against 40, and sprayed (average density
//!   875 kg/m² against 998, top 6.1 m against 3.0). Single rows pushed through the floor's
//!   layer of samples reached Λ = −36 against a mean of −0.004. Neither clamping the warm start
//!   to 3 or 6 times the mean Λ (31.3 and 14.1 iterations, 897 and 891 kg/m²) nor leaving out
//!   rows below 0.99 or 0.97 ρ0 at the start, as DFSPH warm-starts only compressed particles
//!   (7.9 and 7.7, 895 and 887), stopped the spray: under an average error a few rows keep
//!   pushes the fluid no longer needs.
//!
//! So a warm start is no answer in the dam break's first steps, where the pressure is new,
//! and adds energy later. What the tolerance needs at depth is a correction that crosses the
//! fluid within a step in a few iterations: a coarse grid.
//!
//! ## Coarse-grid corrections: the first prototypes, not kept (issue 21)
//!
//! Two prototypes (2026-12-02) put a grid of cells two particle spacings wide (H = h) under the
//! solve: a cell is fluid if it holds a fluid particle, solid if it holds a boundary sample
//! (Neumann), else air (p = 0, Dirichlet); Σₙ (p_c − pₙ) = b_c over the non-solid neighbours
//! n, solved by conjugate gradients to 1 % of the residual; the correction −∇p is taken on
//! the faces and interpolated bilinearly to the particles. Both reach the issue's
//! size-independent iteration count in the dam break's first steps; neither, as built, settles
//! the pool as plain Jacobi does:
//! - **A position correction between the Jacobi iterations** (the grid projection of
//!   volume-conserving FLIP, \[KLTB21\]), b_c = d² Σᵢ Cᵢ over the cell's rows (its excess area),
//!   after the first Jacobi iteration, then after each or every fourth. The dam break's steps 11–20
//!   took 0.5 and 0.4 iterations per step at 100 × 100 and 316 × 316 (plain Jacobi: 59 and 176),
//!   but the conjugate gradients needed 300–340 iterations at 316 × 316 (54–68 ms per step, the
//!   grid solve on one thread), and the fluid gained energy: after 100 steps of the 100 × 100
//!   dam break the average
//!   density was 842–946 kg/m² (plain: 999), after 1 000 steps 881–954 with the settled height
//!   1.16–1.41 times an incompressible fluid's (plain: 1.01), with or without the Jacobi correction
//!   of that iteration, for step scales β from 0.3 to 1. A trace showed why: the solve stops at the
//!   tolerance, leaving ~0.08 % of compression through the whole depth, and a grid correction that
//!   removes it lifts a 5 m column by ~4 mm in one step (0.8 m/s); the error then built back over
//!   5–8 steps and the fluid bounced. Aiming the correction at 0.8 of the tolerance (b scaled by
//!   1 − 0.8 τ/E), counting expanded rows (signed C down to −1 %, where a free surface's rows
//!   start) and replacing that iteration's Jacobi correction brought step 100 close (988 kg/m²,
//!   height 2.29 against 2.20), with 1–2 iterations per step; but the settled height was still
//!   1.135 after 1 000 steps, 1.07 after 2 000 and 1.04 after 3 000. Taking the correction through
//!   the SPH gradient instead (λᵢ = −β p(xᵢ) in the difference form Σⱼ m (λⱼ − λᵢ)∇Wᵢⱼ/ρ0; the
//!   symmetric form of \[MM13\] eq. 12 pushes a uniform λ into the floor, whose samples carry λᵢ
//!   alone) behaved the same (943 kg/m² and 1.24 after 1 000 steps).
//! - **A velocity projection before the iterations** (the pressure solve of PIC/FLIP, on the same
//!   grid): the predicted velocities splatted bilinearly on the faces (0 on faces of solid cells),
//!   b_c = −H ∇·u, and β times the interpolated −∇p added to v, x* and the predicted positions, so
//!   the fluid meets the floor with the hydrostatic pressure already in its velocities. Energy is
//!   better kept (average density 984–995 kg/m², plain 997–1 000), and the 100 × 100 dam break took
//!   0.9 iterations in steps 11–20, 18 at step 100 (plain: 90) and 6.6 after 1 000 steps (42),
//!   316 × 316 0.8 in steps 11–20. But the settled pool stood 1.068 times an incompressible fluid's
//!   height after 2 000 steps and 1.061 after 3 000 (plain, after 2 000: 1.005); with β = 0.7 12.3
//!   iterations after 1 000 steps and 1.029 after 2 000, with β = 0.5 17 and 20 iterations and
//!   1.054 and 1.011. Walls taken as the samples' side of cells holding both fluid and samples
//!   (instead of every cell with a sample) changed nothing, nor did faces no particle reached
//!   taking the face across. Part of the height was voids the projection kept from closing
//!   (it also stops the inflow that fills them): letting under-dense cells draw fluid in
//!   (b_c += d² Σᵢ Cᵢ / Δt over the cell's rows, the last step's densities, Cᵢ > −1 %, where
//!   that sum is negative) gave 7.5, 6.8, 4.1 and 2.7 iterations after 1 000, 2 000, 3 000 and
//!   4 000 steps with heights 1.075, 1.023, 1.018 and 1.013 and average densities of
//!   993–999 kg/m²: a pool that settles, more
//!   slowly than plain Jacobi's (1.005 after 2 000 steps, in 41.4 iterations). Over-dense cells
//!   pushing out as well (the whole sum, scaled by 0.3 or 1) bounced it again (1.09–1.15 after
//!   1 000 and 2 000 steps). At 316 × 316 the step cost 92–112 ms in steps 11–20, most of it
//!   the single-threaded grid solve, and after 1 000 steps the solve needed 42 iterations
//!   (plain: 147.8; 273 ms per step), 5.6 times the 100 × 100 count: the density drift the
//!   projection leaves still has to cross the depth.
//!
//! ## The grid projection: kept ([`FluidSettings::grid_projection`], issue 21)
//!
//! What was kept, as the opt-in [`grid_projection`]: the velocity projection with under-dense
//! cells drawing fluid in, joined by the position correction made velocity-free: applied once
//! per step before the iterations, from the last step's densities (signed, rows above −5 %),
//! to x and x* alike, so that it spreads the compression the tolerance leaves without the
//! bounce (it lifts the fluid a few mm, with no velocity). On a wall's faces the velocity
//! change is minus the splatted velocity into the wall (without it the fluid beside a floor
//! kept a quarter of its fall for the Jacobi iterations), a velocity away from the wall stays,
//! and faces inside a wall are left out of the interpolation: with them the first layer of
//! fluid stuck to the floor, and the 100 × 100 dam break still splashed after 3 000 steps (top
//! 5.5 m against 2.3). Figures (0.1 %, iterations per step, 2 threads, cap 300; the two
//! grid solves side by side), with plain conjugate gradients and with the multigrid
//! preconditioner (the default; 2026-12-03, 3 runs of steps 11–20 and 2 after 1 000 steps, in
//! a slow spell of the VM):
//!
//! | dam break | plain Jacobi | plain CG: iterations, CG its, grid ms, step ms | multigrid |
//! |---|---|---|---|
//! | 100 × 100, steps 11–20 | 59.2 | 0, 170.5, 3.5, 5.7 | 0, 5.5, 2.0–3.1, 5.6–6.8 |
//! | 100 × 100, steps 1 001–1 010 | 42.0 | 3.4, 83.6, 2.7, 6.9 | 2.9, 4.9, 1.8–2.3, 4.9–6.7 |
//! | 100 × 100, steps 3 001–3 010 | | 0.9, 104.8, 3.0, 6.0 | 0.9, 5.2, 2.1, 5.0 |
//! | 316 × 316, steps 11–20 | 175.7 | 0, 400.4, 46.4, 65.2 | 0, 6.3, 15.7–17.8, 41.1–45.4 |
//! | 316 × 316, steps 1 001–1 010 | 147.8 | 0.7, 487.8, 65.2, 93.4 | 0.7, 7.6, 17–18, 43–45 |
//!
//! The grid reaches the issue's size-independent count: no more iterations at 316 × 316 than
//! at 100 × 100, in the first steps and after the collapse. The fluid is a little less dense in
//! number than plain Jacobi's at the same SPH density: the settled 100 × 100 pool stands 1.047
//! and 1.022 times an incompressible fluid's median height after 1 000 and 3 000 steps
//! (plain CG: 1.029 and 1.022 at 998.5 and 999.7 kg/m²; plain Jacobi: 1.005 after 2 000
//! steps), a less ordered arrangement of the particles rather than a compressed one. With plain
//! CG the grid's iterations grew with the fluid's depth in cells, and a step at 316 × 316 cost
//! 13.6 times one at 100 × 100 after 1 000 steps; the multigrid V-cycle keeps them at 4.9–7.6
//! per step (both solves together), and the ratio is 6.1–8.1 in steps 11–20 and 6.4–9.1
//! after 1 000 steps, pair by pair (the issue asks for at most 12). What the grid costs now is
//! mostly its particle passes (building the grid and the excess, the splat of the velocities,
//! the moves), not its solves.
//!
//! \[KLTB21\] Kugelstadt, Longva, Thuerey, Bender: Implicit Density Projection for Volume
//! Conserving Liquids, IEEE TVCG 27(4), 2021.

pub mod grid_projection;
mod passes;
#[cfg(test)]
mod passes_tests;
mod solve;
#[cfg(test)]
mod solve_tests;
mod state;

use bevy::prelude::*;

pub use state::{DensityRow, DensityState, GradientRing};

pub(crate) use solve::{solve, solve_blocks};

/// Longest position correction of one density iteration, in particle radii r:
/// |ω Δxᵢ| ≤ 1.5 r.
///
/// The correction is a Newton step, −C ∇C/|∇C|²: where ∇C nearly vanishes while C > 0 (a
/// packed fluid, a particle deep in a wall's density) it is metres long, and an overfull box
/// threw particles across itself in one iteration. A correction is cut to this length in its
/// own direction; the next iterations go on from there. The reference dam break never asks for
/// more than 1.1 r in a whole step, so this never cuts there.
pub const MAX_STEP_RADII: f32 = 1.5;

use crate::fluid::neighbors::NeighborState;
use crate::fluid::settings::FluidSettings;
use crate::parallel::SolverThreads;
use crate::particle::state::SolverState;
use crate::stats::{PbdStats, Phase};

/// [`PbdSubstepSystems::SolveConstraints`](crate::PbdSubstepSystems::SolveConstraints), before
/// the boundary contacts' sweep and the density solve: the
/// [`grid_projection`] of the fluid, if [`FluidSettings::grid_projection`] asks for it.
///
/// [`FluidSettings::grid_projection`]: crate::fluid::FluidSettings::grid_projection
pub fn project_fluid_on_grid(
    settings: Res<FluidSettings>,
    mut state: ResMut<SolverState>,
    mut scratch: ResMut<DensityState>,
    threads: Res<SolverThreads>,
    time: Res<Time>,
    mut stats: ResMut<PbdStats>,
) {
    let Some(params) = settings.grid_projection else {
        return;
    };
    let fluid = &state.x[..state.fluid_count];
    if !scratch
        .grid
        .deep_enough(fluid, 2.0 * settings.particle_radius, &params)
    {
        return;
    }
    if scratch.track_boundary_push {
        warn_once!(
            "bevy_pbd2d: FluidSettings::grid_projection is not applied while the avian \
             coupling has dynamic bodies to push: the density solve is plain Jacobi"
        );
        stats.grid_skipped += 1;
        return;
    }
    let started = stats.begin_phase();
    let scratch = &mut *scratch;
    // The last density pass's densities, if they are for these rows and these settings (a
    // changed ρ0 or radius would turn them into a spurious excess).
    let fresh = scratch.grid.densities_for == Some((state.rows_generation, *settings));
    let rows = fresh.then_some(&scratch.rows[..]);
    let grid = &mut scratch.grid;
    let dt = time.delta_secs();
    let applied = grid_projection::project(
        &params,
        &settings,
        &mut state,
        rows,
        grid,
        dt,
        threads.cap(),
    );
    stats.grid_iterations += grid.cg_iterations;
    stats.grid_skipped += u32::from(!applied);
    stats.end_phase(Phase::Grid, started);
}

/// [`PbdSubstepSystems::SolveConstraints`](crate::PbdSubstepSystems::SolveConstraints): the PBF density
/// solve of all fluid particles.
pub fn solve_density_constraints(
    time: Res<Time>,
    settings: Res<FluidSettings>,
    mut state: ResMut<SolverState>,
    mut neighbors: ResMut<NeighborState>,
    mut scratch: ResMut<DensityState>,
    threads: Res<SolverThreads>,
    mut stats: ResMut<PbdStats>,
) {
    let started = stats.begin_phase();
    let mut step_settings = *settings;
    step_settings.max_density_error_percent = settings.density_tolerance_percent(time.delta_secs());
    let (iterations, error) = solve::solve(
        &step_settings,
        &mut state,
        &mut neighbors.chunks,
        &mut scratch,
        threads.cap(),
    );
    scratch.grid.densities_for = Some((state.rows_generation, *settings));
    stats.fluid_iterations += iterations;
    stats.avg_density_error_percent = error;
    stats.end_phase(Phase::Solve, started);
}
