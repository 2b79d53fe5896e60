//! Long-range attachments (tethers): unilateral distance limits from a particle to an anchor,
//! usually a pinned particle (\[KCM12\] Kim, Chentanez, Müller: Long Range Attachments – A Method
//! to Simulate Inextensible Clothing in Computer Games, SCA 2012).
//!
//! With only a few Gauss-Seidel iterations, a hanging cloth stretches far under its own weight:
//! corrections travel one constraint per sweep, while gravity pulls every particle every step.
//! A tether from every free particle to every pinned particle, with its rest distance as the
//! limit, stops that in one pass:
//!
//! ```text
//! C = ‖xₚ − xₐ‖ − L,  projected only when C > 0:
//! Δxₚ = −wₚ/(wₚ + wₐ) C n,   Δxₐ = +wₐ/(wₚ + wₐ) C n,   n = (xₚ − xₐ)/‖xₚ − xₐ‖
//! ```

use bevy::ecs::entity::MapEntities;
use bevy::ecs::reflect::ReflectMapEntities;
use bevy::prelude::*;

use crate::constraints::row::LENGTH_RANGE;
use crate::error::{PbdError, non_negative, within};

/// Keeps `particle` within `max_distance` (m) of `anchor`; never pushes it closer. Spawned on
/// an entity of its own (like [`DistanceConstraint`](super::distance::DistanceConstraint)) and
/// despawned with either particle. Editable in place, like it.
///
/// Its entities are mapped when a world is loaded into another (`MapEntities`).
#[derive(Component, MapEntities, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, MapEntities, Debug, PartialEq)]
#[require(TetherIndex)]
pub struct LongRangeAttachment {
    /// The tethered particle.
    #[entities]
    pub particle: Entity,
    /// The anchor particle (typically pinned).
    #[entities]
    pub anchor: Entity,
    /// Largest allowed distance L (m), ≥ 0.
    pub max_distance: f32,
}

/// A long-range attachment's place in the order the attachments are projected in; maintained
/// by the plugin, as [`ConstraintIndex`](super::distance::ConstraintIndex) is for distance
/// constraints (`u32::MAX`: not yet placed).
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Default)]
pub struct TetherIndex(pub(crate) u32);

impl Default for TetherIndex {
    fn default() -> Self {
        Self(u32::MAX)
    }
}

impl TetherIndex {
    /// The place (`u32::MAX` while it has none).
    pub fn get(self) -> u32 {
        self.0
    }
}

impl LongRangeAttachment {
    /// A tether of length `max_distance` (m).
    ///
    /// # Errors
    /// [`PbdError::Negative`] for a negative, NaN or infinite length,
    /// [`PbdError::NotInRange`] above [`LENGTH_RANGE`].
    pub fn new(particle: Entity, anchor: Entity, max_distance: f32) -> Result<Self, PbdError> {
        let max_distance = non_negative("tether length (m)", max_distance)?;
        Ok(Self {
            particle,
            anchor,
            max_distance: within("tether length (m)", max_distance, LENGTH_RANGE)?,
        })
    }
}

/// A tether as rows into the solver arrays.
#[derive(Reflect, Debug, Clone, Copy, PartialEq)]
pub struct TetherRow {
    /// Row of the tethered particle.
    pub particle: u32,
    /// Row of the anchor.
    pub anchor: u32,
    /// Largest allowed distance L (m).
    pub max_distance: f32,
}

/// Projects every violated tether once.
pub fn project_tethers(x: &mut [Vec2], w: &[f32], rows: &[TetherRow]) {
    for row in rows {
        let (p, a) = (row.particle as usize, row.anchor as usize);
        let total = w[p] + w[a];
        if total <= 0.0 {
            continue;
        }
        let delta = x[p] - x[a];
        let length = delta.length();
        let c = length - row.max_distance;
        if c <= 0.0 {
            continue;
        }
        let n = delta / length;
        x[p] -= (w[p] / total) * c * n;
        x[a] += (w[a] / total) * c * n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pulls_back_only_when_too_far() {
        let rows = [TetherRow {
            particle: 1,
            anchor: 0,
            max_distance: 1.0,
        }];
        let mut x = vec![Vec2::ZERO, Vec2::new(0.5, 0.0)];
        project_tethers(&mut x, &[0.0, 1.0], &rows);
        assert_eq!(x[1], Vec2::new(0.5, 0.0), "slack tether does nothing");
        x[1] = Vec2::new(0.0, -3.0);
        project_tethers(&mut x, &[0.0, 1.0], &rows);
        assert!((x[1] - Vec2::new(0.0, -1.0)).length() < 1e-6, "{}", x[1]);
        assert_eq!(x[0], Vec2::ZERO, "the pinned anchor stays");
    }
}
