//! Tests of the batched projection: the bits of serial Gauss-Seidel, whatever the grouping.

use super::*;
use crate::constraints::colouring::colour_order;
use crate::constraints::colouring_tests::cloth_rows;
use crate::constraints::row::COINCIDENT;
use crate::dynamics::coincident::separation_direction;
use wide::f32x8;

/// A plain serial Gauss-Seidel sweep over `rows` in order, written from the equations of the
/// module docs: the oracle for the batched sweep.
fn reference_sweep(
    x: &mut [Vec2],
    w: &[f32],
    rows: &[DistanceRow],
    lambda: &mut [f32],
    inv_dt2: f32,
) {
    for (k, row) in rows.iter().enumerate() {
        let (a, b) = (row.a as usize, row.b as usize);
        let alpha_tilde = row.compliance * inv_dt2;
        let denominator = w[a] + w[b] + alpha_tilde;
        if denominator <= 0.0 {
            continue;
        }
        let delta = x[a] - x[b];
        let length = delta.length();
        let n = if length > COINCIDENT {
            delta * (1.0 / length)
        } else {
            separation_direction(k)
        };
        let d_lambda = ((row.rest_length - length) - alpha_tilde * lambda[k]) * (1.0 / denominator);
        lambda[k] += d_lambda;
        x[a] += (w[a] * d_lambda) * n;
        x[b] -= (w[b] * d_lambda) * n;
    }
}

/// Deterministic pseudo-random numbers in [0, 1).
fn lcg(seed: &mut u64) -> f32 {
    *seed = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    (*seed >> 40) as f32 / (1u64 << 24) as f32
}

/// 200 particles (every 7th pinned, two coincident) and 700 constraints: a coincident pair,
/// a pinned pair, zero rest lengths, compliance on every third, random pairs, and a hub
/// particle in 80 constraints (so the overflow colour has constraints sharing it).
fn scene() -> (Vec<Vec2>, Vec<f32>, Vec<DistanceRow>) {
    let mut seed = 7;
    let n = 200;
    let mut x: Vec<Vec2> = (0..n)
        .map(|_| Vec2::new(lcg(&mut seed) * 4.0 - 2.0, lcg(&mut seed) * 3.0))
        .collect();
    x[6] = x[5];
    let w: Vec<f32> = (0..n)
        .map(|i| {
            if i % 7 == 0 {
                0.0
            } else {
                0.5 + lcg(&mut seed)
            }
        })
        .collect();
    let mut pairs = vec![(5, 6), (7, 14)];
    while pairs.len() < 620 {
        let a = (lcg(&mut seed) * n as f32) as u32 % n as u32;
        let b = (lcg(&mut seed) * n as f32) as u32 % n as u32;
        if a != b {
            pairs.push((a, b));
        }
    }
    pairs.extend((1..=80).map(|b| (0, b)));
    let rows = pairs
        .iter()
        .enumerate()
        .map(|(k, &(a, b))| DistanceRow {
            a,
            b,
            rest_length: if k % 11 == 3 {
                0.0
            } else {
                0.1 + lcg(&mut seed)
            },
            compliance: if k % 3 == 0 { 1e-5 } else { 0.0 },
        })
        .collect();
    (x, w, rows)
}

fn bits(x: &[Vec2]) -> Vec<(u32, u32)> {
    x.iter().map(|p| (p.x.to_bits(), p.y.to_bits())).collect()
}

#[test]
fn batched_sweep_is_bitwise_serial_gauss_seidel() {
    let (x0, w, rows) = scene();
    let (order, colours) = colour_order(&rows, x0.len());
    let rows: Vec<DistanceRow> = order.iter().map(|&k| rows[k]).collect();
    let mut batches = DistanceBatches::new(&rows, &colours, x0.len());
    assert!(
        batches
            .runs
            .iter()
            .any(|r| r.independent && r.end - r.start >= 4 * LANES),
        "some colours are projected in groups"
    );
    let overflow = batches.runs.iter().find(|r| !r.independent);
    assert!(
        overflow.is_some_and(|r| r.end - r.start > 1),
        "an overflow colour with several constraints"
    );
    let coincident = rows.iter().position(|r| (r.a, r.b) == (5, 6)).unwrap();
    let group = batches.groups.iter().find(|g| {
        let start = g.start as usize;
        (start..start + g.count as usize).contains(&coincident)
    });
    assert!(
        group.is_some_and(|g| g.count > 1),
        "the coincident pair is in a group"
    );
    assert_sweeps_are_serial(&x0, &w, &rows, &mut batches);
}

/// Three sweeps of `batches` (the layout of `rows`) give the bits of [`reference_sweep`],
/// with and without AVX2, and the maximum stretch of a direct computation.
fn assert_sweeps_are_serial(
    x0: &[Vec2],
    w: &[f32],
    rows: &[DistanceRow],
    batches: &mut DistanceBatches,
) {
    let inv_dt2 = 1e4;
    batches.set_coefficients(w, inv_dt2);
    let (mut x, mut lambda) = (x0.to_vec(), vec![0.0; rows.len()]);
    let (mut x_ref, mut lambda_ref) = (x0.to_vec(), vec![0.0; rows.len()]);
    for _ in 0..3 {
        batches.project_sweep(&mut x, &mut lambda);
        reference_sweep(&mut x_ref, w, rows, &mut lambda_ref, inv_dt2);
    }
    assert!(x.iter().all(|p| p.is_finite()));
    assert_ne!(bits(&x), bits(x0), "the sweep moved particles");
    assert_eq!(bits(&x), bits(&x_ref));
    let mut x_baseline = x0.to_vec();
    let mut lambda_baseline = vec![0.0; rows.len()];
    for _ in 0..3 {
        // SAFETY: `f32x8` runs on every CPU.
        unsafe { batches.project_sweep_unchecked::<f32x8>(&mut x_baseline, &mut lambda_baseline) };
    }
    assert_eq!(
        bits(&x_baseline),
        bits(&x),
        "same bits with and without AVX2"
    );
    let lambda_bits = |l: &[f32]| l.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(lambda_bits(&lambda), lambda_bits(&lambda_ref));
    let stretch = rows
        .iter()
        .filter(|r| r.rest_length > 0.0)
        .map(|r| {
            ((x[r.a as usize] - x[r.b as usize]).length() - r.rest_length).abs() / r.rest_length
        })
        .fold(0.0, f32::max);
    assert!(stretch > 0.0);
    let batched = batches.max_relative_stretch(&x);
    assert!(
        (batched - stretch).abs() < 1e-6 * (1.0 + stretch),
        "{batched} vs {stretch}"
    );
    let pinned = (0..x0.len()).filter(|&i| w[i] == 0.0);
    assert!(
        pinned.into_iter().all(|i| x[i] == x0[i]),
        "pinned particles stay"
    );
    let coincident = (1..x0.len()).find(|&i| x0[i - 1] == x0[i]);
    assert!(
        coincident.is_none_or(|i| x[i - 1] != x[i]),
        "coincident particles are separated"
    );
}

#[test]
fn grid_rows_are_moved_in_runs_with_the_bits_of_serial_gauss_seidel() {
    let builder = crate::scenes::cloth::ClothBuilder {
        width: 32,
        height: 9,
        ..Default::default()
    };
    let mut seed = 3;
    let n = (builder.width * builder.height) as usize;
    let x0: Vec<Vec2> = (0..n as u32)
        .map(|k| {
            let jitter = Vec2::new(lcg(&mut seed), lcg(&mut seed)) * 0.02;
            builder.position(k / builder.width, k % builder.width) + jitter
        })
        .collect();
    let w: Vec<f32> = (0..n)
        .map(|i| if i % 13 == 0 { 0.0 } else { 1.0 })
        .collect();
    let rows: Vec<DistanceRow> = cloth_rows(builder.width, builder.height)
        .into_iter()
        .enumerate()
        .map(|(k, row)| DistanceRow {
            compliance: if k % 5 == 0 { 1e-6 } else { 0.0 },
            ..row
        })
        .collect();
    let (order, colours) = colour_order(&rows, n);
    let rows: Vec<DistanceRow> = order.iter().map(|&k| rows[k]).collect();
    let mut batches = DistanceBatches::new(&rows, &colours, n);
    let in_layout = |layout: Layout| {
        let groups = batches.groups.iter().filter(|g| g.layout == layout);
        groups.map(|g| g.count as usize).sum::<usize>()
    };
    let (consecutive, paired) = (in_layout(Layout::Consecutive), in_layout(Layout::Paired));
    assert!(paired >= 6 * LANES, "horizontal edges in pairs: {paired}");
    assert!(
        (consecutive + paired) * 5 >= rows.len() * 2,
        "{consecutive} consecutive + {paired} paired of {}",
        rows.len()
    );
    assert!(in_layout(Layout::Scattered) > 0);
    // Each row of 31 diagonals (8 rows, two directions) and of 15 odd horizontal edges (9
    // rows) leaves 7 for a group with one hole, except the last row of the down-right
    // diagonals and of the odd edges: their hole's second row would be past the last
    // particle.
    let with_holes = (batches.groups.iter())
        .filter(|g| g.layout != Layout::Scattered && (g.count as usize) < LANES)
        .count();
    let (rows_of_diagonals, rows_of_edges) = (builder.height - 1, builder.height);
    assert_eq!(
        with_holes,
        (2 * rows_of_diagonals - 1 + rows_of_edges - 1) as usize
    );
    for group in &batches.groups {
        let (start, count) = (group.start as usize, group.count as usize);
        let [a, b] = group.first_rows;
        let lanes = match group.layout {
            Layout::Scattered => continue,
            Layout::Consecutive => GroupRows::Consecutive { a, b },
            Layout::Paired => GroupRows::Paired { a },
        }
        .lanes();
        assert!(count >= MIN_CONTIGUOUS);
        assert_eq!(&lanes.0[..count], &batches.a[start..start + count]);
        assert_eq!(&lanes.1[..count], &batches.b[start..start + count]);
    }
    assert_sweeps_are_serial(&x0, &w, &rows, &mut batches);
}

#[test]
fn every_run_of_a_colour_fills_whole_contiguous_groups() {
    let rows = cloth_rows(40, 30);
    let (order, colours) = colour_order(&rows, 1200);
    let rows: Vec<DistanceRow> = order.iter().map(|&k| rows[k]).collect();
    let batches = DistanceBatches::new(&rows, &colours, 1200);
    // Maximal runs of each colour, counted on the colour's rows sorted by (b − a, a):
    // a steps by 1, or by 2 with b = a + 1.
    let mut whole_groups = 0;
    for colour in colours.chunk_by(|a, b| a == b).scan(0, |start, c| {
        *start += c.len();
        Some(*start - c.len()..*start)
    }) {
        let mut pairs: Vec<(u32, u32)> = rows[colour].iter().map(|r| (r.b - r.a, r.a)).collect();
        pairs.sort_unstable();
        let mut run = 1;
        for (n, pair) in pairs.iter().enumerate() {
            let next = pairs.get(n + 1);
            let step = if pair.0 == 1 { 2 } else { 1 };
            if next.is_some_and(|&(offset, a)| offset == pair.0 && a == pair.1 + step) {
                run += 1;
            } else {
                whole_groups += run / LANES;
                run = 1;
            }
        }
    }
    let count_of = |layout: fn(&Group) -> bool| batches.groups.iter().filter(|g| layout(g)).count();
    let full = count_of(|g| g.layout != Layout::Scattered && g.count as usize == LANES);
    assert_eq!(full, whole_groups);
    // The 7 diagonals left over from each row of 39 (29 rows, two directions) fill a group
    // with one hole, except the last down-right row's (its hole would join particle 1200);
    // the 3 odd horizontal edges left over from each row are gathered.
    let with_holes = count_of(|g| g.layout != Layout::Scattered && (g.count as usize) < LANES);
    assert_eq!(with_holes, 2 * 29 - 1);
    let scattered = count_of(|g| g.layout == Layout::Scattered);
    assert!(
        scattered * 40 < batches.groups.len(),
        "{scattered} of {} groups gathered",
        batches.groups.len()
    );
}

#[test]
fn holes_are_written_back_bit_for_bit_and_only_where_they_fit() {
    // `count` constraints of one colour in lane order: consecutive a → a + offset, a = 0 ..
    // count, or paired 2p → 2p + 1, p = 0 .. count. Their group's holes are the pattern's
    // rows of the lanes count .. 8.
    let consecutive = |count: usize, offset: u32| -> Vec<DistanceRow> {
        let a = CONSECUTIVE_ORDER[..count].iter().map(|&o| (o, o + offset));
        a.map(|(a, b)| DistanceRow {
            a,
            b,
            rest_length: 0.9,
            compliance: 0.0,
        })
        .collect()
    };
    let paired = |count: usize| -> Vec<DistanceRow> {
        let a = PAIRED_ORDER[..count].iter().map(|&o| (2 * o, 2 * o + 1));
        a.map(|(a, b)| DistanceRow {
            a,
            b,
            rest_length: 0.2,
            compliance: 1e-6,
        })
        .collect()
    };
    let layout_of = |rows: &[DistanceRow], particles: usize| {
        let batches = DistanceBatches::new(rows, &vec![0; rows.len()], particles);
        (batches.groups.len(), batches.groups[0].layout)
    };
    // The hole's second row (17) is not a particle.
    assert_eq!(layout_of(&consecutive(7, 10), 17).1, Layout::Scattered);
    // The hole's first row (7) is the first constraint's second particle.
    assert_eq!(layout_of(&consecutive(7, 7), 20).1, Layout::Scattered);
    // Fewer than `MIN_CONTIGUOUS` constraints are gathered.
    assert_eq!(layout_of(&consecutive(5, 10), 20).1, Layout::Scattered);

    let cases = [
        (consecutive(7, 10), Layout::Consecutive),
        (consecutive(6, 10), Layout::Consecutive),
        (paired(7), Layout::Paired),
    ];
    for (rows, layout) in cases {
        let m = rows.len();
        assert_eq!(layout_of(&rows, 20), (1, layout), "{m} rows");
        let rows_of = |rows: GroupRows| rows.lanes();
        let (a, b) = rows_of(match layout {
            Layout::Paired => GroupRows::Paired { a: 0 },
            _ => GroupRows::Consecutive { a: 0, b: 10 },
        });
        let mut seed = 11;
        let mut x0: Vec<Vec2> = (0..20)
            .map(|i| {
                Vec2::new(i as f32 * 0.3, (i / 10) as f32)
                    + 0.1 * Vec2::new(lcg(&mut seed), lcg(&mut seed))
            })
            .collect();
        // The holes' rows: −0, ∞ and NaN must come back as they were.
        for l in m..LANES {
            x0[a[l] as usize] = Vec2::new(-0.0, f32::INFINITY);
            x0[b[l] as usize] = Vec2::new(f32::NAN, -0.0);
        }
        let w = vec![1.0; 20];
        // 17 particle rows: the consecutive groups are gathered (their holes would reach
        // row 17), the paired one is not.
        for particles in [20, 17] {
            let mut batches = DistanceBatches::new(&rows, &[0; 7][..m], particles);
            batches.set_coefficients(&w, 1e4);
            let (mut x, mut lambda) = (x0.clone(), vec![0.0; m]);
            let (mut x_ref, mut lambda_ref) = (x0.clone(), vec![0.0; m]);
            let (mut x_baseline, mut lambda_baseline) = (x0.clone(), vec![0.0; m]);
            for _ in 0..3 {
                batches.project_sweep(&mut x, &mut lambda);
                reference_sweep(&mut x_ref, &w, &rows, &mut lambda_ref, 1e4);
                // SAFETY: `f32x8` runs on every CPU.
                unsafe {
                    batches.project_sweep_unchecked::<f32x8>(&mut x_baseline, &mut lambda_baseline)
                };
            }
            assert_ne!(bits(&x), bits(&x0), "the sweep moved particles");
            assert_eq!(bits(&x), bits(&x_ref), "{m} rows, {particles} particles");
            assert_eq!(bits(&x_baseline), bits(&x_ref), "without AVX2");
            assert_eq!(lambda_bits(&lambda), lambda_bits(&lambda_ref));
        }
    }
}

#[test]
fn stretch_counts_compression_and_skips_zero_rest_lengths_and_nan() {
    let row = |a, b, rest_length| DistanceRow {
        a,
        b,
        rest_length,
        compliance: 0.0,
    };
    // Lengths 1.1 (d = 1), 0.7 (d = 1), 0.5 (d = 0), NaN (d = 1).
    let x = [
        Vec2::ZERO,
        Vec2::new(1.1, 0.0),
        Vec2::new(0.0, 1.0),
        Vec2::new(0.0, 1.7),
        Vec2::new(5.0, 5.0),
        Vec2::new(5.0, 5.5),
        Vec2::new(f32::NAN, 0.0),
        Vec2::ZERO,
    ];
    let rows = [
        row(0, 1, 1.0),
        row(2, 3, 1.0),
        row(4, 5, 0.0),
        row(6, 7, 1.0),
    ];
    let stretch_of = |mut batches: DistanceBatches, x: &[Vec2]| {
        batches.set_coefficients(&vec![1.0; x.len()], 1e4);
        batches.max_relative_stretch(x)
    };
    for batches in [
        DistanceBatches::new(&rows, &[0; 4], x.len()),
        DistanceBatches::serial(&rows),
    ] {
        let stretch = stretch_of(batches, &x);
        assert!((stretch - 0.3).abs() < 1e-6, "{stretch}");
    }
    // A tiny rest length, satisfied: no stretch (1/d² would overflow).
    let tiny = [Vec2::ZERO, Vec2::new(1e-20, 0.0)];
    let stretch = stretch_of(DistanceBatches::new(&[row(0, 1, 1e-20)], &[0], 2), &tiny);
    assert!(stretch.abs() < 1e-6, "{stretch}");
    // Strong compression (length d/1000): 1 − r would lose r's low bits.
    let squeezed = [Vec2::ZERO, Vec2::new(1e-3, 0.0)];
    let stretch = stretch_of(DistanceBatches::new(&[row(0, 1, 1.0)], &[0], 2), &squeezed);
    assert!((stretch - 0.999).abs() < 1e-6, "{stretch}");
    let stretched = [row(0, 1, 1.0), row(4, 5, 0.0)];
    let stretch = stretch_of(DistanceBatches::new(&stretched, &[0; 2], x.len()), &x);
    assert!((stretch - 0.1).abs() < 1e-6, "{stretch}");
}

fn lambda_bits(lambda: &[f32]) -> Vec<u32> {
    lambda.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn rigid_runs_give_the_bits_of_the_general_projection() {
    let (x0, w, rows) = scene();
    let rows: Vec<DistanceRow> = rows
        .iter()
        .enumerate()
        .map(|(k, r)| DistanceRow {
            compliance: if k % 97 == 0 { 1e-5 } else { 0.0 },
            ..*r
        })
        .collect();
    let (order, colours) = colour_order(&rows, x0.len());
    let rows: Vec<DistanceRow> = order.iter().map(|&k| rows[k]).collect();
    let mut batches = DistanceBatches::new(&rows, &colours, x0.len());
    let rigid_runs = batches.runs.iter().filter(|r| r.rigid).count();
    assert!(rigid_runs > 0 && rigid_runs < batches.runs.len());
    for run in &batches.runs {
        let alphas = rows[run.start..run.end].iter().map(|r| r.compliance);
        assert_eq!(run.rigid, alphas.clone().all(|a| a == 0.0));
    }
    batches.set_coefficients(&w, 1e4);
    let (mut x, mut lambda) = (x0.clone(), vec![0.0; rows.len()]);
    let (mut x_general, mut lambda_general) = (x0.clone(), vec![0.0; rows.len()]);
    for _ in 0..3 {
        batches.project_sweep(&mut x, &mut lambda);
        for run in &batches.runs {
            // SAFETY: `f32x8` runs on every CPU.
            unsafe {
                batches.project_run::<f32x8, false>(run, &mut x_general, &mut lambda_general)
            };
        }
    }
    assert_ne!(bits(&x), bits(&x0), "the sweep moved particles");
    assert_eq!(bits(&x), bits(&x_general));
    assert_eq!(lambda_bits(&lambda), lambda_bits(&lambda_general));
    assert!(
        lambda.iter().any(|&l| l != 0.0),
        "λ accumulates in rigid runs"
    );
}

#[test]
#[should_panic(expected = "set_coefficients")]
fn positions_must_match_the_inverse_masses() {
    let (x, w, rows) = scene();
    let mut batches = DistanceBatches::serial(&rows);
    batches.set_coefficients(&w, 1e4);
    batches.project_sweep(&mut x[..100].to_vec(), &mut vec![0.0; rows.len()]);
}

#[test]
fn coefficients_follow_the_inverse_masses() {
    let (x0, mut w, rows) = scene();
    let mut batches = DistanceBatches::serial(&rows);
    batches.set_coefficients(&w, 1e4);
    w[1] = 0.0;
    batches.set_coefficients(&w, 1e4);
    let mut fresh = DistanceBatches::serial(&rows);
    fresh.set_coefficients(&w, 1e4);
    let (mut x, mut x_fresh) = (x0.clone(), x0);
    batches.project_sweep(&mut x, &mut vec![0.0; rows.len()]);
    fresh.project_sweep(&mut x_fresh, &mut vec![0.0; rows.len()]);
    assert_eq!(bits(&x), bits(&x_fresh));
}
