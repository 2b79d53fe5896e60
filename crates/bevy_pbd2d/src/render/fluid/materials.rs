//! The fluid surface's two materials: the splats of the off-screen pass (additive kernels) and
//! the surface that thresholds and shades their field.

use bevy::asset::{AssetPath, embedded_path};
use bevy::mesh::{MeshVertexAttribute, MeshVertexBufferLayoutRef, VertexFormat};
use bevy::prelude::*;
use bevy::render::render_resource::{
    AsBindGroup, BlendComponent, BlendFactor, BlendOperation, BlendState, RenderPipelineDescriptor,
    ShaderType, SpecializedMeshPipelineError,
};
use bevy::shader::ShaderRef;
use bevy::sprite_render::{AlphaMode2d, Material2d, Material2dKey};

/// A splat vertex's particle centre (m, world).
pub(crate) const SPLAT_CENTRE: MeshVertexAttribute =
    MeshVertexAttribute::new("PbdSplat_Centre", 0x5b2d_0001, VertexFormat::Float32x2);

/// A splat vertex's particle colour (sRGB, 8 bits a channel); its alpha byte is the vertex's
/// corner of the quad, 0 ..= 3.
pub(crate) const SPLAT_COLOR: MeshVertexAttribute =
    MeshVertexAttribute::new("PbdSplat_Color", 0x5b2d_0002, VertexFormat::Unorm8x4);

/// An embedded shader of this folder (registered by `FluidSurfacePlugin`).
fn shader(path: std::path::PathBuf) -> ShaderRef {
    ShaderRef::Path(AssetPath::from_path_buf(path).with_source("embedded"))
}

/// The off-screen pass's material: each particle's kernel, added up.
#[derive(Asset, TypePath, AsBindGroup, Debug, Clone, PartialEq)]
pub(crate) struct SplatMaterial {
    /// x: the kernel's support radius R (m).
    #[uniform(0)]
    pub(crate) kernel: Vec4,
}

impl Material2d for SplatMaterial {
    fn vertex_shader() -> ShaderRef {
        shader(embedded_path!("splat.wgsl"))
    }

    fn fragment_shader() -> ShaderRef {
        shader(embedded_path!("splat.wgsl"))
    }

    fn alpha_mode(&self) -> AlphaMode2d {
        AlphaMode2d::Blend
    }

    fn specialize(
        descriptor: &mut RenderPipelineDescriptor,
        layout: &MeshVertexBufferLayoutRef,
        _key: Material2dKey<Self>,
    ) -> Result<(), SpecializedMeshPipelineError> {
        descriptor.vertex.buffers = vec![layout.0.get_layout(&[
            SPLAT_CENTRE.at_shader_location(0),
            SPLAT_COLOR.at_shader_location(1),
        ])?];
        // Additive: the target sums Σ w·colour and Σ w.
        let add = BlendComponent {
            src_factor: BlendFactor::One,
            dst_factor: BlendFactor::One,
            operation: BlendOperation::Add,
        };
        if let Some(fragment) = descriptor.fragment.as_mut() {
            for target in fragment.targets.iter_mut().flatten() {
                target.blend = Some(BlendState {
                    color: add,
                    alpha: add,
                });
            }
        }
        Ok(())
    }
}

/// The surface shader's parameters (`surface.wgsl`'s `Surface`).
#[derive(ShaderType, Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct SurfaceUniform {
    /// Linear RGB and strength of the deep tint.
    pub(crate) deep: Vec4,
    /// Linear RGB and strength of the edge highlight.
    pub(crate) edge: Vec4,
    /// Linear RGB and strength of the foam.
    pub(crate) foam: Vec4,
    /// Threshold, opacity, 0, 0.
    pub(crate) shape: Vec4,
    /// UV per metre (x, y), depth of the full tint (m), 0.
    pub(crate) scale: Vec4,
    /// Probe radii (m): the edge band's width, the foam's look-around; 0, 0.
    pub(crate) probes: Vec4,
}

/// The on-screen pass's material: thresholds and shades the field of the off-screen target.
#[derive(Asset, TypePath, AsBindGroup, Debug, Clone)]
pub(crate) struct SurfaceMaterial {
    #[uniform(0)]
    pub(crate) surface: SurfaceUniform,
    #[texture(1)]
    #[sampler(2)]
    pub(crate) field: Handle<Image>,
}

impl Material2d for SurfaceMaterial {
    fn vertex_shader() -> ShaderRef {
        shader(embedded_path!("surface.wgsl"))
    }

    fn fragment_shader() -> ShaderRef {
        shader(embedded_path!("surface.wgsl"))
    }

    fn alpha_mode(&self) -> AlphaMode2d {
        AlphaMode2d::Blend
    }
}
