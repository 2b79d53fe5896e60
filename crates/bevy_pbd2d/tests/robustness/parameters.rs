//! Parameters from the panel or the API: zero, huge, negative and non-finite values.
//!
//! Naive: width 0 builds an empty or underflowing grid (`width − 1` wraps), 10⁶ particles
//! exhaust memory or freeze the app, iterations 0 silently disables the solver, NaN gravity
//! or viscosity turns every particle into NaN, and a rejected edit is half applied.

use bevy::prelude::*;
use bevy_pbd2d::error::MAX_PARTICLES;
use bevy_pbd2d::prelude::*;

use crate::common::*;

#[test]
fn builders_refuse_zero_and_huge_sizes_with_a_message() {
    for (w, h) in [(0, 30), (40, 0), (1000, 1000), (2001, 1)] {
        let err = ClothBuilder {
            width: w,
            height: h,
            ..default()
        }
        .validate()
        .unwrap_err();
        assert!(!err.to_string().is_empty());
        let err = DamBreakBuilder {
            width: w,
            height: h,
            ..default()
        }
        .validate()
        .unwrap_err();
        assert!(!err.to_string().is_empty());
    }
    const { assert!(MAX_PARTICLES < 1_000_000) };
    // Raised on purpose, the limit lets a 1000 × 1000 dam break (1 012 000 particles and
    // samples) through, and names itself when exceeded.
    let big = DamBreakBuilder {
        width: 1000,
        height: 1000,
        max_particles: 1_100_000,
        ..default()
    };
    assert!(big.validate().is_ok());
    let over = DamBreakBuilder {
        max_particles: 1_000_000,
        ..big
    };
    let message = over.validate().unwrap_err().to_string();
    assert!(
        message.contains("1012000") && message.contains("1000000"),
        "{message}"
    );
    // A refused builder spawns nothing.
    let mut app = app(0.01);
    let spawned = spawn(&mut app, |c| {
        ClothBuilder {
            width: 0,
            ..default()
        }
        .spawn(c)
    });
    assert!(spawned.is_err());
    run_steps(&mut app, 1);
    assert_eq!(stats(&app).particles, 0);
}

#[test]
fn setters_refuse_bad_values_and_keep_the_old_ones() {
    let mut solver = SolverSettings::default();
    assert!(solver.set_iterations(0).is_err());
    assert_eq!(solver.iterations, 5);
    let mut gravity = Gravity::default();
    for bad in [Vec2::new(0.0, f32::NAN), Vec2::new(f32::INFINITY, 0.0)] {
        assert!(gravity.set(bad).is_err());
        assert_eq!(gravity, Gravity::default());
    }
    let mut fluid = FluidSettings::default();
    assert!(fluid.set_max_iterations(0).is_err());
    assert!(fluid.set_viscosity(f32::NAN).is_err());
    assert!(fluid.set_viscosity(-0.1).is_err());
    assert!(fluid.set_viscosity(f32::INFINITY).is_err());
    assert!(fluid.set_particle_radius(-0.025).is_err());
    assert!(fluid.set_particle_radius(0.0).is_err());
    assert!(fluid.set_max_density_error_percent(f32::NAN).is_err());
    assert_eq!(fluid, FluidSettings::default());
    assert!(InverseMass::from_mass(-0.5).is_err());
}

#[test]
fn invalid_values_written_directly_pause_the_simulation_without_losing_it() {
    let (mut app, cloth) = crate::c0_app();
    run_steps(&mut app, 10);
    let probe = cloth.particles[210];
    let before = position(&app, probe);
    let steps_before = steps(&app);
    // As an inspector could: write NaN gravity, 0 iterations and NaN viscosity directly.
    app.world_mut().resource_mut::<Gravity>().0 = Vec2::new(0.0, f32::NAN);
    for _ in 0..10 {
        app.update();
    }
    assert_eq!(
        position(&app, probe),
        before,
        "no step ran with NaN gravity"
    );
    assert_eq!(steps(&app), steps_before);
    assert!(stats(&app).blocked.as_deref().unwrap().contains("gravity"));
    app.world_mut().resource_mut::<Gravity>().0 = Vec2::new(0.0, -9.81);
    app.world_mut().resource_mut::<SolverSettings>().iterations = 0;
    app.update();
    assert!(
        stats(&app)
            .blocked
            .as_deref()
            .unwrap()
            .contains("iterations")
    );
    app.world_mut().resource_mut::<SolverSettings>().iterations = 5;
    app.world_mut().resource_mut::<FluidSettings>().viscosity = f32::NAN;
    app.update();
    assert!(
        stats(&app)
            .blocked
            .as_deref()
            .unwrap()
            .contains("viscosity")
    );
    app.world_mut().resource_mut::<FluidSettings>().viscosity = 0.05;
    run_steps(&mut app, 10);
    assert!(stats(&app).blocked.is_none());
    assert_eq!(
        stats(&app).particles,
        400,
        "the scene survived the rejected edits"
    );
    assert!(all_finite(&mut app));
    assert_ne!(position(&app, probe), before, "the simulation resumed");
}
