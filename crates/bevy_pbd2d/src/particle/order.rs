//! The order of the solver's rows. Gauss-Seidel and the fluid's sums visit rows in order, so
//! the order decides the bits of the result. Rows are rebuilt in the order of the entities'
//! index components (the row each had before, saved and loaded with the world like any
//! component), new entities last in query order: rows keep their order across rebuilds and
//! across a world saved and loaded, whatever order the ECS stores the entities in.

use bevy::prelude::*;

/// Sorts `rows` of (group, previous index, entity) by group, then by previous index
/// (`u32::MAX` for an entity new to the rows), keeping the given (query) order among equals.
pub(crate) fn stable_rows<G: Ord + Copy>(rows: &mut [(G, u32, Entity)]) {
    rows.sort_by_key(|&(group, previous, _)| (group, previous));
}

/// The entities of `(previous index, entity)` pairs in previous-index order, new ones
/// (`u32::MAX`) last in the given order: [`stable_rows`] with one group.
pub(crate) fn in_previous_order(items: impl Iterator<Item = (u32, Entity)>) -> Vec<Entity> {
    let mut rows: Vec<((), u32, Entity)> = items.map(|(previous, e)| ((), previous, e)).collect();
    stable_rows(&mut rows);
    rows.into_iter().map(|(_, _, entity)| entity).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previous_rows_keep_their_order_and_new_ones_follow_in_query_order() {
        let e = |k: u32| Entity::from_raw_u32(k).unwrap();
        let mut rows = vec![
            (1, u32::MAX, e(10)),
            (0, 5, e(11)),
            (1, 2, e(12)),
            (0, u32::MAX, e(13)),
            (1, u32::MAX, e(14)),
            (0, 1, e(15)),
        ];
        stable_rows(&mut rows);
        let order: Vec<Entity> = rows.iter().map(|r| r.2).collect();
        assert_eq!(order, [e(15), e(11), e(13), e(12), e(10), e(14)]);
    }
}
