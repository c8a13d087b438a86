// GPU regroup, dispatches 2-4 of 5: exclusive scan of the class-major histogram, in place,
// by reduce-then-scan over many workgroups. No workgroup ever waits on another: each pass
// is its own dispatch and the dispatches are ordered.
//
// Sequence: classify_histogram.wgsl (tiles workgroups) -> reduce_blocks (blocks workgroups,
// RegroupDispatch::scan_grid) -> scan_block_sums (ONE workgroup, grid (1, 1, 1)) ->
// scan_blocks (blocks workgroups) -> scatter.wgsl (tiles workgroups).
//
// The histogram is cut into `blocks` = ceil(histogram_len / BLOCK) contiguous blocks of
// BLOCK = 256 × ITEMS entries; in a block, thread k owns the ITEMS entries starting at
// k * ITEMS.
//   reduce_blocks    workgroup b: block_sums[b] = sum of block b
//   scan_block_sums  one workgroup: block_sums scanned in place (exclusive), 256 at a time
//   scan_blocks      workgroup b: block b scanned in place (exclusive) from block_sums[b]
// After the scan, histogram[c * tiles + t] is where tile t's class-c elements start in the
// index array (host geometry: simtlab::remap::regroup_dispatch, SCAN_BLOCK = BLOCK).
//
// Bindings (group 0):
//   0  uniform             params      RegroupParams { n, tiles, histogram_len, blocks, lo, width, pad }
//   1  storage, read_write histogram   array<u32>, histogram_len entries (scanned in place)
//   2  storage, read_write block_sums  array<u32>, blocks entries
// Workgroup index = wid.x + wid.y * nwg.x (shared/grid.wgsl). Totals must fit u32 (n < 2^32).

#import grid
#import regroup

const WORKGROUP_SIZE: u32 = 256u;
const ITEMS: u32 = 4u;
const BLOCK: u32 = 1024u; // WORKGROUP_SIZE * ITEMS

@group(0) @binding(1) var<storage, read_write> histogram: array<u32>;
@group(0) @binding(2) var<storage, read_write> block_sums: array<u32>;

var<workgroup> sums: array<u32, 256>;

// Inclusive scan of sums[0..256] (Hillis-Steele); every thread must call it.
fn scan_sums(lane: u32) {
    workgroupBarrier();
    for (var offset = 1u; offset < WORKGROUP_SIZE; offset <<= 1u) {
        var left = 0u;
        if (lane >= offset) {
            left = sums[lane - offset];
        }
        workgroupBarrier();
        sums[lane] += left;
        workgroupBarrier();
    }
}

// Sum of the thread's ITEMS entries of block b.
fn own_sum(b: u32, lane: u32) -> u32 {
    let begin = b * BLOCK + lane * ITEMS;
    let end = min(begin + ITEMS, params.histogram_len);
    var own = 0u;
    for (var i = begin; i < end; i++) {
        own += histogram[i];
    }
    return own;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn reduce_blocks(ids: Ids) {
    // uniform (provably): the early exit leaves the scan's barriers legal
    let b = uniform_workgroup_index(ids);
    let lane = ids.local;
    if (b >= params.blocks) {
        return;
    }
    sums[lane] = own_sum(b, lane);
    scan_sums(lane);
    if (lane == 0u) {
        block_sums[b] = sums[WORKGROUP_SIZE - 1u];
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn scan_block_sums(ids: Ids) {
    let lane = ids.local;
    var carry = 0u;
    for (var chunk = 0u; chunk < params.blocks; chunk += WORKGROUP_SIZE) {
        let i = chunk + lane;
        var own = 0u;
        if (i < params.blocks) {
            own = block_sums[i];
        }
        sums[lane] = own;
        scan_sums(lane);
        if (i < params.blocks) {
            block_sums[i] = carry + sums[lane] - own;
        }
        carry += sums[WORKGROUP_SIZE - 1u];
        // everyone has read sums before the next chunk overwrites it
        workgroupBarrier();
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn scan_blocks(ids: Ids) {
    // uniform (provably): the early exit leaves the scan's barriers legal
    let b = uniform_workgroup_index(ids);
    let lane = ids.local;
    if (b >= params.blocks) {
        return;
    }
    let own = own_sum(b, lane);
    sums[lane] = own;
    scan_sums(lane);
    var running = block_sums[b] + sums[lane] - own;
    let begin = b * BLOCK + lane * ITEMS;
    let end = min(begin + ITEMS, params.histogram_len);
    for (var i = begin; i < end; i++) {
        let count = histogram[i];
        histogram[i] = running;
        running += count;
    }
}
