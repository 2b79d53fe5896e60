//! The README's quick start: a cloth and a small dam break in one app, no panel.
//! `cargo run --example quickstart`

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;

fn main() {
    App::new()
        .add_plugins((DefaultPlugins, PbdPlugins::default()))
        .insert_resource(Time::<Fixed>::from_seconds(0.01)) // one solver step per fixed step
        .add_systems(Startup, setup)
        .run();
}

fn setup(mut commands: Commands, fluid: Res<FluidSettings>) {
    // 40 pixels per metre, looking at the cloth (top-left particle at the origin).
    commands.spawn((
        Camera2d,
        Projection::Orthographic(OrthographicProjection {
            scale: 1.0 / 40.0,
            ..OrthographicProjection::default_2d()
        }),
        Transform::from_xyz(2.0, -4.0, 0.0),
    ));
    let cloth = ClothBuilder {
        width: 20,
        height: 15,
        ..default()
    }
    .spawn(&mut commands)
    .unwrap();
    let water = DamBreakBuilder {
        width: 10,
        height: 10,
        origin: Vec2::new(0.0, -8.0),
        ..default()
    }
    .spawn(&mut commands, &fluid)
    .unwrap();
    // Feature `render`: the cloth as a mesh, the water as a surface.
    let red = Color::srgb(0.75, 0.15, 0.15);
    commands
        .entity(cloth.root)
        .insert(ClothMesh::new(BodyFill::Color(red)));
    commands.entity(water.root).insert(FluidSurface::default());
}
