//! When the simulation steps: the outer sets in the app's schedule, the step schedule with its
//! inner sets, the pause / single-step control and the checks that gate a step.
//!
//! One simulation step is one run of [`PbdSchedule`], from [`PbdSystems::StepSimulation`] in
//! the schedule [`PbdPlugins`](crate::PbdPlugins) was given (`FixedUpdate` by default, so Δt =
//! `Time<Fixed>::timestep()`). The outer sets run in this order in that schedule:
//!
//! | outer set | what runs |
//! |---|---|
//! | [`PbdSystems::First`] | nothing of ours: a game's systems that must see the state before the step (e.g. to set a [`KinematicTarget`](crate::particle::KinematicTarget)) |
//! | [`PbdSystems::StepSimulation`] | one run of [`PbdSchedule`], unless [`PbdClock`] holds it |
//! | [`PbdSystems::Last`] | nothing of ours: a game's systems that read the new positions |
//!
//! Inside [`PbdSchedule`], the inner sets run chained, top to bottom (one call of the reference
//! demos' `simulationStep()`); [`PbdStepSystems::Substeps`] runs [`PbdSubstepSchedule`]
//! [`SolverSettings::substeps`](crate::dynamics::SolverSettings::substeps) times with Δt/n
//! (XPBD substepping, Macklin et al. 2019, "Small Steps in Physics Simulation"):
//!
//! | inner set | what runs |
//! |---|---|
//! | [`Prepare`](PbdStepSystems::Prepare) | step gate (Δt > 0, valid settings), rebuild entity ↔ row maps if needed, copy components into arrays, Ψ of boundary samples, the step's colliders |
//! | [`Substeps`](PbdStepSystems::Substeps) | n runs of [`PbdSubstepSchedule`] (below), each with `Time` advanced by Δt/n |
//! | [`ApplyViscosity`](PbdStepSystems::ApplyViscosity) | XSPH velocity smoothing of fluid particles (once per step) |
//! | [`Writeback`](PbdStepSystems::Writeback) | copy arrays to `Position`/`Velocity`/`Transform`, statistics |
//!
//! Inside [`PbdSubstepSchedule`], chained, with Δt the substep's (`Res<Time>` reads it):
//!
//! | substep set | what runs |
//! |---|---|
//! | [`Predict`](PbdSubstepSystems::Predict) | symplectic Euler: v* = v + Δt g, x* = x + Δt v* |
//! | [`FindNeighbors`](PbdSubstepSystems::FindNeighbors) | spatial hash grid, fluid and boundary neighbour lists |
//! | [`SolveConstraints`](PbdSubstepSystems::SolveConstraints) | distance constraints (Gauss-Seidel, λ from 0), then the PBF density constraint |
//! | [`SolveContacts`](PbdSubstepSystems::SolveContacts) | particle–collider contacts and friction ([`collider`](crate::collider); nothing without colliders) |
//! | [`UpdateVelocities`](PbdSubstepSystems::UpdateVelocities) | v = v* + (x − x*)/Δt |
//!
//! With one substep (the default) a step is exactly the reference demos' step.
//!
//! **Steps per frame.** Bevy runs as many fixed steps in a frame as its time asks for;
//! [`PbdFrameBudget`] caps them (by default at two 60 Hz frames' worth of steps) through
//! `Time<Virtual>::max_delta`, so a frame that falls behind slows the game's time instead of
//! asking for ever more steps; [`PbdStats::frame_steps`] and [`PbdStats::slowed`] say so.

mod clock;
mod frame_budget;
mod gate;

use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel, SingleThreadedExecutor};
use bevy::prelude::*;

pub use clock::PbdClock;
pub use frame_budget::PbdFrameBudget;
pub(crate) use gate::{StepChecks, ValidatedSettings};

use crate::stats::{self, PbdStats};

/// The schedule that holds the [`PbdStepSystems`] sets: one run is one simulation step. Run
/// from [`PbdSystems::StepSimulation`] with the single-threaded executor: the step's systems run
/// strictly one after another anyway (each step parallelises inside, over particles), so this
/// saves the multi-threaded executor's per-system overhead. Add your own per-step systems here,
/// e.g. `app.add_systems(PbdSchedule, my_system.after(PbdStepSystems::Prepare))`; per-substep
/// systems go to [`PbdSubstepSchedule`].
#[derive(ScheduleLabel, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PbdSchedule;

/// Outer system sets, in the schedule the plugins run in (`FixedUpdate` by default), chained in
/// declaration order.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PbdSystems {
    /// Before the step: for a game's systems that drive particles.
    First,
    /// One simulation step ([`PbdSchedule`]), unless [`PbdClock`] holds it.
    StepSimulation,
    /// After the step: for a game's systems that read its result.
    Last,
}

/// The schedule of one substep: the [`PbdSubstepSystems`] sets, run
/// [`SolverSettings::substeps`](crate::dynamics::SolverSettings::substeps) times per step from
/// [`PbdStepSystems::Substeps`], with the generic `Time` advanced by the substep's Δt/n (read
/// `Res<Time>` for it; [`Time<PbdSubsteps>`](crate::dynamics::PbdSubsteps) counts the substeps).
/// Add per-substep forces here, e.g.
/// `app.add_systems(PbdSubstepSchedule, my_force.after(PbdSubstepSystems::Predict))`.
#[derive(ScheduleLabel, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PbdSubstepSchedule;

/// System sets of one simulation step (inside [`PbdSchedule`]), chained in declaration order.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PbdStepSystems {
    /// Gate the step, copy ECS data into the solver arrays.
    Prepare,
    /// The substeps: [`PbdSubstepSchedule`], n times.
    Substeps,
    /// XSPH viscosity.
    ApplyViscosity,
    /// Copy results back to components and record statistics.
    Writeback,
}

impl PbdStepSystems {
    /// All sets in execution order.
    pub const ORDER: [PbdStepSystems; 4] = [
        PbdStepSystems::Prepare,
        PbdStepSystems::Substeps,
        PbdStepSystems::ApplyViscosity,
        PbdStepSystems::Writeback,
    ];
}

/// System sets of one substep (inside [`PbdSubstepSchedule`]), chained in declaration order.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PbdSubstepSystems {
    /// Time integration to predicted positions.
    Predict,
    /// Neighbour search for fluid particles.
    FindNeighbors,
    /// Constraint projection (distance, chains, angles, tethers, density).
    SolveConstraints,
    /// Particle–collider contacts after the solve, and friction.
    SolveContacts,
    /// Velocities from corrected positions.
    UpdateVelocities,
}

impl PbdSubstepSystems {
    /// All sets in execution order.
    pub const ORDER: [PbdSubstepSystems; 5] = [
        PbdSubstepSystems::Predict,
        PbdSubstepSystems::FindNeighbors,
        PbdSubstepSystems::SolveConstraints,
        PbdSubstepSystems::SolveContacts,
        PbdSubstepSystems::UpdateVelocities,
    ];
}

/// Sets up [`PbdSchedule`] and [`PbdSubstepSchedule`], the outer [`PbdSystems`] in
/// `schedule`, the inner [`PbdStepSystems`] and [`PbdSubstepSystems`], [`PbdClock`], the step gate and [`PbdStats`]. The first plugin of
/// [`PbdPlugins`](crate::PbdPlugins); every other simulation plugin needs it.
///
/// Needs `TaskPoolPlugin` and `TimePlugin` (part of `MinimalPlugins` and `DefaultPlugins`).
#[derive(Debug, Clone)]
pub struct PbdSchedulePlugin {
    schedule: InternedScheduleLabel,
}

impl Default for PbdSchedulePlugin {
    fn default() -> Self {
        Self::new(FixedUpdate)
    }
}

impl PbdSchedulePlugin {
    /// Steps the simulation in `schedule` instead of `FixedUpdate`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
        }
    }
}

impl Plugin for PbdSchedulePlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<PbdStats>()
            .register_type::<PbdClock>()
            .register_type::<PbdFrameBudget>()
            .init_resource::<PbdStats>()
            .init_resource::<PbdClock>()
            .init_resource::<PbdFrameBudget>()
            .init_resource::<StepChecks>();
        stats::register(app);

        app.add_systems(Last, frame_budget::apply_frame_budget)
            .add_systems(
                First,
                frame_budget::begin_frame.after(bevy::time::TimeSystems),
            );

        let outer = self.schedule;
        app.configure_sets(
            outer,
            (
                PbdSystems::First,
                PbdSystems::StepSimulation,
                PbdSystems::Last,
            )
                .chain(),
        );
        app.add_systems(
            outer,
            run_step
                .run_if(clock::step_due)
                .in_set(PbdSystems::StepSimulation),
        );

        let mut step = Schedule::new(PbdSchedule);
        step.set_executor(SingleThreadedExecutor::new());
        app.add_schedule(step);
        for pair in PbdStepSystems::ORDER.windows(2) {
            app.configure_sets(PbdSchedule, pair[1].after(pair[0]));
        }
        for set in &PbdStepSystems::ORDER[1..] {
            app.configure_sets(PbdSchedule, set.run_if(step_allowed));
        }
        // Run only from `Substeps`, which the gate holds: no run conditions of their own.
        let mut substep = Schedule::new(PbdSubstepSchedule);
        substep.set_executor(SingleThreadedExecutor::new());
        app.add_schedule(substep);
        for pair in PbdSubstepSystems::ORDER.windows(2) {
            app.configure_sets(PbdSubstepSchedule, pair[1].after(pair[0]));
        }
        app.add_systems(
            PbdSchedule,
            (stats::begin_step, gate::gate_step)
                .chain()
                .in_set(PbdStepSystems::Prepare)
                .before(PbdPrepared),
        )
        .configure_sets(
            PbdSchedule,
            (
                PbdPrepared
                    .in_set(PbdStepSystems::Prepare)
                    .run_if(step_allowed),
                PbdWritten.in_set(PbdStepSystems::Writeback),
            ),
        )
        .add_systems(
            PbdSchedule,
            stats::end_step
                .in_set(PbdStepSystems::Writeback)
                .after(PbdWritten),
        );
    }
}

/// The part of [`PbdStepSystems::Prepare`] after the step gate: the plugins' copy-in systems
/// run in it (and only when the step may run).
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PbdPrepared;

/// The part of [`PbdStepSystems::Writeback`] before the step's statistics are closed.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PbdWritten;

/// Runs one simulation step: the [`PbdSchedule`]. A single step requested from [`PbdClock`]
/// counts as taken only if the step gate let it run.
fn run_step(world: &mut World) {
    world.run_schedule(PbdSchedule);
    if world.resource::<PbdStats>().blocked.is_none() {
        world.resource_mut::<PbdClock>().take_step();
    }
}

/// Whether a step may run: Δt > 0 and all settings valid (else the reason is in
/// [`PbdStats::blocked`]).
pub(crate) fn step_allowed(stats: Res<PbdStats>) -> bool {
    stats.blocked.is_none()
}
