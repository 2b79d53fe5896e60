//! Surface tension and adhesion (Akinci, Akinci, Teschner 2013: Versatile Surface Tension and
//! Adhesion for SPH Fluids, ACM TOG 32(6)), in 2D.
//!
//! Per fluid row i with w > 0, over its fluid neighbours j and boundary samples k
//! (r = xᵢ − xⱼ, r̂ = r/‖r‖; γ = [`FluidSettings::surface_tension`], β =
//! [`FluidSettings::adhesion`]):
//!
//! ```text
//! nᵢ = h Σⱼ (m/ρⱼ) ∇ᵢWᵢⱼ                                    (eq. 4, the surface normal)
//! Kᵢⱼ = 2ρ0 / (ρᵢ + ρⱼ)                                     (eq. 5)
//! aᵢ = Σⱼ Kᵢⱼ (−γ mⱼ C(‖r‖) r̂ − γ (nᵢ − nⱼ))                (eq. 1–3: cohesion, curvature)
//!    + Σₖ −β Ψₖ A(‖r‖) r̂                                    (eq. 6–7: adhesion to walls)
//! ```
//!
//! Cohesion attracts pairs between h/2 and h and repels closer ones (C < 0 below ~0.3 h);
//! the curvature term evens out the normals, so a drop rounds without the fluid clumping. The
//! kernels are the paper's with their 2D normalisation: C(r) = 25 280/(627π h⁸) · {(h − r)³r³
//! for h/2 < r ≤ h; 2(h − r)³r³ − h⁶/64 for r ≤ h/2}, A(r) = 0.0108/h^2.25 ·
//! (−4r²/h + 6r − 2h)^¼ for h/2 < r ≤ h, each scaled so that its integral over the plane
//! equals that of the paper's 3D kernel over space (79/336 and 0.0158): γ and β mean about
//! what they mean in 3D codes (SPlisHSPlasH, salva) at the same h and particle mass.
//!
//! With [phases](crate::fluid::phases) a pair's curvature term is shared by mass
//! (2mⱼ/(mᵢ + mⱼ) of it for i), so each pair's forces are equal and opposite where Kᵢⱼ is
//! the same for both: the fluid's momentum is kept (cohesion: mᵢmⱼ C r̂ is symmetric). The
//! walls take adhesion's reaction (they are fixed, or avian bodies that are not pushed back by
//! it). Fluid adheres to the particles of bodies with
//! [`FluidCoupling`](crate::fluid::FluidCoupling) the same way, each particle standing for a
//! sample of the fluid's mass m, and there the particle takes the opposite force (momentum
//! kept; a pinned particle does not move).

use bevy::prelude::*;

use crate::fluid::forces::FluidPairs;
use crate::fluid::neighbors::NeighborState;
use crate::fluid::settings::FluidSettings;
use crate::parallel::CHUNK;
use crate::particle::state::SolverState;

/// Akinci's cohesion spline C(r) in 2D (1/m², module docs), 0 outside (0, h].
pub fn cohesion_kernel(r: f32, h: f32) -> f32 {
    let normaliser = 25_280.0 / (627.0 * core::f32::consts::PI * h.powi(8));
    let cube = (h - r).powi(3) * r.powi(3);
    match r {
        r if r <= 0.0 || r > h => 0.0,
        r if 2.0 * r > h => normaliser * cube,
        _ => normaliser * (2.0 * cube - h.powi(6) / 64.0),
    }
}

/// Akinci's adhesion kernel A(r) in 2D (1/m², module docs), 0 outside (h/2, h].
pub fn adhesion_kernel(r: f32, h: f32) -> f32 {
    if 2.0 * r <= h || r > h {
        return 0.0;
    }
    let inner = (-4.0 * r * r / h + 6.0 * r - 2.0 * h).max(0.0);
    ADHESION_NORMALISER / h.powf(2.25) * inner.powf(0.25)
}

/// A(r)'s 2D factor: 0.007 (the paper's 3D one) × 2 ∫u²a(u)du / ∫u a(u)du over [½, 1].
const ADHESION_NORMALISER: f32 = 0.010_833;

/// The constants of one pass.
pub(crate) struct SurfaceForces<'a> {
    /// γ (m³ kg⁻¹ s⁻²).
    pub gamma: f32,
    /// β (m³ kg⁻¹ s⁻²).
    pub beta: f32,
    /// ρ0 (kg/m²).
    pub rest_density: f32,
    /// The boundary samples' positions (m) and Ψ (kg).
    pub boundary: (&'a [Vec2], &'a [f32]),
}

impl SurfaceForces<'_> {
    /// The normals nᵢ (with γ > 0) into `normals`, then every row's aᵢ (m/s²) into `out`.
    pub(crate) fn accelerations(
        &self,
        pairs: &FluidPairs,
        normals: &mut Vec<Vec2>,
        out: &mut Vec<Vec2>,
    ) {
        let h = pairs.kernel.support_radius();
        normals.clear();
        if self.gamma > 0.0 {
            pairs.per_row(normals, |i| {
                let mut n = Vec2::ZERO;
                pairs.each_neighbour(i, |j, _, _, _, grad| {
                    if pairs.density[j] > 0.0 {
                        n += pairs.mass / pairs.density[j] * grad;
                    }
                });
                h * n
            });
        }
        let normals = &normals[..];
        pairs.per_row(out, |i| {
            if pairs.w[i] == 0.0 {
                return Vec2::ZERO;
            }
            let mut a = Vec2::ZERO;
            let rho_i = pairs.density[i];
            let m_i = pairs.mass_of(i);
            if self.gamma > 0.0 {
                pairs.each_neighbour(i, |j, r, d, _, _| {
                    let sum = rho_i + pairs.density[j];
                    if sum <= 0.0 {
                        return;
                    }
                    let k = 2.0 * self.rest_density / sum;
                    let m_j = pairs.mass_of(j);
                    let cohesion = -self.gamma * m_j * cohesion_kernel(d, h) * (r / d);
                    let share = 2.0 * m_j / (m_i + m_j);
                    let curvature = -self.gamma * share * (normals[i] - normals[j]);
                    a += k * (cohesion + curvature);
                });
            }
            if self.beta > 0.0 {
                let (bx, psi) = self.boundary;
                let chunk = &pairs.chunks[i / CHUNK];
                for &k in chunk.boundary_of(i % CHUNK) {
                    let (Some(&xk), Some(&psi)) = (bx.get(k as usize), psi.get(k as usize)) else {
                        continue;
                    };
                    let r = pairs.x[i] - xk;
                    let d = r.length();
                    if d > 0.0 && psi.is_finite() {
                        a -= self.beta * psi * adhesion_kernel(d, h) * (r / d);
                    }
                }
            }
            a
        });
    }
}

/// Adhesion between the fluid and the particles `coupled` (rows of bodies with
/// [`FluidCoupling`](crate::fluid::FluidCoupling)): each stands for a sample of the fluid's
/// mass m, and the pair's forces ∓β mᵢ m A(‖r‖) r̂ change both velocities over `dt`, each by
/// its inverse mass (module docs). In the coupled particles' order, then the fluid grid's.
pub(crate) fn adhere_to_particles(
    settings: &FluidSettings,
    state: &mut SolverState,
    neighbors: &NeighborState,
    coupled: &[u32],
    dt: f32,
) {
    let (h, beta, m) = (
        settings.support_radius,
        settings.adhesion,
        settings.particle_mass(),
    );
    let fluid = state.fluid_count;
    for &k in coupled {
        let k = k as usize;
        let Some(&xk) = state.x.get(k) else { continue };
        if !xk.is_finite() {
            continue;
        }
        let mut pulls = Vec::new();
        neighbors.fluid_grid.for_each_within(xk, h, |i, _| {
            let i = i as usize;
            if i < fluid {
                pulls.push(i);
            }
        });
        for i in pulls {
            let r = state.x[i] - xk;
            let d = r.length();
            let a = adhesion_kernel(d, h);
            if d == 0.0 || a == 0.0 {
                continue;
            }
            // The force on i: −β mᵢ m A r̂; on k the opposite.
            let w_i = state.w[i];
            let m_i = if w_i > 0.0 { 1.0 / w_i } else { m };
            let impulse = dt * beta * m_i * m * a * (r / d);
            state.v[i] -= w_i * impulse;
            state.v[k] += state.w[k] * impulse;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Integrates f(r) 2πr over (0, h] by the midpoint rule.
    fn plane_integral(f: impl Fn(f32) -> f32, h: f32) -> f64 {
        let n = 100_000;
        (0..n)
            .map(|k| {
                let r = (k as f64 + 0.5) * h as f64 / n as f64;
                f(r as f32) as f64 * 2.0 * core::f64::consts::PI * r * h as f64 / n as f64
            })
            .sum()
    }

    /// The kernels' plane integrals equal the 3D kernels' space integrals (79/336 and
    /// 0.007 · 4π ∫u²a(u)du), for any h; cohesion repels close pairs and attracts far ones.
    #[test]
    fn kernels_integrate_to_the_3d_values() {
        for h in [0.1, 0.37] {
            let cohesion = plane_integral(|r| cohesion_kernel(r, h), h);
            assert!((cohesion - 79.0 / 336.0).abs() < 1e-4, "{cohesion}");
            let adhesion = plane_integral(|r| adhesion_kernel(r, h), h);
            assert!((adhesion - 0.015_775).abs() < 1e-4, "{adhesion}");
        }
        let h = 0.1;
        assert!(cohesion_kernel(0.01, h) < 0.0 && cohesion_kernel(0.07, h) > 0.0);
        assert_eq!(cohesion_kernel(0.1001, h), 0.0);
        assert_eq!(adhesion_kernel(0.05, h), 0.0);
        assert!(adhesion_kernel(0.075, h) > 0.0);
    }
}
