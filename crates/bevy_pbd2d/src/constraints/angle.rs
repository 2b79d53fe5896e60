//! Angle (bending) constraints: the turn between two consecutive segments of a rope or of a
//! cloth's grid line, in 2D, with XPBD compliance (\[MMC16\] eq. 18).
//!
//! For particles a, b, c with u = x_b − x_a and v = x_c − x_b, the signed turn angle at b
//! (0 where the three are in a straight line, positive counter-clockwise) is
//! φ = atan2(u × v, u · v), and
//!
//! ```text
//! C   = wrap(φ − φ₀)  in (−π, π]                 (φ₀ the rest angle, rad)
//! ∇ₐC = u⊥/‖u‖²,  ∇꜀C = v⊥/‖v‖²,  ∇ᵦC = −∇ₐC − ∇꜀C,   with p⊥ = (−p_y, p_x)
//! Δλ  = (−C − α̃ λ) / (Σᵢ wᵢ ‖∇ᵢC‖² + α̃),   α̃ = α/Δt²
//! xᵢ += wᵢ Δλ ∇ᵢC
//! ```
//!
//! C is an angle (rad), so the compliance α is in rad/(N·m): the inverse of a torsion spring's
//! stiffness k (N·m/rad), and λ/Δt² the torque (N·m). A rod of bending stiffness EI (N·m²)
//! discretised in segments of length L stores ½ (EI/L) θ² per joint, so α = L/EI (the
//! builders' `bending_compliance` is this α). Unlike a distance constraint to the second
//! neighbour, the angle constraint resists a small bend of a straight line linearly (the
//! distance changes only to second order there). A joint with a segment shorter than
//! 1 nm has no angle and is skipped.

use bevy::ecs::entity::MapEntities;
use bevy::ecs::reflect::ReflectMapEntities;
use bevy::prelude::*;

use crate::constraints::row::COINCIDENT;
use crate::error::{PbdError, non_negative, within};

/// The compliances α accepted by [`AngleConstraint::with_compliance`] and the builders'
/// bending compliance (rad/(N·m)): 0 (rigid) to 1000.
pub const ANGLE_COMPLIANCE_RANGE: core::ops::RangeInclusive<f32> = 0.0..=1e3;

/// `compliance` if it is in [`ANGLE_COMPLIANCE_RANGE`].
///
/// # Errors
/// [`PbdError::Negative`] for a negative, NaN or infinite value, [`PbdError::NotInRange`]
/// above the range.
pub fn check_angle_compliance(compliance: f32) -> Result<f32, PbdError> {
    let compliance = non_negative("bending compliance (rad/(N·m))", compliance)?;
    within(
        "bending compliance (rad/(N·m))",
        compliance,
        ANGLE_COMPLIANCE_RANGE,
    )
}

/// Holds the turn angle at `particles[1]` between the segments `particles[0]` →
/// `particles[1]` and `particles[1]` → `particles[2]` at `rest_angle` (module docs), on an
/// entity of its own like a [`DistanceConstraint`](super::DistanceConstraint): despawn it to
/// remove it; it is despawned with any of its particles; edits take effect at the next step.
#[derive(Component, MapEntities, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, MapEntities, Debug, PartialEq)]
#[require(AngleIndex)]
pub struct AngleConstraint {
    /// The three particle entities a, b, c; the angle is at b.
    #[entities]
    pub particles: [Entity; 3],
    /// Rest angle φ₀ (rad), in [−π, π]: 0 for a straight line, positive for a
    /// counter-clockwise turn.
    pub rest_angle: f32,
    /// Compliance α (rad/(N·m)), ≥ 0; 0 is rigid.
    pub compliance: f32,
}

impl AngleConstraint {
    /// A rigid (α = 0) angle constraint with rest angle `rest_angle` (rad).
    ///
    /// # Errors
    /// [`PbdError::NotInRange`] outside [−π, π] (NaN included).
    pub fn new(a: Entity, b: Entity, c: Entity, rest_angle: f32) -> Result<Self, PbdError> {
        let pi = core::f32::consts::PI;
        Ok(Self {
            particles: [a, b, c],
            rest_angle: within("rest angle (rad)", rest_angle, -pi..=pi)?,
            compliance: 0.0,
        })
    }

    /// The same constraint with compliance α (rad/(N·m)).
    ///
    /// # Errors
    /// As [`check_angle_compliance`].
    pub fn with_compliance(mut self, compliance: f32) -> Result<Self, PbdError> {
        self.compliance = check_angle_compliance(compliance)?;
        Ok(self)
    }
}

/// An angle constraint's place in the projection order, maintained by the plugin as
/// [`ConstraintIndex`](super::ConstraintIndex) is for distance constraints (`u32::MAX`: not yet
/// placed).
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Default)]
pub struct AngleIndex(pub(crate) u32);

impl Default for AngleIndex {
    fn default() -> Self {
        Self(u32::MAX)
    }
}

impl AngleIndex {
    /// The place (`u32::MAX` while it has none).
    pub fn get(self) -> u32 {
        self.0
    }
}

/// An angle constraint as rows into the solver arrays.
#[derive(Reflect, Debug, Clone, Copy, PartialEq)]
pub struct AngleRow {
    /// Rows of a, b, c.
    pub rows: [u32; 3],
    /// Rest angle φ₀ (rad).
    pub rest_angle: f32,
    /// Compliance α (rad/(N·m)).
    pub compliance: f32,
}

/// The turn angle at b of the polyline a → b → c (rad, in (−π, π]); `None` if a segment is
/// shorter than 1 nm.
pub fn turn_angle(a: Vec2, b: Vec2, c: Vec2) -> Option<f32> {
    let (u, v) = (b - a, c - b);
    (u.length() > COINCIDENT && v.length() > COINCIDENT).then(|| u.perp_dot(v).atan2(u.dot(v)))
}

/// `angle` wrapped to (−π, π].
fn wrap(angle: f32) -> f32 {
    let tau = core::f32::consts::TAU;
    let wrapped = angle - tau * (angle / tau).round();
    if wrapped <= -core::f32::consts::PI {
        wrapped + tau
    } else {
        wrapped
    }
}

/// One Gauss-Seidel pass over the angle constraints `rows` (in order), with inverse masses
/// `w` (kg⁻¹), 1/Δt² `inv_dt2` (s⁻²) and the accumulated multipliers `lambda` (one per row).
pub fn project_angles(
    x: &mut [Vec2],
    w: &[f32],
    rows: &[AngleRow],
    lambda: &mut [f32],
    inv_dt2: f32,
) {
    for (row, lambda) in rows.iter().zip(lambda.iter_mut()) {
        let [a, b, c] = row.rows.map(|r| r as usize);
        let (u, v) = (x[b] - x[a], x[c] - x[b]);
        let (uu, vv) = (u.length_squared(), v.length_squared());
        if !(uu > COINCIDENT * COINCIDENT && vv > COINCIDENT * COINCIDENT) {
            continue;
        }
        let angle = u.perp_dot(v).atan2(u.dot(v));
        let constraint = wrap(angle - row.rest_angle);
        let grad_a = u.perp() / uu;
        let grad_c = v.perp() / vv;
        let grad_b = -grad_a - grad_c;
        let alpha_tilde = row.compliance * inv_dt2;
        let denominator = w[a] * grad_a.length_squared()
            + w[b] * grad_b.length_squared()
            + w[c] * grad_c.length_squared()
            + alpha_tilde;
        if denominator.partial_cmp(&0.0) != Some(core::cmp::Ordering::Greater)
            || !denominator.is_finite()
        {
            continue;
        }
        let d_lambda = (-constraint - alpha_tilde * *lambda) / denominator;
        *lambda += d_lambda;
        x[a] += w[a] * d_lambda * grad_a;
        x[b] += w[b] * d_lambda * grad_b;
        x[c] += w[c] * d_lambda * grad_c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(rest_angle: f32, compliance: f32) -> AngleRow {
        AngleRow {
            rows: [0, 1, 2],
            rest_angle,
            compliance,
        }
    }

    #[test]
    fn the_turn_angle_is_signed_and_zero_when_straight() {
        let (a, b) = (Vec2::ZERO, Vec2::X);
        assert_eq!(turn_angle(a, b, Vec2::new(2.0, 0.0)), Some(0.0));
        let left = turn_angle(a, b, Vec2::new(1.0, 1.0)).unwrap();
        assert!((left - core::f32::consts::FRAC_PI_2).abs() < 1e-6, "{left}");
        let right = turn_angle(a, b, Vec2::new(1.0, -1.0)).unwrap();
        assert!(
            (right + core::f32::consts::FRAC_PI_2).abs() < 1e-6,
            "{right}"
        );
        assert_eq!(turn_angle(a, a, b), None);
    }

    #[test]
    fn a_rigid_projection_straightens_a_bend_and_keeps_the_centre_of_mass() {
        // A 90° bend of equal masses: one projection of a rigid constraint linearises C, so
        // a few bring it to within 1e-5 rad; Σ wᵢ⁻¹ Δxᵢ = 0 (gradients sum to 0, equal w).
        let mut x = vec![Vec2::ZERO, Vec2::X, Vec2::new(1.0, 1.0)];
        let centre: Vec2 = x.iter().sum::<Vec2>() / 3.0;
        let w = [1.0; 3];
        let mut lambda = [0.0];
        for _ in 0..20 {
            project_angles(&mut x, &w, &[row(0.0, 0.0)], &mut lambda, 1e4);
        }
        let angle = turn_angle(x[0], x[1], x[2]).unwrap();
        assert!(angle.abs() < 1e-5, "angle {angle}");
        let moved: Vec2 = x.iter().sum::<Vec2>() / 3.0;
        assert!((moved - centre).length() < 1e-5, "{centre} → {moved}");
    }

    #[test]
    fn a_compliant_projection_moves_by_the_xpbd_share() {
        // A small bend θ, rest 0: Δλ = −θ/(Σ w|∇|² + α̃), so the angle after one projection
        // is about θ α̃/(Σ w|∇|² + α̃) (to first order in θ).
        let theta = 1e-3f32;
        let mut x = vec![Vec2::ZERO, Vec2::X, Vec2::X + Vec2::from_angle(theta)];
        let w = [0.0, 1.0, 1.0];
        // |∇b|² = |u⊥ + v⊥|² ≈ 4, |∇c|² = 1 with unit segments.
        let (sum, alpha_tilde) = (5.0, 5.0);
        let mut lambda = [0.0];
        project_angles(&mut x, &w, &[row(0.0, alpha_tilde)], &mut lambda, 1.0);
        let angle = turn_angle(x[0], x[1], x[2]).unwrap();
        let expected = theta * alpha_tilde / (sum + alpha_tilde);
        assert!(
            (angle - expected).abs() < 0.01 * theta,
            "{angle} vs {expected}"
        );
    }

    #[test]
    fn a_rest_angle_is_reached_the_short_way_round() {
        // Rest +170°, start at −170°: the short way is 20° through ±180°, not 340°.
        let rest = 170f32.to_radians();
        let b = Vec2::X;
        let mut x = vec![Vec2::ZERO, b, b + Vec2::from_angle(-170f32.to_radians())];
        let w = [0.0, 0.0, 1.0];
        let mut lambda = [0.0];
        for _ in 0..10 {
            project_angles(&mut x, &w, &[row(rest, 0.0)], &mut lambda, 1.0);
        }
        let angle = turn_angle(x[0], x[1], x[2]).unwrap();
        assert!(wrap(angle - rest).abs() < 1e-4, "{}", angle.to_degrees());
    }

    #[test]
    fn degenerate_joints_are_skipped_without_nan() {
        let mut x = vec![Vec2::ONE, Vec2::ONE, Vec2::new(2.0, 1.0)];
        let mut lambda = [0.0];
        project_angles(&mut x, &[1.0; 3], &[row(0.5, 0.0)], &mut lambda, 1e4);
        assert_eq!(x, vec![Vec2::ONE, Vec2::ONE, Vec2::new(2.0, 1.0)]);
        assert_eq!(lambda, [0.0]);
    }
}
