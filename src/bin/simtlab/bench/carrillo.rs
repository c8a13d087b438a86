//! `simtlab bench carrillo`: branch and loop splitting.

use crate::output::{finish, Output};
use crate::output::{say, sayln};
use crate::value::choice;
use clap::Args;
use simtlab::harness::{self, Record};
use simtlab::kernels::split::{self, MaskLayout, SplitSweep, PAPER_N};
use simtlab::{Gpu, Result};

/// Help lines of [`MaskLayout`]'s values.
pub const MASK_LAYOUTS: &[(MaskLayout, &str)] = &[
    (
        MaskLayout::Linear,
        "Layout 1 (Figure 7): the first `fraction·n` elements take the else-branch, the rest the if-branch; only the warp on the boundary diverges",
    ),
    (MaskLayout::Random, "Layout 2 (Figure 9): each element takes the else-branch with probability `fraction`"),
];

#[derive(Args)]
pub struct CarrilloCli {
    #[command(flatten)]
    pub args: CarrilloArgs,
    #[command(flatten)]
    pub output: Output,
}

/// `simtlab bench carrillo`.
#[derive(Clone, Debug, Args)]
pub struct CarrilloArgs {
    /// Decision-mask layout: linear (two sections) or random.
    #[arg(long, value_parser = choice::<MaskLayout>(MASK_LAYOUTS), default_value = "linear")]
    pub layout: MaskLayout,
    /// Even steps of the else-fraction from 0 to 100 %, 1..=1000 (random adds fine steps over
    /// 0.5-20 %). Default: 10, unless --fractions is given.
    #[arg(long)]
    pub steps: Option<usize>,
    /// Explicit else-fractions (0..=1) instead of the sweep.
    #[arg(long, value_delimiter = ',')]
    pub fractions: Vec<f64>,
    /// Elements. Default: the paper's 4M = 2^22, or 2^18 on a CPU adapter (lavapipe,
    /// llvmpipe), where the paper's size takes minutes.
    #[arg(long)]
    pub n: Option<usize>,
    /// Mixing rounds of the light if-branch.
    #[arg(long, default_value_t = 128)]
    pub light_rounds: u32,
    /// Double rounds of the heavy else-branch.
    #[arg(long, default_value_t = 4)]
    pub heavy_rounds: u32,
    /// Elements per thread in the loop-splitting benchmark (0 = skip it).
    #[arg(long, default_value_t = 8)]
    pub loop_len: usize,
    /// Threads of the loop-splitting benchmark.
    #[arg(long, default_value_t = 1 << 20)]
    pub loop_n: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Elements when --n is left out on a CPU adapter.
pub const CPU_ADAPTER_N: usize = 1 << 18;

impl CarrilloArgs {
    /// The sweep with the GPU defaults (the paper's size).
    #[cfg(test)]
    pub fn sweep(&self) -> SplitSweep {
        self.sweep_on(false)
    }

    /// The sweep for an adapter: a left-out --n is the paper's size on a GPU and
    /// [`CPU_ADAPTER_N`] on a CPU adapter.
    pub fn sweep_on(&self, cpu_adapter: bool) -> SplitSweep {
        SplitSweep {
            layout: self.layout,
            steps: self.steps,
            fractions: self.fractions.clone(),
            n: self.n.unwrap_or(if cpu_adapter { CPU_ADAPTER_N } else { PAPER_N }),
            light_rounds: self.light_rounds,
            heavy_rounds: self.heavy_rounds,
            loop_len: self.loop_len,
            loop_n: self.loop_n,
            seed: self.seed,
        }
    }
}

pub fn run(gpu: &Gpu, c: &CarrilloCli) -> Result<()> {
    let protocol = c.output.protocol();
    let cpu_adapter = gpu.info().device_type == wgpu::DeviceType::Cpu;
    if cpu_adapter && c.args.n.is_none() {
        sayln!("--n defaults to {CPU_ADAPTER_N} on the CPU adapter {} (the paper's {PAPER_N} takes minutes there)", gpu.adapter_name());
    }
    let records = simtlab::experiments::carrillo::run_sweep(gpu, &c.args.sweep_on(cpu_adapter), &protocol)?;
    let out = finish(&records, &c.output);
    say!("{}", comparison_table(&records));
    if let Some(e) = records.iter().find(|r| r.kernel == "loop_split").and_then(|r| r.extra_as::<split::LoopSplitExtra>()) {
        sayln!("loop split / loop fused: {:.3}", e.split_over_fused);
    }
    out
}

/// The paper's comparison: per else-fraction, branched and split medians and their ratio.
fn comparison_table(records: &[Record]) -> String {
    let mut out = String::from("else %   branched      split         split/branched  branched div.ratio\n");
    for b in records.iter().filter(|r| r.family == "carrillo" && r.kernel == split::BRANCHED_KERNEL) {
        let Some(s) = records.iter().find(|r| r.family == "carrillo" && r.kernel == split::SPLIT_KERNEL && r.variant == b.variant) else {
            continue;
        };
        let f = b.params["else_fraction"].as_f64().unwrap_or(f64::NAN) * 100.0;
        let div = b.divergence.as_ref().map_or("-".to_string(), |d| format!("{:.3}", d.divergence_ratio));
        out += &format!(
            "{f:>6.1}   {:<12}  {:<12}  {:>14.3}  {div:>18}\n",
            harness::format_seconds(b.stats.median),
            harness::format_seconds(s.stats.median),
            s.stats.median / b.stats.median
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ArgsOnly;

    fn sweep(words: &str) -> SplitSweep {
        ArgsOnly::<CarrilloArgs>::parse_words(words).unwrap().sweep()
    }

    /// The defaults of the command line are the library's.
    #[test]
    fn defaults_are_the_sweeps() {
        assert_eq!(sweep(""), SplitSweep::default());
        assert_eq!(sweep("--layout random --fractions 0,0.5").fractions, [0.0, 0.5]);
    }

    /// A CPU adapter gets a smaller default size; a GPU keeps the paper's, and an explicit
    /// --n wins on both.
    #[test]
    fn cpu_adapters_default_to_a_smaller_size() {
        let args = ArgsOnly::<CarrilloArgs>::parse_words("--layout random").unwrap();
        assert_eq!(args.sweep_on(false).n, PAPER_N);
        assert!(args.sweep_on(true).n <= 1 << 18, "{}", args.sweep_on(true).n);
        let given = ArgsOnly::<CarrilloArgs>::parse_words("--n 4096").unwrap();
        assert_eq!((given.sweep_on(true).n, given.sweep_on(false).n), (4096, 4096));
    }

    /// One row per else-fraction, branched beside split.
    #[test]
    fn comparison_has_a_row_per_fraction() {
        let gpu = simtlab::Gpu::new(&Default::default()).unwrap();
        let cfg = split::BranchConfig { n: 2048, light_rounds: 4, heavy_rounds: 1, seed: 5 };
        let protocol = simtlab::harness::Protocol { warmup: 0, samples: 1 };
        let records = split::sweep(&gpu, &cfg, MaskLayout::Random, &[0.0, 0.1, 1.0], &protocol, None).unwrap();
        let table = comparison_table(&records);
        let rows: Vec<&str> = table.lines().collect();
        assert_eq!(rows.len(), 4, "{table}");
        for (row, fraction) in rows[1..].iter().zip(["0.0", "10.0", "100.0"]) {
            assert_eq!(row.split_whitespace().next(), Some(fraction), "{table}");
        }
    }

    /// `reproduce` keys its sweep points by the options they stand for.
    #[test]
    fn reproduce_points_are_their_keys() {
        for (words, config) in super::super::keyed_configs::<SplitSweep>("carrillo") {
            assert_eq!(sweep(&words), config, "{words}");
        }
    }
}
