//! The runaway guard: a particle whose position or velocity is not finite, or whose position
//! left [`RunawayGuard::bounds`], is taken out of the simulation and reported with a
//! [`ParticleRunaway`] message, never kept flying or spreading NaN to its neighbours.
//!
//! Two checks:
//! - **Before a step**, when particle components were edited (a game wrote `Position` or
//!   `Velocity`): the components are checked before the rows are built, so a NaN or a far
//!   teleport written by the game never enters a step (through a distance constraint one NaN
//!   would make its whole cloth NaN in one step).
//! - **After a step**, in the writeback: each row is checked as it is copied (a few branch-free
//!   comparisons). A row that fails is not written back, so its components keep their last
//!   good values.
//!
//! The particle is then handled as [`RunawayGuard::action`] says: disabled (Bevy's
//! `Disabled`: kept with every component and out of every query; remove `Disabled` to bring
//! it back) or despawned.

use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

use crate::error::{PbdError, finite_vec2};
use crate::particle::components::{Particle, Position, Velocity};
use crate::particle::state::SolverState;
use crate::schedule::ValidatedSettings;
use crate::stats::PbdStats;

/// What the guard does with a runaway particle.
#[derive(Reflect, Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum RunawayAction {
    /// Insert Bevy's `Disabled`: the particle keeps every component (its last good `Position`
    /// and `Velocity`) and leaves the simulation and every query. The default.
    #[default]
    Disable,
    /// Despawn the particle (its constraints follow at the next step).
    Despawn,
}

/// The runaway guard's settings (module docs of [`runaway`](self)).
#[derive(Resource, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Resource, Default)]
pub struct RunawayGuard {
    /// Particles must stay inside this rectangle (m). Default ±10 km on both axes: beyond,
    /// an f32 position is coarser than a millimetre.
    pub bounds: Rect,
    /// What happens to a runaway particle. Default [`RunawayAction::Disable`].
    pub action: RunawayAction,
}

impl Default for RunawayGuard {
    fn default() -> Self {
        Self {
            bounds: Rect::new(-1e4, -1e4, 1e4, 1e4),
            action: RunawayAction::Disable,
        }
    }
}

impl RunawayGuard {
    /// Sets the bounds (m).
    ///
    /// # Errors
    /// [`PbdError::NotFinite`] for a non-finite corner, [`PbdError::NotPositive`] for an empty
    /// rectangle; nothing changes.
    pub fn set_bounds(&mut self, bounds: Rect) -> Result<(), PbdError> {
        check_bounds(bounds)?;
        self.bounds = bounds;
        Ok(())
    }

    /// Whether a particle at `x` moving at `v` runs away (the writeback's test, for every row:
    /// branch-free; NaN fails every comparison, ±∞ the bounds or `|v| ≤ f32::MAX`).
    #[inline]
    pub fn runs_away(&self, x: Vec2, v: Vec2) -> bool {
        let (lo, hi) = (self.bounds.min, self.bounds.max);
        let inside = (x.x >= lo.x)
            & (x.x <= hi.x)
            & (x.y >= lo.y)
            & (x.y <= hi.y)
            & (v.x.abs() <= f32::MAX)
            & (v.y.abs() <= f32::MAX);
        !inside
    }

    /// Whether a particle at `x` moving at `v` runs away, and why.
    pub fn check(&self, x: Vec2, v: Vec2) -> Option<RunawayReason> {
        if !(x.is_finite() && v.is_finite()) {
            Some(RunawayReason::NotFinite)
        } else if !self.bounds.contains(x) {
            Some(RunawayReason::OutOfBounds)
        } else {
            None
        }
    }
}

fn check_bounds(bounds: Rect) -> Result<(), PbdError> {
    finite_vec2("world bounds min (m)", bounds.min)?;
    finite_vec2("world bounds max (m)", bounds.max)?;
    let size = bounds.size().min_element();
    crate::error::positive("world bounds size (m)", size)?;
    Ok(())
}

impl ValidatedSettings for RunawayGuard {
    fn validate(&self) -> Result<(), PbdError> {
        check_bounds(self.bounds)
    }
}

/// Why a particle was taken out.
#[derive(Reflect, Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunawayReason {
    /// Its position or velocity was NaN or infinite.
    NotFinite,
    /// Its position left [`RunawayGuard::bounds`].
    OutOfBounds,
}

/// A particle the runaway guard took out (disabled or despawned, as
/// [`RunawayGuard::action`] says).
#[derive(Message, Debug, Clone, Copy, PartialEq)]
pub struct ParticleRunaway {
    /// The particle.
    pub entity: Entity,
    /// Why.
    pub reason: RunawayReason,
    /// The offending position (m) and velocity (m/s).
    pub position: Vec2,
    /// See [`ParticleRunaway::position`].
    pub velocity: Vec2,
    /// Whether it was caught before a step (in its components) or after one (in the solver's
    /// results).
    pub before_step: bool,
}

/// Takes `entity` out as `guard` says and reports it.
fn take_out(
    commands: &mut Commands,
    messages: &mut MessageWriter<ParticleRunaway>,
    guard: &RunawayGuard,
    report: ParticleRunaway,
) {
    warn!(
        "bevy_pbd2d: particle {} {} at {} (velocity {}): {}",
        report.entity,
        match report.reason {
            RunawayReason::NotFinite => "became non-finite",
            RunawayReason::OutOfBounds => "left the world bounds",
        },
        report.position,
        report.velocity,
        match guard.action {
            RunawayAction::Disable => "disabled",
            RunawayAction::Despawn => "despawned",
        }
    );
    match guard.action {
        RunawayAction::Disable => {
            commands.entity(report.entity).try_insert(Disabled);
        }
        RunawayAction::Despawn => commands.entity(report.entity).try_despawn(),
    }
    messages.write(report);
}

/// Before the rows are built, when components were edited: takes out particles whose
/// `Position` or `Velocity` runs away.
pub(crate) fn guard_components(
    mut commands: Commands,
    state: Res<SolverState>,
    guard: Res<RunawayGuard>,
    particles: Query<(Entity, &Position, &Velocity), With<Particle>>,
    mut messages: MessageWriter<ParticleRunaway>,
    mut stats: ResMut<PbdStats>,
) {
    stats.runaways = 0;
    if !(state.particles_stale || state.particles_dirty) {
        return;
    }
    for (entity, position, velocity) in &particles {
        if let Some(reason) = guard.check(position.0, velocity.0) {
            stats.runaways += 1;
            let report = ParticleRunaway {
                entity,
                reason,
                position: position.0,
                velocity: velocity.0,
                before_step: true,
            };
            take_out(&mut commands, &mut messages, &guard, report);
        }
    }
}

/// Whether any row of `x`, `v` runs away ([`RunawayGuard::runs_away`]): 8 floats (4 rows) at a
/// time, the positions' extremes compared with the bounds once at the end, and a NaN or ±∞
/// anywhere carried by the sum of the products a · 0 (∞ · 0 is NaN too).
pub(crate) fn any_runaway(x: &[Vec2], v: &[Vec2], bounds: Rect) -> bool {
    use wide::f32x8;
    let n = x.len().min(v.len());
    // SAFETY: `Vec2` is `repr(C)` of two `f32` (x, then y): n rows are 2n floats.
    let (xs, vs) = unsafe {
        (
            core::slice::from_raw_parts(x.as_ptr().cast::<f32>(), 2 * n),
            core::slice::from_raw_parts(v.as_ptr().cast::<f32>(), 2 * n),
        )
    };
    let load = |s: &[f32]| f32x8::new(s.try_into().expect("8 floats"));
    let (mut lo, mut hi) = (f32x8::splat(f32::INFINITY), f32x8::splat(f32::NEG_INFINITY));
    let mut nan = f32x8::ZERO;
    let whole = xs.len() / 8 * 8;
    for (p, u) in xs[..whole].chunks_exact(8).zip(vs[..whole].chunks_exact(8)) {
        let (p, u) = (load(p), load(u));
        lo = lo.fast_min(p);
        hi = hi.fast_max(p);
        nan += p * f32x8::ZERO + u * f32x8::ZERO;
    }
    let (lo, hi, nan) = (lo.to_array(), hi.to_array(), nan.to_array());
    // Even lanes hold x, odd lanes y.
    let mut low = Vec2::new(lo[0], lo[1]);
    let mut high = Vec2::new(hi[0], hi[1]);
    for k in 1..4 {
        low = low.min(Vec2::new(lo[2 * k], lo[2 * k + 1]));
        high = high.max(Vec2::new(hi[2 * k], hi[2 * k + 1]));
    }
    let mut finite = nan.iter().all(|s| *s == 0.0);
    for (&p, &u) in x[whole / 2..n].iter().zip(&v[whole / 2..n]) {
        low = low.min(p);
        high = high.max(p);
        finite &= (p * 0.0 + u * 0.0) == Vec2::ZERO;
    }
    !(finite && low.cmpge(bounds.min).all() && high.cmple(bounds.max).all())
}

// `any_runaway` reads rows as pairs of floats.
const _: () = assert!(core::mem::size_of::<Vec2>() == 8 && core::mem::align_of::<Vec2>() <= 4);

/// What the writeback needs to take runaway rows out (a system parameter).
#[derive(SystemParam)]
pub(crate) struct RunawayTakeOut<'w, 's> {
    pub(crate) guard: Res<'w, RunawayGuard>,
    commands: Commands<'w, 's>,
    messages: MessageWriter<'w, ParticleRunaway>,
}

impl RunawayTakeOut<'_, '_> {
    /// After a step, from the writeback, which found the rows `rows` running away (and did not
    /// write them, so their components keep their last good values): takes them out.
    pub(crate) fn rows(&mut self, state: &SolverState, rows: &mut Vec<u32>, stats: &mut PbdStats) {
        for row in rows.drain(..) {
            let i = row as usize;
            let (Some(&entity), Some(&x), Some(&v)) =
                (state.entities.get(i), state.x.get(i), state.v.get(i))
            else {
                continue;
            };
            let Some(reason) = self.guard.check(x, v) else {
                continue;
            };
            stats.runaways += 1;
            let report = ParticleRunaway {
                entity,
                reason,
                position: x,
                velocity: v,
                before_step: false,
            };
            take_out(&mut self.commands, &mut self.messages, &self.guard, report);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_runaway_is_found_and_nothing_else() {
        let guard = RunawayGuard::default();
        let bounds = guard.bounds;
        assert!(!guard.runs_away(Vec2::new(1.0, -2.0), Vec2::ZERO));
        assert!(
            !guard.runs_away(bounds.max, Vec2::ZERO),
            "the bounds are inclusive"
        );
        assert!(!guard.runs_away(bounds.min, Vec2::new(1e30, -1e30)));
        for bad in [
            Vec2::new(f32::NAN, 0.0),
            Vec2::new(0.0, f32::INFINITY),
            Vec2::new(-f32::INFINITY, 0.0),
            Vec2::new(1e4 + 1.0, 0.0),
            Vec2::new(0.0, -2e4),
        ] {
            assert!(guard.runs_away(bad, Vec2::ZERO), "position {bad}");
            assert!(guard.check(bad, Vec2::ZERO).is_some(), "position {bad}");
            if !bad.is_finite() {
                assert!(guard.runs_away(Vec2::ONE, bad), "velocity {bad}");
                assert_eq!(guard.check(Vec2::ONE, bad), Some(RunawayReason::NotFinite));
            }
        }
        assert_eq!(
            guard.check(Vec2::NAN, Vec2::ZERO),
            Some(RunawayReason::NotFinite)
        );
        assert_eq!(
            guard.check(Vec2::new(2e4, 0.0), Vec2::ZERO),
            Some(RunawayReason::OutOfBounds)
        );
        assert_eq!(guard.check(Vec2::ONE, Vec2::new(1e30, 0.0)), None);
        // The whole-array test agrees, wherever the row is (in a group of 4 or after them).
        let fine = vec![Vec2::new(1.0, -2.0); 37];
        let still = vec![Vec2::ZERO; 37];
        assert!(!any_runaway(&fine, &still, bounds));
        assert!(!any_runaway(&[bounds.max; 5], &still[..5], bounds));
        for bad in [
            Vec2::new(f32::NAN, 0.0),
            Vec2::new(0.0, f32::INFINITY),
            Vec2::new(2e4, 0.0),
        ] {
            for at in [0, 3, 17, 35, 36] {
                let mut x = fine.clone();
                x[at] = bad;
                assert!(any_runaway(&x, &still, bounds), "position {bad} at {at}");
                if !bad.is_finite() {
                    let mut v = still.clone();
                    v[at] = bad;
                    assert!(any_runaway(&fine, &v, bounds), "velocity {bad} at {at}");
                }
            }
        }
    }

    #[test]
    fn bad_bounds_are_refused_and_kept() {
        let mut guard = RunawayGuard::default();
        for bad in [
            Rect::new(0.0, 0.0, 0.0, 5.0),
            Rect::new(f32::NAN, 0.0, 1.0, 1.0),
            Rect::new(0.0, 0.0, f32::INFINITY, 1.0),
        ] {
            assert!(guard.set_bounds(bad).is_err(), "{bad:?} accepted");
            assert_eq!(guard, RunawayGuard::default());
        }
        guard.set_bounds(Rect::new(-1.0, -1.0, 1.0, 1.0)).unwrap();
        assert_eq!(guard.bounds.max, Vec2::ONE);
    }
}
