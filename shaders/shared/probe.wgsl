// Divergence probe. A kernel defines `const PROBE_SITES: u32`, calls `probe_begin(ids)` first,
// wraps each branch or loop condition as `probe(site, cond)`, and calls `probe_end()` at its
// end in uniform control flow (every invocation, in range or not, must reach it).
//
// With PROBE (needs subgroups) each evaluation is counted per subgroup with ballots: one
// evaluation, divergent if the active lanes disagree, a taken step if any lane took the path,
// and the number of lanes that took it. Counts stay in private memory of the subgroup's
// lowest active lane, are summed across the subgroup at the end, and lane 0 writes the
// subgroup's own record (4 words per site): no atomics, no contention.
// Without PROBE everything compiles to nothing.

#import grid

#ifdef PROBE
@group(0) @binding(7) var<storage, read_write> probe_records: array<u32>;

var<private> probe_counts: array<vec4<u32>, PROBE_SITES>;
var<private> probe_lane: u32;
var<private> probe_subgroup: u32;
var<private> probe_subgroups: u32;

fn probe_begin(ids: Ids) {
    probe_lane = ids.lane;
    probe_subgroup = workgroup_index(ids) * ids.subgroups + ids.subgroup;
    probe_subgroups = ids.subgroups;
}

// For a kernel's second entry point: its records follow those of a first one that ran
// `workgroups` workgroups (of the same size).
fn probe_records_after(workgroups: u32) {
    probe_subgroup += workgroups * probe_subgroups;
}

fn probe_lanes(mask: vec4<u32>) -> u32 {
    let c = countOneBits(mask);
    return c.x + c.y + c.z + c.w;
}

fn probe(site: u32, cond: bool) -> bool {
    let active_lanes = probe_lanes(subgroupBallot(true));
    let taken = probe_lanes(subgroupBallot(cond));
    if (subgroupBroadcastFirst(probe_lane) == probe_lane) {
        let divergent = taken != 0u && taken != active_lanes;
        probe_counts[site] += vec4<u32>(1u, select(0u, 1u, divergent), select(0u, 1u, taken != 0u), taken);
    }
    return cond;
}

fn probe_end() {
    for (var s = 0u; s < PROBE_SITES; s++) {
        let total = subgroupAdd(probe_counts[s]);
        if (probe_lane == 0u) {
            let base = (probe_subgroup * PROBE_SITES + s) * 4u;
            probe_records[base] = total.x;
            probe_records[base + 1u] = total.y;
            probe_records[base + 2u] = total.z;
            probe_records[base + 3u] = total.w;
        }
    }
}
#else
fn probe_begin(ids: Ids) {}

fn probe_records_after(workgroups: u32) {}

fn probe(site: u32, cond: bool) -> bool {
    return cond;
}

fn probe_end() {}
#endif
