// Invocation ids for kernels launched on a 1D or 2D grid of workgroups (Gpu::grid splits
// dispatches wider than max_compute_workgroups_per_dimension into rows). With PROBE the
// subgroup ids the divergence probe needs ride along.

struct Ids {
    @builtin(workgroup_id) workgroup: vec3<u32>,
    @builtin(num_workgroups) workgroups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
#ifdef PROBE
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_id) subgroup: u32,
    @builtin(num_subgroups) subgroups: u32,
#endif
}

fn workgroup_index(ids: Ids) -> u32 {
    return ids.workgroup.x + ids.workgroup.y * ids.workgroups.x;
}

fn global_index(ids: Ids, workgroup_size: u32) -> u32 {
    return workgroup_index(ids) * workgroup_size + ids.local;
}

var<workgroup> grid_uniform_index: u32;

// workgroup_index, as a value WGSL's uniformity analysis accepts as uniform: it sees `ids` as a
// whole, and `ids.local` differs per invocation. For a workgroup's early exit ahead of its
// barriers. One workgroupUniformLoad (a barrier): call it where the whole workgroup does.
fn uniform_workgroup_index(ids: Ids) -> u32 {
    if (ids.local == 0u) {
        grid_uniform_index = workgroup_index(ids);
    }
    return workgroupUniformLoad(&grid_uniform_index);
}
