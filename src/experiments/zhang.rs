//! Zhang et al., ICS'10: the divergence patterns of Figure 1 and the remapping benchmarks of
//! section 5 (3D-LBM, GAFORT, MarchingCubes, Reduction, BlackScholes), each run without and
//! with thread-data remapping; [`run_benchmarks`] is also `simtlab bench zhang`.

use super::{point, section, About, Experiment, Outcome, Point, Scale};
use crate::harness::{named, Named, Protocol, Record};
use crate::kernels::micro::{Distribution, MicroConfig, Pattern};
use crate::remap::{DivergenceExtra, Variants, ORIGINAL};
use crate::report::{Cell, Figure, PaperValues, Section, Series, Table, Verdict};
use serde::{Deserialize, Serialize};
#[cfg(not(target_arch = "wasm32"))]
use {
    super::{params, run_workload},
    crate::error::{Error, Result},
    crate::gpu::Gpu,
    crate::kernels::micro,
    crate::workload::{self, Run, Workload},
};

/// The five benchmarks of section 5.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Benchmark {
    /// 3D lattice Boltzmann (`kernels::lbm`).
    Lbm,
    /// GAFORT-like genetic algorithm, children generation (`kernels::gafort`).
    Gafort,
    /// Marching cubes (`kernels::mcubes`).
    Mcubes,
    /// The reduction kernels (`kernels::reduction`).
    Reduction,
    /// Black-Scholes option pricing (`kernels::blackscholes`).
    Blackscholes,
    /// All five, one after another.
    All,
}

named!(Benchmark { Lbm => "lbm", Gafort => "gafort", Mcubes => "mcubes", Reduction => "reduction", Blackscholes => "blackscholes", All => "all" });

/// A run of the section 5 benchmarks: which ones, which variants, at which sizes.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct BenchmarkSweep {
    /// Which benchmark(s) run.
    pub benchmark: Benchmark,
    /// Which variants of each run (original, redirect, ...).
    pub variants: Variants,
    /// Problem sizes: lbm = lattice edge (cells = n³), gafort = children, mcubes = grid edge
    /// (voxels = n³), reduction = elements, blackscholes = options. Empty: each benchmark's
    /// own sizes (reduction: 2^21..2^25 as in Table 5).
    pub n: Vec<usize>,
    /// Seed of the generated inputs.
    pub seed: u64,
    /// Warm-up runs and timed samples per variant.
    pub protocol: Protocol,
    /// Reduction only: first-pass workgroups of the `fast` kernel to try (each 1..=65532,
    /// rounded up to a multiple of 4); empty: one choice from the size.
    pub reduction_groups: Vec<usize>,
}

impl Default for BenchmarkSweep {
    fn default() -> Self {
        BenchmarkSweep {
            benchmark: Benchmark::All,
            variants: Variants::All,
            n: Vec::new(),
            seed: 1,
            protocol: Protocol::default(),
            reduction_groups: Vec::new(),
        }
    }
}

impl Benchmark {
    /// The registry workload that runs it and the parameter its sizes set (`None` for all).
    #[cfg(not(target_arch = "wasm32"))]
    fn workload(self) -> Option<(&'static str, &'static str)> {
        match self {
            Benchmark::Lbm => Some(("lbm", "edge")),
            Benchmark::Gafort => Some(("gafort", "children")),
            Benchmark::Mcubes => Some(("mcubes", "edge")),
            Benchmark::Reduction => Some(("reduction", "n")),
            Benchmark::Blackscholes => Some(("blackscholes", "n")),
            Benchmark::All => None,
        }
    }
}

/// The registry runs `sweep` asks for: each benchmark at each size.
#[cfg(not(target_arch = "wasm32"))]
fn jobs(gpu: &Gpu, sweep: &BenchmarkSweep) -> Result<Vec<Run>> {
    let chosen: Vec<Benchmark> = match sweep.benchmark {
        Benchmark::All => vec![Benchmark::Lbm, Benchmark::Gafort, Benchmark::Mcubes, Benchmark::Reduction, Benchmark::Blackscholes],
        k => vec![k],
    };
    if !sweep.reduction_groups.is_empty() && !chosen.contains(&Benchmark::Reduction) {
        return Err(Error::invalid("reduction_groups", "applies to the kernel reduction (or all)"));
    }
    let mut jobs = Vec::new();
    let cpu_adapter = gpu.info().device_type == wgpu::DeviceType::Cpu;
    for (k, (name, size)) in chosen.into_iter().filter_map(|k| Some((k, k.workload()?))) {
        let workload = workload::find(name)?;
        let sizes = if sweep.n.is_empty() { default_sizes(k, cpu_adapter) } else { &sweep.n[..] };
        let groups: Vec<Option<usize>> = match k {
            Benchmark::Reduction if !sweep.reduction_groups.is_empty() => sweep.reduction_groups.iter().copied().map(Some).collect(),
            _ => vec![None],
        };
        for &n in sizes {
            for &g in &groups {
                let params = job_params(workload.as_ref(), size, n, sweep, g);
                jobs.push(Run { workload: name.into(), params, label: format!("{name} n={n}") });
            }
        }
    }
    Ok(jobs)
}

/// The parameters of `workload` at size `n` (the parameter `size`), with the sweep's seed and
/// variants and, for the reduction, the `fast` kernel's first-pass workgroups `groups`.
#[cfg(not(target_arch = "wasm32"))]
fn job_params(workload: &dyn Workload, size: &str, n: usize, sweep: &BenchmarkSweep, groups: Option<usize>) -> serde_json::Value {
    let mut params = workload.params(Scale::Tiny);
    params[size] = n.into();
    params["seed"] = sweep.seed.into();
    params["variants"] = serde_json::to_value(sweep.variants).unwrap_or_default();
    if let Some(g) = groups {
        params["fast_groups"] = g.into();
    }
    params
}

/// The sizes `benchmark` runs when none are given: Table 5's and the papers' on a GPU; on a
/// CPU adapter (lavapipe, llvmpipe) smaller ones, because the GPU sizes take minutes there.
pub fn default_sizes(benchmark: Benchmark, cpu_adapter: bool) -> &'static [usize] {
    match (benchmark, cpu_adapter) {
        (Benchmark::Lbm, false) => &[64],
        (Benchmark::Gafort, false) => &[1 << 16],
        (Benchmark::Mcubes, false) => &[128],
        (Benchmark::Reduction, false) => &[1 << 21, 1 << 22, 1 << 23, 1 << 24, 1 << 25],
        (Benchmark::Blackscholes, false) => &[1 << 22],
        (Benchmark::Lbm, true) => &[32],
        (Benchmark::Gafort, true) => &[1 << 14],
        (Benchmark::Mcubes, true) => &[64],
        (Benchmark::Reduction, true) => &[1 << 18, 1 << 20],
        (Benchmark::Blackscholes, true) => &[1 << 20],
        (Benchmark::All, _) => &[],
    }
}

/// Runs the chosen benchmarks and returns their records; every size is checked against the
/// adapter's and the host's memory before any runs, so a size that cannot run fails at once.
#[cfg(not(target_arch = "wasm32"))]
pub fn run_benchmarks(gpu: &Gpu, sweep: &BenchmarkSweep) -> Result<Vec<Record>> {
    workload::run_all(gpu, &jobs(gpu, sweep)?, &sweep.protocol, "zhang")
}

/// Zhang's divergence ratio measured by the GPU probe, where the record has it.
pub fn native_ratio(r: &Record) -> Option<f64> {
    r.extra_as::<DivergenceExtra>()?.divergence_native.map(|d| d.divergence_ratio)
}

/// Zhang's divergence ratio emulated at the papers' warp width of 32, where the record has it.
pub fn w32_ratio(r: &Record) -> Option<f64> {
    r.extra_as::<DivergenceExtra>()?.divergence_w32.map(|d| d.divergence_ratio)
}

pub(crate) fn experiments() -> Vec<Box<dyn Experiment>> {
    let t = |bench, id, title, paper_table, sizes: [&'static [usize]; 3]| -> Box<dyn Experiment> {
        Box::new(RemapTable { bench, id, title, paper_table, sizes })
    };
    vec![
        Box::new(LoopLayouts),
        Box::new(IfProbability),
        t(
            Benchmark::Lbm,
            "zhang-table2-lbm",
            "Table 2: 3D-LBM (D3Q19), original vs redirection (n = lattice edge)",
            Some("table2"),
            [&[8], &[16, 32], &[64, 128]],
        ),
        t(
            Benchmark::Gafort,
            "zhang-table3-gafort",
            "Table 3: GAFORT-like GA, original vs redirection (n = children)",
            Some("table3"),
            [&[256], &[4096, 16384], &[65536, 1 << 20]],
        ),
        t(
            Benchmark::Mcubes,
            "zhang-table4-mcubes",
            "Table 4: MarchingCubes, original vs redirection (n = grid edge)",
            Some("table4"),
            [&[12], &[32, 48], &[128, 256]],
        ),
        t(
            Benchmark::Reduction,
            "zhang-table5-reduction",
            "Table 5: Reduction, interleaved vs IDArray, sequential and fast (n = elements)",
            Some("table5"),
            [&[1 << 12], &[1 << 16, 1 << 18], &[1 << 21, 1 << 22, 1 << 23, 1 << 24, 1 << 25, 1 << 26]],
        ),
        t(
            Benchmark::Blackscholes,
            "zhang-blackscholes",
            "BlackScholes: the control case with no divergence (n = options)",
            None,
            [&[4096], &[1 << 16], &[1 << 22, 1 << 24]],
        ),
    ]
}

/// One of the section 5 benchmarks at several sizes, every variant, like Tables 2-5.
struct RemapTable {
    bench: Benchmark,
    id: &'static str,
    title: &'static str,
    paper_table: Option<&'static str>,
    sizes: [&'static [usize]; 3],
}

#[derive(serde::Serialize, serde::Deserialize)]
struct TablePoint {
    n: usize,
    scale: Scale,
}

impl Experiment for RemapTable {
    fn about(&self) -> About {
        About { paper: "zhang", id: self.id, title: self.title }
    }
    fn points(&self, scale: Scale) -> Vec<Point> {
        scale
            .pick(self.sizes[0], self.sizes[1], self.sizes[2])
            .iter()
            .map(|&n| point(self.id, format!("n{n}-{scale:?}"), serde_json::to_value(TablePoint { n, scale }).unwrap_or_default()))
            .collect()
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn run(&self, gpu: &Gpu, p: &Point) -> Result<Vec<Record>> {
        let tp: TablePoint = params(p)?;
        let sweep = BenchmarkSweep {
            benchmark: self.bench,
            variants: Variants::All,
            n: vec![tp.n],
            seed: 1,
            protocol: tp.scale.protocol(),
            reduction_groups: Vec::new(),
        };
        run_benchmarks(gpu, &sweep)
    }
    fn render(&self, outcomes: &[&Outcome], paper: &PaperValues) -> Section {
        let mut table = Table::new(
            "median times; divergence ratio at the native width (GPU probe) and at W=32 (emulation)",
            &[
                "n",
                "variant",
                "time org (ms)",
                "time opt (ms)",
                "speedup",
                "div org native",
                "div opt native",
                "div org W=32",
                "div opt W=32",
                "check",
            ],
        );
        let all: Vec<&Record> = records(outcomes).map(|(_, r)| r).collect();
        let cell = |v: Option<f64>| v.map_or(Cell::Missing, |x| Cell::exact(x, 3));
        let mut best_speedup: Option<f64> = None;
        let mut w32 = (None, None);
        for org in all.iter().filter(|r| r.variant == ORIGINAL) {
            for opt in all.iter().filter(|r| r.kernel == org.kernel && r.params == org.params && r.variant != ORIGINAL) {
                let speedup = org.stats.median / opt.stats.median;
                if opt.variant.contains("redirect") || opt.variant.contains("id") {
                    best_speedup = Some(best_speedup.map_or(speedup, |b: f64| b.max(speedup)));
                    w32 = (w32_ratio(org), w32_ratio(opt));
                }
                table.rows.push(vec![
                    Cell::text(
                        org.params
                            .get("n")
                            .or(org.params.get("edge"))
                            .or(org.params.get("children"))
                            .map_or(String::new(), |v| v.to_string()),
                    ),
                    Cell::text(&opt.variant),
                    Cell::measured(org.stats.median * 1e3, 3),
                    Cell::measured(opt.stats.median * 1e3, 3),
                    Cell::measured(speedup, 2),
                    cell(native_ratio(org)),
                    cell(native_ratio(opt)),
                    cell(w32_ratio(org)),
                    cell(w32_ratio(opt)),
                    Cell::check(org.check.passed && opt.check.passed),
                ]);
            }
        }
        let paper_speedup = self.paper_table.and_then(|t| paper.table(t)).and_then(|t| {
            let c = t.columns.iter().position(|c| c == "speedup")?;
            t.rows.iter().filter_map(|r| r.get(c).and_then(|v| v.as_float())).reduce(f64::max)
        });
        let mut verdicts = Vec::new();
        if self.bench == Benchmark::Blackscholes {
            let none = all.iter().all(|r| w32_ratio(r) == Some(0.0));
            verdicts.push(Verdict::holds(
                "BlackScholes has no divergence: remapping cannot pay (efficiency control keeps it off)",
                none && !all.is_empty(),
            ));
        } else {
            verdicts.push(Verdict::direction(
                "remapping reduces the divergence ratio at W=32 (org − opt)",
                None,
                w32.0.zip(w32.1).map(|(a, b)| a - b),
                "",
                0.0,
            ));
            verdicts.push(Verdict::direction("remapping speeds the kernel up (best speedup)", paper_speedup, best_speedup, "x", 1.0));
        }
        Section {
            tables: vec![table],
            paper_tables: self.paper_table.map(String::from).into_iter().collect(),
            verdicts,
            ..section(self, outcomes)
        }
    }
}

fn records<'a>(outcomes: &'a [&Outcome]) -> impl Iterator<Item = (&'a Point, &'a Record)> {
    outcomes.iter().flat_map(|o| o.records.iter().map(move |r| (&o.point, r)))
}

/// Figure 1(b): a data-dependent loop; the same work with long lanes spread one per warp or
/// sorted together, as the long trip count grows.
struct LoopLayouts;

#[derive(serde::Serialize, serde::Deserialize)]
struct MicroPoint {
    config: MicroConfig,
    scale: Scale,
}

impl Experiment for LoopLayouts {
    fn about(&self) -> About {
        About {
            paper: "zhang",
            id: "zhang-fig1-loop",
            title: "Figure 1(b): data-dependent loop, one long lane per warp vs the same trips sorted",
        }
    }
    fn points(&self, scale: Scale) -> Vec<Point> {
        let n = scale.pick(1 << 12, 1 << 16, 1 << 24);
        let longs: &[u32] = scale.pick(&[64], &[64, 256], &[64, 128, 256, 512, 1024]);
        let mut v = Vec::new();
        for &long in longs {
            for d in [Distribution::OneLong, Distribution::Sorted, Distribution::Random] {
                let config = MicroConfig { pattern: Pattern::Loop, distribution: d, n, long, short: 16, ..Default::default() };
                let p = MicroPoint { config, scale };
                v.push(point(self.id(), format!("{}-long{long}-n{n}", d.name()), serde_json::to_value(&p).unwrap_or_default()));
            }
        }
        v
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn run(&self, gpu: &Gpu, p: &Point) -> Result<Vec<Record>> {
        let lp: MicroPoint = params(p)?;
        run_workload(gpu, "micro-loop", &lp.config, &lp.scale.protocol())
    }
    fn render(&self, outcomes: &[&Outcome], _paper: &PaperValues) -> Section {
        let mut table = Table::new(
            "median time per layout (same multiset of trip counts for one-long and sorted)",
            &["layout", "long trips", "n", "time (ms)", "SIMT eff.", "div. ratio", "slowdown vs sorted", "check"],
        );
        let mut series: Vec<Series> = Vec::new();
        let all: Vec<(&Point, &Record)> = records(outcomes).collect();
        let time_of = |d: &str, long: u64| {
            all.iter().find(|(_, r)| r.variant == d && r.params["long"].as_u64() == Some(long)).map(|(_, r)| r.stats.median)
        };
        let mut slowdowns = Vec::new();
        for (_, r) in &all {
            let long = r.params["long"].as_u64().unwrap_or(0);
            let sorted = time_of("sorted", long);
            let slowdown = sorted.map(|s| r.stats.median / s);
            if r.variant == "one-long" {
                slowdowns.extend(slowdown);
            }
            let d = r.divergence;
            table.rows.push(vec![
                Cell::text(&r.variant),
                Cell::exact(long as f64, 0),
                Cell::exact(r.params["n"].as_f64().unwrap_or(0.0), 0),
                Cell::measured(r.stats.median * 1e3, 3),
                d.map_or(Cell::Missing, |d| Cell::exact(d.simt_efficiency, 3)),
                d.map_or(Cell::Missing, |d| Cell::exact(d.divergence_ratio, 3)),
                slowdown.map_or(Cell::Missing, |s| Cell::measured(s, 2)),
                Cell::check(r.check.passed),
            ]);
            Series::add(&mut series, &r.variant, (long as f64, r.stats.median * 1e3));
        }
        let worst = slowdowns.iter().copied().fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
        Section {
            tables: vec![table],
            figures: vec![Figure {
                id: self.id().into(),
                title: "data-dependent loop: time vs long trip count".into(),
                x_label: "long trip count".into(),
                y_label: "median time (ms)".into(),
                log_x: true,
                log_y: true,
                categories: None,
                series,
            }],
            verdicts: vec![Verdict::direction(
                "divergent layout (one long lane per warp) is slower than the same work sorted (largest slowdown)",
                None,
                worst,
                "x",
                1.0,
            )],
            ..section(self, outcomes)
        }
    }
}

/// Figure 1(a): a data-dependent `if`; time and divergence as the taken fraction p varies.
struct IfProbability;

impl Experiment for IfProbability {
    fn about(&self) -> About {
        About {
            paper: "zhang",
            id: "zhang-fig1-if",
            title: "Figure 1(a): data-dependent if, fraction p on the expensive path (random vs sorted values)",
        }
    }
    fn points(&self, scale: Scale) -> Vec<Point> {
        let n = scale.pick(1 << 12, 1 << 16, 1 << 24);
        let ps: &[f64] = scale.pick(&[0.0, 0.5], &[0.0, 0.05, 0.5, 1.0], &[0.0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]);
        let mut v = Vec::new();
        for &p in ps {
            for d in [Distribution::Random, Distribution::Sorted] {
                let config = MicroConfig { pattern: Pattern::If, distribution: d, n, probability: p, heavy: 256, ..Default::default() };
                let lp = MicroPoint { config, scale };
                v.push(point(self.id(), format!("{}-p{p}-n{n}", d.name()), serde_json::to_value(&lp).unwrap_or_default()));
            }
        }
        v
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn run(&self, gpu: &Gpu, p: &Point) -> Result<Vec<Record>> {
        let lp: MicroPoint = params(p)?;
        let mut rec = run_workload(gpu, "micro-if", &lp.config, &lp.scale.protocol())?
            .pop()
            .ok_or_else(|| Error::gpu("running micro-if", "the workload gave no record"))?;
        // the paper's warp width, emulated, beside whatever the adapter measured
        let input = micro::generate(&lp.config)?;
        let at32 = micro::emulate(&lp.config, &input, None, 32)?.summary();
        let extra = DivergenceExtra { divergence_w32: Some(at32), ..rec.extra_as().unwrap_or_default() };
        rec = rec.with_extra(extra);
        rec.variant = format!("{} p={}", lp.config.distribution.name(), lp.config.probability);
        Ok(vec![rec])
    }
    fn render(&self, outcomes: &[&Outcome], _paper: &PaperValues) -> Section {
        let mut table = Table::new(
            "data-dependent if",
            &["values", "p", "time (ms)", "div. ratio (native)", "div. ratio (W=32)", "SIMT eff. (native)", "check"],
        );
        let mut series: Vec<Series> = Vec::new();
        let mut peak_random = None::<(f64, f64)>;
        for (_, r) in records(outcomes) {
            let p = r.params["probability"].as_f64().unwrap_or(0.0);
            let layout = r.params["distribution"].as_str().unwrap_or("?").to_string();
            let w32 = w32_ratio(r);
            let d = r.divergence;
            table.rows.push(vec![
                Cell::text(&layout),
                Cell::exact(p, 2),
                Cell::measured(r.stats.median * 1e3, 3),
                d.map_or(Cell::Missing, |d| Cell::exact(d.divergence_ratio, 3)),
                w32.map_or(Cell::Missing, |x| Cell::exact(x, 3)),
                d.map_or(Cell::Missing, |d| Cell::exact(d.simt_efficiency, 3)),
                Cell::check(r.check.passed),
            ]);
            if layout == "random" {
                if let Some(x) = w32 {
                    if peak_random.is_none_or(|(_, best)| x > best) {
                        peak_random = Some((p, x));
                    }
                }
            }
            Series::add(&mut series, &layout, (p, r.stats.median * 1e3));
        }
        let sorted_cost = {
            let random = series.iter().find(|s| s.name == "random");
            let sorted = series.iter().find(|s| s.name == "sorted");
            match (random, sorted) {
                (Some(a), Some(b)) => {
                    let mid = |s: &Series| s.points.iter().find(|p| (p.0 - 0.5).abs() < 1e-9).map(|p| p.1);
                    mid(a).zip(mid(b)).map(|(x, y)| x / y)
                }
                _ => None,
            }
        };
        Section {
            tables: vec![table],
            figures: vec![Figure {
                id: self.id().into(),
                title: "data-dependent if: time vs taken fraction".into(),
                x_label: "fraction p on the expensive path".into(),
                y_label: "median time (ms)".into(),
                series,
                ..Default::default()
            }],
            verdicts: vec![Verdict::direction(
                "at p = 0.5 random values are slower than the same values sorted (both paths per warp)",
                None,
                sorted_cost,
                "x",
                1.0,
            )],
            notes: peak_random
                .map(|(p, x)| format!("Divergence ratio at W=32 peaks at p = {p} ({x:.3}): with random values almost every warp holds both paths once 0 < p < 1."))
                .into_iter()
                .collect(),
            ..section(self, outcomes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{blackscholes, gafort, lbm, mcubes, reduction};
    use crate::remap::Variants;

    /// Each benchmark's registry parameters are its family's default configuration with the
    /// sweep's size and seed, and the variants the sweep asks for.
    #[test]
    fn job_parameters_are_the_default_configuration_at_the_size_and_seed() {
        let sweep = BenchmarkSweep { variants: Variants::Redirect, seed: 3, ..Default::default() };
        let typed = |b: Benchmark, n: usize, groups: Option<usize>| -> serde_json::Value {
            match b {
                Benchmark::Lbm => serde_json::to_value(lbm::LbmConfig { edge: n, seed: 3, ..Default::default() }),
                Benchmark::Gafort => serde_json::to_value(gafort::GaConfig { children: n, seed: 3, ..Default::default() }),
                Benchmark::Mcubes => serde_json::to_value(mcubes::McConfig { edge: n, seed: 3, ..Default::default() }),
                Benchmark::Reduction => serde_json::to_value(reduction::ReductionConfig { n, seed: 3, fast_groups: groups }),
                _ => serde_json::to_value(blackscholes::BsConfig { n, seed: 3, ..Default::default() }),
            }
            .unwrap()
        };
        for b in [Benchmark::Lbm, Benchmark::Gafort, Benchmark::Mcubes, Benchmark::Reduction, Benchmark::Blackscholes] {
            let (name, size) = b.workload().unwrap();
            let w = workload::find(name).unwrap();
            for groups in [None, Some(8)].into_iter().filter(|g| g.is_none() || b == Benchmark::Reduction) {
                let mut params = job_params(w.as_ref(), size, 16, &sweep, groups);
                assert_eq!(params["variants"], "redirect", "{name}");
                params.as_object_mut().unwrap().remove("variants");
                assert_eq!(params, typed(b, 16, groups), "{name}");
            }
        }
        assert_eq!(Benchmark::All.workload(), None);
    }
}
