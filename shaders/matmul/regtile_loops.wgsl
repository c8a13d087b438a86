// regtile (shaders/matmul/regtile.wgsl) with its loops left as loops: the same tiles, loads,
// double buffering and arithmetic, but the K step, the loads and the stores are loops over
// arrays, for the driver to unroll, where regtile.wgsl writes every step out (the shape of the
// GLSL port, benches/sgemm/regtile.comp). Built for it: `--compiler naga-unroll` (naga's SPIR-V,
// every loop marked Unroll) ran at 39.6 TFLOP/s on an H100, 1.22× regtile.wgsl; through wgpu,
// whose loop bounding keeps the driver from unrolling, 17× slower than regtile.wgsl
// (benches/results/sgemm-spirv-h100.md).
// Outputs per invocation: 8×8 only (no TM4 / TN4).
// CPU reference: kernels::matmul::cpu::matmul.
//! variants: UNALIGNED

#import matmul_regtile

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let p = place(tid, wid, groups);
    let tx = p.tx;
    let ty = p.ty;
    let m0 = p.m0;
    let n0 = p.n0;
    let steps = k_steps();

    // acc[2i + j]: row ty·4 + i (i < 4) or (WG_Y + ty)·4 + i - 4, column group tx + j·WG_X
    var acc: array<vec4<f32>, 16>;
    var ra: array<vec4<f32>, 4>;
    var rb: array<vec4<f32>, 4>;

    // step 0: global -> registers -> buffer 0
    for (var i = 0u; i < A_LOADS; i++) {
        let l = tid + i * THREADS;
        ra[i] = load_a(m0 + l / (BK / 4u), 4u * (l % (BK / 4u)));
    }
    for (var i = 0u; i < B_LOADS; i++) {
        let l = tid + i * THREADS;
        rb[i] = load_b(l / (BN / 4u), n0 + 4u * (l % (BN / 4u)));
    }
    for (var i = 0u; i < A_LOADS; i++) {
        put_a(0u, tid + i * THREADS, ra[i]);
    }
    for (var i = 0u; i < B_LOADS; i++) {
        put_b(0u, tid + i * THREADS, rb[i]);
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
                ra[i] = load_a(m0 + l / (BK / 4u), k0 + 4u * (l % (BK / 4u)));
            }
            for (var i = 0u; i < B_LOADS; i++) {
                let l = tid + i * THREADS;
                rb[i] = load_b(k0 + l / (BN / 4u), n0 + 4u * (l % (BN / 4u)));
            }
        }
        // multiply the current tiles
        let a_base = cur * A_VEC4;
        let b_base = cur * B_VEC4;
        for (var k = 0u; k < BK; k++) {
            let ka = a_base + k * (BM / 4u) + ty;
            let kb = b_base + k * (BN / 4u) + tx;
            let a0 = As[ka];
            let a1 = As[ka + WG_Y];
            let b0 = Bs[kb];
            let b1 = Bs[kb + WG_X];
            acc[0] = fma(vec4<f32>(a0.x), b0, acc[0]);
            acc[1] = fma(vec4<f32>(a0.x), b1, acc[1]);
            acc[2] = fma(vec4<f32>(a0.y), b0, acc[2]);
            acc[3] = fma(vec4<f32>(a0.y), b1, acc[3]);
            acc[4] = fma(vec4<f32>(a0.z), b0, acc[4]);
            acc[5] = fma(vec4<f32>(a0.z), b1, acc[5]);
            acc[6] = fma(vec4<f32>(a0.w), b0, acc[6]);
            acc[7] = fma(vec4<f32>(a0.w), b1, acc[7]);
            acc[8] = fma(vec4<f32>(a1.x), b0, acc[8]);
            acc[9] = fma(vec4<f32>(a1.x), b1, acc[9]);
            acc[10] = fma(vec4<f32>(a1.y), b0, acc[10]);
            acc[11] = fma(vec4<f32>(a1.y), b1, acc[11]);
            acc[12] = fma(vec4<f32>(a1.z), b0, acc[12]);
            acc[13] = fma(vec4<f32>(a1.z), b1, acc[13]);
            acc[14] = fma(vec4<f32>(a1.w), b0, acc[14]);
            acc[15] = fma(vec4<f32>(a1.w), b1, acc[15]);
        }
        // registers -> the other buffer
        if (more) {
            let other = 1u - cur;
            for (var i = 0u; i < A_LOADS; i++) {
                put_a(other, tid + i * THREADS, ra[i]);
            }
            for (var i = 0u; i < B_LOADS; i++) {
                put_b(other, tid + i * THREADS, rb[i]);
            }
        }
        workgroupBarrier();
    }

    for (var i = 0u; i < 8u; i++) {
        var row = m0 + (WG_Y + ty) * 4u + i - 4u;
        if (i < 4u) {
            row = m0 + ty * 4u + i;
        }
        store_c(row, n0 + tx * 4u, acc[2u * i]);
        store_c(row, n0 + (WG_X + tx) * 4u, acc[2u * i + 1u]);
    }
}
