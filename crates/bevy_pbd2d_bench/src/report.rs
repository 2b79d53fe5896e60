//! The figures of the final state and the one-line JSON report.
//!
//! Keys and figures are those of `../shared/tools/seed-bench.js`, computed the same way and
//! rounded like its `+x.toFixed(n)`; then the bench's own: `threads`, `peak_rss_mb`,
//! `state_hash`, `phases_ms`, `plugin_step_ms` and `cpu_ms_per_step`.

use bevy::prelude::*;
use bevy_pbd2d::constraints::ConstraintState;
use bevy_pbd2d::fluid::NeighborState;
use bevy_pbd2d::fluid::density::DensityState;
use bevy_pbd2d::particle::SolverState;
use bevy_pbd2d::prelude::{FluidSettings, PbdStats};

use crate::args::{ClothArgs, FluidArgs, GridArg};
use crate::measure::{Measurement, PhaseAverages, peak_rss_mb};
use crate::scene::dam_break_builder;

/// A JSON object written field by field on one line.
#[derive(Debug)]
pub struct JsonObject {
    buf: String,
}

impl Default for JsonObject {
    fn default() -> Self {
        Self::new()
    }
}

impl JsonObject {
    /// An empty object.
    pub fn new() -> Self {
        Self {
            buf: String::from("{"),
        }
    }

    fn key(&mut self, key: &str) {
        if self.buf.len() > 1 {
            self.buf.push(',');
        }
        self.buf.push('"');
        self.buf.push_str(key);
        self.buf.push_str("\":");
    }

    /// A string field (no escaping needed for the bench's values: they are checked).
    pub fn string(mut self, key: &str, value: &str) -> Self {
        debug_assert!(!value.contains(['"', '\\']));
        self.key(key);
        self.buf.push('"');
        self.buf.push_str(value);
        self.buf.push('"');
        self
    }

    /// An integer field.
    pub fn int(mut self, key: &str, value: u64) -> Self {
        self.key(key);
        self.buf.push_str(&value.to_string());
        self
    }

    /// A number field rounded to `decimals` places, like JavaScript's `+x.toFixed(decimals)`;
    /// non-finite values become `null`, as in `JSON.stringify`.
    pub fn rounded(mut self, key: &str, value: f64, decimals: usize) -> Self {
        self.key(key);
        self.buf.push_str(&format_number(round(value, decimals)));
        self
    }

    /// A number field, shortest round-trip form; `null` if not finite.
    pub fn number(mut self, key: &str, value: f64) -> Self {
        self.key(key);
        self.buf.push_str(&format_number(value));
        self
    }

    /// A nested object.
    pub fn object(mut self, key: &str, value: JsonObject) -> Self {
        self.key(key);
        self.buf.push_str(&value.finish());
        self
    }

    /// The object's text.
    pub fn finish(mut self) -> String {
        self.buf.push('}');
        self.buf
    }
}

/// `value` rounded to `decimals` places (half away from zero on the exact binary value, as
/// `toFixed` does).
pub fn round(value: f64, decimals: usize) -> f64 {
    if !value.is_finite() {
        return value;
    }
    format!("{value:.decimals$}").parse().unwrap_or(value)
}

/// A number as JSON: shortest round-trip decimal, `0` for −0, `null` when not finite.
pub fn format_number(value: f64) -> String {
    if !value.is_finite() {
        "null".into()
    } else if value == 0.0 {
        "0".into()
    } else {
        format!("{value}")
    }
}

/// 64-bit FNV-1a.
#[derive(Debug, Clone, Copy)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    /// Hashes `bytes` into the state.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// The hash value.
    pub fn finish(self) -> u64 {
        self.0
    }
}

/// FNV-1a (64 bit) over the final state in solver row order: for each row i of
/// [`SolverState`], the little-endian bytes of the `f32` bit patterns of x.x, x.y, v.x, v.y.
/// Identical for bitwise identical states, whatever the thread count.
pub fn state_hash(state: &SolverState) -> u64 {
    let mut h = Fnv1a::default();
    for (x, v) in state.x.iter().zip(&state.v) {
        for c in [x.x, x.y, v.x, v.y] {
            h.write(&c.to_bits().to_le_bytes());
        }
    }
    h.finish()
}

/// JavaScript's `Math.max` on two numbers: NaN if either is NaN.
fn js_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// The largest |‖x_a − x_b‖ − d| / d over the distance constraints (final positions).
pub fn max_relative_stretch(state: &SolverState, constraints: &ConstraintState) -> f64 {
    constraints.rows.iter().fold(0.0, |max, c| {
        let (p, q) = (
            state.x[c.a as usize].as_dvec2(),
            state.x[c.b as usize].as_dvec2(),
        );
        let d = c.rest_length as f64;
        js_max(max, ((p - q).length() - d).abs() / d)
    })
}

fn phases(p: &PhaseAverages) -> JsonObject {
    JsonObject::new()
        .rounded("predict", p.predict, 4)
        .rounded("neighbors", p.neighbors, 4)
        .rounded("solve", p.solve, 4)
        .rounded("grid", p.grid, 4)
        .rounded("velocities", p.velocities, 4)
        .rounded("viscosity", p.viscosity, 4)
        .rounded("contacts", p.contacts, 4)
        .rounded("sync", p.sync, 4)
}

/// The bench's own fields, appended to both scenes' lines.
fn extras(o: JsonObject, threads: usize, state: &SolverState, m: &Measurement) -> JsonObject {
    o.int("threads", threads as u64)
        .rounded("peak_rss_mb", peak_rss_mb().unwrap_or(f64::NAN), 1)
        .string("state_hash", &format!("{:016x}", state_hash(state)))
        .object("phases_ms", phases(&m.phases))
        .rounded("plugin_step_ms", m.plugin_step_ms, 4)
        .rounded("cpu_ms_per_step", m.cpu_ms_per_step.unwrap_or(f64::NAN), 4)
}

/// The cloth line: `seed-bench.js cloth`'s keys, then the bench's.
pub fn cloth_line(world: &World, c: &ClothArgs, threads: usize, m: &Measurement) -> String {
    let state = world.resource::<SolverState>();
    let stats = world.resource::<PbdStats>();
    let o = JsonObject::new()
        .string("scene", "cloth")
        .int("width", c.width as u64)
        .int("height", c.height as u64)
        .int("particles", state.len() as u64)
        .int(
            "constraints",
            world.resource::<ConstraintState>().rows.len() as u64,
        )
        .int("iterations", c.iterations as u64)
        .int("substeps", c.substeps as u64)
        .string("direct_lines", if c.direct_lines { "on" } else { "off" })
        .number("dt", c.dt)
        .int("steps", m.steps as u64)
        .rounded("ms_per_step", m.ms_per_step, 4)
        .rounded(
            "max_relative_stretch",
            max_relative_stretch(state, world.resource::<ConstraintState>()),
            4,
        )
        .rounded("sim_time", stats.sim_time, 4);
    extras(o, threads, state, m).finish()
}

/// Final-state figures of the fluid, as `seed-bench.js` computes them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FluidFigures {
    /// Fluid particles whose position has a NaN or infinite component.
    pub non_finite: u64,
    /// Highest fluid particle y (m).
    pub top_y: f64,
    /// Mean density of the fluid particles (kg/m²), from the last density pass.
    pub avg_density: f64,
    /// 100 Σ max(ρᵢ − ρ0, 0) / (N ρ0): the demo's own stopping measure (%).
    pub avg_density_error_percent: f64,
}

/// Computes [`FluidFigures`] from the solver rows `0..fluid_count` and their densities.
pub fn fluid_figures(
    state: &SolverState,
    densities: &DensityState,
    rest_density: f64,
) -> FluidFigures {
    let n = state.fluid_count;
    let (mut non_finite, mut top, mut rho, mut err) = (0, f64::NEG_INFINITY, 0.0, 0.0);
    for i in 0..n {
        let p = state.x[i];
        if !p.is_finite() {
            non_finite += 1;
        }
        top = js_max(top, p.y as f64);
        let density = densities.rows.get(i).map_or(f64::NAN, |r| r.density as f64);
        rho += density;
        err += (density - rest_density).max(0.0);
    }
    let n = n as f64;
    FluidFigures {
        non_finite,
        top_y: top,
        avg_density: rho / n,
        avg_density_error_percent: 100.0 * err / n / rest_density,
    }
}

/// Fluid neighbours per fluid particle in the last step's lists, the share of the density
/// solve's fluid slot lanes they fill (its passes take the rows 8 at a time and walk their
/// lists side by side, so a group costs as many slots as its longest list), and the lanes,
/// fluid and boundary, per particle.
fn neighbour_figures(neighbors: &NeighborState, rows: usize) -> (f64, f64, f64) {
    let fill = neighbors.slot_fill();
    let per_particle = |n: u64| n as f64 / rows.max(1) as f64;
    (
        per_particle(fill.fluid_pairs),
        fill.fluid_pairs as f64 / fill.fluid_lanes.max(1) as f64,
        per_particle(fill.fluid_lanes + fill.boundary_lanes),
    )
}

/// The fluid's median height over an incompressible one's
/// (`DamBreakBuilder::median_height_ratio`).
pub fn median_height_ratio(world: &World, f: &FluidArgs) -> Option<f32> {
    let settings = world.resource::<FluidSettings>();
    let state = world.resource::<SolverState>();
    dam_break_builder(f).median_height_ratio(settings, &state.x[..state.fluid_count])
}

/// The least and the most of `values` (∞ and −∞ when empty).
pub fn range(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    (values.into_iter()).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

/// The fluid particles' root-mean-square speed (m/s): what is left of their motion in a
/// settled pool.
fn rms_speed(state: &SolverState) -> f64 {
    let v = &state.v[..state.fluid_count];
    let sum: f64 = v.iter().map(|v| f64::from(v.length_squared())).sum();
    (sum / v.len().max(1) as f64).sqrt()
}

/// The fluid line: `seed-bench.js fluid`'s keys, then the bench's.
/// `heights`: the median height's samples of `--heights` (their mean, least and most are
/// written when there are some).
pub fn fluid_line(
    world: &World,
    f: &FluidArgs,
    threads: usize,
    m: &Measurement,
    heights: &[f32],
) -> String {
    let state = world.resource::<SolverState>();
    let stats = world.resource::<PbdStats>();
    let rest_density = world.resource::<FluidSettings>().rest_density as f64;
    let fig = fluid_figures(state, world.resource::<DensityState>(), rest_density);
    let neighbors = world.resource::<NeighborState>();
    let (pairs_per_particle, slot_fill, lanes) = neighbour_figures(neighbors, state.fluid_count);
    let o = JsonObject::new()
        .string("scene", "fluid")
        .int("width", f.width as u64)
        .int("height", f.height as u64)
        .int("fluid_particles", state.fluid_count as u64)
        .string(
            "walls",
            if f.collider_walls {
                "colliders"
            } else {
                "samples"
            },
        )
        .int("bodies", f.bodies as u64)
        .int("boundary_particles", state.boundary_x.len() as u64)
        .number("dt", f.dt)
        .int("steps", m.steps as u64)
        .rounded("ms_per_step", m.ms_per_step, 4)
        .rounded("avg_iterations", m.avg_fluid_iterations, 2)
        .int("non_finite", fig.non_finite)
        .rounded("top_y", fig.top_y, 4)
        .rounded("avg_density", fig.avg_density, 3)
        .rounded(
            "avg_density_error_percent",
            fig.avg_density_error_percent,
            4,
        )
        .rounded(
            "mean_density_error_percent",
            m.mean_density_error_percent,
            4,
        )
        .rounded("max_density_error_percent", m.max_density_error_percent, 4)
        .int(
            "max_iterations_in_a_step",
            u64::from(m.max_fluid_iterations),
        )
        .rounded("sim_time", stats.sim_time, 4)
        .rounded("rms_speed", rms_speed(state), 4)
        .rounded(
            "median_height_ratio",
            median_height_ratio(world, f).map_or(f64::NAN, f64::from),
            4,
        )
        .int("resort", f.resort as u64)
        .int("height_samples", heights.len() as u64);
    let o = match heights {
        [] => o,
        _ => {
            let heights = heights.iter().map(|&h| f64::from(h));
            let mean = heights.clone().sum::<f64>() / heights.len() as f64;
            let (least, most) = range(heights);
            o.rounded("median_height_mean", mean, 4)
                .rounded("median_height_least", least, 4)
                .rounded("median_height_most", most, 4)
        }
    };
    let o = o
        .rounded("fluid_neighbours_per_particle", pairs_per_particle, 3)
        .rounded("slot_fill", slot_fill, 4)
        .rounded("slot_lanes_per_particle", lanes, 3)
        .number("chebyshev", f.chebyshev.unwrap_or(0.0))
        .string("s_corr", if f.forces.s_corr { "on" } else { "off" })
        .number("vorticity", f.forces.vorticity)
        .number("surface_tension", f.forces.surface_tension)
        .number("adhesion", f.forces.adhesion)
        .string(
            "grid",
            match f.grid {
                GridArg::Off => "off",
                GridArg::Cg => "cg",
                GridArg::Multigrid => "on",
                GridArg::Deep => "deep",
            },
        )
        .rounded("avg_grid_cg_iterations", m.avg_grid_iterations, 2)
        .int("grid_steps", m.grid_steps);
    // The solve's wall time per particle and iteration (ns): what the rows' order costs.
    let particle_iterations = m.avg_fluid_iterations * state.fluid_count as f64;
    let o = match particle_iterations > 0.0 {
        true => o.rounded(
            "solve_ns_per_particle_iteration",
            m.phases.solve * 1e6 / particle_iterations,
            2,
        ),
        false => o,
    };
    extras(o, threads, state, m).finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_reference_values() {
        let hash = |s: &str| {
            let mut h = Fnv1a::default();
            h.write(s.as_bytes());
            h.finish()
        };
        assert_eq!(hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(hash("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(hash("foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn state_hash_sees_every_bit() {
        let mut state = SolverState::default();
        state.x = vec![Vec2::new(1.0, 2.0)];
        state.v = vec![Vec2::ZERO];
        let a = state_hash(&state);
        state.v[0].y = -0.0;
        assert_ne!(a, state_hash(&state));
    }

    #[test]
    fn numbers_like_to_fixed() {
        assert_eq!(format_number(round(1.23456, 4)), "1.2346");
        assert_eq!(format_number(round(500.0, 4)), "500");
        assert_eq!(format_number(round(-0.00001, 4)), "0");
        assert_eq!(format_number(round(0.1 + 0.2, 4)), "0.3");
        assert_eq!(format_number(f64::NAN), "null");
        assert_eq!(format_number(f64::NEG_INFINITY), "null");
        let line = JsonObject::new()
            .string("scene", "x")
            .int("n", 3)
            .rounded("f", 2.0 / 3.0, 2)
            .object("o", JsonObject::new().number("dt", 0.005))
            .finish();
        assert_eq!(line, r#"{"scene":"x","n":3,"f":0.67,"o":{"dt":0.005}}"#);
    }

    #[test]
    fn stretch_and_fluid_figures() {
        use bevy_pbd2d::constraints::row::DistanceRow;
        use bevy_pbd2d::fluid::density::DensityRow;
        let mut state = SolverState::default();
        state.x = vec![Vec2::ZERO, Vec2::new(1.1, 0.0), Vec2::new(0.0, f32::NAN)];
        state.v = vec![Vec2::ZERO; 3];
        state.fluid_count = 2;
        let mut constraints = ConstraintState::default();
        constraints.rows = vec![DistanceRow {
            a: 0,
            b: 1,
            rest_length: 1.0,
            compliance: 0.0,
        }];
        assert!((max_relative_stretch(&state, &constraints) - 0.1).abs() < 1e-6);
        let mut densities = DensityState::default();
        densities.rows = vec![
            DensityRow {
                density: 1010.0,
                lambda: 0.0,
                ..default()
            },
            DensityRow {
                density: 990.0,
                lambda: 0.0,
                ..default()
            },
        ];
        let f = fluid_figures(&state, &densities, 1000.0);
        assert_eq!(f.non_finite, 0);
        assert_eq!(f.top_y, 0.0);
        assert_eq!(f.avg_density, 1000.0);
        assert!((f.avg_density_error_percent - 0.5).abs() < 1e-12);
    }
}
