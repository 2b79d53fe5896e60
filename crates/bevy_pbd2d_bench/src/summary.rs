//! `--repeat N`: the summary line of N interleaved runs (ours, then the seed's, N times).
//!
//! This VM's speed changes over tens of milliseconds, longer than one of our cloth runs (500
//! steps take ~30 ms; the seed's take ~300 ms), so a single pair of runs can put our run in a
//! slow moment and the seed's across several. The median over interleaved pairs compares the
//! two at the machine's usual speed; the pairs' own ratios give the spread.

use crate::report::{JsonObject, range};

/// Median of `values` (the mean of the middle two for an even count; NaN when empty).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// `{"repeat": N, "scene": …, "ms_per_step_median": …, "ms_per_step_min": …, …}`: our
/// `ms_per_step` over the runs and, when `seed` is not empty (one per run), the seed's median,
/// the ratio of the medians (`speedup_median`) and the smallest and largest ratio of a pair.
pub fn summary_line(scene: &str, threads: usize, ours: &[f64], seed: &[f64]) -> String {
    let (min, max) = range(ours.iter().copied());
    let mut o = JsonObject::new()
        .int("repeat", ours.len() as u64)
        .string("scene", scene)
        .int("threads", threads as u64)
        .rounded("ms_per_step_median", median(ours), 4)
        .rounded("ms_per_step_min", min, 4)
        .rounded("ms_per_step_max", max, 4);
    if !seed.is_empty() {
        let ratios: Vec<f64> = seed.iter().zip(ours).map(|(s, o)| s / o).collect();
        let seed_median = median(seed);
        o = o
            .rounded("seed_ms_per_step_median", seed_median, 4)
            .rounded("speedup_median", seed_median / median(ours), 3)
            .rounded(
                "speedup_pair_min",
                ratios.iter().copied().fold(f64::INFINITY, f64::min),
                3,
            )
            .rounded(
                "speedup_pair_max",
                ratios.iter().copied().fold(0.0, f64::max),
                3,
            );
    }
    o.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::json_number;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn summary_of_pairs() {
        let line = summary_line("cloth", 2, &[0.1, 0.05, 0.08], &[0.9, 0.7, 0.8]);
        let n = |key| json_number(&line, key).unwrap();
        assert_eq!(n("repeat"), 3.0);
        assert_eq!(n("ms_per_step_median"), 0.08);
        assert_eq!(n("ms_per_step_min"), 0.05);
        assert_eq!(n("ms_per_step_max"), 0.1);
        assert_eq!(n("seed_ms_per_step_median"), 0.8);
        assert_eq!(n("speedup_median"), 10.0);
        assert_eq!(n("speedup_pair_min"), 9.0);
        assert_eq!(n("speedup_pair_max"), 14.0);
        let alone = summary_line("fluid", 1, &[1.0, 3.0], &[]);
        assert_eq!(json_number(&alone, "ms_per_step_median"), Some(2.0));
        assert!(!alone.contains("speedup"), "{alone}");
    }
}
