//! Time integration and the settings every particle shares: gravity, iterations, Δt.

pub(crate) mod coincident;
pub mod integrator;
pub mod settings;

use bevy::prelude::*;

pub use settings::{Gravity, SolverSettings, set_time_step};

use crate::schedule::{PbdStepSystems, StepChecks};

/// Time integration of every particle: the prediction x* = x + Δt v* with gravity
/// ([`PbdStepSystems::Predict`]) and the velocity update v = (x − x(t))/Δt
/// ([`PbdStepSystems::UpdateVelocities`]). Inserts [`Gravity`] and [`SolverSettings`].
#[derive(Debug, Clone, Copy, Default)]
pub struct IntegratorPlugin;

impl Plugin for IntegratorPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<Gravity>()
            .register_type::<SolverSettings>();
        StepChecks::add::<Gravity>(app);
        StepChecks::add::<SolverSettings>(app);
        app.add_systems(
            crate::schedule::PbdSchedule,
            (
                integrator::predict.in_set(PbdStepSystems::Predict),
                integrator::update_velocities.in_set(PbdStepSystems::UpdateVelocities),
            ),
        );
    }
}
