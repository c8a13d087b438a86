// Carrillo et al., Figure 5: loop splitting. `fused` runs one loop that reads four arrays
// (all four base addresses live across the loop); `split` runs two loops over two arrays each.
// Thread t walks elements j*n + t for j < len (coalesced) and writes x % y with
// x = Σ p1*p2 and y = 1 + Σ p3/p4 (wrapping u32 arithmetic, p4 never 0).
// CPU reference: kernels::carrillo::cpu::loop_split.
//! variants: (none)

#import grid

const WG: u32 = 256u;

struct Params {
    n: u32,
    len: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<storage, read> p1: array<u32>;
@group(0) @binding(1) var<storage, read> p2: array<u32>;
@group(0) @binding(2) var<storage, read> p3: array<u32>;
@group(0) @binding(3) var<storage, read> p4: array<u32>;
@group(0) @binding(4) var<storage, read_write> results: array<u32>;
@group(0) @binding(5) var<uniform> params: Params;

// Figure 5(a).
@compute @workgroup_size(WG)
fn fused(ids: Ids) {
    let t = global_index(ids, WG);
    if (t >= params.n) {
        return;
    }
    var x = 0u;
    var y = 1u;
    for (var j = 0u; j < params.len; j++) {
        let e = j * params.n + t;
        x += p1[e] * p2[e];
        y += p3[e] / p4[e];
    }
    results[t] = x % y;
}

// Figure 5(b).
@compute @workgroup_size(WG)
fn split(ids: Ids) {
    let t = global_index(ids, WG);
    if (t >= params.n) {
        return;
    }
    var x = 0u;
    for (var j = 0u; j < params.len; j++) {
        let e = j * params.n + t;
        x += p1[e] * p2[e];
    }
    var y = 1u;
    for (var j = 0u; j < params.len; j++) {
        let e = j * params.n + t;
        y += p3[e] / p4[e];
    }
    results[t] = x % y;
}
