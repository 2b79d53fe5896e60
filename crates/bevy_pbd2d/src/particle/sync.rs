//! Copying between ECS components and the solver arrays
//! ([`PbdStepSystems::Prepare`](crate::PbdStepSystems::Prepare) and
//! [`PbdStepSystems::Writeback`](crate::PbdStepSystems::Writeback)).

use bevy::ecs::change_detection::{CheckChangeTicks, Tick};
use bevy::ecs::system::SystemChangeTick;
use bevy::prelude::*;

use crate::particle::components::{
    FluidParticle, InverseMass, KinematicTarget, Particle, Position, SolverIndex, Velocity,
};
use crate::particle::order::stable_rows;
use crate::particle::runaway::{RunawayGuard, RunawayTakeOut, any_runaway};
use crate::particle::state::SolverState;
use crate::stats::{PbdStats, Phase};

/// Observer: a particle was added or removed, became or stopped being fluid, or an entity was
/// disabled or enabled (`B`): the rows are rebuilt at the next step.
pub(crate) fn mark_particles_dirty<E: EntityEvent, B: Bundle>(
    _: On<E, B>,
    mut state: ResMut<SolverState>,
) {
    state.particles_dirty = true;
}

/// Observer: an entity stopped being a particle (despawned, or `Particle` removed): it has no
/// row any more, so its index must not name another particle's row.
pub(crate) fn forget_row(removed: On<Remove, Particle>, mut indices: Query<&mut SolverIndex>) {
    if let Ok(mut index) = indices.get_mut(removed.entity) {
        *index = SolverIndex::default();
    }
}

/// Marks what changed outside the solver since the last step:
/// - the particle arrays (then [`copy_particles_in`] copies every particle; otherwise the
///   arrays already hold what the components hold), when a `Position` or `Velocity`, or
///   [`SolverState`] itself, changed after the last writeback (which overwrites the two
///   components, so an edit made inside the step before it is replaced, as it always was), or
///   an `InverseMass` or `KinematicTarget` (which the writeback does not write) since this
///   system's last run, so that an edit by a system inside the step is taken at the next one;
///
/// Additions and removals of particles are marked by observers; constraint edits by
/// `detect_constraint_edits` (constraints plugin).
///
/// Exclusive, to read the components' change ticks column by column ([`changed_since`]): a
/// `Changed<Position>` query tests them entity by entity, and the copy it saves takes ~2 µs of
/// the 40×30 cloth's step.
pub(crate) fn detect_edits(world: &mut World) {
    // In an exclusive system, `last_change_tick` is the system's last run.
    let (since, now) = (world.last_change_tick(), world.read_change_tick());
    // Before anything below changes `SolverState` (which would count as an edit).
    if particles_edited(world, since, now) {
        world.resource_mut::<SolverState>().particles_stale = true;
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
/// stopped being held (`KinematicTarget`: its inverse mass applies again).
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
        table(Position::STORAGE_TYPE)
            && table(Velocity::STORAGE_TYPE)
            && table(InverseMass::STORAGE_TYPE)
            && table(KinematicTarget::STORAGE_TYPE)
    );
};

/// Whether any `T` in table storage (the default, and that of this crate's components) was
/// added or changed after `since`, as `Changed<T>` with last run `since` and this run `now`.
pub(crate) fn changed_since<T: Component>(world: &mut World, since: Tick, now: Tick) -> bool {
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

/// Rebuilds the particle rows (fluid first, then in their previous order, new particles last:
/// [`order`](super::order)) when particles were added or removed.
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
    state.rows_generation += 1;
    // Fluid first, then by previous row (see `order`).
    let mut rows: Vec<(bool, u32, Entity)> = particles
        .iter()
        .map(|(entity, index, fluid)| (!fluid, index.0, entity))
        .collect();
    stable_rows(&mut rows);
    state.fluid_count = rows.iter().take_while(|(other, _, _)| !other).count();
    state.entities.clear();
    state
        .entities
        .extend(rows.iter().map(|&(_, _, entity)| entity));
    for (row, &entity) in state.entities.iter().enumerate() {
        if let Ok((_, mut index, _)) = particles.get_mut(entity) {
            index.0 = row as u32;
        }
    }
    let n = state.entities.len();
    state.resize_particles(n);
}

/// What the copy-in reads of a particle.
type CopyIn = (
    &'static SolverIndex,
    &'static Position,
    &'static Velocity,
    &'static InverseMass,
    Option<&'static KinematicTarget>,
);

/// What the copy-out writes of a particle.
type CopyOut = (
    &'static SolverIndex,
    &'static mut Position,
    &'static mut Velocity,
    Option<&'static mut Transform>,
);

/// Copies `Position`, `Velocity`, `InverseMass` and `KinematicTarget` into the arrays, when they
/// may differ ([`SolverState::particles_stale`]).
pub(crate) fn copy_particles_in(
    mut state: ResMut<SolverState>,
    mut stats: ResMut<PbdStats>,
    particles: Query<CopyIn, With<Particle>>,
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

/// [`copy_particles_out`]'s loop; with `CHECK`, a row that runs away is not written but
/// recorded in `runaways`.
#[inline(always)]
fn copy_out<const CHECK: bool>(
    state: &SolverState,
    particles: &mut Query<CopyOut, With<Particle>>,
    guard: &RunawayGuard,
    runaways: &mut Vec<u32>,
) {
    // Serial: copying a few thousand rows takes less time than starting parallel tasks (and
    // `for_each` iterates a query faster than a `for` loop).
    particles
        .iter_mut()
        .for_each(|(index, mut position, mut velocity, transform)| {
            let i = index.0 as usize;
            let (Some(&x), Some(&v)) = (state.x.get(i), state.v.get(i)) else {
                return;
            };
            // A runaway row keeps its components' last values (the guard takes it out).
            if CHECK && guard.runs_away(x, v) {
                runaways.push(i as u32);
                return;
            }
            position.0 = x;
            velocity.0 = v;
            if let Some(mut transform) = transform {
                transform.translation.x = x.x;
                transform.translation.y = x.y;
            }
        });
}

/// Copies positions and velocities back to `Position`, `Velocity` and, where present,
/// `Transform` (x, y; z is kept), except for rows that run away (the runaway guard takes them
/// out), and records when ([`SolverState::particles_written`]).
pub(crate) fn copy_particles_out(
    mut state: ResMut<SolverState>,
    ticks: SystemChangeTick,
    mut stats: ResMut<PbdStats>,
    mut particles: Query<CopyOut, With<Particle>>,
    mut runaways: Local<Vec<u32>>,
    mut take_out: RunawayTakeOut,
) {
    let guard = &*take_out.guard;
    let started = stats.begin_phase();
    // Rows are checked one by one only when the whole-array test finds one (a loop of its own:
    // the checks would otherwise be computed for every row).
    if any_runaway(&state.x, &state.v, guard.bounds) {
        copy_out::<true>(&state, &mut particles, guard, &mut runaways);
    } else {
        copy_out::<false>(&state, &mut particles, guard, &mut runaways);
    }
    if !runaways.is_empty() {
        take_out.rows(&state, &mut runaways, &mut stats);
    }
    state.particles_written = Some(ticks.this_run());
    stats.particles = state.len();
    stats.fluid_particles = state.fluid_count;
    stats.end_phase(Phase::Sync, started);
}
