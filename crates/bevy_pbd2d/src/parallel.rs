//! Deterministic data parallelism over particle rows: the shared constants and the pool.
//!
//! Work is cut into blocks of a fixed size ([`CHUNK`]) that does not depend on the number of
//! threads, and every per-row result depends only on that row's inputs, so results are bitwise
//! identical whatever the thread count; reductions combine per-block results in block order.
//! The parallel regions themselves are [`phased`](crate::phased) (phases of blocks) and
//! [`team`](crate::team) (pool tasks that stay awake between regions).

use bevy::tasks::{ComputeTaskPool, TaskPool};

/// Rows per block of parallel work (small enough that two threads share a 900-particle fluid
/// evenly, large enough that claiming a block costs nothing in comparison).
pub const CHUNK: usize = 64;

/// From this many rows up, the fluid's [`run_phases`](crate::phased::run_phases) regions use the
/// pool's threads (below, waking them costs more than they save).
pub const PARALLEL_FROM: usize = 512;

/// The thread count for a fluid pass over `rows` rows: 1 below [`PARALLEL_FROM`], otherwise
/// as many as the pool has.
pub fn threads_for(rows: usize) -> usize {
    if rows < PARALLEL_FROM { 1 } else { usize::MAX }
}

/// The compute task pool (initialised with one thread per core when no `TaskPoolPlugin` ran,
/// e.g. in a bare `World`).
pub fn pool() -> &'static TaskPool {
    ComputeTaskPool::get_or_init(TaskPool::default)
}
