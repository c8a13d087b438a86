// In-kernel thread-data remapping: a workgroup sorts its own tile of elements by class in
// workgroup memory, then its invocations work through the tile in that order, so each
// subgroup gets elements of one class. No index array, no extra dispatch; the price is two
// passes of workgroup atomics and four barriers per tile. CPU reference of the order (up to
// the order inside a class, which here follows atomic arrival): simtlab::remap::tile_index.
//
// Contract with the importing kernel:
// - Define `WG` (its workgroup size) and `TILE_PER_THREAD` (const or override); a tile is
//   TILE_ELEMENTS = WG * TILE_PER_THREAD elements, element r * WG + lid of it belonging to
//   invocation lid in round r. Define `fn tile_key(e: u32) -> u32`: the class of tile element
//   e < count (classes past TILE_MAX_CLASSES - 1 join it); it is called twice per element.
// - Call `tile_sort(lid, count)` in uniform control flow (every invocation, in range or
//   not); `count` is the tile's element count (smaller for the last tile). Afterwards
//   position p < count of the sorted tile holds element tile_order[p], elements of lower
//   classes first. Work through positions p = r * WG + lid: a class then spreads over all
//   subgroups of the workgroup, which matters because a workgroup holds its place on the GPU
//   until its slowest subgroup is done.

const TILE_MAX_CLASSES: u32 = 32u;
override TILE_ELEMENTS: u32 = WG * TILE_PER_THREAD;
const TILE_NONE: u32 = 0xFFFFFFFFu;

// Elements per class, then the next free position of each class.
var<workgroup> tile_class_count: array<atomic<u32>, TILE_MAX_CLASSES>;
var<workgroup> tile_order: array<u32, TILE_ELEMENTS>;

// Adds an element of class `key` to tile_class_count[key] and returns the count before it, a
// unique slot (TILE_NONE: no element). Plain workgroup atomics: on an H100 they beat
// subgroup-aggregated claims (a ballot round per class, 1.5x slower in this kernel).
fn tile_claim(key: u32) -> u32 {
    if (key < TILE_MAX_CLASSES) {
        return atomicAdd(&tile_class_count[key], 1u);
    }
    return 0u;
}

fn tile_key_in(e: u32, count: u32) -> u32 {
    if (e < count) {
        return min(tile_key(e), TILE_MAX_CLASSES - 1u);
    }
    return TILE_NONE;
}

fn tile_sort(lid: u32, count: u32) {
    if (lid < TILE_MAX_CLASSES) {
        atomicStore(&tile_class_count[lid], 0u);
    }
    workgroupBarrier();
    // count the classes
    for (var r = 0u; r < TILE_PER_THREAD; r++) {
        _ = tile_claim(tile_key_in(r * WG + lid, count));
    }
    workgroupBarrier();
    // counts -> first position of each class
    if (lid == 0u) {
        var start = 0u;
        for (var c = 0u; c < TILE_MAX_CLASSES; c++) {
            start += atomicExchange(&tile_class_count[c], start);
        }
    }
    workgroupBarrier();
    // each element claims the next position of its class
    for (var r = 0u; r < TILE_PER_THREAD; r++) {
        let e = r * WG + lid;
        let key = tile_key_in(e, count);
        let p = tile_claim(key);
        if (key != TILE_NONE) {
            tile_order[p] = e;
        }
    }
    workgroupBarrier();
}
