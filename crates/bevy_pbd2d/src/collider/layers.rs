//! Which particles a collider stops: collision layers, as avian's `CollisionLayers` (the
//! feature `avian` fills them from that component; without it everything collides).
//!
//! A particle and a collider interact when each one's memberships meet the other's filters
//! (avian's `CollisionLayers::interacts_with`). A particle that does not interact with a
//! collider passes it: no contact, and (fluid) no density from its boundary samples. A
//! collider without layers has avian's default (the first layer, every filter); a particle
//! without layers (its own or its body's) meets every collider, so that layers a game gives
//! its rigid bodies do not change what its particles collide with until it gives them layers.
//! The filter is on only while some particle or body has layers.
//!
//! Limits: the filter is on particle–collider contacts and the samples' density. The samples'
//! pseudo-masses Ψ are computed from every sample, so fluid resting on one collider where an
//! excluded collider's samples touch its own is supported a little less there. A body's
//! particles still meet each other's ([`SolidContacts`](crate::solid_contacts::SolidContacts),
//! [`FluidCoupling`](crate::fluid::FluidCoupling)) whatever their layers. The grid projection
//! ([`density::grid_projection`](crate::fluid::density::grid_projection)) takes every
//! sample's cell as solid for all fluid: under it, fluid that excludes a collider still meets
//! the collider's cells as walls (not checked by a test).

use bevy::prelude::*;

/// Memberships and filters, bit masks of 32 layers, as avian's `CollisionLayers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layers {
    /// The layers it belongs to.
    pub(crate) memberships: u32,
    /// The layers it interacts with.
    pub(crate) filters: u32,
}

impl Layers {
    /// avian's default: the first layer, every filter. A collider without layers has them.
    pub(crate) const DEFAULT: Self = Self {
        memberships: 1,
        filters: u32::MAX,
    };

    /// Every layer and every filter: particles without layers, and boundary samples placed by
    /// hand (no collider's), meet everything.
    pub(crate) const ALL: Self = Self {
        memberships: u32::MAX,
        filters: u32::MAX,
    };

    /// Whether the two interact (avian's rule).
    pub(crate) fn interacts(self, other: Self) -> bool {
        self.memberships & other.filters != 0 && other.memberships & self.filters != 0
    }
}

/// The layers of the step's particle rows and boundary samples, while any particle or body has
/// layers (else both empty: everything interacts, at no cost).
#[derive(Resource, Debug, Default)]
pub struct CollisionFilter {
    /// Layers of each particle row; empty while no particle or body has any.
    pub(crate) rows: Vec<Layers>,
    /// Layers of each boundary sample row (its collider's, [`Layers::ALL`] for a sample of
    /// none); empty as `rows`.
    pub(crate) boundary: Vec<Layers>,
}

impl CollisionFilter {
    /// Whether any particle or body has layers this step.
    pub(crate) fn active(&self) -> bool {
        !self.rows.is_empty()
    }

    /// The layers of particle row `row`.
    pub(crate) fn row(&self, row: usize) -> Layers {
        self.rows.get(row).copied().unwrap_or(Layers::ALL)
    }

    /// Whether fluid row `row` takes density from boundary sample `k`.
    pub(crate) fn sees_sample(&self, row: usize, k: usize) -> bool {
        self.row(row)
            .interacts(self.boundary.get(k).copied().unwrap_or(Layers::ALL))
    }
}

#[cfg(test)]
mod tests {
    use super::{CollisionFilter, Layers};

    #[test]
    fn layers_interact_as_avians_do() {
        let own = |m, f| Layers {
            memberships: m,
            filters: f,
        };
        assert!(Layers::DEFAULT.interacts(Layers::DEFAULT));
        assert!(own(2, 2).interacts(Layers::ALL));
        assert!(
            !own(2, 2).interacts(Layers::DEFAULT),
            "1 is not in 2's filters"
        );
        assert!(
            !own(1, 2).interacts(Layers::DEFAULT),
            "2 is not a membership"
        );
        assert!(own(3, 1).interacts(Layers::DEFAULT));
        let filter = CollisionFilter {
            rows: vec![own(2, 2), Layers::DEFAULT],
            boundary: vec![Layers::DEFAULT, Layers::ALL, own(2, 2)],
        };
        let seen = |row| {
            (0..3)
                .filter(|&k| filter.sees_sample(row, k))
                .collect::<Vec<_>>()
        };
        assert_eq!(seen(0), [1, 2]);
        assert_eq!(seen(1), [0, 1]);
        assert_eq!(
            seen(2),
            [0, 1, 2],
            "a row without layers meets every sample"
        );
    }
}
