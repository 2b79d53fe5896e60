//! Liquids of several kinds ([`FluidPhase`]): a lighter one rises through a heavier one, the
//! density solve keeps momentum between phases of different masses, a viscous one damps shear
//! faster, and a phase sets its particles' mass (on insert, and from an emitter).

mod common;

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;
use common::*;

/// Particles of `phase` (none: the fluid's own) on a grid of `nx × ny` at spacing 2r from
/// `corner` (their lowest-left centre), with velocity `v`.
fn phase_block(
    app: &mut App,
    phase: Option<FluidPhase>,
    corner: Vec2,
    size: (u32, u32),
    v: Vec2,
) -> Vec<Entity> {
    let block = fluid_block(app, corner, size, v);
    if let Some(phase) = phase {
        for &p in &block {
            app.world_mut().entity_mut(p).insert(phase);
        }
    }
    block
}

/// Oil (`oil`: its phase, or `None` for the fluid's own liquid) poured into water: a 10 × 16
/// block thrown down at 8 m/s from just above a 1 m tank holding 20 × 12 water particles
/// (Δt = 5 ms, 2 substeps × 10 iterations), so that it plunges to the floor, then 4 s to
/// settle. Returns the fraction of oil particles whose centre is above the interface: the
/// height N_water (2r)² / 1 m that the water alone fills, less one radius (its roughness).
fn oil_above_water(oil: Option<FluidPhase>) -> f32 {
    let mut app = solver_app(0.005, 2, 10);
    let r = app.world().resource::<FluidSettings>().particle_radius;
    let d = 2.0 * r;
    tank(&mut app, 1.0);
    let water = fluid_block(&mut app, Vec2::splat(r), (20, 12), Vec2::ZERO);
    let corner = Vec2::new(r + 5.0 * d, r + 16.0 * d);
    let oil = phase_block(&mut app, oil, corner, (10, 16), Vec2::new(0.0, -8.0));
    run_steps(&mut app, 800);
    assert!(all_finite(&mut app));
    let interface = water.len() as f32 * d * d / 1.0 - r;
    let above = oil.iter().filter(|&&p| position(&app, p).y > interface);
    above.count() as f32 / oil.len() as f32
}

/// Oil (ρ0 500) poured into water (ρ0 1 000) ends above it: at least 95 % of its particles
/// above the interface (99.4 % measured). The same block without a phase, as heavy as the
/// water, stays mixed in (79.4 % above; the test allows at most 90 %), so the test fails if
/// the phases' masses stop mattering.
#[test]
fn oil_poured_into_water_ends_above_it() {
    let with = oil_above_water(Some(FluidPhase::OIL));
    let without = oil_above_water(None);
    println!("oil above: {with} with its phase, {without} without");
    assert!(
        with >= 0.95,
        "oil above the interface: {:.1} %",
        100.0 * with
    );
    assert!(
        without <= 0.9,
        "the same block without a phase: {:.1} % above",
        100.0 * without
    );
}

/// Without gravity and walls, an oil block at 1 m/s runs into water at rest: the density
/// solve's corrections between particles of different masses (mobility-weighted) keep the
/// total momentum within 0.01 % (5·10⁻⁶ measured; viscosity off: XSPH weighs velocities, not
/// momenta). The blocks are spaced 2.1 r, below the rest density, so that no particle is
/// placed compressed and settling stays out of it (its guard caps the kinetic energy of
/// settling particles, which does not keep momentum).
#[test]
fn phases_keep_momentum() {
    let mut app = app(1.0 / 60.0);
    app.insert_resource(Gravity(Vec2::ZERO));
    app.world_mut().resource_mut::<FluidSettings>().viscosity = 0.0;
    let r = app.world().resource::<FluidSettings>().particle_radius;
    let oil = FluidPhase::new(500.0, 0.0).unwrap();
    let water = FluidPhase::new(1000.0, 0.0).unwrap();
    let left = phase_block(&mut app, Some(oil), Vec2::ZERO, (10, 10), Vec2::X);
    let right_corner = Vec2::new(10.0 * 2.0 * r + 0.5 * r, 0.3 * r);
    let right = phase_block(&mut app, Some(water), right_corner, (10, 10), Vec2::ZERO);
    for &p in left.iter().chain(&right) {
        app.world_mut().get_mut::<Position>(p).unwrap().0 *= 1.05;
    }
    let mass = |app: &App, p: Entity| 1.0 / app.world().get::<InverseMass>(p).unwrap().0;
    let momentum = |app: &App| -> Vec2 {
        left.iter()
            .chain(&right)
            .map(|&p| mass(app, p) * velocity(app, p))
            .sum()
    };
    let start = momentum(&app);
    let mut corrected = 0;
    let mut worst = 0.0f32;
    for _ in 0..60 {
        run_steps(&mut app, 1);
        corrected += u32::from(stats(&app).fluid_iterations > 0);
        let change = (momentum(&app) - start).length() / start.length();
        worst = worst.max(change);
        assert!(
            change <= 1e-4,
            "momentum changed by {:.4} %",
            100.0 * change
        );
    }
    println!("momentum: largest relative change {worst}");
    // The solve did work: the blocks met and pushed each other.
    assert!(corrected > 10, "{corrected} steps with corrections");
    let (oil_v, water_v) = (velocity(&app, left[0]), velocity(&app, right[99]));
    assert!(water_v.x > 0.05, "the water was pushed: {water_v}");
    assert!(oil_v.x < 1.0, "the oil was slowed: {oil_v}");
}

/// Three liquids stacked in their stable order in a 1 m tank (honey 20 × 5, water 20 × 5,
/// oil 20 × 5, Δt 5 ms, 2 × 10) come to rest: after 4 s their mean speed is below 2 cm/s and
/// the layers' mean heights keep their order. The interfaces add no energy.
#[test]
fn stacked_liquids_rest() {
    let mut app = solver_app(0.005, 2, 10);
    let r = app.world().resource::<FluidSettings>().particle_radius;
    let d = 2.0 * r;
    tank(&mut app, 1.0);
    let layers: Vec<Vec<Entity>> = [FluidPhase::HONEY, FluidPhase::WATER, FluidPhase::OIL]
        .into_iter()
        .enumerate()
        .map(|(k, phase)| {
            let corner = Vec2::new(r, r + 5.0 * k as f32 * d);
            phase_block(&mut app, Some(phase), corner, (20, 5), Vec2::ZERO)
        })
        .collect();
    run_steps(&mut app, 800);
    let all = layers.iter().flatten();
    let speed = all.map(|&p| velocity(&app, p).length()).sum::<f32>() / 300.0;
    println!("stacked: mean speed {speed} m/s");
    assert!(speed < 0.02, "mean speed {speed} m/s");
    let height = |layer: &[Entity]| {
        layer.iter().map(|&p| position(&app, p).y).sum::<f32>() / layer.len() as f32
    };
    let heights: Vec<f32> = layers.iter().map(|l| height(l)).collect();
    assert!(
        heights[0] < heights[1] && heights[1] < heights[2],
        "layers' heights {heights:?}"
    );
}

/// The kinetic energy left after 0.5 s of a shear wave vₓ = sin(2π y / L) across a 20 × 20
/// block of `phase` (no gravity, no walls), as a fraction of the start's.
fn shear_energy_left(phase: FluidPhase) -> f32 {
    let mut app = app(1.0 / 60.0);
    app.insert_resource(Gravity(Vec2::ZERO));
    let r = app.world().resource::<FluidSettings>().particle_radius;
    let block = phase_block(&mut app, Some(phase), Vec2::ZERO, (20, 20), Vec2::ZERO);
    let height = 20.0 * 2.0 * r;
    for &p in &block {
        let y = position(&app, p).y;
        let v = (core::f32::consts::TAU * y / height).sin();
        app.world_mut().get_mut::<Velocity>(p).unwrap().0 = Vec2::new(v, 0.0);
    }
    let energy = |app: &App| -> f32 {
        let each = block.iter().map(|&p| velocity(app, p).length_squared());
        each.sum()
    };
    let start = energy(&app);
    run_steps(&mut app, 30);
    energy(&app) / start
}

/// Honey (XSPH c = 0.9) damps a shear wave much faster than water (c = 0.05). For a long wave
/// XSPH takes a fixed fraction of the wave's energy per step, proportional to c, so the decay
/// rates ln(E/E₀) should stand about 0.9/0.05 = 18 to 1; with the block's free surfaces and the
/// density solve, 11.1 was measured (honey kept 64.0 %, water 96.0 %). The test asks for at
/// least 5. (XSPH smooths velocity differences only: on a floor, a honey column slides about
/// as fast as water, since walls take no part in XSPH.)
#[test]
fn honey_damps_shear_faster_than_water() {
    let water = shear_energy_left(FluidPhase::WATER);
    let honey = shear_energy_left(FluidPhase::HONEY);
    assert!(
        (0.5..1.0).contains(&water),
        "water kept {:.1} %",
        100.0 * water
    );
    let ratio = honey.ln() / water.ln();
    println!("shear: honey kept {honey}, water {water}, rates {ratio} to 1");
    assert!(
        ratio >= 5.0,
        "decay rates {ratio:.1} to 1: honey kept {:.1} %, water {:.1} %",
        100.0 * honey,
        100.0 * water
    );
}

/// Inserting a phase sets the particle's mass to (2r)² ρ0ₚ; a held particle (w = 0) stays
/// held; an invalid phase is refused by `FluidPhase::new` and, inserted by hand, leaves the
/// mass; an emitter with a phase pours particles of that phase and mass.
#[test]
fn a_phase_sets_the_mass() {
    let mut app = app(1.0 / 60.0);
    let settings = *app.world().resource::<FluidSettings>();
    let d = 2.0 * settings.particle_radius;
    let oil = spawn(&mut app, |c| c.spawn((FluidParticle, FluidPhase::OIL)).id());
    let w = app.world().get::<InverseMass>(oil).unwrap().0;
    assert!(
        (1.0 / w - 500.0 * d * d).abs() < 1e-6,
        "oil mass {}",
        1.0 / w
    );
    app.world_mut().entity_mut(oil).remove::<FluidPhase>();
    let w = app.world().get::<InverseMass>(oil).unwrap().0;
    assert!(
        (1.0 / w - settings.particle_mass()).abs() < 1e-6,
        "mass {}",
        1.0 / w
    );
    let held = spawn(&mut app, |c| {
        c.spawn((FluidParticle, InverseMass(0.0))).id()
    });
    app.world_mut().entity_mut(held).insert(FluidPhase::HONEY);
    assert_eq!(app.world().get::<InverseMass>(held).unwrap().0, 0.0);
    assert!(FluidPhase::new(0.0, 0.1).is_err());
    assert!(FluidPhase::new(1000.0, 1.5).is_err());
    assert!(FluidPhase::new(f32::NAN, 0.1).is_err());
    let bad = FluidPhase {
        rest_density: -1.0,
        viscosity: 0.1,
    };
    let before = spawn(&mut app, |c| {
        c.spawn((FluidParticle, InverseMass(0.25))).id()
    });
    app.world_mut().entity_mut(before).insert(bad);
    assert_eq!(app.world().get::<InverseMass>(before).unwrap().0, 0.25);
    let plain = FluidEmitter::new(10.0, 1.0, 0.0).unwrap();
    assert!(plain.with_phase(bad).is_err());

    let emitter = plain.with_phase(FluidPhase::HONEY).unwrap();
    let at = Transform::from_xyz(5.0, 5.0, 0.0);
    let tap = spawn(&mut app, |c| c.spawn((emitter, at)).id());
    run_steps(&mut app, 12);
    let poured = app.world().get::<EmittedParticles>(tap).unwrap().to_vec();
    assert!(!poured.is_empty());
    for p in poured {
        assert_eq!(app.world().get::<FluidPhase>(p), Some(&FluidPhase::HONEY));
        let w = app.world().get::<InverseMass>(p).unwrap().0;
        assert!(
            (1.0 / w - 1400.0 * d * d).abs() < 1e-5,
            "honey mass {}",
            1.0 / w
        );
    }
}
