//! Consecutive and paired rows four at a time (one AVX register holds four rows). No closures
//! here: one that is not inlined is compiled without AVX ([`Avx8`]).

use core::arch::x86_64::*;

use bevy::prelude::*;

use super::position_lanes::{self, PositionLanes, without_holes};
use super::rows::GroupRows;
use crate::simd::Avx8;

/// The four rows `i .. i + 4` of `x` as (xᵢ, yᵢ, …, xᵢ₊₃, yᵢ₊₃).
///
/// # Safety
/// `i + 3` indexes `x`; the CPU has AVX.
#[inline(always)]
unsafe fn load_four(x: &[Vec2], i: u32) -> __m256 {
    // SAFETY: four `Vec2` are 32 bytes (eight f32).
    unsafe { _mm256_loadu_ps(x.as_ptr().add(i as usize).cast::<f32>()) }
}

/// Stores `v` to the rows `i .. i + 4`.
///
/// # Safety
/// `i + 3` indexes `x`; the CPU has AVX.
#[inline(always)]
unsafe fn store_four(x: &mut [Vec2], i: u32, v: __m256) {
    // SAFETY: four `Vec2` are 32 bytes (eight f32).
    unsafe { _mm256_storeu_ps(x.as_mut_ptr().add(i as usize).cast::<f32>(), v) }
}

/// (x, y) vectors of lanes 0 .. 8 from two registers of four rows each, (r₀, r₁ | r₂, r₃)
/// and (r₄, r₅ | r₆, r₇): lane l takes row r(o(l)), o = [`CONSECUTIVE_ORDER`]. Each 128-bit
/// half of the result draws on the same half of both registers.
#[inline(always)]
fn deinterleave(first: __m256, second: __m256) -> (Avx8, Avx8) {
    const EVEN: i32 = 0b10_00_10_00;
    const ODD: i32 = 0b11_01_11_01;
    // SAFETY: only reached from code compiled for AVX2.
    unsafe {
        (
            Avx8::from_m256(_mm256_shuffle_ps::<EVEN>(first, second)),
            Avx8::from_m256(_mm256_shuffle_ps::<ODD>(first, second)),
        )
    }
}

/// The inverse of [`deinterleave`]: the two registers of rows.
#[inline(always)]
fn interleave((vx, vy): (Avx8, Avx8)) -> [__m256; 2] {
    // SAFETY: only reached from code compiled for AVX2.
    unsafe {
        [
            _mm256_unpacklo_ps(vx.m256(), vy.m256()),
            _mm256_unpackhi_ps(vx.m256(), vy.m256()),
        ]
    }
}

/// The a and b rows of the pairs of rows `a .. a + 16` (pair p joins a + 2p and a + 2p + 1),
/// as ((a rows, b rows) of pairs 0, 2 | 1, 3; the same of pairs 4, 6 | 5, 7): as
/// [`deinterleave`] and [`interleave`] take the rows of lanes in [`PAIRED_ORDER`].
///
/// # Safety
/// `a + 15` indexes `x`; the CPU has AVX.
#[inline(always)]
unsafe fn paired_rows(x: &[Vec2], a: u32) -> [(__m256, __m256); 2] {
    // SAFETY: passed on from the caller.
    unsafe { [split_pairs(x, a), split_pairs(x, a + 8)] }
}

/// The a rows and the b rows of the pairs of rows `i .. i + 8`, pairs 0, 2 | 1, 3 of them.
///
/// # Safety
/// `i + 7` indexes `x`; the CPU has AVX.
#[inline(always)]
unsafe fn split_pairs(x: &[Vec2], i: u32) -> (__m256, __m256) {
    // SAFETY: passed on from the caller.
    unsafe {
        let (p, q) = (
            _mm256_castps_pd(load_four(x, i)),
            _mm256_castps_pd(load_four(x, i + 4)),
        );
        (
            _mm256_castpd_ps(_mm256_shuffle_pd::<0b0000>(p, q)),
            _mm256_castpd_ps(_mm256_shuffle_pd::<0b1111>(p, q)),
        )
    }
}

impl PositionLanes for Avx8 {
    #[inline(always)]
    unsafe fn gather_deltas(x: &[Vec2], rows: &GroupRows) -> (Self, Self) {
        // SAFETY (all): every row indexes `x`; only reached from code compiled for AVX2.
        match *rows {
            GroupRows::Consecutive { a, b } => unsafe {
                let first = _mm256_sub_ps(load_four(x, a), load_four(x, b));
                let second = _mm256_sub_ps(load_four(x, a + 4), load_four(x, b + 4));
                deinterleave(first, second)
            },
            GroupRows::Paired { a } => unsafe {
                let [(a01, b01), (a23, b23)] = paired_rows(x, a);
                deinterleave(_mm256_sub_ps(a01, b01), _mm256_sub_ps(a23, b23))
            },
            GroupRows::Scattered { .. } => unsafe { position_lanes::gather_deltas(x, rows) },
        }
    }

    #[inline(always)]
    unsafe fn correct(
        x: &mut [Vec2],
        rows: &GroupRows,
        count: usize,
        step_a: (Self, Self),
        step_b: (Self, Self),
    ) {
        let (step_a, step_b) = without_holes(rows, count, step_a, step_b);
        // SAFETY (all): every row indexes `x` and they are distinct; only reached from code
        // compiled for AVX2.
        match *rows {
            GroupRows::Consecutive { a, b } => unsafe {
                let (step_a, step_b) = (interleave(step_a), interleave(step_b));
                for (h, i) in [a, a + 4].into_iter().enumerate() {
                    store_four(x, i, _mm256_add_ps(load_four(x, i), step_a[h]));
                }
                for (h, i) in [b, b + 4].into_iter().enumerate() {
                    store_four(x, i, _mm256_sub_ps(load_four(x, i), step_b[h]));
                }
            },
            GroupRows::Paired { a } => unsafe {
                let (step_a, step_b) = (interleave(step_a), interleave(step_b));
                let rows = paired_rows(x, a);
                for (h, (a_rows, b_rows)) in rows.into_iter().enumerate() {
                    let new_a = _mm256_castps_pd(_mm256_add_ps(a_rows, step_a[h]));
                    let new_b = _mm256_castps_pd(_mm256_sub_ps(b_rows, step_b[h]));
                    let i = a + 8 * h as u32;
                    store_four(
                        x,
                        i,
                        _mm256_castpd_ps(_mm256_shuffle_pd::<0b0000>(new_a, new_b)),
                    );
                    store_four(
                        x,
                        i + 4,
                        _mm256_castpd_ps(_mm256_shuffle_pd::<0b1111>(new_a, new_b)),
                    );
                }
            },
            GroupRows::Scattered { .. } => unsafe {
                position_lanes::correct(x, rows, count, step_a, step_b)
            },
        }
    }
}
