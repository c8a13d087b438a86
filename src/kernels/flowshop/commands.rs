//! `simtlab flowshop instance|bound|solve` and the options of `simtlab bench flowshop`: the
//! options of each command and the functions behind them (`bench flowshop` runs the registry's
//! `flowshop-bound-pools`). They return typed results ([`NodeBounds`], [`SolveReport`]) that
//! serialise to the commands' JSON; the command line parses into these options and prints the
//! results in `src/bin/`.
//!
//! Jobs are numbered from 0 everywhere (prefixes, suffixes, permutations).

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::checkpoint::Checkpoint;
use super::gpu::ThreadMapping;
use super::resident::ResidentOptions;
use super::{
    cpu, read_instance, taillard_by_name, BoundData, Branching, Exploration, Instance, IteratedGreedy, LowerBound, Node, SearchOptions,
    Solution,
};
use crate::error::{Error, Result};
use crate::harness::named;
#[cfg(not(target_arch = "wasm32"))]
use {
    super::gpu::{GpuBoundOptions, GpuBounder},
    super::resident::solve_resident,
    super::{solve_with, CpuBounder, Progress},
    crate::gpu::{Gpu, GpuOptions},
};

/// `flowshop bound`: the bounds of one node.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NodeBoundOptions {
    /// taNNN or an instance file.
    pub instance: String,
    /// Jobs fixed at the start, in order (0-based).
    pub prefix: Vec<usize>,
    /// Jobs fixed at the end, in order (0-based).
    pub suffix: Vec<usize>,
}

/// Where `flowshop solve` bounds its pools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Device {
    /// The WGSL kernels ([`GpuBounder`]).
    #[default]
    Gpu,
    /// CPU threads ([`CpuBounder`]).
    Cpu,
}

named!(Device { Gpu => "gpu", Cpu => "cpu" });

/// Where `flowshop solve` runs the search itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Search {
    /// The host selects, branches and prunes; the device bounds pools ([`solve_with`]).
    #[default]
    Host,
    /// Everything on the GPU ([`super::resident::solve_resident`]).
    Resident,
}

named!(Search { Host => "host", Resident => "resident" });

/// Which adapters a resident search spreads over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Devices {
    /// The one adapter chosen by the [`GpuOptions`]' `adapter` and `backend`.
    #[default]
    One,
    /// The first N adapters of the backend, opened again in turn where there are fewer
    /// (several logical devices on one GPU).
    Count(usize),
    /// Every adapter of the chosen backend that can run the search.
    All,
}

/// GPU kernel variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KernelVariant {
    /// Branch-refactored (max/select instead of data-dependent ifs).
    #[default]
    Refactored,
    /// Data-dependent ifs, as written in the paper.
    Basic,
}

named!(KernelVariant { Refactored => "refactored", Basic => "basic" });

/// Where a GPU kernel gets a parent's heads ([`GpuBoundOptions::walk_prefix`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Heads {
    /// Read from the parent record.
    #[default]
    Record,
    /// Recomputed along the prefix (a loop as long as the node is deep).
    Walk,
}

named!(Heads { Record => "record", Walk => "walk" });

/// `flowshop solve`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SolveOptions {
    /// taNNN or an instance file.
    pub instance: String,
    /// Lower bound that prunes the tree.
    pub bound: LowerBound,
    /// Look only for schedules with a makespan of at most this value (the start
    /// heuristic's schedule counts when it is no worse). If the search finishes without one,
    /// that proves only that no schedule has a makespan below it.
    pub ub: Option<u32>,
    /// Iterated-greedy rounds after NEH for the start schedule (0: NEH alone; None: 10⁸ /
    /// (jobs²·machines) between 20 and 10000, about a second on one core).
    pub heuristic_rounds: Option<u32>,
    /// Where the pools are bounded.
    pub device: Device,
    /// Open nodes expanded per iteration (each gives up to `jobs` children to bound).
    pub pool: usize,
    /// Order in which open nodes are expanded.
    pub exploration: Exploration,
    /// How a node's children are formed.
    pub branching: Branching,
    /// GPU kernel variant (`Device::Gpu` only; None: refactored).
    pub kernel: Option<KernelVariant>,
    /// GPU thread mapping (`Device::Gpu` only; None: per child).
    pub mapping: Option<ThreadMapping>,
    /// CPU bounding threads (`Device::Cpu` only; 0 or None: all cores).
    pub threads: Option<usize>,
    /// Wait for each pool's bounds before filling the next one (strict deepest-first order;
    /// by default the host fills the next pool while the GPU bounds the current one).
    pub sequential: bool,
    /// Stop after this many seconds (the result is then not proven optimal).
    pub time_limit: Option<f64>,
    /// Stop after this many nodes.
    pub node_limit: Option<u64>,
    /// Host search with device bounding, or the search resident on the GPU.
    #[serde(default)]
    pub search: Search,
    /// Resident search: write the open frontier and the incumbent to this file every
    /// `checkpoint_every` seconds and when the search ends.
    #[serde(default)]
    pub checkpoint: Option<std::path::PathBuf>,
    /// Seconds between checkpoints (with `checkpoint`; default: only when the search ends).
    #[serde(default)]
    pub checkpoint_every: Option<f64>,
    /// Resident search: continue the search of this checkpoint.
    #[serde(default)]
    pub resume: Option<std::path::PathBuf>,
    /// Resident search: the adapters it runs on.
    #[serde(default)]
    pub devices: Devices,
    /// Seconds between two progress reports (None: one a second).
    #[serde(default)]
    pub progress_every: Option<f64>,
    /// Resident search: MiB the open nodes may take on each device (None: 2048, within the
    /// adapter's buffer limits; see [`ResidentOptions::memory_budget`]).
    #[serde(default)]
    pub memory_mib: Option<u64>,
    /// Resident search over MPI ranks: seconds after which a silent rank ends the run with an
    /// error naming it (None: 60).
    #[serde(default)]
    pub silence: Option<f64>,
}

impl SolveOptions {
    /// Defaults of the command line for `instance`.
    pub fn new(instance: impl Into<String>) -> Self {
        Self {
            instance: instance.into(),
            bound: LowerBound::Lb2,
            ub: None,
            heuristic_rounds: None,
            device: Device::Gpu,
            pool: 1024,
            exploration: Exploration::DepthFirst,
            branching: Branching::Bidirectional,
            kernel: None,
            mapping: None,
            threads: None,
            sequential: false,
            time_limit: None,
            node_limit: None,
            search: Search::Host,
            checkpoint: None,
            checkpoint_every: None,
            resume: None,
            devices: Devices::One,
            progress_every: None,
            memory_mib: None,
            silence: None,
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

/// What `flowshop bound` reports: the node and its LB1 and LB2 (its JSON output).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct NodeBounds {
    /// The instance's name.
    pub instance: String,
    /// Jobs fixed at the start (0-based).
    pub prefix: Vec<usize>,
    /// Jobs fixed at the end (0-based).
    pub suffix: Vec<usize>,
    /// Jobs not fixed.
    pub unscheduled: usize,
    /// The one-machine bound.
    pub lb1: u32,
    /// The two-machine (Johnson) bound.
    pub lb2: u32,
}

/// `flowshop bound`: LB1 and LB2 of the node `args` fixes.
pub fn bound(args: &NodeBoundOptions) -> Result<NodeBounds> {
    let instance = load_instance(&args.instance)?;
    let data = BoundData::new(&instance);
    let node = Node::new(instance.jobs, args.prefix.clone(), args.suffix.clone())?;
    Ok(NodeBounds {
        lb1: cpu::lb1_node(&data, &node),
        lb2: cpu::lb2_node(&data, &node),
        instance: instance.name,
        unscheduled: node.unscheduled.len(),
        prefix: node.prefix,
        suffix: node.suffix,
    })
}

/// What `flowshop solve` reports: the instance, the settings that shaped the search and the
/// [`Solution`] (its JSON output: `makespan`, null when no schedule within `ub` was found;
/// `permutation` (0-based, achieves `makespan`); `optimal`; `proven_lower_bound` (no schedule
/// is better; null when the search stopped early); `stopped` (why, or null); `start_makespan`
/// and `start_permutation` (the start heuristic's schedule); `nodes`, `leaves`, `seconds`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SolveReport {
    /// The instance's name.
    pub instance: String,
    /// Its jobs.
    pub jobs: usize,
    /// Its machines.
    pub machines: usize,
    /// The lower bound that pruned the tree.
    pub bound: LowerBound,
    /// How children were formed.
    pub branching: Branching,
    /// The host filled the next pool while the GPU bounded the current one.
    pub overlap: bool,
    /// Host or resident search.
    pub search: Search,
    /// `cpu`, or the adapters the search ran on.
    pub device: String,
    /// Best known makespan of the instance (Taillard's table or the file header); None when
    /// unknown.
    pub best_known: Option<u32>,
    /// What the search found and proved.
    #[serde(flatten)]
    pub solution: Solution,
}

impl SolveOptions {
    /// Err ([`Error::Invalid`]) for options that do not apply to the chosen device or search
    /// (they would be ignored) and for times a [`Duration`] cannot hold. Every search through
    /// this module checks its options with it once, before it opens or loads anything.
    pub fn validate(&self) -> Result<()> {
        if self.search == Search::Host {
            for (given, field) in [
                (self.checkpoint.is_some(), "checkpoint"),
                (self.checkpoint_every.is_some(), "checkpoint_every"),
                (self.resume.is_some(), "resume"),
                (self.devices != Devices::One, "devices"),
                (self.silence.is_some(), "silence"),
            ] {
                if given {
                    return Err(Error::invalid(
                        field,
                        format!("it applies only to `search=resident`; drop `{field}` or add `search=resident`"),
                    ));
                }
            }
        } else {
            let refused = match self.device {
                Device::Cpu => Some(("device", "cpu")),
                Device::Gpu if self.mapping == Some(ThreadMapping::PerParent) => Some(("mapping", "per-parent")),
                Device::Gpu if self.sequential => Some(("sequential", "true")),
                Device::Gpu if self.kernel == Some(KernelVariant::Basic) => Some(("kernel", "basic")),
                Device::Gpu => None,
            };
            if let Some((field, value)) = refused {
                return Err(Error::invalid(
                    field,
                    format!("{value}: the resident search runs the refactored per-child kernels on the GPU; drop `{field}` or use `search=host`"),
                ));
            }
            if self.checkpoint_every.is_some() && self.checkpoint.is_none() {
                return Err(Error::invalid("checkpoint_every", "it needs `checkpoint`, the file to write to"));
            }
        }
        match self.device {
            Device::Gpu if self.threads.is_some() => return Err(not_for_device("threads", "cpu")),
            Device::Cpu if self.kernel.is_some() => return Err(not_for_device("kernel", "gpu")),
            Device::Cpu if self.mapping.is_some() => return Err(not_for_device("mapping", "gpu")),
            _ => {}
        }
        self.search_options(None)?;
        self.checkpoint_every()?;
        self.silence()?;
        Ok(())
    }

    fn search_options<'a>(&self, interrupted: Option<&'a AtomicBool>) -> Result<SearchOptions<'a>> {
        let time_limit = match self.time_limit {
            None => None,
            Some(s) => Some(
                Duration::try_from_secs_f64(s).map_err(|_| Error::invalid("time_limit", format!("{s} s; use a number of seconds ≥ 0")))?,
            ),
        };
        let progress_interval = match self.progress_every {
            None => Duration::from_secs(1),
            Some(s) => Duration::try_from_secs_f64(s)
                .map_err(|_| Error::invalid("progress_every", format!("{s} s; use a number of seconds ≥ 0")))?,
        };
        Ok(SearchOptions {
            bound: self.bound,
            exploration: self.exploration,
            branching: self.branching,
            pool_size: self.pool,
            upper_bound: self.ub,
            heuristic: IteratedGreedy { iterations: self.heuristic_rounds, ..IteratedGreedy::default() },
            node_limit: self.node_limit,
            time_limit,
            interrupted,
            threads: self.threads.unwrap_or(0),
            progress_interval,
            overlap: !self.sequential,
        })
    }
}

/// The option `field`, given in seconds, as a duration above zero.
fn seconds(field: &str, value: Option<f64>) -> Result<Option<Duration>> {
    value
        .map(|s| {
            Duration::try_from_secs_f64(s)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| Error::invalid(field, format!("{s} s; use a number of seconds > 0")))
        })
        .transpose()
}

impl SolveOptions {
    /// `checkpoint_every` as a duration.
    fn checkpoint_every(&self) -> Result<Option<Duration>> {
        seconds("checkpoint_every", self.checkpoint_every)
    }

    /// `silence` as a duration.
    fn silence(&self) -> Result<Option<Duration>> {
        seconds("silence", self.silence)
    }

    /// `checkpoint`, `checkpoint_every`, `resume` (the checkpoint read and checked: a single
    /// file or a manifest with its parts), `memory_mib` and `silence`.
    pub fn resident_options(&self) -> Result<ResidentOptions> {
        let checkpoint_every = self.checkpoint_every()?;
        let resume = match &self.resume {
            Some(path) => Some(Checkpoint::read(path).map_err(|e| match e {
                Error::File { .. } => Error::invalid(
                    "resume",
                    format!("{e}; resume from a file the resident search wrote as its `checkpoint`, or start again without `resume`"),
                ),
                e => e,
            })?),
            None => None,
        };
        let memory_budget = self.memory_mib.map(|mib| mib.saturating_mul(1 << 20));
        Ok(ResidentOptions { checkpoint: self.checkpoint.clone(), checkpoint_every, resume, memory_budget, silence: self.silence()? })
    }
}

/// The error for `field` given where it does not apply: it belongs to `device` `device`.
fn not_for_device(field: &str, device: &str) -> Error {
    Error::invalid(field, format!("it applies only to `device={device}`; drop `{field}` or add `device={device}`"))
}

/// Runs the search of `args`; `gpu` is required for `Device::Gpu`. The search stops early,
/// with what it found so far, once `interrupted` is set.
#[cfg(not(target_arch = "wasm32"))]
pub fn solve_instance(
    args: &SolveOptions,
    gpu: Option<&Gpu>,
    interrupted: Option<&AtomicBool>,
    progress: Option<&mut dyn FnMut(&Progress)>,
) -> Result<(Instance, Solution)> {
    solve_instance_on(args, gpu.as_slice(), interrupted, progress)
}

/// As [`solve_instance`] on any number of GPUs: the resident search spreads over all of
/// them, the host search uses the first.
#[cfg(not(target_arch = "wasm32"))]
pub fn solve_instance_on(
    args: &SolveOptions,
    gpus: &[&Gpu],
    interrupted: Option<&AtomicBool>,
    progress: Option<&mut dyn FnMut(&Progress)>,
) -> Result<(Instance, Solution)> {
    let instance = load_instance(&args.instance)?;
    let solution = solve_loaded(args, &instance, gpus, interrupted, progress)?;
    Ok((instance, solution))
}

/// As [`solve_instance_on`] on an instance already loaded (or generated): `args.instance`
/// is not read.
#[cfg(not(target_arch = "wasm32"))]
pub fn solve_loaded(
    args: &SolveOptions,
    instance: &Instance,
    gpus: &[&Gpu],
    interrupted: Option<&AtomicBool>,
    progress: Option<&mut dyn FnMut(&Progress)>,
) -> Result<Solution> {
    args.validate()?;
    search(args, instance, gpus, interrupted, progress)
}

/// [`solve_loaded`] on options already validated.
#[cfg(not(target_arch = "wasm32"))]
fn search(
    args: &SolveOptions,
    instance: &Instance,
    gpus: &[&Gpu],
    interrupted: Option<&AtomicBool>,
    progress: Option<&mut dyn FnMut(&Progress)>,
) -> Result<Solution> {
    let options = args.search_options(interrupted)?;
    if args.search == Search::Resident {
        if gpus.is_empty() {
            return Err(Error::invalid("search", "`search=resident` runs on the GPU, and none was opened"));
        }
        if args.silence.is_some() {
            return Err(Error::invalid(
                "silence",
                "it applies only to the search over MPI ranks (under mpirun); drop `silence` or run under mpirun",
            ));
        }
        let solution = solve_resident(gpus, instance, &options, &args.resident_options()?, progress)?;
        return check_against_known(instance, solution, args.resume.is_some());
    }
    let gpu = gpus.first().copied();
    let data = BoundData::new(instance);
    match args.device {
        Device::Cpu => {
            let mut bounder = CpuBounder::new(&data, options.bound, options.threads);
            solve_with(&data, &options, &mut bounder, progress)
        }
        Device::Gpu => {
            let gpu = gpu.ok_or_else(|| {
                Error::invalid("device", "`device=gpu` bounds on the GPU, and none was opened; open one or use `device=cpu`")
            })?;
            let gpu_options = GpuBoundOptions {
                bound: options.bound,
                branchless: args.kernel.unwrap_or_default() == KernelVariant::Refactored,
                probe: false,
                mapping: args.mapping.unwrap_or_default(),
                walk_prefix: false,
            };
            let mut bounder = GpuBounder::new(gpu, &data, gpu_options)?;
            solve_with(&data, &options, &mut bounder, progress)
        }
    }
}

/// `solution` unless it claims a proof that a known schedule of `instance` (Taillard's table,
/// the file's header) refutes: no schedule below a value above that schedule's makespan.
/// Only a damaged or forged checkpoint (`resumed`), or a fault, leads there.
#[cfg(not(target_arch = "wasm32"))]
fn check_against_known(instance: &Instance, solution: Solution, resumed: bool) -> Result<Solution> {
    let known = instance.upper_bound;
    match solution.proven_lower_bound {
        Some(proved) if known != 0 && proved > known => {
            let cause = if resumed {
                "the checkpoint it resumed did not hold every open subtree (damaged or not written by simtlab); start the search again without resuming"
            } else {
                "this is a bug in simtlab, please report it with the command line"
            };
            Err(Error::invalid(
                "search result",
                format!(
                    "the search ended proving no schedule below {proved}, but a schedule of makespan {known} is known for {}; {cause}",
                    instance.name
                ),
            ))
        }
        _ => Ok(solution),
    }
}

/// Job numbers separated by spaces, as `flowshop solve` prints a schedule.
pub fn job_list(jobs: &[usize]) -> String {
    jobs.iter().map(|j| j.to_string()).collect::<Vec<_>>().join(" ")
}

/// `flowshop solve` on `gpu` (required for `Device::Gpu`). Stops early with what it found so
/// far once `interrupted` is set.
#[cfg(not(target_arch = "wasm32"))]
pub fn solve(args: &SolveOptions, gpu: Option<&Gpu>, interrupted: Option<&AtomicBool>) -> Result<SolveReport> {
    solve_on(args, gpu.as_slice(), interrupted, None)
}

/// As [`solve`] on any number of GPUs (the resident search spreads over all of them), with
/// `progress` called about every [`SolveOptions::progress_every`] seconds.
#[cfg(not(target_arch = "wasm32"))]
pub fn solve_on(
    args: &SolveOptions,
    gpus: &[&Gpu],
    interrupted: Option<&AtomicBool>,
    progress: Option<&mut dyn FnMut(&Progress)>,
) -> Result<SolveReport> {
    args.validate()?;
    report_on(args, gpus, interrupted, progress)
}

/// As [`solve_on`] on the adapters `args` needs, opened here (through `gpu_options`; none for
/// [`Device::Cpu`], where `gpu_options` must not choose one), each handed to `opened` before
/// the search starts, with whether its adapter was opened before for this search (the devices
/// share that GPU and take turns on it).
#[cfg(not(target_arch = "wasm32"))]
pub fn solve_opening(
    args: &SolveOptions,
    gpu_options: &GpuOptions,
    opened: &mut dyn FnMut(&Gpu, bool),
    interrupted: Option<&AtomicBool>,
    progress: Option<&mut dyn FnMut(&Progress)>,
) -> Result<SolveReport> {
    args.validate()?;
    let (gpus, adapters) = match args.device {
        Device::Gpu => open_devices(args.devices, gpu_options)?,
        Device::Cpu if gpu_options.backend.is_some() => return Err(not_for_device("backend", "gpu")),
        Device::Cpu if gpu_options.adapter.is_some() => return Err(not_for_device("adapter", "gpu")),
        Device::Cpu => (Vec::new(), 0),
    };
    // open_devices takes the adapters in turn: from the `adapters`-th device on, each is another
    gpus.iter().enumerate().for_each(|(i, gpu)| opened(gpu, i >= adapters));
    report_on(args, &gpus.iter().collect::<Vec<_>>(), interrupted, progress)
}

/// [`solve_on`] on options already validated.
#[cfg(not(target_arch = "wasm32"))]
fn report_on(
    args: &SolveOptions,
    gpus: &[&Gpu],
    interrupted: Option<&AtomicBool>,
    progress: Option<&mut dyn FnMut(&Progress)>,
) -> Result<SolveReport> {
    let instance = load_instance(&args.instance)?;
    let solution = search(args, &instance, gpus, interrupted, progress)?;
    let device = match args.device {
        Device::Cpu => "cpu".to_string(),
        Device::Gpu if gpus.is_empty() => "gpu".into(),
        Device::Gpu => gpus.iter().map(|g| g.adapter_name()).collect::<Vec<_>>().join(" + "),
    };
    Ok(SolveReport::new(args, instance, device, solution))
}

impl SolveReport {
    #[cfg(not(target_arch = "wasm32"))]
    fn new(args: &SolveOptions, instance: Instance, device: String, solution: Solution) -> Self {
        SolveReport {
            best_known: (instance.upper_bound != 0).then_some(instance.upper_bound),
            instance: instance.name,
            jobs: instance.jobs,
            machines: instance.machines,
            bound: args.bound,
            branching: args.branching,
            overlap: !args.sequential && args.search == Search::Host,
            search: args.search,
            device,
            solution,
        }
    }
}

/// How many times one adapter may be opened for one search ([`Devices::Count`]).
pub const LOGICAL_DEVICES_PER_ADAPTER: usize = 8;

/// Opens the adapters of `devices` (with `gpu_options.adapter`, only those named like it).
/// The devices of one search, and how many adapters they are on (the first that many devices
/// each on its own, the rest on them again in turn).
#[cfg(not(target_arch = "wasm32"))]
fn open_devices(devices: Devices, gpu_options: &GpuOptions) -> Result<(Vec<Gpu>, usize)> {
    let count = match devices {
        Devices::One => return Ok((vec![Gpu::new(gpu_options)?], 1)),
        Devices::Count(0) => return Err(Error::invalid("devices", "0 devices; use all or a count of at least 1")),
        Devices::Count(count) => Some(count),
        Devices::All => None,
    };
    let options = gpu_options.clone().or_env();
    let adapters = backend_adapters(&options)?;
    if adapters.is_empty() {
        return Ok((vec![Gpu::new(&options)?], 1)); // the error that names the adapters there are
    }
    let chosen: Vec<&wgpu::Adapter> = match count {
        // each logical device holds its own copy of the search's buffers and its own queue:
        // beyond a few per adapter they only crawl, then exhaust the driver
        Some(count) if count > LOGICAL_DEVICES_PER_ADAPTER * adapters.len() => {
            return Err(Error::Limit {
                what: "devices for one search".into(),
                requested: count as u64,
                limit: (LOGICAL_DEVICES_PER_ADAPTER * adapters.len()) as u64,
                hint: format!(
                    "this machine has {} adapter(s) on this backend and each opens at most {LOGICAL_DEVICES_PER_ADAPTER} times; ask for fewer devices",
                    adapters.len()
                ),
            });
        }
        Some(count) => adapters.iter().cycle().take(count).collect(),
        None => adapters.iter().collect(),
    };
    let distinct = chosen.len().min(adapters.len());
    Ok((chosen.into_iter().map(|adapter| open_adapter(adapter, &options)).collect::<Result<_>>()?, distinct))
}

/// The adapters `options` selects, on the backend of the first (the same GPU is often listed
/// once per backend).
#[cfg(not(target_arch = "wasm32"))]
fn backend_adapters(options: &GpuOptions) -> Result<Vec<wgpu::Adapter>> {
    let mut adapters: Vec<_> =
        crate::gpu::select_adapters(crate::gpu::adapters(options)?, options.adapter.as_deref())?.into_iter().map(|(_, a)| a).collect();
    if let Some(backend) = adapters.first().map(|a| a.get_info().backend) {
        adapters.retain(|a| a.get_info().backend == backend);
    }
    Ok(adapters)
}

#[cfg(not(target_arch = "wasm32"))]
fn open_adapter(adapter: &wgpu::Adapter, options: &GpuOptions) -> Result<Gpu> {
    let mut gpu = Gpu::open(adapter)?;
    if let Some(timeout) = options.timeout {
        gpu.set_timeout(timeout);
    }
    Ok(gpu)
}

/// This process was started by an MPI launcher (mpirun, mpiexec, or srun with PMI/PMIx).
pub fn launched_by_mpi() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"].iter().any(|v| std::env::var_os(v).is_some())
}

/// As [`solve_on`] with one resident search over every rank of `world` (feature `mpi`):
/// each rank opens one GPU, the `r`-th rank of a host that host's adapter `r` (in turn, where
/// there are fewer), and every rank returns the result.
#[cfg(feature = "mpi")]
pub fn solve_on_ranks(
    args: &SolveOptions,
    world: &mpi::topology::SimpleCommunicator,
    gpu_options: &GpuOptions,
    interrupted: Option<&AtomicBool>,
    progress: Option<&mut dyn FnMut(&Progress)>,
) -> Result<SolveReport> {
    use mpi::topology::Communicator;
    args.validate()?;
    if args.search != Search::Resident {
        return Err(Error::invalid(
            "search",
            "under MPI the search spreads over ranks only as the resident search (`search=resident`); use it or run without the MPI launcher",
        ));
    }
    if args.devices != Devices::One {
        return Err(Error::invalid(
            "devices",
            "under MPI each rank drives one GPU; leave `devices` at one and choose the number of GPUs with the rank count (mpirun -np N)",
        ));
    }
    let host = world.split_shared(world.rank());
    let (local_rank, local_ranks) = (host.rank() as usize, host.size() as usize);
    let options = gpu_options.clone().or_env();
    let adapters = backend_adapters(&options)?;
    if adapters.is_empty() {
        return Err(Gpu::new(&options)
            .err()
            .unwrap_or_else(|| Error::invalid("adapter", "no adapter on this host; run the ranks where GPUs are")));
    }
    if local_ranks > LOGICAL_DEVICES_PER_ADAPTER * adapters.len() {
        return Err(Error::Limit {
            what: "MPI ranks on one host".into(),
            requested: local_ranks as u64,
            limit: (LOGICAL_DEVICES_PER_ADAPTER * adapters.len()) as u64,
            hint: format!(
                "this host has {} adapter(s) on this backend and each takes at most {LOGICAL_DEVICES_PER_ADAPTER} ranks; start one rank per GPU of each host (mpirun map-by ppr:GPUS:node, or srun ntasks-per-node=GPUS)",
                adapters.len()
            ),
        });
    }
    let gpu = open_adapter(&adapters[local_rank % adapters.len()], &options)?;
    let instance = load_instance(&args.instance)?;
    let options = args.search_options(interrupted)?;
    let solution = super::resident::solve_resident_ranks(world, &gpu, &instance, &options, &args.resident_options()?, progress)?;
    let solution = check_against_known(&instance, solution, args.resume.is_some())?;
    // ranks that share a GPU take turns on it: say so where the speed is read
    let shared = if local_ranks > adapters.len() {
        format!("; {local_ranks} ranks share this host's {} adapter(s)", adapters.len())
    } else {
        String::new()
    };
    let device = format!("{} (rank 0 of {} MPI ranks{shared})", gpu.adapter_name(), world.size());
    Ok(SolveReport::new(args, instance, device, solution))
}
