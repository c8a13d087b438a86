//! `simtlab bench matmul`: Ryoo's matmul ladder.

use crate::output::say;
use crate::output::{finish, Output};
use clap::Args;
use simtlab::harness::Protocol;
use simtlab::kernels::matmul::{self, Ladder, RegtileConfig, Variant};
use simtlab::{Gpu, Result};

#[derive(Args)]
pub struct MatmulCli {
    #[command(flatten)]
    pub args: MatmulArgs,
    #[command(flatten)]
    pub output: Output,
}

/// `simtlab bench matmul`.
#[derive(Clone, Debug, Args)]
pub struct MatmulArgs {
    /// Kernels: naive, tiled4, tiled8, tiled12, tiled16, unrolled, prefetch, regtile or all
    /// (comma list).
    #[arg(long, default_value = "all")]
    pub kernel: String,
    /// Square size M = N = K. Default: the paper's 4096, or 512 on a CPU adapter (lavapipe,
    /// llvmpipe), where 4096 runs past the submission timeout.
    #[arg(long)]
    pub n: Option<usize>,
    /// Rows of A and C (default: n).
    #[arg(long)]
    pub m: Option<usize>,
    /// Columns of A, rows of B (default: n).
    #[arg(long)]
    pub k: Option<usize>,
    /// regtile: invocations per workgroup along N and M.
    #[arg(long, default_value_t = 16)]
    pub wg_x: u32,
    #[arg(long, default_value_t = 8)]
    pub wg_y: u32,
    /// regtile: outputs per invocation along M and N (4 or 8).
    #[arg(long, default_value_t = 8)]
    pub tm: u32,
    #[arg(long, default_value_t = 8)]
    pub tn: u32,
    /// regtile: step along K (multiple of 4).
    #[arg(long, default_value_t = 16)]
    pub bk: u32,
    /// regtile: consecutive invocations form warp_x × warp_y blocks (row order if they do not
    /// divide wg_x, wg_y).
    #[arg(long, default_value_t = 8)]
    pub warp_x: u32,
    #[arg(long, default_value_t = 4)]
    pub warp_y: u32,
    /// regtile: workgroups run in groups of this many tile rows (1 = row order).
    #[arg(long, default_value_t = 8)]
    pub group_m: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl MatmulArgs {
    /// The ladder these options ask for (the kernel list is checked here).
    pub fn ladder(&self) -> Result<Ladder> {
        Ok(Ladder {
            variants: Variant::parse_list(&self.kernel)?,
            n: self.n,
            m: self.m,
            k: self.k,
            regtile: RegtileConfig {
                wg_x: self.wg_x,
                wg_y: self.wg_y,
                tm: self.tm,
                tn: self.tn,
                bk: self.bk,
                warp_x: self.warp_x,
                warp_y: self.warp_y,
                group_m: self.group_m,
            },
            seed: self.seed,
        })
    }
}

pub fn run(gpu: &Gpu, c: &MatmulCli) -> Result<()> {
    let protocol = Protocol { warmup: c.output.warmup, samples: c.output.samples };
    let records = matmul::run_ladder(gpu, &c.args.ladder()?, &protocol)?;
    let out = finish(&records, &c.output);
    say!("{}", matmul::ladder_table(&records));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: MatmulArgs,
    }

    fn ladder(words: &str) -> Ladder {
        Wrapper::try_parse_from(std::iter::once("x").chain(words.split_whitespace())).unwrap().args.ladder().unwrap()
    }

    /// The defaults of the command line are the library's.
    #[test]
    fn defaults_are_the_ladders() {
        assert_eq!(ladder(""), Ladder::default());
        assert_eq!(ladder("--kernel naive,regtile --n 96 --bk 8").variants, [Variant::Naive, Variant::Regtile]);
    }

    /// `reproduce` keys its ladder points by the options they stand for.
    #[test]
    fn reproduce_points_are_their_keys() {
        for (words, config) in super::super::keyed_configs::<Ladder>("ryoo") {
            assert_eq!(ladder(&words), config, "{words}");
        }
    }
}
