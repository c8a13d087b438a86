//! The registry's lines: each workload's configuration at the tiny, quick and paper scales and
//! the runner it calls. Tiny sizes run in seconds on a CPU adapter (the test suite runs them
//! all); paper sizes are the papers' own, for a real GPU.

use super::{Entry, Scale, Workload};
use crate::gpu::shader::registry as shader;
use crate::harness::Footprint;
use crate::kernels::flowshop::bench::{self as flowshop_bench, BenchConfig};
use crate::kernels::flowshop::gpu::ThreadMapping;
use crate::kernels::flowshop::{Exploration, LowerBound};
use crate::kernels::matmul::{self, Compiler, RegtileConfig, Shape, Variant};
use crate::kernels::micro::{self, Distribution, MicroConfig, Pattern};
use crate::kernels::redirect::{self, RedirectConfig, RedirectKernel};
use crate::kernels::split::{BranchConfig, LoopConfig, MaskLayout};
use crate::kernels::{blackscholes, gafort, lbm, mcubes, reduction};
use crate::pt::cases::{forest, gsync, prodcons, sync};
use crate::pt::{barrier as pt_barrier, queue as pt_queue};
use crate::remap::Strategy;
use crate::remap::Variants;
use serde::{Deserialize, Serialize};
#[cfg(not(target_arch = "wasm32"))]
use {
    super::Runner, crate::kernels::flowshop::bench::bench_instance, crate::kernels::micro::remapped, crate::kernels::split,
    crate::pt::cases as pt,
};

const ZHANG_FIG1: &str = "Zhang et al., ICS'10, Figure 1";
const ZHANG_S5: &str = "Zhang et al., ICS'10, section 5";
const CARRILLO: &str = "Carrillo et al., G80 branch and loop splitting";
const RYOO: &str = "Ryoo et al., PPoPP'08, matmul ladder";
const GUPTA: &str = "Gupta et al., persistent threads";
const CHAKROUN: &str = "Chakroun et al., PPAM'11, Tables 1-2";

fn boxed<C: Serialize + serde::de::DeserializeOwned + 'static>(e: Entry<C>) -> Box<dyn Workload> {
    Box::new(e)
}

/// The registry line of a family on the generic redirect bench ([`redirect::bench`]), named
/// after its family; its original variant records into a caller's encoder.
fn redirect_entry<K: RedirectKernel + 'static>(
    summary: &'static str,
    config: fn(Scale) -> VariantParams<K::Config>,
    shader: crate::gpu::shader::Entry,
) -> Box<dyn Workload>
where
    K::Config: Clone + serde::de::DeserializeOwned,
{
    boxed(Entry {
        name: K::FAMILY,
        family: K::FAMILY,
        paper: ZHANG_S5,
        summary,
        config,
        #[cfg(not(target_arch = "wasm32"))]
        run: Runner::Whole(|gpu, c, p| redirect::bench::<K>(gpu, &c.config, c.variants, p)),
        prepare: Some(|gpu, c| Ok(Box::new(redirect::recorded::<K>(gpu, c.config.clone())?))),
        shader: Some(shader),
        footprint: Some(|c| c.config.validate().map(|_| Some(c.config.footprint()))),
        warps: None,
    })
}

/// A family's configuration and which of its variants run: every one unless `variants` says
/// otherwise (`none`: the original kernel; `redirect`: the original and reference
/// redirection). Left out of the parameters while it is `all`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct VariantParams<C> {
    /// The family's configuration.
    #[serde(flatten)]
    pub config: C,
    /// Which variants run.
    #[serde(default = "every_variant", skip_serializing_if = "is_every_variant")]
    pub variants: Variants,
}

fn every_variant() -> Variants {
    Variants::All
}

fn is_every_variant(v: &Variants) -> bool {
    *v == Variants::All
}

/// `config` with every variant.
fn all_variants<C>(config: C) -> VariantParams<C> {
    VariantParams { config, variants: Variants::All }
}

/// The divergent loop at a scale: one long lane per 32 by default.
fn micro_loop(scale: Scale) -> MicroConfig {
    MicroConfig { pattern: Pattern::Loop, n: scale.pick(1 << 12, 1 << 16, 1 << 24), ..Default::default() }
}

/// A product's shape and seed; the command line also sets `regtile`'s tiles and the compiler
/// (left out of the parameters where they are the defaults, as the explorer keeps them).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct MatmulParams {
    pub shape: Shape,
    pub seed: u64,
    #[serde(default, skip_serializing_if = "is_default")]
    pub regtile: RegtileConfig,
    #[serde(default, skip_serializing_if = "is_default")]
    pub compiler: Compiler,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// Branched and split kernels over the else fractions of a decision mask.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BranchSweep {
    /// The data and the branches' weights.
    #[serde(flatten)]
    pub config: BranchConfig,
    /// Fractions of the elements on the else branch, each in 0..=1.
    pub else_fractions: Vec<f64>,
}

fn branch_sweep(scale: Scale) -> BranchSweep {
    BranchSweep {
        config: BranchConfig { n: scale.pick(1 << 12, 1 << 16, 1 << 22), light_rounds: 4, heavy_rounds: 16, seed: 1 },
        else_fractions: scale.pick(vec![0.0, 0.5], vec![0.0, 0.25, 0.5, 1.0], vec![0.0, 0.1, 0.25, 0.5, 0.75, 1.0]),
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn run_branch(
    gpu: &crate::Gpu,
    s: &BranchSweep,
    layout: MaskLayout,
    protocol: &crate::harness::Protocol,
    progress: Option<&crate::harness::Progress>,
) -> crate::Result<Vec<crate::harness::Record>> {
    // an empty sweep would run nothing and report an empty table as a success
    if s.else_fractions.is_empty() {
        return Err(crate::Error::invalid("else_fractions", "empty: give at least one fraction in [0, 1]"));
    }
    split::sweep(gpu, &s.config, layout, &s.else_fractions, protocol, progress)
}

/// The loop or if kernel ready to record: inputs from the seed, the CPU reference beside them.
fn micro_recording(gpu: &crate::Gpu, cfg: &MicroConfig) -> crate::Result<Box<dyn super::Recording>> {
    let input = micro::generate(cfg)?;
    let expected = micro::reference(cfg, &input);
    let prepared = micro::Prepared::new(gpu, cfg, &input, Default::default())?;
    Ok(super::recordings::micro_checked(prepared, expected))
}

/// Per-warp divergence of the loop or if kernel: as laid out and, for the loop, with threads
/// taking elements in order of trip count (reference redirection, Zhang's remapping). Only
/// awaits the GPU (a browser page counts with it too); `Workload::warps` blocks on it.
fn micro_warps(gpu: &crate::Gpu, cfg: MicroConfig, counting: super::Counting) -> super::WarpsFuture<'_> {
    Box::pin(async move {
        cfg.validate()?;
        let input = micro::generate(&cfg)?;
        let mut maps = vec![micro_warp_map(gpu, &cfg, &input, None, counting, "as laid out").await?];
        if cfg.pattern == Pattern::Loop {
            let mut order: Vec<u32> = (0..cfg.n as u32).collect();
            order.sort_by_key(|&i| input.primary[i as usize]);
            maps.push(micro_warp_map(gpu, &cfg, &input, Some(&order), counting, "threads sorted by trip count").await?);
        }
        Ok(maps)
    })
}

/// One map of [`micro_warps`]: the GPU probe where `counting` asks for it and the adapter has
/// subgroups, else host emulation.
async fn micro_warp_map(
    gpu: &crate::Gpu,
    cfg: &MicroConfig,
    input: &micro::MicroInput,
    order: Option<&[u32]>,
    counting: super::Counting,
    layout: &str,
) -> crate::Result<super::WarpMap> {
    let (divergence, source) = match (counting, gpu.caps().subgroup_size) {
        (super::Counting::Probe(_), Some(w)) => {
            let options = micro::RunOptions { probe: true, remap: order, ..Default::default() };
            let probed = micro::Prepared::new(gpu, cfg, input, options)?;
            probed.dispatch_async(gpu).await?;
            let d = probed.divergence_async(gpu).await?.ok_or_else(|| crate::Error::gpu("probing", "the probe recorded nothing"))?;
            (d, format!("GPU probe, subgroup width {w}"))
        }
        (super::Counting::Probe(w) | super::Counting::Emulate(w), _) => {
            (micro::emulate(cfg, input, order, w)?, format!("host emulation, W = {w}"))
        }
    };
    Ok(super::WarpMap { layout: layout.into(), source, divergence })
}

/// The persistent-threads runtime's options a sweep sets ([`crate::pt::PtOptions`]: `spin_cap`,
/// `grace`, `launch`), each left out of the parameters at its default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct PtRuntimeParams {
    #[serde(skip_serializing_if = "is_default_spin_cap")]
    pub spin_cap: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grace: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch: Option<u32>,
}

impl Default for PtRuntimeParams {
    fn default() -> Self {
        PtRuntimeParams { spin_cap: crate::pt::DEFAULT_SPIN_CAP, grace: None, launch: None }
    }
}

fn is_default_spin_cap(spin_cap: &u32) -> bool {
    *spin_cap == crate::pt::DEFAULT_SPIN_CAP
}

impl PtRuntimeParams {
    /// The runtime's options, each checked.
    fn options(&self) -> crate::Result<crate::pt::PtOptions> {
        let options = crate::pt::PtOptions { spin_cap: self.spin_cap, grace: self.grace, launch: self.launch, ..Default::default() };
        options.validate()?;
        Ok(options)
    }

    /// A runtime with these options, each checked.
    #[cfg(not(target_arch = "wasm32"))]
    fn runtime(&self) -> crate::Result<crate::pt::Runtime> {
        Ok(crate::pt::Runtime::new(self.options()?))
    }
}

/// A persistent-threads case's configuration, the tiers to run (`tier`: 0, 1, 2; every tier the
/// case has when empty) and the runtime's options; `tier` is left out of the parameters while empty.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct PtCaseParams<C> {
    #[serde(flatten)]
    pub config: C,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tier: Vec<u8>,
    #[serde(flatten)]
    pub runtime: PtRuntimeParams,
}

/// `config` on every tier with the default runtime.
fn pt_case<C>(config: C) -> PtCaseParams<C> {
    PtCaseParams { config, tier: Vec::new(), runtime: PtRuntimeParams::default() }
}

impl<C> PtCaseParams<C> {
    /// Every parameter checked before anything runs (the tiers, the runtime's options, and the
    /// configuration by the case's own `check`), so that a sweep refuses a bad point before
    /// its first run; a case knows no footprint before it runs.
    fn checked<T>(&self, check: fn(&C) -> crate::Result<T>) -> crate::Result<Option<Footprint>> {
        crate::pt::Tier::numbered(&self.tier)?;
        self.runtime.options()?;
        check(&self.config)?;
        Ok(None)
    }
}

/// A persistent-threads case (built by `new` from the configuration) at the tiers `c.tier` asks
/// for, lower ones first; each may fall back, and says so. A tier the case lacks runs as the
/// one below it that it has, unless the case has some of the tiers asked for.
#[cfg(not(target_arch = "wasm32"))]
fn run_case<C: Clone, K: pt::Case>(
    gpu: &crate::Gpu,
    c: &PtCaseParams<C>,
    new: fn(C) -> crate::Result<K>,
    protocol: &crate::harness::Protocol,
) -> crate::Result<Vec<crate::harness::Record>> {
    let rt = c.runtime.runtime()?;
    let asked = crate::pt::Tier::numbered(&c.tier)?;
    let case = new(c.config.clone())?;
    let has: Vec<crate::pt::Tier> = asked.iter().copied().filter(|t| case.supported().contains(t)).collect();
    let tiers = match (asked.is_empty(), has.is_empty()) {
        (true, _) => case.supported().to_vec(),
        (false, true) => asked,
        (false, false) => has,
    };
    pt::bench(gpu, &rt, &case, &tiers, protocol)
}

/// Global barrier latency at one workgroup count (0: as many as are co-resident).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct BarrierParams {
    pub workgroups: u32,
    pub iterations: u32,
    pub kind: pt_barrier::BarrierKind,
    #[serde(flatten)]
    pub runtime: PtRuntimeParams,
}

impl BarrierParams {
    /// Every parameter checked before anything runs.
    fn checked(&self) -> crate::Result<Option<Footprint>> {
        if self.runtime.launch.is_some() {
            return Err(crate::Error::invalid("launch", "the barrier launches `workgroups` (0: as many as are co-resident)"));
        }
        if self.iterations == 0 {
            return Err(crate::Error::invalid("iterations", "0 barriers (use 1 or more)"));
        }
        self.runtime.options()?;
        Ok(None)
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn run_barrier(gpu: &crate::Gpu, b: &BarrierParams, protocol: &crate::harness::Protocol) -> crate::Result<Vec<crate::harness::Record>> {
    b.checked()?;
    let rt = b.runtime.runtime()?;
    let workgroups = if b.workgroups == 0 { rt.capability(gpu)?.discovered.max(1) } else { b.workgroups };
    pt_barrier::bench_barrier(gpu, &rt, &[workgroups], &[b.kind], b.iterations, protocol)
}

/// One queue launch and the runtime's options (`launch` sizes it where `workgroups` is not given).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct PtQueueParams {
    #[serde(flatten)]
    pub config: pt_queue::QueueConfig,
    #[serde(flatten)]
    pub runtime: PtRuntimeParams,
}

fn queue(kind: pt_queue::QueueKind, scale: Scale) -> PtQueueParams {
    let config = pt_queue::QueueConfig { kind, n: scale.pick(1 << 12, 1 << 16, 1 << 24), ..Default::default() };
    PtQueueParams { config, runtime: PtRuntimeParams::default() }
}

impl PtQueueParams {
    /// Every parameter checked before anything runs.
    fn checked(&self) -> crate::Result<Option<Footprint>> {
        self.config.validate()?;
        self.runtime.options()?;
        Ok(None)
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn run_queue(gpu: &crate::Gpu, q: &PtQueueParams, protocol: &crate::harness::Protocol) -> crate::Result<Vec<crate::harness::Record>> {
    pt_queue::bench_queue(gpu, &q.runtime.runtime()?, &q.config, protocol).map(|r| vec![r])
}

/// Every workload, in family order.
pub(super) fn all() -> Vec<Box<dyn Workload>> {
    let mut v: Vec<Box<dyn Workload>> = vec![
        boxed(Entry {
            name: "micro-loop",
            family: "micro",
            paper: ZHANG_FIG1,
            summary: "a data-dependent loop: trip counts from a distribution (one long lane per group by default)",
            config: micro_loop,
            #[cfg(not(target_arch = "wasm32"))]
            run: Runner::Whole(|gpu, c, p| micro::bench(gpu, c, p).map(|r| vec![r])),
            prepare: Some(micro_recording),
            shader: Some(shader::micro::data_loop::MAIN),
            footprint: None,
            warps: Some(micro_warps),
        }),
        boxed(Entry {
            name: "micro-if",
            family: "micro",
            paper: ZHANG_FIG1,
            summary: "a data-dependent if: a fraction of threads take an expensive path",
            config: |s| MicroConfig {
                pattern: Pattern::If,
                distribution: Distribution::Random,
                n: s.pick(1 << 12, 1 << 16, 1 << 24),
                ..Default::default()
            },
            #[cfg(not(target_arch = "wasm32"))]
            run: Runner::Whole(|gpu, c, p| micro::bench(gpu, c, p).map(|r| vec![r])),
            prepare: Some(micro_recording),
            shader: Some(shader::micro::if_branch::MAIN),
            footprint: None,
            warps: Some(micro_warps),
        }),
        redirect_entry::<lbm::Lbm>(
            "3D lattice Boltzmann D3Q19 with obstacle cells, original and reference redirection",
            |s| all_variants(lbm::LbmConfig { edge: s.pick(12, 32, 192), ..Default::default() }),
            shader::lbm::stream_collide::MAIN,
        ),
        redirect_entry::<gafort::Gafort>(
            "GAFORT's crossover and mutation of children, original and reference redirection",
            |s| all_variants(gafort::GaConfig { children: s.pick(1 << 10, 1 << 14, 1 << 16), ..Default::default() }),
            shader::gafort::children::MAIN,
        ),
        redirect_entry::<mcubes::MarchingCubes>(
            "marching cubes over a scalar field (classify, scan, generate), original and redirection",
            |s| all_variants(mcubes::McConfig { edge: s.pick(12, 48, 256), ..Default::default() }),
            shader::mcubes::generate::MAIN,
        ),
        boxed(Entry {
            name: "reduction",
            family: "reduction",
            paper: ZHANG_S5,
            summary: "f32 sum: interleaved, its index-array remap, sequential, fast and blocked kernels",
            config: |s| all_variants(reduction::ReductionConfig { n: s.pick(1 << 12, 1 << 18, 1 << 24), seed: 1, fast_groups: None }),
            #[cfg(not(target_arch = "wasm32"))]
            run: Runner::Whole(|gpu, c, p| reduction::bench(gpu, &c.config, c.variants, p)),
            prepare: Some(|gpu, c| super::recordings::reduction(gpu, &c.config)),
            shader: Some(shader::reduction::interleaved::MAIN),
            footprint: Some(|c| c.config.validate().map(|_| Some(c.config.footprint()))),
            warps: None,
        }),
        redirect_entry::<blackscholes::BlackScholes>(
            "BlackScholes option pricing: the control case with no divergence",
            |s| all_variants(blackscholes::BsConfig { n: s.pick(4096, 1 << 16, 1 << 24), ..Default::default() }),
            shader::blackscholes::black_scholes::MAIN,
        ),
        boxed(Entry {
            name: "branch-split-linear",
            family: "carrillo",
            paper: CARRILLO,
            summary: "branched vs split kernels, else lanes in one contiguous block",
            config: branch_sweep,
            #[cfg(not(target_arch = "wasm32"))]
            run: Runner::Points(
                |s| s.else_fractions.len() as u64,
                |gpu, c, p, progress| run_branch(gpu, c, MaskLayout::Linear, p, progress),
            ),
            prepare: Some(|gpu, c| super::recordings::branch(gpu, c, MaskLayout::Linear)),
            shader: Some(shader::split::branch_split::BRANCHED),
            footprint: Some(|s| s.config.validate().map(|_| Some(s.config.footprint()))),
            warps: None,
        }),
        boxed(Entry {
            name: "branch-split-random",
            family: "carrillo",
            paper: CARRILLO,
            summary: "branched vs split kernels, else lanes scattered at random",
            config: branch_sweep,
            #[cfg(not(target_arch = "wasm32"))]
            run: Runner::Points(
                |s| s.else_fractions.len() as u64,
                |gpu, c, p, progress| run_branch(gpu, c, MaskLayout::Random, p, progress),
            ),
            prepare: Some(|gpu, c| super::recordings::branch(gpu, c, MaskLayout::Random)),
            shader: Some(shader::split::branch_split::BRANCHED),
            footprint: Some(|s| s.config.validate().map(|_| Some(s.config.footprint()))),
            warps: None,
        }),
        boxed(Entry {
            name: "loop-split",
            family: "carrillo",
            paper: CARRILLO,
            summary: "a fused loop over two arrays vs one loop per array",
            config: |s| LoopConfig { n: s.pick(1 << 12, 1 << 16, 1 << 20), ..Default::default() },
            #[cfg(not(target_arch = "wasm32"))]
            run: Runner::Whole(|gpu, c, p| split::bench_loops(gpu, c, p).map(Vec::from)),
            prepare: None,
            shader: Some(shader::split::loop_split::FUSED),
            footprint: Some(|c| c.validate().map(|_| Some(c.footprint()))),
            warps: None,
        }),
    ];
    v.extend([
        boxed(Entry {
            name: "pt-sync",
            family: "pt",
            paper: GUPTA,
            summary: "CPU-GPU synchronization: a consumer sized by readback or indirect dispatch vs persistent threads",
            config: |s| pt_case(sync::SyncConfig { n: s.pick(1 << 12, 1 << 16, 1 << 20), ..Default::default() }),
            #[cfg(not(target_arch = "wasm32"))]
            run: Runner::Whole(|gpu, c, p| run_case(gpu, c, sync::SyncCase::new, p)),
            prepare: None,
            shader: Some(shader::pt::sync::FUSED),
            footprint: Some(|c| c.checked(sync::SyncConfig::validate)),
            warps: None,
        }),
        boxed(Entry {
            name: "pt-forest",
            family: "pt",
            paper: GUPTA,
            summary: "load balancing: tilted or complete forest expansion, level kernels vs a persistent queue",
            config: |s| {
                pt_case(forest::ForestConfig {
                    items: s.pick(16, 64, 128),
                    depth: s.pick(8, 20, 50),
                    fmas: s.pick(16, 100, 1000),
                    ..Default::default()
                })
            },
            #[cfg(not(target_arch = "wasm32"))]
            run: Runner::Whole(|gpu, c, p| run_case(gpu, c, forest::ForestCase::new, p)),
            prepare: None,
            shader: Some(shader::pt::forest::EXPAND_PT),
            footprint: Some(|c| c.checked(forest::ForestConfig::validate)),
            warps: None,
        }),
        boxed(Entry {
            name: "pt-prodcons",
            family: "pt",
            paper: GUPTA,
            summary: "producer-consumer locality: a global reduction or a two-stage workload",
            config: |s| pt_case(prodcons::ProdConsConfig { n: s.pick(1 << 12, 1 << 18, 1 << 22), ..Default::default() }),
            #[cfg(not(target_arch = "wasm32"))]
            run: Runner::Whole(|gpu, c, p| run_case(gpu, c, prodcons::ProdConsCase::new, p)),
            prepare: None,
            shader: Some(shader::pt::prodcons::REDUCE_PT),
            footprint: Some(|c| c.checked(prodcons::ProdConsConfig::validate)),
            warps: None,
        }),
        boxed(Entry {
            name: "pt-gsync",
            family: "pt",
            paper: GUPTA,
            summary: "global synchronization: kernel relaunch vs an in-dispatch global barrier",
            config: |s| {
                pt_case(gsync::GsyncConfig {
                    blocks: s.pick(16, 256, 1024),
                    syncs: s.pick(4, 20, 100),
                    fmas: s.pick(16, 100, 1000),
                    seed: 1,
                })
            },
            #[cfg(not(target_arch = "wasm32"))]
            run: Runner::Whole(|gpu, c, p| run_case(gpu, c, gsync::GsyncCase::new, p)),
            prepare: None,
            shader: Some(shader::pt::gsync::PHASES_PT),
            footprint: Some(|c| c.checked(gsync::GsyncConfig::validate)),
            warps: None,
        }),
        boxed(Entry {
            name: "pt-barrier",
            family: "pt",
            paper: GUPTA,
            summary: "global barrier latency in one dispatch beside relaunching a kernel (0 workgroups: all co-resident)",
            config: |s| BarrierParams {
                workgroups: 0,
                iterations: s.pick(100, 200, 1000),
                kind: Default::default(),
                runtime: PtRuntimeParams::default(),
            },
            #[cfg(not(target_arch = "wasm32"))]
            run: Runner::Whole(run_barrier),
            prepare: None,
            shader: Some(shader::pt::capability::BARRIER),
            footprint: Some(BarrierParams::checked),
            warps: None,
        }),
        boxed(Entry {
            name: "pt-queue-single",
            family: "pt",
            paper: GUPTA,
            summary: "work-queue throughput: one global head, one claim per item (every item exactly once)",
            config: |s| queue(pt_queue::QueueKind::Single, s),
            #[cfg(not(target_arch = "wasm32"))]
            run: Runner::Whole(run_queue),
            prepare: Some(|gpu, c| Ok(Box::new(pt_queue::recorded(gpu, &c.config)?))),
            shader: Some(shader::pt::queue::CLAIMS),
            footprint: Some(PtQueueParams::checked),
            warps: None,
        }),
        boxed(Entry {
            name: "pt-queue-chunked",
            family: "pt",
            paper: GUPTA,
            summary: "work-queue throughput: one global head, a chunk of items per claim",
            config: |s| queue(pt_queue::QueueKind::Chunked, s),
            #[cfg(not(target_arch = "wasm32"))]
            run: Runner::Whole(run_queue),
            prepare: Some(|gpu, c| Ok(Box::new(pt_queue::recorded(gpu, &c.config)?))),
            shader: Some(shader::pt::queue::CLAIMS),
            footprint: Some(PtQueueParams::checked),
            warps: None,
        }),
        boxed(Entry {
            name: "pt-queue-distributed",
            family: "pt",
            paper: GUPTA,
            summary: "work-queue throughput: distributed heads over item ranges with stealing",
            config: |s| queue(pt_queue::QueueKind::Distributed, s),
            #[cfg(not(target_arch = "wasm32"))]
            run: Runner::Whole(run_queue),
            prepare: Some(|gpu, c| Ok(Box::new(pt_queue::recorded(gpu, &c.config)?))),
            shader: Some(shader::pt::queue::CLAIMS),
            footprint: Some(PtQueueParams::checked),
            warps: None,
        }),
        boxed(Entry {
            name: "pt-queue-ring",
            family: "pt",
            paper: GUPTA,
            summary: "work-queue throughput: a bounded ring, one push and one pop per item (blocking tier, where allowed)",
            config: |s| queue(pt_queue::QueueKind::Ring, s),
            #[cfg(not(target_arch = "wasm32"))]
            run: Runner::Whole(run_queue),
            prepare: None,
            shader: Some(shader::pt::queue::RING),
            footprint: Some(PtQueueParams::checked),
            warps: None,
        }),
        boxed(Entry {
            name: "flowshop-bound-pools",
            family: "flowshop",
            paper: CHAKROUN,
            summary: "LB2 bounding of flow-shop B&B pools built depth- and breadth-first, every bound checked against the CPU",
            config: |s| BenchConfig {
                instance: "ta021".into(),
                pool_sizes: s.pick(vec![256], vec![1024, 4096], vec![4096, 65536]),
                bound: LowerBound::Lb2,
                strategies: vec![Exploration::DepthFirst, Exploration::BreadthFirst],
                branchless: vec![true, false],
                walk_prefix: vec![false],
                mapping: ThreadMapping::PerChild,
                cpu: false,
                probe: true,
            },
            #[cfg(not(target_arch = "wasm32"))]
            run: Runner::Points(|c| (c.pool_sizes.len() * c.strategies.len()) as u64, bench_instance),
            prepare: Some(|gpu, c| Ok(Box::new(flowshop_bench::recorded(gpu, c)?))),
            shader: Some(shader::flowshop::lb2::LB2),
            footprint: None,
            warps: None,
        }),
    ]);
    for variant in Variant::ALL {
        v.push(matmul_entry(variant));
    }
    for strategy in
        [Strategy::None, Strategy::Redirect, Strategy::Lam, Strategy::GpuRegroup, Strategy::Tile, Strategy::Defer, Strategy::Auto]
    {
        v.push(remap_entry(strategy));
    }
    v
}

fn matmul_entry(variant: Variant) -> Box<dyn Workload> {
    // one registry line per rung: the rung is fixed by the entry, so it is a const parameter
    macro_rules! rung {
        ($($v:ident => $name:literal),*) => {
            match variant {
                $(Variant::$v => boxed(Entry {
                    name: $name,
                    family: "matmul",
                    paper: RYOO,
                    summary: "C = A·B in f32, one rung of the optimization ladder, checked against the CPU product",
                    config: |s| MatmulParams {
                        shape: Shape::square(s.pick(64, 512, 4096)),
                        seed: 1,
                        regtile: RegtileConfig::default(),
                        compiler: Compiler::Wgpu,
                    },
                    #[cfg(not(target_arch = "wasm32"))]
                    run: Runner::Whole(|gpu, c, p| matmul::bench_compiled(gpu, Variant::$v, &c.compiler, c.shape, &c.regtile, p, c.seed).map(|r| vec![r])),
                    prepare: Some(|gpu, c| super::recordings::matmul(gpu, Variant::$v, c)),
                    shader: matmul::spec(Variant::$v, Shape::square(64), &RegtileConfig::default()).ok().map(|k| k.entry),
                    footprint: None,
                    warps: None,
                }),)*
            }
        };
    }
    rung!(Naive => "matmul-naive", Tiled4 => "matmul-tiled4", Tiled8 => "matmul-tiled8", Tiled12 => "matmul-tiled12", Tiled16 => "matmul-tiled16",
          Unrolled => "matmul-unrolled", Prefetch => "matmul-prefetch", Regtile => "matmul-regtile")
}

fn remap_entry(strategy: Strategy) -> Box<dyn Workload> {
    macro_rules! strategies {
        ($($s:ident => $name:literal),*) => {
            match strategy {
                $(Strategy::$s => boxed(Entry {
                    name: $name,
                    family: "remap",
                    paper: ZHANG_S5,
                    summary: "the divergent loop remapped (thread-data remapping), remap cost beside kernel time",
                    config: micro_loop,
                    #[cfg(not(target_arch = "wasm32"))]
                    run: Runner::Whole(|gpu, c, p| remapped::bench_remap(gpu, c, Strategy::$s, p).map(|r| vec![r])),
                    prepare: match Strategy::$s {
                        Strategy::Redirect | Strategy::Tile | Strategy::Defer => Some(|gpu, c| super::recordings::remap(gpu, c, Strategy::$s)),
                        _ => None,
                    },
                    shader: Some(shader::micro::data_loop::MAIN),
                    footprint: None,
                    warps: Some(micro_warps),
                }),)*
            }
        };
    }
    strategies!(None => "remap-none", Redirect => "remap-redirect", Lam => "remap-lam", GpuRegroup => "remap-gpu", Tile => "remap-tile",
                Defer => "remap-defer", Auto => "remap-auto")
}
