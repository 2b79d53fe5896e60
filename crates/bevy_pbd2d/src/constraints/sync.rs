//! Components → constraint rows: the observers and systems that keep [`ConstraintState`] in step
//! with the [`DistanceConstraint`], [`AngleConstraint`] and [`LongRangeAttachment`] entities
//! ([`PbdStepSystems::Prepare`](crate::schedule::PbdStepSystems::Prepare)).

use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::query::Allow;
use bevy::prelude::*;

use crate::constraints::angle::check_angle_compliance;
use crate::constraints::angle::{AngleConstraint, AngleIndex, AngleRow};
use crate::constraints::batches::DistanceBatches;
use crate::constraints::breaking::BreakingStrain;
use crate::constraints::chains::{Chains, find_chains};
use crate::constraints::colouring::colour_order;
use crate::constraints::distance::{ConstraintIndex, DistanceConstraint};
use crate::constraints::distance::{LENGTH_RANGE, check_compliance};
use crate::constraints::lines::find_lines;
use crate::constraints::row::DistanceRow;
use crate::constraints::state::ConstraintState;
use crate::constraints::tether::{LongRangeAttachment, TetherIndex, TetherRow};
use crate::dynamics::SolverSettings;
use crate::particle::order::in_previous_order;
use crate::particle::sync::changed_since;
use crate::particle::{Particle, SolverIndex, SolverState};

/// Observer: a constraint was added or removed.
pub(crate) fn mark_constraints_dirty<E: EntityEvent, B: Bundle>(
    _: On<E, B>,
    mut rows: ResMut<ConstraintState>,
) {
    rows.dirty = true;
}

/// Marks the constraint rows dirty when a [`DistanceConstraint`] or [`LongRangeAttachment`] was
/// changed in place (through `Mut`, e.g. `Query<&mut DistanceConstraint>` or an inspector)
/// since this system last ran. Additions and removals are marked by observers.
///
/// Exclusive, to read the components' change ticks column by column (`changed_since`): a
/// `Changed<DistanceConstraint>` query tests them entity by entity, which took ~1.5 µs of every
/// step of the 40×30 cloth (4 592 constraints).
pub(crate) fn detect_constraint_edits(world: &mut World) {
    // In an exclusive system, `last_change_tick` is the system's last run.
    let (since, now) = (world.last_change_tick(), world.read_change_tick());
    if changed_since::<DistanceConstraint>(world, since, now)
        || changed_since::<LongRangeAttachment>(world, since, now)
        || changed_since::<AngleConstraint>(world, since, now)
        || changed_since::<BreakingStrain>(world, since, now)
    {
        world.resource_mut::<ConstraintState>().dirty = true;
    }
}

// `changed_since` reads table columns only: the components it scans must stay in tables.
const _: () = {
    use bevy::ecs::component::StorageType;
    const fn table(storage: StorageType) -> bool {
        matches!(storage, StorageType::Table)
    }
    assert!(
        table(DistanceConstraint::STORAGE_TYPE)
            && table(LongRangeAttachment::STORAGE_TYPE)
            && table(AngleConstraint::STORAGE_TYPE)
            && table(BreakingStrain::STORAGE_TYPE)
    );
};

/// A particle's row, and whether it is disabled (then it has none).
type ParticleRow = (&'static SolverIndex, Has<Disabled>);

/// Whether an angle constraint's rest angle is in [−π, π] and its compliance in range.
fn angle_in_range(angle: &AngleConstraint) -> bool {
    let pi = core::f32::consts::PI;
    (-pi..=pi).contains(&angle.rest_angle) && check_angle_compliance(angle.compliance).is_ok()
}

/// What [`rebuild_constraint_rows`] reads and places of each kind of constraint.
type Placed<'w, 's, C, I> = Query<'w, 's, (Entity, &'static C, &'static mut I)>;

/// Rebuilds constraint, angle and tether rows (in their previous order, new ones last:
/// `particle::order`) when they or the particles changed (the observers and
/// [`detect_constraint_edits`] mark them dirty; a new particle row layout is seen by its
/// generation, a change of [`SolverSettings::direct_lines`] by the flag the layout was made
/// with). Despawns those whose particles no longer exist; those with a disabled particle get
/// no row until it is enabled again.
pub(crate) fn rebuild_constraint_rows(
    mut commands: Commands,
    (state, settings): (Res<SolverState>, Res<SolverSettings>),
    mut rows: ResMut<ConstraintState>,
    mut constraints: Query<(
        Entity,
        &DistanceConstraint,
        &mut ConstraintIndex,
        Option<&BreakingStrain>,
    )>,
    mut tethers: Placed<LongRangeAttachment, TetherIndex>,
    mut angles: Placed<AngleConstraint, AngleIndex>,
    indices: Query<ParticleRow, (With<Particle>, Allow<Disabled>)>,
) {
    if !rows.dirty
        && rows.particle_rows == Some(state.rows_generation)
        && rows.direct_lines == settings.direct_lines
    {
        return;
    }
    let rows = &mut *rows;
    rows.dirty = false;
    rows.direct_lines = settings.direct_lines;
    rows.particle_rows = Some(state.rows_generation);
    // In their previous order, new ones last (see `particle::order`).
    let order = in_previous_order(tethers.iter().map(|(entity, _, index)| (index.0, entity)));
    rows.tethers.clear();
    for entity in order {
        let Ok((_, tether, mut index)) = tethers.get_mut(entity) else {
            continue;
        };
        match indices.get_many([tether.particle, tether.anchor]) {
            // A disabled particle has no row: the attachment waits for it.
            Ok([(_, true), _] | [_, (_, true)]) => {}
            // An edit out of range: left out (with a warning) until it is edited again.
            Ok(_) if !LENGTH_RANGE.contains(&tether.max_distance) => {
                warn!("{entity}: {tether:?} is out of range; left out until edited");
            }
            Ok([(p, _), (a, _)]) => {
                index.0 = rows.tethers.len() as u32;
                rows.tethers.push(TetherRow {
                    particle: p.0,
                    anchor: a.0,
                    max_distance: tether.max_distance,
                });
            }
            Err(_) => commands.entity(entity).despawn(),
        }
    }
    let order = in_previous_order(angles.iter().map(|(entity, _, index)| (index.0, entity)));
    rows.angles.clear();
    rows.angle_entities.clear();
    for entity in order {
        let Ok((_, angle, mut index)) = angles.get_mut(entity) else {
            continue;
        };
        match indices.get_many(angle.particles) {
            // A disabled particle has no row: the constraint waits for it.
            Ok(particles) if particles.iter().any(|&(_, disabled)| disabled) => {}
            Ok(_) if !angle_in_range(angle) => {
                warn!("{entity}: {angle:?} is out of range; left out until edited");
            }
            Ok(particles) => {
                index.0 = rows.angles.len() as u32;
                rows.angles.push(AngleRow {
                    rows: particles.map(|(row, _)| row.0),
                    rest_angle: angle.rest_angle,
                    compliance: angle.compliance,
                });
                rows.angle_entities.push(entity);
            }
            Err(_) => commands.entity(entity).despawn(),
        }
    }
    rows.angle_lambda.resize(rows.angles.len(), 0.0);
    let order = in_previous_order(
        constraints
            .iter()
            .map(|(entity, _, index, _)| (index.0, entity)),
    );
    rows.rows.clear();
    rows.entities.clear();
    rows.breaking_strain.clear();
    for entity in order {
        let Ok((_, constraint, mut index, breaking)) = constraints.get_mut(entity) else {
            continue;
        };
        match indices.get_many(constraint.particles) {
            // A disabled particle has no row: the constraint waits for it.
            Ok([(_, true), _] | [_, (_, true)]) => {}
            Ok(_)
                if !(LENGTH_RANGE.contains(&constraint.rest_length)
                    && check_compliance(constraint.compliance).is_ok()) =>
            {
                warn!("{entity}: {constraint:?} is out of range; left out until edited");
            }
            Ok([(a, _), (b, _)]) => {
                index.0 = rows.rows.len() as u32;
                rows.rows.push(DistanceRow {
                    a: a.0,
                    b: b.0,
                    rest_length: constraint.rest_length,
                    compliance: constraint.compliance,
                });
                rows.entities.push(entity);
                // A limit edited to 0, a negative or NaN (an inspector): never breaks.
                let limit = breaking.map_or(f32::INFINITY, |b| b.get());
                rows.breaking_strain
                    .push(if limit > 0.0 { limit } else { f32::INFINITY });
            }
            Err(_) => {
                if constraint.particles[0] == constraint.particles[1] {
                    warn!("DistanceConstraint {entity} joins a particle to itself; despawned");
                }
                commands.entity(entity).despawn();
            }
        }
    }
    // Paths of constraints are solved directly (and, if asked, the lines of grids), the rest by
    // Gauss-Seidel in colour order: constraints of one colour share no particle, so they can be
    // projected several at a time.
    let (chains, mut rest) = find_chains(&rows.rows, state.len());
    let mut lines = Vec::new();
    if settings.direct_lines {
        (lines, rest) = find_lines(&rows.rows, &rest, state.len());
    }
    rows.chains = Chains::new(&rows.rows, &chains, &lines);
    let projected: Vec<DistanceRow> = rest.iter().map(|&k| rows.rows[k]).collect();
    let (order, colours) = colour_order(&projected, state.len());
    let layout: Vec<usize> = (order.iter().map(|&k| rest[k]))
        .chain(
            chains
                .iter()
                .chain(&lines)
                .flat_map(|(_, path)| path.iter().copied()),
        )
        .collect();
    rows.rows = layout.iter().map(|&k| rows.rows[k]).collect();
    rows.entities = layout.iter().map(|&k| rows.entities[k]).collect();
    rows.breaking_strain = layout.iter().map(|&k| rows.breaking_strain[k]).collect();
    rows.breakable = rows.breaking_strain.iter().any(|s| s.is_finite());
    rows.batches = DistanceBatches::new(&rows.rows[..rest.len()], &colours, state.len());
    let m = rows.rows.len();
    rows.lambda.resize(m, 0.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs one `detect_constraint_edits` system (kept across calls, so that its last run
    /// moves on) and returns the stale flag it left, clearing it.
    fn detect(world: &mut World, system: &mut impl System<In = (), Out = ()>) -> bool {
        system.run((), world).expect("exclusive system runs");
        core::mem::take(&mut world.resource_mut::<ConstraintState>().dirty)
    }

    #[test]
    fn edits_in_place_and_only_they_mark_the_rows_stale() {
        let mut world = World::new();
        world.init_resource::<ConstraintState>();
        let (a, b) = (world.spawn_empty().id(), world.spawn_empty().id());
        let constraints: Vec<Entity> = (0..100)
            .map(|k| {
                let rest = 0.1 + k as f32 * 0.01;
                world
                    .spawn(DistanceConstraint::new(a, b, rest).unwrap())
                    .id()
            })
            .collect();
        let tether = world
            .spawn(LongRangeAttachment::new(a, b, 1.0).unwrap())
            .id();
        let mut system = IntoSystem::into_system(detect_constraint_edits);
        system.initialize(&mut world);

        // The first run sees everything as new; after it, nothing changed.
        assert!(detect(&mut world, &mut system));
        assert!(!detect(&mut world, &mut system));
        // Another component of a constraint's entity changing is not an edit.
        world.entity_mut(constraints[3]).insert(Name::new("c3"));
        assert!(!detect(&mut world, &mut system));
        // The 77th of 100 constraints (not the first lane of a vector) edited in place.
        world
            .get_mut::<DistanceConstraint>(constraints[77])
            .unwrap()
            .rest_length = 0.5;
        assert!(detect(&mut world, &mut system));
        assert!(!detect(&mut world, &mut system));
        world
            .get_mut::<LongRangeAttachment>(tether)
            .unwrap()
            .max_distance = 2.0;
        assert!(detect(&mut world, &mut system));
        assert!(!detect(&mut world, &mut system));
    }
}
