//! Contacts between solid particles: discs of their [`ParticleRadius`] that do not overlap,
//! with Coulomb friction (\[MMCK14\] §5 and §6.1, as FleX does).
//!
//! A body whose root has [`SolidContacts`] has its particles collide with those of every other
//! such body, and with each other when [`SolidContacts::self_collision`] is set (a rope that
//! coils, a cloth that folds onto itself, a pile of grains in one body). Two particles joined
//! by a distance constraint never collide (their constraint keeps them apart or together).
//!
//! In every substep:
//!
//! 1. *Pre-stabilization* (\[MMCK14\] §5.1), in
//!    [`Predict`](crate::PbdSubstepSystems::Predict) before the prediction: the pairs that
//!    overlap at the substep's start x₀ (grains spawned into each other, what earlier
//!    iterations left) are projected there, on x₀, so it adds no velocity; what it moves into
//!    a collider, the colliders' own pre-stabilization pushes out without velocity.
//! 2. After the constraint solve and before the colliders
//!    ([`SolveContacts`](crate::PbdSubstepSystems::SolveContacts)), the pairs closer than
//!    r₁ + r₂ at the positions so far are found on a spatial hash grid of cells 2 r_max and
//!    projected [`SolverSettings::iterations`](crate::dynamics::SolverSettings::iterations)
//!    times, Gauss-Seidel, in a fixed order (the results do not depend on the thread count),
//!    to their target distance d₀ = min(r₁ + r₂, ‖x₀₁ − x₀₂‖) with x₀ as step 1 left it: a
//!    pair that step 1 could not separate is kept from closing, not pushed out with velocity
//!    (step 1 of the next substeps removes the overlap):
//!
//! ```text
//! C = ‖x₁ − x₂‖ − d₀ < 0,  n = (x₁ − x₂)/‖x₁ − x₂‖
//! Δx₁ = −w₁/(w₁ + w₂) C n,  Δx₂ = +w₂/(w₁ + w₂) C n
//! ```
//!
//! Then friction (\[MMCK14\] eq. 24–25): the pair's relative motion in the substep, tangential
//! to n, is removed if it is shorter than μs times the pair's total normal correction d
//! (static), else shortened by μk d (kinetic), with μs and μk the means of the two bodies'
//! [`SolidContacts::static_friction`] and [`SolidContacts::dynamic_friction`]. Particles do not
//! turn, so static friction also keeps a grain from rolling: a pile of grains
//! ([`GranularBuilder`](crate::scenes::GranularBuilder)) stands at an angle of repose that
//! grows with μs (`tests/granular.rs`: 11.0°, 21.6° and 30.4° at μ 0.05, 0.15 and 0.5 with
//! 20 substeps of 4 iterations at 60 Hz; above μ ≈ 0.3 the angle levels off and its order
//! varies by a few degrees from pile to pile).
//! Without any [`SolidContacts`], nothing runs.

use bevy::prelude::*;

use crate::body::BodyParticles;
use crate::collider::ParticleRadius;
use crate::collider::components::member_discs;
use crate::constraints::ConstraintState;
use crate::dynamics::SolverSettings;
use crate::fluid::grid::SpatialHashGrid;
use crate::particle::sync::copy_particles_in;
use crate::particle::{SolverIndex, SolverState};
use crate::schedule::{PbdPrepared, PbdSchedule, PbdSubstepSchedule, PbdSubstepSystems};
use crate::stats::{PbdStats, Phase};

/// The friction coefficients [`SolidContacts::static_friction`] and
/// [`SolidContacts::dynamic_friction`] may take.
pub const FRICTION_RANGE: core::ops::RangeInclusive<f32> = 0.0..=10.0;

/// On a body's root ([`ParticleBody`](crate::body::ParticleBody)): its particles are solid
/// discs of their [`ParticleRadius`] that collide with those of the other bodies that have it
/// (module docs). Editable in place; takes effect at the next step.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
pub struct SolidContacts {
    /// Whether its particles also collide with each other (pairs joined by a distance
    /// constraint excepted). Default `true`.
    pub self_collision: bool,
    /// Static friction coefficient μs of its particles, in [`FRICTION_RANGE`]: a pair whose
    /// tangential motion in the substep is shorter than μs times its normal correction sticks.
    /// A pair uses the mean of its two. Default 0.5. Out of range: 0, with a warning.
    pub static_friction: f32,
    /// Kinetic (dynamic) friction coefficient μk, in [`FRICTION_RANGE`]: otherwise the pair's
    /// tangential motion is shortened by μk times its normal correction. A pair uses the mean
    /// of its two. Default 0.5. Out of range: 0, with a warning.
    pub dynamic_friction: f32,
}

impl Default for SolidContacts {
    fn default() -> Self {
        Self {
            self_collision: true,
            static_friction: 0.5,
            dynamic_friction: 0.5,
        }
    }
}

/// The solid particles of the step, their pairs and scratch space.
#[derive(Resource, Debug, Default)]
pub(crate) struct SolidContactState {
    /// Particle rows taking part, and per entry: radius (m), body, self-collision, (μs, μk).
    rows: Vec<u32>,
    radius: Vec<f32>,
    body: Vec<u32>,
    self_collision: Vec<bool>,
    friction: Vec<(f32, f32)>,
    /// Row pairs (smaller first) joined by a distance constraint, sorted.
    joined: Vec<(u32, u32)>,
    /// The constraint rows `joined` was built from (their count and the particle layout).
    joined_for: Option<(usize, u64)>,
    /// Scratch: positions of `rows`, the grid, the pairs (entries) and their normal depths.
    points: Vec<Vec2>,
    /// Per entry: its position x₀ as the pre-stabilization left it (m), for the pairs' start
    /// distances.
    start: Vec<Vec2>,
    grid: SpatialHashGrid,
    pairs: Vec<(u32, u32)>,
    /// Per pair: the distance it is projected to (m), r₁ + r₂, or less for a pair that began
    /// the substep closer than that.
    target: Vec<f32>,
    depth: Vec<f32>,
}

/// Whether any body has solid contacts this step.
pub(crate) fn has_solid_contacts(state: Res<SolidContactState>) -> bool {
    !state.rows.is_empty()
}

/// What [`collect_solid_particles`] reads of a body.
type SolidBody = (Entity, &'static SolidContacts, &'static BodyParticles);

/// [`Prepare`](crate::PbdStepSystems::Prepare), after the rows are built: the particles of
/// the bodies with [`SolidContacts`], and the pairs their constraints join.
pub(crate) fn collect_solid_particles(
    bodies: Query<SolidBody>,
    particles: Query<(&SolverIndex, Option<&ParticleRadius>)>,
    state: Res<SolverState>,
    constraints: Res<ConstraintState>,
    mut solid: ResMut<SolidContactState>,
) {
    let solid = &mut *solid;
    solid.rows.clear();
    solid.radius.clear();
    solid.body.clear();
    solid.self_collision.clear();
    solid.friction.clear();
    let mut bodies: Vec<_> = bodies.iter().collect();
    bodies.sort_by_key(|(entity, ..)| *entity);
    for (k, (entity, contacts, members)) in bodies.into_iter().enumerate() {
        let checked = |name: &str, mu: f32| {
            if FRICTION_RANGE.contains(&mu) {
                mu
            } else {
                warn!("SolidContacts of {entity}: {name} {mu} outside {FRICTION_RANGE:?}, using 0");
                0.0
            }
        };
        let friction = (
            checked("static friction", contacts.static_friction),
            checked("dynamic friction", contacts.dynamic_friction),
        );
        for (row, radius) in member_discs(members, &particles, &state) {
            solid.rows.push(row);
            solid.radius.push(radius);
            solid.body.push(k as u32);
            solid.self_collision.push(contacts.self_collision);
            solid.friction.push(friction);
        }
    }
    let layout = Some((constraints.rows.len(), state.rows_generation));
    if solid.rows.is_empty() || solid.joined_for == layout {
        return;
    }
    solid.joined_for = layout;
    solid.joined = (constraints.rows.iter())
        .map(|r| (r.a.min(r.b), r.a.max(r.b)))
        .collect();
    solid.joined.sort_unstable();
    solid.joined.dedup();
}

/// [`SolveContacts`](crate::PbdSubstepSystems::SolveContacts), before the colliders: finds
/// the overlapping pairs and projects them, then friction (module docs).
pub(crate) fn solve_solid_contacts(
    time: Res<Time>,
    settings: Res<SolverSettings>,
    mut state: ResMut<SolverState>,
    mut solid: ResMut<SolidContactState>,
    mut stats: ResMut<PbdStats>,
) {
    let started = stats.begin_phase();
    let dt = time.delta_secs();
    let state = &mut *state;
    let solid = &mut *solid;
    find_pairs(solid, &state.x);
    // A pair that begins the substep overlapping (what the pre-stabilization's iterations
    // did not remove) is kept from closing further, not pushed out: pushing it out here would
    // become velocity. The pre-stabilization of the next substeps removes the rest.
    // (Both systems run on the same step's entries; the check keeps a mismatch from panicking.)
    if solid.start.len() == solid.rows.len() {
        for (k, &(i, j)) in solid.pairs.iter().enumerate() {
            let start = solid.start[i as usize].distance(solid.start[j as usize]);
            solid.target[k] = solid.target[k].min(start);
        }
    }
    for _ in 0..settings.iterations {
        project_pairs(solid, &mut state.x, &state.w);
    }
    apply_friction(solid, state, dt);
    stats.solid_contacts = solid.depth.iter().filter(|&&d| d > 0.0).count();
    stats.end_phase(Phase::Contacts, started);
}

/// [`Predict`](crate::PbdSubstepSystems::Predict), before the prediction and before the
/// colliders record where each particle starts: pre-stabilization (\[MMCK14\] §5.1). The
/// overlaps present at the substep's start x₀ (grains spawned into each other, what the last
/// substep's iterations left) are projected on x₀ itself, so the prediction carries the
/// correction into x* and it adds no velocity; what it moves into a collider, the colliders'
/// own pre-stabilization pushes out without velocity too. The positions it leaves are the
/// pairs' start distances ([`solve_solid_contacts`]). Without it, rows of grains poured 3 cm
/// into each other flew off at up to 72 m/s at 20 substeps per 1/60 s step and 111 m/s at 40
/// (`tests/granular.rs`).
pub(crate) fn pre_stabilize_solid_contacts(
    settings: Res<SolverSettings>,
    mut state: ResMut<SolverState>,
    mut solid: ResMut<SolidContactState>,
    mut stats: ResMut<PbdStats>,
) {
    let started = stats.begin_phase();
    let state = &mut *state;
    let solid = &mut *solid;
    find_pairs(solid, &state.x);
    for _ in 0..settings.iterations {
        project_pairs(solid, &mut state.x, &state.w);
    }
    solid.start.clear();
    solid
        .start
        .extend(solid.rows.iter().map(|&row| state.x[row as usize]));
    stats.end_phase(Phase::Contacts, started);
}

/// Where [`find_pairs`] puts a non-finite entry: far beyond the runaway guard's bounds.
const PARKED: Vec2 = Vec2::splat(1e30);

/// The pairs of entries closer than their radii's sum that may collide, in a fixed order.
fn find_pairs(solid: &mut SolidContactState, x: &[Vec2]) {
    let SolidContactState {
        rows,
        radius,
        body,
        self_collision,
        joined,
        points,
        grid,
        pairs,
        target,
        depth,
        ..
    } = solid;
    // A non-finite entry (the runaway guard takes it out at the step's end) is parked far
    // away and meets nothing; the others keep their contacts.
    points.clear();
    points.extend(rows.iter().map(|&r| {
        let p = x[r as usize];
        if p.is_finite() { p } else { PARKED }
    }));
    pairs.clear();
    target.clear();
    let r_max = radius.iter().copied().fold(0.0, f32::max);
    if r_max <= 0.0 {
        depth.clear();
        return;
    }
    grid.build(points, 2.0 * r_max);
    for (i, &p) in points.iter().enumerate() {
        if p == PARKED {
            continue;
        }
        grid.for_each_within(p, radius[i] + r_max, |j, q| {
            let j = j as usize;
            if j <= i || q == PARKED || (p - q).length() >= radius[i] + radius[j] {
                return;
            }
            if body[i] == body[j] && !self_collision[i] {
                return;
            }
            let (a, b) = (rows[i].min(rows[j]), rows[i].max(rows[j]));
            if joined.binary_search(&(a, b)).is_ok() {
                return;
            }
            pairs.push((i as u32, j as u32));
            target.push(radius[i] + radius[j]);
        });
    }
    depth.clear();
    depth.resize(pairs.len(), 0.0);
}

/// One Gauss-Seidel pass over the pairs: each pushed apart to its target distance.
fn project_pairs(solid: &mut SolidContactState, x: &mut [Vec2], w: &[f32]) {
    for (k, &(i, j)) in solid.pairs.iter().enumerate() {
        let (i, j) = (i as usize, j as usize);
        let (a, b) = (solid.rows[i] as usize, solid.rows[j] as usize);
        let total = w[a] + w[b];
        if total <= 0.0 {
            continue;
        }
        let delta = x[a] - x[b];
        let length = delta.length();
        let c = length - solid.target[k];
        if c >= 0.0 {
            continue;
        }
        let n = if length > 1e-9 {
            delta / length
        } else {
            crate::dynamics::coincident::pair_direction(a, b)
        };
        x[a] -= (w[a] / total) * c * n;
        x[b] += (w[b] / total) * c * n;
        solid.depth[k] -= c;
    }
}

/// Coulomb friction on every pair that was pushed apart in this substep.
fn apply_friction(solid: &SolidContactState, state: &mut SolverState, dt: f32) {
    for (k, &(i, j)) in solid.pairs.iter().enumerate() {
        let depth = solid.depth[k];
        if depth <= 0.0 {
            continue;
        }
        let (i, j) = (i as usize, j as usize);
        let (a, b) = (solid.rows[i] as usize, solid.rows[j] as usize);
        let total = state.w[a] + state.w[b];
        if total <= 0.0 {
            continue;
        }
        let start = |r: usize| state.substep_start(r, dt);
        let relative = (state.x[a] - start(a)) - (state.x[b] - start(b));
        let Some(n) = (state.x[a] - state.x[b]).try_normalize() else {
            continue;
        };
        let tangential = relative - n * relative.dot(n);
        let length = tangential.length();
        if length == 0.0 {
            continue;
        }
        let (static_i, dynamic_i) = solid.friction[i];
        let (static_j, dynamic_j) = solid.friction[j];
        let correction = if length < 0.5 * (static_i + static_j) * depth {
            tangential
        } else {
            tangential * (0.5 * (dynamic_i + dynamic_j) * depth / length).min(1.0)
        };
        state.x[a] -= (state.w[a] / total) * correction;
        state.x[b] += (state.w[b] / total) * correction;
    }
}

/// Contacts between solid particles ([`SolidContacts`], module docs). Part of
/// [`PbdPlugins`](crate::PbdPlugins).
#[derive(Debug, Clone, Copy, Default)]
pub struct SolidContactsPlugin;

impl Plugin for SolidContactsPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<SolidContacts>()
            .init_resource::<SolidContactState>()
            .add_systems(
                PbdSchedule,
                collect_solid_particles
                    .in_set(PbdPrepared)
                    .after(copy_particles_in)
                    .after(crate::constraints::sync::rebuild_constraint_rows),
            )
            .add_systems(
                PbdSubstepSchedule,
                pre_stabilize_solid_contacts
                    .in_set(PbdSubstepSystems::Predict)
                    .before(crate::collider::contacts::record_collider_starts)
                    .before(crate::dynamics::integrator::predict)
                    .run_if(has_solid_contacts),
            )
            .add_systems(
                PbdSubstepSchedule,
                solve_solid_contacts
                    .in_set(PbdSubstepSystems::SolveContacts)
                    .before(crate::collider::contacts::collide_solved)
                    .run_if(has_solid_contacts),
            );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A non-finite entry meets nothing; the others keep their pairs (before, one such entry
    /// switched off every solid contact of the step).
    #[test]
    fn a_non_finite_entry_leaves_the_other_pairs_alone() {
        let mut solid = SolidContactState {
            rows: vec![0, 1, 2, 3],
            radius: vec![0.1; 4],
            body: vec![0; 4],
            self_collision: vec![true; 4],
            friction: vec![(0.5, 0.5); 4],
            ..default()
        };
        let x = [
            Vec2::ZERO,
            Vec2::new(0.15, 0.0),
            Vec2::NAN,
            Vec2::new(f32::INFINITY, 0.0),
        ];
        find_pairs(&mut solid, &x);
        assert_eq!(solid.pairs, [(0, 1)]);
        assert_eq!(solid.target, [0.2]);
        assert_eq!(solid.depth, [0.0]);
    }
}
