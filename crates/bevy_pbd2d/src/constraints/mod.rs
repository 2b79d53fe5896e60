//! Constraints between particles.

pub mod distance;
