//! Corners: a particle driven diagonally into a box corner at 20 m/s, and the F0 dam break
//! started against a corner; no particle may ever leave the box.
//!
//! Naive: at 20 m/s a particle moves h = 0.1 m per 5 ms step, past the single row of boundary
//! samples (spaced 0.05 m); once behind them their density gradient pushes it further out.

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;

use crate::common::*;

fn assert_inside(app: &App, lo: Vec2, hi: Vec2, step: u64) {
    for (i, p) in crate::fluid_positions(app).iter().enumerate() {
        assert!(
            p.x > lo.x && p.x < hi.x && p.y > lo.y && p.y < hi.y,
            "particle {i} at {p} outside at step {step}"
        );
    }
}

#[test]
fn particle_driven_into_a_corner_at_20_m_per_s_stays_inside() {
    let settings = FluidSettings::default();
    let builder = crate::f0(Vec2::ZERO);
    let (lo, hi) = builder.box_bounds(&settings);
    let mut app = app(0.005);
    let w = InverseMass::from_mass(settings.particle_mass()).unwrap();
    spawn(&mut app, |c| {
        for p in builder.boundary_positions(&settings) {
            c.spawn((BoundaryParticle, Position(p)));
        }
        let d = 2.0 * settings.particle_radius;
        let v = Vec2::new(-1.0, -1.0).normalize() * 20.0;
        c.spawn((FluidParticle, Position(lo + Vec2::splat(d)), Velocity(v), w));
    });
    for step in 0..5000 {
        run_steps(&mut app, 1);
        assert_inside(&app, lo, hi, step);
    }
}

#[test]
fn dam_break_against_a_corner_stays_inside_for_5000_steps() {
    let settings = FluidSettings::default();
    let (lo, hi) = crate::f0(Vec2::ZERO).box_bounds(&settings);
    let (mut app, _) = crate::f0_app(Vec2::ZERO);
    for step in 0..5000 {
        run_steps(&mut app, 1);
        assert_inside(&app, lo, hi, step);
    }
}
