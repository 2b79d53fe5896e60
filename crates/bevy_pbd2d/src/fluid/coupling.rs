//! Fluid ↔ solid particles, two-way (\[MMCK14\] §5, §7.1): the particles of a body with
//! [`FluidCoupling`] (cloth, rope, blob) are discs the fluid cannot cross, and every contact
//! is shared by inverse mass, so the fluid pushes them as they push the fluid.
//!
//! In every substep, before the density solve (after the constraints) and again right after
//! it, the fluid particles near each coupled particle k (within h, on the fluid's neighbour
//! grid) that are closer than r + rₖ (the fluid's radius and the particle's
//! [`ParticleRadius`], at most h) are pushed apart to that distance, [`CONTACT_PASSES`]
//! Gauss-Seidel passes in a fixed order (\[MMCK14\] eq. 6–7). The first pass follows each
//! fluid particle's path (from where it began the substep, before the solve; from where the
//! solve began, after it): one that entered a disc is pushed back along the normal where it
//! entered, not out of the side its centre ended on (the solve presses loaded fluid several
//! radii in one substep, and the speed limit allows 0.4 h per substep). The discs are taken
//! where they are at the pass, so a body moving faster than its discs' size per substep can
//! still step over fluid:
//!
//! ```text
//! C = ‖xᵢ − xₖ‖ − (r + rₖ) < 0,  n = (xᵢ − xₖ)/‖xᵢ − xₖ‖
//! Δxᵢ = −wᵢ/(wᵢ + wₖ) C n,  Δxₖ = +wₖ/(wᵢ + wₖ) C n
//! ```
//!
//! so mᵢΔxᵢ + mₖΔxₖ = 0: momentum is conserved contact by contact, and a pinned particle
//! (w = 0) is a wall. The fluid's pressure reaches a body through the fluid particles it
//! presses against it: a column of water weighs on a hammock, a jet pushes a curtain.
//!
//! What it means for a game:
//! - A body holds water where its particles are closer than 2 (r + rₖ): a fluid disc cannot
//!   pass between two of them. Wider gaps are holes the fluid runs through, as through a net.
//!   Under a load the density solve presses fluid hard against the discs, and a disc pushes a
//!   particle out on the side its centre ended on: give a cloth that holds water touching
//!   discs (rₖ = half its spacing). A strip 5 cm apart with rₖ = 2.5 cm held 500 particles of
//!   r = 2.5 cm (1 250 kg, 25 times its own mass) for 2 000 steps of 5 ms with 4 substeps of
//!   20 iterations, stretched 3.3 %; with rₖ = 1 cm, 85 of them got through.
//! - A heavy load needs a stiff body: the cloth's distance constraints are what carries the
//!   water's weight to its pins. With 2 substeps of 10 iterations that strip stretched 11 %
//!   and 110 particles got through, with 1 × 5 (the default) it stretched 7 % and lost the
//!   water. Use substeps ([`SolverSettings`](crate::dynamics::SolverSettings)) or lighter
//!   loads.
//! - Coupled particles are not in the fluid's density: fluid beside a body behaves as at a
//!   free surface (it packs against the discs, with no pressure from the body's side). A body
//!   floats a little deeper than Archimedes says: rigid 0.55 m box blobs at 0.5 and 0.25 ρ0
//!   settled with 55.6 % and 28.6 % of their area under the surface (50 % and 25 %), the
//!   first layer of fluid under them packed into the next (tests/fluid_coupling.rs). Taking
//!   them into the density as moving Akinci samples (\[AIA+12\]) with the density solve's
//!   boundary push handed back after the solve was tried and not kept: the push a front row
//!   of fluid receives over a solve's iterations holds back the whole column behind it, and
//!   handing it to a light curtain (0.1 kg particles, 2.5 kg fluid particles) pulled that row
//!   through the curtain at 16 m/s; 12 % of a jet's momentum was lost to the speed limit.
//!   The samples' mobility would have to enter the Jacobi iterations themselves.
//! - Off by default: without [`FluidCoupling`], nothing here runs and the fluid passes
//!   through cloth, ropes and blobs.
//!
//! \[MMCK14\] Macklin, Müller, Chentanez, Kim: Unified Particle Physics for Real-Time
//! Applications, ACM TOG 33(4), 2014.

use bevy::prelude::*;

use crate::body::BodyParticles;
use crate::collider::components::{ParticleRadius, member_discs};
use crate::fluid::neighbors::NeighborState;
use crate::fluid::settings::FluidSettings;
use crate::particle::{SolverIndex, SolverState};
use crate::stats::{PbdStats, Phase};

/// Gauss-Seidel passes over the fluid–particle contacts, before and after the density solve
/// of each substep: 2.
pub const CONTACT_PASSES: usize = 2;

/// On a body's root ([`ParticleBody`](crate::body::ParticleBody)): its particles meet the
/// fluid, two-way (module docs): they are discs of their [`ParticleRadius`] the fluid cannot
/// cross, and every contact moves both by inverse mass, momentum conserved. Takes effect at
/// the next step; remove it to let the fluid through again.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_pbd2d::prelude::*;
/// # let mut world = World::new();
/// # let mut commands = world.commands();
/// // Touching discs 5 cm apart hold fluid of r = 2.5 cm (the default).
/// let cloth = ClothBuilder { spacing: 0.05, ..default() }.spawn(&mut commands).unwrap();
/// commands.entity(cloth.root).insert(FluidCoupling);
/// for &particle in &cloth.particles {
///     commands.entity(particle).insert(ParticleRadius::new(0.025).unwrap());
/// }
/// ```
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[reflect(Component, Default, Debug, PartialEq)]
pub struct FluidCoupling;

/// The coupled particles of the step and scratch space.
#[derive(Resource, Debug, Default)]
pub(crate) struct CouplingState {
    /// Particle rows of the coupled particles.
    rows: Vec<u32>,
    /// Their radii rₖ (m).
    radius: Vec<f32>,
    /// Scratch: the substep's candidate pairs (entry of `rows`, fluid row), in a fixed order.
    pairs: Vec<(u32, u32)>,
    /// Scratch: the fluid's positions before the density solve (m).
    start: Vec<Vec2>,
}

impl CouplingState {
    /// The particle rows of this step's coupled particles.
    pub(crate) fn discs(&self) -> &[u32] {
        &self.rows
    }
}

/// Whether any particle is coupled to fluid this step.
pub(crate) fn has_coupled_particles(coupling: Res<CouplingState>, state: Res<SolverState>) -> bool {
    !coupling.rows.is_empty() && state.fluid_count > 0
}

/// [`Prepare`](crate::PbdStepSystems::Prepare), after the rows are rebuilt: the particles of
/// the bodies with [`FluidCoupling`] (bodies in entity order).
pub(crate) fn collect_coupled_particles(
    bodies: Query<(Entity, &BodyParticles), With<FluidCoupling>>,
    particles: Query<(&SolverIndex, Option<&ParticleRadius>)>,
    state: Res<SolverState>,
    mut coupling: ResMut<CouplingState>,
    mut stats: ResMut<PbdStats>,
) {
    if bodies.is_empty() && coupling.rows.is_empty() {
        return;
    }
    stats.coupled_contacts = 0;
    let coupling = &mut *coupling;
    coupling.rows.clear();
    coupling.radius.clear();
    let mut bodies: Vec<_> = bodies.iter().collect();
    bodies.sort_by_key(|(entity, _)| *entity);
    for (_, members) in bodies {
        for (row, radius) in member_discs(members, &particles, &state) {
            coupling.rows.push(row);
            coupling.radius.push(radius);
        }
    }
}

/// [`SolveConstraints`](crate::PbdSubstepSystems::SolveConstraints), after the constraints
/// and before the density solve: the fluid–particle contacts, the first pass against the
/// fluid's paths through the substep's prediction, and the fluid's positions the solve
/// starts from (module docs).
pub(crate) fn separate_before_density(
    time: Res<Time>,
    settings: Res<FluidSettings>,
    mut state: ResMut<SolverState>,
    neighbors: Res<NeighborState>,
    mut coupling: ResMut<CouplingState>,
    mut stats: ResMut<PbdStats>,
) {
    let started = stats.begin_phase();
    let coupling = &mut *coupling;
    let dt = time.delta_secs();
    find_pairs(&settings, &state, &neighbors, coupling);
    // Where the fluid began the substep.
    let mut start = core::mem::take(&mut coupling.start);
    start.clear();
    let n = state.fluid_count;
    start.extend((0..n).map(|i| state.substep_start(i, dt)));
    let pushed = separate(&settings, &mut state, coupling, Some(&start));
    start.clear();
    start.extend_from_slice(&state.x[..n]);
    coupling.start = start;
    stats.coupled_contacts = pushed;
    stats.end_phase(Phase::Contacts, started);
}

/// [`SolveConstraints`](crate::PbdSubstepSystems::SolveConstraints), right after the density
/// solve: the fluid–particle contacts, the first pass against the fluid's paths through the
/// solve (module docs).
pub(crate) fn separate_after_density(
    settings: Res<FluidSettings>,
    mut state: ResMut<SolverState>,
    mut coupling: ResMut<CouplingState>,
    mut stats: ResMut<PbdStats>,
) {
    let started = stats.begin_phase();
    let coupling = &mut *coupling;
    let start = core::mem::take(&mut coupling.start);
    let paths = (start.len() == state.fluid_count).then_some(&start[..]);
    stats.coupled_contacts += separate(&settings, &mut state, coupling, paths);
    coupling.start = start;
    stats.end_phase(Phase::Contacts, started);
}

/// The candidate pairs: the fluid rows within h of each coupled particle, on the grid the
/// neighbour search built over the fluid's positions in this substep. Both passes use them: a
/// fluid particle the density solve moves more than h − (r + rₖ) towards a disc from
/// outside h is not checked.
fn find_pairs(
    settings: &FluidSettings,
    state: &SolverState,
    neighbors: &NeighborState,
    coupling: &mut CouplingState,
) {
    coupling.pairs.clear();
    let fluid = state.fluid_count;
    for (k, &row) in coupling.rows.iter().enumerate() {
        let at = state.x[row as usize];
        if !at.is_finite() {
            continue;
        }
        (neighbors.fluid_grid).for_each_within(at, settings.support_radius, |i, _| {
            if (i as usize) < fluid {
                coupling.pairs.push((k as u32, i));
            }
        });
    }
}

/// [`CONTACT_PASSES`] passes over the pairs; returns the pairs pushed apart in the first.
/// With `start` (the fluid's positions where its paths began), the first pass takes a
/// fluid particle whose path from there crossed a disc back to the side it came from: its
/// contact normal is the one where the path first met the disc.
fn separate(
    settings: &FluidSettings,
    state: &mut SolverState,
    coupling: &CouplingState,
    start: Option<&[Vec2]>,
) -> usize {
    let (r, h) = (settings.particle_radius, settings.support_radius);
    let mut pushed = 0;
    for pass in 0..CONTACT_PASSES {
        for &(k, i) in &coupling.pairs {
            let (k, i) = (k as usize, i as usize);
            let row = coupling.rows[k] as usize;
            let reach = (r + coupling.radius[k]).min(h);
            let (wi, wk) = (state.w[i], state.w[row]);
            let total = wi + wk;
            if total <= 0.0 {
                continue;
            }
            let (x, centre) = (state.x[i], state.x[row]);
            // A non-finite particle is the runaway guard's: it must not spread to the other.
            if !(x.is_finite() && centre.is_finite()) {
                continue;
            }
            let swept = start
                .filter(|_| pass == 0)
                .and_then(|s| first_hit(s[i], x, centre, reach));
            let n = match swept {
                Some(n) => n,
                None => {
                    let delta = x - centre;
                    if delta.length_squared() >= reach * reach {
                        continue;
                    }
                    delta
                        .try_normalize()
                        .unwrap_or_else(|| crate::dynamics::coincident::pair_direction(i, row))
                }
            };
            // The fluid particle behind the disc's tangent where it met it: C < 0.
            let c = (x - centre).dot(n) - reach;
            if c >= 0.0 || c.is_nan() {
                continue;
            }
            state.x[i] -= (wi / total) * c * n;
            state.x[row] += (wk / total) * c * n;
            pushed += usize::from(pass == 0);
        }
    }
    pushed
}

/// Where the path `from` → `to` first enters the disc of radius `reach` around `centre`, as
/// the disc's outward normal there; `None` if it starts inside or never enters it.
fn first_hit(from: Vec2, to: Vec2, centre: Vec2, reach: f32) -> Option<Vec2> {
    let (d, f) = (to - from, from - centre);
    let (a, b, c) = (d.dot(d), f.dot(d), f.dot(f) - reach * reach);
    if c <= 0.0 || a <= 0.0 || b >= 0.0 {
        return None;
    }
    let disc = b * b - a * c;
    if disc < 0.0 {
        return None;
    }
    let t = (-b - disc.sqrt()) / a;
    (t <= 1.0).then(|| (f + t * d).normalize_or_zero())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_enters_a_disc_where_it_first_meets_it() {
        let (centre, reach) = (Vec2::ZERO, 1.0);
        // Straight through: enters at (−1, 0), normal −x, whatever side it ends on.
        let through = first_hit(Vec2::new(-3.0, 0.0), Vec2::new(2.0, 0.0), centre, reach);
        assert_eq!(through, Some(Vec2::NEG_X));
        let into = first_hit(Vec2::new(-3.0, 0.0), Vec2::new(-0.5, 0.0), centre, reach);
        assert_eq!(into, Some(Vec2::NEG_X));
        // Obliquely: at y = 0.6 it enters at x = −0.8.
        let oblique = first_hit(Vec2::new(-3.0, 0.6), Vec2::new(3.0, 0.6), centre, reach);
        assert!(oblique.unwrap().distance(Vec2::new(-0.8, 0.6)) < 1e-6);
        // Missing it, stopping short, leaving it, starting inside it: no entry.
        assert_eq!(
            first_hit(Vec2::new(-3.0, 1.5), Vec2::new(3.0, 1.5), centre, reach),
            None
        );
        assert_eq!(
            first_hit(Vec2::new(-3.0, 0.0), Vec2::new(-1.5, 0.0), centre, reach),
            None
        );
        assert_eq!(
            first_hit(Vec2::new(-1.5, 0.0), Vec2::new(-3.0, 0.0), centre, reach),
            None
        );
        assert_eq!(
            first_hit(Vec2::new(0.5, 0.0), Vec2::new(3.0, 0.0), centre, reach),
            None
        );
        assert_eq!(
            first_hit(Vec2::new(-3.0, 0.0), Vec2::new(-3.0, 0.0), centre, reach),
            None
        );
    }
}
