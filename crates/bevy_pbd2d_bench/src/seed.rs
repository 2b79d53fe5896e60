//! `--compare-seed`: runs `../shared/tools/seed-bench.js` (the reference demos' own code in
//! node) with the same parameters and compares its line with ours.

use std::path::PathBuf;
use std::process::Command;

use crate::args::Scene;
use crate::report::JsonObject;

/// Environment variable overriding the path of `seed-bench.js`.
pub const SCRIPT_ENV: &str = "PBD2D_SEED_BENCH";

/// The script: `$PBD2D_SEED_BENCH`, else `../shared/tools/seed-bench.js` relative to the
/// workspace root (this crate's manifest directory is `<root>/crates/bevy_pbd2d_bench`).
pub fn script_path() -> PathBuf {
    match std::env::var_os(SCRIPT_ENV) {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => {
            let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
            let root = root.canonicalize().unwrap_or(root);
            root.join("../shared/tools/seed-bench.js")
        }
    }
}

/// The script's positional parameters for `scene`, in its order:
/// `cloth width height steps iterations dt fixed`,
/// `fluid width height steps dt maxErrorPercent maxIterations viscosity`.
pub fn seed_args(scene: &Scene) -> Vec<String> {
    let mut out = vec![scene.name().to_string()];
    match scene {
        Scene::Cloth(c) => out.extend([
            c.width.to_string(),
            c.height.to_string(),
            c.steps.to_string(),
            c.iterations.to_string(),
            c.dt.to_string(),
            c.fixed.to_string(),
        ]),
        Scene::Fluid(f) => out.extend([
            f.width.to_string(),
            f.height.to_string(),
            f.steps.to_string(),
            f.dt.to_string(),
            f.max_error.to_string(),
            f.max_iterations.to_string(),
            f.viscosity.to_string(),
        ]),
    }
    out
}

/// Runs `node <script> <seed_args>` and returns its JSON line.
///
/// # Errors
/// A message when node cannot be started, fails or prints no JSON line.
pub fn run_seed(scene: &Scene) -> Result<String, String> {
    let script = script_path();
    let args = seed_args(scene);
    let shown = format!("node {} {}", script.display(), args.join(" "));
    let output = Command::new("node")
        .arg(&script)
        .args(&args)
        .output()
        .map_err(|e| format!("could not run `{shown}`: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`{shown}` failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('{'))
        .map(str::to_string)
        .ok_or_else(|| format!("`{shown}` printed no JSON line"))
}

/// The number after `"key":` in a one-line JSON object (`None` for `null`, a missing key or a
/// non-number).
pub fn json_number(line: &str, key: &str) -> Option<f64> {
    let pattern = format!("\"{key}\":");
    let start = line.find(&pattern)? + pattern.len();
    let rest = line[start..].trim_start();
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end].trim().parse().ok()
}

/// The figures put side by side in the comparison line, per scene.
fn compared_keys(scene: &Scene) -> &'static [&'static str] {
    match scene {
        Scene::Cloth(_) => &["max_relative_stretch", "sim_time"],
        Scene::Fluid(_) => &[
            "avg_iterations",
            "avg_density_error_percent",
            "avg_density",
            "top_y",
            "non_finite",
            "sim_time",
        ],
    }
}

/// `{"speedup": seed_ms/our_ms, "ms_per_step": …, "seed_ms_per_step": …, …}` with the main
/// figures of both lines side by side (`x` ours, `seed_x` the seed's).
pub fn comparison_line(scene: &Scene, threads: usize, ours: &str, seed: &str) -> String {
    let our_ms = json_number(ours, "ms_per_step").unwrap_or(f64::NAN);
    let seed_ms = json_number(seed, "ms_per_step").unwrap_or(f64::NAN);
    let mut o = JsonObject::new()
        .rounded("speedup", seed_ms / our_ms, 3)
        .string("scene", scene.name())
        .int("threads", threads as u64)
        .number("ms_per_step", our_ms)
        .number("seed_ms_per_step", seed_ms);
    for key in compared_keys(scene) {
        o = o
            .number(key, json_number(ours, key).unwrap_or(f64::NAN))
            .number(
                &format!("seed_{key}"),
                json_number(seed, key).unwrap_or(f64::NAN),
            );
    }
    o.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{ClothArgs, FluidArgs};

    #[test]
    fn positional_order_of_the_script() {
        assert_eq!(
            seed_args(&Scene::Cloth(ClothArgs::default())),
            ["cloth", "40", "30", "500", "5", "0.01", "2"]
        );
        assert_eq!(
            seed_args(&Scene::Fluid(FluidArgs::default())),
            ["fluid", "30", "30", "400", "0.005", "0.1", "100", "0.05"]
        );
    }

    #[test]
    fn numbers_are_found() {
        let line = r#"{"scene":"fluid","ms_per_step":12.5,"top_y":-0.25,"x":null,"sim_time":2.1}"#;
        assert_eq!(json_number(line, "ms_per_step"), Some(12.5));
        assert_eq!(json_number(line, "top_y"), Some(-0.25));
        assert_eq!(json_number(line, "sim_time"), Some(2.1));
        assert_eq!(json_number(line, "x"), None);
        assert_eq!(json_number(line, "scene"), None);
        assert_eq!(json_number(line, "missing"), None);
        let c = comparison_line(
            &Scene::Cloth(ClothArgs::default()),
            2,
            r#"{"ms_per_step":0.5,"max_relative_stretch":0.01,"sim_time":5.2}"#,
            r#"{"ms_per_step":2,"max_relative_stretch":0.02,"sim_time":5.2}"#,
        );
        assert!(
            c.starts_with(r#"{"speedup":4,"scene":"cloth","threads":2,"#),
            "{c}"
        );
    }
}
