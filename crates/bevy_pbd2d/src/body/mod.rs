//! Bodies: a root entity per cloth, dam break or any group of particles, joined to its
//! particles and constraints by two Bevy relationships.
//!
//! | on the root | on the members | what it gives |
//! |---|---|---|
//! | [`ParticleBody`], a `Name` | | the body in an inspector; despawn it to remove the body |
//! | [`BodyParticles`] | [`ParticleOf`] | the body's particles (and boundary samples), in the order they joined it |
//! | [`BodyConstraints`] | [`ConstraintOf`] | the body's constraints |
//!
//! Both relationships are `linked_spawn`: despawning the root despawns its members at once.
//! Despawning one member leaves the others (a constraint whose particle is gone is despawned
//! at the next step, as always). [`ParticleBodies`] edits a body's shared parameters (its
//! particles' mass, its constraints' compliance) in one call.
//!
//! **Why not `ChildOf`.** Particles hold world positions: the solver writes
//! [`Position`](crate::particle::Position), and `Transform` where a particle has one (a sprite),
//! as world coordinates. Bevy's hierarchy would read a child's `Transform` relative to its
//! parent, and a parent without `Transform` and `Visibility` stops the propagation of both to its
//! children, so a sprite on a particle would neither move nor show. A custom relationship keeps
//! particles and sprites as they are, and costs nothing per step: the solver never reads it.
//! Inspectors that follow `ChildOf` only (bevy-inspector-egui's world inspector) list
//! the members at the top level unless filtered; the demos' F1 inspector hides members and
//! lists them under their root's [`BodyParticles`] and [`BodyConstraints`].

mod components;
mod edit;

pub use components::{BodyConstraints, BodyParticles, ConstraintOf, ParticleBody, ParticleOf};
pub use edit::ParticleBodies;

use bevy::prelude::*;

/// Registers the body components ([`ParticleBody`] and the two relationships) and `Name`
/// (which the builders give their roots), so that inspectors and world serialization see them.
#[derive(Debug, Clone, Copy, Default)]
pub struct BodyPlugin;

impl Plugin for BodyPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<ParticleBody>()
            .register_type::<ParticleOf>()
            .register_type::<BodyParticles>()
            .register_type::<ConstraintOf>()
            .register_type::<BodyConstraints>()
            .register_type::<Name>();
    }
}
