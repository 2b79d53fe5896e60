//! An egui panel with the reference demos' statistics and live settings (feature `egui`).
//!
//! [`PbdPanelPlugin`] shows a window (in `bevy_egui`'s [`EguiPrimaryContextPass`]) laid out like
//! the demos' side panels:
//!
//! | row | source |
//! |---|---|
//! | Current time (s) | [`PbdStats::sim_time`], reset by [`PbdRestart`] |
//! | Time per sim. step (ms) | mean wall time of the last [`PbdPanel::step_time_window`] steps (default 50, as the demos), from the [`STEP_TIME`] diagnostic |
//! | Simulation | "real time", or "slowed" with the frame's steps when the frame budget cut its time ([`PbdStats::slowed`], [`PbdFrameBudget`](crate::schedule::PbdFrameBudget)) |
//! | Required iterations, avg. density error | [`PbdStats`] (fluid rows) |
//! | # particles, # constraints | [`PbdStats`] |
//! | *scene rows* | added by the app, [`PanelSection::Scene`] |
//! | Time step size (s) | `Time<Fixed>` via [`set_time_step`] |
//! | Iterations, substeps, direct lines | [`SolverSettings::set_iterations`], [`SolverSettings::set_substeps`], [`SolverSettings::direct_lines`] (constraint rows) |
//! | Max. density error (%), max. iterations, viscosity, over-relaxation ω, Chebyshev ρ, re-sorts, grid projection, s_corr, vorticity ε, surface tension γ, adhesion β | [`FluidSettings`] setters (fluid rows) |
//! | Gravity (m/s²) | y component, [`Gravity::set`] |
//! | *settings rows* | added by the app, [`PanelSection::Settings`] |
//! | Restart, Pause, Step | writes [`PbdRestart`]; [`PbdClock`] pause/continue and one step while paused (the app's time goes on) |
//!
//! **Apps add their own rows** with [`PbdPanelAppExt::add_pbd_panel_rows`]: a system that takes
//! the panel's two-column grid as `InMut<egui::Ui>` and draws rows into it, typically with
//! [`widgets::field_row`] (a label and a validated text field) and [`widgets::label_row`]. **Restart** is a
//! message: the app reads [`PbdRestart`], despawns its particles and constraints and spawns
//! the scene again; the panel itself only resets the current time and the step-time mean.
//!
//! **Text fields** keep what the user types (the text is not overwritten while the field has
//! focus) and parse it when the field loses focus or Enter is pressed. A value that does not
//! parse, or that the setter refuses (0, negative, NaN, out of range …), is not applied: the
//! simulation keeps its old value and a red message next to the field says why. While a field
//! is not being edited and shows no error, it follows the current value, so changes made
//! elsewhere (an inspector, game code) appear in the panel.

use bevy::diagnostic::DiagnosticsStore;
use bevy::ecs::system::SystemId;
use bevy::prelude::*;
use bevy_egui::{EguiContext, EguiPrimaryContextPass, PrimaryEguiContext, egui};

#[cfg(feature = "render")]
mod look;
pub mod widgets;

use widgets::{check_row, field_row, label_row};

use crate::dynamics::settings::{Gravity, SolverSettings, set_time_step};
use crate::error::PbdError;
use crate::fluid::{ArtificialPressure, FluidSettings, GridProjection};
use crate::schedule::PbdClock;
use crate::stats::{PbdStats, STEP_TIME};

/// Adds the panel: the [`PbdPanel`] resource (if the app has not inserted one), the
/// [`PbdRestart`] message and the drawing system. Needs `bevy_egui`'s `EguiPlugin` and
/// [`PbdPlugins`](crate::PbdPlugins).
#[derive(Debug, Clone, Copy, Default)]
pub struct PbdPanelPlugin;

impl Plugin for PbdPanelPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<PbdPanel>()
            .init_resource::<PbdPanel>()
            .add_message::<PbdRestart>();
        let builtin = BuiltinRows {
            stats: app.register_system(stats_rows),
            settings: app.register_system(settings_rows),
            buttons: app.register_system(button_row),
            #[cfg(feature = "render")]
            look: app.register_system(look::look_rows),
        };
        app.insert_resource(builtin)
            .add_systems(Update, reset_on_restart)
            .add_systems(EguiPrimaryContextPass, show_panel);
    }
}

/// Written by the panel's Restart button (and by app rows that change the scene, e.g. its
/// size). The app handles it by despawning its particles, constraints and boundary samples and
/// spawning the scene again; the panel resets [`PbdStats::sim_time`] and the step-time mean.
#[derive(Message, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PbdRestart;

/// Where app rows go in the panel.
#[derive(Reflect, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PanelSection {
    /// After the statistics, before the built-in settings (the demos put width, height and
    /// the number of fixed particles here).
    Scene,
    /// After the built-in settings (the PBD demo puts the mass here).
    Settings,
}

/// A system that draws rows into the panel's grid.
pub type PanelRows = SystemId<InMut<'static, egui::Ui>>;

/// Configuration of the panel. Defaults: title "bevy_pbd2d", visible, all rows shown, time
/// step limited to 10⁻⁴ ..= 0.1 s and |gravity| to 1000 m/s², step-time mean over 50 steps.
#[derive(Resource, Reflect, Debug, Clone)]
#[reflect(Resource)]
pub struct PbdPanel {
    /// Window title.
    pub title: String,
    /// Whether the panel is shown.
    pub visible: bool,
    /// Show the distance-constraint rows (# constraints, iterations). Default `true`.
    pub constraint_rows: bool,
    /// Show the fluid rows (required iterations, density error, fluid settings). Default `true`.
    pub fluid_rows: bool,
    /// Smallest time step the panel accepts (s). Default 10⁻⁴: smaller steps cannot run in
    /// real time and stall the app while the fixed loop catches up.
    pub min_time_step: f32,
    /// Largest time step the panel accepts (s). Default 0.1.
    pub max_time_step: f32,
    /// Largest |gravity| the panel accepts (m/s²). Default 1000.
    pub max_gravity: f32,
    /// Number of recent steps averaged for "Time per sim. step". Default 50 (as the demos).
    pub step_time_window: usize,
    /// Where the panel's window was in the last frame (logical pixels), `None` while hidden:
    /// for apps that keep things from under it. Written by the panel.
    pub window_rect: Option<Rect>,
    #[reflect(ignore)]
    rows: Vec<(PanelSection, PanelRows)>,
}

impl Default for PbdPanel {
    fn default() -> Self {
        Self {
            title: "bevy_pbd2d".into(),
            visible: true,
            constraint_rows: true,
            fluid_rows: true,
            min_time_step: 1e-4,
            max_time_step: 0.1,
            max_gravity: 1000.0,
            step_time_window: 50,
            window_rect: None,
            rows: Vec::new(),
        }
    }
}

impl PbdPanel {
    /// Adds a registered row system to `section` (after the rows already there).
    pub fn add_rows(&mut self, section: PanelSection, rows: PanelRows) {
        self.rows.push((section, rows));
    }
}

/// Adds app rows to the panel.
pub trait PbdPanelAppExt {
    /// Registers `system` and draws its rows in `section` every frame. The system gets the
    /// panel's two-column [`egui::Grid`] as `InMut<egui::Ui>`; each row is a label, a widget
    /// and `ui.end_row()` (see [`field_row`]).
    fn add_pbd_panel_rows<M>(
        &mut self,
        section: PanelSection,
        system: impl IntoSystem<InMut<'static, egui::Ui>, (), M> + 'static,
    ) -> &mut Self;
}

impl PbdPanelAppExt for App {
    fn add_pbd_panel_rows<M>(
        &mut self,
        section: PanelSection,
        system: impl IntoSystem<InMut<'static, egui::Ui>, (), M> + 'static,
    ) -> &mut Self {
        let id = self.register_system(system);
        self.init_resource::<PbdPanel>();
        self.world_mut()
            .resource_mut::<PbdPanel>()
            .add_rows(section, id);
        self
    }
}

/// The panel's own row systems.
#[derive(Resource, Debug, Clone, Copy)]
struct BuiltinRows {
    stats: PanelRows,
    settings: PanelRows,
    buttons: PanelRows,
    /// The render feature's look switch and fluid surface settings.
    #[cfg(feature = "render")]
    look: PanelRows,
}

/// Runs one row system; logs (once per system) when it fails.
fn run_rows(world: &mut World, rows: PanelRows, ui: &mut egui::Ui) {
    if let Err(error) = world.run_system_with(rows, ui) {
        warn_once!("bevy_pbd2d panel: a row system failed: {error}");
    }
}

/// Draws the panel window.
fn show_panel(
    world: &mut World,
    contexts: &mut QueryState<&mut EguiContext, With<PrimaryEguiContext>>,
) {
    let Some(panel) = world.get_resource::<PbdPanel>() else {
        return;
    };
    if !panel.visible {
        if let Some(mut panel) = world.get_resource_mut::<PbdPanel>() {
            panel.window_rect = None;
        }
        return;
    }
    let title = panel.title.clone();
    let rows = panel.rows.clone();
    let Some(builtin) = world.get_resource::<BuiltinRows>().copied() else {
        return;
    };
    let Ok(mut context) = contexts.single_mut(world) else {
        return;
    };
    let ctx = context.get_mut().clone();
    let shown = egui::Window::new(title)
        .id(egui::Id::new("bevy_pbd2d_panel"))
        .default_pos([8.0, 8.0])
        .resizable(false)
        .show(&ctx, |ui| {
            egui::Grid::new("bevy_pbd2d_panel_grid")
                .num_columns(2)
                .spacing([12.0, 4.0])
                .show(ui, |ui| {
                    run_rows(world, builtin.stats, ui);
                    for &(_, id) in rows.iter().filter(|(s, _)| *s == PanelSection::Scene) {
                        run_rows(world, id, ui);
                    }
                    run_rows(world, builtin.settings, ui);
                    for &(_, id) in rows.iter().filter(|(s, _)| *s == PanelSection::Settings) {
                        run_rows(world, id, ui);
                    }
                });
            #[cfg(feature = "render")]
            if world.contains_resource::<crate::render::PbdRender>() {
                egui::CollapsingHeader::new("Look")
                    .default_open(false)
                    .show(ui, |ui| {
                        egui::Grid::new("bevy_pbd2d_look_grid")
                            .num_columns(2)
                            .spacing([12.0, 4.0])
                            .show(ui, |ui| run_rows(world, builtin.look, ui));
                    });
            }
            ui.add_space(4.0);
            run_rows(world, builtin.buttons, ui);
        });
    let rect = shown.map(|window| {
        let r = window.response.rect;
        Rect::new(r.min.x, r.min.y, r.max.x, r.max.y)
    });
    if let Some(mut panel) = world.get_resource_mut::<PbdPanel>()
        && panel.window_rect != rect
    {
        panel.window_rect = rect;
    }
}

/// Mean wall time (ms) of the last `window` steps, from the [`STEP_TIME`] diagnostic history
/// (which keeps the last 120 steps by default); `fallback` when there is no history yet.
pub fn mean_step_time(store: Option<&DiagnosticsStore>, window: usize, fallback: f32) -> f64 {
    let Some(diagnostic) = store.and_then(|s| s.get(&STEP_TIME)) else {
        return fallback as f64;
    };
    let n = diagnostic.history_len();
    let take = window.max(1).min(n);
    if take == 0 {
        return fallback as f64;
    }
    diagnostic.values().skip(n - take).sum::<f64>() / take as f64
}

fn stats_rows(
    InMut(ui): InMut<egui::Ui>,
    panel: Res<PbdPanel>,
    stats: Res<PbdStats>,
    store: Option<Res<DiagnosticsStore>>,
) {
    label_row(ui, "Current time", format!("{:.2} s", stats.sim_time));
    let mean = mean_step_time(store.as_deref(), panel.step_time_window, stats.step_time_ms);
    label_row(ui, "Time per sim. step", format!("{mean:.2} ms"));
    let pace = if stats.slowed {
        format!("slowed: {} steps per frame", stats.frame_steps)
    } else {
        "real time".to_owned()
    };
    label_row(ui, "Simulation", pace);
    if panel.fluid_rows {
        label_row(
            ui,
            "Required iterations",
            stats.fluid_iterations.to_string(),
        );
    }
    let particles = if stats.boundary_particles > 0 {
        format!(
            "{} (+ {} boundary)",
            stats.particles, stats.boundary_particles
        )
    } else {
        stats.particles.to_string()
    };
    label_row(ui, "# particles", particles);
    if panel.constraint_rows {
        label_row(ui, "# constraints", stats.constraints.to_string());
    }
    if panel.fluid_rows {
        label_row(
            ui,
            "Avg. density error",
            format!("{:.3} %", stats.avg_density_error_percent),
        );
    }
    if let Some(reason) = &stats.blocked {
        ui.label("");
        ui.colored_label(egui::Color32::RED, format!("Simulation halted: {reason}"));
        ui.end_row();
    }
}

fn settings_rows(
    InMut(ui): InMut<egui::Ui>,
    panel: Res<PbdPanel>,
    mut fixed: ResMut<Time<Fixed>>,
    mut solver: ResMut<SolverSettings>,
    fluid: Option<ResMut<FluidSettings>>,
    mut gravity: ResMut<Gravity>,
) {
    let dt = fixed.timestep().as_secs_f32();
    let (min_dt, max_dt) = (panel.min_time_step, panel.max_time_step);
    field_row(ui, "Time step size (s)", dt, |value: f32| {
        if value.is_finite() && value > 0.0 && !(min_dt..=max_dt).contains(&value) {
            return Err(format!(
                "time step must be between {min_dt} and {max_dt} s (got {value})"
            ));
        }
        set_time_step(&mut fixed, value).map_err(|e| e.to_string())
    });
    if panel.constraint_rows {
        let iterations = solver.iterations;
        field_row(ui, "Iterations", iterations, |value: u32| {
            solver.set_iterations(value)
        });
        let substeps = solver.substeps;
        field_row(ui, "Substeps", substeps, |value: u32| {
            solver.set_substeps(value)
        });
        let direct_lines = check_row(
            ui,
            "Direct lines",
            solver.direct_lines,
            "Solve the cloth's rows and columns exactly each sweep: a rigid cloth barely stretches",
        );
        if direct_lines != solver.direct_lines {
            solver.direct_lines = direct_lines;
        }
    }
    if let Some(mut fluid) = fluid.filter(|_| panel.fluid_rows) {
        let f = *fluid;
        field_row(
            ui,
            "Max. density error (%)",
            f.max_density_error_percent,
            |value: f32| fluid.set_max_density_error_percent(value),
        );
        field_row(ui, "Max. iterations", f.max_iterations, |value: u32| {
            fluid.set_max_iterations(value)
        });
        field_row(ui, "Viscosity", f.viscosity, |value: f32| {
            fluid.set_viscosity(value)
        });
        field_row(ui, "Over-relaxation ω", f.over_relaxation, |value: f32| {
            fluid.set_over_relaxation(value)
        });
        let rho = f.chebyshev.unwrap_or(0.0);
        field_row(ui, "Chebyshev ρ (0: off)", rho, |value: f32| {
            fluid.set_chebyshev((value != 0.0).then_some(value))
        });
        // Any count is valid (0: never).
        field_row(ui, "Re-sort rows every", f.resort_interval, |value: u32| {
            fluid.resort_interval = value;
            Ok::<(), PbdError>(())
        });
        let grid = check_row(
            ui,
            "Grid projection",
            f.grid_projection.is_some(),
            "A pressure solve on a grid before the density iterations: deep water meets the \
             tolerance in a few iterations. Off while avian bodies are pushed by the fluid; \
             ticking it sets the grid's defaults",
        );
        if grid != f.grid_projection.is_some() {
            fluid.grid_projection = grid.then(GridProjection::default);
        }
        let s_corr = check_row(
            ui,
            "Artificial pressure",
            f.artificial_pressure.is_some(),
            "s_corr: keeps fluid pairs apart at the surface and in spray, where the density \
             constraint does not act; ticking it sets its defaults",
        );
        if s_corr != f.artificial_pressure.is_some() {
            fluid.artificial_pressure = s_corr.then(ArtificialPressure::default);
        }
        field_row(
            ui,
            "Vorticity ε (m/s)",
            f.vorticity_confinement,
            |value: f32| fluid.set_vorticity_confinement(value),
        );
        field_row(ui, "Surface tension γ", f.surface_tension, |value: f32| {
            fluid.set_surface_tension(value)
        });
        field_row(ui, "Adhesion β", f.adhesion, |value: f32| {
            fluid.set_adhesion(value)
        });
    }
    let g = gravity.0;
    let max_g = panel.max_gravity;
    field_row(ui, "Gravity (m/s²)", g.y, |value: f32| {
        if value.is_finite() && value.abs() > max_g {
            return Err(format!(
                "|gravity| must be at most {max_g} m/s² (got {value})"
            ));
        }
        gravity
            .set(Vec2::new(g.x, value))
            .map_err(|e| e.to_string())
    });
}

fn button_row(
    InMut(ui): InMut<egui::Ui>,
    mut clock: ResMut<PbdClock>,
    mut restart: MessageWriter<PbdRestart>,
) {
    ui.horizontal(|ui| {
        if ui.button("Restart").clicked() {
            restart.write(PbdRestart);
        }
        let paused = clock.is_paused();
        if ui
            .button(if paused { "Continue" } else { "Pause" })
            .clicked()
        {
            clock.toggle();
        }
        if ui
            .add_enabled(paused, egui::Button::new("Step"))
            .on_hover_text("one simulation step")
            .clicked()
        {
            clock.step(1);
        }
    });
}

/// On [`PbdRestart`]: the current time starts again at 0 and the step-time mean forgets the
/// old scene.
fn reset_on_restart(
    mut restarts: MessageReader<PbdRestart>,
    mut stats: ResMut<PbdStats>,
    store: Option<ResMut<DiagnosticsStore>>,
) {
    if restarts.read().count() == 0 {
        return;
    }
    stats.sim_time = 0.0;
    if let Some(diagnostic) = store.and_then(|s| s.into_inner().get_mut(&STEP_TIME)) {
        diagnostic.clear_history();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with(values: &[f64]) -> DiagnosticsStore {
        let mut store = DiagnosticsStore::default();
        let mut diagnostic = bevy::diagnostic::Diagnostic::new(STEP_TIME);
        for &v in values {
            diagnostic.add_measurement(bevy::diagnostic::DiagnosticMeasurement {
                time: bevy::platform::time::Instant::now(),
                value: v,
            });
        }
        store.add(diagnostic);
        store
    }

    #[test]
    fn step_time_is_the_mean_of_the_last_window() {
        let values: Vec<f64> = (1..=60).map(f64::from).collect();
        let store = store_with(&values);
        // The last 50 of 1..=60 are 11..=60, mean 35.5.
        assert_eq!(mean_step_time(Some(&store), 50, 0.0), 35.5);
        assert_eq!(mean_step_time(Some(&store), 1, 0.0), 60.0);
        assert_eq!(mean_step_time(Some(&store_with(&[2.0, 4.0])), 50, 0.0), 3.0);
        assert_eq!(mean_step_time(Some(&store_with(&[])), 50, 7.0), 7.0);
        assert_eq!(mean_step_time(None, 50, 7.0), 7.0);
    }
}
