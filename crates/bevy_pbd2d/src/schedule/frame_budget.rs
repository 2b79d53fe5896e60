//! [`PbdFrameBudget`]: at most so many simulation steps per frame, so that a frame that falls
//! behind slows the simulation instead of stalling the game.

use core::time::Duration;

use bevy::prelude::*;

use crate::stats::PbdStats;

/// The most fixed steps one frame runs. Bevy runs `FixedUpdate` (and so our step, and avian's)
/// as often as the frame's time needs, up to `Time<Virtual>::max_delta` (250 ms by default):
/// a frame that took long asks for many steps, which take long in turn. The budget sets
/// `max_delta` to `max_steps` fixed timesteps, so a frame runs at most that many steps and the
/// game's virtual time (its simulation, particles and rigid bodies alike) runs slower than
/// real time while frames are too slow; [`PbdStats::slowed`] says so. The way Unity's
/// "maximum allowed timestep" and Box2D games' "max steps per frame" work.
///
/// Default: on, sized for 60 Hz: the steps of two 60 Hz frames, ⌈(1/30 s) / Δt⌉ (2 at Δt =
/// 1/60 s, 7 at 5 ms, 34 at 1 ms): a game at 60 frames per second keeps real time with one
/// frame's worth to catch up.
#[derive(Resource, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Resource, Default)]
pub struct PbdFrameBudget {
    /// Whether the budget sets `Time<Virtual>::max_delta` (default `true`). Off, the game's
    /// own `max_delta` stays (the value the budget last set, if it was on before).
    pub enabled: bool,
    /// The most steps per frame; `None`: sized for 60 Hz (type docs). `Some(0)` is read as 1.
    pub max_steps: Option<u32>,
}

impl Default for PbdFrameBudget {
    fn default() -> Self {
        Self {
            enabled: true,
            max_steps: None,
        }
    }
}

impl PbdFrameBudget {
    /// At most `max_steps` (≥ 1) steps per frame.
    pub fn steps(max_steps: u32) -> Self {
        Self {
            enabled: true,
            max_steps: Some(max_steps.max(1)),
        }
    }

    /// The steps per frame for fixed timestep `dt` (at least 1).
    pub fn max_steps_for(&self, dt: Duration) -> u32 {
        match self.max_steps {
            Some(n) => n.max(1),
            None if dt.is_zero() => 1,
            // Less a nanosecond's worth, so that 1/60 s (16 666 667 ns) gives 2.
            None => (1.0 / 30.0 / dt.as_secs_f64() - 1e-6)
                .ceil()
                .clamp(1.0, u32::MAX as f64) as u32,
        }
    }
}

/// `Last`: sets `Time<Virtual>::max_delta` to the budget's steps times the fixed timestep
/// (used from the next frame on).
pub(crate) fn apply_frame_budget(
    budget: Res<PbdFrameBudget>,
    fixed: Res<Time<Fixed>>,
    mut virtual_time: ResMut<Time<Virtual>>,
) {
    if !budget.enabled {
        return;
    }
    let dt = fixed.timestep();
    let max_delta = dt.saturating_mul(budget.max_steps_for(dt));
    if !max_delta.is_zero() && virtual_time.max_delta() != max_delta {
        virtual_time.set_max_delta(max_delta);
    }
}

/// `First`, after Bevy's time update: starts the frame's step count, and records whether its
/// virtual time was cut short by `max_delta`.
pub(crate) fn begin_frame(
    real: Res<Time<Real>>,
    virtual_time: Res<Time<Virtual>>,
    mut stats: ResMut<PbdStats>,
) {
    let wanted = real.delta().mul_f64(virtual_time.relative_speed_f64());
    let slowed = !virtual_time.is_paused() && wanted > virtual_time.max_delta();
    stats.frame_steps = 0;
    stats.slowed = slowed;
    stats.slowed_frames += u64::from(slowed);
}
