//! The solver's contiguous per-step data.
//!
//! ECS components are the source of truth between steps. At the start of each step
//! ([`PbdStepSystems::Prepare`](crate::PbdStepSystems::Prepare)) particles are copied into the arrays of
//! [`SolverState`] (unless Bevy's change detection shows that no particle component, nor the
//! resource, changed since the last writeback: then the arrays already hold the same values; a
//! write that bypasses change detection is not seen); every algorithm step works on those
//! arrays (cache-friendly, parallel); [`PbdStepSystems::Writeback`](crate::PbdStepSystems::Writeback)
//! copies positions and velocities back.
//! The entity ↔ row maps are rebuilt only when particles are added, removed, disabled or
//! enabled, and when the fluid rows are re-sorted
//! ([`FluidSettings::resort_interval`](crate::fluid::FluidSettings::resort_interval));
//! boundary samples also when they move or the fluid settings change. Read a particle's row
//! from its [`SolverIndex`](crate::particle::SolverIndex) in the step it is used.

use bevy::ecs::change_detection::Tick;
use bevy::prelude::*;

/// Contiguous per-step data of all particles. Rows `0..fluid_count` are fluid particles, the
/// rest are other (cloth, rope …) particles. Boundary samples live in their own arrays.
///
/// A cache of the components, rebuilt from them: reflected, but not as a resource
/// (`ReflectResource`), so that saving a world (Bevy's world serialization) leaves it out and a
/// loaded world rebuilds it.
#[derive(Resource, Reflect, Debug, Default)]
pub struct SolverState {
    /// Row → particle entity.
    pub entities: Vec<Entity>,
    /// Number of fluid particles (they occupy rows `0..fluid_count`).
    pub fluid_count: usize,
    /// Position x (m); the predicted position x* while a step runs.
    pub x: Vec<Vec2>,
    /// Predicted position after time integration, before any constraint correction (m).
    pub x_predicted: Vec<Vec2>,
    /// Velocity v (m/s); the predicted velocity v* while a step runs.
    pub v: Vec<Vec2>,
    /// Inverse mass w (kg⁻¹) as used in this step (0 for pinned and held particles).
    pub w: Vec<f32>,
    /// Held particles of this step: row and target position (m).
    pub kinematic_targets: Vec<(u32, Vec2)>,
    /// Boundary sample entities, positions (m) and Akinci pseudo-masses Ψ (kg/m² · m² = kg).
    pub boundary_entities: Vec<Entity>,
    /// Boundary sample positions (m).
    pub boundary_x: Vec<Vec2>,
    /// Boundary pseudo-masses Ψ (kg).
    pub boundary_psi: Vec<f32>,
    /// The boundary rows `..boundary_contact_count` have contact discs; the rest are
    /// [`BoundaryDensityOnly`](crate::fluid::BoundaryDensityOnly).
    pub boundary_contact_count: usize,
    /// Whether the particle rows must be rebuilt at the next step.
    pub(crate) particles_dirty: bool,
    /// Counts the rebuilds of the particle rows: constraint rows built for another generation
    /// are out of date.
    pub(crate) rows_generation: u64,
    /// Whether boundary arrays and Ψ must be rebuilt at the next step.
    pub(crate) boundary_dirty: bool,
    /// Counts the updates of the boundary arrays, rebuilt or with samples moved (what the
    /// contacts built from them is out of date when it changes).
    pub(crate) boundary_generation: u64,
    /// Whether the particle arrays must be copied in from the components at the next step: a
    /// particle component or this resource changed since the last writeback (marked by
    /// `detect_edits` and by observers of removals that change no tick).
    pub(crate) particles_stale: bool,
    /// When the last writeback copied the arrays to the components: until then the arrays hold
    /// exactly what the components hold, unless a component changed after it. `None` before
    /// the first writeback.
    #[reflect(ignore)]
    pub(crate) particles_written: Option<Tick>,
}

impl SolverState {
    /// Number of particle rows.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether there are no particles.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// The row of `entity`, whose [`SolverIndex`](crate::particle::SolverIndex) says `index`,
    /// if this step's arrays hold it there (`None` for a particle added or removed since the
    /// rows were built).
    pub(crate) fn row_of(
        &self,
        entity: Entity,
        index: crate::particle::SolverIndex,
    ) -> Option<usize> {
        let row = index.row() as usize;
        (row < self.len() && self.entities.get(row) == Some(&entity)).then_some(row)
    }

    /// Where particle `row` began the running substep of length `dt` (s): x* − Δt v*, the
    /// predicted position less the predicted velocity's step (m). Valid from the prediction
    /// until the velocity update, while `v` still holds v*.
    pub(crate) fn substep_start(&self, row: usize, dt: f32) -> Vec2 {
        self.x_predicted[row] - dt * self.v[row]
    }

    /// Resizes every per-particle array to `n` rows.
    pub(crate) fn resize_particles(&mut self, n: usize) {
        self.x.resize(n, Vec2::ZERO);
        self.x_predicted.resize(n, Vec2::ZERO);
        self.v.resize(n, Vec2::ZERO);
        self.w.resize(n, 0.0);
    }
}
