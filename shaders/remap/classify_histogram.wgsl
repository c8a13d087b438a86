// GPU regroup, dispatch 1 of 3: per-tile class histogram.
//
// Sequence (host geometry: simtlab::remap::regroup_dispatch):
//   1. classify_histogram.wgsl  grid = RegroupDispatch::grid (tiles workgroups, 2D past 65535)
//   2. scan.wgsl                grid = (1, 1, 1)
//   3. scatter.wgsl             grid = RegroupDispatch::grid
// The result is the stable counting sort of element indices by class (the host redirect
// index): deterministic, reproducible by simtlab::remap::gpu_regroup_reference.
//
// Override: CLASSES (1..=256). Tiles of WORKGROUP_SIZE = 256 elements, as in scatter.wgsl.
// Bindings (group 0):
//   0  uniform             params     RegroupParams { n, tiles = ceil(n / 256),
//                                     histogram_len = tiles * CLASSES, pad }
//   1  storage, read       classes    array<u32>, n class ids, each < CLASSES (the host checks)
//   2  storage, read_write histogram  array<u32>, tiles × CLASSES entries, class-major:
//                                     histogram[c * tiles + t] = elements of class c in tile t
// Workgroup index = wid.x + wid.y * nwg.x (shared/grid.wgsl); tile t covers elements
// t*256 .. t*256+255.

#import grid

override CLASSES: u32 = 10u;
// Tile = workgroup size; the host reference reproduces it with workgroup_size 256.
const WORKGROUP_SIZE: u32 = 256u;

struct RegroupParams {
    n: u32,
    tiles: u32,
    histogram_len: u32,
    pad: u32,
}

@group(0) @binding(0) var<uniform> params: RegroupParams;
@group(0) @binding(1) var<storage, read> classes: array<u32>;
@group(0) @binding(2) var<storage, read_write> histogram: array<u32>;

var<workgroup> counts: array<atomic<u32>, 256>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(ids: Ids) {
    let tile = workgroup_index(ids);
    let lane = ids.local;
    // Surplus workgroups of a 2D grid; uniform per workgroup, so barriers below stay legal.
    if (tile >= params.tiles) {
        return;
    }
    for (var c = lane; c < CLASSES; c += WORKGROUP_SIZE) {
        atomicStore(&counts[c], 0u);
    }
    workgroupBarrier();
    let element = tile * WORKGROUP_SIZE + lane;
    if (element < params.n) {
        // Clamped only to stay in bounds; out-of-range ids are rejected on the host.
        atomicAdd(&counts[min(classes[element], CLASSES - 1u)], 1u);
    }
    workgroupBarrier();
    for (var c = lane; c < CLASSES; c += WORKGROUP_SIZE) {
        histogram[c * params.tiles + tile] = atomicLoad(&counts[c]);
    }
}
