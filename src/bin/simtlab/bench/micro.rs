//! `simtlab bench micro`: Zhang's Figure 1 patterns.

use crate::output::sayln;
use crate::output::{finish, Output};
use crate::value::choice;
use clap::Args;
use simtlab::harness::{Named, Record};
use simtlab::kernels::micro::{Distribution, MicroConfig, Pattern};
use simtlab::workload::{self, Run};
use simtlab::{Gpu, Result};

#[derive(Args)]
pub struct MicroArgs {
    #[arg(long, value_parser = choice::<Pattern>(&[]), default_value = "loop")]
    pub pattern: Pattern,
    /// Trip-count layouts to sweep (loop) or random/sorted values (if). Default: all that apply.
    #[arg(long, value_parser = choice::<Distribution>(&[]), value_delimiter = ',')]
    pub distribution: Vec<Distribution>,
    #[command(flatten)]
    pub size: LoopSize,
    /// if: fractions of threads on the expensive path to sweep.
    #[arg(long, value_delimiter = ',', default_value = "0,0.1,0.5,0.9,1")]
    pub probability: Vec<f64>,
    /// if: mixing rounds on the expensive path.
    #[arg(long, default_value_t = 256)]
    pub heavy: u32,
    /// loop: width of the groups that get one long lane (32 = an NVIDIA warp).
    #[arg(long, default_value_t = 32)]
    pub group: u32,
    #[command(flatten)]
    pub output: Output,
}

/// Threads and trip counts of the divergent loop, shared by `bench micro` and `bench remap`.
#[derive(Args)]
pub struct LoopSize {
    /// Threads (elements).
    #[arg(long, default_value_t = 1 << 20)]
    pub n: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// loop: short and long trip counts.
    #[arg(long, default_value_t = 16)]
    pub short: u32,
    #[arg(long, default_value_t = 512)]
    pub long: u32,
}

impl LoopSize {
    /// The library's configuration with these sizes, the rest at its defaults.
    pub fn config(&self) -> MicroConfig {
        MicroConfig { n: self.n, seed: self.seed, short: self.short, long: self.long, ..Default::default() }
    }
}

pub fn run(gpu: &Gpu, a: &MicroArgs) -> Result<()> {
    let records = bench_micro(gpu, a)?;
    if a.pattern == Pattern::Loop {
        print_loop_slowdown(&records);
    }
    finish(&records, &a.output)
}

pub fn bench_micro(gpu: &Gpu, a: &MicroArgs) -> Result<Vec<Record>> {
    let protocol = a.output.protocol();
    let base = MicroConfig { pattern: a.pattern, heavy: a.heavy, group: a.group, ..a.size.config() };
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
            let distribution = match a.distribution[..] {
                [] => Distribution::Random,
                [d @ (Distribution::Random | Distribution::Sorted)] => d,
                _ => {
                    return Err(simtlab::Error::invalid(
                        "--distribution",
                        "--pattern if takes one of random or sorted (the values, in random or sorted order)",
                    ));
                }
            };
            configs.extend(a.probability.iter().map(|&probability| MicroConfig { distribution, probability, ..base.clone() }));
        }
    }
    let name = match a.pattern {
        Pattern::Loop => "micro-loop",
        Pattern::If => "micro-if",
    };
    let runs = configs
        .iter()
        .map(|cfg| Ok(Run { label: format!("{} {}", cfg.kernel_name(), cfg.distribution.name()), ..Run::new(name, cfg)? }))
        .collect::<Result<Vec<Run>>>()?;
    workload::run_all(gpu, &runs, &protocol, "micro")
}

/// The headline of the loop sweep: how much the divergent layout costs over the sorted one.
pub fn print_loop_slowdown(records: &[Record]) {
    let median = |v: &str| records.iter().find(|r| r.variant == v).map(|r| r.stats.median);
    if let (Some(one), Some(sorted)) = (median("one-long"), median("sorted")) {
        sayln!("one-long over sorted (same work): {}", slower_or_faster(one, sorted));
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
