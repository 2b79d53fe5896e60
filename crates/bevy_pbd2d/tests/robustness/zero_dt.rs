//! Δt = 0 (a paused clock, a first frame) and a zero/negative fixed timestep.
//!
//! Naive: v = (x − x_old)/Δt and α̃ = α/Δt² divide by zero and fill the state with NaN.
//! Bevy's own `Time<Fixed>::set_timestep` panics on zero.

use core::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_pbd2d::prelude::*;

use crate::common::*;

#[test]
fn a_zero_step_changes_nothing_and_later_steps_proceed() {
    // Run the simulation in `Update`, where Δt is the frame's virtual delta.
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, PbdPlugins::new(Update)));
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::ZERO));
    app.finish();
    let cloth = spawn(&mut app, |c| {
        ClothBuilder {
            long_range_attachments: false,
            ..crate::c0()
        }
        .spawn(c)
        .unwrap()
    });
    let snapshot = |app: &mut App| -> Vec<(u32, u32, u32, u32)> {
        cloth
            .particles
            .iter()
            .map(|&e| {
                let (p, v) = (position(app, e), velocity(app, e));
                (p.x.to_bits(), p.y.to_bits(), v.x.to_bits(), v.y.to_bits())
            })
            .collect()
    };
    let before = snapshot(&mut app);
    for _ in 0..10 {
        app.update();
    }
    assert_eq!(
        snapshot(&mut app),
        before,
        "a Δt = 0 step must leave the state bitwise unchanged"
    );
    assert!(stats(&app).blocked.is_some());
    assert_eq!(stats(&app).steps, 0);

    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        crate::C0_DT,
    )));
    for _ in 0..30 {
        app.update();
    }
    assert!(
        stats(&app).steps >= 29,
        "steps resume: {}",
        stats(&app).steps
    );
    assert!(stats(&app).blocked.is_none());
    assert!(all_finite(&mut app));
    assert!(
        position(&app, cloth.particles[210]).y < -0.5 - 0.01,
        "the cloth falls again"
    );
}

#[test]
fn zero_negative_or_nan_fixed_timestep_is_refused() {
    let mut time = Time::<Fixed>::from_seconds(0.01);
    for bad in [0.0, -0.01, f32::NAN, f32::INFINITY, 1e-30] {
        let err = set_time_step(&mut time, bad).unwrap_err();
        assert!(err.to_string().contains("time step"), "{err}");
        assert_eq!(
            time.timestep(),
            Duration::from_secs_f64(0.01),
            "old step kept after {bad}"
        );
    }
    set_time_step(&mut time, 0.005).unwrap();
    assert_eq!(time.timestep(), Duration::from_secs_f64(0.005_f32 as f64));
}
