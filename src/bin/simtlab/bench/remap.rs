//! `simtlab bench remap`: thread-data remapping of the divergent loop.

use crate::bench::micro::LoopSize;
use crate::output::sayln;
use crate::output::{finish, Output};
use crate::value::choice;
use clap::Args;
use simtlab::divergence::DivergenceSummary;
use simtlab::harness::{self, Progress, Record};
use simtlab::kernels::micro::remapped::{PipelinedFigures, RemapFigures};
use simtlab::kernels::micro::{Distribution, MicroConfig};
use simtlab::{Error, Gpu, Result};
use std::path::PathBuf;

/// Help lines of [`Distribution`]'s values.
pub const DISTRIBUTIONS: &[(Distribution, &str)] = &[
    (Distribution::Uniform, "Every thread runs the same (mean) trip count: no divergence"),
    (Distribution::OneLong, "In each group of `group` threads one random lane runs `long` trips, the others `short`"),
    (Distribution::Random, "Trip counts uniform in [short, long]"),
    (Distribution::Sorted, "The one-long multiset sorted ascending: the same work, long lanes side by side"),
];

#[derive(Args)]
pub struct RemapArgs {
    /// The kernel to remap (micro-loop: the data-dependent loop).
    #[arg(long, default_value = "micro-loop")]
    pub kernel: String,
    /// Strategies to run (none, redirect, lam, gpu, tile, defer, auto); default all.
    #[arg(long, value_parser = choice::<simtlab::remap::Strategy>(&[]), value_delimiter = ',')]
    pub strategy: Vec<simtlab::remap::Strategy>,
    #[arg(long, value_parser = choice::<Distribution>(DISTRIBUTIONS), default_value = "one-long")]
    pub distribution: Distribution,
    #[command(flatten)]
    pub size: LoopSize,
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
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// What earlier runs on this adapter taught auto's cost model (JSON): read when the file
    /// exists, and written back with what this run's strategies measured learned.
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    #[command(flatten)]
    pub output: Output,
}

pub fn run(gpu: &Gpu, a: &RemapArgs) -> Result<()> {
    if let Some(path) = &a.calibration {
        crate::profile::writable(path)?;
    }
    let records = bench_remap(gpu, a)?;
    print_remap(&records);
    // what the strategies measured beside auto's prediction corrects the model for the next run
    if let Some(learned) = simtlab::kernels::micro::remapped::learn(&records) {
        let (calibration, lessons) = learned?;
        for lesson in &lessons {
            sayln!("learned on this adapter: {lesson}");
        }
        if let Some(path) = &a.calibration {
            harness::write_file(path, calibration.to_json().as_bytes())?;
            eprintln!("wrote {}", path.display());
        }
    }
    finish(&records, &a.output)
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
    let protocol = a.output.protocol();
    let cfg = MicroConfig {
        distribution: a.distribution,
        tile_workgroup: a.tile_workgroup,
        tile_per_thread: a.tile_per_thread,
        defer_from: a.defer_from,
        defer_per_thread: a.defer_per_thread,
        defer_workgroups: a.defer_workgroups,
        ..a.size.config()
    };
    let sorted = MicroConfig { distribution: Distribution::Sorted, ..cfg.clone() };
    let strategies = if a.strategy.is_empty() {
        vec![Strategy::None, Strategy::Redirect, Strategy::Lam, Strategy::GpuRegroup, Strategy::Tile, Strategy::Defer, Strategy::Auto]
    } else {
        a.strategy.clone()
    };
    let with_ideal = a.distribution == Distribution::OneLong;
    let progress = Progress::new(strategies.len() as u64 + 1 + (1 + with_ideal as u64) * (a.pipeline > 0) as u64, "remap");
    // auto decides with what earlier runs measured on this adapter
    let auto = MicroConfig { calibration: crate::remap::read_calibration(a.calibration.as_ref())?, ..cfg.clone() };
    let mut records = Vec::new();
    for s in strategies {
        progress.message(s.to_string());
        records.push(remapped::bench_remap(gpu, if s == Strategy::Auto { &auto } else { &cfg }, s, &protocol)?);
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
    sayln!("strategy                     kernel     remap+restore  end to end  div. ratio W=32 before→after  decision");
    for r in records {
        let x = r.extra_as::<RemapFigures>();
        let seconds = |f: fn(&RemapFigures) -> f64| x.as_ref().map_or("—".to_string(), |x| harness::format_seconds(f(x)));
        let div = |d: fn(&RemapFigures) -> DivergenceSummary| x.as_ref().map_or("—".into(), |x| format!("{:.3}", d(x).divergence_ratio));
        let decision = x.as_ref().and_then(|x| x.decision.as_ref()).map_or("", |d| &d.reason);
        let depth = r.extra_as::<PipelinedFigures>().map(|p| format!("pipeline depth {}", p.depth_reached)).unwrap_or_default();
        sayln!(
            "{:<28} {:<10} {:<14} {:<11} {} → {}  {decision}{depth}",
            r.variant,
            seconds(|x| x.kernel_s),
            seconds(|x| x.remap_s + x.restore_s),
            harness::format_seconds(x.as_ref().map_or(r.stats.median, |x| x.end_to_end_s)),
            div(|x| x.emulated_before),
            div(|x| x.emulated_after)
        );
    }
}
