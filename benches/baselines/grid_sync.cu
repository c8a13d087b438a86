// CUDA baseline for simtlab's persistent-threads microbenchmarks (bench pt --case barrier|queue).
// Build and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -rdc=true grid_sync.cu -o grid_sync && ./grid_sync
// Prints one JSON line per measurement:
// - grid.sync() latency (cooperative groups) at 132 and 1056 blocks of 256 threads
//   ((time of N syncs - time of 0 syncs) / N, cudaEvent timing, median of 7 launches);
// - a warp-granular atomic queue: one lane per warp claims with atomicAdd on one global head
//   (claims/s), and the chunked variant claiming 256 items per atomicAdd (items/s), each item
//   marked in a count array that is checked to be exactly 1 everywhere.
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cg = cooperative_groups;

#define CHECK(x)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

__global__ void sync_kernel(int iters, unsigned *sink) {
    cg::grid_group grid = cg::this_grid();
    unsigned acc = 0;
    for (int i = 0; i < iters; ++i) {
        grid.sync();
        acc += i;
    }
    if (acc == 0x12345678u) sink[0] = acc;
}

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static float time_sync(int blocks, int iters, unsigned *sink) {
    void *args[] = {&iters, &sink};
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int rep = 0; rep < 8; ++rep) {
        CHECK(cudaEventRecord(a));
        CHECK(cudaLaunchCooperativeKernel((void *)sync_kernel, blocks, 256, args, 0, 0));
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float t;
        CHECK(cudaEventElapsedTime(&t, a, b));
        if (rep > 0) ms.push_back(t);  // first launch is warm-up
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    return median(ms);
}

// chunk = 1: claims/s of a single head; chunk = 256: chunked items/s.
__global__ void queue_kernel(unsigned *head, unsigned *counts, unsigned n, unsigned chunk, unsigned long long *claims) {
    const unsigned lane = threadIdx.x & 31;
    unsigned long long mine = 0;
    while (true) {
        unsigned base = 0;
        if (lane == 0) base = atomicAdd(head, 32u * chunk);  // one claim per warp
        base = __shfl_sync(0xffffffffu, base, 0);
        if (lane == 0) ++mine;
        if (base >= n) break;
        for (unsigned k = 0; k < chunk; ++k) {
            unsigned item = base + k * 32u + lane;
            if (item < n) atomicAdd(&counts[item], 1u);
        }
    }
    if (lane == 0) atomicAdd(claims, mine);
}

static void run_queue(int blocks, unsigned n, unsigned chunk, const char *kind) {
    unsigned *head, *counts;
    unsigned long long *claims;
    CHECK(cudaMalloc(&head, sizeof(unsigned)));
    CHECK(cudaMalloc(&counts, sizeof(unsigned) * n));
    CHECK(cudaMalloc(&claims, sizeof(unsigned long long)));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<float> ms;
    unsigned long long host_claims = 0;
    bool exact = true;
    for (int rep = 0; rep < 8; ++rep) {
        CHECK(cudaMemset(head, 0, sizeof(unsigned)));
        CHECK(cudaMemset(counts, 0, sizeof(unsigned) * n));
        CHECK(cudaMemset(claims, 0, sizeof(unsigned long long)));
        CHECK(cudaEventRecord(a));
        queue_kernel<<<blocks, 256>>>(head, counts, n, chunk, claims);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float t;
        CHECK(cudaEventElapsedTime(&t, a, b));
        if (rep > 0) ms.push_back(t);
        if (rep == 7) {
            CHECK(cudaMemcpy(&host_claims, claims, sizeof(host_claims), cudaMemcpyDeviceToHost));
            std::vector<unsigned> h(n);
            CHECK(cudaMemcpy(h.data(), counts, sizeof(unsigned) * n, cudaMemcpyDeviceToHost));
            for (unsigned i = 0; i < n; ++i) exact = exact && h[i] == 1;
        }
    }
    float t = median(ms) * 1e-3f;
    printf("{\"bench\":\"queue\",\"kind\":\"%s\",\"blocks\":%d,\"items\":%u,\"claims\":%llu,\"seconds\":%.9g,"
           "\"g_claims_per_s\":%.6g,\"g_items_per_s\":%.6g,\"exactly_once\":%s}\n",
           kind, blocks, n, host_claims, t, host_claims / t * 1e-9, n / t * 1e-9, exact ? "true" : "false");
    CHECK(cudaFree(head));
    CHECK(cudaFree(counts));
    CHECK(cudaFree(claims));
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
}

int main() {
    int dev = 0, sms = 0, coop = 0, per_sm = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sync_kernel, 256, 0));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, dev));
    printf("{\"bench\":\"device\",\"name\":\"%s\",\"sms\":%d,\"max_coresident_blocks_256\":%d,\"cooperative\":%d}\n",
           prop.name, sms, per_sm * sms, coop);
    unsigned *sink;
    CHECK(cudaMalloc(&sink, sizeof(unsigned)));
    const int iters = 1000;
    int counts[2] = {132, 1056};
    for (int blocks : counts) {
        if (!coop || blocks > per_sm * sms) {
            printf("{\"bench\":\"grid_sync\",\"blocks\":%d,\"skipped\":\"more blocks than co-resident\"}\n", blocks);
            continue;
        }
        float full = time_sync(blocks, iters, sink);
        float empty = time_sync(blocks, 0, sink);
        printf("{\"bench\":\"grid_sync\",\"blocks\":%d,\"threads\":256,\"iterations\":%d,\"us_per_sync\":%.4f,"
               "\"launch_us\":%.3f}\n",
               blocks, iters, (full - empty) * 1e3f / iters, empty * 1e3f);
    }
    CHECK(cudaFree(sink));
    const int blocks = per_sm * sms;
    run_queue(blocks, 1u << 24, 1, "single");
    run_queue(blocks, 1u << 26, 256 / 32, "chunked");
    return 0;
}
