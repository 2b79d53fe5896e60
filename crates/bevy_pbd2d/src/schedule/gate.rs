//! The step gate: a step runs only with Δt > 0 and every registered settings resource valid.
//! Settings can be written directly (an inspector, a system), so each plugin registers the
//! resources it reads ([`StepChecks::add`]) and the gate checks them before every step.

use core::any::TypeId;

use bevy::prelude::*;

use crate::error::PbdError;
use crate::stats::PbdStats;

/// A settings resource the step gate checks before every step.
pub(crate) trait ValidatedSettings: Resource {
    /// Why these settings cannot be simulated, if they cannot.
    fn validate(&self) -> Result<(), PbdError>;
}

/// Checks one settings resource of a world (absent: fine).
type Check = fn(&World) -> Result<(), PbdError>;

/// The checks of the settings resources the plugins read, in registration order.
#[derive(Resource, Default)]
pub(crate) struct StepChecks(Vec<(TypeId, Check)>);

impl StepChecks {
    /// Inserts `T` with its default unless the app has it, and has the gate check it before
    /// every step (once, however many plugins call this).
    pub(crate) fn add<T: ValidatedSettings + FromWorld>(app: &mut App) {
        app.init_resource::<T>();
        let mut checks = app.world_mut().get_resource_or_init::<StepChecks>();
        if checks.0.iter().all(|(id, _)| *id != TypeId::of::<T>()) {
            checks.0.push((TypeId::of::<T>(), |world| {
                world.get_resource::<T>().map_or(Ok(()), T::validate)
            }));
        }
    }
}

/// First system of a step after the statistics start: checks Δt and settings, which may have
/// been edited directly, and records why the step is skipped in [`PbdStats::blocked`].
pub(super) fn gate_step(world: &mut World) {
    let dt = world.resource::<Time>().delta_secs();
    let reason = if !(dt > 0.0 && dt.is_finite()) {
        Some(format!("time step {dt} s is not > 0"))
    } else {
        let checks = world.resource::<StepChecks>();
        checks
            .0
            .iter()
            .find_map(|(_, check)| check(world).err())
            .map(|e| e.to_string())
    };
    let mut stats = world.resource_mut::<PbdStats>();
    if reason != stats.blocked {
        if let Some(reason) = reason.as_ref().filter(|_| dt > 0.0) {
            error!("bevy_pbd2d: simulation paused: {reason}");
        }
        stats.blocked = reason;
    }
}
