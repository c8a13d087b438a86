//! Branch splitting and loop splitting: one divergent kernel against the same work split into
//! kernels that each keep to one path (the study reproduced in `experiments::carrillo`).
//!
//! - Branch splitting: an artificial benchmark over `n` elements (2^22 in the paper)
//!   whose decision mask picks, per element, a light if-branch or a heavy else-branch (many
//!   live values, so many registers). The single `branched` kernel is compared with the split
//!   pair `split_if` + `split_else`, each leaving at once for elements of the other branch;
//!   the split time runs from the first dispatch to the end of the second (one submission).
//!   Mask layouts: [`MaskLayout::Linear`] (two sections) and [`MaskLayout::Random`]. Both
//!   versions must give identical outputs for every mask.
//! - Loop splitting: one loop over four arrays (`fused`) against two loops over two
//!   arrays each (`split`).

pub mod cpu;

use crate::divergence::{self, Divergence, DivergenceSummary, ProbeLayout, PROBE_BINDING};
use crate::error::{Error, Result};
use crate::gpu::shader::registry;
#[cfg(not(target_arch = "wasm32"))]
use crate::gpu::Timing;
use crate::gpu::{Bind, BufferKind, Gpu, GpuBuffer, Kernel, PreparedRun, Step};
use crate::harness::footprint::{bytes, Footprint};
use crate::harness::named;
#[cfg(not(target_arch = "wasm32"))]
use crate::harness::{self, Check, Named, Progress, Protocol, Record};
use crate::rng::Rng;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Invocations per workgroup of the split kernels.
pub const WORKGROUP_SIZE: u32 = 256;
/// The paper's data set: 4M elements.
pub const PAPER_N: usize = 1 << 22;
/// Most even steps of a sweep (`--steps`).
pub const MAX_STEPS: usize = 1000;
/// Even steps of a sweep when neither `--steps` nor `--fractions` is given.
pub const DEFAULT_STEPS: usize = 10;
/// [`Record::kernel`] of the branched kernel's record.
pub const BRANCHED_KERNEL: &str = "branched";
/// [`Record::kernel`] of the split pair's record.
pub const SPLIT_KERNEL: &str = "split";

/// Layout of the decision mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaskLayout {
    /// Layout 1 (Figure 7): the first `fraction·n` elements take the else-branch, the rest the
    /// if-branch; only the warp on the boundary diverges.
    Linear,
    /// Layout 2 (Figure 9): each element takes the else-branch with probability `fraction`.
    Random,
}

named!(MaskLayout { Linear => "linear", Random => "random" });

/// The decision mask: 1 = else-branch, 0 = if-branch.
pub fn decision_mask(layout: MaskLayout, n: usize, else_fraction: f64, seed: u64) -> Result<Vec<u32>> {
    if !(0.0..=1.0).contains(&else_fraction) {
        return Err(Error::invalid("else fraction", format!("{else_fraction} (use 0..=1)")));
    }
    Ok(match layout {
        MaskLayout::Linear => {
            let count = (else_fraction * n as f64).round() as usize;
            (0..n).map(|i| (i < count) as u32).collect()
        }
        MaskLayout::Random => {
            let mut rng = Rng::new(seed ^ 0x6d61_736b_0000_0000 ^ else_fraction.to_bits());
            (0..n).map(|_| (rng.next_f64() < else_fraction) as u32).collect()
        }
    })
}

/// The else-fractions of a sweep: `steps + 1` even steps from 0 to 1 (1 ≤ steps ≤
/// [`MAX_STEPS`]), and for the random layout also fine steps over 0.5-20 %, where the paper's
/// worst cases lie.
pub fn sweep_fractions(layout: MaskLayout, steps: usize) -> Result<Vec<f64>> {
    if !(1..=MAX_STEPS).contains(&steps) {
        return Err(Error::invalid("steps", format!("{steps} (use 1..={MAX_STEPS} even steps from 0 to 100 %)")));
    }
    let mut f: Vec<f64> = (0..=steps).map(|i| i as f64 / steps as f64).collect();
    if layout == MaskLayout::Random {
        f.extend([0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.10, 0.12, 0.14, 0.16, 0.18, 0.20]);
    }
    f.sort_by(f64::total_cmp);
    f.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    Ok(f)
}

/// The branch benchmark's size and branch weights.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BranchConfig {
    /// Elements (one thread each).
    pub n: usize,
    /// Mixing rounds of the light if-branch (a serial chain on one word).
    pub light_rounds: u32,
    /// Double rounds of the heavy else-branch (32 live words).
    pub heavy_rounds: u32,
    /// Seed of the per-element data.
    pub seed: u64,
}

impl Default for BranchConfig {
    fn default() -> Self {
        BranchConfig { n: PAPER_N, light_rounds: 128, heavy_rounds: 4, seed: 1 }
    }
}

impl BranchConfig {
    /// Err ([`Error::Invalid`]) when `n` is outside 1..=2^32-1.
    pub fn validate(&self) -> Result<()> {
        if self.n == 0 || self.n > u32::MAX as usize {
            return Err(Error::invalid("n", format!("{} (use 1..=2^32-1 elements)", self.n)));
        }
        Ok(())
    }

    /// What a sweep allocates: 4 words per element of data on the device; on the host the
    /// data, the mask, the reference and both results read back (40 bytes per element).
    pub fn footprint(&self) -> Footprint {
        Footprint::new("`n`", format!("carrillo `n={}`", self.n)).device("branch data", bytes(self.n, 16)).host(bytes(self.n, 40))
    }

    /// Refuses branch weights that `gpu` would silently cut short (lavapipe ends loops after
    /// 65535 iterations per invocation).
    pub fn check_loops(&self, gpu: &Gpu) -> Result<()> {
        let Some(limit) = gpu.loop_iteration_limit() else { return Ok(()) };
        for (option, rounds) in [("light_rounds", self.light_rounds), ("heavy_rounds", self.heavy_rounds)] {
            if rounds as u64 > limit {
                return Err(Error::Limit {
                    what: format!("`{option}={rounds}`: loop iterations per invocation"),
                    requested: rounds as u64,
                    limit,
                    hint: format!("{} cuts longer loops short; lower `{option}`", gpu.adapter_name()),
                });
            }
        }
        Ok(())
    }

    /// Input words of every element (4 per element, never all zero).
    pub fn data(&self) -> Vec<[u32; 4]> {
        let mut rng = Rng::new(self.seed);
        (0..self.n).map(|_| [rng.next_u32(), rng.next_u32(), rng.next_u32(), rng.next_u32() | 1]).collect()
    }
}

/// GPU divergence of the three kernels from one probed run of each.
#[derive(Clone, Debug)]
pub struct BranchDivergence {
    /// Divergence of the single branched kernel.
    pub branched: Divergence,
    /// Divergence of the if-kernel of the split pair.
    pub split_if: Divergence,
    /// Divergence of the else-kernel of the split pair.
    pub split_else: Divergence,
}

#[derive(Debug)]
struct Probe {
    #[cfg_attr(target_arch = "wasm32", expect(dead_code, reason = "decodes the native divergence"))]
    layout: ProbeLayout,
    buffers: [GpuBuffer<u32>; 3],
}

/// Uploaded data and the three bound kernels; the mask can be replaced between runs.
#[derive(Debug)]
pub struct BranchPrepared {
    kernels: [Arc<Kernel>; 3],
    binds: [wgpu::BindGroup; 3],
    mask: GpuBuffer<u32>,
    results_branched: GpuBuffer<u32>,
    results_split: GpuBuffer<u32>,
    #[cfg_attr(target_arch = "wasm32", expect(dead_code, reason = "read back by the native divergence"))]
    probe: Option<Probe>,
    grid: [u32; 3],
    n: usize,
    _inputs: Vec<Box<dyn Bind>>,
}

impl BranchPrepared {
    /// Uploads `data` (one entry per element) and an all-if mask; `probe` adds the divergence
    /// probe (needs subgroups).
    pub fn new(gpu: &Gpu, cfg: &BranchConfig, data: &[[u32; 4]], probe: bool) -> Result<BranchPrepared> {
        cfg.validate()?;
        let n = cfg.n;
        if data.len() != n {
            return Err(Error::invalid("data", format!("{} entries for n = {n}", data.len())));
        }
        let width = if probe { Some(gpu.require_subgroups()?) } else { None };
        let defines: &[&str] = if width.is_some() { &["PROBE"] } else { &[] };
        let kernels = [
            gpu.kernel(registry::split::branch_split::BRANCHED, defines)?,
            gpu.kernel(registry::split::branch_split::SPLIT_IF, defines)?,
            gpu.kernel(registry::split::branch_split::SPLIT_ELSE, defines)?,
        ];
        let grid = gpu.grid(n as u64, WORKGROUP_SIZE)?;
        let mask = gpu.buffer_zeroed::<u32>("decision mask", n, BufferKind::Storage)?;
        let flat: &[u32] = bytemuck::cast_slice(data);
        let data = gpu.buffer("branch data", flat, BufferKind::Storage)?;
        let results_branched = gpu.buffer_zeroed::<u32>("branched results", n, BufferKind::Storage)?;
        let results_split = gpu.buffer_zeroed::<u32>("split results", n, BufferKind::Storage)?;
        let params = registry::split::branch_split::Params {
            n: n as u32,
            light_rounds: cfg.light_rounds,
            heavy_rounds: cfg.heavy_rounds,
            ..Default::default()
        };
        let params = gpu.buffer("params", &[params], BufferKind::Uniform)?;
        let workgroups = grid[0] as usize * grid[1] as usize;
        let probe = match width {
            Some(w) => {
                let layout = ProbeLayout::new(1, workgroups, WORKGROUP_SIZE, w);
                let buf = |label| gpu.buffer_zeroed::<u32>(label, layout.words(), BufferKind::Storage);
                Some(Probe { layout, buffers: [buf("probe branched")?, buf("probe split_if")?, buf("probe split_else")?] })
            }
            None => None,
        };
        let bind = |k: usize, results: &GpuBuffer<u32>| {
            use registry::split::branch_split::binding as slot;
            let mut slots: Vec<(u32, &dyn Bind)> =
                vec![(slot::MASK, &mask), (slot::DATA, &data), (slot::RESULTS, results), (slot::PARAMS, &params)];
            if let Some(p) = &probe {
                slots.push((PROBE_BINDING, &p.buffers[k]));
            }
            kernels[k].bind_at(gpu, &slots)
        };
        let binds = [bind(0, &results_branched)?, bind(1, &results_split)?, bind(2, &results_split)?];
        Ok(BranchPrepared {
            kernels,
            binds,
            mask,
            results_branched,
            results_split,
            probe,
            grid,
            n,
            _inputs: vec![Box::new(data), Box::new(params)],
        })
    }

    /// Replaces the decision mask.
    pub fn set_mask(&self, gpu: &Gpu, mask: &[u32]) -> Result<()> {
        if mask.len() != self.n {
            return Err(Error::invalid("mask", format!("{} entries for n = {}", mask.len(), self.n)));
        }
        gpu.write(&self.mask, mask)
    }

    /// The branched kernel's dispatch.
    fn branched_steps(&self) -> Vec<Step<'_>> {
        vec![Step::dispatch(&self.kernels[0], &self.binds[0], self.grid)]
    }

    /// The split pair's two dispatches.
    fn split_steps(&self) -> Vec<Step<'_>> {
        vec![Step::dispatch(&self.kernels[1], &self.binds[1], self.grid), Step::dispatch(&self.kernels[2], &self.binds[2], self.grid)]
    }
}

/// The branched kernel then the split pair, as one run whose check reads both results. Its
/// probe's counts are the branched kernel's, the divergence splitting removes (the pair's
/// too: [`BranchPrepared::divergences`]).
impl PreparedRun for BranchPrepared {
    fn steps(&self) -> Vec<Step<'_>> {
        let mut steps = self.branched_steps();
        steps.extend(self.split_steps());
        steps
    }
    fn outputs(&self) -> Vec<(&wgpu::Buffer, u64)> {
        [&self.results_branched, &self.results_split].into_iter().map(|b| (b.wgpu_buffer(), b.bytes())).collect()
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn divergence(&self, gpu: &Gpu) -> Result<Option<Divergence>> {
        Ok(self.divergences(gpu)?.map(|d| d.branched))
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl BranchPrepared {
    /// Figure 6(a): the single branched kernel.
    pub fn run_branched(&self, gpu: &Gpu) -> Result<Timing> {
        gpu.run(&self.branched_steps(), true)
    }

    /// Figure 6(b): the if-kernel then the else-kernel, timed from the first dispatch to the end
    /// of the second.
    pub fn run_split(&self, gpu: &Gpu) -> Result<Timing> {
        gpu.run(&self.split_steps(), true)
    }

    /// Zeroes both result buffers (so a check cannot pass on stale values).
    pub fn clear_results(&self, gpu: &Gpu) -> Result<()> {
        gpu.run(&[Step::clear(&self.results_branched), Step::clear(&self.results_split)], false).map(|_| ())
    }

    /// What the branched kernel last wrote, one word per element.
    pub fn results_branched(&self, gpu: &Gpu) -> Result<Vec<u32>> {
        gpu.read(&self.results_branched)
    }

    /// What the split pair last wrote, one word per element.
    pub fn results_split(&self, gpu: &Gpu) -> Result<Vec<u32>> {
        gpu.read(&self.results_split)
    }

    /// Probe counters of the last run of each kernel (None when not probing).
    pub fn divergences(&self, gpu: &Gpu) -> Result<Option<BranchDivergence>> {
        let Some(p) = &self.probe else { return Ok(None) };
        let d = |i: usize| -> Result<Divergence> { Ok(p.layout.decode(&gpu.read(&p.buffers[i])?)) };
        Ok(Some(BranchDivergence { branched: d(0)?, split_if: d(1)?, split_else: d(2)? }))
    }
}

/// Host emulation of the branched kernel's divergence at `width` (its probed condition is
/// `mask[i] == 0`, the if-branch).
pub fn emulate(mask: &[u32], width: u32) -> Result<Divergence> {
    let paths: Vec<u32> = mask.iter().map(|&m| (m == 0) as u32).collect();
    divergence::emulate_paths(&paths, 1, width)
}

/// One point of the sweep: times the branched and the split version on `mask`, checks both
/// against the CPU reference and each other, and returns the two records (branched, split).
/// `probed` (when given) measures divergence in separate runs.
#[cfg(not(target_arch = "wasm32"))]
#[allow(clippy::too_many_arguments, reason = "the sweep's loop state, passed through once per point")]
fn bench_point(
    gpu: &Gpu,
    cfg: &BranchConfig,
    layout: MaskLayout,
    else_fraction: f64,
    data: &[[u32; 4]],
    plain: &BranchPrepared,
    probed: Option<&BranchPrepared>,
    protocol: &Protocol,
) -> Result<[Record; 2]> {
    let mask = decision_mask(layout, cfg.n, else_fraction, cfg.seed)?;
    plain.set_mask(gpu, &mask)?;
    plain.clear_results(gpu)?;
    plain.run_branched(gpu)?;
    plain.run_split(gpu)?;
    let branched_out = plain.results_branched(gpu)?;
    let split_out = plain.results_split(gpu)?;
    // Time before the (long) CPU reference, so the GPU has not dropped its clocks while idle.
    let t_branched = harness::measure(protocol, || plain.run_branched(gpu))?;
    let t_split = harness::measure(protocol, || plain.run_split(gpu))?;
    let expected = cpu::branch(&mask, data, cfg.light_rounds, cfg.heavy_rounds);
    let check_branched = Check::exact(&branched_out, &expected);
    let mut check_split = Check::exact(&split_out, &expected);
    let same = Check::exact(&split_out, &branched_out);
    if !same.passed {
        check_split.passed = false;
        check_split.first_mismatch = same.first_mismatch.map(|m| format!("split vs branched {m}"));
    }

    let (div, source) = match probed {
        Some(p) => {
            p.set_mask(gpu, &mask)?;
            p.run_branched(gpu)?;
            p.run_split(gpu)?;
            let d = p.divergences(gpu)?.ok_or_else(|| Error::gpu("probing", "no probe records"))?;
            ([Some(d.branched), Some(d.split_if), Some(d.split_else)], "gpu-probe")
        }
        None => ([Some(emulate(&mask, 32)?), None, None], "host-emulation (width 32)"),
    };
    let else_elements = mask.iter().filter(|&&m| m != 0).count();
    let params = serde_json::json!({
        "layout": layout.name(),
        "else_fraction": else_fraction,
        "else_elements": else_elements,
        "n": cfg.n,
        "light_rounds": cfg.light_rounds,
        "heavy_rounds": cfg.heavy_rounds,
    });
    let variant = format!("{} else={:.1}%", layout.name(), else_fraction * 100.0);
    let record = |kernel: &str, stats: harness::Stats, check: Check, divergence: Option<Divergence>, extra: serde_json::Value| {
        Record::new(gpu, "carrillo", kernel, variant.clone(), stats, check)
            .with_config(&params, cfg.seed)
            .with_divergence(divergence.map(|d| d.summary()))
            .with_throughput(cfg.n as f64, 1e-6, "Melements/s")
            .with_extra(extra)
    };
    let ratio = t_split.median / t_branched.median;
    let [d_branched, d_if, d_else] = div;
    let split_extra =
        SplitExtra { split_over_branched: ratio, divergence_source: source.into(), split_else_divergence: d_else.map(|d| d.summary()) };
    Ok([
        record(BRANCHED_KERNEL, t_branched, check_branched, d_branched, serde_json::json!({ "divergence_source": source })),
        record(SPLIT_KERNEL, t_split, check_split, d_if, serde_json::to_value(split_extra).unwrap_or_default()),
    ])
}

/// What the split record of a sweep point holds beside its timing
/// (`Record::extra_as::<SplitExtra>()`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SplitExtra {
    /// Split median time (both kernels) / branched median time of the same call.
    pub split_over_branched: f64,
    /// Where the divergence figures come from: the GPU probe or host emulation.
    pub divergence_source: String,
    /// Divergence of the else kernel (the record's own divergence is the if kernel's).
    pub split_else_divergence: Option<DivergenceSummary>,
}

/// The branch sweep over `fractions` of one layout; `progress` moves on one step per fraction.
#[cfg(not(target_arch = "wasm32"))]
pub fn sweep(
    gpu: &Gpu,
    cfg: &BranchConfig,
    layout: MaskLayout,
    fractions: &[f64],
    protocol: &Protocol,
    progress: Option<&Progress>,
) -> Result<Vec<Record>> {
    cfg.validate()?;
    cfg.footprint().check(gpu)?;
    cfg.check_loops(gpu)?;
    let data = cfg.data();
    let plain = BranchPrepared::new(gpu, cfg, &data, false)?;
    let probed = match gpu.caps().subgroup_size {
        Some(_) => Some(BranchPrepared::new(gpu, cfg, &data, true)?),
        None => None,
    };
    let mut records = Vec::new();
    for &f in fractions {
        if let Some(p) = progress {
            p.message(format!("{} else {:.1}%", layout.name(), f * 100.0));
        }
        records.extend(bench_point(gpu, cfg, layout, f, &data, &plain, probed.as_ref(), protocol)?);
        if let Some(p) = progress {
            p.step("");
        }
    }
    Ok(records)
}

/// Loop-splitting benchmark size: `n` threads, each over `len` elements of four arrays.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LoopConfig {
    /// Threads.
    pub n: usize,
    /// Elements per thread in each of the four arrays.
    pub len: usize,
    /// Seed of the four arrays.
    pub seed: u64,
}

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig { n: 1 << 20, len: 8, seed: 1 }
    }
}

impl LoopConfig {
    /// Err ([`Error::Invalid`]) unless `n` ≥ 1, 1 ≤ `len` ≤ 4096 and n·len < 2^32.
    pub fn validate(&self) -> Result<()> {
        if self.n == 0 || self.len == 0 || self.len > 4096 || (self.n as u64) * (self.len as u64) > u32::MAX as u64 {
            return Err(Error::invalid(
                "loop_n/loop_len",
                format!("`loop_n={}` `loop_len={}` (give `loop_n` ≥ 1, 1 ≤ `loop_len` ≤ 4096, their product < 2^32)", self.n, self.len),
            ));
        }
        Ok(())
    }

    /// What the pair allocates: four arrays of n·len words on the device; on the host the four
    /// inputs, the reference and both results.
    pub fn footprint(&self) -> Footprint {
        let total = self.n.saturating_mul(self.len);
        Footprint::new("`loop_n`", format!("carrillo `loop_n={}` `loop_len={}`", self.n, self.len))
            .device("p1", bytes(total, 4))
            .host(bytes(total, 16))
            .host(bytes(self.n, 12))
    }

    /// The four input arrays (n·len each): p1, p2 any; p3 < 2^20; p4 in 1..2^16.
    pub fn inputs(&self) -> Result<[Vec<u32>; 4]> {
        self.validate()?;
        self.footprint().check_host()?;
        let total = self.n * self.len;
        let mut rng = Rng::new(self.seed ^ 0x6c6f_6f70);
        let p1 = rng.vec_u32(total);
        let p2 = rng.vec_u32(total);
        let p3 = (0..total).map(|_| rng.next_u32() >> 12).collect();
        let p4 = (0..total).map(|_| (rng.next_u32() >> 16).max(1)).collect();
        Ok([p1, p2, p3, p4])
    }
}

/// The fused and the split loop kernels bound to the same inputs (separate outputs).
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug)]
pub struct LoopPrepared {
    fused: Arc<Kernel>,
    split: Arc<Kernel>,
    bind_fused: wgpu::BindGroup,
    bind_split: wgpu::BindGroup,
    results_fused: GpuBuffer<u32>,
    results_split: GpuBuffer<u32>,
    grid: [u32; 3],
    _inputs: Vec<GpuBuffer<u32>>,
    _params: GpuBuffer<registry::split::loop_split::Params>,
}

#[cfg(not(target_arch = "wasm32"))]
impl LoopPrepared {
    /// Uploads the four arrays (`n × len` words each) and binds the fused and split kernels; Err when `cfg` is invalid, an array has the wrong length or a buffer exceeds the device's limits.
    pub fn new(gpu: &Gpu, cfg: &LoopConfig, inputs: &[Vec<u32>; 4]) -> Result<LoopPrepared> {
        cfg.validate()?;
        if inputs.iter().any(|p| p.len() != cfg.n * cfg.len) {
            return Err(Error::invalid("loop inputs", "four arrays of n·len entries"));
        }
        let fused = gpu.kernel(registry::split::loop_split::FUSED, &[])?;
        let split = gpu.kernel(registry::split::loop_split::SPLIT, &[])?;
        let p: Vec<GpuBuffer<u32>> =
            inputs.iter().enumerate().map(|(i, v)| gpu.buffer(&format!("p{}", i + 1), v, BufferKind::Storage)).collect::<Result<_>>()?;
        let params = registry::split::loop_split::Params { n: cfg.n as u32, len: cfg.len as u32, ..Default::default() };
        let params = gpu.buffer("params", &[params], BufferKind::Uniform)?;
        let results_fused = gpu.buffer_zeroed::<u32>("fused results", cfg.n, BufferKind::Storage)?;
        let results_split = gpu.buffer_zeroed::<u32>("split results", cfg.n, BufferKind::Storage)?;
        use registry::split::loop_split::binding as slot;
        let inputs = |results| -> [(u32, &dyn Bind); 6] {
            [(slot::P1, &p[0]), (slot::P2, &p[1]), (slot::P3, &p[2]), (slot::P4, &p[3]), (slot::RESULTS, results), (slot::PARAMS, &params)]
        };
        let bind_fused = fused.bind_at(gpu, &inputs(&results_fused))?;
        let bind_split = split.bind_at(gpu, &inputs(&results_split))?;
        let grid = gpu.grid(cfg.n as u64, WORKGROUP_SIZE)?;
        Ok(LoopPrepared { fused, split, bind_fused, bind_split, results_fused, results_split, grid, _inputs: p, _params: params })
    }

    /// Figure 5(a).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn run_fused(&self, gpu: &Gpu) -> Result<Timing> {
        gpu.run(&[Step::dispatch(&self.fused, &self.bind_fused, self.grid)], true)
    }

    /// Figure 5(b).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn run_split(&self, gpu: &Gpu) -> Result<Timing> {
        gpu.run(&[Step::dispatch(&self.split, &self.bind_split, self.grid)], true)
    }

    /// What the fused kernel last wrote, one word per thread.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn results_fused(&self, gpu: &Gpu) -> Result<Vec<u32>> {
        gpu.read(&self.results_fused)
    }

    /// What the split kernels last wrote, one word per thread.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn results_split(&self, gpu: &Gpu) -> Result<Vec<u32>> {
        gpu.read(&self.results_split)
    }
}

/// Times loop-fused against loop-split and checks both against the CPU reference.
#[cfg(not(target_arch = "wasm32"))]
pub fn bench_loops(gpu: &Gpu, cfg: &LoopConfig, protocol: &Protocol) -> Result<[Record; 2]> {
    cfg.validate()?;
    cfg.footprint().check(gpu)?;
    let inputs = cfg.inputs()?;
    let run = LoopPrepared::new(gpu, cfg, &inputs)?;
    run.run_fused(gpu)?;
    run.run_split(gpu)?;
    let (fused, split) = (run.results_fused(gpu)?, run.results_split(gpu)?);
    let t_fused = harness::measure(protocol, || run.run_fused(gpu))?;
    let t_split = harness::measure(protocol, || run.run_split(gpu))?;
    let expected = cpu::loop_split([&inputs[0], &inputs[1], &inputs[2], &inputs[3]], cfg.n, cfg.len);
    let check_fused = Check::exact(&fused, &expected);
    let check_split = Check::exact(&split, &expected);
    let ratio = t_split.median / t_fused.median;
    let elements = (cfg.n * cfg.len) as f64;
    let record = |kernel: &str, stats: harness::Stats, check: Check| {
        Record::new(gpu, "carrillo", kernel, format!("loops n={} len={}", cfg.n, cfg.len), stats, check)
            .with_config(cfg, cfg.seed)
            .with_throughput(elements, 1e-9, "G elements/s")
    };
    Ok([
        record("loop_fused", t_fused, check_fused),
        record("loop_split", t_split, check_split).with_extra(LoopSplitExtra { split_over_fused: ratio }),
    ])
}

/// What the loop-split record holds beside its timing (`Record::extra_as::<LoopSplitExtra>()`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct LoopSplitExtra {
    /// Loop-split median time / loop-fused median time of the same call.
    pub split_over_fused: f64,
}

/// A branch-splitting sweep over the else-fraction and the loop-splitting pair
/// (`simtlab bench carrillo`; each field is the option of the same name).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SplitSweep {
    /// Decision-mask layout.
    pub layout: MaskLayout,
    /// Even steps of the else-fraction from 0 to 100 %, 1..=[`MAX_STEPS`] (random adds fine
    /// steps over 0.5-20 %). None: [`DEFAULT_STEPS`], unless `fractions` are given.
    pub steps: Option<usize>,
    /// Explicit else-fractions (0..=1) instead of the even steps.
    pub fractions: Vec<f64>,
    /// Elements of the branch benchmark.
    pub n: usize,
    /// Mixing rounds of the light if-branch.
    pub light_rounds: u32,
    /// Double rounds of the heavy else-branch.
    pub heavy_rounds: u32,
    /// Elements per thread in the loop-splitting benchmark (0 = skip it).
    pub loop_len: usize,
    /// Threads of the loop-splitting benchmark.
    pub loop_n: usize,
    /// Seed of the data and the random masks.
    pub seed: u64,
}

impl Default for SplitSweep {
    fn default() -> Self {
        let (branch, loops) = (BranchConfig::default(), LoopConfig::default());
        SplitSweep {
            layout: MaskLayout::Linear,
            steps: None,
            fractions: Vec::new(),
            n: branch.n,
            light_rounds: branch.light_rounds,
            heavy_rounds: branch.heavy_rounds,
            loop_len: loops.len,
            loop_n: loops.n,
            seed: branch.seed,
        }
    }
}
