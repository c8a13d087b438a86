// What the tree reductions (reduction/interleaved.wgsl, reduction/sequential.wgsl) share: each
// workgroup of WG invocations sums WG consecutive elements (zeros past n) in `sdata` and writes
// the sum to output[workgroup]; passes repeat to one value. Only the tree between
// `load_block` and `store_block` differs.

#import grid
#import probe

const WG: u32 = 256u;
// One probe site per tree level: log2(WG).
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

// sdata[local] = this invocation's element (0 past n), then a barrier.
fn load_block(ids: Ids) {
    let i = global_index(ids, WG);
    var v = 0.0;
    if (i < params.n) {
        v = input[i];
    }
    sdata[ids.local] = v;
    workgroupBarrier();
}

// output[workgroup] = sdata[0], the workgroup's sum.
fn store_block(ids: Ids) {
    let block = workgroup_index(ids);
    if (ids.local == 0u && block < params.blocks) {
        output[block] = sdata[0];
    }
}
