//! Two-way coupling with avian2d (issue 18, item 3; feature `avian`): avian colliders are
//! obstacles, dynamic bodies feel the particles, momentum is exchanged exactly, a light box
//! floats at the depth Archimedes predicts and a heavy one sinks.
#![cfg(feature = "avian")]

mod common;

use core::time::Duration;

use avian2d::prelude::{
    CoefficientCombine, Collider, ColliderDensity, ComputedMass, Friction, LinearVelocity,
    PhysicsPlugins, PhysicsSystems, RevoluteJoint, RigidBody,
};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
// Both preludes export a `Position` and a `Gravity`: an explicit import names the one meant.
use bevy_pbd2d::collider::ColliderSamples;
use bevy_pbd2d::particle::SolverState;
use bevy_pbd2d::prelude::{Gravity, Position, *};

const DT: f32 = 1.0 / 120.0;

/// Our plugins and avian's, one fixed step of `DT` per update, gravity `g` in both: our step
/// in `FixedUpdate`, before avian's in `FixedPostUpdate` (the defaults).
fn app(g: Vec2) -> App {
    app_with(g, PbdPlugins::default())
}

/// [`app`] with our plugins as given (e.g. stepping in another schedule).
fn app_with(g: Vec2, ours: PbdPlugins) -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        TransformPlugin,
        ours,
        PhysicsPlugins::default(),
    ));
    set_time_step(&mut app.world_mut().resource_mut::<Time<Fixed>>(), DT).unwrap();
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        DT,
    )));
    app.insert_resource(Gravity(g));
    app.insert_resource(avian2d::prelude::Gravity(g));
    app.finish();
    app.cleanup();
    app
}

fn run(app: &mut App, steps: u32) {
    for _ in 0..steps {
        app.update();
    }
}

/// Total momentum of the fluid particles (each of its own mass, 1/w) and the body (kg·m/s).
fn momentum(app: &App, fluid: &[Entity], body: Entity) -> Vec2 {
    let world = app.world();
    let particles: Vec2 = fluid
        .iter()
        .map(|&e| world.get::<Velocity>(e).unwrap().0 / world.get::<InverseMass>(e).unwrap().0)
        .sum();
    let body_mass = app.world().get::<ComputedMass>(body).unwrap().value();
    particles + app.world().get::<LinearVelocity>(body).unwrap().0 * body_mass
}

#[test]
fn a_jet_hitting_a_body_conserves_the_total_momentum() {
    jet_momentum(app(Vec2::ZERO), None, Arrival::Dynamic);
}

/// The same with a jet of oil (ρ0 500: particles of half the water's mass): the body receives
/// each particle's own momentum change, not the reference particle's.
#[test]
fn an_oil_jet_hitting_a_body_conserves_the_total_momentum() {
    jet_momentum(app(Vec2::ZERO), Some(FluidPhase::OIL), Arrival::Dynamic);
}

/// The order is the game's: our step after avian's, both in `FixedPostUpdate`, exchanges
/// momentum as exactly (the bodies' impulses wait for avian's next step).
#[test]
fn the_exchange_conserves_momentum_with_our_step_after_avians() {
    let mut app = app_with(Vec2::ZERO, PbdPlugins::new(FixedPostUpdate));
    app.configure_sets(
        FixedPostUpdate,
        PbdSystems::StepSimulation.after(PhysicsSystems::Last),
    );
    jet_momentum(app, None, Arrival::Dynamic);
}

/// The same with the game preset (0.3 % tolerance, Chebyshev-accelerated: the multipliers are
/// extrapolated, so every pair's correction stays equal and opposite and the box gets the push
/// the fluid took).
#[test]
fn a_jet_hitting_a_body_conserves_the_total_momentum_with_the_game_preset() {
    let mut app = app(Vec2::ZERO);
    app.insert_resource(FluidSettings::game());
    jet_momentum(app, None, Arrival::Dynamic);
}

/// The same with a box that is static when the fluid's boundary rows are built and made
/// dynamic before the jet arrives, while another dynamic box, far away, has the pushes tracked
/// from the start: the box's samples keep their rows, and the fluid's push on them is still
/// handed to the body (the table of which body each row belongs to is rebuilt when a
/// collider's body changes, not only when the rows do).
#[test]
fn a_jet_hitting_a_body_made_dynamic_after_its_samples_conserves_the_total_momentum() {
    jet_momentum(app(Vec2::ZERO), None, Arrival::Released);
}

/// The same with the box spawned after the table was built for the other box's samples: the
/// new samples' rows get their body too.
#[test]
fn a_jet_hitting_a_body_spawned_later_conserves_the_total_momentum() {
    jet_momentum(app(Vec2::ZERO), None, Arrival::Spawned);
}

/// The same with a static collider whose samples take the rows before the box's, removed after
/// the table was built: the box's samples move to other rows, and keep their body.
#[test]
fn a_jet_hitting_a_body_whose_samples_changed_rows_conserves_the_total_momentum() {
    jet_momentum(app(Vec2::ZERO), None, Arrival::Shifted);
}

/// The first and last boundary row of `collider`'s samples.
fn sample_rows(app: &App, collider: Entity) -> (usize, usize) {
    let rows = &app.world().resource::<SolverState>().boundary_entities;
    let samples = app.world().get::<ColliderSamples>(collider).unwrap();
    let at = samples
        .iter()
        .map(|e| rows.iter().position(|r| r == &e).unwrap());
    at.fold((usize::MAX, 0), |(lo, hi), k| (lo.min(k), hi.max(k)))
}

/// How the box the jet hits comes to be there (see [`jet_momentum`]).
#[derive(Clone, Copy, PartialEq)]
enum Arrival {
    /// Dynamic from the start.
    Dynamic,
    /// Static for the first 2 steps, then dynamic; a second dynamic box 3 m away from the
    /// start.
    Released,
    /// Spawned dynamic after 2 steps; a second dynamic box 3 m away from the start.
    Spawned,
    /// Dynamic from the start; a static box 3 m away whose samples take the rows before its
    /// own, despawned after 2 steps.
    Shifted,
}

/// A jet of 32 particles (of `phase`, else the fluid's own) at 2 m/s hits a free 0.4 m box
/// (gravity off): the total momentum of fluid and box is kept within 1 %, and the box moves.
/// `arrival`: how the box comes to be there.
fn jet_momentum(mut app: App, phase: Option<FluidPhase>, arrival: Arrival) {
    let kind = match arrival {
        Arrival::Released => RigidBody::Static,
        _ => RigidBody::Dynamic,
    };
    let box_ = (
        kind,
        Collider::rectangle(0.4, 0.4),
        ColliderDensity(500.0),
        Transform::from_xyz(1.0, 0.2, 0.0),
    );
    let mut body = match arrival {
        Arrival::Spawned => None,
        _ => Some(app.world_mut().spawn(box_.clone()).id()),
    };
    // The second box, 3 m away: dynamic (the pushes tracked from the start), or static with
    // its samples in the rows before the box's (spawned after it).
    let far = (arrival != Arrival::Dynamic).then(|| {
        let kind = match arrival {
            Arrival::Shifted => RigidBody::Static,
            _ => RigidBody::Dynamic,
        };
        let at = Transform::from_xyz(-3.0, 3.0, 0.0);
        app.world_mut()
            .spawn((kind, Collider::rectangle(0.2, 0.2), at))
            .id()
    });
    let jet = common::fluid_block(&mut app, Vec2::new(-0.5, 0.1), (8, 4), Vec2::new(2.0, 0.0));
    if let Some(phase) = phase {
        for &e in &jet {
            app.world_mut().entity_mut(e).insert(phase);
        }
    }
    run(&mut app, 2);
    let mut shifted_from = None;
    match (arrival, body) {
        (Arrival::Released, Some(body)) => {
            app.world_mut().entity_mut(body).insert(RigidBody::Dynamic);
        }
        (Arrival::Spawned, _) => body = Some(app.world_mut().spawn(box_).id()),
        (Arrival::Shifted, Some(body)) => {
            shifted_from = Some(sample_rows(&app, body));
            app.world_mut().entity_mut(far.unwrap()).despawn();
        }
        _ => {}
    }
    if arrival != Arrival::Dynamic {
        run(&mut app, 2);
    }
    let body = body.unwrap();
    if let Some(from) = shifted_from {
        let to = sample_rows(&app, body);
        assert_ne!(from, to, "the box's samples kept their rows");
    }
    let before = momentum(&app, &jet, body);
    let mut hit = false;
    for _ in 0..120 {
        run(&mut app, 1);
        hit |= app.world().resource::<PbdStats>().collider_contacts > 0;
    }
    let after = momentum(&app, &jet, body);
    let body_v = app.world().get::<LinearVelocity>(body).unwrap().0;
    println!("momentum before {before}, after {after}; body velocity {body_v}");
    assert!(hit, "the jet never reached the body");
    assert!(body_v.x > 0.05, "the body did not move: {body_v}");
    assert!(
        (after - before).length() < 0.01 * before.length(),
        "momentum {before} -> {after}"
    );
}

/// A square box of side 0.3 m and density `density` (kg/m²) dropped into a tank of water (an
/// avian static polyline: an obstacle for the particles and the box alike) at rest: the
/// depth of its bottom below the water's surface after 6 s, over its side, and the height of
/// its bottom above the tank's floor (m).
fn submerged_fraction(density: f32) -> (f32, f32) {
    submerged_fraction_with(density, FluidSettings::default())
}

/// [`submerged_fraction`] with the fluid's `settings`.
fn submerged_fraction_with(density: f32, settings: FluidSettings) -> (f32, f32) {
    let mut app = app(Vec2::new(0.0, -9.81));
    app.insert_resource(settings);
    let r = settings.particle_radius;
    // A U-shaped tank of inner width 1.6 m, water 31 × 12 particles (about 0.6 m deep).
    let (width, nx, ny) = (1.6, 31, 12);
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::polyline(
            vec![
                Vec2::new(0.0, 1.5),
                Vec2::ZERO,
                Vec2::new(width, 0.0),
                Vec2::new(width, 1.5),
            ],
            None,
        ),
        Transform::default(),
    ));
    let water = common::fluid_block(&mut app, Vec2::splat(2.0 * r), (nx, ny), Vec2::ZERO);
    // Settle the water first.
    run(&mut app, 240);
    let side = 0.3;
    let body = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::rectangle(side, side),
            ColliderDensity(density),
            Transform::from_xyz(0.5 * width, 0.75 + 0.5 * side, 0.0),
        ))
        .id();
    run(&mut app, 720);
    for &e in &water {
        let p = app.world().get::<Position>(e).unwrap().0;
        assert!(
            p.x > 0.0 && p.x < width && p.y > 0.0,
            "a particle left the tank: {p}"
        );
    }
    // The surface: the highest particles near the walls (away from the box), plus r.
    let mut near_walls: Vec<f32> = water
        .iter()
        .map(|&e| app.world().get::<Position>(e).unwrap().0)
        .filter(|p| p.x < 0.3 || p.x > width - 0.3)
        .map(|p| p.y)
        .collect();
    near_walls.sort_by(f32::total_cmp);
    let surface = near_walls[near_walls.len() - 3] + r;
    let bottom = app.world().get::<Transform>(body).unwrap().translation.y - 0.5 * side;
    let fraction = (surface - bottom) / side;
    println!("density {density}: surface {surface}, box bottom {bottom}, submerged {fraction}");
    (fraction, bottom)
}

/// Archimedes: a box of density ρ < ρ0 floats with the fraction ρ/ρ0 of its height under the
/// surface (within 10 % of its height; measured 22.1, 43.7 and 67.1 % for 0.25, 0.5 and
/// 0.75 ρ0), and one of 2 ρ0 sinks through the water to the floor. Without the samples'
/// pressure on the body (contacts alone) the 0.5 ρ0 box floated 65 % under; with samples on
/// its surface rather than r inside, 31 %.
#[test]
fn a_box_floats_at_the_depth_archimedes_predicts_and_a_heavy_one_sinks() {
    let rest = FluidSettings::default().rest_density;
    for ratio in [0.25, 0.5, 0.75] {
        let (fraction, _) = submerged_fraction(ratio * rest);
        assert!(
            (fraction - ratio).abs() < 0.1,
            "{ratio} ρ0: submerged {fraction}, Archimedes {ratio}"
        );
    }
    // The water is 0.6 m deep: a sunk box rests on the floor, on at most a layer or two of
    // particles (2r = 5 cm each) trapped under it.
    let (heavy, bottom) = submerged_fraction(2.0 * rest);
    assert!(
        bottom < 0.1,
        "2 ρ0: its bottom is {bottom} m above the floor ({heavy} under)"
    );
}

/// Archimedes with the game preset (0.3 % tolerance: a looser solve pushes the box less
/// exactly): a box of 0.5 ρ0 floats half under (within 10 % of its height).
#[test]
fn a_box_floats_at_archimedes_depth_with_the_game_preset() {
    let rest = FluidSettings::default().rest_density;
    let (fraction, _) = submerged_fraction_with(0.5 * rest, FluidSettings::game());
    assert!(
        (fraction - 0.5).abs() < 0.1,
        "0.5 ρ0: submerged {fraction}, Archimedes 0.5"
    );
}

/// A door (0.06 × 0.5 m, 0.5 ρ0) hinged at its top to a static anchor by an avian
/// `RevoluteJoint`, hanging in the way of a water column that collapses toward it: the
/// water swings it open (its bottom moves downstream and up), and without water it hangs.
fn door_swing(with_water: bool) -> f32 {
    let mut app = app(Vec2::new(0.0, -9.81));
    let r = app.world().resource::<FluidSettings>().particle_radius;
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::polyline(
            vec![
                Vec2::new(0.0, 1.5),
                Vec2::ZERO,
                Vec2::new(3.0, 0.0),
                Vec2::new(3.0, 1.5),
            ],
            None,
        ),
        Transform::default(),
    ));
    let hinge = Vec2::new(1.0, 0.6);
    let anchor = app
        .world_mut()
        .spawn((
            RigidBody::Static,
            Transform::from_translation(hinge.extend(0.0)),
        ))
        .id();
    let door = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::rectangle(0.06, 0.5),
            ColliderDensity(500.0),
            Transform::from_xyz(hinge.x, hinge.y - 0.25, 0.0),
        ))
        .id();
    app.world_mut()
        .spawn(RevoluteJoint::new(anchor, door).with_local_anchor2(Vec2::new(0.0, 0.25)));
    if with_water {
        common::fluid_block(&mut app, Vec2::splat(2.0 * r), (12, 16), Vec2::ZERO);
    }
    let mut widest = 0.0f32;
    for _ in 0..240 {
        run(&mut app, 1);
        let t = app.world().get::<Transform>(door).unwrap();
        widest = widest.max(t.rotation.to_euler(EulerRot::XYZ).2);
        let bottom =
            t.translation.truncate() + (t.rotation * Vec3::new(0.0, -0.25, 0.0)).truncate();
        assert!(bottom.is_finite());
    }
    println!("water {with_water}: widest opening {widest} rad");
    widest
}

#[test]
fn water_pushes_a_hinged_door_open() {
    // Counter-clockwise about the hinge: the door's bottom swings downstream (+x).
    let open = door_swing(true);
    assert!(open > 0.3, "the water opened the door by {open} rad only");
    let still = door_swing(false);
    assert!(
        still.abs() < 0.01,
        "the door swung by {still} rad without water"
    );
}

/// A rope of 19 particles (0.19 kg) sliding at 1 m/s onto a box (1.6 kg) that stands on a
/// frictionless floor, with μ of the box's avian `Friction` between them: the box's velocity
/// after 2 s, and the rope's (its mean).
fn rope_drag(friction: f32) -> (f32, f32) {
    let mut app = app(Vec2::new(0.0, -9.81));
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::segment(Vec2::new(-5.0, 0.0), Vec2::new(5.0, 0.0)),
        Friction::ZERO.with_combine_rule(CoefficientCombine::Min),
        Transform::default(),
    ));
    let side = 0.4;
    let body = app
        .world_mut()
        .spawn((
            RigidBody::Dynamic,
            Collider::rectangle(side, side),
            ColliderDensity(10.0),
            Friction::new(friction),
            Transform::from_xyz(0.0, 0.5 * side, 0.0),
        ))
        .id();
    let radius = ParticleRadius::new(0.01).unwrap();
    let (h, spacing) = (side + radius.get(), 0.02);
    let w = InverseMass::from_mass(0.01).unwrap();
    let world = app.world_mut();
    let rope: Vec<Entity> = (0..19)
        .map(|k| Vec2::new(-0.18 + spacing * k as f32, h))
        .map(|p| {
            let moving = Velocity(Vec2::new(-1.0, 0.0));
            world.spawn((Particle, Position(p), moving, w, radius)).id()
        })
        .collect();
    for pair in rope.windows(2) {
        world.spawn(DistanceConstraint {
            particles: [pair[0], pair[1]],
            rest_length: spacing,
            compliance: 0.0,
        });
    }
    world.flush();
    run(&mut app, 240);
    let v = app.world().get::<LinearVelocity>(body).unwrap().0;
    let rope_v = rope
        .iter()
        .map(|&e| app.world().get::<Velocity>(e).unwrap().0)
        .sum::<Vec2>()
        / rope.len() as f32;
    println!("μ {friction}: box {v}, rope {rope_v} m/s");
    (v.x, rope_v.x)
}

/// Friction between particles and a body drags the body: a rope sliding onto a box on a
/// frictionless floor ends moving with it at the common velocity that conserves their
/// horizontal momentum, m v0 / (m + M) = −0.106 m/s (within 5 %); with μ = 0 the box stays
/// and the rope slides on at 1 m/s.
#[test]
fn a_rope_sliding_onto_a_box_drags_it_by_friction() {
    let (box_mass, rope_mass) = (10.0 * 0.4 * 0.4, 0.19);
    let common = -rope_mass / (rope_mass + box_mass);
    let (v, rope) = rope_drag(0.9);
    assert!(
        (v - common).abs() < 0.05 * common.abs(),
        "box {v}, {common}"
    );
    assert!(
        (rope - common).abs() < 0.05 * common.abs(),
        "rope {rope}, {common}"
    );
    let (v, rope) = rope_drag(0.0);
    assert!(
        v.abs() < 0.005 && (rope + 1.0).abs() < 0.01,
        "μ = 0: box {v}, rope {rope}"
    );
}

/// An avian half-space, the usual ground, is a box 40 km wide: its samples are placed only
/// near the fluid (within `SAMPLED_MARGIN` of its bounds), not 2.4 million along its whole
/// outline, and the water rests on it.
#[test]
fn a_half_space_ground_is_sampled_only_near_the_fluid() {
    let mut app = app(Vec2::new(0.0, -9.81));
    let r = app.world().resource::<FluidSettings>().particle_radius;
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::half_space(Vec2::Y),
        Transform::default(),
    ));
    let water = common::fluid_block(&mut app, Vec2::new(0.0, 2.0 * r), (10, 10), Vec2::ZERO);
    run(&mut app, 240);
    let samples = app
        .world_mut()
        .query_filtered::<(), With<BoundaryParticle>>()
        .iter(app.world())
        .count();
    // The fluid spreads over a few metres; the ground is sampled 2 m beyond, 2r apart.
    assert!(samples > 50 && samples < 1000, "{samples} samples");
    for &e in &water {
        let p = app.world().get::<Position>(e).unwrap().0;
        assert!(p.y > 0.5 * r && p.y < 1.0, "a particle at {p}");
    }
}

/// Issue 37 with an avian collider: a 10 × 5 block of fluid placed with its bottom row on the
/// top face of a static 10 m × 0.2 m box, at Δt = 1/120 s and 1 ms. Largest kinetic energy
/// above what gravity could have given, Σ m g·(highest y since spawn − y) (J), and the
/// fastest particle after 1 s (m/s).
fn placed_on_an_avian_box(g: Vec2, dt: f32) -> (f32, f32) {
    let mut app = app(g);
    set_time_step(&mut app.world_mut().resource_mut::<Time<Fixed>>(), dt).unwrap();
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        dt,
    )));
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::rectangle(10.0, 0.2),
        Transform::from_xyz(0.0, -0.1, 0.0),
    ));
    let water = common::fluid_block(&mut app, Vec2::new(-0.25, 0.0), (10, 5), Vec2::ZERO);
    let m = app.world().resource::<FluidSettings>().particle_mass();
    let position = |app: &App, e| app.world().get::<Position>(e).unwrap().0;
    let mut highest: Vec<f32> = water.iter().map(|&e| position(&app, e).y).collect();
    let mut excess = f32::NEG_INFINITY;
    let mut fastest = 0.0;
    for _ in 0..(1.0 / dt).round() as u32 {
        run(&mut app, 1);
        let (mut kinetic, mut bound) = (0.0, 0.0);
        fastest = 0.0f32;
        for (k, &e) in water.iter().enumerate() {
            let (y, v) = (
                position(&app, e).y,
                app.world().get::<Velocity>(e).unwrap().0,
            );
            highest[k] = highest[k].max(y);
            bound += m * g.length() * (highest[k] - y);
            kinetic += 0.5 * m * v.length_squared();
            fastest = fastest.max(v.length());
        }
        excess = excess.max(kinetic - bound);
    }
    (excess, fastest)
}

/// Fluid placed on an avian collider's surface is moved out and not launched: without
/// gravity it keeps its kinetic energy within 1 mJ of zero and is at rest after 1 s; with
/// gravity it gains at most 0.2 J per particle more than gravity could have given (the
/// sample walls' bound in tests/fluid_on_walls.rs).
#[test]
fn fluid_placed_on_an_avian_collider_is_not_launched() {
    for dt in [1.0 / 120.0, 0.001] {
        let (excess, fastest) = placed_on_an_avian_box(Vec2::ZERO, dt);
        assert!(excess <= 1e-3, "Δt {dt}, no gravity: KE {excess} J");
        assert!(fastest < 1e-3, "Δt {dt}, no gravity: {fastest} m/s at 1 s");
        let (excess, _) = placed_on_an_avian_box(Vec2::new(0.0, -9.81), dt);
        assert!(excess <= 0.2 * 50.0, "Δt {dt}: KE − bound {excess} J");
    }
}
