//! Shared set-up of the headless App tests: `MinimalPlugins` + `PbdPlugins`, a fixed Δt and a
//! manual clock so that every `app.update()` advances virtual time by exactly Δt.
#![allow(dead_code)]

use core::time::Duration;

use bevy::app::Plugins;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_pbd2d::fluid::NeighborState;
use bevy_pbd2d::particle::SolverState;
use bevy_pbd2d::prelude::*;
use bevy_pbd2d::scenes::Cloth;

/// A headless app stepping the simulation with step `dt` (s).
pub fn app(dt: f32) -> App {
    app_with(dt, PbdPlugins::default())
}

/// A headless app with `plugins` (some or all of bevy_pbd2d's) stepping with step `dt` (s).
pub fn app_with<M>(dt: f32, plugins: impl Plugins<M>) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, plugins));
    set_time_step(&mut app.world_mut().resource_mut::<Time<Fixed>>(), dt).unwrap();
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        dt,
    )));
    app.finish();
    app.cleanup();
    app
}

/// The robustness issue's cloth C0: 20 × 20, spacing 5 cm, 10 g particles, two pinned top
/// corners, long-range attachments.
pub fn c0_cloth() -> ClothBuilder {
    ClothBuilder {
        width: 20,
        height: 20,
        spacing: 0.05,
        mass: 0.01,
        fixed: FixedCorners::Two,
        long_range_attachments: true,
        ..default()
    }
}

/// A headless app stepping at `dt` (s) with `substeps` × `iterations` per step.
pub fn solver_app(dt: f32, substeps: u32, iterations: u32) -> App {
    let mut app = app(dt);
    let mut settings = app.world_mut().resource_mut::<SolverSettings>();
    settings.set_substeps(substeps).unwrap();
    settings.set_iterations(iterations).unwrap();
    app
}

/// Runs `f` with `Commands` on the app's world and applies them.
pub fn spawn<R>(app: &mut App, f: impl FnOnce(&mut Commands) -> R) -> R {
    let world = app.world_mut();
    let mut commands = world.commands();
    let result = f(&mut commands);
    world.flush();
    result
}

/// Updates the app until `n` more fixed steps have run.
pub fn run_steps(app: &mut App, n: u64) {
    let target = steps(app) + n;
    let mut guard = 0;
    while steps(app) < target {
        app.update();
        guard += 1;
        assert!(guard < 4 * n + 10, "fixed steps are not running");
    }
}

/// Steps run so far.
pub fn steps(app: &App) -> u64 {
    app.world().resource::<PbdStats>().steps
}

/// Position of a particle (m).
pub fn position(app: &App, entity: Entity) -> Vec2 {
    app.world().get::<Position>(entity).unwrap().0
}

/// Velocity of a particle (m/s).
pub fn velocity(app: &App, entity: Entity) -> Vec2 {
    app.world().get::<Velocity>(entity).unwrap().0
}

/// The solver's arrays.
pub fn solver(app: &App) -> &SolverState {
    app.world().resource::<SolverState>()
}

/// The last step's statistics.
pub fn stats(app: &App) -> &PbdStats {
    app.world().resource::<PbdStats>()
}

/// Whether every particle position and velocity component is finite.
pub fn all_finite(app: &mut App) -> bool {
    let world = app.world_mut();
    let mut q = world.query::<(&Position, &Velocity)>();
    q.iter(world)
        .all(|(p, v)| p.0.is_finite() && v.0.is_finite())
}

/// The bits of each particle's position and velocity, in the order given.
pub fn state_bits(app: &App, particles: &[Entity]) -> Vec<[u32; 4]> {
    particles
        .iter()
        .map(|&e| {
            let (x, v) = (position(app, e), velocity(app, e));
            [x.x, x.y, v.x, v.y].map(f32::to_bits)
        })
        .collect()
}

/// A fixed-seed linear congruential generator: `next()` is uniform in [0, 1).
pub struct Lcg(pub u64);

impl Lcg {
    /// The next value in [0, 1).
    pub fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// The fluid positions the last neighbour search ran on (m), recorded by
/// [`record_searched_positions`]: contacts later in the substep move the particles and
/// shift `x_predicted` with them, so neither is what the lists were built from.
#[derive(Resource, Default)]
pub struct SearchedPositions(pub Vec<Vec2>);

/// Records [`SearchedPositions`] in every substep, right after the neighbour search.
pub fn record_searched_positions(app: &mut App) {
    fn record(state: Res<SolverState>, mut out: ResMut<SearchedPositions>) {
        out.0.clear();
        out.0.extend_from_slice(&state.x[..state.fluid_count]);
    }
    app.init_resource::<SearchedPositions>().add_systems(
        PbdSubstepSchedule,
        record
            .after(PbdSubstepSystems::FindNeighbors)
            .before(PbdSubstepSystems::SolveConstraints),
    );
}

/// Where the last step's fluid neighbour lists differ from a brute-force search over the
/// positions they were built from ([`record_searched_positions`] must have been called): the
/// first differing particle and both lists (pairs closer than h).
pub fn neighbours_unlike_brute_force(app: &App, h: f32) -> Option<(usize, Vec<u32>, Vec<u32>)> {
    let x = &app
        .world()
        .get_resource::<SearchedPositions>()
        .expect("record_searched_positions(app) first")
        .0;
    let neighbors = app.world().resource::<NeighborState>();
    (0..x.len()).find_map(|i| {
        let mut found = neighbors.fluid_neighbors(i).to_vec();
        found.sort_unstable();
        let brute: Vec<u32> = (0..x.len() as u32)
            .filter(|&j| j as usize != i && (x[i] - x[j as usize]).length_squared() < h * h)
            .collect();
        (found != brute).then_some((i, found, brute))
    })
}

/// A solid particle of 1 kg and radius `r` (m) at `p` with velocity `v`.
pub fn ball(app: &mut App, p: Vec2, v: Vec2, r: f32) -> Entity {
    spawn(app, |c| {
        c.spawn((
            Particle,
            Position(p),
            Velocity(v),
            ParticleRadius::new(r).unwrap(),
        ))
        .id()
    })
}

/// A collider of `shape` placed at `at` with material `m`.
pub fn collider(
    app: &mut App,
    shape: impl Into<ParticleCollider>,
    at: Transform,
    m: ColliderMaterial,
) -> Entity {
    spawn(app, |c| c.spawn((shape.into(), at, m)).id())
}

/// Fluid particles on a grid of `nx × ny` at spacing 2r from `corner` (their lowest-left
/// centre), with velocity `v`.
pub fn fluid_block(app: &mut App, corner: Vec2, (nx, ny): (u32, u32), v: Vec2) -> Vec<Entity> {
    let settings = *app.world().resource::<FluidSettings>();
    let d = 2.0 * settings.particle_radius;
    let w = InverseMass::from_mass(settings.particle_mass()).unwrap();
    spawn(app, |c| {
        (0..ny)
            .flat_map(|i| (0..nx).map(move |j| corner + Vec2::new(j as f32, i as f32) * d))
            .map(|p| c.spawn((FluidParticle, Position(p), Velocity(v), w)).id())
            .collect()
    })
}

/// A tank of rectangle colliders (default material), `width` m wide inside: its floor's top at
/// y = 0, its walls' inner faces at x = 0 and x = `width`, 4 m high.
pub fn tank(app: &mut App, width: f32) {
    for (size, at) in [
        (Vec2::new(width + 1.0, 0.5), Vec2::new(width / 2.0, -0.25)),
        (Vec2::new(0.5, 4.0), Vec2::new(-0.25, 2.0)),
        (Vec2::new(0.5, 4.0), Vec2::new(width + 0.25, 2.0)),
    ] {
        let pose = Transform::from_translation(at.extend(0.0));
        collider(
            app,
            Rectangle::from_size(size),
            pose,
            ColliderMaterial::default(),
        );
    }
}

/// A cloth of `columns × rows` at spacing 5 cm (the fluid's 2r), 0.1 kg particles, its
/// top-left particle at `origin`, none pinned.
pub fn free_cloth(app: &mut App, (columns, rows): (u32, u32), origin: Vec2) -> Cloth {
    let builder = ClothBuilder {
        width: columns,
        height: rows,
        spacing: 0.05,
        mass: 0.1,
        origin,
        ..default()
    };
    let cloth = spawn(app, |c| builder.spawn(c).unwrap());
    let w = InverseMass::from_mass(builder.mass).unwrap();
    for &p in &cloth.particles {
        app.world_mut().entity_mut(p).insert(w);
    }
    cloth
}
