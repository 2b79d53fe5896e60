//! Fluid rows re-sorted by grid cell now and then ([`FluidSettings::resort_interval`]).
//!
//! The density solve walks the fluid rows in blocks of 64 and reads each row's neighbours'
//! positions and λ by row index: it runs fastest when neighbours in space are neighbours in the
//! rows, as a freshly spawned block of fluid is. As the fluid mixes, its rows lose that order
//! and every neighbour read goes further in memory: the 100 × 100 dam break's solve costs
//! 19.5 ns per particle-iteration after 1 500 steps against 10.8–11.4 in its first steps, and
//! 13.6–14.1 re-sorted every 10 to 100 steps (2 threads; the bench README's table).
//!
//! A re-sort puts the rows back in the order of their grid cell (cells of the support radius h,
//! (⌊y/h⌋, ⌊x/h⌋) row-major, as the dam break spawns its particles; rows of one cell keep their
//! order), through the particles' [`SolverIndex`]: the rows are then rebuilt as after a spawn,
//! from the components, so no particle moves and the entity ↔ row map stays right. Row-major
//! rather than a Z-order curve (not tried): a Z-order curve puts some neighbours half the fluid
//! apart in the rows, which would lengthen the pipelined solve's reach
//! ([`density`](crate::fluid::density)).
//!
//! The order decides the bits of the results (the sums run in row order), so a re-sort changes
//! them, the same way for any thread count. Off by default (the PBF demo's rows).

use bevy::prelude::*;

use crate::fluid::settings::FluidSettings;
use crate::particle::{FluidParticle, Particle, Position, SolverIndex, SolverState};
use crate::stats::PbdStats;

/// The fluid particles a re-sort orders.
type FluidRows<'w, 's> = Query<
    'w,
    's,
    (Entity, &'static Position, &'static mut SolverIndex),
    (With<FluidParticle>, With<Particle>),
>;

/// A fluid particle to order: its cell (row, column), its row so far, the entity.
type SortKey = ((i32, i32), u32, Entity);

/// Every [`FluidSettings::resort_interval`] steps, writes the fluid particles' [`SolverIndex`]
/// in grid-cell order (module docs) and has the rows rebuilt in that order.
pub(crate) fn resort_fluid_rows(
    settings: Res<FluidSettings>,
    stats: Res<PbdStats>,
    mut state: ResMut<SolverState>,
    mut fluid: FluidRows,
    mut keys: Local<Vec<SortKey>>,
) {
    let interval = u64::from(settings.resort_interval);
    if interval == 0 || stats.steps == 0 || !stats.steps.is_multiple_of(interval) {
        return;
    }
    let inv_h = 1.0 / settings.support_radius;
    // f32 → i32 saturates (NaN: 0): a particle far outside sorts first or last.
    let cell = |p: Vec2| ((p.y * inv_h).floor() as i32, (p.x * inv_h).floor() as i32);
    keys.clear();
    keys.extend(
        fluid
            .iter()
            .map(|(entity, position, index)| (cell(position.0), index.0, entity)),
    );
    // By cell, then by row so far (new particles, u32::MAX, last in their cell).
    keys.sort_unstable_by_key(|&(cell, row, entity)| (cell, row, entity));
    // Already in that order (or no fluid): nothing to rebuild.
    if keys
        .iter()
        .enumerate()
        .all(|(rank, key)| key.1 == rank as u32)
    {
        return;
    }
    for (rank, &(_, _, entity)) in keys.iter().enumerate() {
        if let Ok((_, _, mut index)) = fluid.get_mut(entity) {
            index.0 = rank as u32;
        }
    }
    state.particles_dirty = true;
}
