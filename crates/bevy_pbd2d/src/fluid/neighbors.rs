//! Neighbour lists of the fluid particles, built each step from the
//! [`SpatialHashGrid`]s over the fluid and the boundary samples, in blocks of [`CHUNK`] rows and
//! padded to the SIMD batches of the XSPH pass (the density solve walks a slot-major copy, rows
//! 8 at a time).

use bevy::prelude::*;

use crate::collider::layers::CollisionFilter;

use crate::fluid::grid::SpatialHashGrid;
use crate::fluid::kernel::LANES;
pub(crate) use crate::fluid::neighbor_lists::NeighborLists;
use crate::fluid::settings::FluidSettings;
use crate::fluid::slots::SlotLists;
use crate::parallel::SolverThreads;
use crate::parallel::phases::for_blocks_mut;
use crate::parallel::{CHUNK, threads_for};
use crate::particle::state::SolverState;
use crate::stats::{PbdStats, Phase};

/// The neighbour lists of a block of [`CHUNK`] consecutive fluid rows ([`NeighborLists`], which
/// it dereferences to) and their slot-major copy for the density solve.
#[derive(Debug, Default, Clone, Deref)]
pub struct NeighborChunk {
    /// The chunk's rows' lists (written through [`NeighborChunk::lists_mut`]).
    #[deref]
    lists: NeighborLists,
    /// The slot-major copy of the lists and the per-pair scratch of the density solve (its
    /// first density pass rebuilds them from the lists above).
    pub(crate) slots: SlotLists,
    /// The first row, rows, fluid rows and boundary samples for which the lists were last
    /// found well formed ([`NeighborChunk::fits`]); `None` once they are written.
    checked: Option<[usize; 4]>,
}

impl NeighborChunk {
    /// Rebuilds the slot-major copy of the lists (the chunk's first row is `first_row`).
    pub(crate) fn build_slots(&mut self, first_row: usize) {
        self.slots.build(&self.lists, first_row);
    }

    /// The lists, to write: they are checked again at the next [`NeighborChunk::fits`].
    pub(crate) fn lists_mut(&mut self) -> &mut NeighborLists {
        self.checked = None;
        &mut self.lists
    }

    /// [`NeighborLists::indices_within`], checked once for the lists as written and these
    /// arguments: the density solve asks in each of its calls (several per substep), the lists
    /// change once per substep.
    pub(crate) fn fits(
        &mut self,
        first_row: usize,
        rows: usize,
        fluid: usize,
        boundary: usize,
    ) -> bool {
        let key = [first_row, rows, fluid, boundary];
        if self.checked == Some(key) {
            return true;
        }
        let fits = self.lists.indices_within(first_row, rows, fluid, boundary);
        self.checked = fits.then_some(key);
        fits
    }
}

/// Whether `chunks` has one chunk per block of [`CHUNK`] of the `n` fluid rows and `each(chunk,
/// first row, rows)` holds for every block.
pub(crate) fn chunks_fit(
    chunks: &[NeighborChunk],
    n: usize,
    each: impl Fn(&NeighborChunk, usize, usize) -> bool,
) -> bool {
    blocks_fit(chunks.iter(), n, each)
}

/// Whether `chunks` are well formed for the density solve's unchecked reads, `n` fluid rows
/// and `boundary` samples: [`chunks_fit`] with [`NeighborChunk::fits`] (each block's check
/// kept until its lists are written).
pub(crate) fn lists_fit(chunks: &mut [NeighborChunk], n: usize, boundary: usize) -> bool {
    blocks_fit(chunks.iter_mut(), n, |chunk, first, rows| {
        chunk.fits(first, rows, n, boundary)
    })
}

/// [`chunks_fit`] over shared or exclusive chunks.
fn blocks_fit<C>(
    chunks: impl ExactSizeIterator<Item = C>,
    n: usize,
    mut each: impl FnMut(C, usize, usize) -> bool,
) -> bool {
    chunks.len() == n.div_ceil(CHUNK)
        && (chunks.enumerate()).all(|(c, chunk)| each(chunk, c * CHUNK, CHUNK.min(n - c * CHUNK)))
}

/// Grids and neighbour lists of the current step (the fluid plugin's scratch; read the lists
/// with [`NeighborState::fluid_neighbors`]).
#[derive(Resource, Debug, Default)]
pub struct NeighborState {
    /// Grid over fluid particle positions (rebuilt every step).
    pub(crate) fluid_grid: SpatialHashGrid,
    /// Grid over boundary samples (rebuilt when they change).
    pub(crate) boundary_grid: SpatialHashGrid,
    /// Grid over the boundary samples with contact discs, when some have none
    /// ([`BoundaryDensityOnly`](crate::fluid::BoundaryDensityOnly)); else unused.
    pub(crate) contact_grid: SpatialHashGrid,
    /// Neighbour lists, one entry per [`CHUNK`] fluid rows.
    pub(crate) chunks: Vec<NeighborChunk>,
}

impl NeighborState {
    /// The grid over the boundary rows `..discs` of `samples` (the samples with contact
    /// discs, [`SolverState::boundary_contact_count`]).
    pub(crate) fn contact_grid(&self, discs: usize, samples: usize) -> &SpatialHashGrid {
        if discs < samples {
            &self.contact_grid
        } else {
            &self.boundary_grid
        }
    }

    /// How full the density solve's 8-lane slots were in its last solve: its passes take the
    /// rows 8 at a time, one per lane, and walk their lists side by side, so each group of 8
    /// rows takes as many slots (8 lanes each) as its longest list. Counted from the slots the
    /// last solve built: between [`find_fluid_neighbors`] and the next solve they lag the
    /// lists.
    pub fn slot_fill(&self) -> SlotFill {
        let mut fill = SlotFill::default();
        for [(pairs, lanes), (boundary_pairs, boundary_lanes)] in
            self.chunks.iter().map(|c| c.slots.fill())
        {
            fill.fluid_pairs += pairs;
            fill.fluid_lanes += lanes;
            fill.boundary_pairs += boundary_pairs;
            fill.boundary_lanes += boundary_lanes;
        }
        fill
    }

    /// The fluid neighbours (rows, the row itself excluded) found in the last step for fluid
    /// row `row`, in the order the density solve sums them; empty for a row past the fluid.
    pub fn fluid_neighbors(&self, row: usize) -> &[u32] {
        self.chunks
            .get(row / CHUNK)
            .filter(|chunk| row % CHUNK < chunk.fluid_count.len())
            .map_or(&[], |chunk| chunk.fluid_of(row % CHUNK))
    }

    /// The boundary samples (boundary rows) found within h of fluid row `row` in the last
    /// step; empty for a row past the fluid.
    pub fn boundary_neighbors(&self, row: usize) -> &[u32] {
        self.chunks
            .get(row / CHUNK)
            .filter(|chunk| row % CHUNK + 1 < chunk.boundary_start.len())
            .map_or(&[], |chunk| chunk.boundary_of(row % CHUNK))
    }
}

/// Pairs and lanes of the density solve's slots ([`NeighborState::slot_fill`]): each pass
/// evaluates every lane, padding included.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SlotFill {
    /// Fluid–fluid pairs (each row's fluid neighbours, summed over the rows).
    pub fluid_pairs: u64,
    /// Lanes of the fluid slots: 8 per slot, the pairs and the padding.
    pub fluid_lanes: u64,
    /// Fluid–boundary pairs.
    pub boundary_pairs: u64,
    /// Lanes of the boundary slots.
    pub boundary_lanes: u64,
}

/// Fills `chunks` with the fluid and boundary neighbours (within `h`) of fluid rows
/// `0..fluid.len()`, on up to `max_threads` threads from [`PARALLEL_FROM`](crate::parallel::PARALLEL_FROM) rows
/// up, reusing the chunks' buffers.
pub fn find_neighbors(
    chunks: &mut Vec<NeighborChunk>,
    fluid_grid: &SpatialHashGrid,
    fluid: &[Vec2],
    boundary_grid: &SpatialHashGrid,
    h: f32,
    max_threads: usize,
) {
    chunks.resize_with(fluid.len().div_ceil(CHUNK), NeighborChunk::default);
    let threads = threads_for(fluid.len(), max_threads);
    for_blocks_mut(chunks, 1, threads, |c, chunk| {
        fill_chunk(&mut chunk[0], c, fluid_grid, fluid, boundary_grid, h);
    });
}

/// Fills the neighbour lists of the c-th block of [`CHUNK`] fluid rows.
fn fill_chunk(
    chunk: &mut NeighborChunk,
    c: usize,
    fluid_grid: &SpatialHashGrid,
    fluid: &[Vec2],
    boundary_grid: &SpatialHashGrid,
    h: f32,
) {
    let lists = chunk.lists_mut();
    lists.fluid.clear();
    lists.boundary.clear();
    lists.fluid_start.clear();
    lists.fluid_count.clear();
    lists.boundary_start.clear();
    lists.fluid_start.push(0);
    lists.boundary_start.push(0);
    for (i, &p) in fluid.iter().enumerate().skip(c * CHUNK).take(CHUNK) {
        let start = lists.fluid.len();
        fluid_grid.collect_within(p, h, i as u32, &mut lists.fluid);
        lists.fluid_count.push((lists.fluid.len() - start) as u32);
        let padded = lists.fluid.len().next_multiple_of(LANES);
        lists.fluid.resize(padded, i as u32);
        boundary_grid.collect_within(p, h, u32::MAX, &mut lists.boundary);
        lists.fluid_start.push(lists.fluid.len() as u32);
        lists.boundary_start.push(lists.boundary.len() as u32);
    }
}

/// [`PbdSubstepSystems::FindNeighbors`](crate::schedule::PbdSubstepSystems::FindNeighbors): grid over the predicted
/// fluid positions and neighbour lists (fluid and boundary) of every fluid particle.
pub fn find_fluid_neighbors(
    settings: Res<FluidSettings>,
    state: Res<SolverState>,
    mut neighbors: ResMut<NeighborState>,
    threads: Res<SolverThreads>,
    filter: Option<Res<CollisionFilter>>,
    mut stats: ResMut<PbdStats>,
) {
    let started = stats.begin_phase();
    stats.boundary_particles = state.boundary_x.len();
    let neighbors = &mut *neighbors;
    let fluid = &state.x[..state.fluid_count];
    let h = settings.support_radius;
    neighbors.fluid_grid.build(fluid, h);
    find_neighbors(
        &mut neighbors.chunks,
        &neighbors.fluid_grid,
        fluid,
        &neighbors.boundary_grid,
        h,
        threads.cap(),
    );
    // Collision layers: a fluid particle takes no density from the samples of a collider it
    // does not interact with (it passes that collider).
    if let Some(filter) = filter.filter(|f| f.active()) {
        for (c, chunk) in neighbors.chunks.iter_mut().enumerate() {
            (chunk.lists_mut())
                .retain_boundary(|k, sample| filter.sees_sample(c * CHUNK + k, sample as usize));
        }
    }
    stats.end_phase(Phase::Neighbors, started);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fluid::grid::test_points::*;
    use crate::fluid::slots::{GROUP, Slot, SlotLists};

    /// The lists of 150 random fluid rows in a 0.4 m square (two full chunks and a partial one
    /// with a partial last group) and 40 boundary samples along its lower edge, h = 0.1 m.
    fn random_chunks(seed: u64) -> Vec<NeighborChunk> {
        let h = 0.1;
        let mut seed = seed;
        let fluid: Vec<Vec2> = (0..150)
            .map(|_| Vec2::new(lcg(&mut seed), lcg(&mut seed)) * 0.4)
            .collect();
        let boundary: Vec<Vec2> = (0..40).map(|k| Vec2::new(k as f32 * 0.01, 0.0)).collect();
        let (mut fg, mut bg) = (SpatialHashGrid::default(), SpatialHashGrid::default());
        fg.build(&fluid, h);
        bg.build(&boundary, h);
        let mut chunks = Vec::new();
        find_neighbors(&mut chunks, &fg, &fluid, &bg, h, usize::MAX);
        chunks
    }

    #[test]
    fn slots_hold_each_rows_lists_in_its_lane() {
        let chunks = random_chunks(11);
        let mut narrow_chunks = 0;
        for (c, chunk) in chunks.iter().enumerate() {
            let mut slots = SlotLists::default();
            slots.build(chunk, c * CHUNK);
            narrow_chunks += usize::from(!slots.wide());
            // The same lists with rows instead of offsets (and back: reused buffers).
            let mut wide = SlotLists::default();
            wide.build_with(chunk, c * CHUNK, 10);
            assert!(
                wide.wide(),
                "a spread of 10 rows is too narrow for 150 random points"
            );
            assert_eq!(wide.fluid_slots(), slots.fluid_slots());
            let all_rows = |s: &SlotLists| {
                // SAFETY: every `at` < fluid_slots().
                let rows = (0..s.fluid_slots()).map(|at| unsafe { s.fluid_rows(at) });
                rows.collect::<Vec<_>>()
            };
            assert_eq!(all_rows(&wide), all_rows(&slots), "chunk {c}");
            wide.build(chunk, c * CHUNK);
            assert!(!wide.wide() && wide.fluid_wide.is_empty());
            assert_eq!(all_rows(&wide), all_rows(&slots), "chunk {c} rebuilt");
            let rows = chunk.fluid_count.len();
            assert_eq!(slots.groups(), rows.div_ceil(GROUP));
            for g in 0..slots.groups() {
                let [fluid_count, boundary_count] = slots.counts[g].map(|v| v.to_array());
                // SAFETY: g < groups().
                let (fluid_range, boundary_range) = unsafe { slots.ranges(g) };
                let fluid_slots = &all_rows(&slots)[fluid_range];
                let boundary_slots = &slots.boundary[boundary_range];
                for l in 0..GROUP {
                    let k = g * GROUP + l;
                    let row = slots.rows[g][l] as usize;
                    if k >= rows {
                        assert_eq!(row, c * CHUNK + rows - 1, "spare lane");
                        assert_eq!((fluid_count[l], boundary_count[l]), (0.0, 0.0));
                        continue;
                    }
                    assert_eq!(row, c * CHUNK + k);
                    let lane = |s: &[Slot]| s.iter().map(|s| s[l]).collect::<Vec<_>>();
                    let (f, b) = (lane(fluid_slots), lane(boundary_slots));
                    let (nf, nb) = (fluid_count[l] as usize, boundary_count[l] as usize);
                    assert_eq!(f[..nf], *chunk.fluid_of(k), "row {row}");
                    assert_eq!(b[..nb], *chunk.boundary_of(k), "row {row}");
                    assert!(f[nf..].iter().all(|&j| j as usize == row), "fluid padding");
                    assert!(b[nb..].iter().all(|&j| j == 0), "boundary padding");
                }
                // As many slots as the longest list.
                let longest = |counts: [f32; GROUP]| counts.into_iter().fold(0.0, f32::max);
                assert_eq!(fluid_slots.len(), longest(fluid_count) as usize);
                assert_eq!(boundary_slots.len(), longest(boundary_count) as usize);
            }
        }
        assert_eq!(narrow_chunks, chunks.len(), "150 rows fit offsets");
    }

    #[test]
    fn malformed_lists_are_detected() {
        let h = 0.1;
        let points: Vec<Vec2> = (0..50).map(|k| Vec2::new(0.03 * k as f32, 0.0)).collect();
        let mut grid = SpatialHashGrid::default();
        grid.build(&points, h);
        let mut chunks = Vec::new();
        find_neighbors(
            &mut chunks,
            &grid,
            &points,
            &SpatialHashGrid::default(),
            h,
            usize::MAX,
        );
        let rows = chunks[0].fluid_count.len();
        assert!(chunks[0].indices_within(0, rows, points.len(), 0));
        assert!(!chunks[0].indices_within(0, rows - 1, points.len(), 0));
        assert!(
            !chunks[0].indices_within(1, rows, points.len(), 0),
            "padding of another row"
        );
        // An index past the fluid rows, a boundary index with no samples, a broken range.
        let mut bad = chunks[0].lists.clone();
        bad.fluid[0] = points.len() as u32;
        assert!(!bad.indices_within(0, rows, points.len(), 0));
        let mut bad = chunks[0].lists.clone();
        bad.boundary.push(0);
        *bad.boundary_start.last_mut().unwrap() += 1;
        assert!(!bad.indices_within(0, rows, points.len(), 0));
        let mut bad = chunks[0].lists.clone();
        bad.fluid_start[1] += 1;
        assert!(!bad.indices_within(0, rows, points.len(), 0));
        let mut bad = chunks[0].lists.clone();
        bad.fluid_count[0] = bad.fluid_start[1] + 1;
        assert!(!bad.indices_within(0, rows, points.len(), 0));

        // The solve's check is kept for the lists as written and its arguments only.
        let chunk = &mut chunks[0];
        assert!(chunk.fits(0, rows, points.len(), 0));
        assert!(chunk.fits(0, rows, points.len(), 0), "kept");
        assert!(!chunk.fits(0, rows - 1, points.len(), 0), "another block");
        assert!(chunk.fits(0, rows, points.len(), 0));
        chunk.lists_mut().fluid[0] = points.len() as u32;
        assert!(
            !chunk.fits(0, rows, points.len(), 0),
            "written after the check"
        );
    }

    /// The slots' fill counts each row's real pairs once and, per group of 8 rows, 8 lanes
    /// per slot of its longest list, fluid and boundary apart.
    #[test]
    fn slot_fill_counts_pairs_and_padded_lanes() {
        let mut state = NeighborState {
            chunks: random_chunks(5),
            ..default()
        };
        for (c, chunk) in state.chunks.iter_mut().enumerate() {
            chunk.build_slots(c * CHUNK);
        }
        let mut want = SlotFill::default();
        for group in (0..150).collect::<Vec<_>>().chunks(GROUP) {
            // Groups never straddle chunks (CHUNK is a multiple of GROUP).
            let state = &state;
            let lengths = |list: fn(&NeighborState, usize) -> &[u32]| {
                group.iter().map(move |&i| list(state, i).len() as u64)
            };
            let (fluid_lengths, boundary_lengths) = (
                lengths(NeighborState::fluid_neighbors),
                lengths(NeighborState::boundary_neighbors),
            );
            want.fluid_pairs += fluid_lengths.clone().sum::<u64>();
            want.fluid_lanes += GROUP as u64 * fluid_lengths.max().unwrap_or(0);
            want.boundary_pairs += boundary_lengths.clone().sum::<u64>();
            want.boundary_lanes += GROUP as u64 * boundary_lengths.max().unwrap_or(0);
        }
        assert!(want.boundary_pairs > 0 && want.fluid_lanes > want.fluid_pairs);
        assert_eq!(state.slot_fill(), want);
    }

    #[test]
    fn chunked_lists_equal_grid_queries() {
        let h = 0.1;
        let mut seed = 3;
        let fluid: Vec<Vec2> = (0..1000)
            .map(|_| Vec2::new(lcg(&mut seed) - 0.5, lcg(&mut seed) - 0.5))
            .collect();
        let boundary: Vec<Vec2> = (0..300)
            .map(|_| Vec2::new(lcg(&mut seed) - 0.5, lcg(&mut seed) - 0.5))
            .collect();
        let (mut fg, mut bg) = (SpatialHashGrid::default(), SpatialHashGrid::default());
        fg.build(&fluid, h);
        bg.build(&boundary, h);
        let mut chunks = Vec::new();
        find_neighbors(&mut chunks, &fg, &fluid, &bg, h, usize::MAX);
        for i in 0..fluid.len() {
            let chunk = &chunks[i / CHUNK];
            // Whole batches, padded with the particle itself.
            assert_eq!(chunk.fluid.len() % LANES, 0);
            let k = i % CHUNK;
            let padded = chunk.fluid_start[k] as usize..chunk.fluid_start[k + 1] as usize;
            let real = chunk.fluid_count[k] as usize;
            assert!(padded.len() - real < LANES);
            assert!(chunk.fluid[padded][real..].iter().all(|&j| j as usize == i));
            let rows = chunk.fluid_count.len();
            assert!(chunk.indices_within(i / CHUNK * CHUNK, rows, fluid.len(), boundary.len()));
            let mut f = chunk.fluid_of(i % CHUNK).to_vec();
            f.sort_unstable();
            assert_eq!(f, brute(&fluid, i, h));
            let mut b = chunk.boundary_of(i % CHUNK).to_vec();
            b.sort_unstable();
            let expected: Vec<u32> = (0..boundary.len() as u32)
                .filter(|&k| (fluid[i] - boundary[k as usize]).length_squared() < h * h)
                .collect();
            assert_eq!(b, expected);
        }
    }
}
