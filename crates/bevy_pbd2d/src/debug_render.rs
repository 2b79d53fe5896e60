//! Gizmo drawing of particles and constraints (feature `debug_render`), in the reference demos'
//! style:
//!
//! - distance constraints as grey lines (#666666),
//! - cloth and other non-fluid particles as blue dots (#0000FF, radius 0.025 m),
//! - fluid particles coloured by speed as in the PBF demo,
//!   hsl(225°, 100 %, 25 % + 50 % · min(‖v‖, 8 m/s) / 8 m/s),
//!   with the fluid's particle radius ([`FluidSettings::particle_radius`]),
//! - boundary samples grey (#888888),
//! - the particle being dragged ([`Dragged`](crate::picking::Dragged), feature `picking`) red
//!   and three times larger,
//! - the x axis (red) and y axis (green), 1 m long, at the origin.
//!
//! Everything is configured by the [`PbdDebugRender`] resource and drawn in one gizmo config
//! group, [`PbdGizmos`], whose line width is [`PbdDebugRender::line_width`] (1 px, as the demos'
//! canvas lines). Gizmos draw outlines only; a dot of radius R is filled with concentric rings
//! one line width apart. One group keeps the demos' draw order: Bevy draws a group's line
//! segments (constraints, axes) before its line strips (the rings), so dots lie on top of the
//! constraints, and the dragged particle, drawn last, on top of everything.

use bevy::camera::Camera;
use bevy::color::palettes::css;
use bevy::prelude::*;

use crate::constraints::distance::DistanceConstraint;
use crate::fluid::{BoundaryParticle, FluidParticle, FluidSettings};
use crate::particle::{Particle, Position, Velocity};

/// Draws particles, constraints and axes with gizmos every frame (in `PostUpdate`, before
/// gizmos are collected). Part of [`PbdPlugins`](crate::PbdPlugins) when the `debug_render`
/// feature is on. Needs Bevy's gizmo plugin (in `DefaultPlugins` with Bevy's `bevy_gizmos`
/// feature); without it (e.g. a headless app) it draws nothing. Configure it with
/// [`PbdDebugRender`].
#[derive(Debug, Clone, Copy, Default)]
pub struct PbdDebugRenderPlugin;

impl Plugin for PbdDebugRenderPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<PbdDebugRender>()
            .init_resource::<PbdDebugRender>();
    }

    /// After every plugin is built: draws only where Bevy's gizmos are set up (in
    /// `DefaultPlugins` with Bevy's `bevy_gizmos` feature); a headless app gets nothing to draw.
    fn finish(&self, app: &mut App) {
        if !app.is_plugin_added::<bevy::gizmos::GizmoPlugin>() {
            return;
        }
        app.init_gizmo_group::<PbdGizmos>().add_systems(
            PostUpdate,
            (
                update_line_width,
                draw_constraints,
                draw_axes,
                draw_particles,
            )
                .chain()
                .after(TransformSystems::Propagate)
                .run_if(|settings: Res<PbdDebugRender>| settings.enabled),
        );
    }
}

/// The gizmo config group everything is drawn in. Its line width is kept equal to
/// [`PbdDebugRender::line_width`]; other settings (e.g. render layers) can be changed through
/// Bevy's `GizmoConfigStore`.
#[derive(Default, Reflect, GizmoConfigGroup)]
#[reflect(Default)]
pub struct PbdGizmos;

/// What [`PbdDebugRenderPlugin`] draws and how. Defaults reproduce the reference demos.
#[derive(Resource, Reflect, Debug, Clone, PartialEq)]
#[reflect(Resource, Default)]
pub struct PbdDebugRender {
    /// Draw anything at all. Default `true`.
    pub enabled: bool,
    /// Draw distance constraints. Default `true`.
    pub constraints: bool,
    /// Colour of constraint lines. Default #666666.
    pub constraint_color: Color,
    /// Draw non-fluid (cloth, rope …) particles. Default `true`.
    pub particles: bool,
    /// Colour of non-fluid particles. Default #0000FF.
    pub particle_color: Color,
    /// Radius of non-fluid particles (m). Default 0.025 (the PBD demo's).
    pub particle_radius: f32,
    /// Draw fluid particles. Their radius is [`FluidSettings::particle_radius`]. Default `true`.
    pub fluid: bool,
    /// Speed (m/s) at and above which a fluid particle gets the lightest colour. Default 8.
    pub fluid_max_speed: f32,
    /// Draw boundary samples (radius [`FluidSettings::particle_radius`]). Default `true`.
    pub boundary: bool,
    /// Colour of boundary samples. Default #888888.
    pub boundary_color: Color,
    /// Colour of the dragged particle. Default #FF0000.
    pub dragged_color: Color,
    /// Radius factor of the dragged particle. Default 3.
    pub dragged_scale: f32,
    /// Draw the coordinate axes at the origin (x red, y green). Default `true`.
    pub axes: bool,
    /// Length of the axes (m). Default 1.
    pub axis_length: f32,
    /// Width of all lines (logical px), 0.5 ..= 16. Default 1 (the demos' canvas lines).
    pub line_width: f32,
    /// Fill the dots with concentric rings instead of drawing outlines. Default `true`.
    pub filled: bool,
    /// Most line segments per circle, 6 ..= 64 (small circles use fewer). Default 24.
    pub circle_resolution: u32,
    /// Most rings per filled dot, 1 ..= 64; beyond it (when zoomed far in) the rings spread out.
    /// Default 12.
    pub max_rings: u32,
}

impl Default for PbdDebugRender {
    fn default() -> Self {
        Self {
            enabled: true,
            constraints: true,
            constraint_color: Color::srgb_u8(0x66, 0x66, 0x66),
            particles: true,
            particle_color: Color::srgb_u8(0x00, 0x00, 0xFF),
            particle_radius: 0.025,
            fluid: true,
            fluid_max_speed: 8.0,
            boundary: true,
            boundary_color: Color::srgb_u8(0x88, 0x88, 0x88),
            dragged_color: Color::srgb_u8(0xFF, 0x00, 0x00),
            dragged_scale: 3.0,
            axes: true,
            axis_length: 1.0,
            line_width: 1.0,
            filled: true,
            circle_resolution: 24,
            max_rings: 12,
        }
    }
}

impl PbdDebugRender {
    /// The PBF demo's colour of a fluid particle moving at `speed` (m/s):
    /// hsl(225°, 100 %, 25 % + 50 % · min(speed, max) / max) with max = [`Self::fluid_max_speed`].
    pub fn fluid_color(&self, speed: f32) -> Color {
        let max = self.fluid_max_speed.max(f32::MIN_POSITIVE);
        let t = if speed.is_finite() {
            speed.clamp(0.0, max) / max
        } else {
            1.0
        };
        Color::hsl(225.0, 1.0, 0.25 + 0.5 * t)
    }
}

/// Scale of the first active camera in logical pixels per metre (1 when there is none).
fn pixels_per_metre(cameras: &Query<(&Camera, &GlobalTransform)>) -> f32 {
    for (camera, transform) in cameras {
        if !camera.is_active {
            continue;
        }
        let origin = transform.translation();
        let right = origin + transform.right() * 1.0;
        if let (Ok(a), Ok(b)) = (
            camera.world_to_viewport(transform, origin),
            camera.world_to_viewport(transform, right),
        ) {
            let ppm = a.distance(b);
            if ppm.is_finite() && ppm > 0.0 {
                return ppm;
            }
        }
    }
    1.0
}

/// Keeps the group's line width equal to [`PbdDebugRender::line_width`].
fn update_line_width(settings: Res<PbdDebugRender>, mut store: ResMut<GizmoConfigStore>) {
    let width = if settings.line_width.is_finite() {
        settings.line_width.clamp(0.5, 16.0)
    } else {
        1.0
    };
    let (config, _) = store.config_mut::<PbdGizmos>();
    if config.line.width != width {
        config.line.width = width;
    }
}

/// Scale of the view: metres per line width, and logical pixels per metre.
#[derive(Clone, Copy)]
struct View {
    line_m: f32,
    pixels_per_metre: f32,
}

/// Draws one dot of radius `radius` (m) at `p`.
fn dot(
    gizmos: &mut Gizmos<PbdGizmos>,
    settings: &PbdDebugRender,
    view: View,
    p: Vec2,
    radius: f32,
    color: Color,
) {
    if !radius.is_finite() || radius <= 0.0 {
        return;
    }
    let max_segments = settings.circle_resolution.clamp(6, 64);
    let segments =
        |r: f32| ((r * view.pixels_per_metre * 1.5).ceil() as u32).clamp(6, max_segments);
    if !settings.filled {
        gizmos
            .circle_2d(p, radius, color)
            .resolution(segments(radius));
        return;
    }
    // Rings of one line width each, from the centre out: radii w/2, 3w/2, … < R.
    let rings = (radius / view.line_m)
        .ceil()
        .clamp(1.0, settings.max_rings.clamp(1, 64) as f32);
    let spacing = radius / rings;
    for k in 0..rings as u32 {
        let r = (k as f32 + 0.5) * spacing;
        gizmos.circle_2d(p, r, color).resolution(segments(r));
    }
}

fn draw_constraints(
    settings: Res<PbdDebugRender>,
    constraints: Query<&DistanceConstraint>,
    positions: Query<&Position>,
    mut gizmos: Gizmos<PbdGizmos>,
) {
    if !settings.constraints {
        return;
    }
    for constraint in &constraints {
        if let Ok([a, b]) = positions.get_many(constraint.particles) {
            gizmos.line_2d(a.0, b.0, settings.constraint_color);
        }
    }
}

#[cfg(feature = "picking")]
use crate::picking::Dragged as DraggedMarker;

/// Never inserted: without the `picking` feature no particle is dragged.
#[cfg(not(feature = "picking"))]
#[derive(Component)]
struct DraggedMarker;

/// Position, velocity, whether fluid, whether dragged.
type ParticleData = (
    &'static Position,
    &'static Velocity,
    Has<FluidParticle>,
    Has<DraggedMarker>,
);

fn draw_particles(
    settings: Res<PbdDebugRender>,
    fluid_settings: Option<Res<FluidSettings>>,
    particles: Query<ParticleData, With<Particle>>,
    boundary: Query<&Position, With<BoundaryParticle>>,
    store: Res<GizmoConfigStore>,
    cameras: Query<(&Camera, &GlobalTransform)>,
    mut gizmos: Gizmos<PbdGizmos>,
) {
    let settings = &*settings;
    // Without the fluid plugin, fluid particles and samples are drawn at the default radius.
    let fluid_radius = fluid_settings.map_or(FluidSettings::default().particle_radius, |f| {
        f.particle_radius
    });
    let pixels_per_metre = pixels_per_metre(&cameras);
    let view = View {
        line_m: store.config::<PbdGizmos>().0.line.width / pixels_per_metre,
        pixels_per_metre,
    };
    if settings.boundary {
        for p in &boundary {
            dot(
                &mut gizmos,
                settings,
                view,
                p.0,
                fluid_radius,
                settings.boundary_color,
            );
        }
    }
    let mut held = Vec::new();
    for (p, v, fluid, dragged) in &particles {
        if dragged {
            held.push((
                p.0,
                if fluid {
                    fluid_radius
                } else {
                    settings.particle_radius
                },
            ));
            continue;
        }
        if fluid {
            if settings.fluid {
                dot(
                    &mut gizmos,
                    settings,
                    view,
                    p.0,
                    fluid_radius,
                    settings.fluid_color(v.0.length()),
                );
            }
        } else if settings.particles {
            dot(
                &mut gizmos,
                settings,
                view,
                p.0,
                settings.particle_radius,
                settings.particle_color,
            );
        }
    }
    // Dragged particles last, on top.
    for (p, radius) in held {
        dot(
            &mut gizmos,
            settings,
            view,
            p,
            settings.dragged_scale * radius,
            settings.dragged_color,
        );
    }
}

fn draw_axes(settings: Res<PbdDebugRender>, mut gizmos: Gizmos<PbdGizmos>) {
    if !settings.axes {
        return;
    }
    let l = settings.axis_length;
    gizmos.line_2d(Vec2::ZERO, Vec2::new(l, 0.0), Color::from(css::RED));
    gizmos.line_2d(Vec2::ZERO, Vec2::new(0.0, l), Color::from(css::LIME));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fluid_colour_follows_the_demo() {
        let s = PbdDebugRender::default();
        let l = |speed: f32| Hsla::from(s.fluid_color(speed)).lightness;
        assert!((l(0.0) - 0.25).abs() < 1e-4);
        assert!((l(4.0) - 0.50).abs() < 1e-4);
        assert!((l(8.0) - 0.75).abs() < 1e-4);
        assert!((l(100.0) - 0.75).abs() < 1e-4);
        assert!((l(f32::NAN) - 0.75).abs() < 1e-4);
        assert!((Hsla::from(s.fluid_color(2.0)).hue - 225.0).abs() < 1e-3);
    }
}
