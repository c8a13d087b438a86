// Flow-shop heads by walking the prefix, as Chakroun et al.'s kernel computes them: one loop
// step per job already fixed at the start, so the trip count is the node's depth and differs
// between nodes of different tree levels (the divergence that breadth-first pools avoid).
// The importing shader declares `params` (jobs, machines), `ptimes`, `parents`, `probe`,
// MAX_MACHINES and, under WALK_PREFIX, binding 10:
//   prefixes  P*(n+1)  per parent [length, its prefix jobs in order, unused …]

#ifdef WALK_PREFIX
@group(0) @binding(10) var<storage, read> prefixes: array<u32>;

// Heads f[k] of `parent` (record at `base`): the completion of its prefix on each machine;
// an empty prefix keeps the record's heads (the bounds' minimum start times). `site` is the
// probe site of the walk's loop condition.
fn prefix_heads(parent: u32, base: u32, site: u32) -> array<u32, MAX_MACHINES> {
    let n = params.jobs;
    let m = min(params.machines, MAX_MACHINES);
    let at = parent * (n + 1u);
    // The host never sends more than n jobs; min() keeps the loop bounded regardless.
    let depth = min(prefixes[at], n);
    var f: array<u32, MAX_MACHINES>;
    for (var k = 0u; k < m; k = k + 1u) {
        f[k] = select(0u, parents[base + k], depth == 0u);
    }
    for (var i = 0u; probe(site, i < depth); i = i + 1u) {
        let j = prefixes[at + 1u + i];
        var finish = 0u;
        for (var k = 0u; k < m; k = k + 1u) {
            finish = max(finish, f[k]) + ptimes[k * n + j];
            f[k] = finish;
        }
    }
    return f;
}
#endif
