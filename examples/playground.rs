//! The playground: particles in a world of avian rigid bodies. Water pours from a spout onto a
//! ramp and into a tank with a pool, where a crate (0.5 ρ0) floats and a heavy block (2 ρ0)
//! sinks; a seesaw on a hinge tips under the water and the boxes; a strip of cloth hangs over
//! a ball. Every avian collider is an obstacle for the particles with no extra component, and
//! every dynamic body feels them (`bevy_pbd2d::avian`).
//!
//! `cargo run --example playground`. Drag bodies and particles with the left mouse button,
//! pan by dragging empty space, zoom with the wheel (or `+` / `-`); the panel shows the
//! counts and the step time, pours or stops the water and restarts the scene.
//!
//! Both preludes are imported: `Position` and `Gravity` exist in both, and the explicit
//! imports below say which is meant (an explicit `use` wins over a glob); `Collider` is
//! avian's (ours is `ParticleCollider`).

#[path = "common/mod.rs"]
mod common;

use avian2d::prelude::*;
use bevy::picking::events::{Drag, DragEnd, DragStart, Pointer};
use bevy::prelude::*;
use bevy_egui::egui;
use bevy_pbd2d::egui_panel::widgets::field_row;
use bevy_pbd2d::egui_panel::{PanelSection, PbdPanel, PbdPanelAppExt, PbdRestart};
use bevy_pbd2d::prelude::*;
use bevy_pbd2d::render::{BodyFill, ClothMesh, FluidSurface, FluidSurfaceSettings, PbdRender};
// The particles' position and gravity; avian's are `avian2d::prelude::{Position, Gravity}`.
use bevy_pbd2d::prelude::{Gravity, Position};

/// Inner width and height of the tank (m).
const TANK: Vec2 = Vec2::new(7.0, 4.0);
/// Fluid particles the spout pours at most (the panel changes it).
const DEFAULT_WATER: u32 = 3000;
/// Largest amount of water the panel accepts.
const MAX_WATER: u32 = 20_000;
/// The spout: particles per second, nozzle width (5 slots of 2r) and where it is (m), and
/// its exit velocity (m/s): 200 particles/s, as the rows of 5 every 5 steps of 5 ms it poured
/// before it was a `FluidEmitter`.
const SPOUT_RATE: f32 = 200.0;
const SPOUT_WIDTH: f32 = 0.25;
const SPOUT_AT: Vec2 = Vec2::new(3.0, 3.6);
const SPOUT_VELOCITY: Vec2 = Vec2::new(-0.5, -2.5);
/// The pool the scene starts with: fluid particles per row and column, lowest-left centre.
const POOL: (u32, u32, Vec2) = (48, 18, Vec2::new(-3.42, 0.05));
/// Time constant of a dragged body's pull toward the cursor (s), and its speed limit (m/s).
const GRAB_TIME: f32 = 0.08;
const GRAB_SPEED: f32 = 8.0;

/// What the scene is built and poured with (edited in the panel).
#[derive(Resource)]
struct Playground {
    /// Fluid particles to pour in all.
    water: u32,
    /// Whether the spout pours.
    pouring: bool,
}

impl Default for Playground {
    fn default() -> Self {
        Self {
            water: DEFAULT_WATER,
            pouring: true,
        }
    }
}

/// Every entity of the scene that is not a particle body (the avian bodies, joints and the
/// water's root), despawned on restart.
#[derive(Component)]
struct SceneEntity;

/// The particle body the poured water belongs to.
#[derive(Component)]
struct Water;

/// A body held at the cursor: the grabbed point in the body's frame and the cursor (m).
#[derive(Component)]
struct Grab {
    local: Vec2,
    target: Vec2,
}

fn main() {
    let mut app = common::demo_app(&common::Demo {
        title: "bevy_pbd2d playground",
        panel_title: "Particles and rigid bodies",
        pixels_per_metre: 150.0,
        view_centre: Vec2::new(0.3, 2.2),
        time_step: 0.005,
    });
    app.world_mut().resource_mut::<PbdPanel>().constraint_rows = false;
    app.add_plugins((
        PhysicsPlugins::default(),
        PhysicsDebugPlugin,
        PhysicsPickingPlugin,
    ))
    .insert_resource(FluidSettings::game())
    .insert_resource(Gravity(Vec2::new(0.0, -9.81)))
    .insert_resource(avian2d::prelude::Gravity(Vec2::new(0.0, -9.81)))
    .init_resource::<Playground>()
    // Light water, so that what floats in it shows through.
    .insert_resource(FluidSurfaceSettings {
        opacity: 0.6,
        ..default()
    })
    .add_pbd_panel_rows(PanelSection::Scene, scene_rows)
    .add_systems(Update, outlines_with_the_reference_look)
    .add_systems(
        Update,
        despawn_bodies
            .run_if(on_message::<PbdRestart>)
            .before(spawn_scene),
    )
    .add_systems(
        FixedUpdate,
        (pour.before(PbdSystems::StepSimulation), pull_grabbed),
    )
    .add_observer(grab)
    .add_observer(move_grab)
    .add_observer(release);
    common::add_scene(&mut app, spawn_scene).run();
}

/// avian's collider outlines are the reference look: shown with the dots and lines, hidden
/// with the game look.
fn outlines_with_the_reference_look(render: Res<PbdRender>, mut store: ResMut<GizmoConfigStore>) {
    let (config, _) = store.config_mut::<PhysicsGizmos>();
    if config.enabled == render.enabled {
        config.enabled = !render.enabled;
    }
}

/// A sprite of `size` (m) in `color`.
fn slab(color: Color, size: Vec2) -> Sprite {
    Sprite::from_color(color, size)
}

/// The tank, ramp, seesaw, boxes, ball and cloth.
fn spawn_scene(
    mut commands: Commands,
    settings: Res<FluidSettings>,
    textures: Res<common::Textures>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<ColorMaterial>>,
) {
    let (w, h) = (TANK.x, TANK.y);
    let stone = Color::srgb(0.35, 0.35, 0.4);
    // The tank's walls and floor, drawn outside its polyline (in front of the water).
    let wall = 0.12;
    for (at, size) in [
        (
            Vec2::new(-0.5 * (w + wall), 0.5 * h),
            Vec2::new(wall, h + 2.0 * wall),
        ),
        (
            Vec2::new(0.5 * (w + wall), 0.5 * h),
            Vec2::new(wall, h + 2.0 * wall),
        ),
        (Vec2::new(0.0, -0.5 * wall), Vec2::new(w, wall)),
    ] {
        commands.spawn((
            SceneEntity,
            slab(stone, size),
            Transform::from_translation(at.extend(1.0)),
        ));
    }
    // The tank: an open polyline, an obstacle for the particles and the bodies alike.
    commands.spawn((
        SceneEntity,
        Name::new("Tank"),
        RigidBody::Static,
        Collider::polyline(
            vec![
                Vec2::new(-0.5 * w, h),
                Vec2::new(-0.5 * w, 0.0),
                Vec2::new(0.5 * w, 0.0),
                Vec2::new(0.5 * w, h),
            ],
            None,
        ),
        outline(stone),
        Transform::default(),
    ));
    // A ramp under the spout, sloping down to the left.
    commands.spawn((
        SceneEntity,
        Name::new("Ramp"),
        RigidBody::Static,
        Collider::rectangle(2.0, 0.08),
        outline(stone),
        slab(stone, Vec2::new(2.0, 0.08)),
        Transform::from_xyz(2.4, 2.4, 0.0).with_rotation(Quat::from_rotation_z(0.35)),
    ));
    // A seesaw: a plank hinged on a static wedge.
    let pivot = Vec2::new(0.3, 0.6);
    let wedge = commands
        .spawn((
            SceneEntity,
            Name::new("Seesaw pivot"),
            RigidBody::Static,
            Collider::triangle(
                Vec2::new(-0.25, -0.6),
                Vec2::new(0.25, -0.6),
                Vec2::new(0.0, 0.0),
            ),
            outline(stone),
            Mesh2d(meshes.add(Triangle2d::new(
                Vec2::new(-0.25, -0.6),
                Vec2::new(0.25, -0.6),
                Vec2::new(0.0, 0.0),
            ))),
            MeshMaterial2d(materials.add(stone)),
            Transform::from_translation(pivot.extend(0.0)),
        ))
        .id();
    let plank = commands
        .spawn((
            SceneEntity,
            Name::new("Seesaw"),
            RigidBody::Dynamic,
            Collider::rectangle(2.4, 0.08),
            ColliderDensity(600.0),
            outline(Color::srgb(0.55, 0.3, 0.1)),
            slab(Color::srgb(0.55, 0.3, 0.1), Vec2::new(2.4, 0.08)),
            Transform::from_xyz(pivot.x, pivot.y + 0.05, 0.0),
        ))
        .id();
    commands.spawn((
        SceneEntity,
        RevoluteJoint::new(wedge, plank).with_local_anchor2(Vec2::new(0.0, -0.05)),
    ));
    // Boxes: a crate of 0.5 ρ0 that floats, a block of 2 ρ0 that sinks, two on the seesaw.
    let boxes = [
        ("Crate", Vec2::new(-2.4, 1.2), Vec2::splat(0.5), 500.0f32),
        ("Block", Vec2::new(-1.6, 2.0), Vec2::new(0.35, 0.25), 2000.0),
        ("Box", Vec2::new(-0.5, 1.2), Vec2::splat(0.3), 300.0),
        ("Box", Vec2::new(1.0, 1.2), Vec2::splat(0.25), 400.0),
    ];
    for (name, at, size, density) in boxes {
        // Lighter wood for lighter boxes.
        let shade = 0.75 - 0.2 * (density / 1000.0).min(2.0);
        commands.spawn((
            SceneEntity,
            Name::new(name),
            RigidBody::Dynamic,
            Collider::rectangle(size.x, size.y),
            ColliderDensity(density),
            outline(Color::srgb(shade, 0.5 * shade, 0.1)),
            // Wood, behind the water (z −0.5) so that it shows submerged.
            Sprite {
                image: textures.wood.clone(),
                custom_size: Some(size),
                color: Color::srgb(1.4 * shade, 1.4 * shade, 1.4 * shade),
                ..default()
            },
            Transform::from_translation(at.extend(-0.5)),
        ));
    }
    // A ball, and a strip of cloth dropped onto it that hangs over it.
    let ball = Vec2::new(-0.9, 3.3);
    commands.spawn((
        SceneEntity,
        Name::new("Ball"),
        RigidBody::Static,
        Collider::circle(0.3),
        outline(stone),
        Mesh2d(meshes.add(Circle::new(0.3))),
        MeshMaterial2d(materials.add(stone)),
        Transform::from_translation(ball.extend(0.0)),
    ));
    let cloth = ClothBuilder {
        width: 40,
        height: 3,
        spacing: 0.04,
        mass: 0.01,
        origin: ball + Vec2::new(-0.78, 0.45),
        ..default()
    };
    match cloth.spawn(&mut commands) {
        // The builder pins two corners; this strip is free.
        Ok(strip) => {
            commands
                .entity(strip.root)
                .insert(ClothMesh::new(BodyFill::Texture {
                    image: textures.cloth.clone(),
                    tint: Color::WHITE,
                }));
            if let Ok(w) = InverseMass::from_mass(cloth.mass) {
                for k in cloth.fixed.indices(cloth.width, cloth.height) {
                    commands.entity(strip.particles[k as usize]).insert(w);
                }
            }
        }
        Err(error) => error!("cannot build the cloth: {error}"),
    }
    // The water's body: a pool at the start, and the spout adds its particles.
    let water = commands
        .spawn((
            SceneEntity,
            Water,
            ParticleBody,
            FluidSurface::default(),
            Name::new("Water"),
        ))
        .id();
    // The spout: an emitter whose local +y is the exit velocity.
    let direction = SPOUT_VELOCITY.normalize();
    let pose = Transform::from_translation(SPOUT_AT.extend(0.0))
        .with_rotation(Quat::from_rotation_arc_2d(Vec2::Y, direction));
    match FluidEmitter::new(SPOUT_RATE, SPOUT_VELOCITY.length(), SPOUT_WIDTH) {
        Ok(spout) => {
            let spout = spout.with_body(water);
            commands.spawn((SceneEntity, spout, pose, Name::new("Spout")));
        }
        Err(error) => error!("cannot build the spout: {error}"),
    }
    let d = 2.0 * settings.particle_radius;
    if let Ok(w) = InverseMass::from_mass(settings.particle_mass()) {
        let (columns, rows, corner) = POOL;
        for i in 0..rows {
            for j in 0..columns {
                let at = corner + Vec2::new(j as f32, i as f32) * d;
                commands.spawn((FluidParticle, Position(at), w, ParticleOf(water)));
            }
        }
    }
}

/// avian's debug outline of a collider in `color`, without its body's axes (5 m long by
/// default in 2D).
fn outline(color: Color) -> DebugRender {
    DebugRender::default()
        .without_axes()
        .with_collider_color(color)
}

/// Despawns the avian bodies, joints and the water's root (the second half of a restart).
fn despawn_bodies(mut commands: Commands, scene: Query<Entity, With<SceneEntity>>) {
    for entity in &scene {
        commands.entity(entity).despawn();
    }
}

/// The spout's emitter follows the panel: it pours while "Pour" is on, until the water body
/// holds the particles asked for (the pool's included).
fn pour(
    playground: Res<Playground>,
    water: Query<Option<&BodyParticles>, With<Water>>,
    mut spout: Query<(&mut FluidEmitter, Option<&EmittedParticles>)>,
) {
    let (Ok(particles), Ok((mut emitter, poured))) = (water.single(), spout.single_mut()) else {
        return;
    };
    let count = particles.map_or(0, |p| p.len()) as u32;
    let poured = poured.map_or(0, |p| p.len()) as u32;
    let max_count = Some(playground.water.saturating_sub(count - poured.min(count)));
    emitter.enabled = playground.pouring;
    if emitter.max_count != max_count {
        emitter.max_count = max_count;
    }
}

/// Water to pour, the spout on or off, and the bodies in the scene.
fn scene_rows(
    InMut(ui): InMut<egui::Ui>,
    mut playground: ResMut<Playground>,
    bodies: Query<&RigidBody>,
) {
    field_row(ui, "Water (particles)", playground.water, |water: u32| {
        if water > MAX_WATER {
            return Err(format!("at most {MAX_WATER} particles (got {water})"));
        }
        playground.water = water;
        Ok(())
    });
    ui.label("Pour");
    ui.checkbox(&mut playground.pouring, "");
    ui.end_row();
    let dynamic = bodies.iter().filter(|b| b.is_dynamic()).count();
    ui.label("Rigid bodies");
    ui.label(format!(
        "{dynamic} dynamic, {} static",
        bodies.iter().count() - dynamic
    ));
    ui.end_row();
}

/// The world point under a pointer (m), through the first 2D camera.
fn world_point(cameras: &Query<(&Camera, &GlobalTransform)>, screen: Vec2) -> Option<Vec2> {
    cameras
        .iter()
        .find_map(|(camera, at)| camera.viewport_to_world_2d(at, screen).ok())
}

/// `Pointer<DragStart>` on a dynamic body: hold the grabbed point at the cursor.
fn grab(
    mut event: On<Pointer<DragStart>>,
    mut commands: Commands,
    bodies: Query<(&RigidBody, &avian2d::prelude::Position, &Rotation)>,
    cameras: Query<(&Camera, &GlobalTransform)>,
) {
    let Ok((body, position, rotation)) = bodies.get(event.entity) else {
        return;
    };
    let Some(at) = world_point(&cameras, event.pointer_location.position) else {
        return;
    };
    // No panning while a body is held (the static ones are not dragged).
    event.propagate(false);
    if !body.is_dynamic() {
        return;
    }
    let local = rotation.inverse() * (at - position.0);
    commands
        .entity(event.entity)
        .insert(Grab { local, target: at });
}

/// `Pointer<Drag>`: the held point follows the cursor.
fn move_grab(
    mut event: On<Pointer<Drag>>,
    mut grabs: Query<&mut Grab>,
    cameras: Query<(&Camera, &GlobalTransform)>,
) {
    if let Ok(mut grab) = grabs.get_mut(event.entity) {
        event.propagate(false);
        if let Some(at) = world_point(&cameras, event.pointer_location.position) {
            grab.target = at;
        }
    }
}

/// `Pointer<DragEnd>`: let go.
fn release(mut event: On<Pointer<DragEnd>>, mut commands: Commands, grabs: Query<(), With<Grab>>) {
    if grabs.contains(event.entity) {
        event.propagate(false);
        commands.entity(event.entity).remove::<Grab>();
    }
}

/// A held body's grabbed point is pulled toward the cursor (a mouse joint): the impulse that
/// gives the point the velocity (target − point)/[`GRAB_TIME`], at most [`GRAB_SPEED`].
fn pull_grabbed(
    mut bodies: Query<(
        Forces,
        &Grab,
        &ComputedMass,
        &avian2d::prelude::Position,
        &Rotation,
    )>,
) {
    for (mut forces, grab, mass, position, rotation) in &mut bodies {
        let point = position.0 + *rotation * grab.local;
        let wanted = ((grab.target - point) / GRAB_TIME).clamp_length_max(GRAB_SPEED);
        // Half the velocity change per step: the point converges without overshooting.
        let impulse = 0.5 * mass.value() * (wanted - forces.velocity_at_point(point));
        forces.apply_linear_impulse_at_point(impulse, point);
    }
}
