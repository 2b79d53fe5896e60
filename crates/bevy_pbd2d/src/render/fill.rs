//! What a body's mesh is filled with: a colour, a texture, or the game's own material.

use bevy::ecs::schedule::InternedScheduleLabel;
use bevy::prelude::*;
use bevy::sprite_render::{AlphaMode2d, ColorMaterial, MeshMaterial2d};

use super::{BlobMesh, ClothMesh, PbdRenderSystems, RopeMesh};

/// How a [`ClothMesh`], [`RopeMesh`] or [`BlobMesh`] is filled.
#[derive(Reflect, Debug, Clone, PartialEq)]
#[reflect(Debug, Clone, PartialEq)]
pub enum BodyFill {
    /// One colour: a `ColorMaterial` made and kept by the plugin (opaque unless the colour's
    /// alpha is below 1).
    Color(Color),
    /// A texture multiplied by `tint` (white: the texture as it is), alpha-blended: a
    /// `ColorMaterial` made and kept by the plugin. The mesh's UVs run over the texture once
    /// (cloth, blob) or repeat along the length (rope).
    Texture {
        /// The texture.
        image: Handle<Image>,
        /// Multiplies the texture's colour.
        tint: Color,
    },
    /// The plugin makes no material: the root's own `MeshMaterial2d<M>`, for any
    /// `Material2d` `M`, draws the mesh (vertex attributes: position, UV 0).
    Custom,
}

impl BodyFill {
    /// The `ColorMaterial` this fill asks for (`None` for [`BodyFill::Custom`]).
    pub fn color_material(&self) -> Option<ColorMaterial> {
        match self {
            Self::Color(color) => Some(ColorMaterial::from_color(*color)),
            Self::Texture { image, tint } => Some(ColorMaterial {
                color: *tint,
                texture: Some(image.clone()),
                alpha_mode: AlphaMode2d::Blend,
                ..default()
            }),
            Self::Custom => None,
        }
    }
}

/// A render component with a [`BodyFill`].
pub(crate) trait Filled: Component {
    fn fill(&self) -> &BodyFill;
}

impl Filled for ClothMesh {
    fn fill(&self) -> &BodyFill {
        &self.fill
    }
}

impl Filled for RopeMesh {
    fn fill(&self) -> &BodyFill {
        &self.fill
    }
}

impl Filled for BlobMesh {
    fn fill(&self) -> &BodyFill {
        &self.fill
    }
}

/// On a root: the `ColorMaterial` the plugin made for its fill (so that it changes only its
/// own material, never one the game put there).
#[derive(Component, Debug, Clone)]
pub(crate) struct OwnFill(Handle<ColorMaterial>);

/// Its systems' schedule is the render plugin's.
pub(crate) struct FillPlugin(pub(crate) InternedScheduleLabel);

impl Plugin for FillPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<BodyFill>().add_systems(
            self.0,
            (
                keep_fill::<ClothMesh>,
                keep_fill::<RopeMesh>,
                keep_fill::<BlobMesh>,
            )
                .in_set(PbdRenderSystems::Build),
        );
        app.add_observer(drop_fill::<ClothMesh>)
            .add_observer(drop_fill::<RopeMesh>)
            .add_observer(drop_fill::<BlobMesh>);
    }
}

/// Makes, updates or removes the root's own `ColorMaterial` when its fill changes.
fn keep_fill<C: Filled>(
    mut commands: Commands,
    roots: Query<(Entity, &C, Option<&OwnFill>), Changed<C>>,
    materials: Option<ResMut<Assets<ColorMaterial>>>,
) {
    let Some(mut materials) = materials else {
        return;
    };
    for (root, component, own) in &roots {
        match (component.fill().color_material(), own) {
            (Some(material), Some(OwnFill(handle))) => {
                if let Some(mut current) = materials.get_mut(handle) {
                    *current = material;
                }
            }
            (Some(material), None) => {
                let handle = materials.add(material);
                commands
                    .entity(root)
                    .insert((MeshMaterial2d(handle.clone()), OwnFill(handle)));
            }
            (None, Some(_)) => {
                commands
                    .entity(root)
                    .remove::<(MeshMaterial2d<ColorMaterial>, OwnFill)>();
            }
            (None, None) => {}
        }
    }
}

/// A render component taken off a root takes the plugin's material with it.
fn drop_fill<C: Filled>(
    removed: On<Remove, C>,
    owns: Query<(), With<OwnFill>>,
    mut commands: Commands,
) {
    if owns.contains(removed.entity)
        && let Ok(mut root) = commands.get_entity(removed.entity)
    {
        root.try_remove::<(MeshMaterial2d<ColorMaterial>, OwnFill)>();
    }
}
