//! Distance constraints, projected with (X)PBD Gauss-Seidel iterations.
//!
//! Constraint (\[MHHR06\] §4.2): C(x₁, x₂) = ‖x₁ − x₂‖ − d, with rest length d (m).
//! Gradient: ∇₁C = n = (x₁ − x₂)/‖x₁ − x₂‖, ∇₂C = −n.
//!
//! XPBD update (\[MMC16\] eq. 18) with compliance α (m/N) and α̃ = α/Δt²:
//!
//! ```text
//! Δλ  = (−C − α̃ λ) / (w₁ + w₂ + α̃)
//! λ  += Δλ
//! x₁ += w₁ Δλ n,   x₂ −= w₂ Δλ n
//! ```
//!
//! With α = 0 this is the PBD projection of the reference demo, λ = −C/(w₁ + w₂), in the general
//! form with per-particle inverse masses. A constraint with w₁ + w₂ + α̃ = 0 (both particles
//! pinned) is skipped. Coincident particles (‖x₁ − x₂‖ ≈ 0) have no gradient; they are pushed
//! apart along a fixed, deterministic direction instead of producing NaN.
//!
//! The constraints are kept in graph-colour order (`colour_order`) and projected several at a
//! time by `DistanceBatches`.

use bevy::ecs::entity::MapEntities;
use bevy::ecs::reflect::ReflectMapEntities;
use bevy::prelude::*;

use crate::constraints::angle::project_angles;
use crate::constraints::state::ConstraintState;
use crate::constraints::tether::project_tethers;
use crate::dynamics::settings::SolverSettings;
use crate::error::{PbdError, non_negative, within};

pub use crate::constraints::row::LENGTH_RANGE;

/// The compliances α accepted by [`DistanceConstraint::with_compliance`] and the builders
/// (m/N): 0 (rigid) to 1000 m/N (α/Δt² must stay finite at the shortest step).
pub const COMPLIANCE_RANGE: core::ops::RangeInclusive<f32> = 0.0..=1e3;

/// `compliance` if it is in [`COMPLIANCE_RANGE`].
///
/// # Errors
/// [`PbdError::Negative`] for a negative, NaN or infinite value, [`PbdError::NotInRange`]
/// above the range.
pub fn check_compliance(compliance: f32) -> Result<f32, PbdError> {
    let compliance = non_negative("compliance (m/N)", compliance)?;
    within("compliance (m/N)", compliance, COMPLIANCE_RANGE)
}
use crate::particle::state::SolverState;
use crate::stats::{PbdStats, Phase};

/// A distance constraint between two particle entities, on an entity of its own.
///
/// Despawning it removes the constraint (tears cloth); despawning one of its particles despawns
/// it at the next step. Its fields may be edited in place (`Query<&mut DistanceConstraint>`,
/// an inspector): the solver takes the edit from the next step on.
///
/// Its entities are mapped when a world is loaded into another (`MapEntities`, e.g. Bevy's
/// world serialization), so a saved cloth keeps its constraints.
#[derive(Component, MapEntities, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, MapEntities, Debug, PartialEq)]
#[require(ConstraintIndex)]
pub struct DistanceConstraint {
    /// The two particle entities.
    #[entities]
    pub particles: [Entity; 2],
    /// Rest length d (m), ≥ 0.
    pub rest_length: f32,
    /// Compliance α (m/N), ≥ 0; 0 is rigid (PBD).
    pub compliance: f32,
}

/// A distance constraint's place in the order the constraints are coloured in, which decides
/// the projection order; maintained by the plugin. Constraints keep their places when others
/// are added or removed; new ones follow in query order (creation order, for constraints
/// spawned together). Saved with the world, it keeps the order, and so the results, after a
/// load (`u32::MAX`: not yet placed).
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq, Eq)]
#[reflect(Component, Default)]
pub struct ConstraintIndex(pub(crate) u32);

impl Default for ConstraintIndex {
    fn default() -> Self {
        Self(u32::MAX)
    }
}

impl ConstraintIndex {
    /// The place (`u32::MAX` while it has none).
    pub fn get(self) -> u32 {
        self.0
    }
}

impl DistanceConstraint {
    /// A rigid (α = 0) constraint of rest length `rest_length` (m).
    ///
    /// # Errors
    /// [`PbdError::Negative`] if `rest_length` is negative, NaN or infinite,
    /// [`PbdError::NotInRange`] above [`LENGTH_RANGE`].
    pub fn new(a: Entity, b: Entity, rest_length: f32) -> Result<Self, PbdError> {
        let rest_length = non_negative("rest length (m)", rest_length)?;
        Ok(Self {
            particles: [a, b],
            rest_length: within("rest length (m)", rest_length, LENGTH_RANGE)?,
            compliance: 0.0,
        })
    }

    /// The same constraint with compliance α (m/N).
    ///
    /// # Errors
    /// As [`check_compliance`].
    pub fn with_compliance(mut self, compliance: f32) -> Result<Self, PbdError> {
        self.compliance = check_compliance(compliance)?;
        Ok(self)
    }
}

/// [`PbdSubstepSystems::SolveConstraints`](crate::PbdSubstepSystems::SolveConstraints):
/// `iterations` Gauss-Seidel sweeps over all distance constraints, each followed by a pass over
/// the angle constraints ([`angle`](super::angle)) and one over the long-range attachments
/// ([`tether`](super::tether)), with λ from 0 (in every substep: Δt is the substep's).
pub fn solve_distance_constraints(
    time: Res<Time>,
    settings: Res<SolverSettings>,
    mut state: ResMut<SolverState>,
    mut constraints: ResMut<ConstraintState>,
    mut stats: ResMut<PbdStats>,
) {
    if constraints.is_empty() {
        return;
    }
    let started = stats.begin_phase();
    let dt = time.delta_secs();
    let inv_dt2 = 1.0 / (dt * dt);
    let state = &mut *state;
    let constraints = &mut *constraints;
    constraints.lambda.iter_mut().for_each(|l| *l = 0.0);
    constraints.angle_lambda.iter_mut().for_each(|l| *l = 0.0);
    let iterations = settings.iterations;
    let projected_rows = constraints.rows.len() - constraints.chains.len();
    // Held particles are moved from x(t) to x* in `iterations` equal parts, one per sweep, so
    // that a fast drag pulls its neighbours along instead of dragging them through each other.
    constraints.batches.set_coefficients(&state.w, inv_dt2);
    let held: Vec<(usize, Vec2, Vec2)> = state
        .kinematic_targets
        .iter()
        .map(|&(row, _)| {
            let i = row as usize;
            (i, state.x[i] - dt * state.v[i], state.x[i])
        })
        .collect();
    for k in 0..iterations {
        let t = (k + 1) as f32 / iterations as f32;
        for &(i, from, to) in &held {
            state.x[i] = if k + 1 == iterations {
                to
            } else {
                from.lerp(to, t)
            };
        }
        let (projected, chained) = constraints.lambda.split_at_mut(projected_rows);
        constraints.batches.project_sweep(&mut state.x, projected);
        constraints
            .chains
            .solve(&mut state.x, &state.w, chained, inv_dt2);
        project_angles(
            &mut state.x,
            &state.w,
            &constraints.angles,
            &mut constraints.angle_lambda,
            inv_dt2,
        );
        project_tethers(&mut state.x, &state.w, &constraints.tethers);
    }
    stats.end_phase(Phase::Solve, started);
}

/// [`Writeback`](crate::PbdStepSystems::Writeback): the constraints' statistics of the step,
/// once after its substeps: counts, sweeps (iterations × substeps) and the largest stretch.
pub(crate) fn record_constraint_stats(
    settings: Res<SolverSettings>,
    state: Res<SolverState>,
    constraints: Res<ConstraintState>,
    mut stats: ResMut<PbdStats>,
) {
    stats.constraints = constraints.rows.len();
    stats.tethers = constraints.tethers.len();
    stats.constraint_iterations = if !constraints.is_empty() {
        settings.iterations * settings.substeps.max(1)
    } else {
        0
    };
    let started = stats.begin_phase();
    let projected = if constraints.batches.is_ready_for(state.x.len()) {
        constraints.batches.max_relative_stretch(&state.x)
    } else {
        0.0
    };
    let chained = if constraints.chains.fits(state.x.len()) {
        constraints.chains.max_relative_stretch(&state.x)
    } else {
        0.0
    };
    stats.max_relative_stretch = projected.max(chained);
    stats.end_phase(Phase::Solve, started);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constraints::batches::DistanceBatches;
    use crate::constraints::row::DistanceRow;

    /// One serial Gauss-Seidel sweep over `rows` with inverse masses `w` and 1/Δt² `inv_dt2`.
    fn project_sweep(
        x: &mut [Vec2],
        w: &[f32],
        rows: &[DistanceRow],
        lambda: &mut [f32],
        inv_dt2: f32,
    ) {
        let mut batches = DistanceBatches::serial(rows);
        batches.set_coefficients(w, inv_dt2);
        batches.project_sweep(x, lambda);
    }

    fn row(rest: f32) -> DistanceRow {
        DistanceRow {
            a: 0,
            b: 1,
            rest_length: rest,
            compliance: 0.0,
        }
    }

    #[test]
    fn one_projection_by_hand() {
        // x1 = (0,0), x2 = (2,0), d = 1, w1 = 1, w2 = 3: C = 1, λ = −1/4,
        // Δx1 = w1 λ n = −0.25·(−1, 0) = (0.25, 0), Δx2 = −w2 λ n = (−0.75, 0).
        let mut x = vec![Vec2::ZERO, Vec2::new(2.0, 0.0)];
        project_sweep(&mut x, &[1.0, 3.0], &[row(1.0)], &mut [0.0], 1e4);
        assert!((x[0] - Vec2::new(0.25, 0.0)).length() < 1e-6, "{:?}", x);
        assert!((x[1] - Vec2::new(1.25, 0.0)).length() < 1e-6, "{:?}", x);
    }

    #[test]
    fn both_pinned_is_skipped_without_nan() {
        let mut x = vec![Vec2::ZERO, Vec2::new(2.0, 0.0)];
        project_sweep(&mut x, &[0.0, 0.0], &[row(1.0)], &mut [0.0], 1e4);
        assert_eq!(x, vec![Vec2::ZERO, Vec2::new(2.0, 0.0)]);
    }

    #[test]
    fn coincident_particles_are_separated_to_rest_length() {
        let mut x = vec![Vec2::ONE, Vec2::ONE];
        project_sweep(&mut x, &[1.0, 1.0], &[row(0.2)], &mut [0.0], 1e4);
        assert!(x.iter().all(|p| p.is_finite()));
        assert!(((x[0] - x[1]).length() - 0.2).abs() < 1e-6);
    }

    #[test]
    fn compliance_softens_the_projection() {
        let mut rigid = vec![Vec2::ZERO, Vec2::new(2.0, 0.0)];
        let mut soft = rigid.clone();
        project_sweep(&mut rigid, &[1.0, 1.0], &[row(1.0)], &mut [0.0], 1e4);
        let soft_row = DistanceRow {
            compliance: 1e-4,
            ..row(1.0)
        };
        project_sweep(&mut soft, &[1.0, 1.0], &[soft_row], &mut [0.0], 1e4);
        let rigid_len = (rigid[0] - rigid[1]).length();
        let soft_len = (soft[0] - soft[1]).length();
        assert!((rigid_len - 1.0).abs() < 1e-6);
        // α̃ = 1, w₁ + w₂ = 2: Δλ = −1/3, length 2 − 2/3.
        assert!((soft_len - (2.0 - 2.0 / 3.0)).abs() < 1e-5, "{soft_len}");
    }
}
