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
//! the heads f[k] and tails b[k] of the parent as the bounds define them (an empty prefix has
//! the heads `BoundData::min_heads`, an empty suffix the tails `BoundData::min_tails`), the
//! sums r[k] over the parent's unscheduled jobs, and bit `j` of word `j/32` set iff job j is
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
//! and fills the next pool while the bounder works on the current one.

pub mod bench;
pub mod cli;
pub mod cpu;
pub mod gpu;
pub mod heuristic;
pub mod taillard;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

pub use cpu::{makespan, CpuBounder};
pub use heuristic::{neh, IteratedGreedy};
pub use taillard::{read_instance, read_instances, taillard, taillard_by_name, taillard_entry};

/// Source of the `lb1` kernel (preprocessor directives included).
pub const LB1_WGSL: &str = include_str!("../../../shaders/flowshop/lb1.wgsl");
/// Source of the `lb2` kernel (preprocessor directives included).
pub const LB2_WGSL: &str = include_str!("../../../shaders/flowshop/lb2.wgsl");

/// Largest job count (job indices are stored as `u16`, and child records pack them in u32).
pub const MAX_JOBS: usize = 4096;
/// Largest machine count on the CPU.
pub const MAX_MACHINES: usize = 256;
/// Largest machine count the WGSL kernels accept (they keep a child's heads and tails in
/// private `array<u32, 32>`s).
pub const GPU_MAX_MACHINES: usize = 32;
/// Workgroup size of both kernels.
pub const WORKGROUP_SIZE: u32 = 64;
/// Largest number of open nodes a search expands per pool ([`SearchOptions::pool_size`]).
pub const MAX_POOL: usize = 1 << 20;
/// Sum of all processing times must stay below this so every bound fits in a u32
/// (bounds are at most twice that sum).
const MAX_TOTAL_TIME: u64 = 1 << 30;

fn check_size(jobs: usize, machines: usize) -> Result<()> {
    if !(1..=MAX_JOBS).contains(&jobs) || !(1..=MAX_MACHINES).contains(&machines) {
        return Err(Error::invalid(
            "instance size",
            format!("{jobs} jobs × {machines} machines; supported: 1..={MAX_JOBS} jobs, 1..={MAX_MACHINES} machines"),
        ));
    }
    Ok(())
}

/// A permutation flow-shop instance.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Instance {
    pub name: String,
    pub jobs: usize,
    pub machines: usize,
    /// Generator seed (Taillard) or the file's seed field.
    pub seed: u32,
    /// Processing times, machine-major: `p[i * jobs + j]` is job j on machine i.
    pub p: Vec<u32>,
    /// Best known upper bound (file header, or best known makespan for generated instances).
    pub upper_bound: u32,
    /// Lower bound from the file header / Taillard's table.
    pub lower_bound: u32,
}

impl Instance {
    pub fn new(
        name: impl Into<String>,
        jobs: usize,
        machines: usize,
        seed: u32,
        p: Vec<u32>,
        upper_bound: u32,
        lower_bound: u32,
    ) -> Result<Self> {
        check_size(jobs, machines)?;
        if p.len() != jobs * machines {
            return Err(Error::invalid(
                "processing times",
                format!(
                    "{} values for {jobs} jobs × {machines} machines (expected {})",
                    p.len(),
                    jobs * machines
                ),
            ));
        }
        let total: u64 = p.iter().map(|&v| u64::from(v)).sum();
        if total >= MAX_TOTAL_TIME {
            return Err(Error::invalid(
                "processing times",
                format!(
                    "their sum {total} must stay below {MAX_TOTAL_TIME} so bounds fit in 32 bits"
                ),
            ));
        }
        Ok(Self {
            name: name.into(),
            jobs,
            machines,
            seed,
            p,
            upper_bound,
            lower_bound,
        })
    }

    /// Processing time of `job` on `machine`.
    pub fn time(&self, machine: usize, job: usize) -> u32 {
        self.p[machine * self.jobs + job]
    }
}

/// A subproblem: prefix σ1 (jobs fixed at the start, in order), suffix σ2 (jobs fixed at
/// the end, in order) and the unscheduled rest U.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub prefix: Vec<usize>,
    pub suffix: Vec<usize>,
    /// U, increasing job order.
    pub unscheduled: Vec<usize>,
}

impl Node {
    /// Checks that prefix and suffix hold distinct jobs of `0..jobs`.
    pub fn new(jobs: usize, prefix: Vec<usize>, suffix: Vec<usize>) -> Result<Self> {
        let mut seen = vec![false; jobs];
        for &j in prefix.iter().chain(&suffix) {
            if j >= jobs {
                return Err(Error::invalid(
                    "node",
                    format!("job {j} does not exist (instance has {jobs} jobs)"),
                ));
            }
            if std::mem::replace(&mut seen[j], true) {
                return Err(Error::invalid("node", format!("job {j} is fixed twice")));
            }
        }
        let unscheduled = (0..jobs).filter(|&j| !seen[j]).collect();
        Ok(Self {
            prefix,
            suffix,
            unscheduled,
        })
    }

    pub fn root(jobs: usize) -> Self {
        Self {
            prefix: Vec::new(),
            suffix: Vec::new(),
            unscheduled: (0..jobs).collect(),
        }
    }
}

/// Which lower bound to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LowerBound {
    /// One-machine bound, O(m) per child.
    Lb1,
    /// Two-machine Johnson bound over all machine pairs, O(m²n) per child.
    #[default]
    Lb2,
}

impl LowerBound {
    /// WGSL source of the kernel, before preprocessing.
    pub fn wgsl(self) -> &'static str {
        match self {
            LowerBound::Lb1 => LB1_WGSL,
            LowerBound::Lb2 => LB2_WGSL,
        }
    }

    /// Kernel entry point, also the shader file stem under `shaders/flowshop/`.
    pub fn entry_point(self) -> &'static str {
        match self {
            LowerBound::Lb1 => "lb1",
            LowerBound::Lb2 => "lb2",
        }
    }

    /// Storage buffers the one-thread-per-child kernel binds without the probe
    /// (bindings 1..=6, see the module docs).
    pub fn storage_buffers(self) -> u32 {
        match self {
            LowerBound::Lb1 => 4,
            LowerBound::Lb2 => 6,
        }
    }
}

/// Instance data the bounds need, flattened for upload (see the module docs for bindings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundData {
    pub jobs: usize,
    pub machines: usize,
    /// Machine-major processing times, `ptimes[k * jobs + j]` (binding 1).
    pub ptimes: Vec<u32>,
    /// Head of an empty prefix: `min_j Σ_{l<k} p[l][j]` per machine.
    pub min_heads: Vec<u32>,
    /// Tail of an empty suffix: `min_j Σ_{l>k} p[l][j]` per machine.
    pub min_tails: Vec<u32>,
    /// Machine pairs `(u, v)`, u < v, flattened (binding 5), by decreasing LB2 term at the
    /// root (ties: lexicographic).
    pub pairs: Vec<u32>,
    /// `lags[q * jobs + j]` = Σ_{u<k<v} p[k][j] for pair q.
    pub lags: Vec<u32>,
    /// `johnson[q * jobs + i]` = i-th job of Johnson's order for pair q.
    pub johnson: Vec<u32>,
    /// What the LB2 kernel reads per pair q and Johnson position i, as one 16-byte record
    /// at `4 * (q * jobs + i)`: `[job j, p[u][j], p[v][j], lags[q][j]]` (binding 6).
    pub sequences: Vec<u32>,
}

impl BoundData {
    pub fn new(instance: &Instance) -> Self {
        let (n, m) = (instance.jobs, instance.machines);
        let p = &instance.p;
        let mut min_heads = vec![u32::MAX; m];
        let mut min_tails = vec![u32::MAX; m];
        for j in 0..n {
            let mut before = 0;
            for (k, head) in min_heads.iter_mut().enumerate() {
                *head = (*head).min(before);
                before += p[k * n + j];
            }
            let mut after = 0;
            for (k, tail) in min_tails.iter_mut().enumerate().rev() {
                *tail = (*tail).min(after);
                after += p[k * n + j];
            }
        }

        let pair_count = m * (m.saturating_sub(1)) / 2;
        let mut pairs = Vec::with_capacity(2 * pair_count);
        let mut lags = Vec::with_capacity(pair_count * n);
        let mut johnson = Vec::with_capacity(pair_count * n);
        for u in 0..m {
            for v in u + 1..m {
                pairs.extend([u as u32, v as u32]);
                let lag: Vec<u32> = (0..n)
                    .map(|j| (u + 1..v).map(|k| p[k * n + j]).sum())
                    .collect();
                let a = |j: usize| p[u * n + j] + lag[j];
                let b = |j: usize| p[v * n + j] + lag[j];
                // Johnson: a_j < b_j by increasing a_j first, then the rest by decreasing b_j;
                // job index breaks ties so the order is deterministic.
                let (mut first, mut last): (Vec<usize>, Vec<usize>) =
                    (0..n).partition(|&j| a(j) < b(j));
                first.sort_by_key(|&j| (a(j), j));
                last.sort_by_key(|&j| (std::cmp::Reverse(b(j)), j));
                johnson.extend(first.iter().chain(&last).map(|&j| j as u32));
                lags.extend(lag);
            }
        }

        let mut data = Self {
            jobs: n,
            machines: m,
            ptimes: p.clone(),
            min_heads,
            min_tails,
            pairs,
            lags,
            johnson,
            sequences: Vec::new(),
        };
        data.order_pairs_strongest_first();
        data.sequences = Vec::with_capacity(4 * pair_count * n);
        for q in 0..pair_count {
            let (u, v) = (data.pairs[2 * q] as usize, data.pairs[2 * q + 1] as usize);
            for &j in &data.johnson[q * n..(q + 1) * n] {
                let j = j as usize;
                data.sequences.extend([j as u32, p[u * n + j], p[v * n + j], data.lags[q * n + j]]);
            }
        }
        data
    }

    /// Reorders the pairs (with their lags and Johnson orders) by decreasing LB2 term at
    /// the root, so that a bound cut off at an incumbent (Bounder::bound_below) meets the
    /// strongest pairs first.
    fn order_pairs_strongest_first(&mut self) {
        let n = self.jobs;
        let (f, b) = (&self.min_heads, &self.min_tails);
        let mut order: Vec<usize> = (0..self.pair_count()).collect();
        order.sort_by_cached_key(|&q| (std::cmp::Reverse(cpu::pair_term(self, q, f, b, &|_| true)), q));
        let reorder = |words: &[u32], width: usize| -> Vec<u32> {
            order.iter().flat_map(|&q| &words[q * width..(q + 1) * width]).copied().collect()
        };
        (self.pairs, self.lags, self.johnson) = (reorder(&self.pairs, 2), reorder(&self.lags, n), reorder(&self.johnson, n));
    }

    pub fn pair_count(&self) -> usize {
        self.pairs.len() / 2
    }

    pub fn time(&self, machine: usize, job: usize) -> u32 {
        self.ptimes[machine * self.jobs + job]
    }

    /// Fails when the WGSL kernels cannot bound this instance.
    pub fn check_gpu(&self) -> Result<()> {
        if self.machines > GPU_MAX_MACHINES {
            return Err(Error::Limit {
                what: "machines for the flow-shop kernels".into(),
                requested: self.machines as u64,
                limit: GPU_MAX_MACHINES as u64,
                hint: "bound this instance on the CPU (--device cpu)".into(),
            });
        }
        Ok(())
    }

    /// The uniform block of both kernels (binding 0) for `pool`, bounds in full.
    pub fn kernel_params(&self, pool: &Pool) -> KernelParams {
        KernelParams::new(self.jobs, self.machines, self.pair_count(), pool, 0)
    }
}

/// Uniform block of the kernels (`struct Params` in WGSL), 32 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelParams {
    pub jobs: u32,
    pub machines: u32,
    pub pairs: u32,
    pub children: u32,
    pub parent_stride: u32,
    pub mask_words: u32,
    /// Parents in the pool (threads of the per-parent entry points).
    pub parents: u32,
    /// LB2 stops at the first machine pair that reaches this value (the child is pruned
    /// whatever the other pairs give); 0 computes every bound in full.
    pub prune_at: u32,
}

impl KernelParams {
    /// For an instance of `jobs` × `machines` with `pairs` machine pairs, bounding `pool`.
    pub fn new(jobs: usize, machines: usize, pairs: usize, pool: &Pool, prune_at: u32) -> KernelParams {
        KernelParams {
            jobs: jobs as u32,
            machines: machines as u32,
            pairs: pairs as u32,
            children: pool.child_count() as u32,
            parent_stride: pool.parent_stride() as u32,
            mask_words: pool.mask_words() as u32,
            parents: pool.parent_count() as u32,
            prune_at,
        }
    }

    pub fn to_words(self) -> [u32; 8] {
        [
            self.jobs,
            self.machines,
            self.pairs,
            self.children,
            self.parent_stride,
            self.mask_words,
            self.parents,
            self.prune_at,
        ]
    }
}

/// Where a child fixes its job (Lageweg's bidirectional branching).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Appended to the parent's prefix σ1.
    Forward,
    /// Put in front of the parent's suffix σ2.
    Backward,
}

/// Bit of a child's job word (binding 3) that marks a [`Direction::Backward`] child.
pub const BACKWARD_CHILD: u32 = 1 << 31;

/// A batch of child nodes to bound, in the flat layout the kernels read (bindings 2, 3 and,
/// for the prefix-walking kernels, 10).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pool {
    jobs: usize,
    machines: usize,
    parents: Vec<u32>,
    children: Vec<u32>,
    /// Per parent `[length, jobs of the prefix in order, 0 …]`, `jobs + 1` words; length
    /// [`UNKNOWN_PREFIX`] for parents added by heads alone ([`Pool::add_parent`]).
    prefixes: Vec<u32>,
}

/// Prefix length of a parent added without its prefix.
pub const UNKNOWN_PREFIX: u32 = u32::MAX;

impl Pool {
    pub fn new(jobs: usize, machines: usize) -> Self {
        Self {
            jobs,
            machines,
            parents: Vec::new(),
            children: Vec::new(),
            prefixes: Vec::new(),
        }
    }

    pub fn for_data(data: &BoundData) -> Self {
        Self::new(data.jobs, data.machines)
    }

    pub fn clear(&mut self) {
        self.parents.clear();
        self.children.clear();
        self.prefixes.clear();
    }

    pub fn jobs(&self) -> usize {
        self.jobs
    }

    pub fn machines(&self) -> usize {
        self.machines
    }

    /// u32 words of the unscheduled bitmask, `ceil(jobs / 32)`.
    pub fn mask_words(&self) -> usize {
        self.jobs.div_ceil(32)
    }

    /// u32 words per parent record: `3 * machines + mask_words`.
    pub fn parent_stride(&self) -> usize {
        3 * self.machines + self.mask_words()
    }

    pub fn parent_count(&self) -> usize {
        self.parents.len() / self.parent_stride()
    }

    pub fn child_count(&self) -> usize {
        self.children.len() / 2
    }

    /// Parent records, `parent_count() * parent_stride()` words (binding 2).
    pub fn parents(&self) -> &[u32] {
        &self.parents
    }

    /// `(parent, job)` per child, `2 * child_count()` words (binding 3).
    pub fn children(&self) -> &[u32] {
        &self.children
    }

    /// Prefix records, `parent_count() * (jobs + 1)` words (binding 10).
    pub fn prefixes(&self) -> &[u32] {
        &self.prefixes
    }

    /// The jobs of `parent`'s prefix, None when it was added without them.
    pub fn prefix(&self, parent: usize) -> Option<&[u32]> {
        let record = self.prefix_record(parent);
        (record[0] != UNKNOWN_PREFIX).then(|| &record[1..1 + record[0] as usize])
    }

    fn prefix_record(&self, parent: usize) -> &[u32] {
        &self.prefixes[parent * (self.jobs + 1)..(parent + 1) * (self.jobs + 1)]
    }

    /// Appends `node` as a parent, its heads and tails computed from its prefix and suffix,
    /// its prefix kept for the prefix-walking kernels. Returns the parent index.
    pub fn add_node(&mut self, node: &Node, data: &BoundData) -> Result<u32> {
        if data.machines != self.machines || data.jobs != self.jobs {
            return Err(Error::invalid("pool parent", "the data is not of the pool's instance size"));
        }
        let node = Node::new(self.jobs, node.prefix.clone(), node.suffix.clone())?;
        let prefix: Vec<u32> = node.prefix.iter().map(|&j| j as u32).collect();
        self.push_parent(
            &cpu::heads(data, &node.prefix),
            &cpu::tails(data, &node.suffix),
            node.unscheduled.iter().copied(),
            Some(&prefix),
            data,
        );
        Ok((self.parent_count() - 1) as u32)
    }

    /// Appends a parent: its heads and tails as the bounds define them ([`cpu::heads`],
    /// [`cpu::tails`]; zero heads also serve an empty prefix with forward children only),
    /// and its unscheduled jobs. Returns the parent index.
    pub fn add_parent(
        &mut self,
        heads: &[u32],
        tails: &[u32],
        unscheduled: &[usize],
        data: &BoundData,
    ) -> Result<u32> {
        let m = self.machines;
        if heads.len() != m || tails.len() != m || data.machines != m || data.jobs != self.jobs {
            return Err(Error::invalid(
                "pool parent",
                format!(
                    "heads/tails need {m} values (got {}/{}) and data of the pool's size",
                    heads.len(),
                    tails.len()
                ),
            ));
        }
        if let Some(&j) = unscheduled.iter().find(|&&j| j >= self.jobs) {
            return Err(Error::invalid(
                "pool parent",
                format!("job {j} does not exist ({} jobs)", self.jobs),
            ));
        }
        self.push_parent(heads, tails, unscheduled.iter().copied(), None, data);
        Ok((self.parent_count() - 1) as u32)
    }

    /// Appends child `(parent, job)`: the parent with `job` appended to its prefix.
    pub fn add_child(&mut self, parent: u32, job: usize) -> Result<()> {
        self.add_child_in(parent, job, Direction::Forward)
    }

    /// Appends child `(parent, job)` branching in `direction`: `job` appended to the
    /// parent's prefix, or put in front of its suffix.
    pub fn add_child_in(&mut self, parent: u32, job: usize, direction: Direction) -> Result<()> {
        let stride = self.parent_stride();
        let mask_at = parent as usize * stride + 3 * self.machines + job / 32;
        let unscheduled = parent < self.parent_count() as u32
            && job < self.jobs
            && (self.parents[mask_at] >> (job % 32)) & 1 == 1;
        if !unscheduled {
            return Err(Error::invalid(
                "pool child",
                format!("job {job} is not unscheduled in parent {parent}"),
            ));
        }
        self.push_child_unchecked(parent, job, direction);
        Ok(())
    }

    /// Appends parent `parent` of `from` (a pool of the same instance) with its record and
    /// prefix. Returns its index here.
    fn copy_parent(&mut self, from: &Pool, parent: usize) -> u32 {
        self.parents.extend_from_slice(from.record(parent));
        self.prefixes.extend_from_slice(from.prefix_record(parent));
        (self.parent_count() - 1) as u32
    }

    fn push_parent(
        &mut self,
        heads: &[u32],
        tails: &[u32],
        unscheduled: impl Iterator<Item = usize>,
        prefix: Option<&[u32]>,
        data: &BoundData,
    ) {
        let (n, m) = (self.jobs, self.machines);
        let at = self.prefixes.len();
        self.prefixes.resize(at + n + 1, 0);
        match prefix {
            Some(jobs) => {
                self.prefixes[at] = jobs.len() as u32;
                self.prefixes[at + 1..at + 1 + jobs.len()].copy_from_slice(jobs);
            }
            None => self.prefixes[at] = UNKNOWN_PREFIX,
        }
        self.parents.extend_from_slice(heads);
        self.parents.extend_from_slice(tails);
        let remaining_at = self.parents.len();
        self.parents.resize(remaining_at + m + self.mask_words(), 0);
        for j in unscheduled {
            for k in 0..m {
                self.parents[remaining_at + k] += data.ptimes[k * n + j];
            }
            self.parents[remaining_at + m + j / 32] |= 1 << (j % 32);
        }
    }

    fn push_child_unchecked(&mut self, parent: u32, job: usize, direction: Direction) {
        let flag = if direction == Direction::Backward { BACKWARD_CHILD } else { 0 };
        self.children.extend([parent, job as u32 | flag]);
    }

    /// `(parent index, job)` of child `i`.
    pub fn child(&self, i: usize) -> (usize, usize) {
        (
            self.children[2 * i] as usize,
            (self.children[2 * i + 1] & !BACKWARD_CHILD) as usize,
        )
    }

    /// Where child `i` puts its job.
    pub fn direction(&self, i: usize) -> Direction {
        if self.children[2 * i + 1] & BACKWARD_CHILD != 0 {
            Direction::Backward
        } else {
            Direction::Forward
        }
    }

    fn record(&self, parent: usize) -> &[u32] {
        let stride = self.parent_stride();
        &self.parents[parent * stride..(parent + 1) * stride]
    }

    pub fn heads(&self, parent: usize) -> &[u32] {
        &self.record(parent)[..self.machines]
    }

    pub fn tails(&self, parent: usize) -> &[u32] {
        &self.record(parent)[self.machines..2 * self.machines]
    }

    pub fn remaining(&self, parent: usize) -> &[u32] {
        &self.record(parent)[2 * self.machines..3 * self.machines]
    }

    pub fn unscheduled_mask(&self, parent: usize) -> &[u32] {
        &self.record(parent)[3 * self.machines..]
    }
}

/// Bounds a pool. The driver calls it once per iteration with a fresh pool of children
/// (never leaves) and expects exactly `pool.child_count()` bounds, in child order.
/// A GPU implementation uploads [`Pool::parents`] / [`Pool::children`] (and, once, the
/// [`BoundData`] arrays) and runs the `lb1` / `lb2` kernel; [`cpu::lb1`] / [`cpu::lb2`]
/// compute the same values bit for bit on the CPU.
pub trait Bounder {
    fn bound(&mut self, pool: &Pool) -> Result<Vec<u32>>;

    /// As [`Bounder::bound`] for a search whose incumbent is `incumbent`: a bound that
    /// reaches it may be any value ≥ `incumbent` (the child is pruned either way), which lets
    /// LB2 stop early. Bounds below `incumbent` are exact.
    fn bound_below(&mut self, pool: &Pool, incumbent: u32) -> Result<Vec<u32>> {
        let _ = incumbent;
        self.bound(pool)
    }

    /// Starts [`Bounder::bound_below`] on `pool`. A bounder that works in the background
    /// (the GPU) returns [`Started::Running`] at once and hands the bounds to the next
    /// [`Bounder::finish`], so the caller can prepare the next pool meanwhile; `pool` may be
    /// changed as soon as this returns. The default bounds at once.
    fn start(&mut self, pool: &Pool, incumbent: u32) -> Result<Started> {
        Ok(Started::Done(self.bound_below(pool, incumbent)?))
    }

    /// The bounds of the pool last started with [`Started::Running`].
    fn finish(&mut self) -> Result<Vec<u32>> {
        Err(Error::invalid("bounder", "finish() without a running start()"))
    }
}

/// What [`Bounder::start`] did.
pub enum Started {
    /// Bounded already: the bounds, in child order.
    Done(Vec<u32>),
    /// Running; [`Bounder::finish`] returns the bounds.
    Running,
}

impl Started {
    /// The bounds, waiting for `bounder` if they are still running.
    pub fn bounds(self, bounder: &mut dyn Bounder) -> Result<Vec<u32>> {
        match self {
            Started::Done(bounds) => Ok(bounds),
            Started::Running => bounder.finish(),
        }
    }
}

/// How the search splits a node into children.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Branching {
    /// Children append one job of U to the prefix (the paper's search).
    Forward,
    /// Every node is bounded both ways, appending to the prefix and prepending to the
    /// suffix, and branches in the direction that keeps fewer children (Lageweg et al.'s
    /// bidirectional branching with Gmys et al.'s dynamic choice): twice the bounds per node,
    /// a far smaller tree on square instances (ta021 proved in 26 s on an H100 instead of not
    /// in 125 s).
    #[default]
    Bidirectional,
}

impl Branching {
    fn directions(self) -> &'static [Direction] {
        match self {
            Branching::Forward => &[Direction::Forward],
            Branching::Bidirectional => &[Direction::Forward, Direction::Backward],
        }
    }
}

/// Order in which open nodes are taken into pools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Exploration {
    /// Stack: pools of the deepest nodes (small memory). A parent's children are visited by
    /// increasing bound, then increasing machine idle time: this finds good incumbents fast
    /// (ta001 goes from NEH's 1286 to 1278 within a few thousand nodes with LB2).
    #[default]
    DepthFirst,
    /// Queue: pools of nodes of one or two consecutive levels (the paper's reordering).
    BreadthFirst,
}

#[derive(Clone, Debug)]
pub struct SearchOptions<'a> {
    /// Bound used by [`solve`]; [`solve_with`] uses whatever the bounder computes.
    pub bound: LowerBound,
    pub exploration: Exploration,
    pub branching: Branching,
    /// Open nodes expanded per iteration (each gives up to `jobs` children).
    pub pool_size: usize,
    /// Look only for schedules with a makespan of at most this value: the search starts
    /// from it as its incumbent value unless the start heuristic's schedule is no worse.
    /// When the search finishes without a schedule, that proves only that none has a
    /// makespan below it ([`Solution::proven_lower_bound`]).
    pub upper_bound: Option<u32>,
    /// Start heuristic: NEH followed by iterated greedy (`iterations: Some(0)`: NEH alone).
    /// It gets at most a tenth of `time_limit`.
    pub heuristic: IteratedGreedy,
    /// Stop (result not optimal) once this many nodes were kept.
    pub node_limit: Option<u64>,
    /// Stop (result not optimal) after this long.
    pub time_limit: Option<Duration>,
    /// Stop (result not optimal, [`Stop::Interrupted`]) once this flag is set, e.g. by the
    /// caller's Ctrl-C handler; polled where the time limit is, about once per pool.
    pub interrupted: Option<&'a AtomicBool>,
    /// CPU bounding threads for [`solve`]; 0 = all available.
    pub threads: usize,
    /// Minimum time between two progress reports.
    pub progress_interval: Duration,
    /// Fill the next pool while the bounder works on the current one (the GPU bounds in the
    /// background). A depth-first search then takes each pool from the nodes open before
    /// the previous pool's children arrive, which can delay good incumbents; without
    /// overlap the order is strictly deepest first.
    pub overlap: bool,
}

impl Default for SearchOptions<'_> {
    fn default() -> Self {
        Self {
            bound: LowerBound::default(),
            exploration: Exploration::default(),
            branching: Branching::default(),
            pool_size: 256,
            upper_bound: None,
            heuristic: IteratedGreedy::default(),
            node_limit: None,
            time_limit: None,
            interrupted: None,
            threads: 0,
            progress_interval: Duration::from_secs(1),
            overlap: true,
        }
    }
}

/// Reported to the progress callback during long searches.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Progress {
    pub nodes: u64,
    pub leaves: u64,
    /// Best makespan found so far; `None` while no schedule within the given upper bound
    /// was found.
    pub best: Option<u32>,
    /// Open nodes waiting.
    pub open: usize,
    pub seconds: f64,
}

/// Why a search stopped before it had explored its whole tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Stop {
    #[serde(rename = "node limit")]
    NodeLimit,
    #[serde(rename = "time limit")]
    TimeLimit,
    #[serde(rename = "interrupted")]
    Interrupted,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stop::NodeLimit => "node limit reached",
            Stop::TimeLimit => "time limit reached",
            Stop::Interrupted => "interrupted",
        })
    }
}

/// What a search found and what it proved. A makespan always comes with the complete
/// schedule that achieves it (checked against the processing times before it is returned).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Solution {
    /// Makespan of `permutation`, the best schedule found with a makespan of at most the
    /// given upper bound (any schedule when none was given); `None` when there is none.
    pub makespan: Option<u32>,
    /// Job order (0-based) achieving `makespan`; empty when `makespan` is `None`.
    pub permutation: Vec<usize>,
    /// `makespan` is proven optimal: the search finished, and no schedule is better.
    pub optimal: bool,
    /// No schedule has a makespan below this value (proven by a finished search): `makespan`
    /// when optimal; the given upper bound when the search finished without a schedule
    /// within it; `None` when the search stopped early.
    pub proven_lower_bound: Option<u32>,
    /// Why the search stopped early; `None` when it finished.
    pub stopped: Option<Stop>,
    /// Makespan of the start heuristic's schedule (NEH, then iterated greedy).
    pub start_makespan: u32,
    /// The start heuristic's schedule (0-based), whatever the upper bound.
    pub start_permutation: Vec<usize>,
    /// Part of `seconds` the start heuristic took.
    pub heuristic_seconds: f64,
    /// Non-leaf children kept (bound < incumbent).
    pub nodes: u64,
    /// Leaves (complete schedules) evaluated.
    pub leaves: u64,
    pub seconds: f64,
    /// Part of `seconds` the host spent waiting for the bounder and starting it (on the
    /// GPU: upload, and the kernel and readback as far as they outlast the host's work on
    /// the other batch); the rest is the host choosing, branching and pruning.
    pub bounding_seconds: f64,
}

/// Solves `instance` with the multi-threaded CPU bounder.
pub fn solve(instance: &Instance, options: &SearchOptions) -> Result<Solution> {
    let data = BoundData::new(instance);
    let mut bounder = CpuBounder::new(&data, options.bound, options.threads);
    solve_with(&data, options, &mut bounder, None)
}

/// Open nodes of the search, stored flat (no allocation per node) as records of
/// `[front, back, bound, perm (n), heads (m), tails (m)]`: `perm[..front]` is the prefix,
/// `perm[front..back]` the unscheduled jobs, `perm[back..]` the suffix; heads and tails are
/// as the bounds define them; `bound` is the value the node was kept with (rechecked when
/// popped, as the incumbent may have improved).
struct OpenNodes {
    jobs: usize,
    stride: usize,
    words: VecDeque<u32>,
}

const FRONT: usize = 0;
const BACK: usize = 1;
const BOUND: usize = 2;
const PERM: usize = 3;

impl OpenNodes {
    fn new(jobs: usize, machines: usize) -> Self {
        Self {
            jobs,
            stride: PERM + jobs + 2 * machines,
            words: VecDeque::new(),
        }
    }

    fn len(&self) -> usize {
        self.words.len() / self.stride
    }

    fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    fn push(&mut self, record: &[u32]) {
        self.words.extend(record);
    }

    /// Moves the newest (depth-first) or oldest (breadth-first) node to the end of `out`.
    fn pop_into(&mut self, exploration: Exploration, out: &mut Vec<u32>) -> bool {
        if self.words.is_empty() {
            return false;
        }
        match exploration {
            Exploration::DepthFirst => {
                let at = self.words.len() - self.stride;
                out.extend(self.words.range(at..));
                self.words.truncate(at);
            }
            Exploration::BreadthFirst => out.extend(self.words.drain(..self.stride)),
        }
        true
    }

    /// The heads and tails of a record.
    fn ends<'a>(&self, record: &'a [u32]) -> &'a [u32] {
        &record[PERM + self.jobs..]
    }
}

/// Solves with any bounder; `progress` is called at most every `progress_interval`.
pub fn solve_with(
    data: &BoundData,
    options: &SearchOptions,
    bounder: &mut dyn Bounder,
    mut progress: Option<&mut dyn FnMut(&Progress)>,
) -> Result<Solution> {
    if !(1..=MAX_POOL).contains(&options.pool_size) {
        return Err(Error::invalid(
            "pool size",
            format!("{} open nodes per pool; use 1..={MAX_POOL}", options.pool_size),
        ));
    }
    let start = Instant::now();
    let (n, m) = (data.jobs, data.machines);
    let interrupted = || options.interrupted.is_some_and(|flag| flag.load(Ordering::Relaxed));

    // A deadline past what Instant can hold is no deadline.
    let heuristic_deadline = options.time_limit.and_then(|limit| start.checked_add(limit / 10));
    let heuristic_stop = || interrupted() || heuristic_deadline.is_some_and(|d| Instant::now() >= d);
    let (start_makespan, start_permutation) =
        heuristic::iterated_greedy(n, m, &data.ptimes, &options.heuristic, &heuristic_stop);
    check_schedule(data, &start_permutation, start_makespan, "start heuristic")?;
    let heuristic_seconds = start.elapsed().as_secs_f64();
    // `best` is the value a schedule must beat; `best_perm` a schedule of makespan `best`,
    // None while `best` is only the given upper bound.
    let (mut best, mut best_perm) = match options.upper_bound {
        Some(ub) if ub < start_makespan => (ub, None),
        _ => (start_makespan, Some(start_permutation.clone())),
    };

    let mut open = OpenNodes::new(n, m);
    let stride = open.stride;
    let mut record: Vec<u32> = vec![0, n as u32, 0];
    record.extend(0..n as u32);
    record.extend(data.min_heads.iter().chain(&data.min_tails));
    open.push(&record);

    let directions = options.branching.directions();
    // Two batches take turns: while the bounder works on one (in the background on the GPU),
    // the host branches the other's results and fills it again from the open nodes.
    let mut filling = Batch::new(data, options.pool_size * stride);
    let mut bounding = Batch::new(data, options.pool_size * stride);
    let mut in_flight: Option<Started> = None;
    let mut kept: Vec<usize> = Vec::new();
    let (mut nodes, mut leaves) = (0u64, 0u64);
    let mut waited = Duration::ZERO;
    let mut stopped = None;
    let mut last_report = start;

    while !open.is_empty() || in_flight.is_some() {
        stopped = if interrupted() {
            Some(Stop::Interrupted)
        } else if options.time_limit.is_some_and(|limit| start.elapsed() >= limit) {
            Some(Stop::TimeLimit)
        } else if options.node_limit.is_some_and(|limit| nodes >= limit) {
            Some(Stop::NodeLimit)
        } else {
            None
        };
        if stopped.is_some() {
            if let Some(Started::Running) = in_flight {
                bounder.finish()?;
            }
            break;
        }

        let Batch { pool, parents, child_positions } = &mut filling;
        pool.clear();
        parents.clear();
        child_positions.clear();
        while parents.len() < options.pool_size * stride {
            let at = parents.len();
            if !open.pop_into(options.exploration, parents) {
                break;
            }
            let node = &parents[at..];
            let (front, back) = (node[FRONT] as usize, node[BACK] as usize);
            let perm = &node[PERM..PERM + n];
            let ends = open.ends(node);
            if node[BOUND] >= best {
                parents.truncate(at);
                continue;
            }
            if back - front == 1 {
                // Its only child is a leaf: evaluate the complete schedule here.
                leaves += 1;
                let finish = leaf_makespan(data, ends, perm[front] as usize);
                if finish < best || (finish == best && best_perm.is_none()) {
                    best = finish;
                    best_perm = Some(perm.iter().map(|&j| j as usize).collect());
                }
                parents.truncate(at);
                continue;
            }
            let index = pool.parent_count() as u32;
            let unscheduled = perm[front..back].iter().map(|&j| j as usize);
            pool.push_parent(&ends[..m], &ends[m..], unscheduled, Some(&perm[..front]), data);
            for &direction in directions {
                for (position, &job) in (front..back).zip(&perm[front..back]) {
                    pool.push_child_unchecked(index, job as usize, direction);
                    child_positions.push(position);
                }
            }
        }

        let waiting = Instant::now();
        let mut bounds = match in_flight.take() {
            Some(started) => Some(started.bounds(bounder)?),
            None => None,
        };
        if filling.pool.child_count() > 0 {
            let started = bounder.start(&filling.pool, best)?;
            if options.overlap {
                in_flight = Some(started);
            } else {
                bounds = Some(started.bounds(bounder)?);
            }
        }
        waited += waiting.elapsed();
        if options.overlap {
            std::mem::swap(&mut filling, &mut bounding);
        }

        // `filling` now holds the batch whose bounds arrived (if any): the one started in
        // the previous iteration, or without overlap the one just bounded.
        if let Some(bounds) = bounds {
            let Batch { pool, parents, child_positions } = &filling;
            if bounds.len() != pool.child_count() {
                return Err(Error::invalid(
                    "bounder output",
                    format!(
                        "{} bounds for {} children",
                        bounds.len(),
                        pool.child_count()
                    ),
                ));
            }
            // Children are grouped by parent, one run of |U| per direction.
            kept.clear();
            let mut first = 0;
            for parent in parents.chunks_exact(stride) {
                let width = (parent[BACK] - parent[FRONT]) as usize;
                let mut chosen = first..first + width;
                if directions.len() == 2 {
                    let backward = first + width..first + 2 * width;
                    if prefer_second(&bounds[chosen.clone()], &bounds[backward.clone()], best) {
                        chosen = backward;
                    }
                }
                kept.extend(chosen.filter(|&child| bounds[child] < best));
                first += width * directions.len();
            }
            let parent_record = |index: usize| &parents[index * stride..(index + 1) * stride];
            if options.exploration == Exploration::DepthFirst {
                // Pushed so that the first parent's most promising child ends on top: smallest
                // bound, then least idle time (bounds tie a lot; idle time is what tells the
                // children apart). Good incumbents come early; the tree at a fixed incumbent
                // is the same in any order.
                kept.sort_by_cached_key(|&child| {
                    let (parent, job) = pool.child(child);
                    let ends = open.ends(parent_record(parent));
                    let idle = idle_time(data, ends, job, pool.direction(child));
                    (parent, bounds[child], idle, child)
                });
                kept.reverse();
            }
            for &child in &kept {
                let (parent, job) = pool.child(child);
                record.clear();
                record.extend_from_slice(parent_record(parent));
                let position = PERM + child_positions[child];
                match pool.direction(child) {
                    Direction::Forward => {
                        cpu::extend_heads(data, &mut record[PERM + n..PERM + n + m], job);
                        let front = PERM + record[FRONT] as usize;
                        record.swap(front, position);
                        record[FRONT] += 1;
                    }
                    Direction::Backward => {
                        cpu::extend_tails(data, &mut record[PERM + n + m..], job);
                        record[BACK] -= 1;
                        let back = PERM + record[BACK] as usize;
                        record.swap(back, position);
                    }
                }
                record[BOUND] = bounds[child];
                open.push(&record);
                nodes += 1;
            }
        }

        if let Some(report) = progress.as_deref_mut() {
            if last_report.elapsed() >= options.progress_interval {
                last_report = Instant::now();
                report(&Progress {
                    nodes,
                    leaves,
                    best: best_perm.is_some().then_some(best),
                    open: open.len(),
                    seconds: start.elapsed().as_secs_f64(),
                });
            }
        }
    }

    if let Some(perm) = &best_perm {
        check_schedule(data, perm, best, "search")?;
    }
    let finished = stopped.is_none();
    Ok(Solution {
        makespan: best_perm.is_some().then_some(best),
        optimal: finished && best_perm.is_some(),
        proven_lower_bound: finished.then_some(best),
        permutation: best_perm.unwrap_or_default(),
        stopped,
        start_makespan,
        start_permutation,
        heuristic_seconds,
        nodes,
        leaves,
        seconds: start.elapsed().as_secs_f64(),
        bounding_seconds: waited.as_secs_f64(),
    })
}

/// Fails unless `perm` is a complete schedule whose makespan, recomputed from the
/// processing times, is `value` (a wrong schedule is never reported).
fn check_schedule(data: &BoundData, perm: &[usize], value: u32, source: &str) -> Result<()> {
    let recomputed = cpu::permutation_makespan(data.jobs, data.machines, &data.ptimes, perm)?;
    if recomputed != value {
        return Err(Error::invalid(
            "search result",
            format!(
                "the {source} recorded makespan {value} for a schedule whose makespan is {recomputed}; \
                 this is a bug in simtlab, please report it with the command line"
            ),
        ));
    }
    Ok(())
}

/// A pool with the records of its parents and, per child, the position of its job in the
/// parent's permutation.
struct Batch {
    pool: Pool,
    parents: Vec<u32>,
    child_positions: Vec<usize>,
}

impl Batch {
    fn new(data: &BoundData, record_words: usize) -> Self {
        Self {
            pool: Pool::for_data(data),
            // grows as the pools fill; a large pool size reserves no more than 4 MiB up front
            parents: Vec::with_capacity(record_words.min(1 << 20)),
            child_positions: Vec::new(),
        }
    }
}

/// Dynamic branching (Gmys et al.'s MinBranch rule): branch in the second direction when it
/// keeps fewer children below the incumbent `best`, or as many with a larger sum of bounds
/// (children closer to pruning). Bounds are clamped at `best`, the only part every bounder
/// computes exactly, so the choice and the node counts do not depend on the bounder.
fn prefer_second(first: &[u32], second: &[u32], best: u32) -> bool {
    let rank = |bounds: &[u32]| {
        let kept = bounds.iter().filter(|&&b| b < best).count();
        let sum: u64 = bounds.iter().map(|&b| u64::from(b.min(best))).sum();
        (kept, std::cmp::Reverse(sum))
    };
    rank(second) < rank(first)
}

/// Machine idle time added by the child's job: waiting after the prefix (heads, forward
/// children) or, mirror-wise, before the suffix (tails, backward children).
fn idle_time(data: &BoundData, ends: &[u32], job: usize, direction: Direction) -> u32 {
    let m = data.machines;
    let (mut finish, mut idle) = (0u32, 0u32);
    let mut visit = |ready: u32, k: usize| {
        let start = finish.max(ready);
        idle += start - ready;
        finish = start + data.time(k, job);
    };
    match direction {
        Direction::Forward => (0..m).for_each(|k| visit(ends[k], k)),
        Direction::Backward => (0..m).rev().for_each(|k| visit(ends[m + k], k)),
    }
    idle
}

/// Makespan of prefix, `job`, suffix, from the node's heads and tails (`ends`): the latest
/// machine k on which `job` completes at f'[k] and the suffix then needs b[k].
fn leaf_makespan(data: &BoundData, ends: &[u32], job: usize) -> u32 {
    let (heads, tails) = ends.split_at(data.machines);
    let (mut finish, mut makespan) = (0u32, 0u32);
    for (k, (&head, &tail)) in heads.iter().zip(tails).enumerate() {
        finish = finish.max(head) + data.time(k, job);
        makespan = makespan.max(finish + tail);
    }
    makespan
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Processing times of a small random instance (not Taillard's), times 1..=99.
    fn random_instance(jobs: usize, machines: usize, seed: u32) -> Instance {
        let p = taillard::generate(jobs, machines, seed).unwrap();
        Instance::new(format!("r{jobs}x{machines}"), jobs, machines, seed, p, 0, 0).unwrap()
    }

    #[test]
    fn instance_and_node_validation() {
        assert!(Instance::new("x", 2, 2, 1, vec![1; 3], 0, 0).is_err());
        assert!(Instance::new("x", 0, 2, 1, vec![], 0, 0).is_err());
        assert!(Instance::new("x", 1, 1, 1, vec![u32::MAX], 0, 0).is_err());
        assert!(Node::new(3, vec![0, 0], vec![]).is_err());
        assert!(Node::new(3, vec![0], vec![3]).is_err());
        let node = Node::new(4, vec![2], vec![0]).unwrap();
        assert_eq!(node.unscheduled, vec![1, 3]);
    }

    #[test]
    fn johnson_orders_solve_two_machine_problems() {
        // Pair (0, 1) of a 2-machine instance: Johnson's order is optimal, so the root LB2
        // equals the optimal makespan found by enumeration.
        let instance = random_instance(6, 2, 4242);
        let data = BoundData::new(&instance);
        let best = cpu::tests::brute_force(&instance, &[], &[]);
        assert_eq!(cpu::lb2_node(&data, &Node::root(6)), best);
        let order: Vec<usize> = data.johnson.iter().map(|&j| j as usize).collect();
        assert_eq!(makespan(&instance, &order).unwrap(), best);
    }

    #[test]
    fn pool_layout_and_validation() {
        let instance = random_instance(40, 3, 77);
        let data = BoundData::new(&instance);
        let mut pool = Pool::for_data(&data);
        assert_eq!((pool.mask_words(), pool.parent_stride()), (2, 11));
        let parent = pool
            .add_parent(&[1, 2, 3], &data.min_tails, &[0, 33, 39], &data)
            .unwrap();
        pool.add_child(parent, 33).unwrap();
        assert!(pool.add_child(parent, 1).is_err());
        assert!(pool.add_child(1, 0).is_err());
        assert!(pool
            .add_parent(&[1, 2], &data.min_tails, &[0], &data)
            .is_err());
        assert!(pool
            .add_parent(&[0; 3], &data.min_tails, &[40], &data)
            .is_err());
        assert_eq!(pool.unscheduled_mask(0), &[1, (1 << 1) | (1 << 7)]);
        let expected: Vec<u32> = (0..3)
            .map(|k| [0, 33, 39].iter().map(|&j| instance.time(k, j)).sum())
            .collect();
        assert_eq!(pool.remaining(0), expected.as_slice());
        let params = data.kernel_params(&pool).to_words();
        assert_eq!(params, [40, 3, 3, 1, 11, 2, 1, 0]);

        // Parents from nodes keep their prefix (for the prefix-walking kernels).
        assert_eq!(pool.prefix(0), None);
        let node = Node::new(40, vec![5, 2, 17], vec![9]).unwrap();
        let from_node = pool.add_node(&node, &data).unwrap() as usize;
        assert_eq!(pool.prefix(from_node), Some(&[5, 2, 17][..]));
        assert_eq!(pool.heads(from_node), cpu::heads(&data, &node.prefix).as_slice());
        assert_eq!(pool.tails(from_node), cpu::tails(&data, &node.suffix).as_slice());
        assert_eq!(pool.prefixes().len(), 2 * 41);
        assert!(pool.add_node(&Node { prefix: vec![1, 1], ..node }, &data).is_err());
    }

    #[test]
    fn neh_is_no_better_than_the_lower_bounds() {
        for number in [1, 11, 21, 31] {
            let instance = taillard(number).unwrap();
            let data = BoundData::new(&instance);
            let (value, order) = neh(&instance);
            assert_eq!(makespan(&instance, &order).unwrap(), value);
            assert!(
                value >= instance.upper_bound,
                "ta{number:03}: NEH {value} below the best known"
            );
            assert!(value >= cpu::lb2_node(&data, &Node::root(instance.jobs)));
        }
        // Published NEH value for ta001 (tie rules differ between papers; 1286 is the usual one).
        assert_eq!(neh(&taillard(1).unwrap()).0, 1286);
    }

    fn check_solution(instance: &Instance, solution: &Solution, optimum: u32) {
        assert!(solution.optimal);
        assert_eq!((solution.makespan, solution.proven_lower_bound, solution.stopped), (Some(optimum), Some(optimum), None));
        assert_eq!(makespan(instance, &solution.permutation).unwrap(), optimum);
    }

    #[test]
    fn small_instances_match_brute_force() {
        for (seed, bound, exploration, branching) in [
            (11, LowerBound::Lb1, Exploration::DepthFirst, Branching::Forward),
            (12, LowerBound::Lb2, Exploration::BreadthFirst, Branching::Forward),
            (13, LowerBound::Lb2, Exploration::DepthFirst, Branching::Forward),
            (14, LowerBound::Lb1, Exploration::DepthFirst, Branching::Bidirectional),
            (15, LowerBound::Lb2, Exploration::BreadthFirst, Branching::Bidirectional),
            (16, LowerBound::Lb2, Exploration::DepthFirst, Branching::Bidirectional),
        ] {
            let instance = random_instance(7, 4, seed);
            let optimum = cpu::tests::brute_force(&instance, &[], &[]);
            let options = SearchOptions {
                bound,
                exploration,
                branching,
                pool_size: 3,
                threads: 2,
                ..Default::default()
            };
            let solution = solve(&instance, &options).unwrap();
            check_solution(&instance, &solution, optimum);
        }
    }

    #[test]
    fn solves_ta001_to_optimality() {
        let instance = taillard(1).unwrap();
        let options = SearchOptions {
            bound: LowerBound::Lb2,
            pool_size: 64,
            ..Default::default()
        };
        let solution = solve(&instance, &options).unwrap();
        check_solution(&instance, &solution, 1278);
        eprintln!(
            "ta001 LB2 DFS from iterated greedy: {} nodes, {} leaves, {:.3} s",
            solution.nodes, solution.leaves, solution.seconds
        );
        assert!(solution.heuristic_seconds <= solution.seconds);

        // Iterated greedy finds the optimum here and LB2 prunes every child of the root; from
        // NEH alone the search has to find it.
        let neh_only = SearchOptions {
            heuristic: IteratedGreedy { iterations: Some(0), ..IteratedGreedy::default() },
            ..options
        };
        let from_neh = solve(&instance, &neh_only).unwrap();
        check_solution(&instance, &from_neh, 1278);
        assert_eq!(from_neh.start_makespan, 1286);
        assert_eq!(solution.start_makespan, 1278);
        assert_eq!(solution.nodes, 0);
        assert!(from_neh.nodes > 0);
    }

    #[test]
    fn node_counts_do_not_depend_on_exploration_order() {
        for (instance, bound) in [
            (taillard(4).unwrap(), LowerBound::Lb2),
            (random_instance(11, 4, 7), LowerBound::Lb1),
        ] {
            let optimum = solve(&instance, &SearchOptions::default())
                .unwrap()
                .makespan
                .unwrap();
            let mut trees = Vec::new();
            for branching in [Branching::Forward, Branching::Bidirectional] {
                let mut counts = Vec::new();
                for (exploration, pool_size, overlap) in [
                    (Exploration::DepthFirst, 1, true),
                    (Exploration::DepthFirst, 100, true),
                    (Exploration::DepthFirst, 100, false),
                    (Exploration::BreadthFirst, 37, true),
                ] {
                    let options = SearchOptions {
                        bound,
                        exploration,
                        branching,
                        overlap,
                        pool_size,
                        upper_bound: Some(optimum),
                        ..Default::default()
                    };
                    let solution = solve(&instance, &options).unwrap();
                    // From the optimum as upper bound: proven, and the schedule (if the start
                    // heuristic had it) is optimal.
                    assert_eq!(solution.proven_lower_bound, Some(optimum));
                    assert!(solution.makespan.is_none_or(|v| v == optimum), "{solution:?}");
                    counts.push((solution.nodes, solution.leaves));
                }
                assert!(
                    counts.windows(2).all(|w| w[0] == w[1]),
                    "{} {branching:?}: {counts:?}",
                    instance.name
                );
                trees.push(counts[0].0);
            }
            // Branching where fewer children survive gives a smaller tree (r11x4's root
            // bound is already optimal: no nodes either way).
            assert!(trees[1] < trees[0] || trees == [0, 0], "{}: nodes forward/bidirectional {trees:?}", instance.name);
        }
    }

    #[test]
    fn dynamic_branching_prefers_fewer_survivors_then_larger_bounds() {
        assert!(prefer_second(&[5, 6, 9], &[5, 12, 12], 10));
        assert!(!prefer_second(&[5, 12, 12], &[5, 6, 9], 10));
        // same survivors: the larger sum of bounds (clamped at the incumbent) wins
        assert!(prefer_second(&[5, 6, 11], &[7, 6, 10], 10));
        assert!(!prefer_second(&[5, 6, 99], &[5, 6, 10], 10), "clamped: a tie keeps the first");
    }

    #[test]
    fn leaves_and_children_ends_follow_the_definitions() {
        let instance = random_instance(6, 4, 21);
        let data = BoundData::new(&instance);
        let (prefix, job, suffix) = (vec![3, 1], 4, vec![0, 5, 2]);
        let mut ends = cpu::heads(&data, &prefix);
        ends.extend(cpu::tails(&data, &suffix));
        let mut order = prefix.clone();
        order.push(job);
        order.extend(&suffix);
        assert_eq!(leaf_makespan(&data, &ends, job), makespan(&instance, &order).unwrap());
        // an empty prefix or suffix: the bounds' min heads / min tails extend exactly
        let mut root_heads = data.min_heads.clone();
        cpu::extend_heads(&data, &mut root_heads, job);
        assert_eq!(root_heads, cpu::heads(&data, &[job]));
        let mut root_tails = data.min_tails.clone();
        cpu::extend_tails(&data, &mut root_tails, job);
        assert_eq!(root_tails, cpu::tails(&data, &[job]));
        let mut tails = cpu::tails(&data, &suffix);
        cpu::extend_tails(&data, &mut tails, job);
        assert_eq!(tails, cpu::tails(&data, &[job, 0, 5, 2]));
    }

    #[test]
    fn limits_stop_the_search() {
        let instance = taillard(21).unwrap();
        let options = SearchOptions {
            node_limit: Some(500),
            bound: LowerBound::Lb1,
            ..Default::default()
        };
        let solution = solve(&instance, &options).unwrap();
        assert!(!solution.optimal);
        assert_eq!((solution.stopped, solution.proven_lower_bound), (Some(Stop::NodeLimit), None));
        assert!(solution.nodes >= 500);
        assert_eq!(
            Some(makespan(&instance, &solution.permutation).unwrap()),
            solution.makespan
        );

        let options = SearchOptions {
            time_limit: Some(Duration::ZERO),
            ..Default::default()
        };
        let solution = solve(&instance, &options).unwrap();
        assert!(!solution.optimal && solution.nodes == 0);
        assert_eq!(solution.stopped, Some(Stop::TimeLimit));

        // A bound below the optimum: the search finishes without any schedule, which proves
        // only that none is better than the bound. The start schedule is still reported.
        let small = random_instance(6, 3, 5);
        let optimum = cpu::tests::brute_force(&small, &[], &[]);
        for ub in [0, 1, optimum - 1] {
            let options = SearchOptions { upper_bound: Some(ub), ..Default::default() };
            let solution = solve(&small, &options).unwrap();
            assert_eq!((solution.makespan, solution.optimal), (None, false), "--ub {ub}");
            assert_eq!((solution.proven_lower_bound, solution.stopped), (Some(ub), None), "--ub {ub}");
            assert!(solution.permutation.is_empty());
            assert_eq!(makespan(&small, &solution.start_permutation).unwrap(), solution.start_makespan);
        }
        // A bound the start schedule already meets: its schedule is the incumbent.
        let options = SearchOptions { upper_bound: Some(optimum), ..Default::default() };
        check_solution(&small, &solve(&small, &options).unwrap(), optimum);
        for pool_size in [0, MAX_POOL + 1, usize::MAX] {
            let err = solve(&small, &SearchOptions { pool_size, ..Default::default() }).unwrap_err();
            assert!(err.to_string().contains("pool size"), "{err}");
        }
    }

    #[test]
    fn shaders_validate_with_naga() {
        use crate::gpu::shader;
        for bound in [LowerBound::Lb1, LowerBound::Lb2] {
            let path = format!("flowshop/{}.wgsl", bound.entry_point());
            assert_eq!(
                shader::declared_variants(bound.wgsl()),
                ["BRANCHLESS", "PROBE", "WALK_PREFIX"]
            );
            let mut variants = Vec::new();
            for defines in [&[][..], &["BRANCHLESS"][..], &["WALK_PREFIX"][..]] {
                let source = shader::preprocess(&path, defines).unwrap();
                let (module, info) =
                    shader::validate(&source).unwrap_or_else(|e| panic!("{path} {defines:?}: {e}"));
                for mapping in [gpu::ThreadMapping::PerChild, gpu::ThreadMapping::PerParent] {
                    let name = mapping.entry_point(bound);
                    let index = module
                        .entry_points
                        .iter()
                        .position(|e| e.name == name)
                        .expect("entry point");
                    assert_eq!(module.entry_points[index].workgroup_size, [WORKGROUP_SIZE, 1, 1]);
                    let uses = info.get_entry_point(index);
                    let storage = module
                        .global_variables
                        .iter()
                        .filter(|(h, v)| {
                            !uses[*h].is_empty()
                                && matches!(v.space, naga::AddressSpace::Storage { .. })
                        })
                        .count() as u32;
                    // offsets (per parent), prefixes (prefix walk)
                    let extra = (mapping == gpu::ThreadMapping::PerParent) as u32
                        + defines.contains(&"WALK_PREFIX") as u32;
                    assert_eq!(storage, bound.storage_buffers() + extra, "{name}");
                }
                variants.push(source.text);
            }
            assert_ne!(variants[0], variants[1], "{bound:?}: BRANCHLESS changes nothing");
            assert_ne!(variants[0], variants[2], "{bound:?}: WALK_PREFIX changes nothing");
        }
    }

    struct WrongLength;
    impl Bounder for WrongLength {
        fn bound(&mut self, _pool: &Pool) -> Result<Vec<u32>> {
            Ok(vec![0])
        }
    }

    #[test]
    fn progress_and_bounder_errors() {
        let instance = taillard(11).unwrap();
        let data = BoundData::new(&instance);
        let mut reports = Vec::new();
        let mut record = |p: &Progress| reports.push(*p);
        let options = SearchOptions {
            progress_interval: Duration::ZERO,
            node_limit: Some(2000),
            bound: LowerBound::Lb1,
            ..Default::default()
        };
        let mut bounder = CpuBounder::new(&data, LowerBound::Lb1, 1);
        let solution = solve_with(&data, &options, &mut bounder, Some(&mut record)).unwrap();
        assert!(!reports.is_empty());
        assert!(reports.iter().all(|r| r.best.is_some()), "no --ub: the start schedule counts");
        assert!(reports
            .windows(2)
            .all(|w| w[0].nodes <= w[1].nodes && w[0].best >= w[1].best));
        assert!(reports.last().unwrap().nodes <= solution.nodes);
        let json = serde_json::to_string(&solution).unwrap();
        assert!(json.contains("\"optimal\":false"));

        let err = solve_with(&data, &options, &mut WrongLength, None).unwrap_err();
        assert!(err.to_string().contains("bounds for"), "{err}");
    }
}
