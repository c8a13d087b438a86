//! `simtlab bench flowshop`: Chakroun's Tables 1-2.

use crate::output::finish_files;
use simtlab::kernels::flowshop::cli as flowshop_cli;
use simtlab::{Gpu, Result};

pub fn run(gpu: &Gpu, a: &flowshop_cli::BenchArgs) -> Result<()> {
    let records = flowshop_cli::bench_cli(gpu, a)?;
    let out = finish_files(&records, a.json.as_ref(), a.csv.as_ref());
    print!("\n{}", flowshop_cli::bench_tables(&records)?);
    out
}
