//! Copying between ECS components and the solver arrays
//! ([`PbdSystems::Prepare`](crate::PbdSystems::Prepare) and
//! [`PbdSystems::Writeback`](crate::PbdSystems::Writeback)).

use bevy::ecs::change_detection::{CheckChangeTicks, Tick};
use bevy::ecs::system::SystemChangeTick;
use bevy::prelude::*;

use crate::constraints::distance::{DistanceConstraint, DistanceRow, colour_order};
use crate::constraints::distance_batch::DistanceBatches;
use crate::constraints::tether::{LongRangeAttachment, TetherRow};
use crate::fluid::FluidParticle;
use crate::particle::{InverseMass, KinematicTarget, Particle, Position, SolverIndex, Velocity};
use crate::solver::SolverState;
use crate::stats::{PbdStats, Phase};

/// Observer: a particle was added or removed, or became/stopped being fluid (`B`).
pub(crate) fn mark_particles_dirty<E: EntityEvent, B: Bundle>(
    _: On<E, B>,
    mut state: ResMut<SolverState>,
) {
    state.particles_dirty = true;
}

/// Observer: a constraint was added or removed.
pub(crate) fn mark_constraints_dirty<E: EntityEvent, B: Bundle>(
    _: On<E, B>,
    mut state: ResMut<SolverState>,
) {
    state.constraints_dirty = true;
}

/// Marks what changed outside the solver since the last step:
/// - the particle arrays (then [`copy_particles_in`] copies every particle; otherwise the
///   arrays already hold what the components hold), when a `Position` or `Velocity`, or
///   [`SolverState`] itself, changed after the last writeback (which overwrites the two
///   components, so an edit made inside the step before it is replaced, as it always was), or
///   an `InverseMass` or `KinematicTarget` (which the writeback does not write) since this
///   system's last run, so that an edit by a system inside the step is taken at the next one;
/// - the constraint rows, when a [`DistanceConstraint`] or [`LongRangeAttachment`] was changed
///   in place (through `Mut`, e.g. `Query<&mut DistanceConstraint>` or an inspector) since this
///   system last ran.
///
/// Additions and removals of particles and constraints are marked by observers.
///
/// Exclusive, to read the components' change ticks column by column ([`changed_since`]): a
/// `Changed<DistanceConstraint>` query tests them entity by entity, which took ~1.5 µs of every
/// step of the 40×30 cloth (4 592 constraints), and the copy it saves ~2 µs.
pub(crate) fn detect_edits(world: &mut World) {
    // In an exclusive system, `last_change_tick` is the system's last run.
    let (since, now) = (world.last_change_tick(), world.read_change_tick());
    // Before anything below changes `SolverState` (which would count as an edit).
    if particles_edited(world, since, now) {
        world.resource_mut::<SolverState>().particles_stale = true;
    }
    if changed_since::<DistanceConstraint>(world, since, now)
        || changed_since::<LongRangeAttachment>(world, since, now)
    {
        world.resource_mut::<SolverState>().constraints_dirty = true;
    }
}

/// Whether the particle arrays may differ from the components (see [`detect_edits`], whose
/// last run is `since`).
fn particles_edited(world: &mut World, since: Tick, now: Tick) -> bool {
    let state = world.resource::<SolverState>();
    let Some(written) = state.particles_written else {
        return true;
    };
    // Rows about to be rebuilt are marked stale by `rebuild_particle_rows` itself.
    if state.particles_stale {
        return true;
    }
    // The writeback's own writes (and that of `particles_written`) are at `written`, not after.
    let resource_edited = world
        .get_resource_change_ticks::<SolverState>()
        .is_none_or(|ticks| ticks.is_changed(written, now));
    resource_edited
        || changed_since::<Position>(world, written, now)
        || changed_since::<Velocity>(world, written, now)
        || changed_since::<InverseMass>(world, since, now)
        || changed_since::<KinematicTarget>(world, since, now)
}

/// Observer: `B` was removed, which changes no tick but what the copy-in would read: a particle
/// stopped being held (`KinematicTarget`: its inverse mass applies again), or an entity was
/// enabled again (`Disabled`: its row takes its components' values again).
pub(crate) fn mark_particles_stale<B: Bundle>(_: On<Remove, B>, mut state: ResMut<SolverState>) {
    state.particles_stale = true;
}

/// Observer: keeps [`SolverState`]'s stored writeback tick within the range Bevy compares
/// ticks in (as Bevy does for the ticks of systems).
pub(crate) fn check_written_tick(check: On<CheckChangeTicks>, mut state: ResMut<SolverState>) {
    let state = &mut *state;
    if let Some(tick) = &mut state.particles_written
        && tick.check_tick(*check)
    {
        // Clamped: edits older than the clamp and newer than the writeback would compare equal.
        state.particles_stale = true;
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
            && table(Position::STORAGE_TYPE)
            && table(Velocity::STORAGE_TYPE)
            && table(InverseMass::STORAGE_TYPE)
            && table(KinematicTarget::STORAGE_TYPE)
    );
};

/// Whether any `T` in table storage (the default, and that of this crate's components) was
/// added or changed after `since`, as `Changed<T>` with last run `since` and this run `now`.
fn changed_since<T: Component>(world: &mut World, since: Tick, now: Tick) -> bool {
    let Some(id) = world.component_id::<T>() else {
        return false;
    };
    world.storages().tables.iter().any(|table| {
        table.get_changed_ticks_slice_for(id).is_some_and(|ticks| {
            // No early exit within a column: the test is branch-free and vectorises.
            ticks.iter().fold(false, |changed, tick| {
                // SAFETY: the caller holds the world exclusively, so nothing writes the ticks.
                changed | unsafe { *tick.get() }.is_newer_than(since, now)
            })
        })
    })
}

/// Rebuilds the particle rows (fluid first, in query order) when particles were added/removed.
pub(crate) fn rebuild_particle_rows(
    mut state: ResMut<SolverState>,
    mut particles: Query<(Entity, &mut SolverIndex, Has<FluidParticle>), With<Particle>>,
) {
    if !state.particles_dirty {
        return;
    }
    let state = &mut *state;
    state.particles_dirty = false;
    state.particles_stale = true;
    state.constraints_dirty = true;
    state.entities.clear();
    let mut others = Vec::new();
    for (entity, _, fluid) in &particles {
        if fluid {
            state.entities.push(entity);
        } else {
            others.push(entity);
        }
    }
    state.fluid_count = state.entities.len();
    state.entities.extend(others);
    for (row, &entity) in state.entities.iter().enumerate() {
        if let Ok((_, mut index, _)) = particles.get_mut(entity) {
            index.0 = row as u32;
        }
    }
    let n = state.entities.len();
    state.resize_particles(n);
}

/// Rebuilds constraint and tether rows when they or the particles changed (the observers,
/// [`detect_edits`] and [`rebuild_particle_rows`] mark them stale); despawns those
/// whose particles no longer exist.
pub(crate) fn rebuild_constraint_rows(
    mut commands: Commands,
    mut state: ResMut<SolverState>,
    constraints: Query<(Entity, &DistanceConstraint)>,
    tethers: Query<(Entity, &LongRangeAttachment)>,
    indices: Query<&SolverIndex, With<Particle>>,
) {
    if !state.constraints_dirty {
        return;
    }
    state.tethers.clear();
    for (entity, tether) in &tethers {
        match indices.get_many([tether.particle, tether.anchor]) {
            Ok([p, a]) => state.tethers.push(TetherRow {
                particle: p.0,
                anchor: a.0,
                max_distance: tether.max_distance,
            }),
            Err(_) => commands.entity(entity).despawn(),
        }
    }
    let state = &mut *state;
    state.constraints_dirty = false;
    state.constraints.clear();
    state.constraint_entities.clear();
    for (entity, constraint) in &constraints {
        match indices.get_many(constraint.particles) {
            Ok([a, b]) => {
                state.constraints.push(DistanceRow {
                    a: a.0,
                    b: b.0,
                    rest_length: constraint.rest_length,
                    compliance: constraint.compliance,
                });
                state.constraint_entities.push(entity);
            }
            Err(_) => {
                if constraint.particles[0] == constraint.particles[1] {
                    warn!("DistanceConstraint {entity} joins a particle to itself; despawned");
                }
                commands.entity(entity).despawn();
            }
        }
    }
    // Gauss-Seidel in colour order: constraints of one colour share no particle, so they can be
    // projected several at a time.
    let (order, colours) = colour_order(&state.constraints, state.x.len());
    state.constraints = order.iter().map(|&k| state.constraints[k]).collect();
    state.constraint_entities = order
        .iter()
        .map(|&k| state.constraint_entities[k])
        .collect();
    state.distance_batches = DistanceBatches::new(&state.constraints, &colours, state.x.len());
    let m = state.constraints.len();
    state.constraint_lambda.resize(m, 0.0);
}

/// Copies `Position`, `Velocity`, `InverseMass` and `KinematicTarget` into the arrays, when they
/// may differ ([`SolverState::particles_stale`]).
pub(crate) fn copy_particles_in(
    mut state: ResMut<SolverState>,
    mut stats: ResMut<PbdStats>,
    particles: Query<(
        &SolverIndex,
        &Position,
        &Velocity,
        &InverseMass,
        Option<&KinematicTarget>,
    )>,
    mut warned: Local<bool>,
) {
    let started = stats.begin_phase();
    if !state.particles_stale {
        stats.end_phase(Phase::Sync, started);
        return;
    }
    let state = &mut *state;
    state.particles_stale = false;
    state.kinematic_targets.clear();
    let n = state.x.len();
    let (x, v, w) = (&mut state.x[..], &mut state.v[..n], &mut state.w[..n]);
    let targets = &mut state.kinematic_targets;
    // `for_each` iterates a query faster than a `for` loop.
    particles
        .iter()
        .for_each(|(index, position, velocity, inverse_mass, target)| {
            let i = index.0 as usize;
            if i >= n {
                return;
            }
            x[i] = position.0;
            v[i] = velocity.0;
            let w_i = inverse_mass.0;
            w[i] = if w_i.is_finite() && w_i >= 0.0 {
                w_i
            } else {
                invalid_inverse_mass(w_i, &mut warned)
            };
            if let Some(target) = target.filter(|t| t.0.is_finite()) {
                w[i] = 0.0;
                targets.push((i as u32, target.0));
            }
        });
    stats.end_phase(Phase::Sync, started);
}

/// The inverse mass used for an invalid `InverseMass` `w` (kg⁻¹): 0 (pinned), with a warning the
/// first time. Out of line, so that the copy loop stays small enough to inline.
#[cold]
#[inline(never)]
fn invalid_inverse_mass(w: f32, warned: &mut bool) -> f32 {
    if !*warned {
        warn!("InverseMass {w} is negative or not finite: the particle is treated as pinned");
        *warned = true;
    }
    0.0
}

/// Copies positions and velocities back to `Position`, `Velocity` and, where present,
/// `Transform` (x, y; z is kept), and records when ([`SolverState::particles_written`]).
pub(crate) fn copy_particles_out(
    mut state: ResMut<SolverState>,
    ticks: SystemChangeTick,
    mut stats: ResMut<PbdStats>,
    mut particles: Query<(
        &SolverIndex,
        &mut Position,
        &mut Velocity,
        Option<&mut Transform>,
    )>,
) {
    let started = stats.begin_phase();
    // Serial: copying a few thousand rows takes less time than starting parallel tasks (and
    // `for_each` iterates a query faster than a `for` loop).
    particles
        .iter_mut()
        .for_each(|(index, mut position, mut velocity, transform)| {
            let i = index.0 as usize;
            let (Some(&x), Some(&v)) = (state.x.get(i), state.v.get(i)) else {
                return;
            };
            position.0 = x;
            velocity.0 = v;
            if let Some(mut transform) = transform {
                transform.translation.x = x.x;
                transform.translation.y = x.y;
            }
        });
    state.particles_written = Some(ticks.this_run());
    stats.end_phase(Phase::Sync, started);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs one `detect_edits` system (kept across calls, so that its last run
    /// moves on) and returns the stale flag it left, clearing it.
    fn detect(world: &mut World, system: &mut impl System<In = (), Out = ()>) -> bool {
        system.run((), world).expect("exclusive system runs");
        core::mem::take(&mut world.resource_mut::<SolverState>().constraints_dirty)
    }

    #[test]
    fn edits_in_place_and_only_they_mark_the_rows_stale() {
        let mut world = World::new();
        world.init_resource::<SolverState>();
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
        let mut system = IntoSystem::into_system(detect_edits);
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
