// Zhang's Figure 1(b): a loop whose trip count depends on data. Each thread runs trips[i]
// rounds of integer mixing seeded with seeds[i].
// CPU reference: kernels::micro::cpu::data_loop. With REMAP, thread i works on element
// remap_index[i] (reference redirection), giving identical outputs in a different order of work.
// With TILE each workgroup takes a tile of TILE_PER_THREAD * WG elements, sorts it by trip
// class in workgroup memory (shared/tile_sort.wgsl) and runs the loops in that order; WG and
// TILE_PER_THREAD are then set by the host (kernels::micro::TileSort).
//! variants: PROBE REMAP TILE

#import grid
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

// lo, class_width and classes: the trip classes of TILE (shared/trip_class.wgsl).
struct Params {
    n: u32,
    lo: u32,
    class_width: u32,
    classes: u32,
}

@group(0) @binding(0) var<storage, read> trips: array<u32>;
@group(0) @binding(1) var<storage, read> seeds: array<u32>;
@group(0) @binding(2) var<storage, read_write> results: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;
#ifdef REMAP
@group(0) @binding(4) var<storage, read> remap_index: array<u32>;
#endif

fn mix(h: u32) -> u32 {
    var x = h * 0x9E3779B1u;
    x ^= x >> 15u;
    return x * 0x85EBCA77u + 1u;
}

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
    let t = global_index(ids, WG);
    if (t < params.n) {
#ifdef REMAP
        run_loop(remap_index[t]);
#else
        run_loop(t);
#endif
    }
#endif
    probe_end();
}
