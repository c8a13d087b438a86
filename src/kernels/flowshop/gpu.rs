//! GPU bounding of pools: [`GpuBounder`] runs `shaders/flowshop/lb1.wgsl` / `lb2.wgsl` on a
//! [`Gpu`] and returns the same values as [`super::cpu::lb1`] / [`super::cpu::lb2`].
//!
//! Instance data (processing times, machine pairs, lags, Johnson orders) is uploaded once;
//! the pool buffers are reused across pools and grown (to the next power of two) when a
//! larger pool arrives, so a search does not allocate per iteration. Pools of more than
//! `64 × max_compute_workgroups_per_dimension` threads use a 2-D dispatch.

use crate::gpu::shader::{registry, Entry};
use std::sync::Arc;

use super::{BoundData, LowerBound, Pool, WORKGROUP_SIZE};
use crate::divergence::{ProbeLayout, PROBE_BINDING};
use crate::error::{Error, Result};
use crate::gpu::{Bind, BufferKind, Gpu, GpuBuffer, Kernel, Step};
use crate::harness::{named, Named};
#[cfg(not(target_arch = "wasm32"))]
use {
    super::{Bounder, Started},
    crate::divergence::Divergence,
    crate::gpu::{PendingRead, Timing},
};

/// Sites counted by the probe in each kernel (`PROBE_SITES` in the WGSL files).
fn probe_sites(bound: LowerBound) -> usize {
    match bound {
        LowerBound::Lb1 => 6,
        LowerBound::Lb2 => 4,
    }
}

/// Which work one GPU thread does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ThreadMapping {
    /// One thread per (parent, job) child: every thread does the same amount of work.
    #[default]
    PerChild,
    /// One thread per parent node, bounding its children one after the other (the paper's
    /// "one thread per node"): the trip count is the parent's number of children, which
    /// differs between tree levels. Needs the children of each parent to be contiguous in
    /// the pool, as the search driver builds them.
    PerParent,
}

named!(ThreadMapping { PerChild => "per-child", PerParent => "per-parent" });

impl ThreadMapping {
    /// Entry point of the `bound` kernel for this mapping.
    pub fn entry_point(self, bound: LowerBound) -> Entry {
        match (self, bound) {
            (ThreadMapping::PerChild, LowerBound::Lb1) => registry::flowshop::lb1::LB1,
            (ThreadMapping::PerChild, LowerBound::Lb2) => registry::flowshop::lb2::LB2,
            (ThreadMapping::PerParent, LowerBound::Lb1) => registry::flowshop::lb1::LB1_PER_PARENT,
            (ThreadMapping::PerParent, LowerBound::Lb2) => registry::flowshop::lb2::LB2_PER_PARENT,
        }
    }
}

/// Options of a [`GpuBounder`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct GpuBoundOptions {
    /// Lower bound the kernel computes.
    pub bound: LowerBound,
    /// The branch-refactored kernel (`BRANCHLESS`): max()/select() instead of data-dependent ifs.
    pub branchless: bool,
    /// Count divergent branches with the subgroup probe (needs subgroups); read the counts
    /// of the last pool with [`GpuBounder::divergence`]. Slows the kernel down: time
    /// without it.
    pub probe: bool,
    /// Threads per child or per parent.
    pub mapping: ThreadMapping,
    /// The paper's kernel (`WALK_PREFIX`): each thread computes its parent's heads by
    /// walking the prefix, a loop as long as the node is deep, instead of reading them from
    /// the parent record. Needs pools whose parents carry their prefix ([`Pool::add_node`],
    /// the search driver's pools).
    #[serde(default)]
    pub walk_prefix: bool,
}

impl GpuBoundOptions {
    /// Short label, e.g. `lb2 branchless per-child`.
    pub fn label(&self) -> String {
        format!(
            "{} {} {}{}",
            self.bound.entry_point(),
            if self.branchless { "branchless" } else { "basic" },
            self.mapping.name(),
            if self.walk_prefix { " walk-prefix" } else { "" }
        )
    }
}

/// A buffer that keeps its allocation while pools fit.
#[derive(Debug)]
struct Growable {
    label: &'static str,
    buffer: GpuBuffer<u32>,
}

impl Growable {
    fn new(gpu: &Gpu, label: &'static str) -> Result<Self> {
        Ok(Self { label, buffer: gpu.buffer_zeroed(label, 1, BufferKind::Storage)? })
    }

    /// Makes room for `words` values; true when the buffer was replaced.
    fn reserve(&mut self, gpu: &Gpu, words: usize) -> Result<bool> {
        if words <= self.buffer.len {
            return Ok(false);
        }
        let limit = (gpu.caps().max_storage_buffer_binding_size.min(gpu.caps().max_buffer_size) / 4) as usize;
        // Round up to a power of two while it fits, so a growing search reallocates rarely.
        let len = words.next_power_of_two().min(limit).max(words);
        self.buffer = gpu.buffer_zeroed(self.label, len, BufferKind::Storage)?;
        Ok(true)
    }
}

/// The bounding kernel with the instance uploaded and buffers sized for a pool: what a
/// [`GpuBounder`] reuses pool after pool, and what a recorded pool keeps.
#[derive(Debug)]
pub(crate) struct PoolKernel {
    options: GpuBoundOptions,
    jobs: usize,
    machines: usize,
    pairs: usize,
    kernel: Arc<Kernel>,
    params: GpuBuffer<u32>,
    // Instance data, uploaded once (one-word placeholders for lb1 and pair-less instances).
    ptimes: GpuBuffer<u32>,
    pair_list: GpuBuffer<u32>,
    sequences: GpuBuffer<u32>,
    parents: Growable,
    children: Growable,
    bounds: Growable,
    offsets: Growable,
    prefixes: Growable,
    probe: Option<(Growable, u32)>,
    bind: Option<wgpu::BindGroup>,
    offsets_host: Vec<u32>,
}

/// Bounds pools on the GPU. Implements [`Bounder`], so it drops into [`super::solve_with`].
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug)]
pub struct GpuBounder<'g> {
    gpu: &'g Gpu,
    kernel: PoolKernel,
    /// Mappable copy of the bounds for pools run with [`Bounder::start`].
    readback: Option<wgpu::Buffer>,
    pending: Option<PendingBounds>,
    last_timing: Option<Timing>,
    last_divergence: Option<Divergence>,
    pools: u64,
    bounded: u64,
    kernel_seconds: f64,
}

#[cfg(not(target_arch = "wasm32"))]
impl<'g> GpuBounder<'g> {
    /// Uploads the instance data and compiles the kernel. Fails for more than
    /// [`super::GPU_MAX_MACHINES`] machines, for buffers beyond the device's limits, and for
    /// `probe` on a device without subgroups.
    pub fn new(gpu: &'g Gpu, data: &BoundData, options: GpuBoundOptions) -> Result<Self> {
        Ok(Self {
            gpu,
            kernel: PoolKernel::new(gpu, data, options)?,
            readback: None,
            pending: None,
            last_timing: None,
            last_divergence: None,
            pools: 0,
            bounded: 0,
            kernel_seconds: 0.0,
        })
    }

    /// The options the bounder was built with.
    pub fn options(&self) -> GpuBoundOptions {
        self.kernel.options
    }

    /// Kernel time of the last pool (device timestamps when the adapter has them).
    pub fn last_timing(&self) -> Option<Timing> {
        self.last_timing
    }

    /// Probe counts of the last pool (None without [`GpuBoundOptions::probe`]).
    pub fn divergence(&self) -> Option<&Divergence> {
        self.last_divergence.as_ref()
    }

    /// Pools bounded, children bounded, and the summed kernel time (of the pools bounded
    /// with [`Bounder::bound`] / [`Bounder::bound_below`]; started pools are not timed).
    pub fn totals(&self) -> (u64, u64, f64) {
        (self.pools, self.bounded, self.kernel_seconds)
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Bounder for GpuBounder<'_> {
    fn bound(&mut self, pool: &Pool) -> Result<Vec<u32>> {
        self.bound_pruning_at(pool, 0)
    }

    fn bound_below(&mut self, pool: &Pool, incumbent: u32) -> Result<Vec<u32>> {
        self.bound_pruning_at(pool, incumbent)
    }

    /// Uploads `pool`, records the kernel and the copy of its bounds into a mappable buffer,
    /// submits them and returns without waiting (probed bounders bound at once, as their
    /// counts are read per pool).
    fn start(&mut self, pool: &Pool, incumbent: u32) -> Result<Started> {
        if self.kernel.probe.is_some() || pool.child_count() == 0 {
            return Ok(Started::Done(self.bound_pruning_at(pool, incumbent)?));
        }
        self.finish_pending()?;
        let Some((grid, _)) = self.kernel.prepare(self.gpu, pool, incumbent)? else {
            return Ok(Started::Done(Vec::new()));
        };
        let gpu = self.gpu;
        let bytes = 4 * pool.child_count() as u64;
        if self.readback.as_ref().is_none_or(|b| b.size() < bytes) {
            self.readback = Some(gpu.readback_buffer("flowshop bounds readback", bytes.next_power_of_two()));
        }
        let readback = self.readback.as_ref().expect("made above");
        let encoder = gpu.encode(&[self.kernel.dispatch(grid)?]);
        let read = gpu.submit_read(encoder, self.kernel.bounds(), readback, bytes)?;
        self.pending = Some(PendingBounds { read, count: pool.child_count() });
        Ok(Started::Running)
    }

    fn finish(&mut self) -> Result<Vec<u32>> {
        let pending = self.pending.take().ok_or_else(|| Error::invalid("flow-shop bounder", "finish() without a running start()"))?;
        let bounds = bytemuck::pod_collect_to_vec(&pending.read.finish(self.gpu)?);
        self.pools += 1;
        self.bounded += pending.count as u64;
        Ok(bounds)
    }
}

/// A pool started on the GPU whose bounds are not read yet.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug)]
struct PendingBounds {
    read: PendingRead,
    count: usize,
}

#[cfg(not(target_arch = "wasm32"))]
impl GpuBounder<'_> {
    /// Bounds `pool`; with `prune_at` > 0, LB2 threads stop at the first machine pair whose
    /// bound reaches it.
    fn bound_pruning_at(&mut self, pool: &Pool, prune_at: u32) -> Result<Vec<u32>> {
        self.finish_pending()?;
        let Some((grid, layout)) = self.kernel.prepare(self.gpu, pool, prune_at)? else {
            return Ok(Vec::new());
        };
        let gpu = self.gpu;
        let count = pool.child_count();
        // once: a pool's bounds are used, and a search pays for one run
        let timing = gpu.run_once(&[self.kernel.dispatch(grid)?], true)?;
        let raw = gpu.read_bytes(self.kernel.bounds(), 4 * count as u64)?;
        let bounds: Vec<u32> = bytemuck::pod_collect_to_vec(&raw);

        self.last_divergence = match (&self.kernel.probe, layout) {
            (Some((records, _)), Some(layout)) => {
                let raw = gpu.read_bytes(&records.buffer.buffer, 4 * layout.words() as u64)?;
                Some(layout.decode(&bytemuck::pod_collect_to_vec(&raw)))
            }
            _ => None,
        };
        self.last_timing = Some(timing);
        self.pools += 1;
        self.bounded += count as u64;
        self.kernel_seconds += timing.seconds;
        Ok(bounds)
    }

    /// Waits for a started pool nobody collected (its buffers are about to be overwritten).
    fn finish_pending(&mut self) -> Result<()> {
        if self.pending.is_some() {
            self.finish()?;
        }
        Ok(())
    }
}

impl PoolKernel {
    /// Compiles the kernel of `options` and uploads the instance data.
    pub(crate) fn new(gpu: &Gpu, data: &BoundData, options: GpuBoundOptions) -> Result<Self> {
        data.check_gpu()?;
        let subgroup = if options.probe { Some(gpu.require_subgroups()?) } else { None };
        let mut defines = Vec::new();
        if options.branchless {
            defines.push("BRANCHLESS");
        }
        if subgroup.is_some() {
            defines.push("PROBE");
        }
        if options.walk_prefix {
            defines.push("WALK_PREFIX");
        }
        let kernel = gpu.kernel(options.mapping.entry_point(options.bound), &defines)?;
        let upload = |label: &str, words: &[u32]| -> Result<GpuBuffer<u32>> {
            let placeholder = [0u32];
            gpu.buffer(label, if words.is_empty() { &placeholder } else { words }, BufferKind::Storage)
        };
        let lb2 = options.bound == LowerBound::Lb2;
        let none: &[u32] = &[];
        Ok(Self {
            options,
            jobs: data.jobs,
            machines: data.machines,
            pairs: data.pair_count(),
            kernel,
            params: gpu.buffer_zeroed("flowshop params", 8, BufferKind::Uniform)?,
            ptimes: upload("flowshop ptimes", &data.ptimes)?,
            pair_list: upload("flowshop pairs", if lb2 { &data.pairs } else { none })?,
            sequences: upload("flowshop sequences", if lb2 { &data.sequences } else { none })?,
            parents: Growable::new(gpu, "flowshop parents")?,
            children: Growable::new(gpu, "flowshop children")?,
            bounds: Growable::new(gpu, "flowshop bounds")?,
            offsets: Growable::new(gpu, "flowshop offsets")?,
            prefixes: Growable::new(gpu, "flowshop prefixes")?,
            probe: match subgroup {
                Some(width) => Some((Growable::new(gpu, "flowshop probe records")?, width)),
                None => None,
            },
            bind: None,
            offsets_host: Vec::new(),
        })
    }

    /// The kernel's dispatch over the pool last prepared.
    pub(crate) fn dispatch(&self, grid: [u32; 3]) -> Result<Step<'_>> {
        let bind = self.bind.as_ref().ok_or_else(|| Error::gpu("flowshop bounding", "no bind group"))?;
        Ok(Step::dispatch(&self.kernel, bind, grid))
    }

    /// The buffer the bounds of the pool last prepared are written to.
    pub(crate) fn bounds(&self) -> &wgpu::Buffer {
        &self.bounds.buffer.buffer
    }

    /// Child ranges per parent for the per-parent kernel; errors when a parent's children
    /// are not contiguous and in parent order.
    fn fill_offsets(&mut self, pool: &Pool) -> Result<()> {
        let parents = pool.parent_count();
        self.offsets_host.clear();
        self.offsets_host.resize(parents + 1, 0);
        let mut previous = 0usize;
        for child in 0..pool.child_count() {
            let (parent, _) = pool.child(child);
            if parent < previous {
                return Err(Error::invalid(
                    "pool for the per-parent kernel",
                    format!(
                        "child {child} belongs to parent {parent} after a child of parent {previous}; \
                         children must be grouped by parent in parent order (use the per-child mapping)"
                    ),
                ));
            }
            previous = parent;
            self.offsets_host[parent + 1] += 1;
        }
        for p in 0..parents {
            self.offsets_host[p + 1] += self.offsets_host[p];
        }
        Ok(())
    }

    fn check_pool(&self, pool: &Pool) -> Result<()> {
        if self.options.walk_prefix {
            if let Some(parent) = (0..pool.parent_count()).find(|&p| pool.prefix(p).is_none()) {
                return Err(Error::invalid(
                    "pool for the prefix-walking kernel",
                    format!("parent {parent} was added without its prefix: add parents with Pool::add_node"),
                ));
            }
        }
        if pool.jobs() != self.jobs || pool.machines() != self.machines {
            return Err(Error::invalid(
                "pool",
                format!(
                    "{} jobs × {} machines, but the bounder holds an instance of {} × {}",
                    pool.jobs(),
                    pool.machines(),
                    self.jobs,
                    self.machines
                ),
            ));
        }
        let count = pool.child_count() as u64;
        if count >= u32::MAX as u64 || pool.parents().len() as u64 >= u32::MAX as u64 {
            return Err(Error::Limit {
                what: "children in one pool".into(),
                requested: count,
                limit: u32::MAX as u64 - 1,
                hint: "use smaller pools".into(),
            });
        }
        Ok(())
    }

    /// Checks `pool`, sizes the buffers and uploads the pool and the kernel parameters.
    /// Returns the dispatch grid and the probe layout, or None for an empty pool.
    pub(crate) fn prepare(&mut self, gpu: &Gpu, pool: &Pool, prune_at: u32) -> Result<Option<([u32; 3], Option<ProbeLayout>)>> {
        self.check_pool(pool)?;
        let count = pool.child_count();
        if count == 0 {
            return Ok(None);
        }
        let per_parent = self.options.mapping == ThreadMapping::PerParent;
        if per_parent {
            self.fill_offsets(pool)?;
        }
        let threads = if per_parent { pool.parent_count() } else { count };
        let grid = gpu.grid(threads as u64, WORKGROUP_SIZE)?;
        if let Some(limit) = gpu.loop_iteration_limit() {
            // Inner-loop iterations of the busiest thread: per child, the heads loop and (LB2)
            // one walk over the jobs per machine pair.
            let pair_walks = if self.options.bound == LowerBound::Lb2 { self.pairs * self.jobs } else { 0 };
            let prefix_walk = if self.options.walk_prefix { self.jobs * self.machines } else { 0 };
            let per_child = (self.machines + pair_walks + prefix_walk) as u64;
            let children = if per_parent { self.offsets_host.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0) as u64 } else { 1 };
            if per_child * children > limit {
                return Err(Error::Limit {
                    what: format!("loop iterations per {} thread on {}", self.options.label(), gpu.adapter_name()),
                    requested: per_child * children,
                    limit,
                    hint: format!(
                        "this driver cuts longer loops short, which would give wrong bounds: use a GPU driver, \
                         the CPU (`device=cpu`){}",
                        if per_parent { ", or the per-child mapping" } else { " or LB1" }
                    ),
                });
            }
        }

        let mut rebind = self.bind.is_none();
        rebind |= self.parents.reserve(gpu, pool.parents().len())?;
        rebind |= self.children.reserve(gpu, pool.children().len())?;
        rebind |= self.bounds.reserve(gpu, count)?;
        if per_parent {
            rebind |= self.offsets.reserve(gpu, self.offsets_host.len())?;
        }
        if self.options.walk_prefix {
            rebind |= self.prefixes.reserve(gpu, pool.prefixes().len())?;
        }
        let layout = self.probe.as_ref().map(|(_, width)| {
            let workgroups = grid[0] as usize * grid[1] as usize;
            ProbeLayout::new(probe_sites(self.options.bound), workgroups, WORKGROUP_SIZE, *width)
        });
        if let (Some((records, _)), Some(layout)) = (self.probe.as_mut(), layout) {
            rebind |= records.reserve(gpu, layout.words())?;
        }
        if rebind {
            // LB2's bindings are LB1's (`#import flowshop_pool`) and its own pair tables
            use registry::flowshop::lb2::binding as slot;
            let mut slots: Vec<(u32, &dyn Bind)> = vec![
                (slot::PARAMS, &self.params),
                (slot::PTIMES, &self.ptimes),
                (slot::PARENTS, &self.parents.buffer),
                (slot::CHILDREN, &self.children.buffer),
                (slot::BOUNDS, &self.bounds.buffer),
                (slot::PAIRS, &self.pair_list),
                (slot::SEQUENCES, &self.sequences),
                (slot::OFFSETS, &self.offsets.buffer),
                (slot::PREFIXES, &self.prefixes.buffer),
            ];
            if let Some((records, _)) = &self.probe {
                slots.push((PROBE_BINDING, &records.buffer));
            }
            self.bind = Some(self.kernel.bind_at(gpu, &slots)?);
        }

        let params = super::KernelParams::new(self.jobs, self.machines, self.pairs, pool, prune_at);
        gpu.write(&self.params, &params.to_words())?;
        gpu.write(&self.parents.buffer, pool.parents())?;
        gpu.write(&self.children.buffer, pool.children())?;
        if per_parent {
            gpu.write(&self.offsets.buffer, &self.offsets_host)?;
        }
        if self.options.walk_prefix {
            gpu.write(&self.prefixes.buffer, pool.prefixes())?;
        }
        Ok(Some((grid, layout)))
    }
}
