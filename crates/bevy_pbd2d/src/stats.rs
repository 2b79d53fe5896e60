//! Step statistics: a [`PbdStats`] resource and Bevy [`Diagnostics`].

use bevy::diagnostic::{Diagnostic, DiagnosticPath, Diagnostics, RegisterDiagnostic};
use bevy::platform::time::Instant;
use bevy::prelude::*;

/// Wall time of one step, in ms.
pub const STEP_TIME: DiagnosticPath = DiagnosticPath::const_new("pbd2d/step_time_ms");
/// Constraint-solver iterations (distance: configured sweeps; fluid: iterations needed) of the last step.
pub const ITERATIONS: DiagnosticPath = DiagnosticPath::const_new("pbd2d/iterations");
/// Average fluid density error after the solve, in % of ρ0.
pub const DENSITY_ERROR: DiagnosticPath = DiagnosticPath::const_new("pbd2d/density_error_percent");
/// Largest relative stretch of a distance constraint at the end of the step.
pub const MAX_STRETCH: DiagnosticPath = DiagnosticPath::const_new("pbd2d/max_relative_stretch");
/// Number of particles (fluid, cloth, …; not boundary samples).
pub const PARTICLES: DiagnosticPath = DiagnosticPath::const_new("pbd2d/particles");

/// The parts of a step whose wall time is measured.
#[derive(Reflect, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Copying components in and out of the solver arrays, Ψ.
    Sync,
    /// Symplectic Euler prediction.
    Predict,
    /// Spatial grid and neighbour lists.
    Neighbors,
    /// Distance and density constraint projection.
    Solve,
    /// The fluid's grid projection
    /// ([`FluidSettings::grid_projection`](crate::fluid::FluidSettings::grid_projection)).
    Grid,
    /// Velocity update.
    Velocities,
    /// XSPH viscosity.
    Viscosity,
    /// Particle–collider contacts.
    Contacts,
}

/// Wall time (ms) of each [`Phase`] in the last step.
#[derive(Reflect, Debug, Default, Clone, Copy, PartialEq)]
pub struct PhaseTimes {
    /// [`Phase::Sync`], ms.
    pub sync: f32,
    /// [`Phase::Predict`], ms.
    pub predict: f32,
    /// [`Phase::Neighbors`], ms.
    pub neighbors: f32,
    /// [`Phase::Solve`], ms.
    pub solve: f32,
    /// [`Phase::Grid`], ms.
    pub grid: f32,
    /// [`Phase::Velocities`], ms.
    pub velocities: f32,
    /// [`Phase::Viscosity`], ms.
    pub viscosity: f32,
    /// [`Phase::Contacts`], ms.
    pub contacts: f32,
}

/// Statistics of the last simulation step, each field written by the plugin that owns it
/// (counts of a disabled plugin stay 0). Updated every step; also pushed to Bevy
/// `Diagnostics` under the `pbd2d/…` paths ([`STEP_TIME`], [`ITERATIONS`], …).
#[derive(Resource, Reflect, Debug, Default, Clone)]
#[reflect(Resource)]
pub struct PbdStats {
    /// Wall time of the last step (ms).
    pub step_time_ms: f32,
    /// Simulated time: sum of the Δt of all steps run (s).
    pub sim_time: f64,
    /// Number of steps run.
    pub steps: u64,
    /// Steps run in this frame so far (after the fixed steps: in the frame's `Update`, all of
    /// them); at most [`PbdFrameBudget`](crate::schedule::PbdFrameBudget)'s.
    pub frame_steps: u32,
    /// Whether this frame's virtual time was cut to the frame budget: the frame came too late
    /// for all the steps it was due, and the game's time runs slower than real time.
    pub slowed: bool,
    /// Frames whose virtual time was cut ([`PbdStats::slowed`]), since the start.
    pub slowed_frames: u64,
    /// Particles (cloth, fluid, …), not counting boundary samples.
    pub particles: usize,
    /// Fluid particles among [`PbdStats::particles`].
    pub fluid_particles: usize,
    /// Boundary samples.
    pub boundary_particles: usize,
    /// Distance constraints.
    pub constraints: usize,
    /// Long-range attachments (tethers).
    pub tethers: usize,
    /// Gauss-Seidel sweeps over the distance constraints in the last step (iterations ×
    /// substeps).
    pub constraint_iterations: u32,
    /// Density-solver iterations the last step needed (summed over its substeps).
    pub fluid_iterations: u32,
    /// Conjugate-gradient iterations of the grid projection in the last step (its two solves,
    /// summed over the substeps; 0 without
    /// [`FluidSettings::grid_projection`](crate::fluid::FluidSettings::grid_projection)).
    pub grid_iterations: u32,
    /// Substeps of the last step in which [`FluidSettings::grid_projection`] was set but not
    /// applied: while the avian coupling tracks the boundary push, or when the fluid's bounding
    /// box needs too many cells or a position is not finite (module docs of
    /// [`grid_projection`](crate::fluid::density::grid_projection)). 0 without it.
    ///
    /// [`FluidSettings::grid_projection`]: crate::fluid::FluidSettings::grid_projection
    pub grid_skipped: u32,
    /// Average density error Σ max(ρᵢ − ρ0, 0) / (N ρ0) after the last solve (%).
    pub avg_density_error_percent: f32,
    /// Largest |‖x₁ − x₂‖ − d|/d over distance constraints at the end of the last step.
    pub max_relative_stretch: f32,
    /// Fluid particles a boundary sample's disc stopped in the last substep
    /// ([`contacts`](crate::fluid::contacts)).
    pub boundary_contacts: usize,
    /// Fluid particles that started the last substep inside a boundary sample's disc and were
    /// pushed out ([`contacts`](crate::fluid::contacts)).
    pub embedded_particles: usize,
    /// Fluid particles settling in the last substep: placed where they did not fit, moved out
    /// without velocity ([`settling`](crate::fluid::settling)).
    pub settling_particles: usize,
    /// Particles that touched a [`ParticleCollider`](crate::collider::ParticleCollider) in the
    /// last substep ([`collider`](crate::collider)).
    pub collider_contacts: usize,
    /// Pairs of solid particles pushed apart in the last substep
    /// ([`solid_contacts`](crate::solid_contacts)).
    pub solid_contacts: usize,
    /// Contacts of a fluid particle and a particle with
    /// [`FluidCoupling`](crate::fluid::FluidCoupling) resolved in the last substep, before and
    /// after the density solve (a pair touching in both counts twice;
    /// [`coupling`](crate::fluid::coupling)).
    pub coupled_contacts: usize,
    /// Particles the runaway guard took out in the last step
    /// ([`runaway`](crate::particle::runaway)).
    pub runaways: usize,
    /// Per-phase wall times of the last step.
    pub phases: PhaseTimes,
    /// Why steps are currently skipped (invalid settings, Δt ≤ 0), if they are.
    pub blocked: Option<String>,
    #[reflect(ignore)]
    step_started: Option<Instant>,
}

impl PbdStats {
    /// Starts timing a phase.
    pub fn begin_phase(&self) -> Instant {
        Instant::now()
    }

    /// Adds the time since `started` to `phase`.
    pub fn end_phase(&mut self, phase: Phase, started: Instant) {
        let ms = started.elapsed().as_secs_f32() * 1e3;
        let p = &mut self.phases;
        *match phase {
            Phase::Sync => &mut p.sync,
            Phase::Predict => &mut p.predict,
            Phase::Neighbors => &mut p.neighbors,
            Phase::Solve => &mut p.solve,
            Phase::Grid => &mut p.grid,
            Phase::Velocities => &mut p.velocities,
            Phase::Viscosity => &mut p.viscosity,
            Phase::Contacts => &mut p.contacts,
        } += ms;
    }
}

/// First system of a step: resets phase timers and starts the step clock.
pub(crate) fn begin_step(mut stats: ResMut<PbdStats>) {
    stats.phases = PhaseTimes::default();
    stats.fluid_iterations = 0;
    stats.grid_iterations = 0;
    stats.grid_skipped = 0;
    stats.step_started = Some(Instant::now());
}

/// Last system of a step: step time, counts, simulated time and diagnostics.
pub(crate) fn end_step(time: Res<Time>, mut stats: ResMut<PbdStats>, mut diagnostics: Diagnostics) {
    let stats = &mut *stats;
    stats.step_time_ms = stats
        .step_started
        .take()
        .map_or(0.0, |t| t.elapsed().as_secs_f32() * 1e3);
    stats.sim_time += time.delta_secs_f64();
    stats.steps += 1;
    stats.frame_steps += 1;
    let iterations = stats.constraint_iterations.max(stats.fluid_iterations);
    diagnostics.add_measurement(&STEP_TIME, || stats.step_time_ms as f64);
    diagnostics.add_measurement(&ITERATIONS, || iterations as f64);
    diagnostics.add_measurement(&DENSITY_ERROR, || stats.avg_density_error_percent as f64);
    diagnostics.add_measurement(&MAX_STRETCH, || stats.max_relative_stretch as f64);
    diagnostics.add_measurement(&PARTICLES, || stats.particles as f64);
}

/// Registers the `pbd2d/…` diagnostics.
pub(crate) fn register(app: &mut App) {
    for (path, suffix) in [
        (STEP_TIME, "ms"),
        (ITERATIONS, ""),
        (DENSITY_ERROR, "%"),
        (MAX_STRETCH, ""),
        (PARTICLES, ""),
    ] {
        app.register_diagnostic(Diagnostic::new(path).with_suffix(suffix));
    }
}
