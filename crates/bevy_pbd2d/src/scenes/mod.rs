//! Builders that spawn whole bodies: a cloth, a rope or chain, a soft or rigid blob, a block
//! of grains (sand), a dam break.

pub mod blob;
pub mod cloth;
pub mod dam_break;
pub mod granular;
pub mod rope;

pub use blob::{Blob, BlobBuilder, BlobShape};
pub use cloth::{Cloth, ClothBuilder, ClothGrid, ClothParticle, FixedCorners};
pub use dam_break::{DamBreak, DamBreakBuilder, DamBreakWalls};
pub use granular::{Granular, GranularBuilder};
pub use rope::{Rope, RopeBody, RopeBuilder, RopeEnds, RopeParticle};

use bevy::prelude::*;

/// Registers the components the body builders add ([`ClothParticle`], [`ClothGrid`],
/// [`FixedCorners`], [`RopeParticle`], [`RopeBody`]), so that inspectors and world
/// serialization see them.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScenesPlugin;

impl Plugin for ScenesPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<ClothParticle>()
            .register_type::<ClothGrid>()
            .register_type::<FixedCorners>()
            .register_type::<RopeParticle>()
            .register_type::<RopeBody>()
            .register_type::<RopeEnds>()
            .register_type::<BlobShape>();
    }
}
