//! A [`Checkpoint`] of a resident search: the open frontier, the incumbent and the counts, in
//! one file that a later run resumes (`flowshop solve --resume FILE`), or as a [`Manifest`] and
//! one part file per MPI rank.
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
//!
//! Over MPI ranks each rank writes its own open nodes to its part file, `FILE.e<epoch>.r<rank>`
//! beside `FILE` ([`write_part`]: the line `simtlab flowshop checkpoint part 1`, a JSON header
//! line naming the instance, bound, branching, epoch and rank, then its nodes and hash as
//! above); rank 0 then writes `FILE` itself as a [`Manifest`] (the line `simtlab flowshop
//! checkpoint manifest 1`, a JSON line with the header of a single file, the epoch, the rank
//! count and per part its file name, open nodes and hash, then the hash of both lines). Each
//! file is replaced atomically and the previous epoch's parts are removed only once the new
//! manifest is in place, so the manifest always names a whole set of parts. [`Checkpoint::read`]
//! reads either form: a manifest's parts are read, checked against it and merged.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::model::{Instance, LowerBound, Node};
use super::resident::{entry_node, node_stride, Frontier, ENTRY_WORDS, PLACE_BACKWARD, PLACE_NONE};
use super::search::{Branching, SearchOptions};
use crate::error::{Error, Result};

const MAGIC: &str = "simtlab flowshop checkpoint 2\n";
/// Files written before open nodes had a compact form: every open node a full record.
const MAGIC_FULL_NODES: &str = "simtlab flowshop checkpoint 1\n";
/// A checkpoint over MPI ranks: the shared state and the part files.
const MANIFEST_MAGIC: &str = "simtlab flowshop checkpoint manifest 1\n";
/// One rank's open nodes at a checkpoint.
const PART_MAGIC: &str = "simtlab flowshop checkpoint part 1\n";

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
    /// The epoch of the manifest at the path and its part files, removed once a checkpoint
    /// replaces it.
    current: Mutex<(u64, Vec<PathBuf>)>,
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
            Ok(Some(lock)) => {
                // a manifest already there (a run stopped, or the one resumed): its parts go once replaced
                let current = Manifest::at(path).map_or((0, Vec::new()), |m| (m.epoch, m.part_paths(path)));
                Ok(CheckpointFile { path: path.to_path_buf(), _lock: lock, current: Mutex::new(current) })
            }
            Ok(None) => Err(refuse("is being written by another search; wait for it to end or give another file".into())),
            Err(e) => Err(refuse(format!("cannot be written ({e}); give a path in a writable directory"))),
        }
    }

    /// The checkpoint's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The epoch of the last manifest written to the path (0: none); the next one is above it,
    /// so its part files never overwrite those the manifest in place names.
    pub fn epoch(&self) -> u64 {
        self.current.lock().map_or(0, |c| c.0)
    }

    /// Replaces the file with `checkpoint` (atomically: a failure leaves the previous one).
    pub fn write(&self, checkpoint: &Checkpoint) -> Result<()> {
        checkpoint.write(&self.path)?;
        self.replaced(0, Vec::new());
        Ok(())
    }

    /// Replaces the file with `manifest` (atomically), whose parts the ranks have written
    /// beside it; then removes the parts of the manifest it replaces.
    pub fn write_manifest(&self, manifest: &Manifest) -> Result<()> {
        crate::harness::write_file(&self.path, &manifest.to_bytes()?)?;
        self.replaced(manifest.epoch, manifest.part_paths(&self.path));
        Ok(())
    }

    /// The file now holds the checkpoint of `epoch` with `parts`: the previous parts go.
    fn replaced(&self, epoch: u64, parts: Vec<PathBuf>) {
        let Ok(mut current) = self.current.lock() else { return };
        for old in current.1.iter().filter(|old| !parts.contains(old)) {
            // a part left behind takes room, nothing more: the manifest no longer names it
            let _ = std::fs::remove_file(old);
        }
        *current = (epoch.max(current.0), parts);
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

fn ptimes_hash(instance: &Instance) -> u64 {
    fnv1a(bytemuck::cast_slice(&instance.p))
}

/// `bytes` followed by their FNV-1a 64 hash (8 bytes, little-endian), as every checkpoint
/// file ends.
fn sealed(mut bytes: Vec<u8>) -> Vec<u8> {
    let hash = fnv1a(&bytes);
    bytes.extend_from_slice(&hash.to_le_bytes());
    bytes
}

/// What follows the first of `magics` that `bytes` start with (its index too), once the hash
/// at the end matches everything before it.
fn unsealed<'b>(bytes: &'b [u8], magics: &[&str]) -> std::result::Result<(usize, &'b [u8]), String> {
    let (body, hash) = bytes.len().checked_sub(8).map(|at| bytes.split_at(at)).ok_or("the file is too short")?;
    let (which, rest) = magics
        .iter()
        .enumerate()
        .find_map(|(i, magic)| body.strip_prefix(magic.as_bytes()).map(|rest| (i, rest)))
        .ok_or("it does not start with the checkpoint line")?;
    if fnv1a(body).to_le_bytes() != hash {
        return Err("its hash does not match its content (the file is damaged or was cut short)".into());
    }
    Ok((which, rest))
}

/// The JSON line that starts `rest` and the bytes after it.
fn header_line(rest: &[u8]) -> std::result::Result<(serde_json::Value, &[u8]), String> {
    let line_end = rest.iter().position(|&b| b == b'\n').ok_or("no header line")?;
    let header = serde_json::from_slice(&rest[..line_end]).map_err(|e| format!("its header does not parse: {e}"))?;
    Ok((header, &rest[line_end + 1..]))
}

/// Little-endian u32 words.
fn words_of(bytes: &[u8]) -> std::result::Result<Vec<u32>, String> {
    if !bytes.len().is_multiple_of(4) {
        return Err("its node section is not whole words".into());
    }
    Ok(bytes.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect())
}

/// `records` node records of `stride` words, then entries, as a frontier.
fn frontier_of(mut words: Vec<u32>, records: usize, stride: usize) -> std::result::Result<Frontier, String> {
    let record_words =
        records.checked_mul(stride).filter(|&w| w <= words.len()).ok_or("it holds fewer node records than its header says")?;
    let entries = words.split_off(record_words);
    Ok(Frontier { records: words, entries })
}

/// The magic line, a JSON header line with `records` added, the node records of `stride` words
/// and the entries, the hash.
fn frontier_file(magic: &str, header: impl serde::Serialize, records: &[u32], entries: &[u32], stride: usize) -> Result<Vec<u8>> {
    let invalid = |e: serde_json::Error| Error::invalid("checkpoint", e.to_string());
    let mut header = serde_json::to_value(header).map_err(invalid)?;
    header["records"] = (records.len() / stride.max(1)).into();
    let header = serde_json::to_string(&header).map_err(invalid)?;
    let words = records.len() + entries.len();
    let mut bytes = Vec::with_capacity(magic.len() + header.len() + 1 + 4 * words + 8);
    bytes.extend_from_slice(magic.as_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.push(b'\n');
    for word in records.iter().chain(entries) {
        bytes.extend_from_slice(&word.to_le_bytes());
    }
    Ok(sealed(bytes))
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
        frontier_file(MAGIC, self, &self.nodes, &self.entries, node_stride(self.jobs, self.machines))
    }

    /// Writes the file atomically (a crash leaves the previous checkpoint).
    pub fn write(&self, path: &Path) -> Result<()> {
        crate::harness::write_file(path, &self.to_bytes()?)
    }

    /// Reads and checks a checkpoint file: a single file, or a [`Manifest`] whose parts are
    /// read beside it, checked against it and merged.
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let checkpoint = if bytes.starts_with(MANIFEST_MAGIC.as_bytes()) {
            Manifest::from_bytes(&bytes).and_then(|manifest| manifest.merged(path))
        } else {
            Self::from_bytes(&bytes)
        };
        checkpoint
            .map_err(|message| Error::File { path: path.to_path_buf(), message: format!("not a usable flow-shop checkpoint: {message}") })
    }

    /// Parses and checks the bytes of a checkpoint file; the error says what is wrong.
    pub fn from_bytes(bytes: &[u8]) -> std::result::Result<Self, String> {
        let (which, rest) = unsealed(bytes, &[MAGIC, MAGIC_FULL_NODES])?;
        let (header, words) = header_line(rest)?;
        let mut checkpoint: Checkpoint = serde_json::from_value(header.clone()).map_err(|e| format!("its header does not parse: {e}"))?;
        let words = words_of(words)?;
        checkpoint.check_size()?;
        let stride = node_stride(checkpoint.jobs, checkpoint.machines);
        let open = if which == 1 {
            // version 1: every open node a full record
            if !words.len().is_multiple_of(stride) {
                return Err(format!("its nodes are not whole records of {stride} words"));
            }
            Frontier::of_nodes(words, stride)
        } else {
            let records = header["records"].as_u64().ok_or("its header does not say how many node records follow")? as usize;
            frontier_of(words, records, stride)?
        };
        (checkpoint.nodes, checkpoint.entries) = (open.records, open.entries);
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

/// What a part file must share with its manifest.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct PartHeader {
    instance: String,
    jobs: usize,
    machines: usize,
    ptimes_hash: u64,
    bound: LowerBound,
    branching: Branching,
    epoch: u64,
    rank: usize,
}

impl PartHeader {
    /// The header of rank `rank`'s part of checkpoint `epoch` of the search `search` states.
    fn of(search: &Checkpoint, epoch: u64, rank: usize) -> Self {
        PartHeader {
            instance: search.instance.clone(),
            jobs: search.jobs,
            machines: search.machines,
            ptimes_hash: search.ptimes_hash,
            bound: search.bound,
            branching: search.branching,
            epoch,
            rank,
        }
    }
}

/// A part file as its manifest names it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PartEntry {
    /// Its file name, in the manifest's directory.
    pub file: String,
    /// Open nodes it holds.
    pub nodes: u64,
    /// The FNV-1a 64 hash its bytes end with (of everything before it).
    pub hash: u64,
}

/// The file of rank `rank`'s part of checkpoint `epoch`: `FILE.e<epoch>.r<rank>` beside `FILE`.
pub fn part_path(checkpoint: &Path, epoch: u64, rank: usize) -> PathBuf {
    let mut name = checkpoint.as_os_str().to_owned();
    name.push(format!(".e{epoch}.r{rank}"));
    PathBuf::from(name)
}

/// Writes `open`, rank `rank`'s open nodes at checkpoint `epoch` of the search that `search`
/// is a state of (its instance, bound and branching name the part), to its part file beside
/// `checkpoint` (atomically); returns the entry the manifest gives it.
pub fn write_part(checkpoint: &Path, search: &Checkpoint, epoch: u64, rank: usize, open: &Frontier) -> Result<PartEntry> {
    let header = PartHeader::of(search, epoch, rank);
    let bytes = frontier_file(PART_MAGIC, &header, &open.records, &open.entries, node_stride(search.jobs, search.machines))?;
    let path = part_path(checkpoint, epoch, rank);
    let file = path.file_name().and_then(|f| f.to_str()).map(String::from).ok_or_else(|| {
        Error::invalid(
            "checkpoint",
            format!("{}: its file name is not UTF-8, which a manifest cannot name; give another path", checkpoint.display()),
        )
    })?;
    crate::harness::write_file(&path, &bytes)?;
    Ok(PartEntry { file, nodes: open.len() as u64, hash: stored_hash(&bytes) })
}

/// The hash a sealed file ends with (0 when it is too short to hold one).
fn stored_hash(bytes: &[u8]) -> u64 {
    bytes.len().checked_sub(8).and_then(|at| bytes[at..].try_into().ok()).map_or(0, u64::from_le_bytes)
}

/// A checkpoint over MPI ranks, at the checkpoint's path: the state of the search but its open
/// nodes ([`Checkpoint`]'s header), and the part file of each rank that holds them.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    /// The checkpoint's number among those written to the path (its parts' names carry it).
    pub epoch: u64,
    /// Ranks that wrote it, one part each.
    pub ranks: usize,
    /// The parts, in rank order.
    pub parts: Vec<PartEntry>,
    /// The state shared by the parts (its `nodes` and `entries` are in the parts).
    #[serde(flatten)]
    pub header: Checkpoint,
}

impl Manifest {
    /// The file's bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let header = serde_json::to_string(self).map_err(|e| Error::invalid("checkpoint", e.to_string()))?;
        let mut bytes = Vec::with_capacity(MANIFEST_MAGIC.len() + header.len() + 1 + 8);
        bytes.extend_from_slice(MANIFEST_MAGIC.as_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.push(b'\n');
        Ok(sealed(bytes))
    }

    /// Parses and checks the bytes of a manifest (not its parts); the error says what is wrong.
    pub fn from_bytes(bytes: &[u8]) -> std::result::Result<Self, String> {
        let (_, rest) = unsealed(bytes, &[MANIFEST_MAGIC])?;
        let (header, after) = header_line(rest)?;
        if !after.is_empty() {
            return Err("it holds more than its header line".into());
        }
        let manifest: Manifest = serde_json::from_value(header).map_err(|e| format!("its header does not parse: {e}"))?;
        manifest.header.check_size()?;
        if manifest.parts.len() != manifest.ranks {
            return Err(format!("it names {} `parts` for {} `ranks`", manifest.parts.len(), manifest.ranks));
        }
        Ok(manifest)
    }

    /// Reads a manifest (not its parts).
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::from_bytes(&bytes)
            .map_err(|message| Error::File { path: path.to_path_buf(), message: format!("not a usable checkpoint manifest: {message}") })
    }

    /// The manifest at `path`, when the file there is one (another file is not read further).
    fn at(path: &Path) -> Option<Self> {
        use std::io::Read;
        let mut magic = vec![0; MANIFEST_MAGIC.len()];
        std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).ok()?;
        (magic == MANIFEST_MAGIC.as_bytes()).then(|| Self::read(path).ok()).flatten()
    }

    /// The paths of its parts, beside the manifest at `path`.
    pub fn part_paths(&self, path: &Path) -> Vec<PathBuf> {
        let dir = path.parent().unwrap_or(Path::new(""));
        self.parts.iter().map(|part| dir.join(&part.file)).collect()
    }

    /// The checkpoint it and its parts hold, the manifest being at `path`: each part read,
    /// checked against the manifest (hash, instance, options, epoch, rank, node count) and
    /// against the instance's size, then merged.
    fn merged(self, path: &Path) -> std::result::Result<Checkpoint, String> {
        let header = &self.header;
        let stride = node_stride(header.jobs, header.machines);
        let mut open = Frontier::default();
        for (rank, (entry, file)) in self.parts.iter().zip(self.part_paths(path)).enumerate() {
            let part = format!("its part `parts[{rank}]` ({})", entry.file);
            let bytes = std::fs::read(&file)
                .map_err(|e| format!("{part} cannot be read ({e}); every rank's part file must lie beside the manifest"))?;
            if stored_hash(&bytes) != entry.hash {
                return Err(format!("{part} does not end with the hash the manifest gives it (it was replaced or cut short)"));
            }
            let (_, rest) = unsealed(&bytes, &[PART_MAGIC]).map_err(|why| format!("{part}: {why}"))?;
            let (fields, words) = header_line(rest).map_err(|why| format!("{part}: {why}"))?;
            let theirs: PartHeader =
                serde_json::from_value(fields.clone()).map_err(|e| format!("{part}: its header does not parse: {e}"))?;
            let ours = PartHeader::of(header, self.epoch, rank);
            if theirs != ours {
                let expected = serde_json::to_string(&ours).unwrap_or_default();
                return Err(format!(
                    "{part} was written for another checkpoint: its header says {fields}, this manifest's part is {expected}"
                ));
            }
            let records =
                fields["records"].as_u64().ok_or_else(|| format!("{part}: its header does not say how many node records follow"))?;
            let frontier =
                words_of(words).and_then(|words| frontier_of(words, records as usize, stride)).map_err(|why| format!("{part}: {why}"))?;
            if frontier.len() as u64 != entry.nodes {
                return Err(format!("{part} holds {} open nodes, the manifest says {}", frontier.len(), entry.nodes));
            }
            // each part's entries refer to its own records
            let alone = Checkpoint { nodes: frontier.records, entries: frontier.entries, ..header.clone() };
            alone.check_nodes().map_err(|why| format!("{part}: {why}"))?;
            open.append(Frontier { records: alone.nodes, entries: alone.entries }, stride);
        }
        let mut checkpoint = self.header;
        (checkpoint.nodes, checkpoint.entries) = (open.records, open.entries);
        checkpoint.check_nodes()?;
        Ok(checkpoint)
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
