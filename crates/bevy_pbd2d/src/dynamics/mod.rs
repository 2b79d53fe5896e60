//! Time integration and the settings every particle shares: gravity, iterations, substeps, Δt.

pub(crate) mod coincident;
pub mod integrator;
pub mod settings;
pub mod substeps;

use bevy::prelude::*;

pub use settings::{Gravity, SolverSettings, set_time_step};
pub use substeps::PbdSubsteps;

use crate::schedule::{
    PbdSchedule, PbdStepSystems, PbdSubstepSchedule, PbdSubstepSystems, StepChecks,
};

/// Time integration of every particle: the substeps ([`PbdStepSystems::Substeps`],
/// [`substeps`]), in each the prediction x* = x + Δt v* with gravity
/// ([`PbdSubstepSystems::Predict`]) and the velocity update v = (x − x(t))/Δt
/// ([`PbdSubstepSystems::UpdateVelocities`]). Inserts [`Gravity`], [`SolverSettings`] and
/// `Time<`[`PbdSubsteps`]`>`.
#[derive(Debug, Clone, Copy, Default)]
pub struct IntegratorPlugin;

impl Plugin for IntegratorPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<Gravity>()
            .register_type::<SolverSettings>()
            .register_type::<PbdSubsteps>()
            .init_resource::<Time<PbdSubsteps>>();
        StepChecks::add::<Gravity>(app);
        StepChecks::add::<SolverSettings>(app);
        app.add_systems(
            PbdSchedule,
            substeps::run_substeps.in_set(PbdStepSystems::Substeps),
        )
        .add_systems(
            PbdSubstepSchedule,
            (
                integrator::predict.in_set(PbdSubstepSystems::Predict),
                integrator::update_velocities.in_set(PbdSubstepSystems::UpdateVelocities),
            ),
        );
    }
}
