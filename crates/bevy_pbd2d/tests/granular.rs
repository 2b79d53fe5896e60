//! Granular matter (issue 35, item 5): sand poured from a point piles at an angle of repose that
//! grows with the grains' friction (\[MMCK14\] §6).

mod common;

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;

use common::*;

/// Mean grain radius (m).
const R: f32 = 0.025;
/// Grains poured, 4 at a time.
const POURED: u32 = 480;

/// Pours [`POURED`] grains of friction μs = μk = `mu` on a rough floor (y = 0, μ = 1), 4 every
/// 5 steps from 1.2 m above x = 0 at 1.5 m/s down (48 grains/s), lets them rest for 3 s and
/// returns each grain's centre and radius. 20 substeps of 4 iterations at 60 Hz: at 10
/// substeps the piles of μ 0.3 and 1 both stand at 22–23° (the friction's budget, μ times a
/// substep's normal correction, shrinks with Δt² as the jitter a contact leaves does not).
fn pour(mu: f32) -> Vec<(Vec2, f32)> {
    let mut app = solver_app(1.0 / 60.0, 20, 4);
    collider(
        &mut app,
        Rectangle::new(20.0, 1.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
        ColliderMaterial::new(1.0, 1.0, 0.0).unwrap(),
    );
    let mut grains: Vec<Entity> = Vec::new();
    for k in 0..POURED / 4 {
        let row = GranularBuilder {
            columns: 4,
            rows: 1,
            radius: R,
            seed: k as u64,
            static_friction: mu,
            dynamic_friction: mu,
            // A few mm to either side, so that the stream does not stack in one column.
            origin: Vec2::new(0.004 * ((k * 7) % 5) as f32 - 0.008, 1.2),
            ..default()
        };
        let block = spawn(&mut app, |c| row.spawn(c).unwrap());
        for &p in &block.particles {
            app.world_mut()
                .entity_mut(p)
                .insert(Velocity(Vec2::new(0.0, -1.5)));
        }
        grains.extend(block.particles);
        run_steps(&mut app, 5);
    }
    run_steps(&mut app, 180);
    let xs = grains.iter().map(|&p| position(&app, p).x);
    let (lo, hi) = xs.fold((0.0f32, 0.0f32), |(a, b), x| (a.min(x), b.max(x)));
    let top = grains
        .iter()
        .map(|&p| position(&app, p).y)
        .fold(0.0, f32::max);
    println!("μ {mu}: pile {top:.3} m high, its base from {lo:.2} to {hi:.2} m");
    let radius = |p: Entity| app.world().get::<ParticleRadius>(p).unwrap().get();
    grains
        .iter()
        .map(|&p| (position(&app, p), radius(p)))
        .collect()
}

/// The pile's slope (degrees): its surface, the highest grain top in columns 2 R wide, fitted
/// by least squares against the distance from the axis between a quarter and three quarters
/// of the pile's height (above the rounded apex, clear of the toe), both flanks together.
fn angle_of_repose(grains: &[(Vec2, f32)]) -> f32 {
    let width = 2.0 * R;
    let mut top = std::collections::BTreeMap::<i32, f32>::new();
    for &(p, r) in grains {
        let column = (p.x / width).round() as i32;
        let h = top.entry(column).or_insert(0.0);
        *h = h.max(p.y + r);
    }
    let peak = top.values().copied().fold(0.0, f32::max);
    let points: Vec<(f32, f32)> = top
        .iter()
        .filter(|&(_, &h)| (0.25 * peak..=0.75 * peak).contains(&h))
        .map(|(&c, &h)| ((c as f32 * width).abs(), h))
        .collect();
    assert!(
        points.len() >= 6,
        "too few columns on the flanks: {points:?}"
    );
    let n = points.len() as f32;
    let (mx, my) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x / n, b + y / n));
    let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(a, b), &(x, y)| {
        (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
    });
    (-sxy / sxx).atan().to_degrees()
}

#[test]
fn a_sand_piles_angle_of_repose_grows_with_friction() {
    let mut angles = Vec::new();
    for mu in [0.1, 0.3, 1.0] {
        let grains = pour(mu);
        assert!(
            grains.iter().all(|(p, _)| p.is_finite() && p.y > 0.0),
            "a grain left the floor or went non-finite"
        );
        // No grain sinks into another.
        let mut closest = f32::INFINITY;
        for (a, &(p, ra)) in grains.iter().enumerate() {
            for &(q, rb) in &grains[a + 1..] {
                closest = closest.min(p.distance(q) / (ra + rb));
            }
        }
        let angle = angle_of_repose(&grains);
        println!("μ = {mu}: angle of repose {angle:.1}°, closest pair {closest:.3} (r₁ + r₂)");
        assert!(closest > 0.95, "grains overlap: {closest} (r₁ + r₂)");
        angles.push(angle);
    }
    // Each step in friction steepens the pile (15.8°, 25.9°, 28.5° when written: tan θ
    // saturates toward what grains that cannot roll stand at); the steepest stays below what a
    // lattice of equal discs could stand at (60°).
    for pair in angles.windows(2) {
        assert!(
            pair[1] > pair[0] + 1.0,
            "angles {angles:?} do not grow with μ"
        );
    }
    assert!(
        angles[2] > angles[0] + 8.0,
        "angles {angles:?} do not grow with μ"
    );
    assert!(angles[0] > 2.0 && angles[2] < 60.0, "angles {angles:?}");
}

/// Grains spawned into each other (two 10 × 10 blocks, the second half a spacing up and to the
/// right of the first, no gravity) are pushed apart without being launched: the
/// pre-stabilization moves them at the substep's start, which changes no velocity, and a pair
/// that begins a substep overlapping is not pushed out in it. With the pre-stabilization alone
/// the fastest grain left at 18.9 m/s (its 4 iterations leave overlap in a pack this dense);
/// with both, 2.9e-5 m/s.
#[test]
fn grains_spawned_into_each_other_separate_without_being_launched() {
    let mut app = solver_app(1.0 / 60.0, 20, 4);
    app.insert_resource(Gravity(Vec2::ZERO));
    let block = GranularBuilder {
        columns: 10,
        rows: 10,
        radius: R,
        ..default()
    };
    let spacing = 2.0 * R * (1.0 + block.radius_spread);
    let grains = spawn(&mut app, |c| {
        let mut grains = block.spawn(c).unwrap().particles;
        let shifted = GranularBuilder {
            seed: 1,
            origin: Vec2::splat(0.5 * spacing),
            ..block
        };
        grains.extend(shifted.spawn(c).unwrap().particles);
        grains
    });
    let mut fastest = 0.0f32;
    for _ in 0..60 {
        run_steps(&mut app, 1);
        let speed = grains.iter().map(|&p| velocity(&app, p).length());
        fastest = fastest.max(speed.fold(0.0, f32::max));
    }
    let radius = |p: Entity| app.world().get::<ParticleRadius>(p).unwrap().get();
    let mut closest = f32::INFINITY;
    for (a, &p) in grains.iter().enumerate() {
        for &q in &grains[a + 1..] {
            let gap = position(&app, p).distance(position(&app, q)) / (radius(p) + radius(q));
            closest = closest.min(gap);
        }
    }
    println!("closest pair {closest:.3} (r₁ + r₂), fastest grain {fastest:.2e} m/s");
    assert!(closest > 0.99, "grains still overlap: {closest} (r₁ + r₂)");
    assert!(fastest < 0.01, "a grain was launched at {fastest} m/s");
}
