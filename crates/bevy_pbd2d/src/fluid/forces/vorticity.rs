//! Vorticity confinement (\[MM13\] eq. 15–16, after Fedkiw, Stam, Jensen 2001), with the
//! scalar vorticity of 2D.
//!
//! PBF loses rotation to its position corrections and XSPH; confinement puts energy back where
//! the flow turns. Per fluid row i, from the velocities after XSPH (a × b = aₓb_y − a_y bₓ):
//!
//! ```text
//! ωᵢ = Σⱼ (m/ρⱼ) (vᵢ − vⱼ) × ∇ᵢWᵢⱼ            (1/s; 2Ω for a rigid rotation Ω in the fluid)
//! ηᵢ = Σⱼ (m/ρⱼ) (|ωⱼ| − |ωᵢ|) ∇ᵢWᵢⱼ          (∇|ω|, 1/(m s))
//! Nᵢ = ηᵢ / ‖ηᵢ‖,  aᵢ = ε (Nᵢ × ωᵢ ẑ) = ε ωᵢ (N_y, −Nₓ)
//! ```
//!
//! so a vortex's edge is pushed along its rotation. ε is in m/s (the acceleration per unit of
//! vorticity); [`FluidSettings::vorticity_confinement`](crate::fluid::FluidSettings::vorticity_confinement).
//! The force is not a pair force: it adds energy and angular momentum where it acts, and a
//! large ε spins a fluid up (tests/fluid_forces.rs measures both against ε).
//!
//! \[MM13\] Macklin, Müller: Position Based Fluids, SIGGRAPH 2013.

use bevy::prelude::*;

use crate::fluid::forces::FluidPairs;

/// The 2D cross product aₓb_y − a_y bₓ.
fn cross(a: Vec2, b: Vec2) -> f32 {
    a.x * b.y - a.y * b.x
}

/// Scalar vorticity ωᵢ of every fluid row into `vorticity`, then the confinement's
/// accelerations into `out` (m/s²; module docs) for confinement `epsilon` (m/s).
pub(crate) fn confinement(
    pairs: &FluidPairs,
    v: &[Vec2],
    epsilon: f32,
    vorticity: &mut Vec<f32>,
    out: &mut Vec<Vec2>,
) {
    pairs.per_row(vorticity, |i| {
        let mut omega = 0.0;
        pairs.each_neighbour(i, |j, _, _, _, grad| {
            if pairs.density[j] > 0.0 {
                omega += pairs.mass / pairs.density[j] * cross(v[i] - v[j], grad);
            }
        });
        omega
    });
    let omega = &vorticity[..];
    pairs.per_row(out, |i| {
        if pairs.w[i] == 0.0 {
            return Vec2::ZERO;
        }
        let mut eta = Vec2::ZERO;
        pairs.each_neighbour(i, |j, _, _, _, grad| {
            if pairs.density[j] > 0.0 {
                eta += pairs.mass / pairs.density[j] * (omega[j].abs() - omega[i].abs()) * grad;
            }
        });
        let n = eta.normalize_or_zero();
        epsilon * omega[i] * Vec2::new(n.y, -n.x)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fluid::grid::SpatialHashGrid;
    use crate::fluid::kernel::CubicSpline;
    use crate::fluid::neighbors::NeighborState;
    use crate::fluid::neighbors::find_neighbors;

    /// A rigid rotation Ω of a 21 × 21 lattice at rest spacing: ω = 2Ω within 5 % at the
    /// centre (the lattice's SPH sums); the confinement pushes the edge along the rotation.
    #[test]
    fn rigid_rotation_has_vorticity_two_omega() {
        let (h, spacing, omega) = (0.1, 0.05, 3.0);
        let mut x = Vec::new();
        for iy in -10..=10 {
            for ix in -10..=10 {
                x.push(Vec2::new(ix as f32, iy as f32) * spacing);
            }
        }
        let v: Vec<Vec2> = x.iter().map(|p| omega * Vec2::new(-p.y, p.x)).collect();
        let kernel = CubicSpline::new(h);
        let mass = spacing * spacing * 1000.0;
        let mut neighbors = NeighborState::default();
        neighbors.fluid_grid.build(&x, h);
        find_neighbors(
            &mut neighbors.chunks,
            &neighbors.fluid_grid,
            &x,
            &SpatialHashGrid::default(),
            h,
            usize::MAX,
        );
        let density: Vec<f32> = (0..x.len())
            .map(|i| {
                let mut rho = mass * kernel.w0();
                for &j in neighbors.fluid_neighbors(i) {
                    rho += mass * kernel.w((x[i] - x[j as usize]).length());
                }
                rho
            })
            .collect();
        let w = vec![1.0 / mass; x.len()];
        let pairs = FluidPairs {
            x: &x,
            w: &w,
            density: &density,
            chunks: &neighbors.chunks,
            kernel,
            mass,
            threads: 1,
        };
        let (mut vorticity, mut a) = (Vec::new(), Vec::new());
        confinement(&pairs, &v, 1.0, &mut vorticity, &mut a);
        let centre = x.len() / 2;
        assert!(
            (vorticity[centre] - 2.0 * omega).abs() < 0.05 * 2.0 * omega,
            "{}",
            vorticity[centre]
        );
        // The row at the middle of the right edge: pushed up (+y, the rotation's way).
        let edge = 10 * 21 + 20;
        assert!(
            a[edge].y > 0.0 && a[edge].x.abs() < 0.1 * a[edge].y,
            "{}",
            a[edge]
        );
    }
}
