//! Helper threads for parallel regions ([`run_phases`](crate::parallel::phases::run_phases),
//! [`run_pipeline`](crate::parallel::pipeline::run_pipeline)) that stay awake between regions.
//!
//! A compute-pool thread that has parked takes from 20 µs to over 150 µs to wake on a virtual
//! machine (measured here: 21 µs best, 159 µs mean), longer than a whole density pass over a
//! thousand particles. A step runs several regions back to back (neighbour search, density
//! solve, XSPH) and steps follow each other closely, so a helper task, once started on the
//! pool, keeps polling for the next region for a while after its last one (`LINGER_NANOS`) before it returns
//! its thread to the pool.
//!
//! A region is published as a type-erased pointer to its participation closure. The caller
//! keeps the closure alive until it has withdrawn the region and no helper is inside it
//! ([`run`]), which is what makes the erased pointer sound.

use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use core::time::Duration;
use std::sync::Mutex;

use bevy::platform::time::Instant;

use bevy::prelude::*;

use crate::parallel::blocks::pool;
use crate::parallel::progress::backoff;
use crate::parallel::settings::SolverThreads;

/// How long (ns) an idle helper keeps polling for the next region before it returns its thread
/// ([`SolverThreads::helper_linger`](crate::SolverThreads::helper_linger), set by
/// [`set_linger`]; 200 µs until then).
static LINGER_NANOS: AtomicU64 = AtomicU64::new(200_000);

/// Sets how long idle helpers linger (process-wide, like the helpers themselves).
pub(crate) fn set_linger(linger: Duration) {
    let nanos = u64::try_from(linger.as_nanos()).unwrap_or(u64::MAX);
    LINGER_NANOS.store(nanos, Ordering::Relaxed);
}

/// A region's participation closure with its lifetime erased (see the module docs).
#[derive(Clone, Copy)]
struct Region(*const (dyn Fn() + Sync + 'static));

// SAFETY: the closure is `Sync`, and `run` keeps it alive while helpers can reach it.
unsafe impl Send for Region {}

/// The process-wide set of helpers.
struct Team {
    /// Bumped whenever a region is published.
    generation: AtomicU64,
    /// The current region, if any.
    region: Mutex<Option<Region>>,
    /// Helpers inside a region right now.
    inside: AtomicUsize,
    /// Helper tasks alive (working or lingering).
    alive: AtomicUsize,
    /// The panic of a helper's call in the current region, re-raised by the caller.
    panic: Mutex<Option<Box<dyn core::any::Any + Send>>>,
}

static TEAM: Team = Team {
    generation: AtomicU64::new(0),
    region: Mutex::new(None),
    inside: AtomicUsize::new(0),
    alive: AtomicUsize::new(0),
    panic: Mutex::new(None),
};

/// Runs `own` on the calling thread and `participate` on the lingering pool threads (starting
/// helpers until `helpers` are alive), returning once `own` has returned and no helper is still
/// inside `participate`. `own` must be able to complete the work alone; `participate` must be
/// safe to call any number of times, concurrently, and also after the work is done (it then
/// returns at once); it limits how many helpers take part.
///
/// # Panics
/// If a helper's call panicked (after the calling thread's call returned).
pub fn run(helpers: usize, participate: &(dyn Fn() + Sync), own: &dyn Fn()) {
    // Only one region at a time: regions started from several threads at once take turns.
    // A region started while another runs (from another thread, or nested inside one) runs on
    // its calling thread alone: `own` completes the work by itself.
    static EXCLUSIVE: Mutex<()> = Mutex::new(());
    let _turn = match EXCLUSIVE.try_lock() {
        Ok(turn) => turn,
        Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return own(),
    };
    // SAFETY (lifetime erasure): the region is withdrawn, and every helper that could have
    // seen it has left it, before this function returns (below).
    let erased: *const (dyn Fn() + Sync + 'static) =
        unsafe { core::mem::transmute(participate as *const (dyn Fn() + Sync)) };
    lock(&TEAM.panic).take();
    *lock(&TEAM.region) = Some(Region(erased));
    TEAM.generation.fetch_add(1, Ordering::SeqCst);
    // Withdraws the region and waits for the helpers inside it, also when unwinding.
    let withdraw = Withdraw;
    let alive = TEAM.alive.load(Ordering::SeqCst);
    for _ in alive..helpers {
        TEAM.alive.fetch_add(1, Ordering::SeqCst);
        pool().spawn(async { linger() }).detach();
    }
    own();
    drop(withdraw);
    if let Some(panic) = lock(&TEAM.panic).take() {
        std::panic::resume_unwind(panic);
    }
}

/// Withdraws the current region when dropped, then waits until no helper is inside it.
struct Withdraw;

impl Drop for Withdraw {
    fn drop(&mut self) {
        *lock(&TEAM.region) = None;
        let mut spins = 0u32;
        while TEAM.inside.load(Ordering::SeqCst) != 0 {
            backoff(&mut spins);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A helper task: joins every region published while it is alive; returns after the linger
/// time (`LINGER_NANOS`) without one.
fn linger() {
    let mut seen = 0;
    let mut idle_since = Instant::now();
    let mut polls = 0u32;
    loop {
        let generation = TEAM.generation.load(Ordering::SeqCst);
        if generation != seen {
            seen = generation;
            TEAM.inside.fetch_add(1, Ordering::SeqCst);
            let region = *lock(&TEAM.region);
            if let Some(Region(participate)) = region {
                // SAFETY: the region is still published, so `run` has not returned, and it
                // will not before `inside` drops back (see `run`).
                let call = || unsafe { (*participate)() };
                if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)) {
                    *lock(&TEAM.panic) = Some(panic);
                }
            }
            TEAM.inside.fetch_sub(1, Ordering::SeqCst);
            idle_since = Instant::now();
            continue;
        }
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(64) {
            let linger = Duration::from_nanos(LINGER_NANOS.load(Ordering::Relaxed));
            if idle_since.elapsed() > linger {
                TEAM.alive.fetch_sub(1, Ordering::SeqCst);
                // A region published between the last poll and leaving may go without this
                // helper; it completes on its other threads.
                return;
            }
            // Let other threads of an oversubscribed machine run.
            std::thread::yield_now();
        }
        core::hint::spin_loop();
    }
}

/// Hands [`SolverThreads::helper_linger`] to the helper threads, at the start of every step.
pub(crate) fn apply_helper_linger(threads: Res<SolverThreads>) {
    set_linger(threads.helper_linger);
}
