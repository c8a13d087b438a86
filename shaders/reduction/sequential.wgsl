// Tree reduction with sequential addressing (NVIDIA SDK reduction kernel 2): at level s the
// threads tid < s add sdata[tid + s], so active threads stay packed and only the last levels
// (s below the warp width) diverge. The algorithmic fix Zhang 5.5 mentions.
// CPU reference: kernels::reduction::cpu::sequential (f64 sum).
//! variants: PROBE

#import reduction_tree

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    probe_begin(ids);
    load_block(ids);
    let tid = ids.local;
    var level = 0u;
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (probe(level, tid < s)) {
            sdata[tid] += sdata[tid + s];
        }
        level += 1u;
        workgroupBarrier();
    }
    store_block(ids);
    probe_end();
}
