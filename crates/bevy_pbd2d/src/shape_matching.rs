//! Shape matching: soft and rigid particle bodies (Müller, Heidelberger, Teschner, Gross 2005,
//! "Meshless Deformations Based on Shape Matching"; LiquidFun's elastic and rigid groups).
//!
//! A body whose root has [`ShapeMatching`] keeps the shape its particles' [`ShapeRest`]
//! positions describe. In every substep, after the contacts (so that a rigid body ends each
//! substep rigid; at an impact the goal puts particles a contact stopped partly back into the
//! collider, 0.3 r for a box dropped 2 m, which the next substeps push out without adding
//! velocity), with masses mᵢ, rest
//! offsets qᵢ (from the rest shape's centre of mass) and the current centre of mass c:
//!
//! ```text
//! A = Σ mᵢ (xᵢ − c) qᵢᵀ                     (2 × 2)
//! R = the rotation of A's polar decomposition: angle atan2(A₂₁ − A₁₂, A₁₁ + A₂₂)
//! gᵢ = c + R qᵢ,   xᵢ += k (gᵢ − xᵢ)        (k the stiffness)
//! ```
//!
//! k = 1 puts every particle on its goal: a rigid body. Below 1 the body is elastic, and how
//! soft it looks depends on the number of substeps (k is applied once per substep, as in the
//! paper once per step). The goal is a rotated copy of the rest shape, so the body always
//! returns to its rest area (a squashed ball recovers). Pinned particles (w = 0) count with
//! the mass of a free one of the body and are not moved.

use bevy::prelude::*;

use crate::body::BodyParticles;
use crate::particle::sync::copy_particles_in;
use crate::particle::{SolverIndex, SolverState};
use crate::schedule::{PbdPrepared, PbdSchedule, PbdSubstepSchedule, PbdSubstepSystems};
use crate::stats::{PbdStats, Phase};

/// On a body's root: its particles keep the shape of their [`ShapeRest`] positions, with
/// stiffness [`ShapeMatching::stiffness`] (module docs). Edits take effect at the next step.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
pub struct ShapeMatching {
    /// k in (0, 1]: the fraction of the way to its goal each particle moves per substep; 1 is
    /// rigid. Default 1. Out of range: the body is left alone, with a warning.
    pub stiffness: f32,
}

impl Default for ShapeMatching {
    fn default() -> Self {
        Self { stiffness: 1.0 }
    }
}

/// A particle's position in its body's rest shape (m, any frame: only differences count).
/// Particles of a [`ShapeMatching`] body without it are not part of the shape.
#[derive(Component, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Component, Debug, PartialEq)]
pub struct ShapeRest(pub Vec2);

/// One body's shape of a step: its rows, rest offsets from the rest centre of mass, masses.
#[derive(Debug, Default, Clone)]
struct Shape {
    rows: Vec<u32>,
    rest: Vec<Vec2>,
    mass: Vec<f32>,
    stiffness: f32,
}

/// The shapes of the step.
#[derive(Resource, Debug, Default)]
pub(crate) struct ShapeMatchingState {
    shapes: Vec<Shape>,
}

/// Whether any body is shape matched this step.
fn has_shapes(state: Res<ShapeMatchingState>) -> bool {
    !state.shapes.is_empty()
}

/// [`Prepare`](crate::PbdStepSystems::Prepare): the shapes of the bodies with
/// [`ShapeMatching`], in entity order.
fn collect_shapes(
    bodies: Query<(Entity, &ShapeMatching, &BodyParticles)>,
    particles: Query<(&SolverIndex, &ShapeRest)>,
    state: Res<SolverState>,
    mut shapes: ResMut<ShapeMatchingState>,
) {
    let mut bodies: Vec<_> = bodies.iter().collect();
    bodies.sort_by_key(|(entity, ..)| *entity);
    shapes.shapes.clear();
    for (entity, matching, members) in bodies {
        if !(matching.stiffness > 0.0 && matching.stiffness <= 1.0) {
            warn!(
                "ShapeMatching of {entity}: stiffness {} outside (0, 1]; left alone",
                matching.stiffness
            );
            continue;
        }
        let mut shape = Shape {
            stiffness: matching.stiffness,
            ..default()
        };
        // A pinned particle weighs as much as the body's heaviest free one.
        let mut heaviest = 0.0f32;
        for particle in members.iter() {
            let Ok((index, rest)) = particles.get(particle) else {
                continue;
            };
            let Some(row) = state
                .row_of(particle, *index)
                .filter(|_| rest.0.is_finite())
            else {
                continue;
            };
            let w = state.w[row];
            let mass = if w > 0.0 && w.is_finite() {
                1.0 / w
            } else {
                0.0
            };
            heaviest = heaviest.max(mass);
            shape.rows.push(row as u32);
            shape.rest.push(rest.0);
            shape.mass.push(mass);
        }
        for m in &mut shape.mass {
            if *m == 0.0 {
                *m = heaviest.max(1.0);
            }
        }
        let total: f32 = shape.mass.iter().sum();
        if shape.rows.len() < 2 || !(total > 0.0 && total.is_finite()) {
            continue;
        }
        let centre = shape
            .rest
            .iter()
            .zip(&shape.mass)
            .map(|(&q, &m)| q * m)
            .sum::<Vec2>()
            / total;
        shape.rest.iter_mut().for_each(|q| *q -= centre);
        shapes.shapes.push(shape);
    }
}

/// [`SolveContacts`](crate::PbdSubstepSystems::SolveContacts), after the contacts: every
/// shape's particles move toward their goals (module docs).
fn match_shapes(
    mut state: ResMut<SolverState>,
    shapes: Res<ShapeMatchingState>,
    mut stats: ResMut<PbdStats>,
) {
    let started = stats.begin_phase();
    let state = &mut *state;
    for shape in &shapes.shapes {
        let total: f32 = shape.mass.iter().sum();
        let centre = (shape.rows.iter().zip(&shape.mass))
            .map(|(&r, &m)| state.x[r as usize] * m)
            .sum::<Vec2>()
            / total;
        // A = Σ m (x − c) qᵀ, by columns of q: A = [a₁₁ a₁₂; a₂₁ a₂₂].
        let (mut a11, mut a12, mut a21, mut a22) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
        for ((&r, &q), &m) in shape.rows.iter().zip(&shape.rest).zip(&shape.mass) {
            let p = (state.x[r as usize] - centre) * m;
            (a11, a12, a21, a22) = (
                a11 + p.x * q.x,
                a12 + p.x * q.y,
                a21 + p.y * q.x,
                a22 + p.y * q.y,
            );
        }
        let angle = (a21 - a12).atan2(a11 + a22);
        if !(angle.is_finite() && centre.is_finite()) {
            continue;
        }
        let rotation = Rot2::radians(angle);
        for (&r, &q) in shape.rows.iter().zip(&shape.rest) {
            let r = r as usize;
            if state.w[r] > 0.0 {
                let goal = centre + rotation * q;
                let x = state.x[r];
                state.x[r] = x + shape.stiffness * (goal - x);
            }
        }
    }
    stats.end_phase(Phase::Solve, started);
}

/// Shape matching ([`ShapeMatching`], module docs). Part of [`PbdPlugins`](crate::PbdPlugins).
#[derive(Debug, Clone, Copy, Default)]
pub struct ShapeMatchingPlugin;

impl Plugin for ShapeMatchingPlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<ShapeMatching>()
            .register_type::<ShapeRest>()
            .init_resource::<ShapeMatchingState>()
            .add_systems(
                PbdSchedule,
                collect_shapes.in_set(PbdPrepared).after(copy_particles_in),
            )
            .add_systems(
                PbdSubstepSchedule,
                match_shapes
                    .in_set(PbdSubstepSystems::SolveContacts)
                    .after(crate::collider::contacts::collide_solved)
                    .after(crate::solid_contacts::solve_solid_contacts)
                    .run_if(has_shapes),
            );
    }
}
