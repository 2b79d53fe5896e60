//! Tests of the sweep: no motion crosses a row of samples, from anywhere above it.

use bevy::prelude::*;

use super::walls::Walls;
use crate::fluid::grid::SpatialHashGrid;
use crate::fluid::grid::test_points::lcg;
use crate::fluid::settings::FluidSettings;

/// A row of samples spaced 2r along y = 0, its grid and Ψ (1 each: the sweep ignores Ψ).
fn row(settings: &FluidSettings) -> (Vec<Vec2>, Vec<f32>, SpatialHashGrid) {
    let r = settings.particle_radius;
    let samples: Vec<Vec2> = (-40..=40)
        .map(|k| Vec2::new(2.0 * r * k as f32, 0.0))
        .collect();
    let mut grid = SpatialHashGrid::default();
    grid.build(&samples, settings.support_radius);
    let psi = vec![1.0; samples.len()];
    (samples, psi, grid)
}

/// Random motions from above the row (outside its discs) to below it, up to 100 r long, at
/// every angle: the sweep stops each on the side it started, outside every disc.
#[test]
fn no_motion_crosses_a_row_of_samples() {
    let settings = FluidSettings::default();
    let r = settings.particle_radius;
    let (samples, psi, grid) = row(&settings);
    let walls = Walls::new(&settings, (&samples, &psi), &grid);
    let mut seed = 99u64;
    let mut rand = move || lcg(&mut seed);
    let mut scratch = Vec::new();
    for _ in 0..20_000 {
        let a = Vec2::new((rand() - 0.5) * 40.0 * r, walls.radius + rand() * 4.0 * r);
        let b = Vec2::new(a.x + (rand() - 0.5) * 100.0 * r, -rand() * 50.0 * r);
        let end = walls.sweep((a, b), None, &mut scratch, None);
        let (end, _) = end.expect("it reaches the row");
        assert!(end.y > 0.0, "{a} → {b} ended at {end}");
        let inside = samples.iter().any(|&k| (end - k).length() < walls.radius);
        assert!(!inside, "{a} → {b} ended inside a disc at {end}");
    }
}

/// A particle resting in the cusp between two discs (on both surfaces, the stop point of an
/// earlier step) and pushed down or sideways into the row stays on its side: sliding along
/// one disc would enter the other.
#[test]
fn no_motion_crosses_from_a_cusp_between_two_discs() {
    let settings = FluidSettings::default();
    let r = settings.particle_radius;
    let (samples, psi, grid) = row(&settings);
    let walls = Walls::new(&settings, (&samples, &psi), &grid);
    let height = (walls.radius * walls.radius - r * r).sqrt();
    let mut scratch = Vec::new();
    for cusp in [
        Vec2::new(r, height),
        Vec2::new(-3.0 * r, height * (1.0 + 1e-6)),
    ] {
        for angle in (0..36).map(|k| k as f32 * 10f32.to_radians()) {
            let b = cusp + 3.0 * r * Vec2::new(angle.cos(), -angle.sin().abs() - 0.1);
            let end = walls.sweep((cusp, b), None, &mut scratch, None);
            let end = end.map_or(b, |(end, _)| end);
            assert!(end.y > 0.0, "{cusp} → {b} ended at {end}");
        }
    }
}
