//! A builder for granular matter (sand, gravel, powder): a block of free grains, one body with
//! [`SolidContacts`] and self-collision, no density solve (\[MMCK14\] §6: granular materials are
//! particles with contacts and friction only).
//!
//! Grains of equal size settle into a lattice, which stands as a wall whatever the friction; the
//! grains' radii therefore spread around their mean (a fixed sequence, the same on every run),
//! and a pile of them stands at an angle of repose set by the friction (`tests/granular.rs`).

use bevy::prelude::*;

use crate::body::{ParticleBody, ParticleOf};
use crate::collider::ParticleRadius;
use crate::error::{PbdError, finite_vec2, in_range, particle_budget, positive, within};
use crate::particle::{InverseMass, Particle, Position};
use crate::scenes::blob::BLOB_DENSITY_RANGE;
use crate::solid_contacts::{FRICTION_RANGE, SolidContacts};

/// The mean grain radii [`GranularBuilder`] accepts (m).
pub const GRAIN_RADIUS_RANGE: core::ops::RangeInclusive<f32> = 5e-4..=50.0;

/// The radius spreads [`GranularBuilder::radius_spread`] accepts: radii lie within
/// r (1 ± spread).
pub const GRAIN_RADIUS_SPREAD_RANGE: core::ops::RangeInclusive<f32> = 0.0..=0.5;

/// Builds a block of grains. Defaults: 20 × 20 grains of mean radius 2.5 cm (± 20 %), dry sand
/// (1600 kg/m², μs 0.6, μk 0.5), centred on the origin.
#[doc(alias = "sand")]
#[doc(alias = "powder")]
#[derive(Reflect, Debug, Clone, Copy, PartialEq)]
pub struct GranularBuilder {
    /// Grains across, in 1..=1000.
    pub columns: u32,
    /// Grains up, in 1..=1000.
    pub rows: u32,
    /// Mean grain radius r (m), in [`GRAIN_RADIUS_RANGE`].
    pub radius: f32,
    /// Spread of the radii, in [`GRAIN_RADIUS_SPREAD_RANGE`]: grain k has radius
    /// r (1 + spread (2 uₖ − 1)), uₖ ∈ [0, 1) from a fixed hash of k and
    /// [`GranularBuilder::seed`]. Default 0.2.
    pub radius_spread: f32,
    /// Picks the radii's sequence: blocks spawned one after another (sand poured a row at a
    /// time) get different radii with different seeds. Default 0.
    pub seed: u64,
    /// Density ρ (kg/m²), in [`BLOB_DENSITY_RANGE`]: a grain of radius rₖ weighs ρ (2 rₖ)².
    pub density: f32,
    /// [`SolidContacts::static_friction`] μs between grains, in [`FRICTION_RANGE`].
    pub static_friction: f32,
    /// [`SolidContacts::dynamic_friction`] μk between grains, in [`FRICTION_RANGE`].
    pub dynamic_friction: f32,
    /// Centre of the block (m). The grains sit on a square lattice of spacing
    /// 2 r (1 + spread), so no two touch.
    pub origin: Vec2,
}

impl Default for GranularBuilder {
    fn default() -> Self {
        Self {
            columns: 20,
            rows: 20,
            radius: 0.025,
            radius_spread: 0.2,
            seed: 0,
            density: 1600.0,
            static_friction: 0.6,
            dynamic_friction: 0.5,
            origin: Vec2::ZERO,
        }
    }
}

/// What [`GranularBuilder::spawn`] created.
#[derive(Debug, Clone)]
pub struct Granular {
    /// The root: [`ParticleBody`], [`SolidContacts`] (self-collision, the builder's friction)
    /// and a `Name` ("Grains of 400").
    pub root: Entity,
    /// Its particles, row by row from the bottom.
    pub particles: Vec<Entity>,
    /// Each particle's centre at spawn and radius (m), in the order of `particles` (as
    /// [`GranularBuilder::grains`] gives them): e.g. to scale a sprite per grain.
    pub grains: Vec<(Vec2, f32)>,
}

/// uₖ ∈ [0, 1): the SplitMix64 finaliser of k, top 24 bits.
fn unit_hash(k: u64) -> f32 {
    let mut z = k.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 40) as f32 / (1u64 << 24) as f32
}

impl GranularBuilder {
    /// Each grain's centre (m) and radius (m), row by row from the bottom, after checking every
    /// field and that every grain's mass and radius are valid ([`ParticleRadius::new`]: at most
    /// 10 m).
    ///
    /// # Errors
    /// [`PbdError`] naming the first invalid field, or too many grains.
    pub fn grains(&self) -> Result<Vec<(Vec2, f32)>, PbdError> {
        let columns = in_range("columns", self.columns, 1, 1000)?;
        let rows = in_range("rows", self.rows, 1, 1000)?;
        let radius = within(
            "grain radius (m)",
            positive("grain radius (m)", self.radius)?,
            GRAIN_RADIUS_RANGE,
        )?;
        let spread = within(
            "radius spread",
            self.radius_spread,
            GRAIN_RADIUS_SPREAD_RANGE,
        )?;
        let density = within(
            "density (kg/m²)",
            positive("density (kg/m²)", self.density)?,
            BLOB_DENSITY_RANGE,
        )?;
        within("static friction", self.static_friction, FRICTION_RANGE)?;
        within("dynamic friction", self.dynamic_friction, FRICTION_RANGE)?;
        finite_vec2("origin (m)", self.origin)?;
        particle_budget(columns as u64 * rows as u64)?;
        let spacing = 2.0 * radius * (1.0 + spread);
        let corner =
            self.origin - 0.5 * spacing * Vec2::new(columns as f32 - 1.0, rows as f32 - 1.0);
        let mut out = Vec::with_capacity((columns * rows) as usize);
        for j in 0..rows {
            for i in 0..columns {
                let k = (j * columns + i) as u64;
                let u = unit_hash(k ^ self.seed.rotate_left(32));
                let r = radius * (1.0 + spread * (2.0 * u - 1.0));
                InverseMass::from_mass(density * 4.0 * r * r)?;
                ParticleRadius::new(r)?;
                out.push((corner + spacing * Vec2::new(i as f32, j as f32), r));
            }
        }
        Ok(out)
    }

    /// Spawns the grains.
    ///
    /// # Errors
    /// As [`GranularBuilder::grains`]; nothing is spawned on error.
    pub fn spawn(&self, commands: &mut Commands) -> Result<Granular, PbdError> {
        let grains = self.grains()?;
        let mut members = Vec::with_capacity(grains.len());
        for &(p, r) in &grains {
            let w = InverseMass::from_mass(self.density * 4.0 * r * r)?;
            members.push((p, w, ParticleRadius::new(r)?));
        }
        let root = commands
            .spawn((
                Name::new(format!("Grains of {}", grains.len())),
                ParticleBody,
                SolidContacts {
                    self_collision: true,
                    static_friction: self.static_friction,
                    dynamic_friction: self.dynamic_friction,
                },
            ))
            .id();
        let particles = members
            .into_iter()
            .map(|(p, w, radius)| {
                commands
                    .spawn((Particle, Position(p), w, radius, ParticleOf(root)))
                    .id()
            })
            .collect();
        Ok(Granular {
            root,
            particles,
            grains,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grains_do_not_touch_and_their_radii_spread_as_set() {
        let builder = GranularBuilder::default();
        let grains = builder.grains().unwrap();
        assert_eq!(grains.len(), 400);
        let (r, spread) = (builder.radius, builder.radius_spread);
        let radii: Vec<f32> = grains.iter().map(|g| g.1).collect();
        assert!(radii.iter().all(|&x| (x - r).abs() <= spread * r + 1e-7));
        // Spread over the range, not bunched: the mean within 5 % of r, both ends reached
        // within a tenth of the range.
        let mean = radii.iter().sum::<f32>() / radii.len() as f32;
        assert!((mean - r).abs() < 0.05 * r, "mean radius {mean}");
        let (lo, hi) = radii
            .iter()
            .fold((f32::MAX, 0.0f32), |(a, b), &x| (a.min(x), b.max(x)));
        assert!(lo < r * (1.0 - 0.9 * spread) && hi > r * (1.0 + 0.9 * spread));
        for (a, &(p, ra)) in grains.iter().enumerate() {
            for &(q, rb) in &grains[a + 1..] {
                assert!(p.distance(q) >= ra + rb, "grains overlap at {p} and {q}");
            }
        }
        let centre = grains.iter().map(|g| g.0).sum::<Vec2>() / grains.len() as f32;
        assert!(centre.distance(builder.origin) < 1e-5);
    }

    #[test]
    fn bad_blocks_are_refused() {
        for bad in [
            GranularBuilder {
                columns: 0,
                ..default()
            },
            GranularBuilder {
                radius: f32::NAN,
                ..default()
            },
            GranularBuilder {
                radius_spread: 0.6,
                ..default()
            },
            GranularBuilder {
                density: 0.0,
                ..default()
            },
            GranularBuilder {
                static_friction: -0.1,
                ..default()
            },
            GranularBuilder {
                dynamic_friction: 11.0,
                ..default()
            },
            GranularBuilder {
                origin: Vec2::new(f32::INFINITY, 0.0),
                ..default()
            },
            GranularBuilder {
                columns: 1000,
                rows: 1000,
                ..default()
            },
            // Grains up to 10.8 m: more than a ParticleRadius takes.
            GranularBuilder {
                radius: 9.0,
                density: 1.0,
                ..default()
            },
        ] {
            assert!(bad.grains().is_err(), "{bad:?} accepted");
        }
    }
}
