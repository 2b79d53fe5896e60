//! Position Based Fluids (\[MM13\]) with Akinci boundary samples (\[AIA+12\]).
//!
//! Per step: the fluid neighbour search ([`find_fluid_neighbors`]), the density constraint
//! solve ([`density`]), the velocity update (shared with all particles) and XSPH viscosity
//! ([`viscosity`]). Boundary samples get their pseudo-mass Ψ in [`boundary`].
//!
//! Fluid particles are particles ([`Particle`](crate::particle::Particle)) with
//! [`FluidParticle`]; all fluid particles have the mass m = (2r)²ρ0 of [`FluidSettings`]. A
//! fluid particle with w = 0 (pinned or held) contributes to its neighbours' densities but is
//! not corrected. Fluid does not interact with cloth particles.

pub mod boundary;
pub mod cfl;
pub mod density;
pub(crate) mod grid;
pub(crate) mod kernel;
pub(crate) mod neighbor_lists;
pub(crate) mod neighbors;
pub mod settings;
pub(crate) mod slots;
pub mod viscosity;

use bevy::prelude::*;

pub use crate::particle::FluidParticle;
pub use neighbors::NeighborState;
pub use settings::FluidSettings;

use crate::constraints::distance::solve_distance_constraints;
use crate::dynamics::integrator::predict;
use crate::fluid::density::DensityState;
use crate::fluid::neighbors::find_neighbors;
use crate::fluid::viscosity::XsphState;
use crate::parallel::{SolverThreads, apply_helper_linger};
use crate::particle::state::SolverState;
use crate::particle::sync::copy_particles_in;
use crate::schedule::{PbdPrepared, PbdSchedule, PbdStepSystems, StepChecks};
use crate::stats::{PbdStats, Phase};

/// A static boundary sample (\[AIA+12\]): fluid particles near it feel it through its
/// pseudo-mass Ψ. Requires a [`Position`](crate::particle::Position) (m) and a [`PseudoMass`]
/// (computed by the plugin whenever boundary samples are added, removed or moved, or
/// [`FluidSettings`] change). It is not a simulated particle.
#[derive(Component, Reflect, Debug, Default, Clone, Copy)]
#[reflect(Component, Default)]
#[require(crate::particle::Position, PseudoMass, BoundaryIndex)]
pub struct BoundaryParticle;

/// A boundary sample's row in the solver's boundary arrays; maintained by the plugin. Saved
/// with the world, it keeps the rows, and so the fluid's sums, in the same order after a load
/// (`u32::MAX`: not yet a row).
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Default)]
pub struct BoundaryIndex(pub u32);

impl Default for BoundaryIndex {
    fn default() -> Self {
        Self(u32::MAX)
    }
}

/// Akinci pseudo-mass Ψ of a boundary sample (kg): Ψ_k = ρ0 / Σ_l W_kl over the boundary
/// samples l within h, including k itself (\[AIA+12\] eq. 4). Written by the plugin.
#[derive(Component, Reflect, Debug, Default, Clone, Copy, PartialEq, Deref)]
#[reflect(Component, Default)]
pub struct PseudoMass(pub f32);

/// [`PbdStepSystems::FindNeighbors`]: grid over the predicted
/// fluid positions and neighbour lists (fluid and boundary) of every fluid particle.
pub fn find_fluid_neighbors(
    settings: Res<FluidSettings>,
    state: Res<SolverState>,
    mut neighbors: ResMut<NeighborState>,
    threads: Res<SolverThreads>,
    mut stats: ResMut<PbdStats>,
) {
    let started = stats.begin_phase();
    stats.boundary_particles = state.boundary_x.len();
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
        threads.cap(),
    );
    stats.end_phase(Phase::Neighbors, started);
}

/// Position Based Fluids: registers the fluid and boundary components and [`FluidSettings`],
/// and adds the fluid's systems to the step: boundary Ψ
/// ([`Prepare`](PbdStepSystems::Prepare)), the CFL speed limit around the prediction
/// ([`Predict`](PbdStepSystems::Predict), [`ApplyViscosity`](PbdStepSystems::ApplyViscosity)),
/// the neighbour search ([`FindNeighbors`](PbdStepSystems::FindNeighbors)), the density solve
/// after the distance constraints ([`SolveConstraints`](PbdStepSystems::SolveConstraints)) and
/// XSPH ([`ApplyViscosity`](PbdStepSystems::ApplyViscosity)). A game without fluid can disable
/// it (`PbdPlugins::default().build().disable::<FluidPlugin>()`): then no fluid system runs,
/// and [`FluidParticle`]s move as plain particles.
#[derive(Debug, Clone, Copy, Default)]
pub struct FluidPlugin;

impl Plugin for FluidPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<BoundaryParticle>()
            .register_type::<BoundaryIndex>()
            .register_type::<PseudoMass>()
            .register_type::<FluidSettings>()
            .register_type::<DensityState>()
            .register_type::<XsphState>()
            .register_type::<SolverThreads>()
            .init_resource::<NeighborState>()
            .init_resource::<DensityState>()
            .init_resource::<XsphState>();
        StepChecks::add::<FluidSettings>(app);
        StepChecks::add::<SolverThreads>(app);
        app.add_observer(boundary::mark_boundary_dirty::<Add, BoundaryParticle>)
            .add_observer(boundary::mark_boundary_dirty::<Remove, BoundaryParticle>);
        app.add_systems(
            PbdSchedule,
            (
                (apply_helper_linger, boundary::update_boundary)
                    .chain()
                    .in_set(PbdPrepared)
                    .after(copy_particles_in),
                cfl::limit_fluid_speed
                    .in_set(PbdStepSystems::Predict)
                    .before(predict),
                find_fluid_neighbors.in_set(PbdStepSystems::FindNeighbors),
                density::solve_density_constraints
                    .in_set(PbdStepSystems::SolveConstraints)
                    .after(solve_distance_constraints),
                (viscosity::apply_xsph_viscosity, cfl::limit_fluid_speed)
                    .chain()
                    .in_set(PbdStepSystems::ApplyViscosity),
            ),
        );
    }
}
