//! Chains: distance constraints that form a path (a rope, a chain, a pendulum of several
//! links) are solved together, exactly, instead of one after another.
//!
//! Gauss-Seidel moves a correction one constraint per projection, and a light link next to a
//! heavy one barely moves it: a 100-link chain of 2.5 kg holding 10 kg stays 26 % stretched
//! with 20 substeps of one iteration. A path of constraints, though, has a tridiagonal system
//! matrix, which is solved directly in O(n) (Thomas' algorithm; the direct solve of
//! Deul et al. 2018, "Direct Position-Based Solver for Stiff Rods", for the distance part).
//! One iteration is one Newton step of XPBD (\[MMC16\] eq. 18) on the whole chain:
//!
//! ```text
//! for constraints k joining path particles q_k, q_k+1, with n_k = (x_qk − x_qk+1)/‖·‖:
//! (J W Jᵀ + α̃) Δλ = −C − α̃ λ,   diagonal w_qk + w_qk+1 + α̃_k,   off-diagonal −w_qk+1 n_k·n_k+1
//! λ += Δλ,   Δx_qi = w_qi (n_i Δλ_i − n_i−1 Δλ_i−1)
//! ```
//!
//! The mass ratio does not slow it: the chain above, swinging, stays within 0.002 % with 10
//! substeps at 60 Hz. A linear step leaves out the tension's geometric stiffness, though, and
//! so amplifies a kink at a light particle q between links under a large tension when
//! s = w_q (|Δλ_k| + |Δλ_k+1|)/d_k, the square of ω h for the kink's transverse oscillation,
//! is large (the same chain with 4 substeps: s = 3.4, and it explodes). A chain whose step
//! has s > 0.6 is projected by one Gauss-Seidel pass along its path in that iteration instead
//! (as stretchy as Gauss-Seidel is there); more substeps bring s down as 1/n². Adding the
//! geometric stiffness (Tournier et al. 2015, "Stable Constrained Dynamics") would lift the
//! limit.
//!
//! A chain is a maximal
//! path of at least two distance constraints whose inner particles are in exactly two distance
//! constraints (a rope's links; no particle of a cloth grid of two or more rows and columns
//! qualifies, so cloth is projected by Gauss-Seidel as in the reference demo, unless its rows
//! and columns are solved as [`lines`](super::lines)). Rings, and paths that come back to their
//! start, stay with Gauss-Seidel.

use bevy::prelude::*;

use crate::constraints::line_bundles::{Bundle, BundleScratch, solve_bundle};
use crate::constraints::row::{COINCIDENT, DistanceRow};
use crate::dynamics::coincident::separation_direction;

/// The largest [`Chains::stiffness`] a direct step is taken at (module docs).
const MAX_STIFFNESS: f32 = 0.6;

/// The chains of a constraint layout, their particle paths and scratch space.
#[derive(Debug, Default, Clone)]
pub(crate) struct Chains {
    /// Per chain: its first constraint (index into the chain constraints) and its length.
    spans: Vec<(usize, usize)>,
    /// Per chain constraint k (in path order): the path particle rows q_k and q_k+1.
    ends: Vec<[u32; 2]>,
    /// Rest length d (m) per chain constraint.
    rest_length: Vec<f32>,
    /// Compliance α (m/N) per chain constraint.
    compliance: Vec<f32>,
    /// The spans from this one on are lines ([`lines`](super::lines)), solved in `bundles`.
    lines_from: usize,
    /// The lines, up to 8 side by side ([`line_bundles`](super::line_bundles)).
    bundles: Vec<Bundle>,
    /// Scratch of the bundles' solve.
    bundle_scratch: BundleScratch,
    /// Scratch: n_k, the eliminated super-diagonal and right-hand side.
    normal: Vec<Vec2>,
    upper: Vec<f32>,
    rhs: Vec<f32>,
}

/// Splits `rows` into chains (paths of ≥ 2 constraints through particles in exactly two
/// constraints, module docs) and the rest. Returns each chain's rows in path order with the
/// path's first particle, and the rows left for Gauss-Seidel, in their order.
pub(crate) fn find_chains(
    rows: &[DistanceRow],
    particles: usize,
) -> (Vec<(u32, Vec<usize>)>, Vec<usize>) {
    let mut degree = vec![0u32; particles];
    for r in rows {
        for p in [r.a, r.b] {
            if let Some(d) = degree.get_mut(p as usize) {
                *d += 1;
            }
        }
    }
    // Per particle of degree 2: its two constraints.
    let mut links = vec![[usize::MAX; 2]; particles];
    for (k, r) in rows.iter().enumerate() {
        for p in [r.a, r.b] {
            let p = p as usize;
            if p < particles && degree[p] == 2 {
                let slot = usize::from(links[p][0] != usize::MAX);
                links[p][slot] = k;
            }
        }
    }
    let inner = |p: u32| degree.get(p as usize) == Some(&2);
    let other = |k: usize, p: u32| if rows[k].a == p { rows[k].b } else { rows[k].a };
    let mut used = vec![false; rows.len()];
    let mut chains = Vec::new();
    for k in 0..rows.len() {
        let r = rows[k];
        if used[k] || r.a == r.b {
            continue;
        }
        // Start at an end that is not inner (a path's end); rings have none.
        let Some(start) = [r.a, r.b].into_iter().find(|&p| !inner(p)) else {
            continue;
        };
        let mut path = vec![k];
        used[k] = true;
        let mut at = other(k, start);
        let mut edge = k;
        while inner(at) {
            let [first, second] = links[at as usize];
            let next = if first == edge { second } else { first };
            if next == usize::MAX || used[next] {
                break;
            }
            used[next] = true;
            path.push(next);
            at = other(next, at);
            edge = next;
        }
        // A path that comes back to where it started (a loop on a junction, or two
        // constraints between the same pair) couples its ends: not tridiagonal.
        if path.len() >= 2 && at != start {
            chains.push((start, path));
        } else {
            for &k in &path {
                used[k] = false;
            }
        }
    }
    let rest = (0..rows.len()).filter(|&k| !used[k]).collect();
    (chains, rest)
}

impl Chains {
    /// The chains of `chains` (from [`find_chains`] on `rows`) and the lines of `lines` (from
    /// [`find_lines`](super::lines::find_lines)), whose constraints are numbered in that order,
    /// chain after chain, then line after line. Consecutive lines of one class (particle row
    /// offset) and one length are bundled 8 at a time.
    pub(crate) fn new(
        rows: &[DistanceRow],
        chains: &[(u32, Vec<usize>)],
        lines: &[(u32, Vec<usize>)],
    ) -> Self {
        let mut out = Self {
            lines_from: chains.len(),
            ..Self::default()
        };
        for (start, path) in chains.iter().chain(lines) {
            out.spans.push((out.ends.len(), path.len()));
            let mut at = *start;
            for &k in path {
                let r = rows[k];
                let next = if r.a == at { r.b } else { r.a };
                out.ends.push([at, next]);
                out.rest_length.push(r.rest_length);
                out.compliance.push(r.compliance);
                at = next;
            }
        }
        // Bundles: runs of lines of one offset and one length, 8 at most.
        let key = |(_, path): &(u32, Vec<usize>)| {
            let r = rows[path[0]];
            (r.a.abs_diff(r.b), path.len())
        };
        let mut span = out.lines_from;
        for run in lines.chunk_by(|p, q| key(p) == key(q)) {
            for group in run.chunks(8) {
                let firsts: Vec<usize> =
                    (span..span + group.len()).map(|s| out.spans[s].0).collect();
                let bundle = Bundle::new(
                    &firsts,
                    group[0].1.len(),
                    &out.ends,
                    &out.rest_length,
                    &out.compliance,
                );
                out.bundles.push(bundle);
                span += group.len();
            }
        }
        out
    }

    /// Whether every chain particle row indexes `particles` rows.
    pub(crate) fn fits(&self, particles: usize) -> bool {
        self.ends
            .iter()
            .flatten()
            .all(|&r| (r as usize) < particles)
    }

    /// Number of chain constraints.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// One Newton step of every chain (module docs) on positions `x` (m) with inverse masses
    /// `w` (kg⁻¹), 1/Δt² `inv_dt2` (s⁻²) and the chain constraints' multipliers `lambda`.
    pub(crate) fn solve(&mut self, x: &mut [Vec2], w: &[f32], lambda: &mut [f32], inv_dt2: f32) {
        let n = self.len();
        self.normal.resize(n, Vec2::ZERO);
        self.upper.resize(n, 0.0);
        self.rhs.resize(n, 0.0);
        for s in 0..self.lines_from {
            let (first, count) = self.spans[s];
            self.solve_span(first, count, x, w, lambda, inv_dt2);
        }
        for bundle in &self.bundles {
            let stiff = solve_bundle(
                bundle,
                &mut self.bundle_scratch,
                x,
                w,
                lambda,
                inv_dt2,
                MAX_STIFFNESS,
            );
            for (lane, (first, count)) in bundle.spans().enumerate() {
                if stiff & (1 << lane) != 0 {
                    self.project_serial(first..first + count, x, w, lambda, inv_dt2);
                }
            }
        }
    }

    /// One Newton step of the chain of `count` constraints from `first` (as [`solve`](Self::solve)).
    fn solve_span(
        &mut self,
        first: usize,
        count: usize,
        x: &mut [Vec2],
        w: &[f32],
        lambda: &mut [f32],
        inv_dt2: f32,
    ) {
        let range = first..first + count;
        let ends = &self.ends[range.clone()];
        let rest_length = &self.rest_length[range.clone()];
        let compliance = &self.compliance[range.clone()];
        let normal = &mut self.normal[range.clone()];
        let upper = &mut self.upper[range.clone()];
        let rhs = &mut self.rhs[range.clone()];
        let chain_lambda = &lambda[range.clone()];
        // The system at the current positions: n_k, the right-hand side.
        for (k, (((&[p, q], &d), (&alpha, &l)), (n, r))) in ends
            .iter()
            .zip(rest_length)
            .zip(compliance.iter().zip(chain_lambda))
            .zip(normal.iter_mut().zip(rhs.iter_mut()))
            .enumerate()
        {
            let delta = x[p as usize] - x[q as usize];
            let length = delta.length();
            *n = if length > COINCIDENT {
                delta / length
            } else {
                separation_direction(first + k)
            };
            *r = -(length - d) - alpha * inv_dt2 * l;
        }
        // Thomas' forward elimination; `upper` becomes c'_k = A_k,k+1 / pivot_k and `rhs`
        // d'_k. A_k,k+1 = A_k+1,k = −w_q n_k · n_k+1, q the particle k and k + 1 share.
        let (mut off_before, mut c_before, mut d_before) = (0.0, 0.0, 0.0); // A_k,k−1, c'_k−1, d'_k−1
        for k in 0..count {
            let [p, q] = ends[k].map(|r| r as usize);
            let diagonal = w[p] + w[q] + compliance[k] * inv_dt2;
            let pivot = diagonal - off_before * c_before;
            let off_after = match normal.get(k + 1) {
                Some(next) => -w[q] * normal[k].dot(*next),
                None => 0.0,
            };
            (c_before, d_before) = if pivot > 0.0 && pivot.is_finite() {
                (off_after / pivot, (rhs[k] - off_before * d_before) / pivot)
            } else {
                // Both ends pinned and rigid: nothing moves, nothing couples.
                (0.0, 0.0)
            };
            (upper[k], rhs[k]) = (c_before, d_before);
            off_before = off_after;
        }
        // Back substitution (Δλ in `rhs`), then the corrections.
        for k in (0..count - 1).rev() {
            rhs[k] -= upper[k] * rhs[k + 1];
        }
        if self.stiffness(first, count, w) > MAX_STIFFNESS {
            self.project_serial(first..first + count, x, w, lambda, inv_dt2);
            return;
        }
        let rhs = &self.rhs[range.clone()];
        let normal = &self.normal[range.clone()];
        for (((&[p, q], &d_lambda), &n), l) in
            ends.iter().zip(rhs).zip(normal).zip(&mut lambda[range])
        {
            let (p, q) = (p as usize, q as usize);
            *l += d_lambda;
            x[p] += w[p] * d_lambda * n;
            x[q] -= w[q] * d_lambda * n;
        }
    }

    /// The largest w_q (|Δλ_k| + |Δλ_k+1|) / d_k over the inner particles q of the chain at
    /// `first` (`count` constraints) with the Δλ in `rhs`: (ω h)² of the tension's transverse
    /// oscillation there, which a linear step amplifies beyond [`MAX_STIFFNESS`].
    fn stiffness(&self, first: usize, count: usize, w: &[f32]) -> f32 {
        (first..first + count - 1)
            .map(|k| {
                let q = self.ends[k][1] as usize;
                w[q] * (self.rhs[k].abs() + self.rhs[k + 1].abs())
                    / self.rest_length[k].max(COINCIDENT)
            })
            .fold(0.0, f32::max)
    }

    /// One Gauss-Seidel pass over the chain constraints `range`, in path order.
    fn project_serial(
        &self,
        range: core::ops::Range<usize>,
        x: &mut [Vec2],
        w: &[f32],
        lambda: &mut [f32],
        inv_dt2: f32,
    ) {
        for k in range {
            let [p, q] = self.ends[k].map(|r| r as usize);
            let delta = x[p] - x[q];
            let length = delta.length();
            let n = if length > COINCIDENT {
                delta / length
            } else {
                separation_direction(k)
            };
            let alpha_tilde = self.compliance[k] * inv_dt2;
            let denominator = w[p] + w[q] + alpha_tilde;
            if denominator <= 0.0 {
                continue;
            }
            let d_lambda = (self.rest_length[k] - length - alpha_tilde * lambda[k]) / denominator;
            lambda[k] += d_lambda;
            x[p] += w[p] * d_lambda * n;
            x[q] -= w[q] * d_lambda * n;
        }
    }

    /// Largest |‖x₁ − x₂‖ − d| / d over the chain constraints with d > 0.
    pub(crate) fn max_relative_stretch(&self, x: &[Vec2]) -> f32 {
        self.ends
            .iter()
            .zip(&self.rest_length)
            .filter(|&(_, &d)| d > 0.0)
            .map(|(&[p, q], &d)| ((x[p as usize] - x[q as usize]).length() - d).abs() / d)
            .fold(0.0, f32::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(n: u32, compliance: f32) -> Vec<DistanceRow> {
        (0..n)
            .map(|k| DistanceRow {
                a: k,
                b: k + 1,
                rest_length: 0.1,
                compliance,
            })
            .collect()
    }

    /// One Newton step of XPBD on the chain, dense and in f64: (J W Jᵀ + α̃) Δλ = −C − α̃ λ.
    fn dense_step(rows: &[DistanceRow], x: &[Vec2], w: &[f32], inv_dt2: f64) -> Vec<Vec2> {
        let m = rows.len();
        let p = |v: Vec2| [v.x as f64, v.y as f64];
        let mut grads = vec![vec![[0.0f64; 2]; x.len()]; m];
        let mut rhs = vec![0.0f64; m];
        for (k, r) in rows.iter().enumerate() {
            let (a, b) = (p(x[r.a as usize]), p(x[r.b as usize]));
            let d = [a[0] - b[0], a[1] - b[1]];
            let l = (d[0] * d[0] + d[1] * d[1]).sqrt();
            let n = [d[0] / l, d[1] / l];
            grads[k][r.a as usize] = n;
            grads[k][r.b as usize] = [-n[0], -n[1]];
            rhs[k] = -(l - r.rest_length as f64);
        }
        let mut a = vec![vec![0.0f64; m]; m];
        for i in 0..m {
            for j in 0..m {
                a[i][j] = (0..x.len())
                    .map(|q| {
                        w[q] as f64
                            * (grads[i][q][0] * grads[j][q][0] + grads[i][q][1] * grads[j][q][1])
                    })
                    .sum();
            }
            a[i][i] += rows[i].compliance as f64 * inv_dt2;
        }
        // Gaussian elimination.
        #[allow(clippy::needless_range_loop)]
        for c in 0..m {
            for r in c + 1..m {
                let f = a[r][c] / a[c][c];
                for k in c..m {
                    a[r][k] -= f * a[c][k];
                }
                rhs[r] -= f * rhs[c];
            }
        }
        let mut dl = vec![0.0f64; m];
        for r in (0..m).rev() {
            let s: f64 = (r + 1..m).map(|k| a[r][k] * dl[k]).sum();
            dl[r] = (rhs[r] - s) / a[r][r];
        }
        (0..x.len())
            .map(|q| {
                let mut v = p(x[q]);
                for k in 0..m {
                    v[0] += w[q] as f64 * grads[k][q][0] * dl[k];
                    v[1] += w[q] as f64 * grads[k][q][1] * dl[k];
                }
                Vec2::new(v[0] as f32, v[1] as f32)
            })
            .collect()
    }

    /// A bent chain of 12 links of 0.1 m, one end pinned, unequal masses, some links
    /// stretched and some compressed by up to `amplitude` (m).
    fn bent_chain(amplitude: f32) -> (Vec<Vec2>, Vec<f32>) {
        let x = (0..=12)
            .map(|k| {
                let t = k as f32;
                Vec2::new(
                    0.1 * t + amplitude * (t * 1.7).sin(),
                    amplitude * (t * 2.3).cos(),
                )
            })
            .collect();
        let w = (0..=12)
            .map(|k| if k == 0 { 0.0 } else { 1.0 + (k % 3) as f32 })
            .collect();
        (x, w)
    }

    #[test]
    fn the_direct_solve_is_one_dense_newton_step() {
        let (x, w) = bent_chain(2e-4);
        for compliance in [0.0, 1e-4] {
            let rows = path(12, compliance);
            let expected = dense_step(&rows, &x, &w, 1e4);
            let (chains, rest) = find_chains(&rows, x.len());
            assert!(rest.is_empty(), "one chain: {rest:?}");
            let mut solver = Chains::new(&rows, &chains, &[]);
            let mut y = x.clone();
            let mut lambda = vec![0.0; rows.len()];
            solver.solve(&mut y, &w, &mut lambda, 1e4);
            assert!(
                solver.stiffness(0, 12, &w) <= MAX_STIFFNESS,
                "a direct step"
            );
            for (q, (a, b)) in y.iter().zip(&expected).enumerate() {
                assert!(
                    (*a - *b).length() < 1e-6,
                    "α {compliance}, particle {q}: {a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn a_step_too_stiff_for_a_linear_solve_is_projected_one_link_at_a_time() {
        // Links 2 cm off their length at unit inverse masses: s ≈ 0.4 / 0.1 ≫ 0.6, so the
        // chain is projected by Gauss-Seidel, exactly as a serial pass over its links.
        let (x, w) = bent_chain(2e-2);
        let rows = path(12, 0.0);
        let (chains, _) = find_chains(&rows, x.len());
        let mut solver = Chains::new(&rows, &chains, &[]);
        let (mut y, mut lambda) = (x.clone(), vec![0.0; 12]);
        solver.solve(&mut y, &w, &mut lambda, 1e4);
        let (mut z, mut serial) = (x.clone(), vec![0.0; 12]);
        solver.project_serial(0..12, &mut z, &w, &mut serial, 1e4);
        assert_eq!(y, z);
        assert_eq!(lambda, serial);
        // The last link projected is at its length.
        assert!((y[11].distance(y[12]) - 0.1).abs() < 1e-6);
    }

    #[test]
    fn paths_are_found_and_cloth_like_grids_are_left_to_gauss_seidel() {
        // A path of 3, a lone constraint, a triangle (a ring) and a star.
        let row = |a, b| DistanceRow {
            a,
            b,
            rest_length: 1.0,
            compliance: 0.0,
        };
        let rows = [
            row(0, 1),
            row(1, 2),
            row(2, 3),
            row(4, 5),
            row(6, 7),
            row(7, 8),
            row(8, 6),
            row(9, 10),
            row(9, 11),
            row(9, 12),
            // A loop closed on a junction (13 is in three constraints) and a doubled pair at
            // the end of a path (15–16 twice, then 16–17): neither is a chain.
            row(13, 14),
            row(14, 18),
            row(18, 13),
            row(13, 19),
            row(15, 16),
            row(15, 16),
            row(16, 17),
        ];
        let (chains, rest) = find_chains(&rows, 20);
        assert_eq!(chains.len(), 1, "{chains:?}");
        assert_eq!(chains[0].1, vec![0, 1, 2]);
        assert_eq!(rest, (3..rows.len()).collect::<Vec<_>>());
    }
}
