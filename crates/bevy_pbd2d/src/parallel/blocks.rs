//! Fixed blocks of rows, the thread count of a pass, and the pool the helpers run on.

use bevy::tasks::{ComputeTaskPool, TaskPool};

/// Rows per block of parallel work (small enough that two threads share a 900-particle fluid
/// evenly, large enough that claiming a block costs nothing in comparison).
pub const CHUNK: usize = 64;

/// From this many rows up, the fluid's [`run_phases`](crate::parallel::phases::run_phases) regions use the
/// pool's threads (below, waking them costs more than they save).
pub const PARALLEL_FROM: usize = 512;

/// The thread count for a fluid pass over `rows` rows: 1 below [`PARALLEL_FROM`], otherwise
/// `max_threads` (the pool's size caps it further).
pub fn threads_for(rows: usize, max_threads: usize) -> usize {
    if rows < PARALLEL_FROM { 1 } else { max_threads }
}

/// The compute task pool (initialised with one thread per core when no `TaskPoolPlugin` ran,
/// e.g. in a bare `World`).
pub fn pool() -> &'static TaskPool {
    ComputeTaskPool::get_or_init(TaskPool::default)
}
