//! `bevy_pbd2d_bench soak`: a long run that spawns and despawns particles and constraints
//! every step, to show that nothing leaks or drifts: entity count, resident memory and step time
//! per window of steps, and any non-finite value.
//!
//! The scene: the reference dam break at 20 × 20 (its box of boundary samples), and every step
//! a 3 × 3 cloth body (9 particles, 20 constraints, one pinned corner) at a random place in the
//! box and 3 fluid particles at random places; the oldest body goes once there are more than
//! [`MAX_BODIES`], the oldest fluid particles once there are more than [`MAX_FLUID`]; every 7th
//! step one constraint of a random body is despawned (a tear), every 11th step one fluid
//! particle from the middle. Deterministic (a fixed-seed generator).
//!
//! ```text
//! cargo run --release -p bevy_pbd2d_bench -- soak --steps 100000 --every 10000
//! ```

use std::collections::VecDeque;
use std::time::Instant;

use bevy::ecs::message::Messages;
use bevy::prelude::*;
use bevy_pbd2d::particle::{ParticleRunaway, RunawayReason, SolverState};
use bevy_pbd2d::prelude::*;

/// Cloth bodies alive at most.
pub const MAX_BODIES: usize = 40;
/// Churned fluid particles alive at most.
pub const MAX_FLUID: usize = 600;

/// The churn's state: what it spawned, oldest first, and its generator.
#[derive(Resource)]
pub struct Churn {
    bodies: VecDeque<Entity>,
    fluid: VecDeque<Entity>,
    seed: u64,
    step: u64,
    /// Inner extent of the box (m).
    bounds: (Vec2, Vec2),
}

impl Churn {
    fn random(&mut self) -> f32 {
        self.seed = self
            .seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.seed >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A random point inside the box, 0.2 m from its walls.
    fn inside(&mut self) -> Vec2 {
        let (lo, hi) = self.bounds;
        let margin = Vec2::splat(0.2);
        let t = Vec2::new(self.random(), self.random());
        lo + margin + t * (hi - lo - 2.0 * margin)
    }
}

/// The soak's app: headless, one fixed step (Δt = 5 ms) per update, the scene spawned and the
/// churn added before each step ([`PbdSystems::First`]).
pub fn soak_app(threads: usize) -> App {
    let mut app = crate::scene::headless_app(threads, 0.005).expect("a valid time step");
    let settings = FluidSettings::default();
    let dam = DamBreakBuilder {
        width: 20,
        height: 20,
        ..default()
    };
    let world = app.world_mut();
    dam.spawn(&mut world.commands(), &settings)
        .expect("a valid dam break");
    world.flush();
    world.insert_resource(Churn {
        bodies: VecDeque::new(),
        fluid: VecDeque::new(),
        seed: 2026,
        step: 0,
        bounds: dam.box_bounds(&settings),
    });
    app.add_systems(FixedUpdate, churn.in_set(PbdSystems::First));
    crate::scene::finish(&mut app);
    app
}

/// One step's spawning and despawning (module docs).
fn churn(
    mut commands: Commands,
    mut churn: ResMut<Churn>,
    settings: Res<FluidSettings>,
    constraints: Query<&BodyConstraints>,
) {
    let churn = &mut *churn;
    churn.step += 1;
    let cloth = ClothBuilder {
        width: 3,
        height: 3,
        spacing: 0.05,
        mass: 0.01,
        fixed: FixedCorners::One,
        origin: churn.inside(),
        ..default()
    };
    let body = cloth.spawn(&mut commands).expect("a valid cloth");
    churn.bodies.push_back(body.root);
    if churn.bodies.len() > MAX_BODIES
        && let Some(old) = churn.bodies.pop_front()
    {
        commands.entity(old).despawn();
    }
    let w = InverseMass::from_mass(settings.particle_mass()).expect("the fluid's mass");
    for _ in 0..3 {
        let p = churn.inside();
        churn
            .fluid
            .push_back(commands.spawn((FluidParticle, Position(p), w)).id());
    }
    while churn.fluid.len() > MAX_FLUID {
        if let Some(old) = churn.fluid.pop_front() {
            commands.entity(old).despawn();
        }
    }
    if churn.step.is_multiple_of(7) && churn.bodies.len() > 1 {
        // A tear: one constraint of a body that has been simulated (not this step's).
        let pick = (churn.random() * (churn.bodies.len() - 1) as f32) as usize;
        if let Ok(list) = constraints.get(churn.bodies[pick])
            && let Some(&c) = list.first()
        {
            commands.entity(c).despawn();
        }
    }
    if churn.step.is_multiple_of(11) && !churn.fluid.is_empty() {
        let middle = churn.fluid.len() / 2;
        if let Some(p) = churn.fluid.remove(middle) {
            commands.entity(p).despawn();
        }
    }
}

/// What one window of steps showed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    /// Steps run so far.
    pub steps: u64,
    /// Entities in the world at the end of the window, and entity slots allocated (spawned or
    /// free for reuse: it grows if entities leak).
    pub entities: u32,
    /// See [`Window::entities`].
    pub entity_slots: u32,
    /// Particles and constraints simulated in the last step.
    pub particles: usize,
    /// See [`Window::particles`].
    pub constraints: usize,
    /// Mean wall time of a step (an `App::update`) in the window (ms).
    pub ms_per_step: f64,
    /// Mean density iterations of a step in the window (the work a step does grows with them).
    pub iterations: f64,
    /// Resident memory at the end of the window and its peak so far (MiB).
    pub rss_mb: f64,
    /// See [`Window::rss_mb`].
    pub peak_rss_mb: f64,
    /// Capacities of the solver's particle and constraint buffers (rows): they grow if
    /// anything leaks into them.
    pub capacities: (usize, usize),
    /// Particles with a non-finite position or velocity at the end of the window.
    pub non_finite: usize,
    /// Particles the runaway guard took out for being non-finite, so far.
    pub nan_runaways: usize,
}

/// Runs `steps` more steps in windows of `every`, calling `report` after each.
pub fn run(app: &mut App, steps: u64, every: u64, mut report: impl FnMut(&Window)) {
    let mut cursor = app
        .world()
        .resource::<Messages<ParticleRunaway>>()
        .get_cursor();
    let mut nan_runaways = 0;
    let mut done = 0;
    while done < steps {
        let window = every.min(steps - done);
        let started = Instant::now();
        let mut iterations = 0u64;
        for _ in 0..window {
            app.update();
            iterations += u64::from(app.world().resource::<PbdStats>().fluid_iterations);
            let messages = app.world().resource::<Messages<ParticleRunaway>>();
            nan_runaways += cursor
                .read(messages)
                .filter(|r| r.reason == RunawayReason::NotFinite)
                .count();
        }
        done += window;
        let ms_per_step = started.elapsed().as_secs_f64() * 1e3 / window as f64;
        let world = app.world_mut();
        let mut query = world.query::<(&Position, &Velocity)>();
        let non_finite = query
            .iter(world)
            .filter(|(p, v)| !(p.0.is_finite() && v.0.is_finite()))
            .count();
        let capacities = capacities(world);
        let stats = world.resource::<PbdStats>();
        report(&Window {
            steps: stats.steps,
            entities: world.entities().count_spawned(),
            entity_slots: world.entities().len(),
            particles: stats.particles,
            constraints: stats.constraints,
            ms_per_step,
            iterations: iterations as f64 / window as f64,
            rss_mb: status_mb("VmRSS:").unwrap_or(f64::NAN),
            peak_rss_mb: status_mb("VmHWM:").unwrap_or(f64::NAN),
            capacities,
            non_finite,
            nan_runaways,
        });
    }
}

/// A memory line of `/proc/self/status` (MiB).
fn status_mb(key: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// The window as a JSON line.
pub fn line(w: &Window) -> String {
    format!(
        "{{\"soak\":true,\"steps\":{},\"entities\":{},\"entity_slots\":{},\"particles\":{},\
         \"constraints\":{},\"ms_per_step\":{:.4},\"iterations\":{:.2},\"rss_mb\":{:.1},\
         \"peak_rss_mb\":{:.1},\"capacities\":[{},{}],\"non_finite\":{},\"nan_runaways\":{}}}",
        w.steps,
        w.entities,
        w.entity_slots,
        w.particles,
        w.constraints,
        w.ms_per_step,
        w.iterations,
        w.rss_mb,
        w.peak_rss_mb,
        w.capacities.0,
        w.capacities.1,
        w.non_finite,
        w.nan_runaways
    )
}

/// The solver's per-particle and per-constraint buffers' capacities (rows): a leak grows them.
fn capacities(world: &World) -> (usize, usize) {
    let state = world.resource::<SolverState>();
    let constraints = world.resource::<bevy_pbd2d::constraints::ConstraintState>();
    (state.x.capacity(), constraints.lambda.capacity())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CI's short soak: 3 000 steps of churn. The entity count stays bounded and flat after
    /// the warm-up, the solver's buffers stop growing, and nothing becomes non-finite.
    #[test]
    fn a_short_soak_stays_bounded_and_finite() {
        let mut app = soak_app(1);
        let mut windows = Vec::new();
        run(&mut app, 3000, 500, |w| windows.push(*w));
        let capacity_after_warmup = windows.last().unwrap().capacities;
        run(&mut app, 1000, 500, |w| windows.push(*w));
        // Simulated: the dam break's fluid, the bodies' 9 particles and 20 constraints each,
        // and the churned fluid.
        for w in &windows {
            assert!(w.particles <= 400 + MAX_BODIES * 9 + MAX_FLUID, "{w:?}");
            assert!(w.constraints <= MAX_BODIES * 20, "{w:?}");
            assert_eq!((w.non_finite, w.nan_runaways), (0, 0), "{w:?}");
        }
        // Every other entity (box samples, body roots, and whatever the app's plugins spawn,
        // which depends on the features cargo unified) is the same number in every window after
        // the warm-up (the first window fills the body and fluid queues): nothing leaks.
        let others: Vec<u32> = windows[1..]
            .iter()
            .map(|w| w.entities - (w.particles + w.constraints) as u32)
            .collect();
        assert!(
            others.iter().all(|&n| n == others[0]),
            "entities besides particles and constraints {others:?}"
        );
        let settled: Vec<u32> = windows[1..].iter().map(|w| w.entities).collect();
        let (lo, hi) = (settled.iter().min().unwrap(), settled.iter().max().unwrap());
        assert!(hi - lo <= 30, "entity counts {settled:?}");
        let slots: Vec<u32> = windows[1..].iter().map(|w| w.entity_slots).collect();
        assert!(
            slots.iter().all(|&s| s == slots[0]),
            "entity slots grew: {slots:?}"
        );
        let last = windows.last().unwrap().capacities;
        assert_eq!(last, capacity_after_warmup, "the buffers grew");
    }
}
