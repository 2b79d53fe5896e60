//! [`ClothMesh`]: a cloth drawn as a triangle mesh over its grid ([`ClothGrid`]), two triangles
//! per cell, with UVs over the grid, its vertices the particles' positions.
//!
//! A triangle is drawn while the three distance constraints along its edges exist: each cell
//! is split along the diagonal whose two triangles keep more of their edges (the
//! top-right–bottom-left one on a tie), so a torn constraint
//! ([`BreakingStrain`](crate::constraints::BreakingStrain), or one despawned by the game)
//! leaves a hole where it was. The triangles are chosen again whenever the cloth's
//! [`BodyConstraints`] change.

use bevy::ecs::schedule::InternedScheduleLabel;
use bevy::prelude::*;

use super::PbdRenderSystems;
use super::fill::BodyFill;
use super::skin::{
    ToLocal, constraints_by_pair, drop_skin, forget_emptied, indices_mut, mesh_components, pair,
    positions_mut, refused, skin_mesh,
};
use crate::body::{BodyConstraints, BodyParticles};
use crate::constraints::distance::DistanceConstraint;
use crate::error::{PbdError, finite_vec2, in_range};
use crate::particle::Position;
use crate::scenes::cloth::MAX_CLOTH_SIDE;
use crate::scenes::{ClothGrid, ClothParticle};

/// On a cloth's root (one with [`ClothGrid`], as [`ClothBuilder`](crate::scenes::ClothBuilder)
/// spawns): draw it as a mesh (module docs). Defaults: a plain canvas red, the texture (if
/// any) once over the whole cloth.
#[derive(Component, Reflect, Debug, Clone, PartialEq)]
#[reflect(Component, Default, Debug, Clone, PartialEq)]
#[require(Transform, Visibility)]
pub struct ClothMesh {
    /// What the mesh is filled with. Default `BodyFill::Color` #C8453A.
    pub fill: BodyFill,
    /// UV of the bottom-right particle (the top-left one has (0, 0)): (1, 1) spreads a
    /// texture once over the cloth, (4, 3) repeats it 4 × 3 times (with a repeating sampler).
    /// Default (1, 1).
    pub uv_scale: Vec2,
}

impl Default for ClothMesh {
    fn default() -> Self {
        Self {
            fill: BodyFill::Color(Color::srgb_u8(0xC8, 0x45, 0x3A)),
            uv_scale: Vec2::ONE,
        }
    }
}

impl ClothMesh {
    /// Checks the fields (a cloth whose mesh fails is not drawn, with an error logged).
    ///
    /// # Errors
    /// [`PbdError::NotFinite`] for a UV scale that is not finite.
    pub fn validate(&self) -> Result<(), PbdError> {
        finite_vec2("cloth UV scale", self.uv_scale)?;
        Ok(())
    }

    /// A cloth mesh filled with `fill`, the texture once over the cloth.
    pub fn new(fill: BodyFill) -> Self {
        Self { fill, ..default() }
    }
}

/// The constraints along a cell's edges and diagonals (`None` where there was none when the
/// mesh was built).
#[derive(Debug, Clone, Copy, Default)]
struct CellEdges {
    top: Option<Entity>,
    bottom: Option<Entity>,
    left: Option<Entity>,
    right: Option<Entity>,
    /// Top-right to bottom-left.
    anti: Option<Entity>,
    /// Top-left to bottom-right.
    main: Option<Entity>,
}

/// A cloth mesh's skin: which particle each vertex follows, and each cell's constraints.
#[derive(Component, Debug, Clone)]
pub(crate) struct ClothSkin {
    /// The particle of each vertex, row-major (`None` where it is gone).
    vertices: Vec<Option<Entity>>,
    /// Each cell's constraints, row-major over (width − 1) × (height − 1) cells.
    cells: Vec<CellEdges>,
    width: u32,
    /// How many constraints the root had when the triangles were last chosen.
    constraint_count: usize,
}

/// Its systems' schedule is the render plugin's.
pub(crate) struct ClothMeshPlugin(pub(crate) InternedScheduleLabel);

impl Plugin for ClothMeshPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<ClothMesh>()
            .add_systems(
                self.0,
                (
                    build_cloth_meshes.in_set(PbdRenderSystems::Build),
                    choose_cloth_triangles
                        .in_set(PbdRenderSystems::Build)
                        .after(build_cloth_meshes),
                    update_cloth_meshes.in_set(PbdRenderSystems::Update),
                ),
            )
            .add_systems(
                self.0,
                forget_emptied::<ClothSkin>.in_set(PbdRenderSystems::Build),
            )
            .add_observer(drop_skin::<ClothMesh, ClothSkin>);
    }
}

type ChangedCloth = Or<(
    Changed<ClothMesh>,
    Changed<ClothGrid>,
    Changed<BodyParticles>,
)>;

/// A cloth's root: its component, grid, particles, constraints, mesh (once built) and frame.
type ClothRoot = (
    Entity,
    &'static ClothMesh,
    &'static ClothGrid,
    &'static BodyParticles,
    Option<&'static BodyConstraints>,
    Option<&'static Mesh2d>,
    &'static GlobalTransform,
);

/// Builds the mesh of a cloth whose [`ClothMesh`], grid or particles changed.
fn build_cloth_meshes(
    mut commands: Commands,
    roots: Query<ClothRoot, ChangedCloth>,
    cells: Query<&ClothParticle>,
    constraints: Query<&DistanceConstraint>,
    positions: Query<&Position>,
    meshes: Option<ResMut<Assets<Mesh>>>,
) {
    let Some(mut meshes) = meshes else {
        return;
    };
    for (root, cloth, grid, particles, body_constraints, mesh, transform) in &roots {
        let checked = cloth.validate().and_then(|()| {
            in_range("cloth grid width", grid.width, 1, MAX_CLOTH_SIDE)?;
            in_range("cloth grid height", grid.height, 1, MAX_CLOTH_SIDE)
        });
        if refused("cloth", root, checked) {
            continue;
        }
        let vertices = grid.cells(particles, &cells);
        let skin = ClothSkin {
            cells: cell_edges(grid, &vertices, body_constraints, &constraints),
            vertices,
            width: grid.width,
            // Chosen by `choose_cloth_triangles` in this frame.
            constraint_count: usize::MAX,
        };
        let to_local = ToLocal::new(transform);
        let (w, h) = (grid.width, grid.height);
        let span = |n: u32| (n.max(2) - 1) as f32;
        let mut uvs = Vec::with_capacity(skin.vertices.len());
        let mut at = Vec::with_capacity(skin.vertices.len());
        for (k, particle) in skin.vertices.iter().enumerate() {
            let (row, column) = (k as u32 / w, k as u32 % w);
            uvs.push([
                cloth.uv_scale.x * column as f32 / span(w),
                cloth.uv_scale.y * row as f32 / span(h),
            ]);
            let p = particle
                .and_then(|e| positions.get(e).ok())
                .map_or(Vec2::ZERO, |p| p.0);
            at.push(to_local.point(p));
        }
        // Room for every triangle, so that choosing them never allocates.
        let indices = Vec::with_capacity(skin.cells.len() * 6);
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

/// The constraint joining each pair of neighbouring grid particles, per cell.
fn cell_edges(
    grid: &ClothGrid,
    vertices: &[Option<Entity>],
    body_constraints: Option<&BodyConstraints>,
    constraints: &Query<&DistanceConstraint>,
) -> Vec<CellEdges> {
    let by_pair = constraints_by_pair(body_constraints, constraints);
    let edge = |a: u32, b: u32| -> Option<Entity> {
        let (a, b) = (vertices[a as usize]?, vertices[b as usize]?);
        by_pair.get(&pair(a, b)).copied()
    };
    let (w, h) = (grid.width, grid.height);
    let mut cells = Vec::with_capacity((w.saturating_sub(1) * h.saturating_sub(1)) as usize);
    for row in 0..h.saturating_sub(1) {
        for column in 0..w.saturating_sub(1) {
            let tl = row * w + column;
            let (tr, bl, br) = (tl + 1, tl + w, tl + w + 1);
            cells.push(CellEdges {
                top: edge(tl, tr),
                bottom: edge(bl, br),
                left: edge(tl, bl),
                right: edge(tr, br),
                anti: edge(tr, bl),
                main: edge(tl, br),
            });
        }
    }
    cells
}

/// Chooses the drawn triangles again where the cloth's constraints changed (module docs).
fn choose_cloth_triangles(
    mut roots: Query<(&mut ClothSkin, &Mesh2d, Option<Ref<BodyConstraints>>)>,
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
        write_triangles(
            &skin,
            |e| e.is_some_and(|e| constraints.contains(e)),
            indices,
        );
    }
}

/// The triangles of every cell whose edges `exists`, into `indices` (cleared first).
fn write_triangles(
    skin: &ClothSkin,
    exists: impl Fn(Option<Entity>) -> bool,
    indices: &mut Vec<u32>,
) {
    indices.clear();
    let w = skin.width;
    for (k, cell) in skin.cells.iter().enumerate() {
        let (row, column) = (k as u32 / (w - 1), k as u32 % (w - 1));
        let tl = row * w + column;
        let (tr, bl, br) = (tl + 1, tl + w, tl + w + 1);
        let all = |edges: [Option<Entity>; 3]| edges.into_iter().all(&exists);
        // Split along the anti-diagonal: (tl, bl, tr) and (tr, bl, br).
        let a = [
            all([cell.left, cell.anti, cell.top]).then_some([tl, bl, tr]),
            all([cell.anti, cell.bottom, cell.right]).then_some([tr, bl, br]),
        ];
        // Split along the main diagonal: (tl, bl, br) and (tl, br, tr).
        let b = [
            all([cell.left, cell.bottom, cell.main]).then_some([tl, bl, br]),
            all([cell.main, cell.right, cell.top]).then_some([tl, br, tr]),
        ];
        let kept = |split: &[Option<[u32; 3]>; 2]| split.iter().flatten().count();
        let split = if kept(&b) > kept(&a) { b } else { a };
        for triangle in split.into_iter().flatten() {
            indices.extend_from_slice(&triangle);
        }
    }
}

/// Writes every cloth mesh's vertices from its particles' positions.
fn update_cloth_meshes(
    roots: Query<(&ClothSkin, &Mesh2d, &GlobalTransform)>,
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
        let to_local = ToLocal::new(transform);
        for (vertex, particle) in out.iter_mut().zip(&skin.vertices) {
            if let Some(p) = particle.and_then(|e| positions.get(e).ok()) {
                *vertex = to_local.point(p.0);
            }
        }
    }
}
