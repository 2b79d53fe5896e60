//! Fluid–boundary contacts: boundary samples as a wall that fluid particles cannot cross.
//!
//! The Akinci boundary term (\[AIA+12\]) gives fluid next to a wall its density, but it is not a
//! wall: the PBF correction is a Newton step Δx = −C ∇C/|∇C|², and at a sample, or on the line
//! of a one-sample wall, ∇C vanishes by symmetry while C > 0. A particle placed there moved
//! hundreds of radii in one step, and a packed fluid pushed particles through the wall (its
//! density gradient points out of the fluid). So each sample is also a disc of radius
//! d = [`CONTACT_RADII`] · r that fluid particles do not enter. Samples spaced 2r (the builders'
//! spacing) give overlapping discs, a continuous barrier of half-thickness √(d² − r²) = 0.66 r
//! around the line of samples.
//!
//! Per step, for every fluid particle with w > 0, from its position x₀ at the start of the step:
//! - **Free at x₀** (the usual case): its motion x₀ → x, prediction and constraint corrections
//!   together, is swept against the discs (continuous collision, ray–circle): at the first disc
//!   it reaches it stops on the disc's surface, and the rest of the motion slides along the
//!   surface (its inward normal part removed, up to [`MAX_SLIDES`] times). A path that crosses
//!   the line of samples must enter a disc first, so no speed or correction carries a particle
//!   through: the wall is impenetrable. The stop enters the velocity update like any position
//!   correction (an inelastic contact).
//! - **Embedded at x₀**: inside a disc, or where the samples alone already make its density
//!   exceed ρ0 (ρ_b = m W(0) + Σₖ Ψₖ Wₖ > ρ0: deeper in the wall's density than a lone particle
//!   at rest on it, 1.32 r above a flat wall, more in a corner). Placed there, or overrun by
//!   samples spawned over fluid. The density solve leaves it alone (w = 0 for the solve: its
//!   Newton step has no meaningful direction or length there, and shot such particles out at
//!   the speed limit), its motion loses its part against the push (the wall holds it as a
//!   contact would) and may not take it deeper into the discs it is in, and it is pushed out
//!   along −∇ρ_b (away from the samples) by the Newton step of ρ_b − ρ0, or out of its disc,
//!   at most [`DEPENETRATION_RADII`] · r per step. The push is applied to x* too, so that it
//!   adds no velocity (as the pre-stabilisation of \[MMCK14\] moves x and x* alike): an
//!   embedded particle is moved out, not shot out. Where ∇ρ_b vanishes (on a sample, or on the
//!   line of a straight wall) it is pushed toward the centroid of all samples (the inside of a
//!   closed container), else back the way it came.
//!
//! In the reference dam break every particle stays more than 1.33 r from every sample, also
//! along each step's motion, and its ρ_b stays below 993 kg/m², so none of this acts there
//! (its bits are unchanged). Fluid particles touch only boundary samples here; cloth particles
//! do not.

use bevy::prelude::*;

use crate::dynamics::Gravity;
use crate::fluid::grid::SpatialHashGrid;
use crate::fluid::kernel::CubicSpline;
use crate::fluid::neighbors::NeighborState;
use crate::fluid::settings::FluidSettings;
use crate::parallel::CHUNK;
use crate::particle::state::SolverState;
use crate::stats::{PbdStats, Phase};

/// Contact radius of a boundary sample, in fluid particle radii r: d = 1.2 r. Below the 1.33 r
/// the reference dam break keeps, above the r at which discs spaced 2r would only touch.
pub const CONTACT_RADII: f32 = 1.2;

/// Largest push out of the wall per step for an embedded particle, in r (0.25 r).
pub const DEPENETRATION_RADII: f32 = 0.25;

/// Times the rest of a stopped motion slides along a disc before it stops for the step.
pub const MAX_SLIDES: usize = 3;

/// The contact pass's per-step data: where each fluid particle started the step, and the
/// embedded particles the density solve holds still.
#[derive(Resource, Debug, Default)]
pub struct BoundaryContactState {
    /// x₀ of each fluid row (m).
    pub(crate) start: Vec<Vec2>,
    /// Embedded rows of this step: row, its inverse mass w (0 for the density solve), and its
    /// push out of the wall (m).
    pub(crate) held: Vec<(u32, f32, Vec2)>,
    /// The samples near one particle's x₀, and near its motion (scratch).
    near: Vec<u32>,
    candidates: Vec<u32>,
}

/// [`PbdStepSystems::Predict`](crate::PbdStepSystems::Predict), before the prediction: records
/// x₀ of every fluid particle.
pub fn record_start_positions(state: Res<SolverState>, mut contacts: ResMut<BoundaryContactState>) {
    let n = state.fluid_count;
    contacts.start.clear();
    contacts.start.extend_from_slice(&state.x[..n]);
}

/// [`PbdStepSystems::SolveConstraints`](crate::PbdStepSystems::SolveConstraints), before the
/// density solve: finds the embedded fluid particles (module docs), sets their w to 0 for the
/// solve and works out their push; sweeps every other particle's motion so far (the prediction
/// and the distance constraints), so that the density solve never starts from inside the wall
/// (where its Newton step would shoot the particle out).
pub fn prepare_boundary_contacts(
    settings: Res<FluidSettings>,
    gravity: Option<Res<Gravity>>,
    mut state: ResMut<SolverState>,
    neighbors: Res<NeighborState>,
    mut contacts: ResMut<BoundaryContactState>,
    mut stats: ResMut<PbdStats>,
) {
    contacts.held.clear();
    stats.boundary_contacts = 0;
    if state.boundary_x.is_empty() {
        return;
    }
    let started = stats.begin_phase();
    let state = &mut *state;
    let contacts = &mut *contacts;
    let walls = Walls::new(
        &settings,
        (&state.boundary_x, &state.boundary_psi),
        &neighbors.boundary_grid,
    );
    let kernel = CubicSpline::new(settings.support_radius);
    let own = settings.particle_mass() * kernel.w0();
    // A sample within d of the motion x₀ → x* (at most C h long) is within d + C h of x*, so
    // in x*'s list (the samples within h of it) when d + C h < h; else the grid is asked.
    let lists_cover = walls.radius + settings.cfl_number * walls.reach < walls.reach;
    let mut centroid = None;
    let n = state.fluid_count.min(contacts.start.len());
    for i in 0..n {
        let listed = neighbors
            .chunks
            .get(i / CHUNK)
            .map(|c| c.boundary_of(i % CHUNK));
        if lists_cover && listed.is_some_and(<[u32]>::is_empty) {
            // No sample within d of x₀, nor of the motion x₀ → x* (`lists_cover`).
            continue;
        }
        let (w, start, x) = (state.w[i], contacts.start[i], state.x[i]);
        if w <= 0.0 || !start.is_finite() || !x.is_finite() {
            continue;
        }
        let near = match listed {
            Some(list) if lists_cover => list,
            _ => {
                walls.near(start, &mut contacts.near);
                &contacts.near[..]
            }
        };
        // Whether `near` holds every sample within d of the motion: x*'s list when the motion
        // stays within h − d of x*, x₀'s samples when it stays within h − d of x₀.
        let predicted = state.x_predicted[i];
        let near_covers = if lists_cover {
            walls.covered(start, x, predicted)
        } else {
            (x - start).length() < walls.reach - walls.radius
        };
        let guide = match scan(&walls, &kernel, own, &settings, (start, x), near) {
            Scan::Embedded(push) => push,
            Scan::Free if near_covers => continue,
            _ => {
                let list = listed.filter(|_| walls.covered(start, x, predicted));
                if let Some(stopped) = walls.sweep((start, x), list, &mut contacts.candidates, None)
                {
                    state.x[i] = stopped;
                    stats.boundary_contacts += 1;
                }
                continue;
            }
        };
        let direction = guide.direction.unwrap_or_else(|| {
            let inside = *centroid.get_or_insert_with(|| mean(walls.samples)) - start;
            let back = if state.v[i] != Vec2::ZERO {
                -state.v[i]
            } else {
                -gravity.as_ref().map_or(Vec2::ZERO, |g| g.0)
            };
            (inside.try_normalize().or(back.try_normalize())).unwrap_or(Vec2::Y)
        });
        let push = direction
            * guide
                .length
                .min(DEPENETRATION_RADII * settings.particle_radius);
        contacts.held.push((i as u32, w, push));
        state.w[i] = 0.0;
    }
    stats.end_phase(Phase::Solve, started);
}

/// How an embedded particle is pushed: along `direction` (`None` where the guides vanish) by
/// `length` (m) before the per-step cap.
struct Push {
    direction: Option<Vec2>,
    length: f32,
}

/// What [`scan`] found of a particle: its push if it is embedded, else whether its motion
/// enters a disc.
enum Scan {
    Embedded(Push),
    Touches,
    Free,
}

/// Scans the samples `near` a particle (at least those within h of x₀ = `start`, and within d
/// of the motion to `x`): its push if it is embedded at x₀ (module docs), else whether the
/// motion enters a disc.
fn scan(
    walls: &Walls,
    kernel: &CubicSpline,
    own: f32,
    settings: &FluidSettings,
    (start, x): (Vec2, Vec2),
    near: &[u32],
) -> Scan {
    // The depth in the discs and their weighted directions; whether the motion enters one.
    let (mut depth, mut outward, mut touches) = (0.0f32, Vec2::ZERO, false);
    let tiny_distance = 1e-6 * settings.particle_radius;
    let r2 = walls.radius * walls.radius;
    let motion = x - start;
    let mm = motion.length_squared();
    for &k in near {
        let offset = start - walls.samples[k as usize];
        let d2 = offset.length_squared();
        if d2 < r2 {
            let d = d2.sqrt();
            depth = depth.max(walls.radius - d);
            if d > tiny_distance {
                outward += (walls.radius - d) * offset / d;
            }
        } else {
            // The ray–circle test of `Walls::first_hit`, without the hit point.
            let fd = offset.dot(motion);
            let c = d2 - r2;
            touches |= fd < 0.0 && fd * fd >= mm * c && -fd <= mm + (fd * fd - mm * c).sqrt();
        }
    }
    // ρ_b and its gradient at x₀.
    let (mut density, mut gradient) = (own, Vec2::ZERO);
    let h2 = walls.reach * walls.reach;
    for &k in near {
        let offset = start - walls.samples[k as usize];
        let d2 = offset.length_squared();
        if d2 < h2 {
            let (wk, gk) = kernel.scalar(offset, d2.sqrt());
            let psi = walls.psi[k as usize];
            density += psi * wk;
            gradient += psi * gk;
        }
    }
    let excess = density - settings.rest_density;
    if depth == 0.0 && excess <= 0.0 {
        return if touches { Scan::Touches } else { Scan::Free };
    }
    // Inside a disc: out of the discs it is in, along their depth-weighted directions (−∇ρ_b is
    // no guide there: next to a sample, the neighbouring samples' steeper kernels make ρ_b rise
    // away from it). Outside the discs: down ρ_b, by its Newton step.
    let tiny_gradient = 1e-6 * settings.rest_density / settings.support_radius;
    let direction = if depth > 0.0 {
        outward.try_normalize()
    } else {
        (-gradient)
            .try_normalize()
            .filter(|_| gradient.length() > tiny_gradient)
    };
    let newton = excess.max(0.0) / gradient.length().max(tiny_gradient);
    Scan::Embedded(Push {
        direction,
        length: newton.max(depth),
    })
}

/// The mean of `points` (m).
fn mean(points: &[Vec2]) -> Vec2 {
    points.iter().copied().sum::<Vec2>() / points.len().max(1) as f32
}

/// [`PbdStepSystems::SolveConstraints`](crate::PbdStepSystems::SolveConstraints), after the
/// density solve: gives the held particles their w back and pushes them out, and sweeps every
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
    for &(i, w, _) in &contacts.held {
        state.w[i as usize] = w;
    }
    stats.embedded_particles = contacts.held.len();
    if state.boundary_x.is_empty() {
        return;
    }
    let started = stats.begin_phase();
    let walls = Walls::new(
        &settings,
        (&state.boundary_x, &state.boundary_psi),
        &neighbors.boundary_grid,
    );
    let mut held = contacts
        .held
        .iter()
        .map(|&(i, _, push)| (i as usize, push))
        .peekable();
    let n = state.fluid_count.min(contacts.start.len());
    for i in 0..n {
        let push = held.next_if(|&(row, _)| row == i).map(|(_, push)| push);
        let (start, x, predicted) = (contacts.start[i], state.x[i], state.x_predicted[i]);
        let list = neighbors
            .chunks
            .get(i / CHUNK)
            .map(|c| c.boundary_of(i % CHUNK));
        let list = list.filter(|_| walls.covered(start, x, predicted));
        if push.is_none() && list.is_some_and(<[u32]>::is_empty) {
            // No sample within d of the motion (`covered`).
            continue;
        }
        if state.w[i] <= 0.0 || !start.is_finite() || !x.is_finite() {
            continue;
        }
        if let Some(push) = push {
            // Its own motion, not against the push, no deeper into the discs it is in and into
            // no other (those it is in are passed through by the sweep), then the push, which
            // adds no velocity.
            walls.near(start, &mut contacts.near);
            let motion = x - start;
            let out = push.normalize_or_zero();
            let target = start + motion - motion.dot(out).min(0.0) * out;
            let target = walls.no_deeper(start, target, &contacts.near);
            let scratch = &mut contacts.candidates;
            let embedded = Some(start);
            let moved = walls.sweep((start, target), None, scratch, embedded);
            let moved = moved.unwrap_or(target);
            let pushed = walls.sweep((moved, moved + push), None, scratch, embedded);
            let pushed = pushed.unwrap_or(moved + push);
            state.x[i] = pushed;
            state.x_predicted[i] += pushed - moved;
        } else if let Some(stopped) = walls.sweep((start, x), list, &mut contacts.candidates, None)
        {
            state.x[i] = stopped;
            stats.boundary_contacts += 1;
        }
    }
    stats.end_phase(Phase::Solve, started);
}

/// The boundary samples as discs.
struct Walls<'a> {
    samples: &'a [Vec2],
    /// Their Ψ (kg).
    psi: &'a [f32],
    grid: &'a SpatialHashGrid,
    /// Disc radius d (m).
    radius: f32,
    /// The grid's cell size h (m): the largest radius of one query.
    reach: f32,
}

impl<'a> Walls<'a> {
    fn new(
        settings: &FluidSettings,
        (samples, psi): (&'a [Vec2], &'a [f32]),
        grid: &'a SpatialHashGrid,
    ) -> Self {
        Self {
            samples,
            psi,
            grid,
            radius: CONTACT_RADII * settings.particle_radius,
            reach: settings.support_radius,
        }
    }

    /// Whether the list of x* (the samples within h of it) holds every sample within d of the
    /// motion a → b: when a and b, and so every point between, are within h − d of x*.
    #[inline]
    fn covered(&self, a: Vec2, b: Vec2, predicted: Vec2) -> bool {
        let within = self.reach - self.radius;
        let within2 = within * within;
        (a - predicted).length_squared() < within2 && (b - predicted).length_squared() < within2
    }

    /// Every sample within h of `p` into `out`.
    fn near(&self, p: Vec2, out: &mut Vec<u32>) {
        out.clear();
        self.grid.for_each_within(p, self.reach, |k, _| out.push(k));
    }

    /// Every sample within d of the segment a → b into `out` (sorted, no repeats): queries of
    /// radius h at points spaced h − d along it, which cover every point within d of it.
    fn candidates(&self, a: Vec2, b: Vec2, out: &mut Vec<u32>) {
        out.clear();
        let length = (b - a).length();
        let spacing = self.reach - self.radius;
        let queries = (length / spacing).ceil().max(1.0);
        // A bound on absurd motions: past it, the start and end alone are queried (the
        // speed limit keeps motions far below it).
        let queries = if queries > 1e4 { 1 } else { queries as usize };
        for q in 0..=queries {
            let t = q as f32 / queries as f32;
            let centre = a.lerp(b, t);
            self.grid
                .for_each_within(centre, self.reach, |k, _| out.push(k));
        }
        out.sort_unstable();
        out.dedup();
    }
    /// The first point where the motion a → b enters a disc of `candidates`, with the disc:
    /// (t along the motion, sample). A motion that starts inside or on a disc and goes deeper is
    /// blocked at once (t = 0), unless `embedded` (the start of an embedded particle's step) is
    /// inside that disc too: it may move within the discs it started in.
    fn first_hit(
        &self,
        a: Vec2,
        b: Vec2,
        candidates: &[u32],
        embedded: Option<Vec2>,
    ) -> Option<(f32, u32)> {
        let d = b - a;
        let dd = d.length_squared();
        if dd == 0.0 {
            return None;
        }
        let r2 = self.radius * self.radius;
        let mut first: Option<(f32, u32)> = None;
        for &k in candidates {
            let centre = self.samples[k as usize];
            let f = a - centre;
            let fd = f.dot(d);
            if fd >= 0.0 {
                // Moving away.
                continue;
            }
            let c = f.length_squared() - r2;
            let t = if c <= 0.0 {
                // Inside or on it, going deeper (a cusp between two discs, a start inside).
                if embedded.is_some_and(|e| (e - centre).length_squared() < r2) {
                    continue;
                }
                0.0
            } else {
                let discriminant = fd * fd - dd * c;
                if discriminant < 0.0 {
                    continue;
                }
                (-fd - discriminant.sqrt()) / dd
            };
            if t <= 1.0 && first.is_none_or(|(best, _)| t < best) {
                first = Some((t, k));
            }
        }
        first
    }

    /// Just outside sample k's disc, in the direction of p from its centre.
    fn surface(&self, k: u32, p: Vec2) -> Vec2 {
        let centre = self.samples[k as usize];
        let n = (p - centre).normalize_or(Vec2::Y);
        centre + n * (self.radius * (1.0 + 1e-5))
    }

    /// The motion a → b stopped at the first disc it enters, the rest sliding along the
    /// surface up to [`MAX_SLIDES`] times; `None` if it enters none. `first`: samples that hold
    /// every sample within d of a → b (a list), if known; else, and for the slides, `scratch`
    /// takes the grid's. `embedded`: as for [`Walls::first_hit`].
    fn sweep(
        &self,
        (a, b): (Vec2, Vec2),
        first: Option<&[u32]>,
        scratch: &mut Vec<u32>,
        embedded: Option<Vec2>,
    ) -> Option<Vec2> {
        let (mut from, mut to) = (a, b);
        let mut hit = false;
        for leg in 0..=MAX_SLIDES {
            let candidates = match first {
                Some(list) if leg == 0 => list,
                _ => {
                    self.candidates(from, to, scratch);
                    &scratch[..]
                }
            };
            let Some((t, k)) = self.first_hit(from, to, candidates, embedded) else {
                return hit.then_some(to);
            };
            hit = true;
            let contact = self.surface(k, from.lerp(to, t));
            let n = (contact - self.samples[k as usize]).normalize_or(Vec2::Y);
            let rest = (to - from) * (1.0 - t);
            let slide = rest - rest.dot(n).min(0.0) * n;
            (from, to) = (contact, contact + slide);
        }
        // Out of slides: stop at the last contact.
        Some(from)
    }

    /// b kept from being deeper in any disc that a is in than a is.
    fn no_deeper(&self, a: Vec2, b: Vec2, candidates: &[u32]) -> Vec2 {
        let mut moved = b;
        for &k in candidates {
            let centre = self.samples[k as usize];
            let d0 = (a - centre).length();
            if d0 >= self.radius {
                continue;
            }
            let to = moved - centre;
            if to.length() < d0 {
                let out = to.try_normalize().or((a - centre).try_normalize());
                moved = centre + out.unwrap_or(Vec2::Y) * d0;
            }
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row of samples spaced 2r along y = 0, its grid and Ψ (1 each: the sweep ignores Ψ).
    fn row(settings: &FluidSettings) -> (Vec<Vec2>, Vec<f32>, SpatialHashGrid) {
        let r = settings.particle_radius;
        let samples: Vec<Vec2> = (-40..=40)
            .map(|k| Vec2::new(2.0 * r * k as f32, 0.0))
            .collect();
        let mut grid = SpatialHashGrid::default();
        grid.build(&samples, settings.support_radius);
        let psi = vec![1.0; samples.len()];
        (samples, psi, grid)
    }

    /// Random motions from above the row (outside its discs) to below it, up to 100 r long, at
    /// every angle: the sweep stops each on the side it started, outside every disc.
    #[test]
    fn no_motion_crosses_a_row_of_samples() {
        let settings = FluidSettings::default();
        let r = settings.particle_radius;
        let (samples, psi, grid) = row(&settings);
        let walls = Walls::new(&settings, (&samples, &psi), &grid);
        let mut seed = 99u64;
        let mut rand = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 40) as f32 / (1u64 << 24) as f32
        };
        let mut scratch = Vec::new();
        for _ in 0..20_000 {
            let a = Vec2::new((rand() - 0.5) * 40.0 * r, walls.radius + rand() * 4.0 * r);
            let b = Vec2::new(a.x + (rand() - 0.5) * 100.0 * r, -rand() * 50.0 * r);
            let end = walls.sweep((a, b), None, &mut scratch, None);
            let end = end.expect("it reaches the row");
            assert!(end.y > 0.0, "{a} → {b} ended at {end}");
            let inside = samples.iter().any(|&k| (end - k).length() < walls.radius);
            assert!(!inside, "{a} → {b} ended inside a disc at {end}");
        }
    }

    /// A particle resting in the cusp between two discs (on both surfaces, the stop point of an
    /// earlier step) and pushed down or sideways into the row stays on its side: sliding along
    /// one disc would enter the other.
    #[test]
    fn no_motion_crosses_from_a_cusp_between_two_discs() {
        let settings = FluidSettings::default();
        let r = settings.particle_radius;
        let (samples, psi, grid) = row(&settings);
        let walls = Walls::new(&settings, (&samples, &psi), &grid);
        let height = (walls.radius * walls.radius - r * r).sqrt();
        let mut scratch = Vec::new();
        for cusp in [
            Vec2::new(r, height),
            Vec2::new(-3.0 * r, height * (1.0 + 1e-6)),
        ] {
            for angle in (0..36).map(|k| k as f32 * 10f32.to_radians()) {
                let b = cusp + 3.0 * r * Vec2::new(angle.cos(), -angle.sin().abs() - 0.1);
                let end = walls.sweep((cusp, b), None, &mut scratch, None);
                let end = end.unwrap_or(b);
                assert!(end.y > 0.0, "{cusp} → {b} ended at {end}");
            }
        }
    }
}
