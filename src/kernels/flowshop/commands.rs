//! `simtlab flowshop instance|bound|solve` and `simtlab bench flowshop`: clap arguments and
//! the functions behind them (they return text or records, so tests call them directly).
//!
//! Jobs are numbered from 0 everywhere (prefixes, suffixes, permutations).

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::bench::{self, BenchConfig};
use super::gpu::{GpuBoundOptions, GpuBounder, ThreadMapping};
use super::{
    cpu, read_instance, solve_with, taillard_by_name, BoundData, Branching, CpuBounder, Exploration, Instance,
    IteratedGreedy, LowerBound, Node, Progress, SearchOptions, Solution,
};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, GpuOptions};
use crate::harness::{Protocol, Record};
use crate::report::PaperValues;

#[derive(clap::Args, Debug)]
pub struct FlowshopArgs {
    #[command(subcommand)]
    pub command: FlowshopCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum FlowshopCommand {
    /// Print a Taillard instance (generated from its seed) or an instance file.
    Instance(InstanceArgs),
    /// LB1 and LB2 of one node (prefix and suffix fixed, 0-based job numbers).
    Bound(BoundArgs),
    /// Branch-and-bound to optimality (or to the limits), bounding on the GPU or the CPU.
    Solve(SolveArgs),
}

#[derive(clap::Args, Debug, Clone)]
pub struct InstanceArgs {
    /// taNNN (Taillard's 120 instances) or a file in Taillard's format.
    pub instance: String,
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Debug, Clone)]
pub struct BoundArgs {
    /// taNNN or an instance file.
    pub instance: String,
    /// Jobs fixed at the start, in order (0-based), e.g. 3,0,7.
    #[arg(long, value_delimiter = ',')]
    pub prefix: Vec<usize>,
    /// Jobs fixed at the end, in order (0-based).
    #[arg(long, value_delimiter = ',')]
    pub suffix: Vec<usize>,
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundArg {
    Lb1,
    Lb2,
}

impl From<BoundArg> for LowerBound {
    fn from(b: BoundArg) -> Self {
        match b {
            BoundArg::Lb1 => LowerBound::Lb1,
            BoundArg::Lb2 => LowerBound::Lb2,
        }
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceArg {
    Gpu,
    Cpu,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExplorationArg {
    Dfs,
    Bfs,
}

impl From<ExplorationArg> for Exploration {
    fn from(e: ExplorationArg) -> Self {
        match e {
            ExplorationArg::Dfs => Exploration::DepthFirst,
            ExplorationArg::Bfs => Exploration::BreadthFirst,
        }
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BranchingArg {
    /// Children append a job to the prefix.
    Forward,
    /// Bound both directions, branch in the one that keeps fewer children.
    Bidirectional,
}

impl From<BranchingArg> for Branching {
    fn from(b: BranchingArg) -> Self {
        match b {
            BranchingArg::Forward => Branching::Forward,
            BranchingArg::Bidirectional => Branching::Bidirectional,
        }
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelArg {
    /// Branch-refactored (max/select instead of data-dependent ifs).
    Refactored,
    Basic,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MappingArg {
    /// One thread per child node.
    PerChild,
    /// One thread per parent node, bounding its children in turn.
    PerParent,
}

impl From<MappingArg> for ThreadMapping {
    fn from(m: MappingArg) -> Self {
        match m {
            MappingArg::PerChild => ThreadMapping::PerChild,
            MappingArg::PerParent => ThreadMapping::PerParent,
        }
    }
}

#[derive(clap::Args, Debug, Clone)]
pub struct SolveArgs {
    /// taNNN or an instance file.
    pub instance: String,
    #[arg(long, value_enum, default_value = "lb2")]
    pub bound: BoundArg,
    /// Look only for schedules with a makespan of at most this value (the start
    /// heuristic's schedule counts when it is no worse). If the search finishes without one,
    /// that proves only that no schedule has a makespan below it.
    #[arg(long)]
    pub ub: Option<u32>,
    /// Iterated-greedy rounds after NEH for the start schedule (0: NEH alone). Default:
    /// 10⁸ / (jobs²·machines) between 20 and 10000, about a second on one core.
    #[arg(long)]
    pub heuristic_rounds: Option<u32>,
    #[arg(long, value_enum, default_value = "gpu")]
    pub device: DeviceArg,
    /// Open nodes expanded per iteration (each gives up to `jobs` children to bound).
    #[arg(long, default_value_t = 1024)]
    pub pool: usize,
    #[arg(long, value_enum, default_value = "dfs")]
    pub exploration: ExplorationArg,
    #[arg(long, value_enum, default_value = "bidirectional")]
    pub branching: BranchingArg,
    /// GPU kernel variant (--device gpu only) [default: refactored].
    #[arg(long, value_enum)]
    pub kernel: Option<KernelArg>,
    /// GPU thread mapping (--device gpu only) [default: per-child].
    #[arg(long, value_enum)]
    pub mapping: Option<MappingArg>,
    /// CPU bounding threads (--device cpu only; 0 = all cores) [default: 0].
    #[arg(long)]
    pub threads: Option<usize>,
    /// Wait for each pool's bounds before filling the next one (strict deepest-first order;
    /// by default the host fills the next pool while the GPU bounds the current one).
    #[arg(long)]
    pub sequential: bool,
    /// Stop after this many seconds (the result is then not proven optimal).
    #[arg(long)]
    pub time_limit: Option<f64>,
    /// Stop after this many nodes.
    #[arg(long)]
    pub node_limit: Option<u64>,
    #[arg(long)]
    pub json: bool,
}

impl SolveArgs {
    /// Defaults of the command line for `instance`.
    pub fn new(instance: impl Into<String>) -> Self {
        Self {
            instance: instance.into(),
            bound: BoundArg::Lb2,
            ub: None,
            heuristic_rounds: None,
            device: DeviceArg::Gpu,
            pool: 1024,
            exploration: ExplorationArg::Dfs,
            branching: BranchingArg::Bidirectional,
            kernel: None,
            mapping: None,
            threads: None,
            sequential: false,
            time_limit: None,
            node_limit: None,
            json: false,
        }
    }
}

/// `taNNN` (any case) names a Taillard instance; anything else is a file path.
pub fn load_instance(spec: &str) -> Result<Instance> {
    let lower = spec.to_ascii_lowercase();
    let taillard_name = lower.len() > 2 && lower.starts_with("ta") && lower[2..].chars().all(|c| c.is_ascii_digit());
    if taillard_name {
        taillard_by_name(&lower)
    } else {
        read_instance(std::path::Path::new(spec))
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string_pretty(value).map_err(|e| Error::invalid("json output", e.to_string()))
}

/// `flowshop instance`: JSON fields `name`, `jobs`, `machines`, `seed`, `p` (machine-major),
/// `upper_bound`, `lower_bound`; or Taillard's text format.
pub fn instance(args: &InstanceArgs) -> Result<String> {
    let instance = load_instance(&args.instance)?;
    if args.json {
        to_json(&instance)
    } else {
        Ok(super::taillard::format_instance(&instance))
    }
}

#[derive(serde::Serialize)]
struct BoundReport<'a> {
    instance: &'a str,
    prefix: &'a [usize],
    suffix: &'a [usize],
    unscheduled: usize,
    lb1: u32,
    lb2: u32,
}

/// `flowshop bound`: JSON fields `lb1`, `lb2` (and the node).
pub fn bound(args: &BoundArgs) -> Result<String> {
    let instance = load_instance(&args.instance)?;
    let data = BoundData::new(&instance);
    let node = Node::new(instance.jobs, args.prefix.clone(), args.suffix.clone())?;
    let report = BoundReport {
        instance: &instance.name,
        prefix: &node.prefix,
        suffix: &node.suffix,
        unscheduled: node.unscheduled.len(),
        lb1: cpu::lb1_node(&data, &node),
        lb2: cpu::lb2_node(&data, &node),
    };
    if args.json {
        return to_json(&report);
    }
    Ok(format!(
        "{}: prefix {:?}, suffix {:?}, {} unscheduled: LB1 {}, LB2 {}\n",
        report.instance, report.prefix, report.suffix, report.unscheduled, report.lb1, report.lb2
    ))
}

#[derive(serde::Serialize)]
struct SolveReport<'a> {
    instance: &'a str,
    jobs: usize,
    machines: usize,
    bound: LowerBound,
    branching: Branching,
    /// The host filled the next pool while the GPU bounded the current one.
    overlap: bool,
    device: &'a str,
    /// Best known makespan of the instance (Taillard's table or the file header); null when
    /// unknown.
    best_known: Option<u32>,
    #[serde(flatten)]
    solution: &'a Solution,
}

impl SolveArgs {
    /// Rejects options that do not apply to the chosen device (they would be ignored).
    fn check_device_options(&self) -> Result<()> {
        match self.device {
            DeviceArg::Gpu if self.threads.is_some() => Err(not_for_device("--threads", "cpu")),
            DeviceArg::Cpu if self.kernel.is_some() => Err(not_for_device("--kernel", "gpu")),
            DeviceArg::Cpu if self.mapping.is_some() => Err(not_for_device("--mapping", "gpu")),
            _ => Ok(()),
        }
    }

    fn search_options<'a>(&self, interrupted: Option<&'a AtomicBool>) -> Result<SearchOptions<'a>> {
        let time_limit = match self.time_limit {
            None => None,
            Some(s) => Some(
                Duration::try_from_secs_f64(s)
                    .map_err(|_| Error::invalid("--time-limit", format!("{s} s; use a number of seconds ≥ 0")))?,
            ),
        };
        Ok(SearchOptions {
            bound: self.bound.into(),
            exploration: self.exploration.into(),
            branching: self.branching.into(),
            pool_size: self.pool,
            upper_bound: self.ub,
            heuristic: IteratedGreedy { iterations: self.heuristic_rounds, ..IteratedGreedy::default() },
            node_limit: self.node_limit,
            time_limit,
            interrupted,
            threads: self.threads.unwrap_or(0),
            progress_interval: Duration::from_secs(1),
            overlap: !self.sequential,
        })
    }
}

fn not_for_device(option: &str, device: &str) -> Error {
    Error::invalid(option, format!("it applies only to --device {device}; drop {option} or add --device {device}"))
}

/// Runs the search of `args`; `gpu` is required for `--device gpu`. The search stops early,
/// with what it found so far, once `interrupted` is set.
pub fn solve_instance(
    args: &SolveArgs,
    gpu: Option<&Gpu>,
    interrupted: Option<&AtomicBool>,
    progress: Option<&mut dyn FnMut(&Progress)>,
) -> Result<(Instance, Solution)> {
    args.check_device_options()?;
    let options = args.search_options(interrupted)?;
    let instance = load_instance(&args.instance)?;
    let data = BoundData::new(&instance);
    let solution = match args.device {
        DeviceArg::Cpu => {
            let mut bounder = CpuBounder::new(&data, options.bound, options.threads);
            solve_with(&data, &options, &mut bounder, progress)?
        }
        DeviceArg::Gpu => {
            let gpu = gpu.ok_or_else(|| Error::invalid("--device gpu", "no GPU was opened"))?;
            let gpu_options = GpuBoundOptions {
                bound: options.bound,
                branchless: args.kernel.unwrap_or(KernelArg::Refactored) == KernelArg::Refactored,
                probe: false,
                mapping: args.mapping.unwrap_or(MappingArg::PerChild).into(),
                walk_prefix: false,
            };
            let mut bounder = GpuBounder::new(gpu, &data, gpu_options)?;
            solve_with(&data, &options, &mut bounder, progress)?
        }
    };
    Ok((instance, solution))
}

fn job_list(jobs: &[usize]) -> String {
    jobs.iter().map(|j| j.to_string()).collect::<Vec<_>>().join(" ")
}

/// `flowshop solve`: JSON fields `makespan` (null when no schedule within `--ub` was found),
/// `permutation` (0-based, achieves `makespan`), `optimal`, `proven_lower_bound` (no
/// schedule is better; null when the search stopped early), `stopped` (why, or null),
/// `start_makespan` and `start_permutation` (the start heuristic's schedule), `nodes`,
/// `leaves`, `seconds`, plus the instance and settings. Stops early with what it found so
/// far once `interrupted` is set.
pub fn solve(args: &SolveArgs, gpu: Option<&Gpu>, interrupted: Option<&AtomicBool>) -> Result<String> {
    let mut report = |p: &Progress| {
        let best = p.best.map_or("none yet".into(), |b| b.to_string());
        // Progress goes to stderr; a closed stderr must not stop the search.
        let _ = writeln!(
            std::io::stderr(),
            "[{:.0} s] best {best}, {} nodes, {} leaves, {} open",
            p.seconds, p.nodes, p.leaves, p.open
        );
    };
    let (instance, solution) = solve_instance(args, gpu, interrupted, Some(&mut report))?;
    let device = match args.device {
        DeviceArg::Cpu => "cpu".to_string(),
        DeviceArg::Gpu => gpu.map_or("gpu".into(), |g| g.adapter_name()),
    };
    let best_known = (instance.upper_bound != 0).then_some(instance.upper_bound);
    if args.json {
        return to_json(&SolveReport {
            instance: &instance.name,
            jobs: instance.jobs,
            machines: instance.machines,
            bound: args.bound.into(),
            branching: args.branching.into(),
            overlap: !args.sequential,
            device: &device,
            best_known,
            solution: &solution,
        });
    }
    let s = &solution;
    let ub = args.ub.unwrap_or_default();
    let result = match (s.makespan, s.stopped) {
        (Some(makespan), None) => format!("makespan {makespan} (optimal)"),
        (Some(makespan), Some(stop)) => format!("makespan {makespan} (search stopped: {stop}; not proven optimal)"),
        (None, None) => format!(
            "no schedule better than --ub {ub} exists (proven: the optimum is at least {ub}), \
             and the search met none equal to it"
        ),
        (None, Some(stop)) => format!("no schedule of makespan at most --ub {ub} found (search stopped: {stop})"),
    };
    let schedule = if s.makespan.is_some() {
        format!("permutation (0-based): {}", job_list(&s.permutation))
    } else {
        format!("start schedule (0-based, makespan {}): {}", s.start_makespan, job_list(&s.start_permutation))
    };
    Ok(format!(
        "{} ({}x{}), {:?} on {device}: {result}; best known: {}; start {} ({:.2} s); {} nodes, {} leaves, {:.3} s\n{schedule}\n",
        instance.name,
        instance.jobs,
        instance.machines,
        LowerBound::from(args.bound),
        best_known.map_or("unknown".into(), |v| v.to_string()),
        s.start_makespan,
        s.heuristic_seconds,
        s.nodes,
        s.leaves,
        s.seconds,
    ))
}

/// Runs a `flowshop` subcommand, opening a GPU only for `solve --device gpu`. `solve` stops
/// early and reports what it found so far once `interrupted` is set (the caller's Ctrl-C
/// handler sets it; this library installs no signal handler). Returns the text to print.
pub fn run(args: &FlowshopArgs, gpu_options: &GpuOptions, interrupted: &AtomicBool) -> Result<String> {
    match &args.command {
        FlowshopCommand::Instance(a) => instance(a),
        FlowshopCommand::Bound(a) => bound(a),
        FlowshopCommand::Solve(a) => {
            a.check_device_options()?;
            let gpu = match a.device {
                DeviceArg::Gpu => {
                    let gpu = Gpu::new(gpu_options)?;
                    let _ = writeln!(std::io::stderr(), "adapter: {}", gpu.adapter_name());
                    Some(gpu)
                }
                DeviceArg::Cpu => {
                    if gpu_options.backend.is_some() {
                        return Err(not_for_device("--backend", "gpu"));
                    }
                    if gpu_options.adapter.is_some() {
                        return Err(not_for_device("--adapter", "gpu"));
                    }
                    None
                }
            };
            solve(a, gpu.as_ref(), Some(interrupted))
        }
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadsArg {
    Record,
    Walk,
}

/// `simtlab bench flowshop`: Table 1 (DFS vs BFS pools), Table 2 (refactored vs basic,
/// speedup over one CPU core) and bounds/s on GPU vs one core vs all cores.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Taillard instances (the paper's sizes: 20x20, 50x20, 100x20, 200x20, 500x20).
    #[arg(long, value_delimiter = ',', default_value = "ta021,ta051,ta081,ta101,ta111")]
    pub instances: Vec<String>,
    /// Children per pool.
    #[arg(long, value_delimiter = ',', default_value = "4096,8192,16384,32768,65536")]
    pub pools: Vec<usize>,
    #[arg(long, value_enum, default_value = "lb2")]
    pub bound: BoundArg,
    /// Pool orders.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "dfs,bfs")]
    pub exploration: Vec<ExplorationArg>,
    /// GPU kernel variants.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "refactored,basic")]
    pub kernel: Vec<KernelArg>,
    /// Where each GPU kernel gets a parent's heads: `record` reads them from the parent
    /// record, `walk` recomputes them along the prefix as the paper's kernel does (a loop as
    /// long as the node is deep).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "record")]
    pub heads: Vec<HeadsArg>,
    #[arg(long, value_enum, default_value = "per-child")]
    pub mapping: MappingArg,
    /// Skip the CPU timings (and with them Table 2).
    #[arg(long)]
    pub no_cpu: bool,
    /// Skip the divergence probe runs.
    #[arg(long)]
    pub no_probe: bool,
    /// Timed samples per GPU configuration (the CPU takes at most 3).
    #[arg(long, default_value_t = 10)]
    pub samples: usize,
    /// Untimed warm-up runs per GPU configuration.
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// Write all records as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write all records as CSV.
    #[arg(long)]
    pub csv: Option<PathBuf>,
}

impl BenchArgs {
    /// One benchmark configuration per instance.
    pub fn configs(&self) -> Vec<BenchConfig> {
        self.instances
            .iter()
            .map(|name| BenchConfig {
                instance: name.to_ascii_lowercase(),
                pool_sizes: self.pools.clone(),
                bound: self.bound.into(),
                strategies: self.exploration.iter().map(|&e| e.into()).collect(),
                branchless: self.kernel.iter().map(|&k| k == KernelArg::Refactored).collect(),
                walk_prefix: self.heads.iter().map(|&h| h == HeadsArg::Walk).collect(),
                mapping: self.mapping.into(),
                cpu: !self.no_cpu,
                probe: !self.no_probe,
            })
            .collect()
    }

    pub fn protocol(&self) -> Protocol {
        Protocol { warmup: self.warmup, samples: self.samples.max(1) }
    }
}

/// Runs the benchmark; every GPU result is checked against the CPU bounds of the same pool
/// (an error on the first mismatch).
pub fn bench_cli(gpu: &Gpu, args: &BenchArgs) -> Result<Vec<Record>> {
    let configs = args.configs();
    let progress = crate::harness::Progress::new(configs.len() as u64, "flowshop");
    let mut records = Vec::new();
    for config in &configs {
        records.extend(bench::bench_instance(gpu, config, &args.protocol(), Some(&progress))?);
        progress.step("");
    }
    progress.finish();
    Ok(records)
}

/// Table 1, Table 2 (paper values beside ours) and the bounds/s table as text.
pub fn bench_tables(records: &[Record]) -> Result<String> {
    let paper = PaperValues::of("chakroun")?;
    let refs: Vec<&Record> = records.iter().collect();
    let mut out = String::new();
    for table in [bench::table1(&refs, &paper), bench::table2(&refs, &paper), bench::throughput_table(&refs)] {
        if !table.rows.is_empty() {
            out += &bench::table_text(&table);
            out.push('\n');
        }
    }
    for (walk, heads) in [(false, "record heads"), (true, "prefix walk")] {
        let (ours, theirs) = bench::dfs_over_bfs(&refs, &paper, walk);
        if let Some(ours) = ours {
            let theirs = theirs.map_or("—".into(), |v| format!("{v:.3}"));
            out += &format!("DFS kernel time / BFS kernel time, basic kernel, {heads}, mean: ours {ours:.3}, paper {theirs}\n");
        }
    }
    let (ours, theirs) = bench::refactoring_gain(&refs, &paper);
    if let Some(ours) = ours {
        out += &format!("basic time / refactored time, mean: ours {ours:.3}, paper {}\n", theirs.map_or("—".into(), |v| format!("{v:.3}")));
    }
    Ok(out)
}
