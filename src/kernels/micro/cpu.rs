//! CPU references of `shaders/micro/*.wgsl`, over the same data layout.

use crate::kernels::parallel_ranges;

/// `shared/mix.wgsl`: the integer mixing round of the divergent loop and branch kernels.
pub fn mix(h: u32) -> u32 {
    let mut x = h.wrapping_mul(0x9E37_79B1);
    x ^= x >> 15;
    x.wrapping_mul(0x85EB_CA77).wrapping_add(1)
}

/// `if_branch.wgsl`: values below `threshold` take `heavy` rounds of mixing.
pub fn if_branch(values: &[u32], threshold: u32, heavy: u32) -> Vec<u32> {
    parallel_ranges(values.len(), |r| {
        values[r].iter().map(|&v| if v < threshold { (0..heavy).fold(v, |h, _| mix(h)) } else { v ^ 0xA5A5_A5A5 }).collect::<Vec<_>>()
    })
    .concat()
}

/// `data_loop.wgsl`: element i runs `trips[i]` rounds of mixing from `seeds[i]`.
pub fn data_loop(trips: &[u32], seeds: &[u32]) -> Vec<u32> {
    parallel_ranges(trips.len(), |r| r.map(|i| (0..trips[i]).fold(seeds[i], |h, _| mix(h))).collect::<Vec<_>>()).concat()
}
