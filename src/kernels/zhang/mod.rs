//! Zhang et al., ICS'10, section 5: the five benchmarks (3D-LBM, GAFORT, MarchingCubes,
//! Reduction, BlackScholes) run without and with thread-data remapping.
//!
//! The kernels live in their own families (`kernels::lbm`, `gafort`, `mcubes`, `reduction`,
//! `blackscholes`). This module holds what they share: the reference-redirection index
//! ([`redirect_by_class`], a stable counting sort by class computed on the host), the run
//! options, probe buffers, record building, the memory check every family's bench runs
//! before generating inputs ([`memory`]), and the `simtlab bench zhang` sweep.

pub mod memory;

use crate::divergence::{Divergence, DivergenceSummary, ProbeLayout, PROBE_BINDING};
use crate::error::{Error, Result};
use crate::gpu::{BufferKind, Gpu, GpuBuffer};
use crate::harness::{self, Check, Environment, Progress, Protocol, Record, Stats, Throughput};
use serde::{Deserialize, Serialize};

pub use crate::divergence::PROBE_BINDING as PROBE_SLOT;

/// The warp width of the paper (NVIDIA Tesla C1060): host emulation reports divergence here.
pub const PAPER_WARP: u32 = 32;

/// Reference-redirection index: a stable counting sort by class (thread i works on element
/// `index[i]`), from [`crate::remap::redirect_index_of`].
pub fn redirect_by_class(classes: &[u32], num_classes: u32) -> Result<Vec<u32>> {
    crate::remap::redirect_index_of(classes, num_classes as usize)
}

/// Dense class ids for arbitrary keys (e.g. path vectors): equal keys get equal ids, ids
/// ordered like the keys. Returns (class per element, number of classes).
pub fn dense_classes(keys: &[u32]) -> (Vec<u32>, u32) {
    let mut distinct = keys.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let classes = keys.iter().map(|k| distinct.binary_search(k).unwrap_or(0) as u32).collect();
    (classes, distinct.len() as u32)
}

/// `values` gathered through an optional thread → element order.
pub fn in_order<T: Copy>(values: &[T], order: Option<&[u32]>) -> Vec<T> {
    match order {
        Some(o) => o.iter().map(|&i| values[i as usize]).collect(),
        None => values.to_vec(),
    }
}

/// Joins the emulations of several sites of one kernel over the same threads: sites are
/// concatenated in order, per-warp divergent evaluations added, and a warp is divergent when
/// any site diverged in it. The per-warp efficiency is the lowest of the parts (the exact
/// joint value needs per-site lane counts the parts do not keep).
pub fn join_sites(parts: Vec<Divergence>) -> Result<Divergence> {
    let mut iter = parts.into_iter();
    let mut out = iter.next().ok_or_else(|| Error::invalid("divergence", "no sites to join"))?;
    for p in iter {
        if p.width != out.width || p.warps != out.warps {
            return Err(Error::invalid("divergence", "sites emulated over different warps"));
        }
        out.sites.extend(p.sites);
        for (w, d) in out.per_warp_divergent.iter_mut().zip(&p.per_warp_divergent) {
            *w += d;
        }
        for (w, e) in out.per_warp_efficiency.iter_mut().zip(&p.per_warp_efficiency) {
            *w = w.min(*e);
        }
    }
    out.divergent_warps = out.per_warp_divergent.iter().filter(|&&d| d > 0).count() as u64;
    Ok(out)
}

/// Joins the probes of consecutive chunks of one kernel's grid (the same sites over different
/// warps, e.g. dispatches split so that each chunk's records fit one binding): site counters
/// added, warps kept in order, as one probe over the whole grid would have counted them.
pub fn join_warps(parts: Vec<Divergence>) -> Result<Divergence> {
    let mut iter = parts.into_iter();
    let mut out = iter.next().ok_or_else(|| Error::invalid("divergence", "no chunks to join"))?;
    for p in iter {
        if p.width != out.width || p.sites.len() != out.sites.len() {
            return Err(Error::invalid("divergence", "chunks probed at different widths or sites"));
        }
        for (s, c) in out.sites.iter_mut().zip(&p.sites) {
            s.add(c);
        }
        out.per_warp_divergent.extend(p.per_warp_divergent);
        out.per_warp_efficiency.extend(p.per_warp_efficiency);
        out.divergent_warps += p.divergent_warps;
        out.warps += p.warps;
    }
    Ok(out)
}

/// Options of a prepared run, shared by the five families.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions<'a> {
    /// Count divergence with the GPU probe (needs subgroups).
    pub probe: bool,
    /// Reference redirection: thread t works on element `remap[t]` (the REMAP variant).
    pub remap: Option<&'a [u32]>,
}

impl RunOptions<'_> {
    /// Shader defines for these options (checks subgroups when probing).
    pub fn defines(&self, gpu: &Gpu) -> Result<(Vec<&'static str>, Option<u32>)> {
        let width = if self.probe { Some(gpu.require_subgroups()?) } else { None };
        let mut d = Vec::new();
        if width.is_some() {
            d.push("PROBE");
        }
        if self.remap.is_some() {
            d.push("REMAP");
        }
        Ok((d, width))
    }
}

/// A probe records buffer and its layout for `sites` sites over `grid` workgroups.
pub struct ProbeRecords {
    pub buffer: GpuBuffer<u32>,
    pub layout: ProbeLayout,
}

impl ProbeRecords {
    pub fn new(gpu: &Gpu, width: Option<u32>, sites: usize, grid: [u32; 3], workgroup_size: u32) -> Result<Option<Self>> {
        let Some(w) = width else { return Ok(None) };
        let workgroups = grid[0] as usize * grid[1] as usize * grid[2] as usize;
        let layout = ProbeLayout::new(sites, workgroups, workgroup_size, w);
        let buffer = gpu.buffer_zeroed::<u32>("probe records", layout.words(), BufferKind::Storage)?;
        Ok(Some(ProbeRecords { buffer, layout }))
    }

    pub fn slot(&self) -> (u32, &dyn crate::gpu::Bind) {
        (PROBE_BINDING, &self.buffer)
    }

    pub fn read(&self, gpu: &Gpu) -> Result<Divergence> {
        Ok(self.layout.decode(&gpu.read(&self.buffer)?))
    }
}

/// Reads the probe of a prepared run, or says why there is none.
pub fn read_probe(gpu: &Gpu, probe: &Option<ProbeRecords>) -> Result<Option<Divergence>> {
    probe.as_ref().map(|p| p.read(gpu)).transpose()
}

/// Which runs a benchmark makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// The original kernel only.
    None,
    /// The reference-redirection variant only (with the original as the baseline it needs).
    Redirect,
    /// Every variant the kernel has.
    All,
}

impl Strategy {
    pub fn includes_redirect(self) -> bool {
        matches!(self, Strategy::Redirect | Strategy::All)
    }
}

/// The five benchmarks of section 5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Benchmark {
    Lbm,
    Gafort,
    Mcubes,
    Reduction,
    Blackscholes,
    All,
}

/// Divergence of one run as reported: measured (GPU probe at the native width) when the
/// adapter has subgroups, and always the host emulation at the paper's width 32.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DivergenceReport {
    pub native: Option<DivergenceSummary>,
    pub emulated_w32: DivergenceSummary,
}

impl DivergenceReport {
    pub fn new(native: Option<&Divergence>, emulated_w32: &Divergence) -> Self {
        DivergenceReport { native: native.map(Divergence::summary), emulated_w32: emulated_w32.summary() }
    }
}

/// Everything a family's run produced, turned into a [`Record`] by [`record`].
pub struct Outcome {
    pub family: &'static str,
    pub kernel: String,
    pub variant: String,
    pub params: serde_json::Value,
    pub seed: u64,
    pub stats: Stats,
    pub check: Check,
    pub divergence: DivergenceReport,
    pub throughput: Throughput,
    pub extra: serde_json::Value,
}

/// A record: `divergence` is the GPU probe's when measured, else the emulation at width 32;
/// `extra` carries both plus the family's own figures.
pub fn record(gpu: &Gpu, o: Outcome) -> Record {
    let mut extra = serde_json::json!({
        "divergence_source": if o.divergence.native.is_some() { "gpu-probe" } else { "host-emulation-w32" },
        "divergence_native": o.divergence.native,
        "divergence_w32": o.divergence.emulated_w32,
    });
    if let (Some(map), serde_json::Value::Object(more)) = (extra.as_object_mut(), o.extra) {
        map.extend(more);
    }
    Record {
        schema: harness::SCHEMA_VERSION,
        family: o.family.into(),
        kernel: o.kernel,
        variant: o.variant,
        params: o.params,
        seed: o.seed,
        environment: Environment::of(gpu),
        stats: o.stats,
        check: o.check,
        divergence: Some(o.divergence.native.unwrap_or(o.divergence.emulated_w32)),
        throughput: Some(o.throughput),
        extra,
    }
}

/// Host seconds of `f` (for the cost of building a redirection index).
pub fn host_seconds<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t0 = std::time::Instant::now();
    let v = f();
    (v, t0.elapsed().as_secs_f64())
}

/// `simtlab bench zhang` arguments.
#[derive(clap::Args, Clone, Debug)]
pub struct ZhangArgs {
    /// Which benchmark of Zhang et al. section 5.
    #[arg(long, value_enum, default_value = "all")]
    pub kernel: Benchmark,
    /// none: the original kernels; redirect: original vs reference redirection; all: every variant.
    #[arg(long, value_enum, default_value = "all")]
    pub strategy: Strategy,
    /// Problem sizes (comma list): lbm = lattice edge (cells = n³), gafort = children,
    /// mcubes = grid edge (voxels = n³), reduction = elements, blackscholes = options.
    /// Default: each benchmark's own sizes (reduction: 2^21..2^25 as in Table 5).
    #[arg(long, value_delimiter = ',')]
    pub n: Vec<usize>,
    /// Timed samples per configuration (after warm-up).
    #[arg(long, default_value_t = 10)]
    pub samples: usize,
    /// Untimed warm-up runs per configuration.
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Reduction only: first-pass workgroups of the `fast` kernel to try (comma list, each
    /// 1..=65532, rounded up to a multiple of 4); default: one choice from the size.
    #[arg(long, value_delimiter = ',')]
    pub reduction_groups: Vec<usize>,
}

/// One benchmark at one size.
#[derive(Clone, Debug)]
enum Job {
    Lbm(super::lbm::LbmConfig),
    Gafort(super::gafort::GaConfig),
    Mcubes(super::mcubes::McConfig),
    Reduction(super::reduction::ReductionConfig),
    Blackscholes(super::blackscholes::BsConfig),
}

impl Job {
    fn label(&self) -> String {
        match self {
            Job::Lbm(c) => format!("lbm n={}", c.edge),
            Job::Gafort(c) => format!("gafort n={}", c.children),
            Job::Mcubes(c) => format!("mcubes n={}", c.edge),
            Job::Reduction(c) => format!("reduction n={}", c.n),
            Job::Blackscholes(c) => format!("blackscholes n={}", c.n),
        }
    }

    /// Validates the configuration and returns what it will allocate.
    fn footprint(&self) -> Result<memory::Footprint> {
        match self {
            Job::Lbm(c) => c.validate().map(|_| c.footprint()),
            Job::Gafort(c) => c.validate().map(|_| c.footprint()),
            Job::Mcubes(c) => c.validate().map(|_| c.footprint()),
            Job::Reduction(c) => c.validate().map(|_| c.footprint()),
            Job::Blackscholes(c) => c.validate().map(|_| c.footprint()),
        }
    }

    fn bench(&self, gpu: &Gpu, strategy: Strategy, protocol: &Protocol) -> Result<Vec<Record>> {
        match self {
            Job::Lbm(c) => super::lbm::bench(gpu, c, strategy, protocol),
            Job::Gafort(c) => super::gafort::bench(gpu, c, strategy, protocol),
            Job::Mcubes(c) => super::mcubes::bench(gpu, c, strategy, protocol),
            Job::Reduction(c) => super::reduction::bench(gpu, c, strategy, protocol),
            Job::Blackscholes(c) => super::blackscholes::bench(gpu, c, strategy, protocol),
        }
    }
}

/// The jobs `args` asks for, each validated and checked against the adapter's and the host's
/// memory before any runs, so a size that cannot run fails at once.
fn jobs(gpu: &Gpu, args: &ZhangArgs) -> Result<Vec<Job>> {
    let chosen: Vec<Benchmark> = match args.kernel {
        Benchmark::All => vec![Benchmark::Lbm, Benchmark::Gafort, Benchmark::Mcubes, Benchmark::Reduction, Benchmark::Blackscholes],
        k => vec![k],
    };
    if !args.reduction_groups.is_empty() && !chosen.contains(&Benchmark::Reduction) {
        return Err(Error::invalid("--reduction-groups", "applies to --kernel reduction (or all)"));
    }
    let seed = args.seed;
    let mut jobs = Vec::new();
    for &k in &chosen {
        let default: &[usize] = match k {
            Benchmark::Lbm => &[64],
            Benchmark::Gafort => &[1 << 16],
            Benchmark::Mcubes => &[128],
            Benchmark::Reduction => &[1 << 21, 1 << 22, 1 << 23, 1 << 24, 1 << 25],
            Benchmark::Blackscholes => &[1 << 22],
            Benchmark::All => &[],
        };
        let sizes = if args.n.is_empty() { default } else { &args.n[..] };
        for &n in sizes {
            match k {
                Benchmark::Lbm => jobs.push(Job::Lbm(super::lbm::LbmConfig { edge: n, seed, ..Default::default() })),
                Benchmark::Gafort => jobs.push(Job::Gafort(super::gafort::GaConfig { children: n, seed, ..Default::default() })),
                Benchmark::Mcubes => jobs.push(Job::Mcubes(super::mcubes::McConfig { edge: n, seed, ..Default::default() })),
                Benchmark::Reduction if args.reduction_groups.is_empty() => {
                    jobs.push(Job::Reduction(super::reduction::ReductionConfig { n, seed, fast_groups: None }))
                }
                Benchmark::Reduction => jobs.extend(
                    args.reduction_groups.iter().map(|&g| Job::Reduction(super::reduction::ReductionConfig { n, seed, fast_groups: Some(g) })),
                ),
                Benchmark::Blackscholes => jobs.push(Job::Blackscholes(super::blackscholes::BsConfig { n, seed, ..Default::default() })),
                Benchmark::All => {}
            }
        }
    }
    for job in &jobs {
        job.footprint()?.check(gpu)?;
    }
    Ok(jobs)
}

/// Runs the chosen benchmarks and returns their records.
pub fn bench_cli(gpu: &Gpu, args: &ZhangArgs) -> Result<Vec<Record>> {
    let protocol = Protocol { warmup: args.warmup, samples: args.samples };
    let jobs = jobs(gpu, args)?;
    let progress = Progress::new(jobs.len() as u64, "zhang");
    let mut records = Vec::new();
    for job in jobs {
        progress.message(job.label());
        records.append(&mut job.bench(gpu, args.strategy, &protocol)?);
        progress.step("");
    }
    progress.finish();
    Ok(records)
}

/// The paper's view: per benchmark and size, time org/opt, divergence org/opt and speedup of
/// each variant over the original (`org`) run of the same call.
pub fn comparison(records: &[Record]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<14} {:<22} {:>12} {:>12} {:>9} {:>9} {:>9} {:>9} {:>8}  throughput opt",
        "kernel", "variant vs org", "time org", "time opt", "div org", "div opt", "w32 org", "w32 opt", "speedup"
    );
    let ratio = |r: &Record, key: &str| {
        r.extra.get(key).and_then(|d| d.get("divergence_ratio")).and_then(|v| v.as_f64())
    };
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{:.1}%", 100.0 * v));
    for org in records.iter().filter(|r| r.variant == "org") {
        let same = |r: &&Record| r.kernel == org.kernel && r.params == org.params && r.variant != "org";
        let others: Vec<&Record> = records.iter().filter(same).collect();
        let rows: Vec<Option<&Record>> = if others.is_empty() { vec![None] } else { others.into_iter().map(Some).collect() };
        for opt in rows {
            let t_opt = opt.map(|o| o.stats.median);
            let _ = writeln!(
                s,
                "{:<14} {:<22} {:>12} {:>12} {:>9} {:>9} {:>9} {:>9} {:>8}  {}",
                org.kernel,
                opt.map_or("(org only)".to_string(), |o| o.variant.clone()),
                harness::format_seconds(org.stats.median),
                t_opt.map_or("-".into(), harness::format_seconds),
                pct(ratio(org, "divergence_native")),
                pct(opt.and_then(|o| ratio(o, "divergence_native"))),
                pct(ratio(org, "divergence_w32")),
                pct(opt.and_then(|o| ratio(o, "divergence_w32"))),
                t_opt.map_or("-".into(), |t| format!("{:.2}x", org.stats.median / t)),
                opt.or(Some(org)).and_then(|r| r.throughput.as_ref()).map_or("-".into(), |t| format!("{:.3} {}", t.value, t.unit)),
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_is_a_stable_counting_sort() {
        let classes = [2, 0, 1, 0, 2, 1, 0];
        let idx = redirect_by_class(&classes, 3).unwrap();
        assert_eq!(idx, vec![1, 3, 6, 2, 5, 0, 4]);
        assert!(redirect_by_class(&[3], 3).is_err());
    }

    #[test]
    fn dense_classes_rank_keys() {
        let (c, k) = dense_classes(&[70, 5, 70, 9]);
        assert_eq!((c, k), (vec![2, 0, 2, 1], 3));
    }
}
