//! The order of one simulation step.
//!
//! All sets run chained, top to bottom, in [`PbdSchedule`], once per fixed step (one call of the
//! reference demos' `simulationStep()`):
//!
//! | set | what runs |
//! |---|---|
//! | [`Prepare`](PbdSystems::Prepare) | rebuild entity ↔ row maps if needed, copy components into arrays, Ψ of boundary samples |
//! | [`Predict`](PbdSystems::Predict) | symplectic Euler: v* = v + Δt g, x* = x + Δt v* |
//! | [`FindNeighbors`](PbdSystems::FindNeighbors) | spatial hash grid, fluid and boundary neighbour lists |
//! | [`SolveConstraints`](PbdSystems::SolveConstraints) | distance constraints (Gauss-Seidel), then the PBF density constraint |
//! | [`UpdateVelocities`](PbdSystems::UpdateVelocities) | v = v* + (x − x*)/Δt |
//! | [`ApplyViscosity`](PbdSystems::ApplyViscosity) | XSPH velocity smoothing of fluid particles |
//! | [`Writeback`](PbdSystems::Writeback) | copy arrays to `Position`/`Velocity`/`Transform`, statistics |

use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

/// The schedule that holds the [`PbdSystems`] sets. [`PbdPlugin`](crate::PbdPlugin) runs it once
/// per step from its own schedule (`FixedUpdate` by default), with the single-threaded executor:
/// the step's systems run strictly one after another anyway (each step parallelises inside,
/// over particles), so this saves the multi-threaded executor's per-system overhead. Add your
/// own per-step systems here, e.g. `app.add_systems(PbdSchedule, my_force.after(PbdSystems::Predict))`.
#[derive(ScheduleLabel, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PbdSchedule;

/// System sets of one simulation step, chained in declaration order.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PbdSystems {
    /// Copy ECS data into the solver arrays.
    Prepare,
    /// Time integration to predicted positions.
    Predict,
    /// Neighbour search for fluid particles.
    FindNeighbors,
    /// Constraint projection (distance, density).
    SolveConstraints,
    /// Velocities from corrected positions.
    UpdateVelocities,
    /// XSPH viscosity.
    ApplyViscosity,
    /// Copy results back to components and record statistics.
    Writeback,
}

impl PbdSystems {
    /// All sets in execution order.
    pub const ORDER: [PbdSystems; 7] = [
        PbdSystems::Prepare,
        PbdSystems::Predict,
        PbdSystems::FindNeighbors,
        PbdSystems::SolveConstraints,
        PbdSystems::UpdateVelocities,
        PbdSystems::ApplyViscosity,
        PbdSystems::Writeback,
    ];
}
