//! Constraints between particles: distance constraints (\[MHHR06\], XPBD compliance \[MMC16\]),
//! angle (bending) constraints and long-range attachments (\[KCM12\]).

pub mod angle;
pub(crate) mod batches;
pub mod breaking;
pub mod chains;
pub(crate) mod colouring;
#[cfg(test)]
mod colouring_tests;
pub mod distance;
pub(crate) mod lane_positions;
pub(crate) mod line_bundles;
pub mod lines;
pub mod row;
pub mod state;
pub(crate) mod sync;
pub mod tether;

pub use angle::{AngleConstraint, AngleIndex};
pub use breaking::{BreakingStrain, ConstraintBroken};
pub use distance::{ConstraintIndex, DistanceConstraint};
pub use state::ConstraintState;
pub use tether::{LongRangeAttachment, TetherIndex};

use bevy::prelude::*;

use crate::dynamics::SolverSettings;
use crate::particle::sync::{copy_particles_in, rebuild_particle_rows};
use crate::schedule::{
    PbdPrepared, PbdSchedule, PbdSubstepSchedule, PbdSubstepSystems, PbdWritten, StepChecks,
};

/// Distance, angle and long-range constraints: registers their components, keeps
/// [`ConstraintState`] in step with them, and projects them
/// ([`PbdSubstepSystems::SolveConstraints`], [`SolverSettings::iterations`] Gauss-Seidel sweeps
/// per substep).
#[derive(Debug, Clone, Copy, Default)]
pub struct ConstraintsPlugin;

impl Plugin for ConstraintsPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<DistanceConstraint>()
            .register_type::<ConstraintIndex>()
            .register_type::<LongRangeAttachment>()
            .register_type::<TetherIndex>()
            .register_type::<AngleConstraint>()
            .register_type::<AngleIndex>()
            .register_type::<BreakingStrain>()
            .add_message::<ConstraintBroken>()
            .register_type::<ConstraintState>()
            .register_type::<SolverSettings>()
            .init_resource::<ConstraintState>();
        StepChecks::add::<SolverSettings>(app);
        app.add_observer(sync::mark_constraints_dirty::<Add, DistanceConstraint>)
            .add_observer(sync::mark_constraints_dirty::<Remove, DistanceConstraint>)
            .add_observer(sync::mark_constraints_dirty::<Add, LongRangeAttachment>)
            .add_observer(sync::mark_constraints_dirty::<Remove, LongRangeAttachment>)
            .add_observer(sync::mark_constraints_dirty::<Add, AngleConstraint>)
            .add_observer(sync::mark_constraints_dirty::<Remove, AngleConstraint>)
            .add_observer(sync::mark_constraints_dirty::<Add, BreakingStrain>)
            .add_observer(sync::mark_constraints_dirty::<Remove, BreakingStrain>);
        app.add_systems(
            PbdSchedule,
            (
                (sync::detect_constraint_edits, sync::rebuild_constraint_rows)
                    .chain()
                    .in_set(PbdPrepared)
                    .after(rebuild_particle_rows)
                    .before(copy_particles_in),
                (
                    breaking::break_constraints,
                    distance::record_constraint_stats,
                )
                    .in_set(PbdWritten),
            ),
        )
        .add_systems(
            PbdSubstepSchedule,
            distance::solve_distance_constraints.in_set(PbdSubstepSystems::SolveConstraints),
        );
    }
}
