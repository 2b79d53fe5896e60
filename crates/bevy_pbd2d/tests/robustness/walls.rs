//! Fluid against its walls of boundary samples: a particle placed on a sample, a row of them on
//! the floor's samples, and a packed, jittered block in a box it fills.
//!
//! Naive: the density correction is a Newton step −C∇C/|∇C|², and on a sample ∇C vanishes by
//! symmetry while C > 0: a particle placed there moved ~8 m in one step and left the box; one
//! 10⁻⁶ m above it, hundreds of metres. A packed fluid's density gradient points out of it, and
//! one step's correction (~0.08 m) carried particles through the one-sample wall.

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;

use crate::common::*;

/// The reference demo's box (the default dam break's boundary samples), without its fluid.
fn demo_box(app: &mut App) -> DamBreakBuilder {
    let builder = DamBreakBuilder::default();
    let settings = FluidSettings::default();
    spawn(app, |c| {
        for p in builder.boundary_positions(&settings) {
            c.spawn((BoundaryParticle, Position(p)));
        }
    });
    builder
}

/// Fluid particles (the default fluid's mass) at `points`.
fn fluid_at(app: &mut App, points: &[Vec2]) -> Vec<Entity> {
    let w = InverseMass::from_mass(FluidSettings::default().particle_mass()).unwrap();
    spawn(app, |c| {
        points
            .iter()
            .map(|&p| c.spawn((FluidParticle, Position(p), w)).id())
            .collect()
    })
}

/// Whether `p` lies strictly inside the box spanned by `(lo, hi)`.
fn inside((lo, hi): (Vec2, Vec2), p: Vec2) -> bool {
    p.x > lo.x && p.x < hi.x && p.y > lo.y && p.y < hi.y
}

#[test]
fn a_fluid_particle_on_a_boundary_sample_moves_under_half_a_radius_and_stays_in() {
    let settings = FluidSettings::default();
    let r = settings.particle_radius;
    let samples = DamBreakBuilder::default().boundary_positions(&settings);
    // Samples in the demo's order: floor and ceiling alternate (columns 0 ..= 89), then the
    // left and right walls (rows 1 ..= 89). Each with the direction into the box.
    let sites = [
        ("floor", samples[2 * 30], Vec2::Y),
        ("ceiling", samples[2 * 30 + 1], -Vec2::Y),
        ("left wall", samples[2 * 90 + 2 * 29], Vec2::X),
        ("corner", samples[0], Vec2::ONE.normalize()),
    ];
    for (site, sample, inward) in sites {
        for d in [0.0, 1e-6, 1e-4, 1e-3, 0.25 * r, 0.5 * r, r] {
            let mut app = app(0.005);
            let bounds = demo_box(&mut app).box_bounds(&settings);
            let start = sample + d * inward;
            let particle = fluid_at(&mut app, &[start])[0];
            run_steps(&mut app, 1);
            let moved = (position(&app, particle) - start).length();
            assert!(
                moved < 0.5 * r,
                "{site}, {d} m from its sample: moved {} r in the first step",
                moved / r
            );
            for step in 1..400 {
                run_steps(&mut app, 1);
                let p = position(&app, particle);
                assert!(
                    inside(bounds, p) && velocity(&app, particle).is_finite(),
                    "{site}, {d} m from its sample: at {p} after {step} steps"
                );
            }
        }
    }
}

#[test]
fn a_row_of_fluid_particles_on_the_floor_samples_rises_gently_onto_the_floor() {
    let settings = FluidSettings::default();
    let r = settings.particle_radius;
    let mut app = app(0.005);
    let bounds = demo_box(&mut app).box_bounds(&settings);
    let samples = DamBreakBuilder::default().boundary_positions(&settings);
    // 21 consecutive floor samples (even indices are the floor's).
    let floor: Vec<Vec2> = (35..56).map(|j| samples[2 * j]).collect();
    let row = fluid_at(&mut app, &floor);
    run_steps(&mut app, 1);
    for (&p, &start) in row.iter().zip(&floor) {
        let moved = (position(&app, p) - start).length();
        assert!(moved < 0.5 * r, "moved {} r in the first step", moved / r);
    }
    run_steps(&mut app, 399);
    for &p in &row {
        let (x, v) = (position(&app, p), velocity(&app, p));
        assert!(inside(bounds, x), "{x}");
        // On the floor: above the samples' contact discs (1.2 r), below a second layer.
        assert!((1.19 * r..3.0 * r).contains(&x.y), "height {} r", x.y / r);
        assert!(v.length() < 1.0, "still moving at {v} m/s");
    }
}

/// A 20 × 20 block with spacing 2r from `origin`, each particle moved by up to ±0.8 r in x and y
/// (fixed-seed random).
fn jittered_block(origin: Vec2, r: f32) -> Vec<Vec2> {
    let mut lcg = Lcg(7);
    let mut jitter = move || 0.8 * r * (2.0 * lcg.next() - 1.0);
    let mut points = Vec::with_capacity(400);
    for i in 0..20 {
        for j in 0..20 {
            let grid = origin + 2.0 * r * Vec2::new(j as f32, i as f32);
            points.push(grid + Vec2::new(jitter(), jitter()));
        }
    }
    points
}

/// Runs 1 000 steps without gravity and asserts after every step that every particle is
/// inside `bounds` with a finite state.
fn assert_no_escape(app: &mut App, particles: &[Entity], bounds: (Vec2, Vec2), scene: &str) {
    app.world_mut().resource_mut::<Gravity>().0 = Vec2::ZERO;
    for step in 1..=1000 {
        run_steps(app, 1);
        let out = particles
            .iter()
            .filter(|&&p| !inside(bounds, position(app, p)))
            .count();
        assert_eq!(
            out, 0,
            "{scene}: {out} particles out of the box at step {step}"
        );
        assert!(all_finite(app), "{scene}: non-finite at step {step}");
    }
}

#[test]
fn a_packed_jittered_block_never_leaks_through_the_demos_box() {
    let settings = FluidSettings::default();
    let r = settings.particle_radius;
    let mut app = app(0.005);
    let builder = demo_box(&mut app);
    let block = jittered_block(builder.fluid_positions(&settings)[0], r);
    let particles = fluid_at(&mut app, &block);
    assert_no_escape(
        &mut app,
        &particles,
        builder.box_bounds(&settings),
        "demo box",
    );
}

#[test]
fn a_packed_jittered_block_never_leaks_through_a_box_it_fills() {
    let r = FluidSettings::default().particle_radius;
    let mut app = app(0.005);
    // A 1 × 1 m box, one sample every 2r along each side; the block's particles start r (± 0.8 r)
    // from its walls.
    spawn(&mut app, |c| {
        for k in 0..=20 {
            let t = k as f32 * 2.0 * r;
            for p in [
                Vec2::new(t, 0.0),
                Vec2::new(t, 1.0),
                Vec2::new(0.0, t),
                Vec2::new(1.0, t),
            ] {
                c.spawn((BoundaryParticle, Position(p)));
            }
        }
    });
    let particles = fluid_at(&mut app, &jittered_block(Vec2::splat(r), r));
    assert_no_escape(&mut app, &particles, (Vec2::ZERO, Vec2::ONE), "1 × 1 m box");
}

/// Fluid particles with the velocities given, at the positions given.
fn moving_fluid_at(app: &mut App, particles: &[(Vec2, Vec2)]) -> Vec<Entity> {
    let w = InverseMass::from_mass(FluidSettings::default().particle_mass()).unwrap();
    spawn(app, |c| {
        particles
            .iter()
            .map(|&(p, v)| c.spawn((FluidParticle, Position(p), Velocity(v), w)).id())
            .collect()
    })
}

#[test]
fn a_particle_on_the_floor_line_beside_a_sample_rises_instead_of_sinking() {
    let settings = FluidSettings::default();
    let r = settings.particle_radius;
    let samples = DamBreakBuilder::default().boundary_positions(&settings);
    for along in [
        1e-6,
        1e-4,
        0.1 * r,
        0.3 * r,
        0.5 * r,
        0.8 * r,
        1.1 * r,
        1.19 * r,
        r,
    ] {
        for (site, sample) in [("floor", samples[2 * 60]), ("corner", samples[0])] {
            let mut app = app(0.005);
            let bounds = demo_box(&mut app).box_bounds(&settings);
            let start = sample + Vec2::new(along, 0.0);
            let particle = fluid_at(&mut app, &[start])[0];
            run_steps(&mut app, 1);
            let moved = (position(&app, particle) - start).length();
            assert!(moved < 0.5 * r, "{site} + {along} m: moved {} r", moved / r);
            for step in 1..400 {
                run_steps(&mut app, 1);
                let p = position(&app, particle);
                assert!(
                    inside(bounds, p),
                    "{site} + {along} m: at {p} after {step} steps"
                );
            }
        }
    }
}

#[test]
fn a_particle_on_a_wall_line_with_gravity_into_the_wall_stays_in() {
    let settings = FluidSettings::default();
    let samples = DamBreakBuilder::default().boundary_positions(&settings);
    let left = samples[2 * 90 + 2 * 29];
    for gravity in [Vec2::new(-9.81, 0.0), Vec2::new(0.0, -9.81)] {
        for offset in [
            Vec2::new(0.0, 1e-6),
            Vec2::ZERO,
            Vec2::new(0.0, 0.3 * settings.particle_radius),
        ] {
            let mut app = app(0.005);
            app.world_mut().resource_mut::<Gravity>().0 = gravity;
            let bounds = demo_box(&mut app).box_bounds(&settings);
            let particle = fluid_at(&mut app, &[left + offset])[0];
            for step in 0..1000 {
                run_steps(&mut app, 1);
                let p = position(&app, particle);
                assert!(
                    inside(bounds, p),
                    "g {gravity}, {offset}: at {p} after {step} steps"
                );
            }
            // Out of the wall's discs (on the wall, or sliding on the frictionless floor).
            let p = position(&app, particle);
            let r = settings.particle_radius;
            let clearance = samples
                .iter()
                .map(|&k| (p - k).length())
                .fold(f32::MAX, f32::min);
            assert!(
                clearance > 1.19 * r,
                "g {gravity}, {offset}: {} r from a sample",
                clearance / r
            );
        }
    }
}

#[test]
fn a_fast_particle_in_a_cusp_between_floor_discs_stays_above_the_floor() {
    let settings = FluidSettings::default();
    let r = settings.particle_radius;
    let samples = DamBreakBuilder::default().boundary_positions(&settings);
    for cfl in [0.4, 0.7, 1.0] {
        let mut app = app(0.005);
        app.world_mut().resource_mut::<FluidSettings>().cfl_number = cfl;
        demo_box(&mut app);
        let height = (1.2f32 * 1.2 - 1.0).sqrt() * r;
        let cusp = samples[2 * 40] + Vec2::new(r, height);
        for speed in [2.0, 14.0, 20.0] {
            for angle in [-90.0f32, -60.0, -120.0] {
                let v = speed * Vec2::from_angle(angle.to_radians());
                let particle = moving_fluid_at(&mut app, &[(cusp, v)])[0];
                run_steps(&mut app, 5);
                let p = position(&app, particle);
                assert!(
                    p.y > 0.0,
                    "cfl {cfl}, {v} m/s from the cusp: below the floor at {p}"
                );
                app.world_mut().despawn(particle);
            }
        }
    }
}

#[test]
fn a_compressed_block_against_the_corner_never_leaks() {
    let r = FluidSettings::default().particle_radius;
    let settings = FluidSettings::default();
    for (spacing, dt) in [(1.0, 0.005), (1.2, 0.02)] {
        let mut app = app(dt);
        let bounds = demo_box(&mut app).box_bounds(&settings);
        let (lo, _) = bounds;
        let block: Vec<Vec2> = (0..1600)
            .map(|k| {
                lo + Vec2::splat(1.3 * r)
                    + spacing * r * Vec2::new((k % 40) as f32, (k / 40) as f32)
            })
            .collect();
        let particles = fluid_at(&mut app, &block);
        for step in 1..=300 {
            run_steps(&mut app, 1);
            let out = particles
                .iter()
                .filter(|&&p| !inside(bounds, position(&app, p)))
                .count();
            assert_eq!(
                out, 0,
                "spacing {spacing} r, Δt {dt}: {out} out at step {step}"
            );
        }
    }
}

#[test]
fn a_held_particle_does_not_shoot_its_neighbour_nor_stall_the_solve() {
    let settings = FluidSettings::default();
    let r = settings.particle_radius;
    let mut app = app(0.005);
    demo_box(&mut app);
    let samples = DamBreakBuilder::default().boundary_positions(&settings);
    let low = samples[2 * 45] + Vec2::new(0.0, 0.3 * r);
    let high = low + Vec2::new(0.0, 2.0 * r);
    let pair = fluid_at(&mut app, &[low, high]);
    run_steps(&mut app, 1);
    let moved = (position(&app, pair[1]) - high).length();
    assert!(moved < 0.5 * r, "the upper particle moved {} r", moved / r);
    assert!(
        stats(&app).fluid_iterations < settings.max_iterations,
        "the solve ran to its cap"
    );
}
