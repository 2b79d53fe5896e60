//! Zero and infinite mass: constraints between pinned particles (w₁ + w₂ = 0), lone pinned
//! particles, and a mass of 0 given through the API.
//!
//! Naive: λ = −C/(w₁ + w₂) divides by zero; 1/m with m = 0 gives an infinite inverse mass.

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;

use crate::common::*;

#[test]
fn pins_stay_exactly_put_and_nothing_becomes_nan() {
    let (mut app, cloth) = crate::c0_app();
    let (pinned_a, pinned_b, lone) = spawn(&mut app, |c| {
        let a = c
            .spawn((Particle, Position(Vec2::new(3.0, 0.0)), InverseMass::PINNED))
            .id();
        let b = c
            .spawn((Particle, Position(Vec2::new(3.5, 0.0)), InverseMass::PINNED))
            .id();
        // Stretched by 0.3 m, between two pinned particles.
        c.spawn(DistanceConstraint::new(a, b, 0.2).unwrap());
        let lone = c
            .spawn((Particle, Position(Vec2::new(5.0, 1.0)), InverseMass(0.0)))
            .id();
        (a, b, lone)
    });
    let corners = [cloth.particles[0], cloth.particles[19]];
    let start: Vec<Vec2> = [pinned_a, pinned_b, lone, corners[0], corners[1]]
        .iter()
        .map(|&e| position(&app, e))
        .collect();
    run_steps(&mut app, 1000);
    let end: Vec<Vec2> = [pinned_a, pinned_b, lone, corners[0], corners[1]]
        .iter()
        .map(|&e| position(&app, e))
        .collect();
    assert_eq!(start, end);
    assert!(all_finite(&mut app));
}

#[test]
fn zero_or_negative_mass_is_refused() {
    for bad in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        assert!(InverseMass::from_mass(bad).is_err(), "mass {bad} accepted");
        assert!(
            ClothBuilder {
                mass: bad,
                ..crate::c0()
            }
            .validate()
            .is_err()
        );
    }
    assert_eq!(InverseMass::from_mass(0.5).unwrap(), InverseMass(2.0));
}

#[test]
fn an_invalid_inverse_mass_written_directly_means_pinned() {
    let mut app = app(crate::C0_DT);
    let (neg, nan) = spawn(&mut app, |c| {
        (
            c.spawn((Particle, Position(Vec2::ZERO), InverseMass(-3.0)))
                .id(),
            c.spawn((Particle, Position(Vec2::X), InverseMass(f32::NAN)))
                .id(),
        )
    });
    run_steps(&mut app, 100);
    assert_eq!(position(&app, neg), Vec2::ZERO);
    assert_eq!(position(&app, nan), Vec2::X);
}
