//! `simtlab bench zhang`: Zhang's section 5 benchmarks, original vs redirection.

use crate::output::{finish_files, say, Output};
use crate::value::choice;
use clap::Args;
use simtlab::experiments::zhang::{self, Benchmark, BenchmarkSweep};
use simtlab::harness::{self, Protocol, Record};
use simtlab::remap::{Variants, ORIGINAL};
use simtlab::{Gpu, Result};

/// Help lines of [`Variants`]' values.
pub const VARIANTS: &[(Variants, &str)] = &[
    (Variants::None, "The original kernel only"),
    (Variants::Redirect, "The reference-redirection variant only (with the original as the baseline it needs)"),
    (Variants::All, "Every variant the kernel has"),
];

#[derive(Args)]
pub struct ZhangCli {
    #[command(flatten)]
    pub args: ZhangArgs,
    #[command(flatten)]
    pub output: Output,
}

/// `simtlab bench zhang` arguments.
#[derive(Args, Clone, Debug)]
pub struct ZhangArgs {
    /// Which benchmark of Zhang et al. section 5.
    #[arg(long, value_parser = choice::<Benchmark>(&[]), default_value = "all")]
    pub kernel: Benchmark,
    /// none: the original kernels; redirect: original vs reference redirection; all: every variant.
    #[arg(long, value_parser = choice::<Variants>(VARIANTS), default_value = "all")]
    pub strategy: Variants,
    /// Problem sizes (comma list): lbm = lattice edge (cells = n³), gafort = children,
    /// mcubes = grid edge (voxels = n³), reduction = elements, blackscholes = options.
    /// Default: each benchmark's own sizes (reduction: 2^21..2^25 as in Table 5), smaller on
    /// a CPU adapter (lavapipe, llvmpipe; reduction: 2^18, 2^20) where those take minutes.
    #[arg(long, value_delimiter = ',')]
    pub n: Vec<usize>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Reduction only: first-pass workgroups of the `fast` kernel to try (comma list, each
    /// 1..=65532, rounded up to a multiple of 4); default: one choice from the size.
    #[arg(long, value_delimiter = ',')]
    pub reduction_groups: Vec<usize>,
}

impl ZhangArgs {
    /// The sweep these options ask for, timed by `protocol`.
    pub fn sweep(&self, protocol: Protocol) -> BenchmarkSweep {
        BenchmarkSweep {
            benchmark: self.kernel,
            variants: self.strategy,
            n: self.n.clone(),
            seed: self.seed,
            protocol,
            reduction_groups: self.reduction_groups.clone(),
        }
    }
}

pub fn run(gpu: &Gpu, a: &ZhangCli) -> Result<()> {
    let records = zhang::run_benchmarks(gpu, &a.args.sweep(a.output.protocol()))?;
    finish_files(&records, a.output.json.as_ref(), a.output.csv.as_ref())?;
    say!("\n{}", comparison_table(&records));
    Ok(())
}

/// The paper's view: per benchmark and size, time org/opt, divergence org/opt and speedup of
/// each variant over the original (`org`) run of the same call.
fn comparison_table(records: &[Record]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<14} {:<22} {:>12} {:>12} {:>9} {:>9} {:>9} {:>9} {:>8}  throughput opt",
        "kernel", "variant vs org", "time org", "time opt", "div org", "div opt", "w32 org", "w32 opt", "speedup"
    );
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{:.1}%", 100.0 * v));
    for org in records.iter().filter(|r| r.variant == ORIGINAL) {
        let same = |r: &&Record| r.kernel == org.kernel && r.params == org.params && r.variant != ORIGINAL;
        let others: Vec<&Record> = records.iter().filter(same).collect();
        let rows: Vec<Option<&Record>> = if others.is_empty() { vec![None] } else { others.into_iter().map(Some).collect() };
        for opt in rows {
            let t_opt = opt.map(|o| o.stats.median);
            let _ = writeln!(
                s,
                "{:<14} {:<22} {:>12} {:>12} {:>9} {:>9} {:>9} {:>9} {:>8}  {}",
                org.kernel,
                opt.map_or("(org only)".to_string(), |o| o.variant.clone()),
                harness::format_seconds(org.stats.median),
                t_opt.map_or("-".into(), harness::format_seconds),
                pct(zhang::native_ratio(org)),
                pct(opt.and_then(zhang::native_ratio)),
                pct(zhang::w32_ratio(org)),
                pct(opt.and_then(zhang::w32_ratio)),
                t_opt.map_or("-".into(), |t| format!("{:.2}x", org.stats.median / t)),
                opt.or(Some(org)).and_then(|r| r.throughput.as_ref()).map_or("-".into(), |t| format!("{:.3} {}", t.value, t.unit)),
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ArgsOnly;

    /// A CPU adapter's default sizes stay below a bound; a GPU's are the paper's.
    #[test]
    fn cpu_adapters_default_to_smaller_sizes() {
        use zhang::default_sizes;
        assert_eq!(default_sizes(Benchmark::Reduction, false), [1 << 21, 1 << 22, 1 << 23, 1 << 24, 1 << 25]);
        assert_eq!(default_sizes(Benchmark::Lbm, false), [64]);
        assert_eq!(default_sizes(Benchmark::Mcubes, false), [128]);
        assert_eq!(default_sizes(Benchmark::Gafort, false), [1 << 16]);
        assert_eq!(default_sizes(Benchmark::Blackscholes, false), [1 << 22]);
        assert!(default_sizes(Benchmark::Reduction, true).iter().sum::<usize>() <= 1 << 21);
        for b in [Benchmark::Lbm, Benchmark::Gafort, Benchmark::Mcubes, Benchmark::Reduction, Benchmark::Blackscholes] {
            let (cpu, gpu) = (default_sizes(b, true), default_sizes(b, false));
            assert!(!cpu.is_empty() && cpu.iter().max() < gpu.iter().min(), "{b:?}: {cpu:?} vs {gpu:?}");
        }
    }

    /// Each original run is a row beside every variant of the same size, with its speedup.
    #[test]
    fn comparison_puts_each_variant_beside_its_original() {
        let gpu = Gpu::new(&Default::default()).unwrap();
        let args = ArgsOnly::<ZhangCli>::parse_words("--kernel gafort --n 256 --samples 1 --warmup 0 --seed 3").unwrap();
        let records = zhang::run_benchmarks(&gpu, &args.args.sweep(args.output.protocol())).unwrap();
        assert!(records.iter().all(|r| r.check.passed));
        let table = comparison_table(&records);
        let rows: Vec<&str> = table.lines().collect();
        assert!(rows[0].contains("speedup"), "{table}");
        assert_eq!(rows.len(), records.len(), "a row per variant beside the original: {table}");
        assert!(rows[1..].iter().all(|r| r.starts_with(&records[0].kernel)), "{table}");
        assert!(table.contains("redirect"), "{table}");
    }
}
