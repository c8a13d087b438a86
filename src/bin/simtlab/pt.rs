//! `simtlab pt`: run and time a user's kernel written against the public persistent-threads
//! module (global barrier, queue claims); `simtlab graph`: a seeded random graph and its
//! breadth-first levels as raw files for such a kernel.

use crate::gpu_args::GpuArgs;
use crate::output::print_text;
use crate::profile::{parse_positive, specs, writable, ShaderInput};
use clap::Args;
use simtlab::harness::{self, format_seconds, write_file, Record};
use simtlab::pt::graph::{bfs_levels, random_graph, UNREACHED};
use simtlab::pt::user::{self, PtRequest, PtRun, QueueOptions};
use simtlab::pt::{PtOptions, Runtime};
use simtlab::{Error, Gpu, Result};
use std::path::PathBuf;

/// Arguments of the `pt` subcommand.
#[derive(Args, Clone)]
pub struct PtArgs {
    #[command(flatten)]
    pub input: ShaderInput,
    /// Expected final contents of a binding the kernel writes (repeatable): B=SPEC, compared
    /// word for word (e.g. B=file:levels.bin).
    #[arg(long = "expect", value_name = "B=SPEC")]
    pub expect: Vec<String>,
    /// Dispatches of the kernel per run, in one pass (each sees the previous one's writes).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub dispatches: u32,
    /// Ring slots of the queue (pt_push / pt_pop).
    #[arg(long, default_value_t = user::DEFAULT_CAPACITY, value_parser = clap::value_parser!(u32).range(1..))]
    pub capacity: u32,
    /// Most polls one wait may take before the kernel stops with an error.
    #[arg(long, default_value_t = simtlab::pt::DEFAULT_SPIN_CAP, value_parser = clap::value_parser!(u32).range(1..))]
    pub spin_cap: u32,
    /// A kernel computing the same with one dispatch per phase instead of global barriers, run
    /// after the first from the same --bind contents and checked against the same --expect.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// The baseline's entry point (default: --entry).
    #[arg(long, value_name = "E", requires = "baseline")]
    pub baseline_entry: Option<String>,
    /// The baseline's workgroups per dispatch: X, X,Y or X,Y,Z.
    #[arg(long, value_name = "X[,Y,Z]", requires = "baseline", value_parser = crate::profile::parse_workgroups)]
    pub baseline_workgroups: Option<[u32; 3]>,
    /// The baseline's dispatches per run (one per phase).
    #[arg(long, value_name = "N", requires = "baseline", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub baseline_dispatches: u32,
    /// Timed runs of each kernel (the median is reported).
    #[arg(long, default_value_t = 5, value_parser = parse_positive)]
    pub samples: usize,
    /// Write the records as JSON (`-` = standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub gpu: GpuArgs,
}

fn describe(run: &PtRun) -> String {
    let mut text = format!("{} '{}': {}", run.file, run.entry, run.plan.used.label());
    text += &match run.plan.used {
        simtlab::pt::Tier::Multi => format!(", {:?} workgroups x {} dispatch(es)\n", run.workgroups, run.dispatches),
        _ => format!(
            ", {} workgroups launched, {} participating (module at group {})\n",
            run.workgroups.iter().product::<u32>(),
            run.participants,
            run.group
        ),
    };
    if let Some(w) = &run.waits_at {
        text += &format!("  waits: {w}\n");
    }
    text += &format!("  fallback: {}\n", run.plan.message().unwrap_or_else(|| "none".into()));
    text += &format!("  time ({:?}, median of {}): {}\n", run.stats.source, run.stats.samples.len(), format_seconds(run.stats.median));
    for c in &run.checks {
        text += &match (&c.check.passed, &c.check.first_mismatch) {
            (true, _) => format!("  {}: {} words as expected\n", c.binding, c.check.checked),
            (false, m) => format!(
                "  {}: {} of {} words DIFFER (first {})\n",
                c.binding,
                c.check.mismatches,
                c.check.checked,
                m.as_deref().unwrap_or("?")
            ),
        };
    }
    text
}

pub fn run(args: &PtArgs) -> Result<()> {
    let (file, wgsl) = args.input.source()?;
    let bindings = args.input.bindings()?;
    let expect = specs(&args.expect, "--expect")?;
    if let Some(path) = &args.json {
        writable(path)?;
    }
    let gpu = Gpu::new(&args.gpu.options())?;
    let runtime = Runtime::new(PtOptions { spin_cap: args.spin_cap, ..Default::default() });
    let queue = QueueOptions { capacity: args.capacity };
    let request = PtRequest {
        file: &file,
        wgsl: &wgsl,
        entry: &args.input.entry,
        bindings: bindings.clone(),
        workgroups: args.input.workgroups,
        dispatches: args.dispatches,
        samples: args.samples,
        expect: expect.clone(),
        queue,
    };
    let mut text = format!("adapter: {} [{}]\n", gpu.adapter_name(), gpu.info().driver);
    let first = user::run(&gpu, &runtime, &request)?;
    text += &describe(&first);
    let mut records: Vec<Record> = vec![first.record(&gpu)];
    if let Some(path) = &args.baseline {
        let base_wgsl = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let base_file = path.display().to_string();
        let entry = args.baseline_entry.clone().unwrap_or_else(|| args.input.entry.clone());
        let base = user::run(
            &gpu,
            &runtime,
            &PtRequest {
                file: &base_file,
                wgsl: &base_wgsl,
                entry: &entry,
                workgroups: args.baseline_workgroups,
                dispatches: args.baseline_dispatches,
                ..request.clone()
            },
        )?;
        text += &describe(&base);
        text += &format!("baseline / persistent: {:.2}x\n", base.stats.median / first.stats.median);
        records.push(base.record(&gpu));
    }
    print_text(&text, args.json.as_ref());
    if let Some(path) = &args.json {
        harness::write_json(path, &records)?;
        if path.as_os_str() != "-" {
            eprintln!("wrote {}", path.display());
        }
    }
    if let Some(r) = records.iter().find(|r| !r.check.passed) {
        let failed = records.iter().filter(|r| !r.check.passed).count();
        return Err(Error::CheckFailed {
            failed,
            total: records.len(),
            first: format!("{} {}: {}", r.kernel, r.variant, r.check.first_mismatch.as_deref().unwrap_or("see above")),
        });
    }
    Ok(())
}

/// Arguments of the `graph` subcommand.
#[derive(Args, Clone)]
pub struct GraphArgs {
    /// Directory for offsets.bin, edges.bin, level_init.bin, counts_init.bin and levels.bin
    /// (raw little-endian u32).
    pub out: PathBuf,
    /// Vertices.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(2..))]
    pub vertices: u32,
    /// Mean out-degree (degrees uniform in 1..=2·D-1).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub degree: u32,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Writes a random graph, the initial state of a breadth-first search from vertex 0 and its
/// CPU reference levels.
pub fn graph(args: &GraphArgs) -> Result<()> {
    let g = random_graph(args.vertices, args.degree, args.seed)?;
    let levels = bfs_levels(&g, 0);
    let mut init = vec![UNREACHED; g.vertices()];
    init[0] = 0;
    // counts[0]: round 0's frontier holds the source; [3]: the round of a per-level relaunch
    let counts = [1u32, 0, 0, 0, 0, 0, 0, 0];
    std::fs::create_dir_all(&args.out).map_err(|e| Error::io(&args.out, e))?;
    for (name, words) in [
        ("offsets.bin", &g.offsets[..]),
        ("edges.bin", &g.edges[..]),
        ("level_init.bin", &init[..]),
        ("counts_init.bin", &counts[..]),
        ("levels.bin", &levels[..]),
    ] {
        write_file(&args.out.join(name), bytemuck::cast_slice(words))?;
    }
    let depth = levels.iter().filter(|&&l| l != UNREACHED).max().copied().unwrap_or(0);
    let reached = levels.iter().filter(|&&l| l != UNREACHED).count();
    println!(
        "vertices {} edges {} depth {depth} reached {reached} (seed {}) in {}",
        g.vertices(),
        g.edges.len(),
        args.seed,
        args.out.display()
    );
    Ok(())
}
