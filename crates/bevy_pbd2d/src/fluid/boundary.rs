//! Akinci boundary samples (\[AIA+12\] eq. 4): pseudo-mass Ψₖ = ρ0 / Σₗ Wₖₗ, the sum over the
//! boundary samples l within h of k, k included (W(0)), as in the PBF demo. Recomputed when
//! boundary samples are added, removed or moved, and when [`FluidSettings`] change.
//!
//! The rows hold the samples with contact discs first, then the
//! [`BoundaryDensityOnly`] ones
//! ([`SolverState::boundary_contact_count`] says where they start); Ψ is summed over all.

use bevy::prelude::*;

use crate::fluid::components::{BoundaryDensityOnly, BoundaryIndex, BoundaryParticle, PseudoMass};
use crate::fluid::grid::SpatialHashGrid;
use crate::fluid::kernel::CubicSpline;
use crate::fluid::neighbors::NeighborState;
use crate::fluid::settings::FluidSettings;
use crate::particle::Position;
use crate::particle::order::in_previous_order;
use crate::particle::state::SolverState;
use crate::stats::{PbdStats, Phase};

/// Observer: boundary samples were added or removed, or an entity was disabled or enabled.
pub(crate) fn mark_boundary_dirty<E: EntityEvent, B: Bundle>(
    _: On<E, B>,
    mut state: ResMut<SolverState>,
) {
    state.boundary_dirty = true;
}

/// Observer: `E` happened to `B` of an entity that is a boundary sample (it lost a component
/// its row is read from, or its [`BoundaryIndex`] was inserted, not written by the plugin):
/// the rows are rebuilt (samples that only moved keep theirs, [`update_boundary`]).
pub(crate) fn mark_sample_rows_dirty<E: EntityEvent, B: Bundle>(
    changed: On<E, B>,
    samples: Query<(), With<BoundaryParticle>>,
    mut state: ResMut<SolverState>,
) {
    if samples.contains(changed.event_target()) {
        state.boundary_dirty = true;
    }
}

/// Ψ of every sample of `points` (kg), using `grid` built over `points` with cell size h.
pub(crate) fn pseudo_masses(
    points: &[Vec2],
    grid: &SpatialHashGrid,
    kernel: &CubicSpline,
    rest_density: f32,
) -> Vec<f32> {
    let h = kernel.support_radius();
    points
        .iter()
        .map(|&p| {
            let mut sum = 0.0;
            // The sample itself is found at distance 0 and contributes W(0).
            grid.for_each_within(p, h, |_, q| sum += kernel.w((p - q).length()));
            rest_density / sum
        })
        .collect()
}

/// What [`update_boundary`] reads and writes of a sample.
type SampleRow = (
    Entity,
    &'static Position,
    &'static mut PseudoMass,
    &'static mut BoundaryIndex,
    Has<BoundaryDensityOnly>,
);

/// [`PbdStepSystems::Prepare`](crate::PbdStepSystems::Prepare): rebuilds the boundary arrays, grid and
/// Ψ when needed, and writes Ψ to [`PseudoMass`]. When samples only moved (none added,
/// removed, disabled or changed in kind, the settings the same: e.g. the samples of moving
/// bodies' colliders), their rows keep their order, only the moved ones' positions are written
/// and [`PseudoMass`] only where Ψ changed: the same arrays as a rebuild. (A sample taken out
/// of the boundary by a disabling component of the game's own is seen only at the next
/// rebuild.)
pub fn update_boundary(
    settings: Res<FluidSettings>,
    mut state: ResMut<SolverState>,
    mut neighbors: ResMut<NeighborState>,
    mut stats: ResMut<PbdStats>,
    moved: Query<Entity, (With<BoundaryParticle>, Changed<Position>)>,
    mut samples: Query<SampleRow, With<BoundaryParticle>>,
) {
    if !(state.boundary_dirty || settings.is_changed() || !moved.is_empty()) {
        return;
    }
    let started = stats.begin_phase();
    let state = &mut *state;
    state.boundary_generation += 1;
    let moved_only = !state.boundary_dirty
        && !settings.is_changed()
        && move_samples(state, moved.iter(), &samples);
    if !moved_only {
        state.boundary_dirty = false;
        rebuild_rows(state, &mut samples);
    }
    let h = settings.support_radius;
    neighbors.boundary_grid.build(&state.boundary_x, h);
    if state.boundary_contact_count < state.boundary_x.len() {
        let discs = &state.boundary_x[..state.boundary_contact_count];
        neighbors.contact_grid.build(discs, h);
    }
    let kernel = CubicSpline::new(h);
    let psi = pseudo_masses(
        &state.boundary_x,
        &neighbors.boundary_grid,
        &kernel,
        settings.rest_density,
    );
    let before = core::mem::replace(&mut state.boundary_psi, psi);
    for (k, &entity) in state.boundary_entities.iter().enumerate() {
        let psi = state.boundary_psi[k];
        // Only the changed ones, where the rows are kept.
        if moved_only && before.get(k).is_some_and(|b| b.to_bits() == psi.to_bits()) {
            continue;
        }
        if let Ok((_, _, mut pseudo_mass, _, _)) = samples.get_mut(entity) {
            pseudo_mass.0 = psi;
        }
    }
    stats.end_phase(Phase::Sync, started);
}

/// Writes the positions of the `moved` samples to their rows; `false` (some rows may have
/// been written) if one is not a sample the rows are read from or not in the row its
/// [`BoundaryIndex`] names, so that the rows must be rebuilt.
fn move_samples(
    state: &mut SolverState,
    moved: impl Iterator<Item = Entity>,
    samples: &Query<SampleRow, With<BoundaryParticle>>,
) -> bool {
    for entity in moved {
        let Ok((_, position, _, index, _)) = samples.get(entity) else {
            return false;
        };
        let k = index.0 as usize;
        if state.boundary_entities.get(k) != Some(&entity) {
            return false;
        }
        state.boundary_x[k] = position.0;
    }
    true
}

/// Rebuilds the boundary rows from the samples, in their previous order.
fn rebuild_rows(state: &mut SolverState, samples: &mut Query<SampleRow, With<BoundaryParticle>>) {
    // In their previous order, new ones last (see `particle::order`), those with contact discs
    // first: the fluid's sums visit boundary samples in this order.
    let order = in_previous_order(
        samples
            .iter()
            .map(|(entity, _, _, index, _)| (index.0, entity)),
    );
    let (contact, density_only): (Vec<Entity>, Vec<Entity>) = order
        .into_iter()
        .partition(|&e| samples.get(e).is_ok_and(|s| !s.4));
    state.boundary_entities.clear();
    state.boundary_x.clear();
    for entity in contact.iter().chain(&density_only) {
        if let Ok((_, position, _, mut index, _)) = samples.get_mut(*entity) {
            index.0 = state.boundary_entities.len() as u32;
            state.boundary_entities.push(*entity);
            state.boundary_x.push(position.0);
        }
    }
    state.boundary_contact_count = contact.len().min(state.boundary_x.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psi_of_a_straight_row_by_hand() {
        // Samples spaced d = 0.05 m with h = 0.1 m: an interior sample sees itself (q = 0) and
        // its neighbours at q = 0.5 (W = σ(6/8 − 6/4 + 1) = σ/4); samples at q = 1 contribute 0
        // and are outside the strict support. Σ W = σ (1 + 2 · 1/4) = 1.5 σ, σ = 40/(7π h²).
        let h = 0.1;
        let points: Vec<Vec2> = (0..21)
            .map(|i| Vec2::new(-0.5 + 0.05 * i as f32, -3.0))
            .collect();
        let mut grid = SpatialHashGrid::default();
        grid.build(&points, h);
        let kernel = CubicSpline::new(h);
        let psi = pseudo_masses(&points, &grid, &kernel, 1000.0);
        let sigma = 40.0 / (7.0 * core::f32::consts::PI * h * h);
        let interior = 1000.0 / (1.5 * sigma);
        let end = 1000.0 / (1.25 * sigma);
        assert!(
            (psi[10] - interior).abs() < 1e-3 * interior,
            "{} vs {interior}",
            psi[10]
        );
        assert!((psi[0] - end).abs() < 1e-3 * end, "{} vs {end}", psi[0]);
    }
}
