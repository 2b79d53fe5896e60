//! SIMD for the hot loops (crate-private; a guide for contributors).
//!
//! The hot loops are written once, generic over [`Lanes8`]: 8 `f32` lanes, which are two SSE
//! vectors (`wide::f32x8`) in the baseline build and one AVX register ([`Avx8`]) inside
//! functions compiled with `#[target_feature(enable = "avx2")]`, chosen at run time with
//! [`has_avx2`]. Both run the same IEEE operations in the same order: no fused multiply-add,
//! no approximate reciprocals, sums kept within a lane in list order. That is what keeps the
//! results bitwise identical across CPUs with and without AVX2 and equal to the scalar
//! reference the tests compare with. Unused lanes (padding, holes) are masked after the
//! arithmetic, so a NaN in a padding lane never reaches a result.

/// Whether the CPU has AVX2: then the hot loops (distance sweep, stretch, fluid density and
/// correction passes) run compiled for it (VEX encoding, `insertps` for the gathers: fewer
/// instructions). Only the instruction selection differs: no FMA, every operation is the same
/// IEEE operation, so results are bitwise those of the baseline build.
#[cfg(target_arch = "x86_64")]
#[inline]
pub fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

mod lanes8;
pub(crate) use lanes8::Lanes8;
#[cfg(target_arch = "x86_64")]
pub(crate) use lanes8::avx::Avx8;
