// Zhang's Figure 1(b): a loop whose trip count depends on data. Each thread runs trips[i]
// rounds of integer mixing seeded with seeds[i].
// CPU reference: kernels::micro::cpu::data_loop. With REMAP, thread i works on element
// remap_index[i] (reference redirection), giving identical outputs in a different order of work.
//! variants: PROBE REMAP

#import grid
#import probe

const PROBE_SITES: u32 = 1u;
const WG: u32 = 256u;

struct Params {
    n: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<storage, read> trips: array<u32>;
@group(0) @binding(1) var<storage, read> seeds: array<u32>;
@group(0) @binding(2) var<storage, read_write> results: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;
#ifdef REMAP
@group(0) @binding(4) var<storage, read> remap_index: array<u32>;
#endif

fn mix(h: u32) -> u32 {
    var x = h * 0x9E3779B1u;
    x ^= x >> 15u;
    return x * 0x85EBCA77u + 1u;
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    probe_begin(ids);
    let t = global_index(ids, WG);
    if (t < params.n) {
#ifdef REMAP
        let i = remap_index[t];
#else
        let i = t;
#endif
        let count = trips[i];
        var h = seeds[i];
        for (var r = 0u; probe(0u, r < count); r++) {
            h = mix(h);
        }
        results[i] = h;
    }
    probe_end();
}
