//! `simtlab bench carrillo`: branch and loop splitting.

use crate::output::{finish, Output};
use clap::Args;
use simtlab::harness::Protocol;
use simtlab::kernels::carrillo::{self, CarrilloArgs};
use simtlab::{Gpu, Result};

#[derive(Args)]
pub struct CarrilloCli {
    #[command(flatten)]
    pub args: CarrilloArgs,
    #[command(flatten)]
    pub output: Output,
}

pub fn run(gpu: &Gpu, c: &CarrilloCli) -> Result<()> {
    let protocol = Protocol { warmup: c.output.warmup, samples: c.output.samples };
    let records = carrillo::bench_cli(gpu, &c.args, &protocol)?;
    let out = finish(&records, &c.output);
    print!("{}", carrillo::comparison_table(&records));
    if let Some(r) = records.iter().find(|r| r.kernel == "loop_split") {
        println!("loop split / loop fused: {:.3}", r.extra["split_over_fused"].as_f64().unwrap_or(f64::NAN));
    }
    out
}
