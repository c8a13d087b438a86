// Tree reduction with sequential addressing (NVIDIA SDK reduction kernel 2): at level s the
// threads tid < s add sdata[tid + s], so active threads stay packed and only the last levels
// (s below the warp width) diverge. The algorithmic fix Zhang 5.5 mentions.
// CPU reference: kernels::reduction::cpu::sequential (f64 sum).
//! variants: PROBE

#import grid
#import probe

const WG: u32 = 256u;
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
    var level = 0u;
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (probe(level, tid < s)) {
            sdata[tid] += sdata[tid + s];
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
