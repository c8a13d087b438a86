// Exclusive prefix sum of u32 counts in three entry points:
// - scan_blocks: each workgroup scans its WG values in place and writes its total to sums[wg];
// - scan_sums: one workgroup scans sums[0..m) in place (each thread a chunk of m / WG values)
//   and writes the grand total to total[0];
// - add_offsets: adds sums[wg] to the values of workgroup wg.
// CPU reference: kernels::mcubes::cpu::scan.
//! variants: (none)

#import grid

const WG: u32 = 256u;

struct Params {
    n: u32,
    // number of block sums
    m: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read_write> total: array<u32>;

var<workgroup> tile: array<u32, WG>;

// Exclusive scan of tile[] in place (Hillis-Steele on an inclusive copy); returns the total.
fn scan_tile(lid: u32, value: u32) -> u32 {
    tile[lid] = value;
    workgroupBarrier();
    for (var d = 1u; d < WG; d *= 2u) {
        var add = 0u;
        if (lid >= d) {
            add = tile[lid - d];
        }
        workgroupBarrier();
        tile[lid] += add;
        workgroupBarrier();
    }
    let all = tile[WG - 1u];
    let exclusive = tile[lid] - value;
    workgroupBarrier();
    tile[lid] = exclusive;
    workgroupBarrier();
    return all;
}

@compute @workgroup_size(WG)
fn scan_blocks(ids: Ids) {
    let i = global_index(ids, WG);
    var value = 0u;
    if (i < params.n) {
        value = data[i];
    }
    let all = scan_tile(ids.local, value);
    if (i < params.n) {
        data[i] = tile[ids.local];
    }
    let block = workgroup_index(ids);
    if (ids.local == 0u && block < params.m) {
        sums[block] = all;
    }
}

@compute @workgroup_size(WG)
fn scan_sums(@builtin(local_invocation_index) lid: u32) {
    let m = params.m;
    let chunk = (m + WG - 1u) / WG;
    let begin = min(lid * chunk, m);
    let end = min(begin + chunk, m);
    var own = 0u;
    for (var k = begin; k < end; k++) {
        own += sums[k];
    }
    let all = scan_tile(lid, own);
    var running = tile[lid];
    for (var k = begin; k < end; k++) {
        let v = sums[k];
        sums[k] = running;
        running += v;
    }
    if (lid == 0u) {
        total[0] = all;
    }
}

@compute @workgroup_size(WG)
fn add_offsets(ids: Ids) {
    let i = global_index(ids, WG);
    if (i < params.n) {
        data[i] += sums[workgroup_index(ids)];
    }
}
