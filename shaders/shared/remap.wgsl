// Reference redirection (thread-data remapping): which element this thread works on.
//
// Contract with the importing kernel:
// - Have the host define REMAP (a preprocessor define) to read through an index array bound at
//   @group(0) @binding(8) (simtlab::remap::REMAP_BINDING; declared here, so the kernel leaves
//   that binding free). remap_index[i] is the element that thread i handles (built by the host
//   redirect index, a LAM plan's index, or the GPU regroup in shaders/remap/).
// - Without REMAP, no binding is needed and remapped_id(gid) == gid, so one kernel source
//   serves both runs.
// - Call `let id = remapped_id(gid);` once at the top and use `id` wherever the kernel used
//   gid: data indices, and arithmetic on the thread id too (the IDArray rule), so each element
//   computes exactly what its original thread would have.
// - Threads past the end of remap_index keep their own id; the kernel's usual `gid < n` guard
//   still applies.

#ifdef REMAP
@group(0) @binding(8) var<storage, read> remap_index: array<u32>;

fn remapped_id(gid: u32) -> u32 {
    if (gid < arrayLength(&remap_index)) {
        return remap_index[gid];
    }
    return gid;
}
#else
fn remapped_id(gid: u32) -> u32 {
    return gid;
}
#endif
