//! The fluid demo: a dam break. A 30 × 30 block of Position Based Fluids particles collapses in
//! a box of boundary samples, Δt = 0.005 s, with the reference page's fluid settings.
//!
//! `cargo run --example fluid`. Drag particles with the left mouse button, pan by dragging
//! empty space, zoom with the wheel; the panel edits the settings live. Width and height
//! restart the scene.

#[path = "common/mod.rs"]
mod common;

use bevy::prelude::*;
use bevy_egui::egui;
use bevy_pbd2d::egui_panel::{PanelSection, PbdPanel, PbdPanelAppExt, PbdRestart};
use bevy_pbd2d::prelude::*;

/// Largest block side the panel accepts (the builder allows up to 2000, 4 million particles:
/// far too many to run interactively).
const MAX_SIDE: u32 = 200;

/// The dam break the scene is (re)built from.
#[derive(Resource, Default)]
struct FluidScene {
    builder: DamBreakBuilder,
}

fn main() {
    let mut app = common::demo_app(&common::Demo {
        title: "bevy_pbd2d fluid",
        panel_title: "Position Based Fluids (PBF)",
        pixels_per_metre: 100.0,
        view_centre: Vec2::new(0.0, 2.0),
        time_step: 0.005,
    });
    app.world_mut().resource_mut::<PbdPanel>().constraint_rows = false;
    app.insert_resource(FluidSettings::default())
        .insert_resource(Gravity(Vec2::new(0.0, -9.81)))
        .init_resource::<FluidScene>()
        .add_pbd_panel_rows(PanelSection::Scene, scene_rows);
    common::add_scene(&mut app, spawn_fluid).run();
}

fn spawn_fluid(mut commands: Commands, scene: Res<FluidScene>, settings: Res<FluidSettings>) {
    if let Err(error) = scene.builder.spawn(&mut commands, &settings) {
        error!("cannot build the dam break: {error}");
    }
}

/// Width and height of the block: each change rebuilds the scene.
fn scene_rows(
    InMut(ui): InMut<egui::Ui>,
    mut scene: ResMut<FluidScene>,
    mut restart: MessageWriter<PbdRestart>,
) {
    let builder = scene.builder;
    common::size_rows(
        ui,
        &mut scene.builder,
        (builder.width, builder.height),
        MAX_SIDE,
        |b, width, height| {
            let next = DamBreakBuilder { width, height, ..b };
            next.validate().map(|()| next)
        },
        &mut restart,
    );
}
