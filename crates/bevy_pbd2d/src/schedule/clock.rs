//! [`PbdClock`]: pause and single-step the simulation alone.

use bevy::prelude::*;

/// Pauses and single-steps the simulation without pausing the app's time: while paused,
/// [`PbdSystems::StepSimulation`](super::PbdSystems::StepSimulation) runs no step, except one
/// per [`PbdClock::step`] requested. Camera, UI and `Time<Virtual>` go on as usual. Each step is
/// still one fixed timestep long.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_pbd2d::prelude::*;
/// fn toggle(keys: Res<ButtonInput<KeyCode>>, mut clock: ResMut<PbdClock>) {
///     if keys.just_pressed(KeyCode::Space) {
///         clock.toggle();
///     }
///     if keys.just_pressed(KeyCode::Period) {
///         clock.step(1); // one step, then paused again
///     }
/// }
/// ```
#[derive(Resource, Reflect, Debug, Default, Clone, PartialEq, Eq)]
#[reflect(Resource, Default)]
pub struct PbdClock {
    paused: bool,
    pending_steps: u32,
}

impl PbdClock {
    /// Stops stepping (default: running).
    pub fn pause(&mut self) {
        self.paused = true;
    }

    /// Steps again, every run of the schedule; drops steps still requested by [`PbdClock::step`].
    pub fn unpause(&mut self) {
        self.paused = false;
        self.pending_steps = 0;
    }

    /// Pauses when running, runs when paused.
    pub fn toggle(&mut self) {
        if self.paused {
            self.unpause();
        } else {
            self.pause();
        }
    }

    /// Whether the simulation is paused.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Pauses, and runs `steps` more steps, one per run of the schedule (e.g. one per fixed
    /// timestep), before holding again. Adds to steps still pending. A step the step gate
    /// refuses (invalid settings) stays pending.
    pub fn step(&mut self, steps: u32) {
        self.paused = true;
        self.pending_steps = self.pending_steps.saturating_add(steps);
    }

    /// Steps requested by [`PbdClock::step`] and not yet run.
    pub fn pending_steps(&self) -> u32 {
        self.pending_steps
    }

    /// Counts a step that ran.
    pub(super) fn take_step(&mut self) {
        if self.paused {
            self.pending_steps = self.pending_steps.saturating_sub(1);
        }
    }
}

/// Run condition of the step: running, or a single step pending.
pub(super) fn step_due(clock: Res<PbdClock>) -> bool {
    !clock.paused || clock.pending_steps > 0
}
