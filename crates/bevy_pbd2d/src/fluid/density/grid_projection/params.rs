//! The grid projection's parameters ([`GridProjection`]) and their ranges.

use bevy::prelude::*;

use crate::error::{PbdError, within};

/// Cells of the grid at most per fluid particle (at least 65 536 cells in all): beyond, the step
/// runs without the grid projection.
pub const MAX_CELLS_PER_PARTICLE: usize = 16;

/// The cell sizes accepted, in particle spacings 2r.
pub const CELL_SPACINGS_RANGE: core::ops::RangeInclusive<f32> = 1.0..=8.0;

/// The Poisson tolerances accepted (relative residual).
pub const TOLERANCE_RANGE: core::ops::RangeInclusive<f32> = 1e-6..=0.5;

/// The depths [`GridProjection::min_depth`] accepts (particle spacings).
pub const MIN_DEPTH_RANGE: core::ops::RangeInclusive<f32> = 0.0..=100_000.0;

/// Once the grid projection runs, it keeps running until the water is shallower than this
/// part of [`GridProjection::min_depth`], so that water near the threshold does not switch it
/// on and off from step to step.
pub const MIN_DEPTH_HYSTERESIS: f32 = 0.75;

/// The free-surface thresholds θ accepted.
pub const SURFACE_THRESHOLD_RANGE: core::ops::RangeInclusive<f32> = 0.0..=1.0;

/// Parameters of the grid projection (module docs); `FluidSettings::grid_projection: None`
/// turns it off.
#[derive(Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Default)]
pub struct GridProjection {
    /// Cell size H in particle spacings 2r, in [`CELL_SPACINGS_RANGE`]. Default 2 (H = 4r, the
    /// support radius of the PBF demo).
    pub cell_spacings: f32,
    /// The conjugate gradients stop at ‖b − A p‖ ≤ this × ‖b‖, in [`TOLERANCE_RANGE`].
    /// Default 0.01.
    pub tolerance: f32,
    /// θ: a row with C = ρ/ρ0 − 1 ≤ −θ counts as free surface and adds no excess area, in
    /// [`SURFACE_THRESHOLD_RANGE`]. Default 0.05.
    pub surface_threshold: f32,
    /// Precondition the conjugate gradients with a multigrid V-cycle (module docs of
    /// `multigrid`; McAdams, Sifakis, Teran 2010), or `false`: plain conjugate gradients, whose
    /// iterations grow with the fluid's depth in cells. Default `true`.
    pub multigrid: bool,
    /// Run only where the water is deep: in steps whose fluid has a column at least this many
    /// particle spacings deep (module docs of `depth`: the longest run of full cells in a
    /// column), and, once running, until it is shallower than [`MIN_DEPTH_HYSTERESIS`] of it;
    /// in the other steps the density solve works alone. In [`MIN_DEPTH_RANGE`]; 0: every step.
    /// Default 0. [`FluidSettings::game`](crate::fluid::FluidSettings::game) sets 64: the grid
    /// costs more than it saves in shallower water (the 30 × 30 dam break and the settled
    /// 100 × 100 pool, 33 spacings deep; bench README).
    pub min_depth: f32,
}

impl Default for GridProjection {
    fn default() -> Self {
        Self {
            cell_spacings: 2.0,
            tolerance: 0.01,
            surface_threshold: 0.05,
            multigrid: true,
            min_depth: 0.0,
        }
    }
}

impl GridProjection {
    /// Checks every field.
    ///
    /// # Errors
    /// [`PbdError::NotInRange`] naming the first field outside its range (or NaN).
    pub fn validate(&self) -> Result<(), PbdError> {
        within(
            "grid cell size (spacings)",
            self.cell_spacings,
            CELL_SPACINGS_RANGE,
        )?;
        within("grid tolerance", self.tolerance, TOLERANCE_RANGE)?;
        within(
            "grid surface threshold",
            self.surface_threshold,
            SURFACE_THRESHOLD_RANGE,
        )?;
        within(
            "grid minimum depth (spacings)",
            self.min_depth,
            MIN_DEPTH_RANGE,
        )?;
        Ok(())
    }
}
