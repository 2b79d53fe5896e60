//! Constraints between particles.

pub mod distance;
pub mod distance_batch;
pub mod lane_positions;
pub mod tether;
