//! The runaway guard: a particle whose position or velocity is not finite, or whose position
//! left [`RunawayGuard::bounds`], is taken out of the simulation and reported with a
//! [`ParticleRunaway`] message, never kept flying or spreading NaN to its neighbours.
//!
//! Two checks:
//! - **Before a step**, when particle components were edited (a game wrote `Position` or
//!   `Velocity`): the components are checked before the rows are built, so a NaN or a far
//!   teleport written by the game never enters a step (through a distance constraint one NaN
//!   would make its whole cloth NaN in one step).
//! - **After a step**, before the writeback: the solver arrays are checked (a branch-free pass
//!   over positions and velocities; the rows are looked at only if it finds one). A row that
//!   failed is not written back, so its components keep their last good values.
//!
//! The particle is then handled as [`RunawayGuard::action`] says: disabled (Bevy's
//! `Disabled`: kept with every component and out of every query; remove `Disabled` to bring
//! it back) or despawned.

use bevy::ecs::entity_disabling::Disabled;
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

/// The rows the last check found (not written back); kept between the two systems.
#[derive(Resource, Debug, Default)]
pub(crate) struct RunawayRows(pub(crate) Vec<u32>);

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

/// Whether any of the rows runs away: branch-free over the arrays (they vectorise). The
/// positions' extremes are compared with the bounds once; a NaN or ∞ anywhere makes the sum of
/// the products a · 0 a NaN (∞ · 0 is NaN too).
fn any_runaway(x: &[Vec2], v: &[Vec2], bounds: Rect) -> bool {
    let (mut lo, mut hi, mut nan) = (Vec2::INFINITY, Vec2::NEG_INFINITY, Vec2::ZERO);
    for (&p, &u) in x.iter().zip(v) {
        lo = lo.min(p);
        hi = hi.max(p);
        nan += p * 0.0 + u * 0.0;
    }
    !(nan.is_finite() && lo.cmpge(bounds.min).all() && hi.cmple(bounds.max).all())
}

/// After a step, before the writeback: takes out the rows that run away (their components
/// are not written, so they keep their last good values).
pub(crate) fn guard_rows(
    mut commands: Commands,
    state: Res<SolverState>,
    guard: Res<RunawayGuard>,
    mut rows: ResMut<RunawayRows>,
    mut messages: MessageWriter<ParticleRunaway>,
    mut stats: ResMut<PbdStats>,
) {
    rows.0.clear();
    let n = state.x.len().min(state.v.len()).min(state.entities.len());
    if !any_runaway(&state.x[..n], &state.v[..n], guard.bounds) {
        return;
    }
    for i in 0..n {
        let (x, v) = (state.x[i], state.v[i]);
        if let Some(reason) = guard.check(x, v) {
            rows.0.push(i as u32);
            stats.runaways += 1;
            let report = ParticleRunaway {
                entity: state.entities[i],
                reason,
                position: x,
                velocity: v,
                before_step: false,
            };
            take_out(&mut commands, &mut messages, &guard, report);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_runaway_is_found_and_nothing_else() {
        let bounds = RunawayGuard::default().bounds;
        let fine = vec![Vec2::new(1.0, -2.0); 37];
        let still = vec![Vec2::ZERO; 37];
        assert!(!any_runaway(&fine, &still, bounds));
        let edge = vec![bounds.max; 3];
        assert!(
            !any_runaway(&edge, &still[..3], bounds),
            "the bounds are inclusive"
        );
        for bad in [
            Vec2::new(f32::NAN, 0.0),
            Vec2::new(0.0, f32::INFINITY),
            Vec2::new(-f32::INFINITY, 0.0),
            Vec2::new(1e4 + 1.0, 0.0),
            Vec2::new(0.0, -2e4),
        ] {
            for at in [0, 17, 36] {
                let mut x = fine.clone();
                x[at] = bad;
                assert!(any_runaway(&x, &still, bounds), "position {bad} at {at}");
                let mut v = still.clone();
                if !bad.is_finite() {
                    v[at] = bad;
                    assert!(any_runaway(&fine, &v, bounds), "velocity {bad} at {at}");
                }
            }
        }
        let guard = RunawayGuard::default();
        assert_eq!(
            guard.check(Vec2::NAN, Vec2::ZERO),
            Some(RunawayReason::NotFinite)
        );
        assert_eq!(
            guard.check(Vec2::new(2e4, 0.0), Vec2::ZERO),
            Some(RunawayReason::OutOfBounds)
        );
        assert_eq!(guard.check(Vec2::ONE, Vec2::new(1e30, 0.0)), None);
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
