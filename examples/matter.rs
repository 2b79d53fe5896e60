//! Matter: the kinds of particles meeting in one solve. A tap fills a hammock that holds the
//! water (`FluidCoupling`) and spills into a drain (`FluidSink`); oil (`FluidPhase::OIL`,
//! ρ0 500) is poured into a tank of water and floats on it; sand (`GranularBuilder`) is poured
//! beside it and piles at its angle of repose.
//!
//! The hammock is a strip of touching discs solved as a chain at 4 substeps of 5 iterations:
//! under the tap's stream a few particles find their way through it (the hammock test,
//! `tests/fluid_coupling.rs`, holds all 500 of its particles at 4 substeps of 20).
//!
//! `cargo run --example matter`. Drag particles with the left mouse button, pan by dragging
//! empty space, zoom with the wheel; the panel edits the solver and the fluid (surface
//! tension, adhesion, vorticity) live and restarts the scene.

#[path = "common/mod.rs"]
mod common;

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;
use bevy_pbd2d::render::{BodyFill, FluidSurface, RopeMesh};

/// The tap: where it is (m), particles per second and how much it pours. Both spouts pour at
/// [`SPOUT_SPEED`] through a nozzle of [`SPOUT_WIDTH`] (5 slots of 2r: at most 250 particles/s).
const TAP_AT: Vec2 = Vec2::new(-4.2, 5.2);
const TAP_RATE: f32 = 150.0;
const TAP_WATER: u32 = 1500;
const SPOUT_SPEED: f32 = 2.5;
const SPOUT_WIDTH: f32 = 0.25;
/// The oil's spout over the tank, its rate and how much it pours.
const OIL_AT: Vec2 = Vec2::new(0.3, 4.0);
const OIL_RATE: f32 = 100.0;
const OIL: u32 = 500;
/// The tank's inner half width and wall height (m), and its water: columns × rows of 2r.
const TANK_HALF_WIDTH: f32 = 1.5;
const TANK_HEIGHT: f32 = 2.0;
const TANK_WATER: (u32, u32) = (56, 16);
/// The sand's chute: where it pours from (m), grains per row, steps between rows, and how many
/// grains in all; their mean radius (m).
const SAND_AT: Vec2 = Vec2::new(3.6, 3.0);
const SAND_ROW: u32 = 4;
const SAND_EVERY: u32 = 10;
const SAND: u32 = 400;
const GRAIN: f32 = 0.035;

/// The sand poured so far (rows), on the chute's entity.
#[derive(Component, Default)]
struct SandChute {
    rows: u32,
    steps: u32,
}

fn main() {
    let mut app = common::demo_app(&common::Demo {
        title: "bevy_pbd2d matter",
        panel_title: "Water, oil, sand and a hammock",
        pixels_per_metre: 80.0,
        view_centre: Vec2::new(-2.0, 2.6),
        time_step: 0.005,
    });
    let mut solver = SolverSettings::default();
    solver.set_substeps(4).expect("4 substeps are valid");
    solver.set_iterations(5).expect("5 iterations are valid");
    app.insert_resource(solver)
        .insert_resource(FluidSettings::game())
        .insert_resource(Gravity(Vec2::new(0.0, -9.81)))
        .add_systems(FixedUpdate, pour_sand.before(PbdSystems::StepSimulation));
    common::add_scene(&mut app, spawn_scene).run();
}

/// A static wall for the particles, drawn as a slab.
fn wall(commands: &mut Commands, name: &'static str, centre: Vec2, size: Vec2) {
    commands.spawn((
        common::SceneDecor,
        Name::new(name),
        ParticleCollider(ColliderShape::Rectangle(Rectangle::new(size.x, size.y))),
        ColliderMaterial::new(1.0, 1.0, 0.0).unwrap_or_default(),
        Sprite::from_color(Color::srgb_u8(0x5E, 0x5A, 0x55), size),
        Transform::from_translation(centre.extend(1.0)),
    ));
}

/// An emitter at `at` pouring straight down.
fn spout(rate: f32, phase: FluidPhase, body: Entity, max: u32) -> Result<FluidEmitter, PbdError> {
    let mut emitter = FluidEmitter::new(rate, SPOUT_SPEED, SPOUT_WIDTH)?
        .with_phase(phase)?
        .with_body(body);
    emitter.max_count = Some(max);
    Ok(emitter)
}

/// The ground, the drain, the hammock and its tap, the tank of water and its oil, the chute.
fn spawn_scene(
    mut commands: Commands,
    settings: Res<FluidSettings>,
    textures: Res<common::Textures>,
) {
    wall(
        &mut commands,
        "Ground",
        Vec2::new(0.0, -0.2),
        Vec2::new(16.0, 0.4),
    );
    for x in [-TANK_HALF_WIDTH - 0.1, TANK_HALF_WIDTH + 0.1] {
        let centre = Vec2::new(x, 0.5 * TANK_HEIGHT);
        wall(
            &mut commands,
            "Tank wall",
            centre,
            Vec2::new(0.2, TANK_HEIGHT),
        );
    }
    // The drain under the hammock: what spills is taken away there.
    commands.spawn((
        common::SceneDecor,
        Name::new("Drain"),
        FluidSink {
            half_size: Vec2::new(1.6, 0.3),
        },
        Sprite::from_color(Color::srgb_u8(0x2B, 0x2B, 0x2B), Vec2::new(3.2, 0.08)),
        Transform::from_xyz(TAP_AT.x, 0.04, 1.5),
    ));
    // The hammock: a strip of touching discs hung in a V between two posts, solid for the
    // fluid.
    let hammock = RopeBuilder {
        pinned: RopeEnds::Both,
        segment_length: 0.05,
        radius: 0.025,
        mass_per_length: 2.0,
        ..RopeBuilder::along(vec![
            Vec2::new(TAP_AT.x - 1.6, 3.6),
            Vec2::new(TAP_AT.x, 2.2),
            Vec2::new(TAP_AT.x + 1.6, 3.6),
        ])
    };
    match hammock.spawn(&mut commands) {
        Ok(hammock) => {
            commands.entity(hammock.root).insert((
                FluidCoupling,
                RopeMesh {
                    width: Some(0.08),
                    ..RopeMesh::new(BodyFill::Texture {
                        image: textures.cloth.clone(),
                        tint: Color::WHITE,
                    })
                },
            ));
        }
        Err(error) => error!("cannot build the hammock: {error}"),
    }
    // Water: the tap's and the tank's, one body drawn blue; oil, another, drawn amber.
    let water = commands
        .spawn((Name::new("Water"), ParticleBody, FluidSurface::default()))
        .id();
    let oil = commands
        .spawn((
            Name::new("Oil"),
            ParticleBody,
            FluidSurface {
                color: Color::srgb_u8(0xE8, 0xB0, 0x30),
            },
        ))
        .id();
    let down = Quat::from_rotation_z(core::f32::consts::PI);
    for (name, at, emitter) in [
        (
            "Tap",
            TAP_AT,
            spout(TAP_RATE, FluidPhase::WATER, water, TAP_WATER),
        ),
        (
            "Oil spout",
            OIL_AT,
            spout(OIL_RATE, FluidPhase::OIL, oil, OIL),
        ),
    ] {
        match emitter {
            Ok(emitter) => {
                let pose = Transform::from_translation(at.extend(0.0)).with_rotation(down);
                commands.spawn((common::SceneDecor, Name::new(name), emitter, pose));
            }
            Err(error) => error!("cannot build the {name}: {error}"),
        }
    }
    let d = 2.0 * settings.particle_radius;
    if let Ok(w) = InverseMass::from_mass(settings.particle_mass()) {
        let (columns, rows) = TANK_WATER;
        let corner = Vec2::new(-TANK_HALF_WIDTH + 0.5 * d, 0.5 * d);
        for i in 0..rows {
            for j in 0..columns {
                let at = corner + Vec2::new(j as f32, i as f32) * d;
                commands.spawn((FluidParticle, Position(at), w, ParticleOf(water)));
            }
        }
    }
    commands.spawn((
        common::SceneDecor,
        Name::new("Sand chute"),
        SandChute::default(),
        Sprite::from_color(Color::srgb_u8(0x5E, 0x5A, 0x55), Vec2::new(0.4, 0.06)),
        Transform::from_translation((SAND_AT + Vec2::new(0.0, 0.1)).extend(1.0)),
    ));
}

/// Pours the sand: a row of [`SAND_ROW`] grains every [`SAND_EVERY`] steps from the chute,
/// falling at 1.5 m/s, until [`SAND`] grains; each drawn as a sand-coloured disc.
fn pour_sand(
    mut commands: Commands,
    mut chutes: Query<&mut SandChute>,
    mut meshes: Local<Option<(Handle<Mesh>, Handle<ColorMaterial>)>>,
    mut mesh_assets: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
) {
    let Ok(mut chute) = chutes.single_mut() else {
        return;
    };
    chute.steps += 1;
    if chute.rows * SAND_ROW >= SAND || chute.steps % SAND_EVERY != 1 {
        return;
    }
    let (disc, sand) = meshes
        .get_or_insert_with(|| {
            (
                mesh_assets.add(Circle::new(1.0)),
                materials.add(Color::srgb_u8(0xD9, 0xB8, 0x7A)),
            )
        })
        .clone();
    let row = GranularBuilder {
        columns: SAND_ROW,
        rows: 1,
        radius: GRAIN,
        seed: chute.rows as u64,
        origin: SAND_AT + Vec2::new(0.01 * (chute.rows % 3) as f32 - 0.01, 0.0),
        ..default()
    };
    chute.rows += 1;
    match row.spawn(&mut commands) {
        Ok(spawned) => {
            for (&grain, &(at, r)) in spawned.particles.iter().zip(&spawned.grains) {
                commands.entity(grain).insert((
                    Velocity(Vec2::new(0.0, -1.5)),
                    Mesh2d(disc.clone()),
                    MeshMaterial2d(sand.clone()),
                    Transform::from_translation(at.extend(0.5)).with_scale(Vec3::splat(r)),
                ));
            }
        }
        Err(error) => error!("cannot pour sand: {error}"),
    }
}
