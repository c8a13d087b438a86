// Ryoo et al., section 4.4: the 16×16 tiled and unrolled kernel that prefetches the next
// tiles of A and B into registers before computing on the current tiles in workgroup memory
// (two more live registers per invocation; latency of the global loads overlaps the FMAs).
// CPU reference: kernels::matmul::cpu::matmul.
//! variants: (none)

struct Params {
    m: u32,
    n: u32,
    k: u32,
    pad: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

const TILE: u32 = 16u;

var<workgroup> As: array<f32, 256>;
var<workgroup> Bs: array<f32, 256>;

fn load_a(row: u32, t: u32, tx: u32) -> f32 {
    let ka = t * TILE + tx;
    if (row < params.m && ka < params.k) {
        return a[row * params.k + ka];
    }
    return 0.0;
}

fn load_b(col: u32, t: u32, ty: u32) -> f32 {
    let kb = t * TILE + ty;
    if (kb < params.k && col < params.n) {
        return b[kb * params.n + col];
    }
    return 0.0;
}

@compute @workgroup_size(16, 16)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let tx = lid.x;
    let ty = lid.y;
    let row = wid.y * TILE + ty;
    let col = wid.x * TILE + tx;
    let arow = ty * TILE;
    let tiles = (params.k + TILE - 1u) / TILE;
    var acc = 0.0;
    var next_a = load_a(row, 0u, tx);
    var next_b = load_b(col, 0u, ty);
    for (var t = 0u; t < tiles; t++) {
        As[ty * TILE + tx] = next_a;
        Bs[ty * TILE + tx] = next_b;
        workgroupBarrier();
        // prefetch the next tiles while this one is multiplied
        if (t + 1u < tiles) {
            next_a = load_a(row, t + 1u, tx);
            next_b = load_b(col, t + 1u, ty);
        }
        acc += As[arow + 0u] * Bs[0u + tx];
        acc += As[arow + 1u] * Bs[16u + tx];
        acc += As[arow + 2u] * Bs[32u + tx];
        acc += As[arow + 3u] * Bs[48u + tx];
        acc += As[arow + 4u] * Bs[64u + tx];
        acc += As[arow + 5u] * Bs[80u + tx];
        acc += As[arow + 6u] * Bs[96u + tx];
        acc += As[arow + 7u] * Bs[112u + tx];
        acc += As[arow + 8u] * Bs[128u + tx];
        acc += As[arow + 9u] * Bs[144u + tx];
        acc += As[arow + 10u] * Bs[160u + tx];
        acc += As[arow + 11u] * Bs[176u + tx];
        acc += As[arow + 12u] * Bs[192u + tx];
        acc += As[arow + 13u] * Bs[208u + tx];
        acc += As[arow + 14u] * Bs[224u + tx];
        acc += As[arow + 15u] * Bs[240u + tx];
        workgroupBarrier();
    }
    if (row < params.m && col < params.n) {
        c[row * params.n + col] = acc;
    }
}
