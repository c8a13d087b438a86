//! `simtlab bench FAMILY`: each family's sweep, its table and its headline.

use crate::output::{finish, finish_files, Output};
use clap::{Args, Subcommand};
use simtlab::harness::{self, Progress, Protocol, Record};
use simtlab::kernels::carrillo::{self, CarrilloArgs};
use simtlab::kernels::flowshop::cli as flowshop_cli;
use simtlab::kernels::matmul::{self, MatmulArgs};
use simtlab::kernels::micro::{self, Distribution, MicroConfig, Pattern};
use simtlab::kernels::zhang::{self, ZhangArgs};
use simtlab::{Error, Gpu, Result};
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum BenchFamily {
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
pub struct RemapArgs {
    /// The kernel to remap (micro-loop: the data-dependent loop).
    #[arg(long, default_value = "micro-loop")]
    pub kernel: String,
    /// Strategies to run (none, redirect, lam, gpu, tile, defer, auto); default all.
    #[arg(long, value_delimiter = ',')]
    pub strategy: Vec<simtlab::remap::Strategy>,
    #[arg(long, value_enum, default_value = "one-long")]
    pub distribution: Distribution,
    #[arg(long, default_value_t = 1 << 20)]
    pub n: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, default_value_t = 16)]
    pub short: u32,
    #[arg(long, default_value_t = 512)]
    pub long: u32,
    /// Tile sort: invocations per workgroup.
    #[arg(long, default_value_t = simtlab::kernels::micro::TILE_WORKGROUP)]
    pub tile_workgroup: u32,
    /// Tile sort: elements per invocation (a tile is workgroup × this many elements).
    #[arg(long, default_value_t = simtlab::kernels::micro::TILE_PER_THREAD)]
    pub tile_per_thread: u32,
    /// Deferral: loops of at least this many trips run in the second pass (default: the
    /// threshold the emulation finds best).
    #[arg(long)]
    pub defer_from: Option<u32>,
    /// Deferral: elements per invocation in the first pass (1..=32).
    #[arg(long, default_value_t = simtlab::kernels::micro::DEFER_PER_THREAD)]
    pub defer_per_thread: u32,
    /// Deferral: workgroups of the second pass (its invocations stride over the deferred loops).
    #[arg(long, default_value_t = simtlab::kernels::micro::DEFER_WORKGROUPS)]
    pub defer_workgroups: u32,
    /// Also run the chunked CPU-GPU pipeline with this many chunks (0: off).
    #[arg(long, default_value_t = 0)]
    pub pipeline: usize,
    /// Host worker threads of the pipeline (with --pipeline; default 4).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Write the pipeline's timeline as a chrome trace (chrome://tracing, Perfetto; with --pipeline).
    #[arg(long)]
    pub trace: Option<PathBuf>,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Args)]
pub struct CarrilloCli {
    #[command(flatten)]
    pub args: CarrilloArgs,
    #[command(flatten)]
    pub output: Output,
}
#[derive(Args)]
pub struct PtBenchArgs {
    #[command(flatten)]
    pub pt: simtlab::kernels::pt::cli::PtArgs,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Args)]
pub struct MatmulCli {
    #[command(flatten)]
    pub args: MatmulArgs,
    #[command(flatten)]
    pub output: Output,
}


#[derive(Args)]
pub struct ZhangCli {
    #[command(flatten)]
    pub args: ZhangArgs,
    #[command(flatten)]
    pub output: ZhangOutput,
}

/// Output files of `bench zhang` (samples and warm-up are in ZhangArgs).
#[derive(Args)]
pub struct ZhangOutput {
    /// Write all records as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write all records as CSV.
    #[arg(long)]
    pub csv: Option<PathBuf>,
}

#[derive(Args)]
pub struct MicroArgs {
    #[arg(long, value_enum, default_value = "loop")]
    pub pattern: Pattern,
    /// Trip-count layouts to sweep (loop) or random/sorted values (if). Default: all that apply.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub distribution: Vec<Distribution>,
    /// Threads (elements).
    #[arg(long, default_value_t = 1 << 20)]
    pub n: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// if: fractions of threads on the expensive path to sweep.
    #[arg(long, value_delimiter = ',', default_value = "0,0.1,0.5,0.9,1")]
    pub probability: Vec<f64>,
    /// if: mixing rounds on the expensive path.
    #[arg(long, default_value_t = 256)]
    pub heavy: u32,
    /// loop: short and long trip counts.
    #[arg(long, default_value_t = 16)]
    pub short: u32,
    #[arg(long, default_value_t = 512)]
    pub long: u32,
    /// loop: width of the groups that get one long lane (32 = an NVIDIA warp).
    #[arg(long, default_value_t = 32)]
    pub group: u32,
    #[command(flatten)]
    pub output: Output,
}


pub fn bench_micro(gpu: &Gpu, a: &MicroArgs) -> Result<Vec<Record>> {
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


pub fn run(gpu: &Gpu, family: &BenchFamily) -> Result<()> {
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

pub fn bench_remap(gpu: &Gpu, a: &RemapArgs) -> Result<Vec<Record>> {
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
pub fn print_remap(records: &[Record]) {
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
pub fn print_loop_slowdown(records: &[Record]) {
    let median = |v: &str| records.iter().find(|r| r.variant == v).map(|r| r.stats.median);
    if let (Some(one), Some(sorted)) = (median("one-long"), median("sorted")) {
        println!("one-long over sorted (same work): {}", slower_or_faster(one, sorted));
    }
}

/// `time` against `baseline` in words: "2.48x slower", "1.30x faster".
pub fn slower_or_faster(time: f64, baseline: f64) -> String {
    if time >= baseline {
        format!("{:.2}x slower", time / baseline)
    } else {
        format!("{:.2}x faster", baseline / time)
    }
}

/// The tier each persistent-threads record ran at, and any fallback.
pub fn print_pt_verdicts(records: &[Record]) {
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
