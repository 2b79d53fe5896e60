//! Liquids of several kinds in one fluid: a [`FluidPhase`] per particle, with its own rest
//! density and viscosity (\[MMCK14\] §7.1.1, after Solenthaler & Pajarola 2008).
//!
//! Every fluid particle keeps the same rest volume (2r)², whatever its phase: the density
//! constraint counts neighbours with the fluid's reference mass m = (2r)² ρ0 of
//! [`FluidSettings`], Cᵢ = ρᵢ/ρ0 − 1 with ρᵢ = m Σⱼ Wᵢⱼ (+ boundary), which is the number
//! density form of multi-fluid SPH: an interface between two liquids is not seen as a
//! density jump. A phase's rest density ρ0ₚ sets its particles' mass, mₚ = (2r)² ρ0ₚ, and the
//! density solve weights each correction by the particle's mobility μᵢ = wᵢ m (\[MMCK14\]
//! eq. 5, Δxᵢ = wᵢ Σ λ ∇ᵢC: the heavier particle moves less):
//!
//! ```text
//! λᵢ = −Cᵢ / (μ_max (Σⱼ |∇ⱼCᵢ|² + |∇ᵢCᵢ|² + ε))      μ_max = the largest μ of the fluid
//! Δxᵢ = μᵢ (1/ρ0) Σⱼ m (λᵢ + λⱼ) ∇Wᵢⱼ   (+ the boundary term)
//! ```
//!
//! The pressure impulse λ ∇C a particle receives does not depend on its mass, gravity's does:
//! a lighter liquid rises through a heavier one (buoyancy), and the impulses of every pair are
//! equal and opposite, so momentum is kept. The exact denominator is Σₖ μₖ |∇ₖCᵢ|²; bounding
//! every μₖ by the largest never moves a particle farther than a one-liquid solve would (with
//! the row's own μᵢ instead, water's rows among oil moved twice as far), at the price of
//! smaller steps for the heavier liquids (more iterations). Without phases (every movable
//! fluid row has w = 1/m, relative 10⁻⁶) the solve runs unweighted, with the bits it always
//! had; fluid particles given another mass by hand are weighted as phases are.
//!
//! A phase's [`viscosity`](FluidPhase::viscosity) is the XSPH coefficient of its particles; a
//! pair of two phases uses the mean of theirs, shared by mass (module docs of
//! [`viscosity`](crate::fluid::viscosity)).
//!
//! **Not covered.** The [grid projection](crate::fluid::FluidSettings::grid_projection) is a
//! volume projection and does not see masses: with phases it still spreads the compression,
//! but its velocity change is not shared by mass (it does not keep momentum between phases),
//! and buoyancy comes from the Jacobi iterations only. The avian coupling's boundary push
//! ([`DensityState::boundary_push`](crate::fluid::density::DensityState::boundary_push)) is
//! summed from λᵢ/μ_max and read with the reference mass m, which gives each particle's
//! impulse mᵢ Δxᵢ/Δt. Oil spawned under water rises by a Rayleigh–Taylor instability that is
//! slow to start from a lattice, and a random mix of oil and water separates only partly: the
//! particle lattice under pressure jams (figures in issue 35's notes).

use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

use crate::error::{PbdError, at_most, non_negative, within};
use crate::fluid::settings::{FluidSettings, REST_DENSITY_RANGE};
use crate::particle::state::SolverState;
use crate::particle::{FluidParticle, InverseMass, SolverIndex};

/// On a fluid particle: the liquid it is, with its own rest density and viscosity (module
/// docs). Requires [`FluidParticle`]. A fluid particle without one is of the fluid's own
/// liquid, [`FluidSettings::rest_density`] and [`FluidSettings::viscosity`].
///
/// Inserting it sets the particle's [`InverseMass`] to 1/((2r)² ρ0ₚ) with the radius r of
/// the [`FluidSettings`] resource at that time, and removing it sets the fluid's own mass
/// (2r)² ρ0 back (a particle held with w = 0 stays held; without the resource, or with an
/// invalid phase, the mass is left as it is and an error is logged). Changing the fields of a
/// phase in place does not change the mass: insert the new phase instead.
/// Build it with [`FluidPhase::new`] to have bad values refused; the preset liquids
/// [`WATER`](Self::WATER), [`OIL`](Self::OIL) and [`HONEY`](Self::HONEY) are game values,
/// chosen to read clearly on screen, not measured ones.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq)]
#[require(FluidParticle)]
#[component(on_insert = set_phase_mass, on_remove = restore_fluid_mass)]
pub struct FluidPhase {
    /// Rest density ρ0ₚ (kg/m²), in
    /// [`REST_DENSITY_RANGE`]: its particles weigh
    /// (2r)² ρ0ₚ.
    pub rest_density: f32,
    /// XSPH viscosity coefficient c of its particles, 0 ..= 1 (as
    /// [`FluidSettings::viscosity`]).
    pub viscosity: f32,
}

impl FluidPhase {
    /// The default fluid's liquid: ρ0 1 000 kg/m², c 0.05 (the [`FluidSettings`] defaults).
    pub const WATER: Self = Self {
        rest_density: 1000.0,
        viscosity: 0.05,
    };
    /// A light liquid that floats on water: ρ0 500 kg/m², c 0.1.
    pub const OIL: Self = Self {
        rest_density: 500.0,
        viscosity: 0.1,
    };
    /// A heavy, slow liquid: ρ0 1 400 kg/m², c 0.9 (XSPH: most of a particle's velocity
    /// difference to its neighbours is smoothed away every step).
    pub const HONEY: Self = Self {
        rest_density: 1400.0,
        viscosity: 0.9,
    };

    /// A liquid of rest density `rest_density` (kg/m²) and XSPH viscosity `viscosity`.
    ///
    /// # Errors
    /// [`PbdError::NotInRange`] for a rest density outside
    /// [`REST_DENSITY_RANGE`] (NaN included);
    /// [`PbdError::Negative`] or [`PbdError::TooLarge`] for a viscosity outside 0 ..= 1.
    pub fn new(rest_density: f32, viscosity: f32) -> Result<Self, PbdError> {
        let phase = Self {
            rest_density,
            viscosity,
        };
        phase.validate()?;
        Ok(phase)
    }

    /// Checks the fields (as [`FluidPhase::new`]).
    ///
    /// # Errors
    /// As [`FluidPhase::new`].
    pub fn validate(&self) -> Result<(), PbdError> {
        within(
            "phase rest density (kg/m²)",
            self.rest_density,
            REST_DENSITY_RANGE,
        )?;
        at_most(
            "phase viscosity",
            non_negative("phase viscosity", self.viscosity)?,
            1.0,
        )?;
        Ok(())
    }

    /// The mass of one of its particles (kg): (2r)² ρ0ₚ with the radius r of `settings`.
    pub fn particle_mass(&self, settings: &FluidSettings) -> f32 {
        let d = 2.0 * settings.particle_radius;
        d * d * self.rest_density
    }
}

/// The on-insert hook of [`FluidPhase`]: the particle's mass follows its phase.
fn set_phase_mass(mut world: DeferredWorld, context: HookContext) {
    let entity = context.entity;
    let Some(phase) = world.get::<FluidPhase>(entity).copied() else {
        return;
    };
    let Some(settings) = world.get_resource::<FluidSettings>() else {
        error!("bevy_pbd2d: FluidPhase on {entity} without FluidSettings: mass left as it is");
        return;
    };
    let mass = phase.validate().map(|()| phase.particle_mass(settings));
    if let Err(error) = set_mass_unless_held(&mut world, entity, mass) {
        error!("bevy_pbd2d: FluidPhase on {entity}: {error}; mass left as it is");
    }
}

/// The on-remove hook of [`FluidPhase`]: the particle takes the fluid's own mass again.
fn restore_fluid_mass(mut world: DeferredWorld, context: HookContext) {
    let Some(settings) = world.get_resource::<FluidSettings>() else {
        return;
    };
    let mass = Ok(settings.particle_mass());
    if let Err(error) = set_mass_unless_held(&mut world, context.entity, mass) {
        error!(
            "bevy_pbd2d: FluidPhase removed from {}: {error}",
            context.entity
        );
    }
}

/// Gives `entity` the inverse mass 1/`mass` unless it is held (w = 0).
///
/// # Errors
/// `mass`'s error, or [`InverseMass::from_mass`]'s; the inverse mass is left as it is.
fn set_mass_unless_held(
    world: &mut DeferredWorld,
    entity: Entity,
    mass: Result<f32, PbdError>,
) -> Result<(), PbdError> {
    let w = mass.and_then(InverseMass::from_mass)?;
    if let Some(mut current) = world.get_mut::<InverseMass>(entity)
        && current.0 != 0.0
    {
        *current = w;
    }
    Ok(())
}

/// The phases' per-row values of the current step (empty while no fluid particle has a
/// [`FluidPhase`]).
///
/// Solver scratch, recomputed every step: reflected, but not as a resource
/// (`ReflectResource`), so that saving a world leaves it out and a loaded world rebuilds it.
#[derive(Resource, Reflect, Debug, Default)]
pub struct PhaseState {
    /// XSPH coefficient c per fluid row: its phase's, or [`FluidSettings::viscosity`].
    pub viscosity: Vec<f32>,
}

/// [`PbdPrepared`](crate::schedule::PbdPrepared), once the rows are known: the phases'
/// per-row values into [`PhaseState`]. A phase with invalid values (set by hand) counts as
/// the fluid's own liquid, with one error logged.
pub(crate) fn collect_phases(
    phases: Query<(Entity, &SolverIndex, &FluidPhase)>,
    settings: Res<FluidSettings>,
    state: Res<SolverState>,
    mut out: ResMut<PhaseState>,
    mut reported: Local<bool>,
) {
    if phases.is_empty() {
        if !out.viscosity.is_empty() {
            out.viscosity.clear();
        }
        return;
    }
    let fluid = state.fluid_count;
    out.viscosity.clear();
    out.viscosity.resize(fluid, settings.viscosity);
    for (entity, index, phase) in &phases {
        let Some(row) = state.row_of(entity, *index).filter(|&row| row < fluid) else {
            continue;
        };
        match phase.validate() {
            Ok(()) => out.viscosity[row] = phase.viscosity,
            Err(error) if !*reported => {
                *reported = true;
                error!("bevy_pbd2d: FluidPhase on {entity}: {error}; the fluid's own values used");
            }
            Err(_) => {}
        }
    }
}
