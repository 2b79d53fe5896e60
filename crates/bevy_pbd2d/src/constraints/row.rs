//! A distance constraint as the solver stores it: rows into the particle arrays.

use bevy::prelude::*;

/// The rest lengths [`DistanceConstraint::new`](super::DistanceConstraint::new) accepts, and
/// the tether lengths of
/// [`LongRangeAttachment::new`](super::tether::LongRangeAttachment::new) (m): 0 to 10 km.
pub const LENGTH_RANGE: core::ops::RangeInclusive<f32> = 0.0..=1e4;

/// A constraint as rows into the solver arrays.
#[derive(Reflect, Debug, Clone, Copy, PartialEq)]
pub struct DistanceRow {
    /// Row of the first particle.
    pub a: u32,
    /// Row of the second particle.
    pub b: u32,
    /// Rest length d (m).
    pub rest_length: f32,
    /// Compliance α (m/N).
    pub compliance: f32,
}

/// Below this length (m) two particles count as coincident.
pub(crate) const COINCIDENT: f32 = 1e-9;

/// The colour shared by the constraints of a particle in more than 63 constraints: its
/// constraints may share particles.
pub(crate) const OVERFLOW_COLOUR: u8 = 63;
