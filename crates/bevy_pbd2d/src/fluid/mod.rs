//! Position Based Fluids (\[MM13\]) with Akinci boundary samples (\[AIA+12\]).
//!
//! Per step: the fluid neighbour search ([`find_fluid_neighbors`]), the density constraint
//! solve ([`density`]), the velocity update (shared with all particles) and XSPH viscosity
//! ([`viscosity`]). Boundary samples get their pseudo-mass Ψ in [`boundary`], and are walls
//! fluid cannot cross ([`contacts`]).
//!
//! Fluid particles are particles ([`Particle`](crate::particle::Particle)) with
//! [`FluidParticle`]; fluid particles have the mass m = (2r)²ρ0 of [`FluidSettings`], or
//! that of their [`FluidPhase`] ([`phases`]: oil on water, honey). A
//! fluid particle with w = 0 (pinned or held) contributes to its neighbours' densities but is
//! not corrected, and asks for no room of its own (λ = 0, as a boundary sample). Fluid meets
//! the particles of bodies with [`FluidCoupling`] ([`coupling`]) and passes through the
//! others.

pub mod artificial_pressure;
pub mod boundary;
pub mod cfl;
mod components;
pub mod contacts;
pub mod coupling;
pub mod density;
pub mod forces;
pub(crate) mod grid;
pub(crate) mod kernel;
pub(crate) mod neighbor_lists;
pub(crate) mod neighbors;
pub mod phases;
pub mod resort;
pub mod settings;
pub mod settling;
pub(crate) mod slots;
pub mod viscosity;

use bevy::ecs::entity_disabling::Disabled;
use bevy::prelude::*;

pub use crate::particle::FluidParticle;
pub use artificial_pressure::ArtificialPressure;
pub use components::{BoundaryDensityOnly, BoundaryIndex, BoundaryParticle, PseudoMass};
pub use contacts::{BoundaryContactState, BoundaryContactSystems};
pub use coupling::FluidCoupling;
pub use density::grid_projection::GridProjection;
pub use neighbors::{NeighborState, SlotFill, find_fluid_neighbors};
pub use phases::{FluidPhase, PhaseState};
pub use settings::FluidSettings;
pub use settling::{FluidSettling, SettlingState};

use crate::constraints::distance::solve_distance_constraints;
use crate::dynamics::integrator::{predict, update_velocities};
use crate::fluid::density::DensityState;
use crate::fluid::viscosity::XsphState;
use crate::parallel::{SolverThreads, apply_helper_linger};
use crate::particle::sync::{copy_particles_in, rebuild_particle_rows};
use crate::schedule::{
    PbdPrepared, PbdSchedule, PbdStepSystems, PbdSubstepSchedule, PbdSubstepSystems, StepChecks,
};

/// Position Based Fluids: registers the fluid and boundary components and [`FluidSettings`],
/// and adds the fluid's systems to the step: boundary Ψ
/// ([`Prepare`](PbdStepSystems::Prepare)), the CFL speed limit around the prediction
/// ([`Predict`](PbdSubstepSystems::Predict), [`ApplyViscosity`](PbdStepSystems::ApplyViscosity)),
/// the neighbour search ([`FindNeighbors`](PbdSubstepSystems::FindNeighbors)), the density solve
/// after the distance constraints ([`SolveConstraints`](PbdSubstepSystems::SolveConstraints)) and
/// XSPH ([`ApplyViscosity`](PbdStepSystems::ApplyViscosity)). A game without fluid can disable
/// it (`PbdPlugins::default().build().disable::<FluidPlugin>()`): then no fluid system runs,
/// and [`FluidParticle`]s move as plain particles.
#[derive(Debug, Clone, Copy, Default)]
pub struct FluidPlugin;

impl Plugin for FluidPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<BoundaryParticle>()
            .register_type::<BoundaryDensityOnly>()
            .register_type::<BoundaryIndex>()
            .register_type::<PseudoMass>()
            .register_type::<FluidSettings>()
            .register_type::<DensityState>()
            .register_type::<XsphState>()
            .register_type::<SolverThreads>()
            .register_type::<FluidSettling>()
            .register_type::<FluidCoupling>()
            .register_type::<FluidPhase>()
            .register_type::<PhaseState>()
            .register_type::<forces::FluidForcesState>()
            .register_required_components::<FluidParticle, FluidSettling>()
            .init_resource::<NeighborState>()
            .init_resource::<DensityState>()
            .init_resource::<XsphState>()
            .init_resource::<BoundaryContactState>()
            .init_resource::<SettlingState>()
            .init_resource::<PhaseState>()
            .init_resource::<forces::FluidForcesState>()
            .init_resource::<coupling::CouplingState>();
        StepChecks::add::<FluidSettings>(app);
        StepChecks::add::<SolverThreads>(app);
        app.add_observer(boundary::mark_boundary_dirty::<Add, BoundaryParticle>)
            .add_observer(boundary::mark_boundary_dirty::<Remove, BoundaryParticle>)
            .add_observer(boundary::mark_boundary_dirty::<Add, BoundaryDensityOnly>)
            .add_observer(boundary::mark_boundary_dirty::<Remove, BoundaryDensityOnly>)
            .add_observer(boundary::mark_boundary_dirty::<Add, Disabled>)
            .add_observer(boundary::mark_boundary_dirty::<Remove, Disabled>)
            .add_observer(boundary::mark_sample_rows_dirty::<Remove, crate::particle::Position>)
            .add_observer(boundary::mark_sample_rows_dirty::<Remove, PseudoMass>)
            .add_observer(boundary::mark_sample_rows_dirty::<Remove, BoundaryIndex>)
            .add_observer(boundary::mark_sample_rows_dirty::<Insert, BoundaryIndex>)
            .add_observer(settling::note_placed_fluid);
        // The contacts' systems run only in steps with fluid and boundary samples (one test).
        app.configure_sets(
            PbdSubstepSchedule,
            BoundaryContactSystems.run_if(contacts::walls_and_fluid),
        );
        app.add_systems(
            PbdSchedule,
            (
                (apply_helper_linger, boundary::update_boundary)
                    .chain()
                    .in_set(PbdPrepared)
                    .after(copy_particles_in),
                resort::resort_fluid_rows
                    .in_set(PbdPrepared)
                    .before(rebuild_particle_rows),
                (coupling::collect_coupled_particles, phases::collect_phases)
                    .in_set(PbdPrepared)
                    .after(copy_particles_in)
                    .after(rebuild_particle_rows),
                (
                    viscosity::apply_xsph_viscosity,
                    forces::apply_fluid_forces,
                    cfl::limit_fluid_speed,
                )
                    .chain()
                    .in_set(PbdStepSystems::ApplyViscosity),
            ),
        )
        .add_systems(
            PbdSubstepSchedule,
            (
                (
                    cfl::limit_fluid_speed,
                    contacts::record_start_positions.in_set(BoundaryContactSystems),
                )
                    .in_set(PbdSubstepSystems::Predict)
                    .before(predict),
                find_fluid_neighbors.in_set(PbdSubstepSystems::FindNeighbors),
                (
                    coupling::separate_before_density.run_if(coupling::has_coupled_particles),
                    density::project_fluid_on_grid,
                    contacts::prepare_boundary_contacts.in_set(BoundaryContactSystems),
                    settling::stabilise_settling_fluid,
                    settling::restabilise_settling_fluid,
                    density::solve_density_constraints,
                    coupling::separate_after_density.run_if(coupling::has_coupled_particles),
                    settling::guard_settling_fluid,
                    contacts::resolve_boundary_contacts.in_set(BoundaryContactSystems),
                )
                    .chain()
                    .in_set(PbdSubstepSystems::SolveConstraints)
                    .after(solve_distance_constraints),
                contacts::settle_contact_velocities
                    .in_set(PbdSubstepSystems::UpdateVelocities)
                    .in_set(BoundaryContactSystems)
                    .after(update_velocities),
            ),
        );
    }
}
