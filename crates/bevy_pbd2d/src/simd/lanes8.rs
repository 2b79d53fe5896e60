//! Eight `f32` lanes as one type for code written once and compiled twice: with [`f32x8`]
//! (two SSE vectors, or the portable fallback) everywhere, and with [`Avx8`](avx::Avx8) (one
//! AVX vector) inside functions compiled for AVX2. Every operation is the same IEEE operation
//! in both, so a formula gives the same bits with either.

use core::ops::{Add, Div, Mul, Sub};

use wide::f32x8;

/// The lane operations the batched projections and the fluid's 8-lane kernel use.
pub(crate) trait Lanes8:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    /// Every lane `v`.
    fn splat(v: f32) -> Self;
    /// From the lanes of an [`f32x8`].
    fn from_f32x8(v: f32x8) -> Self;
    /// To the lanes of an [`f32x8`].
    fn to_f32x8(self) -> f32x8;
    /// √ of every lane (IEEE, correctly rounded).
    fn sqrt(self) -> Self;
    /// `self` where `lhs` > `rhs`, +0 elsewhere (and where either is NaN).
    fn where_gt(self, lhs: Self, rhs: Self) -> Self;
    /// Bit l set where lane l of `self` > `rhs`.
    fn gt_bits(self, rhs: Self) -> u32;
    /// Bit l set where lane l of `self` ≤ `rhs` (not where either is NaN).
    fn le_bits(self, rhs: Self) -> u32;
    /// `candidate` where it is > `self`, `self` elsewhere (a NaN candidate is ignored).
    fn larger(self, candidate: Self) -> Self;
    /// `candidate` where it is < `self`, `self` elsewhere (a NaN candidate is ignored).
    fn smaller(self, candidate: Self) -> Self;
    /// `self` in the lanes l < `count`, `elsewhere` in the others.
    fn where_lane_below(self, count: usize, elsewhere: f32) -> Self;
}

/// Each lane's index.
const LANE_INDEX: [f32; 8] = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];

impl Lanes8 for f32x8 {
    #[inline(always)]
    fn splat(v: f32) -> Self {
        f32x8::splat(v)
    }
    #[inline(always)]
    fn from_f32x8(v: f32x8) -> Self {
        v
    }
    #[inline(always)]
    fn to_f32x8(self) -> f32x8 {
        self
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f32x8::sqrt(self)
    }
    #[inline(always)]
    fn where_gt(self, lhs: Self, rhs: Self) -> Self {
        lhs.simd_gt(rhs) & self
    }
    #[inline(always)]
    fn gt_bits(self, rhs: Self) -> u32 {
        self.simd_gt(rhs).to_bitmask()
    }
    #[inline(always)]
    fn le_bits(self, rhs: Self) -> u32 {
        self.simd_le(rhs).to_bitmask()
    }
    #[inline(always)]
    fn larger(self, candidate: Self) -> Self {
        candidate.simd_gt(self).select(candidate, self)
    }
    #[inline(always)]
    fn smaller(self, candidate: Self) -> Self {
        candidate.simd_lt(self).select(candidate, self)
    }
    #[inline(always)]
    fn where_lane_below(self, count: usize, elsewhere: f32) -> Self {
        let below = f32x8::new(LANE_INDEX).simd_lt(f32x8::splat(count as f32));
        below.select(self, f32x8::splat(elsewhere))
    }
}

/// One AVX vector.
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx {
    use core::arch::x86_64::*;

    use super::*;

    /// Eight lanes in one AVX register. Its operations are plain functions around AVX
    /// intrinsics: they become single instructions once inlined into a function compiled for
    /// AVX2. Values of this type may only exist where the CPU has AVX2: the code generic over
    /// [`Lanes8`] that makes them ([`Lanes8::splat`], [`Lanes8::from_f32x8`],
    /// `from_m256`, and the kernel's `KernelLanes::splat`) is reached
    /// with `Avx8` only through functions compiled for AVX2 whose callers checked the CPU
    /// (`project_sweep_unchecked`, `max_relative_stretch_unchecked`, the fluid's
    /// `phase_block_avx2`). Every function and
    /// closure between that function and these operations must be `#[inline(always)]`: one that
    /// is not is compiled without AVX and calls each intrinsic (correct, but an order of
    /// magnitude slower).
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Avx8(__m256);

    impl Avx8 {
        /// The lanes of `v`.
        ///
        /// # Safety
        /// The CPU has AVX2 (see the type's docs).
        #[inline(always)]
        pub(crate) unsafe fn from_m256(v: __m256) -> Self {
            Self(v)
        }

        /// The AVX register.
        #[inline(always)]
        pub(crate) fn m256(self) -> __m256 {
            self.0
        }
    }

    macro_rules! binary {
        ($trait:ident, $method:ident, $intrinsic:ident) => {
            impl $trait for Avx8 {
                type Output = Self;
                #[inline(always)]
                fn $method(self, rhs: Self) -> Self {
                    // SAFETY: values of this type exist only where the CPU has AVX.
                    Self(unsafe { $intrinsic(self.0, rhs.0) })
                }
            }
        };
    }
    binary!(Add, add, _mm256_add_ps);
    binary!(Sub, sub, _mm256_sub_ps);
    binary!(Mul, mul, _mm256_mul_ps);
    binary!(Div, div, _mm256_div_ps);

    // SAFETY (every block below): values of this type exist only where the CPU has AVX; an
    // `f32x8` and an `__m256` are both eight `f32` in lane order.
    impl Lanes8 for Avx8 {
        #[inline(always)]
        fn splat(v: f32) -> Self {
            Self(unsafe { _mm256_set1_ps(v) })
        }
        #[inline(always)]
        fn from_f32x8(v: f32x8) -> Self {
            Self(unsafe { core::mem::transmute::<f32x8, __m256>(v) })
        }
        #[inline(always)]
        fn to_f32x8(self) -> f32x8 {
            unsafe { core::mem::transmute::<__m256, f32x8>(self.0) }
        }
        #[inline(always)]
        fn sqrt(self) -> Self {
            Self(unsafe { _mm256_sqrt_ps(self.0) })
        }
        #[inline(always)]
        fn where_gt(self, lhs: Self, rhs: Self) -> Self {
            Self(unsafe { _mm256_and_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(lhs.0, rhs.0), self.0) })
        }
        #[inline(always)]
        fn gt_bits(self, rhs: Self) -> u32 {
            let mask = unsafe { _mm256_cmp_ps::<_CMP_GT_OQ>(self.0, rhs.0) };
            unsafe { _mm256_movemask_ps(mask) as u32 }
        }
        #[inline(always)]
        fn le_bits(self, rhs: Self) -> u32 {
            let mask = unsafe { _mm256_cmp_ps::<_CMP_LE_OQ>(self.0, rhs.0) };
            unsafe { _mm256_movemask_ps(mask) as u32 }
        }
        #[inline(always)]
        fn larger(self, candidate: Self) -> Self {
            let mask = unsafe { _mm256_cmp_ps::<_CMP_GT_OQ>(candidate.0, self.0) };
            Self(unsafe { _mm256_blendv_ps(self.0, candidate.0, mask) })
        }
        #[inline(always)]
        fn smaller(self, candidate: Self) -> Self {
            let mask = unsafe { _mm256_cmp_ps::<_CMP_LT_OQ>(candidate.0, self.0) };
            Self(unsafe { _mm256_blendv_ps(self.0, candidate.0, mask) })
        }
        #[inline(always)]
        fn where_lane_below(self, count: usize, elsewhere: f32) -> Self {
            let index = unsafe { _mm256_loadu_ps(LANE_INDEX.as_ptr()) };
            let below = unsafe { _mm256_cmp_ps::<_CMP_LT_OQ>(index, _mm256_set1_ps(count as f32)) };
            Self(unsafe { _mm256_blendv_ps(_mm256_set1_ps(elsewhere), self.0, below) })
        }
    }
}
