//! The components of a body: its root's marker and the two relationships that join its
//! particles and its constraints to the root.

use bevy::prelude::*;

/// The root entity of a body: a cloth, a dam break, or anything a game groups. It holds no
/// simulation state of its own; its particles ([`BodyParticles`]) and constraints
/// ([`BodyConstraints`]) point at it with [`ParticleOf`] and [`ConstraintOf`].
///
/// Despawning it despawns its particles and constraints with it, at once (the relationships
/// are `linked_spawn`), so the next step no longer has them. The builders spawn one per body
/// with a [`Name`] ("Cloth 40 × 30"); an entity becomes one as soon as a particle or
/// constraint points at it.
#[derive(Component, Reflect, Debug, Default, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Default, Debug, PartialEq)]
pub struct ParticleBody;

/// Joins a particle (or a boundary sample) to the [`ParticleBody`] it belongs to: a Bevy
/// relationship, whose other side is [`BodyParticles`] on the root.
///
/// A custom relationship rather than [`ChildOf`]: a particle's [`Position`](crate::particle::Position),
/// and the `Transform` the solver writes where a particle has one, are world positions. Under
/// `ChildOf` a particle's `Transform` would be read relative to its root, and a root without a
/// `Transform` and `Visibility` would stop Bevy's propagation to the particle (its sprite would
/// neither move nor show).
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, FromWorld, Debug, PartialEq)]
#[relationship(relationship_target = BodyParticles)]
pub struct ParticleOf(#[entities] pub Entity);

impl FromWorld for ParticleOf {
    /// A placeholder, for reflection (a loaded world writes the real entity).
    fn from_world(_: &mut World) -> Self {
        Self(Entity::PLACEHOLDER)
    }
}

/// The particles (and boundary samples) of a [`ParticleBody`], in the order they joined it:
/// the builders' order (a cloth's row-major grid order, for instance), with the particles that
/// left it taken out. Maintained by Bevy from the [`ParticleOf`] components; read it, do not
/// write it. Removing a particle from a body costs a search of this list (as for
/// [`Children`]); despawning the root costs nothing per particle.
#[derive(Component, Reflect, Debug, Default, PartialEq, Eq)]
#[reflect(Component, FromWorld, Default)]
#[relationship_target(relationship = ParticleOf, linked_spawn)]
#[require(ParticleBody)]
pub struct BodyParticles(Vec<Entity>);

impl core::ops::Deref for BodyParticles {
    type Target = [Entity];

    fn deref(&self) -> &[Entity] {
        &self.0
    }
}

/// Joins a constraint entity ([`DistanceConstraint`](crate::constraints::DistanceConstraint),
/// [`LongRangeAttachment`](crate::constraints::LongRangeAttachment)) to the
/// [`ParticleBody`] it belongs to; the other side is [`BodyConstraints`]. A custom relationship
/// for the reasons given at [`ParticleOf`].
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, FromWorld, Debug, PartialEq)]
#[relationship(relationship_target = BodyConstraints)]
pub struct ConstraintOf(#[entities] pub Entity);

impl FromWorld for ConstraintOf {
    /// A placeholder, for reflection (a loaded world writes the real entity).
    fn from_world(_: &mut World) -> Self {
        Self(Entity::PLACEHOLDER)
    }
}

/// The constraints of a [`ParticleBody`], in the order they joined it (a cloth: horizontal,
/// vertical, diagonal, then its long-range attachments). Maintained by Bevy from the
/// [`ConstraintOf`] components, as [`BodyParticles`] is.
#[derive(Component, Reflect, Debug, Default, PartialEq, Eq)]
#[reflect(Component, FromWorld, Default)]
#[relationship_target(relationship = ConstraintOf, linked_spawn)]
#[require(ParticleBody)]
pub struct BodyConstraints(Vec<Entity>);

impl core::ops::Deref for BodyConstraints {
    type Target = [Entity];

    fn deref(&self) -> &[Entity] {
        &self.0
    }
}
