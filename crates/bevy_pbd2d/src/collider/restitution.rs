//! Restitution after the velocity update: a particle that hit a collider in the substep
//! leaves with the normal speed that keeps e² of its normal energy (Müller et al. 2020 eq. 34).

use bevy::prelude::*;

use crate::collider::ColliderContactState;
use crate::collider::contacts::NONE;
use crate::dynamics::{Gravity, PbdSubsteps};
use crate::particle::SolverState;

/// [`UpdateVelocities`](crate::PbdSubstepSystems::UpdateVelocities), after the velocity update:
/// restitution. For a particle that touched a collider, with normal speeds relative to the
/// collider's surface there: an impact (v*ₙ < −2 |g| Δt before the contacts, Δt the step's)
/// leaves with the
/// speed that keeps e² of its normal energy, anything slower with no speed into the surface
/// (Müller et al. 2020 eq. 34, [`rebound_speed`]).
pub(crate) fn apply_restitution(
    time: Res<Time>,
    substeps: Option<Res<Time<PbdSubsteps>>>,
    gravity: Res<Gravity>,
    mut state: ResMut<SolverState>,
    mut contacts: ResMut<ColliderContactState>,
) {
    let dt = time.delta_secs();
    let g = gravity.0;
    let ColliderContactState {
        colliders,
        touch,
        start,
        ..
    } = &mut *contacts;
    // The step's Δt, not the substep's: a collider's velocity changes once per step, so a
    // particle resting on one that accelerates meets it that much faster at a step's start.
    let step = dt * substeps.map_or(1, |s| s.context().count.max(1)) as f32;
    let threshold = 2.0 * g.length() * step;
    for (i, t) in touch.iter_mut().enumerate() {
        if t.collider == NONE || state.w[i].partial_cmp(&0.0) != Some(core::cmp::Ordering::Greater)
        {
            continue;
        }
        let c = &colliders[t.collider as usize];
        let x = state.x[i];
        let local = c.end.inverse_transform_point(x);
        let surface_velocity = (x - c.start.transform_point(local)) / dt;
        let n = t.normal;
        let vn = (state.v[i] - surface_velocity).dot(n);
        let approach = (t.v_star - surface_velocity).dot(n);
        let target = if approach < -threshold {
            // Where it started the step, in the collider's frame now, above the contact.
            let x0 = c
                .end
                .transform_point(c.start.inverse_transform_point(start[i]));
            let v0 = (t.v_star - g * dt - surface_velocity).dot(n);
            rebound_speed(c.material.restitution, (x0 - x).dot(n), v0, -g.dot(n), dt)
        } else {
            0.0
        };
        if vn < target {
            t.bounce = n * (target - vn);
            state.v[i] += t.bounce;
        }
    }
}

/// The normal speed after an impact with restitution e, for a particle that started the step
/// `h0` above the contact (m) with normal speed `v0` (m/s, negative toward the surface), under
/// an acceleration `g_in` into the surface (m/s²).
///
/// e is a ratio of speeds, e² of the energies of the normal motion, and so of the heights a
/// bounce reaches. The energy is taken as the integrator sees it: symplectic Euler conserves
/// Q = ½ v² + G y − ½ G Δt v exactly under a constant acceleration −G (v the velocity that
/// made the last move), not ½ v² + G y, so the rebound speed V solves
/// ½ V² − ½ G Δt V = e² Q₀: the next apex is then e² times the last at any Δt (a plain
/// V = e |v| loses (1 + 1/e) G Δt / |v| of the height, 11 % for a 1 m drop at e = 0.5 and
/// Δt = 1/60 s). Without gravity along the normal, V = e |v0|.
pub(crate) fn rebound_speed(e: f32, h0: f32, v0: f32, g_in: f32, dt: f32) -> f32 {
    let q0 = (0.5 * v0 * v0 + g_in * h0.max(0.0) - 0.5 * g_in * dt * v0).max(0.0);
    let b = g_in * dt;
    0.5 * (b + (b * b + 8.0 * e * e * q0).max(0.0).sqrt())
}

#[cfg(test)]
mod tests {
    use super::rebound_speed;

    /// Symplectic Euler under gravity from the rebound: its apex is e² times the drop height.
    #[test]
    fn the_rebound_speed_gives_an_apex_of_e_squared_times_the_drop() {
        for (e, height, dt) in [
            (0.5, 1.0, 1.0 / 60.0),
            (0.8, 0.3, 1.0 / 30.0),
            (1.0, 2.0, 0.01),
        ] {
            let g = 9.81f32;
            // Drop from rest at `height` to the first step that would pass y = 0.
            let (mut y, mut v) = (height, 0.0f32);
            let (h0, v0) = loop {
                let (y0, v0) = (y, v);
                v -= g * dt;
                y += v * dt;
                if y <= 0.0 {
                    break (y0, v0);
                }
            };
            let mut v = rebound_speed(e, h0, v0, g, dt);
            let (mut y, mut apex) = (0.0f32, 0.0f32);
            while v > 0.0 {
                v -= g * dt;
                y += v * dt;
                apex = apex.max(y);
            }
            let expected = e * e * height;
            assert!(
                (apex - expected).abs() < 0.01 * expected + g * dt * dt,
                "e {e}: apex {apex}, {expected}"
            );
        }
        assert_eq!(
            rebound_speed(0.5, 0.0, -4.0, 0.0, 0.1),
            2.0,
            "no gravity: e |v|"
        );
    }
}
