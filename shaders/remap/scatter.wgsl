// GPU regroup, dispatch 5 of 5: stable scatter of element indices into the index array.
//
// Sequence: classify_histogram.wgsl -> scan.wgsl (reduce_blocks, scan_block_sums,
// scan_blocks) -> scatter.wgsl (grid = RegroupDispatch::grid, the same tiles as the
// histogram). Element e of class c in tile t goes to offsets[c * tiles + t] + (number of
// class-c elements before e in tile t). The tile is walked in SUBTILES sub-tiles of 256
// elements, in order: inside a sub-tile, ranks come from per-class lane bitmasks in
// workgroup memory (bit positions, not atomic arrival order); across sub-tiles, a per-class
// running base (starting at the tile's scanned offset) adds the counts of the earlier
// sub-tiles. So the output is the stable counting sort by class, identical on every run.
//
// The class of each element is recomputed from its trip count (shared/trip_class.wgsl), with
// the same parameters as classify_histogram.wgsl.
//
// Overrides: CLASSES (1..=256), SUBTILES (≥ 1): tiles of 256 × SUBTILES elements, as in
// classify_histogram.wgsl.
// Bindings (group 0):
//   0  uniform             params   RegroupParams { n, tiles, histogram_len, blocks, lo, width, pad }
//   1  storage, read       trips    array<u32>, n trip counts
//   2  storage, read       offsets  array<u32>, the scanned histogram (class-major)
//   3  storage, read_write index    array<u32>, n entries: thread i of the remapped kernel
//                                   works on element index[i] (bind as remap_index there)
// Workgroup index = wid.x + wid.y * nwg.x (shared/grid.wgsl).

#import regroup_tile

// 256 lanes / 32 bits per word
const MASK_WORDS: u32 = 8u;

@group(0) @binding(2) var<storage, read> offsets: array<u32>;
@group(0) @binding(3) var<storage, read_write> index: array<u32>;

// masks[c * MASK_WORDS + w] bit b: lane w*32+b of the current sub-tile holds class c
var<workgroup> masks: array<atomic<u32>, 2048>;
// base[c]: where the current sub-tile's first class-c element goes
var<workgroup> base: array<u32, 256>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(ids: Ids) {
    let tile = uniform_workgroup_index(ids);
    let lane = ids.local;
    // Surplus workgroups of a 2D grid; uniform per workgroup (and provably so), so barriers
    // below stay legal.
    if (tile >= params.tiles) {
        return;
    }
    for (var i = lane; i < CLASSES * MASK_WORDS; i += WORKGROUP_SIZE) {
        atomicStore(&masks[i], 0u);
    }
    for (var c = lane; c < CLASSES; c += WORKGROUP_SIZE) {
        base[c] = offsets[c * params.tiles + tile];
    }
    workgroupBarrier();

    let word = lane / 32u;
    let bit = lane % 32u;
    let first = tile_start(tile);
    for (var s = 0u; s < SUBTILES; s++) {
        let start = first + s * WORKGROUP_SIZE;
        // uniform: the remaining sub-tiles of the last tile are empty
        if (start >= params.n) {
            break;
        }
        let element = start + lane;
        let in_range = element < params.n;
        var own_class = 0u;
        if (in_range) {
            own_class = element_class(element);
            atomicOr(&masks[own_class * MASK_WORDS + word], 1u << bit);
        }
        workgroupBarrier();

        if (in_range) {
            let row = own_class * MASK_WORDS;
            var rank = countOneBits(atomicLoad(&masks[row + word]) & ((1u << bit) - 1u));
            for (var w = 0u; w < word; w++) {
                rank += countOneBits(atomicLoad(&masks[row + w]));
            }
            index[base[own_class] + rank] = element;
        }
        workgroupBarrier();

        // advance each class's base past this sub-tile and clear its masks for the next
        for (var c = lane; c < CLASSES; c += WORKGROUP_SIZE) {
            let row = c * MASK_WORDS;
            var count = 0u;
            for (var w = 0u; w < MASK_WORDS; w++) {
                count += countOneBits(atomicLoad(&masks[row + w]));
                atomicStore(&masks[row + w], 0u);
            }
            base[c] += count;
        }
        workgroupBarrier();
    }
}
