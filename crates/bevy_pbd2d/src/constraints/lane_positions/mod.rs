//! Reading and correcting the particle positions (m) of [`LANES`] constraints at once, for the
//! batched distance projection ([`batches`](super::batches)).
//!
//! A group's particle rows (`GroupRows`) are any rows, or — as a grid's edges of one direction
//! are, once the constraints are coloured direction by direction and sorted by row — runs of
//! consecutive rows, or pairs of adjacent rows. On x86_64 the (x, y) rows of two lanes share one
//! SSE register (`movsd` + `movhpd` for scattered rows, one `movups` for two consecutive ones),
//! so that a lane costs one subtraction or addition instead of two and no per-coordinate insert
//! or extract; with AVX2, consecutive and paired rows are moved four per 32-byte load or store
//! and shuffled into lanes in registers. Elsewhere each coordinate is moved on its own. All
//! paths do the same IEEE operations on the same values: the bits do not depend on the path
//! (NaN included).

#[cfg(target_arch = "x86_64")]
mod avx;
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
mod portable;
mod position_lanes;
mod rows;
#[cfg(target_arch = "x86_64")]
mod sse;
#[cfg(test)]
mod tests;

pub(crate) use position_lanes::PositionLanes;
pub(crate) use rows::{CONSECUTIVE_ORDER, GroupRows, LANES, PAIRED_ORDER, lane_rows};
