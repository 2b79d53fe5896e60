// The fluid surface, drawn over the whole view of the camera it follows: reads the off-screen
// field (Σ w·colour, Σ w) and shades what lies above the threshold.

#import bevy_sprite::{
    mesh2d_functions as mesh_functions,
    mesh2d_view_bindings::view,
}
#ifdef TONEMAP_IN_SHADER
#import bevy_core_pipeline::tonemapping
#endif
#ifdef SRGB_OUTPUT
#import bevy_render::color_operations::linear_to_srgb
#endif
#ifdef OKLAB_OUTPUT
#import bevy_render::color_operations::linear_rgb_to_oklab
#endif

struct Surface {
    // Linear RGB and strength of: the deep tint, the edge highlight, the foam.
    deep: vec4<f32>,
    edge: vec4<f32>,
    foam: vec4<f32>,
    // threshold, opacity, 0, 0.
    shape: vec4<f32>,
    // UV per metre (x, y), depth of the full tint (m), 0.
    scale: vec4<f32>,
    // Probe radii (m): the edge band's width, the foam's look-around; 0, 0.
    probes: vec4<f32>,
};

@group(#{MATERIAL_BIND_GROUP}) @binding(0) var<uniform> surface: Surface;
@group(#{MATERIAL_BIND_GROUP}) @binding(1) var field: texture_2d<f32>;
@group(#{MATERIAL_BIND_GROUP}) @binding(2) var field_sampler: sampler;

struct Vertex {
    @builtin(instance_index) instance_index: u32,
    // The quad's corners in normalized device coordinates (±1, ±1).
    @location(0) position: vec3<f32>,
};

struct Pixel {
    @builtin(position) position: vec4<f32>,
    @location(0) uv: vec2<f32>,
};

@vertex
fn vertex(vertex: Vertex) -> Pixel {
    // Covers the view; its depth is that of the entity's z, so that sprites and meshes
    // order against it as against any 2D mesh.
    let world_from_local = mesh_functions::get_world_from_local(vertex.instance_index);
    let depth = view.clip_from_world * vec4<f32>(0.0, 0.0, world_from_local[3].z, 1.0);
    var out: Pixel;
    out.position = vec4<f32>(vertex.position.xy, depth.z / depth.w, 1.0);
    out.uv = vec2<f32>(0.5 + 0.5 * vertex.position.x, 0.5 - 0.5 * vertex.position.y);
    return out;
}

fn density(uv: vec2<f32>) -> f32 {
    return textureSampleLevel(field, field_sampler, uv, 0.0).a;
}

/// How many of eight points at `radius` metres around `uv` are not fluid (0 ..= 8), and the
/// direction they lie in (the surface's outward normal, unnormalised; y up).
fn outside_around(uv: vec2<f32>, radius: f32, threshold: f32) -> vec3<f32> {
    var count = 0.0;
    var towards = vec2<f32>(0.0);
    for (var k = 0; k < 8; k++) {
        let direction = vec2<f32>(cos(f32(k) * 0.7853982), sin(f32(k) * 0.7853982));
        let probe = vec2<f32>(direction.x * surface.scale.x, -direction.y * surface.scale.y) * radius;
        let out = 1.0 - step(threshold, density(uv + probe));
        count += out;
        towards += out * direction;
    }
    return vec3<f32>(count, towards);
}

@fragment
fn fragment(pixel: Pixel) -> @location(0) vec4<f32> {
    let sample = textureSampleLevel(field, field_sampler, pixel.uv, 0.0);
    let rho = sample.a;
    let threshold = surface.shape.x;
    // Anti-aliased edge: the field's change over one pixel.
    let texel = 1.0 / vec2<f32>(textureDimensions(field));
    let across = max(
        abs(density(pixel.uv + vec2<f32>(texel.x, 0.0)) - rho),
        abs(density(pixel.uv + vec2<f32>(0.0, texel.y)) - rho),
    );
    let aa = max(0.5 * across, 1e-4);
    if rho <= 0.0 {
        discard;
    }
    // Points `probes.x` around that are not fluid: the edge band, and small holes.
    let edge = outside_around(pixel.uv, surface.probes.x, threshold);
    // A pixel below the threshold with fluid all around (at most one point out) is a hole
    // between particles spread apart by the flow: closed, as it lies within the kernel's
    // support of a particle (ρ̃ > 0), so never farther than R from one.
    let hole = select(0.0, 1.0, edge.x <= 1.0);
    let coverage = max(smoothstep(threshold - aa, threshold + aa, rho), hole);
    if coverage <= 0.0 {
        discard;
    }
    var color = sample.rgb / rho;

    // Depth tint: the share of twelve points straight above, up to `scale.z` metres, that are
    // fluid, each counted smoothly across the threshold so that the tint does not band
    // (screen up is world +y for an unrotated camera).
    let up = vec2<f32>(0.0, -surface.scale.y * surface.scale.z / 12.0);
    var inside = 0.0;
    for (var k = 1; k <= 12; k++) {
        inside += smoothstep(0.5 * threshold, 1.5 * threshold, density(pixel.uv + f32(k) * up));
    }
    color = mix(color, color * surface.deep.rgb, surface.deep.a * inside / 12.0);

    // Edge highlight: within `probes.x` of the surface some of the points around are not
    // fluid; brightest where the surface faces up (light from above).
    // (Points out all around, a lone droplet, leave no direction: no facing.)
    let towards = length(edge.yz);
    let facing = select(0.0, edge.z / towards, towards > 1e-3);
    let rim = smoothstep(1.0, 3.5, edge.x) * (0.6 + 0.4 * facing);
    color = mix(color, surface.edge.rgb, surface.edge.a * rim);

    // Foam: where most of the points `probes.y` around are not fluid (spray, droplets).
    let spray = smoothstep(4.5, 7.5, outside_around(pixel.uv, surface.probes.y, threshold).x);
    color = mix(color, surface.foam.rgb, surface.foam.a * spray);

    let alpha = coverage * mix(surface.shape.y, 1.0, max(rim * surface.edge.a, spray * surface.foam.a));
    var out = vec4<f32>(color, alpha);
#ifdef TONEMAP_IN_SHADER
    out = tonemapping::tone_mapping(out, view.color_grading);
#endif
#ifdef SRGB_OUTPUT
    out = vec4<f32>(linear_to_srgb(out.rgb), out.a);
#endif
#ifdef OKLAB_OUTPUT
    out = vec4<f32>(linear_rgb_to_oklab(out.rgb), out.a);
#endif
    return out;
}
