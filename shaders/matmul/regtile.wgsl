// Register-tiled SGEMM, C = A·B (f32, row-major, M×K times K×N), beyond Ryoo et al.: each
// invocation computes a TM×TN block of C in registers, a workgroup of WG_X×WG_Y invocations a
// BM×BN = (WG_Y·TM)×(WG_X·TN) tile. Per step of BK along K the workgroup stages A (transposed,
// BK×BM) and B (BK×BN) in double-buffered workgroup memory: the next step's tiles are loaded
// into registers before the FMAs on the current ones and stored to the other buffer after, so
// there is one barrier per step. Fragments are read from workgroup memory as vec4; an
// invocation's rows (columns) are two 4-wide groups 4·WG_Y (4·WG_X) apart, so the vec4 reads
// of a warp are contiguous (no bank conflicts).
//
// The micro-tile is written out (accumulators c<row><column group>, no private arrays) so that
// every value stays in a register whatever the driver's unrolling does.
//
// Tuning: WG_X, WG_Y, BK, WARP_X, WARP_Y are overrides; TM = TN = 8 unless TM4 / TN4 (4). BK must be a
// multiple of 4 and each invocation loads at most 4 vec4 of A and of B per step
// (kernels::matmul::RegtileConfig::validate checks both).
// Default path: K and N multiples of 4 (vec4 global loads and stores). UNALIGNED: scalar
// global access for any K, N. Loads outside the matrices read 0; stores are guarded.
// CPU reference: kernels::matmul::cpu::matmul.
//! variants: TM4 TN4 UNALIGNED

override WG_X: u32 = 16u;
override WG_Y: u32 = 16u;
override BK: u32 = 8u;
// Invocations tid = 32w + lane form WARP_X × WARP_Y blocks of (tx, ty), so that a 32-wide
// subgroup reads few distinct fragments (8 × 4: 4 of A, 8 of B, one 128-byte wavefront each).
// WARP_X must divide WG_X and WARP_Y divide WG_Y; WARP_X = WG_X, WARP_Y = 1 is row order.
override WARP_X: u32 = 8u;
override WARP_Y: u32 = 4u;
// Workgroups run in groups of GROUP_M tile rows, column by column inside a group, so the
// tiles of A and B that run at the same time share more of L2 (1 = plain row order).
override GROUP_M: u32 = 8u;

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

override THREADS: u32 = WG_X * WG_Y;
override BM: u32 = WG_Y * TM;
override BN: u32 = WG_X * TN;
// vec4 per step: A tile (BM rows × BK/4), B tile (BK rows × BN/4)
override A_VEC4: u32 = BM * BK / 4u;
override B_VEC4: u32 = BK * BN / 4u;
override A_LOADS: u32 = (A_VEC4 + THREADS - 1u) / THREADS;
override B_LOADS: u32 = (B_VEC4 + THREADS - 1u) / THREADS;

#ifdef UNALIGNED
alias MatmulElement = f32;
#else
alias MatmulElement = vec4<f32>;
#endif
#import matmul_bindings

// Two buffers each: As[buf][k][m] (A transposed), Bs[buf][k][n], as vec4 along m / n.
var<workgroup> As: array<vec4<f32>, 2u * A_VEC4>;
var<workgroup> Bs: array<vec4<f32>, 2u * B_VEC4>;

#ifdef UNALIGNED
fn a_at(row: u32, k: u32) -> f32 {
    if (k < params.k) {
        return a[row * params.k + k];
    }
    return 0.0;
}

fn b_at(base: u32, col: u32) -> f32 {
    if (col < params.n) {
        return b[base + col];
    }
    return 0.0;
}
#endif

// Four consecutive elements A[row][k..k+4] (zero outside A).
fn load_a(row: u32, k: u32) -> vec4<f32> {
#ifdef UNALIGNED
    if (row < params.m) {
        return vec4<f32>(a_at(row, k), a_at(row, k + 1u), a_at(row, k + 2u), a_at(row, k + 3u));
    }
#else
    if (row < params.m && k < params.k) {
        return a[(row * params.k + k) / 4u];
    }
#endif
    return vec4<f32>(0.0);
}

// Four consecutive elements B[k][col..col+4] (zero outside B).
fn load_b(k: u32, col: u32) -> vec4<f32> {
#ifdef UNALIGNED
    if (k < params.k) {
        let base = k * params.n;
        return vec4<f32>(b_at(base, col), b_at(base, col + 1u), b_at(base, col + 2u), b_at(base, col + 3u));
    }
#else
    if (k < params.k && col < params.n) {
        return b[(k * params.n + col) / 4u];
    }
#endif
    return vec4<f32>(0.0);
}

// Stores the A vec4 number l of a step (row l / (BK/4), columns 4·(l % (BK/4))) transposed.
fn put_a(buf: u32, l: u32, v: vec4<f32>) {
    if (l < A_VEC4) {
        let row = l / (BK / 4u);
        let base = buf * A_VEC4 + 4u * (l % (BK / 4u)) * (BM / 4u) + row / 4u;
        let lane = row % 4u;
        As[base][lane] = v.x;
        As[base + BM / 4u][lane] = v.y;
        As[base + 2u * (BM / 4u)][lane] = v.z;
        As[base + 3u * (BM / 4u)][lane] = v.w;
    }
}

fn put_b(buf: u32, l: u32, v: vec4<f32>) {
    if (l < B_VEC4) {
        Bs[buf * B_VEC4 + l] = v;
    }
}

fn store_c(row: u32, col: u32, v: vec4<f32>) {
    let n = params.n;
    if (row >= params.m) {
        return;
    }
#ifdef UNALIGNED
    let base = row * n + col;
    if (col < n) { c[base] = v.x; }
    if (col + 1u < n) { c[base + 1u] = v.y; }
    if (col + 2u < n) { c[base + 2u] = v.z; }
    if (col + 3u < n) { c[base + 3u] = v.w; }
#else
    if (col < n) {
        c[(row * n + col) / 4u] = v;
    }
#endif
}

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let lane = tid % (WARP_X * WARP_Y);
    let warp = tid / (WARP_X * WARP_Y);
    let tx = (warp % (WG_X / WARP_X)) * WARP_X + lane % WARP_X;
    let ty = (warp / (WG_X / WARP_X)) * WARP_Y + lane / WARP_X;
    // grouped tile order
    let pid = wid.y * groups.x + wid.x;
    let per_group = GROUP_M * groups.x;
    let first_m = (pid / per_group) * GROUP_M;
    let rows_in_group = min(groups.y - first_m, GROUP_M);
    let in_group = pid % per_group;
    let m0 = (first_m + in_group % rows_in_group) * BM;
    let n0 = (in_group / rows_in_group) * BN;
    let steps = (params.k + BK - 1u) / BK;

    var c00 = vec4<f32>(0.0);
#ifndef TN4
    var c01 = vec4<f32>(0.0);
#endif
    var c10 = vec4<f32>(0.0);
#ifndef TN4
    var c11 = vec4<f32>(0.0);
#endif
    var c20 = vec4<f32>(0.0);
#ifndef TN4
    var c21 = vec4<f32>(0.0);
#endif
    var c30 = vec4<f32>(0.0);
#ifndef TN4
    var c31 = vec4<f32>(0.0);
#endif
#ifndef TM4
    var c40 = vec4<f32>(0.0);
#endif
#ifndef TM4
#ifndef TN4
    var c41 = vec4<f32>(0.0);
#endif
#endif
#ifndef TM4
    var c50 = vec4<f32>(0.0);
#endif
#ifndef TM4
#ifndef TN4
    var c51 = vec4<f32>(0.0);
#endif
#endif
#ifndef TM4
    var c60 = vec4<f32>(0.0);
#endif
#ifndef TM4
#ifndef TN4
    var c61 = vec4<f32>(0.0);
#endif
#endif
#ifndef TM4
    var c70 = vec4<f32>(0.0);
#endif
#ifndef TM4
#ifndef TN4
    var c71 = vec4<f32>(0.0);
#endif
#endif
    var ra0 = vec4<f32>(0.0);
    var ra1 = vec4<f32>(0.0);
    var ra2 = vec4<f32>(0.0);
    var ra3 = vec4<f32>(0.0);
    var rb0 = vec4<f32>(0.0);
    var rb1 = vec4<f32>(0.0);
    var rb2 = vec4<f32>(0.0);
    var rb3 = vec4<f32>(0.0);

    // step 0: global -> registers -> buffer 0
    { let l = tid + 0u * THREADS; ra0 = load_a(m0 + l / (BK / 4u), 0u + 4u * (l % (BK / 4u))); }
    if (1u < A_LOADS) { let l = tid + 1u * THREADS; ra1 = load_a(m0 + l / (BK / 4u), 0u + 4u * (l % (BK / 4u))); }
    if (2u < A_LOADS) { let l = tid + 2u * THREADS; ra2 = load_a(m0 + l / (BK / 4u), 0u + 4u * (l % (BK / 4u))); }
    if (3u < A_LOADS) { let l = tid + 3u * THREADS; ra3 = load_a(m0 + l / (BK / 4u), 0u + 4u * (l % (BK / 4u))); }
    { let l = tid + 0u * THREADS; rb0 = load_b(0u + l / (BN / 4u), n0 + 4u * (l % (BN / 4u))); }
    if (1u < B_LOADS) { let l = tid + 1u * THREADS; rb1 = load_b(0u + l / (BN / 4u), n0 + 4u * (l % (BN / 4u))); }
    if (2u < B_LOADS) { let l = tid + 2u * THREADS; rb2 = load_b(0u + l / (BN / 4u), n0 + 4u * (l % (BN / 4u))); }
    if (3u < B_LOADS) { let l = tid + 3u * THREADS; rb3 = load_b(0u + l / (BN / 4u), n0 + 4u * (l % (BN / 4u))); }
    if (0u < A_LOADS) { put_a(0u, tid + 0u * THREADS, ra0); }
    if (1u < A_LOADS) { put_a(0u, tid + 1u * THREADS, ra1); }
    if (2u < A_LOADS) { put_a(0u, tid + 2u * THREADS, ra2); }
    if (3u < A_LOADS) { put_a(0u, tid + 3u * THREADS, ra3); }
    if (0u < B_LOADS) { put_b(0u, tid + 0u * THREADS, rb0); }
    if (1u < B_LOADS) { put_b(0u, tid + 1u * THREADS, rb1); }
    if (2u < B_LOADS) { put_b(0u, tid + 2u * THREADS, rb2); }
    if (3u < B_LOADS) { put_b(0u, tid + 3u * THREADS, rb3); }
    workgroupBarrier();

    for (var s = 0u; s < steps; s++) {
        let cur = s % 2u;
        let more = s + 1u < steps;
        // prefetch step s + 1 into registers
        if (more) {
            let k0 = (s + 1u) * BK;
            { let l = tid + 0u * THREADS; ra0 = load_a(m0 + l / (BK / 4u), k0 + 4u * (l % (BK / 4u))); }
            if (1u < A_LOADS) { let l = tid + 1u * THREADS; ra1 = load_a(m0 + l / (BK / 4u), k0 + 4u * (l % (BK / 4u))); }
            if (2u < A_LOADS) { let l = tid + 2u * THREADS; ra2 = load_a(m0 + l / (BK / 4u), k0 + 4u * (l % (BK / 4u))); }
            if (3u < A_LOADS) { let l = tid + 3u * THREADS; ra3 = load_a(m0 + l / (BK / 4u), k0 + 4u * (l % (BK / 4u))); }
            { let l = tid + 0u * THREADS; rb0 = load_b(k0 + l / (BN / 4u), n0 + 4u * (l % (BN / 4u))); }
            if (1u < B_LOADS) { let l = tid + 1u * THREADS; rb1 = load_b(k0 + l / (BN / 4u), n0 + 4u * (l % (BN / 4u))); }
            if (2u < B_LOADS) { let l = tid + 2u * THREADS; rb2 = load_b(k0 + l / (BN / 4u), n0 + 4u * (l % (BN / 4u))); }
            if (3u < B_LOADS) { let l = tid + 3u * THREADS; rb3 = load_b(k0 + l / (BN / 4u), n0 + 4u * (l % (BN / 4u))); }
        }
        // multiply the current tiles, 4 values of k at a time
        let a_base = cur * A_VEC4;
        let b_base = cur * B_VEC4;
        for (var k = 0u; k < BK; k += 4u) {
            {
                let ka = a_base + (k) * (BM / 4u) + ty;
                let kb = b_base + (k) * (BN / 4u) + tx;
                let a0 = As[ka];
#ifndef TM4
                let a1 = As[ka + WG_Y];
#endif
                let b0 = Bs[kb];
#ifndef TN4
                let b1 = Bs[kb + WG_X];
#endif
                c00 = fma(vec4<f32>(a0.x), b0, c00);
#ifndef TN4
                c01 = fma(vec4<f32>(a0.x), b1, c01);
#endif
                c10 = fma(vec4<f32>(a0.y), b0, c10);
#ifndef TN4
                c11 = fma(vec4<f32>(a0.y), b1, c11);
#endif
                c20 = fma(vec4<f32>(a0.z), b0, c20);
#ifndef TN4
                c21 = fma(vec4<f32>(a0.z), b1, c21);
#endif
                c30 = fma(vec4<f32>(a0.w), b0, c30);
#ifndef TN4
                c31 = fma(vec4<f32>(a0.w), b1, c31);
#endif
#ifndef TM4
                c40 = fma(vec4<f32>(a1.x), b0, c40);
#endif
#ifndef TM4
#ifndef TN4
                c41 = fma(vec4<f32>(a1.x), b1, c41);
#endif
#endif
#ifndef TM4
                c50 = fma(vec4<f32>(a1.y), b0, c50);
#endif
#ifndef TM4
#ifndef TN4
                c51 = fma(vec4<f32>(a1.y), b1, c51);
#endif
#endif
#ifndef TM4
                c60 = fma(vec4<f32>(a1.z), b0, c60);
#endif
#ifndef TM4
#ifndef TN4
                c61 = fma(vec4<f32>(a1.z), b1, c61);
#endif
#endif
#ifndef TM4
                c70 = fma(vec4<f32>(a1.w), b0, c70);
#endif
#ifndef TM4
#ifndef TN4
                c71 = fma(vec4<f32>(a1.w), b1, c71);
#endif
#endif
            }
            {
                let ka = a_base + (k + 1u) * (BM / 4u) + ty;
                let kb = b_base + (k + 1u) * (BN / 4u) + tx;
                let a0 = As[ka];
#ifndef TM4
                let a1 = As[ka + WG_Y];
#endif
                let b0 = Bs[kb];
#ifndef TN4
                let b1 = Bs[kb + WG_X];
#endif
                c00 = fma(vec4<f32>(a0.x), b0, c00);
#ifndef TN4
                c01 = fma(vec4<f32>(a0.x), b1, c01);
#endif
                c10 = fma(vec4<f32>(a0.y), b0, c10);
#ifndef TN4
                c11 = fma(vec4<f32>(a0.y), b1, c11);
#endif
                c20 = fma(vec4<f32>(a0.z), b0, c20);
#ifndef TN4
                c21 = fma(vec4<f32>(a0.z), b1, c21);
#endif
                c30 = fma(vec4<f32>(a0.w), b0, c30);
#ifndef TN4
                c31 = fma(vec4<f32>(a0.w), b1, c31);
#endif
#ifndef TM4
                c40 = fma(vec4<f32>(a1.x), b0, c40);
#endif
#ifndef TM4
#ifndef TN4
                c41 = fma(vec4<f32>(a1.x), b1, c41);
#endif
#endif
#ifndef TM4
                c50 = fma(vec4<f32>(a1.y), b0, c50);
#endif
#ifndef TM4
#ifndef TN4
                c51 = fma(vec4<f32>(a1.y), b1, c51);
#endif
#endif
#ifndef TM4
                c60 = fma(vec4<f32>(a1.z), b0, c60);
#endif
#ifndef TM4
#ifndef TN4
                c61 = fma(vec4<f32>(a1.z), b1, c61);
#endif
#endif
#ifndef TM4
                c70 = fma(vec4<f32>(a1.w), b0, c70);
#endif
#ifndef TM4
#ifndef TN4
                c71 = fma(vec4<f32>(a1.w), b1, c71);
#endif
#endif
            }
            {
                let ka = a_base + (k + 2u) * (BM / 4u) + ty;
                let kb = b_base + (k + 2u) * (BN / 4u) + tx;
                let a0 = As[ka];
#ifndef TM4
                let a1 = As[ka + WG_Y];
#endif
                let b0 = Bs[kb];
#ifndef TN4
                let b1 = Bs[kb + WG_X];
#endif
                c00 = fma(vec4<f32>(a0.x), b0, c00);
#ifndef TN4
                c01 = fma(vec4<f32>(a0.x), b1, c01);
#endif
                c10 = fma(vec4<f32>(a0.y), b0, c10);
#ifndef TN4
                c11 = fma(vec4<f32>(a0.y), b1, c11);
#endif
                c20 = fma(vec4<f32>(a0.z), b0, c20);
#ifndef TN4
                c21 = fma(vec4<f32>(a0.z), b1, c21);
#endif
                c30 = fma(vec4<f32>(a0.w), b0, c30);
#ifndef TN4
                c31 = fma(vec4<f32>(a0.w), b1, c31);
#endif
#ifndef TM4
                c40 = fma(vec4<f32>(a1.x), b0, c40);
#endif
#ifndef TM4
#ifndef TN4
                c41 = fma(vec4<f32>(a1.x), b1, c41);
#endif
#endif
#ifndef TM4
                c50 = fma(vec4<f32>(a1.y), b0, c50);
#endif
#ifndef TM4
#ifndef TN4
                c51 = fma(vec4<f32>(a1.y), b1, c51);
#endif
#endif
#ifndef TM4
                c60 = fma(vec4<f32>(a1.z), b0, c60);
#endif
#ifndef TM4
#ifndef TN4
                c61 = fma(vec4<f32>(a1.z), b1, c61);
#endif
#endif
#ifndef TM4
                c70 = fma(vec4<f32>(a1.w), b0, c70);
#endif
#ifndef TM4
#ifndef TN4
                c71 = fma(vec4<f32>(a1.w), b1, c71);
#endif
#endif
            }
            {
                let ka = a_base + (k + 3u) * (BM / 4u) + ty;
                let kb = b_base + (k + 3u) * (BN / 4u) + tx;
                let a0 = As[ka];
#ifndef TM4
                let a1 = As[ka + WG_Y];
#endif
                let b0 = Bs[kb];
#ifndef TN4
                let b1 = Bs[kb + WG_X];
#endif
                c00 = fma(vec4<f32>(a0.x), b0, c00);
#ifndef TN4
                c01 = fma(vec4<f32>(a0.x), b1, c01);
#endif
                c10 = fma(vec4<f32>(a0.y), b0, c10);
#ifndef TN4
                c11 = fma(vec4<f32>(a0.y), b1, c11);
#endif
                c20 = fma(vec4<f32>(a0.z), b0, c20);
#ifndef TN4
                c21 = fma(vec4<f32>(a0.z), b1, c21);
#endif
                c30 = fma(vec4<f32>(a0.w), b0, c30);
#ifndef TN4
                c31 = fma(vec4<f32>(a0.w), b1, c31);
#endif
#ifndef TM4
                c40 = fma(vec4<f32>(a1.x), b0, c40);
#endif
#ifndef TM4
#ifndef TN4
                c41 = fma(vec4<f32>(a1.x), b1, c41);
#endif
#endif
#ifndef TM4
                c50 = fma(vec4<f32>(a1.y), b0, c50);
#endif
#ifndef TM4
#ifndef TN4
                c51 = fma(vec4<f32>(a1.y), b1, c51);
#endif
#endif
#ifndef TM4
                c60 = fma(vec4<f32>(a1.z), b0, c60);
#endif
#ifndef TM4
#ifndef TN4
                c61 = fma(vec4<f32>(a1.z), b1, c61);
#endif
#endif
#ifndef TM4
                c70 = fma(vec4<f32>(a1.w), b0, c70);
#endif
#ifndef TM4
#ifndef TN4
                c71 = fma(vec4<f32>(a1.w), b1, c71);
#endif
#endif
            }
        }
        // registers -> the other buffer
        if (more) {
            let other = 1u - cur;
            if (0u < A_LOADS) { put_a(other, tid + 0u * THREADS, ra0); }
            if (1u < A_LOADS) { put_a(other, tid + 1u * THREADS, ra1); }
            if (2u < A_LOADS) { put_a(other, tid + 2u * THREADS, ra2); }
            if (3u < A_LOADS) { put_a(other, tid + 3u * THREADS, ra3); }
            if (0u < B_LOADS) { put_b(other, tid + 0u * THREADS, rb0); }
            if (1u < B_LOADS) { put_b(other, tid + 1u * THREADS, rb1); }
            if (2u < B_LOADS) { put_b(other, tid + 2u * THREADS, rb2); }
            if (3u < B_LOADS) { put_b(other, tid + 3u * THREADS, rb3); }
        }
        workgroupBarrier();
    }

    store_c(m0 + (ty) * 4u + 0u, n0 + (tx) * 4u, c00);
#ifndef TN4
    store_c(m0 + (ty) * 4u + 0u, n0 + (WG_X + tx) * 4u, c01);
#endif
    store_c(m0 + (ty) * 4u + 1u, n0 + (tx) * 4u, c10);
#ifndef TN4
    store_c(m0 + (ty) * 4u + 1u, n0 + (WG_X + tx) * 4u, c11);
#endif
    store_c(m0 + (ty) * 4u + 2u, n0 + (tx) * 4u, c20);
#ifndef TN4
    store_c(m0 + (ty) * 4u + 2u, n0 + (WG_X + tx) * 4u, c21);
#endif
    store_c(m0 + (ty) * 4u + 3u, n0 + (tx) * 4u, c30);
#ifndef TN4
    store_c(m0 + (ty) * 4u + 3u, n0 + (WG_X + tx) * 4u, c31);
#endif
#ifndef TM4
    store_c(m0 + (WG_Y + ty) * 4u + 0u, n0 + (tx) * 4u, c40);
#endif
#ifndef TM4
#ifndef TN4
    store_c(m0 + (WG_Y + ty) * 4u + 0u, n0 + (WG_X + tx) * 4u, c41);
#endif
#endif
#ifndef TM4
    store_c(m0 + (WG_Y + ty) * 4u + 1u, n0 + (tx) * 4u, c50);
#endif
#ifndef TM4
#ifndef TN4
    store_c(m0 + (WG_Y + ty) * 4u + 1u, n0 + (WG_X + tx) * 4u, c51);
#endif
#endif
#ifndef TM4
    store_c(m0 + (WG_Y + ty) * 4u + 2u, n0 + (tx) * 4u, c60);
#endif
#ifndef TM4
#ifndef TN4
    store_c(m0 + (WG_Y + ty) * 4u + 2u, n0 + (WG_X + tx) * 4u, c61);
#endif
#endif
#ifndef TM4
    store_c(m0 + (WG_Y + ty) * 4u + 3u, n0 + (tx) * 4u, c70);
#endif
#ifndef TM4
#ifndef TN4
    store_c(m0 + (WG_Y + ty) * 4u + 3u, n0 + (WG_X + tx) * 4u, c71);
#endif
#endif
}
