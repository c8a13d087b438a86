//! `simtlab bench matmul`: Ryoo's matmul ladder.

use crate::output::{finish, Output};
use clap::Args;
use simtlab::harness::Protocol;
use simtlab::kernels::matmul::{self, MatmulArgs};
use simtlab::{Gpu, Result};

#[derive(Args)]
pub struct MatmulCli {
    #[command(flatten)]
    pub args: MatmulArgs,
    #[command(flatten)]
    pub output: Output,
}



pub fn run(gpu: &Gpu, c: &MatmulCli) -> Result<()> {
    let protocol = Protocol { warmup: c.output.warmup, samples: c.output.samples };
    let records = matmul::bench_cli(gpu, &c.args, &protocol)?;
    let out = finish(&records, &c.output);
    print!("{}", matmul::ladder_table(&records));
    out
}
