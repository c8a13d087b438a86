// Gupta use case 2, load balancing / irregular parallelism: forest expansion. An item is
// (level, k), packed as level << 22 | k. A whole workgroup processes one item: every invocation
// runs `fmas` multiply-adds from a seed of (level, k, lane), the workgroup sums them, and the
// item adds that sum and 1 to the checksum and count of its level. Then it creates children:
// - complete forest: (level + 1, 2k) and (level + 1, 2k + 1) while level + 1 < depth;
// - tilted forest: items in the second half of their level (k >= size / 2) create
//   (level + 1, 2(k - size / 2)) and the next one; the others none. Every level has n0 items
//   rounded up to even (level 0 has n0).
// Kernels: `level` (tier 0: one workgroup per item of the current level, sized by indirect
// dispatch from `level_args`), `level_pt` (tier 1: persistent workgroups claim the level's
// items with atomicAdd), `expand_pt` (tier 2: one persistent kernel, ring queue of items and a
// pending counter for termination). CPU reference: pt::cases::cpu::forest.
//! variants: (none)

#import grid
#import pt_discovery
#import pt_queue
#import pt_work

struct Params {
    n0: u32,
    depth: u32,
    tilted: u32,
    fmas: u32,
    mul: u32,
    add: u32,
    width: u32,
    pad: u32,
}

const K_BITS: u32 = 22u;
const K_MASK: u32 = 0x3FFFFFu;

// two halves of `width` items: level L reads half L % 2 and appends to the other
@group(0) @binding(0) var<storage, read_write> items: array<u32>;
// [0] current level (host sets 0xFFFFFFFF), [2 + 2L] items of level L, [3 + 2L] claim head
@group(0) @binding(1) var<storage, read_write> counts: array<atomic<u32>>;
// [2L] checksum of level L, [2L + 1] items processed at level L
@group(0) @binding(2) var<storage, read_write> sums: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> args: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;

var<workgroup> wg_a: u32;
var<workgroup> wg_b: u32;

fn level_size(level: u32) -> u32 {
    if (level == 0u) {
        return params.n0;
    }
    return params.n0 + (params.n0 & 1u);
}

fn children(level: u32, k: u32) -> u32 {
    if (level + 1u >= params.depth) {
        return 0u;
    }
    if (params.tilted == 0u) {
        return 2u;
    }
    return select(0u, 2u, k >= level_size(level) / 2u);
}

// first child's k
fn first_child(level: u32, k: u32) -> u32 {
    if (params.tilted == 0u) {
        return 2u * k;
    }
    return 2u * (k - level_size(level) / 2u);
}

// The workgroup's work on one item (uniform control flow); returns its checksum.
fn process(level: u32, k: u32, local: u32) -> u32 {
    let seed = pt_hash(pt_hash(pt_hash(level) ^ k) + local);
    let v = pt_workgroup_sum(local, pt_mads(seed, params.fmas, params.mul, params.add));
    if (local == 0u) {
        atomicAdd(&sums[2u * level], v);
        atomicAdd(&sums[2u * level + 1u], 1u);
    }
    return v;
}

// Appends the children of (level, k) to the next level's half (invocation 0 only).
fn append_children(level: u32, k: u32) {
    let c = children(level, k);
    if (c == 0u) {
        return;
    }
    let base = atomicAdd(&counts[2u + 2u * (level + 1u)], c);
    let half = ((level + 1u) % 2u) * params.width;
    let first = first_child(level, k);
    for (var j = 0u; j < c; j++) {
        if (base + j < params.width) {
            items[half + base + j] = first + j;
        }
    }
}

// Advances the current level and writes indirect arguments for one workgroup per item.
@compute @workgroup_size(1)
fn level_args() {
    let level = atomicLoad(&counts[0]) + 1u;
    atomicStore(&counts[0], level);
    let groups = atomicLoad(&counts[2u + 2u * level]);
    let x = min(groups, 65535u);
    args[0] = x;
    args[1] = select(1u, (groups + x - 1u) / max(x, 1u), groups > 0u);
    args[2] = 1u;
}

fn load_level(local: u32) -> vec2<u32> {
    if (local == 0u) {
        let level = atomicLoad(&counts[0]);
        wg_a = level;
        wg_b = atomicLoad(&counts[2u + 2u * level]);
    }
    return vec2<u32>(workgroupUniformLoad(&wg_a), workgroupUniformLoad(&wg_b));
}

@compute @workgroup_size(256)
fn level(ids: Ids) {
    let lc = load_level(ids.local);
    let lvl = lc.x;
    // uniform (provably): the early exit leaves process()'s barriers legal
    let w = uniform_workgroup_index(ids);
    if (w >= lc.y) {
        return;
    }
    let k = items[(lvl % 2u) * params.width + w];
    process(lvl, k, ids.local);
    if (ids.local == 0u) {
        append_children(lvl, k);
    }
}

@compute @workgroup_size(256)
fn level_pt(ids: Ids) {
    let lc = load_level(ids.local);
    let lvl = lc.x;
    let count = lc.y;
    var done = false;
    for (var guard = 0u; guard <= count; guard++) {
        if (ids.local == 0u) {
            wg_a = atomicAdd(&counts[3u + 2u * lvl], 1u);
        }
        let w = workgroupUniformLoad(&wg_a);
        if (w >= count) {
            done = true;
            break;
        }
        let k = items[(lvl % 2u) * params.width + w];
        process(lvl, k, ids.local);
        if (ids.local == 0u) {
            append_children(lvl, k);
        }
    }
    if (!done && ids.local == 0u) {
        pt_abort(PT_REASON_LOOP_LIMIT, lvl);
    }
}

// Tier 2: one kernel, items in the ring queue, `pending` counts items pushed but not finished.
@compute @workgroup_size(256)
fn expand_pt(ids: Ids) {
    let g = pt_discover(ids.local, workgroup_index(ids));
    if (g.count == 0u) {
        return;
    }
    var idle = 0u;
    var finished = false;
    loop {
        // state: 0 = got an item, 1 = leave, 2 = nothing to do yet
        if (ids.local == 0u) {
            let item = ptq_pop();
            var state = 0u;
            if (item == PTQ_EMPTY) {
                if (pt_aborted() || atomicLoad(&pt_queue[PTQ_PENDING]) == 0u) {
                    state = 1u;
                } else {
                    state = 2u;
                }
            }
            wg_a = state;
            wg_b = item;
        }
        let state = workgroupUniformLoad(&wg_a);
        if (state == 1u) {
            finished = true;
            break;
        }
        if (state == 2u) {
            idle += 1u;
            if (idle >= pt_cfg.spin_cap) {
                if (ids.local == 0u) {
                    pt_abort(PT_REASON_WAIT, idle);
                }
                finished = true;
                break;
            }
            continue;
        }
        idle = 0u;
        let item = workgroupUniformLoad(&wg_b);
        let lvl = item >> K_BITS;
        let k = item & K_MASK;
        process(lvl, k, ids.local);
        if (ids.local == 0u) {
            let c = children(lvl, k);
            let first = first_child(lvl, k);
            atomicAdd(&pt_queue[PTQ_PENDING], c);
            for (var j = 0u; j < c; j++) {
                if (!ptq_push(((lvl + 1u) << K_BITS) | (first + j))) {
                    break;
                }
            }
            atomicSub(&pt_queue[PTQ_PENDING], 1u);
        }
    }
    if (!finished && ids.local == 0u) {
        pt_abort(PT_REASON_LOOP_LIMIT, g.id);
    }
    pt_finish(ids.local);
}
