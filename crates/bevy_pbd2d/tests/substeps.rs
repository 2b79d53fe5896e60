//! XPBD substeps (issue 20, item 1): stiffness independent of substeps, iterations and Δt;
//! rigid cloth that converges with the substep count; held particles and the step's
//! statistics with substeps.

mod common;

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;

use common::*;

#[test]
fn a_compliant_constraint_stretches_m_g_alpha_for_any_substeps_and_iterations() {
    // A pinned particle and a free one of m = 1 kg below it, rest length 0.1 m, α = 1e-3 m/N:
    // a spring of k = 1/α, at rest m g α = 9.81 mm longer. Released at its rest length it
    // oscillates about that (period 2π √(m α) = 0.2 s); the mean over 10 s, 50 periods, is it.
    let expected = 9.81 * 1e-3;
    for (substeps, iterations) in [(1, 1), (1, 20), (10, 1), (20, 5)] {
        let mut app = solver_app(0.01, substeps, iterations);
        let (pivot, bob) = spawn(&mut app, |c| {
            let pivot = c
                .spawn((Particle, Position(Vec2::ZERO), InverseMass::PINNED))
                .id();
            let bob = c
                .spawn((Particle, Position(Vec2::new(0.0, -0.1)), InverseMass(1.0)))
                .id();
            let d = DistanceConstraint::new(pivot, bob, 0.1)
                .unwrap()
                .with_compliance(1e-3)
                .unwrap();
            c.spawn(d);
            (pivot, bob)
        });
        run_steps(&mut app, 100);
        let mut sum = 0.0f64;
        let steps = 1000;
        for _ in 0..steps {
            run_steps(&mut app, 1);
            sum += f64::from((position(&app, bob) - position(&app, pivot)).length() - 0.1);
        }
        let extension = (sum / steps as f64) as f32;
        assert!(
            (extension - expected).abs() < 0.02 * expected,
            "({substeps} substeps, {iterations} iterations): rest extension {} mm, m g α = {} mm",
            extension * 1e3,
            expected * 1e3
        );
    }
}

/// The reference cloth (40 × 30, rigid) after 500 steps of 0.01 s: its largest stretch.
fn cloth_stretch(substeps: u32, iterations: u32) -> f32 {
    let mut app = solver_app(0.01, substeps, iterations);
    spawn(&mut app, |c| ClothBuilder::default().spawn(c).unwrap());
    run_steps(&mut app, 500);
    assert_eq!(
        stats(&app).constraint_iterations,
        substeps * iterations,
        "sweeps per step"
    );
    stats(&app).max_relative_stretch
}

#[test]
fn substeps_stiffen_a_rigid_cloth_faster_than_iterations() {
    // Gauss-Seidel's leftover stretch falls about as 1/n² with n substeps of one iteration
    // and as 1/n with n iterations of one step ([Macklin et al. 2019], Fig. 4).
    let iterations_10 = cloth_stretch(1, 10);
    let substeps_10 = cloth_stretch(10, 1);
    let substeps_20 = cloth_stretch(20, 1);
    assert!(
        substeps_10 < 0.2 * iterations_10,
        "the same 10 sweeps a step: 10 substeps stretch {substeps_10}, 10 iterations {iterations_10}"
    );
    assert!(
        substeps_20 < 0.35 * substeps_10,
        "doubling the substeps: {substeps_10} → {substeps_20} (second order: × 0.25)"
    );
    assert!(substeps_20 < 0.01, "20 substeps: stretch {substeps_20}");
}

#[test]
fn a_held_particle_moves_at_most_its_speed_limit_per_step_with_substeps() {
    // Held toward a target 10 m away at max_kinematic_speed 5 m/s: 5 Δt per step, however
    // many substeps share it.
    for substeps in [1, 3, 8] {
        let dt = 0.01;
        let mut app = solver_app(dt, substeps, 2);
        let p = spawn(&mut app, |c| {
            c.spawn((Particle, Position(Vec2::ZERO), InverseMass(1.0)))
                .insert(KinematicTarget(Vec2::new(10.0, 0.0)))
                .id()
        });
        run_steps(&mut app, 10);
        let x = position(&app, p);
        assert!(
            (x - Vec2::new(10.0 * 5.0 * dt, 0.0)).length() < 1e-4,
            "{substeps} substeps: at {x} after 10 steps"
        );
    }
}

#[test]
fn a_held_particle_dragged_slowly_moves_steadily_through_the_substeps() {
    // A target 1 cm further every step of 1/60 s (0.6 m/s, below the 5 m/s limit): with 10
    // substeps the particle covers each step's centimetre in ten equal parts, and leaves the
    // step at the drag's speed, as with one substep.
    let dt = 1.0 / 60.0;
    for substeps in [1, 10] {
        let mut app = solver_app(dt, substeps, 1);
        let p = spawn(&mut app, |c| {
            c.spawn((Particle, Position(Vec2::ZERO), InverseMass(1.0)))
                .insert(KinematicTarget(Vec2::ZERO))
                .id()
        });
        for step in 1..=30 {
            app.world_mut().get_mut::<KinematicTarget>(p).unwrap().0 =
                Vec2::new(0.01 * step as f32, 0.0);
            run_steps(&mut app, 1);
        }
        let v = velocity(&app, p);
        assert!(
            (v - Vec2::new(0.01 / dt, 0.0)).length() < 1e-3,
            "{substeps} substeps: leaves with {v}, the drag's speed is {} m/s",
            0.01 / dt
        );
        assert!(
            (position(&app, p).x - 0.3).abs() < 1e-5,
            "{substeps} substeps: at its target"
        );
    }
}

#[test]
fn a_free_fall_with_substeps_lands_where_symplectic_euler_of_the_substeps_puts_it() {
    // x after N steps of n substeps of h = Δt/n from rest: Σ_{k=1..Nn} k h² g = g h² Nn(Nn+1)/2.
    let (dt, steps) = (0.01, 50u64);
    for substeps in [1u32, 4, 10] {
        let mut app = solver_app(dt, substeps, 1);
        let p = spawn(&mut app, |c| {
            c.spawn((Particle, Position(Vec2::ZERO), InverseMass(1.0)))
                .id()
        });
        run_steps(&mut app, steps);
        let h = f64::from(dt) / f64::from(substeps);
        let k = steps as f64 * f64::from(substeps);
        let expected = -9.81 * h * h * k * (k + 1.0) / 2.0;
        let y = f64::from(position(&app, p).y);
        assert!(
            (y - expected).abs() < 1e-4 * expected.abs(),
            "{substeps} substeps: y = {y}, expected {expected}"
        );
        let v = f64::from(velocity(&app, p).y);
        assert!(
            (v + 9.81 * f64::from(dt) * steps as f64).abs() < 1e-3,
            "{substeps} substeps: v = {v}"
        );
    }
}

#[test]
fn a_substep_count_out_of_range_is_refused_and_blocks_a_step_when_written_directly() {
    let mut settings = SolverSettings::default();
    assert!(settings.set_substeps(0).is_err());
    assert!(settings.set_substeps(1001).is_err());
    assert_eq!(settings.substeps, 1, "the old value is kept");
    let mut app = app(0.01);
    app.world_mut().resource_mut::<SolverSettings>().substeps = 0;
    app.update();
    app.update();
    assert!(
        stats(&app)
            .blocked
            .as_deref()
            .is_some_and(|b| b.contains("substeps")),
        "blocked: {:?}",
        stats(&app).blocked
    );
}
