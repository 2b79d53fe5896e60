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
use crate::kernel::{LANES, Lanes, sum_lanes};
use crate::neighbors::NeighborState;
use crate::parallel::{CHUNK, threads_for};
use crate::phased::for_blocks_mut;
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
    // Wᵢⱼ comes from the density pass of this step, which ran on the final positions.
    let solved = neighbors
        .chunks
        .iter()
        .all(|c| c.kernel.len() * LANES == c.fluid.len());
    if n == 0 || settings.viscosity == 0.0 || density.rows.len() != n || !solved {
        return;
    }
    let started = stats.begin_phase();
    let c_m = settings.viscosity * settings.particle_mass();
    let (v, w) = (&state.v[..n], &state.w[..n]);
    let rows = &density.rows;
    scratch.smoothed.resize(n, Vec2::ZERO);
    let threads = threads_for(n);
    for_blocks_mut(&mut scratch.smoothed, CHUNK, threads, |first, out| {
        let chunk = &neighbors.chunks[first / CHUNK];
        for (k, out) in out.iter_mut().enumerate() {
            let i = first + k;
            let vi = v[i];
            if w[i] == 0.0 {
                *out = vi;
                continue;
            }
            let (mut x, mut y) = (Lanes::ZERO, Lanes::ZERO);
            for (at, js, _) in chunk.fluid_batches(k) {
                let (mut vx, mut vy, mut rho) = ([0.0; LANES], [0.0; LANES], [0.0; LANES]);
                for l in 0..LANES {
                    let j = js[l] as usize;
                    (vx[l], vy[l], rho[l]) = (v[j].x, v[j].y, rows[j].density);
                }
                // Padding lanes have W = 0; a zero density (never for fluid) adds nothing.
                let rho = Lanes::from(rho);
                let weight = rho
                    .simd_gt(Lanes::ZERO)
                    .select(chunk.kernel[at] / rho, Lanes::ZERO);
                x += (Lanes::from(vx) - vi.x) * weight;
                y += (Lanes::from(vy) - vi.y) * weight;
            }
            let sum = Vec2::new(sum_lanes(x), sum_lanes(y));
            *out = vi + c_m * sum;
        }
    });
    state.v[..n].copy_from_slice(&scratch.smoothed);
    stats.end_phase(Phase::Viscosity, started);
}
