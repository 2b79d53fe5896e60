//! Frame-rate independence: the same 2 s of game time rendered at 30 and at 144 frames per
//! second runs the same fixed steps and ends in bitwise the same state.
//!
//! Naive: stepping once per frame with the frame's Δt (or a variable Δt) makes the result
//! depend on the frame rate.

use core::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;

use crate::common::*;

/// Runs C0 for 2 s of wall-clock time split into `fps` frames per second (frame k ends at
/// round(k · 2 s / frames) ns, as a real clock would report) and returns (steps, positions).
fn run_at(fps: u32) -> (u64, Vec<(u32, u32)>) {
    let (mut app, cloth) = crate::c0_app();
    let frames = 2 * fps as u64;
    let total = 2_000_000_000u64;
    let mut previous = 0;
    app.update(); // the first update has Δt = 0
    for k in 1..=frames {
        let now = (k * total + frames / 2) / frames;
        app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_nanos(
            now - previous,
        )));
        previous = now;
        app.update();
    }
    let bits = cloth
        .particles
        .iter()
        .map(|&e| position(&app, e))
        .map(|p| (p.x.to_bits(), p.y.to_bits()))
        .collect();
    (steps(&app), bits)
}

#[test]
fn thirty_and_144_fps_give_identical_results() {
    let (steps30, state30) = run_at(30);
    let (steps144, state144) = run_at(144);
    assert_eq!(steps30, steps144);
    assert!(
        (119..=120).contains(&steps30),
        "{steps30} fixed steps of 1/60 s in 2 s"
    );
    assert!(
        state30 == state144,
        "final positions differ between 30 and 144 fps"
    );
}
