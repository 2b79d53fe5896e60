//! Fluid–boundary contacts: boundary samples as a wall that fluid particles cannot cross.
//!
//! The Akinci boundary term (\[AIA+12\]) gives fluid next to a wall its density, but it is not a
//! wall: the PBF correction is a Newton step Δx = −C ∇C/|∇C|², and at a sample, or on the line
//! of a one-sample wall, ∇C vanishes by symmetry while C > 0. A particle placed there moved
//! hundreds of radii in one step, and a packed fluid pushed particles through the wall (its
//! density gradient points out of the fluid). So each sample is also a disc of radius
//! d = [`CONTACT_RADII`] · r that fluid particles do not enter. Samples spaced at most 2.4 r
//! (the builders space them 2r) give overlapping discs, a continuous barrier of half-thickness
//! √(d² − s²/4) around the line of samples; wider gaps let fast particles through (a warning
//! says so when samples are placed that way).
//!
//! Per step, for every fluid particle with w > 0, from its position x₀ at the start of the step:
//! - **Free at x₀** (the usual case): its motion x₀ → x is swept against the discs
//!   (continuous collision, ray–circle), before the density solve (so the solve never starts
//!   inside the wall, where its Newton step would shoot the particle out) and after it. At the
//!   first disc it reaches it stops on the disc's surface, and the rest of the motion slides
//!   along the surface (its inward normal part removed, up to [`MAX_SLIDES`] times; from a
//!   cusp between two discs, a slide into the neighbour is blocked). A path that crosses the
//!   line of samples must enter a disc first. A stopped particle's velocity loses its part into
//!   the disc after the velocity update: an inelastic contact.
//! - **Embedded at x₀**: inside a disc, or where the samples alone already make its density
//!   exceed ρ0 (ρ_b = m W(0) + Σₖ Ψₖ Wₖ > ρ0: deeper in the wall's density than a lone particle
//!   at rest on it, 1.32 r above a flat wall, more in a corner). Placed there, overrun by
//!   samples spawned over fluid, or left a hair inside a neighbouring disc by a stop. The
//!   density solve leaves it alone: its w is 0 for the solve, and so is its λ (its Newton step
//!   has no meaningful direction or length there, and shot such particles, and their
//!   neighbours, out at the speed limit). The wall's line is the polyline joining samples at
//!   most [`EDGE_RADII`] · r apart (inside the discs, so free particles never reach it). Its
//!   way out is the normal of the segment nearest to it, turned to the side it is on when
//!   farther than d from the line. Within d (a particle sunk a little into a floor is below
//!   its line) to the side its fluid neighbours are on, else the side it was on a step before
//!   when it crossed the line in that step, else the side it is on; exactly on the line with
//!   nothing to go by (a row of samples has no inside), to the side the samples' centroid is
//!   on (the inside of a closed container), else against gravity. Its motion loses its part
//!   against the way out, may not take it deeper into the discs it is in, is cut before it
//!   crosses the wall's line and may not enter another disc; then it is pushed out along the
//!   way out by the depth of its discs or the Newton step of ρ_b − ρ0, at most
//!   [`DEPENETRATION_RADII`] · r per step (and not across the line either). The push is
//!   applied to x* too, so that it adds no velocity (as the pre-stabilisation of \[MMCK14\]
//!   moves x and x* alike): an embedded particle is moved out, not shot out.
//!
//! ρ_b is summed over the samples within h of x* (x₀'s, when the particle moved far): a
//! particle that moved may be found embedded a step late. Boundary samples are static: the
//! sweep does not follow a sample that moves (a moving wall pushes fluid through its own
//! density only, and fast pistons leave particles behind). Particles with w = 0 (pinned, or
//! held by a [`KinematicTarget`](crate::particle::KinematicTarget)) go where they are put.
//!
//! In the 420 steps of the reference dam break that the bench times (its regression run),
//! every particle stays more than 1.24 r from every sample along each step's motion and its ρ_b
//! below 993 kg/m², so none of this acts there (its bits are unchanged); later in that scene
//! (from step ~470) a few splashes reach the discs. Fluid particles touch only boundary
//! samples here; cloth particles do not.

mod edges;
mod embedded;
#[cfg(test)]
mod tests;
mod walls;

use bevy::prelude::*;

use crate::dynamics::Gravity;
use crate::fluid::kernel::CubicSpline;
use crate::fluid::neighbors::NeighborState;
use crate::fluid::settings::FluidSettings;
use crate::parallel::CHUNK;
use crate::particle::state::SolverState;
use crate::stats::{PbdStats, Phase};
use edges::WallEdges;
use embedded::{Scan, outward, scan};
use walls::Walls;

/// Contact radius of a boundary sample, in fluid particle radii r: d = 1.2 r. Below the 1.24 r
/// the reference dam break keeps, above the r at which discs spaced 2r would only touch.
pub const CONTACT_RADII: f32 = 1.2;

/// Largest push out of the wall per step for an embedded particle, in r (0.25 r).
pub const DEPENETRATION_RADII: f32 = 0.25;

/// Longest segment of a wall's line, in r: samples at most 2.4 r = 2d apart are joined (their
/// discs overlap).
pub const EDGE_RADII: f32 = 2.0 * CONTACT_RADII;

/// Times the rest of a stopped motion slides along a disc before it stops for the step.
pub const MAX_SLIDES: usize = 3;

/// The systems of the contacts, in their steps' sets ([`PbdStepSystems`](crate::PbdStepSystems)
/// `Predict`, `SolveConstraints`, `UpdateVelocities`); they run only where
/// [`walls_and_fluid`] holds.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BoundaryContactSystems;

/// Whether there are fluid particles and boundary samples (the contacts have work).
pub fn walls_and_fluid(state: Res<SolverState>) -> bool {
    state.fluid_count > 0 && state.boundary_contact_count > 0
}

/// An embedded particle of this step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Held {
    /// Its row.
    pub(crate) row: u32,
    /// Its inverse mass w (0 for the density solve).
    w: f32,
    /// Its way out (unit).
    out: Vec2,
    /// Its push (m), along `out`.
    push: f32,
}

/// The contact pass's per-step data: where each fluid particle started the step, the
/// embedded particles the density solve holds still, and the stopped ones.
#[derive(Resource, Debug, Default)]
pub struct BoundaryContactState {
    /// x₀ of each fluid row (m).
    pub(crate) start: Vec<Vec2>,
    /// x* of each fluid row when the contacts were prepared (m): the centre of its boundary
    /// list (settling moves x* after that).
    listed_at: Vec<Vec2>,
    /// Embedded rows of this step, in row order.
    pub(crate) held: Vec<Held>,
    /// Rows stopped by a disc in this step, and the disc's outward normal there.
    stopped: Vec<(u32, Vec2)>,
    /// The segments of the walls' lines.
    edges: WallEdges,
    /// The samples near one particle's x₀, and near its motion (scratch).
    near: Vec<u32>,
    candidates: Vec<u32>,
    /// A particle's boundary neighbours that have contact discs (scratch).
    listed: Vec<u32>,
}

/// The samples of `list` with contact discs (rows below `discs` of `samples`): `list` itself
/// when all have (without a look at it when every sample has one), else a copy in `scratch`.
fn with_discs<'a>(
    list: &'a [u32],
    (discs, samples): (usize, usize),
    scratch: &'a mut Vec<u32>,
) -> &'a [u32] {
    if discs == samples || list.iter().all(|&k| (k as usize) < discs) {
        return list;
    }
    scratch.clear();
    scratch.extend(list.iter().copied().filter(|&k| (k as usize) < discs));
    scratch
}

/// [`PbdSubstepSystems::Predict`](crate::PbdSubstepSystems::Predict), before the prediction: records
/// x₀ of every fluid particle.
pub fn record_start_positions(state: Res<SolverState>, mut contacts: ResMut<BoundaryContactState>) {
    let n = state.fluid_count;
    contacts.start.clear();
    contacts.start.extend_from_slice(&state.x[..n]);
    contacts.stopped.clear();
}

/// [`PbdSubstepSystems::SolveConstraints`](crate::PbdSubstepSystems::SolveConstraints), before the
/// density solve: finds the embedded fluid particles (module docs), sets their w to 0 for the
/// solve and works out their way out; sweeps every other particle's motion so far (the
/// prediction and the distance constraints).
pub fn prepare_boundary_contacts(
    time: Res<Time>,
    settings: Res<FluidSettings>,
    gravity: Option<Res<Gravity>>,
    mut state: ResMut<SolverState>,
    neighbors: Res<NeighborState>,
    mut contacts: ResMut<BoundaryContactState>,
    mut stats: ResMut<PbdStats>,
) {
    contacts.held.clear();
    stats.boundary_contacts = 0;
    if state.boundary_contact_count == 0 {
        return;
    }
    let started = stats.begin_phase();
    let state = &mut *state;
    let contacts = &mut *contacts;
    let (discs, samples) = (state.boundary_contact_count, state.boundary_x.len());
    let walls = Walls::new(
        &settings,
        (&state.boundary_x[..discs], &state.boundary_psi[..discs]),
        neighbors.contact_grid(discs, state.boundary_x.len()),
    );
    if contacts.edges.generation != Some(state.boundary_generation) {
        let length = EDGE_RADII * settings.particle_radius;
        let grid = neighbors.contact_grid(discs, state.boundary_x.len());
        let reach = settings.support_radius;
        contacts
            .edges
            .build(&state.boundary_x[..discs], grid, (length, reach));
        contacts.edges.generation = Some(state.boundary_generation);
    }
    let kernel = CubicSpline::new(settings.support_radius);
    let g = gravity.map_or(Vec2::ZERO, |g| g.0);
    let dt = time.delta_secs();
    let r = settings.particle_radius;
    let mut centroid = None;
    let n = state.fluid_count.min(contacts.start.len());
    contacts.listed_at.clear();
    contacts
        .listed_at
        .extend_from_slice(&state.x_predicted[..n]);
    for i in 0..n {
        let (start, x, predicted) = (contacts.start[i], state.x[i], state.x_predicted[i]);
        let chunk = neighbors.chunks.get(i / CHUNK);
        let listed = chunk.map(|c| c.boundary_of(i % CHUNK));
        let listed = listed.map(|list| with_discs(list, (discs, samples), &mut contacts.listed));
        // x*'s list (the samples within h of x*) holds every sample within d of the motion
        // when the motion stays within h − d of x*; else the grid is asked.
        let covered = walls.covered(start, x, predicted);
        if covered && listed.is_some_and(<[u32]>::is_empty) {
            continue;
        }
        if state.w[i] <= 0.0 || !start.is_finite() || !x.is_finite() {
            continue;
        }
        let near = match listed {
            Some(list) if covered => list,
            _ => {
                walls.near(start, &mut contacts.near);
                &contacts.near[..]
            }
        };
        let (depth, excess, gradient, nearest) =
            match scan(&walls, &kernel, &settings, (start, x), near) {
                Scan::Embedded {
                    depth,
                    excess,
                    gradient,
                    nearest,
                } => (depth, excess, gradient, nearest),
                Scan::Free if covered => continue,
                _ => {
                    let list = listed.filter(|_| covered);
                    let scratch = &mut contacts.candidates;
                    if let Some((end, normal)) = walls.sweep((start, x), list, scratch, None) {
                        state.x[i] = end;
                        contacts.stopped.push((i as u32, normal));
                        stats.boundary_contacts += 1;
                    }
                    continue;
                }
            };
        // The way out: the normal of the nearest segment of the wall's line (of the vector
        // from the nearest sample, for a sample joined to none), to the particle's side.
        let nearest = walls.samples[nearest as usize];
        let (normal, on) = match contacts.edges.nearest(walls.samples, near, start) {
            Some((a, b)) => ((b - a).perp().normalize_or(Vec2::Y), a),
            None => ((start - nearest).normalize_or(Vec2::Y), nearest),
        };
        // Toward its fluid neighbours' centre at the start of the step (zero without any).
        let fluid_side = chunk
            .map(|c| c.fluid_of(i % CHUNK))
            .filter(|rows| !rows.is_empty())
            .map_or(Vec2::ZERO, |rows| {
                let starts = rows.iter().map(|&j| contacts.start[j as usize]);
                starts.sum::<Vec2>() / rows.len() as f32 - start
            });
        let inside = *centroid.get_or_insert_with(|| mean(walls.samples)) - start;
        // Its velocity at the start of the step (v* holds this step's gravity).
        let came = state.v[i] - g * dt;
        let hints = (fluid_side, -came * dt, [inside, -g]);
        let out = outward(normal, (start, on), hints, (walls.radius, r));
        // The Newton step of ρ_b − ρ0 along the way out, or out of the discs.
        let slope = gradient
            .dot(-out)
            .max(1e-6 * settings.rest_density / settings.support_radius);
        let push = (excess.max(0.0) / slope).max(depth);
        contacts.held.push(Held {
            row: i as u32,
            w: state.w[i],
            out,
            push: push.min(DEPENETRATION_RADII * r),
        });
        state.w[i] = 0.0;
    }
    stats.end_phase(Phase::Solve, started);
}

/// The mean of `points` (m).
fn mean(points: &[Vec2]) -> Vec2 {
    points.iter().copied().sum::<Vec2>() / points.len().max(1) as f32
}

/// [`PbdSubstepSystems::SolveConstraints`](crate::PbdSubstepSystems::SolveConstraints), after the
/// density solve: gives the held particles their w back and moves them out, and sweeps every
/// other fluid particle's motion against the discs (module docs).
pub fn resolve_boundary_contacts(
    settings: Res<FluidSettings>,
    mut state: ResMut<SolverState>,
    neighbors: Res<NeighborState>,
    mut contacts: ResMut<BoundaryContactState>,
    mut stats: ResMut<PbdStats>,
) {
    let state = &mut *state;
    let contacts = &mut *contacts;
    for held in &contacts.held {
        state.w[held.row as usize] = held.w;
    }
    stats.embedded_particles = contacts.held.len();
    if state.boundary_contact_count == 0 {
        return;
    }
    let started = stats.begin_phase();
    let (discs, samples) = (state.boundary_contact_count, state.boundary_x.len());
    let walls = Walls::new(
        &settings,
        (&state.boundary_x[..discs], &state.boundary_psi[..discs]),
        neighbors.contact_grid(discs, state.boundary_x.len()),
    );
    let mut held = contacts.held.iter().copied().peekable();
    let n = state.fluid_count.min(contacts.listed_at.len());
    for i in 0..n {
        let embedded = held.next_if(|held| held.row as usize == i);
        let (start, x, predicted) = (contacts.start[i], state.x[i], contacts.listed_at[i]);
        let list = neighbors
            .chunks
            .get(i / CHUNK)
            .map(|c| c.boundary_of(i % CHUNK));
        let list = list.map(|list| with_discs(list, (discs, samples), &mut contacts.listed));
        let list = list.filter(|_| walls.covered(start, x, predicted));
        if embedded.is_none() && list.is_some_and(<[u32]>::is_empty) {
            continue;
        }
        if state.w[i] <= 0.0 || !start.is_finite() || !x.is_finite() {
            continue;
        }
        let scratch = &mut contacts.candidates;
        if let Some(Held { out, push, .. }) = embedded {
            // Its own motion, not against the way out, no deeper into the discs it is in, not
            // across the wall's line and into no other disc (the sweep passes through those it
            // is in), then the push, which adds no velocity and crosses no line either.
            walls.near(start, &mut contacts.near);
            let motion = x - start;
            let target = start + motion - motion.dot(out).min(0.0) * out;
            let target = walls.no_deeper(start, target, &contacts.near);
            let edges = &contacts.edges;
            let target = short_of_the_line(&walls, edges, (start, target), out, scratch);
            let moved = walls.sweep((start, target), None, scratch, Some(start));
            let moved = moved.map_or(target, |(end, _)| end);
            let pushed =
                short_of_the_line(&walls, edges, (moved, moved + push * out), out, scratch);
            let pushed = walls
                .sweep((moved, pushed), None, scratch, Some(start))
                .map_or(pushed, |(end, _)| end);
            state.x[i] = pushed;
            state.x_predicted[i] += pushed - moved;
        } else if let Some((end, normal)) = walls.sweep((start, x), list, scratch, None) {
            state.x[i] = end;
            contacts.stopped.push((i as u32, normal));
            stats.boundary_contacts += 1;
        }
    }
    stats.end_phase(Phase::Solve, started);
}

/// The motion a → b cut just before it crosses a segment of the wall's line (from the side a is
/// on, or `out` points to from on the line).
fn short_of_the_line(
    walls: &Walls,
    edges: &WallEdges,
    (a, b): (Vec2, Vec2),
    out: Vec2,
    scratch: &mut Vec<u32>,
) -> Vec2 {
    walls.candidates(a, b, scratch);
    match edges.first_crossing(walls.samples, scratch, (a, b), out) {
        Some(t) => {
            let length = (b - a).length();
            let back = 1e-6 * walls.radius / length.max(f32::MIN_POSITIVE);
            a + (b - a) * (t - back).max(0.0)
        }
        None => b,
    }
}

/// [`PbdSubstepSystems::UpdateVelocities`](crate::PbdSubstepSystems::UpdateVelocities), after the
/// velocity update: a particle a disc stopped keeps no velocity into it (the position update
/// leaves the motion up to the contact in it).
pub fn settle_contact_velocities(
    mut state: ResMut<SolverState>,
    contacts: Res<BoundaryContactState>,
) {
    for &(row, normal) in &contacts.stopped {
        if let Some(v) = state.v.get_mut(row as usize) {
            *v -= v.dot(normal).min(0.0) * normal;
        }
    }
}
