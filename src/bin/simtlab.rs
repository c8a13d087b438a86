//! The simtlab command line: devices, benchmarks, the occupancy calculator, the explorer.

use clap::{Args, Parser, Subcommand};
use simtlab::experiments;
use simtlab::gpu::{self, GpuOptions};
use simtlab::harness::{self, Progress, Protocol, Record};
use simtlab::kernels::carrillo::{self, CarrilloArgs};
use simtlab::kernels::matmul::{self, MatmulArgs};
use simtlab::kernels::micro::{self, Distribution, MicroConfig, Pattern};
use simtlab::kernels::flowshop::cli as flowshop_cli;
use simtlab::kernels::zhang::{self, ZhangArgs};
use simtlab::{Error, Gpu, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[derive(Parser)]
#[command(name = "simtlab", version, about = "Measure, explain and remove SIMT divergence on any GPU (wgpu)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Which adapter to open (commands that list or open adapters).
#[derive(Args, Clone, Default)]
struct AdapterArgs {
    /// Backends to use (vulkan, gl, metal, dx12; comma list). Default: WGPU_BACKEND or all.
    #[arg(long, global = true)]
    backend: Option<String>,
    /// Part of the adapter name to use. Default: WGPU_ADAPTER_NAME or the best adapter.
    #[arg(long, global = true)]
    adapter: Option<String>,
}

/// The adapter and how long to wait for it (commands that run GPU work).
#[derive(Args, Clone)]
struct GpuArgs {
    #[command(flatten)]
    adapter: AdapterArgs,
    /// Seconds to wait for one GPU submission before reporting a hang (0.01 to 86400).
    #[arg(long, global = true, default_value_t = 60.0, value_parser = parse_timeout)]
    timeout: f64,
}

/// GPU options of the benchmarks: the adapter, the timeout and the timed-run floor.
#[derive(Args, Clone)]
struct BenchGpuArgs {
    #[command(flatten)]
    gpu: GpuArgs,
    /// Benchmarks on a GPU (not a CPU adapter): a timed run shorter than this many milliseconds
    /// is repeated back to back in one submission and averaged, so that the GPU stays at its
    /// working clock (0: time each run alone; at most 10000).
    #[arg(long, global = true, default_value_t = 5.0, value_parser = parse_min_sample_ms)]
    min_sample_ms: f64,
}

fn parse_number(s: &str) -> std::result::Result<f64, String> {
    s.trim().parse::<f64>().map_err(|_| format!("'{s}' is not a number"))
}

fn parse_timeout(s: &str) -> std::result::Result<f64, String> {
    let v = parse_number(s)?;
    if v.is_finite() && (0.01..=86400.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("'{s}': give seconds between 0.01 and 86400"))
    }
}

fn parse_min_sample_ms(s: &str) -> std::result::Result<f64, String> {
    let v = parse_number(s)?;
    if v.is_finite() && (0.0..=10000.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("'{s}': give milliseconds between 0 and 10000"))
    }
}

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
    Occupancy(simtlab::occupancy::OccupancyArgs),
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
        #[arg(long, default_value = "simtlab-report")]
        out: PathBuf,
        /// Run only every n-th point starting at the i-th (i/n, 1 ≤ i ≤ n), for array jobs.
        #[arg(long)]
        shard: Option<String>,
        /// Keep the points already in --out (same adapter and scale) and run only the rest.
        #[arg(long)]
        resume: bool,
        #[command(flatten)]
        gpu: BenchGpuArgs,
    },
    /// The desktop explorer: pick an adapter and a kernel, sweep its parameters, see time,
    /// throughput, the divergence heat map, occupancy and the paper's figure.
    #[cfg(feature = "gui")]
    Gui {
        /// Kernel family to open with ("micro loop", "micro if").
        #[arg(long)]
        family: Option<String>,
        /// Start a run (with the family's default sweep) as the window opens.
        #[arg(long)]
        run: bool,
        #[command(flatten)]
        adapter: AdapterArgs,
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
        /// Parameter values (repeatable): name=value, e.g. --param n=4096.
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
    /// Reports from earlier runs.
    Report {
        #[command(subcommand)]
        action: ReportAction,
    },
}

#[derive(Subcommand)]
enum FlowshopCommand {
    /// Print a Taillard instance (generated from its seed) or an instance file.
    Instance(flowshop_cli::InstanceArgs),
    /// LB1 and LB2 of one node (prefix and suffix fixed, 0-based job numbers).
    Bound(flowshop_cli::BoundArgs),
    /// Branch-and-bound to optimality (or to the limits), bounding on the GPU or the CPU.
    Solve {
        #[command(flatten)]
        args: flowshop_cli::SolveArgs,
        #[command(flatten)]
        gpu: GpuArgs,
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
        #[arg(long, default_value = "simtlab-report")]
        out: PathBuf,
        /// Merge runs from different adapters (refused by default).
        #[arg(long)]
        allow_mixed: bool,
    },
}

#[derive(Subcommand)]
enum BenchFamily {
    /// Zhang's Figure 1 patterns: a data-dependent if and a data-dependent loop.
    Micro(MicroArgs),
    /// Zhang et al. ICS'10 section 5: 3D-LBM, GAFORT, MarchingCubes, Reduction, BlackScholes,
    /// original vs reference redirection.
    Zhang(ZhangCli),
    /// Thread-data remapping of the divergent loop: none, redirect, LAM, GPU regroup or auto,
    /// with the remap cost beside the kernel time; `--pipeline` hides host remaps behind chunks.
    Remap(RemapArgs),
    /// Persistent threads (Gupta et al.): use cases sync, forest, prodcons, gsync and the
    /// barrier / queue microbenchmarks, over tiers 0 (multi-dispatch), 1 (non-blocking PT) and
    /// 2 (blocking PT, after a capability probe).
    Pt(PtBenchArgs),
    /// Carrillo's branch splitting (branched vs split kernels over a decision-mask sweep) and
    /// loop splitting.
    Carrillo(CarrilloCli),
    /// Ryoo's matrix-multiplication ladder (naive, tiled, unrolled, prefetch) and a
    /// register-tiled kernel: GFLOPS, threads and workgroup memory per thread.
    Matmul(MatmulCli),
    /// Chakroun's flow-shop B&B bounding: DFS vs BFS pools (Table 1), refactored vs basic
    /// kernel over one CPU core (Table 2), bounds/s on GPU vs CPU.
    Flowshop(simtlab::kernels::flowshop::cli::BenchArgs),
}


#[derive(Args)]
struct RemapArgs {
    /// The kernel to remap (micro-loop: the data-dependent loop).
    #[arg(long, default_value = "micro-loop")]
    kernel: String,
    /// Strategies to run (none, redirect, lam, gpu, tile, defer, auto); default all.
    #[arg(long, value_delimiter = ',')]
    strategy: Vec<simtlab::remap::Strategy>,
    #[arg(long, value_enum, default_value = "one-long")]
    distribution: Distribution,
    #[arg(long, default_value_t = 1 << 20)]
    n: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value_t = 16)]
    short: u32,
    #[arg(long, default_value_t = 512)]
    long: u32,
    /// Tile sort: invocations per workgroup.
    #[arg(long, default_value_t = simtlab::kernels::micro::TILE_WORKGROUP)]
    tile_workgroup: u32,
    /// Tile sort: elements per invocation (a tile is workgroup × this many elements).
    #[arg(long, default_value_t = simtlab::kernels::micro::TILE_PER_THREAD)]
    tile_per_thread: u32,
    /// Deferral: loops of at least this many trips run in the second pass (default: the
    /// threshold the emulation finds best).
    #[arg(long)]
    defer_from: Option<u32>,
    /// Deferral: elements per invocation in the first pass (1..=32).
    #[arg(long, default_value_t = simtlab::kernels::micro::DEFER_PER_THREAD)]
    defer_per_thread: u32,
    /// Deferral: workgroups of the second pass (its invocations stride over the deferred loops).
    #[arg(long, default_value_t = simtlab::kernels::micro::DEFER_WORKGROUPS)]
    defer_workgroups: u32,
    /// Also run the chunked CPU-GPU pipeline with this many chunks (0: off).
    #[arg(long, default_value_t = 0)]
    pipeline: usize,
    /// Host worker threads of the pipeline (with --pipeline; default 4).
    #[arg(long)]
    workers: Option<usize>,
    /// Write the pipeline's timeline as a chrome trace (chrome://tracing, Perfetto; with --pipeline).
    #[arg(long)]
    trace: Option<PathBuf>,
    #[command(flatten)]
    output: Output,
}

#[derive(Args)]
struct CarrilloCli {
    #[command(flatten)]
    args: CarrilloArgs,
    #[command(flatten)]
    output: Output,
}
#[derive(Args)]
struct PtBenchArgs {
    #[command(flatten)]
    pt: simtlab::kernels::pt::cli::PtArgs,
    #[command(flatten)]
    output: Output,
}

#[derive(Args)]
struct MatmulCli {
    #[command(flatten)]
    args: MatmulArgs,
    #[command(flatten)]
    output: Output,
}

#[derive(Args)]
struct Output {
    /// Timed samples per configuration (after warm-up).
    #[arg(long, default_value_t = 10)]
    samples: usize,
    /// Untimed warm-up runs per configuration.
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// Write all records as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write all records as CSV.
    #[arg(long)]
    csv: Option<PathBuf>,
}

#[derive(Args)]
struct ZhangCli {
    #[command(flatten)]
    args: ZhangArgs,
    #[command(flatten)]
    output: ZhangOutput,
}

/// Output files of `bench zhang` (samples and warm-up are in ZhangArgs).
#[derive(Args)]
struct ZhangOutput {
    /// Write all records as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write all records as CSV.
    #[arg(long)]
    csv: Option<PathBuf>,
}

#[derive(Args)]
struct MicroArgs {
    #[arg(long, value_enum, default_value = "loop")]
    pattern: Pattern,
    /// Trip-count layouts to sweep (loop) or random/sorted values (if). Default: all that apply.
    #[arg(long, value_enum, value_delimiter = ',')]
    distribution: Vec<Distribution>,
    /// Threads (elements).
    #[arg(long, default_value_t = 1 << 20)]
    n: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// if: fractions of threads on the expensive path to sweep.
    #[arg(long, value_delimiter = ',', default_value = "0,0.1,0.5,0.9,1")]
    probability: Vec<f64>,
    /// if: mixing rounds on the expensive path.
    #[arg(long, default_value_t = 256)]
    heavy: u32,
    /// loop: short and long trip counts.
    #[arg(long, default_value_t = 16)]
    short: u32,
    #[arg(long, default_value_t = 512)]
    long: u32,
    /// loop: width of the groups that get one long lane (32 = an NVIDIA warp).
    #[arg(long, default_value_t = 32)]
    group: u32,
    #[command(flatten)]
    output: Output,
}

impl AdapterArgs {
    fn options(&self, timeout: Option<f64>) -> GpuOptions {
        GpuOptions {
            backend: self.backend.clone(),
            adapter: self.adapter.clone(),
            timeout: timeout.map(Duration::from_secs_f64),
        }
    }
}

impl GpuArgs {
    fn options(&self) -> GpuOptions {
        self.adapter.options(Some(self.timeout))
    }
}

/// Opens the adapter for a benchmark and says which one it is.
fn open_gpu(args: &BenchGpuArgs) -> Result<Gpu> {
    let gpu = Gpu::new(&args.gpu.options())?;
    if gpu.info.device_type != wgpu::DeviceType::Cpu {
        gpu.set_min_timed_seconds(args.min_sample_ms / 1e3);
    }
    eprintln!("adapter: {} [{}], subgroup size {}", gpu.adapter_name(), gpu.info.driver, match gpu.caps.subgroup_size {
        Some(w) => w.to_string(),
        None => "n/a (no subgroups: divergence comes from host emulation; for a probe on a CPU machine install \
                 lavapipe: apt-get install mesa-vulkan-drivers libvulkan1, as root)"
            .into(),
    });
    Ok(gpu)
}

fn devices(args: &AdapterArgs, json: bool) -> Result<()> {
    let reports = gpu::survey(&args.options(None))?;
    if json {
        let text = serde_json::to_string_pretty(&reports).map_err(|e| Error::invalid("json", e.to_string()))?;
        println!("{text}");
        return Ok(());
    }
    for r in &reports {
        println!("{} — {} {} — driver {} {}", r.name, r.backend, r.device_type, r.driver, r.driver_info);
        match (&r.capabilities, &r.error) {
            (Some(c), _) => {
                let size = c.subgroup_size.map_or("none".to_string(), |w| format!("{w} (measured; adapter says {}..{})", c.subgroup_min_size, c.subgroup_max_size));
                println!("  subgroups: {size}; barrier: {}", c.subgroup_barrier);
                println!("  timestamps: {} (inside passes: {}); @coherent: {}", c.timestamps, c.timestamps_inside_passes, c.coherent);
                println!(
                    "  max storage binding: {} MiB; max workgroups/dim: {}; max invocations/workgroup: {}; workgroup memory: {} KiB",
                    c.max_storage_buffer_binding_size >> 20,
                    c.max_compute_workgroups_per_dimension,
                    c.max_compute_invocations_per_workgroup,
                    c.max_compute_workgroup_storage_size >> 10
                );
            }
            (None, Some(e)) => println!("  could not open: {e}"),
            (None, None) => {}
        }
    }
    Ok(())
}

fn finish(records: &[Record], output: &Output) -> Result<()> {
    finish_files(records, output.json.as_ref(), output.csv.as_ref())
}

/// Prints the records, writes the files asked for, and fails if any check failed.
/// With `--json -` or `--csv -` the records go to standard output and the table to standard
/// error, so that the output stays machine-readable.
fn finish_files(records: &[Record], json: Option<&PathBuf>, csv: Option<&PathBuf>) -> Result<()> {
    let to_stdout = |p: Option<&PathBuf>| p.is_some_and(|p| p.as_os_str() == "-");
    if to_stdout(json) && to_stdout(csv) {
        return Err(Error::invalid("output", "--json - and --csv - both ask for standard output; give one of them a file"));
    }
    if to_stdout(json) || to_stdout(csv) {
        eprint!("{}", harness::table(records));
    } else {
        print!("{}", harness::table(records));
    }
    if let Some(p) = json {
        harness::write_json(p, records)?;
        if !to_stdout(json) {
            eprintln!("wrote {}", p.display());
        }
    }
    if let Some(p) = csv {
        harness::write_csv(p, records)?;
        if !to_stdout(csv) {
            eprintln!("wrote {}", p.display());
        }
    }
    let failed = records.iter().filter(|r| !r.check.passed).count();
    if failed > 0 {
        return Err(Error::invalid("results", format!("{failed} configuration(s) differ from the CPU reference")));
    }
    Ok(())
}

fn bench_micro(gpu: &Gpu, a: &MicroArgs) -> Result<Vec<Record>> {
    let protocol = Protocol { warmup: a.output.warmup, samples: a.output.samples };
    let base = MicroConfig {
        pattern: a.pattern,
        n: a.n,
        seed: a.seed,
        heavy: a.heavy,
        short: a.short,
        long: a.long,
        group: a.group,
        ..Default::default()
    };
    let mut configs = Vec::new();
    match a.pattern {
        Pattern::Loop => {
            let dists = if a.distribution.is_empty() {
                vec![Distribution::Uniform, Distribution::OneLong, Distribution::Random, Distribution::Sorted]
            } else {
                a.distribution.clone()
            };
            configs.extend(dists.into_iter().map(|distribution| MicroConfig { distribution, ..base.clone() }));
        }
        Pattern::If => {
            let distribution = a.distribution.first().copied().unwrap_or(Distribution::Random);
            configs.extend(a.probability.iter().map(|&probability| MicroConfig { distribution, probability, ..base.clone() }));
        }
    }
    let progress = Progress::new(configs.len() as u64, "micro");
    let mut records = Vec::new();
    for cfg in &configs {
        progress.message(format!("{} {}", cfg.kernel_name(), cfg.distribution.name()));
        records.push(micro::bench(gpu, cfg, &protocol)?);
        progress.step("");
    }
    progress.finish();
    Ok(records)
}

fn reproduce(gpu_args: &BenchGpuArgs, paper: &str, quick: bool, out: &Path, shard: Option<&str>, resume: bool) -> Result<()> {
    let shard: experiments::Shard = shard.map(str::parse).transpose()?.unwrap_or_else(experiments::Shard::whole);
    let selected = experiments::select(paper)?;
    let dir = experiments::OutputDir::open(out)?;
    let previous = dir.previous()?;
    let gpu = open_gpu(gpu_args)?;
    let t0 = std::time::Instant::now();
    let scale = if quick { experiments::Scale::Quick } else { experiments::Scale::Full };
    let env = harness::Environment::of(&gpu);
    let mut info = experiments::RunInfo {
        environment: env.clone(),
        scale,
        paper: paper.to_string(),
        shard_index: shard.index,
        shard_count: shard.count,
        header: Vec::new(),
    };
    let kept = if resume { experiments::resumable(previous, &info)? } else { Vec::new() };
    if !kept.is_empty() {
        eprintln!("resuming: {} points already in {}", kept.len(), out.display());
    }
    let header = |seconds: f64, note: &str| {
        vec![
            format!("adapter: {} ({}, {}), driver {}", env.adapter, env.backend, env.device_type, env.driver),
            format!("subgroup size: {}", env.subgroup_size.map_or("none".into(), |w| w.to_string())),
            format!("command: simtlab {}", std::env::args().skip(1).collect::<Vec<_>>().join(" ")),
            format!("git: {}; unix time {}; {seconds:.0} s{note}", env.git_hash, env.unix_time),
            format!("mode: {}; shard {}/{}", if quick { "quick" } else { "full" }, shard.index, shard.count),
        ]
    };
    let (outcomes, ended) = experiments::run_points(&gpu, &selected, scale, shard, kept, &INTERRUPTED, |so_far| {
        info.header = header(t0.elapsed().as_secs_f64(), " (in progress)");
        dir.write(&info, so_far)
    })?;
    let note = match ended {
        experiments::Ended::Complete => String::new(),
        experiments::Ended::Cancelled { remaining } => format!(" (interrupted, {remaining} points not run)"),
    };
    info.header = header(t0.elapsed().as_secs_f64(), &note);
    dir.write(&info, &outcomes)?;
    let failed = outcomes.iter().filter(|o| o.error.is_some()).count();
    let bad_checks = outcomes.iter().flat_map(|o| &o.records).filter(|r| !r.check.passed).count();
    println!("{} points, {failed} failed, {bad_checks} records failed their CPU check; report: {}", outcomes.len(), out.join("report.md").display());
    if let experiments::Ended::Cancelled { remaining } = ended {
        return Err(Error::Cancelled {
            what: "the reproduction".into(),
            kept: format!("{remaining} points were not run; the finished ones are in {}; add --resume to run the rest", out.display()),
        });
    }
    if failed > 0 || bad_checks > 0 {
        return Err(Error::invalid("reproduction", "some points failed; see the report"));
    }
    Ok(())
}

fn merge_reports(dirs: &[PathBuf], out: &Path, allow_mixed: bool) -> Result<()> {
    let (merged, header) = experiments::merge_dirs(dirs, out, allow_mixed)?;
    let dir = experiments::OutputDir::open(out)?;
    experiments::write_report(dir.path(), &merged, &header)?;
    for line in header.iter().filter(|l| l.starts_with("missing shards") || l.starts_with("mixed adapters")) {
        eprintln!("warning: {line}");
    }
    println!("{} points merged; report: {}", merged.len(), out.join("report.md").display());
    Ok(())
}

fn run(cli: &Cli) -> Result<()> {
    match &cli.command {
        Command::Reproduce { paper, quick, out, shard, resume, gpu } => reproduce(gpu, paper, *quick, out, shard.as_deref(), *resume),
        Command::Report { action: ReportAction::Merge { dirs, out, allow_mixed } } => merge_reports(dirs, out, *allow_mixed),
        Command::Devices { json, adapter } => devices(adapter, *json),
        Command::List { json } => list_workloads(*json),
        Command::Run { workload, params, scale, output, gpu } => run_workload(gpu, workload, params, scale, output),
        Command::Flowshop { command } => {
            let (command, options) = match command {
                FlowshopCommand::Instance(a) => (flowshop_cli::FlowshopCommand::Instance(a.clone()), GpuOptions::default()),
                FlowshopCommand::Bound(a) => (flowshop_cli::FlowshopCommand::Bound(a.clone()), GpuOptions::default()),
                FlowshopCommand::Solve { args, gpu } => (flowshop_cli::FlowshopCommand::Solve(args.clone()), gpu.options()),
            };
            print!("{}", flowshop_cli::run(&flowshop_cli::FlowshopArgs { command }, &options, &INTERRUPTED)?);
            if INTERRUPTED.load(Ordering::Relaxed) {
                return Err(Error::Cancelled { what: "the search".into(), kept: "the best schedule found so far is printed above (not proven optimal)".into() });
            }
            Ok(())
        }
        #[cfg(feature = "gui")]
        Command::Gui { family, run, adapter } => simtlab::ui::explorer::run(&adapter.options(None), family.as_deref(), *run),
        Command::Occupancy(args) => {
            println!("{}", simtlab::occupancy::run_cli(args)?);
            Ok(())
        }
        Command::Bench { family, gpu } => {
            let gpu = open_gpu(gpu)?;
            bench(&gpu, family)
        }
    }
}

fn list_workloads(json: bool) -> Result<()> {
    let all = simtlab::workload::registry();
    if json {
        let list: Vec<_> = all.iter().map(|w| w.describe()).collect();
        println!("{}", serde_json::to_string_pretty(&list).map_err(|e| Error::invalid("json", e.to_string()))?);
        return Ok(());
    }
    let width = all.iter().map(|w| w.name().len()).max().unwrap_or(0);
    for w in &all {
        println!("{:<width$}  {:<12}  {}", w.name(), w.family(), w.summary());
    }
    println!("\n`simtlab run NAME --scale tiny|quick|paper [--param name=value]...`; `simtlab list --json` shows every parameter");
    Ok(())
}

fn run_workload(gpu_args: &BenchGpuArgs, name: &str, params: &[String], scale: &str, output: &Output) -> Result<()> {
    use simtlab::workload::{self, Scale};
    let scale = match scale {
        "tiny" => Scale::Tiny,
        "quick" => Scale::Quick,
        _ => Scale::Full,
    };
    let w = workload::find(name)?;
    let overrides = params.iter().map(|p| workload::parse_override(p)).collect::<Result<Vec<_>>>()?;
    let values = workload::with_overrides(w.params(scale), &overrides).map_err(|e| match e {
        Error::InvalidParameter { message, .. } => Error::InvalidParameter { workload: name.into(), message },
        other => other,
    })?;
    let gpu = open_gpu(gpu_args)?;
    let records = w.run(&gpu, &values, &Protocol { warmup: output.warmup, samples: output.samples })?;
    finish(&records, output)
}

fn bench(gpu: &Gpu, family: &BenchFamily) -> Result<()> {
    match family {
        BenchFamily::Micro(a) => {
            let records = bench_micro(gpu, a)?;
            if a.pattern == Pattern::Loop {
                print_loop_slowdown(&records);
            }
            finish(&records, &a.output)
        }
        BenchFamily::Remap(a) => {
            let records = bench_remap(gpu, a)?;
            print_remap(&records);
            finish(&records, &a.output)
        }
        BenchFamily::Zhang(a) => {
            let records = zhang::bench_cli(gpu, &a.args)?;
            finish_files(&records, a.output.json.as_ref(), a.output.csv.as_ref())?;
            print!("\n{}", zhang::comparison(&records));
            Ok(())
        }
        BenchFamily::Pt(a) => {
            let protocol = Protocol { warmup: a.output.warmup, samples: a.output.samples };
            let records = simtlab::kernels::pt::cli::bench_cli(gpu, &a.pt, &protocol)?;
            print_pt_verdicts(&records);
            finish(&records, &a.output)
        }
        BenchFamily::Carrillo(c) => {
            let protocol = Protocol { warmup: c.output.warmup, samples: c.output.samples };
            let records = carrillo::bench_cli(gpu, &c.args, &protocol)?;
            let out = finish(&records, &c.output);
            print!("{}", carrillo::comparison_table(&records));
            if let Some(r) = records.iter().find(|r| r.kernel == "loop_split") {
                println!("loop split / loop fused: {:.3}", r.extra["split_over_fused"].as_f64().unwrap_or(f64::NAN));
            }
            out
        }
        BenchFamily::Matmul(c) => {
            let protocol = Protocol { warmup: c.output.warmup, samples: c.output.samples };
            let records = matmul::bench_cli(gpu, &c.args, &protocol)?;
            let out = finish(&records, &c.output);
            print!("{}", matmul::ladder_table(&records));
            out
        }
        BenchFamily::Flowshop(a) => {
            let records = flowshop_cli::bench_cli(gpu, a)?;
            let out = finish_files(&records, a.json.as_ref(), a.csv.as_ref());
            print!("\n{}", flowshop_cli::bench_tables(&records)?);
            out
        }
    }
}

fn bench_remap(gpu: &Gpu, a: &RemapArgs) -> Result<Vec<Record>> {
    use simtlab::kernels::micro::remapped;
    use simtlab::remap::Strategy;
    if a.kernel != "micro-loop" {
        return Err(Error::invalid("--kernel", format!("'{}': remapping runs on micro-loop", a.kernel)));
    }
    if a.pipeline == 0 && (a.workers.is_some() || a.trace.is_some()) {
        return Err(Error::invalid("--workers/--trace", "they apply to the chunked pipeline only; add --pipeline N (chunks)"));
    }
    let workers = a.workers.unwrap_or(4);
    if workers == 0 {
        return Err(Error::invalid("--workers", "at least one host worker thread is needed"));
    }
    let protocol = Protocol { warmup: a.output.warmup, samples: a.output.samples };
    let cfg = MicroConfig {
        n: a.n,
        seed: a.seed,
        short: a.short,
        long: a.long,
        distribution: a.distribution,
        tile_workgroup: a.tile_workgroup,
        tile_per_thread: a.tile_per_thread,
        defer_from: a.defer_from,
        defer_per_thread: a.defer_per_thread,
        defer_workgroups: a.defer_workgroups,
        ..Default::default()
    };
    let sorted = MicroConfig { distribution: Distribution::Sorted, ..cfg.clone() };
    let strategies = if a.strategy.is_empty() {
        vec![Strategy::None, Strategy::Redirect, Strategy::Lam, Strategy::GpuRegroup, Strategy::Tile, Strategy::Defer, Strategy::Auto]
    } else {
        a.strategy.clone()
    };
    let with_ideal = a.distribution == Distribution::OneLong;
    let progress = Progress::new(strategies.len() as u64 + 1 + (1 + with_ideal as u64) * (a.pipeline > 0) as u64, "remap");
    let mut records = Vec::new();
    for s in strategies {
        progress.message(s.to_string());
        records.push(remapped::bench_remap(gpu, &cfg, s, &protocol)?);
        progress.step("");
    }
    // the ideal: the same trips already sorted, unmapped (the sorted layout is the one-long
    // multiset's, so other distributions have no ideal row)
    if with_ideal {
        let mut ideal = remapped::bench_remap(gpu, &sorted, Strategy::None, &protocol)?;
        ideal.variant = "ideal (pre-sorted input)".into();
        records.push(ideal);
    }
    progress.step("");
    if a.pipeline > 0 {
        for (remap, input) in [(true, &cfg), (false, &sorted)].into_iter().filter(|(remap, _)| *remap || with_ideal) {
            let (mut rec, report) = remapped::bench_pipelined(gpu, input, a.pipeline, workers, remap)?;
            if !remap {
                rec.variant = format!("ideal pipelined ({} chunks)", a.pipeline);
            } else if let Some(p) = &a.trace {
                harness::write_file(p, report.to_chrome_trace().as_bytes())?;
                eprintln!("wrote {}", p.display());
            }
            records.push(rec);
            progress.step("");
        }
    }
    progress.finish();
    Ok(records)
}

/// Remap cost, divergence before/after and the decision, beside the timing table.
fn print_remap(records: &[Record]) {
    println!("strategy                     kernel     remap+restore  end to end  div. ratio W=32 before→after  decision");
    for r in records {
        let x = &r.extra;
        let f = |k: &str| x[k].as_f64().map_or("—".to_string(), harness::format_seconds);
        let remap = x["remap_s"].as_f64().unwrap_or(0.0) + x["restore_s"].as_f64().unwrap_or(0.0);
        let div = |k: &str| x[k]["divergence_ratio"].as_f64().map_or("—".into(), |v| format!("{v:.3}"));
        let decision = x["decision"]["reason"].as_str().unwrap_or("");
        let depth = x["depth_reached"].as_u64().map(|d| format!("pipeline depth {d}")).unwrap_or_default();
        println!(
            "{:<28} {:<10} {:<14} {:<11} {} → {}  {decision}{depth}",
            r.variant,
            f("kernel_s"),
            if x["remap_s"].is_null() { "—".into() } else { harness::format_seconds(remap) },
            x["end_to_end_s"].as_f64().map_or(harness::format_seconds(r.stats.median), harness::format_seconds),
            div("emulated_before"),
            div("emulated_after")
        );
    }
}

/// The headline of the loop sweep: how much the divergent layout costs over the sorted one.
fn print_loop_slowdown(records: &[Record]) {
    let median = |v: &str| records.iter().find(|r| r.variant == v).map(|r| r.stats.median);
    if let (Some(one), Some(sorted)) = (median("one-long"), median("sorted")) {
        println!("one-long over sorted (same work): {}", slower_or_faster(one, sorted));
    }
}

/// `time` against `baseline` in words: "2.48x slower", "1.30x faster".
fn slower_or_faster(time: f64, baseline: f64) -> String {
    if time >= baseline {
        format!("{:.2}x slower", time / baseline)
    } else {
        format!("{:.2}x faster", baseline / time)
    }
}

/// The tier each persistent-threads record ran at, and any fallback.
fn print_pt_verdicts(records: &[Record]) {
    for r in records {
        if let Some(f) = r.extra.get("fallbacks").and_then(|f| f.as_array()).filter(|f| !f.is_empty()) {
            println!("{} {}: {}", r.kernel, r.variant, f.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join("; "));
        }
        if r.kernel == "barrier" {
            if let Some(us) = r.extra.get("relaunch_us").and_then(|v| v.as_f64()) {
                println!("barrier {}: {:.2} us in-dispatch vs {:.2} us per relaunch", r.variant, r.stats.median * 1e6, us);
            }
        }
    }
}

/// Set by the first Ctrl-C in commands that can stop early (`reproduce`, `flowshop solve`):
/// they stop at their next safe point and keep what they finished. A second Ctrl-C ends the
/// process at once; other commands end at the first.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
fn install_signal_handlers(catch_interrupt: bool) {
    extern "C" fn on_interrupt(_: libc::c_int) {
        const MESSAGE: &[u8] = b"\ninterrupted: finishing the current step and keeping what is done (Ctrl-C again to quit now)\n";
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            // SAFETY: _exit is async-signal-safe
            unsafe { libc::_exit(130) };
        }
        // SAFETY: write(2) is async-signal-safe and the buffer is static
        unsafe { libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len()) };
    }
    // SAFETY: plain signal dispositions, set before any other thread exists
    unsafe {
        // a closed pipe (`simtlab ... | head`) ends the process quietly, as it does for cat
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        if catch_interrupt {
            libc::signal(libc::SIGINT, on_interrupt as *const () as libc::sighandler_t);
        }
    }
}

#[cfg(not(unix))]
fn install_signal_handlers(_catch_interrupt: bool) {}

fn main() {
    let cli = Cli::parse();
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
    if let Err(e) = run(&cli) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
