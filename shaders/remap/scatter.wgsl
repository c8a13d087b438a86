// GPU regroup, dispatch 3 of 3: stable scatter of element indices into the index array.
//
// Sequence: classify_histogram.wgsl -> scan.wgsl -> scatter.wgsl (grid =
// RegroupDispatch::grid, the same tiles as the histogram). Element e of class c in tile t goes
// to offsets[c * tiles + t] + (number of class-c elements before e in tile t). Ranks come
// from per-class lane bitmasks in workgroup memory (bit positions, not atomic arrival
// order), so the output is the stable counting sort by class, identical on every run.
//
// Override: CLASSES (1..=256). Tiles of WORKGROUP_SIZE = 256 elements, as in
// classify_histogram.wgsl.
// Bindings (group 0):
//   0  uniform             params   RegroupParams { n, tiles, histogram_len, pad }
//   1  storage, read       classes  array<u32>, n class ids, each < CLASSES
//   2  storage, read       offsets  array<u32>, the scanned histogram (class-major)
//   3  storage, read_write index    array<u32>, n entries: thread i of the remapped kernel
//                                   works on element index[i] (bind as remap_index there)
// Workgroup index = wid.x + wid.y * nwg.x (shared/grid.wgsl).

#import grid

override CLASSES: u32 = 10u;
// Tile = workgroup size; the host reference reproduces it with workgroup_size 256.
const WORKGROUP_SIZE: u32 = 256u;

// 256 lanes / 32 bits per word
const MASK_WORDS: u32 = 8u;

struct RegroupParams {
    n: u32,
    tiles: u32,
    histogram_len: u32,
    pad: u32,
}

@group(0) @binding(0) var<uniform> params: RegroupParams;
@group(0) @binding(1) var<storage, read> classes: array<u32>;
@group(0) @binding(2) var<storage, read> offsets: array<u32>;
@group(0) @binding(3) var<storage, read_write> index: array<u32>;

// masks[c * MASK_WORDS + w] bit b: lane w*32+b holds class c (256 classes × 256 lanes)
var<workgroup> masks: array<atomic<u32>, 2048>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(ids: Ids) {
    let tile = workgroup_index(ids);
    let lane = ids.local;
    // Surplus workgroups of a 2D grid; uniform per workgroup, so barriers below stay legal.
    if (tile >= params.tiles) {
        return;
    }
    for (var i = lane; i < CLASSES * MASK_WORDS; i += WORKGROUP_SIZE) {
        atomicStore(&masks[i], 0u);
    }
    workgroupBarrier();

    let element = tile * WORKGROUP_SIZE + lane;
    let in_range = element < params.n;
    let word = lane / 32u;
    let bit = lane % 32u;
    var own_class = 0u;
    if (in_range) {
        own_class = min(classes[element], CLASSES - 1u);
        atomicOr(&masks[own_class * MASK_WORDS + word], 1u << bit);
    }
    workgroupBarrier();

    if (in_range) {
        let row = own_class * MASK_WORDS;
        var rank = countOneBits(atomicLoad(&masks[row + word]) & ((1u << bit) - 1u));
        for (var w = 0u; w < word; w++) {
            rank += countOneBits(atomicLoad(&masks[row + w]));
        }
        index[offsets[own_class * params.tiles + tile] + rank] = element;
    }
}
