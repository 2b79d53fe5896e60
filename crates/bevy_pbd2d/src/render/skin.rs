//! What the skinned meshes (cloth, rope, blob) share: the mesh asset with world-space vertices
//! written in place, the frame of the root they sit on, and the show/hide switch.

use bevy::asset::RenderAssetUsages;
use bevy::camera::visibility::NoFrustumCulling;
use bevy::math::Affine3A;
use bevy::mesh::{Indices, PrimitiveTopology, VertexAttributeValues};
use bevy::platform::collections::HashMap;
use bevy::prelude::*;

use super::PbdRender;
use crate::body::{BodyConstraints, BodyParticles};
use crate::constraints::distance::DistanceConstraint;
use crate::error::PbdError;

/// On an entity whose mesh the plugin keeps (a body's root, the fluid surface): the
/// `Visibility` it had before [`PbdRender::enabled`] hid it.
#[derive(Component, Debug, Clone, Default)]
pub(crate) struct Managed {
    hidden_from: Option<Visibility>,
}

/// A triangle-list mesh with positions (m, the root's frame), UVs and indices, kept in the
/// main world so that its vertices can be rewritten every frame.
pub(crate) fn skin_mesh(positions: Vec<[f32; 3]>, uvs: Vec<[f32; 2]>, indices: Vec<u32>) -> Mesh {
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::MAIN_WORLD | RenderAssetUsages::RENDER_WORLD,
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
    .with_inserted_attribute(Mesh::ATTRIBUTE_UV_0, uvs)
    .with_inserted_indices(Indices::U32(indices))
}

/// The mesh's positions, to write in place (`None` if it has none, or was sent to the render
/// world only).
pub(crate) fn positions_mut(mesh: &mut Mesh) -> Option<&mut [[f32; 3]]> {
    match mesh.try_attribute_mut(Mesh::ATTRIBUTE_POSITION) {
        Ok(VertexAttributeValues::Float32x3(positions)) => Some(positions),
        _ => None,
    }
}

/// The mesh's indices, to rewrite in place (`None` unless they are `u32`).
pub(crate) fn indices_mut(mesh: &mut Mesh) -> Option<&mut Vec<u32>> {
    match mesh.try_indices_mut() {
        Ok(Indices::U32(indices)) => Some(indices),
        _ => None,
    }
}

/// The world-to-root transform: a particle at world `p` is drawn at `to_local(p)` in the
/// root's mesh, so that the root's `Transform` brings it back to `p`. The vertex's z is the
/// root's, so a mesh keeps the z its root's `Transform` gives it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ToLocal {
    inverse: Affine3A,
    z: f32,
}

impl ToLocal {
    /// The root's frame; a root scaled to nothing (no inverse) draws its mesh collapsed
    /// anyway, and gets the world frame rather than NaN vertices.
    pub(crate) fn new(root: &GlobalTransform) -> Self {
        let inverse = root.affine().inverse();
        let finite = inverse.matrix3.is_finite() && inverse.translation.is_finite();
        Self {
            inverse: if finite { inverse } else { Affine3A::IDENTITY },
            z: root.translation().z,
        }
    }

    /// `p` (m, world) in the root's frame.
    #[inline]
    pub(crate) fn point(&self, p: Vec2) -> [f32; 3] {
        self.inverse
            .transform_point3(Vec3::new(p.x, p.y, self.z))
            .to_array()
    }
}

/// The components a skinned body's root gets with its mesh.
pub(crate) fn mesh_components(mesh: Handle<Mesh>) -> impl Bundle {
    (Mesh2d(mesh), NoFrustumCulling, Managed::default())
}

/// A render component taken off a root takes its mesh and skin (`S`) with it.
pub(crate) fn drop_skin<C: Component, S: Component>(
    removed: On<Remove, C>,
    managed: Query<&Managed>,
    mut commands: Commands,
) {
    unskin::<S>(
        &mut commands,
        removed.entity,
        managed.get(removed.entity).ok(),
    );
}

/// Takes a root's mesh and skin (`S`) away, and gives it back the visibility the render switch
/// took from it.
fn unskin<S: Component>(commands: &mut Commands, root: Entity, managed: Option<&Managed>) {
    if let Ok(mut root) = commands.get_entity(root) {
        root.try_remove::<(Mesh2d, NoFrustumCulling, Managed, S)>();
        if let Some(visibility) = managed.and_then(|m| m.hidden_from) {
            root.try_insert(visibility);
        }
    }
}

/// A body that lost its last particle loses its [`BodyParticles`] (Bevy removes an empty
/// relationship target), so its mesh would stay drawn where its particles were: taken away
/// with its skin (`S`); built again when particles join the body.
pub(crate) fn forget_emptied<S: Component>(
    mut removed: RemovedComponents<BodyParticles>,
    skins: Query<Option<&Managed>, With<S>>,
    mut commands: Commands,
) {
    for root in removed.read() {
        if let Ok(managed) = skins.get(root) {
            unskin::<S>(&mut commands, root, managed);
        }
    }
}

/// Applies [`PbdRender::enabled`]: hides every managed entity, or gives it back the
/// visibility it had.
pub(crate) fn show_or_hide(
    settings: Res<PbdRender>,
    mut managed: Query<(&mut Managed, &mut Visibility)>,
) {
    for (mut managed, mut visibility) in &mut managed {
        match (settings.enabled, managed.hidden_from) {
            (false, None) => {
                managed.hidden_from = Some(*visibility);
                *visibility = Visibility::Hidden;
            }
            (true, Some(previous)) => {
                *visibility = previous;
                managed.hidden_from = None;
            }
            _ => {}
        }
    }
}

/// The body's distance constraints by the pair of particles they join (in either order: look
/// up with [`pair`]).
pub(crate) fn constraints_by_pair(
    body_constraints: Option<&BodyConstraints>,
    constraints: &Query<&DistanceConstraint>,
) -> HashMap<(Entity, Entity), Entity> {
    let mut by_pair = HashMap::new();
    for constraint in body_constraints.into_iter().flat_map(|c| c.iter()) {
        if let Ok(distance) = constraints.get(constraint) {
            let [a, b] = distance.particles;
            by_pair.insert(pair(a, b), constraint);
        }
    }
    by_pair
}

/// The key of the pair `a`, `b` in [`constraints_by_pair`].
pub(crate) fn pair(a: Entity, b: Entity) -> (Entity, Entity) {
    if a < b { (a, b) } else { (b, a) }
}

/// Whether a body's render component failed its check (`checked`): then the body is not drawn
/// and the error is logged, naming the body's `kind` and `root`.
pub(crate) fn refused<T>(kind: &str, root: Entity, checked: Result<T, PbdError>) -> bool {
    checked
        .inspect_err(|error| error!("bevy_pbd2d: the {kind} {root} is not drawn: {error}"))
        .is_err()
}
