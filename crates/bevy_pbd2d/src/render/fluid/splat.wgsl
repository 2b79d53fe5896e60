// The fluid surface's off-screen pass: each particle a quad of half-width R (the material's
// `kernel.x`, m) around its centre, drawing the kernel w = (1 − d²/R²)³ with additive blending,
// so that the target holds Σ w·colour (linear RGB) and Σ w (alpha) at every pixel.

#import bevy_sprite::mesh2d_view_bindings::view
#import bevy_render::color_operations::srgb_to_linear

// x: the kernel's support radius R (m).
@group(#{MATERIAL_BIND_GROUP}) @binding(0) var<uniform> kernel: vec4<f32>;

struct Vertex {
    // The particle's centre (m, world), the same on its four vertices.
    @location(0) centre: vec2<f32>,
    // Its colour, sRGB-encoded; alpha holds the corner, 0 ..= 3 (of 255).
    @location(1) color: vec4<f32>,
};

struct Splat {
    @builtin(position) position: vec4<f32>,
    // The corner's offset in units of R: (±1, ±1).
    @location(0) offset: vec2<f32>,
    @location(1) color: vec3<f32>,
};

@vertex
fn vertex(vertex: Vertex) -> Splat {
    // The corner travels in the colour's alpha (not the vertex index, which includes the
    // offset of the mesh in Bevy's shared vertex buffers): bit 0 is x, bit 1 is y.
    let index = u32(round(vertex.color.a * 255.0));
    let corner = vec2<f32>(f32(index & 1u), f32((index >> 1u) & 1u)) * 2.0 - 1.0;
    let world = vertex.centre + corner * kernel.x;
    var out: Splat;
    out.position = view.clip_from_world * vec4<f32>(world, 0.0, 1.0);
    out.offset = corner;
    out.color = srgb_to_linear(vertex.color.rgb);
    return out;
}

@fragment
fn fragment(splat: Splat) -> @location(0) vec4<f32> {
    let q = 1.0 - dot(splat.offset, splat.offset);
    if q <= 0.0 {
        discard;
    }
    let w = q * q * q;
    return vec4<f32>(splat.color * w, w);
}
