// The tiles of the GPU regroup's first and last dispatches (remap/classify_histogram.wgsl,
// remap/scatter.wgsl): a workgroup of WORKGROUP_SIZE = 256 threads owns tile t, the elements
// t*TILE .. t*TILE+TILE-1 with TILE = 256 × SUBTILES, walked in SUBTILES sub-tiles of 256;
// both classify each element from its trip count with the same parameters.
// Overrides: CLASSES (1..=256), SUBTILES (≥ 1). Bindings (group 0):
//   0  uniform        params  RegroupParams (shared/regroup.wgsl)
//   1  storage, read  trips   array<u32>, n trip counts
// Workgroup index = wid.x + wid.y * nwg.x (shared/grid.wgsl).

#import grid
#import regroup
#import trip_class

override CLASSES: u32 = 10u;
override SUBTILES: u32 = 4u;
const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(1) var<storage, read> trips: array<u32>;

// First element of `tile`.
fn tile_start(tile: u32) -> u32 {
    return tile * SUBTILES * WORKGROUP_SIZE;
}

// Class of `element` (< params.n): trip_class of its trip count.
fn element_class(element: u32) -> u32 {
    return trip_class(trips[element], params.lo, params.width, CLASSES);
}
