// GPU regroup, dispatch 2 of 3: exclusive scan of the class-major histogram, in place.
//
// Sequence: classify_histogram.wgsl (tiles workgroups) -> scan.wgsl (ONE workgroup, grid
// (1, 1, 1)) -> scatter.wgsl (tiles workgroups). After the scan, histogram[c * tiles + t] is
// where tile t's class-c elements start in the index array.
//
// One workgroup of 256 threads loops over the whole array (reduce-then-scan), so no
// workgroup ever waits on another: thread k owns the contiguous block
// [k * B, (k + 1) * B) with B = ceil(histogram_len / 256); it sums its block, the 256 sums are
// scanned in workgroup memory, and each thread rescans its block from its exclusive prefix.
//
// Bindings (group 0):
//   0  uniform             params     RegroupParams { n, tiles, histogram_len, pad }
//   1  storage, read_write histogram  array<u32>, histogram_len entries (scanned in place)
// Totals must fit u32 (n < 2^32).

const SCAN_THREADS: u32 = 256u;

struct RegroupParams {
    n: u32,
    tiles: u32,
    histogram_len: u32,
    pad: u32,
}

@group(0) @binding(0) var<uniform> params: RegroupParams;
@group(0) @binding(1) var<storage, read_write> histogram: array<u32>;

var<workgroup> sums: array<u32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lane: u32) {
    let len = params.histogram_len;
    let block = len / SCAN_THREADS + select(0u, 1u, len % SCAN_THREADS != 0u);
    let begin = min(lane * block, len);
    let end = min(begin + block, len);

    // reduce
    var own = 0u;
    for (var i = begin; i < end; i++) {
        own += histogram[i];
    }
    sums[lane] = own;
    workgroupBarrier();

    // inclusive scan of the 256 block sums (Hillis-Steele)
    for (var offset = 1u; offset < SCAN_THREADS; offset <<= 1u) {
        var left = 0u;
        if (lane >= offset) {
            left = sums[lane - offset];
        }
        workgroupBarrier();
        sums[lane] += left;
        workgroupBarrier();
    }

    // rescan the block from its exclusive prefix
    var running = sums[lane] - own;
    for (var i = begin; i < end; i++) {
        let count = histogram[i];
        histogram[i] = running;
        running += count;
    }
}
