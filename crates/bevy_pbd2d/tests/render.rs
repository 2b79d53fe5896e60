//! The render feature's meshes (feature `render`): the cloth, rope and blob meshes follow their
//! particles after every step, and tearing takes triangles and segments away.
#![cfg(feature = "render")]

mod common;

use bevy::mesh::{Indices, MeshPlugin, VertexAttributeValues};
use bevy::prelude::*;
use bevy_pbd2d::prelude::*;
use bevy_pbd2d::render::fluid::FluidSplats;
use bevy_pbd2d::render::{BlobMesh, ClothMesh, FluidSurface, RopeMesh};
use bevy_pbd2d::scenes::Cloth;
use common::{position, spawn};

/// A headless app with assets and meshes (no renderer), stepping at `dt` (s), one step per
/// update.
pub fn render_app(dt: f32) -> App {
    common::app_with(
        dt,
        (AssetPlugin::default(), MeshPlugin, PbdPlugins::default()),
    )
}

fn mesh(app: &App, root: Entity) -> &Mesh {
    let handle = &app
        .world()
        .get::<Mesh2d>(root)
        .expect("the render plugin gave the root a mesh")
        .0;
    app.world()
        .resource::<Assets<Mesh>>()
        .get(handle)
        .expect("the mesh asset exists")
}

fn vertices(mesh: &Mesh) -> Vec<Vec2> {
    match mesh.attribute(Mesh::ATTRIBUTE_POSITION) {
        Some(VertexAttributeValues::Float32x3(v)) => {
            v.iter().map(|p| Vec2::new(p[0], p[1])).collect()
        }
        other => panic!("positions: {other:?}"),
    }
}

fn uvs(mesh: &Mesh) -> Vec<Vec2> {
    match mesh.attribute(Mesh::ATTRIBUTE_UV_0) {
        Some(VertexAttributeValues::Float32x2(v)) => v.iter().map(|&p| Vec2::from(p)).collect(),
        other => panic!("uvs: {other:?}"),
    }
}

fn triangles(mesh: &Mesh) -> Vec<[u32; 3]> {
    match mesh.indices() {
        Some(Indices::U32(i)) => i.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect(),
        other => panic!("indices: {other:?}"),
    }
}

/// Whether any triangle has the edge (a, b).
fn has_edge(triangles: &[[u32; 3]], a: u32, b: u32) -> bool {
    triangles.iter().any(|t| {
        [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])]
            .into_iter()
            .any(|(x, y)| (x, y) == (a, b) || (x, y) == (b, a))
    })
}

/// The distance constraint of `body` joining `a` and `b`.
fn constraint_between(app: &mut App, a: Entity, b: Entity) -> Entity {
    let world = app.world_mut();
    let mut q = world.query::<(Entity, &DistanceConstraint)>();
    q.iter(world)
        .find(|(_, c)| c.particles == [a, b] || c.particles == [b, a])
        .map(|(e, _)| e)
        .expect("a constraint joins them")
}

/// Despawns the constraint between the cloth's particles `a` and `b` (grid indices), runs a
/// frame and returns the cloth mesh's triangles.
fn despawn_between(app: &mut App, cloth: &Cloth, a: u32, b: u32) -> Vec<[u32; 3]> {
    let (pa, pb) = (cloth.particles[a as usize], cloth.particles[b as usize]);
    let constraint = constraint_between(app, pa, pb);
    app.world_mut().despawn(constraint);
    app.update();
    triangles(mesh(app, cloth.root))
}

#[test]
fn the_cloth_meshs_vertices_are_its_particles_after_every_step() {
    let mut app = render_app(0.01);
    let (w, h) = (12u32, 9u32);
    let cloth = spawn(&mut app, |c| {
        // Pinned at one corner: it swings.
        let cloth = ClothBuilder {
            width: w,
            height: h,
            fixed: FixedCorners::One,
            ..default()
        }
        .spawn(c)
        .unwrap();
        c.entity(cloth.root).insert(ClothMesh::default());
        cloth
    });
    let start = position(&app, cloth.particles[(w - 1) as usize]);
    for frame in 0..60 {
        app.update();
        let mesh = mesh(&app, cloth.root);
        let v = vertices(mesh);
        assert_eq!(v.len(), (w * h) as usize);
        for (k, &particle) in cloth.particles.iter().enumerate() {
            assert_eq!(v[k], position(&app, particle), "frame {frame}, vertex {k}");
        }
        // Two triangles per cell, none torn.
        assert_eq!(triangles(mesh).len(), (2 * (w - 1) * (h - 1)) as usize);
    }
    // The free top corner fell: the test saw a moving cloth.
    let fallen = start.distance(position(&app, cloth.particles[(w - 1) as usize]));
    assert!(fallen > 0.5, "the free corner moved {fallen} m");
    // UVs: (0, 0) top left, (1, 1) bottom right, columns along U.
    let uv = uvs(mesh(&app, cloth.root));
    assert_eq!(uv[0], Vec2::ZERO);
    assert_eq!(uv[(w * h - 1) as usize], Vec2::ONE);
    assert_eq!(uv[1].x, 1.0 / (w - 1) as f32);
}

#[test]
fn a_torn_constraint_takes_its_triangles_away() {
    let mut app = render_app(0.01);
    let (w, h) = (10u32, 8u32);
    let cloth = spawn(&mut app, |c| {
        let cloth = ClothBuilder {
            width: w,
            height: h,
            breaking_strain: Some(0.6),
            ..default()
        }
        .spawn(c)
        .unwrap();
        c.entity(cloth.root).insert(ClothMesh::default());
        cloth
    });
    app.update();
    let full = (2 * (w - 1) * (h - 1)) as usize;
    assert_eq!(triangles(mesh(&app, cloth.root)).len(), full);
    // Despawn one inner horizontal constraint, (row 3, column 4)–(row 3, column 5): the cell
    // above and the cell below each lose the one triangle along it.
    let (a, b) = (3 * w + 4, 3 * w + 5);
    let t = despawn_between(&mut app, &cloth, a, b);
    assert_eq!(t.len(), full - 2);
    assert!(
        !has_edge(&t, a, b),
        "a triangle still spans the despawned constraint"
    );
    // Despawn a cell's top-right–bottom-left diagonal, (row 5, column 2)–(row 6, column 1): the
    // cell is split along its other diagonal instead and keeps both triangles.
    let (c, d) = (5 * w + 2, 6 * w + 1);
    let t = despawn_between(&mut app, &cloth, c, d);
    assert_eq!(t.len(), full - 2);
    assert!(
        !has_edge(&t, c, d),
        "a triangle still spans the despawned diagonal"
    );
    assert!(
        has_edge(&t, 5 * w + 1, 6 * w + 2),
        "the cell is split along its other diagonal"
    );
    // Tear it: pull the middle of the bottom row 5 m down.
    let pulled = cloth.particles[((h - 1) * w + w / 2) as usize];
    let target = position(&app, pulled) - Vec2::new(0.0, 5.0);
    app.world_mut()
        .entity_mut(pulled)
        .insert(KinematicTarget(target));
    let mut broken = Vec::new();
    for _ in 0..100 {
        app.update();
        let messages = app.world().resource::<Messages<ConstraintBroken>>();
        broken.extend(messages.iter_current_update_messages().copied());
    }
    assert!(
        broken.len() >= 3,
        "the drag tore {} constraints",
        broken.len()
    );
    let index = |e: Entity| cloth.particles.iter().position(|&p| p == e).unwrap() as u32;
    let t = triangles(mesh(&app, cloth.root));
    for torn in &broken {
        let [a, b] = torn.particles.map(index);
        assert!(!has_edge(&t, a, b), "a triangle still spans torn {a}–{b}");
    }
    assert!(t.len() < full - 2, "{} triangles after the tear", t.len());
}

#[test]
fn the_rope_strip_follows_the_chain() {
    let mut app = render_app(0.005);
    let width = 0.08;
    let rope = spawn(&mut app, |c| {
        let rope = RopeBuilder::between(Vec2::ZERO, Vec2::new(2.0, 0.0))
            .spawn(c)
            .unwrap();
        c.entity(rope.root).insert(RopeMesh {
            width: Some(width),
            tile_length: Some(0.2),
            ..default()
        });
        rope
    });
    let n = rope.particles.len();
    assert_eq!(n, 21);
    for frame in 0..150 {
        app.update();
        let mesh = mesh(&app, rope.root);
        let v = vertices(mesh);
        assert_eq!(v.len(), 2 * (n + 2));
        let p: Vec<Vec2> = rope.particles.iter().map(|&e| position(&app, e)).collect();
        for k in 0..n {
            let (left, right) = (v[2 * k + 2], v[2 * k + 3]);
            let middle = 0.5 * (left + right);
            assert!(
                middle.distance(p[k]) < 1e-5,
                "frame {frame}: pair {k} centred {} m off its particle",
                middle.distance(p[k])
            );
            // Across the chain: perpendicular to the chord through its neighbours.
            let chord = p[(k + 1).min(n - 1)] - p[k.saturating_sub(1)];
            let across = (left - right).normalize();
            assert!(
                across.dot(chord.normalize()).abs() < 1e-3,
                "frame {frame}, pair {k}"
            );
            // At least the width, at most the mitre limit's twice it.
            let span = left.distance(right);
            assert!(
                span >= width - 1e-5 && span <= 2.0 * width + 1e-5,
                "{span} m"
            );
            // Left is to the left of the rope's direction.
            assert!(chord.perp_dot(left - p[k]) > 0.0, "frame {frame}, pair {k}");
        }
        // Caps half a width beyond the end particles.
        for (cap, end) in [(0, 0), (n + 1, n - 1)] {
            let centre = 0.5 * (v[2 * cap] + v[2 * cap + 1]);
            assert!((centre.distance(p[end]) - 0.5 * width).abs() < 1e-5);
        }
        // Every segment and both caps drawn.
        assert_eq!(triangles(mesh).len(), 2 * (n + 1));
    }
    // The rope swung down: the test saw it move.
    assert!(position(&app, rope.particles[n - 1]).y < -1.0);
    // V along the rest length, a tile every 0.2 m.
    let uv = uvs(mesh(&app, rope.root));
    for k in 0..n {
        assert!(
            (uv[2 * k + 2].y - 0.1 * k as f32 / 0.2).abs() < 1e-4,
            "{:?}",
            uv[2 * k + 2]
        );
        assert_eq!((uv[2 * k + 2].x, uv[2 * k + 3].x), (0.0, 1.0));
    }
    // A torn segment is not drawn.
    let segment = rope.segments[10];
    app.world_mut().despawn(segment);
    app.update();
    let t = triangles(mesh(&app, rope.root));
    assert_eq!(t.len(), 2 * n);
    assert!(!has_edge(&t, 2 * 11, 2 * 12) && !has_edge(&t, 2 * 11 + 1, 2 * 12 + 1));
}

/// Whether `p` lies in one of `triangles` of `v` (barycentric, with a small tolerance).
fn inside(p: Vec2, v: &[Vec2], triangles: &[[u32; 3]]) -> bool {
    triangles.iter().any(|t| {
        let [a, b, c] = t.map(|i| v[i as usize]);
        let area = (b - a).perp_dot(c - a);
        if area.abs() < 1e-12 {
            return false;
        }
        let l1 = (b - p).perp_dot(c - p) / area;
        let l2 = (c - p).perp_dot(a - p) / area;
        let l3 = 1.0 - l1 - l2;
        l1 >= -1e-4 && l2 >= -1e-4 && l3 >= -1e-4
    })
}

#[test]
fn the_blob_skin_covers_its_particles_and_follows_them() {
    let mut app = render_app(0.005);
    // A soft disc dropped on a floor, so that it squashes.
    common::collider(
        &mut app,
        Rectangle::new(10.0, 1.0),
        Transform::from_xyz(0.0, -1.5, 0.0),
        ColliderMaterial::default(),
    );
    let blob = spawn(&mut app, |c| {
        let blob = BlobBuilder::default().spawn(c).unwrap();
        c.entity(blob.root).insert(BlobMesh::default());
        blob
    });
    let n = blob.particles.len();
    let margin = 0.05; // the particles' radius: half the 0.1 m spacing
    let rest_height = 1.0 + 2.0 * margin;
    let mut lowest_height = f32::INFINITY;
    for frame in 0..300 {
        app.update();
        let mesh = mesh(&app, blob.root);
        let v = vertices(mesh);
        let t = triangles(mesh);
        let p: Vec<Vec2> = blob.particles.iter().map(|&e| position(&app, e)).collect();
        assert_eq!(
            &v[..n],
            &p[..],
            "frame {frame}: inner vertices are the particles"
        );
        for (k, q) in p.iter().enumerate() {
            assert!(
                inside(*q, &v, &t),
                "frame {frame}: particle {k} outside the mesh"
            );
        }
        // The outer ring lies about one margin out from the outline particles (along smoothed
        // normals, so that the nearest particle may be a neighbour).
        let ring = &v[n..];
        assert!(!ring.is_empty());
        for (k, r) in ring.iter().enumerate() {
            let nearest = p
                .iter()
                .map(|q| q.distance(*r))
                .fold(f32::INFINITY, f32::min);
            assert!(
                nearest > 0.5 * margin && nearest < 1.5 * margin,
                "frame {frame}: rim vertex {k} of {} {nearest} m from the nearest particle",
                ring.len()
            );
        }
        let (lo, hi) = p
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), q| {
                (lo.min(q.y), hi.max(q.y))
            });
        lowest_height = lowest_height.min(hi - lo + 2.0 * margin);
    }
    // It landed and squashed: the test saw it deform.
    assert!(
        lowest_height < 0.97 * rest_height,
        "least height {lowest_height} m"
    );
    // The rim is one closed loop: every outer vertex ends two rim edges.
    let t = triangles(mesh(&app, blob.root));
    let rim_triangles = t
        .iter()
        .filter(|tri| tri.iter().any(|&i| i as usize >= n))
        .count();
    assert_eq!(
        rim_triangles,
        2 * (vertices(mesh(&app, blob.root)).len() - n)
    );
}

#[test]
fn a_body_that_loses_its_particles_loses_its_mesh() {
    let mut app = render_app(0.01);
    let (blob, rope) = spawn(&mut app, |c| {
        let blob = BlobBuilder::default().spawn(c).unwrap();
        c.entity(blob.root).insert(BlobMesh::default());
        let rope = RopeBuilder::between(Vec2::new(2.0, 0.0), Vec2::new(3.0, 0.0))
            .spawn(c)
            .unwrap();
        c.entity(rope.root).insert(RopeMesh::default());
        (blob, rope)
    });
    app.update();
    assert!(app.world().get::<Mesh2d>(blob.root).is_some());
    assert!(app.world().get::<Mesh2d>(rope.root).is_some());
    for particle in blob.particles.iter().chain(&rope.particles) {
        app.world_mut().despawn(*particle);
    }
    app.update();
    app.update();
    assert!(
        app.world().get::<Mesh2d>(blob.root).is_none(),
        "the blob's mesh stayed"
    );
    assert!(
        app.world().get::<Mesh2d>(rope.root).is_none(),
        "the rope's mesh stayed"
    );
    // A particle joining the body again brings the mesh back.
    let back = spawn(&mut app, |c| {
        c.spawn((
            Particle,
            Position(Vec2::new(2.0, 0.0)),
            ParticleOf(rope.root),
        ))
        .id()
    });
    app.update();
    let v = vertices(mesh(&app, rope.root));
    assert_eq!(v.len(), 2 * (1 + 2));
    assert!((0.5 * (v[2] + v[3])).distance(position(&app, back)) < 1e-6);
}

#[test]
fn invalid_render_components_are_refused_and_not_drawn() {
    let mut app = render_app(0.01);
    let rope = spawn(&mut app, |c| {
        let rope = RopeBuilder::default().spawn(c).unwrap();
        c.entity(rope.root).insert(RopeMesh {
            width: Some(f32::NAN),
            ..default()
        });
        rope
    });
    app.update();
    assert!(app.world().get::<Mesh2d>(rope.root).is_none());
    assert!(
        RopeMesh {
            tile_length: Some(-1.0),
            ..default()
        }
        .validate()
        .is_err()
    );
    assert!(
        BlobMesh {
            margin: Some(f32::INFINITY),
            ..default()
        }
        .validate()
        .is_err()
    );
    assert!(
        ClothMesh {
            uv_scale: Vec2::new(1.0, f32::NAN),
            ..default()
        }
        .validate()
        .is_err()
    );
    // Made valid, it is drawn.
    app.world_mut()
        .entity_mut(rope.root)
        .insert(RopeMesh::default());
    app.update();
    assert!(app.world().get::<Mesh2d>(rope.root).is_some());
}

/// Every mesh asset has vertices (Bevy cannot upload a mesh without: its mesh allocator logs a
/// use-after-free error each frame it is sent one).
fn assert_no_empty_mesh(app: &App, when: &str) {
    for (id, mesh) in app.world().resource::<Assets<Mesh>>().iter() {
        assert!(
            mesh.count_vertices() > 0,
            "{when}: mesh {id} has no vertices"
        );
    }
}

#[test]
fn no_mesh_is_ever_left_without_vertices() {
    let mut app = render_app(0.01);
    // A cloth and undrawn fluid (no FluidSurface, no ParticleColor): no splat mesh at all.
    let (cloth, undrawn) = spawn(&mut app, |c| {
        let cloth = ClothBuilder {
            width: 4,
            height: 3,
            ..default()
        }
        .spawn(c)
        .unwrap();
        c.entity(cloth.root).insert(ClothMesh::default());
        let undrawn = c.spawn(ParticleBody).id();
        for k in 0..4 {
            c.spawn((
                FluidParticle,
                Position(Vec2::new(5.0 + 0.1 * k as f32, 0.0)),
                ParticleOf(undrawn),
            ));
        }
        (cloth, undrawn)
    });
    for frame in 0..3 {
        app.update();
        assert_no_empty_mesh(&app, &format!("frame {frame}"));
    }
    assert!(
        app.world().resource::<FluidSplats>().mesh().is_none(),
        "a splat mesh was made with nothing to draw"
    );
    // Drawn, then gone: the splat mesh keeps its last particles and nothing is drawn.
    app.world_mut()
        .entity_mut(undrawn)
        .insert(FluidSurface::default());
    app.update();
    let drawn = |app: &App| app.world().resource::<FluidSplats>().drawn();
    assert_eq!(drawn(&app), 4);
    app.world_mut().entity_mut(undrawn).despawn();
    // Every constraint of the cloth torn: no triangle left, the particles still there.
    let world = app.world_mut();
    let mut constraints = world.query_filtered::<Entity, With<DistanceConstraint>>();
    let all: Vec<Entity> = constraints.iter(world).collect();
    for constraint in all {
        world.despawn(constraint);
    }
    for frame in 0..3 {
        app.update();
        assert_no_empty_mesh(&app, &format!("after the removals, frame {frame}"));
    }
    assert_eq!(drawn(&app), 0);
    assert!(triangles(mesh(&app, cloth.root)).is_empty());
}

/// Colour mixing: without gravity, a red and a blue 6 × 6 block of fluid touch. Over 2 s the
/// colours mix where they meet and keep their sum (red and blue alike, to 10⁻⁴ relative);
/// no channel leaves [0, 1] (no overshoot); a touching particle without `ColorMixing` keeps
/// its colour, and so does everything with a zero rate.
#[test]
fn touching_colours_mix_and_keep_their_sum() {
    let mut app = render_app(1.0 / 60.0);
    app.insert_resource(Gravity(Vec2::ZERO));
    let r = app.world().resource::<FluidSettings>().particle_radius;
    let d = 2.0 * r;
    let red = Color::linear_rgb(1.0, 0.0, 0.0);
    let blue = Color::linear_rgb(0.0, 0.0, 1.0);
    let left = common::fluid_block(&mut app, Vec2::ZERO, (6, 6), Vec2::ZERO);
    let right = common::fluid_block(&mut app, Vec2::new(6.0 * d, 0.0), (6, 6), Vec2::ZERO);
    let plain = common::fluid_block(&mut app, Vec2::new(0.0, 6.0 * d), (1, 1), Vec2::ZERO)[0];
    for (block, color) in [(&left, red), (&right, blue)] {
        for &p in block {
            let mut p = app.world_mut().entity_mut(p);
            p.insert((ParticleColor(color), ColorMixing::default()));
        }
    }
    app.world_mut()
        .entity_mut(plain)
        .insert(ParticleColor(Color::WHITE));
    let colours = |app: &App, block: &[Entity]| -> Vec<LinearRgba> {
        let color = |p: Entity| app.world().get::<ParticleColor>(p).unwrap().0.to_linear();
        block.iter().map(|&p| color(p)).collect()
    };
    let all: Vec<Entity> = left.iter().chain(&right).copied().collect();
    common::run_steps(&mut app, 120);
    let after = colours(&app, &all);
    let (sum_red, sum_blue) = after
        .iter()
        .fold((0.0, 0.0), |(r, b), c| (r + c.red, b + c.blue));
    assert!((sum_red - 36.0f32).abs() < 36.0 * 1e-4, "Σ red {sum_red}");
    assert!(
        (sum_blue - 36.0f32).abs() < 36.0 * 1e-4,
        "Σ blue {sum_blue}"
    );
    for c in &after {
        for v in [c.red, c.green, c.blue] {
            assert!(
                (-1e-6..=1.0 + 1e-6).contains(&v),
                "channel {v} out of [0, 1]"
            );
        }
    }
    // The columns beside the interface mixed; the far columns less so.
    let column_red = |app: &App, x: f32| {
        let near: Vec<Entity> = all
            .iter()
            .copied()
            .filter(|&p| (position(app, p).x - x).abs() < 0.5 * d)
            .collect();
        colours(app, &near).iter().map(|c| c.red).sum::<f32>() / near.len() as f32
    };
    let (edge, far) = (column_red(&app, 5.0 * d), column_red(&app, 0.0));
    assert!(edge < 0.8, "red at the interface {edge}");
    assert!(far > edge, "red far from it {far} against {edge}");
    let white = app.world().get::<ParticleColor>(plain).unwrap().0;
    assert_eq!(white, Color::WHITE);

    for &p in &all {
        app.world_mut().entity_mut(p).insert(ColorMixing(0.0));
    }
    common::run_steps(&mut app, 10);
    assert_eq!(colours(&app, &all), after, "a zero rate mixes nothing");
}
