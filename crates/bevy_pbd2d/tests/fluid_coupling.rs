//! Fluid ↔ solid particles, two-way (issue 35, item 1): a cloth hammock holds water, a jet
//! pushes a curtain with momentum conserved, without coupling the fluid passes through.

mod common;

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;

use common::*;

/// Σ m v over `particles` (kg·m/s).
fn momentum(app: &App, particles: &[Entity]) -> Vec2 {
    particles
        .iter()
        .map(|&e| {
            let w = app.world().get::<InverseMass>(e).unwrap().0;
            app.world().get::<Velocity>(e).unwrap().0 / w
        })
        .sum()
}

/// Without gravity, a block of 60 fluid particles at 2 m/s hits a free curtain of 4 × 20
/// cloth particles: the total momentum of fluid and cloth stays within 1 % of the jet's, and
/// the curtain is pushed along with the fluid, none of which passes it.
#[test]
fn a_jet_on_a_curtain_conserves_momentum() {
    let mut app = app(0.005);
    app.world_mut().resource_mut::<Gravity>().0 = Vec2::ZERO;
    let cloth = free_cloth(&mut app, (4, 20), Vec2::new(0.0, 0.5));
    app.world_mut().entity_mut(cloth.root).insert(FluidCoupling);
    let jet = fluid_block(
        &mut app,
        Vec2::new(-0.6, -0.25),
        (6, 10),
        Vec2::new(2.0, 0.0),
    );
    let all: Vec<Entity> = jet.iter().chain(&cloth.particles).copied().collect();
    run_steps(&mut app, 1);
    let p0 = momentum(&app, &all);
    let mut worst = 0.0f32;
    for _ in 0..100 {
        run_steps(&mut app, 1);
        worst = worst.max((momentum(&app, &all) - p0).length() / p0.length());
    }
    assert!(worst <= 0.01, "momentum changed by {:.2} %", 100.0 * worst);
    // The curtain (8 kg) moves on with the fluid (150 kg): at least 0.8 of the common speed
    // P/(M + m) of a fully inelastic hit, and no fluid particle is past it.
    let cloth_mass = 0.1 * cloth.particles.len() as f32;
    let common = p0.x / (cloth_mass + 2.5 * jet.len() as f32);
    let cloth_speed = momentum(&app, &cloth.particles).x / cloth_mass;
    assert!(
        cloth_speed >= 0.8 * common,
        "curtain at {cloth_speed} m/s, common speed {common} m/s"
    );
    let rightmost = (cloth.particles.iter()).fold(f32::MIN, |x, &p| x.max(position(&app, p).x));
    let through = jet
        .iter()
        .filter(|&&p| position(&app, p).x > rightmost)
        .count();
    assert_eq!(through, 0, "fluid particles past the curtain");
}

/// Without [`FluidCoupling`] the same jet goes through the curtain.
#[test]
fn without_coupling_the_jet_passes_the_curtain() {
    let mut app = app(0.005);
    app.world_mut().resource_mut::<Gravity>().0 = Vec2::ZERO;
    let cloth = free_cloth(&mut app, (4, 20), Vec2::new(0.0, 0.5));
    let jet = fluid_block(
        &mut app,
        Vec2::new(-0.6, -0.25),
        (6, 10),
        Vec2::new(2.0, 0.0),
    );
    run_steps(&mut app, 101);
    let rightmost = (cloth.particles.iter()).fold(f32::MIN, |x, &p| x.max(position(&app, p).x));
    let through = jet
        .iter()
        .filter(|&&p| position(&app, p).x > rightmost)
        .count();
    assert!(
        through >= jet.len() / 2,
        "{through} of {} through",
        jet.len()
    );
    assert_eq!(stats(&app).coupled_contacts, 0);
}

/// The sag (m) of a weightless, inextensible strip of length `length` between two pins at the
/// same height `span` apart, holding water of area `area` (m²) at rest: the static estimate
/// of the hammock. Under hydrostatic pressure alone the strip's tension T is constant and its
/// curvature is ρ0 g (depth)/T; above the water it is straight. Found by shooting from the
/// lowest point (θ = 0) with c = ρ0 g/T and the water's depth there d, so that the pin is
/// `span`/2 away and the water's half area is `area`/2.
fn hydrostatic_sag(length: f32, span: f32, area: f32) -> f32 {
    // (pin x, pin y, half area) of the strip for c (1/m²) and d (m).
    let shoot = |c: f64, d: f64| {
        let half = length as f64 / 2.0;
        let steps = 20_000;
        let ds = half / steps as f64;
        let (mut x, mut y, mut theta, mut a, mut s) = (0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0);
        while s < half - 1e-12 && y < d {
            // Midpoint rule for θ' = c (d − y), x' = cos θ, y' = sin θ.
            let mid = theta + 0.5 * ds * c * (d - y);
            let (xm, ym) = (ds * mid.cos(), ds * mid.sin());
            a += (d - (y + 0.5 * ym)) * xm;
            theta += ds * c * (d - (y + 0.5 * ym));
            (x, y, s) = (x + xm, y + ym, s + ds);
        }
        let rest = half - s;
        (x + rest * theta.cos(), y + rest * theta.sin(), a)
    };
    let bisect = |mut lo: f64, mut hi: f64, f: &dyn Fn(f64) -> bool| {
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if f(mid) { hi = mid } else { lo = mid }
        }
        0.5 * (lo + hi)
    };
    // For a depth d, the c that brings the pin to span/2 (the pin comes closer as c grows).
    // Beyond c d² = 4 the wetted strip would loop on itself.
    let c_for = |d: f64| {
        let top = (4.0 / (d * d)).ln();
        bisect(-10.0, top, &|lc| shoot(lc.exp(), d).0 <= span as f64 / 2.0).exp()
    };
    let d = bisect(0.0, length as f64, &|d| {
        shoot(c_for(d), d).2 >= area as f64 / 2.0
    });
    shoot(c_for(d), d).1 as f32
}

/// The estimate's limits: a strip holding almost no water hangs as a V from its middle, one
/// holding a lot as a deeper round bag.
#[test]
fn the_static_estimate_has_the_right_limits() {
    let (length, span) = (4.0f32, 2.5f32);
    let v = ((length / 2.0).powi(2) - (span / 2.0).powi(2)).sqrt();
    let small = hydrostatic_sag(length, span, 1e-3);
    assert!(small < v && small > 0.98 * v, "{small} vs V {v}");
    let full = hydrostatic_sag(length, span, 1.5);
    assert!(full < v && full > 0.8 * v, "{full} vs V {v}");
}

/// A hammock: a strip of 101 cloth particles 5 cm apart (5 m) and 2.5 cm in radius (touching
/// discs), pinned at its ends 3 m apart, catches 500 fluid particles dropped into it: none
/// passes through it or spills in 2 000 steps, and its sag is within 10 % of the static
/// estimate with the water's weight. (An inextensible strip's sag hardly depends on its load:
/// empty, this one would hang 1.81 m deep as a catenary, against 1.84 m with the water. What
/// shows the load is carried is that the water stays on it.)
#[test]
fn a_cloth_hammock_holds_500_fluid_particles() {
    // 4 substeps of 20 iterations: at 1 × 5 or 2 × 10 the strip, stretched 7–11 % under the
    // load, let fluid through (coupling module docs).
    let mut app = solver_app(0.005, 4, 20);
    let (columns, span) = (101u32, 3.0f32);
    let length = 0.05 * (columns - 1) as f32;
    let builder = ClothBuilder {
        width: columns,
        height: 1,
        spacing: 0.05,
        mass: 0.5,
        ..default()
    };
    let cloth = spawn(&mut app, |c| builder.spawn(c).unwrap());
    // Hung as a circular arc of its own length through the pins at (±span/2, 0).
    let mut theta = 1.0f32;
    for _ in 0..100 {
        // sin θ / θ = span / length (Newton).
        let f = theta.sin() / theta - span / length;
        let df = (theta * theta.cos() - theta.sin()) / (theta * theta);
        theta -= f / df;
    }
    let radius = length / (2.0 * theta);
    let centre = Vec2::new(0.0, radius * theta.cos());
    for (k, &p) in cloth.particles.iter().enumerate() {
        let angle = -theta + 2.0 * theta * k as f32 / (columns - 1) as f32;
        let at = centre + radius * Vec2::new(angle.sin(), -angle.cos());
        app.world_mut().entity_mut(p).insert(Position(at));
    }
    app.world_mut().entity_mut(cloth.root).insert(FluidCoupling);
    for &p in &cloth.particles {
        app.world_mut()
            .entity_mut(p)
            .insert(ParticleRadius::new(0.025).unwrap());
    }
    let water = fluid_block(&mut app, Vec2::new(-0.6, -1.3), (25, 20), Vec2::ZERO);
    let pins = [cloth.particles[0], cloth.particles[columns as usize - 1]];
    let (mut worst_through, mut worst_spilled) = (0, 0);
    for step in 0..2000 {
        run_steps(&mut app, 1);
        if step % 50 == 49 {
            let line: Vec<Vec2> = cloth.particles.iter().map(|&p| position(&app, p)).collect();
            let through = water
                .iter()
                .filter(|&&p| below(&line, position(&app, p)))
                .count();
            worst_through = worst_through.max(through);
            let spilled = water
                .iter()
                .filter(|&&p| position(&app, p).x.abs() > span / 2.0);
            worst_spilled = worst_spilled.max(spilled.count());
        }
    }
    let line: Vec<Vec2> = cloth.particles.iter().map(|&p| position(&app, p)).collect();
    let lowest = line.iter().fold(f32::MAX, |y, p| y.min(p.y));
    let sag = position(&app, pins[0]).y - lowest;
    let area = water.len() as f32 * 0.05 * 0.05;
    let estimate = hydrostatic_sag(length, span, area);
    let stretch = stats(&app).max_relative_stretch;
    assert_eq!(worst_through, 0, "fluid particles below the hammock");
    assert_eq!(worst_spilled, 0, "fluid particles over the rim");
    assert!(
        (sag - estimate).abs() <= 0.1 * estimate,
        "sag {sag} m against {estimate} m (stretch {stretch})"
    );
}

/// Whether `p` lies below the lowest crossing of the polyline `line` with the vertical through
/// it (false where none crosses it).
fn below(line: &[Vec2], p: Vec2) -> bool {
    let crossings = line.windows(2).filter_map(|s| {
        let (lo, hi) = (s[0].x.min(s[1].x), s[0].x.max(s[1].x));
        let t = (p.x - s[0].x) / (s[1].x - s[0].x);
        (lo..=hi)
            .contains(&p.x)
            .then(|| s[0].y + t.clamp(0.0, 1.0) * (s[1].y - s[0].y))
    });
    crossings.fold(f32::MAX, f32::min) > p.y
}

/// The fraction of a rigid box blob's area under the water's surface after 12 s: 11 × 11
/// particles 5 cm apart (touching discs: a 0.55 m square) of `ratio` times the fluid's rest
/// density, dropped on 640 fluid particles (0.8 m deep) in a 2 m tank. Each particle's 5 cm
/// cell counts with its part below the surface, the highest fluid particle's top in each 5 cm
/// column more than 0.5 m from the blob.
fn floating_fraction(ratio: f32) -> f32 {
    let mut app = solver_app(0.005, 4, 20);
    let (width, r) = (2.0f32, 0.025f32);
    tank(&mut app, width);
    let water = fluid_block(&mut app, Vec2::splat(r), (40, 16), Vec2::ZERO);
    let rho0 = app.world().resource::<FluidSettings>().rest_density;
    let blob = BlobBuilder {
        shape: bevy_pbd2d::scenes::BlobShape::Box(Vec2::splat(0.25)),
        spacing: 0.05,
        density: ratio * rho0,
        stiffness: 1.0,
        origin: Vec2::new(width / 2.0, 0.85 + 0.275),
    };
    let blob = spawn(&mut app, |c| blob.spawn(c).unwrap());
    app.world_mut().entity_mut(blob.root).insert(FluidCoupling);
    run_steps(&mut app, 2400);
    let at: Vec<Vec2> = blob.particles.iter().map(|&p| position(&app, p)).collect();
    let centre_x = at.iter().map(|p| p.x).sum::<f32>() / at.len() as f32;
    let mut columns = vec![f32::MIN; (width / 0.05) as usize];
    for &p in &water {
        let p = position(&app, p);
        let column = ((p.x / 0.05) as usize).min(columns.len() - 1);
        columns[column] = columns[column].max(p.y + r);
    }
    let far = columns.iter().enumerate().filter(|&(c, &y)| {
        let x = (c as f32 + 0.5) * 0.05;
        (x - centre_x).abs() > 0.5 && y > f32::MIN
    });
    let surfaces: Vec<f32> = far.map(|(_, &y)| y).collect();
    let surface = surfaces.iter().sum::<f32>() / surfaces.len() as f32;
    let cells = at
        .iter()
        .map(|p| ((surface - (p.y - r)) / (2.0 * r)).clamp(0.0, 1.0));
    cells.sum::<f32>() / at.len() as f32
}

/// Blobs at 0.5 and 0.25 times the fluid's rest density float, the lighter one higher.
/// Archimedes says 50 % and 25 % of their area under the surface; the coupling gives 55.6 %
/// and 28.6 % (11 % and 14 % deeper: coupling module docs); the bounds are 45–60 % and
/// 20–32 %.
#[test]
fn blobs_float_by_their_density() {
    let (half, quarter) = (floating_fraction(0.5), floating_fraction(0.25));
    assert!(
        (0.5..=0.6).contains(&half),
        "0.5 ρ0: {:.1} % under",
        100.0 * half
    );
    assert!(
        half - quarter >= 0.2,
        "0.25 ρ0: {:.1} % under",
        100.0 * quarter
    );
}
