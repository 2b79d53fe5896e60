//! Deterministic data parallelism over particle rows.
//!
//! Work is cut into chunks of a fixed size ([`CHUNK`]) that does not depend on the number of
//! threads, and every per-row result depends only on that row's inputs, so results are bitwise
//! identical whatever the thread count. Reductions combine per-chunk partial results in chunk
//! order.

use bevy::tasks::{ComputeTaskPool, ParallelSliceMut, TaskPool};

/// Rows per parallel task.
pub const CHUNK: usize = 256;

/// Below this many rows work runs on the calling thread: a parallel pass over fewer rows takes
/// tens of microseconds, about what starting and joining its tasks costs (measured with the
/// benchmark on the 30 × 30 dam break: no gain from a second thread at 900 particles).
pub const SERIAL_BELOW: usize = 16 * CHUNK;

/// The compute task pool (initialised with one thread when no `TaskPoolPlugin` ran, e.g. in a
/// bare `World`).
pub fn pool() -> &'static TaskPool {
    ComputeTaskPool::get_or_init(TaskPool::default)
}

/// Calls `f(first_row, chunk)` for fixed-size chunks of `out`, in parallel, and returns the
/// per-chunk results in chunk order.
pub fn for_chunks<T, R, F>(mut out: &mut [T], f: F) -> Vec<R>
where
    T: Send,
    R: Send + 'static,
    F: Fn(usize, &mut [T]) -> R + Send + Sync,
{
    if out.len() < SERIAL_BELOW {
        return out
            .chunks_mut(CHUNK)
            .enumerate()
            .map(|(i, c)| f(i * CHUNK, c))
            .collect();
    }
    out.par_chunk_map_mut(pool(), CHUNK, |i, c| f(i * CHUNK, c))
}

/// Calls `f(index, item)` for every item, one parallel task per item (items are blocks of
/// work, one per [`CHUNK`] rows); runs serially for fewer than [`SERIAL_BELOW`] rows.
pub fn for_each_item<T, F>(mut items: &mut [T], f: F)
where
    T: Send,
    F: Fn(usize, &mut T) + Send + Sync,
{
    if items.len() * CHUNK < SERIAL_BELOW {
        items
            .iter_mut()
            .enumerate()
            .for_each(|(i, item)| f(i, item));
        return;
    }
    items.par_chunk_map_mut(pool(), 1, |i, item| f(i, &mut item[0]));
}

/// Calls `f(c, item, rows)` for every item c with its block `rows[c·CHUNK .. (c+1)·CHUNK]`, one
/// parallel task per item, and returns the results in item order. `rows` must have at most
/// `items.len() · CHUNK` elements.
pub fn for_items_with_rows<A, B, R, F>(items: &mut [A], rows: &mut [B], f: F) -> Vec<R>
where
    A: Send,
    B: Send,
    R: Send + 'static,
    F: Fn(usize, &mut A, &mut [B]) -> R + Send + Sync,
{
    let serial = items.len() * CHUNK < SERIAL_BELOW;
    let pairs = items.iter_mut().zip(rows.chunks_mut(CHUNK)).enumerate();
    if serial {
        return pairs.map(|(c, (item, rows))| f(c, item, rows)).collect();
    }
    let f = &f;
    pool().scope(|scope| {
        for (c, (item, rows)) in pairs {
            scope.spawn(async move { f(c, item, rows) });
        }
    })
}
