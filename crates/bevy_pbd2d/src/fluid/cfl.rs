//! The CFL speed limit of fluid particles.
//!
//! A particle that moves more than a fraction of the support radius h in one step can pass
//! through the single row of boundary samples (spaced 2r = h/2) before the density constraint
//! sees it; once behind them, their density gradient pushes it further out. The Courant number
//! C of [`FluidSettings::cfl_number`] bounds every fluid speed by C·h/Δt, before the prediction
//! and after the velocity update and XSPH (Courant, Friedrichs, Lewy 1928; the usual SPH time
//! step condition Δt ≤ C h / v_max used the other way round).

use bevy::prelude::*;

use crate::fluid::settings::FluidSettings;
use crate::particle::state::SolverState;

/// Clamps the speed of every fluid particle to C·h/Δt (m/s).
pub fn limit_fluid_speed(
    time: Res<Time>,
    settings: Res<FluidSettings>,
    mut state: ResMut<SolverState>,
) {
    let max = settings.max_speed(time.delta_secs());
    let n = state.fluid_count;
    for v in &mut state.v[..n] {
        *v = v.clamp_length_max(max);
    }
}
