//! [`SolverThreads`]: how many threads the solver may use, and how long its helpers linger.

use core::time::Duration;

use bevy::prelude::*;

use crate::error::{PbdError, at_most};
use crate::schedule::ValidatedSettings;

/// The longest [`SolverThreads::helper_linger`] accepted (a helper spins while it lingers).
pub const MAX_HELPER_LINGER: Duration = Duration::from_millis(100);

/// Caps the threads of the solver's parallel passes (the fluid's: neighbour search, density
/// solve, XSPH) and sets how long its helper threads stay awake between passes. Inserted by
/// [`FluidPlugin`](crate::fluid::FluidPlugin). Results are bitwise the same for every setting:
/// work is cut into fixed blocks whatever the thread count.
#[derive(Resource, Reflect, Debug, Clone, PartialEq)]
#[reflect(Resource, Default)]
pub struct SolverThreads {
    /// Most threads a parallel pass uses, the calling thread included; `None` (default): as many
    /// as Bevy's compute task pool has. `Some(1)` runs the whole step on the calling thread.
    /// Passes over fewer than 512 fluid particles always run on one thread (waking helpers
    /// would cost more than they save).
    pub max_threads: Option<usize>,
    /// How long an idle helper thread keeps polling for the next parallel pass before it
    /// returns its thread to the compute pool (default 200 µs; at most
    /// [`MAX_HELPER_LINGER`]). Waking a parked pool thread takes 20–150 µs on a virtual
    /// machine, longer than a pass over a thousand particles; lingering spends that time
    /// spinning instead. The helpers are shared by every `App` of the process: the last step
    /// to start sets it.
    pub helper_linger: Duration,
}

impl Default for SolverThreads {
    fn default() -> Self {
        Self {
            max_threads: None,
            helper_linger: Duration::from_micros(200),
        }
    }
}

impl SolverThreads {
    /// Caps the solver at `threads` threads.
    ///
    /// # Errors
    /// [`PbdError::NotPositive`] for 0; the old value is kept.
    pub fn set_max_threads(&mut self, threads: usize) -> Result<(), PbdError> {
        if threads == 0 {
            return Err(zero_threads());
        }
        self.max_threads = Some(threads);
        Ok(())
    }

    /// Sets [`SolverThreads::helper_linger`].
    ///
    /// # Errors
    /// [`PbdError::TooLarge`] above [`MAX_HELPER_LINGER`]; the old value is kept.
    pub fn set_helper_linger(&mut self, linger: Duration) -> Result<(), PbdError> {
        at_most(
            "helper linger (s)",
            linger.as_secs_f32(),
            MAX_HELPER_LINGER.as_secs_f32(),
        )?;
        self.helper_linger = linger;
        Ok(())
    }

    /// The thread cap as a count (`usize::MAX` for `None`).
    pub(crate) fn cap(&self) -> usize {
        self.max_threads.unwrap_or(usize::MAX)
    }
}

fn zero_threads() -> PbdError {
    PbdError::NotPositive {
        name: "max threads",
        value: 0.0,
    }
}

impl ValidatedSettings for SolverThreads {
    fn validate(&self) -> Result<(), PbdError> {
        if self.max_threads == Some(0) {
            return Err(zero_threads());
        }
        at_most(
            "helper linger (s)",
            self.helper_linger.as_secs_f32(),
            MAX_HELPER_LINGER.as_secs_f32(),
        )
        .map(|_| ())
    }
}
