mod common;
use bevy::prelude::*;
use bevy_pbd2d::prelude::*;
use common::*;
#[test]
fn probe_row_trace() {
    let s = FluidSettings::default();
    let r = s.particle_radius;
    let w = InverseMass::from_mass(s.particle_mass()).unwrap();
    let mut app = app(0.005);
    let b = DamBreakBuilder::default();
    spawn(&mut app, |c| {
        for p in b.boundary_positions(&s) {
            c.spawn((BoundaryParticle, Position(p)));
        }
    });
    let samples = b.boundary_positions(&s);
    let floor: Vec<Vec2> = (35..56).map(|j| samples[2 * j]).collect();
    let es: Vec<Entity> = spawn(&mut app, |c| {
        floor
            .iter()
            .map(|&p| c.spawn((FluidParticle, Position(p), w)).id())
            .collect()
    });
    for step in 0..400 {
        run_steps(&mut app, 1);
        let (k, hi) = es
            .iter()
            .enumerate()
            .map(|(k, &e)| (k, position(&app, e).y))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap();
        let st = stats(&app);
        if step < 30 || step % 20 == 0 {
            eprintln!(
                "{step}: highest {k} at {} r v {} emb {} contacts {}",
                hi / r,
                velocity(&app, es[k]),
                st.embedded_particles,
                st.boundary_contacts
            );
        }
    }
}
