//! The components of boundary samples (fluid particles are particles with
//! [`FluidParticle`](crate::particle::FluidParticle)).

use bevy::prelude::*;

/// A static boundary sample (\[AIA+12\]): fluid particles near it feel it through its
/// pseudo-mass Ψ. Requires a [`Position`](crate::particle::Position) (m) and a [`PseudoMass`]
/// (computed by the plugin whenever boundary samples are added, removed or moved, or
/// [`FluidSettings`](crate::fluid::FluidSettings) change). It is not a simulated particle.
#[derive(Component, Reflect, Debug, Default, Clone, Copy)]
#[reflect(Component, Default)]
#[require(crate::particle::Position, PseudoMass, BoundaryIndex)]
pub struct BoundaryParticle;

/// A [`BoundaryParticle`] that gives fluid density support only: it has no contact disc
/// ([`contacts`](crate::fluid::contacts)), because something else keeps fluid off the surface
/// it samples (the samples of a collider: the collider's own contacts, at the particle radius
/// r, which follow its motion). Its density term and Ψ are those of any sample.
#[derive(Component, Reflect, Debug, Default, Clone, Copy)]
#[reflect(Component, Default)]
#[require(BoundaryParticle)]
pub struct BoundaryDensityOnly;

/// A boundary sample's row in the solver's boundary arrays; maintained by the plugin. Saved
/// with the world, it keeps the rows, and so the fluid's sums, in the same order after a load
/// (`u32::MAX`: not yet a row).
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Default)]
pub struct BoundaryIndex(pub(crate) u32);

impl Default for BoundaryIndex {
    fn default() -> Self {
        Self(u32::MAX)
    }
}

impl BoundaryIndex {
    /// The row (`u32::MAX` while the sample has none).
    pub fn row(self) -> u32 {
        self.0
    }
}

/// Akinci pseudo-mass Ψ of a boundary sample (kg): Ψ_k = ρ0 / Σ_l W_kl over the boundary
/// samples l within h, including k itself (\[AIA+12\] eq. 4). Written by the plugin when it
/// changes (an edit stays until then; the solver reads its own copy).
#[derive(Component, Reflect, Debug, Default, Clone, Copy, PartialEq, Deref)]
#[reflect(Component, Default)]
pub struct PseudoMass(pub f32);
