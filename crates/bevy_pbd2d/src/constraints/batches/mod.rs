//! Distance constraints laid out for projection [`LANES`] at a time.
//!
//! The rows are in colour order ([`colour_order`](super::colouring::colour_order)): within one
//! colour no two constraints share a particle, so projecting a group of them together (gather
//! both particles' positions, compute every correction, scatter) gives exactly the positions of
//! projecting them one after another: this is still Gauss-Seidel, in the same order. The last
//! constraints of a colour form a smaller group; those of the overflow colour
//! ([`OVERFLOW_COLOUR`]), which may share particles, are projected one at a time. A group whose
//! particle rows are consecutive (a(l) = a + o(l), b(l) = b + o(l)) or paired
//! (a(l) = a + 2 o(l), b(l) = a(l) + 1), with o the lane order `CONSECUTIVE_ORDER` or
//! `PAIRED_ORDER`, as the edges of a grid are once each colour is sorted by row and each run
//! fills whole groups first ([`colour_order`](super::colouring::colour_order)), has its positions
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

mod projection;
#[cfg(test)]
mod tests;

use bevy::prelude::*;

pub(crate) use super::lane_positions::LANES;
use super::lane_positions::{CONSECUTIVE_ORDER, GroupRows, PAIRED_ORDER, lane_rows};
use super::row::{DistanceRow, OVERFLOW_COLOUR};

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
    /// consecutive (the order of [`colour_order`](super::colouring::colour_order)), for
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

    /// Lays out `rows` to be projected one at a time, in order (the tests' reference).
    #[cfg(test)]
    pub fn serial(rows: &[DistanceRow]) -> Self {
        Self::new(rows, &vec![OVERFLOW_COLOUR; rows.len()], 0)
    }

    /// Number of constraints.
    fn len(&self) -> usize {
        self.a.len()
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

    /// Whether a sweep or the stretch statistic may run on `particles` positions: there are
    /// constraints, and [`set_coefficients`](Self::set_coefficients) ran with as many inverse
    /// masses.
    pub(crate) fn is_ready_for(&self, particles: usize) -> bool {
        self.len() > 0
            && particles >= self.particles
            && self.coefficients_for.as_ref().map(|(w, _)| w.len()) == Some(particles)
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
}
