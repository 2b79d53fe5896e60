//! The cloth demo: a 40 × 30 cloth of 0.5 kg particles joined by distance constraints hangs
//! from two corners, Δt = 0.01 s, 5 Gauss-Seidel iterations, g = −9.81 m/s², as on the
//! reference page.
//!
//! `cargo run --example cloth`. Drag particles with the left mouse button, pan by dragging
//! empty space, zoom with the wheel; the panel edits the settings live. Width, height and the
//! number of fixed particles restart the scene; the mass applies to the running cloth. Tick
//! "Tearable" and drag hard to tear it.

#[path = "common/mod.rs"]
mod common;

use bevy::prelude::*;
use bevy_egui::egui;
use bevy_pbd2d::egui_panel::widgets::field_row;
use bevy_pbd2d::egui_panel::{PanelSection, PbdPanel, PbdPanelAppExt, PbdRestart};
use bevy_pbd2d::prelude::*;
use bevy_pbd2d::render::{BodyFill, ClothMesh};

/// Largest cloth side the panel accepts (the builder allows up to 2000, which is 4 million
/// particles: far too many to run interactively).
const MAX_SIDE: u32 = 300;
/// The breaking strain of a tearable cloth: above the 37 % the reference settings leave at the
/// pinned corners at rest, below what a hard drag makes.
const TEAR_STRAIN: f32 = 0.6;
/// Mass range the panel accepts (kg).
const MASS_RANGE: core::ops::RangeInclusive<f32> = 1e-6..=1e6;

/// The cloth the scene is (re)built from.
#[derive(Resource, Default)]
struct ClothScene {
    builder: ClothBuilder,
}

fn main() {
    let mut app = common::demo_app(&common::Demo {
        title: "bevy_pbd2d cloth",
        panel_title: "Position Based Dynamics",
        pixels_per_metre: 50.0,
        view_centre: Vec2::new(0.0, -4.0),
        time_step: 0.01,
    });
    app.world_mut().resource_mut::<PbdPanel>().fluid_rows = false;
    let mut solver = SolverSettings::default();
    solver.set_iterations(5).expect("5 iterations are valid");
    app.insert_resource(solver)
        .insert_resource(Gravity(Vec2::new(0.0, -9.81)))
        .init_resource::<ClothScene>()
        .add_pbd_panel_rows(PanelSection::Scene, scene_rows)
        .add_pbd_panel_rows(PanelSection::Settings, mass_row);
    common::add_scene(&mut app, spawn_cloth).run();
}

fn spawn_cloth(mut commands: Commands, scene: Res<ClothScene>, textures: Res<common::Textures>) {
    match scene.builder.spawn(&mut commands) {
        // Woven tartan, once over the cloth.
        Ok(cloth) => {
            commands
                .entity(cloth.root)
                .insert(ClothMesh::new(BodyFill::Texture {
                    image: textures.cloth.clone(),
                    tint: Color::WHITE,
                }));
        }
        Err(error) => error!("cannot build the cloth: {error}"),
    }
}

/// Width, height and # fixed particles: each change rebuilds the cloth.
fn scene_rows(
    InMut(ui): InMut<egui::Ui>,
    mut scene: ResMut<ClothScene>,
    mut restart: MessageWriter<PbdRestart>,
) {
    let builder = scene.builder;
    common::size_rows(
        ui,
        &mut scene.builder,
        (builder.width, builder.height),
        MAX_SIDE,
        |b, width, height| {
            let next = ClothBuilder { width, height, ..b };
            next.validate().map(|()| next)
        },
        &mut restart,
    );
    ui.label("# fixed particles");
    let mut fixed = builder.fixed;
    egui::ComboBox::from_id_salt("fixed particles")
        .selected_text(fixed.count().to_string())
        .show_ui(ui, |ui| {
            for option in [FixedCorners::One, FixedCorners::Two, FixedCorners::Four] {
                ui.selectable_value(&mut fixed, option, option.count().to_string());
            }
        });
    ui.end_row();
    if fixed != builder.fixed {
        scene.builder.fixed = fixed;
        restart.write(PbdRestart);
    }
    ui.label("Long-range attachments");
    let mut tethers = builder.long_range_attachments;
    ui.checkbox(&mut tethers, "").on_hover_text(
        "Tether every particle to the pinned corners: no stretching under its own weight",
    );
    ui.end_row();
    if tethers != builder.long_range_attachments {
        scene.builder.long_range_attachments = tethers;
        restart.write(PbdRestart);
    }
    ui.label("Tearable");
    let mut tearable = builder.breaking_strain.is_some();
    ui.checkbox(&mut tearable, "").on_hover_text(format!(
        "Constraints break when stretched past {:.0} %: drag hard to tear",
        TEAR_STRAIN * 100.0
    ));
    ui.end_row();
    if tearable != builder.breaking_strain.is_some() {
        scene.builder.breaking_strain = tearable.then_some(TEAR_STRAIN);
        restart.write(PbdRestart);
    }
}

/// The particle mass, applied live to every non-pinned particle of the cloth, through its root.
fn mass_row(
    InMut(ui): InMut<egui::Ui>,
    mut scene: ResMut<ClothScene>,
    mut bodies: ParticleBodies,
    cloths: Query<Entity, With<ClothGrid>>,
) {
    let mass = scene.builder.mass;
    field_row(ui, "Mass (kg)", mass, |mass: f32| {
        InverseMass::from_mass(mass).map_err(|e| e.to_string())?;
        if !MASS_RANGE.contains(&mass) {
            return Err(format!(
                "mass must be between {} and {} kg (got {mass})",
                MASS_RANGE.start(),
                MASS_RANGE.end()
            ));
        }
        for cloth in &cloths {
            bodies
                .set_particle_mass(cloth, mass)
                .map_err(|e| e.to_string())?;
        }
        scene.builder.mass = mass;
        Ok(())
    });
}
