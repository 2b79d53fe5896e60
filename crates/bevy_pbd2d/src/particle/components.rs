//! The components of a particle.

use bevy::prelude::*;

use crate::error::{PbdError, positive, within};

/// The masses [`InverseMass::from_mass`] accepts (kg): 1 µg to 10⁶ t. Beyond, w = 1/m or the
/// products the solver forms with it leave the range of f32.
pub const MASS_RANGE: core::ops::RangeInclusive<f32> = 1e-9..=1e9;

/// Marks an entity as a simulated particle. Requires [`Position`], [`Velocity`],
/// [`InverseMass`] (default 1 kg⁻¹) and the solver's bookkeeping index.
///
/// Despawning a particle also despawns every [`DistanceConstraint`](crate::prelude::DistanceConstraint)
/// that references it (at the next step).
#[derive(Component, Reflect, Debug, Default, Clone, Copy)]
#[reflect(Component, Default)]
#[require(Position, Velocity, InverseMass, SolverIndex)]
pub struct Particle;

/// Marks a particle as fluid: a Position Based Fluids particle of the fluid plugin, with the mass
/// of [`FluidSettings`](crate::fluid::FluidSettings), or of its
/// [`FluidPhase`](crate::fluid::FluidPhase). Requires [`Particle`]. Fluid particles
/// take the first rows of the solver arrays; without the fluid plugin they move as plain
/// particles.
#[derive(Component, Reflect, Debug, Default, Clone, Copy)]
#[reflect(Component, Default)]
#[require(Particle)]
pub struct FluidParticle;

/// World position x of a particle (m). Written by the solver at the end of every step; a value
/// the user writes between steps is used by the next step (found through change detection, as
/// are edits of [`Velocity`], [`InverseMass`] and [`KinematicTarget`]).
#[derive(Component, Reflect, Debug, Default, Clone, Copy, PartialEq, Deref, DerefMut)]
#[reflect(Component, Default)]
pub struct Position(pub Vec2);

/// Velocity v of a particle (m/s). Written by the solver at the end of every step.
#[derive(Component, Reflect, Debug, Default, Clone, Copy, PartialEq, Deref, DerefMut)]
#[reflect(Component, Default)]
pub struct Velocity(pub Vec2);

/// Inverse mass w = 1/m of a particle (kg⁻¹). `0` means pinned/kinematic: gravity and
/// constraints do not move it, only its own velocity does.
///
/// A negative, NaN or infinite value is treated as `0` (pinned) and logged; build values with
/// [`InverseMass::from_mass`] to get an error instead.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Deref, DerefMut)]
#[reflect(Component, Default)]
pub struct InverseMass(pub f32);

impl Default for InverseMass {
    /// 1 kg⁻¹ (a particle of 1 kg).
    fn default() -> Self {
        Self(1.0)
    }
}

impl InverseMass {
    /// A pinned (infinite-mass) particle: w = 0.
    pub const PINNED: Self = Self(0.0);

    /// w = 1/m for a mass m in kg.
    ///
    /// # Errors
    /// [`PbdError::NotPositive`] when `mass` is 0, negative, NaN or infinite (a zero mass has no
    /// physical meaning; use [`InverseMass::PINNED`] for a fixed particle),
    /// [`PbdError::NotInRange`] outside [`MASS_RANGE`].
    pub fn from_mass(mass: f32) -> Result<Self, PbdError> {
        let mass = within("mass (kg)", positive("mass (kg)", mass)?, MASS_RANGE)?;
        Ok(Self(1.0 / mass))
    }

    /// Whether the particle is pinned (w = 0).
    pub fn is_pinned(self) -> bool {
        self.0 == 0.0
    }
}

/// While present, the particle is held kinematic (w = 0 for the solver) and moved toward this
/// world position (m), at most [`SolverSettings::max_kinematic_speed`](crate::dynamics::settings::SolverSettings)
/// per second; its velocity becomes the displacement divided by the step, so
/// on removal the particle keeps the velocity it was moved with. Used by picking to drag
/// particles; games can use it to animate particles.
#[derive(Component, Reflect, Debug, Default, Clone, Copy, PartialEq, Deref, DerefMut)]
#[reflect(Component, Default)]
pub struct KinematicTarget(pub Vec2);

/// The particle's row in the solver's contiguous arrays; maintained by the plugin. Saved with
/// the world, it keeps the rows in the same order after a load (`u32::MAX`: not yet a row).
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Default)]
pub struct SolverIndex(pub(crate) u32);

impl Default for SolverIndex {
    fn default() -> Self {
        Self(u32::MAX)
    }
}

impl SolverIndex {
    /// The row (`u32::MAX` while the particle has none).
    pub fn row(self) -> u32 {
        self.0
    }
}
