//! A [`Checkpoint`] of a resident search: the open frontier, the incumbent and the counts, in
//! one file that a later run resumes (`flowshop solve --resume FILE`).
//!
//! File: the line `simtlab flowshop checkpoint 2`, a JSON header line (the instance's name,
//! size and a hash of its processing times, the options a node count depends on, the incumbent
//! and its schedule, the start schedule, counters, seconds, and `records`, the number of node
//! records), then the open nodes as little-endian u32 words in the resident search's compact
//! form ([`Frontier`]: the node records of [`super::resident::node_stride`] words, then the
//! 3-word entries that refer to them), then the FNV-1a 64 hash of everything before it (8
//! bytes). Version 1 files (every open node a full record) are read too. A file whose hash,
//! header or nodes do not check is refused, never resumed.
//!
//! The hash catches accidents (a file cut short, a flipped bit), not intent: anyone can write a
//! file with a matching hash. So a resume also recomputes what the permutations determine (the
//! makespans of the schedules, each open node's heads, tails and a bound no larger than its
//! own), and a search never calls a makespan optimal above a known schedule of the instance
//! ([`super::commands::solve_loaded`]). What cannot be recomputed (that the frontier holds every
//! open subtree) rests on the file being the one simtlab wrote.

use std::path::{Path, PathBuf};

use super::model::{Instance, LowerBound, Node};
use super::resident::{entry_node, node_stride, Frontier, ENTRY_WORDS, PLACE_BACKWARD, PLACE_NONE};
use super::search::{Branching, SearchOptions};
use crate::error::{Error, Result};

const MAGIC: &str = "simtlab flowshop checkpoint 2\n";
/// Files written before open nodes had a compact form: every open node a full record.
const MAGIC_FULL_NODES: &str = "simtlab flowshop checkpoint 1\n";

/// The state of a resident search between two submissions.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Checkpoint {
    /// Name of the instance (the check compares its size and processing times).
    pub instance: String,
    /// Jobs of the instance.
    pub jobs: usize,
    /// Machines of the instance.
    pub machines: usize,
    /// FNV-1a 64 of the processing times (machine-major, little-endian u32).
    pub ptimes_hash: u64,
    /// The lower bound the search uses (a resume must use the same).
    pub bound: LowerBound,
    /// The branching the search uses (a resume must use the same).
    pub branching: Branching,
    /// The `--ub` the search started with.
    pub upper_bound: Option<u32>,
    /// The incumbent: children are kept iff their bound is below it.
    pub best: u32,
    /// A schedule of makespan `best`, when one is known.
    pub best_permutation: Option<Vec<usize>>,
    /// Makespan of the start schedule (the heuristic's).
    pub start_makespan: u32,
    /// The start schedule.
    pub start_permutation: Vec<usize>,
    /// Seconds the start heuristic took.
    pub heuristic_seconds: f64,
    /// Seconds the search ran before this checkpoint, over all its runs.
    pub seconds: f64,
    /// Part of `seconds` spent waiting for the GPU (0 in files written before it was kept).
    #[serde(default)]
    pub gpu_seconds: f64,
    /// Nodes bounded so far, over all runs.
    pub nodes_counted: u64,
    /// Leaves (complete schedules) reached so far, over all runs.
    pub leaves_counted: u64,
    /// Node records, `node_stride(jobs, machines)` words each, that the open entries refer to.
    #[serde(skip)]
    pub nodes: Vec<u32>,
    /// Open nodes as [`Frontier`] entries `[record, place, bound]`.
    #[serde(skip)]
    pub entries: Vec<u32>,
}

/// The file one search writes its checkpoints to, claimed before the search starts: a path
/// that cannot hold a checkpoint (a directory, a device, a directory without write permission)
/// is refused then, not after hours of search, and a lock beside it (`FILE.lock`, held while
/// this lives) keeps a second search from writing the same file.
#[derive(Debug)]
pub struct CheckpointFile {
    path: PathBuf,
    _lock: std::fs::File,
}

impl CheckpointFile {
    /// Checks that `path` can take a checkpoint and locks it for this search.
    pub fn claim(path: &Path) -> Result<Self> {
        let refuse = |why: String| Error::invalid("checkpoint", format!("{} {why}", path.display()));
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => return Err(refuse("is a directory; give a file path".into())),
            Ok(m) if !m.is_file() => {
                return Err(refuse("is not a regular file, so a checkpoint there could not be read back; give a file path".into()))
            }
            _ => {}
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                refuse(format!("cannot be written: its directory cannot be made ({e}); give a path in a writable directory"))
            })?;
        }
        let mut lock = path.as_os_str().to_owned();
        lock.push(".lock");
        match crate::harness::try_lock(Path::new(&lock)) {
            Ok(Some(lock)) => Ok(CheckpointFile { path: path.to_path_buf(), _lock: lock }),
            Ok(None) => Err(refuse("is being written by another search; wait for it to end or give another file".into())),
            Err(e) => Err(refuse(format!("cannot be written ({e}); give a path in a writable directory"))),
        }
    }

    /// The checkpoint's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Replaces the file with `checkpoint` (atomically: a failure leaves the previous one).
    pub fn write(&self, checkpoint: &Checkpoint) -> Result<()> {
        checkpoint.write(&self.path)
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

fn ptimes_hash(instance: &Instance) -> u64 {
    fnv1a(bytemuck::cast_slice(&instance.p))
}

impl Checkpoint {
    /// The state of a search of `instance` under `options`; `start` is the start heuristic's
    /// (makespan, schedule, seconds), `seconds` the (total, waiting for the GPU) seconds and
    /// `counted` the (nodes, leaves) counted so far.
    #[allow(clippy::too_many_arguments, reason = "one argument per part of the search's state that a checkpoint keeps")]
    pub fn new(
        instance: &Instance,
        options: &SearchOptions,
        best: u32,
        best_permutation: Option<Vec<usize>>,
        start: (u32, Vec<usize>, f64),
        seconds: (f64, f64),
        counted: (u64, u64),
        open: Frontier,
    ) -> Self {
        Self {
            instance: instance.name.clone(),
            jobs: instance.jobs,
            machines: instance.machines,
            ptimes_hash: ptimes_hash(instance),
            bound: options.bound,
            branching: options.branching,
            upper_bound: options.upper_bound,
            best,
            best_permutation,
            start_makespan: start.0,
            start_permutation: start.1,
            heuristic_seconds: start.2,
            seconds: seconds.0,
            gpu_seconds: seconds.1,
            nodes_counted: counted.0,
            leaves_counted: counted.1,
            nodes: open.records,
            entries: open.entries,
        }
    }

    /// Open nodes in the checkpoint.
    pub fn open_nodes(&self) -> usize {
        self.entries.len() / ENTRY_WORDS
    }

    /// The open nodes (moved out of the checkpoint).
    pub fn take_open(&mut self) -> Frontier {
        Frontier { records: std::mem::take(&mut self.nodes), entries: std::mem::take(&mut self.entries) }
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let invalid = |e: serde_json::Error| Error::invalid("checkpoint", e.to_string());
        let mut header = serde_json::to_value(self).map_err(invalid)?;
        header["records"] = (self.nodes.len() / node_stride(self.jobs, self.machines).max(1)).into();
        let header = serde_json::to_string(&header).map_err(invalid)?;
        let words = self.nodes.len() + self.entries.len();
        let mut bytes = Vec::with_capacity(MAGIC.len() + header.len() + 1 + 4 * words + 8);
        bytes.extend_from_slice(MAGIC.as_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.push(b'\n');
        for word in self.nodes.iter().chain(&self.entries) {
            bytes.extend_from_slice(&word.to_le_bytes());
        }
        let hash = fnv1a(&bytes);
        bytes.extend_from_slice(&hash.to_le_bytes());
        Ok(bytes)
    }

    /// Writes the file atomically (a crash leaves the previous checkpoint).
    pub fn write(&self, path: &Path) -> Result<()> {
        crate::harness::write_file(path, &self.to_bytes()?)
    }

    /// Reads and checks a checkpoint file.
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::from_bytes(&bytes)
            .map_err(|message| Error::File { path: path.to_path_buf(), message: format!("not a usable flow-shop checkpoint: {message}") })
    }

    /// Parses and checks the bytes of a checkpoint file; the error says what is wrong.
    pub fn from_bytes(bytes: &[u8]) -> std::result::Result<Self, String> {
        let body = bytes.len().checked_sub(8).map(|at| bytes.split_at(at)).ok_or("the file is too short")?;
        let (rest, full_nodes) = match body.0.strip_prefix(MAGIC.as_bytes()) {
            Some(rest) => (rest, false),
            None => (body.0.strip_prefix(MAGIC_FULL_NODES.as_bytes()).ok_or("it does not start with the checkpoint line")?, true),
        };
        let stored = u64::from_le_bytes(body.1.try_into().map_err(|_| "no hash at the end")?);
        if fnv1a(body.0) != stored {
            return Err("its hash does not match its content (the file is damaged or was cut short)".into());
        }
        let line_end = rest.iter().position(|&b| b == b'\n').ok_or("no header line")?;
        let header: serde_json::Value = serde_json::from_slice(&rest[..line_end]).map_err(|e| format!("its header does not parse: {e}"))?;
        let mut checkpoint: Checkpoint = serde_json::from_value(header.clone()).map_err(|e| format!("its header does not parse: {e}"))?;
        let words = &rest[line_end + 1..];
        if !words.len().is_multiple_of(4) {
            return Err("its node section is not whole words".into());
        }
        let mut words: Vec<u32> = words.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
        checkpoint.check_size()?;
        let stride = node_stride(checkpoint.jobs, checkpoint.machines);
        if full_nodes {
            if !words.len().is_multiple_of(stride) {
                return Err(format!("its nodes are not whole records of {stride} words"));
            }
            let open = Frontier::of_nodes(words, stride);
            (checkpoint.nodes, checkpoint.entries) = (open.records, open.entries);
        } else {
            let records = header["records"].as_u64().ok_or("its header does not say how many node records follow")? as usize;
            let record_words =
                records.checked_mul(stride).filter(|&w| w <= words.len()).ok_or("it holds fewer node records than its header says")?;
            checkpoint.entries = words.split_off(record_words);
            checkpoint.nodes = words;
        }
        checkpoint.check_nodes()?;
        Ok(checkpoint)
    }

    /// The instance size is one simtlab solves.
    fn check_size(&self) -> std::result::Result<(), String> {
        let (n, m) = (self.jobs, self.machines);
        if n == 0 || m == 0 || n > super::MAX_JOBS || m > super::MAX_MACHINES {
            return Err(format!("its instance size {n}x{m} is not one simtlab solves"));
        }
        Ok(())
    }

    /// Every record is a permutation of the jobs with `front < back` within it, and every
    /// entry refers to a record and places one of its unscheduled jobs.
    fn check_nodes(&self) -> std::result::Result<(), String> {
        self.check_size()?;
        let (n, m) = (self.jobs, self.machines);
        let stride = node_stride(n, m);
        if !self.nodes.len().is_multiple_of(stride) {
            return Err(format!("its nodes are not whole records of {stride} words"));
        }
        if !self.entries.len().is_multiple_of(ENTRY_WORDS) {
            return Err(format!("its open nodes are not whole entries of {ENTRY_WORDS} words"));
        }
        let schedules = self.best_permutation.iter().chain([&self.start_permutation]);
        if schedules.clone().any(|p| p.len() != n) {
            return Err("a schedule in its header does not have one entry per job".into());
        }
        let mut seen = vec![false; n];
        for (i, node) in self.nodes.chunks_exact(stride).enumerate() {
            let (front, back) = (node[0] as usize, node[1] as usize);
            seen.iter_mut().for_each(|s| *s = false);
            let permutation = node[3..3 + n].iter().all(|&j| (j as usize) < n && !std::mem::replace(&mut seen[j as usize], true));
            if front >= back || back > n || !permutation {
                return Err(format!("node record {i} is not a subproblem of the instance"));
            }
        }
        let records = self.nodes.len() / stride;
        for (i, entry) in self.entries.chunks_exact(ENTRY_WORDS).enumerate() {
            let record = entry[0] as usize;
            let fits = record < records && {
                let (front, back) = (self.nodes[record * stride] as usize, self.nodes[record * stride + 1] as usize);
                let place = (entry[1] & !PLACE_BACKWARD) as usize;
                entry[1] == PLACE_NONE || ((front..back).contains(&place) && back - front >= 2)
            };
            if !fits {
                return Err(format!("open node {i} is not a subproblem of the instance"));
            }
        }
        Ok(())
    }

    /// Fails unless this checkpoint belongs to `instance` searched with `options`' bound,
    /// branching and upper bound, and what its permutations determine is what it says: the
    /// makespans of its schedules, and each open node's heads, tails and bound (a bound above
    /// the node's own would prune a subtree unsearched).
    pub fn check_against(&self, instance: &Instance, options: &SearchOptions) -> Result<&Self> {
        self.check_options(instance, options)?;
        self.check_recomputed(&super::BoundData::new(instance)).map_err(|message| {
            Error::invalid(
                "resume",
                format!("the checkpoint of {} does not hold together: {message}; start the search again", self.instance),
            )
        })?;
        Ok(self)
    }

    /// The schedules' makespans and the open nodes' heads, tails and bounds, recomputed.
    fn check_recomputed(&self, data: &super::BoundData) -> std::result::Result<(), String> {
        let makespan =
            |perm: &[usize]| super::cpu::permutation_makespan(data.jobs, data.machines, &data.ptimes, perm).map_err(|e| e.to_string());
        if makespan(&self.start_permutation)? != self.start_makespan {
            return Err(format!("its start schedule's makespan is not {}", self.start_makespan));
        }
        match &self.best_permutation {
            Some(perm) if makespan(perm)? != self.best => return Err(format!("its best schedule's makespan is not {}", self.best)),
            // without a schedule, the incumbent is where the search started: the start or the upper bound
            None if self.best != self.upper_bound.map_or(self.start_makespan, |ub| ub.min(self.start_makespan)) => {
                return Err(format!("its incumbent {} has no schedule and is neither the start's makespan nor the upper bound", self.best));
            }
            _ => {}
        }
        let stride = node_stride(data.jobs, data.machines);
        let records = self.nodes.len() / stride;
        // items 0..records are the records, the rest the open nodes made from them
        let check = |i: usize| -> Option<String> {
            let (node, what) = if i < records {
                (self.nodes[i * stride..(i + 1) * stride].to_vec(), format!("node record {i}"))
            } else {
                let entry = &self.entries[ENTRY_WORDS * (i - records)..ENTRY_WORDS * (i - records + 1)];
                match entry_node(data, &self.nodes, entry) {
                    Ok(node) => (node, format!("open node {}", i - records)),
                    Err(why) => return Some(format!("open node {}: {why}", i - records)),
                }
            };
            recomputed_mismatch(data, self.bound, &node).map(|why| format!("{what}: {why}"))
        };
        let items = records + self.open_nodes();
        // one part per core (the browser has one thread and cannot spawn)
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
        let bad = if threads == 1 {
            (0..items).find_map(check)
        } else {
            let chunk = items.div_ceil(threads).max(1);
            std::thread::scope(|scope| {
                let parts: Vec<_> =
                    (0..threads).map(|part| scope.spawn(move || (part * chunk..((part + 1) * chunk).min(items)).find_map(check))).collect();
                parts.into_iter().find_map(|p| p.join().unwrap_or(Some("its check could not run".into())))
            })
        };
        match bad {
            Some(what) => Err(what),
            None => Ok(()),
        }
    }

    /// `check_against`'s part that compares the header with the instance and the options.
    fn check_options(&self, instance: &Instance, options: &SearchOptions) -> Result<()> {
        let mismatch = |file: String, now: String| {
            Error::invalid(
                "resume",
                format!("the checkpoint was written for {file}, this run has {now}; resume with the options it was written with"),
            )
        };
        // a field as the message writes it: `bound=lb2`
        let field = |name: &str, value: String| format!("`{name}={value}`");
        if (self.jobs, self.machines, self.ptimes_hash) != (instance.jobs, instance.machines, ptimes_hash(instance)) {
            return Err(mismatch(format!("the instance {}", self.instance), instance.name.clone()));
        }
        // the names the options are written with (serde's)
        let name = |v: serde_json::Result<serde_json::Value>| v.ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
        if self.bound != options.bound {
            let (file, now) = (name(serde_json::to_value(self.bound)), name(serde_json::to_value(options.bound)));
            return Err(mismatch(field("bound", file), field("bound", now)));
        }
        if self.branching != options.branching {
            let (file, now) = (name(serde_json::to_value(self.branching)), name(serde_json::to_value(options.branching)));
            return Err(mismatch(field("branching", file), field("branching", now)));
        }
        if options.upper_bound.is_some() && self.upper_bound != options.upper_bound {
            let ub = |u: Option<u32>| u.map_or("none".into(), |u| u.to_string());
            return Err(mismatch(field("upper_bound", ub(self.upper_bound)), field("upper_bound", ub(options.upper_bound))));
        }
        Ok(())
    }
}

/// What in an open node `[front, back, bound, perm, heads, tails]` its permutation contradicts:
/// heads or tails other than its prefix's and suffix's, or a bound above the node's own.
fn recomputed_mismatch(data: &super::BoundData, bound: LowerBound, node: &[u32]) -> Option<&'static str> {
    let (n, m) = (data.jobs, data.machines);
    let (front, back) = (node[0] as usize, node[1] as usize);
    let perm: Vec<usize> = node[3..3 + n].iter().map(|&j| j as usize).collect();
    let mut unscheduled = perm[front..back].to_vec();
    unscheduled.sort_unstable();
    let sub = Node { prefix: perm[..front].to_vec(), suffix: perm[back..].to_vec(), unscheduled };
    let (heads, tails) = (&node[3 + n..3 + n + m], &node[3 + n + m..3 + n + 2 * m]);
    if heads != super::cpu::heads(data, &sub.prefix) {
        return Some("its heads are not its prefix's");
    }
    if tails != super::cpu::tails(data, &sub.suffix) {
        return Some("its tails are not its suffix's");
    }
    let own = match bound {
        LowerBound::Lb1 => super::cpu::lb1_node(data, &sub),
        LowerBound::Lb2 => super::cpu::lb2_node(data, &sub),
    };
    (node[2] > own).then_some("its bound is above its subproblem's")
}
