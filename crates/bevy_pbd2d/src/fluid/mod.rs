//! Position Based Fluids (\[MM13\]) with Akinci boundary samples (\[AIA+12\]).
//!
//! Per step: the fluid neighbour search ([`find_fluid_neighbors`]), the density constraint
//! solve ([`density`]), the velocity update (shared with all particles) and XSPH viscosity
//! ([`viscosity`]). Boundary samples get their pseudo-mass Ψ in [`boundary`].
//!
//! Fluid particles are particles ([`Particle`]) with
//! [`FluidParticle`]; all fluid particles have the mass m = (2r)²ρ0 of [`FluidSettings`]. A
//! fluid particle with w = 0 (pinned or held) contributes to its neighbours' densities but is
//! not corrected. Fluid does not interact with cloth particles.

pub mod boundary;
pub mod cfl;
pub mod density;
mod jacobi;
pub mod scene;
pub mod settings;
pub(crate) mod slots;
pub mod viscosity;

use bevy::prelude::*;

pub use settings::FluidSettings;

use crate::neighbors::{NeighborState, find_neighbors};
use crate::particle::Particle;
use crate::solver::SolverState;
use crate::stats::{PbdStats, Phase};

/// Marks a particle as fluid. Requires [`Particle`].
#[derive(Component, Reflect, Debug, Default, Clone, Copy)]
#[reflect(Component, Default)]
#[require(Particle)]
pub struct FluidParticle;

/// A static boundary sample (\[AIA+12\]): fluid particles near it feel it through its
/// pseudo-mass Ψ. Requires a [`Position`](crate::particle::Position) (m) and a [`PseudoMass`]
/// (computed by the plugin whenever boundary samples are added, removed or moved, or
/// [`FluidSettings`] change). It is not a simulated particle.
#[derive(Component, Reflect, Debug, Default, Clone, Copy)]
#[reflect(Component, Default)]
#[require(crate::particle::Position, PseudoMass)]
pub struct BoundaryParticle;

/// Akinci pseudo-mass Ψ of a boundary sample (kg): Ψ_k = ρ0 / Σ_l W_kl over the boundary
/// samples l within h, including k itself (\[AIA+12\] eq. 4). Written by the plugin.
#[derive(Component, Reflect, Debug, Default, Clone, Copy, PartialEq, Deref)]
#[reflect(Component, Default)]
pub struct PseudoMass(pub f32);

/// [`PbdSystems::FindNeighbors`](crate::PbdSystems::FindNeighbors): grid over the predicted
/// fluid positions and neighbour lists (fluid and boundary) of every fluid particle.
pub fn find_fluid_neighbors(
    settings: Res<FluidSettings>,
    state: Res<SolverState>,
    mut neighbors: ResMut<NeighborState>,
    mut stats: ResMut<PbdStats>,
) {
    let started = stats.begin_phase();
    let neighbors = &mut *neighbors;
    let fluid = &state.x[..state.fluid_count];
    let h = settings.support_radius;
    neighbors.fluid_grid.build(fluid, h);
    find_neighbors(
        &mut neighbors.chunks,
        &neighbors.fluid_grid,
        fluid,
        &neighbors.boundary_grid,
        h,
    );
    stats.end_phase(Phase::Neighbors, started);
}
