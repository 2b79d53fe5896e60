//! Particle–collider contacts in a step (the module docs of [`collider`](crate::collider) give
//! the method): the record of where each particle started, the contact passes after the
//! prediction and after the constraint solve (with friction). Restitution after the velocity
//! update is in [`restitution`](crate::collider::restitution).

use bevy::prelude::*;

use crate::collider::ColliderContactState;
use crate::collider::geometry::Hit;
use crate::collider::layers::CollisionFilter;
use crate::collider::sync::StepCollider;
use crate::fluid::settling::SettlingState;
use crate::parallel::phases::{PhaseShared, run_phases};
use crate::parallel::progress::FINISHED;
use crate::parallel::{CHUNK, SolverThreads, threads_for};
use crate::particle::SolverState;
use crate::stats::{PbdStats, Phase};

/// Times the rest of a blocked motion slides along the surface before it stops for the step.
pub const MAX_SLIDES: usize = 4;

/// Rounds over the colliders a particle touches, where several meet.
pub const MAX_ROUNDS: usize = 4;

/// Where colliders meet, the final motion is checked against each with a radius this much
/// (relative) smaller, so that resting on one is not taken for entering it.
const VALIDATION_SLACK: f32 = 1e-3;

/// No collider touched the row in this step.
pub(crate) const NONE: u32 = u32::MAX;

/// What the contacts did to one particle in this step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Touch {
    /// The collider (index into the step's colliders) it touched last, or [`NONE`].
    pub(crate) collider: u32,
    /// Outward normal there (world).
    pub(crate) normal: Vec2,
    /// Normal correction accumulated over the step (m): the friction budget.
    pub(crate) depth: f32,
    /// Its velocity v* before any contact (m/s).
    pub(crate) v_star: Vec2,
    /// The displacement the contacts gave it that changes its velocity (m): all but the
    /// pre-stabilisation. Its momentum change is m · push / Δt.
    pub(crate) push: Vec2,
    /// The velocity restitution gave it (m/s).
    pub(crate) bounce: Vec2,
}

impl Default for Touch {
    fn default() -> Self {
        Self {
            collider: NONE,
            normal: Vec2::ZERO,
            depth: 0.0,
            v_star: Vec2::ZERO,
            push: Vec2::ZERO,
            bounce: Vec2::ZERO,
        }
    }
}

/// [`Predict`](crate::PbdSubstepSystems::Predict), before the prediction: x₀ of every row.
pub(crate) fn record_collider_starts(
    state: Res<SolverState>,
    mut contacts: ResMut<ColliderContactState>,
) {
    contacts.start.clear();
    contacts.start.extend_from_slice(&state.x);
    contacts.touch.clear();
    contacts.touch.resize(state.len(), Touch::default());
}

/// [`Predict`](crate::PbdSubstepSystems::Predict), after the prediction: every particle's
/// predicted motion against the colliders (stops, slides, pushes out of a collider it
/// started in without adding velocity).
pub(crate) fn collide_predicted(
    mut state: ResMut<SolverState>,
    mut contacts: ResMut<ColliderContactState>,
    filter: Res<CollisionFilter>,
    threads: Res<SolverThreads>,
    mut stats: ResMut<PbdStats>,
) {
    let started = stats.begin_phase();
    let rows = 0..state.len();
    pass(
        &mut state,
        &mut contacts,
        &filter,
        false,
        rows,
        threads.cap(),
    );
    stats.end_phase(Phase::Contacts, started);
}

/// [`SolveConstraints`](crate::PbdSubstepSystems::SolveConstraints), between settling's two
/// solves of its islands ([`settling`](crate::fluid::settling) module docs): the island rows
/// its first solve moved into a collider are pushed out as the predicted pass would, and the
/// push is applied to x* too (it undoes a motion settling made without velocity, so it adds
/// none); the rows' contact records are left as the predicted pass made them (no friction,
/// restitution or momentum for the bodies). The rows pushed are held in settling's second
/// solve.
pub(crate) fn push_settling_fluid_out(
    mut state: ResMut<SolverState>,
    mut contacts: ResMut<ColliderContactState>,
    filter: Res<CollisionFilter>,
    settling: Option<ResMut<SettlingState>>,
) {
    let Some(mut settling) = settling.filter(|s| !s.island_rows().is_empty()) else {
        return;
    };
    let rows = settling.island_rows().to_vec();
    for i in rows {
        let i = i as usize;
        let (x, predicted, touch) = (state.x[i], state.x_predicted[i], contacts.touch[i]);
        pass(&mut state, &mut contacts, &filter, false, i..i + 1, 1);
        let moved = state.x[i] - x;
        state.x_predicted[i] = predicted + moved;
        contacts.touch[i] = touch;
        if moved != Vec2::ZERO {
            settling.hold(i as u32);
        }
    }
}

/// [`SolveContacts`](crate::PbdSubstepSystems::SolveContacts): every particle's motion since
/// the step's start, as the constraint and density solves left it, against the colliders;
/// then friction.
pub(crate) fn collide_solved(
    mut state: ResMut<SolverState>,
    mut contacts: ResMut<ColliderContactState>,
    filter: Res<CollisionFilter>,
    threads: Res<SolverThreads>,
    mut stats: ResMut<PbdStats>,
) {
    let started = stats.begin_phase();
    let rows = 0..state.len();
    pass(
        &mut state,
        &mut contacts,
        &filter,
        true,
        rows,
        threads.cap(),
    );
    stats.collider_contacts = contacts.touch.iter().filter(|t| t.collider != NONE).count();
    stats.end_phase(Phase::Contacts, started);
}

/// What one contact pass reads, shared by every row.
struct PassInputs<'a> {
    colliders: &'a [StepCollider],
    bins: &'a crate::collider::broad_phase::Bins,
    radius: &'a [f32],
    start: &'a [Vec2],
    w: &'a [f32],
    v: &'a [Vec2],
    filter: &'a CollisionFilter,
    fluid_count: usize,
    friction: bool,
}

/// One contact pass over the `rows` with w > 0, each against the colliders it interacts with
/// (`filter`), in blocks of [`CHUNK`] rows, on up to `max_threads` threads from
/// [`PARALLEL_FROM`](crate::parallel::PARALLEL_FROM) rows up: each row reads only its own
/// values and the step's colliders, so the bits do not depend on the threads. A block looks
/// its colliders up in the broad phase once, for the bounds of all its rows' motions, and each
/// row keeps those its own motion's bounds overlap: the same list as a lookup of its own.
fn pass(
    state: &mut SolverState,
    contacts: &mut ColliderContactState,
    filter: &CollisionFilter,
    friction: bool,
    rows: core::ops::Range<usize>,
    max_threads: usize,
) {
    let ColliderContactState {
        colliders,
        bins,
        radius,
        start,
        touch,
        candidates,
        block_candidates,
        ..
    } = contacts;
    let SolverState {
        x,
        x_predicted,
        v,
        w,
        fluid_count,
        ..
    } = state;
    let s = PassInputs {
        colliders,
        bins,
        radius,
        start,
        w,
        v,
        filter,
        fluid_count: *fluid_count,
        friction,
    };
    if rows.start != 0 {
        // Single rows (settling's islands): a lookup each.
        for i in rows {
            let Some((lo, hi)) = s.motion_bounds(i, x[i]) else {
                continue;
            };
            s.bins.query(lo, hi, candidates);
            contact_row(
                &s,
                i,
                &mut x[i],
                &mut x_predicted[i],
                &mut touch[i],
                candidates,
            );
        }
        return;
    }
    let n = rows.end;
    let blocks = n.div_ceil(CHUNK);
    let threads = threads_for(n, max_threads);
    block_candidates.resize_with(blocks, Default::default);
    let (x, x_predicted, touch) = (
        PhaseShared::new(&mut x[..n]),
        PhaseShared::new(&mut x_predicted[..n]),
        PhaseShared::new(&mut touch[..n]),
    );
    let scratch = PhaseShared::new(&mut block_candidates[..]);
    let block = |b: usize| {
        let range = b * CHUNK..((b + 1) * CHUNK).min(n);
        // SAFETY: one phase (or one thread); each block writes only its own rows and its own
        // scratch.
        let (x, x_predicted, touch, [near, candidates]) = unsafe {
            (
                x.block_mut(range.clone()),
                x_predicted.block_mut(range.clone()),
                touch.block_mut(range.clone()),
                &mut scratch.block_mut(b..b + 1)[0],
            )
        };
        let bounds = (range.clone().zip(&*x)).filter_map(|(i, &xi)| s.motion_bounds(i, xi));
        let Some((lo, hi)) = bounds.reduce(|(a, b), (c, d)| (a.min(c), b.max(d))) else {
            return;
        };
        s.bins.query(lo, hi, near);
        for (k, i) in range.enumerate() {
            let Some((lo, hi)) = s.motion_bounds(i, x[k]) else {
                continue;
            };
            s.bins.overlapping(near, lo, hi, candidates);
            contact_row(
                &s,
                i,
                &mut x[k],
                &mut x_predicted[k],
                &mut touch[k],
                candidates,
            );
        }
    };
    if threads <= 1 {
        (0..blocks).for_each(block);
    } else {
        run_phases(blocks, threads, 0, |_, b| block(b), |_| FINISHED);
    }
}

impl PassInputs<'_> {
    /// The bounds of row `i`'s motion from x₀ to `x`, widened by its radius, if the row takes
    /// part (w > 0, finite positions).
    fn motion_bounds(&self, i: usize, x: Vec2) -> Option<(Vec2, Vec2)> {
        let (x0, r) = (self.start[i], self.radius[i]);
        let takes_part = self.w[i].partial_cmp(&0.0) == Some(core::cmp::Ordering::Greater)
            && x.is_finite()
            && x0.is_finite();
        takes_part.then(|| (x0.min(x) - r, x0.max(x) + r))
    }
}

/// The contacts of row `i` in one pass: its position `x_row` (x* or x), predicted position
/// and contact record, against the colliders in `candidates` (those whose bounds overlap its
/// motion's, [`PassInputs::motion_bounds`]; the row must take part).
fn contact_row(
    s: &PassInputs,
    i: usize,
    x_row: &mut Vec2,
    x_predicted: &mut Vec2,
    touch: &mut Touch,
    candidates: &mut Vec<u32>,
) {
    let (x0, r) = (s.start[i], s.radius[i]);
    let mut x = *x_row;
    if s.filter.active() {
        let layers = s.filter.row(i);
        candidates.retain(|&k| layers.interacts(s.colliders[k as usize].layers));
    }
    let x_in = x;
    let mut touched = 0u32;
    let mut prestabilised = Vec2::ZERO;
    // Rounds (Gauss-Seidel over the colliders) where several meet, until none moves it.
    for round in 0..MAX_ROUNDS {
        let (mut touched_round, mut moved_round) = (0, false);
        for &k in candidates.iter() {
            let c = &s.colliders[k as usize];
            let a = c.start.inverse_transform_point(x0);
            let b = c.end.inverse_transform_point(x);
            // The way out an earlier contact with this collider chose in this step.
            let side = (touch.collider == k).then(|| c.end.rotation.inverse() * touch.normal);
            let Some((b, normal, depth, initial)) =
                resolve(&c.geometry, a, b, r, side, !s.friction && round == 0)
            else {
                continue;
            };
            let moved = c.end.transform_point(b);
            let normal = c.end.rotation * normal;
            prestabilised += normal * initial;
            let t = &mut *touch;
            moved_round |= moved != x;
            t.push += moved - x - normal * initial;
            x = moved;
            if t.collider == NONE {
                t.v_star = s.v[i];
            }
            t.collider = k;
            t.normal = normal;
            t.depth += depth;
            touched_round += 1;
        }
        touched += touched_round;
        if touched_round < 2 || !moved_round {
            break;
        }
    }
    if touched > 1 {
        // Where colliders meet, the last one's push may have moved it into (or through)
        // another. The colliders that move least under it hold: its motion from x₀ is
        // cut where it reaches one of them it entered. (A still wall holds against a
        // collider crushing the particle into it, which is left overlapping it.)
        let motion = |c: &StepCollider| {
            let a = c.start.inverse_transform_point(x0);
            c.end
                .transform_point(a)
                .distance(c.start.transform_point(a))
        };
        let least = candidates
            .iter()
            .map(|&k| motion(&s.colliders[k as usize]))
            .fold(f32::INFINITY, f32::min);
        let blocking = candidates
            .iter()
            .filter_map(|&k| {
                let c = &s.colliders[k as usize];
                if motion(c) > least + VALIDATION_SLACK * r {
                    return None;
                }
                let a = c.start.inverse_transform_point(x0);
                let b = c.end.inverse_transform_point(x);
                let reach = r * (1.0 - VALIDATION_SLACK);
                let hit = c.geometry.sweep(a, b, reach, None)?;
                let at = a + (b - a) * hit.t;
                // It ends inside this collider, or beyond it (through a segment).
                let entered = c.geometry.surface(b, a - b).distance < reach
                    || (b - at).dot(hit.normal) < -reach;
                entered.then(|| (hit.t, c.end.transform_point(at)))
            })
            .min_by(|p, q| p.0.total_cmp(&q.0));
        if let Some((_, stop)) = blocking {
            touch.push += stop - x;
            x = stop;
        }
    }
    if prestabilised != Vec2::ZERO {
        // Pre-stabilisation (\[MMCK14\] §6.2): the penetration it started the step with is
        // removed from x* as well, so it adds no velocity; only as far as the contacts
        // did move it that way (a later collider may have undone the push).
        let length = prestabilised.length();
        let direction = prestabilised / length;
        let kept = length.min((x - x_in).dot(direction).max(0.0));
        *x_predicted += direction * kept;
        touch.push += prestabilised - direction * kept;
    }
    let touched_here = touched;
    // Fluid slips (its rows come first): its tangential motion along a wall is its
    // viscosity's to damp, as at SPH boundaries, not Coulomb's.
    if s.friction && touch.collider != NONE && i >= s.fluid_count {
        let slid = apply_friction(x, x0, touch, s.colliders);
        touch.push += slid - x;
        x = slid;
    }
    if touched_here > 0 || s.friction {
        *x_row = x;
    }
}

/// The motion `a → b` (the collider's frame) of a disc of radius `r`: swept, slid, projected
/// out. Returns the new end, the outward normal, the normal correction made and (when
/// `pre_stabilise`) the part of it that undoes a penetration at `a`; `None` if no contact.
fn resolve(
    geometry: &crate::collider::geometry::Geometry,
    a: Vec2,
    b: Vec2,
    r: f32,
    side: Option<Vec2>,
    pre_stabilise: bool,
) -> Option<(Vec2, Vec2, f32, f32)> {
    if !geometry.near(a.min(b), a.max(b), r) {
        return None;
    }
    let mut from = a;
    let mut to = b;
    let mut normal = None;
    let mut depth = 0.0;
    let mut slides = 0;
    while let Some(Hit { t, normal: n }) = geometry.sweep(from, to, r, normal.or(side)) {
        let hit = from + (to - from) * t;
        let rest = to - hit;
        let inward = rest.dot(n).min(0.0);
        if t == 0.0 && inward == 0.0 {
            // Blocked where it stands but not moving in: nothing to take away.
            normal = Some(n);
            break;
        }
        depth -= inward;
        normal = Some(n);
        from = hit;
        to = hit + rest - n * inward;
        slides += 1;
        if slides > MAX_SLIDES {
            to = hit;
            break;
        }
        if to == from {
            break;
        }
    }
    // On an open chain's line the side is the one the contact pushed to, else where it came
    // from.
    let surface = geometry.surface(to, normal.or(side).unwrap_or(a - to));
    let mut initial = 0.0;
    if surface.distance < r {
        let push = r - surface.distance;
        if pre_stabilise {
            let at_start = r - geometry.surface(a, Vec2::ZERO).distance;
            initial = push.min(at_start.max(0.0));
        }
        to += surface.normal * push;
        depth += push;
        normal = Some(surface.normal);
    }
    normal.map(|n| (to, n, depth, initial))
}

/// Coulomb friction (\[MMCK14\] eq. 24–25): the particle's motion relative to the collider's
/// surface, tangential part Δx_t, is undone if |Δx_t| < μs d (static), else reduced by μk d,
/// with d the normal correction of the step.
fn apply_friction(x: Vec2, x0: Vec2, touch: &Touch, colliders: &[StepCollider]) -> Vec2 {
    let c = &colliders[touch.collider as usize];
    let m = c.material;
    // The particle's motion in the collider's frame: where the collider's material point now
    // under it was at the start, to where it started.
    let relative = c.start.transform_point(c.end.inverse_transform_point(x)) - x0;
    let n = touch.normal;
    let tangential = relative - n * relative.dot(n);
    let length = tangential.length();
    if length == 0.0 || touch.depth <= 0.0 {
        return x;
    }
    if length < m.static_friction * touch.depth {
        x - tangential
    } else {
        x - tangential * (m.dynamic_friction * touch.depth / length).min(1.0)
    }
}

impl ColliderContactState {
    /// Each particle's contact impulse in the running substep: (row, the collider, impulse on
    /// the particle (N·s), contact point (m), outward normal there). The impulse is
    /// m (push/Δt + bounce), the point the surface under the particle.
    pub(crate) fn contact_impulses<'a>(
        &'a self,
        state: &'a SolverState,
        inv_dt: f32,
    ) -> impl Iterator<Item = (usize, &'a StepCollider, Vec2, Vec2, Vec2)> + 'a {
        self.touch.iter().enumerate().filter_map(move |(i, t)| {
            let collider = self.colliders.get(t.collider as usize)?;
            let w = state.w[i];
            if w.partial_cmp(&0.0) != Some(core::cmp::Ordering::Greater) {
                return None;
            }
            let impulse = (t.push * inv_dt + t.bounce) / w;
            let at = state.x[i] - t.normal * self.radius[i];
            Some((i, collider, impulse, at, t.normal))
        })
    }

    /// [`ColliderContactState::contact_impulses`] on colliders with a dynamic body:
    /// (impulse on the particle (N·s), contact point (m), body).
    #[cfg_attr(not(feature = "avian"), allow(dead_code))]
    pub(crate) fn body_impulses<'a>(
        &'a self,
        state: &'a SolverState,
        inv_dt: f32,
    ) -> impl Iterator<Item = (Vec2, Vec2, Entity)> + 'a {
        self.contact_impulses(state, inv_dt)
            .filter_map(|(_, c, impulse, at, _)| Some((impulse, at, c.body?)))
    }
}
