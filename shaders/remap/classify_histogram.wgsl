// GPU regroup, dispatch 1 of 3: per-tile class histogram.
//
// Sequence (host geometry: simtlab::remap::regroup_dispatch):
//   1. classify_histogram.wgsl  grid = RegroupDispatch::grid (tiles workgroups, 2D past 65535)
//   2. scan.wgsl                grid = (1, 1, 1)
//   3. scatter.wgsl             grid = RegroupDispatch::grid
// The result is the stable counting sort of element indices by class (the host redirect
// index): deterministic, reproducible by simtlab::remap::gpu_regroup_reference.
//
// Overrides: CLASSES (1..=256), WORKGROUP_SIZE (1..=256; the tile, same value in scatter.wgsl).
// Bindings (group 0):
//   0  uniform             params     RegroupParams { n, tiles = ceil(n / WORKGROUP_SIZE), histogram_len, pad }
//   1  storage, read       classes    array<u32>, n class ids, each < CLASSES (the host checks)
//   2  storage, read_write histogram  array<u32>, tiles × CLASSES entries, class-major:
//                                     histogram[c * tiles + t] = elements of class c in tile t
// Workgroup index = wid.x + wid.y * nwg.x; tile t covers elements t*WORKGROUP_SIZE ..+WORKGROUP_SIZE.

override CLASSES: u32 = 10u;
override WORKGROUP_SIZE: u32 = 256u;

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
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let tile = wid.x + wid.y * nwg.x;
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
