//! CPU references of the persistent-threads use cases (same data layout and integer arithmetic
//! as `shaders/pt/*.wgsl`, so GPU results compare exactly).

use crate::kernels::parallel_ranges;

/// Multiplier of the synthetic multiply-add chain (an LCG constant).
pub const MUL: u32 = 1_664_525;
/// Addend of the synthetic multiply-add chain (an LCG constant).
pub const ADD: u32 = 1_013_904_223;

/// `count` multiply-adds x = x * mul + add (mod 2^32) (`pt_mads` in pt_work.wgsl).
fn mads(x0: u32, count: u32, mul: u32, add: u32) -> u32 {
    let mut x = x0;
    for _ in 0..count {
        x = x.wrapping_mul(mul).wrapping_add(add);
    }
    x
}

/// `pt_hash` in pt_work.wgsl.
pub fn hash(a: u32) -> u32 {
    let mut x = a.wrapping_mul(0x9E37_79B1);
    x ^= x >> 16;
    x = x.wrapping_mul(0x85EB_CA6B);
    x ^= x >> 13;
    x
}

/// Use case 1 (sync.wgsl): `results[i]` for every emitted input (`input[i] < threshold`), 0 elsewhere.
/// Mode 0: `fmas` multiply-adds; mode 1: multiply-adds with a strided load each.
pub fn sync(input: &[u32], threshold: u32, fmas: u32, mode: u32, data: &[u32], stride: u32) -> Vec<u32> {
    let mask = data.len() as u32 - 1;
    let parts = parallel_ranges(input.len(), |r| {
        r.map(|i| {
            let v = input[i];
            if v >= threshold {
                return 0;
            }
            if mode == 0 {
                return mads(v, fmas, MUL, ADD);
            }
            let mut x = v;
            for k in 0..fmas {
                let at = (i as u32).wrapping_add(k.wrapping_mul(stride)) & mask;
                x = x.wrapping_mul(MUL).wrapping_add(data[at as usize]);
            }
            x
        })
        .collect::<Vec<u32>>()
    });
    parts.concat()
}

/// Items of level `level` of a forest (forest.wgsl): n0 at level 0, n0 rounded up to even later
/// for the tilted forest, n0 * 2^level for the complete one.
pub fn forest_level_size(n0: u32, level: u32, tilted: bool) -> u64 {
    if tilted {
        if level == 0 {
            n0 as u64
        } else {
            (n0 + (n0 & 1)) as u64
        }
    } else {
        (n0 as u64) << level
    }
}

/// The workgroup checksum of item (level, k): Σ over 256 lanes of mads(seed, fmas).
fn forest_item(level: u32, k: u32, fmas: u32) -> u32 {
    (0..256u32).fold(0u32, |acc, lane| {
        let seed = hash(hash(hash(level) ^ k).wrapping_add(lane));
        acc.wrapping_add(mads(seed, fmas, MUL, ADD))
    })
}

/// Use case 2 (forest.wgsl): per level, `[2L]` = wrapping sum of item checksums, `[2L+1]` = items.
pub fn forest(n0: u32, depth: u32, tilted: bool, fmas: u32) -> Vec<u32> {
    let mut out = vec![0u32; 2 * depth as usize];
    let mut level_items: Vec<u32> = (0..n0).collect();
    for level in 0..depth {
        let sums =
            parallel_ranges(level_items.len(), |r| r.fold(0u32, |acc, i| acc.wrapping_add(forest_item(level, level_items[i], fmas))));
        out[2 * level as usize] = sums.into_iter().fold(0u32, u32::wrapping_add);
        out[2 * level as usize + 1] = level_items.len() as u32;
        if level + 1 >= depth {
            break;
        }
        let size = forest_level_size(n0, level, tilted) as u32;
        let mut next = Vec::new();
        for &k in &level_items {
            if !tilted {
                next.extend([2 * k, 2 * k + 1]);
            } else if k >= size / 2 {
                let f = 2 * (k - size / 2);
                next.extend([f, f + 1]);
            }
        }
        level_items = next;
    }
    out
}

/// Use case 3a (prodcons.wgsl): wrapping u32 sum.
pub fn reduce(input: &[u32]) -> u32 {
    input.iter().fold(0u32, |a, &b| a.wrapping_add(b))
}

/// Whether item i passes to stage 2 (`passes` in prodcons.wgsl).
pub fn passes(i: u32, pass_per_256: u32) -> bool {
    ((i & 255).wrapping_mul(167).wrapping_add(13) & 255) < pass_per_256
}

/// Use case 3b (prodcons.wgsl): `out[i] = stage2(stage1(input[i]))` for passed items, else 0.
pub fn two_stage(input: &[u32], fmas: u32, pass_per_256: u32) -> Vec<u32> {
    parallel_ranges(input.len(), |r| {
        r.map(|i| {
            if !passes(i as u32, pass_per_256) {
                return 0;
            }
            let x = mads(input[i], fmas, MUL, ADD);
            mads(x.wrapping_add(1), fmas, MUL, ADD)
        })
        .collect::<Vec<u32>>()
    })
    .concat()
}

/// Use case 4 (gsync.wgsl): `phases` phases of `next[i] = mads(prev[i] + prev[(i + shift) % n])`.
pub fn gsync(init: &[u32], fmas: u32, phases: u32, shift: u32) -> Vec<u32> {
    let n = init.len();
    let mut cur = init.to_vec();
    for _ in 0..phases {
        let prev = &cur;
        cur = parallel_ranges(n, |r| {
            r.map(|i| {
                let j = (i + shift as usize) % n;
                mads(prev[i].wrapping_add(prev[j]), fmas, MUL, ADD)
            })
            .collect::<Vec<u32>>()
        })
        .concat();
    }
    cur
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forests_have_the_paper_shapes() {
        // complete: n0 * 2^L items per level
        let f = forest(3, 4, false, 0);
        let counts: Vec<u32> = (0..4).map(|l| f[2 * l + 1]).collect();
        assert_eq!(counts, vec![3, 6, 12, 24]);
        // tilted: n0 at level 0, then n0 rounded up to even on every level
        let f = forest(5, 6, true, 1);
        let counts: Vec<u32> = (0..6).map(|l| f[2 * l + 1]).collect();
        assert_eq!(counts, vec![5, 6, 6, 6, 6, 6]);
        for l in 0..6 {
            assert_eq!(forest_level_size(5, l, true), counts[l as usize] as u64);
        }
    }

    #[test]
    fn pass_selection_is_exact_per_256() {
        for k in [0, 1, 32, 100, 256] {
            assert_eq!((0..256).filter(|&i| passes(i, k)).count(), k as usize);
        }
        assert_eq!(mads(5, 3, MUL, ADD), mads(mads(5, 1, MUL, ADD), 2, MUL, ADD));
    }
}
