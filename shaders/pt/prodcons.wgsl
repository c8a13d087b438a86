// Gupta use case 3, producer-consumer locality.
// Reduction (wrapping u32 sum, exact in any order):
// - reduce_block: nonPT, one workgroup reduces 256 values; the host relaunches it until one
//   value is left (ceil(log256 n) kernels).
// - reduce_pt: persistent workgroups reduce a static partition, store one partial each
//   (atomicStore); tier 2 then meets at a global barrier and participant 0 sums the partials;
//   tier 1 (no waiting) leaves the partials to `reduce_final`, a second dispatch.
// Two-stage synthetic workload: every item runs `fmas` multiply-adds (stage 1); the items
// selected by `pass` (out of every 256) run another `fmas` (stage 2) and are stored.
// - stage_single: nonPT, one kernel, the stage-1 value stays in a register.
// - stage_produce + stage_args + stage_consume: nonPT, compacted (index, value) pairs through
//   DRAM, consumer sized by indirect dispatch.
// - stage_pt: tier 1, persistent workgroups, stage-1 results go to a workgroup-memory queue
//   that the whole workgroup drains once it holds 256 items.
// CPU reference: pt::cases::cpu::{reduce, two_stage}.
//! variants: (none)

#import grid
#import pt_discovery
#import pt_barrier
#import pt_work

struct Params {
    n: u32,
    fmas: u32,
    pass_per_256: u32,
    mul: u32,
    add: u32,
    // reduce_pt: 1 = finish in-kernel after a global barrier (tier 2)
    final_in_kernel: u32,
    // reduce_final: partials to sum
    parts: u32,
    pad: u32,
}

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<storage, read_write> partials: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> pairs: array<u32>;
@group(0) @binding(4) var<storage, read_write> hdr: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> args: array<u32>;
@group(0) @binding(6) var<uniform> params: Params;

var<workgroup> wg_word: u32;

@compute @workgroup_size(256)
fn reduce_block(ids: Ids) {
    let w = workgroup_index(ids);
    let i = w * 256u + ids.local;
    var x = 0u;
    if (i < params.n) {
        x = input[i];
    }
    let s = pt_workgroup_sum(ids.local, x);
    if (ids.local == 0u && w * 256u < params.n) {
        out[w] = s;
    }
}

@compute @workgroup_size(256)
fn reduce_pt(ids: Ids) {
    let g = pt_discover(ids.local, workgroup_index(ids));
    if (g.count == 0u) {
        return;
    }
    var x = 0u;
    let step = g.count * 256u;
    var i = g.id * 256u + ids.local;
    for (; i < params.n; i += step) {
        x += input[i];
    }
    if (i < params.n) {
        pt_abort(PT_REASON_LOOP_LIMIT, i);
    }
    let s = pt_workgroup_sum(ids.local, x);
    if (ids.local == 0u) {
        atomicStore(&partials[g.id], s);
    }
    if (params.final_in_kernel != 0u) {
        if (!pt_barrier(ids.local, g.id, g.count)) {
            return;
        }
        if (g.id == 0u) {
            sum_partials(ids.local, g.count);
        }
    }
    pt_finish(ids.local);
}

@compute @workgroup_size(256)
fn reduce_final(ids: Ids) {
    sum_partials(ids.local, params.parts);
}

// One workgroup sums the first `parts` partials into out[0].
fn sum_partials(local: u32, parts: u32) {
    var y = 0u;
    for (var p = local; p < parts; p += 256u) {
        y += atomicLoad(&partials[p]);
    }
    let total = pt_workgroup_sum(local, y);
    if (local == 0u) {
        out[0] = total;
    }
}

fn passes(i: u32) -> bool {
    return (((i & 255u) * 167u + 13u) & 255u) < params.pass_per_256;
}

fn stage1(i: u32) -> u32 {
    return pt_mads(input[i], params.fmas, params.mul, params.add);
}

fn stage2(x: u32) -> u32 {
    return pt_mads(x + 1u, params.fmas, params.mul, params.add);
}

@compute @workgroup_size(256)
fn stage_single(ids: Ids) {
    let i = global_index(ids, 256u);
    if (i < params.n) {
        let x = stage1(i);
        if (passes(i)) {
            out[i] = stage2(x);
        }
    }
}

var<workgroup> wg_count: atomic<u32>;

@compute @workgroup_size(256)
fn stage_produce(ids: Ids) {
    let i = global_index(ids, 256u);
    var emit = false;
    var x = 0u;
    if (i < params.n) {
        x = stage1(i);
        emit = passes(i);
    }
    var off = 0u;
    if (emit) {
        off = atomicAdd(&wg_count, 1u);
    }
    workgroupBarrier();
    if (ids.local == 0u) {
        let c = atomicLoad(&wg_count);
        var base = 0u;
        if (c > 0u) {
            base = atomicAdd(&hdr[0], c);
        }
        wg_word = base;
    }
    let base = workgroupUniformLoad(&wg_word);
    if (emit) {
        pairs[2u * (base + off)] = i;
        pairs[2u * (base + off) + 1u] = x;
    }
}

@compute @workgroup_size(1)
fn stage_args() {
    let groups = (atomicLoad(&hdr[0]) + 255u) / 256u;
    let x = min(groups, 65535u);
    args[0] = x;
    args[1] = select(1u, (groups + x - 1u) / max(x, 1u), groups > 0u);
    args[2] = 1u;
}

@compute @workgroup_size(256)
fn stage_consume(ids: Ids) {
    let j = global_index(ids, 256u);
    if (j < atomicLoad(&hdr[0])) {
        out[pairs[2u * j]] = stage2(pairs[2u * j + 1u]);
    }
}

var<workgroup> q_index: array<u32, 512>;
var<workgroup> q_value: array<u32, 512>;
var<workgroup> q_len: atomic<u32>;

fn drain(local: u32, len: u32) {
    for (var e = local; e < len; e += 256u) {
        out[q_index[e]] = stage2(q_value[e]);
    }
}

@compute @workgroup_size(256)
fn stage_pt(ids: Ids) {
    let g = pt_discover(ids.local, workgroup_index(ids));
    if (g.count == 0u) {
        return;
    }
    let blocks = (params.n + 255u) / 256u;
    var b = g.id;
    for (; b < blocks; b += g.count) {
        let i = b * 256u + ids.local;
        if (i < params.n) {
            let x = stage1(i);
            if (passes(i)) {
                let p = atomicAdd(&q_len, 1u);
                q_index[p] = i;
                q_value[p] = x;
            }
        }
        workgroupBarrier();
        if (ids.local == 0u) {
            wg_word = atomicLoad(&q_len);
        }
        let len = workgroupUniformLoad(&wg_word);
        if (len >= 256u) {
            drain(ids.local, len);
            workgroupBarrier();
            if (ids.local == 0u) {
                atomicStore(&q_len, 0u);
            }
            workgroupBarrier();
        }
    }
    workgroupBarrier();
    if (ids.local == 0u) {
        wg_word = atomicLoad(&q_len);
    }
    drain(ids.local, workgroupUniformLoad(&wg_word));
    if (b < blocks && ids.local == 0u) {
        pt_abort(PT_REASON_LOOP_LIMIT, b);
    }
    pt_finish(ids.local);
}
