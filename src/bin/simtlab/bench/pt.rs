//! `simtlab bench pt`: persistent threads, Gupta's use cases and the barrier / queue benchmarks.

use crate::output::{finish, Output};
use clap::Args;
use simtlab::harness::{Protocol, Record};
use simtlab::{Gpu, Result};

#[derive(Args)]
pub struct PtBenchArgs {
    #[command(flatten)]
    pub pt: simtlab::pt::sweep::PtArgs,
    #[command(flatten)]
    pub output: Output,
}


pub fn run(gpu: &Gpu, a: &PtBenchArgs) -> Result<()> {
    let protocol = Protocol { warmup: a.output.warmup, samples: a.output.samples };
    let records = simtlab::pt::sweep::bench_cli(gpu, &a.pt, &protocol)?;
    print_pt_verdicts(&records);
    finish(&records, &a.output)
}

/// The tier each persistent-threads record ran at, and any fallback.
pub fn print_pt_verdicts(records: &[Record]) {
    for r in records {
        if let Some(f) = r.extra.get("fallbacks").and_then(|f| f.as_array()).filter(|f| !f.is_empty()) {
            println!("{} {}: {}", r.kernel, r.variant, f.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join("; "));
        }
        if r.kernel == "barrier" {
            if let Some(us) = r.extra.get("relaunch_us").and_then(|v| v.as_f64()) {
                println!("barrier {}: {:.2} us in-dispatch vs {:.2} us per relaunch", r.variant, r.stats.median * 1e6, us);
            }
        }
    }
}

