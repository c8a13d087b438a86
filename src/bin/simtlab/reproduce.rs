//! `simtlab reproduce` and `simtlab report merge`.

use crate::gpu_args::{open_gpu, BenchGpuArgs};
use crate::INTERRUPTED;
use simtlab::{experiments, harness, Error, Result};
use std::path::{Path, PathBuf};

/// What to do with a run already in `--out`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Earlier {
    /// Stop before any GPU work, saying how to keep or replace it.
    Refuse,
    /// Keep its points and run the rest (`--resume`).
    Resume,
    /// Start over (`--replace`).
    Replace,
}

pub fn reproduce(gpu_args: &BenchGpuArgs, paper: &str, quick: bool, out: &Path, shard: Option<&str>, earlier: Earlier) -> Result<()> {
    let shard: experiments::Shard = shard.map(str::parse).transpose()?.unwrap_or_else(experiments::Shard::whole);
    let selected = experiments::select(paper)?;
    let dir = experiments::OutputDir::open(out)?;
    let previous = dir.previous()?;
    let resume = earlier == Earlier::Resume;
    if let Some((info, outcomes)) = previous.as_ref().filter(|(_, outcomes)| earlier == Earlier::Refuse && !outcomes.is_empty()) {
        let what = info.as_ref().map_or("earlier run".into(), |i| format!("{:?} run on {}", i.scale, i.adapter()));
        return Err(Error::invalid(
            "--out",
            format!(
                "{} already holds {} points of a {what}; add --resume to keep them and run the rest, --replace to start over, or give another --out",
                out.display(),
                outcomes.len()
            ),
        ));
    }
    let gpu = open_gpu(gpu_args)?;
    let t0 = std::time::Instant::now();
    let scale = if quick { experiments::Scale::Quick } else { experiments::Scale::Full };
    let env = harness::Environment::of(&gpu);
    let mut info = experiments::RunInfo {
        environment: env.clone(),
        scale,
        paper: paper.to_string(),
        shard_index: shard.index,
        shard_count: shard.count,
        header: Vec::new(),
    };
    let kept = if resume { experiments::resumable(previous, &info)? } else { Vec::new() };
    if !kept.is_empty() {
        eprintln!("resuming: {} points already in {}", kept.len(), out.display());
    }
    let header = |seconds: f64, note: &str| {
        vec![
            format!("adapter: {} ({}, {}), driver {}", env.adapter, env.backend, env.device_type, env.driver),
            format!("subgroup size: {}", env.subgroup_size.map_or("none".into(), |w| w.to_string())),
            format!("command: simtlab {}", std::env::args().skip(1).collect::<Vec<_>>().join(" ")),
            format!("git: {}; unix time {}; {seconds:.0} s{note}", env.git_hash, env.unix_time),
            format!("mode: {}; shard {}/{}", if quick { "quick" } else { "full" }, shard.index, shard.count),
        ]
    };
    let (outcomes, ended) = experiments::run_points(&gpu, &selected, scale, shard, kept, &INTERRUPTED, |so_far| {
        info.header = header(t0.elapsed().as_secs_f64(), " (in progress)");
        dir.write(&info, so_far)
    })?;
    let note = match ended {
        experiments::Ended::Complete => String::new(),
        experiments::Ended::Cancelled { remaining } => format!(" (interrupted, {remaining} points not run)"),
    };
    info.header = header(t0.elapsed().as_secs_f64(), &note);
    dir.write(&info, &outcomes)?;
    let failed = outcomes.iter().filter(|o| o.error.is_some()).count();
    let bad_checks = outcomes.iter().flat_map(|o| &o.records).filter(|r| !r.check.passed).count();
    println!(
        "{} points, {failed} failed, {bad_checks} records failed their CPU check; report: {}",
        outcomes.len(),
        out.join("report.md").display()
    );
    if let experiments::Ended::Cancelled { remaining } = ended {
        return Err(Error::Cancelled {
            what: "the reproduction".into(),
            kept: format!("{remaining} points were not run; the finished ones are in {}; add --resume to run the rest", out.display()),
        });
    }
    if failed > 0 || bad_checks > 0 {
        return Err(Error::invalid("reproduction", "some points failed; see the report"));
    }
    Ok(())
}

pub fn merge_reports(dirs: &[PathBuf], out: &Path, allow_mixed: bool) -> Result<()> {
    let (merged, header) = experiments::merge_dirs(dirs, out, allow_mixed)?;
    let dir = experiments::OutputDir::open(out)?;
    experiments::write_report(dir.path(), &merged, &header)?;
    for line in header.iter().filter(|l| l.starts_with("missing shards") || l.starts_with("mixed adapters")) {
        eprintln!("warning: {line}");
    }
    println!("{} points merged; report: {}", merged.len(), out.join("report.md").display());
    Ok(())
}
