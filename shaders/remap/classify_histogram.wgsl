// GPU regroup, dispatch 1 of 5: classify trip counts and count each tile's classes.
//
// Sequence (host geometry: simtlab::remap::regroup_dispatch; all in one submission):
//   1. classify_histogram.wgsl main           grid = RegroupDispatch::grid (tiles workgroups)
//   2. scan.wgsl reduce_blocks                grid = RegroupDispatch::scan_grid (blocks workgroups)
//   3. scan.wgsl scan_block_sums              grid = (1, 1, 1)
//   4. scan.wgsl scan_blocks                  grid = RegroupDispatch::scan_grid
//   5. scatter.wgsl main                      grid = RegroupDispatch::grid
// The result is the stable counting sort of element indices by class (the host redirect
// index): deterministic, reproducible by simtlab::remap::gpu_regroup_reference.
//
// Classification is fused: each element's class is trip_class(trips[e], lo, width, CLASSES)
// (shared/trip_class.wgsl), recomputed by scatter.wgsl rather than stored. Pass class ids
// as "trips" with lo = 0, width = 1 to regroup by precomputed classes.
//
// Overrides: CLASSES (1..=256), SUBTILES (≥ 1). A workgroup of WORKGROUP_SIZE = 256 threads
// owns a tile of 256 × SUBTILES elements (tile t covers t*TILE .. t*TILE+TILE-1), as in
// scatter.wgsl.
// Variant WRITE_CLASSES: also store each element's class id at binding 3 (for inspection).
// Bindings (group 0):
//   0  uniform             params     RegroupParams { n, tiles = ceil(n / TILE),
//                                     histogram_len = tiles * CLASSES, blocks, lo, width, pad }
//   1  storage, read       trips      array<u32>, n trip counts
//   2  storage, read_write histogram  array<u32>, tiles × CLASSES entries, class-major:
//                                     histogram[c * tiles + t] = elements of class c in tile t
//   3  storage, read_write classes    array<u32>, n class ids (WRITE_CLASSES only)
// Workgroup index = wid.x + wid.y * nwg.x (shared/grid.wgsl).
//! variants: WRITE_CLASSES

#import regroup_tile

@group(0) @binding(2) var<storage, read_write> histogram: array<u32>;
#ifdef WRITE_CLASSES
@group(0) @binding(3) var<storage, read_write> classes: array<u32>;
#endif

var<workgroup> counts: array<atomic<u32>, 256>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(ids: Ids) {
    let tile = uniform_workgroup_index(ids);
    let lane = ids.local;
    // Surplus workgroups of a 2D grid; uniform per workgroup (and provably so), so barriers
    // below stay legal.
    if (tile >= params.tiles) {
        return;
    }
    for (var c = lane; c < CLASSES; c += WORKGROUP_SIZE) {
        atomicStore(&counts[c], 0u);
    }
    workgroupBarrier();
    let first = tile_start(tile);
    for (var s = 0u; s < SUBTILES; s++) {
        let element = first + s * WORKGROUP_SIZE + lane;
        if (element < params.n) {
            let cls = element_class(element);
            atomicAdd(&counts[cls], 1u);
#ifdef WRITE_CLASSES
            classes[element] = cls;
#endif
        }
    }
    workgroupBarrier();
    for (var c = lane; c < CLASSES; c += WORKGROUP_SIZE) {
        histogram[c * params.tiles + tile] = atomicLoad(&counts[c]);
    }
}
