//! Constraints between particles.

pub mod distance;
pub mod distance_batch;
pub mod tether;
