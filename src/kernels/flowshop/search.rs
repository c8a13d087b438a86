//! The branch-and-bound search: [`SearchOptions`], [`Progress`] reports, the [`Solution`],
//! and [`solve_with`], which fills the next pool while the bounder works on the current one.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use web_time::Instant;

use super::model::{Direction, Instance, LowerBound};
use super::pool::{Bounder, Pool, Started};
use super::{cpu, heuristic, BoundData, CpuBounder, IteratedGreedy};
use crate::error::{Error, Result};
use crate::harness::named;

/// Largest number of open nodes a search expands per pool ([`SearchOptions::pool_size`]).
pub const MAX_POOL: usize = 1 << 20;

/// How the search splits a node into children.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Branching {
    /// Children append one job of U to the prefix (the paper's search).
    Forward,
    /// Every node is bounded both ways, appending to the prefix and prepending to the
    /// suffix, and branches in the direction that keeps fewer children (Lageweg et al.'s
    /// bidirectional branching with Gmys et al.'s dynamic choice): twice the bounds per node,
    /// a far smaller tree on square instances (ta021 proved in 26 s on an H100 instead of not
    /// in 125 s).
    #[default]
    Bidirectional,
}

named!(Branching { Forward => "forward", Bidirectional => "bidirectional" });

impl Branching {
    fn directions(self) -> &'static [Direction] {
        match self {
            Branching::Forward => &[Direction::Forward],
            Branching::Bidirectional => &[Direction::Forward, Direction::Backward],
        }
    }
}

/// Order in which open nodes are taken into pools. Named `depthfirst` / `breadthfirst` in
/// JSON, `dfs` / `bfs` for short (the command line's names and the records' `strategy`),
/// which JSON reads as well.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Exploration {
    /// Stack: pools of the deepest nodes (small memory). A parent's children are visited by
    /// increasing bound, then increasing machine idle time: this finds good incumbents fast
    /// (ta001 goes from NEH's 1286 to 1278 within a few thousand nodes with LB2).
    #[default]
    DepthFirst,
    /// Queue: pools of nodes of one or two consecutive levels (the paper's reordering).
    BreadthFirst,
}

named!(Exploration { DepthFirst => "depthfirst" | "dfs", BreadthFirst => "breadthfirst" | "bfs" });

/// How [`solve`] and [`solve_with`] search.
#[derive(Clone, Debug)]
pub struct SearchOptions<'a> {
    /// Bound used by [`solve`]; [`solve_with`] uses whatever the bounder computes.
    pub bound: LowerBound,
    /// Order in which open nodes are expanded.
    pub exploration: Exploration,
    /// How a node's children are formed.
    pub branching: Branching,
    /// Open nodes expanded per iteration (each gives up to `jobs` children).
    pub pool_size: usize,
    /// Look only for schedules with a makespan of at most this value: the search starts
    /// from it as its incumbent value unless the start heuristic's schedule is no worse.
    /// When the search finishes without a schedule, that proves only that none has a
    /// makespan below it ([`Solution::proven_lower_bound`]).
    pub upper_bound: Option<u32>,
    /// Start heuristic: NEH followed by iterated greedy (`iterations: Some(0)`: NEH alone).
    /// It gets at most a tenth of `time_limit`.
    pub heuristic: IteratedGreedy,
    /// Stop (result not optimal) once this many nodes were kept.
    pub node_limit: Option<u64>,
    /// Stop (result not optimal) after this long.
    pub time_limit: Option<Duration>,
    /// Stop (result not optimal, [`Stop::Interrupted`]) once this flag is set, e.g. by the
    /// caller's Ctrl-C handler; polled where the time limit is, about once per pool.
    pub interrupted: Option<&'a AtomicBool>,
    /// CPU bounding threads for [`solve`]; 0 = all available.
    pub threads: usize,
    /// Minimum time between two progress reports.
    pub progress_interval: Duration,
    /// Fill the next pool while the bounder works on the current one (the GPU bounds in the
    /// background). A depth-first search then takes each pool from the nodes open before
    /// the previous pool's children arrive, which can delay good incumbents; without
    /// overlap the order is strictly deepest first.
    pub overlap: bool,
}

impl Default for SearchOptions<'_> {
    fn default() -> Self {
        Self {
            bound: LowerBound::default(),
            exploration: Exploration::default(),
            branching: Branching::default(),
            pool_size: 256,
            upper_bound: None,
            heuristic: IteratedGreedy::default(),
            node_limit: None,
            time_limit: None,
            interrupted: None,
            threads: 0,
            progress_interval: Duration::from_secs(1),
            overlap: true,
        }
    }
}

impl SearchOptions<'_> {
    /// Why a search that began at `start` and kept `nodes` nodes must stop now, if it must.
    pub(super) fn stop_reason(&self, start: Instant, nodes: u64) -> Option<Stop> {
        if self.interrupted.is_some_and(|flag| flag.load(Ordering::Relaxed)) {
            Some(Stop::Interrupted)
        } else if self.time_limit.is_some_and(|limit| start.elapsed() >= limit) {
            Some(Stop::TimeLimit)
        } else if self.node_limit.is_some_and(|limit| nodes >= limit) {
            Some(Stop::NodeLimit)
        } else {
            None
        }
    }
}

/// Reported to the progress callback during long searches.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Progress {
    /// Non-leaf children kept so far.
    pub nodes: u64,
    /// Leaves (complete schedules) evaluated so far.
    pub leaves: u64,
    /// Best makespan found so far; `None` while no schedule within the given upper bound
    /// was found.
    pub best: Option<u32>,
    /// Open nodes waiting.
    pub open: usize,
    /// No schedule has a makespan below this (proven so far): the root's bound, raised to the
    /// smallest bound among the open nodes and `best` in the host search (the resident
    /// search keeps its open nodes on the GPU and reports the root's bound).
    pub lower_bound: u32,
    /// Seconds since the search started.
    pub seconds: f64,
    /// Part of `seconds` spent waiting for the GPU (the bounder, or the resident search).
    pub gpu_seconds: f64,
}

/// Why a search stopped before it had explored its whole tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Stop {
    /// [`SearchOptions::node_limit`] reached.
    #[serde(rename = "node limit")]
    NodeLimit,
    /// [`SearchOptions::time_limit`] reached.
    #[serde(rename = "time limit")]
    TimeLimit,
    /// [`SearchOptions::interrupted`] was set.
    #[serde(rename = "interrupted")]
    Interrupted,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stop::NodeLimit => "node limit reached",
            Stop::TimeLimit => "time limit reached",
            Stop::Interrupted => "interrupted",
        })
    }
}

/// What a search found and what it proved. A makespan always comes with the complete
/// schedule that achieves it (checked against the processing times before it is returned).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Solution {
    /// Makespan of `permutation`, the best schedule found with a makespan of at most the
    /// given upper bound (any schedule when none was given); `None` when there is none.
    pub makespan: Option<u32>,
    /// Job order (0-based) achieving `makespan`; empty when `makespan` is `None`.
    pub permutation: Vec<usize>,
    /// `makespan` is proven optimal: the search finished, and no schedule is better.
    pub optimal: bool,
    /// No schedule has a makespan below this value (proven by a finished search): `makespan`
    /// when optimal; the given upper bound when the search finished without a schedule
    /// within it; `None` when the search stopped early.
    pub proven_lower_bound: Option<u32>,
    /// Why the search stopped early; `None` when it finished.
    pub stopped: Option<Stop>,
    /// Makespan of the start heuristic's schedule (NEH, then iterated greedy).
    pub start_makespan: u32,
    /// The start heuristic's schedule (0-based), whatever the upper bound.
    pub start_permutation: Vec<usize>,
    /// Part of `seconds` the start heuristic took.
    pub heuristic_seconds: f64,
    /// Non-leaf children kept (bound < incumbent).
    pub nodes: u64,
    /// Leaves (complete schedules) evaluated.
    pub leaves: u64,
    /// Wall time of the whole search, start heuristic included.
    pub seconds: f64,
    /// Part of `seconds` the host spent waiting for the bounder and starting it (on the
    /// GPU: upload, and the kernel and readback as far as they outlast the host's work on
    /// the other batch); the rest is the host choosing, branching and pruning.
    pub bounding_seconds: f64,
    /// Device seconds per kernel of the rounds profiled (the resident search with
    /// SIMTLAB_RESIDENT_PROFILE set); empty otherwise.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub kernel_seconds: std::collections::BTreeMap<String, f64>,
    /// Why the last checkpoint (the resident search's final state) could not be written, when
    /// it could not; the result is whole either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_failure: Option<String>,
    /// The resident search: each improvement of the incumbent during the search, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incumbents: Vec<Incumbent>,
    /// The resident search: what its open nodes took at most and could take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frontier: Option<FrontierUse>,
    /// The resident search: how each device (each MPI rank) spent the run, in device (rank) order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceUse>,
}

/// An improvement of the incumbent during a search.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Incumbent {
    /// Seconds since the search started (over all its runs when resumed).
    pub seconds: f64,
    /// Nodes counted by then.
    pub nodes: u64,
    /// The new incumbent's makespan.
    pub makespan: u32,
}

/// How one device spent a resident search over several: its batches, its waits for open
/// nodes, and the open nodes it gave and took.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct DeviceUse {
    /// Submissions of rounds.
    pub batches: u64,
    /// Seconds in them, each from its start (its submission, or the end of the one it was
    /// queued behind) to its status read.
    pub busy_seconds: f64,
    /// Seconds it waited with no open node, or for a checkpoint to be gathered.
    pub waiting_seconds: f64,
    /// Seconds it spent reading open nodes for another device or loading them.
    pub moving_seconds: f64,
    /// Times it gave open nodes to another device.
    pub gifts_given: u64,
    /// Open nodes it gave.
    pub nodes_given: u64,
    /// Times it took open nodes another device gave (to load them, or over MPI to pass them
    /// on whole when asked to give with fewer than two open nodes left on its device).
    pub gifts_loaded: u64,
    /// Open nodes it took.
    pub nodes_loaded: u64,
}

/// The memory of a resident search's open nodes, over all its devices.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct FrontierUse {
    /// Bytes of the stacks and record stores allocated (the memory budget, within what the
    /// search can use).
    pub bytes_allocated: u64,
    /// Most open nodes at the end of a submission.
    pub peak_open: u64,
    /// Entries the stacks hold.
    pub capacity: u64,
}

/// Solves `instance` with the multi-threaded CPU bounder.
pub fn solve(instance: &Instance, options: &SearchOptions) -> Result<Solution> {
    let data = BoundData::new(instance);
    let mut bounder = CpuBounder::new(&data, options.bound, options.threads);
    solve_with(&data, options, &mut bounder, None)
}

/// Open nodes of the search, stored flat (no allocation per node) as records of
/// `[front, back, bound, perm (n), heads (m), tails (m)]`: `perm[..front]` is the prefix,
/// `perm[front..back]` the unscheduled jobs, `perm[back..]` the suffix; heads and tails are
/// as the bounds define them; `bound` is the value the node was kept with (rechecked when
/// popped, as the incumbent may have improved).
struct OpenNodes {
    jobs: usize,
    stride: usize,
    words: VecDeque<u32>,
}

const FRONT: usize = 0;
const BACK: usize = 1;
const BOUND: usize = 2;
const PERM: usize = 3;

impl OpenNodes {
    fn new(jobs: usize, machines: usize) -> Self {
        Self { jobs, stride: PERM + jobs + 2 * machines, words: VecDeque::new() }
    }

    fn len(&self) -> usize {
        self.words.len() / self.stride
    }

    fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    fn push(&mut self, record: &[u32]) {
        self.words.extend(record);
    }

    /// Moves the newest (depth-first) or oldest (breadth-first) node to the end of `out`.
    fn pop_into(&mut self, exploration: Exploration, out: &mut Vec<u32>) -> bool {
        if self.words.is_empty() {
            return false;
        }
        match exploration {
            Exploration::DepthFirst => {
                let at = self.words.len() - self.stride;
                out.extend(self.words.range(at..));
                self.words.truncate(at);
            }
            Exploration::BreadthFirst => out.extend(self.words.drain(..self.stride)),
        }
        true
    }

    /// The bound each open node was kept with.
    fn bounds(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len()).map(|i| self.words[i * self.stride + BOUND])
    }

    /// The heads and tails of a record.
    fn ends<'a>(&self, record: &'a [u32]) -> &'a [u32] {
        &record[PERM + self.jobs..]
    }
}

/// Solves with any bounder; `progress` is called at most every `progress_interval`.
pub fn solve_with(
    data: &BoundData,
    options: &SearchOptions,
    bounder: &mut dyn Bounder,
    mut progress: Option<&mut dyn FnMut(&Progress)>,
) -> Result<Solution> {
    if !(1..=MAX_POOL).contains(&options.pool_size) {
        return Err(Error::invalid("pool size", format!("{} open nodes per pool; use 1..={MAX_POOL}", options.pool_size)));
    }
    let start = Instant::now();
    let (n, m) = (data.jobs, data.machines);
    let interrupted = || options.interrupted.is_some_and(|flag| flag.load(Ordering::Relaxed));

    // A deadline past what Instant can hold is no deadline.
    let heuristic_deadline = options.time_limit.and_then(|limit| start.checked_add(limit / 10));
    let heuristic_stop = || interrupted() || heuristic_deadline.is_some_and(|d| Instant::now() >= d);
    let (start_makespan, start_permutation) = heuristic::iterated_greedy(n, m, &data.ptimes, &options.heuristic, &heuristic_stop);
    check_schedule(data, &start_permutation, start_makespan, "start heuristic")?;
    let heuristic_seconds = start.elapsed().as_secs_f64();
    // `best` is the value a schedule must beat; `best_perm` a schedule of makespan `best`,
    // None while `best` is only the given upper bound.
    let (mut best, mut best_perm) = match options.upper_bound {
        Some(ub) if ub < start_makespan => (ub, None),
        _ => (start_makespan, Some(start_permutation.clone())),
    };

    let mut open = OpenNodes::new(n, m);
    let stride = open.stride;
    let mut record = data.root_record();
    open.push(&record);

    let directions = options.branching.directions();
    // Two batches take turns: while the bounder works on one (in the background on the GPU),
    // the host branches the other's results and fills it again from the open nodes.
    let mut filling = Batch::new(data, options.pool_size * stride);
    let mut bounding = Batch::new(data, options.pool_size * stride);
    let mut in_flight: Option<Started> = None;
    let mut kept: Vec<usize> = Vec::new();
    let (mut nodes, mut leaves) = (0u64, 0u64);
    let mut waited = Duration::ZERO;
    let mut stopped = None;
    let mut last_report = start;
    let mut lower_bound = root_bound(data, options.bound);

    while !open.is_empty() || in_flight.is_some() {
        stopped = options.stop_reason(start, nodes);
        if stopped.is_some() {
            if let Some(Started::Running) = in_flight {
                bounder.finish()?;
            }
            break;
        }

        let Batch { pool, parents, child_positions } = &mut filling;
        pool.clear();
        parents.clear();
        child_positions.clear();
        while parents.len() < options.pool_size * stride {
            let at = parents.len();
            if !open.pop_into(options.exploration, parents) {
                break;
            }
            let node = &parents[at..];
            let (front, back) = (node[FRONT] as usize, node[BACK] as usize);
            let perm = &node[PERM..PERM + n];
            let ends = open.ends(node);
            if node[BOUND] >= best {
                parents.truncate(at);
                continue;
            }
            if back - front == 1 {
                // Its only child is a leaf: evaluate the complete schedule here.
                leaves += 1;
                let finish = leaf_makespan(data, ends, perm[front] as usize);
                if finish < best || (finish == best && best_perm.is_none()) {
                    best = finish;
                    best_perm = Some(perm.iter().map(|&j| j as usize).collect());
                }
                parents.truncate(at);
                continue;
            }
            let index = pool.parent_count() as u32;
            let unscheduled = perm[front..back].iter().map(|&j| j as usize);
            pool.push_parent(&ends[..m], &ends[m..], unscheduled, Some(&perm[..front]), data);
            for &direction in directions {
                for (position, &job) in (front..back).zip(&perm[front..back]) {
                    pool.push_child_unchecked(index, job as usize, direction);
                    child_positions.push(position);
                }
            }
        }

        let waiting = Instant::now();
        let mut bounds = match in_flight.take() {
            Some(started) => Some(started.bounds(bounder)?),
            None => None,
        };
        if filling.pool.child_count() > 0 {
            let started = bounder.start(&filling.pool, best)?;
            if options.overlap {
                in_flight = Some(started);
            } else {
                bounds = Some(started.bounds(bounder)?);
            }
        }
        waited += waiting.elapsed();
        if options.overlap {
            std::mem::swap(&mut filling, &mut bounding);
        }

        // `filling` now holds the batch whose bounds arrived (if any): the one started in
        // the previous iteration, or without overlap the one just bounded.
        if let Some(bounds) = bounds {
            let Batch { pool, parents, child_positions } = &filling;
            if bounds.len() != pool.child_count() {
                return Err(Error::invalid("bounder output", format!("{} bounds for {} children", bounds.len(), pool.child_count())));
            }
            // Children are grouped by parent, one run of |U| per direction.
            kept.clear();
            let mut first = 0;
            for parent in parents.chunks_exact(stride) {
                let width = (parent[BACK] - parent[FRONT]) as usize;
                let mut chosen = first..first + width;
                if directions.len() == 2 {
                    let backward = first + width..first + 2 * width;
                    if prefer_second(&bounds[chosen.clone()], &bounds[backward.clone()], best) {
                        chosen = backward;
                    }
                }
                kept.extend(chosen.filter(|&child| bounds[child] < best));
                first += width * directions.len();
            }
            let parent_record = |index: usize| &parents[index * stride..(index + 1) * stride];
            if options.exploration == Exploration::DepthFirst {
                // Pushed so that the first parent's most promising child ends on top: smallest
                // bound, then least idle time (bounds tie a lot; idle time is what tells the
                // children apart). Good incumbents come early; the tree at a fixed incumbent
                // is the same in any order.
                kept.sort_by_cached_key(|&child| {
                    let (parent, job) = pool.child(child);
                    let ends = open.ends(parent_record(parent));
                    let idle = idle_time(data, ends, job, pool.direction(child));
                    (parent, bounds[child], idle, child)
                });
                kept.reverse();
            }
            for &child in &kept {
                let (parent, job) = pool.child(child);
                record.clear();
                record.extend_from_slice(parent_record(parent));
                let position = PERM + child_positions[child];
                match pool.direction(child) {
                    Direction::Forward => {
                        cpu::extend_heads(data, &mut record[PERM + n..PERM + n + m], job);
                        let front = PERM + record[FRONT] as usize;
                        record.swap(front, position);
                        record[FRONT] += 1;
                    }
                    Direction::Backward => {
                        cpu::extend_tails(data, &mut record[PERM + n + m..], job);
                        record[BACK] -= 1;
                        let back = PERM + record[BACK] as usize;
                        record.swap(back, position);
                    }
                }
                record[BOUND] = bounds[child];
                open.push(&record);
                nodes += 1;
            }
        }

        if let Some(report) = progress.as_deref_mut() {
            if last_report.elapsed() >= options.progress_interval {
                last_report = Instant::now();
                // every schedule not yet pruned lies under an open node or a parent in flight
                let in_flight_parents = in_flight.is_some().then_some(bounding.parents.chunks_exact(stride)).into_iter().flatten();
                let frontier = open.bounds().chain(in_flight_parents.map(|parent| parent[BOUND])).fold(best, u32::min);
                lower_bound = lower_bound.max(frontier);
                report(&Progress {
                    nodes,
                    leaves,
                    best: best_perm.is_some().then_some(best),
                    open: open.len(),
                    lower_bound,
                    seconds: start.elapsed().as_secs_f64(),
                    gpu_seconds: waited.as_secs_f64(),
                });
            }
        }
    }

    if let Some(perm) = &best_perm {
        check_schedule(data, perm, best, "search")?;
    }
    let finished = stopped.is_none();
    Ok(Solution {
        makespan: best_perm.is_some().then_some(best),
        optimal: finished && best_perm.is_some(),
        proven_lower_bound: finished.then_some(best),
        permutation: best_perm.unwrap_or_default(),
        stopped,
        start_makespan,
        start_permutation,
        heuristic_seconds,
        nodes,
        leaves,
        seconds: start.elapsed().as_secs_f64(),
        bounding_seconds: waited.as_secs_f64(),
        kernel_seconds: Default::default(),
        checkpoint_failure: None,
        incumbents: Vec::new(),
        frontier: None,
        devices: Vec::new(),
    })
}

/// The bound of the root node (nothing scheduled): no schedule has a smaller makespan.
pub(super) fn root_bound(data: &BoundData, bound: LowerBound) -> u32 {
    let root = super::Node::root(data.jobs);
    match bound {
        LowerBound::Lb1 => cpu::lb1_node(data, &root),
        LowerBound::Lb2 => cpu::lb2_node(data, &root),
    }
}

/// Fails unless `perm` is a complete schedule whose makespan, recomputed from the
/// processing times, is `value` (a wrong schedule is never reported).
pub(super) fn check_schedule(data: &BoundData, perm: &[usize], value: u32, source: &str) -> Result<()> {
    let recomputed = cpu::permutation_makespan(data.jobs, data.machines, &data.ptimes, perm)?;
    if recomputed != value {
        return Err(Error::invalid(
            "search result",
            format!(
                "the {source} recorded makespan {value} for a schedule whose makespan is {recomputed}; \
                 this is a bug in simtlab, please report it with the command line"
            ),
        ));
    }
    Ok(())
}

/// A pool with the records of its parents and, per child, the position of its job in the
/// parent's permutation.
struct Batch {
    pool: Pool,
    parents: Vec<u32>,
    child_positions: Vec<usize>,
}

impl Batch {
    fn new(data: &BoundData, record_words: usize) -> Self {
        Self {
            pool: Pool::for_data(data),
            // grows as the pools fill; a large pool size reserves no more than 4 MiB up front
            parents: Vec::with_capacity(record_words.min(1 << 20)),
            child_positions: Vec::new(),
        }
    }
}

/// Dynamic branching (Gmys et al.'s MinBranch rule): branch in the second direction when it
/// keeps fewer children below the incumbent `best`, or as many with a larger sum of bounds
/// (children closer to pruning). Bounds are clamped at `best`, the only part every bounder
/// computes exactly, so the choice and the node counts do not depend on the bounder.
pub(super) fn prefer_second(first: &[u32], second: &[u32], best: u32) -> bool {
    let rank = |bounds: &[u32]| {
        let kept = bounds.iter().filter(|&&b| b < best).count();
        let sum: u64 = bounds.iter().map(|&b| u64::from(b.min(best))).sum();
        (kept, std::cmp::Reverse(sum))
    };
    rank(second) < rank(first)
}

/// Machine idle time added by the child's job: waiting after the prefix (heads, forward
/// children) or, mirror-wise, before the suffix (tails, backward children).
fn idle_time(data: &BoundData, ends: &[u32], job: usize, direction: Direction) -> u32 {
    let m = data.machines;
    let (mut finish, mut idle) = (0u32, 0u32);
    let mut visit = |ready: u32, k: usize| {
        let start = finish.max(ready);
        idle += start - ready;
        finish = start + data.time(k, job);
    };
    match direction {
        Direction::Forward => (0..m).for_each(|k| visit(ends[k], k)),
        Direction::Backward => (0..m).rev().for_each(|k| visit(ends[m + k], k)),
    }
    idle
}

/// Makespan of prefix, `job`, suffix, from the node's heads and tails (`ends`): the latest
/// machine k on which `job` completes at f'[k] and the suffix then needs b[k].
pub(super) fn leaf_makespan(data: &BoundData, ends: &[u32], job: usize) -> u32 {
    let (heads, tails) = ends.split_at(data.machines);
    let (mut finish, mut makespan) = (0u32, 0u32);
    for (k, (&head, &tail)) in heads.iter().zip(tails).enumerate() {
        finish = finish.max(head) + data.time(k, job);
        makespan = makespan.max(finish + tail);
    }
    makespan
}
