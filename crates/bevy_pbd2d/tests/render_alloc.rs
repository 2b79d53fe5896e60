//! The render feature's per-frame updates allocate nothing once the meshes are built: a
//! counting global allocator around the render systems (run in a schedule of their own, so
//! that Bevy's systems, some of which allocate when a mesh changes, are not counted), for a
//! cloth, a rope, a blob and a dam break with a fluid surface. Its own test binary, because
//! the allocator is global.
#![cfg(feature = "render")]

mod common;

use core::alloc::{GlobalAlloc, Layout};
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::alloc::System;

use bevy::ecs::schedule::{ScheduleLabel, SingleThreadedExecutor};
use bevy::mesh::{MeshPlugin, VertexAttributeValues};
use bevy::prelude::*;
use bevy_pbd2d::prelude::*;
use bevy_pbd2d::render::fluid::FluidSplats;
use bevy_pbd2d::render::{BlobMesh, ClothMesh, FluidSurface, PbdRenderPlugin, RopeMesh};
use common::spawn;

/// Counts allocations (and reallocations) while [`COUNTING`] is set.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn last_vertex(app: &App, root: Entity) -> [f32; 3] {
    let handle = &app.world().get::<Mesh2d>(root).unwrap().0;
    match app
        .world()
        .resource::<Assets<Mesh>>()
        .get(handle)
        .unwrap()
        .attribute(Mesh::ATTRIBUTE_POSITION)
    {
        Some(VertexAttributeValues::Float32x3(v)) => v[v.len() - 1],
        _ => panic!("no positions"),
    }
}

/// The schedule the test runs the render systems in.
#[derive(ScheduleLabel, Debug, Clone, PartialEq, Eq, Hash)]
struct RenderUpdate;

/// One frame: a step, then the render systems.
fn frame(app: &mut App) {
    app.update();
    app.world_mut().run_schedule(RenderUpdate);
}

#[test]
fn the_render_updates_allocate_nothing_per_frame() {
    let mut app = common::app_with(
        0.005,
        (
            AssetPlugin::default(),
            MeshPlugin,
            PbdPlugins::default().set(PbdRenderPlugin::new(RenderUpdate)),
        ),
    );
    // One thread runs them, so that only they run while counted.
    app.edit_schedule(RenderUpdate, |schedule| {
        schedule.set_executor(SingleThreadedExecutor::new());
    });
    let fluid = *app.world().resource::<FluidSettings>();
    let roots = spawn(&mut app, |c| {
        let cloth = ClothBuilder {
            width: 40,
            height: 30,
            origin: Vec2::new(-20.0, 10.0),
            ..default()
        }
        .spawn(c)
        .unwrap()
        .root;
        let rope = RopeBuilder::between(Vec2::new(10.0, 10.0), Vec2::new(14.0, 10.0))
            .spawn(c)
            .unwrap()
            .root;
        let blob = BlobBuilder {
            origin: Vec2::new(0.0, 10.0),
            ..default()
        }
        .spawn(c)
        .unwrap()
        .root;
        let dam = DamBreakBuilder {
            width: 20,
            height: 20,
            ..default()
        }
        .spawn(c, &fluid)
        .unwrap()
        .root;
        c.entity(cloth).insert(ClothMesh::default());
        c.entity(rope).insert(RopeMesh::default());
        c.entity(blob).insert(BlobMesh::default());
        c.entity(dam).insert(FluidSurface::default());
        [cloth, rope, blob]
    });
    // Build the meshes and let every buffer reach its size.
    for _ in 0..20 {
        frame(&mut app);
    }
    assert_eq!(app.world().resource::<FluidSplats>().drawn(), 400);
    let mut counted = 0;
    for _ in 0..30 {
        // A step, and a shift of every particle by 1 cm, move them (not counted)…
        frame(&mut app);
        let before = roots.map(|r| last_vertex(&app, r));
        let world = app.world_mut();
        let mut positions = world.query::<&mut Position>();
        for mut p in positions.iter_mut(world) {
            p.0.x += 0.01;
        }
        // …and the render systems writing the meshes are counted.
        ALLOCATIONS.store(0, Ordering::SeqCst);
        COUNTING.store(true, Ordering::SeqCst);
        app.world_mut().run_schedule(RenderUpdate);
        COUNTING.store(false, Ordering::SeqCst);
        counted += ALLOCATIONS.load(Ordering::SeqCst);
        // The meshes were rewritten from the moved particles.
        let after = roots.map(|r| last_vertex(&app, r));
        for (b, a) in before.iter().zip(&after) {
            assert!((a[0] - b[0] - 0.01).abs() < 1e-4, "{b:?} -> {a:?}");
        }
    }
    assert_eq!(
        counted, 0,
        "the render systems allocated {counted} times in 30 frames"
    );
}
