//! The fluid demo: a dam break. A 30 × 30 block of Position Based Fluids particles collapses in
//! a box of boundary samples, Δt = 0.005 s, with the reference page's fluid settings.
//!
//! `cargo run --example fluid`. Drag particles with the left mouse button, pan by dragging
//! empty space, zoom with the wheel; the panel edits the settings live. Width and height
//! restart the scene (`PBD2D_FLUID_BLOCK=100x100` starts with 10 000 particles).

#[path = "common/mod.rs"]
mod common;

use bevy::prelude::*;
use bevy_egui::egui;
use bevy_pbd2d::egui_panel::{PanelSection, PbdPanel, PbdPanelAppExt, PbdRestart};
use bevy_pbd2d::prelude::*;
use bevy_pbd2d::render::FluidSurface;

/// Largest block side the panel accepts (the builder allows up to 2000, 4 million particles:
/// far too many to run interactively).
const MAX_SIDE: u32 = 200;

/// The dam break the scene is (re)built from.
#[derive(Resource)]
struct FluidScene {
    builder: DamBreakBuilder,
}

impl Default for FluidScene {
    /// The reference 30 × 30, or `PBD2D_FLUID_BLOCK=WxH` (e.g. `100x100`, 10 000 particles).
    fn default() -> Self {
        let mut builder = DamBreakBuilder::default();
        if let Ok(block) = std::env::var("PBD2D_FLUID_BLOCK") {
            let size = block
                .split_once('x')
                .and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)));
            match size {
                Some((width, height))
                    if (1..=MAX_SIDE).contains(&width) && (1..=MAX_SIDE).contains(&height) =>
                {
                    builder.width = width;
                    builder.height = height;
                }
                _ => panic!(
                    "PBD2D_FLUID_BLOCK must be WxH with sides 1 ..= {MAX_SIDE}, got {block:?}"
                ),
            }
        }
        Self { builder }
    }
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
    match scene.builder.spawn(&mut commands, &settings) {
        Ok(dam) => {
            commands.entity(dam.root).insert(FluidSurface::default());
            spawn_walls(&mut commands, &scene.builder, &settings);
        }
        Err(error) => error!("cannot build the dam break: {error}"),
    }
}

/// The box drawn as four stone slabs whose inner faces are r inside the sample lines, where
/// the fluid ends (in front of the water, which never reaches them).
fn spawn_walls(commands: &mut Commands, builder: &DamBreakBuilder, settings: &FluidSettings) {
    let (lo, hi) = builder.box_bounds(settings);
    let r = settings.particle_radius;
    let thick = 6.0 * r;
    let (inner_lo, inner_hi) = (lo + r, hi - r);
    let (outer_lo, outer_hi) = (inner_lo - thick, inner_hi + thick);
    let slabs = [
        (outer_lo, Vec2::new(outer_hi.x, inner_lo.y)),
        (Vec2::new(outer_lo.x, inner_hi.y), outer_hi),
        (
            Vec2::new(outer_lo.x, inner_lo.y),
            Vec2::new(inner_lo.x, inner_hi.y),
        ),
        (
            Vec2::new(inner_hi.x, inner_lo.y),
            Vec2::new(outer_hi.x, inner_hi.y),
        ),
    ];
    for (a, b) in slabs {
        commands.spawn((
            common::SceneDecor,
            Name::new("Wall"),
            Sprite::from_color(Color::srgb_u8(0x5A, 0x60, 0x6B), b - a),
            Transform::from_translation((0.5 * (a + b)).extend(1.0)),
        ));
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
