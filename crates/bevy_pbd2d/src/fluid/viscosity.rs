//! XSPH viscosity (\[MM13\] eq. 17; Schechter & Bridson 2012).
//!
//! After the velocity update, every fluid particle i with w > 0 gets
//!
//! ```text
//! vᵢ ← vᵢ + c Σⱼ (m/ρⱼ)(vⱼ − vᵢ) Wᵢⱼ
//! ```
//!
//! over its fluid neighbours j (Jacobi: all from the velocities before smoothing), with c the
//! [`FluidSettings::viscosity`] coefficient and ρⱼ from the last density pass.
//!
//! The PBF demo computes the same increment but stores it as an acceleration
//! aᵢ = −(c/Δt) Σⱼ (m/ρⱼ)(vᵢ − vⱼ)Wᵢⱼ that the next step's prediction adds (Δt aᵢ), so there
//! it takes effect one step later, after gravity is added. Applying it here, as in the paper,
//! makes the velocities written at the end of a step already smoothed.

use bevy::prelude::*;

use crate::fluid::FluidSettings;
use crate::fluid::density::DensityState;
use crate::kernel::CubicSpline;
use crate::neighbors::NeighborState;
use crate::parallel::{CHUNK, for_chunks};
use crate::solver::SolverState;
use crate::stats::{PbdStats, Phase};

/// Scratch copy of the velocities before smoothing.
#[derive(Resource, Reflect, Debug, Default)]
#[reflect(Resource)]
pub struct XsphState {
    /// Smoothed velocities of the fluid rows (m/s).
    pub smoothed: Vec<Vec2>,
}

/// [`PbdSystems::ApplyViscosity`](crate::PbdSystems::ApplyViscosity): XSPH smoothing.
pub fn apply_xsph_viscosity(
    settings: Res<FluidSettings>,
    mut state: ResMut<SolverState>,
    neighbors: Res<NeighborState>,
    density: Res<DensityState>,
    mut scratch: ResMut<XsphState>,
    mut stats: ResMut<PbdStats>,
) {
    let n = state.fluid_count;
    if n == 0 || settings.viscosity == 0.0 || density.rows.len() != n {
        return;
    }
    let started = stats.begin_phase();
    let kernel = CubicSpline::new(settings.support_radius);
    let c_m = settings.viscosity * settings.particle_mass();
    let (x, v, w) = (&state.x[..n], &state.v[..n], &state.w[..n]);
    let rows = &density.rows;
    scratch.smoothed.resize(n, Vec2::ZERO);
    for_chunks(&mut scratch.smoothed, |first, out| {
        let chunk = &neighbors.chunks[first / CHUNK];
        for (k, out) in out.iter_mut().enumerate() {
            let i = first + k;
            let vi = v[i];
            if w[i] == 0.0 {
                *out = vi;
                continue;
            }
            let mut sum = Vec2::ZERO;
            for &j in chunk.fluid_of(k) {
                let j = j as usize;
                let rho = rows[j].density;
                if rho > 0.0 {
                    sum += (v[j] - vi) * (kernel.w((x[i] - x[j]).length()) / rho);
                }
            }
            *out = vi + c_m * sum;
        }
    });
    state.v[..n].copy_from_slice(&scratch.smoothed);
    stats.end_phase(Phase::Viscosity, started);
}
