//! A parallel region for iterative two-pass solves in which a block's second pass reads the
//! first pass of a few nearby blocks (its span): each iteration runs as one pipeline, in which
//! every block's second pass runs as soon as its span's first passes have, on the same thread, while
//! the block's data is still in that core's cache.
//!
//! With one thread, the pipeline runs the blocks front to back. With two, one thread takes blocks
//! from the front (0, 1, …) and the other from the back (n − 1, n − 2, …) until they meet, each
//! claiming its next block from a shared counter, so a thread that runs slower takes fewer
//! blocks. A block whose span reaches into the other thread's blocks waits for the other
//! thread's last first pass (only the few blocks next to the meeting point). An iteration
//! ends when every block has had both passes; the thread that completes the last second pass
//! runs the decision that picks the next phase (or ends the run), as in
//! [`run_phases`](crate::parallel::phases::run_phases), and nobody waits for a block that nobody has
//! claimed, so the run completes on the calling thread alone if the helper never comes.
//! Each pass depends only on the phase's inputs, so the outcome is bitwise the same whatever
//! the number of threads and wherever they meet.
//!
//! Data the passes share lives in [`PhaseShared`](crate::parallel::phases::PhaseShared). Within one
//! iteration a block's first pass may run while another block's second pass runs on the other
//! thread, so a pass may only read what is not written in the same iteration, or what the
//! first passes of its span wrote (they have completed).

use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::parallel::phases::threads_used;
use crate::parallel::progress::{Claim, FINISHED, MAX_BLOCKS, Progress, backoff};
use crate::parallel::team;

/// The end of the blocks that a thread of a [`run_pipeline`] run takes its blocks from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Blocks 0, 1, … (the calling thread; with one thread, every block).
    Front = 0,
    /// Blocks n − 1, n − 2, … (the helper).
    Back = 1,
}

/// Runs iterations of two passes over the `spans.len()` blocks, starting with phase `first`.
/// In each, `first_pass(phase, side, c)` runs for every block c, then
/// `second_pass(phase, side, c)` once the first pass has run for every block of
/// `spans[c][0]..=spans[c][1]` (which must contain c), on the side that ran c's first pass;
/// then `next(phase)` runs once, on either thread, and returns the next phase or [`FINISHED`].
///
/// Uses up to two threads (`max_threads`, at most as many as the compute task pool has, the
/// calling thread included).
///
/// # Panics
/// If a span does not contain its block or reaches past the last block, or if a pass or
/// `next` panics (the run then ends on every thread, and the panic propagates).
pub fn run_pipeline<P, Q, N>(
    spans: &[[u32; 2]],
    max_threads: usize,
    first: u32,
    first_pass: P,
    second_pass: Q,
    next: N,
) where
    P: Fn(u32, Side, usize) + Sync,
    Q: Fn(u32, Side, usize) + Sync,
    N: FnMut(u32) -> u32 + Send,
{
    let blocks = spans.len();
    let valid = spans.iter().enumerate().all(|(c, &[lo, hi])| {
        let (lo, hi) = (lo as usize, hi as usize);
        lo <= c && c <= hi && hi < blocks
    });
    assert!(
        valid,
        "every span must contain its block and end before the last block"
    );
    let threads = threads_used(blocks, max_threads.min(2));
    if threads == 1 || blocks > MAX_BLOCKS {
        let (mut phase, mut next) = (first, next);
        while phase != FINISHED {
            let mut settled = 0;
            for c in 0..blocks {
                first_pass(phase, Side::Front, c);
                while settled <= c && spans[settled][1] as usize <= c {
                    second_pass(phase, Side::Front, settled);
                    settled += 1;
                }
            }
            phase = next(phase);
        }
        return;
    }
    let run = Run {
        spans,
        progress: &Progress::new(first, blocks),
        done: &[AtomicUsize::new(0), AtomicUsize::new(blocks)],
        first_pass: &first_pass,
        second_pass: &second_pass,
        next: &Mutex::new(next),
    };
    let joined = AtomicUsize::new(0);
    let helper = || {
        // Only the first helper takes part (the back).
        if joined.fetch_add(1, Ordering::Relaxed) == 0 {
            run.participate(Side::Back);
        }
    };
    team::run(1, &helper, &|| run.participate(Side::Front));
}

/// What the threads of a two-thread [`run_pipeline`] share: the progress of the run (its
/// pieces of work are the second passes), and which first passes of the iteration have
/// completed: `done[0]` = f when blocks 0..f have (the front's), `done[1]` = b when blocks b..n
/// have (the back's).
struct Run<'r, P, Q, N> {
    spans: &'r [[u32; 2]],
    progress: &'r Progress,
    done: &'r [AtomicUsize; 2],
    first_pass: &'r P,
    second_pass: &'r Q,
    next: &'r Mutex<N>,
}

impl<P, Q, N> Run<'_, P, Q, N>
where
    P: Fn(u32, Side, usize) + Sync,
    Q: Fn(u32, Side, usize) + Sync,
    N: FnMut(u32) -> u32,
{
    /// One thread's share of the run, from `side`, until the run is finished.
    fn participate(&self, side: Side) {
        let (progress, blocks) = (self.progress, self.spans.len());
        let front = side == Side::Front;
        // This side's blocks of the current epoch: mine..settled (back) or settled..mine
        // (front) have had their first pass but not yet their second.
        let (mut epoch_seen, mut mine, mut settled) = (u64::MAX, 0, 0);
        let mut spins = 0u32;
        loop {
            let claim = progress.claim(!front);
            let (phase, epoch) = match claim {
                Claim::Finished => return,
                Claim::Retry => continue,
                Claim::AllClaimed { phase, epoch } | Claim::Block { phase, epoch, .. } => {
                    (phase, epoch)
                }
            };
            if epoch != epoch_seen {
                epoch_seen = epoch;
                mine = if front { 0 } else { blocks };
                settled = mine;
            }
            if let Claim::Block { block, .. } = claim {
                spins = 0;
                progress.guarded(|| (self.first_pass)(phase, side, block));
                mine = if front { block + 1 } else { block };
                self.done[side as usize].store(mine, Ordering::Release);
                // The second passes whose span this side has covered.
                if front {
                    while settled < mine && (self.spans[settled][1] as usize) < mine {
                        self.settle(phase, side, settled);
                        settled += 1;
                    }
                } else {
                    while settled > mine && self.spans[settled - 1][0] as usize >= mine {
                        settled -= 1;
                        self.settle(phase, side, settled);
                    }
                }
                continue;
            }
            // Every block is claimed: the sides meet at `mine`. Blocks still waiting for their
            // second pass reach into the other side, which must have completed all its first
            // passes.
            let waiting = if front {
                settled < mine
            } else {
                settled > mine
            };
            let other_done = if front {
                self.done[1].load(Ordering::Acquire) <= mine
            } else {
                self.done[0].load(Ordering::Acquire) >= mine
            };
            if waiting && other_done {
                spins = 0;
                while settled != mine {
                    if front {
                        self.settle(phase, side, settled);
                        settled += 1;
                    } else {
                        settled -= 1;
                        self.settle(phase, side, settled);
                    }
                }
                continue;
            }
            // Wait for the other side, or for the next iteration.
            backoff(&mut spins);
        }
    }

    /// The second pass of `block`; the thread that completes the iteration's last one decides
    /// and publishes the next phase.
    fn settle(&self, phase: u32, side: Side, block: usize) {
        let (progress, blocks) = (self.progress, self.spans.len());
        progress.guarded(|| (self.second_pass)(phase, side, block));
        progress.complete(phase, blocks, self.next, || {
            self.done[0].store(0, Ordering::Relaxed);
            self.done[1].store(blocks, Ordering::Relaxed);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::phases::PhaseShared;
    use core::sync::atomic::AtomicU32;

    /// A Jacobi-style run over 40 blocks of 16 values, each block's span the blocks within 3
    /// (clamped): the first pass writes b = a + (mean of the span's a) / 2 per value (slowly, on
    /// the back more); the second writes a ← b + the span's mean b / 4 into the other buffer.
    /// Returns the final values, the rounds, and the sides that ran each block's passes.
    fn rounds(threads: usize) -> (Vec<u64>, u32, Vec<[usize; 2]>) {
        let (blocks, len) = (40usize, 16usize);
        let n = blocks * len;
        let spans: Vec<[u32; 2]> = (0..blocks)
            .map(|c| [c.saturating_sub(3) as u32, (c + 3).min(blocks - 1) as u32])
            .collect();
        let mut a: Vec<u64> = (0..n as u64).collect();
        let mut a2 = vec![0u64; n];
        let mut b = vec![0u64; n];
        let mut sides = vec![[usize::MAX; 2]; blocks];
        let mut rounds = 0;
        {
            let buffers = [PhaseShared::new(&mut a), PhaseShared::new(&mut a2)];
            let b = PhaseShared::new(&mut b);
            let sides = PhaseShared::new(&mut sides);
            let range = |c: usize| c * len..(c + 1) * len;
            let span_values = |c: usize| {
                let [lo, hi] = spans[c];
                lo as usize * len..(hi as usize + 1) * len
            };
            run_pipeline(
                &spans,
                threads,
                0,
                |phase, side, c| unsafe {
                    // Passes slow enough for the helper to join, slower on the back (its first
                    // block the slowest): the front must wait for the back's last first pass.
                    let micros = match (side, c) {
                        (Side::Back, 39) => 300,
                        (Side::Back, _) => 40,
                        _ => 5,
                    };
                    let start = std::time::Instant::now();
                    while start.elapsed() < std::time::Duration::from_micros(micros) {}
                    let a = &buffers[phase as usize].read()[span_values(c)];
                    let mean = a.iter().sum::<u64>() / a.len() as u64;
                    for (k, out) in b.block_mut(range(c)).iter_mut().enumerate() {
                        *out = buffers[phase as usize].read()[c * len + k] + mean / 2;
                    }
                    sides.block_mut(c..c + 1)[0][0] = side as usize;
                },
                |phase, side, c| unsafe {
                    let span = span_values(c);
                    // Only the span's part of `b` is read: the other side may be writing
                    // the rest.
                    let b_span = b.read_range(span.clone());
                    let extra = b_span.iter().sum::<u64>() / 4 / span.len() as u64;
                    let out = buffers[1 - phase as usize].block_mut(range(c));
                    for (k, out) in out.iter_mut().enumerate() {
                        *out = (b_span[c * len + k - span.start] + extra) % 1_000_003;
                    }
                    assert_eq!(sides.block_mut(c..c + 1)[0][0], side as usize);
                    sides.block_mut(c..c + 1)[0][1] = side as usize;
                },
                |phase| {
                    rounds += 1;
                    if rounds < 9 { 1 - phase } else { FINISHED }
                },
            );
        }
        let result = if rounds % 2 == 1 { a2 } else { a };
        (result, rounds, sides)
    }

    /// Whether the back can take part: the pool has two threads.
    fn two_threads() -> bool {
        threads_used(40, 2) == 2
    }

    /// Runs `run` (which returns how many blocks the back took) `times` times, then again
    /// until the back has taken part (for up to 20 s: a region runs on its calling thread
    /// alone while another test's region runs, see `team::run`); asserts that it did, if it
    /// can.
    fn with_the_back(times: usize, mut run: impl FnMut() -> usize) {
        let started = std::time::Instant::now();
        let mut back = (0..times).map(|_| run()).sum::<usize>();
        while two_threads() && back == 0 && started.elapsed().as_secs() < 20 {
            back += run();
        }
        if two_threads() {
            assert!(back > 0, "the back never took part");
        }
    }

    /// A busy wait of `micros` µs.
    fn spin(micros: u64) {
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_micros(micros) {}
    }

    #[test]
    fn two_threads_give_the_one_thread_result() {
        let serial = rounds(1);
        assert_eq!(serial.1, 9);
        assert!(serial.0[0] > 0 && serial.0[100] != 100);
        assert!(
            serial.2.iter().all(|s| *s == [0, 0]),
            "one thread: all front"
        );
        with_the_back(20, || {
            let parallel = rounds(2);
            assert_eq!((&parallel.0, parallel.1), (&serial.0, serial.1));
            // Each block's second pass ran on the side of its first pass.
            assert!(parallel.2.iter().all(|[a, b]| a == b && *a <= 1));
            // The front's blocks (of the last round) come before the back's.
            let back = parallel.2.iter().position(|s| s[0] == 1).unwrap_or(40);
            assert!(parallel.2[back..].iter().all(|s| s[0] == 1));
            40 - back
        });
    }

    /// A mixing hash, for delays.
    fn hash(mut x: u64) -> u64 {
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^ (x >> 33)
    }

    /// Spans of many shapes and random delays, the slow side alternating: every pass runs
    /// exactly once per round, a second pass on the side of its first pass and after every
    /// first pass of its span, and `next` runs after all of them.
    #[test]
    fn every_pass_runs_once_after_its_span() {
        let blocks = 23usize;
        let clamp = move |c: usize| c.min(blocks - 1) as u32;
        type Shape = Box<dyn Fn(usize) -> [u32; 2]>;
        let shapes: [(&str, Shape); 6] = [
            (
                "±2",
                Box::new(move |c| [c.saturating_sub(2) as u32, clamp(c + 2)]),
            ),
            ("+5", Box::new(move |c| [c as u32, clamp(c + 5)])),
            (
                "−5",
                Box::new(move |c| [c.saturating_sub(5) as u32, c as u32]),
            ),
            ("itself", Box::new(|c| [c as u32, c as u32])),
            ("all", Box::new(move |_| [0, clamp(blocks)])),
            (
                "mixed",
                Box::new(move |c| {
                    let h = hash(c as u64);
                    [
                        c.saturating_sub((h % 7) as usize) as u32,
                        clamp(c + ((h >> 8) % 7) as usize),
                    ]
                }),
            ),
        ];
        let rounds = 12;
        for (name, shape) in &shapes {
            let spans: Vec<[u32; 2]> = (0..blocks).map(shape).collect();
            let mut trial = 0u64;
            with_the_back(8, || {
                trial += 1;
                let counter = || (0..blocks).map(|_| AtomicU32::new(0)).collect::<Vec<_>>();
                let (first, second) = (counter(), counter());
                let side_of: Vec<AtomicUsize> = (0..blocks).map(|_| AtomicUsize::new(9)).collect();
                let back = AtomicUsize::new(0);
                let delay = |phase: u32, side: Side, c: usize, pass: u64| {
                    let h = hash(trial * 1_000_003 + phase as u64 * 7919 + c as u64 * 31 + pass);
                    let slow = trial.is_multiple_of(2) == (side == Side::Back);
                    spin(if slow { 20 } else { 3 } + h % 15);
                };
                let relaxed = Ordering::Relaxed;
                run_pipeline(
                    &spans,
                    2,
                    0,
                    |phase, side, c| {
                        assert_eq!(first[c].load(relaxed), phase, "{name}: first pass of {c}");
                        side_of[c].store(side as usize, relaxed);
                        if side == Side::Back {
                            back.fetch_add(1, relaxed);
                        }
                        delay(phase, side, c, 0);
                        first[c].store(phase + 1, relaxed);
                    },
                    |phase, side, c| {
                        let [lo, hi] = spans[c];
                        let span = &first[lo as usize..=hi as usize];
                        for (j, done) in (lo as usize..).zip(span) {
                            let done = done.load(relaxed);
                            assert_eq!(done, phase + 1, "{name}: {c} before the first of {j}");
                        }
                        assert_eq!(side_of[c].load(relaxed), side as usize, "{name}: side");
                        delay(phase, side, c, 1);
                        let before = second[c].fetch_add(1, relaxed);
                        assert_eq!(before, phase, "{name}: second pass of {c}");
                    },
                    |phase| {
                        for c in 0..blocks {
                            assert_eq!(first[c].load(relaxed), phase + 1, "{name}: {c}");
                            assert_eq!(second[c].load(relaxed), phase + 1, "{name}: {c}");
                        }
                        if phase + 1 < rounds {
                            phase + 1
                        } else {
                            FINISHED
                        }
                    },
                );
                assert!(second.iter().all(|n| n.load(relaxed) == rounds), "{name}");
                back.load(relaxed)
            });
        }
    }

    #[test]
    fn a_panicking_pass_ends_the_run_instead_of_hanging() {
        let spans: Vec<[u32; 2]> = (0..16u32)
            .map(|c| [c.saturating_sub(1), (c + 1).min(15)])
            .collect();
        // Where the run panics: in a first pass, in a second pass, on the back (the helper's
        // thread), in `next`. Each case is repeated until the back took part, so that a
        // thread was waiting for the other when the run ended.
        for threads in [1, 2] {
            for at in ["first", "second", "back", "next"] {
                // Passes on the back, and those of them past phase 0 (where "back" panics).
                let (came, late) = (AtomicUsize::new(0), AtomicUsize::new(0));
                with_the_back(1, || {
                    came.store(0, Ordering::Relaxed);
                    late.store(0, Ordering::Relaxed);
                    let result = std::panic::catch_unwind(|| {
                        run_pipeline(
                            &spans,
                            threads,
                            0,
                            |phase, side, c| {
                                spin(20);
                                if side == Side::Back {
                                    came.fetch_add(1, Ordering::Relaxed);
                                    late.fetch_add(usize::from(phase != 0), Ordering::Relaxed);
                                    assert!(at != "back" || phase == 0);
                                }
                                assert!(at != "first" || c != 12);
                            },
                            |_, _, c| assert!(at != "second" || c != 3),
                            |phase| {
                                assert!(at != "next" || phase < 2);
                                if phase < 4 { phase + 1 } else { FINISHED }
                            },
                        );
                    });
                    let came = came.load(Ordering::Relaxed);
                    // Without the back past phase 0, nothing panics on it (under load the back
                    // may join only in phase 0).
                    let panics = at != "back" || late.load(Ordering::Relaxed) > 0;
                    assert_eq!(result.is_err(), panics, "{threads} threads, in {at}");
                    if threads == 1 { 1 } else { came }
                });
            }
        }
        // The run after a panic is not affected.
        let mut rounds = 0;
        run_pipeline(
            &spans,
            2,
            0,
            |_, _, _| {},
            |_, _, _| {},
            |_| {
                rounds += 1;
                FINISHED
            },
        );
        assert_eq!(rounds, 1);
    }

    #[test]
    #[should_panic(expected = "every span must contain its block")]
    fn a_span_past_the_last_block_is_refused() {
        run_pipeline(
            &[[0, 0], [1, 2]],
            1,
            0,
            |_, _, _| {},
            |_, _, _| {},
            |_| FINISHED,
        );
    }
}
