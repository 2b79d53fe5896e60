//! The fluid's forces besides pressure and XSPH, applied to the velocities at the end of each
//! step, after XSPH and before the speed limit: vorticity confinement ([`vorticity`]) and
//! surface tension and adhesion ([`surface_tension`]). Each is off at 0
//! ([`FluidSettings::vorticity_confinement`], [`FluidSettings::surface_tension`],
//! [`FluidSettings::adhesion`]); with all three off nothing here runs.
//!
//! They are accelerations aᵢ from the final positions, the last density pass's ρ and the
//! step's fluid neighbour lists, applied as vᵢ += Δt aᵢ to the particles with w > 0 (Jacobi:
//! every aᵢ from the same velocities), in blocks on the solver's threads (the same bits for
//! any thread count).

pub mod surface_tension;
pub mod vorticity;

use bevy::prelude::*;

use crate::fluid::coupling::CouplingState;
use crate::fluid::density::DensityState;
use crate::fluid::kernel::CubicSpline;
use crate::fluid::neighbors::{NeighborChunk, NeighborState, chunks_fit};
use crate::fluid::settings::FluidSettings;
use crate::parallel::phases::for_blocks_mut;
use crate::parallel::{CHUNK, SolverThreads, threads_for};
use crate::particle::state::SolverState;
use crate::stats::{PbdStats, Phase};

/// Scratch of the fluid's forces, per fluid row (recomputed every step; reflected, not as a
/// resource, like the other solver scratch).
#[derive(Resource, Reflect, Debug, Default)]
pub struct FluidForcesState {
    /// Scalar vorticity ωᵢ (1/s) of the last step with vorticity confinement.
    pub vorticity: Vec<f32>,
    /// Akinci's surface normal nᵢ = h Σⱼ (m/ρⱼ) ∇Wᵢⱼ (dimensionless) of the last step with
    /// surface tension.
    pub normals: Vec<Vec2>,
    /// Scratch: the velocity changes of one force (m/s).
    #[reflect(ignore)]
    dv: Vec<Vec2>,
    /// Scratch: ρⱼ of the last density pass, per fluid row (kg/m²).
    #[reflect(ignore)]
    densities: Vec<f32>,
}

/// What a force's passes read: the fluid's rows, its lists and constants.
pub(crate) struct FluidPairs<'a> {
    pub x: &'a [Vec2],
    pub w: &'a [f32],
    /// ρⱼ of the last density pass (kg/m²).
    pub density: &'a [f32],
    pub chunks: &'a [NeighborChunk],
    pub kernel: CubicSpline,
    /// The reference particle mass m = (2r)² ρ0 (kg).
    pub mass: f32,
    pub threads: usize,
}

impl FluidPairs<'_> {
    /// Calls `f(j, r, d, W, ∇W)` for each fluid neighbour j of row `i` (r = xᵢ − xⱼ, d = ‖r‖
    /// > 0, ∇W with respect to xᵢ), skipping pairs that coincide or left the support.
    #[inline]
    pub fn each_neighbour(&self, i: usize, mut f: impl FnMut(usize, Vec2, f32, f32, Vec2)) {
        let chunk = &self.chunks[i / CHUNK];
        for &j in chunk.fluid_of(i % CHUNK) {
            let j = j as usize;
            let r = self.x[i] - self.x[j];
            let d = r.length();
            if d > 1e-6 * self.kernel.support_radius() && d < self.kernel.support_radius() {
                let (w, grad) = self.kernel.scalar(r, d);
                f(j, r, d, w, grad);
            }
        }
    }

    /// The mass of row j (kg): 1/wⱼ, or the reference mass for a held row.
    #[inline]
    pub fn mass_of(&self, j: usize) -> f32 {
        if self.w[j] > 0.0 {
            1.0 / self.w[j]
        } else {
            self.mass
        }
    }

    /// `out[i] = f(i)` for every fluid row, in blocks on the solver's threads.
    pub fn per_row<T: Send + Sync + Default + Clone>(
        &self,
        out: &mut Vec<T>,
        f: impl Fn(usize) -> T + Sync,
    ) {
        out.clear();
        out.resize(self.x.len(), T::default());
        for_blocks_mut(out, CHUNK, self.threads, |first, block| {
            for (k, out) in block.iter_mut().enumerate() {
                *out = f(first + k);
            }
        });
    }
}

/// [`PbdStepSystems::ApplyViscosity`](crate::PbdStepSystems::ApplyViscosity), after XSPH:
/// vorticity confinement, then surface tension and adhesion (module docs).
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply_fluid_forces(
    (settings, time): (Res<FluidSettings>, Res<Time>),
    mut state: ResMut<SolverState>,
    neighbors: Res<NeighborState>,
    density: Res<DensityState>,
    coupling: Res<CouplingState>,
    mut scratch: ResMut<FluidForcesState>,
    threads: Res<SolverThreads>,
    mut stats: ResMut<PbdStats>,
) {
    let on = settings.vorticity_confinement > 0.0
        || settings.surface_tension > 0.0
        || settings.adhesion > 0.0;
    let n = state.fluid_count;
    let lists = chunks_fit(&neighbors.chunks, n, |chunk, _, rows| {
        chunk.fluid_count.len() == rows
    });
    if !on || n == 0 || density.rows.len() != n || !lists {
        return;
    }
    let started = stats.begin_phase();
    let dt = time.delta_secs();
    let scratch = &mut *scratch;
    let mut dv = core::mem::take(&mut scratch.dv);
    let mut densities = core::mem::take(&mut scratch.densities);
    densities.clear();
    densities.extend(density.rows.iter().map(|row| row.density));
    if settings.vorticity_confinement > 0.0 {
        let pairs = fluid_pairs(&settings, &state, &neighbors, &densities, &threads);
        let epsilon = settings.vorticity_confinement;
        vorticity::confinement(
            &pairs,
            &state.v[..n],
            epsilon,
            &mut scratch.vorticity,
            &mut dv,
        );
        apply(&mut state, &dv, dt);
    }
    if settings.surface_tension > 0.0 || settings.adhesion > 0.0 {
        let pairs = fluid_pairs(&settings, &state, &neighbors, &densities, &threads);
        let boundary = (&state.boundary_x[..], &state.boundary_psi[..]);
        let forces = surface_tension::SurfaceForces {
            gamma: settings.surface_tension,
            beta: settings.adhesion,
            rest_density: settings.rest_density,
            boundary,
        };
        forces.accelerations(&pairs, &mut scratch.normals, &mut dv);
        apply(&mut state, &dv, dt);
        if settings.adhesion > 0.0 {
            let coupled = coupling.discs();
            surface_tension::adhere_to_particles(&settings, &mut state, &neighbors, coupled, dt);
        }
    }
    scratch.dv = dv;
    scratch.densities = densities;
    stats.end_phase(Phase::Viscosity, started);
}

/// The pair passes' view of this step's fluid.
fn fluid_pairs<'a>(
    settings: &FluidSettings,
    state: &'a SolverState,
    neighbors: &'a NeighborState,
    densities: &'a [f32],
    threads: &SolverThreads,
) -> FluidPairs<'a> {
    let n = state.fluid_count;
    FluidPairs {
        x: &state.x[..n],
        w: &state.w[..n],
        density: densities,
        chunks: &neighbors.chunks,
        kernel: CubicSpline::new(settings.support_radius),
        mass: settings.particle_mass(),
        threads: threads_for(n, threads.cap()),
    }
}

/// vᵢ += Δt aᵢ for the fluid rows with w > 0 (`accelerations` in m/s²).
fn apply(state: &mut SolverState, accelerations: &[Vec2], dt: f32) {
    let n = state.fluid_count;
    for ((v, &w), &a) in state.v[..n]
        .iter_mut()
        .zip(&state.w[..n])
        .zip(accelerations)
    {
        if w > 0.0 && a.is_finite() {
            *v += dt * a;
        }
    }
}
