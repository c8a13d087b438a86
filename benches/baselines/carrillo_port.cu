// CUDA port of shaders/carrillo/branch_split.wgsl (Carrillo et al., branch splitting): the
// branched kernel and the split pair (split_if, split_else) on the same data and decision
// masks as `simtlab bench carrillo` (n = 2^22, light_rounds 128, heavy_rounds 4, 256 threads per
// block), to see whether the WGSL kernels' slowdown under a sparse random mask (0.23 ms at 0 %
// else-lanes, 0.90 ms at 0.5 %) comes from the algorithm on the hardware or from the Vulkan path.
// Build and run on the GPU machine (from the repository root):
//   nvcc -O3 -arch=sm_90 -lineinfo benches/baselines/carrillo_port.cu -o carrillo_port && ./carrillo_port
//   ./carrillo_port --once random 0.005     one launch of each kernel (for ncu)
// Prints one JSON line per (layout, else fraction): median ms of 20 event-timed launches after
// >= 0.3 s of warm-up, for branched and for the split pair; exit 1 if a result differs from the
// CPU reference (every 7th element) or branched differs from split anywhere.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define FAIL(...) (fprintf(stderr, "%s:%d: ", __FILE__, __LINE__), fprintf(stderr, __VA_ARGS__), exit(2))
#define CUDA_CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) FAIL("CUDA error: %s\n", cudaGetErrorString(e_)); } while (0)

constexpr unsigned N = 1u << 22, LIGHT = 128, HEAVY = 4, WG = 256;

struct U4 { unsigned x, y, z, w; };
__host__ __device__ inline U4 add(U4 a, U4 b) { return {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w}; }
__host__ __device__ inline U4 xr(U4 a, U4 b) { return {a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w}; }
__host__ __device__ inline U4 mul(U4 a, U4 b) { return {a.x * b.x, a.y * b.y, a.z * b.z, a.w * b.w}; }
__host__ __device__ inline unsigned rl(unsigned v, unsigned s) { return (v << s) | (v >> (32 - s)); }
__host__ __device__ inline U4 rotl(U4 v, unsigned s) { return {rl(v.x, s), rl(v.y, s), rl(v.z, s), rl(v.w, s)}; }
__host__ __device__ inline U4 yzwx(U4 v) { return {v.y, v.z, v.w, v.x}; }
__host__ __device__ inline U4 zwxy(U4 v) { return {v.z, v.w, v.x, v.y}; }
__host__ __device__ inline U4 wxyz(U4 v) { return {v.w, v.x, v.y, v.z}; }
__host__ __device__ inline U4 splat(unsigned s) { return {s, s, s, s}; }

__host__ __device__ inline unsigned mix(unsigned h) {
    unsigned x = h * 0x9E3779B1u;
    x ^= x >> 15;
    return x * 0x85EBCA77u + 1u;
}
__host__ __device__ inline unsigned light(U4 x, unsigned rounds) {
    unsigned h = x.x ^ x.y;
    for (unsigned r = 0; r < rounds; ++r) h = mix(h);
    return h;
}
__host__ __device__ inline void quarter(U4& a, U4& b, U4& c, U4& d) {
    a = add(a, b); d = rotl(xr(d, a), 16); c = add(c, d); b = rotl(xr(b, c), 12);
    a = add(a, b); d = rotl(xr(d, a), 8); c = add(c, d); b = rotl(xr(b, c), 7);
}
__host__ __device__ inline unsigned heavy(U4 x, unsigned i, unsigned rounds) {
    U4 a0 = x;
    U4 b0 = xr(yzwx(x), U4{0x61707865u, 0x3320646Eu, 0x79622D32u, 0x6B206574u});
    U4 c0 = add(x, U4{i, i ^ 0x55555555u, ~i, i * 3u});
    U4 d0 = mul(x, U4{0x9E3779B1u, 0x85EBCA77u, 0xC2B2AE3Du, 0x27D4EB2Fu});
    U4 a1 = add(U4{x.w, x.z, x.y, x.x}, U4{1u, 2u, 3u, 4u});
    U4 b1 = xr(x, splat(i));
    U4 c1 = mul(zwxy(x), splat(0x165667B1u));
    U4 d1 = xr(U4{i, i + 1u, i + 2u, i + 3u}, U4{x.y, x.x, x.w, x.z});
    for (unsigned r = 0; r < rounds; ++r) {
        quarter(a0, b0, c0, d0);
        quarter(a1, b1, c1, d1);
        b0 = yzwx(b0); c0 = zwxy(c0); d0 = wxyz(d0);
        b1 = yzwx(b1); c1 = zwxy(c1); d1 = wxyz(d1);
        quarter(a0, b0, c0, d0);
        quarter(a1, b1, c1, d1);
        b0 = wxyz(b0); c0 = zwxy(c0); d0 = yzwx(d0);
        b1 = wxyz(b1); c1 = zwxy(c1); d1 = yzwx(d1);
        U4 t = a0;
        a0 = add(a0, d1);
        a1 = xr(a1, t);
    }
    U4 s = add(add(xr(a0, b1), xr(b0, c1)), add(xr(c0, d1), xr(d0, a1)));
    return s.x ^ s.y ^ s.z ^ s.w;
}

// the rounds come from memory (a uniform in WGSL), so nvcc cannot specialise the loops
__global__ void branched(const unsigned* mask, const uint4* data, unsigned* out, const unsigned* params) {
    unsigned i = blockIdx.x * WG + threadIdx.x;
    if (i < params[0]) {
        unsigned m = mask[i];
        uint4 v = data[i];
        U4 x{v.x, v.y, v.z, v.w};
        out[i] = m == 0 ? light(x, params[1]) : heavy(x, i, params[2]);
    }
}
__global__ void split_if(const unsigned* mask, const uint4* data, unsigned* out, const unsigned* params) {
    unsigned i = blockIdx.x * WG + threadIdx.x;
    if (i < params[0] && mask[i] == 0) {
        uint4 v = data[i];
        out[i] = light(U4{v.x, v.y, v.z, v.w}, params[1]);
    }
}
__global__ void split_else(const unsigned* mask, const uint4* data, unsigned* out, const unsigned* params) {
    unsigned i = blockIdx.x * WG + threadIdx.x;
    if (i < params[0] && mask[i] != 0) {
        uint4 v = data[i];
        out[i] = heavy(U4{v.x, v.y, v.z, v.w}, i, params[2]);
    }
}

template <typename F>
static float median_ms(F launch) {
    const auto t0 = std::chrono::steady_clock::now();
    do {
        for (int i = 0; i < 20; ++i) launch();
        CUDA_CHECK(cudaDeviceSynchronize());
    } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 0.3);
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
    std::sort(ms.begin(), ms.end());
    return 0.5f * (ms[9] + ms[10]);
}

static uint32_t lcg(uint32_t& s) { s = s * 1664525u + 1013904223u; return s; }

// linear: the first fraction·n elements take the else branch; random: each with probability fraction
static std::vector<unsigned> make_mask(bool random, double fraction, uint32_t seed) {
    std::vector<unsigned> m(N);
    const unsigned count = (unsigned)llround(fraction * N);
    for (unsigned i = 0; i < N; ++i) m[i] = random ? (lcg(seed) >> 8) * (1.0 / 16777216.0) < fraction : i < count;
    return m;
}

int main(int argc, char** argv) {
    bool once = argc == 4 && strcmp(argv[1], "--once") == 0;
    std::vector<U4> data(N);
    uint32_t s = 7;
    for (U4& d : data) d = {lcg(s), lcg(s), lcg(s), lcg(s)};
    unsigned *dMask, *dOut, *dOut2, *dParams;
    uint4* dData;
    CUDA_CHECK(cudaMalloc(&dMask, N * 4)); CUDA_CHECK(cudaMalloc(&dOut, N * 4)); CUDA_CHECK(cudaMalloc(&dOut2, N * 4));
    CUDA_CHECK(cudaMalloc(&dData, N * 16)); CUDA_CHECK(cudaMalloc(&dParams, 16));
    CUDA_CHECK(cudaMemcpy(dData, data.data(), N * 16, cudaMemcpyHostToDevice));
    const unsigned params[4] = {N, LIGHT, HEAVY, 0};
    CUDA_CHECK(cudaMemcpy(dParams, params, 16, cudaMemcpyHostToDevice));
    const unsigned grid = N / WG;
    auto run_branched = [&] { branched<<<grid, WG>>>(dMask, dData, dOut, dParams); CUDA_CHECK(cudaGetLastError()); };
    auto run_split = [&] {
        split_if<<<grid, WG>>>(dMask, dData, dOut2, dParams);
        split_else<<<grid, WG>>>(dMask, dData, dOut2, dParams);
        CUDA_CHECK(cudaGetLastError());
    };
    if (once) {
        auto m = make_mask(strcmp(argv[2], "random") == 0, atof(argv[3]), 11);
        CUDA_CHECK(cudaMemcpy(dMask, m.data(), N * 4, cudaMemcpyHostToDevice));
        run_branched(); run_split();
        CUDA_CHECK(cudaDeviceSynchronize());
        return 0;
    }
    bool all_ok = true;
    const double fractions[] = {0.0, 0.005, 0.01, 0.02, 0.05, 0.5, 1.0};
    for (int random = 0; random < 2; ++random) {
        for (double f : fractions) {
            auto m = make_mask(random, f, 11);
            CUDA_CHECK(cudaMemcpy(dMask, m.data(), N * 4, cudaMemcpyHostToDevice));
            CUDA_CHECK(cudaMemset(dOut, 0, N * 4)); CUDA_CHECK(cudaMemset(dOut2, 0, N * 4));
            run_branched(); run_split();
            CUDA_CHECK(cudaDeviceSynchronize());
            std::vector<unsigned> o1(N), o2(N);
            CUDA_CHECK(cudaMemcpy(o1.data(), dOut, N * 4, cudaMemcpyDeviceToHost));
            CUDA_CHECK(cudaMemcpy(o2.data(), dOut2, N * 4, cudaMemcpyDeviceToHost));
            bool ok = o1 == o2;
            for (unsigned i = 0; i < N && ok; i += 7) ok = o1[i] == (m[i] == 0 ? light(data[i], LIGHT) : heavy(data[i], i, HEAVY));
            all_ok = all_ok && ok;
            unsigned divergent = 0, warps = N / 32;
            for (unsigned w = 0; w < warps; ++w) {
                unsigned ones = 0;
                for (unsigned l = 0; l < 32; ++l) ones += m[w * 32 + l];
                divergent += ones != 0 && ones != 32;
            }
            const float tb = median_ms(run_branched), ts = median_ms(run_split);
            printf("{\"layout\":\"%s\",\"else_fraction\":%g,\"divergent_warps\":%.4f,\"branched_ms\":%.4f,\"split_ms\":%.4f,\"check\":%s}\n",
                   random ? "random" : "linear", f, (double)divergent / warps, tb, ts, ok ? "true" : "false");
            fflush(stdout);
        }
    }
    return all_ok ? 0 : 1;
}
