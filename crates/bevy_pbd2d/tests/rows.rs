//! The solver's rows: kept in order across rebuilds, and never shared by two entities
//! (disabled, re-enabled and former particles).

mod common;

use bevy::ecs::entity_disabling::Disabled;
use bevy::prelude::*;
use bevy_pbd2d::constraints::ConstraintState;
use bevy_pbd2d::particle::{SolverIndex, SolverState};
use bevy_pbd2d::prelude::*;
use common::*;

fn cloth(app: &mut App) -> bevy_pbd2d::scenes::Cloth {
    spawn(app, |c| {
        ClothBuilder {
            width: 8,
            height: 6,
            ..default()
        }
        .spawn(c)
        .unwrap()
    })
}

/// Every particle with a row has a distinct one, and the rows map back to it.
fn assert_rows_consistent(app: &mut App) {
    let world = app.world_mut();
    let mut q = world.query::<(Entity, &SolverIndex)>();
    let pairs: Vec<(Entity, u32)> = q.iter(world).map(|(e, i)| (e, i.row())).collect();
    let state = world.resource::<SolverState>();
    for (e, row) in pairs {
        if row != u32::MAX {
            assert_eq!(
                state.entities.get(row as usize),
                Some(&e),
                "{e} claims row {row}"
            );
        }
    }
}

#[test]
fn rows_keep_their_order_when_a_particle_is_despawned() {
    let mut app = app(0.01);
    let cloth = cloth(&mut app);
    run_steps(&mut app, 1);
    let before = solver(&app).entities.clone();
    let constraints_before = app.world().resource::<ConstraintState>().entities.clone();
    // A particle in the middle: the ECS moves the last one of its table into its place.
    let gone = cloth.particles[20];
    app.world_mut().entity_mut(gone).despawn();
    run_steps(&mut app, 1);
    let expected: Vec<Entity> = before.into_iter().filter(|&e| e != gone).collect();
    assert_eq!(solver(&app).entities, expected);
    // The constraints that joined it are gone; the others keep their order.
    let after = &app.world().resource::<ConstraintState>().entities;
    let kept: Vec<Entity> = constraints_before
        .iter()
        .copied()
        .filter(|e| after.contains(e))
        .collect();
    assert!(kept.len() < constraints_before.len());
    assert_eq!(
        after.iter().copied().filter(|e| kept.contains(e)).count(),
        kept.len()
    );
    assert_rows_consistent(&mut app);
}

#[test]
fn a_disabled_particle_leaves_the_rows_keeps_its_constraints_and_comes_back() {
    let mut app = app(0.01);
    let cloth = cloth(&mut app);
    run_steps(&mut app, 5);
    let constraints = stats(&app).constraints;
    let probe = cloth.particles[44];
    app.world_mut().entity_mut(probe).insert(Disabled);
    let held = app.world().get::<Position>(probe).unwrap().0;
    run_steps(&mut app, 20);
    assert_eq!(solver(&app).len(), 47, "the disabled particle has no row");
    assert_eq!(
        app.world().get::<Position>(probe).unwrap().0,
        held,
        "not simulated"
    );
    assert!(
        stats(&app).constraints < constraints,
        "its constraints wait"
    );
    // Its constraint entities still exist.
    let world = app.world_mut();
    let joined = world
        .query::<&DistanceConstraint>()
        .iter(world)
        .filter(|c| c.particles.contains(&probe))
        .count();
    assert!(joined >= 2, "its constraints were kept: {joined}");
    assert_rows_consistent(&mut app);

    // Another particle leaves while it is disabled, then it comes back.
    let world = app.world_mut();
    let corner = cloth.particles[3];
    let with_corner = world
        .query::<&DistanceConstraint>()
        .iter(world)
        .filter(|c| c.particles.contains(&corner))
        .count();
    app.world_mut().entity_mut(corner).despawn();
    run_steps(&mut app, 1);
    app.world_mut().entity_mut(probe).remove::<Disabled>();
    run_steps(&mut app, 1);
    assert_eq!(solver(&app).len(), 47);
    assert_rows_consistent(&mut app);
    assert_eq!(
        stats(&app).constraints + with_corner,
        constraints,
        "its constraints are back; those of the despawned particle are gone"
    );
    run_steps(&mut app, 20);
    assert_ne!(
        app.world().get::<Position>(probe).unwrap().0,
        held,
        "simulated again"
    );
    assert!(all_finite(&mut app));
}

#[test]
fn an_entity_that_stops_being_a_particle_keeps_its_position_and_frees_its_row() {
    let mut app = app(0.01);
    let free = spawn(&mut app, |c| {
        [0.0, 1.0, 2.0].map(|x| c.spawn((Particle, Position(Vec2::new(x, 0.0)))).id())
    });
    run_steps(&mut app, 3);
    app.world_mut().entity_mut(free[0]).remove::<Particle>();
    let left = app.world().get::<Position>(free[0]).unwrap().0;
    run_steps(&mut app, 10);
    assert_eq!(app.world().get::<Position>(free[0]).unwrap().0, left);
    assert_eq!(
        app.world().get::<SolverIndex>(free[0]).unwrap().row(),
        u32::MAX
    );
    assert_eq!(solver(&app).len(), 2);
    assert_rows_consistent(&mut app);
    // The other two still fall freely: each from its own components.
    let y = app.world().get::<Position>(free[1]).unwrap().0.y;
    assert!(y < -0.05, "{y}");
    assert_eq!(y, app.world().get::<Position>(free[2]).unwrap().0.y);
}
