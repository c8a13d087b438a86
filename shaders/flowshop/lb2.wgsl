// Flow-shop two-machine Johnson bound (LB2), one thread per child node.
//
// A child is (parent, job): the parent's prefix with `job` appended. The host
// (src/kernels/flowshop/mod.rs, `Pool`) sends per parent the completion times of its
// prefix, so a thread derives the child's heads in O(m) instead of walking the prefix.
// For every machine pair (u, v) the thread walks all n jobs in the pair's precomputed
// Johnson order and schedules those still unscheduled: the membership test is the
// data-dependent branch; BRANCHLESS replaces it with select().
//
// Layout (all u32; n = jobs, m = machines <= 32, Q = m(m-1)/2 pairs):
//   binding 1  ptimes    m*n     processing times, machine-major: ptimes[k*n + j]
//   binding 2  parents   P*stride, stride = 3m + W, W = ceil(n/32); per parent:
//                        [heads (m) | tails (m) | remaining (m) | unscheduled mask (W)]
//                        heads: completion times of the prefix (0 for the empty prefix)
//                        tails: b[k]; remaining: r[k] (used only when m == 1)
//                        mask: bit j%32 of word j/32 set iff job j is unscheduled
//   binding 3  children  2*C     (parent index, job) per child
//   binding 4  bounds    C       output: LB2 of each child
//   binding 5  pairs     2*Q     (u, v) per pair, u < v
//   binding 6  lags      Q*n     lags[q*n + j] = sum of p[k][j] for u < k < v
//   binding 7  johnson   Q*n     johnson[q*n + i] = i-th job of pair q's Johnson order
// Thread i = child i, i = gid.x + gid.y * 64 * num_workgroups.x (2-D dispatch for large pools).

const MAX_MACHINES: u32 = 32u;

struct Params {
    jobs: u32,
    machines: u32,
    pairs: u32,
    children: u32,
    parent_stride: u32,
    mask_words: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> ptimes: array<u32>;
@group(0) @binding(2) var<storage, read> parents: array<u32>;
@group(0) @binding(3) var<storage, read> children: array<u32>;
@group(0) @binding(4) var<storage, read_write> bounds: array<u32>;
@group(0) @binding(5) var<storage, read> pairs: array<u32>;
@group(0) @binding(6) var<storage, read> lags: array<u32>;
@group(0) @binding(7) var<storage, read> johnson: array<u32>;

@compute @workgroup_size(64)
fn lb2(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let index = gid.x + gid.y * groups.x * 64u;
    if (index >= params.children) {
        return;
    }
    let parent = children[2u * index];
    let job = children[2u * index + 1u];
    let n = params.jobs;
    // The host refuses m > MAX_MACHINES (BoundData::check_gpu).
    let m = params.machines;
    let base = parent * params.parent_stride;
    let tails_at = base + m;
    let mask_at = base + 3u * m;

    // Child heads: completion times once `job` follows the parent's prefix.
    var heads: array<u32, MAX_MACHINES>;
    var finish = 0u;
    for (var k = 0u; k < min(m, MAX_MACHINES); k = k + 1u) {
        finish = max(finish, parents[base + k]) + ptimes[k * n + job];
        heads[k] = finish;
    }

    // One machine: no pair; the one-machine bound is exact (same as the CPU reference).
    if (params.pairs == 0u) {
        let rest = parents[base + 2u * m] - ptimes[job];
        bounds[index] = heads[0] + rest + parents[tails_at];
        return;
    }

    var bound = 0u;
    for (var q = 0u; q < params.pairs; q = q + 1u) {
        let u = pairs[2u * q];
        let v = pairs[2u * q + 1u];
        var tu = heads[u];
        var tv = heads[v];
        for (var i = 0u; i < n; i = i + 1u) {
            let j = johnson[q * n + i];
            let word = parents[mask_at + (j >> 5u)];
            let unscheduled = (((word >> (j & 31u)) & 1u) == 1u) && (j != job);
#ifdef BRANCHLESS
            // Every thread does the same work; jobs already scheduled add zero.
            let take = select(0u, 1u, unscheduled);
            tu = tu + take * ptimes[u * n + j];
            let scheduled_tv = max(tv, tu + lags[q * n + j]) + ptimes[v * n + j];
            tv = select(tv, scheduled_tv, unscheduled);
#else
            if (unscheduled) {
                tu = tu + ptimes[u * n + j];
                tv = max(tv, tu + lags[q * n + j]) + ptimes[v * n + j];
            }
#endif
        }
        bound = max(bound, max(tu + parents[tails_at + u], tv + parents[tails_at + v]));
    }
    bounds[index] = bound;
}
