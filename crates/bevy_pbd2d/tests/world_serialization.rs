//! Bodies survive Bevy's world serialization: a cloth saved as a `DynamicWorld` and written into
//! another world (with new entity ids) keeps its constraints, its root and the relationships
//! to it, and steps exactly as the original.

mod common;

use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;
use bevy::world_serialization::{DynamicWorld, DynamicWorldBuilder};
use bevy_pbd2d::prelude::*;
use common::*;

/// Saves the entities of the bodies (roots, particles, constraints, tethers, boundary samples)
/// of `app`'s world. `DynamicWorld` keeps them sorted by entity, not in the order they are
/// stored.
fn save_bodies(app: &App) -> DynamicWorld {
    let world = app.world();
    let registry = world.resource::<AppTypeRegistry>().read();
    let bodies = world.iter_entities().filter_map(|e| {
        let body = e.contains::<ParticleBody>()
            || e.contains::<Particle>()
            || e.contains::<DistanceConstraint>()
            || e.contains::<LongRangeAttachment>()
            || e.contains::<BoundaryParticle>();
        body.then_some(e.id())
    });
    DynamicWorldBuilder::from_world(world, &registry)
        .extract_entities(bodies.collect::<Vec<_>>().into_iter())
        .build()
}
#[test]
fn a_saved_cloth_loads_into_a_new_world_and_steps_identically() {
    let mut original = app(0.01);
    let cloth = spawn(&mut original, |c| {
        ClothBuilder {
            width: 12,
            height: 9,
            long_range_attachments: true,
            ..default()
        }
        .spawn(c)
        .unwrap()
    });
    run_steps(&mut original, 50);
    let saved = save_bodies(&original);
    assert_eq!(
        saved.entities.len(),
        1 + cloth.particles.len() + cloth.constraints.len() + cloth.tethers.len()
    );

    // A new world whose entity ids differ: something else was spawned first.
    let mut loaded = app(0.01);
    for _ in 0..37 {
        loaded.world_mut().spawn_empty();
    }
    let mut map = EntityHashMap::default();
    saved.write_to_world(loaded.world_mut(), &mut map).unwrap();
    let particles: Vec<Entity> = cloth.particles.iter().map(|e| map[e]).collect();
    assert!(
        particles
            .iter()
            .zip(&cloth.particles)
            .any(|(new, old)| new != old)
    );

    // The root keeps its name and grid, and lists the new particles in grid order and the new
    // constraints; each member points at the new root.
    let world = loaded.world_mut();
    let root = map[&cloth.root];
    assert_eq!(world.get::<Name>(root).unwrap().as_str(), "Cloth 12 × 9");
    assert!(world.get::<ClothGrid>(root).is_some());
    assert_eq!(
        &world.get::<BodyParticles>(root).unwrap()[..],
        &particles[..]
    );
    let constraints: Vec<Entity> = cloth
        .constraints
        .iter()
        .chain(&cloth.tethers)
        .map(|e| map[e])
        .collect();
    assert_eq!(
        &world.get::<BodyConstraints>(root).unwrap()[..],
        &constraints[..]
    );
    assert!(
        particles
            .iter()
            .all(|&p| world.get::<ParticleOf>(p) == Some(&ParticleOf(root)))
    );
    assert!(
        constraints
            .iter()
            .all(|&c| world.get::<ConstraintOf>(c) == Some(&ConstraintOf(root)))
    );

    // Every constraint and tether joins the new entities of the particles it joined.
    for &old in &cloth.constraints {
        let before = original.world().get::<DistanceConstraint>(old).unwrap();
        let after = world.get::<DistanceConstraint>(map[&old]).unwrap();
        assert_eq!(after.particles, before.particles.map(|p| map[&p]));
        assert_eq!(after.rest_length, before.rest_length);
    }
    for &old in &cloth.tethers {
        let before = original.world().get::<LongRangeAttachment>(old).unwrap();
        let after = world.get::<LongRangeAttachment>(map[&old]).unwrap();
        assert_eq!(
            (after.particle, after.anchor),
            (map[&before.particle], map[&before.anchor])
        );
    }
    assert_eq!(
        state_bits(&loaded, &particles),
        state_bits(&original, &cloth.particles)
    );

    run_steps(&mut original, 100);
    run_steps(&mut loaded, 100);
    assert_eq!(
        stats(&loaded).constraints,
        cloth.constraints.len(),
        "the loaded constraints are simulated"
    );
    assert_eq!(
        state_bits(&loaded, &particles),
        state_bits(&original, &cloth.particles)
    );
    // Still hanging from its pins: the constraints held it together.
    let spread = position(&loaded, particles[107]) - position(&loaded, particles[0]);
    assert!(spread.length() > 1.5, "{spread}");

    // The loaded root is the body: despawning it removes every loaded member.
    loaded.world_mut().despawn(root);
    let world = loaded.world();
    assert!(
        particles
            .iter()
            .chain(&constraints)
            .all(|&e| world.get_entity(e).is_err())
    );
}

#[test]
fn a_saved_dam_break_loads_into_a_new_world_and_flows_identically() {
    let mut original = app(0.005);
    let settings = FluidSettings::default();
    let dam = spawn(&mut original, |c| {
        DamBreakBuilder {
            width: 12,
            height: 12,
            ..default()
        }
        .spawn(c, &settings)
        .unwrap()
    });
    run_steps(&mut original, 40);
    let saved = save_bodies(&original);
    let mut loaded = app(0.005);
    loaded.world_mut().spawn_empty();
    let mut map = EntityHashMap::default();
    saved.write_to_world(loaded.world_mut(), &mut map).unwrap();
    let particles: Vec<Entity> = dam.fluid.iter().map(|e| map[e]).collect();
    run_steps(&mut original, 60);
    run_steps(&mut loaded, 60);
    assert_eq!(stats(&loaded).boundary_particles, dam.boundary.len());
    assert!(stats(&loaded).fluid_iterations > 1, "the density solve ran");
    assert_eq!(
        state_bits(&loaded, &particles),
        state_bits(&original, &dam.fluid)
    );
}

#[test]
fn a_whole_saved_world_carries_settings_but_not_the_solvers_caches() {
    let mut original = app(0.01);
    spawn(&mut original, |c| ClothBuilder::default().spawn(c).unwrap());
    original.world_mut().resource_mut::<Gravity>().0 = Vec2::new(1.0, -5.0);
    run_steps(&mut original, 3);
    let world = original.world();
    let saved = DynamicWorld::from_world(world);
    let names: Vec<&str> = saved
        .resources
        .iter()
        .map(|r| r.reflect_type_path())
        .collect();
    assert!(names.iter().any(|n| n.ends_with("::Gravity")), "{names:?}");
    for cache in [
        "SolverState",
        "ConstraintState",
        "DensityState",
        "XsphState",
    ] {
        assert!(
            !names.iter().any(|n| n.ends_with(&format!("::{cache}"))),
            "{cache} is rebuilt from the components, not saved: {names:?}"
        );
    }
}
