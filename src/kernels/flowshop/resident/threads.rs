//! The resident search over the devices of one host: a thread per device, each submitting its
//! own batches and reading its own status, none waiting for another's batch.
//!
//! The threads meet on a [`Board`] (one lock, taken once a batch) and share the incumbent
//! through an atomic minimum that each thread folds its status into after a batch and writes
//! back to its device before the next. Open nodes move before a device runs dry: a device
//! whose last status held few open nodes (fewer than [`super::HUNGRY_POOLS`] rounds' pools, or
//! none) is hungry, and the next device to read a status with twice as many and two pools
//! promises it some (half, one pool at most: [`super::gift_size`]), reads them from the bottom
//! of its stack (the largest subtrees; their records while its next batch runs) and leaves
//! them on the board. The hungry device loads them as soon as it runs dry, so it does not wait
//! for another device's batch to end; a device that runs dry first takes nodes left for one
//! still working. The search is over when every device is dry, none is promised open nodes
//! and none lies on the board. A checkpoint is gathered at a quiescent point: each thread, at
//! its next visit to the board, adds its part (open nodes, counts, best leaf) and waits until
//! the last one has; nodes on the board are in the checkpoint too. Every wait is bounded and
//! gives way to a stop, a finished search or a failed device.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;
use web_time::Instant;

use super::{gives, tempo, Frontier, Gift, Part, ResidentDevice, Run, BATCH_ALONE, BATCH_SHARED};
use crate::error::{Error, Result};
use crate::gpu::PendingRead;
use crate::kernels::flowshop::search::{root_bound, DeviceUse, Incumbent, Progress, Stop};
use crate::kernels::flowshop::BoundData;

/// How long a waiting thread sleeps before it looks at the board again (a wake-up comes sooner).
const NAP: Duration = Duration::from_millis(20);

/// What a search over the devices of one host gives back besides the devices' own state.
#[derive(Debug, Default)]
pub(super) struct Outcome {
    /// Why it stopped early; None when it finished.
    pub stopped: Option<Stop>,
    /// Open nodes given to a device that had not loaded them when the search stopped.
    pub undelivered: Vec<Frontier>,
    /// Seconds the busiest device spent in its batches.
    pub gpu_seconds: Duration,
    /// Each improvement of the incumbent, in order.
    pub incumbents: Vec<Incumbent>,
    /// Most open nodes at once over all devices.
    pub peak_open: u64,
    /// SIMTLAB_RESIDENT_PROFILE's per-kernel seconds (the first device's).
    pub kernel_seconds: BTreeMap<String, f64>,
    /// Why the last periodic checkpoint could not be written, when it could not.
    pub checkpoint_failure: Option<String>,
    /// How each device spent the search.
    pub devices: Vec<DeviceUse>,
}

/// The state the device threads share.
#[derive(Debug)]
struct Board {
    /// Per device: out of open nodes, waiting for some.
    dry: Vec<bool>,
    /// Nodes one round takes.
    pool: u64,
    /// Per device: another device is reading open nodes for it.
    promised: Vec<bool>,
    /// Per device: open nodes given to it, not loaded yet.
    given: Vec<Option<Frontier>>,
    /// Per device: (nodes, leaves, open) at its last status read.
    counts: Vec<(u64, u64, u64)>,
    /// Per device: (open nodes, node records) a load may bring.
    rooms: Vec<(usize, usize)>,
    /// Every device dry and no open node on its way: the search is over.
    finished: bool,
    /// Why the search stops early.
    stopped: Option<Stop>,
    /// The first error of a device; it ends the search.
    failed: Option<Error>,
    /// A checkpoint being gathered: each device's part once it added it.
    gather: Option<Vec<Option<Part>>>,
    incumbents: Vec<Incumbent>,
    peak_open: u64,
}

impl Board {
    fn totals(&self) -> (u64, u64, u64) {
        self.counts.iter().fold((0, 0, 0), |(a, b, c), d| (a + d.0, b + d.1, c + d.2))
    }

    /// The search goes on: not finished, stopped or failed.
    fn going(&self) -> bool {
        !self.finished && self.stopped.is_none() && self.failed.is_none()
    }
}

/// The board and the incumbent, shared by every device thread and the one that watches them.
struct Shared {
    board: Mutex<Board>,
    wake: Condvar,
    best: AtomicU32,
    /// Nanoseconds the busiest device spent in its batches so far.
    gpu_nanos: AtomicU64,
    /// Batches done so far, over all devices (a progress report waits for a new one).
    batches: AtomicU64,
}

impl Shared {
    fn gpu(&self) -> Duration {
        Duration::from_nanos(self.gpu_nanos.load(Ordering::Relaxed))
    }

    fn lock(&self) -> MutexGuard<'_, Board> {
        // a thread that panicked holding the lock left a board the others can still read
        self.board.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits at most [`NAP`] for a change on the board.
    fn nap<'b>(&self, board: MutexGuard<'b, Board>) -> MutexGuard<'b, Board> {
        self.wake.wait_timeout(board, NAP).map(|(b, _)| b).unwrap_or_else(|poisoned| poisoned.into_inner().0)
    }
}

/// Runs the search on `devices` (loaded) until it finishes, stops or fails; reports progress
/// and writes the periodic checkpoints of `run`.
pub(super) fn search(devices: &mut [ResidentDevice], run: &Run, mut progress: Option<&mut dyn FnMut(&Progress)>) -> Result<Outcome> {
    let count = devices.len();
    let shared = Shared {
        board: Mutex::new(Board {
            dry: vec![false; count],
            pool: run.options.pool_size as u64,
            promised: vec![false; count],
            given: (0..count).map(|_| None).collect(),
            counts: devices.iter().map(|d| (d.last.nodes, d.last.leaves, u64::from(d.last.open))).collect(),
            rooms: devices.iter().map(ResidentDevice::room).collect(),
            finished: false,
            stopped: None,
            failed: None,
            gather: None,
            incumbents: Vec::new(),
            peak_open: 0,
        }),
        wake: Condvar::new(),
        best: AtomicU32::new(run.begin.best),
        gpu_nanos: AtomicU64::new(0),
        batches: AtomicU64::new(0),
    };
    let lower_bound = root_bound(&BoundData::new(run.instance), run.options.bound);
    let mut outcome = Outcome::default();
    let mut last_checkpoint = Instant::now();
    let (mut last_report, mut reported_batches) = (Instant::now(), 0);
    let driven = std::thread::scope(|scope| {
        let threads: Vec<_> = devices
            .iter_mut()
            .enumerate()
            .map(|(i, device)| {
                scope.spawn({
                    let shared = &shared;
                    move || {
                        device.set_target(if count > 1 { BATCH_SHARED } else { BATCH_ALONE });
                        let mut driver = Driver {
                            index: i,
                            device,
                            shared,
                            run,
                            gpu: Duration::ZERO,
                            kernel_seconds: BTreeMap::new(),
                            usage: DeviceUse::default(),
                        };
                        let result = driver.drive();
                        let mut board = shared.lock();
                        if let Err(e) = result {
                            board.failed.get_or_insert(e);
                        }
                        // a thread that leaves ends the search for all, whatever the reason
                        if board.going() {
                            board.stopped = Some(Stop::Interrupted);
                        }
                        shared.wake.notify_all();
                        let usage = DeviceUse { busy_seconds: driver.gpu.as_secs_f64(), ..driver.usage };
                        (driver.gpu, driver.kernel_seconds, usage)
                    }
                })
            })
            .collect();
        // this thread watches: limits, progress, checkpoints
        let mut board = shared.lock();
        while board.going() {
            board = shared.nap(board);
            if !board.going() {
                break;
            }
            let (nodes, leaves, open) = board.totals();
            if let Some(stop) = run.options.stop_reason(run.start, nodes) {
                board.stopped = Some(stop);
                shared.wake.notify_all();
                break;
            }
            let due = run.checkpoint.is_some() && run.every.is_some_and(|every| last_checkpoint.elapsed() >= every);
            if due && board.gather.is_none() {
                board.gather = Some((0..count).map(|_| None).collect());
                shared.wake.notify_all();
            }
            if board.gather.as_ref().is_some_and(|parts| parts.iter().all(Option::is_some)) {
                let mut parts: Vec<Part> = board.gather.take().into_iter().flatten().flatten().collect();
                parts.extend(board.given.iter().flatten().cloned().map(Part::of_open));
                shared.wake.notify_all();
                drop(board);
                last_checkpoint = Instant::now();
                let checkpoint = run.checkpoint_of(parts, run.seconds(shared.gpu()));
                if let Some(file) = run.checkpoint {
                    // a write that fails (a full disk for a while) does not end the search: the next one may work
                    outcome.checkpoint_failure = file.write(&checkpoint).err().map(|e| e.to_string());
                }
                board = shared.lock();
            }
            if let Some(report) = progress.as_deref_mut() {
                let batches = shared.batches.load(Ordering::Relaxed);
                if last_report.elapsed() >= run.options.progress_interval && batches > reported_batches {
                    (last_report, reported_batches) = (Instant::now(), batches);
                    let best = shared.best.load(Ordering::Relaxed);
                    let found = best < run.begin.best || run.begin.best_permutation.is_some();
                    drop(board);
                    let seconds = run.seconds(shared.gpu());
                    let open = open as usize;
                    report(&Progress {
                        nodes,
                        leaves,
                        best: found.then_some(best),
                        open,
                        lower_bound,
                        seconds: seconds.0,
                        gpu_seconds: seconds.1,
                    });
                    board = shared.lock();
                }
            }
        }
        drop(board);
        threads.into_iter().map(|t| t.join()).collect::<Vec<_>>()
    });
    for (i, joined) in driven.into_iter().enumerate() {
        let (gpu, kernel_seconds, usage) =
            joined.map_err(|_| Error::invalid("devices", format!("the thread of device {i} failed; run the search again")))?;
        outcome.gpu_seconds = outcome.gpu_seconds.max(gpu);
        outcome.devices.push(usage);
        if i == 0 {
            outcome.kernel_seconds = kernel_seconds;
        }
    }
    let board = shared.board.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(e) = board.failed {
        return Err(e);
    }
    outcome.stopped = if board.finished { None } else { board.stopped };
    outcome.undelivered = board.given.into_iter().flatten().collect();
    outcome.incumbents = board.incumbents;
    outcome.peak_open = board.peak_open;
    Ok(outcome)
}

/// What a device thread does after a status read.
enum Step {
    /// Submit the next batch.
    Batch,
    /// Load the open nodes another device gave.
    Load(Frontier),
    /// Read open nodes for device `.0`.
    Give(usize),
    /// Wait: dry, or a checkpoint is being gathered.
    Wait,
    /// Leave: finished, stopped or failed.
    Leave,
}

/// One device's thread.
struct Driver<'d, 'g, 'r> {
    index: usize,
    device: &'d mut ResidentDevice<'g>,
    shared: &'d Shared,
    run: &'d Run<'r>,
    /// Time in batches.
    gpu: Duration,
    kernel_seconds: BTreeMap<String, f64>,
    usage: DeviceUse,
}

impl Driver<'_, '_, '_> {
    fn drive(&mut self) -> Result<()> {
        // SIMTLAB_RESIDENT_PROFILE=N: one round in N submissions is run a step at a time and
        // timed per kernel (Solution::kernel_seconds) on the first device
        let profile_every: Option<usize> =
            std::env::var("SIMTLAB_RESIDENT_PROFILE").ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0 && self.index == 0);
        loop {
            let step = self.next_step()?;
            let started = Instant::now();
            match step {
                Step::Leave => return self.drain(),
                Step::Wait => {
                    let board = self.shared.lock();
                    drop(self.shared.nap(board));
                    self.usage.waiting_seconds += started.elapsed().as_secs_f64();
                }
                Step::Load(open) => {
                    let counted = (self.device.last.nodes, self.device.last.leaves);
                    self.device.load(&open, self.shared.best.load(Ordering::Relaxed), counted)?;
                    self.usage.gifts_loaded += 1;
                    self.usage.nodes_loaded += open.len() as u64;
                    self.usage.moving_seconds += started.elapsed().as_secs_f64();
                }
                Step::Give(to) => {
                    // the records' copy runs ahead of the next batch; they reach the board while it runs
                    self.drain()?;
                    let started = Instant::now();
                    // a failure ends the search (the thread's end records it), promise and all
                    let gift = self.give(to)?;
                    self.usage.moving_seconds += started.elapsed().as_secs_f64();
                    self.batch(Some((to, gift)))?;
                }
                Step::Batch => {
                    if profile_every.is_some_and(|every| (self.usage.batches as usize).is_multiple_of(every)) {
                        self.device.profile_round(&mut self.kernel_seconds)?;
                    }
                    self.batch(None)?;
                }
            }
        }
    }

    /// One visit to the board: counts in, then what to do next.
    fn next_step(&mut self) -> Result<Step> {
        if self.device.last.open == 0 {
            // a batch queued behind one that ran dry changes nothing, but its status must be read
            self.drain()?;
        }
        let i = self.index;
        let last = self.device.last;
        let mut board = self.shared.lock();
        board.counts[i] = (last.nodes, last.leaves, u64::from(last.open));
        let (nodes, _, open) = board.totals();
        board.peak_open = board.peak_open.max(open);
        if board.going() {
            if let Some(stop) = self.run.options.stop_reason(self.run.start, nodes) {
                board.stopped = Some(stop);
                self.shared.wake.notify_all();
            }
        }
        if !board.going() {
            return Ok(Step::Leave);
        }
        if let Some(parts) = &board.gather {
            if parts[i].is_some() {
                return Ok(Step::Wait);
            }
            drop(board);
            self.drain()?;
            let part = self.device.part()?;
            let mut board = self.shared.lock();
            if let Some(parts) = board.gather.as_mut() {
                parts[i] = Some(part);
            }
            self.shared.wake.notify_all();
            return Ok(Step::Wait);
        }
        if last.open == 0 {
            // nodes left for this device, or else for one still working that this one can hold
            let room = board.rooms[i].0.min(board.rooms[i].1);
            let parcel = std::iter::once(i)
                .chain((0..board.dry.len()).filter(|&j| j != i && !board.dry[j]))
                .find(|&j| board.given[j].as_ref().is_some_and(|open| j == i || open.len() <= room));
            if let Some(open) = parcel.and_then(|j| board.given[j].take()) {
                board.dry[i] = false;
                return Ok(Step::Load(open));
            }
            board.dry[i] = true;
            if board.dry.iter().all(|&d| d) && !board.promised.iter().any(|&p| p) && board.given.iter().all(Option::is_none) {
                board.finished = true;
                self.shared.wake.notify_all();
                return Ok(Step::Leave);
            }
            return Ok(Step::Wait);
        }
        let open = u64::from(last.open);
        let wants = |j: usize| {
            j != i && !board.promised[j] && board.given[j].is_none() && board.rooms[j].0 > 0 && gives(open, board.counts[j].2, board.pool)
        };
        // a device already waiting comes first
        let devices = 0..board.dry.len();
        let hungry = devices.clone().filter(|&j| board.dry[j]).find(|&j| wants(j)).or_else(|| devices.clone().find(|&j| wants(j)));
        match hungry {
            Some(to) => {
                board.promised[to] = true;
                // the rooms travel with the promise: the donor sizes its gift by them
                Ok(Step::Give(to))
            }
            None => {
                // short submissions only while open nodes may have to move soon (nodes on the
                // board count for the device they are given to)
                let holds = |j: usize| board.counts[j].2 + board.given[j].as_ref().map_or(0, |g| g.len() as u64);
                let fewest = devices.map(holds).min().unwrap_or(0);
                if board.dry.len() > 1 {
                    self.device.set_target(tempo(fewest, board.pool));
                }
                Ok(Step::Batch)
            }
        }
    }

    /// Open nodes for device `to` (as many as it can load), on their way out.
    fn give(&mut self, to: usize) -> Result<Gift> {
        let room = self.shared.lock().rooms[to];
        self.device.give_bottom(room.0.min(room.1))
    }

    /// One batch (queued behind the last), its status read, the incumbent shared both ways;
    /// the next batch is queued before the status is waited for, and while the rounds run a
    /// `gift`'s records are read and it is left on the board.
    fn batch(&mut self, gift: Option<(usize, Gift)>) -> Result<()> {
        let (current, started) = self.device.submit_queued(self.run.options.node_limit.is_none())?;
        if let Some((to, gift)) = gift {
            let given = gift.finish(self.device.gpu);
            let mut board = self.shared.lock();
            board.promised[to] = false;
            match given {
                Ok(open) => {
                    self.usage.gifts_given += 1;
                    self.usage.nodes_given += open.len() as u64;
                    board.given[to] = Some(open);
                }
                Err(e) => {
                    board.failed.get_or_insert(e);
                }
            }
            self.shared.wake.notify_all();
        }
        self.took(current, started)
    }

    /// Reads the status of the batch queued ahead, if there is one: the device is still after.
    fn drain(&mut self) -> Result<()> {
        let queued = self.device.queued();
        queued.map_or(Ok(()), |(read, started)| self.took(read, started))
    }

    /// The status of a batch that started at `started`, the incumbent shared both ways.
    fn took(&mut self, read: PendingRead, started: Instant) -> Result<()> {
        let bytes = read.finish(self.device.gpu)?;
        let took = self.device.took(&bytes, started)?;
        self.gpu += took;
        self.usage.batches += 1;
        let status = self.device.last;
        self.shared.gpu_nanos.fetch_max(self.gpu.as_nanos() as u64, Ordering::Relaxed);
        self.shared.batches.fetch_add(1, Ordering::Relaxed);
        let before = self.shared.best.fetch_min(status.best, Ordering::Relaxed);
        if status.best < before {
            let mut board = self.shared.lock();
            // another device's better value may have come first
            if board.incumbents.last().is_none_or(|last| status.best < last.makespan) {
                let nodes = board.totals().0 - board.counts[self.index].0 + status.nodes;
                let seconds = self.run.begin.seconds + self.run.start.elapsed().as_secs_f64();
                board.incumbents.push(Incumbent { seconds, nodes, makespan: status.best });
            }
        }
        self.device.lower_best(self.shared.best.load(Ordering::Relaxed));
        Ok(())
    }
}
