// In-kernel thread-data remapping: a workgroup sorts its own tile of elements by class in
// workgroup memory, then its invocations work through the tile in that order, so each
// subgroup gets elements of one class. No index array, no extra dispatch; the price is a few
// workgroup atomics and four barriers per tile. CPU reference of the order (up to the order
// inside a class, which here follows atomic arrival): simtlab::remap::tile_index.
//
// Contract with the importing kernel:
// - Define `const WG: u32` (its workgroup size) and `const TILE_PER_THREAD: u32`; a tile is
//   TILE_ELEMENTS = WG * TILE_PER_THREAD elements, element r * WG + lid of it belonging to
//   invocation lid in round r.
// - Call `tile_sort(lid, lane, keys, count)` in uniform control flow (every invocation, in
//   range or not). `lane` is subgroup_invocation_id with TILE_SUBGROUPS, else ignored.
//   keys[r] is the class of the invocation's element of round r (classes past
//   TILE_MAX_CLASSES - 1 join it); `count` is the tile's element count (smaller for the last
//   tile). Afterwards position p < count of the sorted tile holds element tile_order[p],
//   elements of lower classes first.
// - With TILE_SUBGROUPS (needs subgroups) a subgroup claims its slots with one atomic per
//   class it holds instead of one per element.

const TILE_MAX_CLASSES: u32 = 32u;
const TILE_ELEMENTS: u32 = WG * TILE_PER_THREAD;
const TILE_NONE: u32 = 0xFFFFFFFFu;

var<workgroup> tile_class_count: array<atomic<u32>, TILE_MAX_CLASSES>;
var<workgroup> tile_class_start: array<u32, TILE_MAX_CLASSES>;
var<workgroup> tile_order: array<u32, TILE_ELEMENTS>;

// Lanes of `mask` below `lane`.
fn tile_lanes_below(mask: vec4<u32>, lane: u32) -> u32 {
    let words = vec4<u32>(0u, 1u, 2u, 3u);
    let word = vec4<u32>(lane / 32u);
    let partial = vec4<u32>((1u << (lane % 32u)) - 1u);
    let below = select(select(vec4<u32>(0u), partial, words == word), vec4<u32>(0xFFFFFFFFu), words < word);
    let c = countOneBits(mask & below);
    return c.x + c.y + c.z + c.w;
}

// Slot of an element of class `key` among the tile's elements of that class (TILE_NONE: no
// element; `lane`: subgroup_invocation_id, used with TILE_SUBGROUPS).
fn tile_claim(key: u32, lane: u32) -> u32 {
#ifdef TILE_SUBGROUPS
    var pending = key < TILE_MAX_CLASSES;
    var slot = 0u;
    // Each round settles every lane of the lowest pending class, so a subgroup needs at most
    // one round per class it holds.
    for (var round = 0u; round < TILE_MAX_CLASSES; round++) {
        if (!subgroupAny(pending)) {
            break;
        }
        let lowest = subgroupMin(select(TILE_NONE, key, pending));
        let mine = pending && key == lowest;
        let ballot = subgroupBallot(mine);
        let rank = tile_lanes_below(ballot, lane);
        var base = 0u;
        if (mine && rank == 0u) {
            let total = countOneBits(ballot);
            base = atomicAdd(&tile_class_count[lowest], total.x + total.y + total.z + total.w);
        }
        base = subgroupMax(base);
        if (mine) {
            slot = base + rank;
            pending = false;
        }
    }
    return slot;
#else
    if (key < TILE_MAX_CLASSES) {
        return atomicAdd(&tile_class_count[key], 1u);
    }
    return 0u;
#endif
}

fn tile_sort(lid: u32, lane: u32, keys: array<u32, TILE_PER_THREAD>, count: u32) {
    if (lid < TILE_MAX_CLASSES) {
        atomicStore(&tile_class_count[lid], 0u);
    }
    workgroupBarrier();
    // classes past the last one join it, so every element of the tile gets a position
    var classes: array<u32, TILE_PER_THREAD>;
    var slots: array<u32, TILE_PER_THREAD>;
    for (var r = 0u; r < TILE_PER_THREAD; r++) {
        classes[r] = select(TILE_NONE, min(keys[r], TILE_MAX_CLASSES - 1u), r * WG + lid < count);
        slots[r] = tile_claim(classes[r], lane);
    }
    workgroupBarrier();
    if (lid == 0u) {
        var start = 0u;
        for (var c = 0u; c < TILE_MAX_CLASSES; c++) {
            tile_class_start[c] = start;
            start += atomicLoad(&tile_class_count[c]);
        }
    }
    workgroupBarrier();
    for (var r = 0u; r < TILE_PER_THREAD; r++) {
        if (classes[r] != TILE_NONE) {
            tile_order[tile_class_start[classes[r]] + slots[r]] = r * WG + lid;
        }
    }
    workgroupBarrier();
}
