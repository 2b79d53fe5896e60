//! The fluid surface rendered for real, off-screen (software Vulkan where there is no GPU, as
//! the demos' smoke test), and read back from the image's pixels: every particle centre lies
//! in the water, no pixel farther than 2 r from every particle is water, the inside of a block
//! at rest spacing has no holes, and a lone particle is a droplet about its own size.
//!
//! Needs a Vulkan, Metal or DX12 adapter (on Debian: `mesa-vulkan-drivers`); no window or
//! display.

use std::sync::{Arc, Mutex};

use bevy::camera::RenderTarget;
use bevy::prelude::*;
use bevy::render::RenderPlugin;
use bevy::render::render_resource::{TextureFormat, TextureUsages};
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use bevy_pbd2d::prelude::*;
use bevy_pbd2d::render::{FluidSurface, FluidSurfaceSettings, ParticleColor, PbdRender};

/// The image's size (pixels) and scale (pixels per metre).
const WIDTH: u32 = 320;
const HEIGHT: u32 = 240;
const PIXELS_PER_METRE: f32 = 200.0;
/// The clear colour, which no water pixel has.
const CLEAR: [u8; 3] = [255, 0, 255];

/// The known configuration (m): a 10 × 6 block at spacing 2r, a lone particle, and two
/// particles 3r apart.
fn particles(r: f32) -> Vec<Vec2> {
    let d = 2.0 * r;
    let mut out = Vec::new();
    for i in 0..6 {
        for j in 0..10 {
            out.push(Vec2::new(-0.6 + j as f32 * d, -0.3 + i as f32 * d));
        }
    }
    out.push(Vec2::new(0.3, 0.3));
    out.push(Vec2::new(0.3, -0.2));
    out.push(Vec2::new(0.3 + 1.5 * d, -0.2));
    out
}

/// The world point (m) at the centre of pixel (x, y) of the image.
fn world(x: u32, y: u32) -> Vec2 {
    Vec2::new(
        (x as f32 + 0.5 - 0.5 * WIDTH as f32) / PIXELS_PER_METRE,
        (0.5 * HEIGHT as f32 - y as f32 - 0.5) / PIXELS_PER_METRE,
    )
}

/// An app drawing `positions` (a paused simulation, no gizmos) into an off-screen image with
/// the fluid surface following its camera; returns the app and the image.
fn scene(positions: &[Vec2]) -> (App, Handle<Image>) {
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin {
                primary_window: None,
                exit_condition: ExitCondition::DontExit,
                close_when_requested: false,
                ..default()
            })
            .set(RenderPlugin {
                synchronous_pipeline_compilation: true,
                ..default()
            })
            .disable::<WinitPlugin>(),
    )
    .add_plugins(PbdPlugins::default());
    app.world_mut().resource_mut::<PbdClock>().pause();
    // Only the surface: no gizmo dots and axes (feature `debug_render`) on top.
    app.world_mut()
        .resource_mut::<bevy_pbd2d::debug_render::PbdDebugRender>()
        .enabled = false;
    let mut target = Image::new_target_texture(WIDTH, HEIGHT, TextureFormat::Rgba8UnormSrgb, None);
    target.texture_descriptor.usage |= TextureUsages::COPY_SRC;
    let target = app.world_mut().resource_mut::<Assets<Image>>().add(target);
    let camera = app
        .world_mut()
        .spawn((
            Camera2d,
            Camera {
                clear_color: ClearColorConfig::Custom(Color::srgb_u8(CLEAR[0], CLEAR[1], CLEAR[2])),
                ..default()
            },
            RenderTarget::Image(target.clone().into()),
            Msaa::Off,
            Projection::Orthographic(OrthographicProjection {
                scale: 1.0 / PIXELS_PER_METRE,
                ..OrthographicProjection::default_2d()
            }),
        ))
        .id();
    app.world_mut()
        .resource_mut::<FluidSurfaceSettings>()
        .camera = Some(camera);
    let w =
        InverseMass::from_mass(app.world().resource::<FluidSettings>().particle_mass()).unwrap();
    let root = app
        .world_mut()
        .spawn((ParticleBody, FluidSurface::default()))
        .id();
    for &p in positions {
        app.world_mut()
            .spawn((FluidParticle, Position(p), w, ParticleOf(root)));
    }
    app.finish();
    app.cleanup();
    (app, target)
}

/// Runs a few frames (the passes' entities and pipelines come up), captures `target` and
/// returns its pixels (sRGB, row-major).
fn capture(app: &mut App, target: &Handle<Image>) -> Vec<[u8; 3]> {
    for _ in 0..5 {
        app.update();
    }
    let captured: Arc<Mutex<Option<Image>>> = Arc::default();
    let slot = captured.clone();
    app.world_mut()
        .spawn(Screenshot::image(target.clone()))
        .observe(move |event: On<ScreenshotCaptured>| {
            *slot.lock().unwrap() = Some(event.image.clone());
        });
    for _ in 0..100 {
        app.update();
        if captured.lock().unwrap().is_some() {
            break;
        }
    }
    let image = captured
        .lock()
        .unwrap()
        .take()
        .expect("the screenshot arrived");
    assert_eq!(
        (image.width(), image.height()),
        (WIDTH, HEIGHT),
        "the captured image's size"
    );
    // `PBD2D_TEST_IMAGE=path.png` keeps the picture, to look at.
    if let Some(path) = std::env::var_os("PBD2D_TEST_IMAGE") {
        image
            .clone()
            .try_into_dynamic()
            .expect("an sRGB image")
            .save(path)
            .expect("the picture is saved");
    }
    let data = image.data.expect("pixels");
    data.chunks_exact(4).map(|p| [p[0], p[1], p[2]]).collect()
}

/// Renders the configuration and returns the image's pixels (sRGB, row-major).
fn render(positions: &[Vec2]) -> Vec<[u8; 3]> {
    let (mut app, target) = scene(positions);
    capture(&mut app, &target)
}

fn is_water(pixel: [u8; 3]) -> bool {
    pixel
        .iter()
        .zip(CLEAR)
        .any(|(&p, c)| (p as i32 - c as i32).abs() > 8)
}

#[test]
fn the_fluid_surface_covers_the_particles_and_nothing_beyond_2r() {
    let r = FluidSettings::default().particle_radius;
    let positions = particles(r);
    let pixels = render(&positions);
    let at = |x: u32, y: u32| pixels[(y * WIDTH + x) as usize];
    let pixel_of = |p: Vec2| {
        (
            (p.x * PIXELS_PER_METRE + 0.5 * WIDTH as f32).floor() as u32,
            (0.5 * HEIGHT as f32 - p.y * PIXELS_PER_METRE).floor() as u32,
        )
    };
    // Every particle centre is water.
    for (k, &p) in positions.iter().enumerate() {
        let (x, y) = pixel_of(p);
        assert!(
            is_water(at(x, y)),
            "particle {k} at {p} (pixel {x}, {y}) is not in the water"
        );
    }
    // No pixel farther than 2r from every particle is water; the block's inside (up to r/2
    // beyond its outer centres; the free surface lies about r beyond them, scalloped) and the
    // droplets' cores (0.8 r) have no holes.
    let (block_lo, block_hi) = (positions[0], positions[59]);
    let mut water = 0;
    for y in 0..HEIGHT {
        for x in 0..WIDTH {
            let q = world(x, y);
            let nearest = positions
                .iter()
                .map(|p| p.distance(q))
                .fold(f32::INFINITY, f32::min);
            let wet = is_water(at(x, y));
            water += wet as u32;
            assert!(
                !wet || nearest <= 2.0 * r,
                "pixel ({x}, {y}) at {q} is water {:.2} r from the nearest particle",
                nearest / r
            );
            let in_block = q.cmpge(block_lo - 0.5 * r).all() && q.cmple(block_hi + 0.5 * r).all();
            if in_block || nearest < 0.8 * r {
                assert!(wet, "pixel ({x}, {y}) at {q} is dry inside the fluid");
            }
        }
    }
    // The lone particle is a droplet of about its own size: nothing at 1.5 r from it.
    let lone = positions[60];
    for angle in 0..16 {
        let q = lone + 1.5 * r * Vec2::from_angle(angle as f32 * core::f32::consts::TAU / 16.0);
        let (x, y) = pixel_of(q);
        assert!(!is_water(at(x, y)), "the lone droplet reaches 1.5 r at {q}");
    }
    // The water's area: within 20 % of the particles' area at rest, (2r)² each, plus the
    // rounding of the edges.
    let area = water as f32 / (PIXELS_PER_METRE * PIXELS_PER_METRE);
    let particles_area = positions.len() as f32 * 4.0 * r * r;
    assert!(
        (area / particles_area - 1.0).abs() < 0.2,
        "water {area} m², particles {particles_area} m²"
    );
}

#[test]
fn the_surface_hides_with_the_switch_and_comes_back_after_its_entities_are_despawned() {
    let r = FluidSettings::default().particle_radius;
    let positions = particles(r);
    let (mut app, target) = scene(&positions);
    let water = |pixels: &[[u8; 3]]| pixels.iter().filter(|&&p| is_water(p)).count();
    let shown = water(&capture(&mut app, &target));
    assert!(shown > 1000, "{shown} water pixels");
    // The render switch off (the panel's reference look): no water.
    app.world_mut().resource_mut::<PbdRender>().enabled = false;
    assert_eq!(water(&capture(&mut app, &target)), 0);
    app.world_mut().resource_mut::<PbdRender>().enabled = true;
    assert_eq!(water(&capture(&mut app, &target)), shown);
    // A game despawning everything it did not spawn itself: the passes come back.
    let world = app.world_mut();
    let mut named = world.query::<(Entity, &Name)>();
    let passes: Vec<Entity> = named
        .iter(world)
        .filter(|(_, name)| name.as_str().starts_with("Fluid surface"))
        .map(|(e, _)| e)
        .collect();
    assert_eq!(
        passes.len(),
        3,
        "the splat camera, the splats and the surface"
    );
    for entity in passes {
        world.despawn(entity);
    }
    assert_eq!(water(&capture(&mut app, &target)), shown);
}

#[test]
fn each_particle_has_its_colour_and_a_resized_field_follows_the_particles() {
    let r = FluidSettings::default().particle_radius;
    let positions = particles(r);
    let (mut app, target) = scene(&positions);
    let pixel_of = |p: Vec2| {
        let x = (p.x * PIXELS_PER_METRE + 0.5 * WIDTH as f32).floor() as u32;
        let y = (0.5 * HEIGHT as f32 - p.y * PIXELS_PER_METRE).floor() as u32;
        (y * WIDTH + x) as usize
    };
    // The block's left half red, by ParticleColor; the rest keeps its body's blue.
    let world = app.world_mut();
    let mut fluid = world.query_filtered::<(Entity, &Position), With<FluidParticle>>();
    let left: Vec<Entity> = fluid
        .iter(world)
        .filter(|(_, p)| p.0.x < -0.45 && p.0.y < 0.0)
        .map(|(e, _)| e)
        .collect();
    assert_eq!(left.len(), 24, "four columns of six");
    for &e in &left {
        world
            .entity_mut(e)
            .insert(ParticleColor(Color::srgb(0.9, 0.1, 0.1)));
    }
    let pixels = capture(&mut app, &target);
    // Inside the block (its rim is lightened towards the edge and foam colours).
    let inner = |p: Vec2| p.x > -0.59 && p.x < -0.16 && p.y > -0.29 && p.y < -0.06;
    for &p in positions[..60].iter().filter(|&&p| inner(p)) {
        let [red, _, blue] = pixels[pixel_of(p)].map(u32::from);
        if p.x < -0.5 {
            assert!(
                red > 2 * blue.max(1) && red > 120,
                "{p}: {:?}",
                pixels[pixel_of(p)]
            );
        } else if p.x > -0.4 {
            assert!(blue > 2 * red.max(1), "{p}: {:?}", pixels[pixel_of(p)]);
        }
    }
    // Half the resolution (the off-screen image made again), and every particle 0.2 m to the
    // right: the water is where they are now, not where they were.
    app.world_mut()
        .resource_mut::<FluidSurfaceSettings>()
        .resolution_scale = 0.5;
    let world = app.world_mut();
    let mut all = world.query_filtered::<&mut Position, With<FluidParticle>>();
    for mut p in all.iter_mut(world) {
        p.0.x += 0.2;
    }
    let pixels = capture(&mut app, &target);
    for &p in &positions {
        let moved = p + Vec2::new(0.2, 0.0);
        assert!(is_water(pixels[pixel_of(moved)]), "{moved} is dry");
    }
    // The block's old left column, now 0.2 m (8 r) from its nearest particle.
    for &p in &positions[..60] {
        if p.x < -0.55 {
            assert!(!is_water(pixels[pixel_of(p)]), "{p} is still water");
        }
    }
}
