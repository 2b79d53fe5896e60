//! Dragging particles with the mouse (feature `picking`): a [`bevy_picking`](bevy::picking)
//! backend that hits particle entities, and drag observers that hold the hit particle at the
//! cursor, as the reference demos do.
//!
//! **Backend.** For every pointer and every active orthographic ("2D") camera whose render
//! target the pointer is on, the cursor is converted to world coordinates x_c, the pick radius
//! r (default 10 logical pixels, as in the demos) is converted to metres with the camera's
//! current scale, and the particle nearest to x_c with ‖x − x_c‖ < r is reported as a
//! [`PointerHits`] with the camera's order (egui windows, ordered above cameras by
//! `bevy_egui`, stay on top; the window hit sits below everything). The search uses a
//! spatial hash grid (`SpatialHashGrid`) with cells of size r over the particles'
//! [`Position`]s, built at most once per frame and only while a pointer is over a 2D
//! camera, so a query touches the 3 × 3 cells around the cursor instead of every particle.
//! Boundary samples are not particles and are never hit; a particle with a [`Pickable`] that
//! is not hoverable is skipped.
//!
//! **Dragging.** `Pointer<DragStart>` with [`PbdPickingSettings::button`] on a particle inserts
//! [`KinematicTarget`]`(cursor)` and [`Dragged`]; every `Pointer<Drag>` moves the target to the
//! cursor's world position; `Pointer<DragEnd>` / `Pointer<Cancel>` remove both. The solver holds
//! a particle with a target kinematic and gives it the velocity it was moved with, so a released
//! particle flies on with that velocity, except a pinned one (w = 0), whose velocity is set to
//! zero so that it stays where it was dropped (as in the demos). The three drag events are
//! stopped at the particle, so a camera controller that pans on drags of the window (such as
//! Bevy's `PanCamera`) does not pan while a particle is dragged.

use bevy::camera::{Camera, Projection, RenderTarget};
use bevy::ecs::entity::MapEntities;
use bevy::ecs::message::Messages;
use bevy::ecs::reflect::ReflectMapEntities;
use bevy::picking::backend::prelude::*;
use bevy::picking::events::{Cancel, Drag, DragEnd, DragStart, Pointer};
use bevy::picking::pointer::{Location, PointerButton};
use bevy::prelude::*;
use bevy::window::PrimaryWindow;

use crate::fluid::grid::SpatialHashGrid;
use crate::particle::{InverseMass, KinematicTarget, Particle, Position, Velocity};

/// Adds the particle picking backend and the drag observers. Part of
/// [`PbdPlugins`](crate::PbdPlugins) when the `picking` feature is on. Needs Bevy's picking
/// plugins (in `DefaultPlugins` with Bevy's `bevy_picking` feature); without them it does
/// nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct PbdPickingPlugin;

impl Plugin for PbdPickingPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<PbdPickingSettings>()
            .register_type::<Dragged>()
            .init_resource::<PbdPickingSettings>()
            .add_systems(
                PreUpdate,
                pick_particles
                    .in_set(PickingSystems::Backend)
                    .run_if(resource_exists::<Messages<PointerHits>>),
            )
            .add_observer(start_drag)
            .add_observer(drag)
            .add_observer(end_drag)
            .add_observer(cancel_drag);
    }
}

/// Settings of particle picking.
#[derive(Resource, Reflect, Debug, Clone, PartialEq)]
#[reflect(Resource, Default)]
pub struct PbdPickingSettings {
    /// Whether particles can be hit at all. Default `true`.
    pub enabled: bool,
    /// Pick radius in logical pixels: a particle is hit when its centre is closer than this to
    /// the cursor on screen. Default 10 (the demos' value).
    pub radius_px: f32,
    /// The button that drags particles. Default [`PointerButton::Primary`].
    pub button: PointerButton,
}

impl Default for PbdPickingSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            radius_px: 10.0,
            button: PointerButton::Primary,
        }
    }
}

/// Present on a particle while a pointer drags it (together with its [`KinematicTarget`]).
/// Renderers use it to highlight the dragged particle. Its camera is mapped when a world is
/// loaded into another (`MapEntities`).
#[derive(Component, MapEntities, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, MapEntities)]
pub struct Dragged {
    /// The pointer that drags the particle.
    pub pointer: PointerId,
    /// The camera through which the drag started; the cursor is converted to world coordinates
    /// with it.
    #[entities]
    pub camera: Entity,
}

/// The particles the backend can hit.
type PickableParticles<'w, 's> =
    Query<'w, 's, (Entity, &'static Position, Option<&'static Pickable>), With<Particle>>;

/// Particle positions and the grid over them, rebuilt at most once per frame.
#[derive(Default)]
struct PickGrid {
    points: Vec<Vec2>,
    entities: Vec<Entity>,
    grid: SpatialHashGrid,
    /// Cell size of the current grid (m); 0 when it has not been built this frame.
    cell: f32,
}

impl PickGrid {
    /// Makes sure the grid can answer queries of `radius` (m) efficiently.
    fn prepare(&mut self, radius: f32, particles: &PickableParticles) {
        if self.cell > 0.0 && radius <= self.cell && radius >= 0.25 * self.cell {
            return;
        }
        if self.cell == 0.0 {
            self.points.clear();
            self.entities.clear();
            for (entity, position, pickable) in particles {
                if pickable.is_some_and(|p| !p.is_hoverable) || !position.0.is_finite() {
                    continue;
                }
                self.points.push(position.0);
                self.entities.push(entity);
            }
        }
        self.grid.build(&self.points, radius);
        self.cell = radius;
    }

    /// The nearest point within `radius` of `p`: (entity, position, distance).
    fn nearest(&self, p: Vec2, radius: f32) -> Option<(Entity, Vec2, f32)> {
        let mut best: Option<(u32, Vec2, f32)> = None;
        self.grid.for_each_within(p, radius, |j, q| {
            let d2 = (q - p).length_squared();
            if best.is_none_or(|(_, _, b)| d2 < b) {
                best = Some((j, q, d2));
            }
        });
        best.map(|(j, q, d2)| (self.entities[j as usize], q, d2.sqrt()))
    }
}

/// The world position (m) of a pointer location seen through `camera`, if the location is on
/// the camera's render target and viewport.
fn cursor_world(
    camera: &Camera,
    target: &RenderTarget,
    transform: &GlobalTransform,
    primary_window: Option<Entity>,
    location: &Location,
) -> Option<Vec2> {
    if target.normalize(primary_window).as_ref() != Some(&location.target) {
        return None;
    }
    camera
        .viewport_to_world_2d(transform, location.position)
        .ok()
}

/// The picking backend: one [`PointerHits`] with the nearest particle per pointer and camera.
fn pick_particles(
    settings: Res<PbdPickingSettings>,
    pointers: Query<(&PointerId, &PointerLocation)>,
    cameras: Query<(
        Entity,
        &Camera,
        &RenderTarget,
        &GlobalTransform,
        &Projection,
    )>,
    primary_window: Query<Entity, With<PrimaryWindow>>,
    particles: PickableParticles,
    mut grid: Local<PickGrid>,
    mut hits: MessageWriter<PointerHits>,
) {
    grid.cell = 0.0;
    if !settings.enabled || settings.radius_px.is_nan() || settings.radius_px <= 0.0 {
        return;
    }
    let primary_window = primary_window.single().ok();
    for (pointer, location) in &pointers {
        let Some(location) = location.location() else {
            continue;
        };
        for (camera_entity, camera, target, transform, projection) in &cameras {
            if !camera.is_active || !matches!(projection, Projection::Orthographic(_)) {
                continue;
            }
            if !camera
                .logical_viewport_rect()
                .is_some_and(|r| r.contains(location.position))
            {
                continue;
            }
            let Some(cursor) = cursor_world(camera, target, transform, primary_window, location)
            else {
                continue;
            };
            let Ok(edge) = camera.viewport_to_world_2d(
                transform,
                location.position + Vec2::new(settings.radius_px, 0.0),
            ) else {
                continue;
            };
            let radius = cursor.distance(edge);
            if !(radius > 0.0 && radius.is_finite()) {
                continue;
            }
            grid.prepare(radius, &particles);
            if let Some((entity, _, distance)) = grid.nearest(cursor, radius) {
                let hit = HitData::new(camera_entity, distance, Some(cursor.extend(0.0)), None);
                hits.write(PointerHits::new(
                    *pointer,
                    vec![(entity, hit)],
                    camera.order as f32,
                ));
            }
        }
    }
}

/// The cursor's world position for a drag that goes through `camera_entity`.
fn drag_position(
    cameras: &Query<(&Camera, &RenderTarget, &GlobalTransform)>,
    primary_window: &Query<Entity, With<PrimaryWindow>>,
    camera_entity: Entity,
    location: &Location,
) -> Option<Vec2> {
    let (camera, target, transform) = cameras.get(camera_entity).ok()?;
    cursor_world(
        camera,
        target,
        transform,
        primary_window.single().ok(),
        location,
    )
}

fn start_drag(
    mut event: On<Pointer<DragStart>>,
    settings: Res<PbdPickingSettings>,
    particles: Query<(), With<Particle>>,
    cameras: Query<(&Camera, &RenderTarget, &GlobalTransform)>,
    primary_window: Query<Entity, With<PrimaryWindow>>,
    mut commands: Commands,
) {
    let entity = event.entity;
    if event.button != settings.button || !particles.contains(entity) {
        return;
    }
    event.propagate(false);
    let camera = event.hit.camera;
    let Some(target) = drag_position(&cameras, &primary_window, camera, &event.pointer_location)
    else {
        return;
    };
    commands.entity(entity).try_insert((
        KinematicTarget(target),
        Dragged {
            pointer: event.pointer_id,
            camera,
        },
    ));
}

fn drag(
    mut event: On<Pointer<Drag>>,
    settings: Res<PbdPickingSettings>,
    mut dragged: Query<(&Dragged, &mut KinematicTarget)>,
    cameras: Query<(&Camera, &RenderTarget, &GlobalTransform)>,
    primary_window: Query<Entity, With<PrimaryWindow>>,
) {
    if event.button != settings.button {
        return;
    }
    let Ok((held, mut target)) = dragged.get_mut(event.entity) else {
        return;
    };
    event.propagate(false);
    if held.pointer != event.pointer_id {
        return;
    }
    if let Some(position) = drag_position(
        &cameras,
        &primary_window,
        held.camera,
        &event.pointer_location,
    ) {
        target.0 = position;
    }
}

/// Lets go of a particle: removes its target; a pinned particle keeps no velocity.
fn release(
    entity: Entity,
    pointer: PointerId,
    dragged: &mut Query<(&Dragged, &InverseMass, &mut Velocity)>,
    commands: &mut Commands,
) -> bool {
    let Ok((held, inverse_mass, mut velocity)) = dragged.get_mut(entity) else {
        return false;
    };
    if held.pointer != pointer {
        return true;
    }
    if inverse_mass.is_pinned() {
        velocity.0 = Vec2::ZERO;
    }
    commands
        .entity(entity)
        .try_remove::<(KinematicTarget, Dragged)>();
    true
}

fn end_drag(
    mut event: On<Pointer<DragEnd>>,
    mut dragged: Query<(&Dragged, &InverseMass, &mut Velocity)>,
    mut commands: Commands,
) {
    if release(event.entity, event.pointer_id, &mut dragged, &mut commands) {
        event.propagate(false);
    }
}

fn cancel_drag(
    event: On<Pointer<Cancel>>,
    mut dragged: Query<(&Dragged, &InverseMass, &mut Velocity)>,
    mut commands: Commands,
) {
    release(event.entity, event.pointer_id, &mut dragged, &mut commands);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_particle_within_the_radius() {
        let mut world = World::new();
        let a = world.spawn((Particle, Position(Vec2::new(0.0, 0.0)))).id();
        let b = world.spawn((Particle, Position(Vec2::new(0.3, 0.0)))).id();
        world.spawn((Particle, Position(Vec2::new(0.5, 0.5)), Pickable::IGNORE));
        let mut query =
            world.query_filtered::<(Entity, &Position, Option<&Pickable>), With<Particle>>();
        let mut grid = PickGrid::default();
        let mut system_state = bevy::ecs::system::SystemState::<PickableParticles>::new(&mut world);
        let particles = system_state.get(&world).expect("valid query");
        grid.prepare(0.2, &particles);
        assert_eq!(grid.points.len(), 2, "the IGNORE particle is not pickable");
        assert_eq!(
            grid.nearest(Vec2::new(0.05, 0.0), 0.2).map(|h| h.0),
            Some(a)
        );
        assert_eq!(grid.nearest(Vec2::new(0.2, 0.0), 0.2).map(|h| h.0), Some(b));
        assert_eq!(grid.nearest(Vec2::new(0.15, 0.3), 0.2), None);
        assert_eq!(grid.nearest(Vec2::new(0.5, 0.5), 0.2), None);
        // Brute force agrees on a ring of cursor positions.
        for k in 0..64 {
            let p = Vec2::from_angle(k as f32 * 0.1) * 0.25 + Vec2::new(0.15, 0.0);
            let brute = query
                .iter(&world)
                .filter(|(_, _, pk)| pk.is_none())
                .map(|(e, x, _)| (e, x.0.distance(p)))
                .filter(|(_, d)| *d < 0.2)
                .min_by(|x, y| x.1.total_cmp(&y.1))
                .map(|(e, _)| e);
            assert_eq!(grid.nearest(p, 0.2).map(|h| h.0), brute, "cursor {p}");
        }
    }
}
