//! A builder for the PBF demo's scene: a block of fluid resting in the bottom-left of a box of
//! boundary samples three times its size.

use bevy::prelude::*;

use crate::body::{ParticleBody, ParticleOf};
use crate::collider::{ColliderMaterial, ParticleCollider};
use crate::error::{MAX_PARTICLES, PbdError, finite_vec2, in_range, particle_budget_within};
use crate::fluid::{BoundaryParticle, FluidParticle, FluidSettings};
use crate::particle::{InverseMass, Position};

/// The largest width or height accepted by [`DamBreakBuilder`].
pub const MAX_BLOCK_SIDE: u32 = 2000;

/// Builds the PBF demo's dam break. With particle diameter d = 2r and a W × H block, the box
/// is 3W × 3H samples: fluid particle (row i, column j) at
/// (−1.5 W d + (j + 1) d + r, (i + 1) d + r); boundary samples along the bottom (y = 0) and top
/// (y = 3H d) for columns 0 .. 3W, and left/right for rows 1 .. 3H − 1, exactly as in the demo
/// (which leaves the two top corner samples out). Everything is shifted by `origin` (m).
/// With [`DamBreakWalls::Collider`] the box is one frictionless [`ParticleCollider`] instead,
/// a closed polyline through the samples' centres, which carries its own samples on the same
/// lines. Defaults: 30 × 30, origin (0, 0), sample walls.
#[derive(Reflect, Debug, Clone, Copy, PartialEq)]
pub struct DamBreakBuilder {
    /// Fluid particles per row, 1 ..= 2000. Default 30.
    pub width: u32,
    /// Fluid particles per column, 1 ..= 2000. Default 30.
    pub height: u32,
    /// Offset of the whole scene (m). Default (0, 0): the box's floor centre.
    pub origin: Vec2,
    /// What the box is made of. Default [`DamBreakWalls::Samples`] (the demo's).
    pub walls: DamBreakWalls,
    /// Most particles and boundary samples [`validate`](Self::validate) accepts. Default
    /// [`MAX_PARTICLES`] (250 000), which keeps an entry such as 1000 × 1000 in a UI field from
    /// freezing the app; raise it to build larger scenes on purpose (the 1 000 × 1 000 dam break
    /// has 1 012 000 and takes ~1 GB).
    pub max_particles: u64,
}

/// What a [`DamBreakBuilder`]'s box is made of.
#[derive(Reflect, Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum DamBreakWalls {
    /// Boundary samples, as in the PBF demo.
    #[default]
    Samples,
    /// A [`ParticleCollider`] (a closed polyline) with the samples the collider plugin
    /// generates on it.
    Collider,
}

impl Default for DamBreakBuilder {
    fn default() -> Self {
        Self {
            width: 30,
            height: 30,
            origin: Vec2::ZERO,
            walls: DamBreakWalls::Samples,
            max_particles: MAX_PARTICLES,
        }
    }
}

/// What [`DamBreakBuilder::spawn`] created. Keep `root`: it is the dam break (despawn it to
/// remove the fluid and its box; its [`BodyParticles`](crate::body::BodyParticles) lists the
/// fluid particles, then the boundary samples). The lists are for use right away, before the
/// spawning commands are applied.
#[derive(Debug, Clone)]
pub struct DamBreak {
    /// The root entity: [`ParticleBody`] and a `Name` ("Dam break 30 × 30").
    pub root: Entity,
    /// Fluid particle entities, row-major from the bottom row.
    pub fluid: Vec<Entity>,
    /// Boundary sample entities (none with [`DamBreakWalls::Collider`]: the collider's are
    /// generated at the first step with fluid).
    pub boundary: Vec<Entity>,
    /// The box's collider, with [`DamBreakWalls::Collider`].
    pub collider: Option<Entity>,
}

impl DamBreakBuilder {
    /// Checks the fields and the particle count against the budget.
    ///
    /// # Errors
    /// [`PbdError`] naming the first invalid field.
    pub fn validate(&self) -> Result<(), PbdError> {
        in_range("fluid width", self.width, 1, MAX_BLOCK_SIDE)?;
        in_range("fluid height", self.height, 1, MAX_BLOCK_SIDE)?;
        let (w, h) = (self.width as u64, self.height as u64);
        particle_budget_within(w * h + 6 * w + 6 * h, self.max_particles)?;
        finite_vec2("origin (m)", self.origin)?;
        Ok(())
    }

    /// Fluid particle positions (m), row-major from the bottom row.
    pub fn fluid_positions(&self, settings: &FluidSettings) -> Vec<Vec2> {
        let r = settings.particle_radius;
        let d = 2.0 * r;
        let bw = 3.0 * self.width as f32;
        let mut out = Vec::with_capacity((self.width * self.height) as usize);
        for i in 0..self.height {
            for j in 0..self.width {
                out.push(
                    self.origin
                        + Vec2::new(-0.5 * bw * d + j as f32 * d + d + r, i as f32 * d + d + r),
                );
            }
        }
        out
    }

    /// Boundary sample positions (m), in the demo's order.
    pub fn boundary_positions(&self, settings: &FluidSettings) -> Vec<Vec2> {
        let d = 2.0 * settings.particle_radius;
        let (bw, bh) = (3 * self.width, 3 * self.height);
        let left = -0.5 * bw as f32 * d;
        let mut out = Vec::new();
        for j in 0..bw {
            out.push(Vec2::new(left + j as f32 * d, 0.0));
            out.push(Vec2::new(left + j as f32 * d, bh as f32 * d));
        }
        for j in 1..bh {
            out.push(Vec2::new(left, j as f32 * d));
            out.push(Vec2::new(left + (bw - 1) as f32 * d, j as f32 * d));
        }
        out.into_iter().map(|p| p + self.origin).collect()
    }

    /// The box as a closed polyline through the sample lines (m): floor, right wall, top,
    /// left wall.
    pub fn box_polyline(&self, settings: &FluidSettings) -> Polyline2d {
        let (lo, hi) = self.box_bounds(settings);
        Polyline2d::new([lo, Vec2::new(hi.x, lo.y), hi, Vec2::new(lo.x, hi.y), lo])
    }

    /// Inner extent of the box, (min, max) corners (m): the region fluid particles stay in.
    pub fn box_bounds(&self, settings: &FluidSettings) -> (Vec2, Vec2) {
        let d = 2.0 * settings.particle_radius;
        let (bw, bh) = (3 * self.width, 3 * self.height);
        let left = -0.5 * bw as f32 * d;
        (
            self.origin + Vec2::new(left, 0.0),
            self.origin + Vec2::new(left + (bw - 1) as f32 * d, bh as f32 * d),
        )
    }

    /// How high the fluid at `positions` (m) stands, as its particles' median height above the
    /// floor over the median an incompressible fluid would settle to (1: settled at rest
    /// density; below 1: compressed). Area conservation: W·H particles of area (2r)² spread
    /// over the box's inner width, whose walls and floor are r inside their sample centres;
    /// a settled layer's median particle is at half its height. `None` without particles.
    pub fn median_height_ratio(&self, settings: &FluidSettings, positions: &[Vec2]) -> Option<f32> {
        let (lo, hi) = self.box_bounds(settings);
        let r = settings.particle_radius;
        let d = 2.0 * r;
        let column = (self.width * self.height) as f32 * d * d / ((hi.x - lo.x) - d);
        let floor = lo.y + r;
        let mut heights: Vec<f32> = positions.iter().map(|p| p.y - floor).collect();
        heights.sort_by(f32::total_cmp);
        let median = *heights.get(heights.len() / 2)?;
        Some(median / (0.5 * column))
    }

    /// Spawns the dam break: a root entity, and the fluid particles (w = 1/m) and boundary
    /// samples related to it ([`ParticleOf`]).
    ///
    /// # Errors
    /// As [`DamBreakBuilder::validate`] and [`FluidSettings::validate`]; nothing is spawned on error.
    pub fn spawn(
        &self,
        commands: &mut Commands,
        settings: &FluidSettings,
    ) -> Result<DamBreak, PbdError> {
        self.validate()?;
        settings.validate()?;
        let w = InverseMass::from_mass(settings.particle_mass())?;
        let name = format!("Dam break {} × {}", self.width, self.height);
        let root = commands.spawn((ParticleBody, Name::new(name))).id();
        let fluid = self
            .fluid_positions(settings)
            .into_iter()
            .map(|p| {
                let particle = (FluidParticle, Position(p), w, ParticleOf(root));
                commands.spawn(particle).id()
            })
            .collect();
        let (boundary, collider) = match self.walls {
            DamBreakWalls::Samples => {
                let samples = self.boundary_positions(settings).into_iter().map(|p| {
                    let sample = (BoundaryParticle, Position(p), ParticleOf(root));
                    commands.spawn(sample).id()
                });
                (samples.collect(), None)
            }
            DamBreakWalls::Collider => {
                let walls = (
                    ParticleCollider::from(self.box_polyline(settings)),
                    ColliderMaterial::frictionless(0.0)?,
                    Transform::IDENTITY,
                    Name::new("Dam break box"),
                    ParticleOf(root),
                );
                (Vec::new(), Some(commands.spawn(walls).id()))
            }
        };
        Ok(DamBreak {
            root,
            fluid,
            boundary,
            collider,
        })
    }
}
