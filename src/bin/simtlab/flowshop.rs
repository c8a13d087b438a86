//! `simtlab flowshop instance|bound|solve`: clap arguments, parsed into the library's options
//! (`simtlab::kernels::flowshop::commands`), which does the work.

use crate::gpu_args::GpuArgs;
use crate::value::{described, named};
use crate::INTERRUPTED;
use clap::{Args, Subcommand};
use simtlab::gpu::GpuOptions;
use simtlab::kernels::flowshop::commands::{self, Device, Devices, InstanceOptions, KernelVariant, NodeBoundOptions, Search, SolveOptions};
use simtlab::kernels::flowshop::gpu::ThreadMapping;
use simtlab::kernels::flowshop::{Branching, Exploration, LowerBound};
use simtlab::{Error, Result};
use std::sync::atomic::Ordering;

/// `--bound`: [`LowerBound`]'s names.
pub const BOUNDS: &[&str] = &["lb1", "lb2"];
/// `--exploration`: [`Exploration`]'s short names.
pub const EXPLORATIONS: &[&str] = &["dfs", "bfs"];
/// `--device`: [`Device`]'s names.
pub const DEVICES: &[&str] = &["gpu", "cpu"];
/// `--branching`: [`Branching`]'s names, each with its help line.
pub const BRANCHINGS: &[(&str, &str)] = &[
    ("forward", "Children append a job to the prefix"),
    ("bidirectional", "Bound both directions, branch in the one that keeps fewer children"),
];
/// `--kernel`: [`KernelVariant`]'s names, each with its help line.
pub const KERNELS: &[(&str, &str)] = &[("refactored", "Branch-refactored (max/select instead of data-dependent ifs)"), ("basic", "")];
/// `--mapping`: [`ThreadMapping`]'s names, each with its help line.
pub const MAPPINGS: &[(&str, &str)] =
    &[("per-child", "One thread per child node"), ("per-parent", "One thread per parent node, bounding its children in turn")];
/// `--search`: [`Search`]'s names, each with its help line.
pub const SEARCHES: &[(&str, &str)] = &[
    ("host", "The host selects, branches and prunes; the device bounds pools"),
    ("resident", "Selection, branching, bounding and pruning all on the GPU"),
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

/// `bench flowshop --heads`: [`commands::Heads`]' names.
pub const HEADS: &[&str] = &["record", "walk"];

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
    #[arg(long, value_parser = named::<LowerBound>(BOUNDS), default_value = "lb2")]
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
    #[arg(long, value_parser = named::<Device>(DEVICES), default_value = "gpu")]
    pub device: Device,
    /// Open nodes expanded per iteration (each gives up to `jobs` children to bound).
    #[arg(long, default_value_t = 1024)]
    pub pool: usize,
    #[arg(long, value_parser = named::<Exploration>(EXPLORATIONS), default_value = "dfs")]
    pub exploration: Exploration,
    #[arg(long, value_parser = described::<Branching>(BRANCHINGS), default_value = "bidirectional")]
    pub branching: Branching,
    /// GPU kernel variant (--device gpu only) [default: refactored].
    #[arg(long, value_parser = described::<KernelVariant>(KERNELS))]
    pub kernel: Option<KernelVariant>,
    /// GPU thread mapping (--device gpu only) [default: per-child].
    #[arg(long, value_parser = described::<ThreadMapping>(MAPPINGS))]
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
    #[arg(long, value_parser = described::<Search>(SEARCHES), default_value = "host")]
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
}

impl InstanceArgs {
    pub fn options(&self) -> InstanceOptions {
        InstanceOptions { instance: self.instance.clone(), json: self.json }
    }
}

impl BoundArgs {
    pub fn options(&self) -> NodeBoundOptions {
        NodeBoundOptions { instance: self.instance.clone(), prefix: self.prefix.clone(), suffix: self.suffix.clone(), json: self.json }
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
            json: self.json,
            search: self.search,
            checkpoint: self.checkpoint.clone(),
            checkpoint_every: self.checkpoint_every,
            resume: self.resume.clone(),
            devices: self.devices,
            progress_every: None,
        }
    }
}

impl FlowshopCommand {
    /// The library's command and the GPU options it opens an adapter with.
    pub fn command(&self) -> (commands::Command, GpuOptions) {
        match self {
            FlowshopCommand::Instance(a) => (commands::Command::Instance(a.options()), GpuOptions::default()),
            FlowshopCommand::Bound(a) => (commands::Command::Bound(a.options()), GpuOptions::default()),
            FlowshopCommand::Solve { args, gpu } => (commands::Command::Solve(args.options()), gpu.options()),
        }
    }
}

pub fn run(command: &FlowshopCommand) -> Result<()> {
    let (command, options) = command.command();
    print!("{}", commands::run(&command, &options, &INTERRUPTED)?);
    if INTERRUPTED.load(Ordering::Relaxed) {
        let checkpoint = match &command {
            commands::Command::Solve(SolveOptions { checkpoint: Some(path), .. }) => {
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
    fn parse(argv: &[&str]) -> (commands::Command, GpuOptions) {
        let argv = std::iter::once("flowshop").chain(argv.iter().copied());
        Flowshop::try_parse_from(argv).unwrap_or_else(|e| panic!("{e}")).command.command()
    }

    fn run_parsed(argv: &[&str]) -> Result<String> {
        let (command, options) = parse(argv);
        commands::run(&command, &options, &AtomicBool::new(false))
    }

    #[test]
    fn arguments_parse_into_the_library_options() {
        let (command, _) = parse(&["solve", "ta001"]);
        assert_eq!(command, commands::Command::Solve(SolveOptions::new("ta001")), "defaults as SolveOptions::new");
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
        let (command, _) = parse(&argv);
        let expected = SolveOptions {
            bound: LowerBound::Lb1,
            exploration: Exploration::BreadthFirst,
            branching: Branching::Forward,
            kernel: Some(KernelVariant::Basic),
            mapping: Some(ThreadMapping::PerParent),
            pool: 7,
            ub: Some(1300),
            sequential: true,
            json: true,
            ..SolveOptions::new("ta002")
        };
        assert_eq!(command, commands::Command::Solve(expected));
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
        assert_eq!(parse(&argv).0, commands::Command::Solve(expected));
        for (devices, expected) in [("all", Devices::All), ("1", Devices::One)] {
            let (command, _) = parse(&["solve", "ta003", "--devices", devices]);
            assert_eq!(command, commands::Command::Solve(SolveOptions { devices: expected, ..SolveOptions::new("ta003") }));
        }
        assert!(Flowshop::try_parse_from(["flowshop", "solve", "ta001", "--devices", "0"]).is_err());
        let (command, _) = parse(&["bound", "ta001", "--prefix", "3,0,7", "--suffix", "1"]);
        let expected = NodeBoundOptions { instance: "ta001".into(), prefix: vec![3, 0, 7], suffix: vec![1], json: false };
        assert_eq!(command, commands::Command::Bound(expected));
        assert!(Flowshop::try_parse_from(["flowshop", "solve", "ta001", "--exploration", "depthfirst"]).is_err());
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
