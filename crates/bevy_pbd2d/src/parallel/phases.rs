//! A parallel region that lasts a whole iterative solve: a sequence of phases, each a set of
//! independent blocks of work, with a serial decision between phases.
//!
//! Starting and joining tasks costs tens of microseconds on a loaded or virtual machine (the
//! pool's threads sleep and must be woken), more than one pass over a thousand particles takes.
//! [`run_phases`] wakes the pool's threads at most once ([`team`]: helpers stay awake
//! briefly between regions): every participating thread then claims blocks of
//! the current phase from a shared counter, and the thread that completes a phase's last block
//! runs the decision that picks the next phase (or ends the run) and publishes it. A thread
//! that finds no unclaimed block waits (spinning, then yielding) for the next phase.
//!
//! No thread ever waits for a block that nobody has claimed, so the run completes even if
//! the spawned helpers never get a thread: the calling thread then does every block itself.
//! Each block's result depends only on the phase's inputs, and the decision reads per-block
//! results in block order, so the outcome is bitwise the same whatever the number of threads.
//!
//! Data that one phase reads and another writes lives in [`PhaseShared`]: within a phase it is
//! either only read, or written in disjoint blocks, each by the one thread that claimed it.

use core::cell::UnsafeCell;
use core::marker::PhantomData;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::parallel::blocks::pool;
use crate::parallel::progress::{Claim, FINISHED, MAX_BLOCKS, Progress, backoff};
use crate::parallel::team;

/// The number of threads [`run_phases`] uses for `blocks` blocks and up to `max_threads`: at
/// most as many as the compute task pool has, at least 1.
pub fn threads_used(blocks: usize, max_threads: usize) -> usize {
    max_threads.min(pool().thread_num()).min(blocks).max(1)
}

/// Runs phases of `blocks` blocks each, starting with phase `first`: `work(phase, block)` for
/// every block (on any participating thread), then `next(phase)` once on the thread that
/// completed the phase, which returns the next phase id or [`FINISHED`] (with no blocks, `next`
/// alone runs until then). Uses up to `max_threads` threads, at most as many as the compute
/// task pool has, the calling thread included; with one, or with a single block, everything
/// runs on the calling thread.
pub fn run_phases<W, N>(blocks: usize, max_threads: usize, first: u32, work: W, next: N)
where
    W: Fn(u32, usize) + Sync,
    N: FnMut(u32) -> u32 + Send,
{
    let threads = threads_used(blocks, max_threads);
    if threads == 1 || blocks > MAX_BLOCKS {
        let (mut phase, mut next) = (first, next);
        while phase != FINISHED {
            (0..blocks).for_each(|block| work(phase, block));
            phase = next(phase);
        }
        return;
    }
    let progress = Progress::new(first, blocks);
    let next = Mutex::new(next);
    let joined = AtomicUsize::new(0);
    let helper = || {
        let id = joined.fetch_add(1, Ordering::Relaxed);
        if id + 1 >= threads {
            return; // `threads` are at work already
        }
        // The first helper takes blocks from the back, everyone else from the front: in
        // consecutive phases each block then mostly stays on the same thread (and its data in
        // that core's cache).
        participate(&progress, blocks, &work, &next, id == 0);
    };
    team::run(threads - 1, &helper, &|| {
        participate(&progress, blocks, &work, &next, false);
    });
}

/// Calls `f(first, block)` for the consecutive blocks of `block_len` (≥ 1) elements of `data`
/// (`first` is the block's first index), in parallel on up to `max_threads` threads: a
/// [`run_phases`] run with a single phase.
pub fn for_blocks_mut<T, F>(data: &mut [T], block_len: usize, max_threads: usize, f: F)
where
    T: Send + Sync,
    F: Fn(usize, &mut [T]) + Sync,
{
    let block_len = block_len.max(1);
    let blocks = data.len().div_ceil(block_len);
    let shared = PhaseShared::new(data);
    run_phases(
        blocks,
        max_threads,
        0,
        |_, b| {
            let range = b * block_len..(b + 1) * block_len;
            // SAFETY: the single phase only writes, each block from the thread that claimed it.
            f(range.start, unsafe { shared.block_mut(range) });
        },
        |_| FINISHED,
    );
}

/// One thread's share of a run: claims (from the front or the back) and works blocks until
/// the run is finished.
fn participate<W, N>(progress: &Progress, blocks: usize, work: &W, next: &Mutex<N>, from_back: bool)
where
    W: Fn(u32, usize) + Sync,
    N: FnMut(u32) -> u32,
{
    let mut spins = 0u32;
    loop {
        match progress.claim(from_back) {
            Claim::Finished => return,
            // Wait for the thread finishing the last block.
            Claim::AllClaimed { .. } => backoff(&mut spins),
            Claim::Retry => {}
            Claim::Block { phase, block, .. } => {
                spins = 0;
                progress.guarded(|| work(phase, block));
                progress.complete(phase, blocks, next, || {});
            }
        }
    }
}

/// A slice that the blocks of a [`run_phases`] run share: in any one phase it is either only
/// read (by every block) or only written, each block writing its own disjoint part. (Code that
/// runs blocks one at a time on one thread may mix reads and writes, as long as the borrows
/// that [`read`](Self::read) and [`block_mut`](Self::block_mut) return never overlap in time.)
pub struct PhaseShared<'a, T> {
    cells: &'a [UnsafeCell<T>],
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: access goes through `read` and `block_mut`, whose callers guarantee that no element
// is written while another thread reads or writes it (see the methods).
unsafe impl<T: Send + Sync> Sync for PhaseShared<'_, T> {}

impl<'a, T> PhaseShared<'a, T> {
    /// Shares `slice` for the duration of a run.
    pub fn new(slice: &'a mut [T]) -> Self {
        let len = slice.len();
        // SAFETY: UnsafeCell<T> has the same layout as T, and the exclusive borrow is held for 'a.
        let cells = unsafe { core::slice::from_raw_parts(slice.as_mut_ptr().cast(), len) };
        Self {
            cells,
            _borrow: PhantomData,
        }
    }

    /// The whole slice, for reading.
    ///
    /// # Safety
    /// No thread may write any element during the current phase, and the returned slice must
    /// not be used after the block that asked for it returns.
    pub unsafe fn read(&self) -> &[T] {
        // SAFETY: same layout; the caller guarantees there is no concurrent writer.
        unsafe { core::slice::from_raw_parts(self.cells.as_ptr().cast(), self.cells.len()) }
    }

    /// Elements `range` (clamped to the slice), for reading (the pipeline tests' spans).
    ///
    /// # Safety
    /// No thread may write these elements while the returned slice is in use, and it must not
    /// be used after the block that asked for it returns.
    #[cfg(test)]
    pub unsafe fn read_range(&self, range: core::ops::Range<usize>) -> &[T] {
        let end = range.end.min(self.cells.len());
        let start = range.start.min(end);
        let cells = &self.cells[start..end];
        // SAFETY: same layout; the caller guarantees there is no concurrent writer.
        unsafe { core::slice::from_raw_parts(cells.as_ptr().cast(), cells.len()) }
    }

    /// The first element, for reads through raw pointers of elements that no thread writes
    /// meanwhile (no reference to the whole slice is made, so other elements may be written
    /// by other threads at the same time).
    pub fn as_ptr(&self) -> *const T {
        UnsafeCell::raw_get(self.cells.as_ptr()).cast_const()
    }

    /// Elements `range` (clamped to the slice), for writing.
    ///
    /// # Safety
    /// During the current phase only the calling thread may access these elements, and no
    /// thread may [`read`](Self::read) the slice; the returned slice must not be used after the
    /// block that asked for it returns.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn block_mut(&self, range: core::ops::Range<usize>) -> &mut [T] {
        let end = range.end.min(self.cells.len());
        let start = range.start.min(end);
        let cells = &self.cells[start..end];
        // SAFETY: the caller guarantees exclusive access to these elements in this phase.
        unsafe { core::slice::from_raw_parts_mut(UnsafeCell::raw_get(cells.as_ptr()), cells.len()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Jacobi-style run: phase 0 sums neighbours into `b`, phase 1 copies back, for a data
    /// dependent number of rounds; identical for every thread count.
    fn rounds(threads: usize) -> (Vec<u64>, u32) {
        let n = 1000;
        let mut a: Vec<u64> = (0..n as u64).collect();
        let mut b = vec![0u64; n];
        let mut rounds = 0;
        {
            let (sa, sb) = (PhaseShared::new(&mut a), PhaseShared::new(&mut b));
            run_phases(
                n.div_ceil(64),
                threads,
                0,
                |phase, block| unsafe {
                    let rows = block * 64..(block + 1) * 64;
                    if phase == 0 {
                        let a = sa.read();
                        for (k, out) in sb.block_mut(rows.clone()).iter_mut().enumerate() {
                            let i = rows.start + k;
                            *out = a[i] + a[(i + 1) % n] / 2;
                        }
                    } else {
                        let b = sb.read();
                        let out = sa.block_mut(rows.clone());
                        out.copy_from_slice(&b[rows.start..rows.start + out.len()]);
                    }
                },
                |phase| {
                    if phase == 1 {
                        rounds += 1;
                    }
                    match (phase, rounds) {
                        (0, _) => 1,
                        (_, r) if r < 7 => 0,
                        _ => FINISHED,
                    }
                },
            );
        }
        (a, rounds)
    }

    #[test]
    fn any_thread_count_gives_the_serial_result() {
        let serial = rounds(1);
        assert_eq!(serial.1, 7);
        // Row 0 after 7 rounds of a ← a + next/2 is not trivially 0 or unchanged.
        assert!(serial.0[0] > 0 && serial.0[10] != 10);
        for threads in [2, 3, 8] {
            assert_eq!(rounds(threads), serial, "{threads} threads");
        }
    }

    #[test]
    fn a_panicking_block_ends_the_run_instead_of_hanging() {
        for threads in [1, 2] {
            let result = std::panic::catch_unwind(|| {
                run_phases(16, threads, 0, |_, block| assert!(block != 5), |_| 0);
            });
            assert!(result.is_err(), "{threads} threads");
        }
    }

    #[test]
    fn nested_and_concurrent_regions_complete() {
        let sum = |threads| {
            let mut totals = vec![0u64; 8];
            for_blocks_mut(&mut totals, 1, threads, |b, out| {
                // A region inside a region runs on its calling thread alone.
                let mut inner = vec![0u64; 100];
                for_blocks_mut(&mut inner, 10, threads, |first, block| {
                    for (k, v) in block.iter_mut().enumerate() {
                        *v = (first + k) as u64 * (b as u64 + 1);
                    }
                });
                out[0] = inner.iter().sum();
            });
            totals
        };
        let expected: Vec<u64> = (1..=8).map(|b| 4950 * b).collect();
        assert_eq!(sum(1), expected);
        // Regions from several threads at once take turns or run alone.
        let handles: Vec<_> = (0..3).map(|_| std::thread::spawn(move || sum(2))).collect();
        for handle in handles {
            assert_eq!(handle.join().unwrap(), expected);
        }
    }
}
