//! The pressure grid of [`grid_projection`](super): square cells H wide over the fluid's
//! bounding box, each fluid, air or solid, with the particle ↔ grid transfers.

use bevy::math::I64Vec2;
use bevy::prelude::*;

use crate::parallel::pool;

/// Scratch of [`CellGrid::face_velocities`]: per half of the particles, the weighted sums
/// and weights on the x-faces and the y-faces.
#[derive(Debug, Default, Clone)]
pub(crate) struct Splats {
    halves: [[Vec<f64>; 4]; 2],
}

/// What a cell of the pressure grid holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum CellKind {
    /// At least one fluid particle and no boundary sample, or a void inside the fluid
    /// ([`CellGrid::build`]): p is unknown.
    Fluid,
    /// Neither: p = 0 (the free surface, Dirichlet).
    #[default]
    Air,
    /// A boundary sample: a wall, no flow through its faces (Neumann).
    Solid,
}

/// Cells of the grid around the fluid's bounding box (a ring of cells that no fluid particle is
/// in, so that every fluid cell has four neighbours; only its inner ring may hold a filled void).
const MARGIN: i32 = 2;

/// A grid of square cells `size` wide (m), cell (i, j) covering
/// [(origin + (i, j)) size, (origin + (i + 1, j + 1)) size).
#[derive(Debug, Default, Clone)]
pub(crate) struct CellGrid {
    /// Cell size H (m).
    pub size: f32,
    /// The grid's first cell in cells from the world origin.
    pub origin: IVec2,
    /// Cells per row.
    pub nx: usize,
    /// Rows of cells.
    pub ny: usize,
    /// Per cell, row-major.
    pub kind: Vec<CellKind>,
    /// Per cell, the diagonal of the Poisson operator ([`poisson`](super::poisson)): the number
    /// of neighbours that are not solid, on fluid cells that a path of fluid cells links to an
    /// air cell; 0 on the others, which have no equation (fluid sealed in a container, where A
    /// would be singular, and every cell that is not fluid).
    pub diagonal: Vec<f64>,
    /// Cells to visit (scratch).
    stack: Vec<usize>,
}

impl CellGrid {
    /// Builds the grid over `fluid` (m) with cells `size` wide: a cell holding a boundary
    /// sample of `boundary` is solid, one holding a fluid particle fluid, an empty one fluid if
    /// it is a void inside the water (no air neighbour, fluid above it: `fill_voids`), else
    /// air. Returns
    /// `false` (and keeps no grid) if a fluid position is not finite or the grid would have more
    /// than `max_cells` cells or reach past ±2³⁰ cells from the origin. Samples that are not
    /// finite are left out.
    pub fn build(
        &mut self,
        fluid: &[Vec2],
        boundary: &[Vec2],
        size: f32,
        max_cells: usize,
    ) -> bool {
        self.kind.clear();
        self.diagonal.clear();
        let (mut lo, mut hi) = (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY));
        for &p in fluid {
            if !p.is_finite() {
                return false;
            }
            lo = lo.min(p);
            hi = hi.max(p);
        }
        if fluid.is_empty() {
            return false;
        }
        // The same cell index as `cell_of` takes (monotonic in p): every fluid cell lies at
        // least MARGIN cells inside the grid.
        let (first, last) = (index(lo, size), index(hi, size));
        let limit = 1 << 30;
        let far = |c: I64Vec2| c.abs().max_element() > limit;
        if far(first) || far(last) {
            return false;
        }
        let wide = last - first + I64Vec2::splat(i64::from(2 * MARGIN + 1));
        if wide.x.saturating_mul(wide.y) > max_cells as i64 {
            return false;
        }
        self.size = size;
        self.origin = first.as_ivec2() - IVec2::splat(MARGIN);
        (self.nx, self.ny) = (wide.x as usize, wide.y as usize);
        self.kind.resize(self.nx * self.ny, CellKind::Air);
        for &p in fluid {
            if let Some(c) = self.cell_of(p) {
                self.kind[c] = CellKind::Fluid;
            }
        }
        for &s in boundary.iter().filter(|s| s.is_finite()) {
            if let Some(c) = self.cell_of(s) {
                self.kind[c] = CellKind::Solid;
            }
        }
        self.fill_voids();
        self.find_equations();
        true
    }

    /// Makes fluid every empty cell that has no air neighbour and fluid above it (+y): a void
    /// inside the water (up to 8 per step in the 316 × 316 dam break, four particles a cell),
    /// not its surface. As air (p = 0) such a cell was a sink at the water's depth whose
    /// pressure drew the fluid around it in with a jet; the 316 × 316 dam break stood 3 % high
    /// after 20 s, its number density 3.5 % short of ρ0 below the surface (bench README). As
    /// fluid it has no rows and no excess: the pressure is continuous across it, and nothing
    /// draws fluid into it but its neighbours' own deficits and the flow; no single-cell void
    /// was left after 2 000 steps of that dam break. Fluid above, not only beside: a pocket
    /// under a lid (a wall above) stays air, as in a closed tank it may be the only air there
    /// is. A run of two or more empty cells stays air. Filled in place: a cell filled has no
    /// air neighbour, so no other cell's test reads it as air.
    fn fill_voids(&mut self) {
        let (cells, nx) = (self.len(), self.nx);
        let kind = &mut self.kind;
        for c in nx + 1..cells.saturating_sub(nx + 1) {
            let around = [c - 1, c + 1, c - nx].map(|n| kind[n]);
            if kind[c] == CellKind::Air
                && kind[c + nx] == CellKind::Fluid
                && !around.contains(&CellKind::Air)
            {
                kind[c] = CellKind::Fluid;
            }
        }
    }

    /// Fills [`diagonal`](Self::diagonal): fluid cells beside air first, then those linked to
    /// them. The margin keeps fluid cells off the grid's edge.
    fn find_equations(&mut self) {
        let (cells, nx) = (self.len(), self.nx);
        self.diagonal.clear();
        self.diagonal.resize(cells, 0.0);
        self.stack.clear();
        let kind = &self.kind;
        let fluid = |c: usize| kind[c] == CellKind::Fluid;
        for c in (0..cells).filter(|&c| fluid(c)) {
            let around = [c - 1, c + 1, c - nx, c + nx];
            if around.iter().any(|&n| kind[n] == CellKind::Air) {
                self.stack.push(c);
                self.diagonal[c] = -1.0;
            }
        }
        while let Some(c) = self.stack.pop() {
            let around = [c - 1, c + 1, c - nx, c + nx];
            let open = around.iter().filter(|&&n| kind[n] != CellKind::Solid);
            self.diagonal[c] = open.count() as f64;
            for n in around {
                if fluid(n) && self.diagonal[n] == 0.0 {
                    self.diagonal[n] = -1.0;
                    self.stack.push(n);
                }
            }
        }
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.kind.len()
    }

    /// The cell holding `p` (m), if the grid does.
    pub fn cell_of(&self, p: Vec2) -> Option<usize> {
        let c = index(p, self.size).saturating_sub(self.origin.as_i64vec2());
        let (nx, ny) = (self.nx as i64, self.ny as i64);
        let inside = c.x >= 0 && c.y >= 0 && c.x < nx && c.y < ny;
        inside.then(|| c.y as usize * self.nx + c.x as usize)
    }

    /// `p` (m) in grid coordinates (cells from the grid's corner).
    pub fn coordinates(&self, p: Vec2) -> Vec2 {
        p / self.size - self.origin.as_vec2()
    }

    /// −∇p on every face, for [`descents_at`](Self::descents_at), in component `slot` (0 or 1)
    /// of `out`'s entries (each [`len`](Self::len) long): x-face (i, j + ½), between cells
    /// (i − 1, j) and (i, j), at index j nx + i of `out.0`, y-face (i + ½, j) at that of
    /// `out.1`. On a face between a fluid cell and a fluid or air one, the pressure difference
    /// of its two cells over H; on a face of a solid cell, 0 without `walls`; with them, minus
    /// their value on a face between a solid cell and another (the face velocity a wall at
    /// rest takes away), and NaN (left out) on faces between two solid cells (inside a wall),
    /// so that fluid beside a wall moves with the fluid beyond it; else 0. `p` is 0 off the
    /// fluid cells. `walls` are x-face and y-face values as [`face_velocities`] writes them.
    ///
    /// [`face_velocities`]: Self::face_velocities
    pub fn face_descents(
        &self,
        p: &[f64],
        walls: Option<(&[f64], &[f64])>,
        slot: usize,
        out: (&mut [[f32; 2]], &mut [[f32; 2]]),
    ) {
        let (nx, cells) = (self.nx, self.len());
        let inv = 1.0 / f64::from(self.size);
        let face = |a: usize, b: usize, wall: Option<&[f64]>| -> f32 {
            let (ka, kb) = (self.kind[a], self.kind[b]);
            if ka == CellKind::Solid || kb == CellKind::Solid {
                match wall {
                    Some(_) if ka == kb => f32::NAN,
                    Some(u) => -u[b] as f32,
                    None => 0.0,
                }
            } else if ka == CellKind::Fluid || kb == CellKind::Fluid {
                ((p[a] - p[b]) * inv) as f32
            } else {
                0.0
            }
        };
        let (fx, fy) = out;
        for (b, out) in fx[..cells].iter_mut().enumerate() {
            out[slot] = match b % nx {
                0 => 0.0,
                _ => face(b - 1, b, walls.map(|w| w.0)),
            };
        }
        for (b, out) in fy[..cells].iter_mut().enumerate() {
            out[slot] = match b < nx {
                true => 0.0,
                false => face(b - nx, b, walls.map(|w| w.1)),
            };
        }
    }

    /// −∇p of both slots of [`face_descents`] at grid coordinates `g`, bilinear from the faces
    /// (faces off the grid 0, NaN faces left out, the other faces' weights scaled up to 1).
    ///
    /// [`face_descents`]: Self::face_descents
    pub fn descents_at(&self, faces: (&[[f32; 2]], &[[f32; 2]]), g: Vec2) -> [Vec2; 2] {
        let x = self.bilinear(faces.0, g.x, g.y - 0.5);
        let y = self.bilinear(faces.1, g.x - 0.5, g.y);
        [Vec2::new(x[0], y[0]), Vec2::new(x[1], y[1])]
    }

    /// Both slots of `values` (per face, as [`face_descents`] writes them) interpolated
    /// bilinearly at (s, t) on the integer lattice, over the corners where a slot has a value
    /// (not NaN; 0 off the grid), their weights scaled to sum to 1 (0 if none has).
    ///
    /// [`face_descents`]: Self::face_descents
    fn bilinear(&self, values: &[[f32; 2]], s: f32, t: f32) -> [f32; 2] {
        let (i, j) = (floor(s), floor(t));
        let (a, b) = (s - i as f32, t - j as f32);
        let weights = [(1.0 - a) * (1.0 - b), a * (1.0 - b), (1.0 - a) * b, a * b];
        if let Some(f) = self.corners(i, j) {
            // Where the particles are (the grid is built around them, with its margin): all four
            // corners on the grid, and unless a sum is NaN none of them is left out, so the
            // general loop below would add the same terms in the same order.
            let (nx, v) = (self.nx, values);
            let corners = [v[f], v[f + 1], v[f + nx], v[f + nx + 1]];
            let weight = 0.0 + weights[0] + weights[1] + weights[2] + weights[3];
            let result = [0, 1].map(|k| {
                let sum = 0.0
                    + weights[0] * corners[0][k]
                    + weights[1] * corners[1][k]
                    + weights[2] * corners[2][k]
                    + weights[3] * corners[3][k];
                sum / weight
            });
            if !result[0].is_nan() && !result[1].is_nan() && weight > 0.0 {
                return result;
            }
        }
        let (nx, ny) = (self.nx as i64, self.ny as i64);
        // Saturating: ⌊s⌋ may be i64::MAX.
        let (i1, j1) = (i.saturating_add(1), j.saturating_add(1));
        let corners = [(i, j), (i1, j), (i, j1), (i1, j1)];
        let (mut sum, mut weight) = ([0.0f32; 2], [0.0f32; 2]);
        for ((ci, cj), w) in corners.into_iter().zip(weights) {
            let inside = ci >= 0 && cj >= 0 && ci < nx && cj < ny;
            let value = if inside {
                values[(cj * nx + ci) as usize]
            } else {
                [0.0; 2]
            };
            for k in 0..2 {
                if !value[k].is_nan() {
                    sum[k] += w * value[k];
                    weight[k] += w;
                }
            }
        }
        [0, 1].map(|k| {
            if weight[k] > 0.0 {
                sum[k] / weight[k]
            } else {
                0.0
            }
        })
    }

    /// The index of corner (i, j) if all four corners (i ..= i + 1, j ..= j + 1) are on the
    /// grid.
    #[inline(always)]
    fn corners(&self, i: i64, j: i64) -> Option<usize> {
        // Not i + 1 < nx: ⌊s⌋ saturates at i64::MAX, where i + 1 would wrap.
        let inside = i >= 0 && j >= 0 && i < self.nx as i64 - 1 && j < self.ny as i64 - 1;
        inside.then(|| j as usize * self.nx + i as usize)
    }

    /// The velocities `v` (m/s) of particles at `at` (m) on the faces: per face the
    /// bilinear-weighted mean of the particles around it (0 where none is). On a face between a
    /// solid cell (a wall at rest) and another, a velocity into the wall moves to `walls` (0 on
    /// the other faces) and one away from it stays: the fluid may leave a wall, as the clamped
    /// density constraint lets it. Writes x-face (i, j + ½) to index j nx + i of `u.0` and
    /// `walls.0`, y-face (i + ½, j) to that of `u.1` and `walls.1`. The two halves of the
    /// particles are splatted apart (side by side if `parallel`) and added in a fixed order:
    /// the same bits either way.
    pub fn face_velocities(
        &self,
        at: &[Vec2],
        v: &[Vec2],
        u: (&mut Vec<f64>, &mut Vec<f64>),
        walls: (&mut Vec<f64>, &mut Vec<f64>),
        splats: &mut Splats,
        parallel: bool,
    ) {
        let cells = self.len();
        let half = at.len().div_ceil(2);
        let splat_half = |k: usize, out: &mut [Vec<f64>; 4]| {
            for o in out.iter_mut() {
                o.clear();
                o.resize(cells, 0.0);
            }
            let [sum_x, weight_x, sum_y, weight_y] = out;
            let range = (k * half).min(at.len())..((k + 1) * half).min(at.len());
            for (&p, &vel) in at[range.clone()].iter().zip(&v[range]) {
                let g = self.coordinates(p);
                self.splat(sum_x, weight_x, g.x, g.y - 0.5, vel.x);
                self.splat(sum_y, weight_y, g.x - 0.5, g.y, vel.y);
            }
        };
        let [first, second] = &mut splats.halves;
        if parallel {
            pool().scope(|s| {
                s.spawn(async { splat_half(1, second) });
                splat_half(0, first);
            });
        } else {
            splat_half(0, first);
            splat_half(1, second);
        }
        let (ux, uy) = u;
        for (out, axis) in [(&mut *ux, 0), (&mut *uy, 2)] {
            out.clear();
            out.extend((0..cells).map(|f| {
                let sum = first[axis][f] + second[axis][f];
                let weight = first[axis + 1][f] + second[axis + 1][f];
                if weight > 0.0 { sum / weight } else { 0.0 }
            }));
        }
        let nx = self.nx;
        let (wall_x, wall_y) = walls;
        for w in [&mut *wall_x, &mut *wall_y] {
            w.clear();
            w.resize(cells, 0.0);
        }
        // A face's velocity into a solid cell from a fluid or air one goes to `walls`; away
        // from it, it stays (the fluid may leave a wall); between two solid cells (along a
        // wall) it stays too: the walls do not hold the fluid back.
        let into_wall = |u: f64, before: CellKind, after: CellKind| {
            let (solid_before, solid_after) = (before == CellKind::Solid, after == CellKind::Solid);
            (solid_after && !solid_before && u > 0.0) || (solid_before && !solid_after && u < 0.0)
        };
        for c in 0..cells {
            let kind = self.kind[c];
            if c % nx > 0 && into_wall(ux[c], self.kind[c - 1], kind) {
                wall_x[c] = core::mem::take(&mut ux[c]);
            }
            if c >= nx && into_wall(uy[c], self.kind[c - nx], kind) {
                wall_y[c] = core::mem::take(&mut uy[c]);
            }
        }
    }

    /// Adds `value` with bilinear weights around (s, t) (face coordinates) to `sum` and the
    /// weights to `weight`.
    fn splat(&self, sum: &mut [f64], weight: &mut [f64], s: f32, t: f32, value: f32) {
        let (i, j) = (floor(s), floor(t));
        let (a, b) = (s - i as f32, t - j as f32);
        let corners = [
            (0, 0, (1.0 - a) * (1.0 - b)),
            (1, 0, a * (1.0 - b)),
            (0, 1, (1.0 - a) * b),
            (1, 1, a * b),
        ];
        // Where the particles are, all four corners are on the grid (its margin).
        let first = self.corners(i, j);
        for (di, dj, w) in corners {
            let f = match first {
                Some(f) => f + dj * self.nx + di,
                None => {
                    let (ii, jj) = (i.saturating_add(di as i64), j.saturating_add(dj as i64));
                    if ii < 0 || jj < 0 || ii as usize >= self.nx || jj as usize >= self.ny {
                        continue;
                    }
                    jj as usize * self.nx + ii as usize
                }
            };
            sum[f] += f64::from(w * value);
            weight[f] += f64::from(w);
        }
    }
}

/// ⌊x⌋, saturating (NaN: 0): `x.floor() as i64` without a call to libm's floorf (the
/// target's baseline has no rounding instruction).
fn floor(x: f32) -> i64 {
    let t = x as i64;
    t.saturating_sub(i64::from((t as f32) > x))
}

/// ⌊p / size⌋ per axis, saturating (NaN: 0).
fn index(p: Vec2, size: f32) -> I64Vec2 {
    let c = p / size;
    I64Vec2::new(floor(c.x), floor(c.y))
}

/// x at the four neighbours of cell `c` on a grid `nx` cells wide, in the operator's order
/// (left, right, below, above): Σₙ xₙ of A x = k x_c − Σₙ xₙ, and of its Gauss-Seidel update.
pub(super) fn neighbour_sum(x: &[f64], c: usize, nx: usize) -> f64 {
    x[c - 1] + x[c + 1] + x[c - nx] + x[c + nx]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Far outside the grid (⌊s⌋ saturating at i64::MAX or MIN, or NaN), the gather is 0, a
    /// splat adds nothing and no cell holds the point: no index wraps onto the grid.
    #[test]
    fn transfers_far_off_the_grid_take_no_corner() {
        let mut grid = CellGrid::default();
        let fluid: Vec<Vec2> = (0..16)
            .map(|k| Vec2::ONE + Vec2::new((k % 4) as f32, (k / 4) as f32) * 0.05)
            .collect();
        assert!(grid.build(&fluid, &[], 0.1, 1 << 16));
        let faces = vec![[1.0f32, 2.0]; grid.len()];
        let far = [1e19, -1e19, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
        for s in far {
            for g in [Vec2::new(s, 3.0), Vec2::new(3.0, s), Vec2::splat(s)] {
                let got = grid.descents_at((&faces, &faces), g);
                assert_eq!(got, [Vec2::ZERO; 2], "at {g}");
                // A boundary sample there, or a position: in no cell (NaN: in cell 0 of the
                // world, which this grid, around (1.1, 1.1) m, does not reach).
                assert_eq!(grid.cell_of(g), None, "cell of {g}");
            }
        }
        // The velocities of the 16 particles, with and without far ones among them.
        let splat = |at: &[Vec2]| {
            let (mut ux, mut uy, mut wx, mut wy) = Default::default();
            let v = vec![Vec2::new(1.0, -2.0); at.len()];
            let mut splats = Splats::default();
            let u = (&mut ux, &mut uy);
            grid.face_velocities(at, &v, u, (&mut wx, &mut wy), &mut splats, false);
            (ux, uy)
        };
        // (Not NaN: the grid is not built over a NaN position, so none is splatted.)
        let far = &far[..4];
        let mut with_far = fluid.clone();
        let cell = |g: Vec2| grid.size * (g + grid.origin.as_vec2());
        with_far.extend(far.iter().map(|&s| cell(Vec2::new(s, 3.0))));
        with_far.extend(far.iter().map(|&s| cell(Vec2::new(3.0, s))));
        let (near, all) = (splat(&fluid), splat(&with_far));
        assert_eq!(near, all);
        assert!(near.0.iter().any(|&u| u != 0.0));
    }
}
