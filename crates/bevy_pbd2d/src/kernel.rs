//! The 2D cubic spline kernel W and its gradient ∇W ([Monaghan 1992]; 2D normalisation
//! σ = 40/(7πh²) with support radius h, as in the PBF demo).
//!
//! With q = ‖r‖/h:
//!
//! ```text
//! W(q) = σ (6q³ − 6q² + 1)   for 0 ≤ q ≤ ½
//!        σ  2(1 − q)³         for ½ < q ≤ 1
//!        0                    otherwise
//! ∇W(r) = 6σ/h · q(3q − 2) · r/‖r‖     for q ≤ ½
//!         −6σ/h · (1 − q)² · r/‖r‖     for ½ < q ≤ 1
//! ```
//!
//! W has units 1/m² and integrates to 1 over the plane.

use bevy::math::Vec2;

/// The cubic spline kernel for a fixed support radius h (m).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CubicSpline {
    h: f32,
    inv_h: f32,
    sigma: f32,
    gradient_factor: f32,
    w0: f32,
}

impl CubicSpline {
    /// The kernel with support radius `h` (m). `h` must be > 0 (checked by
    /// [`FluidSettings::validate`](crate::fluid::FluidSettings::validate)).
    pub fn new(h: f32) -> Self {
        let sigma = 40.0 / (7.0 * core::f32::consts::PI * h * h);
        Self {
            h,
            inv_h: 1.0 / h,
            sigma,
            gradient_factor: 6.0 * sigma / h,
            w0: sigma,
        }
    }

    /// Support radius h (m).
    pub fn support_radius(&self) -> f32 {
        self.h
    }

    /// W(0) (1/m²): the particle's own contribution to its density per unit mass.
    pub fn w0(&self) -> f32 {
        self.w0
    }

    /// W at distance `r` (m), in 1/m².
    #[inline]
    pub fn w(&self, r: f32) -> f32 {
        let q = r * self.inv_h;
        if q <= 0.5 {
            let q2 = q * q;
            self.sigma * (6.0 * q2 * q - 6.0 * q2 + 1.0)
        } else if q <= 1.0 {
            let a = 1.0 - q;
            self.sigma * 2.0 * a * a * a
        } else {
            0.0
        }
    }

    /// (W, ∇W) at offset r = xᵢ − xⱼ with ‖r‖ = `d`, sharing the work of both.
    #[inline]
    pub fn value_and_gradient(&self, r: Vec2, d: f32) -> (f32, Vec2) {
        let q = d * self.inv_h;
        if q > 1.0 {
            return (0.0, Vec2::ZERO);
        }
        let (w, magnitude) = if q <= 0.5 {
            let q2 = q * q;
            (
                self.sigma * (6.0 * q2 * q - 6.0 * q2 + 1.0),
                self.gradient_factor * q * (3.0 * q - 2.0),
            )
        } else {
            let a = 1.0 - q;
            (self.sigma * 2.0 * a * a * a, -self.gradient_factor * a * a)
        };
        if q <= 1e-6 {
            return (w, Vec2::ZERO);
        }
        (w, r * (magnitude / d))
    }

    /// ∇W with respect to xᵢ for r = xᵢ − xⱼ (1/m³). Zero for ‖r‖ ≤ 10⁻⁶ h (no direction) and
    /// for ‖r‖ > h.
    #[inline]
    pub fn gradient(&self, r: Vec2) -> Vec2 {
        let d = r.length();
        self.gradient_with_length(r, d)
    }

    /// As [`CubicSpline::gradient`] with ‖r‖ = `d` already known.
    #[inline]
    pub fn gradient_with_length(&self, r: Vec2, d: f32) -> Vec2 {
        let q = d * self.inv_h;
        if q > 1.0 || q <= 1e-6 {
            return Vec2::ZERO;
        }
        let magnitude = if q <= 0.5 {
            self.gradient_factor * q * (3.0 * q - 2.0)
        } else {
            let a = 1.0 - q;
            -self.gradient_factor * a * a
        };
        r * (magnitude / d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrates_to_one() {
        let h = 0.1;
        let k = CubicSpline::new(h);
        // Midpoint rule on a fine grid over the support square.
        let n = 800;
        let dx = 2.0 * h / n as f32;
        let mut sum = 0.0f64;
        for i in 0..n {
            for j in 0..n {
                let p = Vec2::new(-h + (i as f32 + 0.5) * dx, -h + (j as f32 + 0.5) * dx);
                sum += (k.w(p.length()) * dx * dx) as f64;
            }
        }
        assert!((sum - 1.0).abs() < 1e-3, "∫W = {sum}");
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let h = 0.1;
        let k = CubicSpline::new(h);
        let e = 1e-5;
        for &(x, y) in &[
            (0.01, 0.02),
            (0.03, -0.01),
            (-0.06, 0.04),
            (0.0, 0.09),
            (0.045, 0.0),
        ] {
            let r = Vec2::new(x, y);
            let fd = Vec2::new(
                (k.w((r + Vec2::X * e).length()) - k.w((r - Vec2::X * e).length())) / (2.0 * e),
                (k.w((r + Vec2::Y * e).length()) - k.w((r - Vec2::Y * e).length())) / (2.0 * e),
            );
            let g = k.gradient(r);
            assert!(
                (g - fd).length() <= 2e-3 * fd.length().max(1.0),
                "r {r}: {g} vs {fd}"
            );
        }
    }

    #[test]
    fn value_and_gradient_agree_with_the_separate_functions() {
        let k = CubicSpline::new(0.1);
        for &(x, y) in &[
            (0.01, 0.02),
            (0.04, -0.03),
            (-0.07, 0.01),
            (0.2, 0.0),
            (0.0, 0.0),
        ] {
            let r = Vec2::new(x, y);
            let (w, g) = k.value_and_gradient(r, r.length());
            assert_eq!(w, k.w(r.length()));
            assert!((g - k.gradient(r)).length() <= 1e-6 * g.length().max(1.0));
        }
    }

    #[test]
    fn zero_outside_support_and_continuous_at_half() {
        let k = CubicSpline::new(0.1);
        assert_eq!(k.w(0.1001), 0.0);
        assert_eq!(k.gradient(Vec2::new(0.2, 0.0)), Vec2::ZERO);
        assert!((k.w(0.0499999) - k.w(0.0500001)).abs() < 1e-2);
        assert_eq!(k.w0(), k.w(0.0));
    }
}
