//! Command-line parsing, by hand (no argument-parsing dependency).
//!
//! ```text
//! bevy_pbd2d_bench cloth [--width 40] [--height 30] [--iterations 5] [--substeps 1]
//!                        [--direct-lines off] [--dt 0.01] [--fixed 2] [--steps 500]
//!                        [--mass 0.5] [--threads N]
//!                        [--compare-seed] [--repeat N]
//! bevy_pbd2d_bench fluid [--width 30] [--height 30] [--dt 0.005] [--max-error 0.1]
//!                        [--max-iterations 100] [--viscosity 0.05] [--steps 400]
//!                        [--heights 0] [--walls samples|colliders] [--threads N] [--compare-seed]
//!                        [--repeat N]
//! ```
//!
//! The defaults are those of the reference demos (and of `seed-bench.js`). Values may be given
//! as `--flag value` or `--flag=value`; a flag given twice, an unknown flag, a flag of the other
//! scene or a value out of range is an error.

use core::fmt;

/// Usage message printed with every argument error (and for `--help`).
pub const USAGE: &str = "\
usage: bevy_pbd2d_bench cloth [options] | fluid [options]

Steps the bevy_pbd2d plugin headless (one fixed step per App::update), runs
min(20, steps) warm-up steps, times `steps` more and prints one JSON line.

cloth options (defaults: the PBD demo's):
  --width N           particles per row, 1..=2000 (40)
  --height N          particles per column, 1..=2000 (30)
  --iterations N      constraint iterations per substep, 1..=10000 (5)
  --substeps N        XPBD substeps per step, 1..=1000 (1); the demo has
                      none, so --compare-seed needs 1
  --direct-lines B    on: solve the cloth's rows and columns directly
                      (SolverSettings::direct_lines), off: Gauss-Seidel as
                      the demo, which --compare-seed needs (off)
  --dt S              time step in seconds, > 0 (0.01)
  --fixed N           pinned corners: 1, 2 or 4 (2)
  --steps N           timed steps, >= 1 (500)
  --mass KG           mass of every particle, > 0 (0.5)
fluid options (defaults: the PBF demo's):
  --width N           fluid particles per row, 1..=2000 (30)
  --height N          fluid particles per column, 1..=2000 (30)
  --dt S              time step in seconds, > 0 (0.005)
  --max-error P       density error tolerance in percent, >= 0 (0.1)
  --max-iterations N  density solver iteration cap, 1..=10000 (100)
  --viscosity C       XSPH coefficient, 0..=1 (0.05)
  --relaxation W      over-relaxation factor of the density corrections, not
                      in the reference demo, (0, 1.9] (1)
  --resort N          steps between re-sorts of the fluid rows by grid cell,
                      0: never, as the demo (0)
  --warmup N          untimed steps before the timed ones, >= 1
                      (min(20, steps))
  --chebyshev RHO     Chebyshev acceleration of the density iterations with
                      spectral radius RHO in [0.5, 0.98], needs --relaxation
                      <= 1; `off`: plain Jacobi, as the demo (off)
  --grid G            on: the grid projection (FluidSettings::grid_projection,
                      defaults: multigrid-preconditioned CG) before the density
                      iterations; cg: the same with plain CG; deep: on, only
                      where the water is deep (GridProjection::min_depth, as
                      FluidSettings::game: with --max-error 0.3 --chebyshev 0.9
                      --resort 100 the game preset); off: the demo's solve (off)
  --s-corr S          on: artificial pressure s_corr with its defaults
                      (FluidSettings::artificial_pressure); off: none, as the
                      demo (off)
  --vorticity E       vorticity confinement ε (m/s), 0: off, as the demo (0)
  --surface-tension G surface tension γ (Akinci 2013), 0: off, as the demo (0)
  --adhesion B        adhesion β to the walls (Akinci 2013), 0: off, as the
                      demo (0)
  --steps N           timed steps, >= 1 (400)
  --heights N         the median height over an incompressible layer's
                      sampled every N warm-up steps over the warm-up's second
                      half (a sloshing pool's height swings with its waves):
                      their mean, least and most in the line; 0: off (0)
  --walls W           the box: `samples` (the demo's boundary samples) or
                      `colliders` (a ParticleCollider polyline on the same
                      lines, carrying its own samples) (samples)
  --bodies N          avian dynamic boxes (0.4 m, 0.5 rho0) dropped onto the
                      fluid, 0..=1000 (0); with N > 0 the box is a collider
                      that is also avian's, and avian steps the bodies
common options:
  --threads N         compute task pool threads, >= 1 (available parallelism)
  --compare-seed      then run ../shared/tools/seed-bench.js with the same
                      parameters (path override: PBD2D_SEED_BENCH), print its
                      JSON line and a {\"speedup\": ...} line
  --repeat N          run N times, 1..=100 (1): with --compare-seed our run and
                      the seed's alternate; then a line of medians
  -h, --help          this message

Exit status: 0 ok, 1 run failed, 2 bad arguments.";

/// An invalid command line; the message names the offending argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgError(pub String);

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ArgError {}

/// Parameters of the cloth scene (the PBD demo).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClothArgs {
    /// Particles per row.
    pub width: u32,
    /// Particles per column.
    pub height: u32,
    /// Constraint iterations per substep.
    pub iterations: u32,
    /// XPBD substeps per step.
    pub substeps: u32,
    /// Whether the cloth's rows and columns are solved directly.
    pub direct_lines: bool,
    /// Time step (s).
    pub dt: f64,
    /// Number of pinned corners: 1, 2 or 4.
    pub fixed: u32,
    /// Timed steps.
    pub steps: u32,
    /// Mass of every particle (kg).
    pub mass: f64,
}

impl Default for ClothArgs {
    fn default() -> Self {
        Self {
            width: 40,
            height: 30,
            iterations: 5,
            substeps: 1,
            direct_lines: false,
            dt: 0.01,
            fixed: 2,
            steps: 500,
            mass: 0.5,
        }
    }
}

/// `--grid`: the fluid's grid projection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridArg {
    /// None: the demo's solve.
    Off,
    /// With plain conjugate gradients.
    Cg,
    /// With its defaults (multigrid-preconditioned conjugate gradients).
    Multigrid,
    /// With the game preset's minimum depth (`FluidSettings::game`).
    Deep,
}

/// Parameters of the fluid scene (the PBF demo's dam break).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FluidArgs {
    /// Fluid particles per row.
    pub width: u32,
    /// Fluid particles per column.
    pub height: u32,
    /// Time step (s).
    pub dt: f64,
    /// Density error tolerance (%).
    pub max_error: f64,
    /// Density solver iteration cap.
    pub max_iterations: u32,
    /// XSPH viscosity coefficient.
    pub viscosity: f64,
    /// Over-relaxation factor ω of the density corrections (not in the reference demo).
    pub relaxation: f64,
    /// Steps between re-sorts of the fluid rows, 0: never (`--resort`).
    pub resort: u32,
    /// Untimed steps before the timed ones (`--warmup`; default min(20, steps)).
    pub warmup: Option<u32>,
    /// Chebyshev acceleration's spectral radius ρ, or `None`: the demo's plain Jacobi
    /// (`--chebyshev`).
    pub chebyshev: Option<f64>,
    /// The grid projection: with its defaults (`--grid on`), with plain conjugate gradients
    /// (`cg`) or none (`off`, the demo's solve).
    pub grid: GridArg,
    /// The fluid's forces besides pressure and XSPH (`--s-corr`, `--vorticity`,
    /// `--surface-tension`, `--adhesion`; all off by default, as the demo).
    pub forces: ForceArgs,
    /// Timed steps.
    pub steps: u32,
    /// Warm-up steps between samples of the median height over the warm-up's second half,
    /// 0: none (`--heights`).
    pub heights: u32,
    /// Whether the box is a collider (`--walls colliders`) instead of boundary samples.
    pub collider_walls: bool,
    /// avian dynamic boxes dropped onto the fluid (`--bodies`).
    pub bodies: u32,
}

/// The fluid's forces of the fluid scene ([`FluidArgs::forces`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ForceArgs {
    /// Artificial pressure s_corr with its defaults (`--s-corr on`).
    pub s_corr: bool,
    /// Vorticity confinement ε (m/s).
    pub vorticity: f64,
    /// Surface tension γ.
    pub surface_tension: f64,
    /// Adhesion β.
    pub adhesion: f64,
}

impl ForceArgs {
    /// Whether any is on.
    pub fn any(&self) -> bool {
        self.s_corr || self.vorticity > 0.0 || self.surface_tension > 0.0 || self.adhesion > 0.0
    }
}

impl Default for FluidArgs {
    fn default() -> Self {
        Self {
            width: 30,
            height: 30,
            dt: 0.005,
            max_error: 0.1,
            max_iterations: 100,
            viscosity: 0.05,
            relaxation: 1.0,
            resort: 0,
            warmup: None,
            chebyshev: None,
            grid: GridArg::Off,
            forces: ForceArgs::default(),
            steps: 400,
            heights: 0,
            collider_walls: false,
            bodies: 0,
        }
    }
}

/// Which scene to run, with its parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scene {
    /// `cloth`.
    Cloth(ClothArgs),
    /// `fluid`.
    Fluid(FluidArgs),
}

impl Scene {
    /// The scene's name as on the command line and in the JSON (`"cloth"`, `"fluid"`).
    pub fn name(&self) -> &'static str {
        match self {
            Scene::Cloth(_) => "cloth",
            Scene::Fluid(_) => "fluid",
        }
    }

    /// Timed steps.
    pub fn steps(&self) -> u32 {
        match self {
            Scene::Cloth(c) => c.steps,
            Scene::Fluid(f) => f.steps,
        }
    }

    /// Time step (s).
    pub fn dt(&self) -> f64 {
        match self {
            Scene::Cloth(c) => c.dt,
            Scene::Fluid(f) => f.dt,
        }
    }

    /// Untimed warm-up steps run first: as in `seed-bench.js`, min(20, steps), unless the
    /// fluid's `--warmup` says otherwise.
    pub fn warmup_steps(&self) -> u32 {
        match self {
            Scene::Fluid(FluidArgs {
                warmup: Some(w), ..
            }) => *w,
            _ => self.steps().min(20),
        }
    }
}

/// A complete, validated command line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Args {
    /// Scene and parameters.
    pub scene: Scene,
    /// Threads of the compute task pool.
    pub threads: usize,
    /// Whether to run `seed-bench.js` afterwards and print the speedup.
    pub compare_seed: bool,
    /// How many times to run (each run followed by the seed's with `compare_seed`).
    pub repeat: u32,
}

/// What the command line asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Command {
    /// Run a benchmark.
    Run(Args),
    /// Print the usage and exit successfully.
    Help,
}

/// The largest accepted `--threads`.
pub const MAX_THREADS: usize = 1024;

/// The default thread count: the machine's available parallelism.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Parses the arguments after the program name.
///
/// # Errors
/// [`ArgError`] for a missing or unknown scene, an unknown or repeated flag, a missing value
/// or a value that does not parse or is out of range.
pub fn parse<I, S>(args: I) -> Result<Command, ArgError>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let mut args = args.into_iter().map(Into::into);
    let scene_name = match args.next() {
        None => return Err(ArgError("missing scene: cloth or fluid".into())),
        Some(s) if s == "-h" || s == "--help" => return Ok(Command::Help),
        Some(s) => s,
    };
    let mut scene = match scene_name.as_str() {
        "cloth" => Scene::Cloth(ClothArgs::default()),
        "fluid" => Scene::Fluid(FluidArgs::default()),
        other => {
            return Err(ArgError(format!(
                "unknown scene `{other}` (expected cloth or fluid)"
            )));
        }
    };
    let mut threads = None;
    let mut compare_seed = false;
    let mut repeat = 1;
    let mut seen: Vec<String> = Vec::new();

    while let Some(arg) = args.next() {
        if arg == "-h" || arg == "--help" {
            return Ok(Command::Help);
        }
        let Some(body) = arg.strip_prefix("--") else {
            return Err(ArgError(format!("unexpected argument `{arg}`")));
        };
        let (flag, inline_value) = match body.split_once('=') {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (body.to_string(), None),
        };
        if seen.contains(&flag) {
            return Err(ArgError(format!("--{flag} given more than once")));
        }
        seen.push(flag.clone());

        if flag == "compare-seed" {
            if inline_value.is_some() {
                return Err(ArgError("--compare-seed takes no value".into()));
            }
            compare_seed = true;
            continue;
        }
        let value = match inline_value {
            Some(v) => v,
            None => args
                .next()
                .ok_or_else(|| ArgError(format!("--{flag} needs a value")))?,
        };
        let v = Value {
            flag: &flag,
            text: &value,
        };
        match (&mut scene, flag.as_str()) {
            (_, "threads") => threads = Some(v.int(1, MAX_THREADS as u64)? as usize),
            (_, "repeat") => repeat = v.int(1, 100)? as u32,
            (Scene::Cloth(c), "width") => c.width = v.int(1, 2000)? as u32,
            (Scene::Cloth(c), "height") => c.height = v.int(1, 2000)? as u32,
            (Scene::Cloth(c), "iterations") => c.iterations = v.int(1, 10_000)? as u32,
            (Scene::Cloth(c), "substeps") => c.substeps = v.int(1, 1000)? as u32,
            (Scene::Cloth(c), "direct-lines") => {
                c.direct_lines = match v.text {
                    "on" => true,
                    "off" => false,
                    _ => return Err(v.error("on or off")),
                }
            }
            (Scene::Cloth(c), "dt") => c.dt = v.positive()?,
            (Scene::Cloth(c), "fixed") => {
                c.fixed = v.int(1, 4)? as u32;
                if c.fixed == 3 {
                    return Err(ArgError("--fixed must be 1, 2 or 4 (got 3)".into()));
                }
            }
            (Scene::Cloth(c), "steps") => c.steps = v.int(1, u32::MAX as u64)? as u32,
            (Scene::Cloth(c), "mass") => c.mass = v.positive()?,
            (Scene::Fluid(f), "width") => f.width = v.int(1, 2000)? as u32,
            (Scene::Fluid(f), "height") => f.height = v.int(1, 2000)? as u32,
            (Scene::Fluid(f), "dt") => f.dt = v.positive()?,
            (Scene::Fluid(f), "max-error") => f.max_error = v.float_in(0.0, f64::MAX)?,
            (Scene::Fluid(f), "max-iterations") => f.max_iterations = v.int(1, 10_000)? as u32,
            (Scene::Fluid(f), "viscosity") => f.viscosity = v.float_in(0.0, 1.0)?,
            (Scene::Fluid(f), "relaxation") => f.relaxation = v.float_in(1e-6, 1.9)?,
            (Scene::Fluid(f), "heights") => f.heights = v.int(0, u32::MAX as u64)? as u32,
            (Scene::Fluid(f), "resort") => f.resort = v.int(0, u32::MAX as u64)? as u32,
            (Scene::Fluid(f), "warmup") => f.warmup = Some(v.int(1, u32::MAX as u64)? as u32),
            (Scene::Fluid(f), "chebyshev") => {
                f.chebyshev = match v.text {
                    "off" => None,
                    // FluidSettings::validate refuses what is outside its range, with the reason.
                    _ => Some(v.float_in(0.0, 1.0)?),
                }
            }
            (Scene::Fluid(f), "grid") => {
                f.grid = match v.text {
                    "on" => GridArg::Multigrid,
                    "cg" => GridArg::Cg,
                    "deep" => GridArg::Deep,
                    "off" => GridArg::Off,
                    _ => return Err(v.error("on, cg, deep or off")),
                }
            }
            (Scene::Fluid(f), "s-corr") => {
                f.forces.s_corr = match v.text {
                    "on" => true,
                    "off" => false,
                    _ => return Err(v.error("on or off")),
                }
            }
            // FluidSettings::validate refuses values above the ranges, with the reason.
            (Scene::Fluid(f), "vorticity") => f.forces.vorticity = v.float_in(0.0, f64::MAX)?,
            (Scene::Fluid(f), "surface-tension") => {
                f.forces.surface_tension = v.float_in(0.0, f64::MAX)?
            }
            (Scene::Fluid(f), "adhesion") => f.forces.adhesion = v.float_in(0.0, f64::MAX)?,
            (Scene::Fluid(f), "steps") => f.steps = v.int(1, u32::MAX as u64)? as u32,
            (Scene::Fluid(f), "bodies") => {
                f.bodies = v.int(0, 1000)? as u32;
            }
            (Scene::Fluid(f), "walls") => {
                f.collider_walls = match v.text {
                    "samples" => false,
                    "colliders" => true,
                    _ => return Err(v.error("samples or colliders")),
                }
            }
            (s, _) => {
                return Err(ArgError(format!(
                    "unknown option --{flag} for scene {}",
                    s.name()
                )));
            }
        }
    }
    if let Scene::Cloth(c) = &scene
        && (c.substeps > 1 || c.direct_lines)
        && compare_seed
    {
        return Err(ArgError(
            "--compare-seed runs the demo's step, which has no --substeps or --direct-lines".into(),
        ));
    }
    if let Scene::Fluid(f) = &mut scene {
        if f.bodies > 0 && compare_seed {
            return Err(ArgError(
                "--compare-seed runs the demo's scene, which has no --bodies".into(),
            ));
        }
        if (f.resort > 0
            || f.warmup.is_some()
            || f.chebyshev.is_some()
            || f.grid != GridArg::Off
            || f.forces.any())
            && compare_seed
        {
            return Err(ArgError(
                "--compare-seed runs the demo's scene and solve, which have no --resort, \
                 --warmup, --chebyshev, --grid or fluid forces"
                    .into(),
            ));
        }
        if f.bodies > 0 && !f.collider_walls {
            // The bodies need a box avian sees: the collider one.
            f.collider_walls = true;
        }
    }
    Ok(Command::Run(Args {
        scene,
        threads: threads.unwrap_or_else(default_threads),
        compare_seed,
        repeat,
    }))
}

/// The value of one flag, for typed parsing with range checks.
struct Value<'a> {
    flag: &'a str,
    text: &'a str,
}

impl Value<'_> {
    fn error(&self, expected: &str) -> ArgError {
        ArgError(format!(
            "--{} expects {expected} (got `{}`)",
            self.flag, self.text
        ))
    }

    /// An integer in `min..=max`.
    fn int(&self, min: u64, max: u64) -> Result<u64, ArgError> {
        let expected = if max == u32::MAX as u64 || max == u64::MAX {
            format!("an integer >= {min}")
        } else {
            format!("an integer in {min}..={max}")
        };
        match self.text.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(self.error(&expected)),
        }
    }

    /// A finite number > 0.
    fn positive(&self) -> Result<f64, ArgError> {
        match self.text.parse::<f64>() {
            Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
            _ => Err(self.error("a finite number > 0")),
        }
    }

    /// A finite number in `min..=max`.
    fn float_in(&self, min: f64, max: f64) -> Result<f64, ArgError> {
        let expected = if max == f64::MAX {
            format!("a finite number >= {min}")
        } else {
            format!("a number in {min}..={max}")
        };
        match self.text.parse::<f64>() {
            Ok(x) if x.is_finite() && (min..=max).contains(&x) => Ok(x),
            _ => Err(self.error(&expected)),
        }
    }
}
