//! The components of a collider, and the radius of a solid particle.

use bevy::prelude::*;

use crate::error::{PbdError, non_negative, within};
use crate::particle::{SolverIndex, SolverState};

/// An obstacle for particles: a Bevy math primitive placed by the entity's `Transform`
/// (translation and rotation about z; scale is not applied). Every particle collides with it
/// (cloth, rope and fluid particles, each as a disc of its radius: [`ParticleRadius`], or
/// `FluidSettings::particle_radius` for fluid). Static, or moved by the game: its velocity is
/// inferred from its pose in consecutive steps (particles on a moving platform ride along).
/// Requires [`ColliderMaterial`] (friction and restitution) and `Transform`.
///
/// Named `ParticleCollider` so that it sits beside a rigid-body engine's `Collider` in one
/// file without a name clash.
///
/// ```
/// # use bevy::prelude::*;
/// # use bevy_pbd2d::prelude::*;
/// # let mut world = World::new();
/// world.spawn((
///     ParticleCollider::from(Rectangle::new(4.0, 0.5)),
///     Transform::from_xyz(0.0, -1.0, 0.0),
/// ));
/// ```
///
/// An invalid shape (a non-finite or non-positive size, a polygon of fewer than 3 vertices or
/// no area, a polyline of fewer than 2) is left out of the simulation with a warning until it
/// is fixed; [`ColliderShape::validate`] gives the reason before spawning.
#[derive(Component, Reflect, Debug, Clone, PartialEq, Deref, DerefMut)]
#[reflect(Component)]
#[require(ColliderMaterial, Transform)]
pub struct ParticleCollider(pub ColliderShape);

/// The shape of a [`ParticleCollider`], in the entity's local frame (m), centred on its origin
/// as Bevy's primitives are.
#[derive(Reflect, Debug, Clone, PartialEq)]
pub enum ColliderShape {
    /// A disc.
    Circle(Circle),
    /// An axis-aligned box (in the local frame).
    Rectangle(Rectangle),
    /// A capsule along the local y axis (Bevy's convention).
    Capsule(Capsule2d),
    /// A two-sided line segment of zero thickness.
    Segment(Segment2d),
    /// An open chain of two-sided segments of zero thickness (terrain).
    Polyline(Polyline2d),
    /// A closed polygon, convex or concave (not self-intersecting), solid inside; its vertices
    /// may wind either way.
    Polygon(Polygon),
    /// A convex polygon, solid inside.
    ConvexPolygon(ConvexPolygon),
}

macro_rules! from_primitive {
    ($($primitive:ident => $variant:ident),*) => {$(
        impl From<$primitive> for ColliderShape {
            fn from(shape: $primitive) -> Self {
                Self::$variant(shape)
            }
        }
        impl From<$primitive> for ParticleCollider {
            fn from(shape: $primitive) -> Self {
                Self(ColliderShape::$variant(shape))
            }
        }
    )*};
}

from_primitive!(
    Circle => Circle,
    Rectangle => Rectangle,
    Capsule2d => Capsule,
    Segment2d => Segment,
    Polyline2d => Polyline,
    Polygon => Polygon,
    ConvexPolygon => ConvexPolygon
);

/// Surface properties of a [`ParticleCollider`] (Coulomb friction, restitution; fluid
/// particles slip, whatever the friction), as in
/// \[MMCK14\] §6.1 and Müller et al. 2020 ("Detailed rigid body simulation with extended
/// position based dynamics") eq. 34.
///
/// Defaults: μs = μk = 0.5, e = 0 (avian's defaults). Build with [`ColliderMaterial::new`] to
/// get an error for a bad value; a bad value written directly is replaced by the default with
/// a warning.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Default)]
pub struct ColliderMaterial {
    /// Static friction coefficient μs ≥ 0: a particle whose tangential motion relative to the
    /// collider would be below μs times its penetration depth stays put.
    pub static_friction: f32,
    /// Kinetic (dynamic) friction coefficient μk ≥ 0: otherwise its tangential motion is
    /// reduced by μk times the depth.
    pub dynamic_friction: f32,
    /// Coefficient of restitution e ∈ [0, 1]: the normal speed after an impact is e times the
    /// speed before it (impacts slower than 2 |g| Δt are inelastic, as resting contacts).
    pub restitution: f32,
}

/// The friction coefficients [`ColliderMaterial::new`] accepts.
pub const FRICTION_RANGE: core::ops::RangeInclusive<f32> = 0.0..=100.0;

impl Default for ColliderMaterial {
    fn default() -> Self {
        Self {
            static_friction: 0.5,
            dynamic_friction: 0.5,
            restitution: 0.0,
        }
    }
}

impl ColliderMaterial {
    /// A material with the given coefficients.
    ///
    /// # Errors
    /// [`PbdError::NotInRange`] for a friction coefficient outside [`FRICTION_RANGE`] or a
    /// restitution outside [0, 1] (NaN included).
    pub fn new(
        static_friction: f32,
        dynamic_friction: f32,
        restitution: f32,
    ) -> Result<Self, PbdError> {
        Ok(Self {
            static_friction: within("static friction", static_friction, FRICTION_RANGE)?,
            dynamic_friction: within("dynamic friction", dynamic_friction, FRICTION_RANGE)?,
            restitution: within("restitution", restitution, 0.0..=1.0)?,
        })
    }

    /// A frictionless material with restitution e.
    ///
    /// # Errors
    /// As [`ColliderMaterial::new`].
    pub fn frictionless(restitution: f32) -> Result<Self, PbdError> {
        Self::new(0.0, 0.0, restitution)
    }

    /// The material if every coefficient is in range, else the default.
    pub(crate) fn checked(self) -> Option<Self> {
        Self::new(
            self.static_friction,
            self.dynamic_friction,
            self.restitution,
        )
        .ok()
    }
}

/// The collision radius of a solid particle (m): it touches a [`ParticleCollider`] as a disc
/// of this radius. A particle without it has [`ParticleRadius::DEFAULT`]; fluid particles use
/// `FluidSettings::particle_radius` and ignore it. 0 is a point particle.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Deref)]
#[reflect(Component, Default)]
pub struct ParticleRadius(pub(crate) f32);

/// The radii [`ParticleRadius::new`] accepts (m).
pub const PARTICLE_RADIUS_RANGE: core::ops::RangeInclusive<f32> = 0.0..=10.0;

impl Default for ParticleRadius {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl ParticleRadius {
    /// 1 cm.
    pub const DEFAULT: Self = Self(0.01);

    /// A radius in m.
    ///
    /// # Errors
    /// [`PbdError::Negative`] for a negative or non-finite radius, [`PbdError::NotInRange`]
    /// above [`PARTICLE_RADIUS_RANGE`].
    pub fn new(radius: f32) -> Result<Self, PbdError> {
        let radius = non_negative("particle radius (m)", radius)?;
        Ok(Self(within(
            "particle radius (m)",
            radius,
            PARTICLE_RADIUS_RANGE,
        )?))
    }

    /// The radius (m).
    pub fn get(self) -> f32 {
        self.0
    }
}

/// Marks a collider moved by a teleport rather than a motion: in the next step it is taken as
/// having been at its new pose all along (no sweep over the way between, no velocity given to
/// particles), and the marker is removed. Without it, a collider's pose change is its motion:
/// one moved 10 m in a step of 1/60 s sweeps everything between at 600 m/s.
#[derive(Component, Reflect, Debug, Default, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Default)]
pub struct TeleportCollider;

/// The discs of a body's particles, as the solid contacts and the fluid coupling take them:
/// for each of `members` in order that has a row past the fluid's in this step's arrays, its
/// row and its contact radius (m; [`ParticleRadius`], or its default where it has none).
pub(crate) fn member_discs<'a>(
    members: &'a [Entity],
    particles: &'a Query<(&SolverIndex, Option<&ParticleRadius>)>,
    state: &'a SolverState,
) -> impl Iterator<Item = (u32, f32)> + 'a {
    members.iter().filter_map(|&particle| {
        let (index, radius) = particles.get(particle).ok()?;
        let row = state.row_of(particle, *index);
        let row = row.filter(|&row| row >= state.fluid_count)?;
        Some((row as u32, radius.copied().unwrap_or_default().get()))
    })
}
