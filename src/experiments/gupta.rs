//! Gupta et al.: the four persistent-threads use cases, PT vs nonPT.

use super::{ConfigSweep, Experiment, Outcome, Scale};
use crate::harness::Record;
use crate::pt::cases::forest::Shape;
use crate::pt::sweep::{Bench, Sweep};
use crate::pt::TierVerdict;
use crate::report::{PaperValues, Verdict};
#[cfg(not(target_arch = "wasm32"))]
use {
    crate::error::Result,
    crate::gpu::Gpu,
    crate::harness::{Named, Protocol},
    crate::pt::queue,
    crate::pt::sweep::{Configuration, SweepOutput},
    crate::pt::Runtime,
    crate::workload::{self, BarrierParams, PtCaseParams, PtQueueParams, PtRuntimeParams, Run},
    serde::Serialize,
};

#[cfg(not(target_arch = "wasm32"))]
/// The registry runs of a persistent-threads sweep: one run of a `pt-*` workload per
/// configuration ([`Sweep::configurations`], checked by [`Sweep::validate`]), each with the
/// sweep's tiers and runtime options (`spin_cap`, `grace`, `launch`). `queue_items` and
/// `ring_allowed` are the adapter's facts [`Sweep::configurations`] takes.
pub fn pt_sweep_runs(sweep: &Sweep, queue_items: u32, ring_allowed: bool) -> Result<Vec<Run>> {
    let runtime = PtRuntimeParams { spin_cap: sweep.spin_cap, grace: sweep.grace, launch: sweep.launch };
    sweep
        .configurations(queue_items, ring_allowed)?
        .into_iter()
        .map(|c| match c {
            Configuration::Sync(c) => case_run("pt-sync", c, sweep, &runtime),
            Configuration::Forest(c) => case_run("pt-forest", c, sweep, &runtime),
            Configuration::Prodcons(c) => case_run("pt-prodcons", c, sweep, &runtime),
            Configuration::Gsync(c) => case_run("pt-gsync", c, sweep, &runtime),
            Configuration::Barrier { workgroups, kind, iterations } => {
                let params = BarrierParams { workgroups: workgroups.unwrap_or(0), iterations, kind, runtime: runtime.clone() };
                Run::new("pt-barrier", &params)
            }
            Configuration::Queue(config) => {
                Run::new(&format!("pt-queue-{}", config.kind.name()), &PtQueueParams { config, runtime: runtime.clone() })
            }
        })
        .collect()
}

#[cfg(not(target_arch = "wasm32"))]
/// A run of the use case workload `name` on `config`, with the sweep's tiers and `runtime`.
fn case_run<C: Serialize>(name: &str, config: C, sweep: &Sweep, runtime: &PtRuntimeParams) -> Result<Run> {
    Run::new(name, &PtCaseParams { config, tier: sweep.tier.clone(), runtime: runtime.clone() })
}

#[cfg(not(target_arch = "wasm32"))]
/// Runs a persistent-threads sweep (what `simtlab bench pt` runs, and each of Gupta's points):
/// checks it, assesses the adapter's capability with the sweep's options before anything runs,
/// then runs [`pt_sweep_runs`] through [`workload::run_all`], every run checked before the
/// first starts.
pub fn run_pt_sweep(gpu: &Gpu, sweep: &Sweep, protocol: &Protocol) -> Result<SweepOutput> {
    sweep.validate()?;
    let rt = Runtime::new(sweep.options());
    let capability = rt.capability(gpu)?;
    let runs = pt_sweep_runs(sweep, queue::default_queue_items(gpu), queue::ring_allowed(gpu, &rt)?)?;
    let records = if runs.is_empty() { Vec::new() } else { workload::run_all(gpu, &runs, protocol, "pt")? };
    Ok(SweepOutput { capability, records })
}

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

/// One note listing every record that ran at a lower tier than its sweep asked for (a failed
/// probe, an abort, a tier the case lacks), with the point and the reasons `results.json` keeps
/// in the record's `fallbacks`; none when nothing fell back.
fn fallback_notes(outcomes: &[&Outcome]) -> Vec<String> {
    let lines: Vec<String> = outcomes
        .iter()
        .flat_map(|o| o.records.iter().map(move |r| (o, r)))
        .filter_map(|(o, r)| {
            let reasons = r.extra_as::<TierVerdict>()?.fallbacks;
            (!reasons.is_empty()).then(|| format!("- `{}`: {} {}: {}", o.point.key, r.kernel, r.variant, reasons.join("; ")))
        })
        .collect();
    if lines.is_empty() {
        return Vec::new();
    }
    vec![format!("Fallbacks (these rows ran at a lower tier than asked):\n\n{}", lines.join("\n"))]
}

/// A sweep of `bench` with `set` applied to its defaults.
fn of(bench: Bench, set: impl FnOnce(&mut Sweep)) -> Sweep {
    let mut s = Sweep::new(bench);
    set(&mut s);
    s
}

/// The sweeps of a scale, each with the `simtlab bench pt` arguments that ask for it: a point's
/// key is those arguments and the scale, as results files since the first Gupta run name it.
fn sweeps(scale: Scale) -> Vec<(&'static str, Sweep)> {
    use Bench::*;
    match scale {
        Scale::Tiny => vec![
            ("--case gsync --syncs 5 --blocks 8", of(Gsync, |s| (s.syncs, s.blocks) = (vec![5], vec![8]))),
            ("--case sync --n 2048", of(Sync, |s| s.n = vec![2048])),
        ],
        Scale::Quick => vec![
            ("--case sync --n 65536", of(Sync, |s| s.n = vec![65536])),
            ("--case forest --depth 20 --items 64", of(Forest, |s| (s.depth, s.items) = (vec![20], vec![64]))),
            ("--case prodcons --n 65536", of(Prodcons, |s| s.n = vec![65536])),
            ("--case gsync --syncs 20 --blocks 64", of(Gsync, |s| (s.syncs, s.blocks) = (vec![20], vec![64]))),
        ],
        Scale::Full => vec![
            ("--case sync --n 1048576,16777216", of(Sync, |s| s.n = vec![1 << 20, 1 << 24])),
            (
                "--case forest --depth 200 --items 1024 --shape tilted",
                of(Forest, |s| (s.depth, s.items, s.shape) = (vec![200], vec![1024], vec![Shape::Tilted])),
            ),
            (
                "--case forest --depth 12 --items 1024 --shape complete",
                of(Forest, |s| (s.depth, s.items, s.shape) = (vec![12], vec![1024], vec![Shape::Complete])),
            ),
            ("--case prodcons --n 1048576,16777216", of(Prodcons, |s| s.n = vec![1 << 20, 1 << 24])),
            ("--case gsync --syncs 100,1000 --blocks 1056", of(Gsync, |s| (s.syncs, s.blocks) = (vec![100, 1000], vec![1056]))),
            ("--case barrier --workgroups 132,1056", of(Barrier, |s| s.workgroups = vec![132, 1056])),
            ("--case queue", Sweep::new(Queue)),
        ],
    }
}

/// The four use cases (and at full scale the barrier and queue benchmarks), one sweep per point,
/// with every fallback noted in the section.
pub(crate) fn experiments() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(ConfigSweep {
        paper: "gupta",
        id: "gupta-use-cases",
        title: "The four use cases, nonPT (tier 0) vs PT (tier 1 non-blocking, tier 2 blocking)",
        points: sweeps,
        #[cfg(not(target_arch = "wasm32"))]
        run: |gpu, s, protocol| Ok(run_pt_sweep(gpu, s, protocol)?.records),
        verdicts,
        figure: None,
        paper_tables: &[],
        notes: Some(fallback_notes),
    })]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::TimingSource;
    use crate::harness::{Check, Environment, Stats};

    fn record(variant: &str, extra: serde_json::Value) -> Record {
        Record {
            schema: crate::harness::SCHEMA_VERSION,
            family: "pt".into(),
            kernel: "gsync".into(),
            variant: variant.into(),
            params: serde_json::json!({}),
            seed: 1,
            environment: Environment {
                adapter: "test".into(),
                backend: "none".into(),
                device_type: "cpu".into(),
                driver: String::new(),
                subgroup_size: None,
                git_hash: String::new(),
                unix_time: 0,
                min_timed_s: 0.0,
            },
            stats: Stats::from_samples(vec![1e-3], TimingSource::WallClock).unwrap(),
            check: Check::exact(&[1u32], &[1]),
            divergence: None,
            throughput: None,
            extra,
        }
    }

    #[test]
    fn gupta_point_keys_stay_those_of_earlier_results() {
        let keys = |scale| experiments()[0].points(scale).into_iter().map(|p| p.key).collect::<Vec<_>>();
        assert_eq!(keys(Scale::Tiny), ["--case gsync --syncs 5 --blocks 8 [Tiny]", "--case sync --n 2048 [Tiny]"]);
        assert_eq!(
            keys(Scale::Quick),
            [
                "--case sync --n 65536 [Quick]",
                "--case forest --depth 20 --items 64 [Quick]",
                "--case prodcons --n 65536 [Quick]",
                "--case gsync --syncs 20 --blocks 64 [Quick]",
            ]
        );
        assert_eq!(
            keys(Scale::Full),
            [
                "--case sync --n 1048576,16777216 [Full]",
                "--case forest --depth 200 --items 1024 --shape tilted [Full]",
                "--case forest --depth 12 --items 1024 --shape complete [Full]",
                "--case prodcons --n 1048576,16777216 [Full]",
                "--case gsync --syncs 100,1000 --blocks 1056 [Full]",
                "--case barrier --workgroups 132,1056 [Full]",
                "--case queue [Full]",
            ]
        );
        for scale in [Scale::Tiny, Scale::Quick, Scale::Full] {
            for p in experiments()[0].points(scale) {
                let sweep: Sweep = serde_json::from_value(p.params["config"].clone()).unwrap();
                sweep.validate().unwrap_or_else(|e| panic!("{}: {e}", p.key));
            }
        }
    }

    #[test]
    fn gupta_report_notes_every_fallback_its_records_carry() {
        let exp = &experiments()[0];
        let point = exp.points(Scale::Tiny).remove(0);
        let fell = "tier 2 (blocking) -> tier 0 (multi-dispatch): gsync aborted in a checked run: global barrier timeout";
        let outcome = Outcome {
            point: point.clone(),
            records: vec![
                record("relaunch (tier 0)", serde_json::json!({ "fallbacks": [fell], "failed_tiers": [2] })),
                record("relaunch (tier 0)", serde_json::json!({ "fallbacks": [] })),
            ],
            error: None,
            seconds: 0.0,
        };
        let paper = PaperValues::of("gupta").unwrap();
        let section = exp.render(&[&outcome], &paper);
        let notes = section.notes.join("\n");
        assert_eq!(notes.matches(fell).count(), 1, "{notes}");
        assert!(notes.contains(&point.key) && notes.contains("gsync relaunch (tier 0)"), "{notes}");
        // nothing fell back: no note
        let quiet = Outcome { records: vec![record("barrier (tier 2)", serde_json::json!({ "fallbacks": [] }))], ..outcome };
        assert!(exp.render(&[&quiet], &paper).notes.is_empty());
    }
}
