// Occupancy discovery (Sorensen et al., OOPSLA 2016): one atomicAdd per workgroup on a ticket
// word with a "closed" bit. The first arrival (ticket 0) keeps the poll open until `grace`
// polls pass without a new arrival, then closes it; the workgroups that got a ticket before
// closing are co-resident and become participants 0..count. Later arrivals leave at once.
// Call in uniform control flow from every invocation; returns count 0 when this workgroup
// must leave (late, or aborted).

#import pt_control

struct PtGroup {
    id: u32,
    count: u32,
}

var<workgroup> pt_disc_id: u32;
var<workgroup> pt_disc_count: u32;

fn pt_discover_leader(linear: u32) -> PtGroup {
    if ((pt_cfg.flags & PT_FLAG_ALL_PARTICIPATE) != 0u) {
        if (pt_aborted()) {
            return PtGroup(0u, 0u);
        }
        return PtGroup(linear, pt_cfg.launched);
    }
    let t = atomicAdd(&pt_ctl[PT_TICKET], 1u);
    if ((t & PT_CLOSED) != 0u) {
        atomicAdd(&pt_ctl[PT_LATE], 1u);
        return PtGroup(0u, 0u);
    }
    if (t == 0u) {
        var seen = 1u;
        var quiet = 0u;
        var polls = 0u;
        loop {
            if (quiet >= pt_cfg.grace || polls >= pt_cfg.spin_cap) {
                break;
            }
            let now = atomicLoad(&pt_ctl[PT_TICKET]);
            if (now != seen) {
                seen = now;
                quiet = 0u;
            } else {
                quiet += 1u;
            }
            polls += 1u;
        }
        let count = atomicOr(&pt_ctl[PT_TICKET], PT_CLOSED) & ~PT_CLOSED;
        atomicStore(&pt_ctl[PT_COUNT], count);
        return PtGroup(0u, count);
    }
    var polls = 0u;
    loop {
        let c = atomicLoad(&pt_ctl[PT_COUNT]);
        if (c != 0u) {
            return PtGroup(t, c);
        }
        polls += 1u;
        if (polls >= pt_cfg.spin_cap) {
            pt_abort(PT_REASON_DISCOVERY, t);
            return PtGroup(0u, 0u);
        }
        if ((polls & 15u) == 0u && pt_aborted()) {
            return PtGroup(0u, 0u);
        }
    }
    // reached only when the driver cut the loop short
    pt_abort(PT_REASON_LOOP_LIMIT, t);
    return PtGroup(0u, 0u);
}

// `linear` is this workgroup's linear index in the dispatch (workgroup_index(ids)).
fn pt_discover(local: u32, linear: u32) -> PtGroup {
    if (local == 0u) {
        let g = pt_discover_leader(linear);
        pt_disc_id = g.id;
        pt_disc_count = g.count;
    }
    let id = workgroupUniformLoad(&pt_disc_id);
    let count = workgroupUniformLoad(&pt_disc_count);
    return PtGroup(id, count);
}

// Marks this participant done (for the host's status decoding).
fn pt_finish(local: u32) {
    if (local == 0u) {
        atomicAdd(&pt_ctl[PT_DONE], 1u);
    }
}
