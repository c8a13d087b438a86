// Gupta use case 1, CPU-GPU synchronization: a producer emits a variable number of items (the
// inputs below a threshold), a consumer processes them.
// - produce + consume: nonPT; the host reads the count back and sizes the consumer (tier 0),
//   or `args` writes indirect dispatch arguments from the count (tier 0, indirect).
// - produce + consume_pt: tier 1, a persistent consumer of fixed size claims chunks of 256
//   items with atomicAdd until the count (written by the producer) is reached; no readback.
// - fused: tier 2, one persistent kernel: produce, global barrier, consume.
// Work per item: `fmas` multiply-adds (mode 0, compute-intensive) or multiply-adds each with a
// strided load (mode 1, compute + memory). CPU reference: pt::cases::cpu::sync.
//! variants: (none)

#import grid
#import pt_discovery
#import pt_barrier
#import pt_work

struct Params {
    n: u32,
    threshold: u32,
    fmas: u32,
    mode: u32,
    mul: u32,
    add: u32,
    stride: u32,
    data_mask: u32,
}

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> items: array<atomic<u32>>;
// [0] items emitted, [1] consumer claim head
@group(0) @binding(2) var<storage, read_write> hdr: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> args: array<u32>;
@group(0) @binding(4) var<storage, read_write> results: array<u32>;
@group(0) @binding(5) var<storage, read> data: array<u32>;
@group(0) @binding(6) var<uniform> params: Params;

var<workgroup> wg_count: atomic<u32>;
var<workgroup> wg_base: u32;
var<workgroup> wg_claim: u32;

fn produce_block(block: u32, local: u32) {
    let i = block * 256u + local;
    var emit = false;
    if (i < params.n) {
        emit = input[i] < params.threshold;
    }
    var off = 0u;
    if (emit) {
        off = atomicAdd(&wg_count, 1u);
    }
    workgroupBarrier();
    if (local == 0u) {
        let c = atomicLoad(&wg_count);
        var base = 0u;
        if (c > 0u) {
            base = atomicAdd(&hdr[0], c);
        }
        wg_base = base;
        atomicStore(&wg_count, 0u);
    }
    let base = workgroupUniformLoad(&wg_base);
    if (emit) {
        atomicStore(&items[base + off], i);
    }
}

fn work(i: u32) -> u32 {
    var x = input[i];
    if (params.mode == 0u) {
        return pt_mads(x, params.fmas, params.mul, params.add);
    }
    for (var k = 0u; k < params.fmas; k++) {
        x = x * params.mul + data[(i + k * params.stride) & params.data_mask];
    }
    return x;
}

fn consume_item(j: u32) {
    let src = atomicLoad(&items[j]);
    results[src] = work(src);
}

@compute @workgroup_size(256)
fn produce(ids: Ids) {
    produce_block(workgroup_index(ids), ids.local);
}

@compute @workgroup_size(256)
fn consume(ids: Ids) {
    let j = global_index(ids, 256u);
    if (j < atomicLoad(&hdr[0])) {
        consume_item(j);
    }
}

@compute @workgroup_size(1)
fn indirect_args() {
    let groups = (atomicLoad(&hdr[0]) + 255u) / 256u;
    let x = min(groups, 65535u);
    args[0] = x;
    args[1] = select(1u, (groups + x - 1u) / max(x, 1u), groups > 0u);
    args[2] = 1u;
}

// Claims chunks of 256 items until `count`; every workgroup leaves once the head passes it.
fn consume_claimed(local: u32) {
    if (local == 0u) {
        wg_claim = atomicLoad(&hdr[0]);
    }
    let count = workgroupUniformLoad(&wg_claim);
    var done = false;
    for (var guard = 0u; guard <= count / 256u + 1u; guard++) {
        if (local == 0u) {
            wg_claim = atomicAdd(&hdr[1], 256u);
        }
        let base = workgroupUniformLoad(&wg_claim);
        if (base >= count) {
            done = true;
            break;
        }
        if (base + local < count) {
            consume_item(base + local);
        }
    }
    if (!done && local == 0u) {
        pt_abort(PT_REASON_LOOP_LIMIT, count);
    }
}

@compute @workgroup_size(256)
fn consume_pt(ids: Ids) {
    consume_claimed(ids.local);
}

@compute @workgroup_size(256)
fn fused(ids: Ids) {
    let g = pt_discover(ids.local, workgroup_index(ids));
    if (g.count == 0u) {
        return;
    }
    let blocks = (params.n + 255u) / 256u;
    var b = g.id;
    for (; b < blocks; b += g.count) {
        produce_block(b, ids.local);
    }
    if (b < blocks) {
        if (ids.local == 0u) {
            pt_abort(PT_REASON_LOOP_LIMIT, b);
        }
        return;
    }
    if (!pt_barrier(ids.local, g.id, g.count)) {
        return;
    }
    consume_claimed(ids.local);
    pt_finish(ids.local);
}
