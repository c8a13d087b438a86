//! The loop pattern under each remapping strategy (Zhang §3-4, and on-GPU regrouping): the same
//! outputs as the unmapped kernel, with the remap cost measured beside the kernel time.

use super::{MicroConfig, MicroInput, Prepared, RunOptions, TileSort};
use crate::divergence::DivergenceSummary;
use crate::error::Result;
use crate::gpu::Gpu;
use crate::harness::Record;
use crate::remap::{self, Bucketing, Calibration, Classes, Decision, Lesson, Strategy};
use serde::{Deserialize, Serialize};
#[cfg(not(target_arch = "wasm32"))]
use {
    super::{emulate, generate, reference, Pattern},
    crate::error::Error,
    crate::gpu::BufferKind,
    crate::gpu::PreparedRun,
    crate::harness::{self, Check, Environment, Protocol, Throughput},
    crate::remap::{CostModel, GpuRegroup, LamPlan, Pipeline, Profile},
    web_time::Instant,
};

/// Classes of trip counts (the paper uses 10).
pub const CLASSES: usize = 10;

/// What a remapped run measured, beside its record's kernel timing
/// (`Record::extra_as::<RemapFigures>()`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RemapFigures {
    /// The strategy that ran (never `auto` once decided).
    pub strategy: Strategy,
    /// What `auto` chose and why (None for an explicit strategy).
    pub decision: Option<Decision>,
    /// Host seconds to classify and build the mapping (and permute, for LAM).
    pub remap_s: f64,
    /// Host seconds to restore outputs (LAM).
    pub restore_s: f64,
    /// Median kernel time (for `gpu`: regroup passes + kernel, one submission).
    pub kernel_s: f64,
    /// remap + kernel + restore, unpipelined.
    pub end_to_end_s: f64,
    /// LAM: elements the layout transform moved (None for other strategies).
    pub moved: Option<usize>,
    /// Deferral: the threshold in trips (None: nothing worth deferring, so nothing was) and
    /// the loops the GPU deferred.
    pub defer_from: Option<u32>,
    /// Loops the GPU deferred to the second pass (None without deferral).
    pub deferred: Option<u32>,
    /// Divergence at the adapter's width (GPU probe) when it has subgroups.
    pub probe_before: Option<DivergenceSummary>,
    /// GPU probe after remapping.
    pub probe_after: Option<DivergenceSummary>,
    /// Host emulation at the configuration's group width (32 = the paper's warp).
    pub emulated_before: DivergenceSummary,
    /// Host emulation after remapping.
    pub emulated_after: DivergenceSummary,
}

/// What a pipelined run recorded beside its end-to-end time
/// (`Record::extra_as::<PipelinedFigures>()`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct PipelinedFigures {
    /// Most chunks the host had in flight ahead of the GPU.
    pub depth_reached: usize,
    /// Chunks that ran remapped.
    pub mapped_chunks: usize,
    /// Chunks whose remap came too late and ran unmapped.
    pub late_chunks: usize,
    /// Host worker threads.
    pub workers: usize,
}

#[cfg(not(target_arch = "wasm32"))]
fn probe(gpu: &Gpu, cfg: &MicroConfig, input: &MicroInput, options: RunOptions) -> Result<Option<DivergenceSummary>> {
    if gpu.caps().subgroup_size.is_none() {
        return Ok(None);
    }
    let run = Prepared::new(gpu, cfg, input, RunOptions { probe: true, ..options })?;
    run.dispatch(gpu)?;
    Ok(run.divergence(gpu)?.map(|d| d.summary()))
}

fn classify(trips: &[u32]) -> Result<Classes> {
    remap::classify_loops(trips, CLASSES, Bucketing::EqualWidth)
}

/// Runs the loop pattern of `cfg` with `strategy` (Auto decides from emulated divergence and
/// the cost model) and checks the outputs against the CPU reference.
#[cfg(not(target_arch = "wasm32"))]
pub fn bench_remap(gpu: &Gpu, cfg: &MicroConfig, strategy: Strategy, protocol: &Protocol) -> Result<Record> {
    if cfg.pattern != Pattern::Loop {
        return Err(Error::invalid("kernel", "remapping benchmarks use the loop pattern (micro-loop)"));
    }
    cfg.validate()?;
    cfg.footprint().check(gpu)?;
    let input = generate(cfg)?;
    let expected = reference(cfg, &input);
    let width = gpu.caps().subgroup_size.unwrap_or(cfg.group);
    let tile = tile_sort(cfg, &input.primary);
    // chosen once per workload, like the tile's class bounds
    let mut defer_from = match (cfg.defer_from, strategy) {
        (Some(from), _) => Some(from),
        (None, Strategy::Defer) => remap::best_defer_threshold(&input.primary, width, CLASSES as u32)?.map(|(from, _)| from),
        _ => None,
    };
    let emulated_before = emulate(cfg, &input, None, cfg.group)?.summary();
    let probe_before = probe(gpu, cfg, &input, RunOptions::default())?;

    let (strategy, decision) = match strategy {
        Strategy::Auto => {
            let plain = Prepared::new(gpu, cfg, &input, RunOptions::default())?;
            let kernel_s = harness::measure(&Protocol { warmup: 1, samples: 3 }, || plain.dispatch(gpu))?.median;
            let t0 = Instant::now();
            let classes = classify(&input.primary)?;
            let classify_per_element = t0.elapsed().as_secs_f64() / cfg.n as f64;
            let profile = Profile::from_loops(&input.primary, &classes, width, tile.elements(), kernel_s)?;
            // Measured on this host and this GPU, not estimated: the decision is only as good
            // as its costs.
            let mut costs = CostModel::calibrate(&classes, cfg.group)?;
            costs.redirect_s_per_element += classify_per_element;
            costs.lam_s_per_element += classify_per_element;
            costs.gpu_regroup_s_per_element = measure_gpu_regroup(gpu, cfg, &input)? / cfg.n as f64;
            measure_in_kernel_costs(gpu, cfg, &input, tile, &mut costs)?;
            // corrected by what earlier runs measured on this adapter, when they were on it
            let adapter = crate::gpu::adapter_label(gpu.info());
            let learned = cfg.calibration.as_ref().filter(|c| c.applies_to(&adapter)).cloned().unwrap_or_default();
            let d = remap::decide_calibrated(Strategy::Auto, &profile, &costs, &learned)?;
            defer_from = defer_from.or(profile.defer_from);
            (d.strategy, Some(d))
        }
        s => (s, None),
    };

    let defer_options = RunOptions { defer_from: Some(defer_from.unwrap_or(u32::MAX)), ..Default::default() };
    let mut deferred = None;
    let (stats, results, order, remap_s, restore_s, moved) = match strategy {
        Strategy::None | Strategy::Auto => {
            let run = Prepared::new(gpu, cfg, &input, RunOptions::default())?;
            let stats = harness::measure(protocol, || run.dispatch(gpu))?;
            (stats, run.results(gpu)?, None, 0.0, 0.0, None)
        }
        Strategy::Redirect => {
            let t0 = Instant::now();
            let index = remap::redirect_index(&classify(&input.primary)?);
            let remap_s = t0.elapsed().as_secs_f64();
            let run = Prepared::new(gpu, cfg, &input, RunOptions { remap: Some(&index), ..Default::default() })?;
            let stats = harness::measure(protocol, || run.dispatch(gpu))?;
            (stats, run.results(gpu)?, Some(index), remap_s, 0.0, None)
        }
        Strategy::Lam => {
            let t0 = Instant::now();
            let plan = LamPlan::new(&classify(&input.primary)?, cfg.group)?;
            let moved_input = MicroInput { primary: plan.permute(&input.primary)?, seeds: plan.permute(&input.seeds)? };
            let remap_s = t0.elapsed().as_secs_f64();
            let run = Prepared::new(gpu, cfg, &moved_input, RunOptions::default())?;
            let stats = harness::measure(protocol, || run.dispatch(gpu))?;
            let t1 = Instant::now();
            let results = plan.restore(&run.results(gpu)?)?;
            let restore_s = t1.elapsed().as_secs_f64();
            (stats, results, Some(plan.index()), remap_s, restore_s, Some(plan.moved()))
        }
        Strategy::GpuRegroup => {
            let (lo, hi) = min_max(&input.primary);
            let trips = gpu.buffer("trips for regroup", &input.primary, BufferKind::Storage)?;
            let regroup = GpuRegroup::new(gpu, &trips, cfg.n, lo, remap::equal_width(lo, hi, CLASSES as u32), CLASSES as u32)?;
            let run = Prepared::new(gpu, cfg, &input, RunOptions { remap_on_gpu: Some(&regroup.index.buffer), ..Default::default() })?;
            let stats = harness::measure(protocol, || {
                let mut steps = regroup.steps();
                steps.extend(run.steps());
                gpu.run(&steps, true)
            })?;
            (stats, run.results(gpu)?, Some(gpu.read(&regroup.index)?), 0.0, 0.0, None)
        }
        Strategy::Tile => {
            let run = Prepared::new(gpu, cfg, &input, RunOptions { tile: Some(tile), ..Default::default() })?;
            let stats = harness::measure(protocol, || run.dispatch(gpu))?;
            let order = remap::tile_index(&classify(&input.primary)?, tile.elements())?;
            (stats, run.results(gpu)?, Some(order), 0.0, 0.0, None)
        }
        Strategy::Defer => {
            let run = Prepared::new(gpu, cfg, &input, defer_options)?;
            let stats = harness::measure(protocol, || run.dispatch(gpu))?;
            deferred = run.deferred_count(gpu)?;
            (stats, run.results(gpu)?, None, 0.0, 0.0, None)
        }
    };
    let check = Check::exact(&results, &expected);
    let (emulated_after, probe_after) = match &order {
        None if strategy == Strategy::Defer => {
            let lanes = remap::deferred_trips(&input.primary, defer_from.unwrap_or(u32::MAX));
            (crate::divergence::emulate_loops_with_idle_lanes(&lanes, cfg.group)?.summary(), probe(gpu, cfg, &input, defer_options)?)
        }
        Some(o) => {
            let probe_after = match strategy {
                // LAM runs the plain kernel on moved data
                Strategy::Lam => {
                    let moved = MicroInput { primary: remap::gather(&input.primary, o)?, seeds: remap::gather(&input.seeds, o)? };
                    probe(gpu, cfg, &moved, RunOptions::default())?
                }
                Strategy::Tile => probe(gpu, cfg, &input, RunOptions { tile: Some(tile), ..Default::default() })?,
                _ => probe(gpu, cfg, &input, RunOptions { remap: Some(o), ..Default::default() })?,
            };
            (emulate(cfg, &input, Some(o), cfg.group)?.summary(), probe_after)
        }
        None => (emulated_before, probe_before),
    };
    let kernel_s = stats.median;
    let figures = RemapFigures {
        strategy,
        decision,
        remap_s,
        restore_s,
        kernel_s,
        end_to_end_s: remap_s + kernel_s + restore_s,
        moved,
        defer_from: defer_from.filter(|_| strategy == Strategy::Defer),
        deferred,
        probe_before,
        probe_after,
        emulated_before,
        emulated_after,
    };
    let work: f64 = input.primary.iter().map(|&t| t as f64).sum();
    Ok(Record {
        schema: harness::SCHEMA_VERSION,
        family: "remap".into(),
        kernel: "data_loop".into(),
        variant: match &figures.decision {
            Some(_) => format!("auto: {strategy}"),
            None => strategy.to_string(),
        },
        params: serde_json::to_value(cfg).unwrap_or_default(),
        seed: cfg.seed,
        environment: Environment::of(gpu),
        throughput: Some(Throughput { value: work / figures.end_to_end_s * 1e-9, unit: "G iterations/s end to end".into() }),
        stats,
        check,
        divergence: figures.probe_after.or(Some(figures.emulated_after)),
        extra: serde_json::to_value(&figures).unwrap_or_default(),
    })
}

/// What a run of the strategies side by side teaches the cost model: auto's decision against
/// each explicitly run strategy's end-to-end time beside none's, learned into the calibration
/// auto decided with (from its parameters). None without both auto's decision and a `none`
/// record among `records`.
pub fn learn<'a>(records: impl IntoIterator<Item = &'a Record>) -> Option<Result<(Calibration, Vec<Lesson>)>> {
    let figures: Vec<(&Record, RemapFigures)> = records.into_iter().filter_map(|r| Some((r, r.extra_as::<RemapFigures>()?))).collect();
    let (auto, decision) = figures.iter().find_map(|(r, f)| Some((*r, f.decision.as_ref()?)))?;
    let explicit = || figures.iter().filter(|(_, f)| f.decision.is_none());
    let baseline = explicit().find(|(_, f)| f.strategy == Strategy::None)?.1.end_to_end_s;
    let measured: Vec<(Strategy, f64)> =
        explicit().filter(|(_, f)| f.strategy != Strategy::None).map(|(_, f)| (f.strategy, f.end_to_end_s)).collect();
    let used = auto.params.get("calibration").cloned().map(serde_json::from_value::<Calibration>).and_then(|c| c.ok());
    let mut calibration = used.filter(|c| c.applies_to(&auto.environment.adapter)).unwrap_or_default();
    calibration.adapter = auto.environment.adapter.clone();
    Some(calibration.learn(decision, baseline, &measured).map(|lessons| (calibration, lessons)))
}

/// Device seconds of the regroup passes alone (best of three).
/// The loop prepared under `strategy` where the remapping needs no GPU round trip: a host
/// index (redirect) or the kernel itself (tile sort, deferral with the best threshold for the
/// native width). `None` for the others (LAM moves the data and restores the results on the
/// host, GPU regroup reads its index back, auto measures them all).
pub fn prepare_remapped(gpu: &Gpu, cfg: &MicroConfig, input: &MicroInput, strategy: Strategy) -> Result<Option<Prepared>> {
    let options = match strategy {
        Strategy::Redirect => {
            let index = remap::redirect_index(&classify(&input.primary)?);
            return Prepared::new(gpu, cfg, input, RunOptions { remap: Some(&index), ..Default::default() }).map(Some);
        }
        Strategy::Tile => RunOptions { tile: Some(tile_sort(cfg, &input.primary)), ..Default::default() },
        Strategy::Defer => {
            let width = gpu.caps().subgroup_size.unwrap_or(cfg.group);
            let best = remap::best_defer_threshold(&input.primary, width, CLASSES as u32)?.map(|(from, _)| from);
            RunOptions { defer_from: Some(cfg.defer_from.or(best).unwrap_or(u32::MAX)), ..Default::default() }
        }
        Strategy::None | Strategy::Lam | Strategy::GpuRegroup | Strategy::Auto => return Ok(None),
    };
    Prepared::new(gpu, cfg, input, options).map(Some)
}

#[cfg(not(target_arch = "wasm32"))]
fn measure_gpu_regroup(gpu: &Gpu, cfg: &MicroConfig, input: &MicroInput) -> Result<f64> {
    let (lo, hi) = min_max(&input.primary);
    let trips = gpu.buffer("trips for regroup", &input.primary, BufferKind::Storage)?;
    let regroup = GpuRegroup::new(gpu, &trips, cfg.n, lo, remap::equal_width(lo, hi, CLASSES as u32), CLASSES as u32)?;
    best_of_three(|| gpu.run(&regroup.steps(), true))
}

/// Fastest device time of three runs.
#[cfg(not(target_arch = "wasm32"))]
fn best_of_three(mut run: impl FnMut() -> Result<crate::gpu::Timing>) -> Result<f64> {
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        best = best.min(run()?.seconds);
    }
    Ok(best)
}

/// Device seconds the in-kernel mechanisms add, into `costs` (and marks them available): runs
/// on input whose loops all have the same trip count (nothing to gain, so only the cost shows)
/// against the plain run, best of three each. The tile sort per element; deferral per element
/// with nothing deferred (its barriers and second dispatch) and per deferred loop (everything
/// deferred: queueing it and reading it back).
#[cfg(not(target_arch = "wasm32"))]
fn measure_in_kernel_costs(gpu: &Gpu, cfg: &MicroConfig, input: &MicroInput, tile: TileSort, costs: &mut CostModel) -> Result<()> {
    let flat = MicroInput { primary: vec![tile.lo; cfg.n], seeds: input.seeds.clone() };
    let seconds = |options: RunOptions| -> Result<f64> {
        let run = Prepared::new(gpu, cfg, &flat, options)?;
        best_of_three(|| run.dispatch(gpu))
    };
    let defer = |from: u32| RunOptions { defer_from: Some(from), ..Default::default() };
    let plain = seconds(RunOptions::default())?;
    let tiled = seconds(RunOptions { tile: Some(tile), ..Default::default() })?;
    let none_deferred = seconds(defer(u32::MAX))?;
    let all_deferred = seconds(defer(0))?;
    let n = cfg.n as f64;
    costs.tile_s_per_element = (tiled - plain).max(0.0) / n;
    costs.defer_s_per_element = (none_deferred - plain).max(0.0) / n;
    costs.defer_s_per_deferred = (all_deferred - none_deferred).max(0.0) / n;
    costs.tile_available = true;
    costs.defer_available = true;
    Ok(())
}

/// The kernel's tile sort by the classes the CPU side uses ([`classify`]).
fn tile_sort(cfg: &MicroConfig, trips: &[u32]) -> TileSort {
    let (lo, hi) = min_max(trips);
    TileSort {
        lo,
        width: remap::equal_width(lo, hi, CLASSES as u32),
        classes: CLASSES as u32,
        workgroup: cfg.tile_workgroup,
        per_thread: cfg.tile_per_thread,
    }
}

fn min_max(v: &[u32]) -> (u32, u32) {
    (v.iter().copied().min().unwrap_or(0), v.iter().copied().max().unwrap_or(0))
}

/// The pipeline of §4.1: `chunks` chunks; host workers compute the redirect index of chunk
/// i+Δ while the GPU runs chunk i. Returns the record (wall clock of the whole stream, outputs
/// checked) and the pipeline report (timeline, depth reached).
#[cfg(not(target_arch = "wasm32"))]
pub fn bench_pipelined(
    gpu: &Gpu,
    cfg: &MicroConfig,
    chunks: usize,
    workers: usize,
    remapped: bool,
) -> Result<(Record, remap::PipelineReport)> {
    if cfg.pattern != Pattern::Loop {
        return Err(Error::invalid("kernel", "the pipeline runs the loop pattern (micro-loop)"));
    }
    if chunks == 0 || chunks > cfg.n {
        return Err(Error::invalid("pipeline", format!("{chunks} chunks (use 1..={} for n {})", cfg.n, cfg.n)));
    }
    if workers == 0 {
        return Err(Error::invalid("workers", "0 (use at least 1 host thread)"));
    }
    cfg.validate()?;
    cfg.footprint().check(gpu)?;
    let input = generate(cfg)?;
    let expected = reference(cfg, &input);
    let chunk_len = cfg.n.div_ceil(chunks);
    let range = |i: usize| (i * chunk_len).min(cfg.n)..((i + 1) * chunk_len).min(cfg.n);
    let mut results = vec![0u32; cfg.n];
    let pipeline = Pipeline::new(workers, 4)?;
    let t0 = Instant::now();
    let report = pipeline.run(
        chunks,
        |i| {
            let r = range(i);
            remapped.then(|| classify(&input.primary[r]).ok().map(|c| remap::redirect_index(&c))).flatten()
        },
        |i, mapping: Option<&Vec<u32>>| {
            let r = range(i);
            if r.is_empty() {
                return Ok(());
            }
            let sub_cfg = MicroConfig { n: r.len(), ..cfg.clone() };
            let sub = MicroInput { primary: input.primary[r.clone()].to_vec(), seeds: input.seeds[r.clone()].to_vec() };
            let run = Prepared::new(gpu, &sub_cfg, &sub, RunOptions { remap: mapping.map(|m| m.as_slice()), ..Default::default() })?;
            run.dispatch(gpu)?;
            results[r].copy_from_slice(&run.results(gpu)?);
            Ok(())
        },
    )?;
    let wall = t0.elapsed().as_secs_f64();
    let stats = harness::Stats::from_samples(vec![wall], crate::gpu::TimingSource::WallClock)?;
    let work: f64 = input.primary.iter().map(|&t| t as f64).sum();
    let record = Record {
        schema: harness::SCHEMA_VERSION,
        family: "remap".into(),
        kernel: "data_loop".into(),
        variant: format!("{} pipelined ({chunks} chunks)", if remapped { "redirect" } else { "none" }),
        params: serde_json::to_value(cfg).unwrap_or_default(),
        seed: cfg.seed,
        environment: Environment::of(gpu),
        throughput: Some(Throughput { value: work / wall * 1e-9, unit: "G iterations/s end to end".into() }),
        stats,
        check: Check::exact(&results, &expected),
        divergence: None,
        extra: serde_json::to_value(PipelinedFigures {
            depth_reached: report.depth_reached,
            mapped_chunks: report.count(remap::ChunkOutcome::Mapped),
            late_chunks: report.count(remap::ChunkOutcome::Late),
            workers,
        })
        .unwrap_or_default(),
    };
    Ok((record, report))
}
