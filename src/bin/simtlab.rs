//! The simtlab command line: devices, benchmarks, the occupancy calculator, the explorer.

use clap::{Args, Parser, Subcommand};
use simtlab::gpu::{self, GpuOptions};
use simtlab::harness::{self, Progress, Protocol, Record};
use simtlab::kernels::carrillo::{self, CarrilloArgs};
use simtlab::kernels::matmul::{self, MatmulArgs};
use simtlab::kernels::micro::{self, Distribution, MicroConfig, Pattern};
use simtlab::{Error, Gpu, Result};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "simtlab", version, about = "Measure, explain and remove SIMT divergence on any GPU (wgpu)")]
struct Cli {
    /// Backends to use (vulkan, gl, metal, dx12; comma list). Default: WGPU_BACKEND or all.
    #[arg(long, global = true)]
    backend: Option<String>,
    /// Part of the adapter name to use. Default: WGPU_ADAPTER_NAME or the best adapter.
    #[arg(long, global = true)]
    adapter: Option<String>,
    /// Seconds to wait for one GPU submission before reporting a hang.
    #[arg(long, global = true, default_value_t = 60.0)]
    timeout: f64,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every adapter with its measured subgroup size and the features that matter.
    Devices {
        #[arg(long)]
        json: bool,
    },
    /// Run a benchmark family.
    Bench {
        #[command(subcommand)]
        family: BenchFamily,
    },
}

#[derive(Subcommand)]
enum BenchFamily {
    /// Zhang's Figure 1 patterns: a data-dependent if and a data-dependent loop.
    Micro(MicroArgs),
    /// Carrillo's branch splitting (branched vs split kernels over a decision-mask sweep) and
    /// loop splitting.
    Carrillo(CarrilloCli),
    /// Ryoo's matrix-multiplication ladder (naive, tiled, unrolled, prefetch) and a
    /// register-tiled kernel: GFLOPS, threads and workgroup memory per thread.
    Matmul(MatmulCli),
}

#[derive(Args)]
struct CarrilloCli {
    #[command(flatten)]
    args: CarrilloArgs,
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

fn open_gpu(cli: &Cli) -> Result<Gpu> {
    let options = GpuOptions {
        backend: cli.backend.clone(),
        adapter: cli.adapter.clone(),
        timeout: Some(Duration::from_secs_f64(cli.timeout.max(0.1))),
    };
    let gpu = Gpu::new(&options)?;
    eprintln!("adapter: {} [{}], subgroup size {}", gpu.adapter_name(), gpu.info.driver, match gpu.caps.subgroup_size {
        Some(w) => w.to_string(),
        None => "n/a (no subgroups: divergence comes from host emulation; for a probe on a CPU machine install \
                 lavapipe: apt-get install mesa-vulkan-drivers libvulkan1)"
            .into(),
    });
    Ok(gpu)
}

fn devices(cli: &Cli, json: bool) -> Result<()> {
    let options = GpuOptions { backend: cli.backend.clone(), adapter: cli.adapter.clone(), timeout: None };
    let reports = gpu::survey(&options)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&reports).map_err(|e| Error::invalid("json", e.to_string()))?);
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
    print!("{}", harness::table(records));
    if let Some(p) = &output.json {
        harness::write_json(p, records)?;
        eprintln!("wrote {}", p.display());
    }
    if let Some(p) = &output.csv {
        harness::write_csv(p, records)?;
        eprintln!("wrote {}", p.display());
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

fn run(cli: &Cli) -> Result<()> {
    match &cli.command {
        Command::Devices { json } => devices(cli, *json),
        Command::Bench { family } => match family {
            BenchFamily::Micro(a) => {
                let gpu = open_gpu(cli)?;
                let records = bench_micro(&gpu, a)?;
                if a.pattern == Pattern::Loop {
                    print_loop_slowdown(&records);
                }
                finish(&records, &a.output)
            }
            BenchFamily::Carrillo(c) => {
                let gpu = open_gpu(cli)?;
                let protocol = Protocol { warmup: c.output.warmup, samples: c.output.samples };
                let records = carrillo::bench_cli(&gpu, &c.args, &protocol)?;
                let out = finish(&records, &c.output);
                print!("{}", carrillo::comparison_table(&records));
                if let Some(r) = records.iter().find(|r| r.kernel == "loop_split") {
                    println!("loop split / loop fused: {:.3}", r.extra["split_over_fused"].as_f64().unwrap_or(f64::NAN));
                }
                out
            }
            BenchFamily::Matmul(c) => {
                let gpu = open_gpu(cli)?;
                let protocol = Protocol { warmup: c.output.warmup, samples: c.output.samples };
                let records = matmul::bench_cli(&gpu, &c.args, &protocol)?;
                let out = finish(&records, &c.output);
                print!("{}", matmul::ladder_table(&records));
                out
            }
        },
    }
}

/// The headline of the loop sweep: how much the divergent layout costs over the sorted one.
fn print_loop_slowdown(records: &[Record]) {
    let median = |v: &str| records.iter().find(|r| r.variant == v).map(|r| r.stats.median);
    if let (Some(one), Some(sorted)) = (median("one-long"), median("sorted")) {
        println!("one-long over sorted (same work): {:.2}x slower", one / sorted);
    }
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(&cli) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
