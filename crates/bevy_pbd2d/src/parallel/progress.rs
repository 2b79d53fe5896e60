//! The shared progress of a parallel region ([`run_phases`](crate::parallel::phases::run_phases),
//! [`run_pipeline`](crate::parallel::pipeline::run_pipeline)): which phase runs, which of its blocks are
//! claimed, how much of it is complete, and the decision that moves it on.
//!
//! Threads claim the blocks of the current phase one at a time, from the front or from the
//! back, with a compare-and-swap on one word that also holds the phase's epoch, so a claim
//! made on an outdated view fails. The thread that completes a phase's last piece of work
//! runs the decision (`next`) and publishes the next phase, or [`FINISHED`]. A panic in any
//! piece of work ends the run for every thread, so nobody waits for it forever.

use core::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Mutex;

/// Phase id that ends a run.
pub(crate) const FINISHED: u32 = u32::MAX;

/// Most blocks per phase (the claim counters are 20 bits wide); larger runs are serial.
pub(crate) const MAX_BLOCKS: usize = (1 << 20) - 1;

/// The claim state: epoch (bits 40..64), next block from the front (20..40), one past the
/// next block from the back (0..20).
fn pack(epoch: u64, front: usize, back: usize) -> u64 {
    (epoch << 40) | ((front as u64) << 20) | back as u64
}

/// (epoch, front, back) of a claim state.
fn unpack(state: u64) -> (u64, usize, usize) {
    let mask = (1 << 20) - 1;
    (
        state >> 40,
        ((state >> 20) & mask) as usize,
        (state & mask) as usize,
    )
}

/// What a thread found when it tried to claim a block ([`Progress::claim`]).
pub(crate) enum Claim {
    /// The run is over.
    Finished,
    /// Every block of `phase` (epoch `epoch`) is claimed.
    AllClaimed { phase: u32, epoch: u64 },
    /// This thread claimed `block` of `phase` (epoch `epoch`).
    Block {
        phase: u32,
        epoch: u64,
        block: usize,
    },
    /// Another thread changed the state first: try again.
    Retry,
}

/// Shared progress: `state` packs the phase's epoch and the unclaimed blocks ([`pack`]);
/// `phase` is the id of the epoch's phase; `completed` counts the epoch's finished work.
pub(crate) struct Progress {
    state: AtomicU64,
    phase: AtomicU32,
    completed: AtomicUsize,
    /// Blocks per phase.
    blocks: usize,
}

impl Progress {
    /// The progress of a run of `blocks` blocks per phase (at most [`MAX_BLOCKS`]) that
    /// starts with phase `first`.
    pub fn new(first: u32, blocks: usize) -> Self {
        Self {
            state: AtomicU64::new(pack(0, 0, blocks)),
            phase: AtomicU32::new(first),
            completed: AtomicUsize::new(0),
            blocks,
        }
    }

    /// Tries to claim the current phase's next block from the front (or the back).
    pub fn claim(&self, from_back: bool) -> Claim {
        // `state` before `phase` (`complete` stores them in the other order): a claim of the
        // state read here then always belongs to the phase read next.
        let state = self.state.load(Ordering::Acquire);
        let phase = self.phase.load(Ordering::Acquire);
        if phase == FINISHED {
            return Claim::Finished;
        }
        let (epoch, front, back) = unpack(state);
        if front >= back {
            return Claim::AllClaimed { phase, epoch };
        }
        let (block, claimed) = if from_back {
            (back - 1, pack(epoch, front, back - 1))
        } else {
            (front, pack(epoch, front + 1, back))
        };
        // Fails if another thread took a block or the phase moved on.
        match self
            .state
            .compare_exchange_weak(state, claimed, Ordering::AcqRel, Ordering::Relaxed)
        {
            Ok(_) => Claim::Block {
                phase,
                epoch,
                block,
            },
            Err(_) => Claim::Retry,
        }
    }

    /// Runs `f`; if it panics, ends the run for every thread (nobody waits for it forever),
    /// then propagates the panic.
    pub fn guarded<T>(&self, f: impl FnOnce() -> T) -> T {
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(value) => value,
            Err(panic) => {
                self.phase.store(FINISHED, Ordering::Release);
                resume_unwind(panic);
            }
        }
    }

    /// Counts one finished piece of `phase`'s work, of `pieces`. The thread that finishes the
    /// last one runs `next(phase)` and `reset` (no other thread works meanwhile), then
    /// publishes the next phase with all its blocks unclaimed.
    pub fn complete<N>(&self, phase: u32, pieces: usize, next: &Mutex<N>, reset: impl FnOnce())
    where
        N: FnMut(u32) -> u32,
    {
        if self.completed.fetch_add(1, Ordering::AcqRel) + 1 < pieces {
            return;
        }
        let following = self.guarded(|| match next.lock() {
            Ok(mut next) => next(phase),
            Err(_) => FINISHED,
        });
        reset();
        // Every block is claimed and nobody claims until the store below: `state` is stable.
        let (epoch, _, _) = unpack(self.state.load(Ordering::Relaxed));
        self.completed.store(0, Ordering::Relaxed);
        self.phase.store(following, Ordering::Release);
        let epoch = (epoch + 1) & ((1 << 24) - 1);
        self.state
            .store(pack(epoch, 0, self.blocks), Ordering::Release);
    }
}

/// One round of waiting for another thread: spins at first, then yields (`spins` counts the
/// rounds of this wait; reset it when the wait ends).
pub(crate) fn backoff(spins: &mut u32) {
    *spins += 1;
    if *spins < 256 {
        core::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}
