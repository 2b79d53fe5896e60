//! Rest state: F0 without gravity must stay at rest.
//!
//! Naive: leaving out the particle's own term W(0) in ρᵢ, or a rest density inconsistent with
//! the particle spacing, makes a block at rest start compressed or stretched; it then expands,
//! collapses or clumps.

use bevy::prelude::*;
use bevy_pbd2d::fluid::density::DensityState;
use bevy_pbd2d::prelude::*;

use crate::common::*;

fn bounding_area(x: &[Vec2]) -> f32 {
    let (lo, hi) = x.iter().fold((Vec2::MAX, Vec2::MIN), |(lo, hi), &p| {
        (lo.min(p), hi.max(p))
    });
    (hi - lo).x * (hi - lo).y
}

#[test]
fn block_at_rest_stays_at_rest() {
    let settings = FluidSettings::default();
    let (mut app, _) = crate::f0_app(Vec2::ZERO);
    app.world_mut().resource_mut::<Gravity>().0 = Vec2::ZERO;
    let area0 = bounding_area(&crate::fluid_positions(app_after_one_step(&mut app)));
    // Interior particles (two rows/columns away from the surface) start at |C| < 1e-3.
    let rows = &app.world().resource::<DensityState>().rows;
    for i in 2..18 {
        for j in 2..18 {
            let c = rows[i * 20 + j].density / settings.rest_density - 1.0;
            assert!(c.abs() < 1e-3, "C of interior particle ({i}, {j}) = {c}");
        }
    }
    let min_distance = 0.6 * 2.0 * settings.particle_radius;
    for step in 0..500 {
        run_steps(&mut app, 1);
        if step % 50 == 49 {
            let x = crate::fluid_positions(&app);
            for i in 0..x.len() {
                for j in i + 1..x.len() {
                    let d = (x[i] - x[j]).length();
                    assert!(
                        d >= min_distance,
                        "particles {i} and {j} at {d} m after step {step}"
                    );
                }
            }
        }
    }
    let area = bounding_area(&crate::fluid_positions(&app));
    assert!(
        (area - area0).abs() < 0.02 * area0,
        "block area {area0} → {area} m²"
    );
}

fn app_after_one_step(app: &mut App) -> &App {
    run_steps(app, 1);
    app
}
