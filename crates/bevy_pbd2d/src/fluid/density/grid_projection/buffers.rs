//! The grid projection's buffers ([`GridProjectionState`]), kept between steps.

use bevy::prelude::*;

use super::cells::{CellGrid, Splats};
use super::multigrid::Hierarchy;
use super::poisson::PoissonSolve;
use crate::fluid::settings::FluidSettings;

/// The grid projection's buffers, kept between steps (the pressures for the warm start).
#[derive(Debug, Default, Clone)]
pub struct GridProjectionState {
    pub(super) grid: CellGrid,
    /// The grid's coarse levels, with [`GridProjection::multigrid`](super::GridProjection::multigrid).
    pub(super) hierarchy: Hierarchy,
    /// x(t) per fluid row (m).
    pub(super) start: Vec<Vec2>,
    /// e_c per cell (m²).
    pub(super) excess: Vec<f64>,
    /// Right-hand sides per cell: the velocity solve's and the drift's.
    pub(super) b: Vec<f64>,
    pub(super) drift_b: Vec<f64>,
    /// Face velocities (m/s): x-faces, y-faces, their wall parts, the splats' scratch.
    pub(super) ux: Vec<f64>,
    pub(super) uy: Vec<f64>,
    pub(super) wall_x: Vec<f64>,
    pub(super) wall_y: Vec<f64>,
    pub(super) splats: Splats,
    /// −∇p per x-face and y-face: of the velocity solve (m/s) and of the drift (m).
    pub(super) faces_x: Vec<[f32; 2]>,
    pub(super) faces_y: Vec<[f32; 2]>,
    /// Per fluid row, the velocity change (m/s) and the drift step (m): the faces' slots.
    pub(super) moves: Vec<[Vec2; 2]>,
    pub(super) drift: PoissonSolve,
    pub(super) velocity: PoissonSolve,
    /// The [`SolverState`](crate::particle::SolverState) rows generation and the settings the densities were computed for.
    pub(crate) densities_for: Option<(u64, FluidSettings)>,
    /// Whether the last projection had densities for its rows (the drift and the drawing in
    /// ran): not in the first step, nor in the first after the rows were rebuilt or
    /// [`FluidSettings`] changed.
    pub used_densities: bool,
    /// Conjugate-gradient iterations of the last step, drift and velocity solves together.
    pub cg_iterations: u32,
    /// The fluid's depth in the last step (particle spacings; `depth` module), measured when
    /// [`GridProjection::min_depth`](super::GridProjection::min_depth) is set, else 0. Where
    /// the fluid's bounding box is too low to be deep enough, the box's height in whole cells
    /// (an upper bound of the depth, below the threshold) instead: it is not counted.
    pub depth: f32,
    /// Whether the water was deep enough for the projection in the last step
    /// ([`GridProjection::min_depth`](super::GridProjection::min_depth), with its hysteresis).
    pub deep: bool,
    /// Scratch of the depth's cell counts.
    pub(super) depth_counts: Vec<u16>,
}
