//! Directions for degenerate configurations: particles at the same point have no direction
//! between them, so constraint gradients are 0/0. Instead of NaN (or no force at all), such
//! pairs are separated along a fixed, deterministic direction that differs between pairs.

use bevy::math::Vec2;

/// Unit direction number `k` of a golden-angle sequence (well spread for consecutive k).
#[inline]
pub fn separation_direction(k: usize) -> Vec2 {
    Vec2::from_angle((k % 4096) as f32 * 2.399_963)
}

/// Direction from particle `j` to particle `i` for coincident particles: antisymmetric
/// (`pair_direction(i, j) == −pair_direction(j, i)`), so the pair is pushed apart.
#[inline]
pub fn pair_direction(i: usize, j: usize) -> Vec2 {
    let d = separation_direction(i.min(j));
    if i < j { d } else { -d }
}
