// Ryoo et al., section 4.4: the 16×16 tiled and unrolled kernel that prefetches the next
// tiles of A and B into registers before computing on the current tiles in workgroup memory
// (two more live registers per invocation; latency of the global loads overlaps the FMAs).
// The tiling and the unrolled tile product are unrolled.wgsl's (shared/matmul_tile16.wgsl).
// CPU reference: kernels::matmul::cpu::matmul.
//! variants: (none)

#import matmul_tile16

@compute @workgroup_size(16, 16)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let at = tile_position(lid, wid);
    let tiles = tile_steps();
    var acc = 0.0;
    var next_a = load_a(at, 0u);
    var next_b = load_b(at, 0u);
    for (var t = 0u; t < tiles; t++) {
        As[at.slot] = next_a;
        Bs[at.slot] = next_b;
        workgroupBarrier();
        // prefetch the next tiles while this one is multiplied
        if (t + 1u < tiles) {
            next_a = load_a(at, t + 1u);
            next_b = load_b(at, t + 1u);
        }
        acc = multiply_tiles(acc, at);
        workgroupBarrier();
    }
    store_c(at, acc);
}
