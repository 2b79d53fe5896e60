//! Errors returned at the API boundary (builders, setters) for invalid input.

use thiserror::Error;

/// Why a value given to a builder or setter was refused.
///
/// The simulation never sees the refused value: the previous state is kept.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PbdError {
    /// A value that must be finite and strictly positive was not (e.g. mass, time step, radius).
    #[error("{name} must be a finite number greater than 0 (got {value})")]
    NotPositive {
        /// What the value is, e.g. `"mass (kg)"`.
        name: &'static str,
        /// The refused value.
        value: f64,
    },
    /// A value that must be finite and ≥ 0 was negative, NaN or infinite.
    #[error("{name} must be a finite number ≥ 0 (got {value})")]
    Negative {
        /// What the value is.
        name: &'static str,
        /// The refused value.
        value: f64,
    },
    /// A value that must be finite was NaN or infinite.
    #[error("{name} must be finite (got {value})")]
    NotFinite {
        /// What the value is.
        name: &'static str,
        /// The refused value.
        value: f64,
    },
    /// A value above its upper bound.
    #[error("{name} must be at most {max} (got {value})")]
    TooLarge {
        /// What the value is.
        name: &'static str,
        /// The refused value.
        value: f64,
        /// Largest allowed value.
        max: f64,
    },
    /// A value outside its allowed range.
    #[error("{name} must be between {min} and {max} (got {value})")]
    NotInRange {
        /// What the value is.
        name: &'static str,
        /// The refused value.
        value: f64,
        /// Smallest allowed value.
        min: f64,
        /// Largest allowed value.
        max: f64,
    },
    /// A count (width, height, iterations …) outside its allowed range.
    #[error("{name} must be between {min} and {max} (got {value})")]
    OutOfRange {
        /// What the count is.
        name: &'static str,
        /// The refused value.
        value: u64,
        /// Smallest allowed value.
        min: u64,
        /// Largest allowed value.
        max: u64,
    },
    /// An entity given as a body has no [`ParticleBody`](crate::body::ParticleBody).
    #[error("{entity} is not a particle body (it has no ParticleBody component)")]
    NotABody {
        /// The entity given.
        entity: bevy::ecs::entity::Entity,
    },
    /// A collider shape with too few vertices or no extent.
    #[error("invalid collider shape: {reason}")]
    InvalidShape {
        /// What is wrong with it, e.g. "a polygon needs at least 3 vertices".
        reason: &'static str,
    },
    /// A scene would contain more particles than its builder's limit ([`MAX_PARTICLES`] by
    /// default).
    #[error("{requested} particles requested; at most {limit} are allowed")]
    TooManyParticles {
        /// How many particles the scene would have.
        requested: u64,
        /// The limit it exceeds.
        limit: u64,
    },
}

/// The largest number of particles (and boundary samples) a builder will spawn: 250 000, a
/// guard against entries such as 1000 × 1000 in a UI field, which would freeze the app for
/// minutes. Spawn particles directly for larger scenes.
pub const MAX_PARTICLES: u64 = 250_000;

/// `Ok(value)` when finite and > 0, else [`PbdError::NotPositive`].
pub fn positive(name: &'static str, value: f32) -> Result<f32, PbdError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(PbdError::NotPositive {
            name,
            value: value as f64,
        })
    }
}

/// `Ok(value)` when finite and ≥ 0, else [`PbdError::Negative`].
pub fn non_negative(name: &'static str, value: f32) -> Result<f32, PbdError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(PbdError::Negative {
            name,
            value: value as f64,
        })
    }
}

/// `Ok(value)` when finite, else [`PbdError::NotFinite`].
pub fn finite(name: &'static str, value: f32) -> Result<f32, PbdError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(PbdError::NotFinite {
            name,
            value: value as f64,
        })
    }
}

/// `Ok(value)` when `value ≤ max`, else [`PbdError::TooLarge`] (check finiteness first).
pub fn at_most(name: &'static str, value: f32, max: f32) -> Result<f32, PbdError> {
    if value <= max {
        Ok(value)
    } else {
        Err(PbdError::TooLarge {
            name,
            value: value as f64,
            max: max as f64,
        })
    }
}

/// `Ok(value)` when `value` lies in `range`, else [`PbdError::NotInRange`] (NaN is in no range).
pub fn within(
    name: &'static str,
    value: f32,
    range: core::ops::RangeInclusive<f32>,
) -> Result<f32, PbdError> {
    if range.contains(&value) {
        Ok(value)
    } else {
        Err(PbdError::NotInRange {
            name,
            value: value as f64,
            min: *range.start() as f64,
            max: *range.end() as f64,
        })
    }
}

/// `Ok(value)` when both components are finite, else [`PbdError::NotFinite`].
pub fn finite_vec2(
    name: &'static str,
    value: bevy::math::Vec2,
) -> Result<bevy::math::Vec2, PbdError> {
    if value.is_finite() {
        Ok(value)
    } else {
        let bad = if value.x.is_finite() {
            value.y
        } else {
            value.x
        };
        Err(PbdError::NotFinite {
            name,
            value: bad as f64,
        })
    }
}

/// `Ok(value)` when `min ≤ value ≤ max`, else [`PbdError::OutOfRange`].
pub fn in_range(name: &'static str, value: u32, min: u32, max: u32) -> Result<u32, PbdError> {
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(PbdError::OutOfRange {
            name,
            value: value as u64,
            min: min as u64,
            max: max as u64,
        })
    }
}

/// `Ok(count)` when `count ≤ MAX_PARTICLES`, else [`PbdError::TooManyParticles`].
pub fn particle_budget(count: u64) -> Result<u64, PbdError> {
    particle_budget_within(count, MAX_PARTICLES)
}

/// `Ok(count)` when `count ≤ limit`, else [`PbdError::TooManyParticles`].
pub fn particle_budget_within(count: u64, limit: u64) -> Result<u64, PbdError> {
    if count <= limit {
        Ok(count)
    } else {
        Err(PbdError::TooManyParticles {
            requested: count,
            limit,
        })
    }
}
