//! Zhang's Figure 1 patterns: a data-dependent `if` (a fraction p of threads take an expensive
//! path) and a data-dependent `for` loop (trip counts from a chosen distribution).

pub mod cpu;
pub mod remapped;

use crate::divergence::{self, Divergence, ProbeLayout};
use crate::error::{Error, Result};
use crate::gpu::shader::registry;
use crate::gpu::PreparedRun;
use crate::gpu::{BufferKind, Gpu, GpuBuffer, Kernel, Step, Timing};
use crate::harness::footprint::{bytes, Footprint};
use crate::harness::named;
#[cfg(not(target_arch = "wasm32"))]
use crate::harness::{self, Check, Named, Protocol, Record};
#[cfg(not(target_arch = "wasm32"))]
use crate::remap::DivergenceExtra;
use crate::rng::Rng;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Invocations per workgroup of the micro kernels.
pub const WORKGROUP_SIZE: u32 = 256;

/// Which divergent construct the micro kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// `if (value < threshold)` with an expensive taken path.
    If,
    /// `for (r = 0; r < trips[i]; r++)`.
    Loop,
}

named!(Pattern { If => "if", Loop => "loop" });

/// Trip-count layouts of the loop pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    /// Every thread runs the same (mean) trip count: no divergence.
    Uniform,
    /// In each group of `group` threads one random lane runs `long` trips, the others `short`.
    OneLong,
    /// Trip counts uniform in [short, long].
    Random,
    /// The one-long multiset sorted ascending: the same work, long lanes side by side.
    Sorted,
}

named!(Distribution { Uniform => "uniform", OneLong => "one-long", Random => "random", Sorted => "sorted" });

impl Distribution {}

/// One micro-benchmark run: the construct, its data layout, and the remapping knobs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct MicroConfig {
    /// Branch or loop.
    pub pattern: Pattern,
    /// Trip-count layout (loop) or value order (`if`: random or sorted).
    pub distribution: Distribution,
    /// Threads, one element each.
    pub n: usize,
    /// Seed of the input generator.
    pub seed: u64,
    /// `if`: fraction of threads on the expensive path.
    pub probability: f64,
    /// `if`: rounds of mixing on the expensive path.
    pub heavy: u32,
    /// Loop: short and long trip counts.
    pub short: u32,
    /// Loop: long trip count (≥ `short`).
    pub long: u32,
    /// Loop: the group width the one-long layout targets (32 = an NVIDIA warp).
    pub group: u32,
    /// Loop, tile sort: invocations per workgroup and elements per invocation ([`TileSort`]).
    pub tile_workgroup: u32,
    /// Loop, tile sort: elements per invocation.
    pub tile_per_thread: u32,
    /// Loop, deferral: loops of at least this many trips run in the second pass (None: the
    /// threshold the emulation finds best, [`crate::remap::best_defer_threshold`]).
    pub defer_from: Option<u32>,
    /// Loop, deferral: elements per invocation of the first pass (1..=32), and workgroups of
    /// the second pass.
    pub defer_per_thread: u32,
    /// Loop, deferral: workgroups of the second pass.
    pub defer_workgroups: u32,
    /// Remapping, auto: what earlier runs on this adapter taught the cost model (absent: the
    /// model alone; a calibration of another adapter is not applied).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<crate::remap::Calibration>,
}

impl Default for MicroConfig {
    fn default() -> Self {
        MicroConfig {
            pattern: Pattern::Loop,
            distribution: Distribution::OneLong,
            n: 1 << 20,
            seed: 1,
            probability: 0.5,
            heavy: 256,
            short: 16,
            long: 512,
            group: 32,
            tile_workgroup: TILE_WORKGROUP,
            tile_per_thread: TILE_PER_THREAD,
            defer_from: None,
            defer_per_thread: DEFER_PER_THREAD,
            defer_workgroups: DEFER_WORKGROUPS,
            calibration: None,
        }
    }
}

impl MicroConfig {
    /// Err ([`Error::Invalid`]) naming the first option out of range (or a pattern and distribution that do not go together) and what to use.
    pub fn validate(&self) -> Result<()> {
        if self.n == 0 || self.n > u32::MAX as usize {
            return Err(Error::invalid("n", format!("{} (use 1..=2^32-1 threads)", self.n)));
        }
        if !(0.0..=1.0).contains(&self.probability) {
            return Err(Error::invalid("probability", format!("{} (use 0..=1)", self.probability)));
        }
        if self.short > self.long {
            return Err(Error::invalid("short/long", format!("short {} is above long {} (use short ≤ long)", self.short, self.long)));
        }
        if self.group == 0 {
            return Err(Error::invalid("group", "0 (use at least 1 lane per group)"));
        }
        if !(1..=32).contains(&self.defer_per_thread) {
            return Err(Error::invalid("defer_per_thread", format!("{} (use 1..=32 elements per invocation)", self.defer_per_thread)));
        }
        if self.defer_workgroups == 0 {
            return Err(Error::invalid("defer_workgroups", "0 (use at least 1 workgroup for the deferred loops)"));
        }
        if self.pattern == Pattern::If && !matches!(self.distribution, Distribution::Random | Distribution::Sorted) {
            return Err(Error::invalid("distribution", "the if pattern takes random (default) or sorted"));
        }
        Ok(())
    }

    /// What a run allocates: one word per thread in each buffer on the device; on the host
    /// the inputs, the reference, the results read back and, for remapped runs, the index and
    /// the moved inputs and results (32 bytes per thread at most).
    pub fn footprint(&self) -> Footprint {
        Footprint::new("`n`", format!("micro `n={}`", self.n)).device("results", bytes(self.n, 4)).host(bytes(self.n, 32))
    }

    /// WGSL file stem of the pattern's kernel (`if_branch`, `data_loop`).
    pub fn kernel_name(&self) -> &'static str {
        match self.pattern {
            Pattern::If => "if_branch",
            Pattern::Loop => "data_loop",
        }
    }

    /// `if`: the threshold below which a value (uniform in [0, 2^31)) takes the heavy path.
    pub fn threshold(&self) -> u32 {
        (self.probability * (1u64 << 31) as f64).round() as u32
    }
}

/// Inputs of one run: `primary` = values (`if`) or trip counts (loop); `seeds` (loop only).
#[derive(Clone, Debug)]
pub struct MicroInput {
    /// Values (`if`) or trip counts (loop), one per thread.
    pub primary: Vec<u32>,
    /// Per-thread seeds of the loop's mixing (empty for `if`).
    pub seeds: Vec<u32>,
}

/// Trip counts for the loop pattern.
fn loop_trips(cfg: &MicroConfig, rng: &mut Rng) -> Vec<u32> {
    let (n, g) = (cfg.n, cfg.group as usize);
    match cfg.distribution {
        Distribution::Uniform => vec![cfg.short + (cfg.long - cfg.short) / g as u32; n],
        Distribution::Random => (0..n).map(|_| rng.range_u32(cfg.short, cfg.long)).collect(),
        Distribution::OneLong | Distribution::Sorted => {
            let mut t = vec![cfg.short; n];
            for start in (0..n).step_by(g) {
                let lanes = g.min(n - start);
                t[start + rng.range_u32(0, lanes as u32 - 1) as usize] = cfg.long;
            }
            if cfg.distribution == Distribution::Sorted {
                t.sort_unstable();
            }
            t
        }
    }
}

/// Inputs from `cfg.seed`; Err when `cfg` is invalid or the host lacks the memory the run needs.
pub fn generate(cfg: &MicroConfig) -> Result<MicroInput> {
    cfg.validate()?;
    cfg.footprint().check_host()?;
    let mut rng = Rng::new(cfg.seed);
    Ok(match cfg.pattern {
        Pattern::If => {
            let mut values: Vec<u32> = (0..cfg.n).map(|_| rng.next_u32() >> 1).collect();
            if cfg.distribution == Distribution::Sorted {
                values.sort_unstable();
            }
            MicroInput { primary: values, seeds: Vec::new() }
        }
        Pattern::Loop => {
            let trips = loop_trips(cfg, &mut rng);
            MicroInput { primary: trips, seeds: rng.vec_u32(cfg.n) }
        }
    })
}

/// The CPU reference output for `input`.
pub fn reference(cfg: &MicroConfig, input: &MicroInput) -> Vec<u32> {
    match cfg.pattern {
        Pattern::If => cpu::if_branch(&input.primary, cfg.threshold(), cfg.heavy),
        Pattern::Loop => cpu::data_loop(&input.primary, &input.seeds),
    }
}

/// Host emulation of the kernel's divergence at width `width` (thread i handles element
/// `order[i]` when an order is given).
pub fn emulate(cfg: &MicroConfig, input: &MicroInput, order: Option<&[u32]>, width: u32) -> Result<Divergence> {
    let at = |i: usize| order.map_or(i, |o| o[i] as usize);
    match cfg.pattern {
        Pattern::If => {
            let t = cfg.threshold();
            let paths: Vec<u32> = (0..cfg.n).map(|i| (input.primary[at(i)] < t) as u32).collect();
            divergence::emulate_paths(&paths, 1, width)
        }
        Pattern::Loop => {
            let trips: Vec<u32> = (0..cfg.n).map(|i| input.primary[at(i)]).collect();
            divergence::emulate_loops(&trips, width)
        }
    }
}

/// Options of a prepared run.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions<'a> {
    /// Count divergence with the GPU probe (needs subgroups).
    pub probe: bool,
    /// Reference redirection: thread i works on element `remap[i]` (loop pattern).
    pub remap: Option<&'a [u32]>,
    /// As `remap`, with the index already on the GPU (e.g. from [`crate::remap::GpuRegroup`]).
    pub remap_on_gpu: Option<&'a wgpu::Buffer>,
    /// In-kernel tile sort (loop pattern; [`crate::remap::Strategy::Tile`]).
    pub tile: Option<TileSort>,
    /// Deferral (loop pattern; [`crate::remap::Strategy::Defer`]): loops of at least this
    /// many trips run in a second, dense dispatch.
    pub defer_from: Option<u32>,
}

/// How the tile-sorted loop kernel sorts: each workgroup of `workgroup` invocations takes a
/// tile of `workgroup × per_thread` elements and sorts it by equal-width trip class
/// (`shaders/shared/trip_class.wgsl`: `lo`, `width`, `classes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileSort {
    /// Start of the first class (smaller trip counts fall in it too).
    pub lo: u32,
    /// Trip counts per class (0 acts as 1).
    pub width: u32,
    /// Number of classes (1..=[`crate::remap::MAX_TILE_CLASSES`]).
    pub classes: u32,
    /// Invocations per workgroup.
    pub workgroup: u32,
    /// Elements per invocation.
    pub per_thread: u32,
}

impl TileSort {
    /// Elements per tile, `workgroup × per_thread`.
    pub fn elements(&self) -> usize {
        self.workgroup as usize * self.per_thread as usize
    }

    fn validate(&self, gpu: &Gpu) -> Result<()> {
        let tile = format!("a tile of {} invocations × {} elements in {} trip classes", self.workgroup, self.per_thread, self.classes);
        if self.classes == 0 || self.classes as usize > crate::remap::MAX_TILE_CLASSES {
            return Err(Error::invalid("tile sort", format!("{tile}: use 1..={} classes", crate::remap::MAX_TILE_CLASSES)));
        }
        let max_wg = gpu.caps().max_compute_invocations_per_workgroup;
        if self.workgroup == 0 || self.workgroup > max_wg {
            return Err(Error::invalid("tile_workgroup", format!("{tile}: use 1..={max_wg} invocations per workgroup")));
        }
        if self.per_thread == 0 {
            return Err(Error::invalid("tile_per_thread", format!("{tile}: use at least 1 element per invocation")));
        }
        let bytes = (self.elements() + crate::remap::MAX_TILE_CLASSES) as u64 * 4;
        let max_bytes = gpu.caps().max_compute_workgroup_storage_size as u64;
        if bytes > max_bytes {
            return Err(Error::Limit {
                what: format!("{tile}: workgroup memory (bytes)"),
                requested: bytes,
                limit: max_bytes,
                hint: "lower `tile_workgroup` or `tile_per_thread`".into(),
            });
        }
        Ok(())
    }
}

/// Default tile geometry of the loop kernel: 256 invocations × 4 elements, the fastest of the
/// geometries swept on an H100, 256×2 to 32×32 (benches/results/campaign-h100.md).
/// Longer tiles balance the subgroups of a workgroup better (a workgroup holds its place until
/// its slowest subgroup is done), but each invocation then walks more rounds one after the
/// other, and the kernel becomes latency-bound.
pub const TILE_WORKGROUP: u32 = 256;
/// Default elements per invocation of the tile sort (see [`TILE_WORKGROUP`]).
pub const TILE_PER_THREAD: u32 = 4;
const _: () = assert!((TILE_PER_THREAD * TILE_WORKGROUP) as usize == crate::remap::TILE_ELEMENTS);

/// Elements per invocation in the first pass of a deferring run by default: fewer workgroups,
/// so fewer barriers and global claims (on an H100: 1 → 8 took 2^24 one-long loops from 301
/// to 288 us end to end).
pub const DEFER_PER_THREAD: u32 = 8;

/// Refuses loops that `gpu` would silently cut short (lavapipe ends loops after 65535
/// iterations per invocation): `heavy` rounds (if), or `long` trips times the elements an
/// invocation runs one after the other (loop; a tile sort runs `per_thread` of them).
fn check_loops(gpu: &Gpu, cfg: &MicroConfig, tile: Option<TileSort>) -> Result<()> {
    let Some(limit) = gpu.loop_iteration_limit() else { return Ok(()) };
    let (requested, what, option) = match (cfg.pattern, tile) {
        (Pattern::If, _) => (cfg.heavy as u64, format!("`heavy={}`", cfg.heavy), "`heavy`"),
        (Pattern::Loop, None) => (cfg.long as u64, format!("`long={}`", cfg.long), "`long`"),
        (Pattern::Loop, Some(t)) => (
            cfg.long as u64 * t.per_thread as u64,
            format!("`long={}` × `tile_per_thread={}`", cfg.long, t.per_thread),
            "`long` or `tile_per_thread`",
        ),
    };
    if requested > limit {
        return Err(Error::Limit {
            what: format!("{what}: loop iterations per invocation"),
            requested,
            limit,
            hint: format!("{} cuts longer loops short; lower {option}", gpu.adapter_name()),
        });
    }
    Ok(())
}

/// Uploaded inputs and a bound kernel, ready to dispatch repeatedly.
#[derive(Debug)]
pub struct Prepared {
    kernel: Arc<Kernel>,
    bind: wgpu::BindGroup,
    results: GpuBuffer<u32>,
    probe: Option<(GpuBuffer<u32>, ProbeLayout)>,
    grid: [u32; 3],
    deferred: Option<DeferredPass>,
    // Kept alive for the bind group.
    _inputs: Vec<GpuBuffer<u32>>,
}

/// The second pass of a deferring run and the queue both passes share.
#[derive(Debug)]
struct DeferredPass {
    kernel: Arc<Kernel>,
    bind: wgpu::BindGroup,
    grid: [u32; 3],
    /// count, done, last count, then the deferred elements (`deferred` in data_loop.wgsl).
    #[cfg_attr(target_arch = "wasm32", expect(dead_code, reason = "read back by the native deferred_count"))]
    queue: GpuBuffer<u32>,
}

/// Workgroups of a deferring run's second pass by default (its grid is fixed, its invocations
/// stride over the deferred loops). On an H100 (room for 1056 such workgroups at once) 4096
/// ran 2^19 long loops fastest: 1056 were 2 % slower, 264 were 17 % slower, and workgroups
/// that find no loop left cost next to nothing (benches/results/campaign-h100.md).
pub const DEFER_WORKGROUPS: u32 = 4096;

impl Prepared {
    /// Uploads `input` and binds the kernel for `options` (probe, remapping); Err when `cfg` is invalid or a buffer or tile exceeds the device's limits.
    pub fn new(gpu: &Gpu, cfg: &MicroConfig, input: &MicroInput, options: RunOptions) -> Result<Prepared> {
        cfg.validate()?;
        let n = cfg.n;
        if input.primary.len() != n || (cfg.pattern == Pattern::Loop && input.seeds.len() != n) {
            return Err(Error::invalid("input", format!("{} values for n = {n}", input.primary.len())));
        }
        let width = if options.probe { Some(gpu.require_subgroups()?) } else { None };
        let mut defines = Vec::new();
        if width.is_some() {
            defines.push("PROBE");
        }
        if let Some(order) = options.remap {
            if cfg.pattern != Pattern::Loop || order.len() != n {
                return Err(Error::invalid("remap", "an index array of n entries, for the loop pattern"));
            }
        }
        if options.remap.is_some() || options.remap_on_gpu.is_some() {
            if cfg.pattern != Pattern::Loop {
                return Err(Error::invalid("remap", "redirection applies to the loop pattern"));
            }
            defines.push("REMAP");
        }
        if let Some(t) = options.tile {
            if cfg.pattern != Pattern::Loop || options.remap.is_some() || options.remap_on_gpu.is_some() {
                return Err(Error::invalid("tile sort", "applies to the loop pattern, without an index array"));
            }
            t.validate(gpu)?;
            defines.push("TILE");
        }
        if options.defer_from.is_some() {
            if cfg.pattern != Pattern::Loop || options.remap.is_some() || options.remap_on_gpu.is_some() || options.tile.is_some() {
                return Err(Error::invalid("deferral", "applies to the loop pattern, without an index array or tile sort"));
            }
            defines.push("DEFER");
        }
        check_loops(gpu, cfg, options.tile)?;
        let main = match cfg.pattern {
            Pattern::If => registry::micro::if_branch::MAIN,
            Pattern::Loop => registry::micro::data_loop::MAIN,
        };
        let (kernel, grid, workgroup_size) = match options.tile {
            Some(t) => {
                let constants = [("WG", t.workgroup as f64), ("TILE_PER_THREAD", t.per_thread as f64)];
                let kernel = gpu.kernel_with_constants(main, &defines, &constants)?;
                (kernel, gpu.grid((n as u64).div_ceil(t.per_thread as u64), t.workgroup)?, t.workgroup)
            }
            None if options.defer_from.is_some() => {
                let constants = [("DEFER_PER_THREAD", cfg.defer_per_thread as f64)];
                let kernel = gpu.kernel_with_constants(main, &defines, &constants)?;
                (kernel, gpu.grid((n as u64).div_ceil(cfg.defer_per_thread as u64), WORKGROUP_SIZE)?, WORKGROUP_SIZE)
            }
            None => (gpu.kernel(main, &defines)?, gpu.grid(n as u64, WORKGROUP_SIZE)?, WORKGROUP_SIZE),
        };
        let results = gpu.buffer_zeroed::<u32>("results", n, BufferKind::Storage)?;
        let params = match cfg.pattern {
            Pattern::If => [n as u32, cfg.threshold(), cfg.heavy, 0, 0, 0, 0, 0],
            Pattern::Loop => {
                let [lo, width, classes] = options.tile.map_or([0; 3], |t| [t.lo, t.width, t.classes]);
                [n as u32, lo, width, classes, options.defer_from.unwrap_or(u32::MAX), grid[0] * grid[1], 0, 0]
            }
        };
        let params = gpu.buffer("params", &params, BufferKind::Uniform)?;
        let mut inputs = vec![gpu.buffer("primary", &input.primary, BufferKind::Storage)?];
        if cfg.pattern == Pattern::Loop {
            inputs.push(gpu.buffer("seeds", &input.seeds, BufferKind::Storage)?);
        }
        let remap = options.remap.map(|o| gpu.buffer("remap index", o, BufferKind::Storage)).transpose()?;
        let remap_on_gpu = options.remap_on_gpu.cloned();
        let workgroups = grid[0] as usize * grid[1] as usize;
        // a deferring run's second pass: its fixed grid and its queue (DeferredPass)
        let second = match options.defer_from {
            Some(_) => Some((
                gpu.grid((n as u64).min(cfg.defer_workgroups as u64 * WORKGROUP_SIZE as u64), WORKGROUP_SIZE)?,
                gpu.buffer_zeroed::<u32>("deferred loops", n + 3, BufferKind::Storage)?,
            )),
            None => None,
        };
        let probed_workgroups = workgroups + second.as_ref().map_or(0, |(g, _)| g[0] as usize * g[1] as usize);
        let probe = match width {
            Some(w) => {
                let layout = ProbeLayout::new(1, probed_workgroups, workgroup_size, w);
                Some((gpu.buffer_zeroed::<u32>("probe records", layout.words(), BufferKind::Storage)?, layout))
            }
            None => None,
        };
        let mut slots: Vec<(u32, &dyn crate::gpu::Bind)> = Vec::new();
        use registry::micro::data_loop::binding as data_loop;
        match cfg.pattern {
            Pattern::If => {
                use registry::micro::if_branch::binding as if_branch;
                slots.extend([
                    (if_branch::VALUES, &inputs[0] as _),
                    (if_branch::RESULTS, &results as _),
                    (if_branch::PARAMS, &params as _),
                ]);
            }
            Pattern::Loop => {
                slots.extend([
                    (data_loop::TRIPS, &inputs[0] as _),
                    (data_loop::SEEDS, &inputs[1] as _),
                    (data_loop::RESULTS, &results as _),
                    (data_loop::PARAMS, &params as _),
                ]);
                if let Some(r) = &remap {
                    slots.push((data_loop::REMAP_INDEX, r));
                } else if let Some(r) = &remap_on_gpu {
                    slots.push((data_loop::REMAP_INDEX, r));
                }
            }
        }
        if let Some((b, _)) = &probe {
            slots.push((crate::divergence::PROBE_BINDING, b));
        }
        if let Some((_, queue)) = &second {
            slots.push((data_loop::DEFERRED, queue as &dyn crate::gpu::Bind));
        }
        let second_kernel = match &second {
            Some(_) => {
                let kernel = gpu.kernel(registry::micro::data_loop::RUN_DEFERRED, &defines)?;
                let bind = kernel.bind_at(gpu, &slots)?;
                Some((kernel, bind))
            }
            None => None,
        };
        let bind = kernel.bind_at(gpu, &slots)?;
        let deferred = second_kernel.zip(second).map(|((kernel, bind), (grid, queue))| DeferredPass { kernel, bind, grid, queue });
        inputs.push(params);
        inputs.extend(remap);
        Ok(Prepared { kernel, bind, results, probe, grid, deferred, _inputs: inputs })
    }

    /// Runs [`Prepared::steps`] in one submission and times them, awaiting the GPU (the path a
    /// browser page takes).
    pub async fn dispatch_async(&self, gpu: &Gpu) -> Result<Timing> {
        gpu.run_async(&self.steps(), true).await
    }

    /// Loops the last run deferred to its second pass (None without deferral).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn deferred_count(&self, gpu: &Gpu) -> Result<Option<u32>> {
        match &self.deferred {
            Some(d) => Ok(Some(gpu.read_bytes(&d.queue.buffer, 12).map(|b| u32::from_le_bytes([b[8], b[9], b[10], b[11]]))?)),
            None => Ok(None),
        }
    }

    /// One result word per thread, as the last run left them.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn results(&self, gpu: &Gpu) -> Result<Vec<u32>> {
        gpu.read(&self.results)
    }

    /// The buffer the kernel writes its results to (n u32), to read back without blocking.
    pub fn results_buffer(&self) -> &GpuBuffer<u32> {
        &self.results
    }

    /// The probe's counters from the last dispatch, read back without blocking (None when not
    /// probing).
    pub async fn divergence_async(&self, gpu: &Gpu) -> Result<Option<Divergence>> {
        match &self.probe {
            Some((buffer, layout)) => Ok(Some(layout.decode(&gpu.read_async(buffer).await?))),
            None => Ok(None),
        }
    }
}

impl PreparedRun for Prepared {
    /// The kernel's work: its dispatch, or for a deferring run both passes.
    fn steps(&self) -> Vec<Step<'_>> {
        let first = Step::dispatch(&self.kernel, &self.bind, self.grid);
        match &self.deferred {
            Some(d) => vec![first, Step::dispatch(&d.kernel, &d.bind, d.grid)],
            None => vec![first],
        }
    }
    /// One result word per thread.
    fn outputs(&self) -> Vec<(&wgpu::Buffer, u64)> {
        vec![(&self.results.buffer, self.results.bytes())]
    }
    /// Blocks on [`Prepared::divergence_async`].
    #[cfg(not(target_arch = "wasm32"))]
    fn divergence(&self, gpu: &Gpu) -> Result<Option<Divergence>> {
        crate::gpu::block_on(self.divergence_async(gpu))
    }
}

/// Times the configuration, checks it against the CPU reference, and measures divergence
/// (GPU probe in a separate run so it does not perturb timing; host emulation without subgroups).
#[cfg(not(target_arch = "wasm32"))]
pub fn bench(gpu: &Gpu, cfg: &MicroConfig, protocol: &Protocol) -> Result<Record> {
    cfg.validate()?;
    cfg.footprint().check(gpu)?;
    check_loops(gpu, cfg, None)?;
    let input = generate(cfg)?;
    let plain = Prepared::new(gpu, cfg, &input, RunOptions::default())?;
    let stats = harness::measure(protocol, || plain.dispatch(gpu))?;
    // the reference after the GPU: a kernel past the timeout is reported before seconds of host work
    let check = Check::exact(&plain.results(gpu)?, &reference(cfg, &input));
    drop(plain);

    let (divergence, source) = if gpu.caps().subgroup_size.is_some() {
        let probed = Prepared::new(gpu, cfg, &input, RunOptions { probe: true, ..Default::default() })?;
        probed.dispatch(gpu)?;
        let d = probed.divergence(gpu)?.ok_or_else(|| Error::gpu("probing", "no probe records"))?;
        (d, "gpu-probe")
    } else {
        (emulate(cfg, &input, None, cfg.group)?, "host-emulation")
    };
    let work: f64 = match cfg.pattern {
        Pattern::If => cfg.n as f64,
        Pattern::Loop => input.primary.iter().map(|&t| t as f64).sum(),
    };
    let variant = match cfg.pattern {
        Pattern::If => format!("p={}", cfg.probability),
        Pattern::Loop => cfg.distribution.name().into(),
    };
    let record = Record::new(gpu, "micro", cfg.kernel_name(), variant, stats, check)
        .with_config(cfg, cfg.seed)
        .with_divergence(Some(divergence.summary()))
        .with_extra(DivergenceExtra { divergence_source: source.into(), ..Default::default() });
    Ok(match cfg.pattern {
        Pattern::If => record.with_throughput(work, 1e-6, "Mthreads/s"),
        Pattern::Loop => record.with_throughput(work, 1e-9, "G iterations/s"),
    })
}
