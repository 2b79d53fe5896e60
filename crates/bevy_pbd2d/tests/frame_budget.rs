//! The frame budget (issue 36, item 4): a frame never runs more steps than the budget; a late
//! frame slows the simulation instead of running every step it was due.

#[path = "common/mod.rs"]
mod common;

use core::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_pbd2d::prelude::*;

use common::*;

/// Δt = 20 ms; frames of 200 ms are each due 10 steps.
const DT: f32 = 0.02;

/// Steps run in each of 30 frames of `frame` with `budget`, and the stats after them.
fn frames(budget: PbdFrameBudget, frame: Duration) -> (Vec<u64>, PbdStats) {
    let mut app = app(DT);
    app.insert_resource(budget);
    app.insert_resource(TimeUpdateStrategy::ManualDuration(frame));
    ball(&mut app, Vec2::ZERO, Vec2::ZERO, 0.05);
    let mut counts = Vec::new();
    for _ in 0..30 {
        let before = steps(&app);
        app.update();
        let ran = steps(&app) - before;
        assert_eq!(u64::from(stats(&app).frame_steps), ran);
        counts.push(ran);
    }
    (counts, stats(&app).clone())
}

#[test]
fn a_frame_never_runs_more_steps_than_the_budget() {
    let slow = Duration::from_millis(200);
    // Budget off: Bevy's own limit (250 ms) lets each frame run the 10 steps it is due.
    let off = PbdFrameBudget {
        enabled: false,
        ..default()
    };
    let (counts, stats) = frames(off, slow);
    assert!(counts[2..].iter().all(|&n| n >= 10), "{counts:?}");
    assert!(!stats.slowed);
    // 4 steps: never more, and exactly 4 once the clock runs; the game time runs at 0.4 of
    // real time, and the stats say so.
    for (budget, most) in [
        (PbdFrameBudget::steps(4), 4),
        (PbdFrameBudget::default(), 2),
    ] {
        let (counts, stats) = frames(budget, slow);
        assert!(counts.iter().all(|&n| n <= most), "{budget:?}: {counts:?}");
        assert!(
            counts[2..].iter().all(|&n| n == most),
            "{budget:?}: {counts:?}"
        );
        assert!(stats.slowed && stats.slowed_frames >= 28, "{stats:?}");
        let ran: u64 = counts.iter().sum();
        assert!(
            (stats.sim_time - ran as f64 * f64::from(DT)).abs() < 1e-6,
            "the simulated time is the steps' ({} s, {ran} steps)",
            stats.sim_time
        );
    }
    // Frames on time: one step each, not slowed.
    let (counts, stats) = frames(PbdFrameBudget::default(), Duration::from_secs_f32(DT));
    assert!(counts[2..].iter().all(|&n| n == 1), "{counts:?}");
    assert!(!stats.slowed && stats.slowed_frames == 0, "{stats:?}");
}

/// The default budget is sized for 60 Hz: two 60 Hz frames of steps.
#[test]
fn the_default_budget_is_two_frames_at_60_hz() {
    let budget = PbdFrameBudget::default();
    for (dt, steps) in [(1.0 / 60.0, 2), (0.005, 7), (0.001, 34), (0.1, 1)] {
        assert_eq!(
            budget.max_steps_for(Duration::from_secs_f64(dt)),
            steps,
            "Δt {dt}"
        );
    }
    assert_eq!(PbdFrameBudget::steps(0).max_steps_for(Duration::ZERO), 1);
}
