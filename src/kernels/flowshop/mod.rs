//! Permutation flow-shop branch-and-bound (PFSP, makespan), after Chakroun et al. (PPAM 2011):
//! the host builds pools of child nodes, a [`Bounder`] (CPU threads here, a WGSL kernel
//! elsewhere) bounds them, and the host prunes and branches.
//!
//! Bounds follow Lageweg, Lenstra and Rinnooy Kan (1978) as used by the GPU B&B literature:
//! LB1 (one-machine bound) and LB2 (two-machine Johnson bound over all machine pairs).
//!
//! # Data layout shared with the WGSL kernels (`shaders/flowshop/lb1.wgsl`, `lb2.wgsl`)
//!
//! All buffers are arrays of `u32`; `n` = jobs, `m` = machines, `P` = m(m−1)/2 pairs.
//!
//! | binding | buffer | size (u32) | content |
//! |---|---|---|---|
//! | 0 | `params` (uniform) | 8 | [`KernelParams`]: n, m, P, children, parent stride, mask words, parents, 0 |
//! | 1 | `ptimes` | m·n | [`BoundData::ptimes`], machine-major: `p[k*n + j]` |
//! | 2 | `parents` | parents·stride | [`Pool::parents`], one record per parent, see below |
//! | 3 | `children` | 2·children | [`Pool::children`]: `(parent index, job)` per child, job word or'd with [`BACKWARD_CHILD`] for a backward child |
//! | 4 | `bounds` (read_write) | children | output: one bound per child |
//! | 5 | `pairs` (lb2) | 2·P | [`BoundData::pairs`]: `(u, v)`, u < v, strongest at the root first |
//! | 6 | `sequences` (lb2) | 4·P·n | [`BoundData::sequences`]: per pair, its Johnson order as `(j, p[u][j], p[v][j], lag)` |
//! | 7 | probe records | | only with `PROBE` (`shaders/shared/probe.wgsl`) |
//! | 9 | `offsets` (per-parent entry points) | parents + 1 | children of parent p are `offsets[p]..offsets[p+1]` |
//! | 10 | `prefixes` (only with `WALK_PREFIX`) | parents·(n+1) | [`Pool::prefixes`]: per parent `[length, prefix jobs…]` |
//!
//! A parent record (stride `3m + W`, `W = ceil(n/32)`) is
//! `[heads (m) | tails (m) | remaining (m) | unscheduled bitmask (W)]`:
//! the heads `f[k]` and tails `b[k]` of the parent as the bounds define them (an empty prefix has
//! the heads `BoundData::min_heads`, an empty suffix the tails `BoundData::min_tails`), the
//! sums `r[k]` over the parent's unscheduled jobs, and bit `j` of word `j/32` set iff job j is
//! unscheduled in the parent. The forward child `(parent, j)` is the parent with job j
//! appended to its prefix, the backward child the parent with j put in front of its suffix;
//! the kernel derives the child's heads (or tails) in O(m) and removes j from the set, so no
//! thread walks a prefix (the depth-dependent loop that causes the divergence discussed in
//! the paper) and the children of one parent read the same record. With `WALK_PREFIX` the
//! kernels instead recompute the parent's heads along its prefix, as the paper's kernel does
//! ([`gpu::GpuBoundOptions::walk_prefix`], Table 1 of the Chakroun experiment). Extending the empty
//! prefix's `min_heads` by a job gives that job's exact completion times, because
//! `min_heads[k]` never exceeds `Σ_{l<k} p[l][j]` (and likewise for tails), so one record
//! serves both the bound and the derivation. Thread `i` = child `i`, with
//! `i = gid.x + gid.y * 64 * num_workgroups.x` so pools beyond 65535 workgroups can use a
//! 2-D dispatch. Both kernels use `@workgroup_size(64)`; the branch-free variants are built
//! with `BRANCHLESS` defined, the divergence-probed ones with `PROBE`. The `*_per_parent`
//! entry points map one thread to one parent, which bounds its children in turn
//! ([`gpu::ThreadMapping`]). [`gpu::GpuBounder`] runs them.
//!
//! The search ([`solve_with`]) starts from the schedule of the start heuristic ([`IteratedGreedy`]:
//! NEH, then iterated greedy) or a given upper bound, branches bidirectionally by default,
//! and fills the next pool while the bounder works on the current one. The resident search
//! ([`resident::solve_resident`]) keeps the whole search on the GPU instead, with
//! [`checkpoint::Checkpoint`]s of its frontier.

pub mod bench;
pub mod checkpoint;
pub mod commands;
pub mod cpu;
mod data;
pub mod gpu;
pub mod heuristic;
mod model;
mod pool;
pub mod resident;
mod search;
pub mod taillard;
#[cfg(test)]
mod tests;

pub use cpu::{completion_times, makespan, CpuBounder};
pub use data::{BoundData, KernelParams};
pub use heuristic::{neh, IteratedGreedy};
pub use model::{Direction, Instance, LowerBound, Node, GPU_MAX_MACHINES, LB1_WGSL, LB2_WGSL, MAX_JOBS, MAX_MACHINES, WORKGROUP_SIZE};
pub use pool::{Bounder, Pool, Started, BACKWARD_CHILD, UNKNOWN_PREFIX};
pub use search::{
    solve, solve_with, Branching, DeviceUse, Exploration, FrontierUse, Incumbent, Progress, SearchOptions, Solution, Stop, MAX_POOL,
};
pub use taillard::{read_instance, read_instances, taillard, taillard_by_name, taillard_entry};

use model::check_size;
