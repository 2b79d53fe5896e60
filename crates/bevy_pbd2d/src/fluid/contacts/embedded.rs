//! What a particle's start x₀ tells of the wall near it: whether it is embedded, how deep,
//! the local wall's normal and the side of it the particle belongs on, and how far to push it.

use bevy::prelude::*;

use super::walls::Walls;
use crate::fluid::kernel::CubicSpline;
use crate::fluid::settings::FluidSettings;

/// What [`scan`] found of a particle.
pub(super) enum Scan {
    /// Embedded at x₀: its depth in the discs (m, 0 outside them), the excess of the samples'
    /// density ρ_b over ρ0 (kg/m²) and ∇ρ_b (kg/m³), the nearest sample.
    Embedded {
        depth: f32,
        excess: f32,
        gradient: Vec2,
        nearest: u32,
    },
    /// Free at x₀, and its motion enters a disc.
    Touches,
    /// Free at x₀, and its motion enters none of `near`.
    Free,
}

/// Scans the samples `near` a particle (those within h of x* at least: within h of x₀ when it
/// moved little) from x₀ = `start` moving to `x`: whether it is embedded (inside a disc, or
/// ρ_b = m W(0) + Σₖ Ψₖ Wₖ > ρ0), else whether its motion enters a disc.
pub(super) fn scan(
    walls: &Walls,
    kernel: &CubicSpline,
    settings: &FluidSettings,
    (start, x): (Vec2, Vec2),
    near: &[u32],
) -> Scan {
    let (r2, h2) = (walls.radius * walls.radius, walls.reach * walls.reach);
    let (motion, mut touches) = (x - start, false);
    let mm = motion.length_squared();
    let (mut depth, mut nearest) = (0.0f32, (f32::INFINITY, u32::MAX));
    let mut density = settings.particle_mass() * kernel.w0();
    let mut gradient = Vec2::ZERO;
    for &k in near {
        let offset = start - walls.samples[k as usize];
        let d2 = offset.length_squared();
        if d2 < nearest.0 {
            nearest = (d2, k);
        }
        if d2 < r2 {
            depth = depth.max(walls.radius - d2.sqrt());
        } else {
            // The ray–circle test of `Walls::first_hit`, without the hit point.
            let fd = offset.dot(motion);
            let c = d2 - r2;
            touches |= fd < 0.0 && fd * fd >= mm * c && -fd <= mm + (fd * fd - mm * c).sqrt();
        }
        if d2 < h2 {
            let (wk, gk) = kernel.scalar(offset, d2.sqrt());
            let psi = walls.psi[k as usize];
            density += psi * wk;
            gradient += psi * gk;
        }
    }
    let excess = density - settings.rest_density;
    if nearest.1 != u32::MAX && (depth > 0.0 || excess > 0.0) {
        Scan::Embedded {
            depth,
            excess,
            gradient,
            nearest: nearest.1,
        }
    } else if touches {
        Scan::Touches
    } else {
        Scan::Free
    }
}

/// Which way an embedded particle at x₀ = `start` leaves the wall: the wall's `normal` turned to
/// a side. Farther than `band` from the wall's line (measured from `on`, a point of it), the
/// side x₀ is on. Within it (inside the discs, where a particle sunk a little into a floor is
/// below its line), the side of its fluid neighbours (`fluid_side`, m: toward their centre)
/// when they lie at least 1 % of `radius` off the line; else the side its position one step
/// before (`start + back`) was on, when it crossed the line in that step by at least 1 % of
/// `radius` (less is noise: a held particle's velocity of a few µm/s across the wall pushed it
/// out of the box); else the side x₀ is on. Exactly on the line with nothing to go by, the
/// first of the directions `fallbacks` that points off it (where a row of samples has no
/// inside: the samples' centroid, against gravity).
pub(super) fn outward(
    normal: Vec2,
    (start, on): (Vec2, Vec2),
    (fluid_side, back, fallbacks): (Vec2, Vec2, [Vec2; 2]),
    (band, radius): (f32, f32),
) -> Vec2 {
    let noise = 0.01 * radius;
    let height = (start - on).dot(normal);
    let own = (height.abs() > 1e-6 * radius).then(|| normal * height.signum());
    if let Some(own) = own
        && height.abs() >= band
    {
        return own;
    }
    let side = |offset: f32| normal * offset.signum();
    let neighbours = (fluid_side.dot(normal).abs() >= noise).then(|| side(fluid_side.dot(normal)));
    let before = height + back.dot(normal);
    let crossed = (before.abs() >= noise && before * height <= 0.0).then(|| side(before));
    let fallbacks = fallbacks.into_iter();
    let fallback = fallbacks.filter(|hint| hint.dot(normal).abs() > 1e-6 * hint.length());
    neighbours
        .or(crossed)
        .or(own)
        .or_else(|| fallback.map(|hint| side(hint.dot(normal))).next())
        .unwrap_or(normal)
}
