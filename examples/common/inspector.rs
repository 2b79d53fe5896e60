//! The demos' world inspector (F1): bevy-inspector-egui's views of entities, resources and
//! assets, with the members of a body listed under its root instead of at the top level.
//!
//! bevy-inspector-egui's own `WorldInspectorPlugin` lists every entity without a `ChildOf`;
//! particles and constraints relate to their body with `ParticleOf` and `ConstraintOf` (see
//! `bevy_pbd2d::body` for why not `ChildOf`), so a cloth would be ~5 800 rows. Here the top
//! level leaves them out; a body root opens into its components, whose `BodyParticles` and
//! `BodyConstraints` list its members, each opening into its own components.

use bevy::ecs::resource::IsResource;
use bevy::prelude::*;
use bevy_egui::{EguiContext, EguiPrimaryContextPass, PrimaryEguiContext, egui};
use bevy_inspector_egui::DefaultInspectorConfigPlugin;
use bevy_inspector_egui::bevy_inspector::{self, Filter};
use bevy_pbd2d::prelude::{ConstraintOf, ParticleOf};

/// The F1 inspector window (hidden at start unless `PBD2D_INSPECTOR=1`).
pub struct BodyInspectorPlugin;

impl Plugin for BodyInspectorPlugin {
    fn build(&self, app: &mut App) {
        if !app.is_plugin_added::<DefaultInspectorConfigPlugin>() {
            app.add_plugins(DefaultInspectorConfigPlugin);
        }
        let shown = std::env::var("PBD2D_INSPECTOR").is_ok_and(|v| v.trim() == "1");
        app.insert_resource(InspectorShown(shown))
            .add_systems(Update, toggle_inspector)
            .add_systems(
                EguiPrimaryContextPass,
                inspector_window.run_if(|shown: Res<InspectorShown>| shown.0),
            );
    }
}

/// Whether the world inspector is shown.
#[derive(Resource)]
struct InspectorShown(bool);

fn toggle_inspector(keys: Res<ButtonInput<KeyCode>>, mut shown: ResMut<InspectorShown>) {
    if keys.just_pressed(KeyCode::F1) {
        shown.0 = !shown.0;
    }
}

/// The entities listed at the top level: roots of the `ChildOf` hierarchy that are not members
/// of a body.
type TopLevel = (
    Without<ChildOf>,
    Without<IsResource>,
    Without<ParticleOf>,
    Without<ConstraintOf>,
);

fn inspector_window(world: &mut World) {
    let Ok(context) = world
        .query_filtered::<&mut EguiContext, With<PrimaryEguiContext>>()
        .single(world)
    else {
        return;
    };
    let mut context = context.clone();
    let context = context.get_mut();
    // At the right edge, clear of the settings panel on the left.
    let right = context.content_rect().right() - 12.0;
    egui::Window::new("World Inspector")
        .default_size((360.0, 560.0))
        .pivot(egui::Align2::RIGHT_TOP)
        .default_pos((right, 12.0))
        .show(context, |ui| {
            egui::ScrollArea::both().show(ui, |ui| {
                egui::CollapsingHeader::new("Entities")
                    .default_open(true)
                    .show(ui, |ui| {
                        let filter =
                            Filter::<TopLevel>::from_ui_fuzzy(ui, egui::Id::new("pbd entities"));
                        bevy_inspector::ui_for_entities_filtered(world, ui, true, &filter);
                    });
                egui::CollapsingHeader::new("Resources")
                    .show(ui, |ui| bevy_inspector::ui_for_resources(world, ui));
                egui::CollapsingHeader::new("Assets")
                    .show(ui, |ui| bevy_inspector::ui_for_all_assets(world, ui));
                ui.allocate_space(ui.available_size());
            });
        });
}
