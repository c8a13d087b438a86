//! Gupta et al.: the four persistent-threads use cases, PT vs nonPT.

use super::{parse_args, CliSweep, Experiment};
use crate::harness::Record;
use crate::kernels::pt::cli::{bench_cli, PtArgs};
use crate::report::{PaperValues, Verdict};

/// Median of the fastest record whose variant says `tier N` for N in `tiers`.
fn best(records: &[&Record], case: &str, tiers: &[u8]) -> Option<f64> {
    records
        .iter()
        .filter(|r| r.kernel == case && tiers.iter().any(|t| r.variant.contains(&format!("tier {t}"))))
        .map(|r| r.stats.median)
        .reduce(f64::min)
}

fn verdicts(records: &[&Record], paper: &PaperValues) -> Vec<Verdict> {
    let claim = |id: &str| paper.claim(id).and_then(|c| c.value);
    let cases = [
        ("sync", "use case 1, CPU-GPU synchronization: PT over nonPT", None),
        ("forest", "use case 2, load balancing (forest expansion): PT over level-by-level", None),
        ("prodcons", "use case 3, producer-consumer: PT over multi-kernel", claim("reduce_speedup_large")),
        ("gsync", "use case 4, global synchronization: in-dispatch barrier over relaunch", claim("global_sync_speedup_low")),
    ];
    cases
        .into_iter()
        .filter(|(case, _, _)| records.iter().any(|r| r.kernel == *case))
        .map(|(case, text, p)| {
            let ours = best(records, case, &[0]).zip(best(records, case, &[1, 2])).map(|(non, pt)| non / pt);
            Verdict::direction(text, p, ours, "x", 1.0)
        })
        .collect()
}

fn run(gpu: &crate::gpu::Gpu, words: &[String], protocol: &crate::harness::Protocol) -> crate::error::Result<Vec<Record>> {
    let args: PtArgs = parse_args(words)?;
    bench_cli(gpu, &args, protocol)
}

pub fn experiments() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(CliSweep {
        paper: "gupta",
        id: "gupta-use-cases",
        title: "The four use cases, nonPT (tier 0) vs PT (tier 1 non-blocking, tier 2 blocking)",
        points: [
            &["--case gsync --syncs 5 --blocks 8", "--case sync --n 2048"],
            &[
                "--case sync --n 65536",
                "--case forest --depth 20 --items 64",
                "--case prodcons --n 65536",
                "--case gsync --syncs 20 --blocks 64",
            ],
            &[
                "--case sync --n 1048576,16777216",
                "--case forest --depth 200 --items 1024 --shape tilted",
                "--case forest --depth 12 --items 1024 --shape complete",
                "--case prodcons --n 1048576,16777216",
                "--case gsync --syncs 100,1000 --blocks 1056",
                "--case barrier --workgroups 132,1056",
                "--case queue",
            ],
        ],
        run,
        verdicts,
        figure: None,
        paper_tables: &[],
    })]
}
