//! `simtlab bench carrillo`: branch and loop splitting.

use crate::output::{finish, Output};
use crate::output::{say, sayln};
use crate::value::described;
use clap::Args;
use simtlab::kernels::split::{self, MaskLayout, SplitSweep, PAPER_N};
use simtlab::{Gpu, Result};

pub const MASK_LAYOUTS: &[(&str, &str)] = &[
    (
        "linear",
        "Layout 1 (Figure 7): the first `fraction·n` elements take the else-branch, the rest the if-branch; only the warp on the boundary diverges",
    ),
    ("random", "Layout 2 (Figure 9): each element takes the else-branch with probability `fraction`"),
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
    #[arg(long, value_parser = described::<MaskLayout>(MASK_LAYOUTS), default_value = "linear")]
    pub layout: MaskLayout,
    /// Even steps of the else-fraction from 0 to 100 %, 1..=1000 (random adds fine steps over
    /// 0.5-20 %). Default: 10, unless --fractions is given.
    #[arg(long)]
    pub steps: Option<usize>,
    /// Explicit else-fractions (0..=1) instead of the sweep.
    #[arg(long, value_delimiter = ',')]
    pub fractions: Vec<f64>,
    /// Elements (the paper: 4M = 2^22).
    #[arg(long, default_value_t = PAPER_N)]
    pub n: usize,
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

impl CarrilloArgs {
    pub fn sweep(&self) -> SplitSweep {
        SplitSweep {
            layout: self.layout,
            steps: self.steps,
            fractions: self.fractions.clone(),
            n: self.n,
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
    let records = split::run_sweep(gpu, &c.args.sweep(), &protocol)?;
    let out = finish(&records, &c.output);
    say!("{}", split::comparison_table(&records));
    if let Some(r) = records.iter().find(|r| r.kernel == "loop_split") {
        sayln!("loop split / loop fused: {:.3}", r.extra["split_over_fused"].as_f64().unwrap_or(f64::NAN));
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

    /// `reproduce` keys its sweep points by the options they stand for.
    #[test]
    fn reproduce_points_are_their_keys() {
        for (words, config) in super::super::keyed_configs::<SplitSweep>("carrillo") {
            assert_eq!(sweep(&words), config, "{words}");
        }
    }
}
