//! The boundary samples as discs of radius d: which samples lie near a motion, where a motion
//! first enters a disc, and the motion stopped and slid along them.

use bevy::prelude::*;

use super::MAX_SLIDES;
use crate::fluid::grid::SpatialHashGrid;
use crate::fluid::settings::FluidSettings;

/// The boundary samples as discs.
pub(super) struct Walls<'a> {
    pub(super) samples: &'a [Vec2],
    /// Their Ψ (kg).
    pub(super) psi: &'a [f32],
    grid: &'a SpatialHashGrid,
    /// Disc radius d (m).
    pub(super) radius: f32,
    /// The grid's cell size h (m): the largest radius of one query.
    pub(super) reach: f32,
}

impl<'a> Walls<'a> {
    pub(super) fn new(
        settings: &FluidSettings,
        (samples, psi): (&'a [Vec2], &'a [f32]),
        grid: &'a SpatialHashGrid,
    ) -> Self {
        Self {
            samples,
            psi,
            grid,
            radius: super::CONTACT_RADII * settings.particle_radius,
            reach: settings.support_radius,
        }
    }

    /// Whether the list of x* (the samples within h of it) holds every sample within d of the
    /// motion a → b: when a and b, and so every point between, are within h − d of x*.
    #[inline]
    pub(super) fn covered(&self, a: Vec2, b: Vec2, predicted: Vec2) -> bool {
        let within = self.reach - self.radius;
        let within2 = within * within;
        (a - predicted).length_squared() < within2 && (b - predicted).length_squared() < within2
    }

    /// Every sample within h of `p` into `out`.
    pub(super) fn near(&self, p: Vec2, out: &mut Vec<u32>) {
        out.clear();
        self.grid.for_each_within(p, self.reach, |k, _| out.push(k));
    }

    /// Every sample within d of the segment a → b into `out` (sorted, no repeats): queries of
    /// radius h at points spaced h − d along it, which cover every point within d of it.
    pub(super) fn candidates(&self, a: Vec2, b: Vec2, out: &mut Vec<u32>) {
        out.clear();
        let length = (b - a).length();
        let spacing = self.reach - self.radius;
        let queries = (length / spacing).ceil().max(1.0);
        // A bound on absurd motions: past it, the start and end alone are queried (the
        // speed limit keeps motions far below it).
        let queries = if queries > 1e4 { 1 } else { queries as usize };
        for q in 0..=queries {
            let t = q as f32 / queries as f32;
            let centre = a.lerp(b, t);
            self.grid
                .for_each_within(centre, self.reach, |k, _| out.push(k));
        }
        out.sort_unstable();
        out.dedup();
    }
    /// The first point where the motion a → b enters a disc of `candidates`, with the disc:
    /// (t along the motion, sample). A motion that starts inside or on a disc and goes deeper is
    /// blocked at once (t = 0), unless `embedded` (the start of an embedded particle's step) is
    /// inside that disc too: it may move within the discs it started in.
    pub(super) fn first_hit(
        &self,
        a: Vec2,
        b: Vec2,
        candidates: &[u32],
        embedded: Option<Vec2>,
    ) -> Option<(f32, u32)> {
        let d = b - a;
        let dd = d.length_squared();
        if dd == 0.0 {
            return None;
        }
        let r2 = self.radius * self.radius;
        let mut first: Option<(f32, u32)> = None;
        for &k in candidates {
            let centre = self.samples[k as usize];
            let f = a - centre;
            let fd = f.dot(d);
            if fd >= 0.0 {
                // Moving away.
                continue;
            }
            let c = f.length_squared() - r2;
            let t = if c <= 0.0 {
                // Inside or on it, going deeper (a cusp between two discs, a start inside).
                if embedded.is_some_and(|e| (e - centre).length_squared() < r2) {
                    continue;
                }
                0.0
            } else {
                let discriminant = fd * fd - dd * c;
                if discriminant < 0.0 {
                    continue;
                }
                (-fd - discriminant.sqrt()) / dd
            };
            if t <= 1.0 && first.is_none_or(|(best, _)| t < best) {
                first = Some((t, k));
            }
        }
        first
    }

    /// Just outside sample k's disc, in the direction of p from its centre.
    pub(super) fn surface(&self, k: u32, p: Vec2) -> Vec2 {
        let centre = self.samples[k as usize];
        let n = (p - centre).normalize_or(Vec2::Y);
        centre + n * (self.radius * (1.0 + 1e-5))
    }

    /// The motion a → b stopped at the first disc it enters, the rest sliding along the
    /// surface up to [`MAX_SLIDES`] times: the end and the outward normal of the last disc it
    /// touched; `None` if it enters none. `first`: samples that hold every sample within d of
    /// a → b (a list), if known; else, and for the slides, `scratch` takes the grid's.
    /// `embedded`: as for [`Walls::first_hit`].
    pub(super) fn sweep(
        &self,
        (a, b): (Vec2, Vec2),
        first: Option<&[u32]>,
        scratch: &mut Vec<u32>,
        embedded: Option<Vec2>,
    ) -> Option<(Vec2, Vec2)> {
        let (mut from, mut to) = (a, b);
        let mut last = None;
        for leg in 0..=MAX_SLIDES {
            let candidates = match first {
                Some(list) if leg == 0 => list,
                _ => {
                    self.candidates(from, to, scratch);
                    &scratch[..]
                }
            };
            let Some((t, k)) = self.first_hit(from, to, candidates, embedded) else {
                return last.map(|n| (to, n));
            };
            let contact = self.surface(k, from.lerp(to, t));
            let n = (contact - self.samples[k as usize]).normalize_or(Vec2::Y);
            last = Some(n);
            let rest = (to - from) * (1.0 - t);
            let slide = rest - rest.dot(n).min(0.0) * n;
            (from, to) = (contact, contact + slide);
        }
        // Out of slides: stop at the last contact.
        last.map(|n| (from, n))
    }

    /// b kept from being deeper in any disc that a is in than a is.
    pub(super) fn no_deeper(&self, a: Vec2, b: Vec2, candidates: &[u32]) -> Vec2 {
        let mut moved = b;
        for &k in candidates {
            let centre = self.samples[k as usize];
            let d0 = (a - centre).length();
            if d0 >= self.radius {
                continue;
            }
            let to = moved - centre;
            if to.length() < d0 {
                let out = to.try_normalize().or((a - centre).try_normalize());
                moved = centre + out.unwrap_or(Vec2::Y) * d0;
            }
        }
        moved
    }
}
