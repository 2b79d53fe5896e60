//! Runtime choice of the instruction set for the hot loops.

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
