// Zhang's Figure 1(b): a loop whose trip count depends on data. Each thread runs trips[i]
// rounds of integer mixing seeded with seeds[i].
// CPU reference: kernels::micro::cpu::data_loop. With REMAP, thread i works on element
// remap_index[i] (reference redirection), giving identical outputs in a different order of work.
// With TILE each workgroup takes a tile of TILE_PER_THREAD * WG elements, sorts it by trip
// class in workgroup memory (shared/tile_sort.wgsl) and runs the loops in that order; WG and
// TILE_PER_THREAD are then set by the host (kernels::micro::TileSort).
// With DEFER loops of at least params.defer_from trips do not run in place: each workgroup
// appends their elements to `deferred`, and a second dispatch (`run_deferred`) runs them side
// by side, so no subgroup of either pass waits on one long lane.
//! variants: PROBE REMAP TILE DEFER

#import grid
#import mix
#import probe

const PROBE_SITES: u32 = 1u;

#ifdef TILE
// set per run by the host; a fixed size otherwise, which tools can read from the source
override WG: u32 = 256u;
override TILE_PER_THREAD: u32 = 4u;
#import tile_sort
#import trip_class

var<private> tile_first: u32;

fn tile_key(e: u32) -> u32 {
    return trip_class(trips[tile_first + e], params.lo, params.class_width, params.classes);
}
#else
const WG: u32 = 256u;
#endif

// lo, class_width and classes: the trip classes of TILE (shared/trip_class.wgsl);
// defer_from and first_workgroups (the first pass's grid, where the second pass's probe
// records start): DEFER.
struct Params {
    n: u32,
    lo: u32,
    class_width: u32,
    classes: u32,
    defer_from: u32,
    first_workgroups: u32,
}

@group(0) @binding(0) var<storage, read> trips: array<u32>;
@group(0) @binding(1) var<storage, read> seeds: array<u32>;
@group(0) @binding(2) var<storage, read_write> results: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;
#ifdef REMAP
@group(0) @binding(4) var<storage, read> remap_index: array<u32>;
#endif
#ifdef DEFER
// The deferred loops' elements, in order of arrival. The second pass's last workgroup leaves
// `count` and `done` at 0 for the next run (zero at creation), and `last` = the run's count.
struct Deferred {
    count: atomic<u32>,
    done: atomic<u32>,
    last: u32,
    elements: array<u32>,
}
@group(0) @binding(5) var<storage, read_write> deferred: Deferred;
var<workgroup> wg_count: u32;
var<workgroup> wg_last_done: bool;
// A workgroup's deferred loops, and where in `deferred` they go.
var<workgroup> wg_deferred: atomic<u32>;
var<workgroup> wg_first_slot: u32;
// Elements per invocation in the first pass (set by the host, at most 32): element r * WG +
// lid of the workgroup's block in round r. More of them mean fewer workgroups, so fewer
// barriers and global claims per element.
override DEFER_PER_THREAD: u32 = 1u;
#endif

fn run_loop(i: u32) {
    let count = trips[i];
    var h = seeds[i];
    for (var r = 0u; probe(0u, r < count); r++) {
        h = mix(h);
    }
    results[i] = h;
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    probe_begin(ids);
#ifdef TILE
    let first = workgroup_index(ids) * TILE_ELEMENTS;
    tile_first = first;
    let count = select(0u, min(TILE_ELEMENTS, params.n - first), first < params.n);
    tile_sort(ids.local, count);
    for (var r = 0u; r < TILE_PER_THREAD; r++) {
        let p = r * WG + ids.local;
        if (p < count) {
            run_loop(first + tile_order[p]);
        }
    }
#else
#ifdef DEFER
    // Short loops first, the claims after: a workgroup holds its place until its last
    // subgroup is done anyway, so barriers at its end cost little, while barriers (and a
    // global atomic's round trip) before the loops would hold every subgroup back.
    let block = workgroup_index(ids) * WG * DEFER_PER_THREAD;
    // bit r: the element of round r is deferred
    var later = 0u;
    for (var r = 0u; r < DEFER_PER_THREAD; r++) {
        let t = block + r * WG + ids.local;
        if (t < params.n) {
            if (trips[t] >= params.defer_from) {
                later |= 1u << r;
            } else {
                run_loop(t);
            }
        }
    }
    var slot = 0u;
    if (later != 0u) {
        slot = atomicAdd(&wg_deferred, countOneBits(later));
    }
    workgroupBarrier();
    // one global claim per workgroup that defers anything
    if (ids.local == 0u) {
        let k = atomicLoad(&wg_deferred);
        if (k > 0u) {
            wg_first_slot = atomicAdd(&deferred.count, k);
        }
    }
    workgroupBarrier();
    slot += wg_first_slot;
    for (var r = 0u; r < DEFER_PER_THREAD; r++) {
        if ((later & (1u << r)) != 0u) {
            deferred.elements[slot] = block + r * WG + ids.local;
            slot++;
        }
    }
#else
    let t = global_index(ids, WG);
    if (t < params.n) {
#ifdef REMAP
        run_loop(remap_index[t]);
#else
        run_loop(t);
#endif
    }
#endif
#endif
    probe_end();
}

#ifdef DEFER
// The second pass: the deferred loops, over a grid fixed by the host (grid stride), so that
// no dispatch has to wait for the count. (An indirect dispatch sized by the count needs its
// arguments reset before every run: one more dispatch, and wgpu validates indirect arguments
// in another; measured slower on an H100.) Only workgroups with loops to run take part in the
// reset, so an empty queue costs no atomics.
@compute @workgroup_size(WG)
fn run_deferred(ids: Ids) {
    probe_begin(ids);
    probe_records_after(params.first_workgroups);
    if (ids.local == 0u) {
        wg_count = atomicLoad(&deferred.count);
    }
    let count = workgroupUniformLoad(&wg_count);
    let wg = workgroup_index(ids);
    if (wg == 0u && ids.local == 0u) {
        deferred.last = count;
    }
    let groups = ids.workgroups.x * ids.workgroups.y;
    let busy = min((count + WG - 1u) / WG, groups);
    let is_busy = wg < busy;
    if (is_busy) {
        for (var i = global_index(ids, WG); i < count; i += groups * WG) {
            run_loop(deferred.elements[i]);
        }
    }
    // the last busy workgroup to finish (every busy one has read the count) resets the queue;
    // every workgroup reaches the workgroupUniformLoad, which WGSL's uniformity rules require
    if (ids.local == 0u) {
        wg_last_done = is_busy && atomicAdd(&deferred.done, 1u) + 1u == busy;
    }
    if (workgroupUniformLoad(&wg_last_done) && ids.local == 0u) {
        atomicStore(&deferred.count, 0u);
        atomicStore(&deferred.done, 0u);
    }
    probe_end();
}
#endif
