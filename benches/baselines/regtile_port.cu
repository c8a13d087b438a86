// CUDA port of shaders/matmul/regtile.wgsl (register-tiled SGEMM) in its default configuration
// (kernels::matmul::RegtileConfig::default(): WG_X=16, WG_Y=8, TM=TN=8, BK=16, WARP_X=8,
// WARP_Y=4, GROUP_M=8, so 64x128 tiles per 128-thread block). It is a baseline: if this port
// runs as fast as cuBLAS but the WGSL kernel does not, the gap is the Vulkan driver's code
// generation, not the algorithm.
// Build and run on the GPU machine (from the repository root):
//   nvcc -O3 -arch=sm_90 benches/baselines/regtile_port.cu -o regtile_port -lcublas && ./regtile_port [n]
// Row-major C = A*B with M = N = K = n (default 4096, a multiple of 128). Only the WGSL default
// (aligned vec4) path is ported, with its cheap bounds guards; UNALIGNED, TM4 and TN4 are not.
// Kernels: port (plain pointers, as the WGSL bindings) and port_ldg (__restrict__ pointers, so
// nvcc may use the read-only path ld.global.nc). Prints one JSON line per kernel plus cuBLAS
// (FP32, no TF32); exit 1 if a kernel's max |c - ref| / max |ref| vs cuBLAS is not below 1e-4.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

// Any failing CUDA / cuBLAS call: print file:line and the error, exit 2.
#define FAIL(...) (fprintf(stderr, "%s:%d: ", __FILE__, __LINE__), fprintf(stderr, __VA_ARGS__), exit(2))
#define CUDA_CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) FAIL("CUDA error: %s\n", cudaGetErrorString(e_)); } while (0)
#define CUBLAS_CHECK(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) FAIL("cuBLAS error: status %d\n", (int)s_); } while (0)

// The WGSL overrides / consts, default values; -DPORT_WG_Y=16 -DPORT_BK=8 etc. build the other
// configurations of RegtileConfig. -DPORT_MIN_BLOCKS=n asks nvcc for n resident blocks per SM
// (__launch_bounds__ caps the registers; WGSL through wgpu has no such control).
#ifndef PORT_WG_Y
#define PORT_WG_Y 8
#endif
#ifndef PORT_BK
#define PORT_BK 16
#endif
#ifndef PORT_MIN_BLOCKS
#define PORT_MIN_BLOCKS 1
#endif
constexpr unsigned WG_X = 16, WG_Y = PORT_WG_Y, TM = 8, TN = 8, BK = PORT_BK, WARP_X = 8, WARP_Y = 4, GROUP_M = 8;
constexpr unsigned THREADS = WG_X * WG_Y, BM = WG_Y * TM, BN = WG_X * TN;
constexpr unsigned A_VEC4 = BM * BK / 4, B_VEC4 = BK * BN / 4;  // vec4 per step per tile
constexpr unsigned A_LOADS = (A_VEC4 + THREADS - 1) / THREADS, B_LOADS = (B_VEC4 + THREADS - 1) / THREADS;
static_assert(TM == 8 && TN == 8, "only the TM = TN = 8 micro-tile is ported");
static_assert(BK % 4 == 0 && A_LOADS <= 4 && B_LOADS <= 4, "RegtileConfig::validate limits");
static_assert(WG_X % WARP_X == 0 && WG_Y % WARP_Y == 0 && WARP_X * WARP_Y == 32, "warp blocks");

// load_a / load_b / store_c of the WGSL vec4 path (zero outside, guarded stores).
__device__ __forceinline__ float4 load_a(const float4* a, unsigned M, unsigned K, unsigned row, unsigned k) {
    if (row < M && k < K) return a[(row * K + k) / 4];
    return make_float4(0.f, 0.f, 0.f, 0.f);
}
__device__ __forceinline__ float4 load_b(const float4* b, unsigned K, unsigned N, unsigned k, unsigned col) {
    if (k < K && col < N) return b[(k * N + col) / 4];
    return make_float4(0.f, 0.f, 0.f, 0.f);
}
__device__ __forceinline__ void store_c(float4* c, unsigned M, unsigned N, unsigned row, unsigned col, float4 v) {
    if (row < M && col < N) c[(row * N + col) / 4] = v;
}
__device__ __forceinline__ void fma4(float4& c, float a, const float4& b) {  // WGSL fma(vec4(a), b, c)
    c.x = fmaf(a, b.x, c.x), c.y = fmaf(a, b.y, c.y), c.z = fmaf(a, b.z, c.z), c.w = fmaf(a, b.w, c.w);
}

// The kernel body, shared by both variants; inlined, so port_ldg's __restrict__ applies to it.
__device__ __forceinline__ void regtile(const float4* a, const float4* b, float4* c, unsigned M, unsigned N, unsigned K) {
    // As[buf][k][m / 4] holds A transposed (component m % 4), Bs[buf][k][n / 4] holds B, both as
    // vec4 along m / n: the WGSL's flat arrays with the same index arithmetic.
    __shared__ float4 As[2][BK][BM / 4];
    __shared__ float4 Bs[2][BK][BN / 4];

    const unsigned tid = threadIdx.y * WG_X + threadIdx.x;  // local_invocation_index
    const unsigned lane = tid % (WARP_X * WARP_Y), warp = tid / (WARP_X * WARP_Y);
    const unsigned tx = (warp % (WG_X / WARP_X)) * WARP_X + lane % WARP_X;
    const unsigned ty = (warp / (WG_X / WARP_X)) * WARP_Y + lane / WARP_X;
    // grouped tile order: GROUP_M tile rows, column by column inside a group (L2 reuse)
    const unsigned pid = blockIdx.y * gridDim.x + blockIdx.x;
    const unsigned per_group = GROUP_M * gridDim.x;
    const unsigned first_m = (pid / per_group) * GROUP_M;
    const unsigned rows_in_group = min(gridDim.y - first_m, GROUP_M);
    const unsigned in_group = pid % per_group;
    const unsigned m0 = (first_m + in_group % rows_in_group) * BM;
    const unsigned n0 = (in_group / rows_in_group) * BN;
    const unsigned steps = (K + BK - 1) / BK;

    float4 acc[8][2] = {};  // c<row><column group>: rows ty*4+i (i<4), (WG_Y+ty)*4+i-4
    float4 ra[A_LOADS], rb[B_LOADS];

    // global -> registers, the vec4 l = tid + i*THREADS of the step starting at k0
    auto load_step = [&](unsigned k0) {
#pragma unroll
        for (unsigned i = 0; i < A_LOADS; ++i) {
            const unsigned l = tid + i * THREADS;
            ra[i] = load_a(a, M, K, m0 + l / (BK / 4), k0 + 4 * (l % (BK / 4)));
        }
#pragma unroll
        for (unsigned i = 0; i < B_LOADS; ++i) {
            const unsigned l = tid + i * THREADS;
            rb[i] = load_b(b, K, N, k0 + l / (BN / 4), n0 + 4 * (l % (BN / 4)));
        }
    };
    // registers -> buffer buf (put_a / put_b): A's vec4 along k is scattered to 4 rows of As.
    auto store_step = [&](unsigned buf) {
#pragma unroll
        for (unsigned i = 0; i < A_LOADS; ++i) {
            const unsigned l = tid + i * THREADS;
            if (l < A_VEC4) {
                const unsigned row = l / (BK / 4), k = 4 * (l % (BK / 4));
                reinterpret_cast<float*>(&As[buf][k + 0][row / 4])[row % 4] = ra[i].x;
                reinterpret_cast<float*>(&As[buf][k + 1][row / 4])[row % 4] = ra[i].y;
                reinterpret_cast<float*>(&As[buf][k + 2][row / 4])[row % 4] = ra[i].z;
                reinterpret_cast<float*>(&As[buf][k + 3][row / 4])[row % 4] = ra[i].w;
            }
        }
#pragma unroll
        for (unsigned i = 0; i < B_LOADS; ++i) {
            const unsigned l = tid + i * THREADS;
            if (l < B_VEC4) Bs[buf][l / (BN / 4)][l % (BN / 4)] = rb[i];
        }
    };

    load_step(0);
    store_step(0);
    __syncthreads();
    for (unsigned s = 0; s < steps; ++s) {
        const unsigned cur = s % 2;
        const bool more = s + 1 < steps;
        if (more) load_step((s + 1) * BK);  // prefetch step s + 1 into registers
#pragma unroll
        for (unsigned k = 0; k < BK; ++k) {
            // an invocation's rows (columns) are two vec4 groups 4*WG_Y (4*WG_X) apart
            const float4 a0 = As[cur][k][ty], a1 = As[cur][k][ty + WG_Y];
            const float4 b0 = Bs[cur][k][tx], b1 = Bs[cur][k][tx + WG_X];
            const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i) {  // same order as the WGSL: c00, c01, c10, c11, ...
                fma4(acc[i][0], av[i], b0);
                fma4(acc[i][1], av[i], b1);
            }
        }
        if (more) store_step(1 - cur);  // into the other buffer: one barrier per step
        __syncthreads();
    }

#pragma unroll
    for (unsigned i = 0; i < 8; ++i) {
        const unsigned row = m0 + (i < 4 ? ty * 4 + i : (WG_Y + ty) * 4 + (i - 4));
        store_c(c, M, N, row, n0 + tx * 4, acc[i][0]);
        store_c(c, M, N, row, n0 + (WG_X + tx) * 4, acc[i][1]);
    }
}

__global__ void __launch_bounds__(THREADS, PORT_MIN_BLOCKS) port(const float4* a, const float4* b, float4* c, unsigned M, unsigned N, unsigned K) {
    regtile(a, b, c, M, N, K);
}
__global__ void __launch_bounds__(THREADS, PORT_MIN_BLOCKS)
    port_ldg(const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ c, unsigned M, unsigned N, unsigned K) {
    regtile(a, b, c, M, N, K);
}

// Warm-up of >= 0.5 s of launches (clocks ramp up), then the median of 20 event-timed launches.
template <typename F>
static float median_ms(F launch) {
    const auto t0 = std::chrono::steady_clock::now();
    do {
        for (int i = 0; i < 10; ++i) launch();
        CUDA_CHECK(cudaDeviceSynchronize());
    } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 0.5);
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0)); CUDA_CHECK(cudaEventCreate(&e1));
    std::vector<float> ms(20);
    for (float& t : ms) {
        CUDA_CHECK(cudaEventRecord(e0));
        launch();
        CUDA_CHECK(cudaEventRecord(e1));
        CUDA_CHECK(cudaEventSynchronize(e1));
        CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
    }
    CUDA_CHECK(cudaEventDestroy(e0)); CUDA_CHECK(cudaEventDestroy(e1));
    std::sort(ms.begin(), ms.end());
    return 0.5f * (ms[9] + ms[10]);
}

static float lcg_uniform(uint32_t& s) {  // deterministic values in [-1, 1)
    s = s * 1664525u + 1013904223u;
    return (s >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

int main(int argc, char** argv) {
    const long arg = argc > 1 ? atol(argv[1]) : 4096;
    if (arg <= 0 || arg % 128 != 0 || arg > 32768) {
        fprintf(stderr, "size must be a positive multiple of 128 (at most 32768)\n");
        return 2;
    }
    const unsigned n = (unsigned)arg, M = n, N = n, K = n;
    const size_t elems = (size_t)n * n;
    std::vector<float> hA(elems), hB(elems), hRef(elems), hC(elems);
    uint32_t seed = 1;
    for (float& v : hA) v = lcg_uniform(seed);
    for (float& v : hB) v = lcg_uniform(seed);

    float *dA, *dB, *dRef, *dC;
    for (float** p : {&dA, &dB, &dRef, &dC}) CUDA_CHECK(cudaMalloc(p, elems * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dA, hA.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, hB.data(), elems * sizeof(float), cudaMemcpyHostToDevice));

    const double flop = 2.0 * M * N * K;
    auto report = [&](const char* name, float ms, double err, bool passed) {
        char e[32];
        if (std::isfinite(err)) snprintf(e, sizeof e, "%.3g", err);
        else snprintf(e, sizeof e, "null");
        printf("{\"kernel\":\"%s\",\"n\":%u,\"ms\":%.4f,\"tflops\":%.2f,\"max_rel_err\":%s,\"passed\":%s}\n", name, n, ms,
               flop / (ms * 1e-3) / 1e12, e, passed ? "true" : "false");
        fflush(stdout);
    };

    // cuBLAS is column-major: row-major C = A*B is column-major C^T = B^T * A^T, so B goes first.
    // CUBLAS_DEFAULT_MATH keeps SGEMM in FP32 (TF32 only with CUBLAS_TF32_TENSOR_OP_MATH).
    cublasHandle_t handle;
    CUBLAS_CHECK(cublasCreate(&handle));
    CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    const float one = 1.0f, zero = 0.0f;
    auto sgemm = [&] { CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, dB, N, dA, K, &zero, dRef, N)); };
    sgemm();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hRef.data(), dRef, elems * sizeof(float), cudaMemcpyDeviceToHost));
    double ref_max = 0.0;
    for (float v : hRef) ref_max = std::max(ref_max, (double)std::fabs(v));
    report("cublas", median_ms(sgemm), 0.0, true);

    bool all_passed = true;
    const dim3 grid(N / BN, M / BM), block(WG_X, WG_Y);
    for (int ldg = 0; ldg < 2; ++ldg) {
        auto launch = [&] {
            const float4 *a = reinterpret_cast<const float4*>(dA), *b = reinterpret_cast<const float4*>(dB);
            float4* c = reinterpret_cast<float4*>(dC);
            if (ldg) port_ldg<<<grid, block>>>(a, b, c, M, N, K);
            else port<<<grid, block>>>(a, b, c, M, N, K);
            CUDA_CHECK(cudaGetLastError());
        };
        // check on a zeroed C (stale values cannot pass), then time
        CUDA_CHECK(cudaMemset(dC, 0, elems * sizeof(float)));
        launch();
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(hC.data(), dC, elems * sizeof(float), cudaMemcpyDeviceToHost));
        double diff = 0.0;
        for (size_t i = 0; i < elems; ++i) {
            const double d = std::fabs((double)hC[i] - (double)hRef[i]);
            if (std::isnan(d) || d > diff) diff = d;  // a NaN sticks (fails the check)
        }
        const double err = ref_max > 0.0 ? diff / ref_max : NAN;
        const bool passed = err < 1e-4;
        all_passed = all_passed && passed;
        report(ldg ? "port_ldg" : "port", median_ms(launch), err, passed);
    }

    CUBLAS_CHECK(cublasDestroy(handle));
    for (float* p : {dA, dB, dRef, dC}) CUDA_CHECK(cudaFree(p));
    return all_passed ? 0 : 1;
}
