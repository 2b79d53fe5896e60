//! `render [--frames N] [--threads N]`: the CPU time of the render feature's per-frame update
//! (the systems of `PbdRenderSystems`: writing the meshes' vertices from the particles, the
//! fluid's splat mesh), for the reference cloth (40 × 30) and dam breaks of 10 000 and 100 000
//! fluid particles with a `FluidSurface`. No GPU: the app has Bevy's asset and mesh plugins and
//! no renderer, and runs the render systems in a schedule of their own after each step, timed
//! alone (single-threaded, as every schedule of the bench). One JSON line per scene.

use std::time::Instant;

use bevy::ecs::schedule::ScheduleLabel;
use bevy::mesh::MeshPlugin;
use bevy::prelude::*;
use bevy_pbd2d::error::PbdError;
use bevy_pbd2d::prelude::{ClothBuilder, DamBreakBuilder, FluidSettings, PbdPlugins};
use bevy_pbd2d::render::fluid::FluidSplats;
use bevy_pbd2d::render::{ClothMesh, FluidSurface, PbdRenderPlugin};

/// The schedule the bench runs the render systems in.
#[derive(ScheduleLabel, Debug, Clone, PartialEq, Eq, Hash)]
struct RenderUpdate;

/// A scene of the render bench.
#[derive(Debug, Clone, Copy)]
enum RenderScene {
    /// The reference cloth, width × height particles.
    Cloth(u32, u32),
    /// A dam break of width × height fluid particles.
    Fluid(u32, u32),
}

impl RenderScene {
    fn name(self) -> String {
        match self {
            Self::Cloth(w, h) => format!("cloth {w}x{h}"),
            Self::Fluid(w, h) => format!("fluid {w}x{h}"),
        }
    }
}

/// The scenes `render` measures.
const SCENES: [RenderScene; 3] = [
    RenderScene::Cloth(40, 30),
    RenderScene::Fluid(100, 100),
    RenderScene::Fluid(316, 316),
];

/// Frames run before timing: the meshes are built and every buffer reaches its size.
const WARMUP_FRAMES: usize = 10;

fn app(scene: RenderScene, threads: usize) -> Result<App, PbdError> {
    let dt = match scene {
        RenderScene::Cloth(..) => 0.01,
        RenderScene::Fluid(..) => 0.005,
    };
    let mut app = crate::scene::headless_app_with(
        threads,
        dt,
        (
            AssetPlugin::default(),
            MeshPlugin,
            PbdPlugins::default().set(PbdRenderPlugin::new(RenderUpdate)),
        ),
    )?;
    let world = app.world_mut();
    match scene {
        RenderScene::Cloth(width, height) => {
            let cloth = ClothBuilder {
                width,
                height,
                ..default()
            }
            .spawn(&mut world.commands())?;
            world
                .commands()
                .entity(cloth.root)
                .insert(ClothMesh::default());
        }
        RenderScene::Fluid(width, height) => {
            let settings = *world.resource::<FluidSettings>();
            let dam = DamBreakBuilder {
                width,
                height,
                max_particles: u64::MAX,
                ..default()
            }
            .spawn(&mut world.commands(), &settings)?;
            world
                .commands()
                .entity(dam.root)
                .insert(FluidSurface::default());
        }
    }
    crate::scene::finish(&mut app);
    Ok(app)
}

/// One frame: a step, then the render systems; returns their wall time (ms).
fn frame(app: &mut App) -> f64 {
    app.update();
    let start = Instant::now();
    app.world_mut().run_schedule(RenderUpdate);
    start.elapsed().as_secs_f64() * 1e3
}

/// Runs every scene for `frames` timed frames on `threads` compute threads and returns one
/// JSON line per scene.
///
/// # Errors
/// [`PbdError`] when a builder refuses its scene.
pub fn run(frames: usize, threads: usize) -> Result<Vec<String>, PbdError> {
    let mut lines = Vec::new();
    for scene in SCENES {
        let mut app = app(scene, threads)?;
        for _ in 0..WARMUP_FRAMES {
            frame(&mut app);
        }
        let mut times: Vec<f64> = (0..frames).map(|_| frame(&mut app)).collect();
        times.sort_by(f64::total_cmp);
        let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
        let median = times.get(times.len() / 2).copied().unwrap_or(f64::NAN);
        let drawn = app.world().resource::<FluidSplats>().drawn();
        lines.push(format!(
            "{{\"bench\":\"render\",\"scene\":\"{}\",\"threads\":{threads},\"frames\":{frames},\
             \"splats\":{drawn},\"ms_per_frame_median\":{median:.4},\"ms_per_frame_mean\":{mean:.4},\
             \"ms_per_frame_max\":{:.4}}}",
            scene.name(),
            times.last().copied().unwrap_or(f64::NAN),
        ));
    }
    Ok(lines)
}
