//! [`BlobMesh`]: a soft or rigid blob drawn as its rest shape, triangulated and skinned to its
//! particles, with its outline pushed out by the particles' radius so that the drawn body
//! covers what collides.
//!
//! At build, the particles' rest positions ([`ShapeRest`], or their positions where there is
//! none) are triangulated (Delaunay, with the `delaunator` crate) and triangles with an edge
//! longer than [`MAX_EDGE`] times the typical spacing (the median distance to the nearest
//! particle) are dropped, which leaves the shape's own outline, concave parts included, unless
//! the convex hull is at most [`CONVEX_SLACK`] larger (then the hull is drawn). Each outline
//! particle gets a second vertex, [`BlobMesh::margin`] out from the outline there, and each
//! outline edge a quad between the two rings: outline particle i's outer vertex is
//! p₀ + margin · n, n the outward normal of the chord p₋₂ → p₂ between the particles two steps
//! before and after it along the outline (a wider stencil than its own two edges, so that the
//! staircase of a disc of particles on a square grid gets smooth normals; on an outline of
//! fewer than five particles, the chord p₋₁ → p₁). Every frame the inner vertices are the
//! particles' positions and the outer ones follow the bent outline. UVs map the rest shape's
//! bounding box (margin included) to 0..1, V down. Rest positions that are not finite are
//! left out.

use bevy::ecs::schedule::InternedScheduleLabel;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;

use super::PbdRenderSystems;
use super::fill::BodyFill;
use super::skin::{
    ToLocal, drop_skin, forget_emptied, mesh_components, positions_mut, refused, skin_mesh,
};
use crate::body::BodyParticles;
use crate::collider::ParticleRadius;
use crate::error::{PbdError, non_negative};
use crate::particle::Position;
use crate::shape_matching::ShapeRest;

/// Triangles with an edge longer than this many typical spacings are not part of the shape:
/// above the √2 of a square lattice's diagonal, below the √5 of a step along its outline.
pub const MAX_EDGE: f32 = 1.5;

/// A shape whose convex hull is at most this much larger than its triangles (by area) is
/// drawn as its convex hull: the staircase a disc of particles on a square grid leaves is
/// smoothed away (it adds 11 % to a disc of 4 spacings' radius, less to larger ones), while
/// an L-shape or a crescent keeps its concave side.
pub const CONVEX_SLACK: f32 = 0.15;

/// On a blob's root (one whose particles have [`ShapeRest`], as
/// [`BlobBuilder`](crate::scenes::BlobBuilder) spawns): draw it as a filled, skinned outline
/// (module docs). Defaults: a jelly green, the margin the particles' radius.
#[derive(Component, Reflect, Debug, Clone, PartialEq)]
#[reflect(Component, Default, Debug, Clone, PartialEq)]
#[require(Transform, Visibility)]
pub struct BlobMesh {
    /// What the blob is filled with. Default `BodyFill::Color` #5DB85C.
    pub fill: BodyFill,
    /// How far the drawn outline lies outside the outline particles' centres (m), or `None`
    /// for the first particle's [`ParticleRadius`]. Default `None`.
    pub margin: Option<f32>,
}

impl Default for BlobMesh {
    fn default() -> Self {
        Self {
            fill: BodyFill::Color(Color::srgb_u8(0x5D, 0xB8, 0x5C)),
            margin: None,
        }
    }
}

impl BlobMesh {
    /// Checks the fields (a blob whose mesh fails is not drawn, with an error logged).
    ///
    /// # Errors
    /// [`PbdError::Negative`] for a margin that is not a finite number ≥ 0.
    pub fn validate(&self) -> Result<(), PbdError> {
        if let Some(margin) = self.margin {
            non_negative("blob mesh margin (m)", margin)?;
        }
        Ok(())
    }

    /// A blob mesh filled with `fill`, its margin the particles' radius.
    pub fn new(fill: BodyFill) -> Self {
        Self { fill, ..default() }
    }
}

/// A blob mesh's skin. Vertices: the particles (0 .. n), then the outer ring (n ..).
#[derive(Component, Debug, Clone)]
pub(crate) struct BlobSkin {
    particles: Vec<Entity>,
    /// For each outer vertex, the index of its particle.
    ring: Vec<u32>,
    /// For each outer vertex, the outer vertices before and after it along the outline (the
    /// shape on the left going forward).
    around: Vec<[u32; 2]>,
    margin: f32,
}

/// Its systems' schedule is the render plugin's.
pub(crate) struct BlobMeshPlugin(pub(crate) InternedScheduleLabel);

impl Plugin for BlobMeshPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<BlobMesh>()
            .add_systems(
                self.0,
                (
                    build_blob_meshes.in_set(PbdRenderSystems::Build),
                    update_blob_meshes.in_set(PbdRenderSystems::Update),
                ),
            )
            .add_systems(
                self.0,
                forget_emptied::<BlobSkin>.in_set(PbdRenderSystems::Build),
            )
            .add_observer(drop_skin::<BlobMesh, BlobSkin>);
    }
}

/// The rest shape's triangles (counter-clockwise) and its outline, from `rest` positions.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Triangulation {
    pub(crate) triangles: Vec<[u32; 3]>,
    /// Outline edges (particle indices), the shape on their left.
    pub(crate) outline: Vec<[u32; 2]>,
}

/// Triangulates `rest` (module docs). Fewer than three points, or all on a line: nothing.
pub(crate) fn triangulate(rest: &[Vec2]) -> Triangulation {
    let points: Vec<delaunator::Point> = rest
        .iter()
        .map(|p| delaunator::Point {
            x: p.x as f64,
            y: p.y as f64,
        })
        .collect();
    let delaunay = delaunator::triangulate(&points);
    let corners: Vec<[u32; 3]> = delaunay
        .triangles
        .chunks_exact(3)
        .map(|t| [t[0] as u32, t[1] as u32, t[2] as u32])
        .collect();
    let length = |a: u32, b: u32| rest[a as usize].distance(rest[b as usize]);
    // The typical spacing: the median over particles of the shortest Delaunay edge (the
    // nearest neighbour is always one).
    let mut nearest = vec![f32::INFINITY; rest.len()];
    for t in &corners {
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            let d = length(a, b);
            nearest[a as usize] = nearest[a as usize].min(d);
            nearest[b as usize] = nearest[b as usize].min(d);
        }
    }
    nearest.retain(|d| d.is_finite());
    if nearest.is_empty() {
        return Triangulation::default();
    }
    nearest.sort_by(f32::total_cmp);
    let limit = MAX_EDGE * nearest[nearest.len() / 2];
    let area = |&[a, b, c]: &[u32; 3]| {
        let (pa, pb, pc) = (rest[a as usize], rest[b as usize], rest[c as usize]);
        0.5 * (pb - pa).perp_dot(pc - pa)
    };
    let short = |t: &&[u32; 3]| {
        let [a, b, c] = **t;
        length(a, b) <= limit && length(b, c) <= limit && length(c, a) <= limit
    };
    let shape_area: f32 = corners.iter().filter(short).map(|t| area(t).abs()).sum();
    let hull_area: f32 = corners.iter().map(|t| area(t).abs()).sum();
    // A nearly convex shape (a disc on a grid, whose outline is a staircase) is drawn as its
    // convex hull.
    let convex = hull_area <= (1.0 + CONVEX_SLACK) * shape_area;
    let mut triangles = Vec::new();
    let mut edges: HashMap<(u32, u32), (u32, [u32; 2])> = HashMap::new();
    for corner in corners.iter().filter(|t| convex || short(t)) {
        let [a, b, c] = *corner;
        let t = if area(corner) >= 0.0 {
            [a, b, c]
        } else {
            [a, c, b]
        };
        triangles.push(t);
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            edges.entry((a.min(b), a.max(b))).or_insert((0, [a, b])).0 += 1;
        }
    }
    let mut outline: Vec<[u32; 2]> = edges
        .into_values()
        .filter(|(count, _)| *count == 1)
        .map(|(_, edge)| edge)
        .collect();
    outline.sort_unstable();
    Triangulation { triangles, outline }
}

/// A blob's root: its component, particles, mesh (once built) and frame.
type BlobRoot = (
    Entity,
    &'static BlobMesh,
    &'static BodyParticles,
    Option<&'static Mesh2d>,
    &'static GlobalTransform,
);

type ChangedBlob = Or<(Changed<BlobMesh>, Changed<BodyParticles>)>;

/// Builds the mesh of a blob whose [`BlobMesh`] or particles changed.
fn build_blob_meshes(
    mut commands: Commands,
    roots: Query<BlobRoot, ChangedBlob>,
    particles: Query<(&Position, Option<&ShapeRest>, Option<&ParticleRadius>)>,
    meshes: Option<ResMut<Assets<Mesh>>>,
) {
    let Some(mut meshes) = meshes else {
        return;
    };
    for (root, blob, members, mesh, transform) in &roots {
        if refused("blob", root, blob.validate()) {
            continue;
        }
        let members: Vec<Entity> = members.iter().filter(|&e| particles.contains(e)).collect();
        let any_rest = members
            .iter()
            .any(|&e| particles.get(e).is_ok_and(|(_, rest, _)| rest.is_some()));
        // The shape's particles: those with a rest position, or all of them if none has one
        // (a point that is not finite is left out: it has no place in a triangulation).
        let (shape, rest): (Vec<Entity>, Vec<Vec2>) = members
            .iter()
            .filter_map(|&e| {
                let (p, rest, _) = particles.get(e).ok()?;
                match (rest, any_rest) {
                    (Some(rest), _) => Some((e, rest.0)),
                    (None, false) => Some((e, p.0)),
                    (None, true) => None,
                }
            })
            .filter(|(_, p)| p.is_finite())
            .unzip();
        let mesh_of = triangulate(&rest);
        let margin = blob
            .margin
            .or_else(|| {
                shape
                    .first()
                    .and_then(|&e| particles.get(e).ok())
                    .map(|(_, _, r)| r.copied().unwrap_or_default().0)
            })
            .unwrap_or(0.0);
        // Outer ring: one vertex per outline particle, with its neighbours along the outline.
        let mut ring_of = HashMap::new();
        let mut ring = Vec::new();
        for &[a, b] in &mesh_of.outline {
            for p in [a, b] {
                ring_of.entry(p).or_insert_with(|| {
                    ring.push(p);
                    ring.len() as u32 - 1
                });
            }
        }
        let mut around: Vec<[u32; 2]> = (0..ring.len() as u32).map(|r| [r, r]).collect();
        for &[a, b] in &mesh_of.outline {
            let (ra, rb) = (ring_of[&a], ring_of[&b]);
            around[ra as usize][1] = rb;
            around[rb as usize][0] = ra;
        }
        let n = shape.len() as u32;
        let mut indices: Vec<u32> = mesh_of.triangles.iter().flatten().copied().collect();
        for &[a, b] in &mesh_of.outline {
            let (oa, ob) = (n + ring_of[&a], n + ring_of[&b]);
            indices.extend_from_slice(&[a, b, ob, a, ob, oa]);
        }
        let skin = BlobSkin {
            particles: shape,
            ring,
            around,
            margin,
        };
        // UVs from the rest shape, margin included.
        let rest_outer: Vec<Vec2> = (0..skin.ring.len())
            .map(|r| skin.outer(r, |k| Some(rest[k])).unwrap_or(Vec2::ZERO))
            .collect();
        let (min, max) = rest
            .iter()
            .chain(&rest_outer)
            .fold((Vec2::MAX, Vec2::MIN), |(lo, hi), &p| {
                (lo.min(p), hi.max(p))
            });
        let size = (max - min).max(Vec2::splat(f32::MIN_POSITIVE));
        let uvs: Vec<[f32; 2]> = rest
            .iter()
            .chain(&rest_outer)
            .map(|p| [(p.x - min.x) / size.x, (max.y - p.y) / size.y])
            .collect();
        let mut at = vec![[0.0; 3]; uvs.len()];
        skin.write(
            |e| particles.get(e).ok().map(|(p, _, _)| p.0),
            ToLocal::new(transform),
            &mut at,
        );
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

impl BlobSkin {
    /// Outer vertex `r` for particle positions `at(k)` (k indexes `particles`): its particle
    /// pushed out by the margin along the outline's smoothed normal (module docs); `None` where
    /// a particle it needs is unknown.
    fn outer(&self, r: usize, at: impl Fn(usize) -> Option<Vec2>) -> Option<Vec2> {
        let step = |r: u32, forward: bool| self.around[r as usize][forward as usize];
        let point = |r: u32| at(self.ring[r as usize] as usize);
        let r = r as u32;
        let (before, after) = (step(r, false), step(r, true));
        let (two_before, two_after) = (step(before, false), step(after, true));
        // The chord two steps either side, on a loop of five or more; on a shorter one the
        // chord between the two neighbours (two steps either side would meet or cross).
        let wide = two_before != two_after && two_before != after && two_after != before;
        let (a, b) = if wide {
            (two_before, two_after)
        } else {
            (before, after)
        };
        let p0 = point(r)?;
        // The shape is on the chord's left: outward is its right.
        let outward = -(point(b)? - point(a)?).normalize_or_zero().perp();
        Some(p0 + outward * self.margin)
    }

    /// Writes the vertices (particles, then the outer ring) into `out`; allocates nothing. A
    /// vertex whose particles are unknown keeps its place.
    fn write(
        &self,
        position: impl Fn(Entity) -> Option<Vec2>,
        to_local: ToLocal,
        out: &mut [[f32; 3]],
    ) {
        let n = self.particles.len();
        if out.len() < n + self.ring.len() {
            return;
        }
        let at = |k: usize| position(self.particles[k]);
        for (k, vertex) in out[..n].iter_mut().enumerate() {
            if let Some(p) = at(k) {
                *vertex = to_local.point(p);
            }
        }
        for (r, vertex) in out[n..].iter_mut().enumerate() {
            if let Some(p) = self.outer(r, at) {
                *vertex = to_local.point(p);
            }
        }
    }
}

/// Writes every blob mesh's vertices from its particles' positions.
fn update_blob_meshes(
    roots: Query<(&BlobSkin, &Mesh2d, &GlobalTransform)>,
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
        skin.write(
            |e| positions.get(e).ok().map(|p| p.0),
            ToLocal::new(transform),
            out,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenes::{BlobBuilder, BlobShape};

    /// The area (m²) inside a triangulation's outline, by the shoelace formula over its edges.
    fn outline_area(rest: &[Vec2], t: &Triangulation) -> f32 {
        t.outline
            .iter()
            .map(|&[a, b]| 0.5 * rest[a as usize].perp_dot(rest[b as usize]))
            .sum()
    }

    fn triangles_area(rest: &[Vec2], t: &Triangulation) -> f32 {
        t.triangles
            .iter()
            .map(|&[a, b, c]| {
                let (pa, pb, pc) = (rest[a as usize], rest[b as usize], rest[c as usize]);
                0.5 * (pb - pa).perp_dot(pc - pa)
            })
            .sum()
    }

    #[test]
    fn discs_and_boxes_are_their_hulls_and_an_l_keeps_its_corner() {
        // A disc of 0.4 m on a 0.1 m grid: its hull, a polygon through the outermost grid
        // points, between the inscribed and circumscribed areas of the lattice disc.
        let disc = BlobBuilder {
            shape: BlobShape::Disc(0.4),
            ..default()
        }
        .positions()
        .unwrap();
        let t = triangulate(&disc);
        let area = triangles_area(&disc, &t);
        assert!(
            (area - outline_area(&disc, &t)).abs() < 1e-5,
            "the outline bounds the triangles"
        );
        assert!(
            t.triangles.iter().all(|&[a, b, c]| {
                (disc[b as usize] - disc[a as usize]).perp_dot(disc[c as usize] - disc[a as usize])
                    > 0.0
            }),
            "counter-clockwise"
        );
        let circle = core::f32::consts::PI * 0.4 * 0.4;
        assert!(
            (area - 0.42).abs() < 1e-5,
            "{area} m² against the lattice hull's 0.42"
        );
        assert!(
            area > 0.8 * circle && area < circle,
            "{area} m² against {circle}"
        );
        // A 0.6 × 0.4 m box: the rectangle through its corner particles.
        let boxed = BlobBuilder {
            shape: BlobShape::Box(Vec2::new(0.3, 0.2)),
            ..default()
        }
        .positions()
        .unwrap();
        let t = triangulate(&boxed);
        assert!((triangles_area(&boxed, &t) - 0.24).abs() < 1e-5);
        assert_eq!(t.outline.len(), 2 * (6 + 4));
        // An L of two 0.6 × 0.2 m arms on a 0.1 m grid: its hull would add 35 %, so the notch
        // stays (0.2 m² and the small triangle the grid leaves in its inner corner, 0.005 m²;
        // an outline of 24 grid edges and the corner's diagonal for two of them).
        let l: Vec<Vec2> = (0..7)
            .flat_map(|i| (0..7).map(move |j| Vec2::new(i as f32, j as f32) * 0.1))
            .filter(|p| p.x <= 0.2 + 1e-4 || p.y <= 0.2 + 1e-4)
            .collect();
        let t = triangulate(&l);
        let l_area = triangles_area(&l, &t);
        assert!((l_area - 0.205).abs() < 1e-5, "{l_area}");
        assert_eq!(t.outline.len(), 23);
        // Fewer than three points, or all on a line: nothing.
        assert_eq!(
            triangulate(&[Vec2::ZERO, Vec2::X]),
            Triangulation::default()
        );
        assert!(
            triangulate(&[Vec2::ZERO, Vec2::X, 2.0 * Vec2::X])
                .triangles
                .is_empty()
        );
    }

    #[test]
    fn short_outlines_push_their_rim_outward() {
        // Loops of 3, 4 and 8 particles around the origin, counter-clockwise: every outer
        // vertex lies one margin from its particle, farther from the centre.
        for n in [3u32, 4, 8] {
            let points: Vec<Vec2> = (0..n)
                .map(|k| Vec2::from_angle(k as f32 * core::f32::consts::TAU / n as f32))
                .collect();
            let skin = BlobSkin {
                particles: (0..n)
                    .map(|k| Entity::from_raw_u32(k + 1).unwrap())
                    .collect(),
                ring: (0..n).collect(),
                around: (0..n).map(|k| [(k + n - 1) % n, (k + 1) % n]).collect(),
                margin: 0.05,
            };
            for r in 0..n as usize {
                let outer = skin.outer(r, |k| Some(points[k])).unwrap();
                assert!(
                    (outer.distance(points[r]) - 0.05).abs() < 1e-5,
                    "{n}: {outer}"
                );
                assert!(outer.length() > points[r].length() + 0.03, "{n}: {outer}");
            }
        }
    }
}
