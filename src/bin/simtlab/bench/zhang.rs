//! `simtlab bench zhang`: Zhang's section 5 benchmarks, original vs redirection.

use crate::output::finish_files;
use crate::output::say;
use crate::value::{described, named};
use clap::Args;
use simtlab::experiments::zhang::{self, Benchmark, BenchmarkSweep};
use simtlab::harness::Protocol;
use simtlab::remap::Variants;
use simtlab::{Gpu, Result};
use std::path::PathBuf;

pub const BENCHMARKS: &[&str] = &["lbm", "gafort", "mcubes", "reduction", "blackscholes", "all"];
pub const VARIANTS: &[(&str, &str)] = &[
    ("none", "The original kernel only"),
    ("redirect", "The reference-redirection variant only (with the original as the baseline it needs)"),
    ("all", "Every variant the kernel has"),
];

#[derive(Args)]
pub struct ZhangCli {
    #[command(flatten)]
    pub args: ZhangArgs,
    #[command(flatten)]
    pub output: ZhangOutput,
}

/// `simtlab bench zhang` arguments.
#[derive(Args, Clone, Debug)]
pub struct ZhangArgs {
    /// Which benchmark of Zhang et al. section 5.
    #[arg(long, value_parser = named::<Benchmark>(BENCHMARKS), default_value = "all")]
    pub kernel: Benchmark,
    /// none: the original kernels; redirect: original vs reference redirection; all: every variant.
    #[arg(long, value_parser = described::<Variants>(VARIANTS), default_value = "all")]
    pub strategy: Variants,
    /// Problem sizes (comma list): lbm = lattice edge (cells = n³), gafort = children,
    /// mcubes = grid edge (voxels = n³), reduction = elements, blackscholes = options.
    /// Default: each benchmark's own sizes (reduction: 2^21..2^25 as in Table 5).
    #[arg(long, value_delimiter = ',')]
    pub n: Vec<usize>,
    /// Timed samples per configuration (after warm-up).
    #[arg(long, default_value_t = 10)]
    pub samples: usize,
    /// Untimed warm-up runs per configuration.
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Reduction only: first-pass workgroups of the `fast` kernel to try (comma list, each
    /// 1..=65532, rounded up to a multiple of 4); default: one choice from the size.
    #[arg(long, value_delimiter = ',')]
    pub reduction_groups: Vec<usize>,
}

impl ZhangArgs {
    pub fn sweep(&self) -> BenchmarkSweep {
        BenchmarkSweep {
            benchmark: self.kernel,
            variants: self.strategy,
            n: self.n.clone(),
            seed: self.seed,
            protocol: Protocol { warmup: self.warmup, samples: self.samples },
            reduction_groups: self.reduction_groups.clone(),
        }
    }
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

pub fn run(gpu: &Gpu, a: &ZhangCli) -> Result<()> {
    let records = zhang::run_benchmarks(gpu, &a.args.sweep())?;
    finish_files(&records, a.output.json.as_ref(), a.output.csv.as_ref())?;
    say!("\n{}", zhang::comparison(&records));
    Ok(())
}
