//! The components of taps, drains and lifetimes: [`FluidEmitter`] (with its [`EmitterState`]
//! and the [`EmittedBy`] / [`EmittedParticles`] relationship), [`FluidSink`] (with its
//! [`DrainedCount`]) and [`ParticleLifetime`].

use bevy::prelude::*;

use crate::error::{PbdError, non_negative, positive};
use crate::fluid::FluidPhase;

/// A tap: pours fluid particles from a nozzle across its local x axis, moving along its local
/// +y axis (rotate its `Transform` by π to pour down), at [`rate`](Self::rate) particles per
/// second. The nozzle has one slot every 2r across [`nozzle_width`](Self::nozzle_width) (at
/// least one); a slot emits only when no particle (fluid, solid or wall sample) lies within
/// [`SPAWN_CLEARANCE`](super::SPAWN_CLEARANCE) · 2r of it, so emitted particles never overlap
/// anything: a blocked or too slow nozzle pours less than its rate, never on top of itself.
///
/// Each particle is a [`FluidParticle`](crate::fluid::FluidParticle) with the mass of
/// [`FluidSettings`](crate::fluid::FluidSettings) (or of its [`phase`](Self::phase)),
/// velocity [`speed`](Self::speed) along +y, [`EmittedBy`] this emitter,
/// [`ParticleOf`](crate::body::ParticleOf) the [`body`](Self::body) when set and a
/// [`ParticleLifetime`] when [`lifetime`](Self::lifetime) is set. When a limit stops it ([`max_count`](Self::max_count)
/// or the crate's [`MAX_PARTICLES`](crate::error::MAX_PARTICLES)) or its settings are invalid,
/// it writes one [`EmitterStopped`](super::EmitterStopped) and waits (it resumes once the
/// limit allows again). Build it with [`FluidEmitter::new`] to have bad values refused.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq)]
#[require(Transform, EmitterState)]
pub struct FluidEmitter {
    /// Particles per second (1/s), ≥ 0; 0 pours nothing.
    pub rate: f32,
    /// Exit speed along the emitter's local +y (m/s), finite.
    pub speed: f32,
    /// Width of the nozzle across its local x (m), ≥ 0: ⌊width / 2r⌋ slots, at least one.
    pub nozzle_width: f32,
    /// Lifetime given to each particle (s), `None` (default): they live until despawned.
    pub lifetime: Option<f32>,
    /// Most of its particles alive at once, `None` (default): no limit but the crate's.
    pub max_count: Option<u32>,
    /// The [`ParticleBody`](crate::body::ParticleBody) its particles join (a water body drawn
    /// with a `FluidSurface`, say), `None` (default): none.
    #[entities]
    pub body: Option<Entity>,
    /// Whether it pours (default `true`).
    pub enabled: bool,
    /// The liquid it pours, `None` (default): the fluid's own ([`FluidSettings`]). Its
    /// particles get this [`FluidPhase`] and its mass.
    ///
    /// [`FluidSettings`]: crate::fluid::FluidSettings
    pub phase: Option<FluidPhase>,
}

impl FluidEmitter {
    /// An emitter of `rate` particles/s leaving at `speed` m/s from a nozzle `nozzle_width` m
    /// wide.
    ///
    /// # Errors
    /// [`PbdError::Negative`] for a negative or non-finite rate or width,
    /// [`PbdError::NotFinite`] for a non-finite speed.
    pub fn new(rate: f32, speed: f32, nozzle_width: f32) -> Result<Self, PbdError> {
        let emitter = Self {
            rate,
            speed,
            nozzle_width,
            lifetime: None,
            max_count: None,
            body: None,
            enabled: true,
            phase: None,
        };
        emitter.validate()?;
        Ok(emitter)
    }

    /// With a lifetime (s) for each particle.
    ///
    /// # Errors
    /// [`PbdError::NotPositive`] for a lifetime ≤ 0 or not finite.
    pub fn with_lifetime(mut self, seconds: f32) -> Result<Self, PbdError> {
        self.lifetime = Some(positive("emitter lifetime (s)", seconds)?);
        Ok(self)
    }

    /// With at most `count` of its particles alive at once.
    pub fn with_max_count(mut self, count: u32) -> Self {
        self.max_count = Some(count);
        self
    }

    /// Pouring `phase` (oil, honey, …).
    ///
    /// # Errors
    /// As [`FluidPhase::new`].
    pub fn with_phase(mut self, phase: FluidPhase) -> Result<Self, PbdError> {
        phase.validate()?;
        self.phase = Some(phase);
        Ok(self)
    }

    /// With its particles joining `body`.
    pub fn with_body(mut self, body: Entity) -> Self {
        self.body = Some(body);
        self
    }

    /// Checks every field (the emitter's system checks it every step and writes
    /// [`EmitterStopped`](super::EmitterStopped) with the reason).
    ///
    /// # Errors
    /// As [`new`](Self::new), [`with_lifetime`](Self::with_lifetime) and
    /// [`with_phase`](Self::with_phase).
    pub fn validate(&self) -> Result<(), PbdError> {
        non_negative("emitter rate (1/s)", self.rate)?;
        crate::error::finite("emitter speed (m/s)", self.speed)?;
        non_negative("nozzle width (m)", self.nozzle_width)?;
        if let Some(lifetime) = self.lifetime {
            positive("emitter lifetime (s)", lifetime)?;
        }
        if let Some(phase) = self.phase {
            phase.validate()?;
        }
        Ok(())
    }
}

/// What a [`FluidEmitter`] carries between steps (required by it, saved with the world).
#[derive(Component, Reflect, Debug, Default, Clone, Copy, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
pub struct EmitterState {
    /// Particles owed: rate · Δt added each step, one taken per particle emitted; at most one
    /// nozzle's slots are owed, so a blocked nozzle does not burst when it clears.
    pub owed: f32,
    /// The slot the next row starts at (slots are used in turn).
    pub next_slot: u32,
    /// Particles emitted since it was spawned.
    pub emitted: u64,
    /// Whether it is stopped and has said why ([`EmitterStopped`](super::EmitterStopped)).
    pub stopped: bool,
}

/// The [`FluidEmitter`] that emitted a particle; the other side is [`EmittedParticles`].
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, FromWorld, Debug, PartialEq)]
#[relationship(relationship_target = EmittedParticles)]
pub struct EmittedBy(#[entities] pub Entity);

impl FromWorld for EmittedBy {
    /// A placeholder, for reflection (a loaded world writes the real entity).
    fn from_world(_: &mut World) -> Self {
        Self(Entity::PLACEHOLDER)
    }
}

/// The live particles a [`FluidEmitter`] emitted, maintained by Bevy from [`EmittedBy`]
/// (despawning the emitter leaves its particles).
#[derive(Component, Reflect, Debug, Default, PartialEq, Eq)]
#[reflect(Component, FromWorld, Default)]
#[relationship_target(relationship = EmittedBy)]
pub struct EmittedParticles(Vec<Entity>);

impl core::ops::Deref for EmittedParticles {
    type Target = [Entity];

    fn deref(&self) -> &[Entity] {
        &self.0
    }
}

/// A drain: despawns every fluid particle whose position, at the end of a step, lies in the
/// rectangle of half extents `half_size` (m) around its `Transform` (rotation included).
/// Other particles (cloth, ropes, blobs, wall samples) pass through it.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq)]
#[require(Transform, DrainedCount)]
pub struct FluidSink {
    /// Half width and half height of the drain (m), ≥ 0.
    pub half_size: Vec2,
}

/// Fluid particles a [`FluidSink`] has despawned (required by it).
#[derive(Component, Reflect, Debug, Default, Clone, Copy, PartialEq, Eq, Deref)]
#[reflect(Component, Default, Debug, PartialEq)]
pub struct DrainedCount(pub u64);

/// Seconds a fluid particle has left (s): each step takes its Δt, and the particle is
/// despawned at the end of the step that brings it to 0 or below (a thousandth of a step's
/// rounding allowed). Other particles ignore it.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Deref, DerefMut)]
#[reflect(Component, Debug, PartialEq)]
pub struct ParticleLifetime(pub f32);
