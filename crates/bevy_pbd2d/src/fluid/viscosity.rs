//! XSPH viscosity (\[MM13\] eq. 17; Schechter & Bridson 2012).
//!
//! After the velocity update, every fluid particle i with w > 0 gets
//!
//! ```text
//! vᵢ ← vᵢ + c Σⱼ (m/ρⱼ)(vⱼ − vᵢ) Wᵢⱼ
//! ```
//!
//! over its fluid neighbours j (Jacobi: all from the velocities before smoothing), with c the
//! [`FluidSettings::viscosity`] coefficient, ρⱼ from the last density pass and Wᵢⱼ of the final
//! positions (recomputed here: the density passes store only ∇Wᵢⱼ per pair, a third less
//! scratch traffic per iteration).
//!
//! With [phases](crate::fluid::phases) c is the mean of the pair's phases' coefficients,
//! cᵢⱼ = (cᵢ + cⱼ)/2, and a pair of different masses shares its exchange by mass: the
//! particle i takes 2 mⱼ/(mᵢ + mⱼ) of it, so that mᵢ Δvᵢ and mⱼ Δvⱼ are equal and opposite
//! where the two see the same weight (they differ by ρᵢ against ρⱼ, as in one liquid).
//!
//! The PBF demo computes the same increment but stores it as an acceleration
//! aᵢ = −(c/Δt) Σⱼ (m/ρⱼ)(vᵢ − vⱼ)Wᵢⱼ that the next step's prediction adds (Δt aᵢ), so there
//! it takes effect one step later, after gravity is added. Applying it here, as in the paper,
//! makes the velocities written at the end of a step already smoothed.

use bevy::prelude::*;

use crate::fluid::density::DensityState;
use crate::fluid::kernel::{CubicSpline, LANES, Lanes, lengths, sum_lanes};
use crate::fluid::neighbors::{NeighborState, chunks_fit};
use crate::fluid::phases::PhaseState;
use crate::fluid::settings::FluidSettings;
use crate::parallel::phases::for_blocks_mut;
use crate::parallel::{CHUNK, SolverThreads, threads_for};
use crate::particle::state::SolverState;
use crate::stats::{PbdStats, Phase};

/// Scratch copy of the velocities before smoothing.
///
/// Solver scratch, recomputed every step: reflected, but not as a resource
/// (`ReflectResource`), so that saving a world (Bevy's world serialization) leaves it out and a
/// loaded world rebuilds it.
#[derive(Resource, Reflect, Debug, Default)]
pub struct XsphState {
    /// Smoothed velocities of the fluid rows (m/s).
    pub smoothed: Vec<Vec2>,
}

/// [`PbdStepSystems::ApplyViscosity`](crate::PbdStepSystems::ApplyViscosity): XSPH smoothing.
pub fn apply_xsph_viscosity(
    (settings, phases): (Res<FluidSettings>, Res<PhaseState>),
    mut state: ResMut<SolverState>,
    neighbors: Res<NeighborState>,
    density: Res<DensityState>,
    mut scratch: ResMut<XsphState>,
    threads: Res<SolverThreads>,
    mut stats: ResMut<PbdStats>,
) {
    let n = state.fluid_count;
    // ρⱼ comes from this step's last density pass, which ran on the final positions.
    let lists = chunks_fit(&neighbors.chunks, n, |chunk, _, rows| {
        chunk.fluid_count.len() == rows
    });
    // Phases: c per row, the mean of the pair's (module docs).
    let per_row = (phases.viscosity.len() == n).then_some(&phases.viscosity[..]);
    let none = per_row.map_or(settings.viscosity == 0.0, |c| c.iter().all(|&c| c == 0.0));
    if n == 0 || none || density.rows.len() != n || !lists {
        return;
    }
    let started = stats.begin_phase();
    let mass = settings.particle_mass();
    let c_m = settings.viscosity * mass;
    let kernel = CubicSpline::new(settings.support_radius);
    let (x, v, w) = (&state.x[..n], &state.v[..n], &state.w[..n]);
    let rows = &density.rows;
    scratch.smoothed.resize(n, Vec2::ZERO);
    let threads = threads_for(n, threads.cap());
    for_blocks_mut(&mut scratch.smoothed, CHUNK, threads, |first, out| {
        let chunk = &neighbors.chunks[first / CHUNK];
        for (k, out) in out.iter_mut().enumerate() {
            let i = first + k;
            let (xi, vi) = (x[i], v[i]);
            if w[i] == 0.0 {
                *out = vi;
                continue;
            }
            let (mut sx, mut sy) = (Lanes::ZERO, Lanes::ZERO);
            for (_, js, valid) in chunk.fluid_batches(k) {
                let mut lanes = [[0.0; LANES]; 5];
                for l in 0..LANES {
                    // A list edited to name a row past the fluid counts as padding.
                    let j = js[l] as usize;
                    if let (Some(xj), Some(vj), Some(row)) = (x.get(j), v.get(j), rows.get(j)) {
                        let r = xi - *xj;
                        [lanes[0][l], lanes[1][l]] = [r.x, r.y];
                        [lanes[2][l], lanes[3][l], lanes[4][l]] = [vj.x, vj.y, row.density];
                    }
                }
                let [rx, ry, vx, vy, rho] = lanes.map(Lanes::from);
                // Wᵢⱼ of the final positions; padding lanes (the particle itself) add nothing,
                // nor does a zero density (never for fluid).
                let wij = kernel.batch(rx, ry, lengths(rx, ry)).w;
                let mut weight = (valid & rho.simd_gt(Lanes::ZERO)).select(wij / rho, Lanes::ZERO);
                if let Some(c) = per_row {
                    // cᵢⱼ shared by mass: 2 mⱼ/(mᵢ + mⱼ) = 2 wᵢ/(wᵢ + wⱼ) of it (module docs).
                    let pair = |l: usize| {
                        let j = js[l] as usize;
                        let (cj, wj) = (c.get(j).copied(), w.get(j).copied());
                        let (cj, wj) = (cj.unwrap_or(0.0), wj.unwrap_or(w[i]));
                        (c[i] + cj) * w[i] / (w[i] + wj)
                    };
                    weight *= Lanes::from(core::array::from_fn(pair));
                }
                sx += (vx - vi.x) * weight;
                sy += (vy - vi.y) * weight;
            }
            let sum = Vec2::new(sum_lanes(sx), sum_lanes(sy));
            *out = vi + if per_row.is_some() { mass } else { c_m } * sum;
        }
    });
    state.v[..n].copy_from_slice(&scratch.smoothed);
    stats.end_phase(Phase::Viscosity, started);
}

#[cfg(test)]
mod tests {
    use bevy::ecs::system::RunSystemOnce;

    use super::*;
    use crate::fluid::density::DensityRow;
    use crate::fluid::grid::SpatialHashGrid;
    use crate::fluid::neighbors::find_neighbors;

    /// Three fluid particles in a row, 0.04 m apart (h = 0.1): the middle one moves, the
    /// others rest; the right one is pinned (w = 0) and keeps its velocity.
    #[test]
    fn xsph_pulls_neighbours_toward_each_others_velocity() {
        let settings = FluidSettings::default();
        let x = vec![Vec2::ZERO, Vec2::new(0.04, 0.0), Vec2::new(0.08, 0.0)];
        let v0 = vec![Vec2::ZERO, Vec2::new(1.0, 0.0), Vec2::ZERO];
        let rho = 900.0;
        let mut neighbors = NeighborState::default();
        neighbors.fluid_grid.build(&x, settings.support_radius);
        find_neighbors(
            &mut neighbors.chunks,
            &neighbors.fluid_grid,
            &x,
            &SpatialHashGrid::default(),
            settings.support_radius,
            usize::MAX,
        );
        let mut world = World::new();
        world.insert_resource(SolverState {
            fluid_count: 3,
            x: x.clone(),
            x_predicted: x.clone(),
            v: v0,
            w: vec![1.0, 1.0, 0.0],
            ..default()
        });
        world.insert_resource(DensityState {
            rows: vec![
                DensityRow {
                    density: rho,
                    ..default()
                };
                3
            ],
            ..default()
        });
        world.insert_resource(neighbors);
        world.insert_resource(settings);
        world.init_resource::<XsphState>();
        world.init_resource::<PhaseState>();
        world.init_resource::<SolverThreads>();
        world.init_resource::<PbdStats>();
        world.run_system_once(apply_xsph_viscosity).unwrap();

        let v = &world.resource::<SolverState>().v;
        let kernel = CubicSpline::new(settings.support_radius);
        let c = settings.viscosity * settings.particle_mass() / rho;
        let w1 = kernel.w(0.04);
        // vᵢ + c Σⱼ (vⱼ − vᵢ) Wᵢⱼ (m/ρⱼ), all from the velocities before smoothing.
        let expected = [
            Vec2::new(c * w1, 0.0),
            Vec2::new(1.0 - 2.0 * c * w1, 0.0),
            Vec2::ZERO,
        ];
        for (got, want) in v.iter().zip(expected) {
            assert!((*got - want).length() < 1e-6, "{got} vs {want}");
        }
    }
}
