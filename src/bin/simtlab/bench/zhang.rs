//! `simtlab bench zhang`: Zhang's section 5 benchmarks, original vs redirection.

use crate::output::finish_files;
use clap::Args;
use simtlab::kernels::zhang::{self, ZhangArgs};
use simtlab::{Gpu, Result};
use std::path::PathBuf;

#[derive(Args)]
pub struct ZhangCli {
    #[command(flatten)]
    pub args: ZhangArgs,
    #[command(flatten)]
    pub output: ZhangOutput,
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
    let records = zhang::bench_cli(gpu, &a.args)?;
    finish_files(&records, a.output.json.as_ref(), a.output.csv.as_ref())?;
    print!("\n{}", zhang::comparison(&records));
    Ok(())
}
