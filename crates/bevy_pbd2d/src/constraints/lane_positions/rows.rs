//! Which particle rows the lanes of a group of constraints join.

/// Constraints projected together: the lanes of an `f32x8` (two SSE vectors, one AVX vector).
pub const LANES: usize = 8;

/// Which of a consecutive group's rows each lane takes: lane l joins rows a + `ORDER`\[l\] and
/// b + `ORDER`\[l\]. Four rows fill one AVX register, and AVX shuffles stay within 128-bit
/// halves: in this order the rows of two registers separate into x and y lanes, and back, with
/// in-half shuffles only.
pub(crate) const CONSECUTIVE_ORDER: [u32; LANES] = [0, 1, 4, 5, 2, 3, 6, 7];

/// Which pair of a paired group each lane takes: lane l joins rows a + 2 `ORDER`\[l\] and
/// a + 2 `ORDER`\[l\] + 1 (the reason is that of [`CONSECUTIVE_ORDER`]).
pub(crate) const PAIRED_ORDER: [u32; LANES] = [0, 2, 4, 6, 1, 3, 5, 7];

/// The particle rows of a group of constraints; lane l joins particles a(l) and b(l).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GroupRows {
    /// a(l) = `a[l]`, b(l) = `b[l]`; lanes past the group's count repeat lane 0.
    Scattered {
        /// First particle of each lane.
        a: [u32; LANES],
        /// Second particle of each lane.
        b: [u32; LANES],
    },
    /// a(l) = `a` + o(l), b(l) = `b` + o(l) (o = [`CONSECUTIVE_ORDER`]; e.g. a grid's vertical
    /// edges). Lanes past a smaller group's count are holes: their rows, distinct particle rows
    /// too, are read and written back unchanged.
    Consecutive {
        /// a(0).
        a: u32,
        /// b(0).
        b: u32,
    },
    /// a(l) = `a` + 2 o(l), b(l) = a(l) + 1 (o = [`PAIRED_ORDER`]; e.g. every other edge of a
    /// row); holes as for `Consecutive`.
    Paired {
        /// a(0).
        a: u32,
    },
}

impl GroupRows {
    /// a(l) and b(l) of every lane.
    pub(crate) fn lanes(&self) -> ([u32; LANES], [u32; LANES]) {
        match *self {
            Self::Scattered { a, b } => (a, b),
            Self::Consecutive { a, b } => (
                CONSECUTIVE_ORDER.map(|o| a + o),
                CONSECUTIVE_ORDER.map(|o| b + o),
            ),
            Self::Paired { a } => (
                PAIRED_ORDER.map(|o| a + 2 * o),
                PAIRED_ORDER.map(|o| a + 2 * o + 1),
            ),
        }
    }
}

/// `v[start .. start + count]` (`count` ≤ [`LANES`]); the unused lanes repeat the first entry
/// (their results are dropped).
#[inline(always)]
pub(crate) fn lane_rows(v: &[u32], start: usize, count: usize) -> [u32; LANES] {
    let mut lanes = [v[start]; LANES];
    lanes[..count].copy_from_slice(&v[start..start + count]);
    lanes
}
