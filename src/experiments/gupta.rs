//! Gupta et al.: the four persistent-threads use cases, PT vs nonPT.

use super::{parse_args, CliSweep, Experiment, Outcome, Point, Scale};
use crate::harness::Record;
use crate::pt::sweep::{bench_cli, PtArgs};
use crate::report::{PaperValues, Section, Verdict};

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

/// One note listing every record that ran at a lower tier than its sweep asked for (a failed
/// probe, an abort, a tier the case lacks), with the point and the reasons `results.json` keeps
/// in the record's `fallbacks`; none when nothing fell back.
fn fallback_notes(outcomes: &[&Outcome]) -> Vec<String> {
    let lines: Vec<String> = outcomes
        .iter()
        .flat_map(|o| o.records.iter().map(move |r| (o, r)))
        .filter_map(|(o, r)| {
            let reasons: Vec<&str> = r.extra.get("fallbacks")?.as_array()?.iter().filter_map(|x| x.as_str()).collect();
            (!reasons.is_empty()).then(|| format!("- `{}`: {} {}: {}", o.point.key, r.kernel, r.variant, reasons.join("; ")))
        })
        .collect();
    if lines.is_empty() {
        return Vec::new();
    }
    vec![format!("Fallbacks (these rows ran at a lower tier than asked):\n\n{}", lines.join("\n"))]
}

/// The Gupta sweep: the CLI sweep's section with its fallbacks noted.
struct GuptaSweep(CliSweep);

impl Experiment for GuptaSweep {
    fn paper(&self) -> &'static str {
        self.0.paper()
    }
    fn id(&self) -> &'static str {
        self.0.id()
    }
    fn title(&self) -> &'static str {
        self.0.title()
    }
    fn points(&self, scale: Scale) -> Vec<Point> {
        self.0.points(scale)
    }
    fn run(&self, gpu: &crate::gpu::Gpu, point: &Point) -> crate::error::Result<Vec<Record>> {
        self.0.run(gpu, point)
    }
    fn render(&self, outcomes: &[&Outcome], paper: &PaperValues) -> Section {
        let mut section = self.0.render(outcomes, paper);
        section.notes.extend(fallback_notes(outcomes));
        section
    }
}

pub fn experiments() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(GuptaSweep(CliSweep {
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
    }))]
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
