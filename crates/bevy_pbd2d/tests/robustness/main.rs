//! Faults that public particle solvers have shipped, one module per fault kind. Each test runs
//! a headless App with a fixed Δt and fails on a naive implementation (see each module's doc).
//!
//! Baselines: cloth C0 = 20 × 20 grid, spacing 0.05 m, 0.01 kg per particle, two top corners
//! pinned, Δt = 1/60 s; fluid F0 = the fluid defaults (r = 0.025 m, h = 4r, ρ0 = 1000 kg/m²)
//! with a 20 × 20 block in the box of boundary samples.

#[path = "../common/mod.rs"]
mod common;

mod coincident;
mod corners;
mod drag_release;
mod frame_rate;
mod negative_coordinates;
mod one_cell;
mod parameters;
mod rest_state;
mod runaway;
mod walls;
mod zero_dt;
mod zero_mass;

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;
use bevy_pbd2d::scenes::cloth::Cloth;
use bevy_pbd2d::scenes::dam_break::DamBreak;

/// Δt of C0 (s).
pub const C0_DT: f32 = 1.0 / 60.0;

/// The C0 cloth builder, with long-range attachments: without them a 20 × 20 cloth of 0.05 m
/// spacing at Δt = 1/60 s hangs 27 % stretched even at rest with 20 iterations (Gauss-Seidel
/// corrections travel one constraint per sweep), so no drag test could ever see it "recover".
pub fn c0() -> ClothBuilder {
    common::c0_cloth()
}

/// An app with C0 spawned.
pub fn c0_app() -> (App, Cloth) {
    let mut app = common::app(C0_DT);
    let cloth = common::spawn(&mut app, |c| c0().spawn(c).unwrap());
    (app, cloth)
}

/// The F0 builder (20 × 20 block), shifted by `origin`.
pub fn f0(origin: Vec2) -> DamBreakBuilder {
    DamBreakBuilder {
        width: 20,
        height: 20,
        origin,
        ..default()
    }
}

/// An app with F0 spawned at `origin`, Δt = 0.005 s.
pub fn f0_app(origin: Vec2) -> (App, DamBreak) {
    let mut app = common::app(0.005);
    let scene = common::spawn(&mut app, |c| {
        f0(origin).spawn(c, &FluidSettings::default()).unwrap()
    });
    (app, scene)
}

/// Fluid positions from the solver (rows 0..fluid_count).
pub fn fluid_positions(app: &App) -> Vec<Vec2> {
    let s = common::solver(app);
    s.x[..s.fluid_count].to_vec()
}

/// Largest fluid speed (m/s).
pub fn max_fluid_speed(app: &App) -> f32 {
    let s = common::solver(app);
    s.v[..s.fluid_count]
        .iter()
        .map(|v| v.length())
        .fold(0.0, f32::max)
}
