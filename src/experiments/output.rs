//! The output directory of `reproduce`: checked and locked before any GPU work, rewritten after
//! every point (so an interrupted run keeps what it finished), resumable, and mergeable.

use super::{Outcome, Scale, Shard};
use crate::error::{Error, Result};
use crate::harness::Environment;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What a reproduction ran on and how, written to `run.json` beside `results.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunInfo {
    /// Adapter, driver, backend and build the run used.
    pub environment: Environment,
    /// Problem sizes the run used.
    pub scale: Scale,
    /// `--paper` (a paper's short name or `all`).
    pub paper: String,
    /// `i` of `--shard i/n` (1 without sharding).
    pub shard_index: usize,
    /// `n` of `--shard i/n` (1 without sharding).
    pub shard_count: usize,
    /// The report's header lines.
    pub header: Vec<String>,
}

impl RunInfo {
    /// The adapter in one line, for comparing runs.
    pub fn adapter(&self) -> String {
        format!("{} ({})", self.environment.adapter, self.environment.backend)
    }

    /// The shard this run took.
    pub fn shard(&self) -> Shard {
        Shard { index: self.shard_index, count: self.shard_count }
    }
}

/// A locked output directory. The lock (on `.simtlab.lock`) is released when this is dropped
/// or the process ends, however it ends.
#[derive(Debug)]
pub struct OutputDir {
    dir: PathBuf,
    _lock: std::fs::File,
}

const LOCK_FILE: &str = ".simtlab.lock";

impl OutputDir {
    /// Creates `dir` if needed, checks that it can be written, and locks it so that a second run
    /// into the same directory is refused instead of interleaving its results.
    pub fn open(dir: &Path) -> Result<OutputDir> {
        if dir.exists() && !dir.is_dir() {
            return Err(Error::invalid("out", format!("{} exists and is not a directory; give a directory", dir.display())));
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let lock = crate::harness::try_lock(&dir.join(LOCK_FILE))
            .map_err(|e| Error::invalid("out", format!("{} cannot be written ({e}); give a writable directory", dir.display())))?;
        match lock {
            Some(lock) => Ok(OutputDir { dir: dir.to_path_buf(), _lock: lock }),
            None => Err(Error::invalid(
                "out",
                format!("another simtlab run is writing to {}; wait for it or give another directory", dir.display()),
            )),
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The run already in the directory, if any: its description (absent for directories
    /// written before `run.json` existed) and its outcomes.
    pub fn previous(&self) -> Result<Option<(Option<RunInfo>, Vec<Outcome>)>> {
        if !self.dir.join(RESULTS).exists() {
            return Ok(None);
        }
        Ok(Some((read_info(&self.dir)?, read_outcomes(&self.dir)?)))
    }

    /// Writes `results.json`, `run.json` and the report (each replaced whole, never truncated).
    pub fn write(&self, info: &RunInfo, outcomes: &[Outcome]) -> Result<()> {
        let json = serde_json::to_string_pretty(info).map_err(|e| Error::invalid("run description", e.to_string()))?;
        crate::harness::replace_file(&self.dir.join(INFO), json.as_bytes())?;
        write_report(&self.dir, outcomes, &info.header)
    }
}

const RESULTS: &str = "results.json";
const INFO: &str = "run.json";

/// Renders every experiment that has outcomes into `dir/report.md` (+ PNGs) and writes all
/// outcomes to `dir/results.json`.
pub fn write_report(dir: &Path, outcomes: &[Outcome], header: &[String]) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let json = serde_json::to_string_pretty(outcomes).map_err(|e| Error::invalid("results", e.to_string()))?;
    crate::harness::replace_file(&dir.join(RESULTS), json.as_bytes())?;
    let mut sections = Vec::new();
    for exp in super::all() {
        let mine: Vec<&Outcome> = outcomes.iter().filter(|o| o.point.experiment == exp.id()).collect();
        if mine.is_empty() {
            continue;
        }
        let values = crate::report::PaperValues::of(exp.paper())?;
        sections.push(exp.render(&mine, &values));
    }
    crate::report::render_report(dir, "simtlab reproduction report", header, &sections)
}

/// Reads `dir/results.json` written by [`write_report`].
pub fn read_outcomes(dir: &Path) -> Result<Vec<Outcome>> {
    let path = dir.join(RESULTS);
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::File { path, message: format!("not a simtlab results file: {e}") })
}

/// Reads `dir/run.json`; `None` when the directory has none.
pub fn read_info(dir: &Path) -> Result<Option<RunInfo>> {
    let path = dir.join(INFO);
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    serde_json::from_str(&text).map(Some).map_err(|e| Error::File { path, message: format!("not a simtlab run description: {e}") })
}

/// The outcomes of an earlier run that resuming keeps: those that ran without error, when the
/// earlier run used the same adapter and scale. Anything else is an error that says why.
pub fn resumable(previous: Option<(Option<RunInfo>, Vec<Outcome>)>, now: &RunInfo) -> Result<Vec<Outcome>> {
    let Some((info, outcomes)) = previous else {
        return Ok(Vec::new());
    };
    let Some(info) = info else {
        return Err(Error::invalid("resume", "the directory's results.json has no run.json beside it (written by an older simtlab), so its adapter and scale are unknown; run without `resume`"));
    };
    if info.adapter() != now.adapter() || info.scale != now.scale {
        return Err(Error::invalid(
            "resume",
            format!(
                "the directory holds a {:?} run on {}, this is a {:?} run on {}; give another `out` or run without `resume`",
                info.scale,
                info.adapter(),
                now.scale,
                now.adapter()
            ),
        ));
    }
    Ok(outcomes.into_iter().filter(|o| o.error.is_none()).collect())
}

/// What `report merge` joins: the outcomes and, where present, each directory's description.
#[derive(Debug)]
pub struct MergeInput {
    /// The output directory the part was read from.
    pub dir: PathBuf,
    /// Its `run.json`, when present.
    pub info: Option<RunInfo>,
    /// Its `results.json`.
    pub outcomes: Vec<Outcome>,
}

/// The merged report's outcomes and header, after checking that the parts belong together:
/// one adapter (unless `allow_mixed`), `out` not one of the inputs; the header says which shards
/// are missing.
pub fn merge_dirs(dirs: &[PathBuf], out: &Path, allow_mixed: bool) -> Result<(Vec<Outcome>, Vec<String>)> {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let out_c = canonical(out);
    if let Some(d) = dirs.iter().find(|d| canonical(d) == out_c) {
        return Err(Error::invalid(
            "out",
            format!("{} is one of the inputs; merging into it would overwrite that shard. Give another `out`", d.display()),
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some(d) = dirs.iter().find(|d| !seen.insert(canonical(d))) {
        return Err(Error::invalid("report merge", format!("{} is given twice; name each input once", d.display())));
    }
    let inputs = dirs
        .iter()
        .map(|d| Ok(MergeInput { dir: d.clone(), info: read_info(d)?, outcomes: read_outcomes(d)? }))
        .collect::<Result<Vec<_>>>()?;
    // a quick run's points beside a full run's would compare different sizes as one sweep
    let scales: Vec<(&Path, Scale)> = inputs.iter().filter_map(|i| i.info.as_ref().map(|info| (i.dir.as_path(), info.scale))).collect();
    if scales.iter().any(|&(_, scale)| scale != scales[0].1) {
        let list = scales.iter().map(|(dir, scale)| format!("{}: {scale:?}", dir.display())).collect::<Vec<_>>().join("; ");
        return Err(Error::invalid("report merge", format!("the inputs ran at different scales ({list}); merge runs of one scale")));
    }
    // the adapter of each input: its description, or its records' environment
    let adapter_of = |i: &MergeInput| -> Vec<String> {
        match &i.info {
            Some(info) => vec![info.adapter()],
            None => {
                let mut v: Vec<String> = i
                    .outcomes
                    .iter()
                    .flat_map(|o| &o.records)
                    .map(|r| format!("{} ({})", r.environment.adapter, r.environment.backend))
                    .collect();
                v.sort();
                v.dedup();
                v
            }
        }
    };
    let mut adapters: Vec<String> = inputs.iter().flat_map(adapter_of).collect();
    adapters.sort();
    adapters.dedup();
    if adapters.len() > 1 && !allow_mixed {
        let per_dir: Vec<String> = inputs.iter().map(|i| format!("{}: {}", i.dir.display(), adapter_of(i).join(", "))).collect();
        return Err(Error::invalid(
            "report merge",
            format!("the inputs ran on different adapters ({}); set `allow_mixed` to merge them anyway", per_dir.join("; ")),
        ));
    }
    let mut header = Vec::new();
    let first = inputs.iter().find_map(|i| i.info.as_ref());
    if let Some(info) = first {
        // the first run's adapter, subgroup and mode lines (everything but its command)
        header.extend(
            info.header.iter().filter(|l| !l.starts_with("command:") && !l.starts_with("mode:") && !l.starts_with("git:")).cloned(),
        );
        let mut gits: Vec<&str> = inputs
            .iter()
            .filter_map(|i| i.info.as_ref())
            .flat_map(|i| i.header.iter().filter(|l| l.starts_with("git:")))
            .map(String::as_str)
            .collect();
        gits.dedup();
        header.extend(gits.into_iter().map(String::from));
    }
    if adapters.len() > 1 {
        header.push(format!("mixed adapters: {}", adapters.join(", ")));
    }
    header.push(format!("merged from {}", dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")));
    for m in missing_shards(&inputs) {
        header.push(m);
    }
    let merged = super::merge(inputs.into_iter().map(|i| i.outcomes).collect());
    Ok((merged, header))
}

/// One line per shard count whose shards are not all present, naming the missing ones.
pub fn missing_shards(inputs: &[MergeInput]) -> Vec<String> {
    let mut by_count: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for info in inputs.iter().filter_map(|i| i.info.as_ref()) {
        by_count.entry(info.shard_count).or_default().push(info.shard_index);
    }
    by_count
        .into_iter()
        .filter_map(|(n, have)| {
            let missing: Vec<String> = (1..=n).filter(|i| !have.contains(i)).map(|i| format!("{i}/{n}")).collect();
            (!missing.is_empty()).then(|| format!("missing shards: {} (their points are absent from this report)", missing.join(", ")))
        })
        .collect()
}
