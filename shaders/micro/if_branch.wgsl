// Zhang's Figure 1(a): an `if` whose condition depends on data. Threads whose value is below
// `threshold` (a fraction p of them) take the expensive path: `heavy` rounds of integer mixing.
// CPU reference: kernels::micro::cpu::if_branch.
//! variants: PROBE

#import grid
#import probe
#import mix

const PROBE_SITES: u32 = 1u;
const WG: u32 = 256u;

struct Params {
    n: u32,
    threshold: u32,
    heavy: u32,
    pad: u32,
}

@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> results: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    probe_begin(ids);
    let i = global_index(ids, WG);
    if (i < params.n) {
        let v = values[i];
        var h = v;
        if (probe(0u, v < params.threshold)) {
            for (var r = 0u; r < params.heavy; r++) {
                h = mix(h);
            }
        } else {
            h = h ^ 0xA5A5A5A5u;
        }
        results[i] = h;
    }
    probe_end();
}
