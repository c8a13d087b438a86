// Tree reduction with interleaved addressing (NVIDIA SDK reduction kernel 0): at level s only
// threads with tid % 2s == 0 add, so every warp diverges at every level. Each workgroup sums
// WG consecutive elements (zeros past n) into output[workgroup]; passes repeat to one value.
// CPU reference: kernels::reduction::cpu::interleaved (f64 sum).
// With REMAP, the references to tid except the load use id_array[tid] (Zhang 5.5, newIDArray:
// the even ids first, then the odd ones), so the active threads of each level are packed into
// whole warps and the idle warps skip the level.
//! variants: PROBE REMAP

#import grid
#import probe

const WG: u32 = 256u;
// One site per tree level: log2(WG).
const PROBE_SITES: u32 = 8u;

struct Params {
    n: u32,
    blocks: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;
#ifdef REMAP
@group(0) @binding(3) var<storage, read> id_array: array<u32>;
#endif

var<workgroup> sdata: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    probe_begin(ids);
    let tid = ids.local;
    let i = global_index(ids, WG);
    var v = 0.0;
    if (i < params.n) {
        v = input[i];
    }
    sdata[tid] = v;
    workgroupBarrier();
#ifdef REMAP
    let id = id_array[tid];
#else
    let id = tid;
#endif
    var level = 0u;
    for (var s = 1u; s < WG; s *= 2u) {
        if (probe(level, id % (2u * s) == 0u)) {
            sdata[id] += sdata[id + s];
        }
        level += 1u;
        workgroupBarrier();
    }
    let block = workgroup_index(ids);
    if (tid == 0u && block < params.blocks) {
        output[block] = sdata[0];
    }
    probe_end();
}
