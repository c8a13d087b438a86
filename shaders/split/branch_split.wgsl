// Carrillo et al., section 5 (Figure 6): one kernel with an if/else on a decision mask
// (`branched`) against the same work split into two kernels (`split_if`, `split_else`), each
// of which leaves at once for elements of the other branch.
//
// The if-branch is light: a few rounds of integer mixing on one word (few live values, few
// registers). The else-branch is heavy: two interleaved ChaCha-style states of 16 words each,
// cross-mixed every double round so that all 32 words stay live (many registers). In the
// branched kernel the whole kernel is compiled for the heavy branch's register count, which
// caps its occupancy even for warps that only take the light branch.
//
// Every entry point writes results[i] = light(data[i]) where mask[i] == 0 and heavy(data[i], i)
// elsewhere; the split pair writes each element exactly once between them.
// CPU reference: kernels::carrillo::cpu::branch.
//! variants: PROBE

#import grid
#import probe
#import mix

const PROBE_SITES: u32 = 1u;
const WG: u32 = 256u;

struct Params {
    n: u32,
    light_rounds: u32,
    heavy_rounds: u32,
    pad: u32,
}

@group(0) @binding(0) var<storage, read> mask: array<u32>;
@group(0) @binding(1) var<storage, read> data: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> results: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

// The if-branch: one live word.
fn light(x: vec4<u32>) -> u32 {
    var h = x.x ^ x.y;
    for (var r = 0u; r < params.light_rounds; r++) {
        h = mix(h);
    }
    return h;
}

fn rotl(v: vec4<u32>, s: u32) -> vec4<u32> {
    return (v << vec4<u32>(s)) | (v >> vec4<u32>(32u - s));
}

// The else-branch: 32 live words.
fn heavy(x: vec4<u32>, i: u32) -> u32 {
    var a0 = x;
    var b0 = x.yzwx ^ vec4<u32>(0x61707865u, 0x3320646Eu, 0x79622D32u, 0x6B206574u);
    var c0 = x + vec4<u32>(i, i ^ 0x55555555u, ~i, i * 3u);
    var d0 = x * vec4<u32>(0x9E3779B1u, 0x85EBCA77u, 0xC2B2AE3Du, 0x27D4EB2Fu);
    var a1 = x.wzyx + vec4<u32>(1u, 2u, 3u, 4u);
    var b1 = x ^ vec4<u32>(i);
    var c1 = x.zwxy * vec4<u32>(0x165667B1u);
    var d1 = vec4<u32>(i, i + 1u, i + 2u, i + 3u) ^ x.yxwz;
    for (var r = 0u; r < params.heavy_rounds; r++) {
        // column rounds
        a0 += b0; d0 = rotl(d0 ^ a0, 16u); c0 += d0; b0 = rotl(b0 ^ c0, 12u);
        a1 += b1; d1 = rotl(d1 ^ a1, 16u); c1 += d1; b1 = rotl(b1 ^ c1, 12u);
        a0 += b0; d0 = rotl(d0 ^ a0, 8u); c0 += d0; b0 = rotl(b0 ^ c0, 7u);
        a1 += b1; d1 = rotl(d1 ^ a1, 8u); c1 += d1; b1 = rotl(b1 ^ c1, 7u);
        // diagonal rounds
        b0 = b0.yzwx; c0 = c0.zwxy; d0 = d0.wxyz;
        b1 = b1.yzwx; c1 = c1.zwxy; d1 = d1.wxyz;
        a0 += b0; d0 = rotl(d0 ^ a0, 16u); c0 += d0; b0 = rotl(b0 ^ c0, 12u);
        a1 += b1; d1 = rotl(d1 ^ a1, 16u); c1 += d1; b1 = rotl(b1 ^ c1, 12u);
        a0 += b0; d0 = rotl(d0 ^ a0, 8u); c0 += d0; b0 = rotl(b0 ^ c0, 7u);
        a1 += b1; d1 = rotl(d1 ^ a1, 8u); c1 += d1; b1 = rotl(b1 ^ c1, 7u);
        b0 = b0.wxyz; c0 = c0.zwxy; d0 = d0.yzwx;
        b1 = b1.wxyz; c1 = c1.zwxy; d1 = d1.yzwx;
        // cross-mix the two states so neither can be finished before the other starts
        let t = a0;
        a0 += d1;
        a1 ^= t;
    }
    let s = (a0 ^ b1) + (b0 ^ c1) + (c0 ^ d1) + (d0 ^ a1);
    return s.x ^ s.y ^ s.z ^ s.w;
}

// Figure 6(a): one kernel, both branches.
@compute @workgroup_size(WG)
fn branched(ids: Ids) {
    probe_begin(ids);
    let i = global_index(ids, WG);
    if (i < params.n) {
        let m = mask[i];
        let x = data[i];
        var out: u32;
        if (probe(0u, m == 0u)) {
            out = light(x);
        } else {
            out = heavy(x, i);
        }
        results[i] = out;
    }
    probe_end();
}

// Figure 6(b), first kernel: only elements whose mask is 0; the rest leave at once.
@compute @workgroup_size(WG)
fn split_if(ids: Ids) {
    probe_begin(ids);
    let i = global_index(ids, WG);
    if (i < params.n) {
        if (probe(0u, mask[i] == 0u)) {
            results[i] = light(data[i]);
        }
    }
    probe_end();
}

// Figure 6(b), second kernel: only elements whose mask is not 0.
@compute @workgroup_size(WG)
fn split_else(ids: Ids) {
    probe_begin(ids);
    let i = global_index(ids, WG);
    if (i < params.n) {
        if (probe(0u, mask[i] != 0u)) {
            results[i] = heavy(data[i], i);
        }
    }
    probe_end();
}
