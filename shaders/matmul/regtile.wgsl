// Register-tiled SGEMM, C = A·B (f32, row-major, M×K times K×N), beyond Ryoo et al.: each
// invocation computes a TM×TN block of C in registers, a workgroup of WG_X×WG_Y invocations a
// BM×BN = (WG_Y·TM)×(WG_X·TN) tile. Per step of BK along K the workgroup stages A (transposed,
// BK×BM) and B (BK×BN) in double-buffered workgroup memory: the next step's tiles are loaded
// into registers before the FMAs on the current ones and stored to the other buffer after, so
// there is one barrier per step. Fragments are read from workgroup memory as vec4; an
// invocation's rows (and columns) are 4-wide groups strided by 4·WG_Y (4·WG_X), so the vec4
// reads of a warp are contiguous (no bank conflicts).
//
// Tuning: WG_X, WG_Y, BK are overrides; TM = TN = 8 unless TM4 / TN4 (4). BK must be a
// multiple of 4 and each invocation loads at most MAX_LOADS vec4 of A and of B per step
// (kernels::matmul::RegtileConfig::validate checks both).
// Default path: K and N multiples of 4 (vec4 global loads and stores). UNALIGNED: scalar
// global access for any K, N. Loads outside the matrices read 0; stores are guarded.
// CPU reference: kernels::matmul::cpu::matmul.
//! variants: TM4 TN4 UNALIGNED

override WG_X: u32 = 16u;
override WG_Y: u32 = 16u;
override BK: u32 = 8u;

#ifdef TM4
const TM: u32 = 4u;
#else
const TM: u32 = 8u;
#endif
#ifdef TN4
const TN: u32 = 4u;
#else
const TN: u32 = 8u;
#endif
const TM4: u32 = TM / 4u;
const TN4: u32 = TN / 4u;
const MAX_LOADS: u32 = 4u;

override THREADS: u32 = WG_X * WG_Y;
override BM: u32 = WG_Y * TM;
override BN: u32 = WG_X * TN;
// vec4 per step: A tile (BM rows × BK/4), B tile (BK rows × BN/4)
override A_VEC4: u32 = BM * BK / 4u;
override B_VEC4: u32 = BK * BN / 4u;
override A_LOADS: u32 = (A_VEC4 + THREADS - 1u) / THREADS;
override B_LOADS: u32 = (B_VEC4 + THREADS - 1u) / THREADS;

struct Params {
    m: u32,
    n: u32,
    k: u32,
    pad: u32,
}

#ifdef UNALIGNED
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
#else
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
#endif
@group(0) @binding(3) var<uniform> params: Params;

// Two buffers each: As[buf][k][m] (A transposed), Bs[buf][k][n], as vec4 along m / n.
var<workgroup> As: array<vec4<f32>, 2u * A_VEC4>;
var<workgroup> Bs: array<vec4<f32>, 2u * B_VEC4>;

// Four consecutive elements A[row][k..k+4] (zero outside A).
fn load_a(row: u32, k: u32) -> vec4<f32> {
    let m = params.m;
    let kk = params.k;
#ifdef UNALIGNED
    var v = vec4<f32>(0.0);
    if (row < m) {
        let base = row * kk;
        for (var j = 0u; j < 4u; j++) {
            if (k + j < kk) {
                v[j] = a[base + k + j];
            }
        }
    }
    return v;
#else
    if (row < m && k < kk) {
        return a[(row * kk + k) / 4u];
    }
    return vec4<f32>(0.0);
#endif
}

// Four consecutive elements B[k][col..col+4] (zero outside B).
fn load_b(k: u32, col: u32) -> vec4<f32> {
    let n = params.n;
#ifdef UNALIGNED
    var v = vec4<f32>(0.0);
    if (k < params.k) {
        let base = k * n;
        for (var j = 0u; j < 4u; j++) {
            if (col + j < n) {
                v[j] = b[base + col + j];
            }
        }
    }
    return v;
#else
    if (k < params.k && col < n) {
        return b[(k * n + col) / 4u];
    }
    return vec4<f32>(0.0);
#endif
}

fn store_c(row: u32, col: u32, v: vec4<f32>) {
    let n = params.n;
    if (row >= params.m) {
        return;
    }
#ifdef UNALIGNED
    for (var j = 0u; j < 4u; j++) {
        if (col + j < n) {
            c[row * n + col + j] = v[j];
        }
    }
#else
    if (col < n) {
        c[(row * n + col) / 4u] = v;
    }
#endif
}

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let tx = lid.x;
    let ty = lid.y;
    let tid = ty * WG_X + tx;
    let m0 = wid.y * BM;
    let n0 = wid.x * BN;
    let steps = (params.k + BK - 1u) / BK;

    var acc: array<vec4<f32>, TM * TN4>;
    var next_a: array<vec4<f32>, MAX_LOADS>;
    var next_b: array<vec4<f32>, MAX_LOADS>;

    // global -> registers for step s
    // (A: vec4 l covers row l / (BK/4), columns 4·(l % (BK/4)); B: row l / (BN/4), columns 4·(l % (BN/4)))
    for (var i = 0u; i < A_LOADS; i++) {
        let l = tid + i * THREADS;
        next_a[i] = load_a(m0 + l / (BK / 4u), 4u * (l % (BK / 4u)));
    }
    for (var i = 0u; i < B_LOADS; i++) {
        let l = tid + i * THREADS;
        next_b[i] = load_b(l / (BN / 4u), n0 + 4u * (l % (BN / 4u)));
    }
    // registers -> buffer 0
    for (var i = 0u; i < A_LOADS; i++) {
        let l = tid + i * THREADS;
        if (l < A_VEC4) {
            let row = l / (BK / 4u);
            let kc = 4u * (l % (BK / 4u));
            for (var j = 0u; j < 4u; j++) {
                As[(kc + j) * (BM / 4u) + row / 4u][row % 4u] = next_a[i][j];
            }
        }
    }
    for (var i = 0u; i < B_LOADS; i++) {
        let l = tid + i * THREADS;
        if (l < B_VEC4) {
            Bs[l] = next_b[i];
        }
    }
    workgroupBarrier();

    for (var s = 0u; s < steps; s++) {
        let cur = s % 2u;
        let more = s + 1u < steps;
        // prefetch step s + 1 into registers
        if (more) {
            let k0 = (s + 1u) * BK;
            for (var i = 0u; i < A_LOADS; i++) {
                let l = tid + i * THREADS;
                next_a[i] = load_a(m0 + l / (BK / 4u), k0 + 4u * (l % (BK / 4u)));
            }
            for (var i = 0u; i < B_LOADS; i++) {
                let l = tid + i * THREADS;
                next_b[i] = load_b(k0 + l / (BN / 4u), n0 + 4u * (l % (BN / 4u)));
            }
        }
        // multiply the current tiles
        let a_base = cur * A_VEC4;
        let b_base = cur * B_VEC4;
        for (var k = 0u; k < BK; k++) {
            var af: array<vec4<f32>, TM4>;
            var bf: array<vec4<f32>, TN4>;
            for (var g = 0u; g < TM4; g++) {
                af[g] = As[a_base + k * (BM / 4u) + g * WG_Y + ty];
            }
            for (var h = 0u; h < TN4; h++) {
                bf[h] = Bs[b_base + k * (BN / 4u) + h * WG_X + tx];
            }
            for (var g = 0u; g < TM4; g++) {
                for (var r = 0u; r < 4u; r++) {
                    let av = vec4<f32>(af[g][r]);
                    for (var h = 0u; h < TN4; h++) {
                        let q = (g * 4u + r) * TN4 + h;
                        acc[q] = fma(av, bf[h], acc[q]);
                    }
                }
            }
        }
        // registers -> the other buffer
        if (more) {
            let other = 1u - cur;
            for (var i = 0u; i < A_LOADS; i++) {
                let l = tid + i * THREADS;
                if (l < A_VEC4) {
                    let row = l / (BK / 4u);
                    let kc = 4u * (l % (BK / 4u));
                    for (var j = 0u; j < 4u; j++) {
                        As[other * A_VEC4 + (kc + j) * (BM / 4u) + row / 4u][row % 4u] = next_a[i][j];
                    }
                }
            }
            for (var i = 0u; i < B_LOADS; i++) {
                let l = tid + i * THREADS;
                if (l < B_VEC4) {
                    Bs[other * B_VEC4 + l] = next_b[i];
                }
            }
        }
        workgroupBarrier();
    }

    for (var g = 0u; g < TM4; g++) {
        for (var r = 0u; r < 4u; r++) {
            let row = m0 + (g * WG_Y + ty) * 4u + r;
            for (var h = 0u; h < TN4; h++) {
                store_c(row, n0 + (h * WG_X + tx) * 4u, acc[(g * 4u + r) * TN4 + h]);
            }
        }
    }
}
