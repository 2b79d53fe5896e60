//! # bevy_pbd2d
//!
//! 2D particle physics for Bevy with position-based dynamics: cloth and other
//! particle–constraint structures (\[MHHR06\], with XPBD compliance \[MMC16\]), and Position
//! Based Fluids (\[MM13\]) with Akinci boundary samples (\[AIA+12\]), in one solver.
//!
//! ## Getting started
//!
//! Add [`PbdPlugins`] and spawn bodies with the builders (or particles and constraints one by
//! one, as plain entities):
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_pbd2d::prelude::*;
//!
//! App::new()
//!     .add_plugins((MinimalPlugins, PbdPlugins::default()))
//!     .insert_resource(Time::<Fixed>::from_seconds(0.01)) // one step per fixed step
//!     .add_systems(Startup, |mut commands: Commands, fluid: Res<FluidSettings>| {
//!         ClothBuilder::default().spawn(&mut commands).expect("valid cloth");
//!         DamBreakBuilder { origin: Vec2::new(0.0, -10.0), ..default() }
//!             .spawn(&mut commands, &fluid)
//!             .expect("valid dam break");
//!     })
//!     .run();
//! ```
//!
//! Each builder spawns a body: a root entity ([`ParticleBody`](body::ParticleBody), with a
//! `Name` such as "Cloth 40 × 30") whose particles and constraints point at it with the
//! relationships [`ParticleOf`](body::ParticleOf) and [`ConstraintOf`](body::ConstraintOf).
//! Despawn the root to remove the body; [`ParticleBodies`](body::ParticleBodies) changes its
//! particles' mass or its constraints' compliance in one call ([`body`] says why these are not
//! `ChildOf`).
//!
//! A particle is an entity with [`Particle`](particle::Particle), which requires
//! [`Position`](particle::Position), [`Velocity`](particle::Velocity) and
//! [`InverseMass`](particle::InverseMass). Read and write them like any component between
//! steps: the solver takes edits at the next step. Join two particles with a
//! [`DistanceConstraint`](constraints::DistanceConstraint) entity; add
//! [`FluidParticle`](particle::FluidParticle) for fluid and spawn
//! [`BoundaryParticle`](fluid::BoundaryParticle) samples for its walls. Hold a particle with a
//! [`KinematicTarget`](particle::KinematicTarget) (that is how picking drags). Settings are
//! resources ([`Gravity`](dynamics::Gravity), [`SolverSettings`](dynamics::SolverSettings),
//! [`FluidSettings`](fluid::FluidSettings), [`SolverThreads`]); statistics of the last step are
//! in [`PbdStats`](stats::PbdStats) and in Bevy's `Diagnostics` (`pbd2d/step_time_ms`, …).
//!
//! ## Units
//!
//! SI throughout: metres, seconds, kilograms; in 2D a mass per area (a density ρ) is kg/m².
//! Inverse mass w = 1/m is in kg⁻¹ (w = 0: pinned), compliance α in m/N (α = 0: rigid).
//! A camera with `OrthographicProjection::scale = 1/40` shows 40 pixels per metre.
//!
//! ## Plugins
//!
//! [`PbdPlugins`] adds, in order:
//!
//! | plugin | what it does |
//! |---|---|
//! | [`PbdSchedulePlugin`](schedule::PbdSchedulePlugin) | the step schedule and its sets, [`PbdClock`](schedule::PbdClock) (pause, single step), the step gate, [`PbdStats`](stats::PbdStats) and diagnostics |
//! | [`ParticlePlugin`](particle::ParticlePlugin) | particle components, the solver arrays and the copy between them and the components |
//! | [`IntegratorPlugin`](dynamics::IntegratorPlugin) | prediction with gravity and the velocity update; [`Gravity`](dynamics::Gravity), [`SolverSettings`](dynamics::SolverSettings) |
//! | [`ConstraintsPlugin`](constraints::ConstraintsPlugin) | distance, angle (bending) and long-range constraints (Gauss-Seidel, XPBD), tearing |
//! | [`FluidPlugin`](fluid::FluidPlugin) | neighbour search, density solve, XSPH, CFL limit, boundary Ψ; [`FluidSettings`](fluid::FluidSettings), [`SolverThreads`] |
//! | [`ColliderPlugin`](collider::ColliderPlugin) | colliders for particles: Bevy primitives as static or moving obstacles, contacts with friction and restitution |
//! | [`SolidContactsPlugin`](solid_contacts::SolidContactsPlugin) | contacts between solid particles of bodies with [`SolidContacts`](solid_contacts::SolidContacts), self-collision, friction |
//! | [`ShapeMatchingPlugin`](shape_matching::ShapeMatchingPlugin) | soft and rigid bodies of particles: shape matching of bodies with [`ShapeMatching`](shape_matching::ShapeMatching) |
//! | [`BodyPlugin`](body::BodyPlugin) | bodies: the root marker and the relationships to their particles and constraints |
//! | [`ScenesPlugin`](scenes::ScenesPlugin) | registers the builders' components |
//! | `PbdPickingPlugin` (feature `picking`) | a `bevy_picking` backend for particles, drag with the mouse |
//! | `PbdDebugRenderPlugin` (feature `debug_render`) | particles, constraints and axes drawn with gizmos |
//! | `PbdRenderPlugin` (feature `render`) | the game look: cloth, rope and blob meshes, the fluid surface (module `render`) |
//!
//! `PbdPanelPlugin` (feature `egui`) is a settings and statistics panel, added on its own
//! (it needs `bevy_egui`'s `EguiPlugin`). Leave out what a game does not use:
//! `PbdPlugins::default().build().disable::<FluidPlugin>()` runs no fluid system at all.
//!
//! ## Schedule
//!
//! The simulation steps in `FixedUpdate` (or the schedule given to [`PbdPlugins::new`]), in
//! the outer sets [`PbdSystems`] `First` → `StepSimulation` → `Last`; a game orders its own
//! systems against them. One step is one run of [`PbdSchedule`], whose inner sets
//! [`PbdStepSystems`] run the algorithm in order (table in [`schedule`]); its
//! [`PbdStepSystems::Substeps`] runs [`PbdSubstepSchedule`] (prediction, solve, contacts,
//! velocities) [`SolverSettings::substeps`](dynamics::SolverSettings::substeps) times. Δt is
//! `Time<Fixed>::timestep()`; [`set_time_step`](dynamics::set_time_step) refuses a bad one.
//! [`PbdClock`](schedule::PbdClock) pauses the simulation alone and single-steps it.
//!
//! ## Cargo features
//!
//! | feature | adds |
//! |---|---|
//! | `picking` | `PbdPickingPlugin`: hits particles with `bevy_picking`, drags them |
//! | `debug_render` | `PbdDebugRenderPlugin`: gizmo drawing, the reference demos' dots and lines |
//! | `render` | `PbdRenderPlugin`: textured cloth, rope and blob meshes and a shaded fluid surface in Bevy's 2D pipeline (`ClothMesh`, `RopeMesh`, `BlobMesh`, `FluidSurface` on a body's root) |
//! | `egui` | `PbdPanelPlugin`: the demos' panel for games |
//! | `avian` | `AvianCouplingPlugin` (in [`PbdPlugins`]): avian2d colliders as obstacles, particle impulses on dynamic bodies, `CollisionLayers` filtering particle contacts, our `Gravity` following avian's (module `avian`) |
//!
//! None is on by default; without them the crate needs no renderer or window.
//!
//! ## Threads and determinism
//!
//! The fluid's passes run on Bevy's compute task pool in blocks of 64 particles whose size does
//! not depend on the thread count, so results are bitwise identical for any number of threads
//! (and any [`SolverThreads`] setting). The hot loops use SIMD (8 lanes; AVX2 where the CPU
//! has it) with the same IEEE operations in the same order, so the bits are also those of the
//! scalar path.
//!
//! ## Bad input
//!
//! Builders and setters refuse invalid values with a [`PbdError`](error::PbdError) and keep
//! the old value. A value written directly into a settings resource (an inspector) is checked
//! before every step: the step is skipped with the reason in
//! [`PbdStats::blocked`](stats::PbdStats::blocked) and an error log, and resumes once the
//! value is valid again. A negative or non-finite [`InverseMass`](particle::InverseMass) is
//! treated as pinned, with a warning. Every accepted range is a named constant next to its
//! field (e.g. [`MASS_RANGE`](particle::MASS_RANGE),
//! [`TIME_STEP_RANGE`](dynamics::settings::TIME_STEP_RANGE)); the property tests check that no
//! value inside them, at their ends, makes a state non-finite.
//!
//! A particle whose position or velocity becomes non-finite, or leaves
//! [`RunawayGuard::bounds`](particle::RunawayGuard) (±10 km), is taken out, disabled by default,
//! and reported with a [`ParticleRunaway`](particle::ParticleRunaway) message
//! ([`particle::runaway`]); a NaN written into a component is caught before it enters a step.
//! Fluid cannot cross a wall of boundary samples, and a fluid particle placed in one is moved
//! out without being shot out ([`fluid::contacts`]). No particle crosses a
//! [`ParticleCollider`](collider::ParticleCollider), at any speed ([`collider`]).
//!
//! ## FAQ
//!
//! - *My particles do not move.* Is a fixed step running (`Time<Fixed>` > 0, the app updating)?
//!   Is [`PbdClock`](schedule::PbdClock) paused? Is [`PbdStats::blocked`](stats::PbdStats::blocked) set?
//! - *How do I apply a force?* Write [`Velocity`](particle::Velocity) before the step (in
//!   [`PbdSystems::First`]), or add a system to [`PbdSubstepSchedule`] after
//!   [`PbdSubstepSystems::Predict`] (it runs in every substep).
//! - *How do I remove one cloth?* Despawn its root (`Cloth::root`, or any entity with
//!   [`ParticleBody`](body::ParticleBody)): its particles and constraints go with it at once.
//! - *How do I move a cloth somewhere else?* [`ParticleBodies::translate`](body::ParticleBodies::translate)
//!   moves every particle of the body and keeps their velocities. Writing one particle's
//!   `Position` far away instead stretches the cloth across the distance: its constraints pull
//!   the particle back fast enough to fold the cloth through itself, and without contacts
//!   between its particles a folded cloth stays tangled (a 20 × 20 cloth whose corner was moved
//!   5 m still has 98 % strain after 5 s, with long-range attachments and 20 iterations). With
//!   [`SolidContacts`](solid_contacts::SolidContacts) on its root (and particles of about half
//!   the spacing's radius) it cannot pass through itself, and recovers to 0.2 % within 1 s.
//! - *How do I tear cloth?* Give its constraints a
//!   [`BreakingStrain`](constraints::BreakingStrain) (`ClothBuilder::breaking_strain`); each
//!   break writes a [`ConstraintBroken`](constraints::ConstraintBroken) message. Or despawn
//!   [`DistanceConstraint`](constraints::DistanceConstraint) entities yourself;
//!   [`ConstraintState::lambda`](constraints::ConstraintState::lambda) / Δt² is each
//!   constraint's force (N), Δt the substep's.
//! - *How do I make a rope or a chain?* [`RopeBuilder`](scenes::RopeBuilder); its links are
//!   solved as one chain ([`constraints::chains`]), bending with
//!   [`AngleConstraint`](constraints::AngleConstraint)s. Stiffer cloth and ropes: more
//!   [`SolverSettings::substeps`](dynamics::SolverSettings::substeps) rather than iterations.
//! - *How do I make sand?* [`GranularBuilder`](scenes::GranularBuilder): a block of grains
//!   of spread radii in one body with [`SolidContacts`](solid_contacts::SolidContacts)
//!   (contacts and friction, no density solve). Poured, they pile at an angle of repose that
//!   grows with the static friction μs (11°, 22° and 30° at μs 0.05, 0.15 and 0.5 with 20 substeps, `tests/granular.rs`);
//!   give the floor a [`ColliderMaterial`](collider::ColliderMaterial) with friction too.
//! - *How do I make it look like a game?* Feature `render`: insert `ClothMesh`, `RopeMesh`,
//!   `BlobMesh` or `FluidSurface` on a body's root (module `render`), with a colour, a texture
//!   or your own `Material2d`. The debug gizmos (`PbdDebugRender::enabled`) can stay on beside
//!   it or be switched off.
//! - *Can I spawn fluid on a wall, into a collider or packed tighter than at rest?* Yes: such
//!   particles *settle* ([`fluid::settling`]): the error their placement left is removed
//!   without velocity and the density solve gives them no more energy than gravity's, so a
//!   row spawned on a floor's samples rests on it instead of being thrown up
//!   ([`PbdStats::settling_particles`](stats::PbdStats::settling_particles) counts them).
//!   Spawning them where they fit (2r apart, 1.32 r above a flat wall of samples) costs
//!   nothing. Moving a fluid particle by hand into such a place is not a spawn: insert
//!   [`FluidSettling::Placed`](fluid::FluidSettling::Placed) with its new position.
//! - *How do I make a tap, a drain, or water that evaporates?* Spawn a
//!   [`FluidEmitter`](emitters::FluidEmitter) (rate, speed, nozzle width, lifetime, limit;
//!   it never pours onto a particle), a [`FluidSink`](emitters::FluidSink) (a rectangle that
//!   despawns the fluid entering it) or give particles a
//!   [`ParticleLifetime`](emitters::ParticleLifetime); an emitter that stops at its limit
//!   writes [`EmitterStopped`](emitters::EmitterStopped) once ([`emitters`]).
//! - *Why does water pass through my cloth (rope, blob)?* Fluid meets only the bodies whose
//!   root has [`FluidCoupling`](fluid::FluidCoupling): their particles are discs the fluid
//!   cannot cross, and the fluid and the body push each other, momentum conserved. To hold
//!   water, a cloth's particles need discs that touch ([`ParticleRadius`](collider::ParticleRadius)
//!   = half the spacing) and a spacing near the fluid's 2r ([`coupling`](fluid::coupling)).
//! - *How do I pour oil on water, or honey?* Give the particles a
//!   [`FluidPhase`](fluid::FluidPhase) ([`OIL`](fluid::FluidPhase::OIL),
//!   [`HONEY`](fluid::FluidPhase::HONEY), or your own rest density and viscosity): the phase
//!   sets each particle's mass, and the density solve lets lighter liquids rise through
//!   heavier ones ([`phases`](fluid::phases)). Colour them with
//!   `ParticleColor` (feature `render`).
//! - *How do I make drops bead, or water cling to a wall or a cloth?* Set
//!   [`FluidSettings::surface_tension`](fluid::FluidSettings::surface_tension) γ (cohesion and
//!   curvature: a drop rounds; γ ≈ 0.003 for the default particle size, larger values
//!   stiffen the fluid) and [`FluidSettings::adhesion`](fluid::FluidSettings::adhesion) β
//!   (to walls, colliders and [`FluidCoupling`](fluid::FluidCoupling) bodies)
//!   ([`surface_tension`](fluid::forces::surface_tension)). Spray clumping into pairs:
//!   [`FluidSettings::artificial_pressure`](fluid::FluidSettings::artificial_pressure). Swirls
//!   that die too soon:
//!   [`FluidSettings::vorticity_confinement`](fluid::FluidSettings::vorticity_confinement).
//!   All are off by default; their cost is in the bench README.
//! - *How do I play a splash when water hits something, or ring a bell when sand lands on
//!   it?* Put [`ReportParticleContacts`](collider::ReportParticleContacts) on the collider:
//!   each particle that comes to touch it writes one
//!   [`ParticleContactStart`](collider::ParticleContactStart) (particle, collider, body, point,
//!   normal, impulse) and one [`ParticleContactEnd`](collider::ParticleContactEnd) when it
//!   leaves ([`collider::reports`], with its limits). Colliders without the marker cost
//!   nothing.
//! - *How do I let some particles pass a body?* With `avian`, give the particle, or its body's
//!   root, avian's `CollisionLayers` (and the collider its own): a particle passes every
//!   collider whose layers it does not interact with (avian's rule), fluid included; a
//!   particle without layers meets every collider ([`collider::layers`]). Our [`Gravity`](dynamics::Gravity) follows avian's `Gravity`
//!   until you set ours.
//!
//! ## Where we differ from the reference demos
//!
//! Both demos (a cloth and a dam break, in JavaScript) are rebuilt as the crate's examples,
//! with the same defaults. Differences, each documented where it is implemented:
//! - general per-particle inverse masses (λ = −C/(w₁ + w₂), skipped when w₁ + w₂ = 0) instead of
//!   one global mass and a special case for the first constraint;
//! - the fluid's error check happens before a correction, so the reported error is that of the
//!   final positions (the demo never resets its error sum and always does two iterations);
//! - XSPH is applied to the velocities at the end of the step, as in \[MM13\]
//!   ([`fluid::viscosity`] explains the equivalence with the demo's acceleration);
//! - the density tolerance is the demo's at its Δt = 5 ms and longer steps, and shrinks in
//!   proportion in shorter steps and substeps
//!   ([`FluidSettings::density_tolerance_percent`](fluid::FluidSettings::density_tolerance_percent)):
//!   the error a solve leaves becomes velocity over Δt in the next step, and a fixed tolerance
//!   heated the fluid at small Δt;
//! - additions for robustness: the step gate, a CFL speed limit for fluid
//!   ([`FluidSettings::cfl_number`](fluid::FluidSettings::cfl_number)), deterministic
//!   separation of coincident particles, a speed limit for held particles
//!   ([`SolverSettings::max_kinematic_speed`](dynamics::SolverSettings::max_kinematic_speed)),
//!   optional long-range attachments for cloth (\[KCM12\]) and optional over-relaxation of the
//!   density corrections (\[MMCK14\]).
//!
//! ## References
//!
//! - \[MHHR06\] Müller, Heidelberger, Hennix, Ratcliff: Position Based Dynamics, VRIPHYS 2006.
//! - \[MMC16\] Macklin, Müller, Chentanez: XPBD: Position-Based Simulation of Compliant
//!   Constrained Dynamics, MIG 2016.
//! - \[MM13\] Macklin, Müller: Position Based Fluids, ACM TOG 32(4), 2013.
//! - \[AIA+12\] Akinci et al.: Versatile Rigid-Fluid Coupling for Incompressible SPH, ACM TOG
//!   31(4), 2012.
//! - \[KCM12\] Kim, Chentanez, Müller: Long Range Attachments, SCA 2012.
//! - \[MMCK14\] Macklin, Müller, Chentanez, Kim: Unified Particle Physics for Real-Time
//!   Applications, SIGGRAPH 2014.

#![warn(missing_docs)]

#[cfg(feature = "avian")]
pub mod avian;
pub mod body;
pub mod collider;
pub mod constraints;
pub mod dynamics;
pub mod emitters;
pub mod error;
pub mod fluid;
pub(crate) mod parallel;
pub mod particle;
pub mod plugins;
pub mod scenes;
pub mod schedule;
pub mod shape_matching;
pub(crate) mod simd;
pub mod solid_contacts;
pub mod stats;

#[cfg(feature = "debug_render")]
pub mod debug_render;
#[cfg(feature = "egui")]
pub mod egui_panel;
#[cfg(feature = "picking")]
pub mod picking;
#[cfg(feature = "render")]
pub mod render;

pub use parallel::{MAX_HELPER_LINGER, SolverThreads};
pub use plugins::PbdPlugins;
pub use schedule::{
    PbdSchedule, PbdStepSystems, PbdSubstepSchedule, PbdSubstepSystems, PbdSystems,
};

/// The types most apps need: `use bevy_pbd2d::prelude::*;`.
pub mod prelude {
    pub use crate::body::{
        BodyConstraints, BodyParticles, BodyPlugin, ConstraintOf, ParticleBodies, ParticleBody,
        ParticleOf,
    };
    pub use crate::collider::{
        ColliderMaterial, ColliderPlugin, ColliderShape, ParticleCollider, ParticleContactEnd,
        ParticleContactStart, ParticleRadius, ReportParticleContacts, TeleportCollider,
    };
    pub use crate::constraints::{
        AngleConstraint, BreakingStrain, ConstraintBroken, ConstraintsPlugin, DistanceConstraint,
        LongRangeAttachment,
    };
    pub use crate::dynamics::{Gravity, IntegratorPlugin, SolverSettings, set_time_step};
    pub use crate::emitters::{
        DrainedCount, EmittedBy, EmittedParticles, EmitterPlugin, EmitterState, EmitterStopped,
        FluidEmitter, FluidSink, ParticleLifetime,
    };
    pub use crate::error::PbdError;
    pub use crate::fluid::{
        ArtificialPressure, BoundaryParticle, FluidCoupling, FluidParticle, FluidPhase,
        FluidPlugin, FluidSettings, FluidSettling, GridProjection, PseudoMass,
    };
    pub use crate::particle::{
        InverseMass, KinematicTarget, Particle, ParticlePlugin, Position, Velocity,
    };
    pub use crate::scenes::{
        BlobBuilder, BlobShape, ClothBuilder, ClothGrid, ClothParticle, DamBreakBuilder,
        DamBreakWalls, FixedCorners, GranularBuilder, RopeBuilder, RopeEnds, ScenesPlugin,
    };
    pub use crate::schedule::{
        PbdClock, PbdFrameBudget, PbdSchedule, PbdSchedulePlugin, PbdStepSystems,
        PbdSubstepSchedule, PbdSubstepSystems, PbdSystems,
    };
    pub use crate::shape_matching::{ShapeMatching, ShapeMatchingPlugin, ShapeRest};
    pub use crate::solid_contacts::{SolidContacts, SolidContactsPlugin};
    pub use crate::stats::PbdStats;
    pub use crate::{PbdPlugins, SolverThreads};

    #[cfg(feature = "render")]
    pub use crate::render::{
        BlobMesh, BodyFill, ClothMesh, ColorMixing, FluidSurface, FluidSurfaceSettings,
        ParticleColor, PbdRender, PbdRenderPlugin, RopeMesh,
    };
}
