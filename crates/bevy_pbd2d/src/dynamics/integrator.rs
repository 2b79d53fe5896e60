//! Time integration: prediction with symplectic Euler and the velocity update.
//!
//! Predict (\[MHHR06\] Alg. 1, lines 5–6), for particles with w > 0:
//!
//! ```text
//! v* = v(t) + Δt g
//! x* = x(t) + Δt v*
//! ```
//!
//! Pinned particles (w = 0) move with their own velocity, without gravity. Held particles
//! ([`KinematicTarget`](crate::particle::KinematicTarget)) move toward their target, at most
//! [`SolverSettings::max_kinematic_speed`] · Δt: x* = x + d, v* = d/Δt; with substeps, each of
//! the m substeps left in the step takes an equal share of the way left (so a held particle
//! moves steadily through the step and leaves it with the drag's velocity).
//!
//! Velocity update (\[MHHR06\] Alg. 1, line 12), written as the predicted velocity plus the
//! position correction, which equals (x(t+Δt) − x(t))/Δt but leaves an uncorrected velocity
//! component bitwise equal to v*'s:
//!
//! ```text
//! v(t+Δt) = v* + (x(t+Δt) − x*)/Δt
//! ```

use bevy::prelude::*;

use crate::dynamics::settings::{Gravity, SolverSettings};
use crate::dynamics::substeps::PbdSubsteps;
use crate::particle::state::SolverState;
use crate::stats::{PbdStats, Phase};

/// [`PbdSubstepSystems::Predict`](crate::PbdSubstepSystems::Predict): x* and v* for every particle.
pub fn predict(
    time: Res<Time>,
    substeps: Option<Res<Time<PbdSubsteps>>>,
    gravity: Res<Gravity>,
    settings: Res<SolverSettings>,
    mut state: ResMut<SolverState>,
    mut stats: ResMut<PbdStats>,
) {
    let started = stats.begin_phase();
    let dt = time.delta_secs();
    let g = gravity.0;
    let state = &mut *state;
    let reach = settings.max_kinematic_speed * dt;
    // Substeps left in this step, this one included.
    let left = substeps
        .map_or(1, |s| s.context().count.saturating_sub(s.context().index))
        .max(1);
    for &(row, target) in &state.kinematic_targets {
        let i = row as usize;
        state.v[i] = ((target - state.x[i]) / left as f32).clamp_length_max(reach) / dt;
    }
    predict_rows(&mut state.x, &mut state.v, &state.w, g, dt);
    state.x_predicted.clone_from(&state.x);
    stats.end_phase(Phase::Predict, started);
}

/// v* = v + Δt g where w > 0 (pinned particles keep v, bit for bit), x* = x + Δt v*. Branch-free
/// (a select), so that the loop vectorises.
fn predict_rows(x: &mut [Vec2], v: &mut [Vec2], w: &[f32], g: Vec2, dt: f32) {
    let dv = dt * g;
    for ((x, v), &w) in x.iter_mut().zip(v.iter_mut()).zip(w) {
        *v = Vec2::select(BVec2::splat(w > 0.0), *v + dv, *v);
        *x += dt * *v;
    }
}

/// [`PbdSubstepSystems::UpdateVelocities`](crate::PbdSubstepSystems::UpdateVelocities):
/// v = v* + (x − x*)/Δt for every particle.
pub fn update_velocities(
    time: Res<Time>,
    mut state: ResMut<SolverState>,
    mut stats: ResMut<PbdStats>,
) {
    let started = stats.begin_phase();
    let inv_dt = 1.0 / time.delta_secs();
    let state = &mut *state;
    // A memory-bound loop: faster on one thread than split into tasks.
    update_rows(&mut state.v, &state.x, &state.x_predicted, inv_dt);
    stats.end_phase(Phase::Velocities, started);
}

/// v += (x − x*)/Δt, component by component where the correction is not 0 (so an uncorrected
/// component keeps its bits, −0 included). Branch-free: a cloth at rest has corrections that
/// are 0 or not at random, which a branch mispredicts (five times slower at 40×30).
fn update_rows(v: &mut [Vec2], x: &[Vec2], x_predicted: &[Vec2], inv_dt: f32) {
    for ((v, &x), &x_predicted) in v.iter_mut().zip(x).zip(x_predicted) {
        let correction = x - x_predicted;
        *v = Vec2::select(correction.cmpne(Vec2::ZERO), *v + correction * inv_dt, *v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prediction_accelerates_free_particles_and_keeps_pinned_velocities() {
        let bits = |v: Vec2| (v.x.to_bits(), v.y.to_bits());
        let v0 = [
            Vec2::new(-0.0, 2.0),
            Vec2::new(1.0, -0.0),
            Vec2::new(-0.0, -0.0),
        ];
        let x0 = [Vec2::new(1.0, 2.0); 3];
        let w = [0.0, 1.0, f32::NAN];
        let (mut x, mut v) = (x0, v0);
        let (g, dt) = (Vec2::new(0.0, -9.81), 0.01);
        predict_rows(&mut x, &mut v, &w, g, dt);
        assert_eq!(bits(v[0]), bits(v0[0]), "pinned: v kept, −0 included");
        assert_eq!(bits(v[2]), bits(v0[2]), "NaN w is not > 0");
        assert_eq!(v[1], v0[1] + dt * g);
        for i in 0..3 {
            assert_eq!(x[i], x0[i] + dt * v[i]);
        }
    }

    #[test]
    fn velocity_update_keeps_uncorrected_components() {
        let bits = |v: Vec2| (v.x.to_bits(), v.y.to_bits());
        let mut v = vec![
            Vec2::new(-0.0, 1.0),
            Vec2::new(1.0, -0.0),
            Vec2::new(2.0, 3.0),
        ];
        let x_predicted = [Vec2::new(1.0, 1.0); 3];
        let x = [
            Vec2::new(1.0, 1.0),
            Vec2::new(1.5, 1.0),
            Vec2::new(0.5, 2.0),
        ];
        update_rows(&mut v, &x, &x_predicted, 10.0);
        assert_eq!(bits(v[0]), bits(Vec2::new(-0.0, 1.0)), "not corrected");
        assert_eq!(bits(v[1]), bits(Vec2::new(6.0, -0.0)), "x corrected only");
        assert_eq!(v[2], Vec2::new(-3.0, 13.0));
    }
}
