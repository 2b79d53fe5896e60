//! Tests of the graph colouring: no two constraints of a colour share a particle; grids take few colours of long runs.

use super::colouring::*;
use super::row::DistanceRow;
use super::row::OVERFLOW_COLOUR;

#[test]
fn colour_order_separates_constraints_that_share_particles() {
    let width = 7;
    let rows = cloth_rows(width, 5);
    let (order, colours) = colour_order(&rows, 35);
    assert!(
        colours.is_sorted(),
        "each colour's constraints are consecutive"
    );
    assert_eq!(colours.len(), rows.len());
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..rows.len()).collect::<Vec<_>>(), "a permutation");
    // Recolour along the order: each colour run must touch every particle at most once.
    let mut seen = std::collections::HashSet::new();
    let mut runs = 1;
    for &k in &order {
        let r = rows[k];
        if seen.contains(&r.a) || seen.contains(&r.b) {
            seen.clear();
            runs += 1;
        }
        seen.insert(r.a);
        seen.insert(r.b);
    }
    assert!(runs <= 12, "{runs} runs of independent constraints");
    // Directions in the order they were created (horizontal, vertical, then the cells'
    // first and second diagonals) are projected in that order, on the whole: a border
    // particle's free lower colours are taken by later directions too.
    let mean_colour = |offset: u32| {
        let c: Vec<f32> = (0..order.len())
            .filter(|&i| rows[order[i]].b - rows[order[i]].a == offset)
            .map(|i| f32::from(colours[i]))
            .collect();
        c.iter().sum::<f32>() / c.len() as f32
    };
    let means = [1, width, width + 1, width - 1].map(mean_colour);
    assert!(means.is_sorted_by(|a, b| a < b), "mean colours {means:?}");
}

#[test]
fn large_direction_classes_get_colours_of_their_own() {
    let rows = cloth_rows(20, 10);
    let (order, colours) = colour_order(&rows, 200);
    let mut offsets_of_colour = std::collections::BTreeMap::<u8, Vec<u32>>::new();
    for (&k, &c) in order.iter().zip(&colours) {
        let offsets = offsets_of_colour.entry(c).or_default();
        let offset = rows[k].b - rows[k].a;
        if !offsets.contains(&offset) {
            offsets.push(offset);
        }
    }
    assert!(offsets_of_colour.len() <= 10, "{offsets_of_colour:?}");
    assert!(
        offsets_of_colour.values().all(|o| o.len() == 1),
        "one direction per colour: {offsets_of_colour:?}"
    );
}

#[test]
fn no_colour_below_the_overflow_shares_a_particle() {
    let rows = cloth_rows(40, 30);
    let (order, colours) = colour_order(&rows, 1200);
    let mut users = std::collections::HashMap::<(u8, u32), usize>::new();
    for (&k, &c) in order.iter().zip(&colours) {
        assert_ne!(c, OVERFLOW_COLOUR, "a grid needs few colours");
        for particle in [rows[k].a, rows[k].b] {
            if let Some(other) = users.insert((c, particle), k) {
                panic!("colour {c}: constraints {other} and {k} share particle {particle}");
            }
        }
    }
}

#[test]
fn a_grid_rows_diagonals_share_a_colour_with_rows_of_its_parity() {
    // The smallest free colour alone leaves staircases here: a row's first diagonal joins
    // the colour of the row above, shifting the rows below it by one.
    let (width, height) = (40, 30);
    let rows = cloth_rows(width, height);
    let (order, colours) = colour_order(&rows, (width * height) as usize);
    for offset in [width + 1, width - 1] {
        let mut parity_of_colour = std::collections::BTreeMap::<u8, Vec<u32>>::new();
        for (&k, &c) in order.iter().zip(&colours) {
            if rows[k].b - rows[k].a == offset {
                let parity = (rows[k].a / width) % 2;
                let parities = parity_of_colour.entry(c).or_default();
                if !parities.contains(&parity) {
                    parities.push(parity);
                }
            }
        }
        assert_eq!(
            parity_of_colour.len(),
            2,
            "offset {offset}: {parity_of_colour:?}"
        );
        assert!(
            parity_of_colour.values().all(|p| p.len() == 1),
            "offset {offset}: {parity_of_colour:?}"
        );
    }
}

/// The rigid constraint rows of a `width` × `height` [`ClothBuilder`](crate::scenes::cloth::ClothBuilder)
/// grid, particle rows numbered row by row.
pub(crate) fn cloth_rows(width: u32, height: u32) -> Vec<DistanceRow> {
    let builder = crate::scenes::cloth::ClothBuilder {
        width,
        height,
        ..Default::default()
    };
    builder
        .constraint_pairs()
        .into_iter()
        .map(|(a, b, rest_length)| DistanceRow {
            a,
            b,
            rest_length,
            compliance: 0.0,
        })
        .collect()
}

/// `rows` with every particle row shifted by `by`.
fn shifted(rows: &[DistanceRow], by: u32) -> Vec<DistanceRow> {
    rows.iter()
        .map(|r| DistanceRow {
            a: r.a + by,
            b: r.b + by,
            ..*r
        })
        .collect()
}

/// Each constraint's colour, by constraint index.
fn colour_of(rows: &[DistanceRow], particles: usize) -> Vec<u8> {
    let (order, colours) = colour_order(rows, particles);
    let mut of = vec![0; rows.len()];
    for (&k, &c) in order.iter().zip(&colours) {
        of[k] = c;
    }
    of
}

#[test]
fn each_body_gets_the_colours_it_has_alone() {
    // Two grids of different widths (so their direction classes differ), the second after the
    // first in rows and constraints, and a single pair.
    let (a, b) = (cloth_rows(12, 9), cloth_rows(10, 8));
    let mut rows = a.clone();
    rows.extend(shifted(&b, 12 * 9));
    rows.push(DistanceRow {
        a: 12 * 9 + 80,
        b: 12 * 9 + 81,
        ..b[0]
    });
    let particles = 12 * 9 + 80 + 2;
    let parts = components(&rows, particles);
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[0], (0..a.len()).collect::<Vec<_>>());
    assert_eq!(parts[1], (a.len()..a.len() + b.len()).collect::<Vec<_>>());
    assert_eq!(parts[2], vec![rows.len() - 1]);
    let both = colour_of(&rows, particles);
    assert_eq!(both[..a.len()], colour_of(&a, 12 * 9));
    assert_eq!(both[a.len()..a.len() + b.len()], colour_of(&b, 80));
    assert_eq!(both[rows.len() - 1], 0);
    // Together they took colours the first grid alone would have given the second's classes
    // differently: the test would pass trivially if both were coloured alike anyway.
    let mut joined = a.clone();
    joined.extend(shifted(&b, 12 * 9));
    joined.push(DistanceRow {
        a: 0,
        b: 12 * 9,
        ..b[0]
    });
    let one = colour_of(&joined, 12 * 9 + 80);
    assert_ne!(one[a.len()..a.len() + b.len()], colour_of(&b, 80));
}
