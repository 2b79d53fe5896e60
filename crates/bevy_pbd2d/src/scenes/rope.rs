//! A builder for ropes and chains: ordinary particles along a polyline, joined by distance
//! constraints, with optional bending ([`AngleConstraint`]s at every inner particle).
//!
//! The polyline is resampled at equal arc lengths: n = ⌈length / segment length⌉ segments,
//! n + 1 particles. Each particle carries the mass of half of each segment it ends
//! (mass per length μ times the half-lengths), so a rope of length L weighs μ L however it is
//! cut. The rest lengths are the distances between consecutive particles as laid out, so the
//! rope starts at rest; the bending constraints' rest angle is 0 (a rope wants to be straight).

use bevy::prelude::*;

use crate::body::{ConstraintOf, ParticleBody, ParticleOf};
use crate::collider::ParticleRadius;
use crate::constraints::angle::{AngleConstraint, check_angle_compliance};
use crate::constraints::distance::{DistanceConstraint, LENGTH_RANGE, check_compliance};
use crate::constraints::tether::LongRangeAttachment;
use crate::error::{PbdError, finite_vec2, particle_budget, positive, within};
use crate::particle::{InverseMass, Particle, Position};

/// Which ends of a rope are pinned (w = 0).
#[derive(Reflect, Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum RopeEnds {
    /// Neither.
    Free,
    /// The first particle. The default: a rope hanging from its start.
    #[default]
    Start,
    /// The last particle.
    End,
    /// Both: a bridge, a washing line.
    Both,
}

impl RopeEnds {
    /// Whether the first (`start`) or the last particle is pinned.
    pub fn pins(self, start: bool) -> bool {
        matches!(
            (self, start),
            (Self::Start | Self::Both, true) | (Self::End | Self::Both, false)
        )
    }
}

/// Marks a particle spawned by [`RopeBuilder`], with its place along the rope (0 at the start).
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component)]
pub struct RopeParticle {
    /// Index along the rope, 0 ..= segments.
    pub index: u32,
}

/// On the root of a rope spawned by [`RopeBuilder`]: its number of segments (it has one
/// particle more).
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Debug, PartialEq)]
#[require(ParticleBody)]
pub struct RopeBody {
    /// Segments (distance constraints) along the rope.
    pub segments: u32,
}

/// The segment lengths [`RopeBuilder`] accepts (m): 0.1 mm to 1 km.
pub const SEGMENT_LENGTH_RANGE: core::ops::RangeInclusive<f32> = 1e-4..=1e3;

/// The masses per length [`RopeBuilder`] accepts (kg/m).
pub const MASS_PER_LENGTH_RANGE: core::ops::RangeInclusive<f32> = 1e-6..=1e6;

/// The most segments one rope may have.
pub const MAX_ROPE_SEGMENTS: u32 = 1_000_000;

/// Builds a rope or chain along a polyline. Defaults: 5 m straight to the right of the origin,
/// 0.1 m segments, 0.5 kg/m, the start pinned, radius 0.05 m, rigid segments, no bending
/// stiffness (a chain of free joints).
#[derive(Reflect, Debug, Clone, PartialEq)]
pub struct RopeBuilder {
    /// The polyline the rope is laid along (m), at least two points, the first its start.
    pub points: Vec<Vec2>,
    /// Target segment length (m), in [`SEGMENT_LENGTH_RANGE`]: the segments are the
    /// polyline's length divided into the fewest equal parts no longer than this. Default 0.1.
    pub segment_length: f32,
    /// Mass per length μ (kg/m), in [`MASS_PER_LENGTH_RANGE`]. Default 0.5.
    pub mass_per_length: f32,
    /// Pinned ends. Default [`RopeEnds::Start`].
    pub pinned: RopeEnds,
    /// Collision radius of every particle (m, [`ParticleRadius`]), in
    /// [`PARTICLE_RADIUS_RANGE`](crate::collider::PARTICLE_RADIUS_RANGE). Default 0.05.
    pub radius: f32,
    /// Compliance α of every segment (m/N), in
    /// [`COMPLIANCE_RANGE`](crate::constraints::distance::COMPLIANCE_RANGE). Default 0.
    pub compliance: f32,
    /// Compliance of the bending constraint at every inner particle (rad/(N·m), in
    /// [`ANGLE_COMPLIANCE_RANGE`](crate::constraints::angle::ANGLE_COMPLIANCE_RANGE)), or `None`
    /// for none (a chain). A rod of bending stiffness EI (N·m²) cut in segments of length L
    /// has α = L/EI ([`angle`](crate::constraints::angle)). Default `None`.
    pub bending_compliance: Option<f32>,
    /// Tether every particle to each pinned end with its distance along the rope
    /// ([`LongRangeAttachment`]). The links are solved as one chain
    /// ([`chains`](crate::constraints::chains)), which holds a heavy weight at its length when
    /// the substeps are short enough; with longer ones it falls back to Gauss-Seidel, which
    /// leaves it stretched (a 100-link chain of 2.5 kg holding 10 kg at one substep of 5
    /// iterations: 2 100 %), and the tethers hold it. Nothing without a pinned end. Default
    /// `false`.
    pub long_range_attachments: bool,
}

impl Default for RopeBuilder {
    fn default() -> Self {
        Self {
            points: vec![Vec2::ZERO, Vec2::new(5.0, 0.0)],
            segment_length: 0.1,
            mass_per_length: 0.5,
            pinned: RopeEnds::Start,
            radius: 0.05,
            compliance: 0.0,
            bending_compliance: None,
            long_range_attachments: false,
        }
    }
}

/// What [`RopeBuilder::spawn`] created (the lists are for use right away, as [`Cloth`]'s).
///
/// [`Cloth`]: super::Cloth
#[derive(Debug, Clone)]
pub struct Rope {
    /// The root entity: [`ParticleBody`], [`RopeBody`] and a `Name` ("Rope 50 × 0.1 m").
    pub root: Entity,
    /// Particle entities from the start to the end.
    pub particles: Vec<Entity>,
    /// Distance constraint entities, segment k joining particles k and k + 1.
    pub segments: Vec<Entity>,
    /// Angle constraint entities, the k-th at particle k + 1 (empty without bending).
    pub bends: Vec<Entity>,
    /// Long-range attachment entities (empty unless enabled).
    pub tethers: Vec<Entity>,
}

impl RopeBuilder {
    /// A straight rope from `start` to `end` (m), other fields at their defaults.
    pub fn between(start: Vec2, end: Vec2) -> Self {
        Self::along(vec![start, end])
    }

    /// A rope along `points` (m), other fields at their defaults.
    pub fn along(points: Vec<Vec2>) -> Self {
        Self {
            points,
            ..default()
        }
    }

    /// The polyline's length (m).
    pub fn length(&self) -> f32 {
        self.points.windows(2).map(|p| p[0].distance(p[1])).sum()
    }

    /// Checks every field.
    ///
    /// # Errors
    /// [`PbdError`] naming the first invalid field: fewer than two points
    /// ([`PbdError::OutOfRange`] on "rope points"), a non-finite point, a polyline of length 0
    /// or beyond [`LENGTH_RANGE`] ("rope length (m)"), more than [`MAX_ROPE_SEGMENTS`]
    /// segments, a field out of its range, or particles too light or heavy for
    /// [`MASS_RANGE`](crate::particle::MASS_RANGE).
    pub fn validate(&self) -> Result<(), PbdError> {
        self.layout().map(|_| ())
    }

    /// The particles' positions and masses (kg), after checking every field.
    fn layout(&self) -> Result<(Vec<Vec2>, Vec<f32>), PbdError> {
        if self.points.len() < 2 {
            return Err(PbdError::OutOfRange {
                name: "rope points",
                value: self.points.len() as u64,
                min: 2,
                max: u32::MAX as u64,
            });
        }
        for &p in &self.points {
            finite_vec2("rope point (m)", p)?;
        }
        let length = within(
            "rope length (m)",
            positive("rope length (m)", self.length())?,
            LENGTH_RANGE,
        )?;
        let segment = within(
            "segment length (m)",
            positive("segment length (m)", self.segment_length)?,
            SEGMENT_LENGTH_RANGE,
        )?;
        let mu = within(
            "mass per length (kg/m)",
            positive("mass per length (kg/m)", self.mass_per_length)?,
            MASS_PER_LENGTH_RANGE,
        )?;
        ParticleRadius::new(self.radius)?;
        check_compliance(self.compliance)?;
        if let Some(bending) = self.bending_compliance {
            check_angle_compliance(bending)?;
        }
        let count = (length / segment - 1e-4).ceil().max(1.0);
        if count > MAX_ROPE_SEGMENTS as f32 {
            return Err(PbdError::OutOfRange {
                name: "rope segments",
                value: count as u64,
                min: 1,
                max: MAX_ROPE_SEGMENTS as u64,
            });
        }
        let segments = count as u32;
        particle_budget(segments as u64 + 1)?;
        let positions: Vec<Vec2> = (0..=segments)
            .map(|k| self.point_at(length * k as f32 / segments as f32))
            .collect();
        let chords: Vec<f32> = positions.windows(2).map(|p| p[0].distance(p[1])).collect();
        let masses: Vec<f32> = (0..=segments as usize)
            .map(|k| {
                let before = k.checked_sub(1).map_or(0.0, |s| chords[s]);
                let after = chords.get(k).copied().unwrap_or(0.0);
                0.5 * mu * (before + after)
            })
            .collect();
        for &m in &masses {
            InverseMass::from_mass(m)?;
        }
        Ok((positions, masses))
    }

    /// The point at arc length `s` (m) along the polyline (its end past its length).
    fn point_at(&self, s: f32) -> Vec2 {
        let mut left = s;
        for p in self.points.windows(2) {
            let d = p[0].distance(p[1]);
            if left <= d && d > 0.0 {
                return p[0].lerp(p[1], left / d);
            }
            left -= d;
        }
        *self.points.last().expect("at least two points")
    }

    /// Whether particle `k` of `0 ..= last` is pinned.
    fn is_pinned(&self, k: usize, last: usize) -> bool {
        (k == 0 && self.pinned.pins(true)) || (k == last && self.pinned.pins(false))
    }

    /// Spawns the rope: a root entity, and the particles and constraints related to it
    /// ([`ParticleOf`], [`ConstraintOf`]).
    ///
    /// # Errors
    /// As [`RopeBuilder::validate`]; nothing is spawned on error.
    pub fn spawn(&self, commands: &mut Commands) -> Result<Rope, PbdError> {
        let (positions, masses) = self.layout()?;
        let radius = ParticleRadius::new(self.radius)?;
        let segments = positions.len() as u32 - 1;
        let root = commands
            .spawn((
                Name::new(format!(
                    "Rope {segments} × {:.3} m",
                    self.length() / segments as f32
                )),
                RopeBody { segments },
            ))
            .id();
        let last = positions.len() - 1;
        let particles: Vec<Entity> = positions
            .iter()
            .zip(&masses)
            .enumerate()
            .map(|(k, (&at, &mass))| {
                let w = if self.is_pinned(k, last) {
                    InverseMass::PINNED
                } else {
                    InverseMass::from_mass(mass).expect("checked by layout")
                };
                commands
                    .spawn((
                        Particle,
                        Position(at),
                        w,
                        radius,
                        RopeParticle { index: k as u32 },
                        ParticleOf(root),
                    ))
                    .id()
            })
            .collect();
        let segment_entities = (0..last)
            .map(|k| {
                let constraint = DistanceConstraint {
                    particles: [particles[k], particles[k + 1]],
                    rest_length: positions[k].distance(positions[k + 1]),
                    compliance: self.compliance,
                };
                commands.spawn((constraint, ConstraintOf(root))).id()
            })
            .collect();
        let bends = match self.bending_compliance {
            None => Vec::new(),
            Some(compliance) => (1..last)
                .map(|k| {
                    let bend = AngleConstraint {
                        particles: [particles[k - 1], particles[k], particles[k + 1]],
                        rest_angle: 0.0,
                        compliance,
                    };
                    commands.spawn((bend, ConstraintOf(root))).id()
                })
                .collect(),
        };
        let mut tethers = Vec::new();
        if self.long_range_attachments {
            // Distance along the rope from the start to each particle.
            let along: Vec<f32> = core::iter::once(0.0)
                .chain(positions.windows(2).scan(0.0, |s, p| {
                    *s += p[0].distance(p[1]);
                    Some(*s)
                }))
                .collect();
            let pinned = |k: usize| self.is_pinned(k, last);
            for pin in [0, last].into_iter().filter(|&k| pinned(k)) {
                for k in (0..=last).filter(|&k| !pinned(k)) {
                    let tether = LongRangeAttachment {
                        particle: particles[k],
                        anchor: particles[pin],
                        max_distance: (along[k] - along[pin]).abs(),
                    };
                    tethers.push(commands.spawn((tether, ConstraintOf(root))).id());
                }
            }
        }
        Ok(Rope {
            root,
            particles,
            segments: segment_entities,
            bends,
            tethers,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_polyline_is_cut_into_equal_arcs_and_the_mass_is_mu_times_the_length() {
        // An L of 3 m + 4 m: 7 m in segments of at most 0.3 m, 24 of them (7/24 m).
        let rope = RopeBuilder {
            segment_length: 0.3,
            mass_per_length: 2.0,
            ..RopeBuilder::along(vec![Vec2::ZERO, Vec2::new(3.0, 0.0), Vec2::new(3.0, 4.0)])
        };
        let (x, m) = rope.layout().unwrap();
        assert_eq!(x.len(), 25);
        assert_eq!(x[0], Vec2::ZERO);
        assert!((x[24] - Vec2::new(3.0, 4.0)).length() < 1e-5);
        let total: f32 = m.iter().sum();
        let chords: f32 = x.windows(2).map(|p| p[0].distance(p[1])).sum();
        assert!((total - 2.0 * chords).abs() < 1e-4, "{total} kg");
        assert!((m[0] - 0.5 * m[1]).abs() < 1e-6, "the ends carry half");
        // The corner's chord cuts it, by at most (1 − 1/√2) of a segment.
        let cut = (1.0 - core::f32::consts::FRAC_1_SQRT_2) * 7.0 / 24.0;
        assert!(chords <= 7.0 && chords >= 7.0 - cut, "{chords}");
    }

    #[test]
    fn invalid_ropes_are_refused() {
        let bad = [
            RopeBuilder::along(vec![Vec2::ZERO]),
            RopeBuilder::between(Vec2::ZERO, Vec2::ZERO),
            RopeBuilder::between(Vec2::ZERO, Vec2::new(f32::NAN, 0.0)),
            RopeBuilder {
                segment_length: 0.0,
                ..default()
            },
            RopeBuilder {
                mass_per_length: -1.0,
                ..default()
            },
            RopeBuilder {
                bending_compliance: Some(-1.0),
                ..default()
            },
            RopeBuilder {
                radius: f32::INFINITY,
                ..default()
            },
            RopeBuilder {
                segment_length: 1e-4,
                ..RopeBuilder::between(Vec2::ZERO, Vec2::new(1e3, 0.0))
            },
        ];
        for b in bad {
            assert!(b.validate().is_err(), "{b:?} accepted");
        }
        assert!(RopeBuilder::default().validate().is_ok());
    }
}
