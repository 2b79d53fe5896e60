//! Bodies as entities: a builder's root, its relationships to its particles and constraints,
//! despawning a body, and editing one body's shared parameters through its root.

mod common;

use bevy::ecs::system::RunSystemOnce;
use bevy::prelude::*;
use bevy_pbd2d::prelude::*;
use bevy_pbd2d::scenes::Cloth;
use common::*;

/// A 12 × 9 cloth with long-range attachments, to the left.
fn left() -> ClothBuilder {
    ClothBuilder {
        width: 12,
        height: 9,
        long_range_attachments: true,
        origin: Vec2::new(-5.0, 0.0),
        ..default()
    }
}

/// A 10 × 8 compliant cloth with four pinned corners, to the right.
fn right() -> ClothBuilder {
    ClothBuilder {
        width: 10,
        height: 8,
        fixed: FixedCorners::Four,
        compliance: 1e-5,
        origin: Vec2::new(5.0, 0.0),
        ..default()
    }
}

fn spawn_cloth(app: &mut App, builder: ClothBuilder) -> Cloth {
    spawn(app, |c| builder.spawn(c).unwrap())
}

/// Every entity of `cloth`: root, particles, constraints, tethers.
fn entities(cloth: &Cloth) -> Vec<Entity> {
    let members = [&cloth.particles, &cloth.constraints, &cloth.tethers];
    core::iter::once(cloth.root)
        .chain(members.into_iter().flatten().copied())
        .collect()
}

/// Runs `f` with a [`ParticleBodies`] on the app's world.
fn with_bodies<R: 'static>(
    app: &mut App,
    mut f: impl FnMut(ParticleBodies) -> R + Send + Sync + 'static,
) -> R {
    app.world_mut()
        .run_system_once(move |bodies: ParticleBodies| f(bodies))
        .unwrap()
}

#[test]
fn a_builder_relates_its_particles_and_constraints_to_a_named_root() {
    let mut app = app(0.01);
    let cloth = spawn_cloth(&mut app, left());
    let world = app.world();
    let root = world.entity(cloth.root);
    assert_eq!(root.get::<Name>().unwrap().as_str(), "Cloth 12 × 9");
    assert!(root.contains::<ParticleBody>());
    assert_eq!(
        root.get::<ClothGrid>(),
        Some(&ClothGrid {
            width: 12,
            height: 9
        })
    );
    // The particles in grid order, the constraints then the tethers in spawn order.
    assert_eq!(
        &root.get::<BodyParticles>().unwrap()[..],
        &cloth.particles[..]
    );
    let constraints: Vec<Entity> = [&cloth.constraints, &cloth.tethers]
        .into_iter()
        .flatten()
        .copied()
        .collect();
    assert_eq!(
        &root.get::<BodyConstraints>().unwrap()[..],
        &constraints[..]
    );
    for &p in &cloth.particles {
        assert_eq!(world.get::<ParticleOf>(p), Some(&ParticleOf(cloth.root)));
    }
    for &c in &constraints {
        assert_eq!(
            world.get::<ConstraintOf>(c),
            Some(&ConstraintOf(cloth.root))
        );
    }

    let mut app2 = common::app(0.005);
    let settings = FluidSettings::default();
    let dam = spawn(&mut app2, |c| {
        DamBreakBuilder {
            width: 7,
            height: 5,
            ..default()
        }
        .spawn(c, &settings)
        .unwrap()
    });
    let root = app2.world().entity(dam.root);
    assert_eq!(root.get::<Name>().unwrap().as_str(), "Dam break 7 × 5");
    let members: Vec<Entity> = dam.fluid.iter().chain(&dam.boundary).copied().collect();
    assert_eq!(&root.get::<BodyParticles>().unwrap()[..], &members[..]);
}

#[test]
fn despawning_a_root_removes_its_body_and_the_other_steps_as_if_alone() {
    // Both cloths for 40 steps, then the left one's root is despawned, then 60 more steps.
    let mut both = app(0.01);
    let gone = spawn_cloth(&mut both, left());
    let kept = spawn_cloth(&mut both, right());
    run_steps(&mut both, 40);
    assert_eq!(stats(&both).particles, 12 * 9 + 10 * 8);
    both.world_mut().despawn(gone.root);
    // At once, before any step: no entity of the body is left, the other is whole.
    for entity in entities(&gone) {
        assert!(
            both.world().get_entity(entity).is_err(),
            "{entity} survived"
        );
    }
    for entity in entities(&kept) {
        assert!(
            both.world().get_entity(entity).is_ok(),
            "{entity} was despawned"
        );
    }
    run_steps(&mut both, 60);
    assert_eq!(stats(&both).particles, 10 * 8);
    assert_eq!(stats(&both).constraints, kept.constraints.len());

    // The kept cloth in a scene that never had the other.
    let mut alone = app(0.01);
    let only = spawn_cloth(&mut alone, right());
    run_steps(&mut alone, 100);
    assert_eq!(
        state_bits(&both, &kept.particles),
        state_bits(&alone, &only.particles)
    );
    // It moved: the comparison is of a simulated cloth, not of two resting ones.
    let sag = position(&alone, only.particles[4 * 10 + 5]) - right().position(4, 5);
    assert!(sag.y < -1e-3, "{sag}");
}

#[test]
fn a_compliance_or_mass_set_through_one_root_leaves_the_other_body_as_it_was() {
    let rigid = ClothBuilder {
        width: 10,
        height: 8,
        ..default()
    };
    let elsewhere = ClothBuilder {
        origin: Vec2::new(4.0, 0.0),
        ..rigid
    };
    let mut app = app(0.01);
    let soft = spawn_cloth(&mut app, rigid);
    let kept = spawn_cloth(&mut app, elsewhere);
    let root = soft.root;
    let changed = with_bodies(&mut app, move |mut bodies| {
        (
            bodies.set_compliance(root, 1e-3).unwrap(),
            bodies.set_particle_mass(root, 2.0).unwrap(),
        )
    });
    // Every distance constraint, every particle but the two pinned corners.
    assert_eq!(changed, (soft.constraints.len(), 10 * 8 - 2));
    let world = app.world();
    for &c in &soft.constraints {
        assert_eq!(world.get::<DistanceConstraint>(c).unwrap().compliance, 1e-3);
    }
    for &c in &kept.constraints {
        assert_eq!(world.get::<DistanceConstraint>(c).unwrap().compliance, 0.0);
    }
    let w = |e: Entity| world.get::<InverseMass>(e).unwrap().0;
    assert_eq!(w(soft.particles[0]), 0.0, "a pinned corner stays pinned");
    assert_eq!(w(soft.particles[9]), 0.0, "a pinned corner stays pinned");
    assert_eq!(w(soft.particles[15]), 0.5);
    assert!(kept.particles[1..9].iter().all(|&p| w(p) == 2.0));

    run_steps(&mut app, 100);
    let mut alone = common::app(0.01);
    let only = spawn_cloth(&mut alone, elsewhere);
    run_steps(&mut alone, 100);
    assert_eq!(
        state_bits(&app, &kept.particles),
        state_bits(&alone, &only.particles),
        "the other cloth steps as if alone"
    );
    // The compliant cloth hangs lower than the rigid one: its bottom middle particle, by more
    // than a centimetre.
    let bottom = 7 * 10 + 5;
    let drop = |app: &App, cloth: &Cloth, b: &ClothBuilder| {
        position(app, cloth.particles[bottom]).y - b.position(7, 5).y
    };
    let (soft_drop, rigid_drop) = (drop(&app, &soft, &rigid), drop(&app, &kept, &elsewhere));
    assert!(soft_drop < rigid_drop - 0.01, "{soft_drop} vs {rigid_drop}");
}

#[test]
fn a_bad_body_edit_is_refused_and_changes_nothing() {
    let mut app = app(0.01);
    let cloth = spawn_cloth(&mut app, left());
    let (root, particle) = (cloth.root, cloth.particles[5]);
    let errors = with_bodies(&mut app, move |mut bodies| {
        [
            bodies.set_compliance(root, f32::NAN).unwrap_err(),
            bodies.set_compliance(root, -1.0).unwrap_err(),
            bodies.set_particle_mass(root, 0.0).unwrap_err(),
            bodies.set_particle_mass(root, f32::INFINITY).unwrap_err(),
            bodies.set_particle_mass(particle, 1.0).unwrap_err(),
            bodies.particles(particle).unwrap_err(),
        ]
    });
    assert!(matches!(errors[0], PbdError::Negative { name, .. } if name.contains("compliance")));
    assert!(matches!(errors[1], PbdError::Negative { .. }));
    assert!(matches!(errors[2], PbdError::NotPositive { name, .. } if name.contains("mass")));
    assert!(matches!(errors[3], PbdError::NotPositive { .. }));
    assert_eq!(errors[4], PbdError::NotABody { entity: particle });
    assert_eq!(errors[5], PbdError::NotABody { entity: particle });
    let world = app.world();
    for &c in &cloth.constraints {
        assert_eq!(world.get::<DistanceConstraint>(c).unwrap().compliance, 0.0);
    }
    for &p in &cloth.particles {
        assert!([0.0, 2.0].contains(&world.get::<InverseMass>(p).unwrap().0));
    }
}

#[test]
fn a_despawned_particle_leaves_its_body_and_a_hole_in_the_grid() {
    let mut app = app(0.01);
    let cloth = spawn_cloth(&mut app, left());
    run_steps(&mut app, 5);
    let gone = cloth.particles[3 * 12 + 4];
    app.world_mut().despawn(gone);
    run_steps(&mut app, 5);
    let world = app.world_mut();
    let particles = world.get::<BodyParticles>(cloth.root).unwrap();
    assert_eq!(particles.len(), cloth.particles.len() - 1);
    assert!(!particles.contains(&gone));
    let grid = *world.get::<ClothGrid>(cloth.root).unwrap();
    let cells = world
        .run_system_once(
            move |bodies: Query<&BodyParticles>, cells: Query<&ClothParticle>| {
                grid.cells(bodies.get(cloth.root).unwrap(), &cells)
            },
        )
        .unwrap();
    let expected: Vec<Option<Entity>> = cloth
        .particles
        .iter()
        .map(|&p| (p != gone).then_some(p))
        .collect();
    assert_eq!(cells, expected);
    // Its constraints went with it (4 structural, 4 diagonal for an inner particle) and its
    // tethers (2 pinned corners), the rest are still simulated.
    let world = app.world();
    let constraints = world.get::<BodyConstraints>(cloth.root).unwrap();
    assert_eq!(
        constraints.len(),
        cloth.constraints.len() + cloth.tethers.len() - 8 - 2
    );
    assert_eq!(stats(&app).constraints, cloth.constraints.len() - 8);
}

#[test]
fn a_translated_cloth_moves_on_as_it_would_have_there() {
    let offset = Vec2::new(5.0, -3.0);
    let mut app = app(0.01);
    let moved = spawn_cloth(&mut app, left());
    let mut reference = common::app(0.01);
    let there = spawn_cloth(
        &mut reference,
        ClothBuilder {
            origin: left().origin + offset,
            ..left()
        },
    );
    run_steps(&mut app, 30);
    run_steps(&mut reference, 30);
    let root = moved.root;
    let count = with_bodies(&mut app, move |mut bodies| {
        bodies.translate(root, offset).unwrap()
    });
    assert_eq!(count, moved.particles.len());
    // Mid-swing: the translated cloth keeps its velocities and its shape; it then swings as
    // the cloth built there does (positions equal up to rounding of the offset).
    run_steps(&mut app, 70);
    run_steps(&mut reference, 70);
    let worst = moved
        .particles
        .iter()
        .zip(&there.particles)
        .map(|(&a, &b)| (position(&app, a) - position(&reference, b)).length())
        .fold(0.0, f32::max);
    assert!(worst < 1e-3, "{worst} m apart");
    assert!(stats(&app).max_relative_stretch < 0.05);
    let error = with_bodies(&mut app, move |mut bodies| {
        bodies
            .translate(root, Vec2::new(f32::NAN, 0.0))
            .unwrap_err()
    });
    assert!(matches!(error, PbdError::NotFinite { .. }));
}
