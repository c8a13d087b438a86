//! CPU references of `shaders/split/*.wgsl`, over the same data layout.

use crate::kernels::micro::cpu::mix;
use crate::kernels::parallel_ranges;

/// `light` in `branch_split.wgsl`: the if-branch.
pub fn light(x: [u32; 4], rounds: u32) -> u32 {
    (0..rounds).fold(x[0] ^ x[1], |h, _| mix(h))
}

type V = [u32; 4];

fn map2(a: V, b: V, f: impl Fn(u32, u32) -> u32) -> V {
    [f(a[0], b[0]), f(a[1], b[1]), f(a[2], b[2]), f(a[3], b[3])]
}
fn add(a: V, b: V) -> V {
    map2(a, b, u32::wrapping_add)
}
fn xor(a: V, b: V) -> V {
    map2(a, b, |x, y| x ^ y)
}
fn mul(a: V, b: V) -> V {
    map2(a, b, u32::wrapping_mul)
}
fn rotl(a: V, s: u32) -> V {
    a.map(|x| x.rotate_left(s))
}
/// WGSL swizzle: `v.yzwx` is `sw(v, [1, 2, 3, 0])`.
fn sw(v: V, idx: [usize; 4]) -> V {
    idx.map(|i| v[i])
}
const YZWX: [usize; 4] = [1, 2, 3, 0];
const ZWXY: [usize; 4] = [2, 3, 0, 1];
const WXYZ: [usize; 4] = [3, 0, 1, 2];

fn quarter(a: &mut V, b: &mut V, c: &mut V, d: &mut V) {
    *a = add(*a, *b);
    *d = rotl(xor(*d, *a), 16);
    *c = add(*c, *d);
    *b = rotl(xor(*b, *c), 12);
    *a = add(*a, *b);
    *d = rotl(xor(*d, *a), 8);
    *c = add(*c, *d);
    *b = rotl(xor(*b, *c), 7);
}

/// `heavy` in `branch_split.wgsl`: the else-branch (two cross-mixed ChaCha-style states).
pub fn heavy(x: V, i: u32, rounds: u32) -> u32 {
    let mut a0 = x;
    let mut b0 = xor(sw(x, YZWX), [0x6170_7865, 0x3320_646E, 0x7962_2D32, 0x6B20_6574]);
    let mut c0 = add(x, [i, i ^ 0x5555_5555, !i, i.wrapping_mul(3)]);
    let mut d0 = mul(x, [0x9E37_79B1, 0x85EB_CA77, 0xC2B2_AE3D, 0x27D4_EB2F]);
    let mut a1 = add(sw(x, [3, 2, 1, 0]), [1, 2, 3, 4]);
    let mut b1 = xor(x, [i; 4]);
    let mut c1 = mul(sw(x, ZWXY), [0x1656_67B1; 4]);
    let mut d1 = xor([i, i.wrapping_add(1), i.wrapping_add(2), i.wrapping_add(3)], sw(x, [1, 0, 3, 2]));
    for _ in 0..rounds {
        quarter(&mut a0, &mut b0, &mut c0, &mut d0);
        quarter(&mut a1, &mut b1, &mut c1, &mut d1);
        b0 = sw(b0, YZWX);
        c0 = sw(c0, ZWXY);
        d0 = sw(d0, WXYZ);
        b1 = sw(b1, YZWX);
        c1 = sw(c1, ZWXY);
        d1 = sw(d1, WXYZ);
        quarter(&mut a0, &mut b0, &mut c0, &mut d0);
        quarter(&mut a1, &mut b1, &mut c1, &mut d1);
        b0 = sw(b0, WXYZ);
        c0 = sw(c0, ZWXY);
        d0 = sw(d0, YZWX);
        b1 = sw(b1, WXYZ);
        c1 = sw(c1, ZWXY);
        d1 = sw(d1, YZWX);
        let t = a0;
        a0 = add(a0, d1);
        a1 = xor(a1, t);
    }
    let s = add(add(xor(a0, b1), xor(b0, c1)), add(xor(c0, d1), xor(d0, a1)));
    s[0] ^ s[1] ^ s[2] ^ s[3]
}

/// `branch_split.wgsl` (every entry point): light where `mask[i] == 0`, heavy elsewhere.
pub fn branch(mask: &[u32], data: &[[u32; 4]], light_rounds: u32, heavy_rounds: u32) -> Vec<u32> {
    parallel_ranges(mask.len(), |r| {
        r.map(|i| if mask[i] == 0 { light(data[i], light_rounds) } else { heavy(data[i], i as u32, heavy_rounds) }).collect::<Vec<_>>()
    })
    .concat()
}

/// `loop_split.wgsl` (both entry points): thread t reads element `j·n + t` of each array for
/// `j < len` and returns `(Σ p1·p2) % (1 + Σ p3 / p4)` in wrapping u32 arithmetic.
pub fn loop_split(p: [&[u32]; 4], n: usize, len: usize) -> Vec<u32> {
    parallel_ranges(n, |r| {
        r.map(|t| {
            let (mut x, mut y) = (0u32, 1u32);
            for j in 0..len {
                let e = j * n + t;
                x = x.wrapping_add(p[0][e].wrapping_mul(p[1][e]));
                y = y.wrapping_add(p[2][e] / p[3][e]);
            }
            // y ≥ 1: inputs keep p3 / p4 < 2^20 and len ≤ 4096, so the sum never wraps.
            x % y
        })
        .collect::<Vec<_>>()
    })
    .concat()
}
