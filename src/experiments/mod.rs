//! The papers' experiments as sweeps over the kernel runners, run by `simtlab reproduce`.
//!
//! Each experiment declares its sweep points (quick sizes for a CPU adapter, full sizes for a
//! real GPU), runs one point at a time into records, and renders its tables and figures with
//! the paper's published values beside ours (`assets/papers/*.toml`).

pub mod carrillo;
pub mod chakroun;
mod gupta;
mod output;
mod ryoo;
pub mod zhang;

use crate::error::{Error, Result};
use crate::harness::Record;
use crate::report::Section;
use serde::{Deserialize, Serialize};

#[cfg(not(target_arch = "wasm32"))]
pub use gupta::{pt_sweep_runs, run_pt_sweep};
pub use output::{merge_dirs, missing_shards, read_info, read_outcomes, resumable, write_report, MergeInput, OutputDir, RunInfo};
#[cfg(not(target_arch = "wasm32"))]
pub use ryoo::run_ladder;

pub use crate::harness::Scale;
#[cfg(not(target_arch = "wasm32"))]
use {
    crate::gpu::Gpu,
    crate::harness::Progress,
    std::sync::atomic::{AtomicBool, Ordering},
};

/// One point of an experiment's sweep.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Point {
    /// Id of the experiment the point belongs to ([`Experiment::id`]).
    pub experiment: String,
    /// Stable, unique within the experiment (used to merge shards).
    pub key: String,
    /// The runner's configuration for this point, as JSON.
    pub params: serde_json::Value,
}

/// What one point produced: its records, or the error that stopped it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Outcome {
    /// The point that ran.
    pub point: Point,
    /// Its benchmark records (empty when it failed).
    pub records: Vec<Record>,
    /// The error message when the point failed.
    pub error: Option<String>,
    /// Wall-clock seconds the point took.
    pub seconds: f64,
}

/// Which paper an experiment belongs to, its id and its heading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct About {
    /// Paper short name: zhang, chakroun, carrillo, gupta, ryoo.
    pub paper: &'static str,
    /// Unique id, e.g. `zhang-fig1-loop`.
    pub id: &'static str,
    /// Heading of its report section.
    pub title: &'static str,
}

/// One experiment of a paper (a table or figure): its sweep, how to run a point, and how to
/// render the results beside the paper's values.
pub trait Experiment: Sync {
    /// Its paper, id and heading.
    fn about(&self) -> About;
    /// Paper short name: zhang, chakroun, carrillo, gupta, ryoo.
    fn paper(&self) -> &'static str {
        self.about().paper
    }
    /// Unique id, e.g. `zhang-fig1-loop`.
    fn id(&self) -> &'static str {
        self.about().id
    }
    /// Heading of its report section.
    fn title(&self) -> &'static str {
        self.about().title
    }
    /// The sweep points at `scale`, in report order; keys are unique within the experiment.
    fn points(&self, scale: Scale) -> Vec<Point>;
    /// Runs one point on `gpu`, each record checked against the CPU reference.
    #[cfg(not(target_arch = "wasm32"))]
    fn run(&self, gpu: &Gpu, point: &Point) -> Result<Vec<Record>>;
    /// Tables, figures and verdicts from the outcomes of this experiment's points.
    fn render(&self, outcomes: &[&Outcome], paper: &crate::report::PaperValues) -> Section;
}

/// Short names of the papers with experiments, in report order.
pub const PAPERS: [&str; 5] = ["zhang", "chakroun", "carrillo", "gupta", "ryoo"];

/// Every experiment simtlab has, in report order.
pub fn all() -> Vec<Box<dyn Experiment>> {
    let mut v: Vec<Box<dyn Experiment>> = Vec::new();
    v.extend(zhang::experiments());
    v.extend(chakroun::experiments());
    v.extend(carrillo::experiments());
    v.extend(carrillo::sweeps());
    v.extend(gupta::experiments());
    v.extend(ryoo::experiments());
    v.extend(ryoo::ladder());
    v
}

/// The experiments of `paper` (`all` for every paper).
pub fn select(paper: &str) -> Result<Vec<Box<dyn Experiment>>> {
    if paper != "all" && !PAPERS.contains(&paper) {
        return Err(Error::invalid("paper", format!("'{paper}': use one of {} or all", PAPERS.join(", "))));
    }
    Ok(all().into_iter().filter(|e| paper == "all" || e.paper() == paper).collect())
}

/// `i/n` with 1 ≤ i ≤ n: this run takes every n-th point starting at the i-th.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which shard this run is, 1-based (`i`).
    pub index: usize,
    /// How many shards the sweep is split into (`n`).
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = Error;
    fn from_str(s: &str) -> Result<Shard> {
        let bad = || Error::invalid("shard", format!("'{s}': use i/n with 1 ≤ i ≤ n, e.g. 2/4"));
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (usize, usize) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// `1/1`: every point.
    pub fn whole() -> Shard {
        Shard { index: 1, count: 1 }
    }

    /// Whether the point at `position` in the global sweep order belongs to this shard.
    pub fn takes(&self, position: usize) -> bool {
        position % self.count == self.index - 1
    }
}

/// Runs this shard's points of `experiments`, surviving failures (each is recorded).
#[cfg(not(target_arch = "wasm32"))]
pub fn run(gpu: &Gpu, experiments: &[Box<dyn Experiment>], scale: Scale, shard: Shard) -> Vec<Outcome> {
    let never = AtomicBool::new(false);
    let (out, _) = run_points(gpu, experiments, scale, shard, Vec::new(), &never, |_| Ok(()))
        .unwrap_or_else(|_| unreachable!("the callback never fails"));
    out
}

/// How [`run_points`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Every point of the shard ran.
    Complete,
    /// `cancel` was set: the points after the one running then were not run.
    Cancelled {
        /// Points of the shard not run.
        remaining: usize,
    },
}

/// Runs this shard's points that `kept` (outcomes of an earlier run) does not already have, in
/// sweep order, calling `after_point` with all outcomes so far after each one (to write them).
/// Stops between points once `cancel` is set. Failures of a point are recorded, not returned;
/// the error returned is `after_point`'s.
#[cfg(not(target_arch = "wasm32"))]
pub fn run_points(
    gpu: &Gpu,
    experiments: &[Box<dyn Experiment>],
    scale: Scale,
    shard: Shard,
    kept: Vec<Outcome>,
    cancel: &AtomicBool,
    mut after_point: impl FnMut(&[Outcome]) -> Result<()>,
) -> Result<(Vec<Outcome>, Ended)> {
    let done: std::collections::HashSet<(String, String)> =
        kept.iter().map(|o| (o.point.experiment.clone(), o.point.key.clone())).collect();
    let points: Vec<(usize, Point)> = experiments
        .iter()
        .enumerate()
        .flat_map(|(e, exp)| exp.points(scale).into_iter().map(move |p| (e, p)))
        .enumerate()
        .filter(|(pos, _)| shard.takes(*pos))
        .map(|(_, x)| x)
        .filter(|(_, p)| !done.contains(&(p.experiment.clone(), p.key.clone())))
        .collect();
    let progress = Progress::new(points.len() as u64, "reproduce");
    let mut out = kept;
    let total = points.len();
    for (i, (e, point)) in points.into_iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            progress.finish();
            return Ok((merge(vec![out]), Ended::Cancelled { remaining: total - i }));
        }
        progress.message(format!("{} {}", point.experiment, point.key));
        let t0 = web_time::Instant::now();
        let result = experiments[e].run(gpu, &point);
        let seconds = t0.elapsed().as_secs_f64();
        let (records, error) = match result {
            Ok(r) => (r, None),
            Err(err) => {
                progress.println(format!("{} {} failed: {err}", point.experiment, point.key));
                (Vec::new(), Some(err.to_string()))
            }
        };
        out.push(Outcome { point, records, error, seconds });
        out = merge(vec![out]);
        after_point(&out)?;
        progress.step("");
    }
    progress.finish();
    Ok((out, Ended::Complete))
}

/// Joins outcomes of several shards; a point present twice keeps its first outcome.
pub fn merge(parts: Vec<Vec<Outcome>>) -> Vec<Outcome> {
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<Outcome> =
        parts.into_iter().flatten().filter(|o| seen.insert((o.point.experiment.clone(), o.point.key.clone()))).collect();
    // report order = sweep order, whatever the shard order was
    let order: std::collections::HashMap<(String, String), usize> = all()
        .iter()
        .flat_map(|e| [Scale::Tiny, Scale::Quick, Scale::Full].into_iter().flat_map(move |s| e.points(s)))
        .enumerate()
        .map(|(i, p)| ((p.experiment, p.key), i))
        .collect();
    out.sort_by_key(|o| order.get(&(o.point.experiment.clone(), o.point.key.clone())).copied().unwrap_or(usize::MAX));
    out
}

/// One line per point that failed to run: its key and the error.
pub(crate) fn failures(outcomes: &[&Outcome]) -> Vec<String> {
    outcomes.iter().filter_map(|o| o.error.as_ref().map(|e| format!("{}: {e}", o.point.key))).collect()
}

/// The section of `experiment`: its paper, id and title, and the points that failed; the
/// caller fills in the rest.
pub(crate) fn section(experiment: &dyn Experiment, outcomes: &[&Outcome]) -> Section {
    Section {
        paper: experiment.paper().into(),
        id: experiment.id().into(),
        title: experiment.title().into(),
        failures: failures(outcomes),
        ..Default::default()
    }
}

/// Helper for experiments: a point with its key and parameters.
pub(crate) fn point(experiment: &str, key: impl Into<String>, params: serde_json::Value) -> Point {
    Point { experiment: experiment.to_string(), key: key.into(), params }
}

/// Runs the registry's workload `name` with `config` as its parameters.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn run_workload<C: Serialize>(gpu: &Gpu, name: &str, config: &C, protocol: &crate::harness::Protocol) -> Result<Vec<Record>> {
    let params = serde_json::to_value(config).map_err(|e| Error::invalid("experiment point", format!("{name}: {e}")))?;
    crate::workload::find(name)?.run(gpu, &params, protocol)
}

/// Decodes a point's parameters into the runner's config type.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn params<T: serde::de::DeserializeOwned>(point: &Point) -> Result<T> {
    serde_json::from_value(point.params.clone())
        .map_err(|e| Error::invalid("experiment point", format!("{} {}: {e}", point.experiment, point.key)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_points() {
        let s: Shard = "2/3".parse().unwrap();
        assert_eq!((0..9).filter(|&p| s.takes(p)).collect::<Vec<_>>(), vec![1, 4, 7]);
        assert!("0/3".parse::<Shard>().is_err() && "4/3".parse::<Shard>().is_err() && "x".parse::<Shard>().is_err());
        let shards: Vec<Shard> = (1..=3).map(|i| Shard { index: i, count: 3 }).collect();
        for p in 0..20 {
            assert_eq!(shards.iter().filter(|s| s.takes(p)).count(), 1);
        }
    }

    #[test]
    fn experiment_ids_and_point_keys_are_unique() {
        let mut ids = std::collections::HashSet::new();
        for e in all() {
            assert!(ids.insert(e.id()), "duplicate id {}", e.id());
            assert!(PAPERS.contains(&e.paper()));
            for scale in [Scale::Tiny, Scale::Quick, Scale::Full] {
                let pts = e.points(scale);
                assert!(!pts.is_empty(), "{} has no points", e.id());
                let keys: std::collections::HashSet<_> = pts.iter().map(|p| &p.key).collect();
                assert_eq!(keys.len(), pts.len(), "{}: duplicate keys", e.id());
            }
        }
    }
}

/// What a record of an analytical result keeps in `extra`: the model's value beside the
/// paper's, and the occupancy figures the tables show (written by [`model_record`], read
/// back with [`Record::extra_as`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ModelExtra {
    /// What the model computes.
    pub model: f64,
    /// What the paper published.
    pub paper: f64,
    /// Occupancy from the model, in [0, 1].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occupancy: Option<f64>,
    /// The resource that limits the blocks per SM.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<String>,
    /// Blocks per SM from the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u32>,
}

/// A record for an analytical result (`extra.model`) checked against the paper's published
/// value (`extra.paper`), exactly.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn model_record(gpu: &Gpu, family: &str, kernel: &str, variant: &str, params: serde_json::Value, extra: ModelExtra) -> Record {
    let (ours, paper) = (extra.model, extra.paper);
    let t0 = web_time::Instant::now();
    let elapsed = t0.elapsed().as_secs_f64().max(1e-9);
    let passed = (ours - paper).abs() <= 1e-9 * paper.abs().max(1.0);
    Record {
        schema: crate::harness::SCHEMA_VERSION,
        family: family.into(),
        kernel: kernel.into(),
        variant: variant.into(),
        params,
        seed: 0,
        environment: crate::harness::Environment::of(gpu),
        stats: crate::harness::Stats::from_samples(vec![elapsed], crate::gpu::TimingSource::WallClock)
            .unwrap_or_else(|_| unreachable!("one sample")),
        check: crate::harness::Check {
            passed,
            checked: 1,
            mismatches: (!passed) as u64,
            max_rel_error: (ours - paper).abs() / paper.abs().max(1e-12),
            tolerance: 0.0,
            first_mismatch: (!passed).then(|| format!("model {ours}, paper {paper}")),
        },
        divergence: None,
        throughput: None,
        extra: serde_json::to_value(extra).unwrap_or_default(),
    }
}

/// A sweep of one family's typed configuration. Each point is a configuration keyed by the
/// command-line options that ask for it, plus the scale (`--layout linear --steps 2 [Tiny]`),
/// so that results files written when the sweeps ran from those options still merge.
pub(crate) struct ConfigSweep<C> {
    pub paper: &'static str,
    pub id: &'static str,
    pub title: &'static str,
    /// (options, configuration) of each point at a scale.
    pub points: fn(Scale) -> Vec<(&'static str, C)>,
    #[cfg(not(target_arch = "wasm32"))]
    pub run: fn(&Gpu, &C, &crate::harness::Protocol) -> Result<Vec<Record>>,
    pub verdicts: fn(&[&Record], &crate::report::PaperValues) -> Vec<crate::report::Verdict>,
    pub figure: Option<fn(&[&Record]) -> crate::report::Figure>,
    pub paper_tables: &'static [&'static str],
    /// Notes under the section's table, from the outcomes (e.g. the fallbacks they record).
    pub notes: Option<SectionNotes>,
}

/// Notes under a section's table, from its outcomes.
pub(crate) type SectionNotes = fn(&[&Outcome]) -> Vec<String>;

#[derive(Serialize, Deserialize)]
struct ConfigPoint<C> {
    config: C,
    scale: Scale,
}

impl<C: Serialize + serde::de::DeserializeOwned> Experiment for ConfigSweep<C> {
    fn about(&self) -> About {
        About { paper: self.paper, id: self.id, title: self.title }
    }
    fn points(&self, scale: Scale) -> Vec<Point> {
        (self.points)(scale)
            .into_iter()
            .map(|(options, config)| {
                point(self.id, format!("{options} [{scale:?}]"), serde_json::to_value(ConfigPoint { config, scale }).unwrap_or_default())
            })
            .collect()
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn run(&self, gpu: &Gpu, p: &Point) -> Result<Vec<Record>> {
        let cp: ConfigPoint<C> = params(p)?;
        (self.run)(gpu, &cp.config, &cp.scale.protocol())
    }
    fn render(&self, outcomes: &[&Outcome], paper: &crate::report::PaperValues) -> Section {
        use crate::report::{Cell, Table};
        let records: Vec<&Record> = outcomes.iter().flat_map(|o| o.records.iter()).collect();
        let mut table = Table::new("", &["kernel", "variant", "median (ms)", "throughput", "unit", "SIMT eff.", "check"]);
        for r in &records {
            table.rows.push(vec![
                Cell::text(&r.kernel),
                Cell::text(&r.variant),
                Cell::measured(r.stats.median * 1e3, 4),
                r.throughput.as_ref().map_or(Cell::Missing, |t| Cell::measured(t.value, 3)),
                r.throughput.as_ref().map_or(Cell::Missing, |t| Cell::text(&t.unit)),
                r.divergence.map_or(Cell::Missing, |d| Cell::exact(d.simt_efficiency, 3)),
                Cell::check(r.check.passed),
            ]);
        }
        Section {
            tables: vec![table],
            paper_tables: self.paper_tables.iter().map(|s| s.to_string()).collect(),
            figures: self.figure.map(|f| f(&records)).into_iter().collect(),
            verdicts: (self.verdicts)(&records, paper),
            notes: self.notes.map(|f| f(outcomes)).unwrap_or_default(),
            ..section(self, outcomes)
        }
    }
}
