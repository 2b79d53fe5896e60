//! The panel's "Look" rows (features `egui` and `render`): the switch between the game look
//! ([`PbdRender`]) and the reference dots and lines (`PbdDebugRender`, feature
//! `debug_render`), and the [`FluidSurfaceSettings`] fields of the look (all but `z`, `layer`
//! and `camera`, which belong to the game's scene) and the liquids' colours, each refused with
//! a message when out of its range.

use bevy::prelude::*;
use bevy_egui::egui;

use super::widgets::field_row;
use crate::render::{FluidSurface, FluidSurfaceSettings, PbdRender};

/// Which look the panel's switch shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    Game,
    Reference,
}

/// An egui colour button for a Bevy colour; `true` when it was changed.
fn colour_row(ui: &mut egui::Ui, label: &str, color: &mut Color) -> bool {
    ui.label(label);
    let [r, g, b, a] = color.to_srgba().to_u8_array();
    let mut edited = egui::Color32::from_rgba_unmultiplied(r, g, b, a);
    let changed = ui.color_edit_button_srgba(&mut edited).changed();
    ui.end_row();
    if changed {
        let [r, g, b, a] = edited.to_srgba_unmultiplied();
        *color = Color::srgba_u8(r, g, b, a);
    }
    changed
}

/// A settings field: the edited copy is taken only if it validates.
fn surface_field(
    ui: &mut egui::Ui,
    settings: &mut FluidSurfaceSettings,
    label: &str,
    field: fn(&mut FluidSurfaceSettings) -> &mut f32,
) {
    let current = *field(&mut settings.clone());
    field_row(ui, label, current, |value: f32| {
        let mut edited = settings.clone();
        *field(&mut edited) = value;
        edited.validate()?;
        *settings = edited;
        Ok::<(), crate::error::PbdError>(())
    });
}

/// The "Look" rows.
pub(super) fn look_rows(
    InMut(ui): InMut<egui::Ui>,
    mut render: ResMut<PbdRender>,
    #[cfg(feature = "debug_render")] debug: Option<ResMut<crate::debug_render::PbdDebugRender>>,
    surface: Option<ResMut<FluidSurfaceSettings>>,
    mut liquids: Query<&mut FluidSurface>,
    panel: Res<super::PbdPanel>,
) {
    let look = if render.enabled {
        Look::Game
    } else {
        Look::Reference
    };
    let mut chosen = look;
    ui.label("Look");
    ui.horizontal(|ui| {
        ui.radio_value(&mut chosen, Look::Game, "game");
        ui.radio_value(&mut chosen, Look::Reference, "dots and lines");
    });
    ui.end_row();
    if chosen != look {
        render.enabled = chosen == Look::Game;
        #[cfg(feature = "debug_render")]
        if let Some(mut debug) = debug {
            debug.enabled = chosen == Look::Reference;
        }
    }
    let Some(mut surface) = surface.filter(|_| panel.fluid_rows && render.enabled) else {
        return;
    };
    // Edit a copy, so that the resource changes only when a value was taken.
    let mut edited = surface.clone();
    if let Some(mut first) = liquids.iter_mut().next() {
        let mut color = first.color;
        if colour_row(ui, "Liquid colour", &mut color) {
            first.color = color;
            for mut liquid in liquids.iter_mut() {
                liquid.color = color;
            }
        }
    }
    surface_field(ui, &mut edited, "Kernel (radii)", |s| &mut s.kernel_scale);
    surface_field(ui, &mut edited, "Threshold", |s| &mut s.threshold);
    surface_field(ui, &mut edited, "Opacity", |s| &mut s.opacity);
    surface_field(ui, &mut edited, "Resolution", |s| &mut s.resolution_scale);
    surface_field(ui, &mut edited, "Depth (m)", |s| &mut s.depth);
    surface_field(ui, &mut edited, "Deep tint", |s| &mut s.deep_strength);
    colour_row(ui, "Deep colour", &mut edited.deep_color);
    surface_field(ui, &mut edited, "Edge", |s| &mut s.edge_strength);
    surface_field(ui, &mut edited, "Edge width (radii)", |s| {
        &mut s.edge_width_scale
    });
    colour_row(ui, "Edge colour", &mut edited.edge_color);
    surface_field(ui, &mut edited, "Foam", |s| &mut s.foam_strength);
    surface_field(ui, &mut edited, "Foam radius (radii)", |s| {
        &mut s.foam_radius_scale
    });
    colour_row(ui, "Foam colour", &mut edited.foam_color);
    if edited != *surface {
        *surface = edited;
    }
}
