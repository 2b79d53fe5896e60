//! The demos' textures, drawn by this code at start-up (no image files, nothing with a
//! foreign licence): a woven tartan for cloth, twisted hemp for ropes, steel links for chains,
//! a glossy jelly for soft blobs and planks of wood for rigid ones.

use bevy::asset::RenderAssetUsages;
use bevy::image::{ImageAddressMode, ImageSampler, ImageSamplerDescriptor};
use bevy::prelude::*;
use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat};

/// The demos' textures, as image handles.
#[derive(Resource, Clone)]
#[allow(dead_code, reason = "each demo uses some of them")]
pub struct Textures {
    pub cloth: Handle<Image>,
    pub rope: Handle<Image>,
    pub chain: Handle<Image>,
    pub jelly: Handle<Image>,
    pub wood: Handle<Image>,
}

impl FromWorld for Textures {
    fn from_world(world: &mut World) -> Self {
        let mut images = world.resource_mut::<Assets<Image>>();
        Self {
            cloth: images.add(image(256, 256, tartan)),
            rope: images.add(image(64, 64, hemp)),
            chain: images.add(image(64, 128, links)),
            jelly: images.add(image(128, 128, jelly)),
            wood: images.add(image(128, 128, wood)),
        }
    }
}

/// An sRGB image of `width` × `height` whose pixel (u, v) in [0, 1)² is `paint(u, v)`
/// (gamma-encoded sRGB and alpha, as an image editor's colours), sampled linearly and
/// repeating.
fn image(width: u32, height: u32, paint: fn(f32, f32) -> Vec4) -> Image {
    let mut data = Vec::with_capacity((4 * width * height) as usize);
    for y in 0..height {
        for x in 0..width {
            let u = (x as f32 + 0.5) / width as f32;
            let v = (y as f32 + 0.5) / height as f32;
            let c = paint(u, v).clamp(Vec4::ZERO, Vec4::ONE);
            data.extend(c.to_array().map(|channel| (channel * 255.0).round() as u8));
        }
    }
    let mut image = Image::new(
        Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
        TextureDimension::D2,
        data,
        TextureFormat::Rgba8UnormSrgb,
        RenderAssetUsages::RENDER_WORLD,
    );
    image.sampler = ImageSampler::Descriptor(ImageSamplerDescriptor {
        address_mode_u: ImageAddressMode::Repeat,
        address_mode_v: ImageAddressMode::Repeat,
        ..ImageSamplerDescriptor::linear()
    });
    image
}

fn rgb(r: f32, g: f32, b: f32) -> Vec4 {
    Vec4::new(r, g, b, 1.0)
}

/// A smooth pulse: 1 at 0, falling to 0 at ±`width`.
fn band(x: f32, width: f32) -> f32 {
    let t = (x.abs() / width).min(1.0);
    1.0 - t * t * (3.0 - 2.0 * t)
}

/// Distance from `x` to the nearest multiple of `period` plus `offset`.
fn stripe(x: f32, period: f32, offset: f32) -> f32 {
    let t = (x - offset).rem_euclid(period);
    t.min(period - t)
}

/// Tartan: red cloth with dark green and navy bands and thin yellow lines, crossing warp and
/// weft, and a twill weave's diagonal grain.
fn tartan(u: f32, v: f32) -> Vec4 {
    let sett = |x: f32| -> Vec4 {
        let base = rgb(0.55, 0.04, 0.04);
        let green = rgb(0.02, 0.16, 0.06) * band(stripe(x, 0.5, 0.0), 0.09);
        let navy = rgb(0.02, 0.03, 0.18) * band(stripe(x, 0.5, 0.25), 0.05);
        let yellow = rgb(0.9, 0.7, 0.1) * band(stripe(x, 0.25, 0.125), 0.008);
        let dark = band(stripe(x, 0.5, 0.0), 0.09).max(band(stripe(x, 0.5, 0.25), 0.05));
        base * (1.0 - dark) + green + navy + yellow * (1.0 - dark)
    };
    let (warp, weft) = (sett(u), sett(v));
    // Twill: threads go over two, under two, stepping one each row.
    let threads = 128.0;
    let over = ((u * threads).floor() + (v * threads).floor()).rem_euclid(4.0) < 2.0;
    let colour = if over {
        warp * 0.7 + weft * 0.3
    } else {
        warp * 0.3 + weft * 0.7
    };
    let grain = 0.9 + 0.1 * ((u + v) * threads * core::f32::consts::PI).sin();
    (colour * grain).with_w(1.0)
}

/// Hemp rope: three strands twisting along V, shaded round across U.
fn hemp(u: f32, v: f32) -> Vec4 {
    let round = (1.0 - (2.0 * u - 1.0).powi(2)).max(0.0).sqrt();
    let twist = ((v * 3.0 + u * 1.5) * core::f32::consts::TAU).sin() * 0.5 + 0.5;
    let fibre = 0.92 + 0.08 * ((v * 40.0 + u * 20.0) * core::f32::consts::TAU).sin();
    let colour = rgb(0.55, 0.38, 0.18) * (0.35 + 0.65 * round) * (0.7 + 0.3 * twist) * fibre;
    colour.with_w(1.0)
}

/// A chain: two links per tile along V, one seen face on (a ring), one edge on (a bar),
/// transparent between them.
fn links(u: f32, v: f32) -> Vec4 {
    let x = 2.0 * u - 1.0;
    let steel = |shade: f32| rgb(0.62, 0.64, 0.68) * (0.35 + 0.65 * shade);
    // Face-on link centred at v = 0.25: an oval ring.
    let y = (v - 0.25) / 0.3;
    let r = (x * x / 0.85 + y * y).sqrt();
    let ring = 1.0 - ((r - 0.75).abs() / 0.22).min(1.0);
    if ring > 0.0 {
        return steel(ring.sqrt()).with_w(1.0);
    }
    // Edge-on link centred at v = 0.75: a rounded bar.
    let y = (v - 0.75) / 0.34;
    if x.abs() < 0.3 && y.abs() < 1.0 {
        let shade = (1.0 - (x / 0.3).powi(2)).sqrt() * (1.0 - y.powi(8));
        return steel(shade).with_w(1.0);
    }
    Vec4::ZERO
}

/// Jelly: a lime body darker at the rim, with a specular highlight up and to the left.
fn jelly(u: f32, v: f32) -> Vec4 {
    let p = Vec2::new(2.0 * u - 1.0, 2.0 * v - 1.0);
    let rim = p.length().min(1.0);
    let body = rgb(0.35, 0.8, 0.25) * (1.0 - 0.45 * rim * rim);
    let highlight = band(p.distance(Vec2::new(-0.35, -0.4)), 0.35);
    (body + Vec4::splat(0.6 * highlight)).with_w(1.0)
}

/// Wood: planks across V with a wavy grain along U.
fn wood(u: f32, v: f32) -> Vec4 {
    let plank = (v * 4.0).floor();
    let seam = band(stripe(v, 0.25, 0.0), 0.012);
    let grain = ((v * 4.0 + 0.15 * (u * 9.0 + plank).sin()) * 24.0 + plank * 1.7).sin();
    let shade = 0.8 + 0.12 * grain + 0.08 * (plank * 2.3).sin();
    (rgb(0.55, 0.33, 0.15) * shade * (1.0 - 0.6 * seam)).with_w(1.0)
}
