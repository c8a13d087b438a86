// Ryoo et al., Figure 3(c): the 16×16 tiled kernel with its inner loop over the tile fully
// unrolled (constant offsets into workgroup memory, no induction variable or loop branch).
// The 16 multiply-adds are written out in shared/matmul_tile16.wgsl; keep them in step with
// tiled.wgsl.
// CPU reference: kernels::matmul::cpu::matmul.
//! variants: (none)

#import matmul_tile16

@compute @workgroup_size(16, 16)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let at = tile_position(lid, wid);
    let tiles = tile_steps();
    var acc = 0.0;
    for (var t = 0u; t < tiles; t++) {
        As[at.slot] = load_a(at, t);
        Bs[at.slot] = load_b(at, t);
        workgroupBarrier();
        acc = multiply_tiles(acc, at);
        workgroupBarrier();
    }
    store_c(at, acc);
}
