//! `simtlab flowshop instance|bound|solve` and `simtlab bench flowshop`: clap arguments and
//! the functions behind them (they return text or records, so tests call them directly).
//!
//! Jobs are numbered from 0 everywhere (prefixes, suffixes, permutations).

use std::path::PathBuf;
use std::time::Duration;

use super::bench::{self, BenchConfig};
use super::gpu::{GpuBoundOptions, GpuBounder, ThreadMapping};
use super::{
    Branching,
    cpu, read_instance, solve_with, taillard_by_name, BoundData, CpuBounder, Exploration, Instance, LowerBound, Node,
    Progress, SearchOptions, IteratedGreedy, Solution,
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
    /// Initial upper bound (the start heuristic's makespan is used when it is smaller or
    /// absent).
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
    /// GPU kernel variant.
    #[arg(long, value_enum, default_value = "refactored")]
    pub kernel: KernelArg,
    /// GPU thread mapping.
    #[arg(long, value_enum, default_value = "per-child")]
    pub mapping: MappingArg,
    /// CPU bounding threads (0 = all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
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
            kernel: KernelArg::Refactored,
            mapping: MappingArg::PerChild,
            threads: 0,
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
    /// Taillard's best known upper bound for the instance (0 when unknown).
    best_known: u32,
    #[serde(flatten)]
    solution: &'a Solution,
}

/// Runs the search of `args`; `gpu` is required for `--device gpu`.
pub fn solve_instance(args: &SolveArgs, gpu: Option<&Gpu>, progress: Option<&mut dyn FnMut(&Progress)>) -> Result<(Instance, Solution)> {
    let instance = load_instance(&args.instance)?;
    let data = BoundData::new(&instance);
    let options = SearchOptions {
        bound: args.bound.into(),
        exploration: args.exploration.into(),
        branching: args.branching.into(),
        pool_size: args.pool,
        upper_bound: args.ub,
        heuristic: IteratedGreedy { iterations: args.heuristic_rounds, ..IteratedGreedy::default() },
        node_limit: args.node_limit,
        time_limit: match args.time_limit {
            Some(s) if !(s >= 0.0 && s.is_finite()) => {
                return Err(Error::invalid("--time-limit", format!("{s} (use seconds ≥ 0)")));
            }
            Some(s) => Some(Duration::from_secs_f64(s)),
            None => None,
        },
        threads: args.threads,
        progress_interval: Duration::from_secs(1),
        overlap: !args.sequential,
    };
    let solution = match args.device {
        DeviceArg::Cpu => {
            let mut bounder = CpuBounder::new(&data, options.bound, options.threads);
            solve_with(&data, &options, &mut bounder, progress)?
        }
        DeviceArg::Gpu => {
            let gpu = gpu.ok_or_else(|| Error::invalid("--device gpu", "no GPU was opened"))?;
            let gpu_options = GpuBoundOptions {
                bound: options.bound,
                branchless: args.kernel == KernelArg::Refactored,
                probe: false,
                mapping: args.mapping.into(),
                walk_prefix: false,
            };
            let mut bounder = GpuBounder::new(gpu, &data, gpu_options)?;
            solve_with(&data, &options, &mut bounder, progress)?
        }
    };
    Ok((instance, solution))
}

/// `flowshop solve`: JSON fields `makespan`, `permutation` (0-based), `nodes`, `leaves`,
/// `optimal` (the search finished), `seconds`, plus the instance and settings.
pub fn solve(args: &SolveArgs, gpu: Option<&Gpu>) -> Result<String> {
    let mut report = |p: &Progress| {
        eprintln!(
            "[{:.0} s] best {}, {} nodes, {} leaves, {} open",
            p.seconds, p.best, p.nodes, p.leaves, p.open
        );
    };
    let (instance, solution) = solve_instance(args, gpu, Some(&mut report))?;
    let device = match args.device {
        DeviceArg::Cpu => "cpu".to_string(),
        DeviceArg::Gpu => gpu.map_or("gpu".into(), |g| g.adapter_name()),
    };
    if args.json {
        return to_json(&SolveReport {
            instance: &instance.name,
            jobs: instance.jobs,
            machines: instance.machines,
            bound: args.bound.into(),
            branching: args.branching.into(),
            overlap: !args.sequential,
            device: &device,
            best_known: instance.upper_bound,
            solution: &solution,
        });
    }
    Ok(format!(
        "{} ({}x{}), {:?} on {device}: makespan {} ({}), best known {}, start {} ({:.2} s); {} nodes, {} leaves, {:.3} s\npermutation (0-based): {}\n",
        instance.name,
        instance.jobs,
        instance.machines,
        LowerBound::from(args.bound),
        solution.makespan,
        if solution.optimal { "optimal" } else { "search stopped early, not proven optimal" },
        instance.upper_bound,
        solution.start_makespan,
        solution.heuristic_seconds,
        solution.nodes,
        solution.leaves,
        solution.seconds,
        solution.permutation.iter().map(|j| j.to_string()).collect::<Vec<_>>().join(" ")
    ))
}

/// Runs a `flowshop` subcommand, opening a GPU only for `solve --device gpu`.
pub fn run(args: &FlowshopArgs, gpu_options: &GpuOptions) -> Result<String> {
    match &args.command {
        FlowshopCommand::Instance(a) => instance(a),
        FlowshopCommand::Bound(a) => bound(a),
        FlowshopCommand::Solve(a) => {
            let gpu = match a.device {
                DeviceArg::Gpu => {
                    let gpu = Gpu::new(gpu_options)?;
                    eprintln!("adapter: {}", gpu.adapter_name());
                    Some(gpu)
                }
                DeviceArg::Cpu => None,
            };
            solve(a, gpu.as_ref())
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
