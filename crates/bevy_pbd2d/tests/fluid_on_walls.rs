//! Issue 37: fluid placed in or on a wall (the boundary samples of the dam-break box, a
//! rectangle collider, a polyline box) is moved out and comes to rest; it is not launched.
//!
//! Kinetic energy is compared with what gravity could have given: Σ m g·(φmax − φ), φ = −g·x the
//! potential per unit mass, φmax the highest a particle has been since it was spawned (settling
//! lifts fluid out of a wall without velocity, and it may fall back from there).

mod common;

use bevy::prelude::*;
use bevy_pbd2d::prelude::*;
use common::*;

/// Fluid particle radius r of the reference settings (m).
const R: f32 = 0.025;

/// What the fluid is placed on.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Wall {
    /// The dam-break box's boundary samples (floor at y = 0, left wall at x = 0).
    Samples,
    /// A 10 m × 0.2 m rectangle collider, its top at y = 0 (wide enough that the fluid
    /// spreading on it stays on it for the runs' second).
    Rect,
    /// The dam-break box as a polyline collider.
    PolylineBox,
}

/// A placement: its name, wall and particle positions.
struct Scene {
    name: &'static str,
    wall: Wall,
    points: Vec<Vec2>,
}

fn samples() -> Vec<Vec2> {
    DamBreakBuilder::default().boundary_positions(&FluidSettings::default())
}

/// `columns` × `rows` positions spaced 2r from `origin`.
fn block(origin: Vec2, columns: usize, rows: usize) -> Vec<Vec2> {
    (0..rows)
        .flat_map(|i| (0..columns).map(move |j| origin + 2.0 * R * Vec2::new(j as f32, i as f32)))
        .collect()
}

/// The family of the issue: rows and blocks on the floor, on the wall and in the corner, on
/// the samples' own positions and sunk into them; rows and blocks on a collider's surface.
fn scenes() -> Vec<Scene> {
    let s = samples();
    // The floor's samples run along y = 0 from the corner, spaced 2r (every other entry of
    // the builder's list: it lays two layers).
    let floor = s[0].y;
    let corner = s[0];
    vec![
        Scene {
            name: "row on the floor's samples",
            wall: Wall::Samples,
            points: block(Vec2::new(s[70].x, floor), 21, 1),
        },
        Scene {
            name: "row in the corner",
            wall: Wall::Samples,
            points: block(corner, 21, 1),
        },
        Scene {
            name: "column on the left wall's samples",
            wall: Wall::Samples,
            points: block(corner + Vec2::new(0.0, 2.0 * R), 1, 21)
                .into_iter()
                .map(|p| Vec2::new(corner.x, p.y))
                .collect(),
        },
        Scene {
            name: "10 × 5 block on the floor's samples",
            wall: Wall::Samples,
            points: block(Vec2::new(s[80].x, floor), 10, 5),
        },
        Scene {
            name: "10 × 5 block with its bottom row 1.32 r above the floor",
            wall: Wall::Samples,
            points: block(Vec2::new(s[80].x, floor + 1.32 * R), 10, 5),
        },
        Scene {
            name: "10 × 5 block dropped from 0.2 m",
            wall: Wall::Samples,
            points: block(Vec2::new(s[80].x, floor + 0.2), 10, 5),
        },
        Scene {
            name: "10 × 5 block sunk 0.5 r into the floor",
            wall: Wall::Samples,
            points: block(Vec2::new(s[80].x, floor - 0.5 * R), 10, 5),
        },
        Scene {
            name: "5 × 5 block in the corner",
            wall: Wall::Samples,
            points: block(corner, 5, 5),
        },
        Scene {
            name: "row on a rectangle's surface",
            wall: Wall::Rect,
            points: block(Vec2::new(-0.5, 0.0), 21, 1),
        },
        Scene {
            name: "10 × 5 block on a rectangle's surface",
            wall: Wall::Rect,
            points: block(Vec2::new(-0.25, 0.0), 10, 5),
        },
        Scene {
            name: "row on a polyline box's floor",
            wall: Wall::PolylineBox,
            points: block(Vec2::new(-0.5, 0.0), 21, 1),
        },
        Scene {
            name: "10 × 5 block dropped 0.2 m into a polyline box",
            wall: Wall::PolylineBox,
            points: block(Vec2::new(-0.25, 0.2), 10, 5),
        },
        Scene {
            name: "10 × 5 block on a polyline box's floor",
            wall: Wall::PolylineBox,
            points: block(Vec2::new(-0.25, 0.0), 10, 5),
        },
    ]
}

/// Δt (s) and substeps of the runs.
const CLOCKS: [(f32, u32); 4] = [(1.0 / 60.0, 1), (0.005, 1), (0.001, 1), (0.005, 4)];

/// Kinetic energy treated as none (J): 1 mJ.
const NONE: f32 = 1e-3;

/// One run: the app, its particles and what was seen.
struct Run {
    app: App,
    particles: Vec<Entity>,
    g: Vec2,
    phi_max: Vec<f32>,
    /// Largest KE − Σ m (φmax − φ) (J) and the step it was seen at.
    excess: (f32, u64),
    /// Lowest y any particle reached (m).
    lowest: f32,
    /// Highest speed any particle reached (m/s).
    top_speed: f32,
}

impl Run {
    fn new(scene: &Scene, (dt, substeps): (f32, u32), gravity: bool) -> Self {
        let mut app = app(dt);
        app.world_mut()
            .resource_mut::<SolverSettings>()
            .set_substeps(substeps)
            .unwrap();
        if !gravity {
            app.world_mut().resource_mut::<Gravity>().0 = Vec2::ZERO;
        }
        let settings = FluidSettings::default();
        match scene.wall {
            Wall::Samples => {
                let points = samples();
                spawn(&mut app, |c| {
                    for p in points {
                        c.spawn((BoundaryParticle, Position(p)));
                    }
                });
            }
            Wall::Rect => {
                let at = Transform::from_xyz(0.0, -0.1, 0.0);
                collider(&mut app, Rectangle::new(10.0, 0.2), at, default());
            }
            Wall::PolylineBox => {
                let shape = DamBreakBuilder::default().box_polyline(&settings);
                collider(&mut app, shape, Transform::default(), default());
            }
        }
        let w = InverseMass::from_mass(settings.particle_mass()).unwrap();
        let particles = spawn(&mut app, |c| {
            let spawned = scene
                .points
                .iter()
                .map(|&p| (FluidParticle, Position(p), w));
            spawned.map(|b| c.spawn(b).id()).collect::<Vec<_>>()
        });
        let g = app.world().resource::<Gravity>().0;
        let phi_max = scene.points.iter().map(|&p| -g.dot(p)).collect();
        Self {
            app,
            particles,
            g,
            phi_max,
            excess: (f32::NEG_INFINITY, 0),
            lowest: f32::INFINITY,
            top_speed: 0.0,
        }
    }

    fn kinetic_energy(&self) -> f32 {
        let m = FluidSettings::default().particle_mass();
        let v = self.particles.iter().map(|&e| velocity(&self.app, e));
        v.map(|v| 0.5 * m * v.length_squared()).sum()
    }

    fn fastest(&self) -> f32 {
        let v = self.particles.iter().map(|&e| velocity(&self.app, e));
        v.map(Vec2::length).fold(0.0, f32::max)
    }

    /// Steps for `seconds`, watching every step.
    fn watch(&mut self, seconds: f32) {
        let dt = self.app.world().resource::<Time<Fixed>>().timestep();
        let m = FluidSettings::default().particle_mass();
        for _ in 0..(seconds / dt.as_secs_f32()).round() as u64 {
            run_steps(&mut self.app, 1);
            let mut bound = 0.0;
            for (k, &e) in self.particles.iter().enumerate() {
                let p = position(&self.app, e);
                let phi = -self.g.dot(p);
                self.phi_max[k] = self.phi_max[k].max(phi);
                bound += m * (self.phi_max[k] - phi);
                self.lowest = self.lowest.min(p.y);
            }
            self.top_speed = self.top_speed.max(self.fastest());
            let excess = self.kinetic_energy() - bound;
            if excess > self.excess.0 {
                self.excess = (excess, steps(&self.app));
            }
        }
    }
}

/// The issue's case: a row of 21 particles on the floor row of the dam-break box's samples
/// (Δt = 5 ms) was thrown up with ~129 J between steps 6 and 11 and flew 0.5–1.2 m above the
/// floor. Now it gains no more than gravity gives, and after 1 s it lies on the floor (within
/// 2 r of the samples' line).
#[test]
fn the_issues_row_is_not_launched() {
    let scene = scenes().remove(0);
    let mut run = Run::new(&scene, (0.005, 1), true);
    run.watch(1.0);
    assert!(run.excess.0 <= 0.01, "KE − bound {:?} J", run.excess);
    for &e in &run.particles {
        let y = position(&run.app, e).y;
        assert!((0.0..2.0 * R).contains(&y), "a particle at y = {} r", y / R);
    }
}

/// Without gravity nothing can give the fluid energy: every placement, at every Δt and
/// substep count, keeps its kinetic energy within 1 mJ of zero while it is moved out of the
/// wall, sinks no deeper into it (0.01 r), and is at rest after 1 s. (Before: the issue's kind gave
/// up to 104 J; fluid placed exactly on the polyline box's floor line came to rest outside
/// the box.)
#[test]
fn without_gravity_fluid_placed_on_a_wall_is_moved_out_at_rest() {
    for scene in scenes() {
        for clock in CLOCKS {
            let mut run = Run::new(&scene, clock, false);
            run.watch(1.0);
            let label = format!("{} at Δt {:.4} s × {}", scene.name, clock.0, clock.1);
            let lowest = scene.points.iter().map(|p| p.y).fold(f32::MAX, f32::min);
            assert!(run.excess.0 <= NONE, "{label}: KE {:?} J", run.excess);
            assert!(
                run.fastest() < 1e-3,
                "{label}: {} m/s at 1 s",
                run.fastest()
            );
            // (A block placed away from the wall over-dense expands a little both ways.)
            assert!(
                run.lowest >= lowest - 0.01 * R,
                "{label}: sank to {}",
                run.lowest
            );
        }
    }
}

/// With gravity, at Δt = 1/60 s to 1 ms and with substeps: the kinetic energy of every
/// placement stays within 0.2 J per particle (m g r / 3) of what gravity could have given
/// since spawn (the issue's row got ~6 J per particle; the most measured is 0.14 J, the
/// 5 × 5 block in the corner at 5 ms: settling lifts rows that gravity has already
/// accelerated, which the bound counts against them); no particle is ever faster than the
/// front of a dam break of the placement's height H (Ritter: 2√(gH), H from the wall, y = 0,
/// or the lowest spawn point below it to 2r above the highest); none falls through or escapes
/// the wall.
#[test]
fn with_gravity_fluid_placed_on_a_wall_gains_no_more_than_gravity_gives() {
    for scene in scenes() {
        for clock in CLOCKS {
            let mut run = Run::new(&scene, clock, true);
            run.watch(1.0);
            let label = format!("{} at Δt {:.4} s × {}", scene.name, clock.0, clock.1);
            let allowed = 0.2 * scene.points.len() as f32;
            assert!(
                run.excess.0 <= allowed,
                "{label}: KE − bound {:?} J",
                run.excess
            );
            let lowest = scene.points.iter().map(|p| p.y).fold(f32::MAX, f32::min);
            let highest = scene.points.iter().map(|p| p.y).fold(f32::MIN, f32::max);
            let front = 2.0 * (9.81 * (highest + 2.0 * R - lowest.min(0.0))).sqrt();
            assert!(
                run.top_speed <= front,
                "{label}: {} m/s, a dam break's front {front} m/s",
                run.top_speed
            );
            assert!(
                run.lowest >= lowest.min(0.0) - 0.5 * R,
                "{label}: fell to {}",
                run.lowest
            );
        }
    }
}

/// In deep water the pool presses some row into a wall in many substeps: such a row, and
/// the fluid it compresses, settles where it is held and for that substep only. Over 2 s of
/// a 120 × 120 dam break (Δt = 5 ms, the game preset) rows settle in some steps, no particle is
/// ever left settling after a step, and none is faster than the front of a dam break of the
/// block's height, 2√(gH). (Before, those rows went on settling while deep water compressed
/// them, and the whole pool was solved a second time in every substep.)
#[test]
fn rows_a_deep_pool_presses_into_a_wall_settle_alone() {
    let mut app = app(0.005);
    let settings = FluidSettings::game();
    app.insert_resource(settings);
    let builder = DamBreakBuilder {
        width: 120,
        height: 120,
        ..default()
    };
    let dam = spawn(&mut app, |c| builder.spawn(c, &settings).unwrap());
    let front = 2.0 * (9.81 * 120.0 * 2.0 * R).sqrt();
    let (mut settled_steps, mut fastest) = (0, 0.0f32);
    for _ in 0..400 {
        run_steps(&mut app, 1);
        settled_steps += usize::from(stats(&app).settling_particles > 0);
        let mut phases = app.world_mut().query::<&FluidSettling>();
        let settling = phases.iter(app.world());
        let settling = settling.filter(|&&s| s == FluidSettling::Settling).count();
        assert_eq!(settling, 0, "step {}: {settling} settling", steps(&app));
        let speeds = dam.fluid.iter().map(|&e| velocity(&app, e).length());
        fastest = speeds.fold(fastest, f32::max);
    }
    assert!(
        settled_steps > 0,
        "no row settled: the test does not reach its case"
    );
    assert!(fastest <= front, "{fastest} m/s, the front's {front} m/s");
}

/// A block moved by hand into another one (each particle r to the right of and r above one of
/// the other's, without gravity, Δt = 5 ms) is not a spawn: given [`FluidSettling::Placed`]
/// with its new position it settles and gains no kinetic energy; without, the density solve
/// corrects the overlap with velocity, and the test shows it.
#[test]
fn fluid_moved_into_fluid_settles_when_marked_placed() {
    let s = samples();
    let origin = Vec2::new(s[80].x, 0.5);
    let mut energies = Vec::new();
    for marked in [true, false] {
        let scene = Scene {
            name: "two 5 × 5 blocks",
            wall: Wall::Samples,
            points: [block(origin, 5, 5), block(origin + Vec2::X, 5, 5)].concat(),
        };
        let mut run = Run::new(&scene, (0.005, 1), false);
        run.watch(0.1);
        assert!(run.excess.0 <= NONE, "apart: KE {:?} J", run.excess);
        for (k, &e) in run.particles[25..].iter().enumerate() {
            let to = scene.points[k] + Vec2::splat(R);
            let mut particle = run.app.world_mut().entity_mut(e);
            particle.insert((Position(to), Velocity(Vec2::ZERO)));
            if marked {
                particle.insert(FluidSettling::Placed);
            }
        }
        run.excess = (f32::NEG_INFINITY, 0);
        run.watch(1.0);
        energies.push(run.excess.0);
    }
    assert!(energies[0] <= NONE, "marked: KE {} J", energies[0]);
    assert!(energies[1] > 100.0 * NONE, "unmarked: KE {} J", energies[1]);
}

/// Settling does not take an impact's momentum: without gravity or walls, two 10 × 10 blocks
/// are spawned at rest spacing 2.5 r apart, and one runs into the other at 1 m/s. The impact
/// compresses the facing rows far beyond the tolerance, but that is the substep's motion, not
/// placement: no particle settles, and over one second the total momentum stays within 0.1 %
/// (viscosity off). Judged at the predicted positions, the struck rows settled, the guard
/// capped their speed, and 70 % of the momentum was lost in that second.
#[test]
fn settling_keeps_an_impacts_momentum() {
    let mut app = app(1.0 / 60.0);
    app.insert_resource(Gravity(Vec2::ZERO));
    app.world_mut().resource_mut::<FluidSettings>().viscosity = 0.0;
    let moving = fluid_block(&mut app, Vec2::ZERO, (10, 10), Vec2::X);
    let corner = Vec2::new(20.0 * R + 0.5 * R, 0.3 * R);
    let resting = fluid_block(&mut app, corner, (10, 10), Vec2::ZERO);
    let all: Vec<Entity> = moving.iter().chain(&resting).copied().collect();
    let momentum = |app: &App| -> Vec2 { all.iter().map(|&p| velocity(app, p)).sum() };
    let start = momentum(&app);
    for step in 0..60 {
        run_steps(&mut app, 1);
        let settling = stats(&app).settling_particles;
        assert_eq!(settling, 0, "{settling} particles settle in step {step}");
        let change = (momentum(&app) - start).length() / start.length();
        assert!(
            change <= 1e-3,
            "momentum changed by {:.2} %",
            100.0 * change
        );
    }
    let struck = velocity(&app, resting[99]);
    assert!(struck.x > 0.05, "the resting block was pushed: {struck}");
}
