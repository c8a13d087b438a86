// Bandwidth-bound sum: a fixed number of workgroups stream the input as vec4<f32> with a
// grid-stride loop (four independent loads in flight per iteration), reduce in registers, then
// across the subgroup (subgroupAdd, with SUBGROUPS) or in workgroup memory (without), and write
// one partial per workgroup; a second pass of one workgroup sums the partials. No divergent
// branches: the algorithmic ceiling for the redirect variant. 1D grid (at most 65535 groups).
// BLOCKED: no loop in the first pass; workgroup g sums the contiguous block of WG × PER vec4
// starting at g × WG × PER, all PER loads issued back to back (the access pattern of a
// one-element-per-thread kernel such as BlackScholes); 2D grid, surplus workgroups exit.
// CPU reference: kernels::reduction::cpu::fast (f64 sum).
//! variants: SUBGROUPS BLOCKED

const WG: u32 = 256u;
// vec4 per invocation of a BLOCKED first pass (kernels::reduction::BLOCKED_VEC4_PER_THREAD)
const PER: u32 = 8u;

struct Params {
    // vec4 elements (the input is zero-padded to a multiple of 4 floats)
    n4: u32,
    // BLOCKED: the workgroups that have a block (the rest of a 2D grid has nothing to do)
    blocks: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<storage, read> input: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

var<workgroup> partial: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
#ifdef SUBGROUPS
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) width: u32,
    @builtin(subgroup_id) subgroup: u32,
    @builtin(num_subgroups) subgroups: u32,
#endif
) {
    let n4 = params.n4;
    var a = vec4<f32>(0.0);
    var b = vec4<f32>(0.0);
    var c = vec4<f32>(0.0);
    var d = vec4<f32>(0.0);
#ifdef BLOCKED
    let group = wid.y * groups.x + wid.x;
    if (group >= params.blocks) {
        return;
    }
    let i = group * (WG * PER) + lid;
    if (i + (PER - 1u) * WG < n4) {
        a = input[i] + input[i + 4u * WG];
        b = input[i + WG] + input[i + 5u * WG];
        c = input[i + 2u * WG] + input[i + 6u * WG];
        d = input[i + 3u * WG] + input[i + 7u * WG];
    } else {
        // the last block: guarded loads
        for (var k = 0u; k < PER; k++) {
            if (i + k * WG < n4) {
                a += input[i + k * WG];
            }
        }
    }
#else
    let stride = groups.x * WG;
    var i = wid.x * WG + lid;
    while (i + 3u * stride < n4) {
        a += input[i];
        b += input[i + stride];
        c += input[i + 2u * stride];
        d += input[i + 3u * stride];
        i += 4u * stride;
    }
    while (i < n4) {
        a += input[i];
        i += stride;
    }
#endif
    let v = (a + b) + (c + d);
    var sum = (v.x + v.y) + (v.z + v.w);
#ifdef SUBGROUPS
    sum = subgroupAdd(sum);
    if (lane == 0u) {
        partial[subgroup] = sum;
    }
    workgroupBarrier();
    if (subgroup == 0u) {
        var t = 0.0;
        for (var j = lane; j < subgroups; j += width) {
            t += partial[j];
        }
        t = subgroupAdd(t);
        if (lane == 0u) {
            output[wid.y * groups.x + wid.x] = t;
        }
    }
#else
    partial[lid] = sum;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (lid < s) {
            partial[lid] += partial[lid + s];
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        output[wid.y * groups.x + wid.x] = partial[0];
    }
#endif
}
