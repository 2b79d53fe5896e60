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

use core::ops::{Add, Div, Mul, Sub};

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
        self.terms(Lanes::splat(r)).0.as_array()[0]
    }

    /// W(d) (1/m²) and the factor s (1/m⁴) with ∇W(r) = s r, at distances `d` = ‖r‖ (m), for
    /// a vector of pairs at once. Branch-free; s stays finite at d = 0 (the inner piece is
    /// s = 6σ/h² (3q − 2)), and both are 0 for d ≥ h.
    #[inline(always)]
    fn terms<V: KernelLanes>(&self, d: V) -> (V, V) {
        let s = V::splat;
        let q = d * s(self.inv_h);
        let q2 = q * q;
        let inner_w = (q2 * q * s(6.0) - q2 * s(6.0) + s(1.0)) * s(self.sigma);
        let inner_s = (q * s(3.0) - s(2.0)) * s(self.gradient_factor * self.inv_h);
        let a = (s(1.0) - q).fast_max(s(0.0));
        let outer_w = a * a * a * s(2.0 * self.sigma);
        let outer_s = a * a * s(-self.gradient_factor) / d;
        (
            q.select_le(s(0.5), inner_w, outer_w),
            q.select_le(s(0.5), inner_s, outer_s),
        )
    }

    /// (W, ∇W) at offset r = xᵢ − xⱼ with ‖r‖ = `d`, on one scalar lane (the contacts' kernel).
    #[inline]
    pub(crate) fn scalar(&self, r: Vec2, d: f32) -> (f32, Vec2) {
        let (w, s) = self.terms(d);
        (w, r * s)
    }

    /// (W, ∇W) at offset r = xᵢ − xⱼ with ‖r‖ = `d` (one lane of [`CubicSpline::batch`]; the
    /// tests' scalar reference).
    pub fn value_and_gradient(&self, r: Vec2, d: f32) -> (f32, Vec2) {
        let b = self.batch(Lanes::splat(r.x), Lanes::splat(r.y), Lanes::splat(d));
        (
            b.w.as_array()[0],
            Vec2::new(b.gx.as_array()[0], b.gy.as_array()[0]),
        )
    }

    /// W and ∇W of [`LANES`] offsets rᵢⱼ = (`rx`, `ry`) with lengths `d` at once.
    #[inline(always)]
    pub fn batch(&self, rx: Lanes, ry: Lanes, d: Lanes) -> KernelBatch {
        let (w, gx, gy) = self.batch_of(rx, ry, d);
        KernelBatch { w, gx, gy }
    }

    /// W, ∇W·x̂ and ∇W·ŷ of the offsets (`rx`, `ry`) with lengths `d` in the lanes of `V`; each
    /// lane has the bits of [`CubicSpline::batch`].
    #[inline(always)]
    pub(crate) fn batch_of<V: KernelLanes>(&self, rx: V, ry: V, d: V) -> (V, V, V) {
        let (w, s) = self.terms(d);
        (w, rx * s, ry * s)
    }

    /// ∇W with respect to xᵢ for r = xᵢ − xⱼ (1/m³); zero for ‖r‖ ≥ h (the tests' reference,
    /// and the boundary samples' share of a push, [`collider::samples`](crate::collider::samples)).
    pub fn gradient(&self, r: Vec2) -> Vec2 {
        self.value_and_gradient(r, r.length()).1
    }
}

/// The lane operations of the kernel, on the fluid's [`Lanes`] and on the 8-lane vectors of the
/// density pass (`wide::f32x8`, and one AVX register where the CPU has AVX2): the same IEEE
/// operation per lane in each.
pub(crate) trait KernelLanes:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    /// Every lane `v`.
    fn splat(v: f32) -> Self;
    /// The larger of the two in each lane, as wide's `fast_max` (on x86 `maxps`: `other` where
    /// either is NaN; both implementations agree on every target).
    fn fast_max(self, other: Self) -> Self;
    /// `if_true` where `self` ≤ `rhs`, `if_false` elsewhere (and where either is NaN).
    fn select_le(self, rhs: Self, if_true: Self, if_false: Self) -> Self;
}

macro_rules! wide_kernel_lanes {
    ($t:ty) => {
        impl KernelLanes for $t {
            #[inline(always)]
            fn splat(v: f32) -> Self {
                <$t>::splat(v)
            }
            #[inline(always)]
            fn fast_max(self, other: Self) -> Self {
                <$t>::fast_max(self, other)
            }
            #[inline(always)]
            fn select_le(self, rhs: Self, if_true: Self, if_false: Self) -> Self {
                self.simd_le(rhs).select(if_true, if_false)
            }
        }
    };
}
wide_kernel_lanes!(wide::f32x4);
wide_kernel_lanes!(wide::f32x8);

/// One lane: the scalar kernel of the contacts (the same operations as a lane of the others).
impl KernelLanes for f32 {
    #[inline(always)]
    fn splat(v: f32) -> Self {
        v
    }
    #[inline(always)]
    fn fast_max(self, other: Self) -> Self {
        // As `maxps`: `other` unless `self` is the larger (so `other` where either is NaN).
        if self > other { self } else { other }
    }
    #[inline(always)]
    fn select_le(self, rhs: Self, if_true: Self, if_false: Self) -> Self {
        if self <= rhs { if_true } else { if_false }
    }
}

#[cfg(target_arch = "x86_64")]
impl KernelLanes for crate::simd::Avx8 {
    #[inline(always)]
    fn splat(v: f32) -> Self {
        <Self as crate::simd::Lanes8>::splat(v)
    }
    #[inline(always)]
    fn fast_max(self, other: Self) -> Self {
        use core::arch::x86_64::_mm256_max_ps;
        // SAFETY: values of this type exist only where the CPU has AVX.
        unsafe { Self::from_m256(_mm256_max_ps(self.m256(), other.m256())) }
    }
    #[inline(always)]
    fn select_le(self, rhs: Self, if_true: Self, if_false: Self) -> Self {
        use core::arch::x86_64::{_CMP_LE_OQ, _mm256_blendv_ps, _mm256_cmp_ps};
        // SAFETY: as above.
        unsafe {
            let le = _mm256_cmp_ps::<_CMP_LE_OQ>(self.m256(), rhs.m256());
            Self::from_m256(_mm256_blendv_ps(if_false.m256(), if_true.m256(), le))
        }
    }
}

/// Number of neighbour pairs in a batch of the neighbour lists (XSPH evaluates one batch at
/// once; the density solve takes 8 rows' pairs at once instead).
pub const LANES: usize = 4;

/// One f32 per lane ([`LANES`] of them), computed with SIMD where the target has it.
pub type Lanes = wide::f32x4;

/// W (1/m²) and ∇W (1/m³) of [`LANES`] pairs (see [`CubicSpline::batch`]).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct KernelBatch {
    /// W per lane (1/m²).
    pub w: Lanes,
    /// x component of ∇W per lane (1/m³).
    pub gx: Lanes,
    /// y component of ∇W per lane (1/m³).
    pub gy: Lanes,
}

/// Σ of the lanes, in lane order (the same order on every target).
#[inline(always)]
pub fn sum_lanes(lanes: Lanes) -> f32 {
    let a = lanes.to_array();
    let mut half = [0.0; LANES];
    half.copy_from_slice(&a);
    // Pairwise: lane l + lane l + LANES/2, halving until one is left.
    let mut n = LANES;
    while n > 1 {
        n /= 2;
        for l in 0..n {
            half[l] += half[l + n];
        }
    }
    half[0]
}

/// Lengths √(x² + y²) of [`LANES`] vectors (m).
#[inline(always)]
pub fn lengths(x: Lanes, y: Lanes) -> Lanes {
    (x * x + y * y).sqrt()
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
    fn the_scalar_kernel_has_the_bits_of_a_lane() {
        let k = CubicSpline::new(0.1);
        for &(x, y) in &[
            (0.0, 0.0),
            (0.01, 0.02),
            (0.04, -0.03),
            (0.07, 0.05),
            (0.1, 0.0),
        ] {
            let r = Vec2::new(x, y);
            let (w, g) = k.scalar(r, r.length());
            let (wl, gl) = k.value_and_gradient(r, r.length());
            assert_eq!(
                (w.to_bits(), g.x.to_bits(), g.y.to_bits()),
                (wl.to_bits(), gl.x.to_bits(), gl.y.to_bits())
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
            assert_eq!(g, k.gradient(r));
        }
    }

    #[test]
    fn batch_is_bitwise_the_pairwise_kernel() {
        let k = CubicSpline::new(0.1);
        let rx = [0.0, 0.01, -0.03, 0.049, 0.05, 0.07, -0.099, 0.2];
        let ry = [0.0, 0.02, 0.01, 0.0, 0.001, -0.05, 0.0, 0.1];
        let lanes = |v: &[f32]| Lanes::from(<[f32; LANES]>::try_from(v).unwrap());
        for (rx, ry) in rx.chunks(LANES).zip(ry.chunks(LANES)) {
            let d = lengths(lanes(rx), lanes(ry));
            let b = k.batch(lanes(rx), lanes(ry), d);
            let (w, gx, gy) = (b.w.to_array(), b.gx.to_array(), b.gy.to_array());
            for l in 0..LANES {
                let r = Vec2::new(rx[l], ry[l]);
                assert_eq!(d.to_array()[l], r.length());
                let (wl, g) = k.value_and_gradient(r, r.length());
                assert_eq!((w[l], gx[l], gy[l]), (wl, g.x, g.y), "lane {l}");
                assert!(wl.is_finite() && g.is_finite());
                // Outside the support both are exactly zero; at r = 0 the gradient is zero.
                if r.length() >= 0.1 {
                    assert_eq!((wl, g), (0.0, Vec2::ZERO));
                }
                if r == Vec2::ZERO {
                    assert_eq!(g, Vec2::ZERO);
                }
            }
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
