//! Colour mixing between touching fluid particles, as LiquidFun's `b2_colorMixingParticle`:
//! particles with [`ColorMixing`] and a [`ParticleColor`] exchange colour with the touching
//! ones that have both, after every step.
//!
//! Each pair (i, j) closer than [`TOUCH`] · 2r exchanges, in linear RGB,
//!
//! ```text
//! a = f (cⱼ − cᵢ),  cᵢ += a,  cⱼ −= a,   f = (1 − e^(−k Δt)) / max(nᵢ, nⱼ)
//! ```
//!
//! with k the smaller of the two rates and nᵢ the number of particles i touches. Every pair's
//! exchange is equal and opposite, so the sum of the colours is kept (two liquids mix to their
//! average, weighted by particle count), and a particle moves at most 1 − e^(−k Δt) of the way
//! towards its neighbours' colours in a step (no overshoot, whatever the packing). Taken from
//! the colours before the step's mixing (Jacobi), in row order: the same world mixes to the
//! same bits. It runs after the step's positions are written (`PbdWritten`) when the
//! [`FluidPlugin`](crate::fluid::FluidPlugin) was added before the render plugin (as
//! [`PbdPlugins`](crate::PbdPlugins) does), also in a headless app.

use bevy::prelude::*;

use super::ParticleColor;
use crate::fluid::{FluidSettings, NeighborState};
use crate::particle::SolverIndex;
use crate::particle::state::SolverState;

/// Pairs closer than this many particle diameters 2r touch.
pub const TOUCH: f32 = 1.2;

/// On a fluid particle with a [`ParticleColor`]: its colour mixes with that of the touching
/// particles that have both (module docs), at this rate k (1/s, ≥ 0 and finite; a pair mixes
/// at the smaller of its two rates; an invalid rate counts as 0). The sum of the colours is
/// kept.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
pub struct ColorMixing(pub f32);

impl Default for ColorMixing {
    /// 2 /s: touching particles get most of the way to a common colour in about a second.
    fn default() -> Self {
        Self(2.0)
    }
}

/// A mixing particle's row: its colour (linear) and rate.
type Mixer = Option<(LinearRgba, f32)>;

/// Scratch of [`mix_colors`], reused between steps.
#[derive(Default)]
pub(crate) struct MixScratch {
    rows: Vec<Mixer>,
    touching: Vec<u32>,
    pairs: Vec<(u32, u32)>,
    mixed: Vec<LinearRgba>,
}

/// [`PbdWritten`](crate::schedule::PbdWritten): the step's colour exchange (module docs).
pub(crate) fn mix_colors(
    time: Res<Time>,
    settings: Option<Res<FluidSettings>>,
    state: Res<SolverState>,
    neighbors: Option<Res<NeighborState>>,
    mut particles: Query<(Entity, &SolverIndex, &ColorMixing, &mut ParticleColor)>,
    mut scratch: Local<MixScratch>,
) {
    let (Some(settings), Some(neighbors)) = (settings, neighbors) else {
        return;
    };
    if particles.is_empty() {
        return;
    }
    let n = state.fluid_count;
    let s = &mut *scratch;
    s.rows.clear();
    s.rows.resize(n, None);
    for (entity, index, rate, color) in &particles {
        let Some(row) = state.row_of(entity, *index).filter(|&row| row < n) else {
            continue;
        };
        let rate = if rate.0.is_finite() {
            rate.0.max(0.0)
        } else {
            0.0
        };
        s.rows[row] = Some((color.0.to_linear(), rate));
    }
    // The touching pairs (i < j), from the fluid's neighbour grid.
    let reach = TOUCH * 2.0 * settings.particle_radius;
    s.pairs.clear();
    s.touching.clear();
    s.touching.resize(n, 0);
    for i in 0..n {
        if s.rows[i].is_none() || !state.x[i].is_finite() {
            continue;
        }
        let xi = state.x[i];
        let (rows, pairs) = (&s.rows, &mut s.pairs);
        neighbors.fluid_grid.for_each_within(xi, reach, |j, _| {
            let j = j as usize;
            let touches = |xj: Vec2| xj.distance_squared(xi) < reach * reach;
            if j > i && rows.get(j).is_some_and(Option::is_some) && touches(state.x[j]) {
                pairs.push((i as u32, j as u32));
            }
        });
    }
    for &(i, j) in &s.pairs {
        s.touching[i as usize] += 1;
        s.touching[j as usize] += 1;
    }
    let dt = time.delta_secs();
    s.mixed.clear();
    s.mixed
        .extend(s.rows.iter().map(|r| r.map_or(LinearRgba::NONE, |r| r.0)));
    for &(i, j) in &s.pairs {
        let (i, j) = (i as usize, j as usize);
        let (Some(a), Some(b)) = (s.rows[i], s.rows[j]) else {
            continue;
        };
        let most = s.touching[i].max(s.touching[j]) as f32;
        let f = (1.0 - (-a.1.min(b.1) * dt).exp()) / most;
        let exchange = (b.0 - a.0) * f;
        s.mixed[i] += exchange;
        s.mixed[j] -= exchange;
    }
    for (entity, index, _, mut color) in &mut particles {
        let Some(row) = state.row_of(entity, *index).filter(|&row| row < n) else {
            continue;
        };
        let (before, after) = (s.rows[row].map(|r| r.0), s.mixed[row]);
        if before != Some(after) {
            color.0 = Color::LinearRgba(after);
        }
    }
}
