//! Test helper: the constraint rows of a cloth, as the cloth builder makes them.

use crate::constraints::row::DistanceRow;

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
