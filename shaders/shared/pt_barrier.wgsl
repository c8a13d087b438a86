// Global barrier over the `count` participants of a persistent kernel: a monotonic counter
// (arrive = atomicAdd; wait until counter >= (arrive / count + 1) * count). The host clears the
// counters before each launch (u32: count * barriers must stay below 2^32).
// PT_BARRIER_TREE: participants arrive on sub-counters of at most PT_FANIN (each on its own
// 128-byte line); the last arrival of each sub-counter's episode adds 1 to the top counter, and
// every participant waits for the top counter to reach (episode + 1) * sub-counters. Fewer
// atomics land on one address (at 1056 participants: 33 + 32 instead of 1056).
// The wait is bounded by pt_cfg.spin_cap polls; on timeout it aborts with
// PT_REASON_BARRIER, and any abort anywhere releases every waiter. Returns false (uniformly
// for the whole workgroup) when the kernel must stop. Call in uniform control flow.
// Data written before the barrier is visible after it only if it went through atomics.
// PT_BARRIER_NO_FENCE drops the device-scope fence of the arrival (the kernel declares it).

#import pt_control

var<workgroup> pt_bar_ok: u32;

fn pt_barrier_leader(id: u32, count: u32) -> u32 {
#ifdef PT_BARRIER_TREE
    let fanin = max(PT_FANIN, (count + PT_SUBS - 1u) / PT_SUBS);
    let subs = (count + fanin - 1u) / fanin;
    let sub = id / fanin;
    let size = min(fanin, count - sub * fanin);
    let arrive = atomicAdd(&pt_ctl[PT_SUB + sub * PT_SUB_STRIDE], 1u);
    if (arrive % size == size - 1u) {
        atomicAdd(&pt_ctl[PT_BARRIER], 1u);
    }
    let goal = (arrive / size + 1u) * subs;
#else
    let arrive = atomicAdd(&pt_ctl[PT_BARRIER], 1u);
    let goal = (arrive / count + 1u) * count;
#endif
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

fn pt_barrier(local: u32, id: u32, count: u32) -> bool {
#ifdef PT_BARRIER_NO_FENCE
    // the workgroup arrives together, without a device-scope fence: only data passed through
    // atomics is meant to cross the barrier anyway (bench pt --case barrier --fence none)
    workgroupBarrier();
#else
    // a control barrier with a device-scope fence on storage (orders the workgroup's writes
    // before the arrival)
    storageBarrier();
#endif
    if (local == 0u) {
        pt_bar_ok = pt_barrier_leader(id, count);
    }
    return workgroupUniformLoad(&pt_bar_ok) != 0u;
}
