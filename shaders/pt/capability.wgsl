// Capability check and barrier benchmark for persistent threads (host: simtlab::pt::capability
// and simtlab::pt::barrier).
// - discover: occupancy discovery only; participants count themselves.
// - barrier: `iters` global barriers. Before barrier k each participant stores a message
//   k * count + id + 1 (atomicStore) into slot (k % 2) * count + id; after it, it reads its
//   neighbour's message and counts stale or wrong values. This is the cross-workgroup
//   message-passing check: data goes through atomics only.
//! variants: PT_BARRIER_NO_FENCE PT_BARRIER_TREE

#import grid
#import pt_discovery
#import pt_barrier

struct Params {
    iters: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

// [0] participants seen, [1] errors (stale messages), [2] barriers completed by participant 0
@group(0) @binding(0) var<storage, read_write> result: array<atomic<u32>>;
@group(0) @binding(1) var<storage, read_write> messages: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(256)
fn discover(ids: Ids) {
    let g = pt_discover(ids.local, workgroup_index(ids));
    if (g.count == 0u) {
        return;
    }
    if (ids.local == 0u) {
        atomicAdd(&result[0], 1u);
    }
    pt_finish(ids.local);
}

@compute @workgroup_size(256)
fn barrier(ids: Ids) {
    let g = pt_discover(ids.local, workgroup_index(ids));
    if (g.count == 0u) {
        return;
    }
    if (ids.local == 0u) {
        atomicAdd(&result[0], 1u);
    }
    let next = (g.id + 1u) % g.count;
    var done = 0u;
    for (var k = 0u; k < params.iters; k++) {
        if (ids.local == 0u) {
            atomicStore(&messages[(k % 2u) * g.count + g.id], k * g.count + g.id + 1u);
        }
        if (!pt_barrier(ids.local, g.id, g.count)) {
            break;
        }
        if (ids.local == 0u) {
            let m = atomicLoad(&messages[(k % 2u) * g.count + next]);
            if (m != k * g.count + next + 1u) {
                atomicAdd(&result[1], 1u);
            }
        }
        done += 1u;
    }
    if (ids.local == 0u && g.id == 0u) {
        atomicStore(&result[2], done);
    }
    if (ids.local == 0u && done < params.iters && !pt_aborted()) {
        pt_abort(PT_REASON_LOOP_LIMIT, done);
    }
    pt_finish(ids.local);
}

// The relaunch baseline of the barrier benchmark: one empty dispatch per "sync".
@compute @workgroup_size(256)
fn relaunch(ids: Ids) {
    if (ids.local == 0u && workgroup_index(ids) == 0u) {
        atomicAdd(&result[2], 1u);
    }
}
