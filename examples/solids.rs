//! Solids: a rope bridge, a chain holding a weight, a soft ball and a rigid block dropped onto
//! the bridge, and a tearable cloth, stepped with 10 XPBD substeps of 2 iterations at 60 Hz.
//!
//! `cargo run --example solids`. Drag particles with the left mouse button (pull the cloth
//! hard to tear it), pan by dragging empty space, zoom with the wheel; the panel edits the
//! solver settings live and restarts the scene.

#[path = "common/mod.rs"]
mod common;

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;
use bevy_pbd2d::render::{BlobMesh, BodyFill, ClothMesh, RopeMesh};

fn main() {
    let mut app = common::demo_app(&common::Demo {
        title: "bevy_pbd2d solids",
        panel_title: "Ropes, chains, soft and rigid bodies",
        pixels_per_metre: 80.0,
        view_centre: Vec2::new(0.0, 3.5),
        time_step: 1.0 / 60.0,
    });
    app.world_mut()
        .resource_mut::<bevy_pbd2d::egui_panel::PbdPanel>()
        .fluid_rows = false;
    let mut solver = SolverSettings::default();
    solver.set_substeps(10).expect("10 substeps are valid");
    solver.set_iterations(2).expect("2 iterations are valid");
    app.insert_resource(solver)
        .insert_resource(Gravity(Vec2::new(0.0, -9.81)));
    common::add_scene(&mut app, spawn_scene).run();
}

/// A texture fill, as it is.
fn texture(image: &Handle<Image>) -> BodyFill {
    BodyFill::Texture {
        image: image.clone(),
        tint: Color::WHITE,
    }
}

/// The ground, the bridge and what falls on it, the chain and the cloth.
fn spawn_scene(
    mut commands: Commands,
    textures: Res<common::Textures>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
) {
    commands.spawn((
        common::SceneDecor,
        Name::new("Ground"),
        ParticleCollider(ColliderShape::Rectangle(Rectangle::new(16.0, 0.4))),
        Sprite::from_color(Color::srgb_u8(0x6B, 0x5A, 0x45), Vec2::new(16.0, 0.4)),
        Transform::from_xyz(0.0, -0.2, 0.0),
    ));
    let contacts = SolidContacts {
        self_collision: false,
        ..default()
    };
    let bridge = RopeBuilder {
        pinned: RopeEnds::Both,
        segment_length: 0.1,
        radius: 0.05,
        mass_per_length: 2.0,
        ..RopeBuilder::along(vec![
            Vec2::new(-6.0, 3.5),
            Vec2::new(-3.5, 3.0),
            Vec2::new(-1.0, 3.5),
        ])
    };
    let chain = RopeBuilder {
        segment_length: 0.05,
        radius: 0.025,
        ..RopeBuilder::between(Vec2::new(0.5, 6.0), Vec2::new(0.5, 3.5))
    };
    let cloth = ClothBuilder {
        width: 24,
        height: 16,
        spacing: 0.1,
        mass: 0.02,
        origin: Vec2::new(2.0, 6.0),
        breaking_strain: Some(0.3),
        ..default()
    };
    let spawned = (
        bridge.spawn(&mut commands),
        chain.spawn(&mut commands),
        BlobBuilder {
            shape: BlobShape::Disc(0.4),
            stiffness: 0.02,
            origin: Vec2::new(-4.3, 6.0),
            density: 200.0,
            ..default()
        }
        .spawn(&mut commands),
        BlobBuilder {
            shape: BlobShape::Box(Vec2::new(0.3, 0.2)),
            stiffness: 1.0,
            origin: Vec2::new(-2.4, 6.5),
            density: 200.0,
            ..default()
        }
        .spawn(&mut commands),
        cloth.spawn(&mut commands),
    );
    match spawned {
        (Ok(bridge), Ok(chain), Ok(ball), Ok(block), Ok(cloth)) => {
            // Hemp for the bridge (a tile twice as long as wide), steel links for the chain
            // (one link face on and one edge on per tile, two segments long), jelly, wood and
            // tartan.
            commands.entity(bridge.root).insert((
                contacts,
                RopeMesh {
                    tile_length: Some(0.2),
                    ..RopeMesh::new(texture(&textures.rope))
                },
            ));
            commands.entity(chain.root).insert((
                contacts,
                RopeMesh {
                    width: Some(0.07),
                    tile_length: Some(0.1),
                    ..RopeMesh::new(texture(&textures.chain))
                },
            ));
            commands
                .entity(ball.root)
                .insert(BlobMesh::new(texture(&textures.jelly)));
            commands
                .entity(block.root)
                .insert(BlobMesh::new(texture(&textures.wood)));
            commands
                .entity(cloth.root)
                .insert(ClothMesh::new(texture(&textures.cloth)));
            // 5 kg at the chain's end, 200 times a link's mass: an iron ball.
            if let Some(&weight) = chain.particles.last() {
                commands.entity(weight).insert((
                    InverseMass(0.2),
                    ParticleRadius::new(0.12).unwrap_or_default(),
                    Mesh2d(meshes.add(Circle::new(0.12))),
                    MeshMaterial2d(materials.add(Color::srgb_u8(0x3A, 0x3D, 0x44))),
                    Transform::from_xyz(0.5, 3.5, 0.5),
                ));
            }
        }
        (bridge, chain, ball, block, cloth) => {
            for error in [
                bridge.err(),
                chain.err(),
                ball.err(),
                block.err(),
                cloth.err(),
            ]
            .into_iter()
            .flatten()
            {
                error!("cannot build the scene: {error}");
            }
        }
    }
}
