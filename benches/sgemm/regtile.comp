#version 450
// shaders/matmul/regtile.wgsl in GLSL, for glslang: the same register-tiled SGEMM (C = A·B,
// f32, row-major, K and N multiples of 4: the WGSL's default vec4 path), same bindings,
// workgroup, tile order, double buffering and index arithmetic, so that the SPIR-V glslang
// writes can be set beside naga's for one algorithm (benches/results/sgemm-spirv-h100.md).
// The tile sizes are preprocessor constants (the WGSL's overrides), defaults as
// kernels::matmul::RegtileConfig::default(): build other configurations with -DWG_Y=16 etc.
// and run them with the matching `simtlab bench matmul --wg-y 16 ...`.
//   glslangValidator -V benches/sgemm/regtile.comp -o regtile.spv
//   simtlab bench matmul --kernel regtile --spirv regtile.spv
// (benches/sgemm/build.sh builds every module the SPIR-V comparison runs.)
#extension GL_EXT_control_flow_attributes : require

#ifndef WG_X
#define WG_X 16
#endif
#ifndef WG_Y
#define WG_Y 8
#endif
#ifndef BK
#define BK 16u
#endif
#ifndef WARP_X
#define WARP_X 8u
#endif
#ifndef WARP_Y
#define WARP_Y 4u
#endif
#ifndef GROUP_M
#define GROUP_M 8u
#endif
#define TM 8u
#define TN 8u
#define THREADS (uint(WG_X) * uint(WG_Y))
#define BM (uint(WG_Y) * TM)
#define BN (uint(WG_X) * TN)
#define A_VEC4 (BM * BK / 4u)
#define B_VEC4 (BK * BN / 4u)
#define A_LOADS ((A_VEC4 + THREADS - 1u) / THREADS)
#define B_LOADS ((B_VEC4 + THREADS - 1u) / THREADS)

layout(local_size_x = WG_X, local_size_y = WG_Y, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer MatrixA { vec4 a[]; };
layout(set = 0, binding = 1) readonly buffer MatrixB { vec4 b[]; };
layout(set = 0, binding = 2) buffer MatrixC { vec4 c[]; };
layout(set = 0, binding = 3) uniform Params { uint m; uint n; uint k; uint pad; } params;

// As[buf][k][m] (A transposed), Bs[buf][k][n], as vec4 along m / n
shared vec4 As[2u * A_VEC4];
shared vec4 Bs[2u * B_VEC4];

vec4 load_a(uint row, uint k) {
    if (row < params.m && k < params.k) {
        return a[(row * params.k + k) / 4u];
    }
    return vec4(0.0);
}

vec4 load_b(uint k, uint col) {
    if (k < params.k && col < params.n) {
        return b[(k * params.n + col) / 4u];
    }
    return vec4(0.0);
}

// the A vec4 number l of a step (row l / (BK/4), columns 4·(l % (BK/4))), stored transposed
void put_a(uint buf, uint l, vec4 v) {
    if (l < A_VEC4) {
        uint row = l / (BK / 4u);
        uint base = buf * A_VEC4 + 4u * (l % (BK / 4u)) * (BM / 4u) + row / 4u;
        uint lane = row % 4u;
        As[base][lane] = v.x;
        As[base + BM / 4u][lane] = v.y;
        As[base + 2u * (BM / 4u)][lane] = v.z;
        As[base + 3u * (BM / 4u)][lane] = v.w;
    }
}

void put_b(uint buf, uint l, vec4 v) {
    if (l < B_VEC4) {
        Bs[buf * B_VEC4 + l] = v;
    }
}

void store_c(uint row, uint col, vec4 v) {
    if (row < params.m && col < params.n) {
        c[(row * params.n + col) / 4u] = v;
    }
}

void main() {
    uint tid = gl_LocalInvocationIndex;
    uint lane = tid % (WARP_X * WARP_Y);
    uint warp = tid / (WARP_X * WARP_Y);
    uint tx = (warp % (uint(WG_X) / WARP_X)) * WARP_X + lane % WARP_X;
    uint ty = (warp / (uint(WG_X) / WARP_X)) * WARP_Y + lane / WARP_X;
    // grouped tile order
    uint pid = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint per_group = GROUP_M * gl_NumWorkGroups.x;
    uint first_m = (pid / per_group) * GROUP_M;
    uint rows_in_group = min(gl_NumWorkGroups.y - first_m, GROUP_M);
    uint in_group = pid % per_group;
    uint m0 = (first_m + in_group % rows_in_group) * BM;
    uint n0 = (in_group / rows_in_group) * BN;
    uint steps = (params.k + BK - 1u) / BK;

    // acc[i][j]: rows ty*4+i (i < 4) and (WG_Y+ty)*4+i-4, column groups tx and WG_X+tx
    vec4 acc[8][2];
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        acc[i][0] = vec4(0.0);
        acc[i][1] = vec4(0.0);
    }
    vec4 ra[A_LOADS];
    vec4 rb[B_LOADS];

    // step 0: global -> registers -> buffer 0
    [[unroll]] for (uint i = 0u; i < A_LOADS; i++) {
        uint l = tid + i * THREADS;
        ra[i] = load_a(m0 + l / (BK / 4u), 4u * (l % (BK / 4u)));
    }
    [[unroll]] for (uint i = 0u; i < B_LOADS; i++) {
        uint l = tid + i * THREADS;
        rb[i] = load_b(l / (BN / 4u), n0 + 4u * (l % (BN / 4u)));
    }
    [[unroll]] for (uint i = 0u; i < A_LOADS; i++) { put_a(0u, tid + i * THREADS, ra[i]); }
    [[unroll]] for (uint i = 0u; i < B_LOADS; i++) { put_b(0u, tid + i * THREADS, rb[i]); }
    barrier();

    for (uint s = 0u; s < steps; s++) {
        uint cur = s % 2u;
        bool more = s + 1u < steps;
        // prefetch step s + 1 into registers
        if (more) {
            uint k0 = (s + 1u) * BK;
            [[unroll]] for (uint i = 0u; i < A_LOADS; i++) {
                uint l = tid + i * THREADS;
                ra[i] = load_a(m0 + l / (BK / 4u), k0 + 4u * (l % (BK / 4u)));
            }
            [[unroll]] for (uint i = 0u; i < B_LOADS; i++) {
                uint l = tid + i * THREADS;
                rb[i] = load_b(k0 + l / (BN / 4u), n0 + 4u * (l % (BN / 4u)));
            }
        }
        // multiply the current tiles
        uint a_base = cur * A_VEC4;
        uint b_base = cur * B_VEC4;
        [[unroll]] for (uint k = 0u; k < BK; k++) {
            uint ka = a_base + k * (BM / 4u) + ty;
            uint kb = b_base + k * (BN / 4u) + tx;
            vec4 a0 = As[ka];
            vec4 a1 = As[ka + uint(WG_Y)];
            vec4 b0 = Bs[kb];
            vec4 b1 = Bs[kb + uint(WG_X)];
            acc[0][0] = fma(vec4(a0.x), b0, acc[0][0]);
            acc[0][1] = fma(vec4(a0.x), b1, acc[0][1]);
            acc[1][0] = fma(vec4(a0.y), b0, acc[1][0]);
            acc[1][1] = fma(vec4(a0.y), b1, acc[1][1]);
            acc[2][0] = fma(vec4(a0.z), b0, acc[2][0]);
            acc[2][1] = fma(vec4(a0.z), b1, acc[2][1]);
            acc[3][0] = fma(vec4(a0.w), b0, acc[3][0]);
            acc[3][1] = fma(vec4(a0.w), b1, acc[3][1]);
            acc[4][0] = fma(vec4(a1.x), b0, acc[4][0]);
            acc[4][1] = fma(vec4(a1.x), b1, acc[4][1]);
            acc[5][0] = fma(vec4(a1.y), b0, acc[5][0]);
            acc[5][1] = fma(vec4(a1.y), b1, acc[5][1]);
            acc[6][0] = fma(vec4(a1.z), b0, acc[6][0]);
            acc[6][1] = fma(vec4(a1.z), b1, acc[6][1]);
            acc[7][0] = fma(vec4(a1.w), b0, acc[7][0]);
            acc[7][1] = fma(vec4(a1.w), b1, acc[7][1]);
        }
        // registers -> the other buffer
        if (more) {
            uint other = 1u - cur;
            [[unroll]] for (uint i = 0u; i < A_LOADS; i++) { put_a(other, tid + i * THREADS, ra[i]); }
            [[unroll]] for (uint i = 0u; i < B_LOADS; i++) { put_b(other, tid + i * THREADS, rb[i]); }
        }
        barrier();
    }

    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        uint row = m0 + (i < 4u ? ty * 4u + i : (uint(WG_Y) + ty) * 4u + (i - 4u));
        store_c(row, n0 + tx * 4u, acc[i][0]);
        store_c(row, n0 + (uint(WG_X) + tx) * 4u, acc[i][1]);
    }
}
