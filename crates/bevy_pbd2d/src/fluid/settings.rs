//! [`FluidSettings`]: the PBF parameters, with the PBF demo's defaults.

use bevy::prelude::*;

use crate::dynamics::settings::MAX_ITERATIONS;
use crate::error::{PbdError, at_most, in_range, non_negative, positive, within};
use crate::fluid::artificial_pressure::ArtificialPressure;
use crate::fluid::density::grid_projection::params::GridProjection;
use crate::schedule::ValidatedSettings;

/// Parameters of the Position Based Fluids solver (SI units; in 2D, densities are kg/m²).
///
/// Defaults are the PBF demo's: r = 0.025 m, h = 4r = 0.1 m, ρ0 = 1000 kg/m², ε = 10⁻⁶,
/// max density error 0.1 %, at most 100 iterations, XSPH coefficient 0.05. The step size is
/// `Time<Fixed>` (the demo uses 0.005 s; see [`set_time_step`](crate::dynamics::settings::set_time_step)).
#[derive(Resource, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Resource, Default)]
pub struct FluidSettings {
    /// Particle radius r (m), in [`PARTICLE_RADIUS_RANGE`]; particles are spaced 2r. Default
    /// 0.025.
    pub particle_radius: f32,
    /// Kernel support radius h (m), also the grid cell size: h/r in [`SUPPORT_RADII`]. Default
    /// 0.1 (= 4r).
    pub support_radius: f32,
    /// Rest density ρ0 (kg/m²), in [`REST_DENSITY_RANGE`]. Default 1000.
    pub rest_density: f32,
    /// Relaxation ε added to the λ denominator (\[MM13\] eq. 11), 0 < ε ≤ [`MAX_EPSILON`].
    /// Default 10⁻⁶.
    pub epsilon: f32,
    /// The solve stops once the average density error Σᵢ max(ρᵢ − ρ0, 0)/(N ρ0) is at or below
    /// this (%) in a step of [`TOLERANCE_TIMESTEP`] or longer; in shorter steps the solve
    /// uses it times Δt / [`TOLERANCE_TIMESTEP`]
    /// ([`density_tolerance_percent`](Self::density_tolerance_percent)). Default 0.1.
    pub max_density_error_percent: f32,
    /// Iteration cap of the density solve, 1 ..= 10 000. Default 100.
    pub max_iterations: u32,
    /// XSPH viscosity coefficient c, 0 ..= 1. Default 0.05.
    pub viscosity: f32,
    /// Courant number C, 0 < C ≤ 1: fluid speeds are limited to C·h/Δt
    /// ([`cfl`](crate::fluid::cfl)). Default 0.4 (8 m/s at the demo's h and Δt; the dam break
    /// stays below 6 m/s). Not in the reference demo.
    pub cfl_number: f32,
    /// Over-relaxation factor ω of the Jacobi position corrections, xᵢ += ω Δxᵢ, in
    /// 0 < ω ≤ [`MAX_OVER_RELAXATION`] (\[MMCK14\] §4.2: Jacobi iterations converge faster with
    /// 1 < ω < 2). Default 1 (the PBF demo: plain Jacobi). With ω = 1.6 the 30 × 30 dam break
    /// meets the same tolerance in 6.9 instead of 13.5 iterations per step. Not in the
    /// reference demo.
    ///
    /// \[MMCK14\] Macklin, Müller, Chentanez, Kim: Unified Particle Physics for Real-Time
    /// Applications, SIGGRAPH 2014.
    pub over_relaxation: f32,
    /// Steps between re-sorts of the fluid rows by grid cell, or 0 (default: never, as in the
    /// PBF demo), [`resort`](crate::fluid::resort). A mixed fluid's rows lose the spatial order
    /// the solve reads fastest in; re-sorted every 100 steps, the 100 × 100 dam break's solve
    /// costs 13.9 ns per particle-iteration after 1 500 steps instead of 19.5 (2 threads; its
    /// first steps: 10.8–11.5). A re-sort changes the bits of the results (the sums' order),
    /// for any thread count alike. Not in the reference demo.
    pub resort_interval: u32,
    /// Chebyshev acceleration of the Jacobi iterations (\[Wan15\]), `Some(ρ)` with the estimated
    /// spectral radius ρ in [`CHEBYSHEV_RANGE`], or `None` (default: the PBF demo's plain
    /// Jacobi). Needs ω ≤ 1 ([`over_relaxation`](Self::over_relaxation)): ω = 1.6 on top
    /// blew the 30 × 30 dam break apart. With ρ = 0.95 the 100 × 100 dam break meets the 0.1 %
    /// tolerance in 22.6 iterations per step in steps 11–20 instead of 59.2, 12.7 instead of
    /// 42 after 1 000 steps; the 30 × 30 one in 6.1 instead of 13.6
    /// (figures of 2026-12-01, when the positions were extrapolated; the
    /// [`density`](crate::fluid::density) module docs). The multipliers are extrapolated, so
    /// the fluid keeps its momentum and dynamic avian bodies in the water get the push the
    /// fluid took: the 100 × 100 dam break with 20 boxes needs 15.2 iterations per step at
    /// 0.3 % with ρ = 0.9 against 26.8 plain. Not in the reference demo.
    ///
    /// \[Wan15\] Huamin Wang: A Chebyshev Semi-Iterative Approach for Accelerating Projective
    /// and Position-based Dynamics, SIGGRAPH Asia 2015.
    pub chebyshev: Option<f32>,
    /// The grid projection before the density iterations
    /// ([`grid_projection`](crate::fluid::density::grid_projection) module docs), or `None`
    /// (default: the PBF demo's solve). With the default [`GridProjection`] the 100 × 100 dam
    /// break meets the 0.1 % tolerance in 2.9 iterations per step after 1 000 steps instead of
    /// 42, the 316 × 316 one in 0.7 instead of 147.8, in 4.9–6.7 and 43–45 ms per step against
    /// 9.2 and 286 (2 threads, [`density`](crate::fluid::density) module docs). The 30 × 30
    /// dam break needs 2.75 iterations per step instead of 13.57. Not applied while the avian
    /// coupling tracks the boundary push (while it has dynamic bodies with samples anywhere in
    /// the world). Not in the reference demo.
    pub grid_projection: Option<GridProjection>,
    /// Artificial pressure s_corr (\[MM13\] eq. 13–14; [`artificial_pressure`] module docs),
    /// or `None` (default: the PBF demo's solve). Keeps fluid pairs apart where the fluid is
    /// too sparse for the density constraint to act (surface, spray).
    ///
    /// [`artificial_pressure`]: crate::fluid::artificial_pressure
    pub artificial_pressure: Option<ArtificialPressure>,
    /// Vorticity confinement ε (m/s; \[MM13\] eq. 15–16, scalar vorticity in 2D;
    /// [`vorticity`](crate::fluid::forces::vorticity) module docs), 0 ..= [`MAX_VORTICITY_CONFINEMENT`].
    /// Default 0 (off).
    pub vorticity_confinement: f32,
    /// Surface tension γ (m³ kg⁻¹ s⁻²; Akinci, Akinci, Teschner 2013: cohesion and curvature;
    /// [`surface_tension`](crate::fluid::forces::surface_tension) module docs), 0 ..=
    /// [`MAX_SURFACE_TENSION`]. Default 0 (off).
    pub surface_tension: f32,
    /// Adhesion β (m³ kg⁻¹ s⁻²; Akinci et al. 2013) of fluid to boundary samples (walls,
    /// colliders) and to [`FluidCoupling`](crate::fluid::FluidCoupling) particles (cloth,
    /// ropes, blobs), 0 ..= [`MAX_SURFACE_TENSION`]. Default 0 (off).
    pub adhesion: f32,
}

/// The water depth (particle spacings) from which [`FluidSettings::game`] adds the grid
/// projection ([`GridProjection::min_depth`]).
pub const GAME_GRID_DEPTH: f32 = 64.0;

/// The largest accepted [`FluidSettings::vorticity_confinement`] (m/s).
pub const MAX_VORTICITY_CONFINEMENT: f32 = 10.0;

/// The largest accepted [`FluidSettings::surface_tension`] and [`FluidSettings::adhesion`]
/// (m³ kg⁻¹ s⁻²).
pub const MAX_SURFACE_TENSION: f32 = 1000.0;

/// The spectral radius estimates ρ [`FluidSettings::chebyshev`] accepts. The 30 × 30 dam break
/// held at 0.9 and 0.95; ρ = 0.99 diverged at 100 × 100.
pub const CHEBYSHEV_RANGE: core::ops::RangeInclusive<f32> = 0.5..=0.98;

/// The particle radii accepted (m): 0.1 mm to 10 m.
pub const PARTICLE_RADIUS_RANGE: core::ops::RangeInclusive<f32> = 1e-4..=10.0;

/// The support radii h accepted, in particle radii: h ∈ [3 r, 10 r] (the demo's 4 r). Below
/// ~2.7 r a particle's own mass, m W(0) = (2r)² ρ0 · 40/(7π h²), exceeds ρ0: no particle could
/// ever be at rest.
pub const SUPPORT_RADII: core::ops::RangeInclusive<f32> = 3.0..=10.0;

/// The rest densities ρ0 accepted (kg/m²).
pub const REST_DENSITY_RANGE: core::ops::RangeInclusive<f32> = 1e-3..=1e6;

/// The largest ε accepted (1/m², as Σ|∇C|² in the λ denominator).
pub const MAX_EPSILON: f32 = 1e6;

/// Largest accepted [`FluidSettings::over_relaxation`]: Jacobi iterations oscillate as ω nears 2.
pub const MAX_OVER_RELAXATION: f32 = 1.9;

/// The step (s) [`FluidSettings::max_density_error_percent`] is set for: 0.005, the PBF
/// demo's Δt. Shorter steps solve to a proportionally smaller tolerance
/// ([`FluidSettings::density_tolerance_percent`]).
pub const TOLERANCE_TIMESTEP: f32 = 0.005;

impl Default for FluidSettings {
    fn default() -> Self {
        Self {
            particle_radius: 0.025,
            support_radius: 0.1,
            rest_density: 1000.0,
            epsilon: 1e-6,
            max_density_error_percent: 0.1,
            max_iterations: 100,
            viscosity: 0.05,
            cfl_number: 0.4,
            over_relaxation: 1.0,
            resort_interval: 0,
            chebyshev: None,
            grid_projection: None,
            artificial_pressure: None,
            vorticity_confinement: 0.0,
            surface_tension: 0.0,
            adhesion: 0.0,
        }
    }
}

impl FluidSettings {
    /// The preset for games: the reference ([`Default`], the PBF demo's) with a 0.3 % density
    /// tolerance, Chebyshev acceleration (ρ = 0.9), the rows re-sorted every 100 steps and the
    /// grid projection where the water is deep ([`GridProjection::min_depth`]
    /// [`GAME_GRID_DEPTH`] = 64 spacings).
    ///
    /// What it buys, 2 threads: the 100 × 100 dam break after 10 s stands at 1.003 of an
    /// incompressible fluid's median height (the reference: 1.004) in 7.1–7.4 iterations and
    /// 2.3–2.7 ms per step (the reference: 42.2 and 9.3 ms); the 30 × 30 one needs 2.9 iterations
    /// per step over 3 s (12.5). Looser is not safe: at 1 % (with or without Chebyshev) or at
    /// 0.5 % with ρ = 0.95 the dam break gained energy and still splashed after 3–10 s
    /// (median height 1.08–2.4 times an incompressible fluid's). \[Wan15\] on
    /// [`chebyshev`](Self::chebyshev), also with dynamic avian bodies in the water (see there).
    ///
    /// Deep water: the iterations grow with the fluid's depth (the 316 × 316 dam break while it
    /// collapses: ~61 per step, 167 ms), and the grid projection takes them down to about one
    /// (there: 0.9 iterations, 53 ms). In shallower water it costs more than it saves (the
    /// 30 × 30 dam break: 0.9 against 0.3 ms per step) and a pool it leaves stands higher
    /// (100 × 100 with the grid in every step: 1.013 of the incompressible height over 10–20 s,
    /// against 1.003; its wall faces lie up to a cell off the walls), so the preset runs it only
    /// from 64 spacings deep: while a 100-deep block collapses, not in the pool it settles into
    /// (33 deep). It is not applied while dynamic avian bodies have samples (module docs of
    /// [`grid_projection`](crate::fluid::density::grid_projection)). Against LiquidFun, the
    /// bench README.
    pub fn game() -> Self {
        Self {
            max_density_error_percent: 0.3,
            chebyshev: Some(0.9),
            resort_interval: 100,
            grid_projection: Some(GridProjection {
                min_depth: GAME_GRID_DEPTH,
                ..default()
            }),
            ..default()
        }
    }

    /// Mass of every fluid particle, m = (2r)² ρ0 (kg): the area of its square times ρ0.
    pub fn particle_mass(&self) -> f32 {
        let d = 2.0 * self.particle_radius;
        d * d * self.rest_density
    }

    /// The tolerance (%) the density solve stops at in a step (or substep) of `dt` seconds:
    /// [`max_density_error_percent`](Self::max_density_error_percent) × min(1, Δt /
    /// [`TOLERANCE_TIMESTEP`]).
    ///
    /// PBF turns every correction into velocity over Δt (\[MM13\] Algorithm 1), and the error
    /// a solve leaves is corrected in the next step: a residual the tolerance allows, a fixed
    /// distance, becomes a velocity ∝ 1/Δt. With a tolerance fixed in %, a 10 × 5 block
    /// (r = 0.025 m) collapsing on a floor at Δt = 1 ms reached 68 J more kinetic energy than
    /// the potential energy it had lost; with the tolerance scaled (0.02 % at 1 ms), 0.11 J
    /// (tests/fluid_on_walls.rs). The cost: more iterations in short steps. A `dt` that is not
    /// a positive number reads as [`TOLERANCE_TIMESTEP`].
    pub fn density_tolerance_percent(&self, dt: f32) -> f32 {
        let scale = dt / TOLERANCE_TIMESTEP;
        if scale > 0.0 && scale < 1.0 {
            self.max_density_error_percent * scale
        } else {
            self.max_density_error_percent
        }
    }

    /// The speed limit C·h/Δt (m/s) for a step of `dt` seconds.
    pub fn max_speed(&self, dt: f32) -> f32 {
        self.cfl_number * self.support_radius / dt
    }

    /// Sets r and h = 4r together (the demo's ratio).
    ///
    /// # Errors
    /// [`PbdError::NotPositive`] for r ≤ 0, NaN or ∞, [`PbdError::NotInRange`] outside
    /// [`PARTICLE_RADIUS_RANGE`]; nothing changes.
    pub fn set_particle_radius(&mut self, radius: f32) -> Result<(), PbdError> {
        let r = positive("particle radius (m)", radius)?;
        let r = within("particle radius (m)", r, PARTICLE_RADIUS_RANGE)?;
        self.particle_radius = r;
        self.support_radius = 4.0 * r;
        Ok(())
    }

    /// Sets the XSPH coefficient.
    ///
    /// # Errors
    /// [`PbdError::Negative`] below 0 or not finite, [`PbdError::TooLarge`] above 1; nothing
    /// changes.
    pub fn set_viscosity(&mut self, viscosity: f32) -> Result<(), PbdError> {
        self.viscosity = Self::check_viscosity(viscosity)?;
        Ok(())
    }

    /// Sets the vorticity confinement ε (m/s; 0: off).
    ///
    /// # Errors
    /// [`PbdError::Negative`] below 0 or not finite, [`PbdError::TooLarge`] above
    /// [`MAX_VORTICITY_CONFINEMENT`]; nothing changes.
    pub fn set_vorticity_confinement(&mut self, epsilon: f32) -> Result<(), PbdError> {
        let name = "vorticity confinement (m/s)";
        self.vorticity_confinement = at_most(
            name,
            non_negative(name, epsilon)?,
            MAX_VORTICITY_CONFINEMENT,
        )?;
        Ok(())
    }

    /// Sets the surface tension γ (0: off).
    ///
    /// # Errors
    /// [`PbdError::Negative`] below 0 or not finite, [`PbdError::TooLarge`] above
    /// [`MAX_SURFACE_TENSION`]; nothing changes.
    pub fn set_surface_tension(&mut self, gamma: f32) -> Result<(), PbdError> {
        let name = "surface tension γ";
        self.surface_tension = at_most(name, non_negative(name, gamma)?, MAX_SURFACE_TENSION)?;
        Ok(())
    }

    /// Sets the adhesion β (0: off).
    ///
    /// # Errors
    /// [`PbdError::Negative`] below 0 or not finite, [`PbdError::TooLarge`] above
    /// [`MAX_SURFACE_TENSION`]; nothing changes.
    pub fn set_adhesion(&mut self, beta: f32) -> Result<(), PbdError> {
        let name = "adhesion β";
        self.adhesion = at_most(name, non_negative(name, beta)?, MAX_SURFACE_TENSION)?;
        Ok(())
    }

    /// Sets artificial pressure (`Some`) or turns it off (`None`).
    ///
    /// # Errors
    /// As [`ArtificialPressure::validate`]; nothing changes.
    pub fn set_artificial_pressure(
        &mut self,
        s_corr: Option<ArtificialPressure>,
    ) -> Result<(), PbdError> {
        if let Some(s_corr) = &s_corr {
            s_corr.validate()?;
        }
        self.artificial_pressure = s_corr;
        Ok(())
    }

    /// Sets the tolerance (%).
    ///
    /// # Errors
    /// [`PbdError::Negative`] for a negative, NaN or infinite value; nothing changes.
    pub fn set_max_density_error_percent(&mut self, percent: f32) -> Result<(), PbdError> {
        self.max_density_error_percent = non_negative("max density error (%)", percent)?;
        Ok(())
    }

    /// Sets the iteration cap.
    ///
    /// # Errors
    /// [`PbdError::OutOfRange`] outside 1 ..= 10 000; nothing changes.
    pub fn set_max_iterations(&mut self, iterations: u32) -> Result<(), PbdError> {
        self.max_iterations = in_range("max iterations", iterations, 1, MAX_ITERATIONS)?;
        Ok(())
    }

    /// Sets the over-relaxation factor ω.
    ///
    /// # Errors
    /// [`PbdError::NotPositive`] for ω ≤ 0, NaN or ∞, [`PbdError::TooLarge`] above
    /// [`MAX_OVER_RELAXATION`], or above 1 while [`chebyshev`](Self::chebyshev) is set;
    /// nothing changes.
    pub fn set_over_relaxation(&mut self, omega: f32) -> Result<(), PbdError> {
        let omega = Self::check_over_relaxation(omega)?;
        Self::check_chebyshev(self.chebyshev, omega)?;
        self.over_relaxation = omega;
        Ok(())
    }

    /// Sets Chebyshev acceleration (`Some(ρ)`) or turns it off (`None`).
    ///
    /// # Errors
    /// [`PbdError::NotInRange`] for ρ outside [`CHEBYSHEV_RANGE`] (or NaN),
    /// [`PbdError::TooLarge`] while [`over_relaxation`](Self::over_relaxation) is above 1;
    /// nothing changes.
    pub fn set_chebyshev(&mut self, rho: Option<f32>) -> Result<(), PbdError> {
        Self::check_chebyshev(rho, self.over_relaxation)?;
        self.chebyshev = rho;
        Ok(())
    }

    /// ρ must be in [`CHEBYSHEV_RANGE`], with ω ≤ 1.
    fn check_chebyshev(rho: Option<f32>, omega: f32) -> Result<(), PbdError> {
        if let Some(rho) = rho {
            within("Chebyshev spectral radius ρ", rho, CHEBYSHEV_RANGE)?;
            at_most("over-relaxation with Chebyshev acceleration", omega, 1.0)?;
        }
        Ok(())
    }

    /// ω must be in 0 < ω ≤ [`MAX_OVER_RELAXATION`].
    fn check_over_relaxation(omega: f32) -> Result<f32, PbdError> {
        at_most(
            "over-relaxation",
            positive("over-relaxation", omega)?,
            MAX_OVER_RELAXATION,
        )
    }

    /// Checks every field (they are public and may be edited directly, e.g. in an inspector).
    ///
    /// # Errors
    /// The first invalid field as a [`PbdError`] (the s_corr parameters:
    /// [`ArtificialPressure::validate`]). The plugin skips steps while this fails.
    pub fn validate(&self) -> Result<(), PbdError> {
        let r = positive("particle radius (m)", self.particle_radius)?;
        within("particle radius (m)", r, PARTICLE_RADIUS_RANGE)?;
        let h = positive("support radius (m)", self.support_radius)?;
        let (low, high) = (*SUPPORT_RADII.start(), *SUPPORT_RADII.end());
        within("support radius (m)", h, low * r..=high * r)?;
        let rho = positive("rest density (kg/m²)", self.rest_density)?;
        within("rest density (kg/m²)", rho, REST_DENSITY_RANGE)?;
        within(
            "epsilon",
            positive("epsilon", self.epsilon)?,
            0.0..=MAX_EPSILON,
        )?;
        let mass = self.particle_mass();
        within(
            "fluid particle mass (2r)²ρ0 (kg)",
            mass,
            crate::particle::MASS_RANGE,
        )?;
        non_negative("max density error (%)", self.max_density_error_percent)?;
        in_range("max iterations", self.max_iterations, 1, MAX_ITERATIONS)?;
        at_most("CFL number", positive("CFL number", self.cfl_number)?, 1.0)?;
        Self::check_over_relaxation(self.over_relaxation)?;
        Self::check_chebyshev(self.chebyshev, self.over_relaxation)?;
        if let Some(grid) = &self.grid_projection {
            grid.validate()?;
        }
        let mut forces = *self;
        forces.set_artificial_pressure(self.artificial_pressure)?;
        forces.set_vorticity_confinement(self.vorticity_confinement)?;
        forces.set_surface_tension(self.surface_tension)?;
        forces.set_adhesion(self.adhesion)?;
        Self::check_viscosity(self.viscosity).map(|_| ())
    }

    /// The XSPH coefficient must be in 0 ..= 1.
    fn check_viscosity(viscosity: f32) -> Result<f32, PbdError> {
        at_most("viscosity", non_negative("viscosity", viscosity)?, 1.0)
    }
}

impl ValidatedSettings for FluidSettings {
    fn validate(&self) -> Result<(), PbdError> {
        FluidSettings::validate(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tolerance shrinks in proportion below 5 ms and is the setting at and above it, and
    /// for a Δt that is not a positive number.
    #[test]
    fn the_density_tolerance_scales_with_steps_shorter_than_its_own() {
        let settings = FluidSettings::default();
        let set = settings.max_density_error_percent;
        assert_eq!(settings.density_tolerance_percent(TOLERANCE_TIMESTEP), set);
        assert_eq!(settings.density_tolerance_percent(1.0 / 60.0), set);
        let at_1ms = settings.density_tolerance_percent(0.001);
        assert!((at_1ms - set / 5.0).abs() <= 1e-6 * set, "{at_1ms}");
        let quarter = settings.density_tolerance_percent(TOLERANCE_TIMESTEP / 4.0);
        assert!((quarter - set / 4.0).abs() <= 1e-6 * set, "{quarter}");
        for odd in [0.0, -0.001, f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            assert_eq!(settings.density_tolerance_percent(odd), set, "Δt {odd}");
        }
    }
}
