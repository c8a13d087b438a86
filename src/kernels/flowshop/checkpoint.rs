//! A [`Checkpoint`] of a resident search: the open frontier, the incumbent and the counts, in
//! one file that a later run resumes (`flowshop solve --resume FILE`).
//!
//! File: the line `simtlab flowshop checkpoint 1`, a JSON header line (the instance's name,
//! size and a hash of its processing times, the options a node count depends on, the incumbent
//! and its schedule, the start schedule, counters, seconds), then the open nodes as
//! little-endian u32 words (records of [`super::resident::node_stride`] words, as the GPU
//! stack holds them), then the FNV-1a 64 hash of everything before it (8 bytes). A file whose
//! hash, header or nodes do not check is refused, never resumed.

use std::path::Path;

use super::model::{Instance, LowerBound};
use super::resident::node_stride;
use super::search::{Branching, SearchOptions};
use crate::error::{Error, Result};

const MAGIC: &str = "simtlab flowshop checkpoint 1\n";

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
    /// Open nodes, `node_stride(jobs, machines)` words each.
    #[serde(skip)]
    pub nodes: Vec<u32>,
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
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        instance: &Instance,
        options: &SearchOptions,
        best: u32,
        best_permutation: Option<Vec<usize>>,
        start: (u32, Vec<usize>, f64),
        seconds: (f64, f64),
        counted: (u64, u64),
        nodes: Vec<u32>,
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
            nodes,
        }
    }

    /// Open nodes in the checkpoint.
    pub fn open_nodes(&self) -> usize {
        self.nodes.len() / node_stride(self.jobs, self.machines)
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let header = serde_json::to_string(self).map_err(|e| Error::invalid("checkpoint", e.to_string()))?;
        let mut bytes = Vec::with_capacity(MAGIC.len() + header.len() + 1 + 4 * self.nodes.len() + 8);
        bytes.extend_from_slice(MAGIC.as_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.push(b'\n');
        for word in &self.nodes {
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
        Self::from_bytes(&bytes).map_err(|message| Error::File {
            path: path.to_path_buf(),
            message: format!("not a usable flow-shop checkpoint: {message}; write a new one with --checkpoint"),
        })
    }

    /// Parses and checks the bytes of a checkpoint file; the error says what is wrong.
    pub fn from_bytes(bytes: &[u8]) -> std::result::Result<Self, String> {
        let body = bytes.len().checked_sub(8).map(|at| bytes.split_at(at)).ok_or("the file is too short")?;
        let rest = body.0.strip_prefix(MAGIC.as_bytes()).ok_or("it does not start with the checkpoint line")?;
        let stored = u64::from_le_bytes(body.1.try_into().map_err(|_| "no hash at the end")?);
        if fnv1a(body.0) != stored {
            return Err("its hash does not match its content (the file is damaged or was cut short)".into());
        }
        let line_end = rest.iter().position(|&b| b == b'\n').ok_or("no header line")?;
        let mut checkpoint: Checkpoint =
            serde_json::from_slice(&rest[..line_end]).map_err(|e| format!("its header does not parse: {e}"))?;
        let words = &rest[line_end + 1..];
        if !words.len().is_multiple_of(4) {
            return Err("its node section is not whole words".into());
        }
        checkpoint.nodes = words.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
        checkpoint.check_nodes()?;
        Ok(checkpoint)
    }

    /// Every node is a permutation of the jobs with `front <= back` within it.
    fn check_nodes(&self) -> std::result::Result<(), String> {
        let (n, m) = (self.jobs, self.machines);
        if n == 0 || m == 0 || n > super::MAX_JOBS || m > super::MAX_MACHINES {
            return Err(format!("its instance size {n}x{m} is not one simtlab solves"));
        }
        let stride = node_stride(n, m);
        if !self.nodes.len().is_multiple_of(stride) {
            return Err(format!("its nodes are not whole records of {stride} words"));
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
                return Err(format!("open node {i} is not a subproblem of the instance"));
            }
        }
        Ok(())
    }

    /// Fails unless this checkpoint belongs to `instance` searched with `options`' bound,
    /// branching and upper bound.
    pub fn check_against(&self, instance: &Instance, options: &SearchOptions) -> Result<&Self> {
        let mismatch = |what: &str, file: String, now: String| {
            Error::invalid(
                "--resume",
                format!("the checkpoint was written for {what} {file}, this run has {now}; resume with the options it was written with"),
            )
        };
        if (self.jobs, self.machines, self.ptimes_hash) != (instance.jobs, instance.machines, ptimes_hash(instance)) {
            return Err(mismatch("the instance", self.instance.clone(), instance.name.clone()));
        }
        if self.bound != options.bound {
            return Err(mismatch("--bound", format!("{:?}", self.bound), format!("{:?}", options.bound)));
        }
        if self.branching != options.branching {
            return Err(mismatch("--branching", format!("{:?}", self.branching), format!("{:?}", options.branching)));
        }
        if options.upper_bound.is_some() && self.upper_bound != options.upper_bound {
            return Err(mismatch("--ub", format!("{:?}", self.upper_bound), format!("{:?}", options.upper_bound)));
        }
        Ok(self)
    }
}
