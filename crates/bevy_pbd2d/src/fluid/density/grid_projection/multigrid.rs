//! A multigrid V-cycle on a [`CellGrid`]'s Poisson equation, the preconditioner of its
//! conjugate gradients (MGPCG: McAdams, Sifakis, Teran, A parallel multigrid Poisson solver for
//! fluids simulation on large grids, SCA 2010): the pressure's long waves, which plain CG
//! crosses a few cells per iteration, are solved on coarser grids.
//!
//! - **Levels**: a coarse cell covers 2 × 2 cells of the level below, shifted by one (coarse
//!   cell I covers fine cells 2I − 1 and 2I per axis; nx/2 + 2 coarse cells per row), so that
//!   the coarse cells on and beside the first and last of a row hold no cell with an equation:
//!   no cell with one is on a level's edge. A coarse cell is air if one of its
//!   cells is (Dirichlet, p = 0), else it has an equation if one of its cells has, else it is
//!   a wall (no term): McAdams et al.'s rule. Only air beside a cell with an equation counts
//!   as air: the air beyond a wall (the grid's margin around a container) is relabelled wall
//!   first, or the coarse levels would merge it with the wall and put a free surface there
//!   (the V-cycle then diverged on a pool in a box). A cell's diagonal counts the neighbours
//!   that are not walls, so each level's operator is −(2ˡH)² ∇² discretised on that level, as
//!   on the finest. Coarsening stops at [`COARSEST_CELLS`] cells with an equation (or
//!   [`MAX_LEVELS`]), or before a level that would have none (a film one cell deep, all of
//!   whose coarse cells hold air): that coarsest level then has more cells and only the
//!   coarsest sweeps, still a symmetric positive definite preconditioner, a weaker one.
//! - **Transfers**: bilinear prolongation (a fine cell takes 9/16, 3/16, 3/16, 1/16 of the four
//!   nearest coarse cells) and its transpose as the restriction, which sums the residual with
//!   weights adding to 4 per coarse cell: the scale at which the coarse operator, H² times
//!   coarser, matches the fine one.
//! - **Smoothing**: [`BAND_SWEEPS`] Gauss-Seidel sweeps over the boundary band (cells with an
//!   equation beside one without, 8-neighbourhood), [`SMOOTHING_SWEEPS`] red-black sweeps
//!   (red, then black), the band again, before the coarse correction; after it the same in
//!   reverse (the band backwards, black, then red). On the coarsest level [`COARSEST_SWEEPS`]
//!   red-black sweeps forward and as many back. The V-cycle is thus a symmetric positive
//!   definite map of the residual, as conjugate gradients need of a preconditioner. The band's
//!   sweeps are McAdams et al.'s boundary smoothing: a coarse level sees walls and the free
//!   surface up to a coarse cell off, and the error that leaves near them is the fine level's
//!   to remove. As a solver on its own (two red-black sweeps) the V-cycle reduced the residual
//!   of a 256 × 128 pool by 0.31 per cycle with six band sweeps; without, the residual grew
//!   and shrank by turns (0.2 and 2 times).
//!
//! Hydrostatic pools of 32 × 16 to 256 × 128 cells with a wall block inside (tests): plain CG
//! needs 79 to 668 iterations to 10⁻⁸, the preconditioned solve 12 to 15. One thread, in a
//! fixed order: the same bits for any thread count.

use super::cells::{CellGrid, CellKind, neighbour_sum};

/// Cells with an equation at most on the coarsest level.
pub(crate) const COARSEST_CELLS: usize = 32;

/// Levels at most, the finest included.
pub(crate) const MAX_LEVELS: usize = 16;

/// Red-black Gauss-Seidel sweeps before and after each coarse correction.
pub(crate) const SMOOTHING_SWEEPS: usize = 1;

/// Gauss-Seidel sweeps over the boundary band before and after the red-black ones.
pub(crate) const BAND_SWEEPS: usize = 2;

/// Red-black sweeps forward and back on the coarsest level.
pub(crate) const COARSEST_SWEEPS: usize = 16;

/// What a cell of a level is to the V-cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Label {
    /// A wall, sealed fluid or outside the grid: no equation and no term.
    #[default]
    Wall,
    /// p = 0.
    Air,
    /// An equation.
    Active,
}

/// One level's grid.
#[derive(Debug, Default, Clone)]
struct Level {
    nx: usize,
    ny: usize,
    label: Vec<Label>,
    /// The operator's diagonal: > 0 on the cells with an equation, 0 elsewhere.
    diagonal: Vec<f64>,
    /// Cells with an equation beside one without (8-neighbourhood).
    band: Vec<usize>,
}

/// The levels of a [`CellGrid`], shared by its solves.
#[derive(Debug, Default, Clone)]
pub(crate) struct Hierarchy {
    levels: Vec<Level>,
    /// Levels in use (the vector keeps its buffers).
    depth: usize,
}

/// One solve's vectors on every level (solution, right-hand side, residual).
#[derive(Debug, Default, Clone)]
pub(crate) struct VCycle {
    x: Vec<Vec<f64>>,
    b: Vec<Vec<f64>>,
    r: Vec<Vec<f64>>,
}

impl Hierarchy {
    /// Builds the coarse levels of `grid` (its [`CellGrid::diagonal`] and kinds).
    pub fn build(&mut self, grid: &CellGrid) {
        if self.levels.is_empty() {
            self.levels.push(Level::default());
        }
        let finest = &mut self.levels[0];
        (finest.nx, finest.ny) = (grid.nx, grid.ny);
        finest.diagonal.clone_from(&grid.diagonal);
        finest.label.clear();
        let label = |(&kind, &diagonal): (&CellKind, &f64)| match kind {
            _ if diagonal > 0.0 => Label::Active,
            CellKind::Air => Label::Air,
            _ => Label::Wall,
        };
        let labels = grid.kind.iter().zip(&grid.diagonal).map(label);
        finest.label.extend(labels);
        finish(finest);
        self.depth = 1;
        while self.depth < MAX_LEVELS && active(&self.levels[self.depth - 1]) > COARSEST_CELLS {
            if self.levels.len() == self.depth {
                self.levels.push(Level::default());
            }
            let (fine, coarse) = self.levels.split_at_mut(self.depth);
            coarsen(&fine[self.depth - 1], &mut coarse[0]);
            if active(&coarse[0]) == 0 {
                break;
            }
            self.depth += 1;
        }
    }

    /// Levels in use, the finest included.
    #[cfg(test)]
    pub fn levels(&self) -> usize {
        self.depth
    }

    /// z = M⁻¹ r: one V-cycle from z = 0 (module docs). `r` and `z` are on the finest level;
    /// `r` is read on the cells with an equation, `z` is 0 on the others.
    pub fn apply(&self, cycle: &mut VCycle, r: &[f64], z: &mut [f64]) {
        let depth = self.depth;
        for v in [&mut cycle.x, &mut cycle.b, &mut cycle.r] {
            v.resize_with(depth, Vec::new);
        }
        for (l, level) in self.levels[..depth].iter().enumerate() {
            let cells = level.nx * level.ny;
            for v in [&mut cycle.x[l], &mut cycle.b[l], &mut cycle.r[l]] {
                v.clear();
                v.resize(cells, 0.0);
            }
        }
        cycle.b[0].copy_from_slice(r);
        for l in 0..depth - 1 {
            let level = &self.levels[l];
            let (x, b) = (&mut cycle.x[l], &cycle.b[l]);
            smooth(level, x, b, false);
            residual(level, x, b, &mut cycle.r[l]);
            restrict(level, &self.levels[l + 1], &cycle.r[l], &mut cycle.b[l + 1]);
        }
        let coarsest = &self.levels[depth - 1];
        let (x, b) = (&mut cycle.x[depth - 1], &cycle.b[depth - 1]);
        for colours in [[0, 1], [1, 0]] {
            for _ in 0..COARSEST_SWEEPS {
                sweep(coarsest, x, b, colours[0]);
                sweep(coarsest, x, b, colours[1]);
            }
        }
        for l in (0..depth - 1).rev() {
            let level = &self.levels[l];
            let (fine, coarse) = cycle.x.split_at_mut(l + 1);
            prolong(level, &self.levels[l + 1], &coarse[0], &mut fine[l]);
            smooth(level, &mut cycle.x[l], &cycle.b[l], true);
        }
        z.copy_from_slice(&cycle.x[0]);
    }
}

/// Cells with an equation on `level`.
fn active(level: &Level) -> usize {
    level.label.iter().filter(|&&l| l == Label::Active).count()
}

/// The coarse cell that fine cell `f` lies mostly in, and its other neighbour along the axis.
fn parents(f: usize) -> (usize, usize) {
    let near = f.div_ceil(2);
    (near, if f % 2 == 1 { near - 1 } else { near + 1 })
}

/// Builds `coarse` from `fine` (module docs).
fn coarsen(fine: &Level, coarse: &mut Level) {
    let (nx, ny) = (fine.nx / 2 + 2, fine.ny / 2 + 2);
    (coarse.nx, coarse.ny) = (nx, ny);
    coarse.label.clear();
    coarse.label.resize(nx * ny, Label::Wall);
    let mut any = vec![[false; 2]; nx * ny];
    for j in 0..fine.ny {
        for i in 0..fine.nx {
            let c = j.div_ceil(2) * nx + i.div_ceil(2);
            match fine.label[j * fine.nx + i] {
                Label::Air => any[c][0] = true,
                Label::Active => any[c][1] = true,
                Label::Wall => {}
            }
        }
    }
    for (label, &[air, equation]) in coarse.label.iter_mut().zip(&any) {
        *label = match (air, equation) {
            (true, _) => Label::Air,
            (false, true) => Label::Active,
            _ => Label::Wall,
        };
    }
    // The edge has no equation (module docs: no cell with one reaches it).
    for (c, label) in coarse.label.iter_mut().enumerate() {
        let (i, j) = (c % nx, c / nx);
        if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) && *label == Label::Active {
            *label = Label::Wall;
        }
    }
    coarse.diagonal.clear();
    coarse.diagonal.resize(nx * ny, 0.0);
    for j in 1..ny - 1 {
        for i in 1..nx - 1 {
            let c = j * nx + i;
            if coarse.label[c] == Label::Active {
                let around = [c - 1, c + 1, c - nx, c + nx];
                let open = around.iter().filter(|&&n| coarse.label[n] != Label::Wall);
                coarse.diagonal[c] = open.count() as f64;
            }
        }
    }
    finish(coarse);
}

/// Air beside no cell with an equation relabelled as wall, and the boundary band found.
fn finish(level: &mut Level) {
    only_surface_air(level);
    level.band.clear();
    let nx = level.nx;
    for c in 0..level.label.len() {
        if level.diagonal[c] > 0.0 {
            let near = [
                c - 1,
                c + 1,
                c - nx,
                c + nx,
                c - nx - 1,
                c - nx + 1,
                c + nx - 1,
                c + nx + 1,
            ];
            if near.iter().any(|&n| level.label[n] != Label::Active) {
                level.band.push(c);
            }
        }
    }
}

/// The smoother (module docs): the band, red, black, the band; `backwards`, the same in
/// reverse order (its adjoint).
fn smooth(level: &Level, x: &mut [f64], b: &[f64], backwards: bool) {
    let colours = if backwards { [1, 0] } else { [0, 1] };
    for _ in 0..BAND_SWEEPS {
        band_sweep(level, x, b, backwards);
    }
    for _ in 0..SMOOTHING_SWEEPS {
        sweep(level, x, b, colours[0]);
        sweep(level, x, b, colours[1]);
    }
    for _ in 0..BAND_SWEEPS {
        band_sweep(level, x, b, backwards);
    }
}

/// Gauss-Seidel over the boundary band, in its order or `backwards`.
fn band_sweep(level: &Level, x: &mut [f64], b: &[f64], backwards: bool) {
    let nx = level.nx;
    let mut update = |c: usize| {
        x[c] = (b[c] + neighbour_sum(x, c, nx)) / level.diagonal[c];
    };
    if backwards {
        level.band.iter().rev().for_each(|&c| update(c));
    } else {
        level.band.iter().for_each(|&c| update(c));
    }
}

/// Relabels as walls the air cells of `level` beside no cell with an equation (air beyond a
/// wall): they are in no equation, and coarsened with the wall they would make it air.
fn only_surface_air(level: &mut Level) {
    let (nx, ny) = (level.nx, level.ny);
    for c in 0..nx * ny {
        if level.label[c] != Label::Air {
            continue;
        }
        let (i, j) = (c % nx, c / nx);
        let around = [
            (i > 0).then(|| c - 1),
            (i + 1 < nx).then(|| c + 1),
            (j > 0).then(|| c - nx),
            (j + 1 < ny).then(|| c + nx),
        ];
        let beside = around.into_iter().flatten();
        if !beside.into_iter().any(|n| level.label[n] == Label::Active) {
            level.label[c] = Label::Wall;
        }
    }
}

/// One Gauss-Seidel sweep over the cells (i, j) with (i + j) mod 2 = `colour`.
fn sweep(level: &Level, x: &mut [f64], b: &[f64], colour: usize) {
    let nx = level.nx;
    for j in 1..level.ny.saturating_sub(1) {
        let first = if (1 + j) % 2 == colour { 1 } else { 2 };
        for i in (first..nx - 1).step_by(2) {
            let c = j * nx + i;
            let k = level.diagonal[c];
            if k > 0.0 {
                x[c] = (b[c] + neighbour_sum(x, c, nx)) / k;
            }
        }
    }
}

/// r = b − A x on the cells with an equation, 0 elsewhere.
fn residual(level: &Level, x: &[f64], b: &[f64], r: &mut [f64]) {
    let nx = level.nx;
    for c in nx..level.nx * level.ny - nx {
        let k = level.diagonal[c];
        r[c] = if k > 0.0 {
            b[c] - (k * x[c] - neighbour_sum(x, c, nx))
        } else {
            0.0
        };
    }
}

/// The bilinear weights of fine cell (i, j) on its four coarse cells.
fn stencil(i: usize, j: usize, coarse_nx: usize) -> [(usize, f64); 4] {
    let ((i0, i1), (j0, j1)) = (parents(i), parents(j));
    [
        (j0 * coarse_nx + i0, 9.0 / 16.0),
        (j0 * coarse_nx + i1, 3.0 / 16.0),
        (j1 * coarse_nx + i0, 3.0 / 16.0),
        (j1 * coarse_nx + i1, 1.0 / 16.0),
    ]
}

/// b_coarse = Pᵀ r (module docs).
fn restrict(fine: &Level, coarse: &Level, r: &[f64], b: &mut [f64]) {
    for j in 1..fine.ny - 1 {
        for i in 1..fine.nx - 1 {
            let value = r[j * fine.nx + i];
            if value != 0.0 {
                for (c, w) in stencil(i, j, coarse.nx) {
                    b[c] += w * value;
                }
            }
        }
    }
}

/// x_fine += P x_coarse on the fine cells with an equation.
fn prolong(fine: &Level, coarse: &Level, x_coarse: &[f64], x: &mut [f64]) {
    for j in 1..fine.ny - 1 {
        for i in 1..fine.nx - 1 {
            let f = j * fine.nx + i;
            if fine.diagonal[f] > 0.0 {
                let stencil = stencil(i, j, coarse.nx);
                x[f] += stencil.iter().map(|&(c, w)| w * x_coarse[c]).sum::<f64>();
            }
        }
    }
}
