//! The resident search over MPI ranks, one GPU each, on one host or many (feature `mpi`).
//!
//! Rank 0 starts the search (the heuristic, or the checkpoint resumed, checked there) and
//! sends the start to every rank; each rank loads its deal of the open nodes and runs batches
//! on its GPU. Rank 0 also coordinates, from the status each rank sends after every batch
//! (and at least once a [`BEAT`] while it waits):
//!
//! - **stealing**: a rank is promised nodes before it runs dry: once it reports few open
//!   nodes (see `resident::gives`), rank 0 tells the rank that reported the most, if that is
//!   twice as many and two pools (for a rank already dry too), to give it some: half of
//!   them, one pool at most (`resident::gift_size`, [`Tag::Give`]); the donor reads them
//!   from the bottom of its stack (their records while
//!   its next batch runs) and sends them ([`Tag::Nodes`], a serialized [`Frontier`]), always,
//!   empty if it has none left by then. A rank that still has open nodes keeps the gift on
//!   the host (its parcel) and loads it the moment it runs dry, without waiting for another
//!   round of messages. Statuses count a parcel apart from the device's open nodes: rank 0
//!   picks donors by the latter, so a parcel is not sent back and forth, except that a rank
//!   already dry is given another's parcel first (`[rank, 1]`): it lies on the host, so its
//!   holder sends it at once, even mid-batch, where a gift from a device waits for the
//!   device's batches (near a search's end, ranks otherwise idled on gifts while parcels waited);
//! - **the incumbent**: each status carries the rank's incumbent; rank 0 sends every
//!   improvement of the minimum to all ([`Tag::Best`]);
//! - **termination** by counting: rank 0 counts the gifts it asked for per rank, each rank
//!   counts the gifts it loaded; the search is over when every rank reported itself dry
//!   with as many gifts loaded as were asked for it (no nodes in flight);
//! - **checkpoints**: rank 0 asks every rank for its part of checkpoint number `epoch`
//!   ([`Tag::Gather`]); each rank pauses until [`Tag::Resume`], writes its open nodes to its
//!   own part file (`FILE.e<epoch>.r<rank>`, [`super::super::checkpoint::write_part`]) and
//!   confirms ([`Tag::Part`]: the epoch, counts, best leaf, the part's node count and hash),
//!   writing and confirming again if a gift reaches it meanwhile (rank 0 keeps only the
//!   confirmations of the epoch it gathers). The checkpoint is whole once every rank
//!   has confirmed and counts every gift asked for; rank 0 then writes the manifest at `FILE`
//!   ([`super::super::checkpoint::Manifest`]), and only then are the previous epoch's parts
//!   removed. It resumes on any number of ranks or devices (the open nodes are dealt out
//!   again). The search's end is such a gather too ([`Tag::Stop`]), then [`Tag::Done`] with
//!   the result.
//!
//! Large messages ([`Tag::Nodes`]) go only to a rank with no gift on its way to it from a
//! rank with none on its way to itself, and a rank is promised nodes only once every gift it
//! was asked to make has arrived. A send is posted and the rank goes on ([`Outbox`]): MPI
//! moves a large message only while its sender calls it, which the rank does between its
//! other work, and at its end it waits until every send of its own is taken. A rank that
//! sends nothing for [`ResidentOptions::silence`] (rank 0 for the others: nothing at all), or
//! takes nothing sent to it for as long, ends the run with an error naming it; a rank that
//! dies ends it through mpirun; either way the last manifest resumes.

use std::collections::VecDeque;
use std::time::Duration;
use web_time::Instant;

use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::request::StaticScope;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::Root;

use super::{
    beginning, check_resident_options, gift_size, gives, node_stride, Checkpoint, CheckpointFile, Frontier, Gift, Part, ResidentDevice,
    ResidentOptions, Run, BATCH_ALONE, BATCH_SHARED, SILENCE,
};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, PendingRead};
use crate::kernels::flowshop::checkpoint::{part_path, write_part, Manifest, PartEntry};
use crate::kernels::flowshop::model::Instance;
use crate::kernels::flowshop::search::{DeviceUse, Incumbent, Progress, SearchOptions, Solution, Stop};
use crate::kernels::flowshop::BoundData;

/// Each rank reports at least this often, and rank 0 beats at least this often.
const BEAT: Duration = Duration::from_secs(1);
/// How long a rank with nothing to do sleeps before it polls again: well within a submission
/// ([`BATCH_SHARED`]), since a dry rank waits on it for open nodes, and rank 0 on it to hand them out.
const NAP: Duration = Duration::from_micros(200);

/// How long a send asks MPI again at once, before it pauses between asks.
const PRESS: Duration = Duration::from_millis(100);

/// The messages between ranks (MPI tags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
enum Tag {
    /// rank → 0: `[nodes (2 words), leaves (2), open on the device, best, gifts received, dry, open in its parcel]`.
    Status = 1,
    /// 0 → donor: `[rank, pass]`: give it open nodes from your device, or with `pass` 1 your
    /// parcel (a rank that is dry, while the donor holds nodes it has not loaded yet).
    Give,
    /// donor → rank: a serialized [`Frontier`].
    Nodes,
    /// 0 → all: `[incumbent]`.
    Best,
    /// 0 → all: `[epoch (2 words)]`: the search ends: pause, write your part and confirm it.
    Stop,
    /// 0 → all: `[epoch (2 words)]`: a checkpoint: pause, write your part and confirm it.
    Gather,
    /// rank → 0: its part's confirmation (see [`encode_part`]).
    Part,
    /// 0 → all: go on after a checkpoint.
    Resume,
    /// 0 → all: `[stop code]` and the end's checkpoint without its open nodes.
    Done,
    /// 0 → all: rank 0 lives.
    Beat,
    /// 0 → all: the start, or why there is none: `[0, checkpoint bytes as words]` or `[1, message]`.
    Start,
}

impl Tag {
    fn of(value: i32) -> Option<Tag> {
        use Tag::*;
        [Status, Give, Nodes, Best, Stop, Gather, Part, Resume, Done, Beat, Start].into_iter().find(|t| *t as i32 == value)
    }

    /// What the message is, in words.
    fn what(self) -> &'static str {
        match self {
            Tag::Status => "status",
            Tag::Give => "request for nodes",
            Tag::Nodes => "open nodes",
            Tag::Best => "incumbent",
            Tag::Stop => "end of the search",
            Tag::Gather => "request for a checkpoint",
            Tag::Part => "checkpoint part",
            Tag::Resume => "resume",
            Tag::Done => "end",
            Tag::Beat => "heartbeat",
            Tag::Start => "start",
        }
    }
}

fn wide(words: &[u32]) -> u64 {
    u64::from(words[0]) | (u64::from(words[1]) << 32)
}

fn split_wide(value: u64) -> [u32; 2] {
    [value as u32, (value >> 32) as u32]
}

/// Open nodes as one message: `[records, entries, the records' word count]`; the records'
/// vector becomes the message, so only the entries are copied (a gift is tens of megabytes).
fn encode_frontier(open: Frontier) -> Vec<u32> {
    let Frontier { records: mut words, entries } = open;
    let records = words.len() as u32;
    words.reserve_exact(entries.len() + 1);
    words.extend_from_slice(&entries);
    words.push(records);
    words
}

/// The open nodes of an [`encode_frontier`] message; only the entries are copied.
fn decode_frontier(mut words: Vec<u32>) -> Result<Frontier> {
    let records = words.pop().ok_or_else(|| garbled("open nodes"))? as usize;
    if records > words.len() || !(words.len() - records).is_multiple_of(super::ENTRY_WORDS) {
        return Err(garbled("open nodes"));
    }
    let entries = words.split_off(records);
    Ok(Frontier { records: words, entries })
}

/// What a rank's part file became: none written (no checkpoint file), its manifest entry, or
/// why it could not be written.
#[derive(Clone, Debug)]
enum Written {
    None,
    /// Its open nodes and hash.
    Part(u64, u64),
    Failed(String),
}

/// A rank's confirmation of its part: its counts, incumbent and best leaf (no open nodes), the
/// gifts it had received, and its part file; and how it spent the search so far.
#[derive(Clone, Debug)]
struct Confirmed {
    /// The checkpoint it belongs to.
    epoch: u64,
    part: Part,
    loaded: u64,
    written: Written,
    usage: DeviceUse,
}

/// Words of a [`DeviceUse`] in a confirmation.
const USAGE_WORDS: usize = 16;

fn encode_usage(usage: &DeviceUse) -> Vec<u32> {
    let seconds = [usage.busy_seconds, usage.waiting_seconds, usage.moving_seconds].map(f64::to_bits);
    let counts = [usage.batches, usage.gifts_given, usage.nodes_given, usage.gifts_loaded, usage.nodes_loaded];
    seconds.into_iter().chain(counts).flat_map(split_wide).collect()
}

fn decode_usage(words: &[u32]) -> DeviceUse {
    let value = |i: usize| wide(&words[2 * i..2 * i + 2]);
    DeviceUse {
        busy_seconds: f64::from_bits(value(0)),
        waiting_seconds: f64::from_bits(value(1)),
        moving_seconds: f64::from_bits(value(2)),
        batches: value(3),
        gifts_given: value(4),
        nodes_given: value(5),
        gifts_loaded: value(6),
        nodes_loaded: value(7),
    }
}

/// A confirmation: `[epoch (2), usage (USAGE_WORDS), gifts received, nodes (2), leaves (2),
/// best, leaf makespan or MAX, leaf (jobs words if any), written (0 none, 1 part, 2 failed),
/// then for a part its open nodes (2) and hash (2), for a failure its message (byte count,
/// then bytes)]`.
fn encode_part(confirmed: &Confirmed, jobs: usize) -> Vec<u32> {
    let part = &confirmed.part;
    let mut words = split_wide(confirmed.epoch).to_vec();
    words.extend(encode_usage(&confirmed.usage));
    words.push(confirmed.loaded as u32);
    words.extend(split_wide(part.counted.0));
    words.extend(split_wide(part.counted.1));
    words.push(part.best);
    match &part.leaf {
        Some((value, perm)) if perm.len() == jobs => {
            words.push(*value);
            words.extend(perm.iter().map(|&j| j as u32));
        }
        _ => words.push(u32::MAX),
    }
    match &confirmed.written {
        Written::None => words.push(0),
        Written::Part(nodes, hash) => {
            words.push(1);
            words.extend(split_wide(*nodes));
            words.extend(split_wide(*hash));
        }
        Written::Failed(why) => {
            words.push(2);
            words.extend(bytes_to_words(why.as_bytes()));
        }
    }
    words
}

fn decode_part(words: &[u32], jobs: usize) -> Result<Confirmed> {
    if words.len() < 10 + USAGE_WORDS {
        return Err(garbled("a part"));
    }
    let (epoch, usage, words) = (wide(&words[..2]), decode_usage(&words[2..2 + USAGE_WORDS]), &words[2 + USAGE_WORDS..]);
    let (loaded, counted, best) = (u64::from(words[0]), (wide(&words[1..3]), wide(&words[3..5])), words[5]);
    let (leaf, rest) = if words[6] == u32::MAX {
        (None, &words[7..])
    } else if words.len() > 7 + jobs {
        (Some((words[6], words[7..7 + jobs].iter().map(|&j| j as usize).collect())), &words[7 + jobs..])
    } else {
        return Err(garbled("a part"));
    };
    let written = match rest {
        [0] => Written::None,
        [1, _, _, _, _] => Written::Part(wide(&rest[1..3]), wide(&rest[3..5])),
        [2, message @ ..] => Written::Failed(String::from_utf8_lossy(&words_to_bytes(message)).into_owned()),
        _ => return Err(garbled("a part")),
    };
    Ok(Confirmed { epoch, part: Part { open: Frontier::default(), counted, best, leaf }, loaded, written, usage })
}

fn garbled(what: &str) -> Error {
    Error::invalid("mpi", format!("{what} from another rank did not decode; run every rank with the same simtlab build"))
}

fn stop_code(stop: Option<Stop>) -> u32 {
    match stop {
        None => 0,
        Some(Stop::NodeLimit) => 1,
        Some(Stop::TimeLimit) => 2,
        Some(Stop::Interrupted) => 3,
    }
}

fn stop_of(code: u32) -> Option<Stop> {
    match code {
        1 => Some(Stop::NodeLimit),
        2 => Some(Stop::TimeLimit),
        3 => Some(Stop::Interrupted),
        _ => None,
    }
}

/// Bytes as little-endian words, the byte count first.
fn bytes_to_words(bytes: &[u8]) -> Vec<u32> {
    let mut words = vec![bytes.len() as u32];
    words.extend(bytes.chunks(4).map(|c| {
        let mut w = [0u8; 4];
        w[..c.len()].copy_from_slice(c);
        u32::from_le_bytes(w)
    }));
    words
}

fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    let len = words.first().map_or(0, |&l| l as usize);
    let mut bytes: Vec<u8> = words.iter().skip(1).flat_map(|w| w.to_le_bytes()).collect();
    bytes.truncate(len);
    bytes
}

/// Solves `instance` with one resident search over every rank of `world`, this rank on `gpu`.
/// Every rank calls it with the same instance and options; each returns the same result
/// (the frontier use and the incumbents' history on rank 0 only). Rank 0 writes the
/// checkpoints of `resident` and reads the one it resumes; progress is reported on rank 0.
pub fn solve_resident_ranks(
    world: &SimpleCommunicator,
    gpu: &Gpu,
    instance: &Instance,
    options: &SearchOptions,
    resident: &ResidentOptions,
    progress: Option<&mut dyn FnMut(&Progress)>,
) -> Result<Solution> {
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let start = Instant::now();
    let data = BoundData::new(instance);
    // rank 0 alone checks the checkpoint, claims the file and runs the heuristic
    let prepared = (|| -> Result<(Option<CheckpointFile>, Option<Checkpoint>)> {
        check_resident_options(&[gpu], &data, options)?;
        if rank != 0 {
            return Ok((None, None));
        }
        let file = resident.checkpoint.as_deref().map(CheckpointFile::claim).transpose()?;
        Ok((file, Some(beginning(instance, options, resident, start)?)))
    })();
    let agreed = agree(world, prepared.as_ref().err().map(|e| e.to_string()))?;
    let (file, begin) = prepared?;
    if let Some(why) = agreed {
        return Err(why);
    }
    let mut begin = broadcast_start(world, begin.as_ref())?;
    let open = begin.take_open().split(size, node_stride(data.jobs, data.machines)).swap_remove(rank);
    let device =
        ResidentDevice::new(gpu, &data, options.bound, options.branching, options.pool_size, resident.memory_budget).and_then(|mut d| {
            let counted = if rank == 0 { (begin.nodes_counted, begin.leaves_counted) } else { (0, 0) };
            d.load(&open, begin.best, counted)?;
            Ok(d)
        });
    if let Some(why) = agree(world, device.as_ref().err().map(|e| e.to_string()))? {
        return Err(device.err().unwrap_or(why));
    }
    let device = device?;
    let run = Run { instance, options, begin: &begin, start, checkpoint: file.as_ref(), every: resident.checkpoint_every };
    let mut me = RankLoop::new(world, device, &run, resident, progress);
    let (end, stopped, written) = me.search()?;
    let mut solution = run.solution(end, stopped, &data)?;
    solution.checkpoint_failure = written;
    if let Some(coordinator) = me.coordinator {
        solution.incumbents = coordinator.incumbents;
        // every rank's usage as it confirmed its part of the end
        solution.devices = coordinator.gather.map(|g| g.parts.into_iter().flatten().map(|p| p.usage).collect()).unwrap_or_default();
    }
    Ok(solution)
}

/// Every rank learns whether some rank failed: None when none did, else an error that says
/// which (`failure` is this rank's).
fn agree(world: &SimpleCommunicator, failure: Option<String>) -> Result<Option<Error>> {
    let mine = if failure.is_some() { world.rank() } else { -1 };
    let mut first = -1;
    mpi::collective::CommunicatorCollectives::all_reduce_into(world, &mine, &mut first, mpi::collective::SystemOperation::max());
    Ok(match (first, failure) {
        (-1, _) => None,
        (_, Some(mine)) => Some(Error::invalid("mpi", mine)),
        (failed, None) => Some(Error::invalid(
            "mpi",
            format!("rank {failed} could not start the search (its error is in its output); fix that and run again"),
        )),
    })
}

/// Rank 0's start sent to every rank: the checkpoint's bytes (header, open nodes, hash).
fn broadcast_start(world: &SimpleCommunicator, begin: Option<&Checkpoint>) -> Result<Checkpoint> {
    let root = world.process_at_rank(0);
    let mut words = match begin {
        Some(begin) => bytes_to_words(&begin.to_bytes()?),
        None => Vec::new(),
    };
    let mut len = words.len() as u64;
    root.broadcast_into(&mut len);
    words.resize(len as usize, 0);
    root.broadcast_into(&mut words[..]);
    match begin {
        Some(begin) => Ok(begin.clone()),
        None => Checkpoint::from_bytes(&words_to_bytes(&words)).map_err(|why| {
            Error::invalid("mpi", format!("the start from rank 0 did not decode ({why}); run every rank with the same simtlab build"))
        }),
    }
}

/// What rank 0 knows of every rank.
struct Coordinator {
    /// Per rank: (nodes, leaves, open on its device) at its last status.
    counts: Vec<(u64, u64, u64)>,
    dry: Vec<bool>,
    /// Per rank: the open nodes of a gift it holds and has not loaded yet (its parcel).
    held: Vec<u64>,
    /// Per rank: gifts asked for it, and received by it as it last said.
    asked: Vec<u64>,
    loaded: Vec<u64>,
    /// Per rank: the rank last asked to give it nodes.
    donor: Vec<usize>,
    /// Nodes one round takes.
    pool: u64,
    heard: Vec<Instant>,
    /// The incumbent sent to all.
    best: u32,
    incumbents: Vec<Incumbent>,
    gather: Option<Gather>,
    /// The number of the last checkpoint asked for.
    epoch: u64,
    /// The end's checkpoint, once the last gather is whole.
    end: Option<Checkpoint>,
    last_checkpoint: Instant,
    last_beat: Instant,
    last_report: Instant,
    reported: u64,
    checkpoint_failure: Option<String>,
}

impl Coordinator {
    fn new(ranks: usize, pool: u64, best: u32, epoch: u64) -> Self {
        let now = Instant::now();
        Coordinator {
            counts: vec![(0, 0, 1); ranks],
            dry: vec![false; ranks],
            held: vec![0; ranks],
            asked: vec![0; ranks],
            loaded: vec![0; ranks],
            donor: vec![0; ranks],
            pool,
            heard: vec![now; ranks],
            best,
            incumbents: Vec::new(),
            gather: None,
            epoch,
            end: None,
            last_checkpoint: now,
            last_beat: now,
            last_report: now,
            reported: 0,
            checkpoint_failure: None,
        }
    }

    /// Nodes on their way to rank `r`: gifts asked for it that it has not received.
    fn receiving(&self, r: usize) -> bool {
        self.asked[r] > self.loaded[r]
    }

    /// The gifts to ask for now, as (donor, its [`Tag::Give`] words), counted as asked: for
    /// every hungry rank not promised nodes yet and not giving, another's parcel if it is dry,
    /// else a gift from the fullest rank's device, from one not promised nodes itself (no two
    /// ranks send each other nodes at once).
    fn promise(&mut self) -> Vec<(usize, Vec<u32>)> {
        let ranks = self.dry.len();
        let mut gives_now = Vec::new();
        for to in 0..ranks {
            let giving = (0..ranks).any(|r| self.receiving(r) && self.donor[r] == to);
            if self.held[to] > 0 || self.receiving(to) || giving {
                continue;
            }
            // a parcel lies on its holder's host already: it goes at once, with no batch to wait for
            let holder =
                (0..ranks).filter(|&r| r != to && self.dry[to] && self.held[r] > 0 && !self.receiving(r)).max_by_key(|&r| self.held[r]);
            let donor = || {
                (0..ranks)
                    .filter(|&r| r != to && !self.dry[r] && !self.receiving(r))
                    .max_by_key(|&r| self.counts[r].2)
                    .filter(|&r| gives(self.counts[r].2, self.counts[to].2, self.pool))
            };
            let (donor, pass) = match holder {
                Some(holder) => (holder, true),
                None => match donor() {
                    Some(donor) => (donor, false),
                    None => continue,
                },
            };
            self.asked[to] += 1;
            self.donor[to] = donor;
            if pass {
                self.held[donor] = 0;
            } else {
                self.counts[donor].2 -= gift_size(self.counts[donor].2, self.pool);
            }
            gives_now.push((donor, vec![to as u32, pass as u32]));
        }
        gives_now
    }
}

/// A checkpoint being gathered.
struct Gather {
    /// Its number: its parts' file names carry it.
    epoch: u64,
    /// Each rank's confirmation, once it sent it.
    parts: Vec<Option<Confirmed>>,
    /// `Some(why it stopped)` when it is the end of the search.
    end: Option<Option<Stop>>,
}

impl Gather {
    fn new(ranks: usize, epoch: u64, end: Option<Option<Stop>>) -> Self {
        Gather { epoch, parts: (0..ranks).map(|_| None).collect(), end }
    }

    /// The message that asks for it.
    fn ask(&self) -> (Option<usize>, Tag, Vec<u32>) {
        let tag = if self.end.is_some() { Tag::Stop } else { Tag::Gather };
        (None, tag, split_wide(self.epoch).to_vec())
    }

    /// The manifest of the parts beside `file`, whose state is `header`, or why there is none.
    fn manifest(&self, file: &std::path::Path, header: Checkpoint) -> std::result::Result<Manifest, String> {
        let mut parts = Vec::with_capacity(self.parts.len());
        for (rank, confirmed) in self.parts.iter().flatten().enumerate() {
            let path = part_path(file, self.epoch, rank);
            match &confirmed.written {
                Written::Part(nodes, hash) => {
                    let name = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
                    parts.push(PartEntry { file: name, nodes: *nodes, hash: *hash });
                }
                Written::Failed(why) => return Err(format!("rank {rank} could not write its part {}: {why}", path.display())),
                Written::None => return Err(format!("rank {rank} wrote no part: run every rank with the same `checkpoint`")),
            }
        }
        Ok(Manifest { epoch: self.epoch, ranks: parts.len(), parts, header })
    }
}

/// A send under way: its words stay where MPI reads them until it is done.
struct Sending {
    to: usize,
    tag: Tag,
    /// Freed once the send is done (the vector as it is: a boxed slice would copy one with
    /// spare room).
    buffer: *mut Vec<u32>,
    request: Option<mpi::request::Request<'static, [u32], StaticScope>>,
    since: Instant,
}

/// A rank's sends under way. A donor that waited for its gift's send to end (about 5 ms for
/// ten megabytes) left its device without a queued batch: posted, a rank's batches took 11.36 s
/// against 11.46 s of the same tree (on two H200, `benches/results/multi-gpu-h200-x2.md`).
#[derive(Default)]
struct Outbox {
    pending: Vec<Sending>,
}

impl Outbox {
    /// Starts sending `words` to `to`.
    fn post(&mut self, world: &SimpleCommunicator, to: usize, tag: Tag, words: Vec<u32>) {
        let buffer: *mut Vec<u32> = Box::into_raw(Box::new(words));
        // SAFETY: `buffer` comes from a live box that only the request reads until it is freed
        // (in `progress` once it is done, or never, in `drop`)
        let words: &'static [u32] = unsafe { (*buffer).as_slice() };
        let request = world.process_at_rank(to as i32).immediate_send_with_tag(StaticScope, words, tag as i32);
        self.pending.push(Sending { to, tag, buffer, request: Some(request), since: Instant::now() });
    }

    /// Asks MPI once about every send under way, freeing those done: `Err((to, tag))` for one
    /// that `to` has not taken for `silence`.
    fn progress(&mut self, silence: Duration) -> std::result::Result<(), (usize, Tag)> {
        let mut failed = None;
        self.pending.retain_mut(|sending| {
            let Some(request) = sending.request.take() else { return false };
            match request.test() {
                Ok(_) => {
                    // SAFETY: the send is complete, so MPI no longer reads `buffer`, and the
                    // request that borrowed it is gone: the box is whole and unshared again
                    drop(unsafe { Box::from_raw(sending.buffer) });
                    false
                }
                Err(pending) => {
                    if sending.since.elapsed() > silence {
                        failed.get_or_insert((sending.to, sending.tag));
                    }
                    sending.request = Some(pending);
                    true
                }
            }
        });
        failed.map_or(Ok(()), Err)
    }

    fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

impl Drop for Outbox {
    /// A run that ends with sends under way (an error) leaves them: MPI may still read their
    /// buffers, which stay (leaked) while the process ends.
    fn drop(&mut self) {
        for sending in &mut self.pending {
            std::mem::forget(sending.request.take());
        }
    }
}

/// One rank's loop.
struct RankLoop<'w, 'g, 'r, 'p> {
    world: &'w SimpleCommunicator,
    rank: usize,
    size: usize,
    device: ResidentDevice<'g>,
    run: &'r Run<'r>,
    progress: Option<&'p mut dyn FnMut(&Progress)>,
    /// Messages rank 0 sends itself, and those taken during a batch that wait for its end:
    /// (sender, tag, words).
    inbox: VecDeque<(usize, Tag, Vec<u32>)>,
    /// Sends under way.
    outbox: Outbox,
    /// Gifts received.
    loaded: u64,
    /// Open nodes given to this rank while it still had some: loaded once it runs dry.
    parcel: Option<Frontier>,
    /// Open nodes on their way out of the device: (to whom, the gift), sent once their
    /// records are read, while the next batch runs.
    gifts: Vec<(usize, Gift)>,
    /// How this rank spent the search so far.
    usage: DeviceUse,
    /// Waiting for the end of the gather of this epoch (or the end of the search).
    paused: Option<u64>,
    /// Where this rank's part files go: beside the checkpoint's path.
    checkpoint: Option<&'r std::path::Path>,
    /// A rank silent this long ends the run.
    silence: Duration,
    gpu: Duration,
    last_status: Instant,
    last_sent: Option<Vec<u32>>,
    heard_root: Instant,
    coordinator: Option<Coordinator>,
    /// The end: its checkpoint (without open nodes on ranks other than 0) and why it stopped.
    done: Option<(Checkpoint, Option<Stop>)>,
}

impl<'w, 'g, 'r, 'p> RankLoop<'w, 'g, 'r, 'p> {
    fn new(
        world: &'w SimpleCommunicator,
        mut device: ResidentDevice<'g>,
        run: &'r Run<'r>,
        resident: &'r ResidentOptions,
        progress: Option<&'p mut dyn FnMut(&Progress)>,
    ) -> Self {
        let (rank, size) = (world.rank() as usize, world.size() as usize);
        device.set_target(if size > 1 { BATCH_SHARED } else { BATCH_ALONE });
        let now = Instant::now();
        let epoch = run.checkpoint.map_or(0, CheckpointFile::epoch);
        let coordinator = (rank == 0).then(|| Coordinator::new(size, run.options.pool_size as u64, run.begin.best, epoch));
        RankLoop {
            world,
            rank,
            size,
            device,
            run,
            progress,
            inbox: VecDeque::new(),
            outbox: Outbox::default(),
            loaded: 0,
            parcel: None,
            gifts: Vec::new(),
            usage: DeviceUse::default(),
            paused: None,
            checkpoint: resident.checkpoint.as_deref(),
            silence: resident.silence.unwrap_or(SILENCE),
            gpu: Duration::ZERO,
            last_status: now,
            last_sent: None,
            heard_root: now,
            coordinator,
            done: None,
        }
    }

    /// Sends `words` to `to` (to itself through the inbox, but rank 0's own status counts at
    /// once). The send is posted and the rank goes on: [`RankLoop::progress`] moves it while the
    /// rank serves.
    fn send(&mut self, to: usize, tag: Tag, words: Vec<u32>) -> Result<()> {
        if to == self.rank {
            // through the inbox, rank 0 read its own status only after its next batch, and
            // picked donors and the hungry by its count of a batch before; a parcel it is asked
            // to pass goes at once, as another rank's would
            if tag == Tag::Status || (tag == Tag::Give && self.passes(&words)) {
                return self.handle(to, tag, words);
            }
            self.inbox.push_back((to, tag, words));
            return Ok(());
        }
        self.outbox.post(self.world, to, tag, words);
        self.progress()
    }

    /// Moves the sends under way; a receiver that takes nothing for the silence limit
    /// (stopped, or dead with its buffers full) ends the run with an error naming it instead of
    /// a hang.
    fn progress(&mut self) -> Result<()> {
        match self.outbox.progress(self.silence) {
            Ok(()) => Ok(()),
            Err((to, tag)) => Err(self.silent(to, &format!("took no {} sent to it", tag.what()))),
        }
    }

    /// Waits until every send under way has been taken (at most the silence limit).
    fn flush(&mut self) -> Result<()> {
        let since = Instant::now();
        loop {
            self.progress()?;
            if self.outbox.is_empty() {
                return Ok(());
            }
            // MPI moves a large message in pieces, each while its sender calls it: at first
            // ask again at once (a gift of 10 MB took 17 ms with 50 µs between the calls)
            if since.elapsed() < PRESS {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }

    fn send_all(&mut self, tag: Tag, words: &[u32]) -> Result<()> {
        for to in 0..self.size {
            self.send(to, tag, words.to_vec())?;
        }
        Ok(())
    }

    /// The error of rank `rank` that did `what` (sent nothing, took nothing) for the silence
    /// limit, saying where to resume from (every rank knows the checkpoint's path).
    fn silent(&self, rank: usize, what: &str) -> Error {
        let resume = match self.checkpoint {
            Some(path) => format!("resume from {} (on any number of ranks)", path.display()),
            None => "run again with a checkpoint file (`checkpoint`) to be able to resume".into(),
        };
        Error::invalid("mpi", format!("rank {rank} {what} for {} s: it died or hangs; {resume}", self.silence.as_secs_f64()))
    }

    /// The next message for this rank, if one is there.
    fn receive(&mut self) -> Result<Option<(usize, Tag, Vec<u32>)>> {
        match self.inbox.pop_front() {
            Some(message) => Ok(Some(message)),
            None => self.probe(),
        }
    }

    /// The next message MPI has for this rank, if one is there.
    fn probe(&mut self) -> Result<Option<(usize, Tag, Vec<u32>)>> {
        let Some(probed) = self.world.any_process().immediate_matched_probe() else {
            return Ok(None);
        };
        let (words, status): (Vec<u32>, _) = probed.matched_receive_vec();
        let from = status.source_rank() as usize;
        let tag = Tag::of(status.tag()).ok_or_else(|| garbled("a message"))?;
        Ok(Some((from, tag, words)))
    }

    /// One batch (queued behind the last), with the next queued before its status is waited
    /// for, so the device does not idle while the host reads a status and decides; while its
    /// rounds run, the rank sends its gifts and takes what is sent to it (so a sender waits on
    /// no batch) and rank 0 coordinates. What touches the device first takes the queued batch's
    /// status ([`RankLoop::drain`]).
    fn batch(&mut self) -> Result<()> {
        let (current, started) = self.device.submit_queued(self.run.options.node_limit.is_none())?;
        self.send_gifts()?;
        self.took(current, started)
    }

    /// Reads the status of the batch queued ahead, if there is one: the device is still after.
    fn drain(&mut self) -> Result<()> {
        let queued = self.device.queued();
        queued.map_or(Ok(()), |(read, started)| self.took(read, started))
    }

    /// The status of a batch that started at `started`, sent to rank 0; meanwhile the rank
    /// serves messages.
    fn took(&mut self, read: PendingRead, started: Instant) -> Result<()> {
        let gpu = self.device.gpu;
        let bytes = read.finish_polling(gpu, || self.serve())?;
        let took = self.device.took(&bytes, started)?;
        self.gpu += took;
        self.usage.batches += 1;
        self.status(true)
    }

    /// While a batch runs: takes the messages that came, handling those for rank 0's books
    /// and keeping the rest for the batch's end, and lets rank 0 coordinate.
    fn serve(&mut self) -> Result<()> {
        self.progress()?;
        while let Some((from, tag, words)) = self.probe()? {
            match tag {
                Tag::Status | Tag::Part | Tag::Beat => self.handle(from, tag, words)?,
                Tag::Give if self.passes(&words) => self.handle(from, tag, words)?,
                _ => self.inbox.push_back((from, tag, words)),
            }
        }
        if self.coordinator.is_some() {
            self.coordinate()?;
        }
        Ok(())
    }

    /// Runs until rank 0 says the search is done: (the end, why it stopped, a checkpoint failure).
    fn search(&mut self) -> Result<(Checkpoint, Option<Stop>, Option<String>)> {
        loop {
            self.progress()?;
            while let Some((from, tag, words)) = self.receive()? {
                self.handle(from, tag, words)?;
            }
            if let Some((end, stopped)) = self.done.take() {
                // every message of this rank's taken before it leaves
                self.flush()?;
                let failure = self.coordinator.as_mut().and_then(|c| c.checkpoint_failure.take());
                return Ok((end, stopped, failure));
            }
            if self.coordinator.is_some() {
                self.coordinate()?;
            } else if self.heard_root.elapsed() > self.silence {
                return Err(self.silent(0, "sent nothing"));
            }
            self.load_parcel()?;
            if self.paused.is_none() && self.device.last.open > 0 {
                self.batch()?;
            } else {
                self.drain()?;
                let started = Instant::now();
                self.send_gifts()?;
                self.usage.moving_seconds += started.elapsed().as_secs_f64();
                self.status(false)?;
                let napped = Instant::now();
                std::thread::sleep(NAP);
                self.usage.waiting_seconds += napped.elapsed().as_secs_f64();
            }
        }
    }

    /// Whether a request for nodes asks for this rank's parcel while it holds one (one it
    /// loaded meanwhile is given from the device instead, after its batch).
    fn passes(&self, give: &[u32]) -> bool {
        give.get(1) == Some(&1) && self.parcel.is_some()
    }

    /// One message.
    fn handle(&mut self, from: usize, tag: Tag, words: Vec<u32>) -> Result<()> {
        if from == 0 {
            self.heard_root = Instant::now();
        }
        let jobs = self.run.instance.jobs;
        match tag {
            Tag::Give => {
                let to = *words.first().ok_or_else(|| garbled("a request for nodes"))? as usize;
                // a parcel asked for lies on the host: it goes on at once, whatever the device
                // is doing; else the device first, the gift coming from the bottom of its stack
                let pass = self.passes(&words);
                if !pass {
                    self.drain()?;
                }
                let started = Instant::now();
                if pass || (self.device.last.open < 2 && self.parcel.is_some()) {
                    // asked for, or too few on the device: the parcel goes on whole
                    let parcel = self.parcel.take().unwrap_or_default();
                    self.send_nodes(to, parcel)?;
                } else {
                    // as much as this rank could load itself (ranks run on like GPUs)
                    let room = self.device.room();
                    let gift = self.device.give_bottom(room.0.min(room.1))?;
                    self.gifts.push((to, gift));
                }
                self.usage.moving_seconds += started.elapsed().as_secs_f64();
            }
            Tag::Nodes => {
                let started = Instant::now();
                let open = decode_frontier(words)?;
                self.loaded += 1;
                self.usage.moving_seconds += started.elapsed().as_secs_f64();
                if !open.is_empty() {
                    // counted as it comes: a parcel may go on whole to another rank
                    self.usage.gifts_loaded += 1;
                    self.usage.nodes_loaded += open.len() as u64;
                    // rank 0 promises nodes only to a rank without a parcel
                    self.parcel = Some(open);
                    self.load_parcel()?;
                }
                if let Some(epoch) = self.paused {
                    self.send_part(epoch)?;
                }
                self.status(false)?;
            }
            Tag::Best => {
                let best = *words.first().ok_or_else(|| garbled("an incumbent"))?;
                self.device.lower_best(best);
            }
            Tag::Stop | Tag::Gather => {
                let epoch = wide(words.get(..2).ok_or_else(|| garbled("a request for the part"))?);
                self.paused = Some(epoch);
                self.send_part(epoch)?;
            }
            Tag::Resume => self.paused = None,
            Tag::Done => {
                let stopped = stop_of(*words.first().ok_or_else(|| garbled("the end"))?);
                let end = match self.coordinator.as_mut().and_then(|c| c.end.take()) {
                    Some(end) => end,
                    None => Checkpoint::from_bytes(&words_to_bytes(&words[1..]))
                        .map_err(|why| Error::invalid("mpi", format!("the end from rank 0 did not decode ({why})")))?,
                };
                self.done = Some((end, stopped));
            }
            Tag::Beat => {}
            Tag::Status | Tag::Part => {
                let run = self.run;
                let Some(c) = self.coordinator.as_mut() else {
                    return Err(garbled("a message for rank 0"));
                };
                c.heard[from] = Instant::now();
                if tag == Tag::Status {
                    if words.len() < 9 {
                        return Err(garbled("a status"));
                    }
                    c.counts[from] = (wide(&words[0..2]), wide(&words[2..4]), u64::from(words[4]));
                    c.loaded[from] = u64::from(words[6]);
                    c.dry[from] = words[7] != 0;
                    c.held[from] = u64::from(words[8]);
                    let best = words[5];
                    if best < c.best {
                        c.best = best;
                        let seconds = run.begin.seconds + run.start.elapsed().as_secs_f64();
                        let nodes = c.counts.iter().map(|c| c.0).sum();
                        c.incumbents.push(Incumbent { seconds, nodes, makespan: best });
                        self.send_all(Tag::Best, &[best])?;
                    }
                } else if let Some(gather) = c.gather.as_mut() {
                    // a confirmation of an earlier checkpoint (sent again after a late gift)
                    // says nothing of this one
                    let confirmed = decode_part(&words, jobs)?;
                    if confirmed.epoch == gather.epoch {
                        gather.parts[from] = Some(confirmed);
                    }
                }
            }
            Tag::Start => return Err(garbled("a second start")),
        }
        Ok(())
    }

    /// Rank 0's part: stealing, stops, checkpoints, the end.
    fn coordinate(&mut self) -> Result<()> {
        let mut out: Vec<(Option<usize>, Tag, Vec<u32>)> = Vec::new();
        self.plan(&mut out)?;
        for (to, tag, words) in out {
            match to {
                Some(to) => self.send(to, tag, words)?,
                None => self.send_all(tag, &words)?,
            }
        }
        Ok(())
    }

    /// What rank 0 sends now (to one rank, or to all with None).
    fn plan(&mut self, out: &mut Vec<(Option<usize>, Tag, Vec<u32>)>) -> Result<()> {
        let (size, run, gpu, silence) = (self.size, self.run, self.gpu, self.silence);
        let Some(c) = self.coordinator.as_ref() else { return Ok(()) };
        if let Some(silent_rank) = (0..size).find(|&r| r != 0 && c.heard[r].elapsed() > silence) {
            return Err(self.silent(silent_rank, "sent nothing"));
        }
        let Some(c) = self.coordinator.as_mut() else { return Ok(()) };
        let (nodes, leaves, open) = c.counts.iter().fold((0, 0, 0), |(a, b, d), x| (a + x.0, b + x.1, d + x.2));
        let open = open + c.held.iter().sum::<u64>();
        if let Some(report) = self.progress.as_deref_mut() {
            if c.last_report.elapsed() >= run.options.progress_interval && nodes > c.reported {
                (c.last_report, c.reported) = (Instant::now(), nodes);
                let found = c.best < run.begin.best || run.begin.best_permutation.is_some();
                let seconds = run.seconds(gpu);
                let lower_bound = crate::kernels::flowshop::search::root_bound(&BoundData::new(run.instance), run.options.bound);
                report(&Progress {
                    nodes,
                    leaves,
                    best: found.then_some(c.best),
                    open: open as usize,
                    lower_bound,
                    seconds: seconds.0,
                    gpu_seconds: seconds.1,
                });
            }
        }
        if c.last_beat.elapsed() >= BEAT {
            c.last_beat = Instant::now();
            out.extend((1..size).map(|to| (Some(to), Tag::Beat, Vec::new())));
        }
        if let Some(gather) = &c.gather {
            // whole once every part is confirmed and counts every gift asked for its rank
            let whole = gather.parts.iter().enumerate().all(|(r, p)| p.as_ref().is_some_and(|p| p.loaded == c.asked[r]));
            if !whole || c.end.is_some() {
                return Ok(());
            }
            let end = gather.end;
            // the state without open nodes: those are in the parts
            let parts: Vec<Part> = gather.parts.iter().flatten().map(|p| p.part.clone()).collect();
            let checkpoint = run.checkpoint_of(parts, run.seconds(gpu));
            if let Some(file) = run.checkpoint {
                // a write that fails (a full disk for a while) does not end the search: the next one may work
                c.checkpoint_failure = match gather.manifest(file.path(), checkpoint.clone()) {
                    Ok(manifest) => file.write_manifest(&manifest).err().map(|e| e.to_string()),
                    Err(why) => Some(why),
                };
            }
            c.last_checkpoint = Instant::now();
            match end {
                None => {
                    c.gather = None;
                    out.push((None, Tag::Resume, Vec::new()));
                }
                Some(stopped) => {
                    let mut words = vec![stop_code(stopped)];
                    words.extend(bytes_to_words(&checkpoint.to_bytes()?));
                    c.end = Some(checkpoint);
                    out.push((None, Tag::Done, words));
                }
            }
            return Ok(());
        }
        let finished = c.dry.iter().all(|&d| d) && c.asked == c.loaded;
        let stopped = run.options.stop_reason(run.start, nodes);
        let due = run.checkpoint.is_some() && run.every.is_some_and(|every| c.last_checkpoint.elapsed() >= every);
        if finished || stopped.is_some() || due {
            let end = (finished || stopped.is_some()).then_some(if finished { None } else { stopped });
            c.epoch += 1;
            let gather = Gather::new(size, c.epoch, end);
            out.push(gather.ask());
            c.gather = Some(gather);
            return Ok(());
        }
        out.extend(c.promise().into_iter().map(|(donor, give)| (Some(donor), Tag::Give, give)));
        Ok(())
    }

    /// Sends the gifts on their way out, once their records are read.
    fn send_gifts(&mut self) -> Result<()> {
        for (to, gift) in std::mem::take(&mut self.gifts) {
            let open = gift.finish(self.device.gpu)?;
            self.send_nodes(to, open)?;
        }
        Ok(())
    }

    /// Sends open nodes to rank `to` (always: an empty gift says there were none).
    fn send_nodes(&mut self, to: usize, open: Frontier) -> Result<()> {
        let nodes = open.len() as u64;
        self.send(to, Tag::Nodes, encode_frontier(open))?;
        self.usage.gifts_given += 1;
        self.usage.nodes_given += nodes;
        Ok(())
    }

    /// Writes this rank's part of checkpoint `epoch` (where there is a checkpoint file) and
    /// confirms it to rank 0.
    fn send_part(&mut self, epoch: u64) -> Result<()> {
        self.drain()?;
        let Part { mut open, counted, best, leaf } = self.device.part()?;
        if let Some(parcel) = &self.parcel {
            open.append(parcel.clone(), node_stride(self.run.instance.jobs, self.run.instance.machines));
        }
        let run = self.run;
        let written = match self.checkpoint {
            None => Written::None,
            Some(file) => match write_part(file, run.begin, epoch, self.rank, &open) {
                Ok(entry) => Written::Part(entry.nodes, entry.hash),
                Err(e) => Written::Failed(e.to_string()),
            },
        };
        let part = Part { open: Frontier::default(), counted, best, leaf };
        let usage = DeviceUse { busy_seconds: self.gpu.as_secs_f64(), ..self.usage };
        let confirmed = Confirmed { epoch, part, loaded: self.loaded, written, usage };
        let words = encode_part(&confirmed, run.instance.jobs);
        self.send(0, Tag::Part, words)
    }

    /// Loads the parcel once the device has run dry (not while a checkpoint is gathered: the
    /// part sent holds it already).
    fn load_parcel(&mut self) -> Result<()> {
        if self.device.last.open == 0 && self.parcel.is_some() {
            // a batch queued behind one that ran dry changes nothing, but its status must be read
            self.drain()?;
        }
        if self.device.last.open > 0 || self.paused.is_some() {
            return Ok(());
        }
        if let Some(open) = self.parcel.take() {
            let started = Instant::now();
            let counted = (self.device.last.nodes, self.device.last.leaves);
            let best = self.device.last.best;
            self.device.load(&open, best, counted)?;
            self.usage.moving_seconds += started.elapsed().as_secs_f64();
        }
        Ok(())
    }

    /// Sends the status to rank 0 when it changed (`fresh`: after a batch) or a beat passed.
    fn status(&mut self, fresh: bool) -> Result<()> {
        let last = self.device.last;
        let held = self.parcel.as_ref().map_or(0, Frontier::len) as u32;
        let dry = last.open == 0 && self.parcel.is_none();
        let mut words = Vec::with_capacity(9);
        words.extend(split_wide(last.nodes));
        words.extend(split_wide(last.leaves));
        words.extend([last.open, last.best, self.loaded as u32, dry as u32, held]);
        if fresh || self.last_sent.as_ref() != Some(&words) || self.last_status.elapsed() >= BEAT {
            self.last_status = Instant::now();
            self.send(0, Tag::Status, words.clone())?;
            self.last_sent = Some(words);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dry rank is given another's parcel first, and by one message only; a rank that is
    /// only hungry is given from the fullest device, a pool at most; no rank gives while
    /// nodes are on their way to it.
    #[test]
    fn a_dry_rank_takes_a_parcel_before_a_device_gives() {
        let pool = 100;
        let mut c = Coordinator::new(3, pool, 2500, 0);
        c.counts = vec![(0, 0, 5000), (0, 0, 150), (0, 0, 0)];
        (c.dry, c.held) = (vec![false, false, true], vec![0, 800, 0]);
        assert_eq!(c.promise(), vec![(1, vec![2, 1])], "rank 2 is dry: rank 1's parcel, not rank 0's device");
        assert_eq!((c.asked.clone(), c.held[1], c.counts[0].2), (vec![0, 0, 1], 0, 5000));
        assert!(c.promise().is_empty(), "rank 1 gives and rank 2 waits for its parcel: nothing more");
        // the parcel arrived and was loaded; rank 1 now dry and rank 2 hungry
        c.loaded[2] = 1;
        c.counts = vec![(0, 0, 5000), (0, 0, 0), (0, 0, 120)];
        (c.dry, c.held) = (vec![false, true, false], vec![0, 0, 0]);
        assert_eq!(c.promise(), vec![(0, vec![1, 0]), (0, vec![2, 0])], "rank 0's device gives to each");
        assert_eq!(c.counts[0].2, 4800, "rank 0 counted as giving a pool twice");
        // a dry rank waits for a giver with two pools, then takes a pool
        let mut c = Coordinator::new(2, pool, 2500, 0);
        c.counts = vec![(0, 0, 150), (0, 0, 0)];
        c.dry = vec![false, true];
        assert!(c.promise().is_empty(), "rank 0 is short of two pools");
        c.counts[0].2 = 260;
        assert_eq!(c.promise(), vec![(0, vec![1, 0])]);
        assert_eq!(c.counts[0].2, 160, "rank 0 counted as giving a pool");
        // nodes on their way to rank 0: it may not give; a rank with a parcel is not hungry
        let mut c = Coordinator::new(2, pool, 2500, 0);
        c.counts = vec![(0, 0, 5000), (0, 0, 10)];
        (c.asked, c.held) = (vec![1, 0], vec![0, 0]);
        assert!(c.promise().is_empty(), "rank 0 is receiving");
        (c.loaded, c.held) = (vec![1, 0], vec![0, 30]);
        assert!(c.promise().is_empty(), "rank 1 holds a parcel");
    }

    /// A gift crosses as one message and comes back whole; a count that does not fit is refused.
    #[test]
    fn open_nodes_cross_as_one_message() {
        let open = Frontier { records: (1..=12).collect(), entries: vec![0, 5, 2301, 2, 7, 2299] };
        let words = encode_frontier(open.clone());
        assert_eq!(words.len(), 12 + 6 + 1);
        let back = decode_frontier(words.clone()).unwrap();
        assert_eq!((back.records, back.entries), (open.records, open.entries));
        let mut garbled = words.clone();
        *garbled.last_mut().unwrap() = 19;
        assert!(decode_frontier(garbled.clone()).is_err(), "more records than words");
        *garbled.last_mut().unwrap() = 13;
        assert!(decode_frontier(garbled).is_err(), "entries of 3 words each");
        assert!(decode_frontier(Vec::new()).is_err());
        let none = decode_frontier(encode_frontier(Frontier::default())).unwrap();
        assert!(none.is_empty());
    }
}
