//! Neighbour search at negative coordinates: F0 centred on the origin.
//!
//! Naive: cells from `(x / h) as i32` (truncation toward zero) or a fixed offset such as the
//! demo's `x + 100` break or merge cells around and below zero; the densities of mirror-image
//! particles then differ.

use bevy::prelude::*;
use bevy_pbd2d::fluid::NeighborState;
use bevy_pbd2d::fluid::density::DensityState;
use bevy_pbd2d::prelude::*;

use crate::common::*;

#[test]
fn neighbour_lists_match_brute_force_and_densities_are_mirror_symmetric() {
    // The F0 block and box, shifted so that the block is centred on the origin and moved
    // along the floor to the middle of the box (the demo puts it in the left corner, against
    // the wall), so that the scene is mirror-symmetric about x = 0.
    let settings = FluidSettings::default();
    let builder = crate::f0(Vec2::ZERO);
    let block = builder.fluid_positions(&settings);
    let block_centre = block.iter().copied().sum::<Vec2>() / block.len() as f32;
    let (lo, hi) = builder.box_bounds(&settings);
    let box_shift = Vec2::new(-0.5 * (lo.x + hi.x), -block_centre.y);
    let w = InverseMass::from_mass(settings.particle_mass()).unwrap();
    let mut app = app(0.005);
    app.world_mut().resource_mut::<Gravity>().0 = Vec2::ZERO;
    spawn(&mut app, |c| {
        for p in &block {
            c.spawn((FluidParticle, Position(*p - block_centre), w));
        }
        for p in builder.boundary_positions(&settings) {
            c.spawn((BoundaryParticle, Position(p + box_shift)));
        }
    });
    run_steps(&mut app, 1);

    let state = solver(&app);
    let n = state.fluid_count;
    let x = &state.x_predicted[..n]; // the positions the neighbour search saw
    let mean = x.iter().copied().sum::<Vec2>() / n as f32;
    assert!(mean.length() < 1e-4 && x.iter().any(|p| p.x < 0.0) && x.iter().any(|p| p.y < 0.0));
    let h = settings.support_radius;
    let neighbors = app.world().resource::<NeighborState>();
    for i in 0..n {
        let mut found = neighbors.fluid_neighbors(i).to_vec();
        found.sort_unstable();
        let brute: Vec<u32> = (0..n as u32)
            .filter(|&j| j as usize != i && (x[i] - x[j as usize]).length_squared() < h * h)
            .collect();
        assert_eq!(found, brute, "neighbours of particle {i} at {}", x[i]);
    }

    // No gravity, a block at rest: the solve needs no correction, so these are the t = 0 densities.
    let rows = &app.world().resource::<DensityState>().rows;
    let w = 20;
    for i in 0..20 {
        for j in 0..w / 2 {
            let (a, b) = (rows[i * w + j].density, rows[i * w + (w - 1 - j)].density);
            assert!(
                (a - b).abs() <= 1e-5 * a,
                "row {i}: ρ({j}) = {a}, ρ({}) = {b}",
                w - 1 - j
            );
        }
    }
}
