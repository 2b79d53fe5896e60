//! Artificial pressure s_corr (\[MM13\] §4, eq. 13–14): a repulsion between fluid pairs
//! closer than the rest spacing, added to every pair's multiplier in the position correction,
//!
//! ```text
//! s_corr = −k λ₀ ((W(xᵢ − xⱼ) − W(2r)) / (W(Δq) − W(2r)))ⁿ     (0 for pairs 2r or more apart)
//! Δxᵢ = (m/ρ0) Σⱼ (λᵢ + λⱼ + s_corr) ∇Wᵢⱼ + (1/ρ0) Σₖ Ψₖ λᵢ ∇Wᵢₖ
//! ```
//!
//! The clamped constraint (C = max(ρ/ρ0 − 1, 0)) asks for no room where the fluid is sparse:
//! two fluid particles alone weigh 2 m W(0) = 0.91 ρ0 (h = 4r) even when they coincide, so
//! nothing keeps a pair apart at the surface or in a spray, and particles clump in pairs and
//! strings (\[MM13\] §4). A 16 × 16 block at rest without gravity, its particles jittered
//! by up to 0.4 r, keeps its closest pair at 0.66 · 2r for good; with s_corr it is 0.95 · 2r
//! after 2 s (tests/fluid_forces.rs).
//!
//! Two changes from the paper, both measured on that block:
//! - **k is a density error.** λ has units here (m², the multiplier of a constraint whose
//!   gradient is (m/ρ0)∇W), so s_corr is k times λ₀ = 1/Σⱼ|∇ⱼCᵢ|² of a particle in the rest
//!   lattice: a pair at |Δq| is pushed apart as a density error of k would push it. The
//!   paper's bare k = 0.1 pushed each close pair by up to 0.76 m per iteration here; the step
//!   cap cut it to 1.5 r, and particles left at the speed limit.
//! - **It is 0 at and beyond the rest spacing 2r** (the kernel is measured from W(2r)). The
//!   paper's form also pushes neighbours at 2r apart (−9 · 10⁻⁴ k there); with nothing to hold
//!   the fluid together (the paper's unclamped constraint pulls sparse particles back; this
//!   one does not), the block above spread to 2.0 · 2r spacing in 2 s. Measured from W(2r),
//!   it grows by 6 %.
//!
//! The pair's corrections are equal and opposite (s_corr is symmetric, ∇Wᵢⱼ antisymmetric), so
//! momentum is kept. With [phases](crate::fluid::phases) s_corr is divided by μ_max, as λ.
//!
//! Off by default ([`FluidSettings::artificial_pressure`](crate::fluid::FluidSettings::artificial_pressure)
//! is `None`, the PBF demo's solve). With it on, every solve makes at least one correction,
//! even when the density is already within the tolerance (s_corr acts only in corrections),
//! and the density pass sums s_corr ∇W per pair: the cost is in the bench README.
//!
//! \[MM13\] Macklin, Müller: Position Based Fluids, SIGGRAPH 2013.

use bevy::prelude::*;

use crate::error::{PbdError, at_most, in_range, non_negative, positive};
use crate::fluid::kernel::{CubicSpline, KernelLanes};

/// The s_corr parameters (module docs; \[MM13\] eq. 13). Defaults are the paper's values:
/// k = 0.1 (here a density error, module docs), n = 4, |Δq| = 0.2 h.
#[derive(Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Default)]
pub struct ArtificialPressure {
    /// Strength k, as a density error (dimensionless: s_corr = −k λ₀ at |Δq|, module docs),
    /// 0 ..= [`MAX_STRENGTH`]. Default 0.1.
    pub strength: f32,
    /// Exponent n, 1 ..= [`MAX_EXPONENT`]. Default 4.
    pub exponent: u32,
    /// The distance |Δq| at which s_corr = −k, as a fraction of the support radius h, in
    /// (0, 1). Default 0.2 (the paper: 0.1 … 0.3).
    pub delta_q: f32,
}

/// The largest accepted [`ArtificialPressure::strength`].
pub const MAX_STRENGTH: f32 = 1.0;

/// The largest accepted [`ArtificialPressure::exponent`].
pub const MAX_EXPONENT: u32 = 8;

impl Default for ArtificialPressure {
    fn default() -> Self {
        Self {
            strength: 0.1,
            exponent: 4,
            delta_q: 0.2,
        }
    }
}

impl ArtificialPressure {
    /// Checks every field.
    ///
    /// # Errors
    /// [`PbdError::Negative`] or [`PbdError::TooLarge`] for a strength outside
    /// 0 ..= [`MAX_STRENGTH`] (or not finite), [`PbdError::OutOfRange`] for an exponent
    /// outside 1 ..= [`MAX_EXPONENT`], [`PbdError::NotPositive`] or [`PbdError::TooLarge`] for
    /// |Δq| outside (0, 1) h.
    pub fn validate(&self) -> Result<(), PbdError> {
        let strength = non_negative("s_corr strength k", self.strength)?;
        at_most("s_corr strength k", strength, MAX_STRENGTH)?;
        in_range("s_corr exponent n", self.exponent, 1, MAX_EXPONENT)?;
        let delta_q = positive("s_corr |Δq| (fraction of h)", self.delta_q)?;
        at_most("s_corr |Δq| (fraction of h)", delta_q, 0.99)?;
        Ok(())
    }

    /// The solve's constants for `kernel` and the fluid's rest spacing `spacing` (2r, m).
    pub(crate) fn terms(&self, kernel: &CubicSpline, spacing: f32) -> ArtificialPressureTerms {
        let at_rest = kernel.w(spacing);
        ArtificialPressureTerms {
            strength: self.strength * rest_multiplier(kernel, spacing),
            exponent: self.exponent,
            w_rest: at_rest,
            inv_w_delta_q: 1.0 / (kernel.w(self.delta_q * kernel.support_radius()) - at_rest),
        }
    }
}

/// λ₀ = 1/Σⱼ|∇ⱼCᵢ|² (m²) of a particle in the square lattice of spacing `spacing` (2r) at
/// rest, with ∇ⱼCᵢ = −(m/ρ0)∇Wᵢⱼ and m/ρ0 = spacing²: the multiplier a density error C = 1
/// would get there ([`density`](crate::fluid::density)).
fn rest_multiplier(kernel: &CubicSpline, spacing: f32) -> f32 {
    let reach = (kernel.support_radius() / spacing).ceil() as i32;
    let volume = spacing * spacing;
    let mut sum = 0.0;
    for iy in -reach..=reach {
        for ix in -reach..=reach {
            let r = Vec2::new(ix as f32, iy as f32) * spacing;
            sum += (volume * kernel.gradient(r)).length_squared();
        }
    }
    1.0 / sum
}

/// The constants of s_corr in one solve.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ArtificialPressureTerms {
    /// k λ₀ (m²).
    pub strength: f32,
    pub exponent: u32,
    /// W(2r), the kernel at the rest spacing.
    pub w_rest: f32,
    /// 1/(W(Δq) − W(2r)).
    pub inv_w_delta_q: f32,
}

impl ArtificialPressureTerms {
    /// s_corr = −k ((W − W(2r))/(W(Δq) − W(2r)))ⁿ of the pair whose kernel value is `w`, 0
    /// at and beyond the rest spacing.
    #[inline(always)]
    pub(crate) fn of<V: KernelLanes>(&self, w: V) -> V {
        let splat = V::splat;
        let q = (w - splat(self.w_rest)).fast_max(splat(0.0)) * splat(self.inv_w_delta_q);
        let mut power = q;
        for _ in 1..self.exponent {
            power = power * q;
        }
        splat(-self.strength) * power
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// s_corr is −k at |Δq|, 0 at and beyond the rest spacing 2r, and grows in size as a
    /// pair closes in between.
    #[test]
    fn s_corr_is_minus_k_at_delta_q_and_zero_at_rest() {
        let kernel = CubicSpline::new(0.1);
        let terms = ArtificialPressure::default().terms(&kernel, 0.05);
        let at = |d: f32| terms.of(kernel.w(d));
        let k = terms.strength;
        assert!((at(0.02) + k).abs() < 1e-5 * k, "{} against {k}", at(0.02));
        assert_eq!(at(0.05), 0.0);
        assert_eq!(at(0.07), 0.0);
        let closing = [0.049, 0.045, 0.04, 0.03, 0.025, 0.02].map(at);
        assert!(closing.windows(2).all(|p| p[1] < p[0]), "{closing:?}");
        assert!(closing[0] < 0.0 && closing[0] > -1e-5 * k, "{closing:?}");
    }

    #[test]
    fn bad_parameters_are_refused() {
        let ok = ArtificialPressure::default();
        assert!(ok.validate().is_ok());
        for bad in [
            ArtificialPressure {
                strength: -0.1,
                ..ok
            },
            ArtificialPressure {
                strength: f32::NAN,
                ..ok
            },
            ArtificialPressure {
                strength: 2.0,
                ..ok
            },
            ArtificialPressure { exponent: 0, ..ok },
            ArtificialPressure { exponent: 9, ..ok },
            ArtificialPressure { delta_q: 0.0, ..ok },
            ArtificialPressure { delta_q: 1.0, ..ok },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }
}
