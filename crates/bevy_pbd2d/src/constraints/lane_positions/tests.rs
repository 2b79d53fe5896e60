//! The position paths give the same bits as one another and as the portable path.

use bevy::prelude::*;
use wide::f32x8;

use super::portable;
use super::position_lanes::{correct, gather_deltas};
use super::rows::{GroupRows, LANES};

fn bits(x: &[Vec2]) -> Vec<[u32; 2]> {
    x.iter().map(|p| p.to_array().map(f32::to_bits)).collect()
}

#[test]
fn paths_agree_bitwise() {
    let x0: Vec<Vec2> = (0..40)
        .map(|i| Vec2::new(i as f32 * 0.37 - 3.0, (i * i) as f32 * -0.11))
        .collect();
    let layouts = [
        GroupRows::Scattered {
            a: [0, 2, 4, 6, 8, 10, 12, 14],
            b: [1, 3, 5, 7, 9, 11, 13, 19],
        },
        GroupRows::Consecutive { a: 21, b: 3 },
        GroupRows::Paired { a: 5 },
    ];
    let lane_bits = |v: f32x8| v.to_array().map(f32::to_bits);
    for rows in layouts {
        let (a, b) = rows.lanes();
        let full = matches!(rows, GroupRows::Scattered { .. });
        // SAFETY: all rows < 40, distinct.
        unsafe {
            let (dx, dy): (f32x8, f32x8) = gather_deltas(&x0, &rows);
            let (px, py) = portable::gather_deltas(&x0, &rows);
            assert_eq!(
                (lane_bits(dx), lane_bits(dy)),
                (lane_bits(px), lane_bits(py))
            );
            for l in 0..LANES {
                let d = x0[a[l] as usize] - x0[b[l] as usize];
                assert_eq!((dx.to_array()[l], dy.to_array()[l]), (d.x, d.y), "{rows:?}");
            }
            let counts: &[usize] = if full { &[1, 4, 7, 8] } else { &[LANES] };
            for count in (!full).then_some(6..LANES).into_iter().flatten() {
                // A contiguous group with holes: the unused lanes' rows (here −0, ∞ and NaN
                // coordinates) come back bit for bit.
                let mut x_holes = x0.clone();
                for l in count..LANES {
                    x_holes[a[l] as usize] = Vec2::new(-0.0, f32::INFINITY);
                    x_holes[b[l] as usize] = Vec2::new(f32::NAN, -0.0);
                }
                // Whatever the steps of the holes (here NaN and +0), they are not applied.
                let hole = |v: f32x8, value: f32| {
                    let mut lanes = v.to_array();
                    lanes[count..].fill(value);
                    f32x8::new(lanes)
                };
                let step_a = (hole(dx, f32::NAN), hole(dy, 0.0));
                let step_b = (hole(dy, f32::NAN), hole(dx, -0.0));
                let (mut x, mut y) = (x_holes.clone(), x_holes.clone());
                correct(&mut x, &rows, count, step_a, step_b);
                portable::correct(&mut y, &rows, count, step_a, step_b);
                assert_eq!(bits(&x), bits(&y), "{rows:?} count {count}");
                let (new, old) = (bits(&x), bits(&x_holes));
                let moved = new.iter().zip(&old).filter(|(p, q)| p != q).count();
                assert_eq!(
                    moved,
                    2 * count,
                    "{rows:?}: the holes' rows keep their bits"
                );
            }
            for &count in counts {
                let (mut x, mut y) = (x0.clone(), x0.clone());
                correct(&mut x, &rows, count, (dx, dy), (dy, dx));
                portable::correct(&mut y, &rows, count, (dx, dy), (dy, dx));
                assert_eq!(bits(&x), bits(&y), "{rows:?} count {count}");
                let l = count - 1;
                let (dxl, dyl) = (dx.to_array()[l], dy.to_array()[l]);
                assert_eq!(x[a[l] as usize], x0[a[l] as usize] + Vec2::new(dxl, dyl));
                assert_eq!(x[b[l] as usize], x0[b[l] as usize] - Vec2::new(dyl, dxl));
                let moved = x.iter().zip(&x0).filter(|(p, q)| p != q).count();
                assert_eq!(moved, 2 * count, "{rows:?}: only the used lanes' rows move");
            }
            // A NaN step (the one ∞·0 gives: sign bit set) leaves the same bits on every
            // path: a − NaN keeps the NaN's sign, a + (−NaN) would not.
            let nan = f32::from_bits(0xffc0_0000);
            let mut nans = dy.to_array();
            nans[1] = nan;
            let steps = (f32x8::new(nans), f32x8::new(nans));
            let (mut x, mut y) = (x0.clone(), x0.clone());
            correct(&mut x, &rows, LANES, steps, steps);
            portable::correct(&mut y, &rows, LANES, steps, steps);
            assert_eq!(bits(&x), bits(&y), "{rows:?} with a NaN step");
            assert_eq!(x[b[1] as usize].x.to_bits(), 0xffc0_0000, "{rows:?}");
        }
    }
}
