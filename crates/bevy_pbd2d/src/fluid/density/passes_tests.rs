//! Tests of the density and correction passes against direct sums.

use super::passes::*;
use super::state::*;
use super::*;
use crate::fluid::grid::SpatialHashGrid;
use crate::fluid::grid::test_points::lcg;
use crate::fluid::kernel::CubicSpline;
use crate::fluid::neighbors::NeighborChunk;
use crate::fluid::neighbors::find_neighbors;
use crate::fluid::slots::GROUP;
use crate::parallel::CHUNK;
#[cfg(target_arch = "x86_64")]
use crate::simd::{Avx8, has_avx2};
use bevy::prelude::*;
use wide::f32x8;

/// The bits of rows.
fn row_bits(rows: &[DensityRow]) -> Vec<[u32; 4]> {
    let row = |r: &DensityRow| {
        let g = r.boundary_gradient;
        [r.density, r.lambda, g.x, g.y].map(f32::to_bits)
    };
    rows.iter().map(row).collect()
}

/// The bits of vectors.
fn vec_bits(v: &[Vec2]) -> Vec<[u32; 2]> {
    v.iter().map(|v| [v.x.to_bits(), v.y.to_bits()]).collect()
}

/// The density pass of every chunk, then Δx of every row from the rows, on the baseline
/// lanes, on AVX where the CPU has it, and with rows instead of offsets in the fluid
/// slots (the same bits); returns the rows and Δx.
fn both_passes(
    fluid: &Fluid,
    x: &[Vec2],
    chunks: &mut [NeighborChunk],
) -> (Vec<DensityRow>, Vec<Vec2>) {
    /// With `wide`, the slots are built beforehand with rows.
    fn run<V: PairLanes>(
        fluid: &Fluid,
        x: &[Vec2],
        chunks: &mut [NeighborChunk],
        wide: bool,
    ) -> (Vec<DensityRow>, Vec<Vec2>) {
        let mut rows = vec![DensityRow::default(); x.len()];
        for (c, (chunk, out)) in chunks.iter_mut().zip(rows.chunks_mut(CHUNK)).enumerate() {
            let block = c * CHUNK..c * CHUNK + out.len();
            assert!(chunk.indices_within(block.start, out.len(), x.len(), fluid.boundary_x.len()));
            if wide {
                let mut slots = core::mem::take(&mut chunk.slots);
                slots.build_with(chunk, block.start, 0);
                chunk.slots = slots;
            }
            // SAFETY: the lists were checked just above; `first` builds the slots (else
            // they were built from them just above).
            let w = vec![1.0; out.len()];
            let error =
                unsafe { fluid.density_block::<V>(x, chunk, block, out, (&w, !wide, None), 1.0) };
            let excess = out
                .iter()
                .map(|r| (r.density - fluid.rest_density).max(0.0));
            assert_eq!(
                error,
                excess.map(f64::from).sum::<f64>(),
                "error of block {c}"
            );
        }
        let mut delta = Vec::new();
        for chunk in chunks.iter() {
            for g in 0..chunk.slots.groups() {
                // SAFETY: the slots were built above from the checked lists.
                let (dx, dy) =
                    unsafe { fluid.correction_group_of::<V>(&chunk.slots, g, rows.as_ptr()) };
                let (dx, dy) = (dx.to_f32x8().to_array(), dy.to_f32x8().to_array());
                let real = (chunk.fluid_count.len() - g * GROUP).min(GROUP);
                delta.extend((0..real).map(|l| Vec2::new(dx[l], dy[l])));
            }
        }
        (rows, delta)
    }
    let wide = run::<f32x8>(fluid, x, chunks, true);
    assert!(
        chunks.iter().any(|c| c.slots.wide()),
        "no chunk has wide slots"
    );
    let baseline = run::<f32x8>(fluid, x, chunks, false);
    assert!(
        chunks.iter().all(|c| !c.slots.wide()),
        "a chunk has wide slots"
    );
    // The same ρ, λ and Δx bits as the baseline passes over offsets.
    let same = |(rows, delta): &(Vec<DensityRow>, Vec<Vec2>), what: &str| {
        assert_eq!(row_bits(rows), row_bits(&baseline.0), "ρ, λ: {what}");
        assert_eq!(vec_bits(delta), vec_bits(&baseline.1), "Δx: {what}");
    };
    same(&wide, "rows, offsets");
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        #[target_feature(enable = "avx2")]
        fn avx2(
            fluid: &Fluid,
            x: &[Vec2],
            chunks: &mut [NeighborChunk],
            wide: bool,
        ) -> (Vec<DensityRow>, Vec<Vec2>) {
            run::<Avx8>(fluid, x, chunks, wide)
        }
        let scratch: Vec<_> = chunks.iter().map(|c| c.slots.gradient.clone()).collect();
        // Every scratch entry must be written again.
        let poison = |chunks: &mut [NeighborChunk]| {
            for chunk in chunks.iter_mut() {
                chunk.slots.gradient.fill([f32x8::splat(f32::NAN); 2]);
            }
        };
        poison(chunks);
        // SAFETY: the CPU has AVX2.
        let wide = unsafe { avx2(fluid, x, chunks, true) };
        same(&wide, "AVX rows");
        poison(chunks);
        // SAFETY: the CPU has AVX2.
        let avx = unsafe { avx2(fluid, x, chunks, false) };
        same(&avx, "AVX and baseline");
        let lane_bits = |g: &[[f32x8; 2]]| -> Vec<[[u32; GROUP]; 2]> {
            g.iter()
                .map(|g| g.map(|v| v.to_array().map(f32::to_bits)))
                .collect()
        };
        for (chunk, before) in chunks.iter().zip(&scratch) {
            assert_eq!(lane_bits(&chunk.slots.gradient), lane_bits(before));
        }
    }
    #[cfg(target_arch = "x86_64")]
    if !has_avx2() {
        eprintln!("no AVX2: only the baseline passes were run");
    }
    baseline
}

#[test]
fn density_and_correction_have_the_same_bits_on_every_path_and_the_direct_sums() {
    let settings = FluidSettings::default();
    let h = settings.support_radius;
    let spacing = 2.0 * settings.particle_radius;
    let mut seed = 7;
    // A jittered, squeezed block of 403 rows (a partial last chunk and group), one particle
    // duplicated (a coincident pair), and a wall of boundary samples below it.
    let mut x: Vec<Vec2> = (0..403)
        .map(|k| {
            let jitter = Vec2::new(lcg(&mut seed), lcg(&mut seed)) - 0.5;
            Vec2::new((k % 20) as f32, (k / 20) as f32 * 0.8 + 0.5) * spacing
                + 0.3 * spacing * jitter
        })
        .collect();
    x[77] = x[78];
    // Sample 0 is not finite and nobody's neighbour: padding lanes read it, and must not
    // turn its NaN offsets into NaN rows.
    let mut boundary_x: Vec<Vec2> = (0..40)
        .map(|k| Vec2::new(k as f32 * 0.5 * spacing, 0.0))
        .collect();
    boundary_x[0] = Vec2::new(f32::INFINITY, 0.0);
    let boundary_psi = vec![0.6 * settings.particle_mass(); boundary_x.len()];
    let (mut fluid_grid, mut boundary_grid) =
        (SpatialHashGrid::default(), SpatialHashGrid::default());
    fluid_grid.build(&x, h);
    boundary_grid.build(&boundary_x, h);
    let mut chunks = Vec::new();
    find_neighbors(&mut chunks, &fluid_grid, &x, &boundary_grid, h, usize::MAX);
    let fluid = Fluid {
        kernel: CubicSpline::new(h),
        mass: settings.particle_mass(),
        rest_density: settings.rest_density,
        inv_rest_density: 1.0 / settings.rest_density,
        // Large enough to matter in λ (the default 10⁻⁶ is negligible against the sums,
        // ~300 m⁻² here).
        epsilon: 100.0,
        over_relaxation: 1.0,
        chebyshev: &[],
        max_step: f32::INFINITY,
        largest_mobility: None,
        artificial_pressure: None,
        boundary_x: &boundary_x,
        boundary_psi: &boundary_psi,
    };
    let (rows, delta) = both_passes(&fluid, &x, &mut chunks);
    assert_eq!(delta.len(), x.len());
    let close = |a: f32, b: f32, scale: f32| (a - b).abs() <= 1e-4 * scale;
    let mut compressed = 0;
    for (c, chunk) in chunks.iter().enumerate() {
        let slots = &chunk.slots;
        for g in 0..slots.groups() {
            let fluid_count = slots.counts[g][0].to_array();
            // SAFETY: g < groups().
            let (range, _) = unsafe { slots.ranges(g) };
            // Each pair's scratch lane holds ∇Wᵢⱼ of the pairwise kernel, bit for bit
            // (the coincident pair, pushed apart, is left out), padding lanes 0.
            for (s, at) in range.enumerate() {
                let [gx, gy] = slots.gradient[at].map(|v| v.to_array());
                for l in 0..GROUP {
                    let (i, j) = (
                        slots.rows[g][l] as usize,
                        unsafe { slots.fluid_rows(at) }[l] as usize,
                    );
                    if s as f32 >= fluid_count[l] {
                        assert!(gx[l] == 0.0 && gy[l] == 0.0, "padding of {i}");
                    } else if x[i] != x[j] {
                        let g = fluid.kernel.gradient(x[i] - x[j]);
                        let bits = |v: Vec2| (v.x.to_bits(), v.y.to_bits());
                        assert_eq!(bits(Vec2::new(gx[l], gy[l])), bits(g), "{i}–{j}");
                    }
                }
            }
        }
        for k in 0..chunk.fluid_count.len() {
            let i = c * CHUNK + k;
            let row = rows[i];
            // ρᵢ against the direct sum m W(0) + Σⱼ m Wᵢⱼ + Σₖ Ψₖ Wᵢₖ (another order).
            let w = |p: Vec2| fluid.kernel.w((x[i] - p).length());
            let direct = fluid.mass * fluid.kernel.w0()
                + (x.iter())
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, &p)| fluid.mass * w(p))
                    .sum::<f32>()
                + (boundary_x.iter().zip(&boundary_psi))
                    .map(|(&p, &psi)| psi * w(p))
                    .sum::<f32>();
            assert!(
                close(row.density, direct, direct),
                "ρ of {i}: {}",
                row.density
            );
            if row.lambda < 0.0 {
                compressed += 1;
            }
            assert!(
                row.lambda.is_finite() && row.boundary_gradient.is_finite(),
                "row {i}"
            );
            if i == 77 || i == 78 {
                continue; // the coincident pair, pushed apart
            }
            // Σₖ Ψₖ∇Wᵢₖ and λᵢ = −Cᵢ / (Σⱼ (m/ρ0)² |∇Wᵢⱼ|² + |∇ᵢCᵢ|² + ε) from direct sums.
            let near = |p: Vec2| (x[i] - p).length() < h;
            let boundary_gradient = (boundary_x.iter().zip(&boundary_psi))
                .filter(|&(&p, _)| near(p))
                .map(|(&p, &psi)| psi * fluid.kernel.gradient(x[i] - p))
                .sum::<Vec2>();
            let scale = boundary_gradient.length().max(1e-3);
            let (a, b) = (row.boundary_gradient, boundary_gradient);
            assert!(
                close(a.x, b.x, scale) && close(a.y, b.y, scale),
                "Σ Ψ∇W of {i}"
            );
            let gradients: Vec<Vec2> = (x.iter().enumerate())
                .filter(|&(j, &p)| j != i && near(p))
                .map(|(_, &p)| fluid.kernel.gradient(x[i] - p))
                .collect();
            let m_scale = fluid.mass / fluid.rest_density;
            let grad_i = (fluid.mass * gradients.iter().sum::<Vec2>() + boundary_gradient)
                / fluid.rest_density;
            let sum = (gradients.iter())
                .map(|g| m_scale * m_scale * g.length_squared())
                .sum::<f32>()
                + grad_i.length_squared();
            let c = (row.density / fluid.rest_density - 1.0).max(0.0);
            let lambda = -c / (sum + fluid.epsilon);
            assert!(
                close(row.lambda, lambda, lambda.abs().max(1e-9)),
                "λ of {i}: {} vs {lambda}",
                row.lambda
            );
            // Δxᵢ against (1/ρ0)(Σⱼ m (λᵢ + λⱼ) ∇Wᵢⱼ + λᵢ Σₖ Ψₖ ∇Wᵢₖ).
            let fluid_part = (x.iter().enumerate())
                .filter(|&(j, _)| j != i)
                .map(|(j, &p)| {
                    fluid.mass * (row.lambda + rows[j].lambda) * fluid.kernel.gradient(x[i] - p)
                })
                .sum::<Vec2>();
            let direct = (fluid_part + row.lambda * row.boundary_gradient) / fluid.rest_density;
            let scale = direct.length().max(1e-9);
            assert!(
                close(delta[i].x, direct.x, scale) && close(delta[i].y, direct.y, scale),
                "Δx of {i}: {} vs {direct}",
                delta[i]
            );
        }
    }
    assert!(compressed > 50, "rows with λ < 0: {compressed}");
}
