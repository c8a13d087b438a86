// Persistent threads for a user's own kernel (host: simtlab::pt::user). The host puts this
// module where the kernel has a `//#use simtlab_pt` line, or after its text, with its three
// bindings moved to a group the kernel does not use. Every wait is bounded and leaves through
// the abort word, which the host turns into an error.
//
//   let g = pt_join(local_index, workgroup_id, num_workgroups);  // first, in uniform control flow
//   if (g.count == 0u) { return; }   // this workgroup takes no part (late, or stopped)
//   g.id                             // this workgroup's participant index, 0..g.count
//   if (!pt_global_barrier(local_index)) { return; }  // all participants; false: stop
//   let first = pt_claim(n);         // the first of n consecutive item indices; never waits
//   pt_push(v); pt_pop()             // ring queue (PT_EMPTY when nothing can be taken now)
//   pt_should_stop()                 // true once any workgroup aborted
//
//! variants: PT_COUNT_POLLS PT_BARRIER_TREE
// Only data passed through atomics is sure to cross a global barrier between workgroups.

#import pt_discovery
#import pt_barrier
#import pt_queue

// What pt_pop returns when no item can be taken now (or the kernel stops).
const PT_EMPTY: u32 = 0xFFFFFFFFu;

// Joins the persistent launch. Call first, in uniform control flow, from every invocation.
// Returns count 0 when this workgroup must leave at once.
fn pt_join(local_index: u32, workgroup_id: vec3<u32>, num_workgroups: vec3<u32>) -> PtGroup {
    let linear = workgroup_id.x + num_workgroups.x * (workgroup_id.y + num_workgroups.y * workgroup_id.z);
    return pt_discover(local_index, linear);
}

// Waits until every participant arrived. Call in uniform control flow after pt_join; false
// (for the whole workgroup) when the kernel must stop (a wait ran out somewhere).
fn pt_global_barrier(local_index: u32) -> bool {
    // pt_join left this workgroup's participant index and count in workgroup memory
    return pt_barrier(local_index, pt_disc_id, pt_disc_count);
}

// True once any workgroup aborted: leave your loops.
fn pt_should_stop() -> bool {
    return pt_aborted();
}

// Claims `count` consecutive item indices from the queue's shared head; returns the first
// (compare it with your item count). Never waits.
fn pt_claim(count: u32) -> u32 {
    return ptq_claim(count);
}

// Pushes v (below PT_EMPTY) onto the ring queue; false when the ring was full (the kernel
// stops and the host reports the overflow).
fn pt_push(v: u32) -> bool {
    return ptq_push(v);
}

// Pops an item from the ring queue, or PT_EMPTY when none can be taken now.
fn pt_pop() -> u32 {
    return ptq_pop();
}
