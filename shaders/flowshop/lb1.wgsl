// Flow-shop one-machine lower bound (LB1). CPU reference: kernels::flowshop::cpu::lb1.
//! variants: BRANCHLESS PROBE WALK_PREFIX
//
// A child is (parent, job): the parent's prefix with `job` appended, or with BACKWARD_CHILD
// set in the job word, the parent's suffix with `job` put in front. The host
// (src/kernels/flowshop/mod.rs, `Pool`) sends per parent its heads and tails, so a thread
// derives the child's heads or tails in O(m) instead of walking the prefix and suffix:
// no loop depends on the depth of the node.
//
// Layout (all u32; n = jobs, m = machines):
//   binding 1  ptimes    m*n     processing times, machine-major: ptimes[k*n + j]
//   binding 2  parents   P*stride, stride = 3m + W, W = ceil(n/32); per parent:
//                        [heads (m) | tails (m) | remaining (m) | unscheduled mask (W)]
//                        heads f[k], tails b[k] (the bounds' values for an empty
//                        prefix/suffix); remaining: r[k] = sum of p[k][j] over unscheduled j
//   binding 3  children  2*C     (parent index, job | BACKWARD_CHILD if backward) per child
//   binding 4  bounds    C       output: LB1 of each child
//   binding 7  probe records (PROBE only, shared/probe.wgsl)
//   binding 9  offsets   P+1     lb1_per_parent only: children of parent p are
//                                offsets[p] .. offsets[p+1]
// Entry points: `lb1`, one thread per child; `lb1_per_parent`, one thread per parent that
// bounds all its children in turn (the paper's one-thread-per-node mapping: the trip count
// is the parent's number of unscheduled jobs, so it diverges across tree levels).
// Thread i = global_index (2-D dispatch for large pools, shared/grid.wgsl).
//
// BRANCHLESS: max() instead of the three data-dependent ifs.
// WALK_PREFIX (the paper's kernel): a thread computes its parent's heads by walking the
// prefix (binding 10, shared/flowshop_prefix.wgsl) instead of reading them from the record.
// PROBE sites: 0 thread in range, 1..3 the ifs of the basic variant, 4 the per-parent loop,
// 5 the prefix walk (WALK_PREFIX).

#import flowshop_pool

const PROBE_SITES: u32 = 6u;

fn bound_child(index: u32) -> u32 {
    let child = child_at(index);
    let n = params.jobs;
    let m = machine_count();
    var tails = child_tails(child);

    // finish: completion of `job` on machine k after the parent's prefix (a forward child's
    // head f[k]; a backward child keeps the parent's head); t: max over l <= k of
    // f[l] + r[l]; bound: max over k of t + b[k].
#ifdef WALK_PREFIX
    let parent_heads = prefix_heads(child.parent, child.base, 5u);
#endif
    var finish = 0u;
    var t = 0u;
    var bound = 0u;
    for (var k = 0u; k < m; k = k + 1u) {
        let pk = ptimes[k * n + child.job];
#ifdef WALK_PREFIX
        let head = parent_heads[k];
#else
        let head = parents[child.base + k];
#endif
        let tail = tails[k];
        // The child no longer has `job` to schedule.
        let rest = parents[child.base + 2u * m + k] - pk;
#ifdef BRANCHLESS
        finish = max(finish, head) + pk;
        let f = select(finish, head, child.backward);
        t = max(t, f + rest);
        bound = max(bound, t + tail);
#else
        if (probe(1u, head > finish)) {
            finish = head;
        }
        finish = finish + pk;
        let f = select(finish, head, child.backward);
        if (probe(2u, f + rest > t)) {
            t = f + rest;
        }
        if (probe(3u, t + tail > bound)) {
            bound = t + tail;
        }
#endif
    }
    return bound;
}

@compute @workgroup_size(WG)
fn lb1(ids: Ids) {
    bound_each_child(ids);
}

@compute @workgroup_size(WG)
fn lb1_per_parent(ids: Ids) {
    bound_children_of_parent(ids, 4u);
}
