//! What the demos share, written once: the window and plugins, the pan/zoom camera with zoom
//! toward the cursor, the egui panel and scene restarts, the optional world inspector (F1,
//! [`inspector`]), the textures ([`textures`]), the `PBD2D_EXIT_AFTER_FRAMES` /
//! `PBD2D_SCREENSHOT` environment variables and a headless run of the scene for timing
//! (`PBD2D_HEADLESS_STEPS`, [`headless`]). `PBD2D_INSPECTOR=1` opens the inspector at start,
//! `PBD2D_LOOK=reference` starts with the reference pages' dots and lines instead of the game
//! look.
//!
//! Controls: drag a particle with the left mouse button; drag empty space to pan; the mouse
//! wheel (or `+` / `-`) zooms toward the cursor; W A S D pan; F1 toggles the world inspector.

mod headless;
mod inspector;
mod textures;

use std::path::PathBuf;

use bevy::camera_controller::pan_camera::{PanCamera, PanCameraPlugin};
use bevy::diagnostic::{DiagnosticsStore, FrameTimeDiagnosticsPlugin};
use bevy::ecs::system::ScheduleSystem;
use bevy::input::InputSystems;
use bevy::input::mouse::{AccumulatedMouseScroll, MouseScrollUnit};
use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured, save_to_disk};
use bevy::window::{PrimaryWindow, WindowResolution};
use bevy_egui::EguiPlugin;
use bevy_egui::egui;
use bevy_egui::input::EguiWantsInput;
use bevy_pbd2d::debug_render::PbdDebugRender;
use bevy_pbd2d::egui_panel::widgets::field_row;
use bevy_pbd2d::egui_panel::{PbdPanel, PbdPanelPlugin, PbdRestart, mean_step_time};
use bevy_pbd2d::fluid::FluidSettings;
use bevy_pbd2d::prelude::*;
use bevy_pbd2d::render::PbdRender;
use bevy_pbd2d::render::fluid::FluidSplats;

pub use textures::Textures;

/// How a demo starts.
pub struct Demo {
    /// Window title.
    pub title: &'static str,
    /// Title of the egui panel.
    pub panel_title: &'static str,
    /// Initial zoom (logical pixels per metre).
    pub pixels_per_metre: f32,
    /// Initial world point at the window centre (m).
    pub view_centre: Vec2,
    /// Simulation step Δt (s).
    pub time_step: f32,
}

/// The initial view, read by [`spawn_camera`].
#[derive(Resource, Clone, Copy)]
struct InitialView {
    pixels_per_metre: f32,
    centre: Vec2,
}

/// Builds the app every demo starts from: window, `PbdPlugins` (simulation, picking, gizmo
/// drawing), egui with the bevy_pbd2d panel, a pan/zoom 2D camera, the F1 world inspector and
/// the exit/screenshot environment variables. The demo adds its scene and panel rows.
pub fn demo_app(demo: &Demo) -> App {
    let exit = ExitAfter::from_env();
    let headless = headless::steps_from_env();
    let mut app = App::new();
    match headless {
        Some(steps) => {
            app.add_plugins(headless::default_plugins());
            headless::add(&mut app, steps, demo.time_step);
        }
        None => {
            app.add_plugins(DefaultPlugins.set(WindowPlugin {
                primary_window: Some(Window {
                    title: demo.title.into(),
                    resolution: WindowResolution::new(1280, 800),
                    ..default()
                }),
                ..default()
            }));
        }
    }
    app.insert_resource(ClearColor(Color::srgb_u8(0xEE, 0xEE, 0xEE)))
        .add_plugins((
            EguiPlugin::default(),
            FrameTimeDiagnosticsPlugin::default(),
            PanCameraPlugin,
            PbdPlugins::default(),
            PbdPanelPlugin,
        ))
        .add_plugins(inspector::BodyInspectorPlugin)
        .insert_resource(InitialView {
            pixels_per_metre: demo.pixels_per_metre,
            centre: demo.view_centre,
        })
        .insert_resource(exit)
        .init_resource::<Textures>()
        .add_systems(Startup, spawn_camera)
        .add_systems(
            PreUpdate,
            (yield_input_to_egui, zoom).chain().after(InputSystems),
        )
        .add_systems(
            PostUpdate,
            zoom_to_cursor.before(TransformSystems::Propagate),
        )
        .add_systems(Last, (report_water_area, exit_after_frames).chain());
    let world = app.world_mut();
    set_time_step(&mut world.resource_mut::<Time<Fixed>>(), demo.time_step)
        .expect("the demo's time step is valid");
    world.resource_mut::<PbdPanel>().title = demo.panel_title.into();
    // The game look (meshes, the fluid surface), or the reference pages' dots and lines.
    let reference = std::env::var("PBD2D_LOOK").is_ok_and(|look| look == "reference");
    world.resource_mut::<PbdRender>().enabled = !reference;
    world.resource_mut::<PbdDebugRender>().enabled = reference;
    app
}

/// What a scene draws besides its bodies (walls, ground): despawned with them on restart.
#[derive(Component, Debug, Default)]
pub struct SceneDecor;

/// What a restart despawns: bodies and decor.
type InScene = Or<(With<ParticleBody>, With<SceneDecor>)>;

/// Despawns every body (its root, and with it its particles, constraints and boundary
/// samples) and the scene's decor: the first half of a restart.
pub fn despawn_scene(mut commands: Commands, bodies: Query<Entity, InScene>) {
    for body in &bodies {
        commands.entity(body).despawn();
    }
}

/// Remembers the zoom of the last frame, to keep the point under the cursor fixed on zoom.
#[derive(Component, Default)]
struct ZoomToCursor {
    last_scale: Option<f32>,
}

fn spawn_camera(mut commands: Commands, view: Res<InitialView>) {
    commands.spawn((
        Camera2d,
        Projection::Orthographic(OrthographicProjection {
            scale: 1.0 / view.pixels_per_metre,
            ..OrthographicProjection::default_2d()
        }),
        Transform::from_translation(view.centre.extend(0.0)),
        PanCamera {
            // The zoom factor multiplies the projection scale: 0.05 = 20× closer, 20 = 20×
            // farther. `zoom` below changes it; PanCamera's own zoom is linear (0.1 per wheel
            // line: from 1 to its minimum in a few notches), so it is switched off.
            min_zoom: 0.05,
            max_zoom: 20.0,
            zoom_speed: 0.0,
            key_zoom_in: None,
            key_zoom_out: None,
            // 500 logical pixels per second at the initial zoom.
            pan_speed: 500.0 / view.pixels_per_metre,
            key_rotate_ccw: None,
            key_rotate_cw: None,
            ..default()
        },
        ZoomToCursor::default(),
    ));
}

/// Zoom factor per wheel line (one notch of a usual mouse wheel).
const ZOOM_PER_LINE: f32 = 1.1;
/// Zoom factor per second while `+` or `-` is held.
const ZOOM_PER_SECOND: f32 = 3.0;

/// Multiplicative zoom: each wheel line scales the view by [`ZOOM_PER_LINE`], `+` / `-` by
/// [`ZOOM_PER_SECOND`] per second. Writes `PanCamera::zoom_factor`, which PanCamera applies to
/// the camera's scale; [`zoom_to_cursor`] then keeps the point under the cursor in place.
fn zoom(
    scroll: Res<AccumulatedMouseScroll>,
    keys: Res<ButtonInput<KeyCode>>,
    time: Res<Time<Real>>,
    mut cameras: Query<&mut PanCamera>,
) {
    let lines = match scroll.unit {
        MouseScrollUnit::Line => scroll.delta.y,
        MouseScrollUnit::Pixel => scroll.delta.y / MouseScrollUnit::SCROLL_UNIT_CONVERSION_FACTOR,
    };
    let held = |a: KeyCode, b: KeyCode| keys.pressed(a) || keys.pressed(b);
    let mut seconds = 0.0;
    if held(KeyCode::Equal, KeyCode::NumpadAdd) {
        seconds += time.delta_secs();
    }
    if held(KeyCode::Minus, KeyCode::NumpadSubtract) {
        seconds -= time.delta_secs();
    }
    if lines == 0.0 && seconds == 0.0 {
        return;
    }
    // Scrolling up / `+` zooms in, i.e. makes the factor (world units per pixel) smaller.
    let factor = ZOOM_PER_LINE.powf(-lines) * ZOOM_PER_SECOND.powf(-seconds);
    for mut camera in &mut cameras {
        if camera.enabled {
            camera.zoom_factor =
                (camera.zoom_factor * factor).clamp(camera.min_zoom, camera.max_zoom);
        }
    }
}

/// `PanCamera` zooms about the window centre; this moves the camera afterwards so that the
/// world point under the cursor stays under the cursor (as in map viewers).
fn zoom_to_cursor(
    window: Query<&Window, With<PrimaryWindow>>,
    mut cameras: Query<(&mut Transform, &Projection, &Camera, &mut ZoomToCursor)>,
) {
    let cursor = window.single().ok().and_then(Window::cursor_position);
    for (mut transform, projection, camera, mut zoom) in &mut cameras {
        let scale = transform.scale.x;
        let Some(last) = zoom.last_scale.replace(scale) else {
            continue;
        };
        if last == scale {
            continue;
        }
        let (Some(cursor), Projection::Orthographic(ortho), Some(viewport)) =
            (cursor, projection, camera.logical_viewport_rect())
        else {
            continue;
        };
        let offset = cursor - viewport.center();
        let offset = Vec3::new(offset.x, -offset.y, 0.0) * ortho.scale * (last - scale);
        let shift = transform.rotation * offset;
        transform.translation += shift;
    }
}

/// While egui uses the mouse or keyboard (the pointer is over the panel, a field has focus),
/// the camera ignores them: typing "-9.81" must not zoom out, scrolling the panel must not zoom.
fn yield_input_to_egui(wants: Option<Res<EguiWantsInput>>, mut cameras: Query<&mut PanCamera>) {
    let busy = wants.is_some_and(|w| w.wants_any_input());
    for mut camera in &mut cameras {
        if camera.enabled == busy {
            camera.enabled = !busy;
        }
    }
}

/// `PBD2D_EXIT_AFTER_FRAMES=N`: exit with status 0 after N frames; with
/// `PBD2D_SCREENSHOT=path.png` the primary window is saved there first.
#[derive(Resource, Default)]
struct ExitAfter {
    frames: Option<u32>,
    screenshot: Option<PathBuf>,
    frame: u32,
}

/// Frames to wait for a requested screenshot before giving up.
const SCREENSHOT_TIMEOUT_FRAMES: u32 = 600;

impl ExitAfter {
    fn from_env() -> Self {
        let frames = number_from_env("PBD2D_EXIT_AFTER_FRAMES", "frames", 0);
        let screenshot = std::env::var_os("PBD2D_SCREENSHOT").map(PathBuf::from);
        if let Some(path) = &screenshot {
            if frames.is_none() {
                warn!("PBD2D_SCREENSHOT is only used together with PBD2D_EXIT_AFTER_FRAMES");
            }
            // A stale file must not pass for this run's screenshot.
            let _ = std::fs::remove_file(path);
        }
        Self {
            frames,
            screenshot,
            frame: 0,
        }
    }
}

/// The whole number (at least `least`) the environment variable `name` holds, counting
/// `unit`; `None` when it is not set.
///
/// # Panics
/// When it is set to anything else: a demo run with a mistyped variable stops with this
/// message instead of running with a default.
fn number_from_env(name: &str, unit: &str, least: u32) -> Option<u32> {
    let value = std::env::var(name).ok()?;
    match value.trim().parse::<u32>() {
        Ok(n) if n >= least => Some(n),
        _ => panic!("{name} must be a whole number of {unit}, >= {least}, got {value:?}"),
    }
}

/// On the last frame of a smoke run: the area (physical pixels) the fluid particles in view
/// cover at rest, (2r)² each, counting those whose centres are in the window and not under
/// the panel, when the fluid surface draws them. The smoke test compares it with the water in
/// the screenshot.
fn report_water_area(
    state: Res<ExitAfter>,
    splats: Option<Res<FluidSplats>>,
    settings: Option<Res<FluidSettings>>,
    panel: Res<PbdPanel>,
    cameras: Query<(&Camera, &GlobalTransform)>,
    fluid: Query<(&Position, Option<&FluidPhase>), With<FluidParticle>>,
) {
    if state.frames != Some(state.frame + 1) || splats.is_none_or(|s| s.drawn() == 0) {
        return;
    }
    let r = settings.map_or(FluidSettings::default().particle_radius, |s| {
        s.particle_radius
    });
    let Some((camera, at)) = cameras.iter().find(|(c, _)| c.is_active && c.order == 0) else {
        return;
    };
    let (Some(viewport), Ok(origin), Ok(metre)) = (
        camera.logical_viewport_rect(),
        camera.world_to_viewport(at, Vec3::ZERO),
        camera.world_to_viewport(at, Vec3::X),
    ) else {
        return;
    };
    let physical = camera.target_scaling_factor().unwrap_or(1.0) * origin.distance(metre);
    // Water only (no phase, or water's): the demos draw another phase's body (oil) in a
    // colour of its own, which the smoke test's count of blue pixels does not see.
    let visible = fluid
        .iter()
        .filter(|(_, phase)| phase.is_none_or(|p| *p == FluidPhase::WATER))
        .filter_map(|(p, _)| camera.world_to_viewport(at, p.0.extend(0.0)).ok())
        .filter(|s| viewport.contains(*s) && !panel.window_rect.is_some_and(|w| w.contains(*s)))
        .count();
    let area = visible as f32 * (2.0 * r * physical).powi(2);
    info!("bevy_pbd2d: water_area_px={area:.0} (the water particles in view, (2r)² each)");
}

fn exit_after_frames(
    mut state: ResMut<ExitAfter>,
    stats: Res<PbdStats>,
    store: Option<Res<DiagnosticsStore>>,
    mut commands: Commands,
    mut exit: MessageWriter<AppExit>,
) {
    let Some(frames) = state.frames else {
        return;
    };
    state.frame += 1;
    if state.frame == frames {
        let frame_time = store
            .as_deref()
            .and_then(|s| s.get(&FrameTimeDiagnosticsPlugin::FRAME_TIME))
            .and_then(|d| d.average());
        info!(
            "bevy_pbd2d: frame {frames}: {} steps, simulated {:.2} s, {} particles, {} constraints, \
             time per sim. step {:.3} ms (mean of the last 50 steps), last step {:.3} ms, \
             frame time {:.1} ms (mean of the last 120 frames)",
            stats.steps,
            stats.sim_time,
            stats.particles,
            stats.constraints,
            mean_step_time(store.as_deref(), 50, stats.step_time_ms),
            stats.step_time_ms,
            frame_time.unwrap_or(f64::NAN),
        );
        let Some(path) = state.screenshot.clone() else {
            exit.write(AppExit::Success);
            return;
        };
        let mut save = save_to_disk(path.clone());
        commands.spawn(Screenshot::primary_window()).observe(
            move |captured: On<ScreenshotCaptured>, mut exit: MessageWriter<AppExit>| {
                save(captured);
                if path.exists() {
                    exit.write(AppExit::Success);
                } else {
                    error!("screenshot {} was not written", path.display());
                    exit.write(AppExit::error());
                }
            },
        );
    } else if state.frame > frames + SCREENSHOT_TIMEOUT_FRAMES {
        error!("no screenshot after {SCREENSHOT_TIMEOUT_FRAMES} frames; exiting");
        exit.write(AppExit::error());
    }
}

/// The "Width" and "Height" rows of a scene builder (both demos restart on them). A valid edit
/// (1 ..= `max` and accepted by `resize`, which returns the builder with the new size) replaces
/// `builder` and requests a restart; anything else is refused in the panel.
#[allow(dead_code, reason = "the playground has no size rows")]
pub fn size_rows<B: Copy>(
    ui: &mut egui::Ui,
    builder: &mut B,
    (width, height): (u32, u32),
    max: u32,
    resize: impl Fn(B, u32, u32) -> Result<B, PbdError>,
    restart: &mut MessageWriter<PbdRestart>,
) {
    let current = *builder;
    let side = |name: &str, value: u32| {
        if (1..=max).contains(&value) {
            Ok(value)
        } else {
            Err(format!("{name} must be between 1 and {max} (got {value})"))
        }
    };
    let mut apply = |w: u32, h: u32| -> Result<(), String> {
        *builder = resize(current, w, h).map_err(|e| e.to_string())?;
        restart.write(PbdRestart);
        Ok(())
    };
    field_row(ui, "Width", width, |w: u32| {
        apply(side("width", w)?, height)
    });
    field_row(ui, "Height", height, |h: u32| {
        apply(width, side("height", h)?)
    });
}

/// Spawns the scene with `spawn` at start-up, and again after despawning the old one whenever
/// the panel sends [`PbdRestart`].
pub fn add_scene<M>(
    app: &mut App,
    spawn: impl IntoScheduleConfigs<ScheduleSystem, M> + Copy,
) -> &mut App {
    app.add_systems(Startup, spawn).add_systems(
        Update,
        (despawn_scene, spawn)
            .chain()
            .run_if(on_message::<PbdRestart>),
    )
}
