//! Lines: the straight runs of a grid of distance constraints (a cloth's rows and columns),
//! solved directly like [`chains`](super::chains) when
//! [`SolverSettings::direct_lines`](crate::dynamics::SolverSettings::direct_lines) is on.
//!
//! Gauss-Seidel carries a correction about one constraint per projection, so a rigid cloth
//! hanging from two corners stays stretched where the whole weight meets the pins: the
//! reference cloth (40 × 30, α = 0) stretches 1.6 % with 10 substeps of one sweep and 28 % with
//! one of five. A line of a grid is a path, and its constraints' system matrix is tridiagonal
//! however many other constraints its particles are in; solving each line exactly in turn
//! (line, or block, Gauss-Seidel: the lines are the blocks, solved with Thomas' algorithm as a
//! chain is, Deul et al. 2018, "Direct Position-Based Solver for Stiff Rods") carries the
//! weight along a whole row or column in one sweep. The same cloth then stretches 0.09 % with
//! 10 substeps of one iteration and 0.36 % with 5 (`bevy_pbd2d_bench cloth --substeps N
//! --iterations 1 --direct-lines on`; `tests/lines.rs` asserts under 1 %). With fewer substeps
//! the lines next to the pins carry more than a linear step can take (the chains' stiffness
//! limit, [`chains`](super::chains)) and fall back to Gauss-Seidel there: 7.8 % with 4, 13 %
//! with 3.
//!
//! Cost: Thomas' recurrence runs along a line, one constraint after another, so the lines of
//! one class are solved 8 side by side (module `line_bundles`), with their
//! positions gathered and scattered lane by lane; a line constraint still costs several times
//! a batched Gauss-Seidel projection. Per step of the reference cloth (release build, 2
//! threads, 2 runs each): 5 substeps with lines (0.36 %) 0.22–0.24 ms against 0.18–0.27 ms for
//! 20 of Gauss-Seidel (0.43 %); 10 with lines (0.09 %) 0.35–0.39 ms; the reference's 1 × 5
//! (28 %) 0.041–0.049 ms. Loading a bundle's particles four rows per vector where they are
//! consecutive (a cloth's columns), as the Gauss-Seidel batches do, is what is left to gain.
//!
//! Hard drags fold it: the reference cloth at 10 × 1 with a bottom particle pulled 1 m down and
//! 0.5 m aside for 2 s, then let go, is still 54 % stretched 3 s later (Gauss-Seidel: 6.6 %),
//! with 4 inverted cells. The stiffer cloth passed through itself under the drag, and a fold is
//! a state distance constraints cannot undo (the stretch is not an unconverged solve: with the
//! stiffness limit lowered from 0.6 to 0.03 it stays). With self-collision
//! ([`SolidContacts`](crate::solid_contacts::SolidContacts), particles of 9 cm) it cannot fold
//! and recovers to 2.5 % (`tests/lines.rs`). Cloth that is dragged hard wants self-collision.
//!
//! A line is a maximal path of at least two constraints of one class (the same particle row
//! offset |b − a|, as the grid's horizontal, vertical or diagonal edges have), each starting
//! where the one before ends. Classes are taken in the order their first constraint was
//! created, and a line is taken only if none of its particles is in two lines already: a
//! cloth's rows and columns become lines, its diagonals (lines there did not lower the stretch
//! further in our trials, and cost more) stay with Gauss-Seidel, which projects them before
//! the lines in each sweep.

use crate::constraints::row::DistanceRow;

/// How many lines may pass through one particle (module docs).
const LINES_PER_PARTICLE: u8 = 2;

/// Splits the rows `candidates` (indices into `rows`, in creation order) into lines (module
/// docs) and the rest. Returns each line's rows in path order with the path's first particle
/// (the form of [`find_chains`](super::chains::find_chains)), lines of one class after another
/// in class order, and the rows left, in their order. `particles` is the number of particle
/// rows.
pub(crate) fn find_lines(
    rows: &[DistanceRow],
    candidates: &[usize],
    particles: usize,
) -> (Vec<(u32, Vec<usize>)>, Vec<usize>) {
    let span = |k: usize| {
        let r = rows[k];
        (r.a.min(r.b), r.a.max(r.b))
    };
    // Classes in the order of their first constraint, each with its rows in creation order.
    let mut classes: Vec<(u32, Vec<usize>)> = Vec::new();
    for &k in candidates {
        let (low, high) = span(k);
        if low == high || high as usize >= particles {
            continue;
        }
        let offset = high - low;
        match classes.iter_mut().find(|(o, _)| *o == offset) {
            Some((_, members)) => members.push(k),
            None => classes.push((offset, vec![k])),
        }
    }
    let mut through = vec![0u8; particles];
    let mut in_line = vec![false; rows.len()];
    let mut lines = Vec::new();
    for (_, members) in &classes {
        // The class's row starting at each particle (the first, if a pair is doubled: the
        // others stay with Gauss-Seidel).
        let mut starting = std::collections::HashMap::with_capacity(members.len());
        let mut ending = std::collections::HashSet::with_capacity(members.len());
        for &k in members {
            let (low, high) = span(k);
            if let std::collections::hash_map::Entry::Vacant(slot) = starting.entry(low) {
                slot.insert(k);
                ending.insert(high);
            }
        }
        for &k in members {
            let (low, _) = span(k);
            // A path starts where no row of the class ends.
            if starting.get(&low) != Some(&k) || ending.contains(&low) {
                continue;
            }
            let mut path = vec![k];
            let mut at = span(k).1;
            while let Some(&next) = starting.get(&at) {
                path.push(next);
                at = span(next).1;
            }
            let free = |p: u32| through[p as usize] < LINES_PER_PARTICLE;
            if path.len() < 2 || !path.iter().all(|&k| free(span(k).0) && free(span(k).1)) {
                continue;
            }
            through[low as usize] += 1;
            for &k in &path {
                through[span(k).1 as usize] += 1;
                in_line[k] = true;
            }
            lines.push((low, path));
        }
    }
    let rest = candidates
        .iter()
        .copied()
        .filter(|&k| !in_line[k])
        .collect();
    (lines, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(a: u32, b: u32) -> DistanceRow {
        DistanceRow {
            a,
            b,
            rest_length: 1.0,
            compliance: 0.0,
        }
    }

    /// The reference cloth's rows for a `w` × `h` grid: horizontal, vertical, diagonal pairs.
    pub(super) fn grid(w: u32, h: u32) -> Vec<DistanceRow> {
        let mut rows = Vec::new();
        for i in 0..h {
            for j in 0..w - 1 {
                rows.push(row(i * w + j, i * w + j + 1));
            }
        }
        for i in 0..h - 1 {
            for j in 0..w {
                rows.push(row(i * w + j, i * w + j + w));
            }
        }
        for i in 0..h - 1 {
            for j in 0..w - 1 {
                rows.push(row(i * w + j, i * w + j + w + 1));
                rows.push(row(i * w + j + 1, i * w + j + w));
            }
        }
        rows
    }

    #[test]
    fn a_grids_rows_and_columns_are_lines_and_its_diagonals_are_left() {
        let (w, h) = (5u32, 4u32);
        let rows = grid(w, h);
        let all: Vec<usize> = (0..rows.len()).collect();
        let (lines, rest) = find_lines(&rows, &all, (w * h) as usize);
        assert_eq!(lines.len(), (h + w) as usize, "{lines:?}");
        let horizontal = (w - 1) as usize;
        for (i, (start, path)) in lines[..h as usize].iter().enumerate() {
            assert_eq!(*start, i as u32 * w);
            let first = i * horizontal;
            assert_eq!(*path, (first..first + horizontal).collect::<Vec<_>>());
        }
        let vertical_rows = (h * (w - 1)) as usize;
        for (j, (start, path)) in lines[h as usize..].iter().enumerate() {
            assert_eq!(*start, j as u32);
            let column: Vec<usize> = (0..(h - 1) as usize)
                .map(|i| vertical_rows + i * w as usize + j)
                .collect();
            assert_eq!(*path, column);
        }
        let diagonals = vertical_rows + ((h - 1) * w) as usize;
        assert_eq!(rest, (diagonals..rows.len()).collect::<Vec<_>>());
    }

    #[test]
    fn bundled_lines_move_exactly_as_lines_solved_one_after_another() {
        // 11 × 4: 4 rows of 10 constraints (a bundle of 4 lanes), 11 columns of 3 (8 + 3),
        // unequal masses, a pinned corner, some compliance, a coincident pair and one column
        // pulled far enough for the stiffness fallback.
        use crate::constraints::chains::Chains;
        use bevy::prelude::Vec2;
        let (w, h) = (11u32, 4u32);
        let mut rows = grid(w, h);
        for (k, r) in rows.iter_mut().enumerate() {
            r.rest_length = if r.b - r.a == 1 || r.b - r.a == w {
                0.1
            } else {
                0.1414
            };
            r.compliance = if k % 3 == 0 { 1e-4 } else { 0.0 };
        }
        let n = (w * h) as usize;
        let mut x: Vec<Vec2> = (0..n)
            .map(|i| {
                let (row, col) = ((i / w as usize) as f32, (i % w as usize) as f32);
                Vec2::new(0.1 * col + 0.003 * (i as f32 * 1.3).sin(), -0.1 * row)
            })
            .collect();
        x[5 + w as usize] = x[5]; // a coincident pair in column 5
        x[3 * w as usize + 9].y -= 0.08; // column 9 pulled: a stiff step
        let inv_mass: Vec<f32> = (0..n)
            .map(|i| if i == 0 { 0.0 } else { 1.0 + (i % 4) as f32 })
            .collect();
        let all: Vec<usize> = (0..rows.len()).collect();
        let (lines, _) = find_lines(&rows, &all, n);
        let mut bundled = Chains::new(&rows, &[], &lines);
        let mut one_by_one = Chains::new(&rows, &lines, &[]);
        let m = bundled.len();
        let (mut x1, mut l1) = (x.clone(), vec![1e-4f32; m]);
        let (mut x2, mut l2) = (x.clone(), vec![1e-4f32; m]);
        for _ in 0..3 {
            bundled.solve(&mut x1, &inv_mass, &mut l1, 1e4);
            one_by_one.solve(&mut x2, &inv_mass, &mut l2, 1e4);
        }
        assert_ne!(x1, x, "the lines moved the particles");
        assert_eq!(x1, x2, "positions");
        assert_eq!(l1, l2, "λ");
    }

    #[test]
    fn lone_rows_doubled_pairs_and_reversed_rows_are_handled() {
        // A path given with one row reversed (3 → 2), a lone row, and a doubled pair.
        let rows = [
            row(1, 2),
            row(3, 2),
            row(3, 4),
            row(7, 9),
            row(5, 6),
            row(5, 6),
        ];
        let all: Vec<usize> = (0..rows.len()).collect();
        let (lines, rest) = find_lines(&rows, &all, 10);
        assert_eq!(lines, vec![(1, vec![0, 1, 2])]);
        // The lone row of offset 2 and both copies of the doubled pair (a path of one row
        // and its copy, which is no line) stay with Gauss-Seidel.
        assert_eq!(rest, vec![3, 4, 5]);
    }
}
