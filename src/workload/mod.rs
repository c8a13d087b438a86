//! The registry of workloads: everything simtlab can run, under one shape.
//!
//! A [`Workload`] has a name, a family, the paper it comes from, typed parameters (a serde
//! configuration, with its values at the `tiny`, `quick` and `paper` scales) and one way to run:
//! inputs generated from the seed, the GPU run, and the check against the CPU reference, into
//! [`Record`]s. `simtlab list` prints the [`registry`], `simtlab run NAME` runs any entry, and the
//! tests run every entry at the tiny scale.
//!
//! Adding a workload is one line in [`registry`] (see `entries.rs`): its configuration at each
//! scale and the runner it calls.
//!
//! ```no_run
//! use simtlab::workload::{self, Scale};
//! let gpu = simtlab::Gpu::new(&Default::default())?;
//! let loop_ = workload::find("micro-loop")?;
//! let params = workload::with_overrides(&*loop_, loop_.params(Scale::Tiny), &[("distribution", "sorted")])?;
//! let records = loop_.run(&gpu, &params, &Scale::Tiny.protocol())?;
//! assert!(records.iter().all(|r| r.check.passed));
//! # Ok::<(), simtlab::Error>(())
//! ```

mod entries;
mod params;
mod recordings;

pub use crate::gpu::{read_recording_async, run_recording_async, Recording};
pub use crate::harness::Scale;
pub use entries::BranchSweep;
#[cfg(all(feature = "report", not(target_arch = "wasm32")))]
pub(crate) use entries::{BarrierParams, MatmulParams, PtCaseParams, PtQueueParams, PtRuntimeParams};
pub use params::{number_value, ParamKind, ParamSpec};

use crate::divergence::Divergence;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::harness::{Footprint, Record};
#[cfg(not(target_arch = "wasm32"))]
use crate::harness::{Progress, Protocol};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Something simtlab can run and check.
pub trait Workload: Send + Sync {
    /// Unique, by what it computes (`micro-loop`, `reduction-fast`, `matmul-regtile`).
    fn name(&self) -> &'static str;
    /// The kernel family (`micro`, `lbm`, `matmul`, `pt`, …).
    fn family(&self) -> &'static str;
    /// The paper and the table or figure it reproduces.
    fn paper(&self) -> &'static str;
    /// One line on what it computes.
    fn summary(&self) -> &'static str;
    /// Every parameter with its value at `scale`, as a JSON object.
    fn params(&self, scale: Scale) -> serde_json::Value;
    /// Runs with `params` (an object as [`Workload::params`] gives, with any values changed) and
    /// checks every result against the CPU reference (each record says whether it passed).
    #[cfg(not(target_arch = "wasm32"))]
    fn run(&self, gpu: &Gpu, params: &serde_json::Value, protocol: &Protocol) -> Result<Vec<Record>> {
        self.run_with_progress(gpu, params, protocol, None)
    }
    /// [`Workload::run`], moving `progress` on by [`Workload::progress_steps`] steps: one per
    /// point of a run made of several (each of a split sweep's else-fractions, each pool of the
    /// flow-shop bench), saying what each point runs; one at the end of any other run.
    #[cfg(not(target_arch = "wasm32"))]
    fn run_with_progress(
        &self,
        gpu: &Gpu,
        params: &serde_json::Value,
        protocol: &Protocol,
        progress: Option<&Progress>,
    ) -> Result<Vec<Record>>;
    /// The steps [`Workload::run_with_progress`] moves its progress on by with `params`.
    #[cfg(not(target_arch = "wasm32"))]
    fn progress_steps(&self, params: &serde_json::Value) -> u64;
    /// The workload's GPU work prepared for recording into a caller's encoder (an app's frame),
    /// for the workloads that offer it; `None` for the others.
    fn prepare(&self, gpu: &Gpu, params: &serde_json::Value) -> Result<Option<Box<dyn Recording>>>;
    /// Whether [`Workload::prepare`] gives a [`Recording`]: the one way a workload runs where
    /// nothing may wait between its GPU steps (a browser page, an app's frame).
    fn can_prepare(&self) -> bool;
    /// Whether the configuration reads `name`, shown in [`Workload::params`] or left out while
    /// it has its default.
    fn reads_param(&self, name: &str) -> bool;
    /// Whether `params` make a valid configuration (the error says what is wrong), without running.
    fn check_params(&self, params: &serde_json::Value) -> Result<()>;
    /// What a run with `params` allocates on the device and the host, for the workloads that
    /// know it before running (`None` for the others), after checking every parameter's range:
    /// a sweep checks each point against the adapter before the first one runs.
    fn footprint(&self, params: &serde_json::Value) -> Result<Option<Footprint>>;
    /// The compute entry point whose resources decide its occupancy (the main kernel), if any.
    fn shader(&self) -> Option<crate::gpu::shader::Entry>;
    /// Per-warp divergence of a run with `params`, for heat maps: one map per thread layout
    /// (as laid out, and after a remapping where the workload has one). Empty for workloads
    /// whose records carry only the summary. Only awaits the GPU, never blocks: a browser
    /// page counts with it.
    fn warps_async<'a>(&'a self, gpu: &'a Gpu, params: &serde_json::Value, counting: Counting) -> WarpsFuture<'a>;
    /// [`Workload::warps_async`], blocking until the counts are in (the command line and the
    /// desktop explorer's worker thread).
    #[cfg(not(target_arch = "wasm32"))]
    fn warps(&self, gpu: &Gpu, params: &serde_json::Value, counting: Counting) -> Result<Vec<WarpMap>> {
        crate::gpu::block_on(self.warps_async(gpu, params, counting))
    }
}

/// The per-warp maps [`Workload::warps_async`] gives, once the GPU has counted them. Not
/// `Send`: in a browser page it runs on the page's one thread.
pub type WarpsFuture<'a> = futures::future::LocalBoxFuture<'a, Result<Vec<WarpMap>>>;

/// How per-warp divergence is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counting {
    /// The GPU probe at the adapter's subgroup width, falling back to host emulation at the
    /// given width when the adapter has no subgroups.
    Probe(u32),
    /// Host emulation at this many lanes per warp.
    Emulate(u32),
}

/// One per-warp divergence count, with what it shows.
#[derive(Clone, Debug)]
pub struct WarpMap {
    /// The thread layout it counts ("as laid out", "threads sorted by trip count").
    pub layout: String,
    /// Where the counts come from ("GPU probe, subgroup width 8", "host emulation, W = 32").
    pub source: String,
    /// The counts.
    pub divergence: Divergence,
}

/// What `simtlab list --json` prints for one workload.
#[derive(Clone, Debug, Serialize)]
pub struct Description {
    /// Unique name (`micro-loop`), as [`Workload::name`].
    pub name: &'static str,
    /// Kernel family, as [`Workload::family`].
    pub family: &'static str,
    /// The paper and the table or figure it reproduces.
    pub paper: &'static str,
    /// One line on what it computes.
    pub summary: &'static str,
    /// Parameters at [`Scale::Tiny`] (the test size).
    pub tiny: serde_json::Value,
    /// Parameters at [`Scale::Quick`].
    pub quick: serde_json::Value,
    /// Parameters at [`Scale::Full`] (the paper's sizes).
    pub paper_scale: serde_json::Value,
}

impl dyn Workload {
    /// What each parameter is (range, options, fixed), for editors and sweeps.
    pub fn param_specs(&self) -> Vec<ParamSpec> {
        params::of(self.family(), |scale| self.params(scale))
    }

    /// Its name, family, paper, summary and parameters at every scale.
    pub fn describe(&self) -> Description {
        Description {
            name: self.name(),
            family: self.family(),
            paper: self.paper(),
            summary: self.summary(),
            tiny: self.params(Scale::Tiny),
            quick: self.params(Scale::Quick),
            paper_scale: self.params(Scale::Full),
        }
    }
}

/// One registry line: a typed configuration per scale and the runner it goes to.
pub(crate) struct Entry<C> {
    pub name: &'static str,
    pub family: &'static str,
    pub paper: &'static str,
    pub summary: &'static str,
    pub config: fn(Scale) -> C,
    #[cfg(not(target_arch = "wasm32"))]
    pub run: Runner<C>,
    pub prepare: Option<Prepare<C>>,
    /// The main kernel (for occupancy).
    pub shader: Option<crate::gpu::shader::Entry>,
    /// The configuration's ranges checked before anything runs, and what a run allocates
    /// where that is known before it runs.
    pub footprint: Option<Precheck<C>>,
    /// Per-warp divergence for heat maps.
    pub warps: Option<Warps<C>>,
}

/// How a registry line runs its configuration.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) enum Runner<C> {
    /// In one piece: one progress step when it is done.
    Whole(fn(&Gpu, &C, &Protocol) -> Result<Vec<Record>>),
    /// Point by point: how many points a configuration has, and the run.
    Points(fn(&C) -> u64, RunPoints<C>),
}

/// A registry line's run that moves the progress on once per point.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) type RunPoints<C> = fn(&Gpu, &C, &Protocol, Option<&Progress>) -> Result<Vec<Record>>;

/// How a registry line counts per-warp divergence.
pub(crate) type Warps<C> = fn(&Gpu, C, Counting) -> WarpsFuture<'_>;

/// How a registry line prepares its [`Recording`].
pub(crate) type Prepare<C> = fn(&Gpu, &C) -> Result<Box<dyn Recording>>;

/// An entry's check of its configuration before anything runs: the footprint where it is
/// known then.
pub(crate) type Precheck<C> = fn(&C) -> Result<Option<Footprint>>;

impl<C: Serialize + DeserializeOwned> Workload for Entry<C> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn family(&self) -> &'static str {
        self.family
    }
    fn paper(&self) -> &'static str {
        self.paper
    }
    fn summary(&self) -> &'static str {
        self.summary
    }
    fn params(&self, scale: Scale) -> serde_json::Value {
        serde_json::to_value((self.config)(scale)).unwrap_or_default()
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn run_with_progress(
        &self,
        gpu: &Gpu,
        params: &serde_json::Value,
        protocol: &Protocol,
        progress: Option<&Progress>,
    ) -> Result<Vec<Record>> {
        let config = self.config(params)?;
        match &self.run {
            Runner::Whole(run) => {
                let records = run(gpu, &config, protocol)?;
                if let Some(p) = progress {
                    p.step("");
                }
                Ok(records)
            }
            Runner::Points(_, run) => run(gpu, &config, protocol, progress),
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn progress_steps(&self, params: &serde_json::Value) -> u64 {
        match (&self.run, self.config(params)) {
            (Runner::Points(points, _), Ok(config)) => points(&config),
            _ => 1,
        }
    }
    fn prepare(&self, gpu: &Gpu, params: &serde_json::Value) -> Result<Option<Box<dyn Recording>>> {
        match self.prepare {
            Some(prepare) => prepare(gpu, &self.config(params)?).map(Some),
            None => Ok(None),
        }
    }
    fn can_prepare(&self) -> bool {
        self.prepare.is_some()
    }
    fn reads_param(&self, name: &str) -> bool {
        let mut params = self.params(Scale::Tiny);
        let Some(object) = params.as_object_mut() else { return false };
        if object.contains_key(name) {
            return true;
        }
        // A configuration ignores a key it does not read and refuses a value of the wrong type
        // for one it does; no parameter is a free string, so a string stands for the wrong type.
        object.insert(name.into(), serde_json::Value::String("\u{0}".into()));
        self.config(&params).is_err()
    }
    fn check_params(&self, params: &serde_json::Value) -> Result<()> {
        self.config(params).map(drop)
    }
    fn footprint(&self, params: &serde_json::Value) -> Result<Option<Footprint>> {
        let config = self.config(params)?;
        self.footprint.map_or(Ok(None), |f| f(&config))
    }
    fn shader(&self) -> Option<crate::gpu::shader::Entry> {
        self.shader
    }
    fn warps_async<'a>(&'a self, gpu: &'a Gpu, params: &serde_json::Value, counting: Counting) -> WarpsFuture<'a> {
        match (self.warps, self.config(params)) {
            (Some(warps), Ok(config)) => warps(gpu, config, counting),
            (Some(_), Err(e)) => Box::pin(std::future::ready(Err(e))),
            (None, _) => Box::pin(std::future::ready(Ok(Vec::new()))),
        }
    }
}

impl<C: Serialize + DeserializeOwned> Entry<C> {
    fn config(&self, params: &serde_json::Value) -> Result<C> {
        serde_json::from_value(params.clone()).map_err(|e| Error::InvalidParameter {
            workload: self.name.into(),
            // the scale the caller started from is not known here: name the parameters, not
            // one scale's values
            message: format!("{e} (its parameters: {})", parameter_names(&self.params(Scale::Tiny))),
        })
    }
}

/// The top-level keys of `params`, comma separated.
fn parameter_names(params: &serde_json::Value) -> String {
    params.as_object().map_or_else(String::new, |o| o.keys().cloned().collect::<Vec<_>>().join(", "))
}

/// Every workload, by family.
pub fn registry() -> Vec<Box<dyn Workload>> {
    entries::all()
}

/// The workload whose run gave `record`, for a record file that names no workload (`simtlab
/// run NAME` writes the family): of the record's family, a workload whose fixed parameters the
/// record holds with the same values (`micro-loop` runs the loop pattern), the one whose
/// parameter keys it holds the most of. None when no workload of that family fits.
pub fn of_record(record: &Record) -> Option<Box<dyn Workload>> {
    let mut best: Option<(usize, Box<dyn Workload>)> = None;
    for w in registry().into_iter().filter(|w| w.family() == record.family) {
        let own = w.params(Scale::Tiny);
        let mut score = 0;
        let mut fits = true;
        for spec in w.param_specs() {
            let given = spec.get(&record.params);
            if spec.fixed && given != spec.get(&own) {
                fits = false;
                break;
            }
            score += usize::from(!given.is_null() || spec.nullable);
        }
        if fits && best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((score, w));
        }
    }
    best.map(|(_, w)| w)
}

/// The workload called `name`, or an error listing the names.
pub fn find(name: &str) -> Result<Box<dyn Workload>> {
    let all = registry();
    let names: Vec<&str> = all.iter().map(|w| w.name()).collect();
    let names = names.join(", ");
    all.into_iter()
        .find(|w| w.name() == name)
        .ok_or_else(|| Error::InvalidParameter { workload: name.into(), message: format!("no such workload; the workloads are: {names}") })
}

/// One run of a sweep: a registry workload and its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The workload's name ([`Workload::name`]).
    pub workload: String,
    /// Its parameters: an object as [`Workload::params`] gives, with any values changed.
    pub params: serde_json::Value,
    /// What the progress line shows while it runs.
    pub label: String,
}

impl Run {
    /// The workload `name` with `params` (a configuration that serialises to its parameters),
    /// labelled by its name.
    pub fn new(name: &str, params: &impl Serialize) -> Result<Run> {
        let params = serde_json::to_value(params)
            .map_err(|e| Error::InvalidParameter { workload: name.into(), message: format!("parameters not writable as JSON: {e}") })?;
        Ok(Run { workload: name.into(), params, label: name.into() })
    }
}

/// Runs each of `runs` in order into one list of records, once every run's parameters are
/// checked and, where its workload knows what it allocates, found to fit `gpu` and the host:
/// a sweep that cannot run whole fails before its first run starts. `what` names the progress,
/// which moves on per point of each run ([`Workload::run_with_progress`]).
#[cfg(not(target_arch = "wasm32"))]
pub fn run_all(gpu: &Gpu, runs: &[Run], protocol: &Protocol, what: &str) -> Result<Vec<Record>> {
    let mut workloads = Vec::with_capacity(runs.len());
    for run in runs {
        let workload = find(&run.workload)?;
        match workload.footprint(&run.params)? {
            Some(footprint) => footprint.check(gpu)?,
            None => workload.check_params(&run.params)?,
        }
        workloads.push(workload);
    }
    let steps = workloads.iter().zip(runs).map(|(w, run)| w.progress_steps(&run.params)).sum();
    let progress = Progress::new(steps, what);
    let mut records = Vec::new();
    for (workload, run) in workloads.iter().zip(runs) {
        progress.message(run.label.clone());
        records.append(&mut workload.run_with_progress(gpu, &run.params, protocol, Some(&progress))?);
    }
    progress.finish();
    Ok(records)
}

/// `params` of `workload` with `overrides` (`name`, `value`) applied: a value is read as JSON
/// when it parses (numbers, booleans, `null`, lists), else as a string. A name may be one the
/// parameters leave out while it has its default (a persistent-threads entry's `tier`); a name
/// the workload does not read is an error that lists the ones `params` shows.
pub fn with_overrides(workload: &dyn Workload, mut params: serde_json::Value, overrides: &[(&str, &str)]) -> Result<serde_json::Value> {
    let refused = |message: String| Error::InvalidParameter { workload: workload.name().into(), message };
    let object = params.as_object_mut().ok_or_else(|| refused("this workload takes no parameters".into()))?;
    for &(name, value) in overrides {
        if !object.contains_key(name) && !workload.reads_param(name) {
            let known: Vec<&str> = object.keys().map(String::as_str).collect();
            return Err(refused(format!("no parameter '{name}'; use one of {}", known.join(", "))));
        }
        let parsed = serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.to_string()));
        object.insert(name.to_string(), parsed);
    }
    Ok(params)
}

/// Parses `name=value`.
pub fn parse_override(text: &str) -> Result<(&str, &str)> {
    text.split_once('=')
        .map(|(k, v)| (k.trim(), v.trim()))
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| Error::InvalidParameter { workload: String::new(), message: format!("'{text}': give name=value, e.g. n=4096") })
}

impl std::fmt::Debug for dyn Workload + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workload").field("name", &self.name()).field("family", &self.family()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_scale_deserialises_back() {
        let all = registry();
        let mut names = std::collections::HashSet::new();
        for w in &all {
            assert!(names.insert(w.name()), "duplicate {}", w.name());
            for scale in [Scale::Tiny, Scale::Quick, Scale::Full] {
                let p = w.params(scale);
                assert!(p.is_object(), "{} {scale:?}: {p}", w.name());
            }
        }
        assert!(find("no-such").err().map(|e| e.to_string()).unwrap_or_default().contains("micro-loop"));
    }

    #[test]
    fn overrides_replace_values_and_refuse_unknown_names() {
        let w = find("micro-loop").unwrap();
        let p = with_overrides(&*w, w.params(Scale::Tiny), &[("n", "100"), ("distribution", "sorted")]).unwrap();
        assert_eq!(p["n"], 100);
        assert_eq!(p["distribution"], "sorted");
        let err = with_overrides(&*w, w.params(Scale::Tiny), &[("nn", "1")]).unwrap_err().to_string();
        assert!(err.contains("'nn'") && err.contains("distribution"), "{err}");
        assert!(parse_override("n").is_err() && parse_override("=3").is_err());
        // names left out of the parameters while at their defaults, at a default value or not
        for (name, hidden) in [
            ("pt-sync", &[("tier", "[0]"), ("tier", "[]"), ("spin_cap", "1000"), ("grace", "64"), ("launch", "2")][..]),
            ("matmul-naive", &[("compiler", "wgpu")]),
            ("reduction", &[("fast_groups", "64")]),
            ("lbm", &[("variants", "none")]),
        ] {
            let w = find(name).unwrap();
            for &(key, value) in hidden {
                assert!(!w.params(Scale::Tiny).as_object().unwrap().contains_key(key), "{name}: {key} is shown");
                let p = with_overrides(&*w, w.params(Scale::Tiny), &[(key, value)]).unwrap_or_else(|e| panic!("{name} {key}: {e}"));
                assert_eq!(p[key], serde_json::from_str::<serde_json::Value>(value).unwrap_or_else(|_| value.into()));
                w.check_params(&p).unwrap_or_else(|e| panic!("{name} {key}={value}: {e}"));
            }
            let err = with_overrides(&*w, w.params(Scale::Tiny), &[("tiers", "[0]")]).unwrap_err().to_string();
            assert!(err.contains("no parameter 'tiers'") && err.contains(name), "{err}");
        }
        // a struct left out while default is read too
        let regtile = find("matmul-regtile").unwrap();
        assert!(regtile.reads_param("regtile") && !regtile.reads_param("regtiles"));
        assert_eq!(parse_override("n = 5").unwrap(), ("n", "5"));
    }
}
