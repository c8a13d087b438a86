// Flow-shop one-machine lower bound (LB1), one thread per child node.
//
// A child is (parent, job): the parent's prefix with `job` appended. The host
// (src/kernels/flowshop/mod.rs, `Pool`) sends per parent the completion times of its
// prefix, so a thread derives the child's heads in O(m) instead of walking the prefix:
// no loop depends on the depth of the node.
//
// Layout (all u32; n = jobs, m = machines):
//   binding 1  ptimes    m*n     processing times, machine-major: ptimes[k*n + j]
//   binding 2  parents   P*stride, stride = 3m + W, W = ceil(n/32); per parent:
//                        [heads (m) | tails (m) | remaining (m) | unscheduled mask (W)]
//                        heads: completion times of the prefix (0 for the empty prefix)
//                        tails: b[k]; remaining: r[k] = sum of p[k][j] over unscheduled j
//   binding 3  children  2*C     (parent index, job) per child
//   binding 4  bounds    C       output: LB1 of each child
// Thread i = child i, i = gid.x + gid.y * 64 * num_workgroups.x (2-D dispatch for large pools).
//
// Build with BRANCHLESS defined for the variant that uses max() instead of data-dependent ifs.

struct Params {
    jobs: u32,
    machines: u32,
    pairs: u32,          // unused here; same uniform block as lb2
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

@compute @workgroup_size(64)
fn lb1(
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
    let m = params.machines;
    let base = parent * params.parent_stride;

    // finish: completion of `job` on machine k (the child's head f[k]);
    // t: max over l <= k of f[l] + r[l]; bound: max over k of t + b[k].
    var finish = 0u;
    var t = 0u;
    var bound = 0u;
    for (var k = 0u; k < m; k = k + 1u) {
        let pk = ptimes[k * n + job];
        let head = parents[base + k];
        let tail = parents[base + m + k];
        // The child no longer has `job` to schedule.
        let rest = parents[base + 2u * m + k] - pk;
#ifdef BRANCHLESS
        finish = max(finish, head) + pk;
        t = max(t, finish + rest);
        bound = max(bound, t + tail);
#else
        if (head > finish) {
            finish = head;
        }
        finish = finish + pk;
        if (finish + rest > t) {
            t = finish + rest;
        }
        if (t + tail > bound) {
            bound = t + tail;
        }
#endif
    }
    bounds[index] = bound;
}
