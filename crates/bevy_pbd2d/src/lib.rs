//! # bevy_pbd2d
//!
//! 2D position-based dynamics for [Bevy](https://bevy.org): cloth, ropes and other
//! particle/constraint structures (\[MHHR06\], \[MMC16\] for compliance), and Position Based Fluids
//! (\[MM13\]) with Akinci boundary particles (\[AIA+12\]).
//!
//! Particles and constraints are entities with components; settings are resources; every step of
//! the algorithm is a system in the chained [`PbdSystems`] sets, run in `FixedUpdate` by default.
//! One fixed step is one simulation step of size `Time<Fixed>::delta` (s).
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_pbd2d::prelude::*;
//!
//! App::new()
//!     .add_plugins((MinimalPlugins, PbdPlugin::default()))
//!     .add_systems(Startup, |mut commands: Commands| {
//!         ClothBuilder::default().spawn(&mut commands).expect("valid cloth");
//!     })
//!     .run();
//! ```
//!
//! Units are SI: metres, seconds, kilograms; in 2D a density is kg/m².
//!
//! - \[MHHR06\] Müller, Heidelberger, Hennix, Ratcliff: Position Based Dynamics, VRIPHYS 2006.
//! - \[MMC16\] Macklin, Müller, Chentanez: XPBD: Position-Based Simulation of Compliant
//!   Constrained Dynamics, MIG 2016.
//! - \[MM13\] Macklin, Müller: Position Based Fluids, ACM TOG 32(4), 2013.
//! - \[AIA+12\] Akinci et al.: Versatile Rigid-Fluid Coupling for Incompressible SPH, ACM TOG 31(4), 2012.

pub mod cloth;
pub mod constraints;
pub mod degenerate;
pub mod error;
pub mod fluid;
pub mod integrator;
pub mod kernel;
pub mod neighbors;
pub mod parallel;
pub mod particle;
pub mod phased;
pub mod plugin;
mod progress;
pub mod schedule;
pub mod settings;
pub mod simd;
pub mod solver;
pub mod spatial_grid;
pub mod stats;
pub mod sweep;
pub mod sync;
pub mod team;

#[cfg(feature = "debug_render")]
pub mod debug_render;
#[cfg(feature = "egui")]
pub mod egui_panel;
#[cfg(feature = "picking")]
pub mod picking;

pub use plugin::{PbdPlugin, PbdPlugins};
pub use schedule::{PbdSchedule, PbdSystems};

/// The types most apps need: `use bevy_pbd2d::prelude::*;`.
pub mod prelude {
    pub use crate::cloth::{ClothBuilder, FixedCorners};
    pub use crate::constraints::distance::DistanceConstraint;
    pub use crate::constraints::tether::LongRangeAttachment;
    pub use crate::error::PbdError;
    pub use crate::fluid::scene::DamBreakBuilder;
    pub use crate::fluid::{BoundaryParticle, FluidParticle, FluidSettings, PseudoMass};
    pub use crate::particle::{InverseMass, KinematicTarget, Particle, Position, Velocity};
    pub use crate::plugin::{PbdPlugin, PbdPlugins};
    pub use crate::schedule::{PbdSchedule, PbdSystems};
    pub use crate::settings::{Gravity, SolverSettings, set_time_step};
    pub use crate::stats::PbdStats;
}
