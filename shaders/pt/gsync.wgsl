// Gupta use case 4, global synchronization: `phases` phases separated by global syncs. In
// phase s every item i computes from the previous phase's state:
//   next[i] = mads(prev[i] + prev[(i + shift) % n], fmas)
// so each phase reads values other workgroups wrote in the one before.
// - phase: nonPT (tier 0), one dispatch per phase, the host swaps the two buffers (PLAIN:
//   plain loads and stores).
// - phases_pt: tier 2, one persistent kernel, a global barrier between phases; state goes
//   through atomics because plain stores need not be visible to other workgroups.
// The result is in `a` for an even number of phases, else in `b`.
// CPU reference: pt::cases::cpu::gsync.
//! variants: PLAIN

#import grid
#import pt_discovery
#import pt_barrier
#import pt_work

struct Params {
    n: u32,
    fmas: u32,
    phases: u32,
    shift: u32,
    mul: u32,
    add: u32,
    pad0: u32,
    pad1: u32,
}

#ifdef PLAIN
@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> b: array<u32>;
#else
@group(0) @binding(0) var<storage, read_write> a: array<atomic<u32>>;
@group(0) @binding(1) var<storage, read_write> b: array<atomic<u32>>;
#endif
@group(0) @binding(2) var<uniform> params: Params;

fn load(from_b: bool, i: u32) -> u32 {
#ifdef PLAIN
    if (from_b) {
        return b[i];
    }
    return a[i];
#else
    if (from_b) {
        return atomicLoad(&b[i]);
    }
    return atomicLoad(&a[i]);
#endif
}

fn store(to_b: bool, i: u32, v: u32) {
#ifdef PLAIN
    if (to_b) {
        b[i] = v;
    } else {
        a[i] = v;
    }
#else
    if (to_b) {
        atomicStore(&b[i], v);
    } else {
        atomicStore(&a[i], v);
    }
#endif
}

fn step(i: u32, from_b: bool) {
    let j = (i + params.shift) % params.n;
    let x = load(from_b, i) + load(from_b, j);
    store(!from_b, i, pt_mads(x, params.fmas, params.mul, params.add));
}

@compute @workgroup_size(256)
fn phase(ids: Ids) {
    let i = global_index(ids, 256u);
    if (i < params.n) {
        step(i, false);
    }
}

@compute @workgroup_size(256)
fn phases_pt(ids: Ids) {
    let g = pt_discover(ids.local, workgroup_index(ids));
    if (g.count == 0u) {
        return;
    }
    let blocks = (params.n + 255u) / 256u;
    for (var s = 0u; s < params.phases; s++) {
        if (s > 0u && !pt_barrier(ids.local, g.id, g.count)) {
            return;
        }
        var blk = g.id;
        for (; blk < blocks; blk += g.count) {
            let i = blk * 256u + ids.local;
            if (i < params.n) {
                step(i, s % 2u == 1u);
            }
        }
        if (blk < blocks) {
            if (ids.local == 0u) {
                pt_abort(PT_REASON_LOOP_LIMIT, blk);
            }
            return;
        }
    }
    pt_finish(ids.local);
}
