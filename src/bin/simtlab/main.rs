//! The simtlab command line: devices, benchmarks, the workload registry, reproduction of the
//! papers, the flow-shop solver, the occupancy calculator, the explorer. One file per
//! subcommand; the library holds the logic.

#![allow(unreachable_pub, reason = "a binary exports nothing: `pub` in its modules means the crate")]

mod bench;
mod flags;
mod flowshop;
mod gpu_args;
mod occupancy;
mod output;
mod profile;
mod pt;
mod registers;
mod remap;
mod reproduce;
mod value;
mod workload;

use bench::BenchFamily;
use clap::{Parser, Subcommand};
use flowshop::FlowshopCommand;
use gpu_args::{AdapterArgs, BenchGpuArgs};
use output::Output;
use simtlab::Result;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

#[derive(Parser)]
#[command(name = "simtlab", version, about = "Measure, explain and remove SIMT divergence on any GPU (wgpu)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[allow(clippy::large_enum_variant, reason = "parsed once per process: the size of the largest variant does not matter")]
#[derive(Subcommand)]
enum Command {
    /// List every adapter with its measured subgroup size and the features that matter.
    Devices {
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        adapter: AdapterArgs,
    },
    /// The analytical occupancy calculator (G80 to Hopper, AMD); `--arch list` lists presets.
    Occupancy(occupancy::OccupancyArgs),
    /// Run a benchmark family.
    Bench {
        #[command(subcommand)]
        family: BenchFamily,
        #[command(flatten)]
        gpu: BenchGpuArgs,
    },
    /// Re-run the papers' experiments on this adapter and write a report beside their numbers.
    Reproduce {
        /// zhang, chakroun, carrillo, gupta, ryoo or all.
        #[arg(long, default_value = "all")]
        paper: String,
        /// Small sizes (minutes on a CPU adapter) instead of the papers' sizes.
        #[arg(long)]
        quick: bool,
        /// Directory for report.md, results.json (written after every point) and the figures.
        #[arg(long, value_name = "DIR", default_value = "simtlab-report")]
        out: PathBuf,
        /// Run only every n-th point starting at the i-th (i/n, 1 ≤ i ≤ n), for array jobs.
        #[arg(long)]
        shard: Option<String>,
        /// Keep the points already in --out (same adapter and scale) and run only the rest.
        #[arg(long, conflicts_with = "replace")]
        resume: bool,
        /// Replace a run already in --out (refused by default, so that no run is lost).
        #[arg(long)]
        replace: bool,
        #[command(flatten)]
        gpu: BenchGpuArgs,
    },
    /// The desktop explorer: every workload of `simtlab list` with its parameters, sweeps,
    /// records and CPU checks, per-point divergence heat maps, occupancy and the paper's figure;
    /// runs saved, reopened, compared and exported (Ctrl+R run, Esc cancel, Ctrl+S save).
    #[cfg(feature = "gui")]
    Gui {
        /// Workload to open with (a name from `simtlab list`).
        #[arg(long)]
        workload: Option<String>,
        /// Start a run (with the workload's current settings) as the window opens.
        #[arg(long)]
        run: bool,
        /// A record file to open (saved by the explorer or by `simtlab run --json`).
        #[arg(long, value_name = "FILE")]
        open: Option<PathBuf>,
        #[command(flatten)]
        gpu: BenchGpuArgs,
    },
    /// Permutation flow-shop: Taillard instances, LB1/LB2 bounds, branch-and-bound on the GPU.
    Flowshop {
        #[command(subcommand)]
        command: FlowshopCommand,
    },
    /// List every workload (kernel configuration) simtlab can run, with its parameters.
    List {
        /// Print JSON (name, family, paper, parameters at each scale).
        #[arg(long)]
        json: bool,
    },
    /// Run one workload from `simtlab list` and check it against its CPU reference.
    Run {
        /// The workload's name (`simtlab list`).
        workload: String,
        /// Parameter values (repeatable): name=value, e.g. --param n=4096; also the options left
        /// out of `simtlab list` while default, e.g. --param 'tier=[0]' on a pt-* workload.
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// Parameter values to start from: tiny (seconds on a CPU), quick, or paper (the papers' sizes).
        #[arg(long, default_value = "quick", value_parser = ["tiny", "quick", "paper"])]
        scale: String,
        #[command(flatten)]
        output: Output,
        #[command(flatten)]
        gpu: BenchGpuArgs,
    },
    /// Divergence per branch of any WGSL compute shader, instrumented without edits.
    Profile(profile::ProfileArgs),
    /// Remove divergence from any WGSL compute shader without editing it: invocations regrouped
    /// by the path their data takes (thread-data remapping), outputs checked byte for byte.
    Remap(remap::RemapArgs),
    /// Run and time your own WGSL kernel with persistent threads: global barriers, queue claims
    /// and pushes from the public module (`//#use simtlab_pt`), at the tier the adapter allows.
    Pt(pt::PtArgs),
    /// Write a seeded random graph and its breadth-first levels from vertex 0 as raw u32 files
    /// (inputs and reference for a breadth-first search run with `simtlab pt`).
    Graph(pt::GraphArgs),
    /// The driver's register count for each of simtlab's kernels, beside the occupancy model
    /// (Vulkan drivers with VK_KHR_pipeline_executable_properties).
    Registers(registers::RegistersArgs),
    /// Reports from earlier runs.
    Report {
        #[command(subcommand)]
        action: ReportAction,
    },
}

#[derive(Subcommand)]
enum ReportAction {
    /// Join the results of several shard directories into one report.
    Merge {
        /// Directories written by `reproduce --shard`.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Directory for the merged report (not one of the inputs).
        #[arg(long, value_name = "DIR", default_value = "simtlab-report")]
        out: PathBuf,
        /// Merge runs from different adapters (refused by default).
        #[arg(long)]
        allow_mixed: bool,
    },
}

fn run(cli: &Cli) -> Result<()> {
    match &cli.command {
        Command::Reproduce { paper, quick, out, shard, resume, replace, gpu } => {
            let earlier = match (resume, replace) {
                (true, _) => reproduce::Earlier::Resume,
                (_, true) => reproduce::Earlier::Replace,
                _ => reproduce::Earlier::Refuse,
            };
            reproduce::reproduce(gpu, paper, *quick, out, shard.as_deref(), earlier)
        }
        Command::Report { action: ReportAction::Merge { dirs, out, allow_mixed } } => reproduce::merge_reports(dirs, out, *allow_mixed),
        Command::Devices { json, adapter } => gpu_args::devices(adapter, *json),
        Command::List { json } => workload::list(*json),
        Command::Run { workload, params, scale, output, gpu } => workload::run(gpu, workload, params, scale, output),
        Command::Flowshop { command } => flowshop::run(command),
        #[cfg(feature = "gui")]
        Command::Gui { workload, run, open, gpu } => simtlab::ui::explorer::run(&simtlab::ui::explorer::ExplorerOptions {
            options: gpu.gpu.options(),
            min_sample_seconds: gpu.min_sample_ms / 1e3,
            workload: workload.clone(),
            run_now: *run,
            open: open.clone(),
        }),
        Command::Occupancy(args) => occupancy::run(args),
        Command::Profile(args) => profile::run(args),
        Command::Remap(args) => remap::run(args),
        Command::Pt(args) => pt::run(args),
        Command::Graph(args) => pt::graph(args),
        Command::Registers(args) => registers::run(args),
        Command::Bench { family, gpu } => {
            let gpu = gpu_args::open_gpu(gpu)?;
            bench::run(&gpu, family)
        }
    }
}

/// Set by the first Ctrl-C or SIGTERM (what Slurm, `docker stop` and systemd send) in commands
/// that can stop early (`reproduce`, `flowshop solve`): they stop at their next safe point and
/// keep what they finished. A second signal ends the process at once; other commands end at
/// the first.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The signal that set [`INTERRUPTED`] (0: none): the exit status is 128 + its number, as a
/// shell reports a process the signal ended.
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);

#[cfg(unix)]
fn install_signal_handlers(catch_interrupt: bool) {
    extern "C" fn on_stop_signal(signal: libc::c_int) {
        const MESSAGE: &[u8] = b"\ninterrupted: finishing the current step and keeping what is done (Ctrl-C again to quit now)\n";
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            // SAFETY: _exit is async-signal-safe
            unsafe { libc::_exit(128 + signal) };
        }
        STOPPED_BY.store(signal, Ordering::SeqCst);
        // SAFETY: write(2) is async-signal-safe and the buffer is static
        unsafe { libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len()) };
    }
    // SAFETY: plain signal dispositions, set before any other thread exists
    unsafe {
        // a closed pipe (`simtlab ... | head`) ends the process quietly, as it does for cat
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        if catch_interrupt {
            for signal in [libc::SIGINT, libc::SIGTERM] {
                libc::signal(signal, on_stop_signal as *const () as libc::sighandler_t);
            }
        }
    }
}

#[cfg(not(unix))]
fn install_signal_handlers(_catch_interrupt: bool) {}

/// One subcommand's options alone, for the tests in each subcommand's file.
#[cfg(test)]
#[derive(Parser)]
pub(crate) struct ArgsOnly<A: clap::Args> {
    #[command(flatten)]
    args: A,
}

#[cfg(test)]
impl<A: clap::Args> ArgsOnly<A> {
    /// Parses `words` (split at white space) as `A`'s options.
    pub fn parse_words(words: &str) -> std::result::Result<A, clap::Error> {
        Self::try_parse_from(std::iter::once("simtlab").chain(words.split_whitespace())).map(|w| w.args)
    }
}

fn main() {
    let cli = Cli::parse();
    output::note_record_destination(&std::env::args().collect::<Vec<_>>());
    output::TerminalProgress::install();
    #[cfg(feature = "gui")]
    let headless = !matches!(cli.command, Command::Gui { .. });
    #[cfg(not(feature = "gui"))]
    let headless = true;
    if headless && std::env::var_os("NODEVICE_SELECT").is_none() {
        // Mesa's device-selection Vulkan layer connects to a Wayland display while adapters are
        // listed and prints "error: XDG_RUNTIME_DIR is invalid..." on a headless machine;
        // simtlab chooses adapters itself, so a command without a window skips that layer.
        // (Set before any thread exists.)
        std::env::set_var("NODEVICE_SELECT", "1");
    }
    let stops_early = matches!(cli.command, Command::Reproduce { .. } | Command::Flowshop { command: FlowshopCommand::Solve { .. } });
    install_signal_handlers(stops_early);
    if let Err(e) = run(&cli).map_err(flags::name_flags) {
        eprintln!("error: {e}");
        // a run a signal stopped ends as the shell reports that signal (130 Ctrl-C, 143 SIGTERM)
        let signal = STOPPED_BY.load(Ordering::SeqCst);
        std::process::exit(if matches!(e, simtlab::Error::Cancelled { .. }) && signal > 0 { 128 + signal } else { 1 });
    }
}
