//! Components are the source of truth between steps: whatever changes them (or the solver's
//! arrays) between two steps takes effect at the next one, also when the arrays are not copied
//! in again because nothing changed.

mod common;

use bevy::prelude::*;
use bevy_pbd2d::fluid::{BoundaryDensityOnly, BoundaryIndex};
use bevy_pbd2d::particle::SolverState;
use bevy_pbd2d::prelude::*;
use common::*;

const DT: f32 = 0.01;
const G: Vec2 = Vec2::new(0.0, -9.81);

/// 100 free particles of w = 2 kg⁻¹ in a row, 1 m apart, stepped 5 times.
fn free_particles() -> (App, Vec<Entity>) {
    let mut app = app(DT);
    let particles = spawn(&mut app, |c| {
        (0..100)
            .map(|k| {
                let x = Vec2::new(k as f32, 0.0);
                c.spawn((Particle, Position(x), InverseMass(2.0))).id()
            })
            .collect::<Vec<_>>()
    });
    run_steps(&mut app, 5);
    (app, particles)
}

/// Symplectic Euler from (x, v): the state a free particle has one step later.
fn euler(x: Vec2, v: Vec2) -> (Vec2, Vec2) {
    let v = v + DT * G;
    (x + DT * v, v)
}

/// Runs one step and checks that `p` took it as a pinned particle: no gravity, it keeps its
/// velocity and moves by Δt v.
fn assert_steps_pinned(app: &mut App, p: Entity) {
    let (x, v) = (position(app, p), velocity(app, p));
    run_steps(app, 1);
    let (x1, v1) = (position(app, p), velocity(app, p));
    assert!((v1 - v).length() < 1e-4, "pinned: no gravity, {v1} vs {v}");
    assert!(
        (x1 - (x + DT * v)).length() < 1e-6,
        "{x1} vs {}",
        x + DT * v
    );
}

#[test]
fn position_velocity_and_inverse_mass_edits_between_steps_take_effect() {
    let (mut app, particles) = free_particles();
    let p = particles[77];
    let (x, v) = (Vec2::new(3.0, 4.0), Vec2::new(-1.0, 2.0));
    app.world_mut().get_mut::<Position>(p).unwrap().0 = x;
    run_steps(&mut app, 1);
    let before = velocity(&app, p);
    assert_eq!(
        (position(&app, p), velocity(&app, p)),
        euler(x, before - DT * G)
    );

    app.world_mut().get_mut::<Velocity>(p).unwrap().0 = v;
    let x = position(&app, p);
    run_steps(&mut app, 1);
    assert_eq!((position(&app, p), velocity(&app, p)), euler(x, v));

    // Pinned from now on: no gravity (it keeps its velocity, as pinned particles do).
    app.world_mut().get_mut::<InverseMass>(p).unwrap().0 = 0.0;
    assert_steps_pinned(&mut app, p);
    // Its neighbour in the arrays kept falling.
    let q = particles[78];
    let (xq, vq) = (position(&app, q), velocity(&app, q));
    run_steps(&mut app, 1);
    assert_eq!((position(&app, q), velocity(&app, q)), euler(xq, vq));
}

#[test]
fn steps_without_edits_continue_from_the_components() {
    let (mut app, particles) = free_particles();
    for _ in 0..20 {
        let (x, v) = (position(&app, particles[5]), velocity(&app, particles[5]));
        run_steps(&mut app, 1);
        assert_eq!(
            (position(&app, particles[5]), velocity(&app, particles[5])),
            euler(x, v)
        );
    }
}

#[test]
fn releasing_a_held_particle_gives_it_back_its_inverse_mass() {
    let (mut app, particles) = free_particles();
    let p = particles[40];
    let target = position(&app, p) + Vec2::new(0.0, 0.01);
    app.world_mut()
        .entity_mut(p)
        .insert(KinematicTarget(target));
    run_steps(&mut app, 10);
    assert!(
        (position(&app, p) - target).length() < 1e-6,
        "held at its target"
    );
    app.world_mut().entity_mut(p).remove::<KinematicTarget>();
    let (x, v) = (position(&app, p), velocity(&app, p));
    run_steps(&mut app, 1);
    assert_eq!(
        (position(&app, p), velocity(&app, p)),
        euler(x, v),
        "falls again"
    );
}

#[test]
fn writes_to_the_solver_arrays_between_steps_are_replaced_by_the_components() {
    let (mut app, particles) = free_particles();
    let p = particles[10];
    let (x, v) = (position(&app, p), velocity(&app, p));
    {
        let mut state = app.world_mut().resource_mut::<SolverState>();
        let row = state.entities.iter().position(|&e| e == p).unwrap();
        state.x[row] = Vec2::splat(1e3);
        state.v[row] = Vec2::splat(-1e3);
    }
    run_steps(&mut app, 1);
    assert_eq!((position(&app, p), velocity(&app, p)), euler(x, v));
}

/// A one-shot edit for the next step, made by a system inside the step.
#[derive(Resource, Default)]
struct Pending(Option<Entity>);

/// Pins `Pending`'s particle (a system in `PbdSchedule`, after the copy-in).
fn pin_inside_step(mut pending: ResMut<Pending>, mut q: Query<&mut InverseMass>) {
    if let Some(e) = pending.0.take() {
        q.get_mut(e).unwrap().0 = 0.0;
    }
}

/// Holds `Pending`'s particle 1 cm above where it is (through commands, inside the step).
fn hold_inside_step(mut pending: ResMut<Pending>, q: Query<&Position>, mut commands: Commands) {
    if let Some(e) = pending.0.take() {
        let x = q.get(e).unwrap().0;
        commands
            .entity(e)
            .insert(KinematicTarget(x + Vec2::new(0.0, 0.01)));
    }
}

/// Moves every kinematic target 1 mm to the right (a system inside the step).
fn animate(mut q: Query<&mut KinematicTarget>) {
    for mut t in &mut q {
        t.0.x += 0.001;
    }
}

#[test]
fn edits_by_systems_inside_the_step_take_effect_at_the_next_one() {
    // InverseMass, written after the copy-in: the next step pins the particle.
    let (mut app, particles) = free_particles();
    app.init_resource::<Pending>().add_systems(
        PbdSubstepSchedule,
        pin_inside_step.after(PbdSubstepSystems::Predict),
    );
    let p = particles[3];
    app.world_mut().resource_mut::<Pending>().0 = Some(p);
    run_steps(&mut app, 1);
    assert_steps_pinned(&mut app, p);

    // KinematicTarget inserted through commands inside the step.
    let (mut app, particles) = free_particles();
    app.init_resource::<Pending>().add_systems(
        PbdSubstepSchedule,
        hold_inside_step
            .after(PbdSubstepSystems::Predict)
            .before(PbdSubstepSystems::FindNeighbors),
    );
    let p = particles[3];
    app.world_mut().resource_mut::<Pending>().0 = Some(p);
    run_steps(&mut app, 1);
    let target = app.world().get::<KinematicTarget>(p).unwrap().0;
    run_steps(&mut app, 10);
    assert!(
        (position(&app, p) - target).length() < 1e-5,
        "held at its target"
    );

    // A target animated every step from inside the step is followed (one step behind).
    let (mut app, particles) = free_particles();
    let p = particles[3];
    let x = position(&app, p);
    app.world_mut().entity_mut(p).insert(KinematicTarget(x));
    app.add_systems(
        PbdSubstepSchedule,
        animate.after(PbdSubstepSystems::Predict),
    );
    run_steps(&mut app, 50);
    let target = app.world().get::<KinematicTarget>(p).unwrap().0;
    assert!((target.x - x.x - 0.05).abs() < 1e-4, "animated 50 × 1 mm");
    assert!(
        (position(&app, p) - target).length() < 1.5e-3,
        "follows its target"
    );
}

#[test]
fn a_particle_enabled_again_resumes_from_its_components() {
    let (mut app, particles) = free_particles();
    let p = particles[3];
    let x = position(&app, p);
    app.world_mut()
        .entity_mut(p)
        .insert(bevy::ecs::entity_disabling::Disabled);
    run_steps(&mut app, 20);
    app.world_mut()
        .entity_mut(p)
        .remove::<bevy::ecs::entity_disabling::Disabled>();
    assert_eq!(position(&app, p), x, "untouched while disabled");
    let v = velocity(&app, p);
    run_steps(&mut app, 1);
    assert_eq!((position(&app, p), velocity(&app, p)), euler(x, v));
}

/// What makes the skip pay: a step that follows a step without edits does not copy in. Shown
/// by a write to the arrays that bypasses change detection (not a supported way to edit: the
/// components are the source of truth), which the next step then starts from.
#[test]
fn copy_in_is_skipped_when_nothing_changed() {
    let (mut app, particles) = free_particles();
    let p = particles[3];
    {
        let mut state = app.world_mut().resource_mut::<SolverState>();
        let state = state.bypass_change_detection();
        let row = state.entities.iter().position(|&e| e == p).unwrap();
        state.x[row] = Vec2::splat(1e3);
    }
    run_steps(&mut app, 1);
    assert!(
        position(&app, p).x > 900.0,
        "copied in: {}",
        position(&app, p)
    );
}

/// A particle spawned between steps rebuilds the rows (its own is new, the others may move):
/// every particle's step starts from its components.
#[test]
fn a_particle_spawned_between_steps_starts_from_its_components() {
    let (mut app, particles) = free_particles();
    let (x, v) = (Vec2::new(-5.0, 3.0), Vec2::new(1.0, 0.5));
    let new = spawn(&mut app, |c| {
        c.spawn((Particle, Position(x), Velocity(v), InverseMass(2.0)))
            .id()
    });
    let old = particles[60];
    let (xo, vo) = (position(&app, old), velocity(&app, old));
    run_steps(&mut app, 1);
    assert_eq!((position(&app, new), velocity(&app, new)), euler(x, v));
    assert_eq!((position(&app, old), velocity(&app, old)), euler(xo, vo));
}

/// Boundary samples that only move keep their rows: their positions are written in place and
/// Ψ recomputed, the same bits as a rebuild. A row of samples 2r apart (h = 4r; the last five
/// without contact discs) where one moves 1 m away: it is alone, Ψ = ρ0 / W(0), and its
/// former neighbours, now ends of rows, have Ψ = ρ0 / (1.25 σ) (σ = 40 / (7π h²): W(0) = σ,
/// W(h/2) = σ/4). A sample far from it keeps its row and its Ψ untouched; a sample spawned
/// in a step where another moves takes a new row, and one that loses its Ψ component leaves.
#[test]
fn samples_that_only_move_keep_their_rows_and_get_their_psi() {
    let mut app = app(DT);
    let samples = spawn(&mut app, |c| {
        (0..21)
            .map(|k| {
                let at = Vec2::new(0.05 * k as f32, 0.0);
                let mut sample = c.spawn((BoundaryParticle, Position(at)));
                if k >= 16 {
                    sample.insert(BoundaryDensityOnly);
                }
                sample.id()
            })
            .collect::<Vec<_>>()
    });
    spawn(&mut app, |c| {
        c.spawn((FluidParticle, Position(Vec2::new(0.5, 2.0))));
    });
    run_steps(&mut app, 1);
    let moved = samples[10];
    app.world_mut().get_mut::<Position>(moved).unwrap().0 = Vec2::new(0.5, 1.0);
    let before = app.world_mut().change_tick();
    run_steps(&mut app, 1);
    // Untouched: the far sample's row and Ψ (a rebuild writes both for every sample).
    let written_since = |app: &mut App, e: Entity, tick| {
        let now = app.world_mut().change_tick();
        let entity = app.world().entity(e);
        let index = entity.get_ref::<BoundaryIndex>().unwrap().last_changed();
        let psi = entity.get_ref::<PseudoMass>().unwrap().last_changed();
        [index, psi].map(|t| t.is_newer_than(tick, now))
    };
    assert_eq!(written_since(&mut app, samples[0], before), [false, false]);
    let arrays = |app: &App| {
        let s = solver(app);
        let bits = |v: &[Vec2]| v.iter().map(|p| p.to_array().map(f32::to_bits)).collect();
        let psi: Vec<u32> = s.boundary_psi.iter().map(|p| p.to_bits()).collect();
        let rows = (s.boundary_entities.clone(), s.boundary_contact_count);
        let x: Vec<[u32; 2]> = bits(&s.boundary_x);
        (rows, x, psi)
    };
    let moved_only = arrays(&app);
    assert_eq!(moved_only.0.1, 16, "rows with contact discs");
    let psi = |app: &App, e: Entity| app.world().get::<PseudoMass>(e).unwrap().0;
    let settings = *app.world().resource::<FluidSettings>();
    let (h, rho0) = (settings.support_radius, settings.rest_density);
    let sigma = 40.0 / (7.0 * core::f32::consts::PI * h * h);
    let close = |got: f32, want: f32| (got - want).abs() <= 1e-4 * want;
    let alone = psi(&app, moved);
    assert!(close(alone, rho0 / sigma), "{alone}");
    for end in [samples[9], samples[11]] {
        let got = psi(&app, end);
        assert!(close(got, rho0 / (1.25 * sigma)), "{got}");
    }
    // Every component holds its row's Ψ.
    let s = solver(&app);
    for (k, &e) in s.boundary_entities.iter().enumerate() {
        let (got, row) = (psi(&app, e).to_bits(), s.boundary_psi[k].to_bits());
        assert_eq!(got, row, "row {k}");
    }
    // A rebuild of the rows (the settings changed) gives the same bits, and writes them.
    app.world_mut()
        .resource_mut::<FluidSettings>()
        .set_changed();
    let before = app.world_mut().change_tick();
    run_steps(&mut app, 1);
    assert_eq!(written_since(&mut app, samples[0], before), [true, true]);
    assert_eq!(arrays(&app), moved_only);
    // A move and a spawn in one step: the new sample takes the last row.
    app.world_mut().get_mut::<Position>(moved).unwrap().0 = Vec2::new(0.5, 0.0);
    let new = spawn(&mut app, |c| {
        c.spawn((BoundaryParticle, Position(Vec2::new(1.05, 0.0))))
            .id()
    });
    run_steps(&mut app, 1);
    let s = solver(&app);
    assert_eq!(s.boundary_entities.len(), 22);
    assert_eq!(
        s.boundary_entities[16], new,
        "the last row with a contact disc"
    );
    let back = psi(&app, moved);
    assert!(close(back, rho0 / (1.5 * sigma)), "{back}");
    // A sample that loses a component its row is read from leaves the rows at the next step,
    // though nothing moved.
    app.world_mut()
        .entity_mut(samples[0])
        .remove::<PseudoMass>();
    run_steps(&mut app, 1);
    let rows = &solver(&app).boundary_entities;
    assert_eq!(rows.len(), 21);
    assert!(!rows.contains(&samples[0]));
}
