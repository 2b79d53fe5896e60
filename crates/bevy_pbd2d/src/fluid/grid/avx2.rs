//! The grid's candidate filter compiled for AVX2: eight candidates per step, the kept ones
//! packed to the front with a permutation table. It keeps the same candidates, in the same
//! order, as the scalar filter of [`SpatialHashGrid::collect_within`](super::SpatialHashGrid):
//! the distance is the same IEEE expression (x² + y², no FMA) and the comparison the same.

use core::arch::x86_64::*;
use core::mem::MaybeUninit;

use bevy::math::Vec2;

/// For each 8-bit mask, the positions of its set bits in increasing order, then zeros.
static LEFT_PACK: [[u8; 8]; 256] = left_pack_table();

const fn left_pack_table() -> [[u8; 8]; 256] {
    let mut table = [[0; 8]; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut bit, mut n) = (0, 0);
        while bit < 8 {
            if mask & (1 << bit) != 0 {
                table[mask][n] = bit as u8;
                n += 1;
            }
            bit += 1;
        }
        mask += 1;
    }
    table
}

/// Writes to the front of `out`, in order, the entries j of `entries` (positions `positions`,
/// the same length) with ‖p − xⱼ‖² < `r2` and j ≠ `exclude`; returns how many it wrote (it
/// initialises those; the next entries of `out` may be written with unspecified values).
///
/// # Safety
/// The CPU has AVX2, and `out.len()` ≥ `entries.len()` + 8.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn filter_run(
    p: Vec2,
    r2: f32,
    exclude: u32,
    entries: &[u32],
    positions: &[Vec2],
    out: &mut [MaybeUninit<u32>],
) -> usize {
    let n = entries.len().min(positions.len());
    let (px, py, r2) = (_mm256_set1_ps(p.x), _mm256_set1_ps(p.y), _mm256_set1_ps(r2));
    let exclude = _mm256_set1_epi32(exclude as i32);
    // Lane numbers of the entries, and of the two halves of eight (x, y) pairs.
    let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let (low_pairs, high_pairs) = (
        _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3),
        _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7),
    );
    let deinterleave = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    let (entries, positions) = (entries.as_ptr(), positions.as_ptr().cast::<f32>());
    let mut kept = 0;
    let mut k = 0;
    while k < n {
        let left = _mm256_set1_epi32((n - k).min(8) as i32);
        // SAFETY: the masks select the lanes k..n only (masked-off lanes are not read), the
        // pointers are only offset, not read, past the slices; `kept` ≤ k < n, so the eight
        // stores at `kept` stay within `out`.
        unsafe {
            let (a, b) = (
                _mm256_maskload_ps(
                    positions.wrapping_add(2 * k),
                    _mm256_cmpgt_epi32(left, low_pairs),
                ),
                _mm256_maskload_ps(
                    positions.wrapping_add(2 * k + 8),
                    _mm256_cmpgt_epi32(left, high_pairs),
                ),
            );
            let valid = _mm256_cmpgt_epi32(left, lane);
            let j = _mm256_maskload_epi32(entries.wrapping_add(k).cast(), valid);
            // x0..x3 y0..y3 and x4..x7 y4..y7, then the x and the y lanes.
            let (a, b) = (
                _mm256_permutevar8x32_ps(a, deinterleave),
                _mm256_permutevar8x32_ps(b, deinterleave),
            );
            let dx = _mm256_sub_ps(px, _mm256_permute2f128_ps::<0x20>(a, b));
            let dy = _mm256_sub_ps(py, _mm256_permute2f128_ps::<0x31>(a, b));
            let d2 = _mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy));
            let near = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_LT_OQ>(d2, r2));
            let keep = _mm256_andnot_si256(
                _mm256_cmpeq_epi32(j, exclude),
                _mm256_and_si256(near, valid),
            );
            let mask = _mm256_movemask_ps(_mm256_castsi256_ps(keep)) as usize;
            let order = _mm256_cvtepu8_epi32(_mm_loadl_epi64(LEFT_PACK[mask].as_ptr().cast()));
            let packed = _mm256_permutevar8x32_epi32(j, order);
            _mm256_storeu_si256(out.as_mut_ptr().add(kept).cast(), packed);
            kept += mask.count_ones() as usize;
        }
        k += 8;
    }
    kept
}
