// Flow-shop two-machine Johnson bound (LB2). CPU reference: kernels::flowshop::cpu::lb2.
//! variants: BRANCHLESS PROBE WALK_PREFIX POSITION_MASKS PAIR_ORDER
//
// A child is (parent, job): the parent's prefix with `job` appended, or with BACKWARD_CHILD
// set in the job word, the parent's suffix with `job` put in front. The host
// (src/kernels/flowshop/mod.rs, `Pool`) sends per parent its heads and tails, so a thread
// derives the child's heads or tails in O(m) instead of walking the prefix and suffix.
// For every machine pair (u, v) the thread walks all n jobs in the pair's precomputed
// Johnson order and schedules those still unscheduled: the membership test is the
// data-dependent branch; BRANCHLESS replaces it with select().
//
// Layout (all u32; n = jobs, m = machines <= 32, Q = m(m-1)/2 pairs):
//   binding 1  ptimes    m*n     processing times, machine-major: ptimes[k*n + j]
//   binding 2  parents   P*stride, stride = 3m + W, W = ceil(n/32); per parent:
//                        [heads (m) | tails (m) | remaining (m) | unscheduled mask (W)]
//                        heads f[k], tails b[k] (the bounds' values for an empty
//                        prefix/suffix); remaining: r[k] (used only when m == 1)
//                        mask: bit j%32 of word j/32 set iff job j is unscheduled
//   binding 3  children  2*C     (parent index, job | BACKWARD_CHILD if backward) per child
//   binding 4  bounds    C       output: LB2 of each child
//   binding 5  pairs     2*Q     (u, v) per pair, u < v; with PAIR_ORDER, Q more: the order
//   binding 6  sequences Q*n vec4  pair q's Johnson order: sequences[q*n + i] =
//                        (j, p[u][j], p[v][j], sum of p[k][j] for u < k < v), j its i-th job
//   binding 7  probe records (PROBE only, shared/probe.wgsl)
//   binding 9  offsets   P+1     lb2_per_parent only: children of parent p are
//                                offsets[p] .. offsets[p+1]
// WALK_PREFIX (the paper's kernel): a thread computes its parent's heads by walking the
// prefix (binding 10, shared/flowshop_prefix.wgsl) instead of reading them from the record.
// POSITION_MASKS (the resident search): a child walks only its unscheduled jobs instead of
// all n (binding 11 below); the same jobs in the same order, so the same bound.
// Entry points: `lb2`, one thread per child; `lb2_per_parent`, one thread per parent that
// bounds all its children in turn; `lb2_screen`, `lb2_listed` and `lb2_rest`, the resident
// search's passes (binding 14): LB1 settles what it can; the first FIRST_PAIRS pairs settle
// most of the rest; the children still open then run the remaining pairs together, so that
// a subgroup's lanes leave the pair loop at about the same pair (a lane that prunes early no
// longer idles beside one that runs every pair).
// PAIR_ORDER (the resident search): the pair loop visits the pairs in the order stored after
// them in binding 5, which resident_order sorts by how often each pair pruned (Listed.hits),
// so the first FIRST_PAIRS are the ones that prune most. A pruned child's bound then depends
// on the order, but the search reads a bound's value only below the incumbent.
// Thread i = global_index (2-D dispatch for large pools, shared/grid.wgsl).
//
// PROBE sites: 0 thread in range, 1 job unscheduled (the basic variant's if),
// 2 the per-parent loop, 3 the prefix walk (WALK_PREFIX).

#import flowshop_pool

const PROBE_SITES: u32 = 4u;

@group(0) @binding(5) var<storage, read> pairs: array<u32>;
@group(0) @binding(6) var<storage, read> sequences: array<vec4<u32>>;
#ifdef POSITION_MASKS
// places[q*n + j]: job j's place in pair q's Johnson order; places[Q*n + (parent*Q + q)*W + w]:
// the places 32w.. of the parent's unscheduled jobs as bits, W = mask_words words (written by
// resident_masks in resident.wgsl).
@group(0) @binding(11) var<storage, read> places: array<u32>;
#endif
// Pairs of at most MAX_MACHINES machines.
const MAX_PAIRS: u32 = MAX_MACHINES * (MAX_MACHINES - 1u) / 2u;
// The resident search's passes: children[..count] are the children LB1 does not settle
// (lb2_screen), children[params.children..][..rest] those the first pairs do not settle
// (lb2_listed); hits[q] counts the children pair q pruned.
struct Listed {
    count: atomic<u32>,
    rest: atomic<u32>,
    hits: array<atomic<u32>, MAX_PAIRS>,
    children: array<u32>,
}
@group(0) @binding(14) var<storage, read_write> listed: Listed;
// Pairs that lb2_listed runs before the children still open are listed again.
override FIRST_PAIRS: u32 = 8u;

// A child with its heads, tails and LB1.
struct Start {
    child: Child,
    heads: array<u32, MAX_MACHINES>,
    tails: array<u32, MAX_MACHINES>,
    lb1: u32,
}

// Whether `start`'s LB1 settles the child: no machine pair, or it reaches the incumbent.
fn settled(start: Start) -> bool {
    return params.pairs == 0u || (params.prune_at != 0u && start.lb1 >= params.prune_at);
}

fn start_child(index: u32) -> Start {
    let child = child_at(index);
    let n = params.jobs;
    let m = machine_count();

    // Child heads and tails: a forward child's job follows the parent's prefix (new heads),
    // a backward child's job precedes its suffix (new tails). Both chains are computed and
    // selected so children of either direction run the same instructions.
    var heads: array<u32, MAX_MACHINES>;
#ifdef WALK_PREFIX
    let parent_heads = prefix_heads(child.parent, child.base, 3u);
#endif
    var finish = 0u;
    for (var k = 0u; k < m; k = k + 1u) {
#ifdef WALK_PREFIX
        let head = parent_heads[k];
#else
        let head = parents[child.base + k];
#endif
        finish = max(finish, head) + ptimes[k * n + child.job];
        heads[k] = select(finish, head, child.backward);
    }
    var tails = child_tails(child);

    // LB1, O(m): the bound of one machine; exact with one machine (no pair), and never above
    // LB2. With an incumbent it settles every child it prunes before the O(m²n) pair loop
    // (any value >= prune_at prunes).
    var t = 0u;
    var bound = 0u;
    for (var k = 0u; k < m; k = k + 1u) {
        t = max(t, heads[k] + parents[child.base + 2u * params.machines + k] - ptimes[k * n + child.job]);
        bound = max(bound, t + tails[k]);
    }
    return Start(child, heads, tails, bound);
}

// The pair visited `position`-th.
fn pair_at(position: u32) -> u32 {
#ifdef PAIR_ORDER
    // after the pairs, the order (written by resident_order in resident.wgsl)
    return pairs[2u * params.pairs + position];
#else
    return position;
#endif
}

fn prunes(bound: u32) -> bool {
    return params.prune_at != 0u && bound >= params.prune_at;
}

// LB2 so far: the largest pair term, and the position of the pair that reached the
// incumbent (the end of the range if none did).
struct Partial {
    bound: u32,
    at: u32,
}

// The pair terms of the pairs at positions first..end, on top of `bound_so_far`.
fn pair_terms(start: Start, bound_so_far: u32, first: u32, end: u32) -> Partial {
    let child = start.child;
    let n = params.jobs;
    let mask_at = child.base + 3u * params.machines;
    // local copies: indexing an array value by a variable would copy the array at each read
    var heads = start.heads;
    var tails = start.tails;
    var bound = bound_so_far;
    for (var position = first; position < end; position = position + 1u) {
        let q = pair_at(position);
        let u = pairs[2u * q];
        let v = pairs[2u * q + 1u];
        var tu = heads[min(u, MAX_MACHINES - 1u)];
        var tv = heads[min(v, MAX_MACHINES - 1u)];
#ifdef POSITION_MASKS
        // the parent's unscheduled jobs but the child's own, lowest place first
        let words_at = params.pairs * n + (child.parent * params.pairs + q) * params.mask_words;
        let own = places[q * n + child.job];
        for (var w = 0u; w < params.mask_words; w = w + 1u) {
            var left = places[words_at + w] & select(0xffffffffu, ~(1u << (own & 31u)), own >> 5u == w);
            loop {
                if (left == 0u) {
                    break;
                }
                let s = sequences[q * n + 32u * w + firstTrailingBit(left)];
                left = left & (left - 1u);
                tu = tu + s.y;
                tv = max(tv, tu + s.w) + s.z;
            }
        }
#else
        for (var i = 0u; i < n; i = i + 1u) {
            // (job j, p[u][j], p[v][j], lag of j between u and v), in Johnson order
            let s = sequences[q * n + i];
            let j = s.x;
            let word = parents[mask_at + (j >> 5u)];
            let unscheduled = (((word >> (j & 31u)) & 1u) == 1u) && (j != child.job);
#ifdef BRANCHLESS
            // Every thread does the same work; jobs already scheduled add zero.
            tu = tu + select(0u, s.y, unscheduled);
            tv = select(tv, max(tv, tu + s.w) + s.z, unscheduled);
#else
            if (probe(1u, unscheduled)) {
                tu = tu + s.y;
                tv = max(tv, tu + s.w) + s.z;
            }
#endif
        }
#endif
        bound = max(bound, max(tu + tails[min(u, MAX_MACHINES - 1u)], tv + tails[min(v, MAX_MACHINES - 1u)]));
        if (prunes(bound)) {
            return Partial(bound, position);
        }
    }
    return Partial(bound, end);
}

fn bound_child(index: u32) -> u32 {
    let start = start_child(index);
    if (settled(start)) {
        return start.lb1;
    }
    return pair_terms(start, 0u, 0u, params.pairs).bound;
}

// Writes the bound of listed child `index`, counts the pair that pruned it, and tells
// whether it is still open.
fn settle_listed(index: u32, partial: Partial) -> bool {
    bounds[index] = partial.bound;
    if (prunes(partial.bound)) {
        atomicAdd(&listed.hits[pair_at(partial.at)], 1u);
        return false;
    }
    return true;
}

// The resident search's first pass: LB1 of every child; a child it settles gets it as its
// bound, the others are listed for lb2_listed. Lanes whose child LB1 settles would idle
// through the pair loop beside the others (a subgroup runs as long as its slowest lane).
@compute @workgroup_size(WG)
fn lb2_screen(ids: Ids) {
    let index = global_index(ids, WG);
    if (index >= params.children) {
        return;
    }
    let start = start_child(index);
    if (settled(start)) {
        bounds[index] = start.lb1;
    } else {
        listed.children[atomicAdd(&listed.count, 1u)] = index;
    }
}

// The resident search's second pass: the first FIRST_PAIRS pairs of the listed children, one
// per thread; the children they leave open are listed for lb2_rest.
@compute @workgroup_size(WG)
fn lb2_listed(ids: Ids) {
    let k = global_index(ids, WG);
    if (k >= atomicLoad(&listed.count)) {
        return;
    }
    let index = listed.children[k];
    let first = min(FIRST_PAIRS, params.pairs);
    if (settle_listed(index, pair_terms(start_child(index), 0u, 0u, first)) && first < params.pairs) {
        listed.children[params.children + atomicAdd(&listed.rest, 1u)] = index;
    }
}

// The third pass: the remaining pairs of the children lb2_listed left open.
@compute @workgroup_size(WG)
fn lb2_rest(ids: Ids) {
    let k = global_index(ids, WG);
    if (k >= atomicLoad(&listed.rest)) {
        return;
    }
    let index = listed.children[params.children + k];
    settle_listed(index, pair_terms(start_child(index), bounds[index], FIRST_PAIRS, params.pairs));
}

@compute @workgroup_size(WG)
fn lb2(ids: Ids) {
    bound_each_child(ids);
}

@compute @workgroup_size(WG)
fn lb2_per_parent(ids: Ids) {
    bound_children_of_parent(ids, 2u);
}
