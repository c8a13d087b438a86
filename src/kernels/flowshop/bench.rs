//! Benchmarks of the bounding: kernel time to bound pools built depth-first vs
//! breadth-first, branch-refactored vs basic kernel as a speedup over one CPU core, and
//! bounds per second on the GPU, one CPU core and all CPU cores.
//!
//! Pools come from the real search ([`search_pool`]), never from synthetic data, and every
//! GPU result is compared with the CPU bounds of the same pool; a mismatch is an error.

use serde::{Deserialize, Serialize};

use super::gpu::{GpuBoundOptions, PoolKernel, ThreadMapping};
use super::{
    solve_with, taillard_by_name, BoundData, Bounder, Branching, CpuBounder, Exploration, Instance, IteratedGreedy, LowerBound, Pool,
    SearchOptions,
};
use crate::error::{Error, Result};
use crate::gpu::{Checked, Gpu, PreparedRun, Step, TimingSource};
use crate::harness::Check;
#[cfg(not(target_arch = "wasm32"))]
use {
    super::gpu::GpuBounder,
    crate::gpu::Timing,
    crate::harness::{self, Environment, Named, Progress, Protocol, Record, Throughput},
    web_time::Instant,
};

/// Records a real search's pools until `want` children are gathered, then prunes every
/// child so the search ends quickly.
struct Capture<'a> {
    inner: CpuBounder<'a>,
    pool: Pool,
    want: usize,
}

impl Bounder for Capture<'_> {
    fn bound(&mut self, pool: &Pool) -> Result<Vec<u32>> {
        if self.pool.child_count() >= self.want {
            return Ok(vec![u32::MAX; pool.child_count()]);
        }
        let mut mapped: Option<(usize, u32)> = None;
        for child in 0..pool.child_count() {
            if self.pool.child_count() >= self.want {
                break;
            }
            let (parent, job) = pool.child(child);
            let direction = pool.direction(child);
            let index = match mapped {
                Some((from, to)) if from == parent => to,
                _ => {
                    let to = self.pool.copy_parent(pool, parent);
                    mapped = Some((parent, to));
                    to
                }
            };
            self.pool.push_child_unchecked(index, job, direction);
        }
        self.inner.bound(pool)
    }
}

/// A pool of `children` children taken from the search of `instance` from its root, in the
/// order `exploration` expands nodes (one node per iteration, LB1 pruning against the NEH
/// makespan): depth-first pools mix parents of many tree levels, breadth-first pools hold
/// one or two levels (the paper's thread-data reordering). Errors when the search ends first.
pub fn search_pool(instance: &Instance, exploration: Exploration, children: usize) -> Result<Pool> {
    if children == 0 {
        return Err(Error::invalid("pool size", "must be at least 1 child"));
    }
    let data = BoundData::new(instance);
    let mut capture = Capture { inner: CpuBounder::new(&data, LowerBound::Lb1, 1), pool: Pool::for_data(&data), want: children };
    let options = SearchOptions {
        bound: LowerBound::Lb1,
        exploration,
        // the paper's tree: children append to the prefix
        branching: Branching::Forward,
        // from NEH, as the pools of the published tables were captured
        heuristic: IteratedGreedy { iterations: Some(0), ..IteratedGreedy::default() },
        pool_size: 1,
        threads: 1,
        ..Default::default()
    };
    solve_with(&data, &options, &mut capture, None)?;
    if capture.pool.child_count() < children {
        return Err(Error::invalid(
            "pool size",
            format!(
                "the search of {} ends after {} children, fewer than the {children} asked for",
                instance.name,
                capture.pool.child_count()
            ),
        ));
    }
    Ok(capture.pool)
}

/// Depth (prefix length) of each parent of `pool`.
pub fn parent_depths(pool: &Pool) -> Vec<usize> {
    (0..pool.parent_count())
        .map(|p| {
            let unscheduled: u32 = pool.unscheduled_mask(p).iter().map(|w| w.count_ones()).sum();
            pool.jobs() - unscheduled as usize
        })
        .collect()
}

/// What to measure on one instance.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BenchConfig {
    /// Taillard name, e.g. `ta021`.
    pub instance: String,
    /// Children per pool.
    pub pool_sizes: Vec<usize>,
    /// Lower bound the kernels compute.
    pub bound: LowerBound,
    /// Pool orders to build; each gets the GPU variants.
    pub strategies: Vec<Exploration>,
    /// GPU kernels: `false` = basic, `true` = branch-refactored.
    pub branchless: Vec<bool>,
    /// Heads of each kernel: `false` read from the parent record, `true` walked along the
    /// prefix as the paper's kernel does ([`GpuBoundOptions::walk_prefix`]).
    pub walk_prefix: Vec<bool>,
    /// Threads per child or per parent.
    pub mapping: ThreadMapping,
    /// Also time one CPU core and all CPU cores, on the breadth-first pool when there is
    /// one, else on the first strategy's.
    pub cpu: bool,
    /// Count divergence with the GPU probe (in a separate, untimed run) when the adapter
    /// has subgroups.
    pub probe: bool,
}

impl BenchConfig {
    /// Err ([`Error::Invalid`]) when a list is empty or a pool size is 0.
    pub fn validate(&self) -> Result<()> {
        if self.pool_sizes.is_empty() || self.pool_sizes.contains(&0) {
            return Err(Error::invalid("pool_sizes", "give at least one size, each at least 1"));
        }
        for (field, empty) in [
            ("strategies", self.strategies.is_empty()),
            ("branchless", self.branchless.is_empty()),
            ("walk_prefix", self.walk_prefix.is_empty()),
        ] {
            if empty {
                return Err(Error::invalid(field, "an empty list; give at least one value"));
            }
        }
        Ok(())
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn wall(seconds: f64) -> Timing {
    Timing { seconds, source: TimingSource::WallClock, wall_seconds: seconds }
}

#[cfg(not(target_arch = "wasm32"))]
struct PoolInfo<'a> {
    instance: &'a Instance,
    config: &'a BenchConfig,
    pool: &'a Pool,
    requested: usize,
    strategy: Exploration,
}

#[cfg(not(target_arch = "wasm32"))]
impl PoolInfo<'_> {
    fn params(&self, device: &str, extra: serde_json::Value) -> serde_json::Value {
        let depths = parent_depths(self.pool);
        let mut v = serde_json::json!({
            "instance": self.instance.name,
            "jobs": self.instance.jobs,
            "machines": self.instance.machines,
            "size": format!("{}x{}", self.instance.jobs, self.instance.machines),
            "pool_size": self.requested,
            "children": self.pool.child_count(),
            "parents": self.pool.parent_count(),
            "min_depth": depths.iter().min(),
            "max_depth": depths.iter().max(),
            "strategy": self.strategy.short_name(),
            "bound": self.config.bound,
            "device": device,
        });
        if let (Some(target), Some(source)) = (v.as_object_mut(), extra.as_object()) {
            target.extend(source.clone());
        }
        v
    }

    fn record(&self, gpu: &Gpu, variant: String, params: serde_json::Value, stats: harness::Stats, check: Check) -> Record {
        let bounds_per_second = self.pool.child_count() as f64 / stats.median.max(1e-12);
        Record {
            schema: harness::SCHEMA_VERSION,
            family: "flowshop".into(),
            kernel: self.config.bound.entry_point().into(),
            variant,
            params,
            seed: u64::from(self.instance.seed),
            environment: Environment::of(gpu),
            stats,
            check,
            divergence: None,
            throughput: Some(Throughput { value: bounds_per_second * 1e-6, unit: "Mbounds/s".into() }),
            extra: serde_json::json!({}),
        }
    }
}

/// Refuses pool sizes whose buffers could exceed the device's storage binding before any
/// host memory is spent building them: a pool may hold one parent record per child.
#[cfg(not(target_arch = "wasm32"))]
fn check_pool_sizes(gpu: &Gpu, data: &BoundData, sizes: &[usize]) -> Result<()> {
    let per_child = 4 * (super::resident::node_stride(data.jobs, data.machines) as u64 + 4);
    let limit = (gpu.caps().max_storage_buffer_binding_size / per_child).min(u64::from(u32::MAX) - 1);
    match sizes.iter().map(|&s| s as u64).find(|&s| s > limit) {
        Some(size) => Err(Error::Limit {
            what: format!("children per pool on {} ({per_child} bytes each at most)", gpu.adapter_name()),
            requested: size,
            limit,
            hint: "use smaller pool sizes".into(),
        }),
        None => Ok(()),
    }
}

/// Fails loudly when the GPU bounds differ from the CPU's.
#[cfg(not(target_arch = "wasm32"))]
fn exact(what: &str, got: &[u32], expected: &[u32]) -> Result<Check> {
    Check::exact(got, expected).into_result(what)
}

/// Every GPU kernel of `config` on every pool it builds (probe off), prepared for recording
/// into a caller's encoder ([`recorded`] adds the check).
#[derive(Debug)]
pub struct PreparedPools {
    /// Per kernel and pool: the kernel holding the pool, its grid, and the CPU's bounds.
    runs: Vec<(PoolKernel, [u32; 3], Vec<u32>)>,
}

impl PreparedPools {
    /// Builds the pools from the search of `config.instance` and uploads each to its kernels.
    pub fn new(gpu: &Gpu, config: &BenchConfig) -> Result<Self> {
        config.validate()?;
        let instance = taillard_by_name(&config.instance)?;
        let data = BoundData::new(&instance);
        data.check_gpu()?;
        let mut runs = Vec::new();
        for &size in &config.pool_sizes {
            for &strategy in &config.strategies {
                let pool = search_pool(&instance, strategy, size)?;
                // one thread: a browser page has no others
                let expected = CpuBounder::new(&data, config.bound, 1).bound(&pool)?;
                for &branchless in &config.branchless {
                    for &walk_prefix in &config.walk_prefix {
                        let options =
                            GpuBoundOptions { bound: config.bound, branchless, probe: false, mapping: config.mapping, walk_prefix };
                        let mut kernel = PoolKernel::new(gpu, &data, options)?;
                        let grid = kernel.prepare(gpu, &pool, 0)?.map(|(grid, _)| grid).unwrap_or([0, 1, 1]);
                        runs.push((kernel, grid, expected.clone()));
                    }
                }
            }
        }
        Ok(PreparedPools { runs })
    }
}

impl PreparedRun for PreparedPools {
    fn steps(&self) -> Vec<Step<'_>> {
        // a kernel without a bind group bound nothing: its zeros fail the check
        self.runs.iter().filter_map(|(kernel, grid, _)| kernel.dispatch(*grid).ok()).collect()
    }
    fn outputs(&self) -> Vec<(&wgpu::Buffer, u64)> {
        self.runs.iter().map(|(kernel, _, expected)| (kernel.bounds(), 4 * expected.len() as u64)).collect()
    }
    /// Prepared without the probe: no counts.
    #[cfg(not(target_arch = "wasm32"))]
    fn divergence(&self, _gpu: &Gpu) -> Result<Option<crate::divergence::Divergence>> {
        Ok(None)
    }
}

/// [`PreparedPools`] of `config` with its check: every bound equals the CPU's on the same pool.
pub fn recorded(gpu: &Gpu, config: &BenchConfig) -> Result<Checked<PreparedPools>> {
    let pools = PreparedPools::new(gpu, config)?;
    let expected: Vec<u32> = pools.runs.iter().flat_map(|(_, _, e)| e.iter().copied()).collect();
    Ok(Checked::new(pools, move |outputs| {
        let got: Vec<u32> = outputs.iter().flat_map(|b| bytemuck::pod_collect_to_vec::<u8, u32>(b)).collect();
        Check::exact(&got, &expected)
    }))
}

/// Runs `config` on one instance: per pool size and strategy, the GPU kernels (timed over
/// `protocol`: upload, kernel and readback, the time a search pays per pool), then the CPU;
/// `progress` moves on one step per pool size and strategy.
#[cfg(not(target_arch = "wasm32"))]
pub fn bench_instance(gpu: &Gpu, config: &BenchConfig, protocol: &Protocol, progress: Option<&Progress>) -> Result<Vec<Record>> {
    config.validate()?;
    let instance = taillard_by_name(&config.instance)?;
    let data = BoundData::new(&instance);
    data.check_gpu()?;
    check_pool_sizes(gpu, &data, &config.pool_sizes)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu_protocol = Protocol { warmup: 0, samples: protocol.samples.clamp(1, 3) };
    let mut records = Vec::new();
    for &size in &config.pool_sizes {
        let cpu_strategy =
            if config.strategies.contains(&Exploration::BreadthFirst) { Exploration::BreadthFirst } else { config.strategies[0] };
        for &strategy in &config.strategies {
            if let Some(p) = progress {
                p.message(format!("{} pool {size} {}", instance.name, strategy.short_name()));
            }
            let pool = search_pool(&instance, strategy, size)?;
            let info = PoolInfo { instance: &instance, config, pool: &pool, requested: size, strategy };
            let expected = CpuBounder::new(&data, config.bound, 0).bound(&pool)?;
            for (branchless, walk_prefix) in config.branchless.iter().flat_map(|&b| config.walk_prefix.iter().map(move |&w| (b, w))) {
                let options = GpuBoundOptions { bound: config.bound, branchless, probe: false, mapping: config.mapping, walk_prefix };
                let mut bounder = GpuBounder::new(gpu, &data, options)?;
                let mut kernel = Vec::new();
                let stats = harness::measure(protocol, || {
                    let t0 = Instant::now();
                    let got = bounder.bound(&pool)?;
                    let seconds = t0.elapsed().as_secs_f64();
                    exact(&format!("{} {} GPU", instance.name, options.label()), &got, &expected)?;
                    kernel.extend(bounder.last_timing().map(|t| t.seconds));
                    Ok(wall(seconds))
                })?;
                let got = bounder.bound(&pool)?;
                let check = exact(&format!("{} {} GPU", instance.name, options.label()), &got, &expected)?;
                let variant = format!(
                    "gpu {}{} {}",
                    if branchless { "refactored" } else { "basic" },
                    if walk_prefix { " walk" } else { "" },
                    strategy.short_name()
                );
                let params = info
                    .params("gpu", serde_json::json!({ "branchless": branchless, "mapping": config.mapping, "walk_prefix": walk_prefix }));
                // kernel times of the timed samples only (the last calls; warm-up runs may
                // find the GPU still clocking up)
                let mut kernel = kernel.split_off(kernel.len().saturating_sub(stats.samples.len()));
                let mut record = info.record(gpu, variant, params, stats, check);
                kernel.sort_by(f64::total_cmp);
                let mut extra = BoundingExtra {
                    kernel_seconds_median: kernel.get(kernel.len() / 2).copied(),
                    kernel_timing: bounder.last_timing().map(|t| t.source),
                    ..Default::default()
                };
                if config.probe && gpu.caps().subgroup_size.is_some() {
                    let mut probed = GpuBounder::new(gpu, &data, GpuBoundOptions { probe: true, ..options })?;
                    let got = probed.bound(&pool)?;
                    exact(&format!("{} {} GPU (probed)", instance.name, options.label()), &got, &expected)?;
                    record.divergence = probed.divergence().map(|d| d.summary());
                    extra.divergence_source = Some("gpu-probe".into());
                }
                record.add_extra(extra);
                records.push(record);
            }
            if config.cpu && strategy == cpu_strategy {
                for cores in [1, threads] {
                    let mut cpu = CpuBounder::new(&data, config.bound, cores);
                    let mut last = Vec::new();
                    let stats = harness::measure(&cpu_protocol, || {
                        let t0 = Instant::now();
                        last = cpu.bound(&pool)?;
                        Ok(wall(t0.elapsed().as_secs_f64()))
                    })?;
                    let check = exact(&format!("{} CPU {cores} threads", instance.name), &last, &expected)?;
                    let variant = format!("cpu {cores} core{} {}", if cores == 1 { "" } else { "s" }, strategy.short_name());
                    let params = info.params("cpu", serde_json::json!({ "threads": cores }));
                    records.push(info.record(gpu, variant, params, stats, check));
                }
            }
            if let Some(p) = progress {
                p.step("");
            }
        }
    }
    add_speedups(&mut records);
    Ok(records)
}

/// What a GPU bounding record keeps in `extra` (read back with [`Record::extra_as`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BoundingExtra {
    /// Median kernel time of the timed samples (device timestamps where the adapter has them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_seconds_median: Option<f64>,
    /// Which clock timed the kernel.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_timing: Option<TimingSource>,
    /// `gpu-probe` when [`Record::divergence`] comes from the probed run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub divergence_source: Option<String>,
    /// One CPU core's time for the same pool over this record's time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speedup_over_one_core: Option<f64>,
}

/// `extra.speedup_over_one_core` on GPU records whose pool size has a one-core CPU record.
#[cfg(not(target_arch = "wasm32"))]
fn add_speedups(records: &mut [Record]) {
    let one_core: Vec<(u64, String, f64)> = records
        .iter()
        .filter(|r| r.params["device"] == "cpu" && r.params["threads"] == 1)
        .filter_map(|r| Some((r.params["pool_size"].as_u64()?, r.params["instance"].as_str()?.to_string(), r.stats.median)))
        .collect();
    for r in records.iter_mut().filter(|r| r.params["device"] != "cpu") {
        let found = one_core
            .iter()
            .find(|(size, name, _)| r.params["pool_size"].as_u64() == Some(*size) && r.params["instance"].as_str() == Some(name.as_str()));
        if let Some((_, _, cpu)) = found {
            let extra = r.extra_as::<BoundingExtra>().unwrap_or_default();
            r.add_extra(BoundingExtra { speedup_over_one_core: Some(cpu / r.stats.median.max(1e-12)), ..extra });
        }
    }
}
