// Tree reduction with interleaved addressing (NVIDIA SDK reduction kernel 0): at level s only
// threads with tid % 2s == 0 add, so every warp diverges at every level. Each workgroup sums
// WG consecutive elements (zeros past n) into output[workgroup]; passes repeat to one value.
// CPU reference: kernels::reduction::cpu::interleaved (f64 sum).
// With REMAP, the references to tid except the load use id_array[tid] (Zhang 5.5, newIDArray:
// the even ids first, then the odd ones), so the active threads of each level are packed into
// whole warps and the idle warps skip the level.
//! variants: PROBE REMAP

#import reduction_tree

#ifdef REMAP
@group(0) @binding(3) var<storage, read> id_array: array<u32>;
#endif

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    probe_begin(ids);
    load_block(ids);
#ifdef REMAP
    let id = id_array[ids.local];
#else
    let id = ids.local;
#endif
    var level = 0u;
    for (var s = 1u; s < WG; s *= 2u) {
        if (probe(level, id % (2u * s) == 0u)) {
            sdata[id] += sdata[id + s];
        }
        level += 1u;
        workgroupBarrier();
    }
    store_block(ids);
    probe_end();
}
