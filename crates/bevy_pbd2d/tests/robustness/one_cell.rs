//! Everything in one cell: 500 fluid particles at random inside one h × h square.
//!
//! Naive: fixed-capacity buckets overflow and drop neighbours; the huge initial compression
//! gives corrections of metres per iteration and speeds far beyond h/Δt.

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;

use crate::common::*;

#[test]
fn five_hundred_particles_in_one_cell() {
    let dt = 0.005;
    let mut app = app(dt);
    record_searched_positions(&mut app);
    app.world_mut().resource_mut::<Gravity>().0 = Vec2::ZERO;
    let settings = FluidSettings::default();
    let h = settings.support_radius;
    let w = InverseMass::from_mass(settings.particle_mass()).unwrap();
    let mut lcg = Lcg(12345);
    let mut rand = move || lcg.next();
    // Inside the grid cell [0.3, 0.4) × [−0.2, −0.1).
    let points: Vec<Vec2> = (0..500)
        .map(|_| Vec2::new(0.3 + 0.0999 * rand(), -0.2 + 0.0999 * rand()))
        .collect();
    spawn(&mut app, |c| {
        for &p in &points {
            c.spawn((FluidParticle, Position(p), w));
        }
    });
    let mut fastest = 0.0f32;
    for step in 0..200 {
        run_steps(&mut app, 1);
        assert!(all_finite(&mut app), "non-finite at step {step}");
        fastest = fastest.max(crate::max_fluid_speed(&app));
        if step == 0 || step == 199 {
            let unlike = neighbours_unlike_brute_force(&app, h);
            assert_eq!(unlike, None, "step {step}: (particle, found, brute force)");
        }
    }
    assert!(
        fastest < h / dt,
        "max speed {fastest} m/s ≥ h/Δt = {} m/s",
        h / dt
    );
}
