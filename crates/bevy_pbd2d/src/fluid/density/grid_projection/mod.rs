//! The grid projection ([`FluidSettings::grid_projection`]): a pressure solve on a grid of cells
//! H wide under the particles, before the density iterations, so that the fluid's pressure
//! crosses its depth in one step instead of a few particles per Jacobi iteration.
//!
//! Each step (each substep, with substeps), from the positions at its start x(t) = x* − Δt v*
//! and the densities of the last density pass:
//!
//! 1. **The grid**: a cell holding a boundary sample is solid (a wall at rest), one holding a
//!    fluid particle is fluid, and so is an empty one with no air neighbour and fluid above it
//!    (a void in the water: as air, its p = 0 at depth drew the fluid in with a jet, and a deep
//!    pool stood 3 % high); any other is air (p = 0, the free surface). Per cell, the excess
//!    area e_c = Σᵢ Cᵢ d² of the rows in it (Cᵢ = ρᵢ/ρ0 − 1, signed, d = 2r), leaving out
//!    rows with Cᵢ ≤ −θ ([`GridProjection::surface_threshold`]: a free surface's rows lack
//!    neighbours, not fluid) and rows with w = 0 (pinned or held: splatted, never moved).
//! 2. **Drift**: Σₙ (p_c − pₙ) = e_c (a solid cell's e shared among its fluid neighbours), and
//!    every particle moves by −∇p, interpolated bilinearly from the faces (at most
//!    [`MAX_STEP_RADII`] r): x and x* alike, so that the velocity does not change
//!    (v = v* + (x − x*)/Δt). This spreads the compression or expansion the last step left (as
//!    the density projection of \[KLTB21\] does) without giving the fluid energy: as a velocity
//!    change it bounced the pool (module docs of [`density`](crate::fluid::density)).
//! 3. **Velocity**: v* splatted on the faces, Σₙ (p_c − pₙ) = −H ∇·u + min(e_c, 0)/Δt,
//!    v += −∇p (at most [`MAX_STEP_RADII`] r/Δt), and x, x* += Δt (−∇p): the pressure
//!    projection of PIC/FLIP \[ZB05\]. On a face between a solid cell and another, a velocity
//!    into the wall is taken away (the change there is minus it) and one away from the wall
//!    stays, as the clamped density constraint lets fluid leave a wall; faces inside a wall are
//!    left out of the interpolation, so walls do not hold the fluid back along them. Cells
//!    whose rows are sparse draw fluid in, so that voids close (they are also spread by step 2:
//!    with step 2 alone the 100 × 100 dam break averaged 995.1 kg/m² after 1 000 steps, with
//!    both 998.1). It gives the fluid meeting a floor the hydrostatic pressure's impulse
//!    before the first Jacobi iteration.
//!
//! The Poisson equations (Σₙ over the neighbours that are not solid, p = 0 on air cells: −H²
//! times the 5-point Laplacian) are solved by conjugate gradients to a relative residual of
//! [`GridProjection::tolerance`] (at most 1 000 iterations), started from the last step's
//! pressures and preconditioned by a multigrid V-cycle ([`GridProjection::multigrid`], module
//! docs of `multigrid`), so that their iterations do not grow with the fluid's depth; the two
//! run side by side on two threads, each on one thread in a fixed order. The particles' moves
//! are interpolated in parallel, each particle on its own: the bits are the same for any
//! thread count. Fluid that no path of fluid cells links to
//! air (sealed in a full container, where the pressure's level would be free) gets no
//! pressure, only the walls' condition. The Jacobi iterations then correct what the grid
//! cannot see, the particles' arrangement within a cell.
//!
//! With [`GridProjection::min_depth`] it runs only while the water is that deep (`depth`).
//! Not applied while [`DensityState::track_boundary_push`] is set, i.e. while the avian
//! coupling has dynamic bodies with samples anywhere in the world (a warning says so once):
//! the grid takes walls to be at rest, and the push handed to the bodies is the Jacobi
//! corrections'. Other couplings were tried on 2026-12-07 and not kept (bench README,
//! *Bodies and the grid*). The pressure of the fluid cells beside a body's cells as its push
//! (ρ0 H p per face, \[BBB07\]'s pressure integral without its fractional faces), with the
//! fluid's momentum change in the step handed to the walls exactly, floated boxes of
//! 0.25–0.75 ρ0 in water 72 particles deep 18–32 % of their height too high, still moving at
//! 1.0–1.5 m/s 4–6 s after they were dropped. Leaving the bodies' samples out of the grid
//! (their cells fluid or air) floated a box of 0.25 ρ0 63 % under instead of 25 %. A body
//! needs to be in the pressure solve itself (its velocity an unknown, as in \[BBB07\]).
//! Moving kinematic walls are taken to be at rest too. Skipped for a step (with a
//! warning, once) if the fluid's bounding box would need more than [`MAX_CELLS_PER_PARTICLE`]
//! cells per fluid particle and more than 65 536 in all (spray flung far away), or if a
//! position is not finite. [`PbdStats::grid_skipped`] counts the substeps skipped either way.
//! Without densities for the current rows (the first step, or the rows rebuilt since: a spawn,
//! a despawn, a re-sort) or for the current [`FluidSettings`] (edited since), e = 0: no drift
//! and no drawing in. Densities left stale by positions the game set count for one step, each
//! move bounded as above.
//!
//! \[KLTB21\] Kugelstadt, Longva, Thuerey, Bender: Implicit Density Projection for Volume
//! Conserving Liquids, IEEE TVCG 27(4), 2021.
//! \[ZB05\] Zhu, Bridson: Animating Sand as a Fluid, SIGGRAPH 2005.
//! \[BBB07\] Batty, Bertails, Bridson: A Fast Variational Framework for Accurate Solid-Fluid
//! Coupling, SIGGRAPH 2007.
//!
//! [`FluidSettings::grid_projection`]: crate::fluid::FluidSettings::grid_projection
//! [`DensityState::track_boundary_push`]: crate::fluid::density::DensityState::track_boundary_push
//! [`PbdStats::grid_skipped`]: crate::stats::PbdStats::grid_skipped

pub(crate) mod buffers;
mod cells;
mod depth;
mod multigrid;
pub(crate) mod params;
mod poisson;
#[cfg(test)]
mod tests;

use bevy::prelude::*;

use crate::fluid::density::MAX_STEP_RADII;
use crate::fluid::density::state::DensityRow;
use crate::fluid::settings::FluidSettings;
use crate::parallel::phases::for_blocks_mut;
use crate::parallel::{CHUNK, pool, threads_for};
use crate::particle::state::SolverState;

pub use buffers::GridProjectionState;
use cells::{CellGrid, CellKind};
pub use params::{
    CELL_SPACINGS_RANGE, GridProjection, MAX_CELLS_PER_PARTICLE, MIN_DEPTH_HYSTERESIS,
    MIN_DEPTH_RANGE, SURFACE_THRESHOLD_RANGE, TOLERANCE_RANGE,
};

/// Runs the grid projection (module docs) on the fluid rows of `state`: moves x and
/// x_predicted and changes v. `rows` holds the last step's densities, if they are for these
/// rows. `dt` is the step (s); the two solves run side by side if `max_threads` allows two.
/// Returns `false` if the step was skipped (module docs: a bounding box too large for the grid,
/// a position that is not finite), `true` if it ran or had nothing to do (no fluid, Δt ≤ 0).
pub(crate) fn project(
    params: &GridProjection,
    settings: &FluidSettings,
    state: &mut SolverState,
    rows: Option<&[DensityRow]>,
    scratch: &mut GridProjectionState,
    dt: f32,
    max_threads: usize,
) -> bool {
    scratch.cg_iterations = 0;
    scratch.used_densities = false;
    let n = state.fluid_count;
    let rows = rows.filter(|rows| rows.len() == n).unwrap_or_default();
    let densities = !rows.is_empty();
    if n == 0 || dt.is_nan() || dt <= 0.0 {
        return true;
    }
    let SolverState {
        x,
        x_predicted,
        v,
        w,
        boundary_x,
        ..
    } = state;
    let (x, x_predicted, v, w) = (&mut x[..n], &mut x_predicted[..n], &mut v[..n], &w[..n]);
    let d = 2.0 * settings.particle_radius;
    let size = params.cell_spacings * d;
    scratch.start.clear();
    // x(t) = x* − Δt v*: x itself may have been moved already (distance constraints).
    let start = x_predicted.iter().zip(v.iter()).map(|(&x, &v)| x - dt * v);
    scratch.start.extend(start);
    let max_cells = (MAX_CELLS_PER_PARTICLE * n).max(1 << 16);
    let grid = &mut scratch.grid;
    if !grid.build(&scratch.start, boundary_x, size, max_cells) {
        warn_once!(
            "bevy_pbd2d: the fluid's bounding box needs more than {MAX_CELLS_PER_PARTICLE} grid \
             cells per particle (or a position is not finite); grid projection skipped"
        );
        return false;
    }
    scratch.used_densities = densities;
    let cells = grid.len();
    let multigrid = params.multigrid.then_some(&mut scratch.hierarchy).map(|h| {
        h.build(grid);
        &*h
    });
    let excess = &mut scratch.excess;
    excess.clear();
    excess.resize(cells, 0.0);
    if densities {
        let (area, inv_rho0) = (d * d, 1.0 / settings.rest_density);
        for ((&p, row), &w) in scratch.start.iter().zip(rows).zip(w) {
            let c = row.density * inv_rho0 - 1.0;
            if w > 0.0
                && c > -params.surface_threshold
                && let Some(cell) = grid.cell_of(p)
            {
                excess[cell] += f64::from(c * area);
            }
        }
    }
    let tolerance = f64::from(params.tolerance);
    let max_step = MAX_STEP_RADII * settings.particle_radius;
    if densities {
        drift_rhs(grid, excess, &mut scratch.drift_b);
    }
    let parallel = threads_for(n, max_threads) > 1 && pool().thread_num() > 1;
    grid.face_velocities(
        &scratch.start,
        v,
        (&mut scratch.ux, &mut scratch.uy),
        (&mut scratch.wall_x, &mut scratch.wall_y),
        &mut scratch.splats,
        parallel,
    );
    let (nx, h) = (grid.nx, f64::from(size));
    let b = &mut scratch.b;
    b.clear();
    b.resize(cells, 0.0);
    let (ux, uy) = (&scratch.ux, &scratch.uy);
    for c in nx..cells - nx {
        if grid.kind[c] == CellKind::Fluid {
            let divergence = ux[c + 1] - ux[c] + uy[c + nx] - uy[c];
            b[c] = -h * divergence + excess[c].min(0.0) / f64::from(dt);
        }
    }
    // The two solves are independent: on two threads they run side by side, each in its
    // own fixed order (the same bits either way).
    let (drift, velocity) = (&mut scratch.drift, &mut scratch.velocity);
    let drift_b = &scratch.drift_b;
    if densities && parallel {
        pool().scope(|s| {
            s.spawn(async { drift.solve(grid, multigrid, drift_b, tolerance) });
            velocity.solve(grid, multigrid, b, tolerance);
        });
    } else {
        if densities {
            drift.solve(grid, multigrid, drift_b, tolerance);
        }
        velocity.solve(grid, multigrid, b, tolerance);
    }
    // −∇p on the faces, then each particle's drift step and velocity change from its x(t)
    // (in parallel, each particle on its own: the same bits for any thread count), applied in
    // row order.
    let (faces_x, faces_y) = (&mut scratch.faces_x, &mut scratch.faces_y);
    for faces in [&mut *faces_x, &mut *faces_y] {
        faces.clear();
        faces.resize(cells, [0.0; 2]);
    }
    let walls = Some((&scratch.wall_x[..], &scratch.wall_y[..]));
    grid.face_descents(&scratch.velocity.p, walls, 0, (faces_x, faces_y));
    scratch.cg_iterations += scratch.velocity.iterations;
    if densities {
        grid.face_descents(&scratch.drift.p, None, 1, (faces_x, faces_y));
        scratch.cg_iterations += scratch.drift.iterations;
    }
    let faces = (&scratch.faces_x[..], &scratch.faces_y[..]);
    let start = &scratch.start[..];
    scratch.moves.clear();
    scratch.moves.resize(n, [Vec2::ZERO; 2]);
    for_blocks_mut(&mut scratch.moves, CHUNK, max_threads, |first, block| {
        for (k, out) in block.iter_mut().enumerate() {
            let [dv, step] = grid.descents_at(faces, grid.coordinates(start[first + k]));
            out[0] = dv.clamp_length_max(max_step / dt);
            if densities {
                out[1] = step.clamp_length_max(max_step);
            }
        }
    });
    for (i, &[dv, step]) in scratch.moves.iter().enumerate() {
        // Pinned or held rows (w = 0) stay; so does any w that is not positive.
        if w[i].is_nan() || w[i] <= 0.0 {
            continue;
        }
        if densities && step.is_finite() {
            x[i] += step;
            x_predicted[i] += step;
        }
        if dv.is_finite() {
            v[i] += dv;
            x[i] += dt * dv;
            x_predicted[i] += dt * dv;
        }
    }
    true
}

/// b = e on the fluid cells, with each solid cell's e shared equally among its fluid
/// neighbours (rows in a wall's cell push the fluid beside it).
fn drift_rhs(grid: &CellGrid, excess: &[f64], b: &mut Vec<f64>) {
    let (cells, nx) = (grid.len(), grid.nx);
    b.clear();
    b.resize(cells, 0.0);
    for c in 0..cells {
        if grid.kind[c] == CellKind::Fluid {
            b[c] += excess[c];
        }
    }
    for (c, &e) in excess.iter().enumerate().take(cells - nx).skip(nx) {
        if grid.kind[c] != CellKind::Solid || e == 0.0 {
            continue;
        }
        let around = [c - 1, c + 1, c - nx, c + nx];
        let fluid = around.iter().filter(|&&n| grid.kind[n] == CellKind::Fluid);
        let count = fluid.clone().count();
        for &n in fluid {
            b[n] += e / count as f64;
        }
    }
}
