//! The panel's generic egui widgets: rows of a two-column grid, and a text field that refuses
//! bad input with a message instead of applying it. UI helpers for apps that add rows to the
//! panel, not physics API.

use core::fmt::Display;
use core::hash::Hash;
use core::str::FromStr;

use bevy_egui::egui;

/// A row with a label and a read-only value.
pub fn label_row(ui: &mut egui::Ui, label: &str, value: impl Into<egui::WidgetText>) {
    ui.label(label);
    ui.label(value);
    ui.end_row();
}

/// A row with a label and a checkbox showing `on`, with `hover` as its tooltip; returns the
/// box's state after this frame's clicks (the caller applies a change).
pub fn check_row(ui: &mut egui::Ui, label: &str, on: bool, hover: &str) -> bool {
    ui.label(label);
    let mut checked = on;
    ui.checkbox(&mut checked, "").on_hover_text(hover);
    ui.end_row();
    checked
}

/// A value a [`value_field`] can parse and show.
pub trait FieldValue: Copy + PartialEq + Display + FromStr + Send + Sync + 'static {
    /// How the value is described when the text does not parse, e.g. "number".
    const KIND: &'static str;
}

impl FieldValue for f32 {
    const KIND: &'static str = "number";
}
impl FieldValue for f64 {
    const KIND: &'static str = "number";
}
impl FieldValue for u32 {
    const KIND: &'static str = "whole number ≥ 0";
}
impl FieldValue for usize {
    const KIND: &'static str = "whole number ≥ 0";
}
impl FieldValue for i32 {
    const KIND: &'static str = "whole number";
}

/// What a [`value_field`] did this frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldOutcome {
    /// Nothing was committed.
    Idle,
    /// The entered value was parsed and `apply` accepted it.
    Applied,
    /// The entered text did not parse or `apply` refused it; the old value is kept.
    Refused,
}

/// Per-field state kept in egui's memory: the text being edited and the last error.
#[derive(Debug, Clone, Default)]
struct FieldState {
    text: String,
    error: Option<String>,
    /// The text was edited since the last commit.
    dirty: bool,
    initialized: bool,
}

/// Width of a text field (logical px).
const FIELD_WIDTH: f32 = 80.0;

/// A text field for a value: shows `current`, keeps the user's text while they type, and when
/// the field loses focus (or Enter is pressed) after an edit, parses it and calls `apply`.
/// On a parse error or an `Err` from `apply` the old value stays in effect and a red message
/// (the error and the kept value) is shown next to the field until the next successful entry.
/// `id_salt` must be unique within the parent `ui`.
pub fn value_field<T: FieldValue, E: Display>(
    ui: &mut egui::Ui,
    id_salt: impl Hash,
    current: T,
    apply: impl FnOnce(T) -> Result<(), E>,
) -> FieldOutcome {
    let id = ui.make_persistent_id(id_salt);
    let mut state = ui
        .data_mut(|d| d.get_temp::<FieldState>(id))
        .unwrap_or_default();
    if !state.initialized {
        state.text = current.to_string();
        state.initialized = true;
    }
    let mut outcome = FieldOutcome::Idle;
    ui.horizontal(|ui| {
        let response =
            ui.add(egui::TextEdit::singleline(&mut state.text).desired_width(FIELD_WIDTH));
        if response.changed() {
            state.dirty = true;
        }
        if response.lost_focus() && state.dirty {
            state.dirty = false;
            let text = state.text.trim().to_owned();
            outcome = match text.parse::<T>() {
                Ok(value) => match apply(value) {
                    Ok(()) => {
                        state.error = None;
                        state.text = value.to_string();
                        FieldOutcome::Applied
                    }
                    Err(error) => {
                        state.error = Some(format!("{error}; keeping {current}"));
                        FieldOutcome::Refused
                    }
                },
                Err(_) => {
                    state.error = Some(format!(
                        "\"{text}\" is not a {}; keeping {current}",
                        T::KIND
                    ));
                    FieldOutcome::Refused
                }
            };
        } else if !response.has_focus() && !state.dirty && state.error.is_none() {
            let now = current.to_string();
            if state.text != now {
                state.text = now;
            }
        }
        if let Some(error) = &state.error {
            ui.colored_label(egui::Color32::RED, error);
        }
    });
    ui.data_mut(|d| d.insert_temp(id, state));
    outcome
}

/// A grid row: `label` and a [`value_field`] (salted with the label), then `end_row`.
pub fn field_row<T: FieldValue, E: Display>(
    ui: &mut egui::Ui,
    label: &str,
    current: T,
    apply: impl FnOnce(T) -> Result<(), E>,
) -> FieldOutcome {
    ui.label(label);
    let outcome = value_field(ui, label, current, apply);
    ui.end_row();
    outcome
}
