// What the flow-shop bounds (flowshop/lb1.wgsl, flowshop/lb2.wgsl) share: the pool layout
// (uniform block and bindings 0-4, 9, 10; the table in src/kernels/flowshop/mod.rs, host
// KernelParams), a child's decoding and tails, and the bodies of the two thread mappings.
// The importing bound declares `const PROBE_SITES: u32` (site 0 is the thread-in-range test)
// and `fn bound_child(index: u32) -> u32`, the bound of child `index`.

#import grid
#import probe

const WG: u32 = 64u;
const MAX_MACHINES: u32 = 32u;
// Set in a child's job word when the child puts its job in front of the suffix.
const BACKWARD_CHILD: u32 = 0x80000000u;

struct Params {
    jobs: u32,
    machines: u32,
    pairs: u32,          // LB2's machine pairs; unused by LB1
    children: u32,
    parent_stride: u32,
    mask_words: u32,
    parents: u32,
    // LB2 stops at the first pair whose bound reaches this (the child is pruned); 0 = never
    prune_at: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> ptimes: array<u32>;
@group(0) @binding(2) var<storage, read> parents: array<u32>;
@group(0) @binding(3) var<storage, read> children: array<u32>;
@group(0) @binding(4) var<storage, read_write> bounds: array<u32>;
@group(0) @binding(9) var<storage, read> offsets: array<u32>;

#import flowshop_prefix

// Child `index`: its parent, its job, whether it puts the job in front of the parent's suffix
// (backward) or after its prefix, and where the parent's record starts.
struct Child {
    parent: u32,
    job: u32,
    backward: bool,
    base: u32,
}

fn child_at(index: u32) -> Child {
    let parent = children[2u * index];
    let word = children[2u * index + 1u];
    return Child(parent, word & ~BACKWARD_CHILD, word >= BACKWARD_CHILD, parent * params.parent_stride);
}

// Machines of the instance; the host refuses m > MAX_MACHINES (BoundData::check_gpu).
fn machine_count() -> u32 {
    return min(params.machines, MAX_MACHINES);
}

// The child's tails: a backward child's are its job put in front of the parent's suffix, a
// forward child keeps the parent's; both are computed and selected (no branch on the direction).
fn child_tails(child: Child) -> array<u32, MAX_MACHINES> {
    let n = params.jobs;
    let m = machine_count();
    var tails: array<u32, MAX_MACHINES>;
    var start = 0u;
    for (var k = m; k > 0u; k = k - 1u) {
        let tail = parents[child.base + params.machines + k - 1u];
        start = max(start, tail) + ptimes[(k - 1u) * n + child.job];
        tails[k - 1u] = select(tail, start, child.backward);
    }
    return tails;
}

// Entry body of the one-thread-per-child mapping.
fn bound_each_child(ids: Ids) {
    probe_begin(ids);
    let index = global_index(ids, WG);
    if (probe(0u, index < params.children)) {
        bounds[index] = bound_child(index);
    }
    probe_end();
}

// Entry body of the one-thread-per-parent mapping: a thread bounds its parent's children
// offsets[p] .. offsets[p+1] in turn; `loop_site` is the probe site of that loop.
fn bound_children_of_parent(ids: Ids, loop_site: u32) {
    probe_begin(ids);
    let parent = global_index(ids, WG);
    if (probe(0u, parent < params.parents)) {
        let end = offsets[parent + 1u];
        for (var c = offsets[parent]; probe(loop_site, c < end); c = c + 1u) {
            bounds[c] = bound_child(c);
        }
    }
    probe_end();
}
