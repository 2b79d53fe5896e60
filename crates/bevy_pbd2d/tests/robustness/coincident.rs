//! Coincident particles: two cloth neighbours spawned at the same point, and ten fluid
//! particles duplicated in place.
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
