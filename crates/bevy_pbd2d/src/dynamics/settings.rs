//! Simulation settings shared by all particle kinds.

use core::time::Duration;

use bevy::prelude::*;

use crate::error::{PbdError, finite_vec2, in_range, positive, within};
use crate::schedule::ValidatedSettings;

/// Gravitational acceleration applied to every particle with w > 0 (m/s²).
/// Default `(0, −9.81)`, as in both reference demos.
///
/// With the feature `avian` it follows avian's `Gravity` until the game sets it
/// ([`avian`](crate::avian) module docs).
#[derive(Resource, Reflect, Debug, Clone, Copy, PartialEq, Deref)]
#[reflect(Resource, Default)]
pub struct Gravity(pub Vec2);

impl Default for Gravity {
    fn default() -> Self {
        Self(Vec2::new(0.0, -9.81))
    }
}

impl Gravity {
    /// Sets the acceleration (m/s²).
    ///
    /// # Errors
    /// [`PbdError::NotFinite`] for NaN or infinite components, [`PbdError::NotInRange`] for a
    /// component outside [`GRAVITY_RANGE`]; the old value is kept.
    pub fn set(&mut self, acceleration: Vec2) -> Result<(), PbdError> {
        self.0 = check_gravity(acceleration)?;
        Ok(())
    }
}

/// The range of each component of [`Gravity`] (m/s²): ±10 000 m/s², about 1 000 g.
pub const GRAVITY_RANGE: core::ops::RangeInclusive<f32> = -1e4..=1e4;

fn check_gravity(g: Vec2) -> Result<Vec2, PbdError> {
    let g = finite_vec2("gravity (m/s²)", g)?;
    within("gravity (m/s²)", g.x, GRAVITY_RANGE)?;
    within("gravity (m/s²)", g.y, GRAVITY_RANGE)?;
    Ok(g)
}

impl ValidatedSettings for Gravity {
    fn validate(&self) -> Result<(), PbdError> {
        check_gravity(self.0).map(|_| ())
    }
}

impl ValidatedSettings for SolverSettings {
    fn validate(&self) -> Result<(), PbdError> {
        SolverSettings::validate(self)
    }
}

/// The largest iteration count accepted by [`SolverSettings::set_iterations`].
pub const MAX_ITERATIONS: u32 = 10_000;

/// The largest substep count accepted by [`SolverSettings::set_substeps`].
pub const MAX_SUBSTEPS: u32 = 1_000;

/// Settings of the constraint (cloth) solver.
#[derive(Resource, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Resource, Default)]
pub struct SolverSettings {
    /// Substeps n per step, 1 ..= [`MAX_SUBSTEPS`]: each is a whole XPBD step of Δt/n
    /// (prediction, solve, contacts, velocity update; [`substeps`](super::substeps)). Default 1,
    /// the reference demos' step. More substeps make rigid constraints stiffer at a cost of
    /// about one prediction and `iterations` sweeps each; fluid pays its neighbour search and
    /// density solve in every substep.
    pub substeps: u32,
    /// Gauss-Seidel iterations over all distance constraints per substep, 1 ..= 10 000.
    /// Default 5 (the PBD demo's default).
    pub iterations: u32,
    /// Fastest a held particle ([`KinematicTarget`](crate::particle::KinematicTarget)) moves
    /// toward its target (m/s), > 0. Default 5 m/s. A cursor that jumps metres in one frame
    /// would otherwise teleport the particle and drag its neighbours through each other,
    /// folding (inverting) cloth so that distance constraints can no longer restore it.
    pub max_kinematic_speed: f32,
    /// Solve the straight lines of a grid of distance constraints (a cloth's rows and
    /// columns) directly, as chains are ([`lines`](crate::constraints::lines)): a rigid
    /// cloth then stretches far less per sweep (the 40 × 30 reference cloth with 10
    /// substeps of one iteration: 0.09 % instead of 1.6 %; as stiff as Gauss-Seidel with four
    /// times the substeps, at about the same cost). The stiffer cloth folds more readily under
    /// a hard drag (the same cloth, a bottom particle pulled 1 m down and 0.5 m aside, then let
    /// go: 54 % stretched 3 s later around 4 inverted cells, Gauss-Seidel 6.6 %); with
    /// self-collision ([`SolidContacts`](crate::solid_contacts::SolidContacts)) it does not
    /// fold and recovers to 2.5 %. Default `false`: every
    /// constraint that is not in a chain is projected by Gauss-Seidel, as in the reference
    /// demo. Changing it rebuilds the constraint layout at the next step.
    pub direct_lines: bool,
}

impl Default for SolverSettings {
    fn default() -> Self {
        Self {
            substeps: 1,
            iterations: 5,
            max_kinematic_speed: 5.0,
            direct_lines: false,
        }
    }
}

impl SolverSettings {
    /// Sets the iteration count.
    ///
    /// # Errors
    /// [`PbdError::OutOfRange`] outside 1 ..= [`MAX_ITERATIONS`]; the old value is kept.
    pub fn set_iterations(&mut self, iterations: u32) -> Result<(), PbdError> {
        self.iterations = in_range("iterations", iterations, 1, MAX_ITERATIONS)?;
        Ok(())
    }

    /// Sets the substep count n.
    ///
    /// # Errors
    /// [`PbdError::OutOfRange`] outside 1 ..= [`MAX_SUBSTEPS`]; the old value is kept.
    pub fn set_substeps(&mut self, substeps: u32) -> Result<(), PbdError> {
        self.substeps = in_range("substeps", substeps, 1, MAX_SUBSTEPS)?;
        Ok(())
    }

    /// Checks a value that may have been written directly (e.g. through an inspector).
    ///
    /// # Errors
    /// As [`SolverSettings::set_iterations`], [`SolverSettings::set_substeps`] and
    /// [`SolverSettings::set_max_kinematic_speed`].
    pub fn validate(&self) -> Result<(), PbdError> {
        in_range("substeps", self.substeps, 1, MAX_SUBSTEPS)?;
        in_range("iterations", self.iterations, 1, MAX_ITERATIONS)?;
        check_speed(self.max_kinematic_speed)?;
        Ok(())
    }

    /// Sets [`SolverSettings::max_kinematic_speed`] (m/s).
    ///
    /// # Errors
    /// [`PbdError::NotPositive`] for 0, negative, NaN or ∞, [`PbdError::NotInRange`] above
    /// [`MAX_KINEMATIC_SPEED`]; the old value is kept.
    pub fn set_max_kinematic_speed(&mut self, speed: f32) -> Result<(), PbdError> {
        self.max_kinematic_speed = check_speed(speed)?;
        Ok(())
    }
}

/// The largest [`SolverSettings::max_kinematic_speed`] accepted (m/s).
pub const MAX_KINEMATIC_SPEED: f32 = 1e6;

fn check_speed(speed: f32) -> Result<f32, PbdError> {
    let speed = positive("max kinematic speed (m/s)", speed)?;
    within(
        "max kinematic speed (m/s)",
        speed,
        0.0..=MAX_KINEMATIC_SPEED,
    )
}

/// The shortest and longest simulation step accepted by [`set_time_step`] (s): 1 µs and 1 s.
pub const TIME_STEP_RANGE: core::ops::RangeInclusive<f32> = 1e-6..=1.0;

/// Sets the simulation step Δt (s): `Time<Fixed>`'s timestep, the size of one solver step.
///
/// # Errors
/// [`PbdError::NotPositive`] when `dt` is 0, negative, NaN or infinite,
/// [`PbdError::NotInRange`] outside [`TIME_STEP_RANGE`]; the old step is kept (Bevy itself
/// panics on a zero timestep, and on one too long for a `Duration`).
pub fn set_time_step(time: &mut Time<Fixed>, dt: f32) -> Result<(), PbdError> {
    let dt = positive("time step (s)", dt)?;
    let dt = within("time step (s)", dt, TIME_STEP_RANGE)?;
    let step = Duration::from_secs_f64(dt as f64);
    if step.is_zero() {
        return Err(PbdError::NotPositive {
            name: "time step (s)",
            value: dt as f64,
        });
    }
    time.set_timestep(step);
    Ok(())
}
