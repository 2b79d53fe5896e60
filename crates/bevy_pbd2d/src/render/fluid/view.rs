//! The two passes' entities: the off-screen camera and its image, the splat entity, and the
//! on-screen surface quad; each frame they follow the camera the surface is drawn for.

use bevy::asset::RenderAssetUsages;
use bevy::camera::visibility::{NoFrustumCulling, RenderLayers};
use bevy::camera::{ClearColorConfig, RenderTarget};
use bevy::core_pipeline::tonemapping::{DebandDither, Tonemapping};
use bevy::image::{ImageSampler, ImageSamplerDescriptor};
use bevy::mesh::{Indices, PrimitiveTopology};
use bevy::prelude::*;
use bevy::render::render_resource::{TextureFormat, TextureUsages};
use bevy::render::view::Msaa;
use bevy::sprite_render::MeshMaterial2d;

use super::FluidSurfaceSettings;
use super::materials::{SplatMaterial, SurfaceMaterial, SurfaceUniform};
use super::splats::FluidSplats;
use crate::fluid::FluidSettings;
use crate::render::PbdRender;

/// The off-screen camera.
#[derive(Component, Debug)]
pub(crate) struct SplatCamera;

/// The on-screen quad.
#[derive(Component, Debug)]
pub(crate) struct SurfaceQuad;

/// The largest side of the off-screen image (pixels), what most GPUs take (WebGL2 guarantees
/// 2048: there, views wider than that need `resolution_scale` below 1); a larger view is
/// rendered at a lower resolution.
const MAX_TARGET_SIDE: u32 = 4096;

/// The settings in use: the last ones that passed [`FluidSurfaceSettings::validate`].
#[derive(Resource, Debug, Default)]
pub(crate) struct SurfaceSettingsInUse {
    settings: FluidSurfaceSettings,
}

/// Takes the settings into use when they are valid; logs the error once when they are not.
pub(crate) fn check_settings(
    settings: Res<FluidSurfaceSettings>,
    mut in_use: ResMut<SurfaceSettingsInUse>,
) {
    if !settings.is_changed() || *settings == in_use.settings {
        return;
    }
    match settings.validate() {
        Ok(()) => in_use.settings = settings.clone(),
        Err(error) => error!(
            "bevy_pbd2d: FluidSurfaceSettings refused ({error}); the last valid settings stay"
        ),
    }
}

/// The passes' entities and assets, made at the first frame with a camera to follow.
#[derive(Resource, Debug)]
pub(crate) struct SurfaceView {
    camera: Entity,
    splats: Entity,
    quad: Entity,
    target: Handle<Image>,
    splat_material: Handle<SplatMaterial>,
    surface_material: Handle<SurfaceMaterial>,
    size: UVec2,
}

/// An `Rgba16Float` image to render the field into (linear filtering, clamped).
fn target_image(size: UVec2) -> Image {
    let mut image = Image::new_target_texture(size.x, size.y, TextureFormat::Rgba16Float, None);
    image.texture_descriptor.usage |= TextureUsages::COPY_SRC;
    image.asset_usage = RenderAssetUsages::RENDER_WORLD;
    image.sampler = ImageSampler::Descriptor(ImageSamplerDescriptor::linear());
    image
}

/// A quad over the whole view, in normalized device coordinates.
fn view_quad() -> Mesh {
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::RENDER_WORLD,
    )
    .with_inserted_attribute(
        Mesh::ATTRIBUTE_POSITION,
        vec![
            [-1.0, -1.0, 0.0],
            [1.0, -1.0, 0.0],
            [-1.0, 1.0, 0.0],
            [1.0, 1.0, 0.0],
        ],
    )
    .with_inserted_indices(Indices::U32(vec![0, 1, 2, 2, 1, 3]))
}

/// The camera the surface follows: the chosen one if it is an active camera, else the active
/// 2D camera rendering to a window with the lowest order (the lowest entity on a tie).
fn followed<'a>(
    chosen: Option<Entity>,
    cameras: &'a Query<Followed, Without<SplatCamera>>,
) -> Option<<Followed as bevy::ecs::query::QueryData>::Item<'a, 'a>> {
    if let Some(entity) = chosen {
        return cameras.get(entity).ok().filter(|c| c.1.is_active);
    }
    cameras
        .iter()
        .filter(|c| c.1.is_active && c.5 && matches!(c.3, RenderTarget::Window(_)))
        .min_by_key(|c| (c.1.order, c.0))
}

/// What the surface reads of a camera.
pub(crate) type Followed = (
    Entity,
    &'static Camera,
    &'static GlobalTransform,
    &'static RenderTarget,
    Option<&'static RenderLayers>,
    Has<Camera2d>,
);

/// The surface material's parameters for these settings, particle radius `r` (m) and the
/// view's UV per metre.
fn surface_uniform(settings: &FluidSurfaceSettings, r: f32, uv_per_metre: Vec2) -> SurfaceUniform {
    let linear = |c: Color, strength: f32| c.to_linear().to_vec3().extend(strength);
    SurfaceUniform {
        deep: linear(settings.deep_color, settings.deep_strength),
        edge: linear(settings.edge_color, settings.edge_strength),
        foam: linear(settings.foam_color, settings.foam_strength),
        shape: Vec4::new(settings.threshold, settings.opacity, 0.0, 0.0),
        scale: uv_per_metre.extend(settings.depth).extend(0.0),
        probes: Vec4::new(
            settings.edge_width_scale * r,
            settings.foam_radius_scale * r,
            0.0,
            0.0,
        ),
    }
}

/// What `follow_camera` sets on the off-screen camera.
type SplatCameraParts = (
    &'static mut Camera,
    &'static mut Transform,
    &'static mut GlobalTransform,
    &'static mut RenderLayers,
);

/// What `follow_camera` sets on the surface quad.
type QuadParts = (
    &'static mut Transform,
    &'static mut Visibility,
    Option<&'static mut RenderLayers>,
);

/// The surface quad alone (no camera may match it: `follow_camera` reads cameras).
type OnlyQuads = (With<SurfaceQuad>, Without<SplatCamera>, Without<Camera>);

/// The assets `follow_camera` keeps (no image assets: nothing to render to).
type SurfaceAssets<'w> = (
    Option<ResMut<'w, Assets<Image>>>,
    ResMut<'w, Assets<Mesh>>,
    ResMut<'w, Assets<SplatMaterial>>,
    ResMut<'w, Assets<SurfaceMaterial>>,
);

/// Makes the passes' entities at the first frame with a camera, then keeps them on the
/// followed camera: its view, its order, its layers, its viewport's size.
#[allow(clippy::too_many_arguments)]
pub(crate) fn follow_camera(
    mut commands: Commands,
    render: Res<PbdRender>,
    in_use: Res<SurfaceSettingsInUse>,
    fluid: Option<Res<FluidSettings>>,
    splats: Res<FluidSplats>,
    view: Option<ResMut<SurfaceView>>,
    cameras: Query<Followed, Without<SplatCamera>>,
    mut splat_cameras: Query<SplatCameraParts, (With<SplatCamera>, Without<SurfaceQuad>)>,
    mut quads: Query<QuadParts, OnlyQuads>,
    mut layers: Query<&mut RenderLayers, (Without<SurfaceQuad>, Without<Camera>)>,
    assets: SurfaceAssets,
) {
    let (Some(mut images), mut meshes, mut splat_materials, mut surface_materials) = assets else {
        return;
    };
    let settings = &in_use.settings;
    let r = fluid.map_or(FluidSettings::default().particle_radius, |f| {
        f.particle_radius
    });
    let camera = followed(settings.camera, &cameras);
    let size = camera
        .as_ref()
        .and_then(|c| c.1.physical_viewport_size())
        .map(|s| {
            let scaled = (s.as_vec2() * settings.resolution_scale).ceil();
            let fit = (MAX_TARGET_SIDE as f32 / scaled.max_element()).min(1.0);
            (scaled * fit).as_uvec2().max(UVec2::ONE)
        });
    let Some(mut view) = view else {
        // First frame with a camera and a splat mesh: make everything.
        let (Some(size), Some(mesh)) = (size, splats.mesh()) else {
            return;
        };
        let target = images.add(target_image(size));
        let splat_material = splat_materials.add(SplatMaterial {
            kernel: Vec4::new(settings.kernel_scale * r, 0.0, 0.0, 0.0),
        });
        let surface_material = surface_materials.add(SurfaceMaterial {
            surface: SurfaceUniform::default(),
            field: target.clone(),
        });
        let layer = RenderLayers::layer(settings.layer);
        let splat_camera = commands
            .spawn((
                Name::new("Fluid surface: splat camera"),
                SplatCamera,
                Camera2d,
                Camera {
                    is_active: false,
                    clear_color: ClearColorConfig::Custom(Color::NONE),
                    ..default()
                },
                RenderTarget::Image(target.clone().into()),
                Msaa::Off,
                Tonemapping::None,
                DebandDither::Disabled,
                layer.clone(),
            ))
            .id();
        let splat_entity = commands
            .spawn((
                Name::new("Fluid surface: splats"),
                Mesh2d(mesh.clone()),
                MeshMaterial2d(splat_material.clone()),
                NoFrustumCulling,
                layer,
            ))
            .id();
        let quad = commands
            .spawn((
                Name::new("Fluid surface"),
                SurfaceQuad,
                Mesh2d(meshes.add(view_quad())),
                MeshMaterial2d(surface_material.clone()),
                NoFrustumCulling,
                Transform::from_xyz(0.0, 0.0, settings.z),
                Visibility::Hidden,
            ))
            .id();
        commands.insert_resource(SurfaceView {
            camera: splat_camera,
            splats: splat_entity,
            quad,
            target,
            splat_material,
            surface_material,
            size,
        });
        return;
    };
    // Something despawned the passes' entities (a game clearing its world): start again.
    if !splat_cameras.contains(view.camera)
        || !quads.contains(view.quad)
        || !layers.contains(view.splats)
    {
        for entity in [view.camera, view.quad, view.splats] {
            if let Ok(mut gone) = commands.get_entity(entity) {
                gone.try_despawn();
            }
        }
        commands.remove_resource::<SurfaceView>();
        return;
    }
    let drawing = render.enabled && splats.drawn() > 0 && camera.is_some();
    // The off-screen image: the followed viewport's size.
    if let Some(size) = size
        && size != view.size
    {
        let _ = images.insert(&view.target, target_image(size));
        view.size = size;
        // A material's bind group is made again only when the material changes: written
        // through, so that it takes the new texture.
        if let Some(mut material) = surface_materials.get_mut(&view.surface_material) {
            material.field = view.target.clone();
        }
    }
    // The off-screen camera: the followed one's view, just before it.
    let layer = RenderLayers::layer(settings.layer);
    if let Ok((mut splat_camera, mut transform, mut global, mut camera_layers)) =
        splat_cameras.get_mut(view.camera)
    {
        camera_layers.set_if_neq(layer.clone());
        if splat_camera.is_active != drawing {
            splat_camera.is_active = drawing;
        }
        if let Some((_, followed, followed_transform, ..)) = &camera {
            splat_camera.order = followed.order - 1;
            splat_camera.computed.clip_from_view = followed.clip_from_view();
            *global = **followed_transform;
            *transform = followed_transform.compute_transform();
        }
    }
    if let Ok(mut splat_layers) = layers.get_mut(view.splats) {
        splat_layers.set_if_neq(layer);
    }
    // The on-screen quad: shown while there is fluid, at the settings' z, in the followed
    // camera's layers.
    if let Ok((mut transform, mut visibility, quad_layers)) = quads.get_mut(view.quad) {
        let shown = if drawing {
            Visibility::Inherited
        } else {
            Visibility::Hidden
        };
        visibility.set_if_neq(shown);
        if transform.translation.z != settings.z {
            transform.translation.z = settings.z;
        }
        let wanted = camera
            .as_ref()
            .and_then(|c| c.4.cloned())
            .unwrap_or_default();
        match quad_layers {
            Some(mut current) => {
                current.set_if_neq(wanted);
            }
            None => {
                commands.entity(view.quad).insert(wanted);
            }
        }
    }
    // The materials' parameters.
    let kernel = Vec4::new(settings.kernel_scale * r, 0.0, 0.0, 0.0);
    if splat_materials
        .get(&view.splat_material)
        .is_some_and(|m| m.kernel != kernel)
        && let Some(mut material) = splat_materials.get_mut(&view.splat_material)
    {
        material.kernel = kernel;
    }
    if let Some((_, followed, followed_transform, ..)) = &camera {
        let clip_from_world = followed.clip_from_view() * followed_transform.affine().inverse();
        let uv_per_metre = 0.5
            * Vec2::new(
                clip_from_world.x_axis.truncate().truncate().length(),
                clip_from_world.y_axis.truncate().truncate().length(),
            );
        let uniform = surface_uniform(settings, r, uv_per_metre);
        if surface_materials
            .get(&view.surface_material)
            .is_some_and(|m| m.surface != uniform)
            && let Some(mut material) = surface_materials.get_mut(&view.surface_material)
        {
            material.surface = uniform;
        }
    }
}
