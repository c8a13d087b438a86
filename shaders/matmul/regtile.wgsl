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

#import matmul_regtile

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let p = place(tid, wid, groups);
    let tx = p.tx;
    let ty = p.ty;
    let m0 = p.m0;
    let n0 = p.n0;
    let steps = k_steps();

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
