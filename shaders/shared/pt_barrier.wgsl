// Global barrier over the `count` participants of a persistent kernel: a single monotonic
// counter (arrive = atomicAdd; wait until counter >= (arrive / count + 1) * count). The host
// clears the counter before each launch (u32: count * barriers must stay below 2^32).
// The wait is bounded by pt_cfg.spin_cap polls; on timeout it aborts with
// PT_REASON_BARRIER, and any abort anywhere releases every waiter. Returns false (uniformly
// for the whole workgroup) when the kernel must stop. Call in uniform control flow.
// Data written before the barrier is visible after it only if it went through atomics.

#import pt_control

var<workgroup> pt_bar_ok: u32;

fn pt_barrier_leader(count: u32) -> u32 {
    let arrive = atomicAdd(&pt_ctl[PT_BARRIER], 1u);
    let goal = (arrive / count + 1u) * count;
    var polls = 0u;
    var passed = false;
    loop {
        if (atomicLoad(&pt_ctl[PT_BARRIER]) >= goal) {
            passed = true;
            break;
        }
        polls += 1u;
        if ((polls & 15u) == 0u && pt_aborted()) {
            return 0u;
        }
        if (polls >= pt_cfg.spin_cap) {
            pt_abort(PT_REASON_BARRIER, arrive);
            return 0u;
        }
    }
    if (!passed) {
        // the driver cut the loop short: never pass a barrier that did not complete
        pt_abort(PT_REASON_LOOP_LIMIT, arrive);
        return 0u;
    }
    pt_note_polls(polls);
    return 1u;
}

fn pt_barrier(local: u32, count: u32) -> bool {
    storageBarrier();
    workgroupBarrier();
    if (local == 0u) {
        pt_bar_ok = pt_barrier_leader(count);
    }
    return workgroupUniformLoad(&pt_bar_ok) != 0u;
}
