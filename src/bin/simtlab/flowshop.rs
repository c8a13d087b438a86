//! `simtlab flowshop instance|bound|solve`: clap arguments, parsed into the library's options
//! (`simtlab::kernels::flowshop::commands`), which does the work; its typed results are
//! printed here, as text or JSON.

use crate::gpu_args::GpuArgs;
use crate::output;
use crate::value::choice;
use crate::INTERRUPTED;
use clap::{Args, Subcommand};
use simtlab::gpu::GpuOptions;
use simtlab::kernels::flowshop::commands::{
    self, Device, Devices, KernelVariant, NodeBoundOptions, NodeBounds, Search, SolveOptions, SolveReport,
};
use simtlab::kernels::flowshop::gpu::ThreadMapping;
use simtlab::kernels::flowshop::{taillard, Branching, DeviceUse, Exploration, LowerBound, Progress};
use simtlab::{Error, Gpu, Result};
use std::sync::atomic::{AtomicBool, Ordering};

/// `--exploration`: [`Exploration`]'s help lines.
pub const EXPLORATIONS: &[(Exploration, &str)] = &[
    (Exploration::DepthFirst, "Depth first: pools of the deepest nodes (a stack)"),
    (Exploration::BreadthFirst, "Breadth first: pools of nodes of one or two consecutive levels (a queue)"),
];
/// `--branching`: [`Branching`]'s help lines.
pub const BRANCHINGS: &[(Branching, &str)] = &[
    (Branching::Forward, "Children append a job to the prefix"),
    (Branching::Bidirectional, "Bound both directions, branch in the one that keeps fewer children"),
];
/// `--kernel`: [`KernelVariant`]'s help lines.
pub const KERNELS: &[(KernelVariant, &str)] =
    &[(KernelVariant::Refactored, "Branch-refactored (max/select instead of data-dependent ifs)")];
/// `--mapping`: [`ThreadMapping`]'s help lines.
pub const MAPPINGS: &[(ThreadMapping, &str)] = &[
    (ThreadMapping::PerChild, "One thread per child node"),
    (ThreadMapping::PerParent, "One thread per parent node, bounding its children in turn"),
];
/// `--search`: [`Search`]'s help lines.
pub const SEARCHES: &[(Search, &str)] = &[
    (Search::Host, "The host selects, branches and prunes; the device bounds pools"),
    (Search::Resident, "Selection, branching, bounding and pruning all on the GPU"),
];

/// `--devices all|N`.
fn parse_devices(text: &str) -> std::result::Result<Devices, String> {
    match text {
        "all" => Ok(Devices::All),
        _ => match text.parse::<usize>() {
            Ok(1) => Ok(Devices::One),
            Ok(count) if count > 1 => Ok(Devices::Count(count)),
            _ => Err(format!("'{text}': use all or a number of devices of at least 1")),
        },
    }
}

#[derive(Subcommand)]
pub enum FlowshopCommand {
    /// Print a Taillard instance (generated from its seed) or an instance file.
    Instance(InstanceArgs),
    /// LB1 and LB2 of one node (prefix and suffix fixed, 0-based job numbers).
    Bound(BoundArgs),
    /// Branch-and-bound to optimality (or to the limits), bounding on the GPU or the CPU.
    Solve {
        #[command(flatten)]
        args: SolveArgs,
        #[command(flatten)]
        gpu: GpuArgs,
    },
}

#[derive(Args, Debug, Clone)]
pub struct InstanceArgs {
    /// taNNN (Taillard's 120 instances) or a file in Taillard's format.
    pub instance: String,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
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

#[derive(Args, Debug, Clone)]
pub struct SolveArgs {
    /// taNNN or an instance file.
    pub instance: String,
    #[arg(long, value_parser = choice::<LowerBound>(&[]), default_value = "lb2")]
    pub bound: LowerBound,
    /// Look only for schedules with a makespan of at most this value (the start
    /// heuristic's schedule counts when it is no worse). If the search finishes without one,
    /// that proves only that no schedule has a makespan below it.
    #[arg(long)]
    pub ub: Option<u32>,
    /// Iterated-greedy rounds after NEH for the start schedule (0: NEH alone). Default:
    /// 10⁸ / (jobs²·machines) between 20 and 10000, about a second on one core.
    #[arg(long)]
    pub heuristic_rounds: Option<u32>,
    #[arg(long, value_parser = choice::<Device>(&[]), default_value = "gpu")]
    pub device: Device,
    /// Open nodes expanded per iteration (each gives up to `jobs` children to bound).
    #[arg(long, default_value_t = 1024)]
    pub pool: usize,
    #[arg(long, value_parser = choice::<Exploration>(EXPLORATIONS), default_value = "dfs")]
    pub exploration: Exploration,
    #[arg(long, value_parser = choice::<Branching>(BRANCHINGS), default_value = "bidirectional")]
    pub branching: Branching,
    /// GPU kernel variant (--device gpu only) [default: refactored].
    #[arg(long, value_parser = choice::<KernelVariant>(KERNELS))]
    pub kernel: Option<KernelVariant>,
    /// GPU thread mapping (--device gpu only) [default: per-child].
    #[arg(long, value_parser = choice::<ThreadMapping>(MAPPINGS))]
    pub mapping: Option<ThreadMapping>,
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
    /// Where the search runs: the host with device bounding, or resident on the GPU.
    #[arg(long, value_parser = choice::<Search>(SEARCHES), default_value = "host")]
    pub search: Search,
    /// (--search resident) Write the open frontier and the incumbent to FILE when the search
    /// stops early (limits, Ctrl-C) and every --checkpoint-every seconds.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<std::path::PathBuf>,
    /// (--search resident) Seconds between two checkpoints.
    #[arg(long, value_name = "SECONDS")]
    pub checkpoint_every: Option<f64>,
    /// (--search resident) Continue the search saved in FILE (same instance, bound,
    /// branching and --ub).
    #[arg(long, value_name = "FILE")]
    pub resume: Option<std::path::PathBuf>,
    /// (--search resident) Spread one search over all adapters of the backend, or the first N
    /// (opened again in turn where there are fewer).
    #[arg(long, value_parser = parse_devices, default_value = "1")]
    pub devices: Devices,
    /// (--search resident) MiB the open nodes may take on each device [default: 2048, or less
    /// where the adapter's buffers are smaller]. A search never needs more: once the budget is
    /// full, rounds take fewer nodes.
    #[arg(long, value_name = "MIB")]
    pub memory: Option<u64>,
    /// (--search resident under mpirun) Seconds after which a rank that sends nothing ends the
    /// run with an error naming it [default: 60].
    #[arg(long, value_name = "SECONDS")]
    pub silence: Option<f64>,
}

impl BoundArgs {
    pub fn options(&self) -> NodeBoundOptions {
        NodeBoundOptions { instance: self.instance.clone(), prefix: self.prefix.clone(), suffix: self.suffix.clone() }
    }
}

impl SolveArgs {
    pub fn options(&self) -> SolveOptions {
        SolveOptions {
            instance: self.instance.clone(),
            bound: self.bound,
            ub: self.ub,
            heuristic_rounds: self.heuristic_rounds,
            device: self.device,
            pool: self.pool,
            exploration: self.exploration,
            branching: self.branching,
            kernel: self.kernel,
            mapping: self.mapping,
            threads: self.threads,
            sequential: self.sequential,
            time_limit: self.time_limit,
            node_limit: self.node_limit,
            search: self.search,
            checkpoint: self.checkpoint.clone(),
            checkpoint_every: self.checkpoint_every,
            resume: self.resume.clone(),
            devices: self.devices,
            progress_every: None,
            memory_mib: self.memory,
            silence: self.silence,
        }
    }
}

/// A `flowshop` subcommand parsed into the library's options.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// `flowshop instance`: taNNN or an instance file.
    Instance(String),
    /// `flowshop bound`.
    Bound(NodeBoundOptions),
    /// `flowshop solve`.
    Solve(SolveOptions),
}

/// What to run, how to print it and which adapter to open.
pub struct Request {
    pub command: Command,
    /// JSON instead of text.
    pub json: bool,
    pub gpu: GpuOptions,
}

impl FlowshopCommand {
    /// The library's command and the GPU options it opens an adapter with.
    pub fn request(&self) -> Request {
        let (command, json, gpu) = match self {
            FlowshopCommand::Instance(a) => (Command::Instance(a.instance.clone()), a.json, GpuOptions::default()),
            FlowshopCommand::Bound(a) => (Command::Bound(a.options()), a.json, GpuOptions::default()),
            FlowshopCommand::Solve { args, gpu } => (Command::Solve(args.options()), args.json, gpu.options()),
        };
        Request { command, json, gpu }
    }
}

pub fn run(command: &FlowshopCommand) -> Result<()> {
    let request = command.request();
    let (text, checkpoint_failure) = output(&request, &INTERRUPTED)?;
    print!("{text}");
    // the result is printed first: a checkpoint that could not be written loses no finished proof
    if let (Some(failure), Command::Solve(SolveOptions { checkpoint: Some(path), .. })) = (checkpoint_failure, &request.command) {
        return Err(Error::File {
            path: path.clone(),
            message: format!("the search's final checkpoint could not be written ({failure}); its result is printed above"),
        });
    }
    if INTERRUPTED.load(Ordering::Relaxed) {
        let checkpoint = match &request.command {
            Command::Solve(SolveOptions { checkpoint: Some(path), .. }) => {
                format!("; the open nodes are in {}, go on with --resume {}", path.display(), path.display())
            }
            _ => String::new(),
        };
        return Err(Error::Cancelled {
            what: "the search".into(),
            kept: format!("the best schedule found so far is printed above (not proven optimal){checkpoint}"),
        });
    }
    Ok(())
}

/// Runs the request and returns what to print and, for `solve`, why its final checkpoint could
/// not be written; a GPU is opened only for `solve --device gpu`. `solve` stops early and
/// reports what it found so far once `interrupted` is set.
fn output(request: &Request, interrupted: &AtomicBool) -> Result<(String, Option<String>)> {
    let text = match &request.command {
        Command::Solve(args) => return solve(args, request.json, &request.gpu, interrupted),
        Command::Instance(spec) => {
            let instance = commands::load_instance(spec)?;
            if request.json {
                output::json_text(&instance)?
            } else {
                taillard::format_instance(&instance)
            }
        }
        Command::Bound(options) => {
            let bounds = commands::bound(options)?;
            if request.json {
                output::json_text(&bounds)?
            } else {
                bounds_text(&bounds)
            }
        }
    };
    Ok((text, None))
}

fn bounds_text(b: &NodeBounds) -> String {
    format!("{}: prefix {:?}, suffix {:?}, {} unscheduled: LB1 {}, LB2 {}\n", b.instance, b.prefix, b.suffix, b.unscheduled, b.lb1, b.lb2)
}

/// Said once when a search opens an adapter again (`--devices` beyond the adapters there are).
const SHARED_GPU_NOTE: &str = "note: an adapter is opened again: devices that share one take turns on it (two on one H200 searched at 0.86 of the speed of one), so this checks a search over several devices but does not speed it up; for that, use at most as many devices as there are adapters";

/// `flowshop solve`: opens the adapters it needs (naming them on standard error), reports
/// progress there, and returns the result as text or JSON.
fn solve(args: &SolveOptions, json: bool, gpu_options: &GpuOptions, interrupted: &AtomicBool) -> Result<(String, Option<String>)> {
    #[cfg(feature = "mpi")]
    if commands::launched_by_mpi() {
        return solve_ranks(args, json, gpu_options, interrupted);
    }
    // adapter and heartbeat lines go to whoever listens to progress (standard error)
    let lines = simtlab::harness::Progress::new(0, "flowshop solve");
    let mut noted = false;
    let mut opened = |gpu: &Gpu, again: bool| {
        lines.println(format!("adapter: {}", gpu.adapter_name()));
        if again && !std::mem::replace(&mut noted, true) {
            lines.println(SHARED_GPU_NOTE);
        }
    };
    // the share of the time spent bounding: on the GPU, or on the CPU threads that bound there
    let bounder = if args.device == Device::Cpu { "bounding" } else { "GPU" };
    let mut report = |p: &Progress| lines.println(progress_line(p, json, bounder));
    let solved = commands::solve_opening(args, gpu_options, &mut opened, Some(interrupted), Some(&mut report));
    lines.finish();
    let solved = solved?;
    let text = if json { output::json_text(&solved)? } else { solve_text(&solved, args.ub, "device") };
    Ok((text, solved.solution.checkpoint_failure.clone()))
}

/// `flowshop solve` under mpirun (feature `mpi`): one search over every rank, one GPU each;
/// rank 0 reports progress and prints the result. A rank that fails mid-run ends every rank
/// (MPI_Abort) after printing its error, so none waits for it.
#[cfg(feature = "mpi")]
fn solve_ranks(args: &SolveOptions, json: bool, gpu_options: &GpuOptions, interrupted: &AtomicBool) -> Result<(String, Option<String>)> {
    use mpi::topology::Communicator;
    let universe = mpi::initialize().ok_or_else(|| Error::invalid("mpi", "MPI could not be initialized; run under mpirun or srun"))?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let lines = simtlab::harness::Progress::new(0, "flowshop solve");
    let mut report = |p: &Progress| lines.println(progress_line(p, json, "GPU"));
    let progress: Option<&mut dyn FnMut(&Progress)> = if rank == 0 { Some(&mut report) } else { None };
    let solved = commands::solve_on_ranks(args, &world, gpu_options, Some(interrupted), progress);
    lines.finish();
    match solved {
        Ok(solved) if rank == 0 => {
            let text = if json { output::json_text(&solved)? } else { solve_text(&solved, args.ub, "rank") };
            Ok((text, solved.solution.checkpoint_failure.clone()))
        }
        Ok(_) => Ok((String::new(), None)),
        Err(e) if size > 1 => {
            eprintln!("error: rank {rank} of {size}: {}", crate::flags::name_flags(e));
            world.abort(1)
        }
        Err(e) => Err(e),
    }
}

/// One progress line: text, or with `json` a JSON object (the [`Progress`] fields and
/// `nodes_per_second`, `gpu_share`).
fn progress_line(p: &Progress, json: bool, bounder: &str) -> String {
    let rate = p.nodes as f64 / p.seconds.max(1e-9);
    let share = p.gpu_seconds / p.seconds.max(1e-9);
    if json {
        let mut value = serde_json::to_value(p).unwrap_or_default();
        value["nodes_per_second"] = rate.into();
        value["gpu_share"] = share.into();
        return value.to_string();
    }
    let best = p.best.map_or("none yet".into(), |b| b.to_string());
    format!(
        "[{:.0} s] best {best}, bound {}, {} nodes ({:.3} M nodes/s), {} leaves, {} open, {bounder} {:.0} % of the time",
        p.seconds,
        p.lower_bound,
        p.nodes,
        rate * 1e-6,
        p.leaves,
        p.open,
        100.0 * share
    )
}

/// The result of `flowshop solve` in words: what was found and proven (`ub`: `--ub`; None when
/// not given, as when a resumed search takes its checkpoint's), how each `unit` (device, or
/// MPI rank) spent the search when there were several, then the schedule.
fn solve_text(report: &SolveReport, ub: Option<u32>, unit: &str) -> String {
    let s = &report.solution;
    let ub_text = ub.map_or("the upper bound".into(), |ub| format!("--ub {ub}"));
    let result = match (s.makespan, s.stopped, s.proven_lower_bound) {
        (Some(makespan), None, _) => format!("makespan {makespan} (optimal)"),
        (Some(makespan), Some(stop), _) => format!("makespan {makespan} (search stopped: {stop}; not proven optimal)"),
        (None, None, proved) => {
            let proved = proved.map_or(String::new(), |p| format!(" (proven: the optimum is at least {p})"));
            format!("no schedule better than {ub_text} exists{proved}, and the search met none equal to it")
        }
        (None, Some(stop), _) => format!("no schedule of makespan at most {ub_text} found (search stopped: {stop})"),
    };
    let schedule = if s.makespan.is_some() {
        format!("permutation (0-based): {}", commands::job_list(&s.permutation))
    } else {
        format!("start schedule (0-based, makespan {}): {}", s.start_makespan, commands::job_list(&s.start_permutation))
    };
    // over several devices, how evenly the work spread
    let devices: String =
        if s.devices.len() > 1 { s.devices.iter().enumerate().map(|(i, d)| device_line(unit, i, d)).collect() } else { String::new() };
    format!(
        "{} ({}x{}), {} on {}: {result}; best known: {}; start {} ({:.2} s); {} nodes, {} leaves, {:.3} s\n{devices}{schedule}\n",
        report.instance,
        report.jobs,
        report.machines,
        report.bound.entry_point().to_uppercase(),
        report.device,
        report.best_known.map_or("unknown".into(), |v| v.to_string()),
        s.start_makespan,
        s.heuristic_seconds,
        s.nodes,
        s.leaves,
        s.seconds,
    )
}

/// How device (or rank) `i` spent a resident search over several, a line.
fn device_line(unit: &str, i: usize, d: &DeviceUse) -> String {
    format!(
        "{unit} {i}: {} batches, {:.2} s busy, {:.2} s waiting, {:.2} s moving nodes; gave {} nodes in {} gifts, loaded {} in {}\n",
        d.batches, d.busy_seconds, d.waiting_seconds, d.moving_seconds, d.nodes_given, d.gifts_given, d.nodes_loaded, d.gifts_loaded
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::sync::atomic::AtomicBool;

    #[derive(Parser)]
    struct Flowshop {
        #[command(subcommand)]
        command: FlowshopCommand,
    }

    /// Parses `flowshop` arguments as the binary does.
    fn parse(argv: &[&str]) -> Request {
        let argv = std::iter::once("flowshop").chain(argv.iter().copied());
        Flowshop::try_parse_from(argv).unwrap_or_else(|e| panic!("{e}")).command.request()
    }

    /// Runs `argv`; an error names the flags of `flowshop` `argv[0]`, as the binary prints it.
    fn run_parsed(argv: &[&str]) -> Result<String> {
        let words = ["flowshop".to_string(), argv[0].to_string()];
        output(&parse(argv), &AtomicBool::new(false))
            .map(|(text, _)| text)
            .map_err(|e| crate::flags::name_flags_in(e, &<crate::Cli as clap::CommandFactory>::command(), &words))
    }

    #[test]
    fn arguments_parse_into_the_library_options() {
        let request = parse(&["solve", "ta001"]);
        assert_eq!(request.command, Command::Solve(SolveOptions::new("ta001")), "defaults as SolveOptions::new");
        assert!(!request.json);
        let argv = [
            "solve",
            "ta002",
            "--bound",
            "lb1",
            "--exploration",
            "bfs",
            "--branching",
            "forward",
            "--kernel",
            "basic",
            "--mapping",
            "per-parent",
            "--pool",
            "7",
            "--ub",
            "1300",
            "--sequential",
            "--json",
        ];
        let request = parse(&argv);
        assert!(request.json);
        let expected = SolveOptions {
            bound: LowerBound::Lb1,
            exploration: Exploration::BreadthFirst,
            branching: Branching::Forward,
            kernel: Some(KernelVariant::Basic),
            mapping: Some(ThreadMapping::PerParent),
            pool: 7,
            ub: Some(1300),
            sequential: true,
            ..SolveOptions::new("ta002")
        };
        assert_eq!(request.command, Command::Solve(expected));
        let argv = [
            "solve",
            "ta003",
            "--search",
            "resident",
            "--checkpoint",
            "a.ck",
            "--checkpoint-every",
            "30",
            "--resume",
            "b.ck",
            "--devices",
            "2",
        ];
        let expected = SolveOptions {
            search: Search::Resident,
            checkpoint: Some("a.ck".into()),
            checkpoint_every: Some(30.0),
            resume: Some("b.ck".into()),
            devices: Devices::Count(2),
            ..SolveOptions::new("ta003")
        };
        assert_eq!(parse(&argv).command, Command::Solve(expected));
        for (devices, expected) in [("all", Devices::All), ("1", Devices::One)] {
            let request = parse(&["solve", "ta003", "--devices", devices]);
            assert_eq!(request.command, Command::Solve(SolveOptions { devices: expected, ..SolveOptions::new("ta003") }));
        }
        assert!(Flowshop::try_parse_from(["flowshop", "solve", "ta001", "--devices", "0"]).is_err());
        let request = parse(&["bound", "ta001", "--prefix", "3,0,7", "--suffix", "1"]);
        let expected = NodeBoundOptions { instance: "ta001".into(), prefix: vec![3, 0, 7], suffix: vec![1] };
        assert_eq!((request.command, request.json), (Command::Bound(expected), false));
        assert!(Flowshop::try_parse_from(["flowshop", "solve", "ta001", "--exploration", "depthfirst"]).is_err());
    }

    #[test]
    fn solve_says_in_words_what_it_found_and_proved() {
        // Optimum of ta001: 1278; NEH (--heuristic-rounds 0) gives more than these bounds.
        for ub in ["0", "1", "1277", "1278"] {
            let text = run_parsed(&["solve", "ta001", "--device", "cpu", "--heuristic-rounds", "0", "--ub", ub]).unwrap();
            assert!(text.contains(&format!("no schedule better than --ub {ub} exists")), "{text}");
            assert!(!text.contains("optimal)") && text.contains("start schedule"), "{text}");
        }
        // Stopped before anything within the bound was found.
        let argv = ["solve", "ta001", "--device", "cpu", "--heuristic-rounds", "0", "--ub", "1280", "--time-limit", "0"];
        let text = run_parsed(&argv).unwrap();
        assert!(text.contains("no schedule of makespan at most --ub 1280 found (search stopped: time limit reached)"), "{text}");
        // Interrupted: what was found so far.
        let (text, _) = output(&parse(&["solve", "ta021", "--device", "cpu", "--heuristic-rounds", "0"]), &AtomicBool::new(true)).unwrap();
        assert!(text.contains("(search stopped: interrupted; not proven optimal)"), "{text}");
        let ta001 = run_parsed(&["solve", "ta001", "--device", "cpu"]).unwrap();
        assert!(ta001.contains("best known: 1278") && ta001.contains("(optimal)"), "{ta001}");
    }

    /// Over several devices the text says how each spent the search, and the nodes given are
    /// the nodes loaded (a device may take back nodes it left for the other).
    #[test]
    fn a_search_over_devices_says_how_each_spent_it() {
        let text = run_parsed(&["solve", "ta014", "--search", "resident", "--pool", "64", "--ub", "1377", "--devices", "2"]).unwrap();
        assert!(text.contains("makespan 1377 (optimal)"), "{text}");
        let numbers = |unit: &str| -> Vec<u64> {
            let line = text.lines().find(|l| l.starts_with(unit)).unwrap_or_else(|| panic!("no '{unit}' line: {text}"));
            line.split(|c: char| !c.is_ascii_digit()).filter(|w| !w.is_empty()).filter_map(|w| w.parse().ok()).collect()
        };
        // "device I: B batches, … s busy, … ; gave N nodes in G gifts, loaded N in G"
        let (first, second) = (numbers("device 0:"), numbers("device 1:"));
        let gave = |d: &[u64]| d[d.len() - 4];
        let loaded = |d: &[u64]| d[d.len() - 2];
        assert_eq!(gave(&first) + gave(&second), loaded(&first) + loaded(&second), "{text}");
        assert!(loaded(&second) > 0 && second[1] > 0, "device 1 did no work: {text}");
    }

    #[test]
    fn an_instance_without_a_best_known_value_says_unknown() {
        let dir = std::env::temp_dir().join(format!("simtlab-flowshop-text-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A file instance with no best known value (header UB 0).
        let single = dir.join("r4x2.txt");
        std::fs::write(&single, "4 2 7 0 0\n3 1 4 1\n5 9 2 6\n").unwrap();
        let text = run_parsed(&["solve", single.to_str().unwrap(), "--device", "cpu"]).unwrap();
        assert!(text.contains("best known: unknown") && !text.contains("best known 0"), "{text}");
        assert!(text.contains("(optimal)"), "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn instance_and_bound_print_text_or_json() {
        let text = run_parsed(&["instance", "ta001"]).unwrap();
        assert!(text.contains("873654221"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&run_parsed(&["instance", "ta001", "--json"]).unwrap()).unwrap();
        assert_eq!((json["name"].as_str(), json["seed"].as_u64()), (Some("ta001"), Some(873654221)));
        let text = run_parsed(&["bound", "ta001"]).unwrap();
        assert!(text.starts_with("ta001: prefix [], suffix [], 20 unscheduled: LB1 1232, LB2 "), "{text}");
        let json: serde_json::Value = serde_json::from_str(&run_parsed(&["bound", "ta001", "--json"]).unwrap()).unwrap();
        assert_eq!((json["lb1"].as_u64(), json["unscheduled"].as_u64()), (Some(1232), Some(20)));
    }

    #[test]
    fn options_the_device_would_ignore_are_rejected() {
        for (argv, option) in [
            (&["solve", "ta001", "--threads", "2"][..], "--threads"),
            (&["solve", "ta001", "--device", "gpu", "--threads", "0"][..], "--threads"),
            (&["solve", "ta001", "--device", "cpu", "--kernel", "basic"][..], "--kernel"),
            (&["solve", "ta001", "--device", "cpu", "--mapping", "per-parent"][..], "--mapping"),
            (&["solve", "ta001", "--device", "cpu", "--adapter", "llvmpipe"][..], "--adapter"),
        ] {
            let err = run_parsed(argv).unwrap_err().to_string();
            assert!(err.contains(option) && err.contains("applies only to --device"), "{argv:?}: {err}");
        }
        // Where they apply they are taken.
        assert!(run_parsed(&["solve", "ta001", "--device", "cpu", "--threads", "2", "--node-limit", "1"]).is_ok());
        // Time limits Duration cannot hold are errors, not panics.
        for limit in ["-1", "NaN", "inf", "1e300"] {
            let err = run_parsed(&["solve", "ta001", "--device", "cpu", &format!("--time-limit={limit}")]).unwrap_err().to_string();
            assert!(err.contains("--time-limit"), "{limit}: {err}");
        }
    }
}
