//! Graph colouring of the distance constraints: the Gauss-Seidel order in which
//! [`DistanceBatches`](super::batches::DistanceBatches) projects them several at a time.

use crate::constraints::batches::{MIN_CONTIGUOUS, contiguous_layout};
use crate::constraints::lane_positions::{CONSECUTIVE_ORDER, LANES, PAIRED_ORDER};
use crate::constraints::row::{DistanceRow, OVERFLOW_COLOUR};

/// Classes of at least this many constraints get colours of their own ([`colour_order`]).
pub(crate) const FRESH_COLOURS_FROM: usize = 64;

/// Colours from which classes share colours again ([`colour_order`]).
pub(crate) const FRESH_COLOURS_BELOW: u32 = 48;

/// A Gauss-Seidel order of `rows` by greedy graph colouring, each connected set of
/// constraints (a body: constraints that share no particle, directly or through others, with
/// the rest) coloured on its own ([`components`]), so that a body's colours, and so the order
/// its constraints are projected in, are those it has alone: two cloths step as each would
/// without the other. Within a component, the constraints are coloured class by class, a
/// class being the constraints with the same row offset b − a (a grid's horizontal, vertical
/// or diagonal edges), classes in the order their first constraint was created and each class
/// in order of a: each constraint gets the smallest colour (0 ..= 63) not yet used by a
/// constraint sharing one of its particles and, in a class of at least [`FRESH_COLOURS_FROM`]
/// constraints, above every colour used before the class in its component (while those are
/// fewer than [`FRESH_COLOURS_BELOW`]). In a class with |b − a| > 1, runs of consecutive a
/// prefer the class's first and second colour in turn when that colour is free: a row of a
/// grid's diagonals then takes one colour whole and the next row the other (the smallest free
/// colour alone would put each row's first diagonal into the colour of the row above); a grid's
/// vertical edges form one run and fall back to the smallest free colour, which alternates by
/// row. The order lists colour 0's constraints first (of every component), then colour 1's and
/// so on, so the constraints created first are projected first (a grid's edges of one direction
/// take two colours of long runs of consecutive rows, which the projection moves together).
/// Within a colour no two constraints share a particle (when no colour is left, a constraint
/// gets colour 63, whose constraints may share particles: still correct, only projected one at
/// a time), so their order does not change the positions (except the fixed direction coincident
/// particles are pushed apart in, which depends on the position in the order): they are sorted
/// by b − a, then a, and each run's constraints beyond a whole number of projection groups move
/// behind the colour's whole groups (`whole_groups_first`). The overflow colour keeps the
/// colouring order. `particles` is the number of particle rows. Returns the order and the
/// colour of each constraint in that order.
pub fn colour_order(rows: &[DistanceRow], particles: usize) -> (Vec<usize>, Vec<u8>) {
    let offset = |k: usize| i64::from(rows[k].b) - i64::from(rows[k].a);
    let mut used = vec![0u64; particles];
    let mut colour = vec![0u8; rows.len()];
    let mut colouring = Vec::with_capacity(rows.len());
    for mut component in components(rows, particles) {
        colour_component(rows, &mut component, &mut used, &mut colour);
        colouring.extend_from_slice(&component);
    }
    let mut order = colouring;
    order.sort_by_key(|&k| match colour[k] {
        OVERFLOW_COLOUR => (OVERFLOW_COLOUR, 0, 0),
        c => (c, offset(k), rows[k].a),
    });
    for same in order.chunk_by_mut(|&j, &k| colour[j] == colour[k]) {
        if colour[same[0]] != OVERFLOW_COLOUR {
            whole_groups_first(same, rows, particles);
        }
    }
    let colours = order.iter().map(|&k| colour[k]).collect();
    (order, colours)
}

/// Colours the constraints `component` (indices into `rows`, sharing no particle with any other
/// component), as [`colour_order`] describes: sorts `component` into colouring order (class by
/// class) and writes each one's colour. `used` holds the colours taken at each particle row.
fn colour_component(
    rows: &[DistanceRow],
    component: &mut [usize],
    used: &mut [u64],
    colour: &mut [u8],
) {
    let offset = |k: usize| i64::from(rows[k].b) - i64::from(rows[k].a);
    let mut first_of_offset = bevy::platform::collections::HashMap::new();
    for &k in component.iter() {
        first_of_offset.entry(offset(k)).or_insert(k);
    }
    component.sort_by_key(|&k| (first_of_offset[&offset(k)], rows[k].a));
    // A large class starts at a colour no earlier class used, so that its colours hold it alone
    // (a grid's border edges do not fall into another direction's colours).
    let mut fresh = 0u32;
    for class in component.chunk_by(|&j, &k| offset(j) == offset(k)) {
        let first = if class.len() >= FRESH_COLOURS_FROM && fresh < FRESH_COLOURS_BELOW {
            fresh
        } else {
            0
        };
        let allowed = !((1u64 << first) - 1);
        // Runs of consecutive a (a grid row's diagonals) prefer alternate colours, so that a
        // colour holds whole rows instead of the staircase smallest-free-colour leaves.
        let alternate = offset(class[0]).abs() > 1;
        let mut run = 0u32;
        for (n, &k) in class.iter().enumerate() {
            let (a, b) = (rows[k].a as usize, rows[k].b as usize);
            if n > 0 && rows[class[n - 1]].a + 1 != rows[k].a {
                run += 1;
            }
            let free = !(used[a] | used[b]) & allowed;
            let preferred = first + run % 2;
            let c = if alternate && free & (1 << preferred) != 0 {
                preferred
            } else {
                free.trailing_zeros()
            }
            .min(OVERFLOW_COLOUR as u32) as u8;
            used[a] |= 1 << c;
            used[b] |= 1 << c;
            colour[k] = c;
            fresh = fresh.max(u32::from(c) + 1);
        }
    }
}

/// The connected components of the constraint graph (particles as nodes, constraints as edges)
/// of `rows`, whose particle rows are below `particles`: each component's constraint indices
/// in increasing order, components in the order of their first constraint. One component
/// (a single body) comes back as all of `0 .. rows.len()`.
pub(crate) fn components(rows: &[DistanceRow], particles: usize) -> Vec<Vec<usize>> {
    // Union-find over particle rows, with path halving.
    let mut parent: Vec<u32> = (0..particles as u32).collect();
    fn find(parent: &mut [u32], mut i: u32) -> u32 {
        while parent[i as usize] != i {
            let grandparent = parent[parent[i as usize] as usize];
            parent[i as usize] = grandparent;
            i = grandparent;
        }
        i
    }
    for row in rows {
        let (a, b) = (find(&mut parent, row.a), find(&mut parent, row.b));
        if a != b {
            parent[a.max(b) as usize] = a.min(b);
        }
    }
    // Component number of each particle root, in the order of the components' first constraint.
    let mut number = vec![u32::MAX; particles];
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (k, row) in rows.iter().enumerate() {
        let root = find(&mut parent, row.a) as usize;
        if number[root] == u32::MAX {
            number[root] = out.len() as u32;
            out.push(Vec::new());
        }
        out[number[root] as usize].push(k);
    }
    out
}

/// Reorders one colour's constraints (sorted by b − a, then a) so that the projection's groups
/// of [`LANES`] are contiguous wherever the rows allow: the colour is cut into maximal runs whose
/// first particle rows step by 1 (a grid direction's edges) or, for b = a + 1, by 2 (every other
/// edge of a grid row), with the same b − a; each run's first multiple of [`LANES`] constraints
/// goes ahead of every run's remainder, each group of [`LANES`] in the lane order of its layout
/// ([`CONSECUTIVE_ORDER`], [`PAIRED_ORDER`]). Then come the remainders that fill the first lanes
/// of a contiguous group with holes (at least [`MIN_CONTIGUOUS`] rows, whose offsets are the
/// first ones of the lane order, and whose holes' rows are distinct particle rows below
/// `particles`), in lane order, and the other remainders follow in run order. (A run cut by the
/// groups would otherwise be gathered row by row in two groups.)
fn whole_groups_first(colour: &mut [usize], rows: &[DistanceRow], particles: usize) {
    let (a, offset) = (
        |k: usize| i64::from(rows[k].a),
        |k: usize| i64::from(rows[k].b) - i64::from(rows[k].a),
    );
    let continues = |j: usize, k: usize, step: i64| offset(j) == offset(k) && a(k) - a(j) == step;
    let (mut whole, mut tails, mut rest) = (Vec::with_capacity(colour.len()), vec![], vec![]);
    let mut start = 0;
    while start < colour.len() {
        let first = colour[start];
        let step = match colour.get(start + 1) {
            Some(&next) if continues(first, next, 2) && offset(first) == 1 => 2,
            _ => 1,
        };
        let mut end = start + 1;
        while end < colour.len() && continues(colour[end - 1], colour[end], step) {
            end += 1;
        }
        let cut = start + (end - start) / LANES * LANES;
        // Each whole group's rows in the projection's lane order.
        let order = if step == 2 {
            PAIRED_ORDER
        } else {
            CONSECUTIVE_ORDER
        };
        for group in colour[start..cut].chunks_exact(LANES) {
            whole.extend(order.map(|o| group[o as usize]));
        }
        let remainder = &colour[cut..end];
        let lanes = &order[..remainder.len()];
        let tail = (remainder.len() >= MIN_CONTIGUOUS)
            .then(|| lanes.iter().map(|&o| remainder.get(o as usize).copied()))
            .and_then(|tail| tail.collect::<Option<Vec<usize>>>())
            .filter(|tail| {
                let (a, b): (Vec<u32>, Vec<u32>) =
                    tail.iter().map(|&k| (rows[k].a, rows[k].b)).unzip();
                contiguous_layout(&a, &b, particles).is_some()
            });
        match tail {
            Some(tail) => tails.extend(tail),
            None => rest.extend_from_slice(remainder),
        }
        start = end;
    }
    whole.append(&mut tails);
    whole.append(&mut rest);
    colour.copy_from_slice(&whole);
}
