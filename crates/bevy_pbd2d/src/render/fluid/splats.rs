//! The off-screen pass's mesh: four vertices per drawn fluid particle (its centre and colour on
//! each; the shader places the corners), six indices, rewritten in place every frame.

use bevy::asset::RenderAssetUsages;
use bevy::mesh::{Indices, PrimitiveTopology, VertexAttributeValues};
use bevy::prelude::*;

use super::materials::{SPLAT_CENTRE, SPLAT_COLOR};
use super::{FluidSurface, ParticleColor};
use crate::body::ParticleOf;
use crate::particle::{FluidParticle, Position};
use crate::render::PbdRender;

/// The fluid surface's splat mesh (a `Mesh` asset, made at the first frame) and how many
/// particles it drew last frame.
#[derive(Resource, Debug, Default)]
pub struct FluidSplats {
    mesh: Option<Handle<Mesh>>,
    drawn: usize,
}

impl FluidSplats {
    /// How many fluid particles the last frame drew (0 while [`PbdRender::enabled`] is off).
    pub fn drawn(&self) -> usize {
        self.drawn
    }

    /// The splat mesh: vertices 4k .. 4k + 3 are the k-th drawn particle's, each with its
    /// centre (m, attribute `PbdSplat_Centre`, `Float32x2`) and sRGB colour
    /// (`PbdSplat_Color`, `Unorm8x4`, whose alpha byte holds the corner, 0 ..= 3). `None`
    /// until a frame draws a particle; a frame that draws none leaves it as it was (never
    /// without vertices) and hides the passes.
    pub fn mesh(&self) -> Option<&Handle<Mesh>> {
        self.mesh.as_ref()
    }
}

fn empty_splat_mesh() -> Mesh {
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::MAIN_WORLD | RenderAssetUsages::RENDER_WORLD,
    )
    .with_inserted_attribute(SPLAT_CENTRE, Vec::<[f32; 2]>::new())
    .with_inserted_attribute(SPLAT_COLOR, VertexAttributeValues::Unorm8x4(Vec::new()))
    .with_inserted_indices(Indices::U32(Vec::new()))
}

/// The colour of a particle: its own, or its body's surface colour (`surface(root)`); `None`:
/// not drawn. Remembers the last body's colour, as neighbours in a query mostly share a body.
struct Colours<F> {
    surface: F,
    last: Option<(Entity, Option<[u8; 4]>)>,
}

impl<F: Fn(Entity) -> Option<Color>> Colours<F> {
    fn of(&mut self, own: Option<&ParticleColor>, body: Option<&ParticleOf>) -> Option<[u8; 4]> {
        if let Some(ParticleColor(color)) = own {
            return Some(color.to_srgba().to_u8_array());
        }
        let root = body?.0;
        match self.last {
            Some((last, rgba)) if last == root => rgba,
            _ => {
                let rgba = (self.surface)(root).map(|c| c.to_srgba().to_u8_array());
                self.last = Some((root, rgba));
                rgba
            }
        }
    }
}

/// The particles that are drawn, with their colours.
pub(crate) type SplatParticles = (
    &'static Position,
    Option<&'static ParticleColor>,
    Option<&'static ParticleOf>,
);

/// Rewrites the splat mesh from the fluid particles; allocates only when more particles are
/// drawn than ever before. With nothing to draw the mesh is left as it was (the passes are
/// hidden then): Bevy cannot upload a mesh without vertices (its mesh allocator logs a
/// "use-after-free" error for each one it is sent), so the mesh is made at the first frame
/// that draws a particle and never emptied.
pub(crate) fn update_splats(
    render: Res<PbdRender>,
    mut splats: ResMut<FluidSplats>,
    particles: Query<SplatParticles, With<FluidParticle>>,
    surfaces: Query<&FluidSurface>,
    meshes: Option<ResMut<Assets<Mesh>>>,
) {
    let Some(mut meshes) = meshes else {
        return;
    };
    splats.drawn = 0;
    if !render.enabled {
        return;
    }
    let mut colours = Colours {
        surface: |root| surfaces.get(root).ok().map(|s| s.color),
        last: None,
    };
    let mut drawable = particles
        .iter()
        .filter_map(|(position, own, body)| Some((position, colours.of(own, body)?)));
    // The mesh is touched (and so sent to the GPU) only when there is something in it.
    let Some(first) = drawable.next() else {
        return;
    };
    let handle = splats
        .mesh
        .get_or_insert_with(|| meshes.add(empty_splat_mesh()))
        .clone();
    let Some(mut mesh) = meshes.get_mut(&handle) else {
        return;
    };
    let mut drawn = 0;
    if let Ok(attributes) = mesh.try_attributes_mut() {
        let (mut centres, mut rgba) = (None, None);
        for (attribute, values) in attributes {
            match values {
                VertexAttributeValues::Float32x2(v) if attribute.id == SPLAT_CENTRE.id => {
                    centres = Some(v)
                }
                VertexAttributeValues::Unorm8x4(v) if attribute.id == SPLAT_COLOR.id => {
                    rgba = Some(v)
                }
                _ => {}
            }
        }
        let (Some(centres), Some(rgba)) = (centres, rgba) else {
            return;
        };
        centres.clear();
        rgba.clear();
        for (position, colour) in std::iter::once(first).chain(drawable) {
            let p = position.0.to_array();
            centres.extend_from_slice(&[p; 4]);
            // The corner in alpha (the shader's colour has none).
            let [r, g, b, _] = colour;
            rgba.extend_from_slice(&[[r, g, b, 0], [r, g, b, 1], [r, g, b, 2], [r, g, b, 3]]);
            drawn += 1;
        }
    }
    if let Ok(Indices::U32(indices)) = mesh.try_indices_mut() {
        let have = indices.len() / 6;
        if have > drawn {
            indices.truncate(6 * drawn);
        } else {
            for k in have as u32..drawn as u32 {
                let v = 4 * k;
                // Corners: 0 (−x −y), 1 (+x −y), 2 (−x +y), 3 (+x +y).
                indices.extend_from_slice(&[v, v + 1, v + 2, v + 2, v + 1, v + 3]);
            }
        }
    }
    splats.drawn = drawn;
}
