//! A builder for soft and rigid blobs: particles on a square grid filling a disc or a box,
//! held in shape by [`ShapeMatching`] and colliding with other bodies as
//! [`SolidContacts`] discs of half the spacing.

use bevy::prelude::*;

use crate::body::{ParticleBody, ParticleOf};
use crate::collider::ParticleRadius;
use crate::error::{PbdError, finite_vec2, particle_budget, positive, within};
use crate::particle::{InverseMass, Particle, Position};
use crate::shape_matching::{ShapeMatching, ShapeRest};
use crate::solid_contacts::SolidContacts;

/// The outline a [`BlobBuilder`] fills.
#[derive(Reflect, Debug, Clone, Copy, PartialEq)]
pub enum BlobShape {
    /// A disc of this radius (m).
    Disc(f32),
    /// A box of these half extents (m).
    Box(Vec2),
}

/// The spacings [`BlobBuilder`] accepts (m).
pub const BLOB_SPACING_RANGE: core::ops::RangeInclusive<f32> = 1e-3..=1e2;

/// The densities [`BlobBuilder`] accepts (kg/m²).
pub const BLOB_DENSITY_RANGE: core::ops::RangeInclusive<f32> = 1e-3..=1e6;

/// Builds a blob. Defaults: a disc of 0.5 m at the origin, spacing 0.1 m, 1000 kg/m², soft
/// (stiffness 0.1).
#[derive(Reflect, Debug, Clone, Copy, PartialEq)]
pub struct BlobBuilder {
    /// The outline, centred on [`BlobBuilder::origin`]; its sizes in (0, 1 km].
    pub shape: BlobShape,
    /// Grid spacing (m), in [`BLOB_SPACING_RANGE`]; particles have half of it as radius.
    pub spacing: f32,
    /// Density ρ (kg/m²), in [`BLOB_DENSITY_RANGE`]: each particle weighs ρ spacing².
    pub density: f32,
    /// [`ShapeMatching::stiffness`], in (0, 1]; 1 is rigid. Default 0.1.
    pub stiffness: f32,
    /// Centre (m).
    pub origin: Vec2,
}

impl Default for BlobBuilder {
    fn default() -> Self {
        Self {
            shape: BlobShape::Disc(0.5),
            spacing: 0.1,
            density: 1000.0,
            stiffness: 0.1,
            origin: Vec2::ZERO,
        }
    }
}

/// What [`BlobBuilder::spawn`] created.
#[derive(Debug, Clone)]
pub struct Blob {
    /// The root: [`ParticleBody`], [`ShapeMatching`], [`SolidContacts`] (no self-collision)
    /// and a `Name` ("Blob of 81").
    pub root: Entity,
    /// Its particles, row by row from the bottom.
    pub particles: Vec<Entity>,
}

impl BlobBuilder {
    /// The particles' positions (m), after checking every field.
    ///
    /// # Errors
    /// [`PbdError`] naming the first invalid field, or too many particles.
    pub fn positions(&self) -> Result<Vec<Vec2>, PbdError> {
        let spacing = within(
            "spacing (m)",
            positive("spacing (m)", self.spacing)?,
            BLOB_SPACING_RANGE,
        )?;
        within(
            "density (kg/m²)",
            positive("density (kg/m²)", self.density)?,
            BLOB_DENSITY_RANGE,
        )?;
        within(
            "stiffness",
            positive("stiffness", self.stiffness)?,
            0.0..=1.0,
        )?;
        finite_vec2("origin (m)", self.origin)?;
        InverseMass::from_mass(self.density * spacing * spacing)?;
        let half = match self.shape {
            BlobShape::Disc(r) => Vec2::splat(within(
                "blob radius (m)",
                positive("blob radius (m)", r)?,
                0.0..=1e3,
            )?),
            BlobShape::Box(h) => Vec2::new(
                within(
                    "blob half width (m)",
                    positive("blob half width (m)", h.x)?,
                    0.0..=1e3,
                )?,
                within(
                    "blob half height (m)",
                    positive("blob half height (m)", h.y)?,
                    0.0..=1e3,
                )?,
            ),
        };
        let (nx, ny) = ((half.x / spacing).floor(), (half.y / spacing).floor());
        particle_budget(((2.0 * nx + 1.0) * (2.0 * ny + 1.0)) as u64)?;
        let mut out = Vec::new();
        for j in -(ny as i32)..=ny as i32 {
            for i in -(nx as i32)..=nx as i32 {
                let p = spacing * Vec2::new(i as f32, j as f32);
                let inside = match self.shape {
                    BlobShape::Disc(r) => p.length() <= r + 1e-4 * spacing,
                    BlobShape::Box(_) => true,
                };
                if inside {
                    out.push(self.origin + p);
                }
            }
        }
        Ok(out)
    }

    /// Spawns the blob.
    ///
    /// # Errors
    /// As [`BlobBuilder::positions`]; nothing is spawned on error.
    pub fn spawn(&self, commands: &mut Commands) -> Result<Blob, PbdError> {
        let positions = self.positions()?;
        let w = InverseMass::from_mass(self.density * self.spacing * self.spacing)?;
        let radius = ParticleRadius::new(0.5 * self.spacing)?;
        let root = commands
            .spawn((
                Name::new(format!("Blob of {}", positions.len())),
                ParticleBody,
                ShapeMatching {
                    stiffness: self.stiffness,
                },
                SolidContacts {
                    self_collision: false,
                    ..default()
                },
            ))
            .id();
        let particles = positions
            .iter()
            .map(|&p| {
                commands
                    .spawn((
                        Particle,
                        Position(p),
                        w,
                        radius,
                        ShapeRest(p),
                        ParticleOf(root),
                    ))
                    .id()
            })
            .collect();
        Ok(Blob { root, particles })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disc_is_filled_on_the_grid_and_bad_blobs_are_refused() {
        let disc = BlobBuilder::default().positions().unwrap();
        // Grid points of spacing 0.1 within 0.5 m: 81 (Gauss circle problem for r = 5).
        assert_eq!(disc.len(), 81);
        assert!(disc.iter().all(|p| p.length() <= 0.5 + 1e-5));
        let boxed = BlobBuilder {
            shape: BlobShape::Box(Vec2::new(0.3, 0.15)),
            ..default()
        };
        assert_eq!(boxed.positions().unwrap().len(), 7 * 3);
        for bad in [
            BlobBuilder {
                stiffness: 0.0,
                ..default()
            },
            BlobBuilder {
                stiffness: 1.5,
                ..default()
            },
            BlobBuilder {
                spacing: f32::NAN,
                ..default()
            },
            BlobBuilder {
                density: -1.0,
                ..default()
            },
            BlobBuilder {
                shape: BlobShape::Disc(0.0),
                ..default()
            },
            BlobBuilder {
                shape: BlobShape::Box(Vec2::new(1.0, f32::INFINITY)),
                ..default()
            },
            BlobBuilder {
                origin: Vec2::NAN,
                ..default()
            },
            BlobBuilder {
                shape: BlobShape::Disc(1e3),
                spacing: 1e-3,
                ..default()
            },
        ] {
            assert!(bad.positions().is_err(), "{bad:?} accepted");
        }
    }
}
