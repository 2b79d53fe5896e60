//! Constraints between particles.

pub mod distance;
pub mod tether;
