//! [`lines`](super::lines) solved 8 at a time: the lines of one class (a cloth's rows, or its
//! columns) share no particle, so a bundle of up to 8 consecutive lines of one class and one
//! length is solved on 8 SIMD lanes, one line per lane, with exactly the operations of the
//! one-line solve of [`Chains`](super::chains::Chains) in the same order: the positions and λ
//! are those of solving the lines one after another, bit for bit. Thomas' recurrence along a
//! line is serial; 8 lines side by side keep 8 of them in flight.

use bevy::prelude::*;
use wide::f32x8;

use crate::constraints::row::COINCIDENT;
use crate::dynamics::coincident::separation_direction;

/// Lines per bundle.
const LANES: usize = 8;

/// Up to [`LANES`] lines of one class and one length, solved side by side.
#[derive(Debug, Clone)]
pub(crate) struct Bundle {
    /// Lines in it, 1 ..= 8 (lanes beyond are idle: w = 0, nothing moves).
    lanes: usize,
    /// Constraints per line.
    len: usize,
    /// Per lane: the line's first constraint among the chain constraints.
    first: [usize; LANES],
    /// Per path position 0 ..= len: the particle row of each lane (idle lanes: lane 0's).
    particles: Vec<[u32; LANES]>,
    /// Per constraint position 0 .. len: rest length d (m) and compliance α (m/N) of each
    /// lane (idle lanes: d = 0, α = 0).
    rest_length: Vec<f32x8>,
    compliance: Vec<f32x8>,
}

impl Bundle {
    /// A bundle of the lines starting at chain constraints `firsts` (1 ..= 8 of them), each of
    /// `len` constraints with path particles `ends`, rest lengths d (m) `rest_length` and
    /// compliances α (m/N) `compliance` (per chain constraint, path order).
    pub(crate) fn new(
        firsts: &[usize],
        len: usize,
        ends: &[[u32; 2]],
        rest_length: &[f32],
        compliance: &[f32],
    ) -> Self {
        debug_assert!((1..=LANES).contains(&firsts.len()) && len >= 1);
        let mut first = [firsts[0]; LANES];
        first[..firsts.len()].copy_from_slice(firsts);
        let particles = (0..=len)
            .map(|k| {
                first.map(|f| {
                    if k < len {
                        ends[f + k][0]
                    } else {
                        ends[f + len - 1][1]
                    }
                })
            })
            .collect();
        let lanes_of = |values: &[f32], k: usize| {
            lanes(|l| {
                if l < firsts.len() {
                    values[first[l] + k]
                } else {
                    0.0
                }
            })
        };
        Self {
            lanes: firsts.len(),
            len,
            first,
            particles,
            rest_length: (0..len).map(|k| lanes_of(rest_length, k)).collect(),
            compliance: (0..len).map(|k| lanes_of(compliance, k)).collect(),
        }
    }

    /// Per lane: (first chain constraint, constraint count) of its line.
    pub(crate) fn spans(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.first[..self.lanes].iter().map(|&f| (f, self.len))
    }
}

/// Scratch of [`solve_bundle`], one vector per path position.
#[derive(Debug, Default, Clone)]
pub(crate) struct BundleScratch {
    x: Vec<f32x8>,
    y: Vec<f32x8>,
    w: Vec<f32x8>,
    nx: Vec<f32x8>,
    ny: Vec<f32x8>,
    upper: Vec<f32x8>,
    rhs: Vec<f32x8>,
}

/// Lane l of the result is `f(l)`.
#[inline(always)]
fn lanes(f: impl Fn(usize) -> f32) -> f32x8 {
    f32x8::new(core::array::from_fn(f))
}

/// One Newton step of every line of `bundle` (the chains' module docs) on positions `x` (m),
/// inverse masses `w` (kg⁻¹), 1/Δt² `inv_dt2` (s⁻²) and the chain constraints' λ `lambda`.
/// Lines whose step is too stiff for a linear solve (stiffness above `max_stiffness`) are
/// left untouched; returned as a bit mask of lanes for the caller's Gauss-Seidel fallback.
pub(crate) fn solve_bundle(
    bundle: &Bundle,
    scratch: &mut BundleScratch,
    x: &mut [Vec2],
    w: &[f32],
    lambda: &mut [f32],
    inv_dt2: f32,
    max_stiffness: f32,
) -> u32 {
    let len = bundle.len;
    let s = scratch;
    s.x.clear();
    s.y.clear();
    s.w.clear();
    for rows in &bundle.particles {
        s.x.push(lanes(|l| x[rows[l] as usize].x));
        s.y.push(lanes(|l| x[rows[l] as usize].y));
        // Idle lanes: w = 0 (and α = 0 below): pivot 0, Δλ = 0, nothing moves.
        s.w.push(lanes(|l| {
            if l < bundle.lanes {
                w[rows[l] as usize]
            } else {
                0.0
            }
        }));
    }
    // The chain constraint at path position k of each lane.
    let at = |k: usize| -> [usize; LANES] { bundle.first.map(|f| f + k) };
    s.nx.resize(len, f32x8::ZERO);
    s.ny.resize(len, f32x8::ZERO);
    s.upper.resize(len, f32x8::ZERO);
    s.rhs.resize(len, f32x8::ZERO);
    let coincident = f32x8::splat(COINCIDENT);
    let dt2 = f32x8::splat(inv_dt2);
    // The system at the current positions: n_k, the right-hand side.
    for k in 0..len {
        let index = at(k);
        let (dx, dy) = (s.x[k] - s.x[k + 1], s.y[k] - s.y[k + 1]);
        let length = (dx * dx + dy * dy).sqrt();
        let separated = length.simd_gt(coincident);
        let (mut nx, mut ny) = (dx / length, dy / length);
        if !separated.all() {
            let (mut xs, mut ys) = (nx.to_array(), ny.to_array());
            let mask = separated.to_bitmask();
            for l in (0..LANES).filter(|&l| mask & (1 << l) == 0) {
                let n = separation_direction(index[l]);
                (xs[l], ys[l]) = (n.x, n.y);
            }
            (nx, ny) = (f32x8::new(xs), f32x8::new(ys));
        }
        let (d, alpha) = (bundle.rest_length[k], bundle.compliance[k]);
        let l_old = lanes(|l| {
            if l < bundle.lanes {
                lambda[index[l]]
            } else {
                0.0
            }
        });
        s.nx[k] = nx;
        s.ny[k] = ny;
        s.rhs[k] = -(length - d) - alpha * dt2 * l_old;
    }
    // Thomas' forward elimination, as `Chains::solve`.
    let zero = f32x8::ZERO;
    let (mut off_before, mut c_before, mut d_before) = (zero, zero, zero);
    for k in 0..len {
        let alpha = bundle.compliance[k];
        let diagonal = s.w[k] + s.w[k + 1] + alpha * dt2;
        let pivot = diagonal - off_before * c_before;
        let off_after = if k + 1 < len {
            -s.w[k + 1] * (s.nx[k] * s.nx[k + 1] + s.ny[k] * s.ny[k + 1])
        } else {
            zero
        };
        let valid = pivot.simd_gt(zero) & pivot.is_finite();
        c_before = valid.bitselect(off_after / pivot, zero);
        d_before = valid.bitselect((s.rhs[k] - off_before * d_before) / pivot, zero);
        s.upper[k] = c_before;
        s.rhs[k] = d_before;
        off_before = off_after;
    }
    for k in (0..len - 1).rev() {
        s.rhs[k] = s.rhs[k] - s.upper[k] * s.rhs[k + 1];
    }
    // The stiffness of each line's step (`Chains::stiffness`).
    let mut stiffness = zero;
    for k in 0..len - 1 {
        let d = bundle.rest_length[k].max(coincident);
        stiffness = stiffness.max(s.w[k + 1] * (s.rhs[k].abs() + s.rhs[k + 1].abs()) / d);
    }
    let stiff =
        stiffness.simd_gt(f32x8::splat(max_stiffness)).to_bitmask() & ((1u32 << bundle.lanes) - 1);
    // The corrections, in the one-line solve's order.
    for k in 0..len {
        let (d_lambda, nx, ny) = (s.rhs[k], s.nx[k], s.ny[k]);
        let (wp, wq) = (s.w[k] * d_lambda, s.w[k + 1] * d_lambda);
        s.x[k] += wp * nx;
        s.y[k] += wp * ny;
        s.x[k + 1] -= wq * nx;
        s.y[k + 1] -= wq * ny;
        let index = at(k);
        let d_lambda = d_lambda.to_array();
        for l in (0..bundle.lanes).filter(|&l| stiff & (1 << l) == 0) {
            lambda[index[l]] += d_lambda[l];
        }
    }
    for (k, rows) in bundle.particles.iter().enumerate() {
        let (xs, ys) = (s.x[k].to_array(), s.y[k].to_array());
        for l in (0..bundle.lanes).filter(|&l| stiff & (1 << l) == 0) {
            x[rows[l] as usize] = Vec2::new(xs[l], ys[l]);
        }
    }
    stiff
}
