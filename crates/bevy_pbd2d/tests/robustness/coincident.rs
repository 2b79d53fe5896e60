//! Coincident particles: two cloth neighbours spawned at the same point, a lone fluid pair from 0
//! to r apart, and ten fluid particles duplicated in place.
//!
//! Naive: the constraint gradient (x₁ − x₂)/‖x₁ − x₂‖ is 0/0 = NaN; duplicated fluid particles
//! have a zero kernel gradient between them and identical neighbourhoods, so they get identical
//! corrections and never separate.

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;

use crate::common::*;

#[test]
fn coincident_cloth_neighbours_separate_without_nan() {
    let mut app = app(crate::C0_DT);
    let cloth = spawn(&mut app, |c| crate::c0().spawn(c).unwrap());
    // Move particle 45 onto its right neighbour 46 (same row, joined by a constraint).
    let target = position(&app, cloth.particles[46]);
    app.world_mut()
        .get_mut::<Position>(cloth.particles[45])
        .unwrap()
        .0 = target;
    for _ in 0..1000 {
        run_steps(&mut app, 1);
        assert!(all_finite(&mut app));
    }
    let d = (position(&app, cloth.particles[45]) - position(&app, cloth.particles[46])).length();
    assert!(
        (d - 0.05).abs() < 0.01,
        "the pair is back near its rest length: {d}"
    );
}

#[test]
fn duplicated_fluid_particles_separate() {
    let (mut app, scene) = crate::f0_app(Vec2::ZERO);
    let settings = FluidSettings::default();
    let w = InverseMass::from_mass(settings.particle_mass()).unwrap();
    // Ten particles from the middle of the block, each duplicated in place.
    let originals: Vec<Entity> = (0..10).map(|k| scene.fluid[8 * 20 + 5 + k]).collect();
    let copies: Vec<Entity> = spawn(&mut app, |c| {
        originals
            .iter()
            .map(|_| c.spawn((FluidParticle, w)).id())
            .collect()
    });
    for (&o, &c) in originals.iter().zip(&copies) {
        let p = position(&app, o);
        app.world_mut().get_mut::<Position>(c).unwrap().0 = p;
    }
    let mut separated_at = None;
    for step in 1..=1000 {
        run_steps(&mut app, 1);
        assert!(all_finite(&mut app), "non-finite at step {step}");
        let all_apart = originals.iter().zip(&copies).all(|(&o, &c)| {
            (position(&app, o) - position(&app, c)).length() > settings.particle_radius
        });
        if all_apart && separated_at.is_none() {
            separated_at = Some(step);
        }
    }
    let at = separated_at.expect("duplicates never separated by more than r");
    assert!(at <= 60, "duplicates separated only after {at} steps");
}

/// Issue 19's pair kinds, fluid–fluid: two fluid particles alone at a distance from 0 to r move
/// less than 0.5 r in their first step (a naive gradient at d = 0 is 0/0; a Newton step where
/// the gradient vanishes is unbounded). Alone, a pair is below ρ0, so it only falls.
#[test]
fn a_lone_fluid_pair_from_zero_to_r_apart_moves_under_half_a_radius() {
    let settings = FluidSettings::default();
    let r = settings.particle_radius;
    let w = InverseMass::from_mass(settings.particle_mass()).unwrap();
    for d in [0.0, 1e-6, 0.01 * r, 0.1 * r, 0.3 * r, 0.5 * r, 0.8 * r, r] {
        for gravity in [Vec2::ZERO, Vec2::new(0.0, -9.81)] {
            let mut app = app(0.005);
            app.world_mut().resource_mut::<Gravity>().0 = gravity;
            let start = [Vec2::new(1.0, 1.0), Vec2::new(1.0 + d, 1.0)];
            let pair: Vec<Entity> = spawn(&mut app, |c| {
                start
                    .iter()
                    .map(|&p| c.spawn((FluidParticle, Position(p), w)).id())
                    .collect()
            });
            run_steps(&mut app, 1);
            for (&e, &x0) in pair.iter().zip(&start) {
                let moved = position(&app, e) - x0;
                let free_fall = gravity * 0.005 * 0.005;
                assert!(
                    moved.is_finite() && moved.length() < 0.5 * r,
                    "d = {} r, g = {gravity}: moved {} r",
                    d / r,
                    moved.length() / r
                );
                assert!(
                    (moved - free_fall).length() < 1e-6,
                    "d = {} r: the pair pushed itself apart by {} r below ρ0",
                    d / r,
                    (moved - free_fall).length() / r
                );
            }
        }
    }
}
