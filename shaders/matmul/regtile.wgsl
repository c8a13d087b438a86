// Register-tiled SGEMM, C = A·B (f32, row-major, M×K times K×N), beyond Ryoo et al.: each
// invocation computes a TM×TN block of C in registers, a workgroup of WG_X×WG_Y invocations a
// BM×BN = (WG_Y·TM)×(WG_X·TN) tile. Per step of BK along K the workgroup stages A (transposed,
// BK×BM) and B (BK×BN) in double-buffered workgroup memory: the next step's tiles are loaded
// into registers before the FMAs on the current ones and stored to the other buffer after, so
// there is one barrier per step. Fragments are read from workgroup memory as vec4; an
// invocation's rows (columns) are two 4-wide groups 4·WG_Y (4·WG_X) apart, so the vec4 reads
// of a warp are contiguous (no bank conflicts).
//
// The micro-tile is written out (accumulators c<row><column group> in a struct, no private
// arrays) and each step's four values of k are four calls of one function, so that every value
// stays in a register whatever the driver's unrolling does.
//
// Tuning: WG_X, WG_Y, BK, WARP_X, WARP_Y are overrides; TM = TN = 8 unless TM4 / TN4 (4). BK must be a
// multiple of 4 and each invocation loads at most 4 vec4 of A and of B per step
// (kernels::matmul::RegtileConfig::validate checks both).
// Default path: K and N multiples of 4 (vec4 global loads and stores). UNALIGNED: scalar
// global access for any K, N. Loads outside the matrices read 0; stores are guarded.
// CPU reference: kernels::matmul::cpu::matmul.
//! variants: TM4 TN4 UNALIGNED

#import matmul_regtile

// An invocation's outputs, c<row><column group>: rows r < 4 are ty·4 + r, rows r ≥ 4 are
// (WG_Y + ty)·4 + r - 4; column group 0 starts at tx·4, group 1 at (WG_X + tx)·4.
struct Acc {
    c00: vec4<f32>,
    c10: vec4<f32>,
    c20: vec4<f32>,
    c30: vec4<f32>,
#ifndef TN4
    c01: vec4<f32>,
    c11: vec4<f32>,
    c21: vec4<f32>,
    c31: vec4<f32>,
#endif
#ifndef TM4
    c40: vec4<f32>,
    c50: vec4<f32>,
    c60: vec4<f32>,
    c70: vec4<f32>,
#ifndef TN4
    c41: vec4<f32>,
    c51: vec4<f32>,
    c61: vec4<f32>,
    c71: vec4<f32>,
#endif
#endif
}

// One value of k from the current buffer `cur`: every output += its A element × its B element.
fn fma_k(acc: Acc, cur: u32, k: u32, p: Place) -> Acc {
    var c = acc;
    let ka = cur * A_VEC4 + k * (BM / 4u) + p.ty;
    let kb = cur * B_VEC4 + k * (BN / 4u) + p.tx;
    let a0 = As[ka];
    let b0 = Bs[kb];
    c.c00 = fma(vec4<f32>(a0.x), b0, c.c00);
    c.c10 = fma(vec4<f32>(a0.y), b0, c.c10);
    c.c20 = fma(vec4<f32>(a0.z), b0, c.c20);
    c.c30 = fma(vec4<f32>(a0.w), b0, c.c30);
#ifndef TN4
    let b1 = Bs[kb + WG_X];
    c.c01 = fma(vec4<f32>(a0.x), b1, c.c01);
    c.c11 = fma(vec4<f32>(a0.y), b1, c.c11);
    c.c21 = fma(vec4<f32>(a0.z), b1, c.c21);
    c.c31 = fma(vec4<f32>(a0.w), b1, c.c31);
#endif
#ifndef TM4
    let a1 = As[ka + WG_Y];
    c.c40 = fma(vec4<f32>(a1.x), b0, c.c40);
    c.c50 = fma(vec4<f32>(a1.y), b0, c.c50);
    c.c60 = fma(vec4<f32>(a1.z), b0, c.c60);
    c.c70 = fma(vec4<f32>(a1.w), b0, c.c70);
#ifndef TN4
    c.c41 = fma(vec4<f32>(a1.x), b1, c.c41);
    c.c51 = fma(vec4<f32>(a1.y), b1, c.c51);
    c.c61 = fma(vec4<f32>(a1.z), b1, c.c61);
    c.c71 = fma(vec4<f32>(a1.w), b1, c.c71);
#endif
#endif
    return c;
}

fn store_tile(p: Place, c: Acc) {
    let top = p.m0 + p.ty * 4u;
    let left = p.n0 + p.tx * 4u;
    store_c(top + 0u, left, c.c00);
    store_c(top + 1u, left, c.c10);
    store_c(top + 2u, left, c.c20);
    store_c(top + 3u, left, c.c30);
#ifndef TN4
    let right = p.n0 + (WG_X + p.tx) * 4u;
    store_c(top + 0u, right, c.c01);
    store_c(top + 1u, right, c.c11);
    store_c(top + 2u, right, c.c21);
    store_c(top + 3u, right, c.c31);
#endif
#ifndef TM4
    let bottom = p.m0 + (WG_Y + p.ty) * 4u;
    store_c(bottom + 0u, left, c.c40);
    store_c(bottom + 1u, left, c.c50);
    store_c(bottom + 2u, left, c.c60);
    store_c(bottom + 3u, left, c.c70);
#ifndef TN4
    store_c(bottom + 0u, right, c.c41);
    store_c(bottom + 1u, right, c.c51);
    store_c(bottom + 2u, right, c.c61);
    store_c(bottom + 3u, right, c.c71);
#endif
#endif
}

// One step's vec4 of A and of B (A_LOADS and B_LOADS of them), held in registers between the
// global loads and the stores to workgroup memory.
struct Staged {
    a0: vec4<f32>,
    a1: vec4<f32>,
    a2: vec4<f32>,
    a3: vec4<f32>,
    b0: vec4<f32>,
    b1: vec4<f32>,
    b2: vec4<f32>,
    b3: vec4<f32>,
}

// The A vec4 number i of this invocation for the step at k0 (row l / (BK/4), columns 4·(l % (BK/4))).
fn fetch_a(tid: u32, i: u32, p: Place, k0: u32) -> vec4<f32> {
    let l = tid + i * THREADS;
    return load_a(p.m0 + l / (BK / 4u), k0 + 4u * (l % (BK / 4u)));
}

fn fetch_b(tid: u32, i: u32, p: Place, k0: u32) -> vec4<f32> {
    let l = tid + i * THREADS;
    return load_b(k0 + l / (BN / 4u), p.n0 + 4u * (l % (BN / 4u)));
}

// Global -> registers: the step at k0.
fn fetch(tid: u32, p: Place, k0: u32) -> Staged {
    var r: Staged;
    r.a0 = fetch_a(tid, 0u, p, k0);
    if (1u < A_LOADS) { r.a1 = fetch_a(tid, 1u, p, k0); }
    if (2u < A_LOADS) { r.a2 = fetch_a(tid, 2u, p, k0); }
    if (3u < A_LOADS) { r.a3 = fetch_a(tid, 3u, p, k0); }
    r.b0 = fetch_b(tid, 0u, p, k0);
    if (1u < B_LOADS) { r.b1 = fetch_b(tid, 1u, p, k0); }
    if (2u < B_LOADS) { r.b2 = fetch_b(tid, 2u, p, k0); }
    if (3u < B_LOADS) { r.b3 = fetch_b(tid, 3u, p, k0); }
    return r;
}

// Registers -> workgroup buffer `buf`.
fn stage(buf: u32, tid: u32, r: Staged) {
    if (0u < A_LOADS) { put_a(buf, tid, r.a0); }
    if (1u < A_LOADS) { put_a(buf, tid + THREADS, r.a1); }
    if (2u < A_LOADS) { put_a(buf, tid + 2u * THREADS, r.a2); }
    if (3u < A_LOADS) { put_a(buf, tid + 3u * THREADS, r.a3); }
    if (0u < B_LOADS) { put_b(buf, tid, r.b0); }
    if (1u < B_LOADS) { put_b(buf, tid + THREADS, r.b1); }
    if (2u < B_LOADS) { put_b(buf, tid + 2u * THREADS, r.b2); }
    if (3u < B_LOADS) { put_b(buf, tid + 3u * THREADS, r.b3); }
}

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let p = place(tid, wid, groups);
    let steps = k_steps();
    var c: Acc;

    // step 0: global -> registers -> buffer 0
    var r = fetch(tid, p, 0u);
    stage(0u, tid, r);
    workgroupBarrier();

    for (var s = 0u; s < steps; s++) {
        let cur = s % 2u;
        let more = s + 1u < steps;
        // prefetch step s + 1 into registers
        if (more) {
            r = fetch(tid, p, (s + 1u) * BK);
        }
        // multiply the current tiles, 4 values of k at a time
        for (var k = 0u; k < BK; k += 4u) {
            c = fma_k(c, cur, k, p);
            c = fma_k(c, cur, k + 1u, p);
            c = fma_k(c, cur, k + 2u, p);
            c = fma_k(c, cur, k + 3u, p);
        }
        // registers -> the other buffer
        if (more) {
            stage(1u - cur, tid, r);
        }
        workgroupBarrier();
    }

    store_tile(p, c);
}
