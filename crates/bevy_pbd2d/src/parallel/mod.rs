//! Deterministic data parallelism over particle rows (crate-private; a guide for contributors).
//!
//! **Fixed blocks.** Work is cut into blocks of [`CHUNK`](blocks::CHUNK) = 64 rows whatever the number of
//! threads. Every per-row result depends only on that row's inputs and reductions combine
//! per-block results in block order, so the bits are the same on 1, 2 or 64 threads, and on
//! any [`SolverThreads`] setting: the thread count decides who computes a block, never what a
//! block computes. Tests compare the one-thread bits with every schedule.
//!
//! **Regions.** A step runs a few parallel regions back to back (neighbour search, the density
//! solve, XSPH). [`phases`] runs a region as a sequence of phases over all blocks, claimed one
//! block at a time from a shared counter ([`progress`]), with a serial decision between phases
//! (e.g. "error below tolerance? stop"). [`pipeline`] runs an iterative two-pass solve with one
//! or two threads as a pipeline: each block's second pass follows as soon as its neighbour
//! blocks' first passes have run, while its data is still in cache; two threads start at
//! either end and meet where their speeds put them. No thread ever waits for a block nobody
//! has claimed, so every region completes on the calling thread alone if no helper comes.
//!
//! **Why helpers linger.** Waking a parked pool thread takes 20–150 µs on a virtual machine,
//! longer than a density pass over a thousand particles. [`team`] starts helper tasks on Bevy's
//! compute pool that keep polling for the next region for
//! [`SolverThreads::helper_linger`] (200 µs by default) before they give their thread back, so
//! the regions of one step, and consecutive steps, find them awake.
//!
//! Below [`PARALLEL_FROM`](blocks::PARALLEL_FROM) rows a pass runs on the calling thread: waking helpers would cost
//! more than they save.

mod blocks;
pub(crate) mod phases;
pub(crate) mod pipeline;
pub(crate) mod progress;
mod settings;
pub(crate) mod team;

pub(crate) use blocks::{CHUNK, pool, threads_for};
pub use settings::{MAX_HELPER_LINGER, SolverThreads};
pub(crate) use team::apply_helper_linger;
