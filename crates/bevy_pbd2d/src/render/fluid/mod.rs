//! The fluid surface: fluid particles drawn as one smooth, continuous, shaded body of liquid.
//!
//! Two passes, both ordinary Bevy 2D rendering (screen-space fluid rendering, as Babylon.js's
//! and FleX's particle fluid renderers do it, here in 2D):
//!
//! 1. **Splats, off-screen.** A camera that sees only [`FluidSurfaceSettings::layer`] renders
//!    every drawn fluid particle as a quad carrying the kernel
//!    w(d) = (1 − d²/R²)³ for d < R (0 beyond), R = [`FluidSurfaceSettings::kernel_scale`] ·
//!    [`FluidSettings::particle_radius`](crate::fluid::FluidSettings::particle_radius), with
//!    additive blending into an `Rgba16Float` image the size of the followed camera's
//!    viewport: each pixel holds ρ̃ = Σ w and Σ w·c (c the particles' linear colours). It
//!    copies the followed camera's view every frame, so that a pixel of the image is the
//!    pixel of the screen.
//! 2. **Surface, on screen.** A quad over the followed camera's whole view, at world depth
//!    [`FluidSurfaceSettings::z`] (sprites and meshes with a larger z are in front of the
//!    water, smaller behind), reads the image: fluid where ρ̃ ≥
//!    [`FluidSurfaceSettings::threshold`] (anti-aliased over a pixel), coloured Σ w·c / Σ w
//!    (two liquids of different colours blend over about a particle radius where they touch),
//!    darkened towards [`FluidSurfaceSettings::deep_color`] with the depth of fluid above the
//!    pixel, lightened to [`FluidSurfaceSettings::edge_color`] in a band inside the surface
//!    (where some of eight points [`FluidSurfaceSettings::edge_width_scale`] radii around are
//!    not fluid; brightest where the surface faces up), whitened to
//!    [`FluidSurfaceSettings::foam_color`] where most points
//!    [`FluidSurfaceSettings::foam_radius_scale`] radii around are not fluid (spray: isolated
//!    particles are drawn as droplets), and drawn with
//!    [`FluidSurfaceSettings::opacity`] so that what is behind the water shows through.
//!
//! **Which particles.** A [`FluidParticle`](crate::particle::FluidParticle) is drawn if it has
//! a [`ParticleColor`], or if its body's root ([`ParticleOf`](crate::body::ParticleOf)) has a
//! [`FluidSurface`]; its colour is the former, else the latter's. Boundary samples are never
//! drawn. Particles with [`ColorMixing`] exchange colour with the touching ones ([`mixing`]).
//!
//! **Where it can be.** With the defaults (kernel 2 r, threshold 0.25) a lone particle is a
//! droplet of radius 1.22 r, a flat free surface lies about r beyond its outermost particles'
//! centres (where a fluid of spacing 2 r ends), the inside of a fluid at rest stays above the
//! threshold (its least field, between four particles 2 r apart, is 0.5), and no pixel farther
//! than R ≤ 2 r from every particle can be fluid (the kernel scale is at most 2 for that: a
//! pixel whose field is below the threshold but which has fluid all around, a hole the flow
//! opened between particles, is closed only where the field is positive, within R of a
//! particle). The camera followed is
//! [`FluidSurfaceSettings::camera`], or the active 2D camera rendering to a window with the
//! lowest order. The surface quad is drawn in that camera's render layers: another camera
//! sharing them (a minimap) would draw it too, with the followed camera's view, so give such a
//! camera layers of its own.
//!
//! **Cost.** The splat mesh is rewritten in place every frame (no allocation in the plugin's
//! systems); Bevy then copies every changed mesh to the render world and uploads it, which is
//! its own per-frame cost (about 48 bytes per particle). The off-screen image is `Rgba16Float`,
//! as Bevy's HDR target (on WebGL2 it needs `EXT_color_buffer_float`, as HDR does).

mod materials;
pub mod mixing;
mod splats;
mod view;

use bevy::ecs::schedule::InternedScheduleLabel;
use bevy::prelude::*;
use bevy::sprite_render::Material2dPlugin;

use super::PbdRenderSystems;
use crate::error::{PbdError, finite, positive, within};

pub use mixing::ColorMixing;
pub use splats::FluidSplats;

/// On a fluid particle: its colour in the fluid surface (it is drawn even if its body has no
/// [`FluidSurface`]). Alpha is ignored (use [`FluidSurfaceSettings::opacity`]).
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq)]
pub struct ParticleColor(pub Color);

/// On a body's root: draw its fluid particles in the fluid surface, in `color` (a particle's
/// own [`ParticleColor`] wins).
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
pub struct FluidSurface {
    /// The liquid's colour (alpha ignored). Default #2F7FD8, a clear blue.
    pub color: Color,
}

impl Default for FluidSurface {
    fn default() -> Self {
        Self {
            color: Color::srgb_u8(0x2F, 0x7F, 0xD8),
        }
    }
}

/// How the fluid surface looks (module docs for each step). Checked before use: while
/// [`FluidSurfaceSettings::validate`] fails, the last valid settings stay in use and an error
/// is logged once.
#[derive(Resource, Reflect, Debug, Clone, PartialEq)]
#[reflect(Resource, Default, Debug, Clone, PartialEq)]
pub struct FluidSurfaceSettings {
    /// The kernel's support radius R in particle radii, in (0, 2]. Default 2: no pixel
    /// farther than 2 r from every particle is fluid.
    pub kernel_scale: f32,
    /// Where the field ρ̃ = Σ w becomes fluid, in (0, 1). Default 0.25.
    pub threshold: f32,
    /// Pixels of the off-screen image per pixel of the view, in [1/8, 1]. Default 1.
    pub resolution_scale: f32,
    /// Opacity of the fluid's inside, in [0, 1] (the edge and foam are opaque). Default 0.9.
    pub opacity: f32,
    /// What the colour is multiplied by at full depth. Default #4A6A96.
    pub deep_color: Color,
    /// How much of the deep tint full depth gets, in [0, 1]. Default 0.6.
    pub deep_strength: f32,
    /// Depth of fluid above a pixel (m) at which the tint is full, > 0. Default 0.5.
    pub depth: f32,
    /// Colour of the band inside the surface. Default #E6F6FF.
    pub edge_color: Color,
    /// How much of the edge colour the band gets where the surface faces up (60 % of it where
    /// it faces down), in [0, 1]. Default 0.7.
    pub edge_strength: f32,
    /// Width of the band inside the surface, in particle radii, > 0. Default 1.5.
    pub edge_width_scale: f32,
    /// Colour of spray. Default white.
    pub foam_color: Color,
    /// How much of the foam colour spray gets, in [0, 1]. Default 0.7.
    pub foam_strength: f32,
    /// How far around a pixel (in particle radii, > 0) the fluid is looked for to tell spray
    /// from bulk. Default 3.
    pub foam_radius_scale: f32,
    /// World z of the surface: sprites and meshes above it are in front. Default 0.
    pub z: f32,
    /// The render layer of the off-screen pass (no other camera should see it), 1 ..= 31.
    /// Default 29.
    pub layer: usize,
    /// The camera whose view the surface is drawn in, or `None` for the first active 2D
    /// camera rendering to a window. Default `None`.
    pub camera: Option<Entity>,
}

impl Default for FluidSurfaceSettings {
    fn default() -> Self {
        Self {
            kernel_scale: 2.0,
            threshold: 0.25,
            resolution_scale: 1.0,
            opacity: 0.9,
            deep_color: Color::srgb_u8(0x4A, 0x6A, 0x96),
            deep_strength: 0.6,
            depth: 0.5,
            edge_color: Color::srgb_u8(0xE6, 0xF6, 0xFF),
            edge_strength: 0.7,
            edge_width_scale: 1.5,
            foam_color: Color::WHITE,
            foam_strength: 0.7,
            foam_radius_scale: 3.0,
            z: 0.0,
            layer: 29,
            camera: None,
        }
    }
}

impl FluidSurfaceSettings {
    /// Checks every field against its documented range.
    ///
    /// # Errors
    /// [`PbdError`] naming the first field out of its range (NaN is in none).
    pub fn validate(&self) -> Result<(), PbdError> {
        within(
            "kernel scale",
            positive("kernel scale", self.kernel_scale)?,
            0.0..=2.0,
        )?;
        positive("threshold", self.threshold)?;
        within("threshold", self.threshold, 0.0..=0.999)?;
        within("resolution scale", self.resolution_scale, 0.125..=1.0)?;
        within("opacity", self.opacity, 0.0..=1.0)?;
        within("deep strength", self.deep_strength, 0.0..=1.0)?;
        positive("depth (m)", self.depth)?;
        within("edge strength", self.edge_strength, 0.0..=1.0)?;
        positive("edge width scale", self.edge_width_scale)?;
        within("foam strength", self.foam_strength, 0.0..=1.0)?;
        positive("foam radius scale", self.foam_radius_scale)?;
        finite("z", self.z)?;
        crate::error::in_range(
            "surface render layer",
            u32::try_from(self.layer).unwrap_or(u32::MAX),
            1,
            31,
        )?;
        Ok(())
    }
}

/// Its systems' schedule is the render plugin's.
pub(crate) struct FluidSurfacePlugin(pub(crate) InternedScheduleLabel);

impl Plugin for FluidSurfacePlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<ParticleColor>()
            .register_type::<FluidSurface>()
            .register_type::<FluidSurfaceSettings>()
            .init_resource::<FluidSurfaceSettings>()
            .init_resource::<FluidSplats>()
            .init_resource::<view::SurfaceSettingsInUse>();
        if app
            .world()
            .contains_resource::<bevy::asset::io::embedded::EmbeddedAssetRegistry>()
        {
            bevy::asset::embedded_asset!(app, "splat.wgsl");
            bevy::asset::embedded_asset!(app, "surface.wgsl");
        }
        app.add_plugins((
            Material2dPlugin::<materials::SplatMaterial>::default(),
            Material2dPlugin::<materials::SurfaceMaterial>::default(),
        ))
        .add_systems(
            self.0,
            (
                view::check_settings.in_set(PbdRenderSystems::Build),
                (splats::update_splats, view::follow_camera)
                    .chain()
                    .in_set(PbdRenderSystems::Update)
                    .after(bevy::camera::CameraUpdateSystems),
            ),
        );
    }
}
