//! [`RopeMesh`]: a rope or chain drawn as a strip of a given width along its particles.
//!
//! Two vertices per particle, half a width to either side of it along the normal of the rope
//! there (the mean of its two segments' directions, mitred so that the strip keeps its width
//! around bends, up to twice the width at a hairpin), and a cap half a width long beyond each
//! end particle. U runs across the strip (0 on the left of the rope's direction, 1 on the
//! right), V along it: the rest length from the start divided by
//! [`RopeMesh::tile_length`], so that a texture with a repeating sampler repeats along the
//! rope and stretches with it. A segment whose distance constraint is gone (torn, despawned)
//! is not drawn.

use bevy::ecs::schedule::InternedScheduleLabel;
use bevy::prelude::*;

use super::PbdRenderSystems;
use super::fill::BodyFill;
use super::skin::{
    ToLocal, constraints_by_pair, drop_skin, forget_emptied, indices_mut, mesh_components, pair,
    positions_mut, refused, skin_mesh,
};
use crate::body::{BodyConstraints, BodyParticles};
use crate::collider::ParticleRadius;
use crate::constraints::distance::DistanceConstraint;
use crate::error::{PbdError, positive};
use crate::particle::Position;
use crate::scenes::RopeParticle;

/// On a rope's root (as [`RopeBuilder`](crate::scenes::RopeBuilder) spawns; its particles in
/// the order of their [`RopeParticle`] index, or of the root's [`BodyParticles`] without one):
/// draw it as a strip (module docs). Defaults: hemp brown, twice the particles' radius wide,
/// one texture tile per width.
#[derive(Component, Reflect, Debug, Clone, PartialEq)]
#[reflect(Component, Default, Debug, Clone, PartialEq)]
#[require(Transform, Visibility)]
pub struct RopeMesh {
    /// What the strip is filled with. Default `BodyFill::Color` #A0784A.
    pub fill: BodyFill,
    /// Width of the strip (m), or `None` for twice the first particle's
    /// [`ParticleRadius`] (the rope as thick as it collides). Default `None`.
    pub width: Option<f32>,
    /// Rest length (m) over which the texture runs once (V from 0 to 1), or `None` for the
    /// strip's width (square tiles). Default `None`.
    pub tile_length: Option<f32>,
}

impl Default for RopeMesh {
    fn default() -> Self {
        Self {
            fill: BodyFill::Color(Color::srgb_u8(0xA0, 0x78, 0x4A)),
            width: None,
            tile_length: None,
        }
    }
}

impl RopeMesh {
    /// Checks the fields (a rope whose mesh fails is not drawn, with an error logged).
    ///
    /// # Errors
    /// [`PbdError::NotPositive`] for a width or tile length that is not a finite number above
    /// 0.
    pub fn validate(&self) -> Result<(), PbdError> {
        if let Some(width) = self.width {
            positive("rope mesh width (m)", width)?;
        }
        if let Some(tile) = self.tile_length {
            positive("rope mesh tile length (m)", tile)?;
        }
        Ok(())
    }

    /// A rope mesh filled with `fill`, at the default width and tiling.
    pub fn new(fill: BodyFill) -> Self {
        Self { fill, ..default() }
    }
}

/// A rope mesh's skin.
#[derive(Component, Debug, Clone)]
pub(crate) struct RopeSkin {
    /// The particles from the start to the end.
    particles: Vec<Entity>,
    /// The distance constraint of segment k (particles k and k + 1), if there was one.
    segments: Vec<Option<Entity>>,
    /// Half the strip's width (m).
    half_width: f32,
    /// How many constraints the root had when the segments were last drawn.
    constraint_count: usize,
}

/// Its systems' schedule is the render plugin's.
pub(crate) struct RopeMeshPlugin(pub(crate) InternedScheduleLabel);

impl Plugin for RopeMeshPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<RopeMesh>()
            .add_systems(
                self.0,
                (
                    build_rope_meshes.in_set(PbdRenderSystems::Build),
                    choose_rope_segments
                        .in_set(PbdRenderSystems::Build)
                        .after(build_rope_meshes),
                    update_rope_meshes.in_set(PbdRenderSystems::Update),
                ),
            )
            .add_systems(
                self.0,
                forget_emptied::<RopeSkin>.in_set(PbdRenderSystems::Build),
            )
            .add_observer(drop_skin::<RopeMesh, RopeSkin>);
    }
}

/// The default width of a rope's strip (m) and of its texture tile.
const FALLBACK_WIDTH: f32 = 2.0 * ParticleRadius::DEFAULT.0;

/// A rope's root: its component, particles, constraints, mesh (once built) and frame.
type RopeRoot = (
    Entity,
    &'static RopeMesh,
    &'static BodyParticles,
    Option<&'static BodyConstraints>,
    Option<&'static Mesh2d>,
    &'static GlobalTransform,
);

type ChangedRope = Or<(Changed<RopeMesh>, Changed<BodyParticles>)>;

/// Builds the mesh of a rope whose [`RopeMesh`] or particles changed.
fn build_rope_meshes(
    mut commands: Commands,
    roots: Query<RopeRoot, ChangedRope>,
    particles: Query<(&Position, Option<&RopeParticle>, Option<&ParticleRadius>)>,
    constraints: Query<&DistanceConstraint>,
    meshes: Option<ResMut<Assets<Mesh>>>,
) {
    let Some(mut meshes) = meshes else {
        return;
    };
    for (root, rope, members, body_constraints, mesh, transform) in &roots {
        if refused("rope", root, rope.validate()) {
            continue;
        }
        let mut order: Vec<(u32, Entity)> = members
            .iter()
            .enumerate()
            .filter_map(|(k, e)| {
                let (_, index, _) = particles.get(e).ok()?;
                Some((index.map_or(k as u32, |i| i.index), e))
            })
            .collect();
        order.sort_by_key(|&(index, _)| index);
        let chain: Vec<Entity> = order.into_iter().map(|(_, e)| e).collect();
        let by_pair = constraints_by_pair(body_constraints, &constraints);
        let segments: Vec<Option<Entity>> = chain
            .windows(2)
            .map(|link| by_pair.get(&pair(link[0], link[1])).copied())
            .collect();
        let width = rope.width.unwrap_or_else(|| {
            chain
                .first()
                .and_then(|&e| particles.get(e).ok())
                .and_then(|(_, _, r)| r.map(|r| 2.0 * r.0))
                .filter(|w| *w > 0.0)
                .unwrap_or(FALLBACK_WIDTH)
        });
        let tile = rope.tile_length.unwrap_or(width);
        let position = |e: Entity| particles.get(e).map_or(Vec2::ZERO, |(p, _, _)| p.0);
        // V at each particle: the rest length from the start (the constraints' rest lengths,
        // the current distance where a segment has none).
        let mut v = Vec::with_capacity(chain.len() + 2);
        let mut along = 0.0;
        v.push(-0.5 * width / tile);
        for (k, &particle) in chain.iter().enumerate() {
            if k > 0 {
                along += segments[k - 1]
                    .and_then(|c| constraints.get(c).ok())
                    .map_or_else(
                        || position(chain[k - 1]).distance(position(particle)),
                        |d| d.rest_length,
                    );
            }
            v.push(along / tile);
        }
        v.push((along + 0.5 * width) / tile);
        let mut uvs = Vec::with_capacity(2 * v.len());
        for &v in &v {
            uvs.extend([[0.0, v], [1.0, v]]);
        }
        let skin = RopeSkin {
            particles: chain,
            segments,
            half_width: 0.5 * width,
            constraint_count: usize::MAX,
        };
        let mut at = vec![[0.0; 3]; uvs.len()];
        write_strip(
            &skin,
            |e| particles.get(e).ok().map(|(p, _, _)| p.0),
            ToLocal::new(transform),
            &mut at,
        );
        // Room for every quad, so that choosing them never allocates.
        let indices = Vec::with_capacity(6 * (skin.particles.len() + 1));
        let mesh_asset = skin_mesh(at, uvs, indices);
        match mesh {
            Some(handle) if meshes.get(&handle.0).is_some() => {
                let _ = meshes.insert(&handle.0, mesh_asset);
                commands.entity(root).insert(skin);
            }
            _ => {
                let handle = meshes.add(mesh_asset);
                commands
                    .entity(root)
                    .insert((mesh_components(handle), skin));
            }
        }
    }
}

/// Draws the quads of the segments whose constraints exist, and the two caps.
fn choose_rope_segments(
    mut roots: Query<(&mut RopeSkin, &Mesh2d, Option<Ref<BodyConstraints>>)>,
    constraints: Query<(), With<DistanceConstraint>>,
    meshes: Option<ResMut<Assets<Mesh>>>,
) {
    let Some(mut meshes) = meshes else {
        return;
    };
    for (mut skin, mesh, body_constraints) in &mut roots {
        let count = body_constraints.as_ref().map_or(0, |c| c.len());
        let changed = body_constraints.is_some_and(|c| c.is_changed());
        if !changed && count == skin.constraint_count {
            continue;
        }
        let Some(mut mesh) = meshes.get_mut(&mesh.0) else {
            continue;
        };
        let Some(indices) = indices_mut(&mut mesh) else {
            continue;
        };
        skin.constraint_count = count;
        indices.clear();
        if skin.particles.is_empty() {
            continue;
        }
        // Vertex pairs: 0 the start cap, k + 1 particle k, n + 1 the end cap.
        let n = skin.particles.len() as u32;
        let mut quad = |pair: u32| {
            let (l0, r0, l1, r1) = (2 * pair, 2 * pair + 1, 2 * pair + 2, 2 * pair + 3);
            indices.extend_from_slice(&[l0, r0, l1, l1, r0, r1]);
        };
        quad(0);
        for (k, segment) in skin.segments.iter().enumerate() {
            if segment.is_some_and(|c| constraints.contains(c)) {
                quad(k as u32 + 1);
            }
        }
        quad(n);
    }
}

/// Writes every rope mesh's vertices from its particles' positions.
fn update_rope_meshes(
    roots: Query<(&RopeSkin, &Mesh2d, &GlobalTransform)>,
    positions: Query<&Position>,
    meshes: Option<ResMut<Assets<Mesh>>>,
) {
    let Some(mut meshes) = meshes else {
        return;
    };
    for (skin, mesh, transform) in &roots {
        let Some(mut mesh) = meshes.get_mut(&mesh.0) else {
            continue;
        };
        let Some(out) = positions_mut(&mut mesh) else {
            continue;
        };
        write_strip(
            skin,
            |e| positions.get(e).ok().map(|p| p.0),
            ToLocal::new(transform),
            out,
        );
    }
}

/// The strip's vertices: pairs (left, right) for the start cap, each particle, the end cap.
/// A particle whose position is unknown keeps its vertices.
fn write_strip(
    skin: &RopeSkin,
    position: impl Fn(Entity) -> Option<Vec2>,
    to_local: ToLocal,
    out: &mut [[f32; 3]],
) {
    let n = skin.particles.len();
    if n == 0 || out.len() < 2 * (n + 2) {
        return;
    }
    let at = |k: usize| position(skin.particles[k]);
    let direction = |a: Option<Vec2>, b: Option<Vec2>| match (a, b) {
        (Some(a), Some(b)) => (b - a).try_normalize(),
        _ => None,
    };
    let mut previous_tangent = Vec2::X;
    for k in 0..n {
        let Some(p) = at(k) else {
            continue;
        };
        let before = (k > 0).then(|| direction(at(k - 1), Some(p))).flatten();
        let after = (k + 1 < n).then(|| direction(Some(p), at(k + 1))).flatten();
        let tangent = match (before, after) {
            (Some(a), Some(b)) => (a + b).try_normalize().unwrap_or(b),
            (Some(t), None) | (None, Some(t)) => t,
            (None, None) => previous_tangent,
        };
        previous_tangent = tangent;
        // Mitre: the offset along the mean normal that keeps the segments' half width, at
        // most twice it.
        let normal = tangent.perp();
        let segment = after.or(before).unwrap_or(tangent);
        let mitre = 1.0 / normal.dot(segment.perp()).max(0.5);
        let offset = normal * skin.half_width * mitre;
        out[2 * k + 2] = to_local.point(p + offset);
        out[2 * k + 3] = to_local.point(p - offset);
        let cap = skin.half_width * tangent;
        if k == 0 {
            out[0] = to_local.point(p - cap + normal * skin.half_width);
            out[1] = to_local.point(p - cap - normal * skin.half_width);
        }
        if k == n - 1 {
            out[2 * n + 2] = to_local.point(p + cap + normal * skin.half_width);
            out[2 * n + 3] = to_local.point(p + cap - normal * skin.half_width);
        }
    }
}
