//! A builder for the reference demo's cloth: a rectangular grid of particles joined by
//! structural (horizontal, vertical) and both diagonal distance constraints.

use bevy::prelude::*;

use crate::body::{BodyParticles, ConstraintOf, ParticleBody, ParticleOf};
use crate::constraints::breaking::BreakingStrain;
use crate::constraints::distance::DistanceConstraint;
use crate::constraints::distance::check_compliance;
use crate::constraints::tether::LongRangeAttachment;
use crate::error::{PbdError, in_range, particle_budget, positive, within};
use crate::particle::{InverseMass, Particle, Position};

/// Which grid corners are pinned (w = 0), as the PBD demo's "# fixed particles" picks them.
#[derive(Reflect, Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum FixedCorners {
    /// The top-left particle (index 0).
    One,
    /// The two top corners (indices 0 and width − 1). The demo's default.
    #[default]
    Two,
    /// All four corners.
    Four,
}

impl FixedCorners {
    /// From a count 1, 2 or 4.
    ///
    /// # Errors
    /// [`PbdError::OutOfRange`] for any other count.
    pub fn from_count(count: u32) -> Result<Self, PbdError> {
        match count {
            1 => Ok(Self::One),
            2 => Ok(Self::Two),
            4 => Ok(Self::Four),
            _ => Err(PbdError::OutOfRange {
                name: "fixed particles (1, 2 or 4)",
                value: count as u64,
                min: 1,
                max: 4,
            }),
        }
    }

    /// The count 1, 2 or 4.
    pub fn count(self) -> u32 {
        match self {
            Self::One => 1,
            Self::Two => 2,
            Self::Four => 4,
        }
    }

    /// Grid indices (row-major, `i * width + j`) of the pinned particles.
    pub fn indices(self, width: u32, height: u32) -> Vec<u32> {
        let (w, h) = (width, height);
        let mut pinned = match self {
            Self::One => vec![0],
            Self::Two => vec![0, w - 1],
            Self::Four => vec![0, w - 1, (h - 1) * w, h * w - 1],
        };
        pinned.sort_unstable();
        pinned.dedup();
        pinned
    }
}

/// Marks a particle spawned by [`ClothBuilder`], with its grid coordinates (column, row).
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component)]
pub struct ClothParticle {
    /// Column j (0 = left).
    pub column: u32,
    /// Row i (0 = top).
    pub row: u32,
}

/// On the root of a cloth spawned by [`ClothBuilder`]: the size of its grid. A mesh renderer
/// reads the particles in grid order with [`ClothGrid::cells`].
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Debug, PartialEq)]
#[require(ParticleBody)]
pub struct ClothGrid {
    /// Particles per row.
    pub width: u32,
    /// Particles per column.
    pub height: u32,
}

impl ClothGrid {
    /// The cloth's particles in grid order, row-major (`row * width + column`): `None` where a
    /// particle is gone (despawned, or moved to another body). `particles` is the root's
    /// [`BodyParticles`], `cells` reads each particle's [`ClothParticle`]; a particle without
    /// one, or outside the grid, is skipped.
    pub fn cells(
        &self,
        particles: &BodyParticles,
        cells: &Query<&ClothParticle>,
    ) -> Vec<Option<Entity>> {
        let mut grid = vec![None; self.width as usize * self.height as usize];
        for particle in particles.iter() {
            if let Ok(cell) = cells.get(particle)
                && cell.column < self.width
                && cell.row < self.height
            {
                grid[(cell.row * self.width + cell.column) as usize] = Some(particle);
            }
        }
        grid
    }
}

/// The grid spacings [`ClothBuilder`] accepts (m): 0.1 mm to 1 km.
pub const SPACING_RANGE: core::ops::RangeInclusive<f32> = 1e-4..=1e3;

/// The largest width or height accepted by [`ClothBuilder`].
pub const MAX_CLOTH_SIDE: u32 = 2000;

/// Builds the PBD demo's cloth. Defaults are the demo's: 40 × 30 particles, spacing 0.2 m,
/// 0.5 kg per particle, two top corners pinned, top-left particle at the origin, rigid
/// constraints.
#[derive(Reflect, Debug, Clone, Copy, PartialEq)]
pub struct ClothBuilder {
    /// Particles per row, 1 ..= 2000.
    pub width: u32,
    /// Particles per column, 1 ..= 2000.
    pub height: u32,
    /// Distance between grid neighbours (m), in [`SPACING_RANGE`]. Default 0.2.
    pub spacing: f32,
    /// Mass of every particle (kg), in [`MASS_RANGE`](crate::particle::MASS_RANGE).
    /// Default 0.5.
    pub mass: f32,
    /// Pinned corners. Default [`FixedCorners::Two`].
    pub fixed: FixedCorners,
    /// Position of the top-left particle (m); rows go down (−y), columns right (+x).
    pub origin: Vec2,
    /// Compliance α of every constraint (m/N), in
    /// [`COMPLIANCE_RANGE`](crate::constraints::distance::COMPLIANCE_RANGE). Default 0.
    pub compliance: f32,
    /// Tether every free particle to every pinned corner with its rest distance
    /// ([`LongRangeAttachment`]), so that the cloth does not stretch under its own weight when
    /// few iterations are used ([`crate::constraints::tether`]). Not in the reference demo, whose
    /// cloth visibly stretches: default `false`.
    pub long_range_attachments: bool,
    /// A [`BreakingStrain`] on every constraint (tearable cloth, [`breaking`]), or `None`.
    /// Default `None`.
    ///
    /// [`breaking`]: crate::constraints::breaking
    pub breaking_strain: Option<f32>,
}

impl Default for ClothBuilder {
    fn default() -> Self {
        Self {
            width: 40,
            height: 30,
            spacing: 0.2,
            mass: 0.5,
            fixed: FixedCorners::Two,
            origin: Vec2::ZERO,
            compliance: 0.0,
            long_range_attachments: false,
            breaking_strain: None,
        }
    }
}

/// What [`ClothBuilder::spawn`] created. Keep `root`: it is the cloth (despawn it to remove the
/// cloth; its [`BodyParticles`] and [`BodyConstraints`](crate::body::BodyConstraints) list the
/// entities below). The lists are for use right away, in the system that spawned the cloth,
/// before its commands are applied and the relationships filled.
#[derive(Debug, Clone)]
pub struct Cloth {
    /// The root entity: [`ParticleBody`], [`ClothGrid`] and a `Name` ("Cloth 40 × 30").
    pub root: Entity,
    /// Particle entities, row-major (`row * width + column`).
    pub particles: Vec<Entity>,
    /// Constraint entities: horizontal, then vertical, then diagonal pairs.
    pub constraints: Vec<Entity>,
    /// Long-range attachment entities (empty unless enabled).
    pub tethers: Vec<Entity>,
}

impl ClothBuilder {
    /// Checks every field.
    ///
    /// # Errors
    /// [`PbdError`] naming the first invalid field.
    pub fn validate(&self) -> Result<(), PbdError> {
        in_range("cloth width", self.width, 1, MAX_CLOTH_SIDE)?;
        in_range("cloth height", self.height, 1, MAX_CLOTH_SIDE)?;
        particle_budget(self.width as u64 * self.height as u64)?;
        within(
            "spacing (m)",
            positive("spacing (m)", self.spacing)?,
            SPACING_RANGE,
        )?;
        InverseMass::from_mass(self.mass)?;
        check_compliance(self.compliance)?;
        crate::error::finite_vec2("origin (m)", self.origin)?;
        if let Some(strain) = self.breaking_strain {
            BreakingStrain::new(strain)?;
        }
        Ok(())
    }

    /// Grid position of particle (row `i`, column `j`) (m).
    pub fn position(&self, i: u32, j: u32) -> Vec2 {
        self.origin + self.spacing * Vec2::new(j as f32, -(i as f32))
    }

    /// Index pairs and rest lengths of all constraints, in the demo's order: horizontal,
    /// vertical, then for each cell the two diagonals.
    pub fn constraint_pairs(&self) -> Vec<(u32, u32, f32)> {
        let (w, h, s) = (self.width, self.height, self.spacing);
        let diagonal = s * core::f32::consts::SQRT_2;
        let mut pairs = Vec::new();
        for i in 0..h {
            for j in 0..w.saturating_sub(1) {
                pairs.push((i * w + j, i * w + j + 1, s));
            }
        }
        for i in 0..h.saturating_sub(1) {
            for j in 0..w {
                pairs.push((i * w + j, i * w + j + w, s));
            }
        }
        for i in 0..h.saturating_sub(1) {
            for j in 0..w.saturating_sub(1) {
                pairs.push((i * w + j, i * w + j + w + 1, diagonal));
                pairs.push((i * w + j + 1, i * w + j + w, diagonal));
            }
        }
        pairs
    }

    /// Spawns the cloth: a root entity, and the particles and constraints related to it
    /// ([`ParticleOf`], [`ConstraintOf`]).
    ///
    /// # Errors
    /// As [`ClothBuilder::validate`]; nothing is spawned on error.
    pub fn spawn(&self, commands: &mut Commands) -> Result<Cloth, PbdError> {
        self.validate()?;
        let w = InverseMass::from_mass(self.mass)?;
        let breaking = self.breaking_strain.map(BreakingStrain::new).transpose()?;
        let pinned = self.fixed.indices(self.width, self.height);
        let root = commands
            .spawn((
                Name::new(format!("Cloth {} × {}", self.width, self.height)),
                ClothGrid {
                    width: self.width,
                    height: self.height,
                },
            ))
            .id();
        let mut cloth = Cloth {
            root,
            particles: Vec::new(),
            constraints: Vec::new(),
            tethers: Vec::new(),
        };
        for i in 0..self.height {
            for j in 0..self.width {
                let index = i * self.width + j;
                let inverse_mass = if pinned.contains(&index) {
                    InverseMass::PINNED
                } else {
                    w
                };
                cloth.particles.push(
                    commands
                        .spawn((
                            Particle,
                            Position(self.position(i, j)),
                            inverse_mass,
                            ClothParticle { column: j, row: i },
                            ParticleOf(root),
                        ))
                        .id(),
                );
            }
        }
        for (a, b, rest) in self.constraint_pairs() {
            let constraint = DistanceConstraint {
                particles: [cloth.particles[a as usize], cloth.particles[b as usize]],
                rest_length: rest,
                compliance: self.compliance,
            };
            let mut entity = commands.spawn((constraint, ConstraintOf(root)));
            if let Some(breaking) = breaking {
                entity.insert(breaking);
            }
            cloth.constraints.push(entity.id());
        }
        if self.long_range_attachments {
            for &pin in &pinned {
                let anchor = self.position(pin / self.width, pin % self.width);
                for i in 0..self.height {
                    for j in 0..self.width {
                        let index = i * self.width + j;
                        if pinned.contains(&index) {
                            continue;
                        }
                        let tether = LongRangeAttachment {
                            particle: cloth.particles[index as usize],
                            anchor: cloth.particles[pin as usize],
                            max_distance: (self.position(i, j) - anchor).length(),
                        };
                        cloth
                            .tethers
                            .push(commands.spawn((tether, ConstraintOf(root))).id());
                    }
                }
            }
        }
        Ok(cloth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_the_demo() {
        let b = ClothBuilder::default();
        // (w−1)h + w(h−1) + 2(w−1)(h−1) = 39·30 + 40·29 + 2·39·29
        assert_eq!(b.constraint_pairs().len(), 39 * 30 + 40 * 29 + 2 * 39 * 29);
    }

    #[test]
    fn pinned_corners_as_in_the_demo() {
        assert_eq!(FixedCorners::One.indices(40, 30), vec![0]);
        assert_eq!(FixedCorners::Two.indices(40, 30), vec![0, 39]);
        assert_eq!(FixedCorners::Four.indices(40, 30), vec![0, 39, 1160, 1199]);
    }

    #[test]
    fn invalid_input_is_refused() {
        let bad = [
            ClothBuilder {
                width: 0,
                ..default()
            },
            ClothBuilder {
                height: 100_000,
                ..default()
            },
            ClothBuilder {
                mass: 0.0,
                ..default()
            },
            ClothBuilder {
                mass: f32::NAN,
                ..default()
            },
            ClothBuilder {
                spacing: -1.0,
                ..default()
            },
        ];
        for b in bad {
            assert!(b.validate().is_err(), "{b:?} accepted");
        }
        assert!(ClothBuilder::default().validate().is_ok());
    }
}
