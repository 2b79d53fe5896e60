//! Distance constraints laid out for projection [`LANES`] at a time.
//!
//! The rows are in colour order ([`colour_order`](super::distance::colour_order)): within one
//! colour no two constraints share a particle, so projecting a group of them together (gather
//! both particles' positions, compute every correction, scatter) gives exactly the positions of
//! projecting them one after another: this is still Gauss-Seidel, in the same order. The last
//! constraints of a colour form a smaller group; those of the overflow colour
//! ([`OVERFLOW_COLOUR`]), which may share particles, are projected one at a time. A group whose
//! particle rows are consecutive (a(l) = a + o(l), b(l) = b + o(l)) or paired
//! (a(l) = a + 2 o(l), b(l) = a(l) + 1), with o the lane order `CONSECUTIVE_ORDER` or
//! `PAIRED_ORDER`, as the edges of a grid are once each colour is sorted by row and each run
//! fills whole groups first ([`colour_order`](super::distance::colour_order)), has its positions
//! moved several rows per load and store ([`lane_positions`](super::lane_positions)). A run's
//! remainder of 6 or 7 consecutive rows, or of 7 paired ones (a grid row of 39 diagonals leaves
//! 7), forms a contiguous group with holes when the rows of its missing lanes are distinct
//! particle rows: those lanes read and write back their rows unchanged (corrections of −0 and
//! +0); other remainders are gathered. The
//! projection is written once on 8-lane vectors (`Lanes8`): two SSE vectors in the baseline
//! build, one AVX vector where the CPU has AVX2.
//!
//! Every constraint, in a full group, a smaller one or alone, goes through the same code and so
//! the same IEEE operations in the same order (no fused multiply-add, no approximate reciprocal
//! square root), on [`LANES`]-wide SIMD vectors whose unused lanes are dropped (holes write back
//! what they read): the result does not depend on how constraints are grouped. Positions are
//! moved by [`lane_positions`](super::lane_positions).
//!
//! Per constraint and step, with α̃ = α/Δt² (\[MMC16\] eq. 18) and k = 1/(w₁ + w₂ + α̃), set to 0
//! when w₁ + w₂ + α̃ = 0 (both particles pinned, α = 0, so Δλ = 0 and nothing moves):
//!
//! ```text
//! n   = (x₁ − x₂) · (1/‖x₁ − x₂‖)            (separation direction when coincident)
//! Δλ  = ((d − ‖x₁ − x₂‖) − α̃ λ) · k          (d − ‖x₁ − x₂‖ = −C)
//! λ  += Δλ
//! x₁ += (w₁ Δλ) n,   x₂ −= (w₂ Δλ) n
//! ```
//!
//! A colour whose constraints are all rigid (α = 0, so α̃ = 0) skips the α̃ λ term: while λ is
//! finite it is ±0 and d − ‖x₁ − x₂‖ is never −0, so leaving it out gives the same bits. λ is
//! still accumulated for every constraint: λ/Δt² is the constraint's force (N), e.g. to decide
//! when to tear.

use bevy::prelude::*;
use wide::f32x8;

use super::distance::{COINCIDENT, DistanceRow, OVERFLOW_COLOUR};
pub use super::lane_positions::LANES;
use super::lane_positions::{CONSECUTIVE_ORDER, GroupRows, PAIRED_ORDER, PositionLanes, lane_rows};
use crate::degenerate::separation_direction;
use crate::simd::Lanes8;
#[cfg(target_arch = "x86_64")]
use crate::simd::{Avx8, has_avx2};

/// A run of consecutive constraint rows of one colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ColourRun {
    /// First row.
    start: usize,
    /// One past the last row.
    end: usize,
    /// Whether no two of its constraints share a particle (every colour but the overflow one).
    independent: bool,
    /// Whether every one of its constraints is rigid (compliance α = 0).
    rigid: bool,
    /// Its groups: `groups[first_group .. end_group]`.
    first_group: usize,
    /// One past its last group.
    end_group: usize,
}

/// How the particle rows of a group lie in memory ([`GroupRows`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Any rows.
    Scattered,
    /// [`GroupRows::Consecutive`].
    Consecutive,
    /// [`GroupRows::Paired`].
    Paired,
}

/// Constraint rows projected together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Group {
    /// First row.
    start: u32,
    /// Particle rows a(0) and b(0) of its first lane (read without the group's other rows by
    /// the contiguous layouts).
    first_rows: [u32; 2],
    /// Number of rows (1 ..= [`LANES`]; at least [`MIN_CONTIGUOUS`] unless scattered).
    count: u8,
    /// Where their particle rows are.
    layout: Layout,
}

/// The layout of the group of constraint rows with first particles `a` and second particles `b`
/// (1 ..= [`LANES`] of them, in lane order), if its rows are one of the contiguous patterns
/// (a(l) = a + o(l), b(l) = b + o(l), or a(l) = a + 2 o(l), b(l) = a(l) + 1, with o
/// [`CONSECUTIVE_ORDER`] or [`PAIRED_ORDER`]). A group of fewer than [`LANES`] constraints
/// leaves holes: the lanes past them still read and write back the pattern's rows, unchanged,
/// so those rows must be particle rows (< `particles`) and all 2 [`LANES`] rows distinct.
pub(crate) fn contiguous_layout(a: &[u32], b: &[u32], particles: usize) -> Option<Layout> {
    let count = a.len();
    if !(1..=LANES).contains(&count) || b.len() != count {
        return None;
    }
    let pattern = |first: u32, step: u32, plus: u32, order: [u32; LANES]| {
        let mut rows = [0; LANES];
        for (row, o) in rows.iter_mut().zip(order) {
            *row = first.checked_add(step * o)?.checked_add(plus)?;
        }
        Some(rows)
    };
    let candidates = [
        (
            Layout::Consecutive,
            pattern(a[0], 1, 0, CONSECUTIVE_ORDER),
            pattern(b[0], 1, 0, CONSECUTIVE_ORDER),
        ),
        (
            Layout::Paired,
            pattern(a[0], 2, 0, PAIRED_ORDER),
            pattern(a[0], 2, 1, PAIRED_ORDER),
        ),
    ];
    candidates.into_iter().find_map(|(layout, rows_a, rows_b)| {
        let (rows_a, rows_b) = (rows_a?, rows_b?);
        let fits = rows_a[..count] == *a
            && rows_b[..count] == *b
            && (count == LANES || holes_fit(rows_a, rows_b, particles));
        fits.then_some(layout)
    })
}

/// Whether the rows of a group with holes are particle rows (< `particles`) and distinct.
fn holes_fit(a: [u32; LANES], b: [u32; LANES], particles: usize) -> bool {
    let mut rows = [a, b].concat();
    rows.sort_unstable();
    rows.windows(2).all(|pair| pair[0] != pair[1])
        && rows.last().is_some_and(|&last| (last as usize) < particles)
}

/// The fewest constraints of a contiguous group with holes: a group costs about the same
/// whatever its count, so fewer are cheaper gathered with other rows.
pub(crate) const MIN_CONTIGUOUS: usize = LANES - 2;

/// Calls `f(count)` with `count` (a contiguous group's, [`MIN_CONTIGUOUS`] ..= [`LANES`]) as
/// a constant, so that each inlined `f` is compiled for its count (fixed-size copies).
#[inline(always)]
fn contiguous_count(count: usize, mut f: impl FnMut(usize)) {
    const _: () = assert!(MIN_CONTIGUOUS == LANES - 2);
    match count {
        LANES => f(LANES),
        7 => f(7),
        6 => f(6),
        _ => unreachable!("a contiguous group of {count} constraints"),
    }
}

/// Splits the rows of `run` into groups of [`LANES`] (the last one may be smaller), contiguous
/// where their rows allow it (groups of [`MIN_CONTIGUOUS`] or more rows with holes included);
/// the overflow colour's rows are projected one at a time. `particles` is the number of
/// particle rows.
fn group_run(a: &[u32], b: &[u32], run: &ColourRun, particles: usize, groups: &mut Vec<Group>) {
    let (a, b) = (&a[..run.end], &b[..run.end]);
    let mut k = run.start;
    while k < run.end {
        let contiguous = (MIN_CONTIGUOUS..=LANES)
            .rev()
            .filter(|&count| run.independent && k + count <= run.end)
            .find_map(|count| {
                let rows = k..k + count;
                contiguous_layout(&a[rows.clone()], &b[rows], particles).map(|l| (count, l))
            });
        let (count, layout) = contiguous.unwrap_or_else(|| {
            let count = if run.independent {
                LANES.min(run.end - k)
            } else {
                1
            };
            (count, Layout::Scattered)
        });
        groups.push(Group {
            start: k as u32,
            first_rows: [a[k], b[k]],
            count: count as u8,
            layout,
        });
        k += count;
    }
}

/// The distance constraints as arrays (one entry per constraint row, in colour order) plus the
/// per-step coefficients that do not change across Gauss-Seidel iterations.
#[derive(Debug, Default, Clone)]
pub struct DistanceBatches {
    runs: Vec<ColourRun>,
    groups: Vec<Group>,
    /// Row of the first particle.
    a: Vec<u32>,
    /// Row of the second particle.
    b: Vec<u32>,
    /// Rest length d (m).
    rest_length: Vec<f32>,
    /// 1/d (m⁻¹), 0 where d = 0 or 1/d is not finite (the stretch statistic).
    inv_rest_length: Vec<f32>,
    /// Compliance α (m/N).
    compliance: Vec<f32>,
    /// α̃ = α/Δt² (kg⁻¹) of the current coefficients.
    alpha_tilde: Vec<f32>,
    /// k = 1/(w₁ + w₂ + α̃) (kg), or 0 for a constraint that is skipped.
    inv_denominator: Vec<f32>,
    /// Inverse mass w₁ (kg⁻¹) of the first particle.
    w_a: Vec<f32>,
    /// Inverse mass w₂ (kg⁻¹) of the second particle.
    w_b: Vec<f32>,
    /// The inverse masses and 1/Δt² (s⁻²) the coefficients were computed from; every `a` and
    /// `b` is less than the number of these inverse masses (checked when they were gathered).
    coefficients_for: Option<(Vec<f32>, f32)>,
    /// The number of particle rows the groups with holes were laid out for: their holes' rows
    /// are less than it.
    particles: usize,
}

impl DistanceBatches {
    /// Lays out `rows`, where `colours[k]` is the colour of `rows[k]` and each colour's rows are
    /// consecutive (the order of [`colour_order`](super::distance::colour_order)), for
    /// `particles` particle rows. Rows of [`OVERFLOW_COLOUR`] are projected one at a time.
    pub fn new(rows: &[DistanceRow], colours: &[u8], particles: usize) -> Self {
        assert_eq!(rows.len(), colours.len(), "one colour per row");
        let mut runs: Vec<ColourRun> = Vec::new();
        for (k, (&colour, row)) in colours.iter().zip(rows).enumerate() {
            let rigid = row.compliance == 0.0;
            match runs.last_mut() {
                Some(run) if colours[run.start] == colour => {
                    run.end = k + 1;
                    run.rigid &= rigid;
                }
                _ => runs.push(ColourRun {
                    start: k,
                    end: k + 1,
                    independent: colour != OVERFLOW_COLOUR,
                    rigid,
                    first_group: 0,
                    end_group: 0,
                }),
            }
        }
        let a: Vec<u32> = rows.iter().map(|r| r.a).collect();
        let b: Vec<u32> = rows.iter().map(|r| r.b).collect();
        let mut groups = Vec::new();
        for run in &mut runs {
            run.first_group = groups.len();
            group_run(&a, &b, run, particles, &mut groups);
            run.end_group = groups.len();
        }
        Self {
            runs,
            groups,
            a,
            b,
            // `+ 0.0` turns −0 into +0, so the rigid path's skipped α̃λ term is exactly zero.
            rest_length: rows.iter().map(|r| r.rest_length + 0.0).collect(),
            inv_rest_length: (rows.iter())
                .map(|r| match 1.0 / r.rest_length {
                    inv if inv.is_finite() && inv > 0.0 => inv,
                    _ => 0.0,
                })
                .collect(),
            compliance: rows.iter().map(|r| r.compliance + 0.0).collect(),
            particles,
            ..default()
        }
    }

    /// Lays out `rows` to be projected one at a time, in order.
    pub fn serial(rows: &[DistanceRow]) -> Self {
        Self::new(rows, &vec![OVERFLOW_COLOUR; rows.len()], 0)
    }

    /// Number of constraints.
    pub fn len(&self) -> usize {
        self.a.len()
    }

    /// Whether there are no constraints.
    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }

    /// Computes α̃ = α/Δt², w₁, w₂ and k = 1/(w₁ + w₂ + α̃) of every constraint from the
    /// inverse masses `w` (kg⁻¹) and `inv_dt2` = 1/Δt² (s⁻²), unless they are bitwise those of
    /// the last call.
    pub fn set_coefficients(&mut self, w: &[f32], inv_dt2: f32) {
        let same = |(cached_w, cached_inv_dt2): &(Vec<f32>, f32)| {
            // Every pair compared (no early exit), which vectorises.
            let differing_bits = |(p, q): (&f32, &f32)| p.to_bits() ^ q.to_bits();
            cached_inv_dt2.to_bits() == inv_dt2.to_bits()
                && cached_w.len() == w.len()
                && cached_w
                    .iter()
                    .zip(w)
                    .map(differing_bits)
                    .fold(0, |a, d| a | d)
                    == 0
        };
        if self.coefficients_for.as_ref().is_some_and(same) {
            return;
        }
        // Until the arrays below are complete (indexing `w` may panic): no sweep may use them.
        self.coefficients_for = None;
        let m = self.len();
        self.alpha_tilde.clear();
        self.alpha_tilde
            .extend(self.compliance.iter().map(|&alpha| alpha * inv_dt2));
        self.w_a.clear();
        self.w_a.extend(self.a.iter().map(|&i| w[i as usize]));
        self.w_b.clear();
        self.w_b.extend(self.b.iter().map(|&i| w[i as usize]));
        self.inv_denominator.clear();
        self.inv_denominator.extend((0..m).map(|k| {
            let denominator = self.w_a[k] + self.w_b[k] + self.alpha_tilde[k];
            if denominator > 0.0 {
                1.0 / denominator
            } else {
                0.0
            }
        }));
        self.coefficients_for = Some((w.to_vec(), inv_dt2));
    }

    /// Panics unless [`set_coefficients`](Self::set_coefficients) ran with as many inverse
    /// masses as `x` has positions (then every particle row of a constraint indexes `x`) and
    /// `x` has at least the particle rows the layout was made for (then so do the holes' rows).
    fn check_rows(&self, x: &[Vec2]) {
        let checked = self.coefficients_for.as_ref().map(|(w, _)| w.len());
        assert_eq!(
            checked,
            Some(x.len()),
            "set_coefficients with one w per position first"
        );
        assert!(
            x.len() >= self.particles,
            "{} positions for a layout of {} particle rows",
            x.len(),
            self.particles
        );
    }

    /// One Gauss-Seidel sweep over all constraints in row order, with the coefficients of the
    /// last [`set_coefficients`](Self::set_coefficients). `x` are the particle positions (m),
    /// `lambda` the accumulated Lagrange multiplier λ (kg·m) of each constraint. Positions no
    /// constraint moves keep their bits, except that a signalling NaN next to a group's
    /// particles may come back quiet (the plugin's prediction step has quieted them already).
    ///
    /// # Panics
    /// If `lambda` has not one entry per constraint, if `set_coefficients` did not get one
    /// inverse mass per position, or if `x` has fewer positions than the particle count the
    /// layout was made for ([`new`](Self::new)).
    pub fn project_sweep(&self, x: &mut [Vec2], lambda: &mut [f32]) {
        assert_eq!(lambda.len(), self.len(), "one λ per constraint");
        self.check_rows(x);
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            // SAFETY: the CPU has AVX2.
            return unsafe { self.project_sweep_avx2(x, lambda) };
        }
        // SAFETY: `f32x8` runs on every CPU.
        unsafe { self.project_sweep_unchecked::<f32x8>(x, lambda) };
    }

    /// [`project_sweep_unchecked`](Self::project_sweep_unchecked) compiled for AVX2, on
    /// 8-lane AVX vectors.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn project_sweep_avx2(&self, x: &mut [Vec2], lambda: &mut [f32]) {
        // SAFETY: compiled for AVX2, and called only where the CPU has it.
        unsafe { self.project_sweep_unchecked::<Avx8>(x, lambda) };
    }

    /// [`project_sweep`](Self::project_sweep) after its checks, on lanes `V`.
    ///
    /// # Safety
    /// The CPU runs `V`'s instructions ([`Avx8`]: AVX2), and this is inlined into a function
    /// compiled for them.
    #[inline(always)]
    unsafe fn project_sweep_unchecked<V: PositionLanes>(&self, x: &mut [Vec2], lambda: &mut [f32]) {
        for run in &self.runs {
            // SAFETY: passed on from the caller.
            unsafe {
                if run.rigid {
                    self.project_run::<V, true>(run, x, lambda);
                } else {
                    self.project_run::<V, false>(run, x, lambda);
                }
            }
        }
    }

    /// Projects the constraints of `run` on lanes `V`; `RIGID`: all of them have α = 0.
    ///
    /// # Safety
    /// As [`project_sweep_unchecked`](Self::project_sweep_unchecked).
    #[inline(always)]
    unsafe fn project_run<V: PositionLanes, const RIGID: bool>(
        &self,
        run: &ColourRun,
        x: &mut [Vec2],
        lambda: &mut [f32],
    ) {
        let groups = &self.groups[run.first_group..run.end_group];
        self.for_each_group(
            groups,
            #[inline(always)]
            |start, count, rows| project_group::<V, RIGID>(self, start, count, rows, x, lambda),
        );
    }

    /// Calls `f(start, count, rows)` for every group of `groups`, with `count` a constant for full
    /// scattered groups and for each count of contiguous ones, so that each inlined `f` is
    /// compiled for its own rows and count.
    #[inline(always)]
    fn for_each_group(&self, groups: &[Group], mut f: impl FnMut(usize, usize, &GroupRows)) {
        for group in groups {
            let (start, count) = (group.start as usize, group.count as usize);
            match group.layout {
                Layout::Scattered if count == LANES => {
                    let rows = GroupRows::Scattered {
                        a: lane_rows(&self.a, start, LANES),
                        b: lane_rows(&self.b, start, LANES),
                    };
                    f(start, LANES, &rows);
                }
                Layout::Scattered => {
                    let rows = GroupRows::Scattered {
                        a: lane_rows(&self.a, start, count),
                        b: lane_rows(&self.b, start, count),
                    };
                    f(start, count, &rows);
                }
                Layout::Consecutive => {
                    let [a, b] = group.first_rows;
                    let rows = GroupRows::Consecutive { a, b };
                    contiguous_count(
                        count,
                        #[inline(always)]
                        |count| f(start, count, &rows),
                    );
                }
                Layout::Paired => {
                    let rows = GroupRows::Paired {
                        a: group.first_rows[0],
                    };
                    contiguous_count(
                        count,
                        #[inline(always)]
                        |count| f(start, count, &rows),
                    );
                }
            }
        }
    }

    /// Largest |‖x₁ − x₂‖ − d| / d over constraints with d > 0 (dimensionless), computed as the
    /// larger of √r − 1 and 1 − √r for the largest and the smallest
    /// r = (Δx/d)² + (Δy/d)² (no square root or division per constraint; within 10⁻⁶ (1 + s)
    /// of the direct formula's s, ∞ for a stretch beyond 10¹⁹). Constraints whose r is NaN, and
    /// those whose 1/d is not finite (d below 10⁻³⁸), are left out.
    pub fn max_relative_stretch(&self, x: &[Vec2]) -> f32 {
        self.check_rows(x);
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            // SAFETY: the CPU has AVX2.
            return unsafe { self.max_relative_stretch_avx2(x) };
        }
        // SAFETY: `f32x8` runs on every CPU.
        unsafe { self.max_relative_stretch_unchecked::<f32x8>(x) }
    }

    /// [`max_relative_stretch_unchecked`](Self::max_relative_stretch_unchecked) compiled for
    /// AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn max_relative_stretch_avx2(&self, x: &[Vec2]) -> f32 {
        // SAFETY: compiled for AVX2, and called only where the CPU has it.
        unsafe { self.max_relative_stretch_unchecked::<Avx8>(x) }
    }

    /// [`max_relative_stretch`](Self::max_relative_stretch) after its checks, on lanes `V`.
    ///
    /// # Safety
    /// As [`project_sweep_unchecked`](Self::project_sweep_unchecked).
    #[inline(always)]
    unsafe fn max_relative_stretch_unchecked<V: PositionLanes>(&self, x: &[Vec2]) -> f32 {
        let (mut largest, mut smallest) = (V::splat(1.0), V::splat(1.0));
        self.for_each_group(
            &self.groups,
            #[inline(always)]
            |start, count, rows| {
                let ratio = squared_length_ratio(self, start, count, rows, x);
                // Both keep the old lanes where the candidate is NaN.
                largest = largest.larger(ratio);
                smallest = smallest.smaller(ratio);
            },
        );
        let lanes = |v: V| v.to_f32x8().to_array();
        let r_max = lanes(largest).into_iter().fold(1.0, f32::max);
        let r_min = lanes(smallest).into_iter().fold(1.0, f32::min);
        (r_max.sqrt() - 1.0).max(1.0 - r_min.sqrt())
    }
}

/// Entries `start .. start + count` of `v` (`count` ≤ [`LANES`]) as lanes `V`, 0 in the
/// unused lanes.
///
/// # Safety
/// `start + count` ≤ `v.len()`.
#[inline(always)]
unsafe fn load_lanes<V: Lanes8>(v: &[f32], start: usize, count: usize) -> V {
    debug_assert!(start + count <= v.len());
    let mut lanes = [0.0; LANES];
    // SAFETY: passed on from the caller.
    lanes[..count].copy_from_slice(unsafe { v.get_unchecked(start..start + count) });
    V::from_f32x8(f32x8::new(lanes))
}

/// Projects constraints `start .. start + count` (`count` ≤ [`LANES`]) on lanes `V`; they
/// must share no particle when `count` > 1 (nor with the holes of contiguous `rows`). `RIGID`:
/// every one has α = 0, so α̃ λ (±0 while λ is finite) is left out, which gives the same bits:
/// d − ‖x₁ − x₂‖ is never −0.
#[inline(always)]
fn project_group<V: PositionLanes, const RIGID: bool>(
    batches: &DistanceBatches,
    start: usize,
    count: usize,
    rows: &GroupRows,
    x: &mut [Vec2],
    lambda: &mut [f32],
) {
    // SAFETY: `check_rows` ran: every `a` and `b` is less than `x.len()`, and `rows` are rows
    // of constraints (or repeat lane 0), or holes' rows, less than the particle count of the
    // layout, which is at most `x.len()`.
    let (dx, dy) = unsafe { V::gather_deltas(x, rows) };
    let length = (dx * dx + dy * dy).sqrt();
    let inv_length = V::splat(1.0) / length;
    let coincident = V::splat(COINCIDENT);
    let (mut nx, mut ny) = (
        (dx * inv_length).where_gt(length, coincident),
        (dy * inv_length).where_gt(length, coincident),
    );
    let separated = length.gt_bits(coincident);
    if separated != (1 << LANES) - 1 {
        let (mut x_lanes, mut y_lanes) = (nx.to_f32x8().to_array(), ny.to_f32x8().to_array());
        for l in (0..count).filter(|&l| separated & (1 << l) == 0) {
            let n = separation_direction(start + l);
            (x_lanes[l], y_lanes[l]) = (n.x, n.y);
        }
        (nx, ny) = (
            V::from_f32x8(f32x8::new(x_lanes)),
            V::from_f32x8(f32x8::new(y_lanes)),
        );
    }
    // SAFETY (the loads): groups lie within the constraint rows, and every per-constraint array
    // (λ included, checked by `project_sweep`) has one entry per row (`new`,
    // `set_coefficients`). No closure for them: one that is not inlined would be compiled
    // without AVX (`Avx8`).
    let (rest_length, inv_denominator, lambda_old): (V, V, V) = unsafe {
        (
            load_group_lanes(&batches.rest_length, start, count),
            load_group_lanes(&batches.inv_denominator, start, count),
            load_group_lanes(lambda, start, count),
        )
    };
    let minus_c = rest_length - length;
    let d_lambda = if RIGID {
        minus_c * inv_denominator
    } else {
        // SAFETY: as above.
        let alpha_tilde: V = unsafe { load_group_lanes(&batches.alpha_tilde, start, count) };
        (minus_c - alpha_tilde * lambda_old) * inv_denominator
    };
    let lambda_new = (lambda_old + d_lambda).to_f32x8().to_array();
    debug_assert!(start + count <= lambda.len());
    // SAFETY: as for `load`.
    unsafe { lambda.get_unchecked_mut(start..start + count) }.copy_from_slice(&lambda_new[..count]);
    // SAFETY: as above.
    let (w_a, w_b): (V, V) = unsafe {
        (
            load_group_lanes(&batches.w_a, start, count),
            load_group_lanes(&batches.w_b, start, count),
        )
    };
    let (step_a, step_b) = (w_a * d_lambda, w_b * d_lambda);
    let (step_a, step_b) = ((step_a * nx, step_a * ny), (step_b * nx, step_b * ny));
    // SAFETY: as above; the used lanes' particles are distinct (one colour, or one lane), and
    // a contiguous group's holes are particle rows distinct from them (`contiguous_layout`,
    // `check_rows`).
    unsafe { V::correct(x, rows, count, step_a, step_b) };
}

/// Entries `start .. start + count` of `v` (`count` ≤ [`LANES`]) as lanes `V`; the unused lanes
/// hold the entries that follow where `v` has them (a group's unused lanes are dropped), else 0.
///
/// # Safety
/// `start + count` ≤ `v.len()`.
#[inline(always)]
unsafe fn load_group_lanes<V: Lanes8>(v: &[f32], start: usize, count: usize) -> V {
    if count < LANES && start + LANES <= v.len() {
        // SAFETY: `start + LANES` ≤ `v.len()`.
        let lanes = unsafe {
            v.as_ptr()
                .add(start)
                .cast::<[f32; LANES]>()
                .read_unaligned()
        };
        V::from_f32x8(f32x8::new(lanes))
    } else {
        // SAFETY: passed on from the caller.
        unsafe { load_lanes(v, start, count) }
    }
}

/// r = (Δx/d)² + (Δy/d)² of constraints `start .. start + count` (particle rows `rows`) on lanes
/// `V`; 1 (no stretch) where 1/d is stored as 0 and in the unused lanes.
#[inline(always)]
fn squared_length_ratio<V: PositionLanes>(
    batches: &DistanceBatches,
    start: usize,
    count: usize,
    rows: &GroupRows,
    x: &[Vec2],
) -> V {
    // SAFETY: `check_rows` ran: every `a` and `b` is less than `x.len()`.
    let (dx, dy) = unsafe { V::gather_deltas(x, rows) };
    // SAFETY: `start + count` ≤ the number of constraints, the length of the array.
    let inv_d: V = unsafe { load_lanes(&batches.inv_rest_length, start, count) };
    let (u, v) = (dx * inv_d, dy * inv_d);
    let (zero, one) = (V::splat(0.0), V::splat(1.0));
    // r + 0 or 0 + 1: both exact.
    (u * u + v * v).where_gt(inv_d, zero) + (one - one.where_gt(inv_d, zero))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constraints::distance::{cloth_rows, colour_order};

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
            let d_lambda =
                ((row.rest_length - length) - alpha_tilde * lambda[k]) * (1.0 / denominator);
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
            unsafe {
                batches.project_sweep_unchecked::<f32x8>(&mut x_baseline, &mut lambda_baseline)
            };
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
        let builder = crate::cloth::ClothBuilder {
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
            let mut pairs: Vec<(u32, u32)> =
                rows[colour].iter().map(|r| (r.b - r.a, r.a)).collect();
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
        let count_of =
            |layout: fn(&Group) -> bool| batches.groups.iter().filter(|g| layout(g)).count();
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
                        batches
                            .project_sweep_unchecked::<f32x8>(&mut x_baseline, &mut lambda_baseline)
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
}
