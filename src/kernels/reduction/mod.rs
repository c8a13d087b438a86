//! Reduction (Zhang 5.5): the sum of an f32 array by a tree in workgroup memory.
//!
//! - `interleaved` (org): `if (tid % 2s == 0)` at level s: every warp diverges at every level.
//! - `interleaved` + REMAP (redirect): the paper's newIDArray (even ids first, then odd ones,
//!   i.e. [`remap::redirect_index_of`] by `tid % 2`) replaces tid except in the load, so the
//!   first level runs in whole warps and half the warps never diverge.
//! - `sequential`: the non-divergent addressing of the SDK (the algorithmic fix).
//! - `fast`: vec4 loads, many elements per thread, subgroupAdd when available: the ceiling.

pub mod cpu;

use crate::divergence::{self, Divergence, ProbeRecords};
use crate::error::{Error, Result};
use crate::gpu::shader::{registry, Entry};
use crate::gpu::PreparedRun;
use crate::gpu::{BufferKind, Gpu, GpuBuffer, Kernel, Step};
use crate::harness::footprint::{bytes, Footprint};
use crate::harness::Check;
use crate::remap;
use crate::rng::Rng;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
#[cfg(not(target_arch = "wasm32"))]
use {
    crate::divergence::{DivergenceReport, ProbeLayout, EMULATION_WIDTH},
    crate::harness::{self, Protocol, Record, Throughput},
    crate::remap::{VariantRun, Variants},
};

/// Invocations per workgroup of every reduction kernel.
pub const WORKGROUP_SIZE: u32 = 256;
/// Tree levels = probe sites of the tree kernels.
pub const LEVELS: usize = WORKGROUP_SIZE.trailing_zeros() as usize;
/// Relative tolerance of the f32 sums against the f64 reference.
pub const TOLERANCE: f64 = 1e-5;
/// Most workgroups of the first `fast` pass (the second pass sums their partials).
pub const FAST_MAX_GROUPS: usize = 1024;
/// Most workgroups an explicit `fast_groups` may ask for (1-D grid, multiple of 4).
pub const FAST_GROUPS_LIMIT: usize = 65532;
/// vec4 elements per thread the `fast` kernel aims for before adding workgroups.
pub const FAST_VEC4_PER_THREAD: usize = 16;
/// vec4 elements per thread of the `blocked` first pass (`PER` in fast.wgsl).
pub const BLOCKED_VEC4_PER_THREAD: usize = 8;

/// Which reduction kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReductionKernel {
    /// Tree with interleaved addressing (SDK kernel 0): every warp diverges at every level.
    Interleaved,
    /// Tree with sequential addressing (SDK kernel 2): only levels below the warp width diverge.
    Sequential,
    /// Bandwidth-bound: vec4 grid-stride loads, a subgroup (or workgroup-memory) sum per workgroup, a second pass over
    /// the partials.
    Fast,
    /// `fast` with a loop-free first pass over contiguous blocks.
    Blocked,
}

impl ReductionKernel {
    /// The WGSL entry point it runs.
    pub fn entry(self) -> Entry {
        match self {
            ReductionKernel::Interleaved => registry::reduction::interleaved::MAIN,
            ReductionKernel::Sequential => registry::reduction::sequential::MAIN,
            ReductionKernel::Fast | ReductionKernel::Blocked => registry::reduction::fast::MAIN,
        }
    }

    /// Name on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            ReductionKernel::Interleaved => "interleaved",
            ReductionKernel::Sequential => "sequential",
            ReductionKernel::Fast => "fast",
            ReductionKernel::Blocked => "blocked",
        }
    }
}

/// Size of one reduction.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReductionConfig {
    /// Elements.
    pub n: usize,
    /// Seed of the input values.
    pub seed: u64,
    /// Workgroups of the first `fast` pass; `None` picks [`fast_groups`] (tune per GPU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast_groups: Option<usize>,
}

impl ReductionConfig {
    /// Err ([`Error::Invalid`]) when `n` is outside 1..=2^32-4 or `fast_groups` outside 1..=[`FAST_GROUPS_LIMIT`].
    pub fn validate(&self) -> Result<()> {
        if self.n == 0 || self.n > (u32::MAX as usize) - 3 {
            return Err(Error::invalid("n", format!("{} reduction elements (use 1..=2^32-4)", self.n)));
        }
        if let Some(g) = self.fast_groups {
            if g == 0 || g > FAST_GROUPS_LIMIT {
                return Err(Error::invalid("reduction_groups", format!("{g} (use 1..={FAST_GROUPS_LIMIT})")));
            }
        }
        Ok(())
    }

    /// What a run allocates: the input (padded to vec4) on the device; the input, its padded
    /// copy and the partial sums on the host.
    pub fn footprint(&self) -> Footprint {
        Footprint::new("`n`", format!("reduction `n={}`", self.n))
            .device("reduction input", bytes(self.n.div_ceil(4), 16))
            .host(bytes(self.n, 12))
    }

    /// Workgroups of the first `fast` pass: the override rounded up to a multiple of 4 (the
    /// second pass reads the partials as vec4), or [`fast_groups`].
    pub fn fast_groups(&self) -> usize {
        self.fast_groups.map_or_else(|| fast_groups(self.n), |g| g.div_ceil(4) * 4)
    }

    /// Workgroups of the first `blocked` pass: one per block of 256 × 8 vec4.
    fn blocked_groups(&self) -> usize {
        self.n.div_ceil(4).div_ceil(WORKGROUP_SIZE as usize * BLOCKED_VEC4_PER_THREAD)
    }

    /// Workgroups of the first pass of the tree kernels.
    pub fn blocks(&self) -> usize {
        self.n.div_ceil(WORKGROUP_SIZE as usize)
    }
}

/// Values uniform in [0.5, 1.5) (never zeros); refused past the host memory limit.
pub fn generate(cfg: &ReductionConfig) -> Result<Vec<f32>> {
    cfg.validate()?;
    cfg.footprint().check_host()?;
    let mut rng = Rng::new(cfg.seed);
    Ok((0..cfg.n).map(|_| 0.5 + rng.next_f32()).collect())
}

/// Zhang's newIDArray for one workgroup: the redirection index by class `tid % 2`.
pub fn id_array() -> Vec<u32> {
    let classes: Vec<u32> = (0..WORKGROUP_SIZE).map(|t| t % 2).collect();
    remap::redirect_index_of(&classes, 2).expect("two classes")
}

/// Path vector of local thread `id` in a tree kernel: bit k = the condition at level k.
fn tree_path(kernel: ReductionKernel, id: u32) -> u32 {
    (0..LEVELS as u32)
        .map(|k| {
            let taken = match kernel {
                ReductionKernel::Interleaved => id.is_multiple_of(2 << k),
                ReductionKernel::Sequential => id < (WORKGROUP_SIZE / 2) >> k,
                ReductionKernel::Fast | ReductionKernel::Blocked => false,
            };
            (taken as u32) << k
        })
        .fold(0, |a, b| a | b)
}

/// Host emulation of the first pass at `width` (`id_array` for the redirected interleaved
/// kernel). `fast` has no divergent branch: its sites are empty.
pub fn emulate(kernel: ReductionKernel, cfg: &ReductionConfig, id_array: Option<&[u32]>, width: u32) -> Result<Divergence> {
    let (threads, sites) = match kernel {
        ReductionKernel::Fast => (cfg.fast_groups() * WORKGROUP_SIZE as usize, 0),
        ReductionKernel::Blocked => (cfg.blocked_groups() * WORKGROUP_SIZE as usize, 0),
        _ => (cfg.blocks() * WORKGROUP_SIZE as usize, LEVELS),
    };
    let block: Vec<u32> = (0..WORKGROUP_SIZE)
        .map(|t| match (kernel, id_array) {
            (ReductionKernel::Fast | ReductionKernel::Blocked, _) => 0,
            (_, Some(ids)) => tree_path(kernel, ids[t as usize]),
            (_, None) => tree_path(kernel, t),
        })
        .collect();
    let paths: Vec<u32> = (0..threads).map(|t| block[t % WORKGROUP_SIZE as usize]).collect();
    divergence::emulate_paths(&paths, sites, width)
}

/// Workgroups of the first `fast` pass for n elements: a multiple of 4 (the second pass reads
/// the partials as vec4), at most [`FAST_MAX_GROUPS`].
pub fn fast_groups(n: usize) -> usize {
    let n4 = n.div_ceil(4);
    let groups = n4.div_ceil(WORKGROUP_SIZE as usize * FAST_VEC4_PER_THREAD).clamp(1, FAST_MAX_GROUPS);
    groups.div_ceil(4) * 4
}

#[derive(Debug)]
struct Pass {
    kernel: Arc<Kernel>,
    bind: wgpu::BindGroup,
    grid: [u32; 3],
}

/// Uploaded input and the bound passes down to one value.
#[derive(Debug)]
pub struct Prepared {
    passes: Vec<Pass>,
    result: GpuBuffer<f32>,
    #[cfg_attr(target_arch = "wasm32", expect(dead_code, reason = "read back by the native divergence"))]
    probe: Option<ProbeRecords>,
    _keep: Vec<GpuBuffer<f32>>,
    _keep_other: Vec<Box<dyn crate::gpu::Bind>>,
}

impl Prepared {
    /// `id_array` (interleaved only) turns on the REMAP variant; `probe` probes the first pass
    /// of the tree kernels (`fast` has no probe sites).
    pub fn new(
        gpu: &Gpu,
        kernel: ReductionKernel,
        cfg: &ReductionConfig,
        input: &[f32],
        probe: bool,
        id_array: Option<&[u32]>,
    ) -> Result<Prepared> {
        cfg.validate()?;
        if input.len() != cfg.n {
            return Err(Error::invalid("reduction input", format!("{} values for n = {}", input.len(), cfg.n)));
        }
        if let Some(ids) = id_array {
            if kernel != ReductionKernel::Interleaved || ids.len() != WORKGROUP_SIZE as usize || ids.iter().any(|&i| i >= WORKGROUP_SIZE) {
                return Err(Error::invalid(
                    "id array",
                    format!("{WORKGROUP_SIZE} local ids < {WORKGROUP_SIZE}, for the interleaved kernel"),
                ));
            }
        }
        match kernel {
            ReductionKernel::Fast | ReductionKernel::Blocked => Self::new_fast(gpu, kernel, cfg, input),
            _ => Self::new_tree(gpu, kernel, input, probe, id_array),
        }
    }

    /// The tree kernels over `input` (checked by [`Prepared::new`]).
    fn new_tree(gpu: &Gpu, kernel: ReductionKernel, input: &[f32], probe: bool, id_array: Option<&[u32]>) -> Result<Prepared> {
        let width = if probe { Some(gpu.require_subgroups()?) } else { None };
        let mut keep = vec![gpu.buffer("reduction input", input, BufferKind::Storage)?];
        let mut keep_other: Vec<Box<dyn crate::gpu::Bind>> = Vec::new();
        let ids = id_array.map(|i| gpu.buffer("id array", i, BufferKind::Storage)).transpose()?;
        let mut passes = Vec::new();
        let mut probe_records = None;
        let mut n = input.len();
        let mut first = true;
        loop {
            let blocks = n.div_ceil(WORKGROUP_SIZE as usize);
            let mut defines = Vec::new();
            if first && width.is_some() {
                defines.push("PROBE");
            }
            if ids.is_some() {
                defines.push("REMAP");
            }
            let k = gpu.kernel(kernel.entry(), &defines)?;
            let grid = gpu.grid(n as u64, WORKGROUP_SIZE)?;
            let out = gpu.buffer_zeroed::<f32>("partial sums", blocks, BufferKind::Storage)?;
            let params = registry::shared::reduction_tree::Params { n: n as u32, blocks: blocks as u32, ..Default::default() };
            let params = gpu.buffer("params", &[params], BufferKind::Uniform)?;
            let records = if first { ProbeRecords::new(gpu, width, LEVELS, grid, WORKGROUP_SIZE)? } else { None };
            let src = keep.last().expect("input");
            // the tree kernels share their bindings (`#import reduction_tree`); ids are interleaved's
            use registry::shared::reduction_tree::binding as slot;
            let mut slots: Vec<(u32, &dyn crate::gpu::Bind)> = vec![(slot::INPUT, src), (slot::OUTPUT, &out), (slot::PARAMS, &params)];
            if let Some(i) = &ids {
                slots.push((registry::reduction::interleaved::binding::ID_ARRAY, i));
            }
            if let Some(r) = &records {
                slots.push(r.slot());
            }
            let bind = k.bind_at(gpu, &slots)?;
            passes.push(Pass { kernel: k, bind, grid });
            if first {
                probe_records = records;
            }
            keep.push(out);
            keep_other.push(Box::new(params));
            first = false;
            n = blocks;
            if n == 1 {
                break;
            }
        }
        keep_other.extend(ids.map(|i| Box::new(i) as Box<dyn crate::gpu::Bind>));
        let result = keep.pop().expect("a result buffer");
        Ok(Prepared { passes, result, probe: probe_records, _keep: keep, _keep_other: keep_other })
    }

    /// `fast` or `blocked`: a first pass to one partial per workgroup, then one `fast`
    /// workgroup over the partials.
    fn new_fast(gpu: &Gpu, kernel: ReductionKernel, cfg: &ReductionConfig, input: &[f32]) -> Result<Prepared> {
        let subgroups = gpu.caps().subgroup_size.is_some();
        let defines: &[&str] = if subgroups { &["SUBGROUPS"] } else { &[] };
        let k = gpu.kernel(ReductionKernel::Fast.entry(), defines)?;
        let n4 = cfg.n.div_ceil(4);
        let src = if cfg.n.is_multiple_of(4) {
            gpu.buffer("reduction input", input, BufferKind::Storage)?
        } else {
            let mut padded = input.to_vec();
            padded.resize(n4 * 4, 0.0);
            gpu.buffer("reduction input", &padded, BufferKind::Storage)?
        };
        let (first, groups, grid) = if kernel == ReductionKernel::Blocked {
            let groups = cfg.blocked_groups();
            let first = gpu.kernel(ReductionKernel::Blocked.entry(), if subgroups { &["SUBGROUPS", "BLOCKED"] } else { &["BLOCKED"] })?;
            (first, groups, gpu.grid((groups * WORKGROUP_SIZE as usize) as u64, WORKGROUP_SIZE)?)
        } else {
            let groups = cfg.fast_groups();
            (k.clone(), groups, [groups as u32, 1, 1])
        };
        // the second pass reads the partials as vec4: zeros pad them to a multiple of 4
        let partials = gpu.buffer_zeroed::<f32>("partial sums", groups.div_ceil(4) * 4, BufferKind::Storage)?;
        let result = gpu.buffer_zeroed::<f32>("sum", 1, BufferKind::Storage)?;
        let p1 = registry::reduction::fast::Params { n4: n4 as u32, blocks: groups as u32, ..Default::default() };
        let p1 = gpu.buffer("params", &[p1], BufferKind::Uniform)?;
        let p2 = registry::reduction::fast::Params { n4: groups.div_ceil(4) as u32, ..Default::default() };
        let p2 = gpu.buffer("params", &[p2], BufferKind::Uniform)?;
        use registry::reduction::fast::binding as slot;
        let b1 = first.bind_at(gpu, &[(slot::INPUT, &src), (slot::OUTPUT, &partials), (slot::PARAMS, &p1)])?;
        let b2 = k.bind_at(gpu, &[(slot::INPUT, &partials), (slot::OUTPUT, &result), (slot::PARAMS, &p2)])?;
        let passes = vec![Pass { kernel: first, bind: b1, grid }, Pass { kernel: k, bind: b2, grid: [1, 1, 1] }];
        Ok(Prepared { passes, result, probe: None, _keep: vec![src, partials], _keep_other: vec![Box::new(p1), Box::new(p2)] })
    }
}

impl PreparedRun for Prepared {
    /// Every pass.
    fn steps(&self) -> Vec<Step<'_>> {
        self.passes.iter().map(|p| Step::dispatch(&p.kernel, &p.bind, p.grid)).collect()
    }
    /// The sum, the first value of its buffer.
    fn outputs(&self) -> Vec<(&wgpu::Buffer, u64)> {
        vec![(&self.result.buffer, 4)]
    }
    /// The probe of the first pass (None when not probing or for `fast`).
    #[cfg(not(target_arch = "wasm32"))]
    fn divergence(&self, gpu: &Gpu) -> Result<Option<Divergence>> {
        divergence::read_probe(gpu, &self.probe)
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Prepared {
    /// The sum of the last dispatch.
    pub fn result(&self, gpu: &Gpu) -> Result<f32> {
        gpu.read(&self.result)?.first().copied().ok_or_else(|| Error::gpu("reduction", "empty result"))
    }
}

/// The probe of the first pass of a tree kernel (interleaved, with `id_array` or not, or
/// sequential) over `input`, dispatched in chunks of whole workgroups whose probe records fit
/// one storage binding of the adapter (8 sites × 4 words per subgroup: at subgroup width 8,
/// 16 bytes per element, 4× the input). The chunks' probes join in order, as one run over the
/// whole grid would have counted them. Returns the divergence and the number of chunks.
#[cfg(not(target_arch = "wasm32"))]
pub fn probe_first_pass(
    gpu: &Gpu,
    kernel: ReductionKernel,
    cfg: &ReductionConfig,
    input: &[f32],
    id_array: Option<&[u32]>,
) -> Result<(Divergence, usize)> {
    let width = gpu.require_subgroups()?;
    let per_group = ProbeLayout::new(LEVELS, 1, WORKGROUP_SIZE, width).words() as u64 * 4;
    let limit = gpu.caps().max_storage_buffer_binding_size.min(gpu.caps().max_buffer_size);
    probe_in_chunks(gpu, kernel, cfg, input, id_array, (limit / per_group).max(1) as usize)
}

/// [`probe_first_pass`] with at most `chunk_groups` workgroups per chunk.
#[cfg(not(target_arch = "wasm32"))]
pub fn probe_in_chunks(
    gpu: &Gpu,
    kernel: ReductionKernel,
    cfg: &ReductionConfig,
    input: &[f32],
    id_array: Option<&[u32]>,
    chunk_groups: usize,
) -> Result<(Divergence, usize)> {
    if !matches!(kernel, ReductionKernel::Interleaved | ReductionKernel::Sequential) {
        return Err(Error::invalid("reduction probe", format!("the {} kernel has no divergent branch to probe", kernel.name())));
    }
    if chunk_groups == 0 {
        return Err(Error::invalid("probe chunk", "0 workgroups (use at least 1)"));
    }
    let mut parts = Vec::new();
    for slice in input.chunks(chunk_groups.saturating_mul(WORKGROUP_SIZE as usize)) {
        let chunk = ReductionConfig { n: slice.len(), ..cfg.clone() };
        let run = Prepared::new(gpu, kernel, &chunk, slice, true, id_array)?;
        run.dispatch(gpu)?;
        parts.push(run.divergence(gpu)?.ok_or_else(|| Error::gpu("probing", "no probe records"))?);
    }
    let chunks = parts.len();
    Ok((divergence::join_warps(parts)?, chunks))
}

/// The GPU sum against the f64 reference, by relative error.
pub fn check(gpu_sum: f32, cpu_sum: f64) -> Check {
    Check::relative(&[gpu_sum], &[cpu_sum as f32], TOLERANCE, 1e-30)
}

/// org (interleaved), redirect (interleaved + newIDArray) and, with `Variants::All`,
/// sequential and fast; GB/s = 4n bytes / median time.
#[cfg(not(target_arch = "wasm32"))]
pub fn bench(gpu: &Gpu, cfg: &ReductionConfig, which: Variants, protocol: &Protocol) -> Result<Vec<Record>> {
    cfg.validate()?;
    cfg.footprint().check(gpu)?;
    let input = generate(cfg)?;
    let expected = cpu::sum(&input);
    let ids = id_array();
    let mut variants: Vec<(&str, ReductionKernel, Option<&[u32]>)> = vec![(remap::ORIGINAL, ReductionKernel::Interleaved, None)];
    if which.includes_redirect() {
        variants.push(("redirect", ReductionKernel::Interleaved, Some(&ids)));
    }
    if which == Variants::All {
        variants.push(("sequential", ReductionKernel::Sequential, None));
        variants.push(("fast", ReductionKernel::Fast, None));
        variants.push(("blocked", ReductionKernel::Blocked, None));
    }
    let mut records = Vec::new();
    for (variant, kernel, order) in variants {
        let run = Prepared::new(gpu, kernel, cfg, &input, false, order)?;
        let stats = harness::measure(protocol, || run.dispatch(gpu))?;
        let check = check(run.result(gpu)?, expected);
        drop(run);
        let (native, probe_chunks) =
            if gpu.caps().subgroup_size.is_some() && matches!(kernel, ReductionKernel::Interleaved | ReductionKernel::Sequential) {
                let (d, chunks) = probe_first_pass(gpu, kernel, cfg, &input, order)?;
                (Some(d), Some(chunks))
            } else {
                (None, None)
            };
        let groups = match kernel {
            ReductionKernel::Fast => Some(cfg.fast_groups()),
            ReductionKernel::Blocked => Some(cfg.blocked_groups()),
            _ => None,
        };
        let w32 = emulate(kernel, cfg, order, EMULATION_WIDTH)?;
        records.push(
            VariantRun {
                family: "reduction",
                kernel: "reduction".into(),
                variant: variant.into(),
                params: serde_json::to_value(cfg).unwrap_or_default(),
                seed: cfg.seed,
                throughput: Throughput { value: cfg.n as f64 * 4.0 / stats.median * 1e-9, unit: "GB/s".into() },
                stats,
                check,
                divergence: DivergenceReport::new(native.as_ref(), &w32),
                extra: serde_json::json!({
                    "shader": kernel.name(),
                    "subgroups": gpu.caps().subgroup_size.is_some(),
                    "first_pass_workgroups": groups,
                    "probe_chunks": probe_chunks,
                }),
            }
            .record(gpu),
        );
    }
    Ok(records)
}
