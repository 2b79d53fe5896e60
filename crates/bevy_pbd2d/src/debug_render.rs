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
//! Everything is configured by the [`PbdDebugRender`] resource. Gizmos draw outlines; a dot of
//! radius R is filled by drawing a circle of radius R/2 with a line R pixels wide (the width is
//! set every frame from the camera's current zoom), so that the dots look like the demos'
//! filled discs. Lines are drawn in the [`PbdLineGizmos`] config group, dots in
//! [`PbdParticleGizmos`]; both can be tuned through Bevy's `GizmoConfigStore`.

use bevy::camera::Camera;
use bevy::color::palettes::css;
use bevy::prelude::*;

use crate::constraints::distance::DistanceConstraint;
use crate::fluid::{BoundaryParticle, FluidParticle, FluidSettings};
use crate::particle::{Particle, Position, Velocity};

/// Draws particles, constraints and axes with gizmos every frame (in `PostUpdate`, before
/// gizmos are collected). Part of [`PbdPlugins`](crate::PbdPlugins) when the `debug_render`
/// feature is on. Needs Bevy's gizmo plugin (in `DefaultPlugins`); configure it with
/// [`PbdDebugRender`].
#[derive(Debug, Clone, Copy, Default)]
pub struct PbdDebugRenderPlugin;

impl Plugin for PbdDebugRenderPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<PbdDebugRender>()
            .init_resource::<PbdDebugRender>()
            .init_gizmo_group::<PbdLineGizmos>()
            .init_gizmo_group::<PbdParticleGizmos>()
            .add_systems(
                PostUpdate,
                (
                    update_dot_width,
                    draw_constraints,
                    draw_particles,
                    draw_axes,
                )
                    .chain()
                    .after(TransformSystems::Propagate)
                    .run_if(|settings: Res<PbdDebugRender>| settings.enabled),
            );
    }
}

/// Gizmo config group of the constraint lines and axes (line width 1 px by default).
#[derive(Default, Reflect, GizmoConfigGroup)]
#[reflect(Default)]
pub struct PbdLineGizmos;

/// Gizmo config group of the particle dots. Its line width is overwritten every frame when
/// [`PbdDebugRender::filled`] is on.
#[derive(Default, Reflect, GizmoConfigGroup)]
#[reflect(Default)]
pub struct PbdParticleGizmos;

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
    /// Fill the dots (a thick circle of half the radius) instead of drawing outlines.
    /// Default `true`.
    pub filled: bool,
    /// Line segments per particle circle, 3 ..= 64. Default 10.
    pub circle_resolution: u32,
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
            filled: true,
            circle_resolution: 10,
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

/// Sets the dot line width so that a circle of radius R/2 covers a disc of radius R.
fn update_dot_width(
    settings: Res<PbdDebugRender>,
    fluid: Res<FluidSettings>,
    cameras: Query<(&Camera, &GlobalTransform)>,
    mut store: ResMut<GizmoConfigStore>,
) {
    let (config, _) = store.config_mut::<PbdParticleGizmos>();
    if settings.filled {
        let radius = fluid.particle_radius.min(settings.particle_radius);
        let width = radius * pixels_per_metre(&cameras);
        let width = if width.is_finite() {
            width.clamp(1.0, 64.0)
        } else {
            1.0
        };
        if config.line.width != width {
            config.line.width = width;
        }
    } else if config.line.width != 1.0 {
        config.line.width = 1.0;
    }
}

/// Draws one dot of radius `radius` (m) at `p`.
fn dot(
    gizmos: &mut Gizmos<PbdParticleGizmos>,
    settings: &PbdDebugRender,
    base: f32,
    p: Vec2,
    radius: f32,
    color: Color,
) {
    if !radius.is_finite() || radius <= 0.0 {
        return;
    }
    let resolution = settings.circle_resolution.clamp(3, 64);
    if !settings.filled || !base.is_finite() || base <= 0.0 {
        gizmos.circle_2d(p, radius, color).resolution(resolution);
        return;
    }
    // Concentric rings of width `base` (m at the current zoom) fill the disc.
    let mut r = (0.5 * base).min(radius);
    // At most 64 rings (the line width is clamped to 64 px).
    for _ in 0..64 {
        gizmos.circle_2d(p, r, color).resolution(resolution);
        r += base;
        if r >= radius {
            break;
        }
    }
}

fn draw_constraints(
    settings: Res<PbdDebugRender>,
    constraints: Query<&DistanceConstraint>,
    positions: Query<&Position>,
    mut gizmos: Gizmos<PbdLineGizmos>,
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

fn draw_particles(
    settings: Res<PbdDebugRender>,
    fluid_settings: Res<FluidSettings>,
    particles: Query<
        (&Position, &Velocity, Has<FluidParticle>, Has<DraggedMarker>),
        With<Particle>,
    >,
    boundary: Query<&Position, With<BoundaryParticle>>,
    store: Res<GizmoConfigStore>,
    cameras: Query<(&Camera, &GlobalTransform)>,
    mut gizmos: Gizmos<PbdParticleGizmos>,
) {
    let settings = &*settings;
    let fluid_radius = fluid_settings.particle_radius;
    // Width of one ring in metres at the current zoom.
    let base = store.config::<PbdParticleGizmos>().0.line.width / pixels_per_metre(&cameras);
    if settings.boundary {
        for p in &boundary {
            dot(
                &mut gizmos,
                settings,
                base,
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
                    base,
                    p.0,
                    fluid_radius,
                    settings.fluid_color(v.0.length()),
                );
            }
        } else if settings.particles {
            dot(
                &mut gizmos,
                settings,
                base,
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
            base,
            p,
            settings.dragged_scale * radius,
            settings.dragged_color,
        );
    }
}

fn draw_axes(settings: Res<PbdDebugRender>, mut gizmos: Gizmos<PbdLineGizmos>) {
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
