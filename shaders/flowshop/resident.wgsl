// The resident flow-shop search (host side: src/kernels/flowshop/resident.rs): the open nodes,
// the incumbent and the counters live in GPU buffers, and one round of the search is five
// dispatches (six with resident_masks) with no host round trip:
//   resident_plan    (1 thread)   takes the top `taken` entries off the stack (DFS), as many as
//                                 the pool holds and the stack and the node store have room
//                                 for, and frees the node records no open entry needs
//   resident_select  (per node)   makes the node of an entry (its parent's record with one
//                                 more job placed), prunes it if its bound reaches the
//                                 incumbent, evaluates a leaf (one job left), or writes it as
//                                 a parent record and its children in the layout of
//                                 flowshop/lb1.wgsl, lb2.wgsl
//   resident_masks   (per node)   LB2: where each node's unscheduled jobs stand in every
//                                 pair's Johnson order (lb2's POSITION_MASKS)
//   resident_finish  (1 thread)   writes the bound kernel's uniform block (copied into it by
//                                 the host's command list) and its indirect dispatch size
//   lb1 / lb2                     the bound kernels (bit for bit the host's bounds, or at the
//                                 incumbent or above where they prune); LB2 runs as lb2_screen,
//                                 resident_listed (1 thread: the next dispatch's size),
//                                 lb2_listed, resident_rest (the same) and lb2_rest, so that
//                                 only children LB1 does not settle enter the pair loop, and
//                                 only those its first pairs do not settle run the others
//   resident_branch  (per node)   chooses the direction (bidirectional), keeps the children
//                                 below the incumbent, stores the node's record once and
//                                 pushes an entry per kept child, most promising on top
// Every loop runs over jobs, machines or children of one node: no thread waits for another,
// so no spin, and each invocation's loop count stays far below llvmpipe's limit.
// Once per submission, resident_order (one workgroup) sorts the pairs by how often each
// pruned (lb2.wgsl's PAIR_ORDER).
//
// Bounded memory: an open node is a 3-word entry [record, place, bound] on the stack, the child
// of a full node record in `store` that places the job at `place` of the record's permutation
// (PLACE_BACKWARD: at the back; PLACE_NONE: the record itself). A round's records form a frame
// above the previous round's; a frame is freed once every entry it parents has been taken.
// The stack is as deep as `pool` depth-first dives (at most pool * n * n / 2 entries) and each
// frame a level deeper than the one below it (at most n + 1 frames above a loaded one), so the
// memory does not grow with the tree: where a budget is smaller, fewer nodes are taken a round.
//
// Layout (all u32; n = jobs <= MAX_JOBS, m = machines):
//   binding 1  ptimes    m*n          processing times, machine-major
//   binding 2  state     16 atomics   the words named below (the host reads them after
//                        each submission)
//   binding 3  stack     capacity * 3: the open entries, bottom first
//   binding 10 store     store_capacity * node_stride; a node record is [front, back, bound,
//                        perm (n), heads (m), tails (m)] as the host search's open nodes:
//                        perm[..front] the prefix, perm[front..back] unscheduled, perm[back..]
//                        the suffix
//   binding 13 frames    frame_capacity * 3: per frame [first entry, first record, end of its
//                        records]
//   binding 4  selected  pool * (node_stride + 2): the nodes taken this round, each followed
//                        by [first child, children per direction] (0 children: not branched)
//   binding 5  parents   pool * pool_stride, the bound kernels' parent records (binding 2 there)
//   binding 6  children  pool * directions * n * 2, the bound kernels' children (binding 3)
//   binding 7  bounds    the bound kernels' output (binding 4 there)
//   binding 8  launch    [the bound kernels' 8-word uniform block | dispatch x, y, z |
//                        lb2_listed's dispatch x, y, z | lb2_rest's dispatch x, y, z]
//   binding 9  results   pool * (1 + n): per select thread, the best leaf it met [value, perm]
//   binding 11 places    pairs * n + pool * pairs * mask_words: job j's place in pair q's
//                        Johnson order at q*n + j; after them, per branched node and pair, the
//                        places of its unscheduled jobs as mask_words words of bits
//                        (resident_masks; read by lb2 with POSITION_MASKS)
//   binding 12 pairs     3 * pairs: lb2's binding 5, [(u, v) per pair | the order of lb2's
//                        pair loop (PAIR_ORDER)]
//   binding 14 listed    2 + MAX_PAIRS + 2 * pool * directions * n: lb2.wgsl's Listed, [count |
//                        rest | hits (MAX_PAIRS) | children | the children still open]

struct Config {
    jobs: u32,
    machines: u32,
    pairs: u32,
    pool: u32,
    node_stride: u32,
    pool_stride: u32,
    mask_words: u32,
    // 1: forward branching; 2: bidirectional
    directions: u32,
    // entries the stack holds
    capacity: u32,
    result_stride: u32,
    // node records the store holds
    store_capacity: u32,
    frame_capacity: u32,
}

@group(0) @binding(0) var<uniform> config: Config;
@group(0) @binding(1) var<storage, read> ptimes: array<u32>;
@group(0) @binding(2) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> stack: array<u32>;
@group(0) @binding(4) var<storage, read_write> selected: array<u32>;
@group(0) @binding(5) var<storage, read_write> pool_parents: array<u32>;
@group(0) @binding(6) var<storage, read_write> pool_children: array<u32>;
@group(0) @binding(7) var<storage, read> bounds: array<u32>;
@group(0) @binding(8) var<storage, read_write> launch: array<u32>;
@group(0) @binding(9) var<storage, read_write> results: array<u32>;
@group(0) @binding(10) var<storage, read_write> store: array<u32>;
@group(0) @binding(11) var<storage, read_write> places: array<u32>;
@group(0) @binding(12) var<storage, read_write> pairs: array<u32>;
// lb2.wgsl's Listed: [count | rest | hits (MAX_PAIRS) | children ...]
@group(0) @binding(13) var<storage, read_write> frames: array<u32>;
@group(0) @binding(14) var<storage, read_write> listed: array<u32>;
const LISTED_REST: u32 = 1u;
const LISTED_HITS: u32 = 2u;
// resident_order halves the counts once one reaches this (host: resident.rs HITS_LIMIT)
const HITS_LIMIT: u32 = 0x40000000u;

// state words (host: resident.rs, `word`)
const COUNT: u32 = 0u;      // entries on the stack (those below FLOOR moved to another device)
const BEST: u32 = 1u;       // incumbent: children are kept iff their bound is below it
const TAKEN: u32 = 2u;      // nodes taken this round
const BASE: u32 = 3u;       // stack index of the lowest entry taken this round
const CHILDREN: u32 = 4u;   // children written this round
const RECORDS: u32 = 5u;    // the first node record of this round's frame
const FULL: u32 = 6u;       // set when the stack or the store had no room to branch
const ROUNDS: u32 = 7u;
const NODES: u32 = 8u;      // 64-bit counters as (low, high)
const LEAVES: u32 = 10u;
const USED: u32 = 12u;      // node records this round's frame holds
const FRAMES: u32 = 13u;    // frames on the frame stack
const FLOOR: u32 = 14u;     // entries below it belong to another device
const OPEN_FRAME: u32 = 15u; // 1: the top frame's record count is this round's USED
const OFFER: u32 = 16u;     // an incumbent from the host: each round lowers BEST to it

const PLACE_BACKWARD: u32 = 0x80000000u;
const PLACE_NONE: u32 = 0xffffffffu;

const FRONT: u32 = 0u;
const BACK: u32 = 1u;
const BOUND: u32 = 2u;
const PERM: u32 = 3u;
const BACKWARD_CHILD: u32 = 0x80000000u;
const MAX_JOBS: u32 = 128u;
const MAX_MASK_WORDS: u32 = MAX_JOBS / 32u;
const WG: u32 = 64u;
// resident_masks' workgroups per row of its grid (host: resident.rs MASK_ROW)
const MASK_ROW: u32 = 32768u;

fn add_counter(low: u32, amount: u32) {
    let old = atomicAdd(&state[low], amount);
    // the adder that wraps the low word carries
    if (old + amount < old) {
        atomicAdd(&state[low + 1u], 1u);
    }
}

@compute @workgroup_size(1)
fn resident_plan() {
    // the host offers an incumbent rather than writing BEST: a better one this device found
    // in a batch queued ahead of the offer stays
    atomicMin(&state[BEST], atomicLoad(&state[OFFER]));
    // the last round's frame holds the records its branch stored
    var top = atomicLoad(&state[FRAMES]);
    if (atomicLoad(&state[OPEN_FRAME]) == 1u && top > 0u) {
        frames[3u * top - 1u] = frames[3u * top - 2u] + atomicLoad(&state[USED]);
    }
    let count = atomicLoad(&state[COUNT]);
    let open = count - min(atomicLoad(&state[FLOOR]), count);
    // Branching t nodes pushes at most t * (n - 1) more than it pops. A round of many nodes
    // leaves room for one depth-first dive (n (n - 1) / 2 entries), so that where the budget
    // is full, rounds of one node still go on (the dive's siblings are all it adds).
    let fan = max(config.jobs, 2u) - 1u;
    let dive = config.jobs * fan / 2u;
    let room = config.capacity - min(count, config.capacity);
    var taken = min(config.pool, open);
    if (room >= dive + fan) {
        taken = min(taken, (room - dive) / fan);
    } else {
        taken = min(taken, select(0u, 1u, room >= fan));
    }
    // Frames whose entries are all taken are freed; this round's records go above the rest,
    // and at most `taken` of them must fit beside a record for each frame the stack may still
    // push (so that rounds of one node always fit). Fewer taken free fewer frames: each pass
    // either fits or lowers `taken` to what fits above a higher frame, so it ends within the
    // frames.
    var records = 0u;
    for (var attempt = 0u; attempt <= config.frame_capacity; attempt = attempt + 1u) {
        top = atomicLoad(&state[FRAMES]);
        while (top > 0u && frames[3u * (top - 1u)] >= count - taken) {
            top = top - 1u;
        }
        records = select(0u, frames[3u * top - 1u], top > 0u);
        let reserved = records + config.frame_capacity - min(top + 1u, config.frame_capacity);
        if (reserved + taken <= config.store_capacity) {
            break;
        }
        taken = config.store_capacity - min(reserved, config.store_capacity);
    }
    if (taken > 0u && top >= config.frame_capacity) {
        taken = 0u;
    }
    if (taken == 0u && open > 0u) {
        atomicStore(&state[FULL], 1u);
    }
    if (taken > 0u) {
        frames[3u * top] = count - taken;
        frames[3u * top + 1u] = records;
        frames[3u * top + 2u] = records;
        top = top + 1u;
    }
    atomicStore(&state[FRAMES], top);
    atomicStore(&state[OPEN_FRAME], select(0u, 1u, taken > 0u));
    atomicStore(&state[RECORDS], records);
    atomicStore(&state[USED], 0u);
    atomicStore(&state[BASE], count - taken);
    atomicStore(&state[TAKEN], taken);
    atomicStore(&state[COUNT], count - taken);
    atomicStore(&state[CHILDREN], 0u);
    atomicAdd(&state[ROUNDS], 1u);
}

// Places the job at `place` of the node at `selected[at..]`: at the front (heads grow) or, with
// PLACE_BACKWARD, at the back (tails grow), as the host search branches.
fn place_job(at: u32, place: u32) {
    let n = config.jobs;
    let m = config.machines;
    let position = at + PERM + (place & ~PLACE_BACKWARD);
    let job = selected[position];
    if ((place & PLACE_BACKWARD) != 0u) {
        var start = 0u;
        for (var k = m; k > 0u; k = k - 1u) {
            let tail = at + PERM + n + m + k - 1u;
            start = max(start, selected[tail]) + ptimes[(k - 1u) * n + job];
            selected[tail] = start;
        }
        let back = selected[at + BACK];
        let last = at + PERM + back - 1u;
        selected[position] = selected[last];
        selected[last] = job;
        selected[at + BACK] = back - 1u;
    } else {
        var finish = 0u;
        for (var k = 0u; k < m; k = k + 1u) {
            let head = at + PERM + n + k;
            finish = max(finish, selected[head]) + ptimes[k * n + job];
            selected[head] = finish;
        }
        let front = selected[at + FRONT];
        let next = at + PERM + front;
        selected[position] = selected[next];
        selected[next] = job;
        selected[at + FRONT] = front + 1u;
    }
}

@compute @workgroup_size(WG)
fn resident_select(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let taken = atomicLoad(&state[TAKEN]);
    if (i >= taken) {
        return;
    }
    let n = config.jobs;
    let m = config.machines;
    // thread 0 takes the top of the stack: its parent's record with one more job placed
    let entry = 3u * (atomicLoad(&state[BASE]) + taken - 1u - i);
    let src = stack[entry] * config.node_stride;
    let place = stack[entry + 1u];
    let at = i * (config.node_stride + 2u);
    for (var w = 0u; w < config.node_stride; w = w + 1u) {
        selected[at + w] = store[src + w];
    }
    selected[at + config.node_stride + 1u] = 0u;
    if (place != PLACE_NONE) {
        place_job(at, place);
    }
    selected[at + BOUND] = stack[entry + 2u];
    let front = selected[at + FRONT];
    let back = selected[at + BACK];
    let best = atomicLoad(&state[BEST]);
    if (selected[at + BOUND] >= best) {
        return;
    }
    let heads = at + PERM + n;
    let tails = heads + m;
    if (back - front == 1u) {
        // Its only child is a leaf: the complete schedule prefix, job, suffix.
        add_counter(LEAVES, 1u);
        let job = selected[at + PERM + front];
        var finish = 0u;
        var makespan = 0u;
        for (var k = 0u; k < m; k = k + 1u) {
            finish = max(finish, selected[heads + k]) + ptimes[k * n + job];
            makespan = max(makespan, finish + selected[tails + k]);
        }
        let slot = i * config.result_stride;
        if (makespan <= best && makespan < results[slot]) {
            results[slot] = makespan;
            for (var j = 0u; j < n; j = j + 1u) {
                results[slot + 1u + j] = selected[at + PERM + j];
            }
            atomicMin(&state[BEST], makespan);
        }
        return;
    }

    let width = back - front;
    let first = atomicAdd(&state[CHILDREN], width * config.directions);
    let record = i * config.pool_stride;
    // each word of the record written once (sums and bits kept in registers)
    for (var k = 0u; k < m; k = k + 1u) {
        pool_parents[record + k] = selected[heads + k];
        pool_parents[record + m + k] = selected[tails + k];
        var remaining = 0u;
        for (var x = 0u; x < width; x = x + 1u) {
            remaining = remaining + ptimes[k * n + selected[at + PERM + front + x]];
        }
        pool_parents[record + 2u * m + k] = remaining;
    }
    for (var w = 0u; w < config.mask_words; w = w + 1u) {
        var bits = 0u;
        for (var x = 0u; x < width; x = x + 1u) {
            let job = selected[at + PERM + front + x];
            bits = bits | select(0u, 1u << (job & 31u), job >> 5u == w);
        }
        pool_parents[record + 3u * m + w] = bits;
    }
    for (var x = 0u; x < width; x = x + 1u) {
        let job = selected[at + PERM + front + x];
        for (var d = 0u; d < config.directions; d = d + 1u) {
            let child = first + d * width + x;
            pool_children[2u * child] = i;
            pool_children[2u * child + 1u] = job | select(0u, BACKWARD_CHILD, d == 1u);
        }
    }
    selected[at + config.node_stride] = first;
    selected[at + config.node_stride + 1u] = width;
}

// After resident_select, for LB2: per branched node and machine pair, the bit set of the
// Johnson-order places its unscheduled jobs hold, so that each child walks those jobs only
// (lb2's POSITION_MASKS) instead of all n; one pass per node serves all its children.
// One workgroup per node (rows of MASK_ROW nodes), its threads taking the pairs in turn: a
// thread per node would walk pairs × jobs places in one chain.
@compute @workgroup_size(WG)
fn resident_masks(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let i = group.x + group.y * MASK_ROW;
    if (i >= atomicLoad(&state[TAKEN])) {
        return;
    }
    let at = i * (config.node_stride + 2u);
    let width = selected[at + config.node_stride + 1u];
    if (width == 0u) {
        return;
    }
    let front = selected[at + FRONT];
    let n = config.jobs;
    let words = config.mask_words;
    for (var q = t; q < config.pairs; q = q + WG) {
        var mask: array<u32, MAX_MASK_WORDS>;
        for (var x = 0u; x < width; x = x + 1u) {
            let place = places[q * n + selected[at + PERM + front + x]];
            mask[place >> 5u] = mask[place >> 5u] | (1u << (place & 31u));
        }
        let out = config.pairs * n + (i * config.pairs + q) * words;
        for (var w = 0u; w < words; w = w + 1u) {
            places[out + w] = mask[w];
        }
    }
}

@compute @workgroup_size(1)
fn resident_finish() {
    let children = atomicLoad(&state[CHILDREN]);
    // struct Params of shared/flowshop_pool.wgsl; prune at the incumbent
    launch[0] = config.jobs;
    launch[1] = config.machines;
    launch[2] = config.pairs;
    launch[3] = children;
    launch[4] = config.pool_stride;
    launch[5] = config.mask_words;
    launch[6] = atomicLoad(&state[TAKEN]);
    launch[7] = atomicLoad(&state[BEST]);
    size_dispatch(children, 8u);
    listed[0] = 0u;
    listed[LISTED_REST] = 0u;
}

// The dispatch size (at launch[at..at + 3]) of one thread per child for `count` children: 64
// threads per workgroup, rows of at most 65535 workgroups (shared/grid.wgsl).
fn size_dispatch(count: u32, at: u32) {
    let groups = (count + 63u) / 64u;
    launch[at] = min(groups, 65535u);
    launch[at + 1u] = max((groups + 65534u) / 65535u, 1u);
    launch[at + 2u] = 1u;
}

// After lb2_screen: lb2_listed's dispatch size.
@compute @workgroup_size(1)
fn resident_listed() {
    size_dispatch(listed[0], 11u);
}

// After lb2_listed: lb2_rest's dispatch size.
@compute @workgroup_size(1)
fn resident_rest() {
    size_dispatch(listed[LISTED_REST], 14u);
}

// The pairs by how many children each pruned, most first (ties: the host's order, strongest
// at the root first); a rank sort, Q <= 496 steps per pair. Once the largest count reaches
// 2^30, every count is halved, so that none wraps in a long search. (Halving at every sort,
// to follow the recent rounds only, was slower on 50x10.)
@compute @workgroup_size(WG)
fn resident_order(@builtin(local_invocation_index) t: u32) {
    for (var q = t; q < config.pairs; q = q + WG) {
        let hits = listed[LISTED_HITS + q];
        var rank = 0u;
        for (var r = 0u; r < config.pairs; r = r + 1u) {
            let other = listed[LISTED_HITS + r];
            rank = rank + select(0u, 1u, other > hits || (other == hits && r < q));
        }
        pairs[2u * config.pairs + rank] = q;
    }
    // every count read, and the order written, before any is halved
    storageBarrier();
    if (config.pairs > 0u && listed[LISTED_HITS + pairs[2u * config.pairs]] >= HITS_LIMIT) {
        for (var q = t; q < config.pairs; q = q + WG) {
            listed[LISTED_HITS + q] = listed[LISTED_HITS + q] / 2u;
        }
    }
}

// Machine idle time the job adds (host: search.rs idle_time), the second key of the order.
fn idle_time(at: u32, job: u32, backward: bool) -> u32 {
    let n = config.jobs;
    let m = config.machines;
    var finish = 0u;
    var idle = 0u;
    for (var step = 0u; step < m; step = step + 1u) {
        let k = select(step, m - 1u - step, backward);
        let ready = selected[at + PERM + n + select(k, m + k, backward)];
        let start = max(finish, ready);
        idle = idle + start - ready;
        finish = start + ptimes[k * n + job];
    }
    return idle;
}

// True when child y goes below child x on the stack (it is explored later): larger bound,
// then more idle time, then later position, as the host search orders them.
fn later(by: u32, iy: u32, y: u32, bx: u32, ix: u32, x: u32) -> bool {
    return by > bx || (by == bx && (iy > ix || (iy == ix && y > x)));
}

@compute @workgroup_size(WG)
fn resident_branch(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= atomicLoad(&state[TAKEN])) {
        return;
    }
    let at = i * (config.node_stride + 2u);
    let width = selected[at + config.node_stride + 1u];
    if (width == 0u) {
        return;
    }
    let front = selected[at + FRONT];
    let best = atomicLoad(&state[BEST]);
    var first = selected[at + config.node_stride];
    var backward = false;
    if (config.directions == 2u) {
        // Gmys et al.'s MinBranch (host: search.rs prefer_second): fewer children kept, then
        // a larger sum of bounds clamped at the incumbent (64-bit as low, high)
        var kept = vec2<u32>(0u, 0u);
        var low = vec2<u32>(0u, 0u);
        var high = vec2<u32>(0u, 0u);
        for (var x = 0u; x < width; x = x + 1u) {
            let b = vec2<u32>(bounds[first + x], bounds[first + width + x]);
            kept = kept + select(vec2<u32>(0u), vec2<u32>(1u), b < vec2<u32>(best));
            let add = min(b, vec2<u32>(best));
            let sum = low + add;
            high = high + select(vec2<u32>(0u), vec2<u32>(1u), sum < low);
            low = sum;
        }
        let larger_sum = high.y > high.x || (high.y == high.x && low.y > low.x);
        if (kept.y < kept.x || (kept.y == kept.x && larger_sum)) {
            first = first + width;
            backward = true;
        }
    }

    var idle: array<u32, MAX_JOBS>;
    var kept = 0u;
    for (var x = 0u; x < min(width, MAX_JOBS); x = x + 1u) {
        if (bounds[first + x] < best) {
            kept = kept + 1u;
            idle[x] = idle_time(at, selected[at + PERM + front + x], backward);
        }
    }
    if (kept == 0u) {
        return;
    }
    add_counter(NODES, kept);
    let base = atomicAdd(&state[COUNT], kept);
    let record = atomicLoad(&state[RECORDS]) + atomicAdd(&state[USED], 1u);
    if (base + kept > config.capacity || record >= config.store_capacity) {
        // resident_plan leaves room for every child and record, so this never happens; were
        // it to, the host stops with an error instead of losing nodes
        atomicStore(&state[FULL], 1u);
        return;
    }
    for (var w = 0u; w < config.node_stride; w = w + 1u) {
        store[record * config.node_stride + w] = selected[at + w];
    }
    let direction = select(0u, PLACE_BACKWARD, backward);
    for (var x = 0u; x < min(width, MAX_JOBS); x = x + 1u) {
        let b = bounds[first + x];
        if (b >= best) {
            continue;
        }
        var rank = 0u;
        for (var y = 0u; y < min(width, MAX_JOBS); y = y + 1u) {
            let by = bounds[first + y];
            if (by < best && later(by, idle[y], y, b, idle[x], x)) {
                rank = rank + 1u;
            }
        }
        let out = 3u * (base + rank);
        stack[out] = record;
        stack[out + 1u] = (front + x) | direction;
        stack[out + 2u] = b;
    }
}
