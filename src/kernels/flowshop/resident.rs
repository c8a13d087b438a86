//! The resident search ([`solve_resident`]): selection, branching, bounding, pruning and
//! incumbent updates all on the GPU (`shaders/flowshop/resident.wgsl`, its header has the
//! layout). The open nodes stay in a GPU stack; one round takes the top `pool_size` nodes,
//! bounds their children with the unchanged `lb1`/`lb2` kernels through an indirect dispatch,
//! and pushes the kept ones back. The host records many rounds into one submission and reads
//! only a 16-word status between submissions; nodes come to the host only for a checkpoint or
//! to move work between devices.
//!
//! The memory is bounded whatever the tree: an open node is a 3-word entry (its parent's record,
//! the place of the job it adds, its bound) and each branched node's record is stored once, so
//! the stack is `pool` depth-first dives of compact entries; the stack and the record store are
//! sized from [`ResidentOptions::memory_budget`] (by default from the adapter's buffer limits),
//! and where the budget is tight a round takes fewer nodes rather than failing.
//!
//! No kernel waits for another workgroup, so the search needs no persistent-threads tier: it
//! runs wherever compute shaders and indirect dispatch do, llvmpipe/lavapipe included (every
//! invocation's loops stay below their 65535-iteration cut, checked before the start).
//! With the incumbent fixed (`--ub` = the optimum), the tree under "keep a child iff its bound
//! is below the incumbent" does not depend on the order, so the resident search counts the
//! same nodes and leaves as the host search.

use std::time::Duration;

use super::checkpoint::Checkpoint;
use super::BoundData;
#[cfg(not(target_arch = "wasm32"))]
use {
    super::checkpoint::CheckpointFile,
    super::gpu::ThreadMapping,
    super::heuristic,
    super::model::{Instance, LowerBound, GPU_MAX_MACHINES, WORKGROUP_SIZE},
    super::search::{check_schedule, Branching, Exploration, FrontierUse, Progress, SearchOptions, Solution},
    crate::error::{Error, Result},
    crate::gpu::shader::registry,
    crate::gpu::{Bind, BufferKind, Gpu, GpuBuffer, Kernel, PendingRead, Step},
    std::sync::Arc,
    web_time::Instant,
};

#[cfg(feature = "mpi")]
mod ranks;
#[cfg(not(target_arch = "wasm32"))]
mod threads;

#[cfg(feature = "mpi")]
pub use ranks::solve_resident_ranks;

/// Over MPI ranks, the default of [`ResidentOptions::silence`].
pub const SILENCE: Duration = Duration::from_secs(60);

/// Largest job count of the resident search (`MAX_JOBS` in `resident.wgsl`).
pub const RESIDENT_MAX_JOBS: usize = 128;

/// resident_masks runs a workgroup per node, in rows of this many (resident.wgsl's MASK_ROW).
#[cfg(not(target_arch = "wasm32"))]
const MASK_ROW: u32 = 32768;

/// `resident_order` halves the prune counts once one reaches this (resident.wgsl's HITS_LIMIT).
#[cfg(test)]
const HITS_LIMIT: u32 = 1 << 30;

/// Machine pairs of at most [`GPU_MAX_MACHINES`] machines (lb2.wgsl's `MAX_PAIRS`).
#[cfg(not(target_arch = "wasm32"))]
const MAX_PAIRS: usize = GPU_MAX_MACHINES * (GPU_MAX_MACHINES - 1) / 2;

/// Words of the status buffer (`state` in `resident.wgsl`).
#[cfg(not(target_arch = "wasm32"))]
mod word {
    pub(crate) const COUNT: usize = 0;
    pub(crate) const BEST: usize = 1;
    pub(crate) const FULL: usize = 6;
    pub(crate) const NODES: usize = 8;
    pub(crate) const LEAVES: usize = 10;
    pub(crate) const FRAMES: usize = 13;
    pub(crate) const FLOOR: usize = 14;
    pub(crate) const OFFER: usize = 16;
    pub(crate) const ALL: usize = 17;
}

/// Words of an open entry: `[record, place, bound]` (resident.wgsl's stack).
pub const ENTRY_WORDS: usize = 3;
/// An entry's place: the job at this place of its record's permutation goes to the back.
pub const PLACE_BACKWARD: u32 = 0x8000_0000;
/// An entry's place: the entry is its record itself.
pub const PLACE_NONE: u32 = u32::MAX;

/// How long one submission of rounds lasts on a device searching alone: short enough for
/// limits and progress, long enough that the host's share between submissions is small.
#[cfg(not(target_arch = "wasm32"))]
const BATCH_ALONE: Duration = Duration::from_millis(200);

/// How long one submission lasts on a device that shares the search: a device runs dry
/// within a submission and waits for another's to end before it is given open nodes, so
/// these are forty times shorter (on two H200s, a device waited a quarter of a 20x20 search
/// with the submissions of one searching alone). The next submission is queued before a
/// status is read, so short ones cost no idle device: 5 ms came out ahead of 10 ms,
/// `benches/results/multi-gpu-h200-x2.md`.
#[cfg(not(target_arch = "wasm32"))]
const BATCH_SHARED: Duration = Duration::from_millis(5);

/// How long one submission lasts on a device that shares the search while every device holds
/// [`CALM_POOLS`] pools of open nodes: none will need any soon, and a round of a large
/// instance costs more than a 5 ms submission holds well (a 50x20 search on two H200s ran 6 %
/// faster with 50 ms than with 5 ms submissions, `benches/results/multi-gpu-h200-x2.md`).
#[cfg(not(target_arch = "wasm32"))]
const BATCH_CALM: Duration = Duration::from_millis(50);

/// Open nodes, in pools, above which a device sharing the search is calm (see [`BATCH_CALM`]).
#[cfg(not(target_arch = "wasm32"))]
const CALM_POOLS: u64 = 16;

/// A device with fewer open nodes than this many pools is given more before it runs dry: the
/// nodes wait on the host until it does, so it need not wait for another device's submission.
/// Each move idles both devices for 1–2 ms: 2 pools made half as many moves as 4 and ran as
/// fast or faster (`benches/results/multi-gpu-h200-x2.md`).
#[cfg(not(target_arch = "wasm32"))]
const HUNGRY_POOLS: u64 = 2;

/// How long the submissions of the devices of one process that share a search last, by the
/// fewest open nodes (and nodes given, not loaded yet) any of them holds: [`BATCH_CALM`] from
/// [`CALM_POOLS`] pools on, else [`BATCH_SHARED`]. MPI ranks keep [`BATCH_SHARED`]: with this
/// rule, 2 ranks on two H200 searched ta056 (50x20) at 32.3–34.5 M nodes/s in three runs,
/// without it at 34.8–35.3 M/s in two (`benches/results/multi-gpu-h200-x2.md`).
#[cfg(not(target_arch = "wasm32"))]
fn tempo(fewest: u64, pool: u64) -> Duration {
    if fewest >= CALM_POOLS * pool {
        BATCH_CALM
    } else {
        BATCH_SHARED
    }
}

/// The most open nodes a gift moves, in pools: the bottom of the giver's stack, its shallowest
/// nodes and so its largest subtrees. A pool of them keeps the taker busy for long, and a small
/// gift is read, sent and loaded quickly: on two H200, with gifts of half the giver's open
/// nodes a device loaded 49–56 and 2 MPI ranks took 12.06–12.10 s, with gifts of one pool 5–13
/// and 11.34–11.35 s (2 GPUs of one process 11.67–11.73 s against 11.31–11.33 s; two pools
/// and four fell in between; `benches/results/multi-gpu-h200-x2.md`).
#[cfg(not(target_arch = "wasm32"))]
const GIFT_POOLS: u64 = 1;

/// The open nodes a gift from a device with `open` of them moves (before the taker's room):
/// half, at most [`GIFT_POOLS`] pools.
#[cfg(not(target_arch = "wasm32"))]
fn gift_size(open: u64, pool: u64) -> u64 {
    (open / 2).min(GIFT_POOLS * pool)
}

/// Whether a device (or rank) with `open` open nodes gives some to one with `theirs`
/// (fewer than [`HUNGRY_POOLS`] pools, or none): when it has at least twice theirs and two
/// pools. Two pools for a dry one too: a move takes 15–25 ms, while a giver with fewer ends
/// them within a few rounds. Given any two nodes, a dry device kept a search's end a
/// ping-pong of small gifts: on two H200, 2 MPI ranks took 12.05 s with the two pools against
/// 12.21 s (`benches/results/multi-gpu-h200-x2.md`).
#[cfg(not(target_arch = "wasm32"))]
fn gives(open: u64, theirs: u64, pool: u64) -> bool {
    theirs < HUNGRY_POOLS * pool && open >= 2 * theirs.max(pool)
}

/// The memory the stack and the record store take by default: 2 GiB, or less where the
/// adapter's buffers are smaller.
pub const DEFAULT_MEMORY_BUDGET: u64 = 2 << 30;

/// Frames the frame stack holds beyond one per job (a loaded frontier's and spares).
#[cfg(not(target_arch = "wasm32"))]
const SPARE_FRAMES: usize = 4;

/// Open nodes in compact form: node records and the entries that refer to them (entry `i` is
/// `entries[3i..3i + 3]`, its record `records[stride * entries[3i]..]`), bottom of the stack first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frontier {
    /// Node records, [`node_stride`] words each.
    pub records: Vec<u32>,
    /// Entries `[record, place, bound]`.
    pub entries: Vec<u32>,
}

impl Frontier {
    /// Every record an open node of its own (a checkpoint written before entries existed).
    pub fn of_nodes(records: Vec<u32>, stride: usize) -> Self {
        let entries = records.chunks_exact(stride).enumerate().flat_map(|(i, node)| [i as u32, PLACE_NONE, node[2]]).collect();
        Frontier { records, entries }
    }

    /// Open nodes.
    pub fn len(&self) -> usize {
        self.entries.len() / ENTRY_WORDS
    }

    /// No open node.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The open nodes dealt out into `parts` frontiers in turn (each a mix of the bottom's
    /// large subtrees and the top's small ones), each with the records it refers to.
    pub fn split(&self, parts: usize, stride: usize) -> Vec<Frontier> {
        let parts = parts.max(1);
        (0..parts).map(|part| compact(&self.records, 0, self.entries.chunks_exact(ENTRY_WORDS).skip(part).step_by(parts), stride)).collect()
    }

    /// Appends `other`, its record indices moved past this one's records.
    pub(super) fn append(&mut self, other: Frontier, stride: usize) {
        let offset = (self.records.len() / stride) as u32;
        self.entries.extend(other.entries.chunks_exact(ENTRY_WORDS).flat_map(|e| [e[0] + offset, e[1], e[2]]));
        self.records.extend(other.records);
    }
}

/// `entries` with the records they refer to and no others, renumbered in order; `records`
/// holds the records from number `first` on.
fn compact<'e>(records: &[u32], first: u32, entries: impl IntoIterator<Item = &'e [u32]>, stride: usize) -> Frontier {
    let mut renumbered = vec![u32::MAX; records.len() / stride];
    // reserved whole: growing by doubling copied tens of megabytes per move; the records with
    // room for the entries and a word behind them, which is how a gift crosses MPI
    let entries = entries.into_iter();
    let count = ENTRY_WORDS * entries.size_hint().0;
    let mut open = Frontier { records: Vec::with_capacity(records.len() + count + 1), entries: Vec::with_capacity(count) };
    for entry in entries {
        let at = (entry[0] - first) as usize;
        if renumbered[at] == u32::MAX {
            renumbered[at] = (open.records.len() / stride) as u32;
            open.records.extend_from_slice(&records[at * stride..(at + 1) * stride]);
        }
        open.entries.extend_from_slice(&[renumbered[at], entry[1], entry[2]]);
    }
    open
}

/// The node of `entry` over `records` in full, as `resident_select` makes it, or why it is not one.
pub(super) fn entry_node(data: &BoundData, records: &[u32], entry: &[u32]) -> std::result::Result<Vec<u32>, String> {
    let (n, m) = (data.jobs, data.machines);
    let stride = node_stride(n, m);
    let record = records
        .get(stride * entry[0] as usize..stride * (entry[0] as usize + 1))
        .ok_or_else(|| format!("its record {} is not in the file", entry[0]))?;
    let mut node = record.to_vec();
    let (front, back) = (node[0] as usize, node[1] as usize);
    if entry[1] != PLACE_NONE {
        let place = (entry[1] & !PLACE_BACKWARD) as usize;
        if !(front..back).contains(&place) || front + 1 >= back || back > n {
            return Err("it places a job its record has scheduled".into());
        }
        let job = node[3 + place] as usize;
        if job >= n {
            return Err("its record is not a permutation".into());
        }
        if entry[1] & PLACE_BACKWARD != 0 {
            super::cpu::extend_tails(data, &mut node[3 + n + m..3 + n + 2 * m], job);
            node.swap(3 + place, 3 + back - 1);
            node[1] -= 1;
        } else {
            super::cpu::extend_heads(data, &mut node[3 + n..3 + n + m], job);
            node.swap(3 + place, 3 + front);
            node[0] += 1;
        }
    }
    node[2] = entry[2];
    Ok(node)
}

/// Words of an open node: `[front, back, bound, perm (n), heads (m), tails (m)]`.
pub fn node_stride(jobs: usize, machines: usize) -> usize {
    3 + jobs + 2 * machines
}

/// What the resident search does besides [`SearchOptions`].
#[derive(Clone, Debug, Default)]
pub struct ResidentOptions {
    /// Write the open nodes and the incumbent here every `checkpoint_every` and when the
    /// search ends (limits, interrupt: the frontier left; finished: none left).
    pub checkpoint: Option<std::path::PathBuf>,
    /// Time between two checkpoints (None: only when the search stops early).
    pub checkpoint_every: Option<Duration>,
    /// Continue the search of this checkpoint instead of starting at the root.
    pub resume: Option<Checkpoint>,
    /// Bytes the open nodes may take on each device (the stack of entries and the store of node
    /// records; None: [`DEFAULT_MEMORY_BUDGET`] within the adapter's buffer limits). A smaller
    /// budget takes fewer nodes a round once it is full; it never ends the search, down to a
    /// floor of one depth-first dive (about n²/2 entries and n records), which it is raised to.
    pub memory_budget: Option<u64>,
    /// Over MPI ranks: a rank silent this long has died or hangs, and the run ends with an
    /// error naming it (None: [`SILENCE`], 60 s).
    pub silence: Option<Duration>,
}

/// Status of one device after a submission.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Clone, Copy, Debug, Default)]
struct Status {
    /// Open entries of this device (above the floor).
    open: u32,
    /// Entries below it were moved to another device.
    floor: u32,
    best: u32,
    full: bool,
    frames: u32,
    nodes: u64,
    leaves: u64,
}

#[cfg(not(target_arch = "wasm32"))]
impl Status {
    fn from_words(w: &[u32]) -> Self {
        let wide = |at: usize| u64::from(w[at]) | (u64::from(w[at + 1]) << 32);
        Status {
            open: w[word::COUNT] - w[word::FLOOR].min(w[word::COUNT]),
            floor: w[word::FLOOR],
            best: w[word::BEST],
            full: w[word::FULL] != 0,
            frames: w[word::FRAMES],
            nodes: wide(word::NODES),
            leaves: wide(word::LEAVES),
        }
    }
}

/// The entry and record capacities of a memory budget: a third of it for entries, the rest
/// for records (the records of the frames a deep search holds outweigh its entries), each
/// within one buffer and no less than one depth-first dive needs.
#[cfg(not(target_arch = "wasm32"))]
fn capacities(budget: u64, words_limit: usize, jobs: usize, stride: usize) -> (usize, usize) {
    let words = (budget / 4) as usize;
    // a depth-first dive (resident_plan's reserve) above the root
    let dive_entries = jobs * jobs / 2 + 2 * jobs + 1;
    let dive_records = 2 * (jobs + SPARE_FRAMES);
    let entries = (words / 3 / ENTRY_WORDS).min(words_limit / ENTRY_WORDS).max(dive_entries);
    let records = (words * 2 / 3 / stride).min(words_limit / stride).max(dive_records);
    (entries, records)
}

/// The search state and kernels on one GPU.
#[cfg(not(target_arch = "wasm32"))]
struct ResidentDevice<'g> {
    gpu: &'g Gpu,
    node_stride: usize,
    /// Entries the stack holds.
    capacity: usize,
    /// Node records the store holds.
    store_capacity: usize,
    /// Frames the frame stack holds.
    frame_capacity: usize,
    jobs: usize,
    pool: usize,
    result_stride: usize,
    kernels: [Arc<Kernel>; 4],
    /// LB2: where each node's unscheduled jobs stand in the Johnson orders, so its children
    /// walk only those (`resident_masks`, lb2's `POSITION_MASKS`).
    masks: Option<(Arc<Kernel>, wgpu::BindGroup)>,
    bound_kernel: Arc<Kernel>,
    /// LB2 in passes: `lb2_screen` settles what LB1 can, `lb2_listed` what the first pairs can,
    /// `lb2_rest` the rest.
    screen: Option<Screen>,
    state: GpuBuffer<u32>,
    stack: GpuBuffer<u32>,
    store: GpuBuffer<u32>,
    frames: GpuBuffer<u32>,
    launch: GpuBuffer<u32>,
    /// lb2's pairs with the learned order after them, and its `Listed` (prune counts).
    #[cfg(test)]
    pairs: GpuBuffer<u32>,
    #[cfg(test)]
    listed: GpuBuffer<u32>,
    params: GpuBuffer<u32>,
    results: GpuBuffer<u32>,
    binds: [wgpu::BindGroup; 4],
    bound_bind: wgpu::BindGroup,
    /// Two readbacks of the status, used in turn: a submission may be queued behind another.
    staging: [wgpu::Buffer; 2],
    /// The readback the next submission uses.
    turn: usize,
    /// A batch queued behind the one waited for, so that the device does not idle while the
    /// host reads a status and decides ([`ResidentDevice::submit_queued`]).
    ahead: Option<PendingRead>,
    /// When the last status was read: a batch queued behind it started then.
    last_end: Instant,
    /// Rounds per submission, adapted to `target`.
    rounds: usize,
    /// How long a submission should last.
    target: Duration,
    last: Status,
}

/// LB2's passes in the resident search: `lb2_screen`, then `lb2_listed` and `lb2_rest`, each
/// sized by the one-thread kernel before it; `order`, once per submission, sorts the pairs
/// by how often each pruned (absent: the host's order throughout).
#[cfg(not(target_arch = "wasm32"))]
struct Screen {
    passes: [(Arc<Kernel>, wgpu::BindGroup); 5],
    order: Option<(Arc<Kernel>, wgpu::BindGroup)>,
}

#[cfg(not(target_arch = "wasm32"))]
impl<'g> ResidentDevice<'g> {
    /// Buffers and kernels for `data`; [`check_resident_size`] has accepted the size.
    fn new(gpu: &'g Gpu, data: &BoundData, bound: LowerBound, branching: Branching, pool: usize, budget: Option<u64>) -> Result<Self> {
        let (n, m) = (data.jobs, data.machines);
        let stride = node_stride(n, m);
        let directions = if branching == Branching::Bidirectional { 2 } else { 1 };
        let words_limit = (gpu.caps().max_storage_buffer_binding_size.min(gpu.caps().max_buffer_size) / 4) as usize;
        // pool dives of n levels of at most n entries, and n frames of pool records, at most
        let (entries, records) = capacities(budget.unwrap_or(DEFAULT_MEMORY_BUDGET), words_limit, n, stride);
        let capacity = entries.min(pool * n * n + 1);
        let store_capacity = records.min(pool * (n + SPARE_FRAMES) + 1);
        let frame_capacity = n + SPARE_FRAMES;
        let mask_words = n.div_ceil(32);
        let pool_stride = 3 * m + mask_words;
        let result_stride = 1 + n;
        let config = [
            n as u32,
            m as u32,
            data.pair_count() as u32,
            pool as u32,
            stride as u32,
            pool_stride as u32,
            mask_words as u32,
            directions as u32,
            capacity as u32,
            result_stride as u32,
            store_capacity as u32,
            frame_capacity as u32,
        ];
        let storage = |label: &str, words: usize| gpu.buffer_zeroed::<u32>(label, words.max(1), BufferKind::Storage);
        let upload =
            |label: &str, words: &[u32]| gpu.buffer(label, if words.is_empty() { &[0u32][..] } else { words }, BufferKind::Storage);
        let config = gpu.buffer("resident config", &config, BufferKind::Uniform)?;
        let ptimes = upload("resident ptimes", &data.ptimes)?;
        let state = storage("resident state", word::ALL)?;
        let stack = storage("resident stack", capacity * ENTRY_WORDS)?;
        let store = storage("resident node records", store_capacity * stride)?;
        let frames = storage("resident frames", frame_capacity * 3)?;
        let selected = storage("resident selected", pool * (stride + 2))?;
        let parents = storage("resident parents", pool * pool_stride)?;
        let children = storage("resident children", 2 * pool * directions * n)?;
        let bounds = storage("resident bounds", pool * directions * n)?;
        let launch = gpu.buffer_zeroed::<u32>("resident launch", 17, BufferKind::Indirect)?;
        let params = gpu.buffer_zeroed::<u32>("resident bound params", 8, BufferKind::Uniform)?;
        let results = gpu.buffer("resident results", &vec![u32::MAX; pool * result_stride], BufferKind::Storage)?;
        // [(u, v) per pair | the pair loop's order, the host's (strongest at the root first)
        // until resident_order sorts it]
        let pairs: Vec<u32> = data.pairs.iter().copied().chain(0..data.pair_count() as u32).collect();
        let pairs = upload("resident pairs", &pairs)?;
        let sequences = upload("resident sequences", &data.sequences)?;
        // LB2's children walk only their unscheduled jobs (one mask word per 32 jobs)
        let pairs_count = data.pair_count();
        let walk_unscheduled = bound == LowerBound::Lb2
            && pairs_count > 0
            && pairs_count * (n + pool * mask_words) <= words_limit
            // the full walk, for comparisons (benches/gpu_flowshop_walk.sh)
            && std::env::var_os("SIMTLAB_RESIDENT_FULL_WALK").is_none();
        // [each job's place in each pair's Johnson order | per node and pair, resident_masks' bits]
        let mut places = vec![0u32; if walk_unscheduled { pairs_count * (n + pool * mask_words) } else { 1 }];
        if walk_unscheduled {
            for (q, order) in data.johnson.chunks(n).enumerate().take(pairs_count) {
                for (place, &job) in order.iter().enumerate() {
                    places[q * n + job as usize] = place as u32;
                }
            }
        }
        let places = upload("resident johnson places", &places)?;
        // LB2 in passes (SIMTLAB_RESIDENT_NO_SCREEN: in one, for comparisons)
        let screened = bound == LowerBound::Lb2 && std::env::var_os("SIMTLAB_RESIDENT_NO_SCREEN").is_none();
        // lb2.wgsl's Listed: [count | rest | hits | children | the children still open]
        let listed = storage("resident listed children", 2 + MAX_PAIRS + if screened { 2 * pool * directions * n } else { 0 })?;
        // for comparisons: SIMTLAB_RESIDENT_FIRST_PAIRS (lb2_listed's pairs; all: one pass),
        // SIMTLAB_RESIDENT_HOST_PAIR_ORDER (the host's order throughout)
        let first_pairs: u32 = std::env::var("SIMTLAB_RESIDENT_FIRST_PAIRS").ok().and_then(|v| v.parse().ok()).unwrap_or(8);
        let learn_order = std::env::var_os("SIMTLAB_RESIDENT_HOST_PAIR_ORDER").is_none();

        use registry::flowshop::resident::{RESIDENT_BRANCH, RESIDENT_FINISH, RESIDENT_PLAN, RESIDENT_SELECT};
        let kernels = [
            gpu.kernel(RESIDENT_PLAN, &[])?,
            gpu.kernel(RESIDENT_SELECT, &[])?,
            gpu.kernel(RESIDENT_FINISH, &[])?,
            gpu.kernel(RESIDENT_BRANCH, &[])?,
        ];
        let defines: &[&str] = if walk_unscheduled { &["BRANCHLESS", "POSITION_MASKS"] } else { &["BRANCHLESS"] };
        let bound_kernel = gpu.kernel(ThreadMapping::PerChild.entry_point(bound), defines)?;
        use registry::flowshop::resident::binding as slot;
        let slots: [(u32, &dyn Bind); 15] = [
            (slot::CONFIG, &config),
            (slot::PTIMES, &ptimes),
            (slot::STATE, &state),
            (slot::STACK, &stack),
            (slot::SELECTED, &selected),
            (slot::POOL_PARENTS, &parents),
            (slot::POOL_CHILDREN, &children),
            (slot::BOUNDS, &bounds),
            (slot::LAUNCH, &launch),
            (slot::RESULTS, &results),
            (slot::STORE, &store),
            (slot::PLACES, &places),
            (slot::PAIRS, &pairs),
            (slot::FRAMES, &frames),
            (slot::LISTED, &listed),
        ];
        // every resident entry point binds a subset of the same slots (auto layouts: one group each)
        let search_binds = [
            kernels[0].bind_at(gpu, &slots)?,
            kernels[1].bind_at(gpu, &slots)?,
            kernels[2].bind_at(gpu, &slots)?,
            kernels[3].bind_at(gpu, &slots)?,
        ];
        let masks = if walk_unscheduled {
            let kernel = gpu.kernel(registry::flowshop::resident::RESIDENT_MASKS, &[])?;
            let bind = kernel.bind_at(gpu, &slots)?;
            Some((kernel, bind))
        } else {
            None
        };
        use registry::flowshop::lb2::binding as lb2;
        let bound_slots: [(u32, &dyn Bind); 9] = [
            (lb2::PARAMS, &params),
            (lb2::PTIMES, &ptimes),
            (lb2::PARENTS, &parents),
            (lb2::CHILDREN, &children),
            (lb2::BOUNDS, &bounds),
            (lb2::PAIRS, &pairs),
            (lb2::SEQUENCES, &sequences),
            (lb2::PLACES, &places),
            (lb2::LISTED, &listed),
        ];
        let bound_bind = bound_kernel.bind_at(gpu, &bound_slots)?;
        let screen = if screened {
            use registry::flowshop::lb2::{LB2_LISTED, LB2_REST, LB2_SCREEN};
            use registry::flowshop::resident::{RESIDENT_LISTED, RESIDENT_ORDER, RESIDENT_REST};
            let ordered: Vec<&str> = defines.iter().copied().chain(learn_order.then_some("PAIR_ORDER")).collect();
            let first = [("FIRST_PAIRS", first_pairs as f64)];
            let kernels = [
                gpu.kernel(LB2_SCREEN, defines)?,
                gpu.kernel(RESIDENT_LISTED, &[])?,
                gpu.kernel_with_constants(LB2_LISTED, &ordered, &first)?,
                gpu.kernel(RESIDENT_REST, &[])?,
                gpu.kernel_with_constants(LB2_REST, &ordered, &first)?,
            ];
            let [a, b, c, d, e] = kernels;
            let pass = |kernel: Arc<Kernel>, slots: &[(u32, &dyn Bind)]| -> Result<(Arc<Kernel>, wgpu::BindGroup)> {
                let bind = kernel.bind_at(gpu, slots)?;
                Ok((kernel, bind))
            };
            Some(Screen {
                passes: [pass(a, &bound_slots)?, pass(b, &slots)?, pass(c, &bound_slots)?, pass(d, &slots)?, pass(e, &bound_slots)?],
                order: if learn_order { Some(pass(gpu.kernel(RESIDENT_ORDER, &[])?, &slots)?) } else { None },
            })
        } else {
            None
        };
        Ok(Self {
            gpu,
            node_stride: stride,
            capacity,
            store_capacity,
            frame_capacity,
            jobs: n,
            pool,
            result_stride,
            kernels,
            masks,
            bound_kernel,
            screen,
            state,
            stack,
            store,
            frames,
            launch,
            #[cfg(test)]
            pairs,
            #[cfg(test)]
            listed,
            params,
            results,
            binds: search_binds,
            bound_bind,
            staging: [0, 1].map(|_| gpu.readback_buffer("resident status", 4 * word::ALL as u64)),
            turn: 0,
            ahead: None,
            last_end: Instant::now(),
            rounds: 1,
            target: BATCH_ALONE,
            last: Status::default(),
        })
    }

    /// Replaces the open nodes, the incumbent and the counters: `open`'s records form the
    /// bottom frame, its entries the stack.
    fn load(&mut self, open: &Frontier, best: u32, counted: (u64, u64)) -> Result<()> {
        let (count, records) = (open.len(), open.records.len() / self.node_stride);
        let over = |what: &str, requested: usize, limit: usize| Error::Limit {
            what: format!("{what} of the resident search on one device"),
            requested: requested as u64,
            limit: limit as u64,
            hint: "resume with a larger memory_budget, on a device with larger buffers, or on more devices".into(),
        };
        // room above them for a depth-first dive (resident_plan's reserve)
        let (entries, records_room) = self.room();
        if count > entries {
            return Err(over("open nodes", count, entries));
        }
        if records > records_room {
            return Err(over("node records", records, records_room));
        }
        self.gpu.queue().write_buffer(&self.stack.buffer, 0, bytemuck::cast_slice(&open.entries));
        self.gpu.queue().write_buffer(&self.store.buffer, 0, bytemuck::cast_slice(&open.records));
        // one frame that no round pops before it has taken every loaded entry
        self.gpu.write(&self.frames, &[0, 0, records as u32])?;
        let mut state = [0u32; word::ALL];
        state[word::COUNT] = count as u32;
        (state[word::BEST], state[word::OFFER]) = (best, best);
        state[word::FRAMES] = 1;
        (state[word::NODES], state[word::NODES + 1]) = (counted.0 as u32, (counted.0 >> 32) as u32);
        (state[word::LEAVES], state[word::LEAVES + 1]) = (counted.1 as u32, (counted.1 >> 32) as u32);
        self.gpu.write(&self.state, &state)?;
        self.last = Status { open: count as u32, best, frames: 1, nodes: counted.0, leaves: counted.1, ..Status::default() };
        Ok(())
    }

    /// The open nodes and node records a load may bring: what leaves resident_plan room for
    /// a depth-first dive (n (n - 1) / 2 entries, a record for every other frame).
    fn room(&self) -> (usize, usize) {
        let n = self.jobs.max(2);
        let dive = n * (n - 1) / 2 + n;
        (self.capacity.saturating_sub(dive), self.store_capacity.saturating_sub(self.frame_capacity - 1))
    }

    /// Writes one status word; the write lands after the submissions made before it.
    fn set_word(&self, index: usize, value: u32) {
        self.gpu.queue().write_buffer(&self.state.buffer, 4 * index as u64, bytemuck::bytes_of(&value));
    }

    /// Submits `rounds` rounds in one submission, with the copy of the status that
    /// [`ResidentDevice::took`] reads; nothing waits, so every device works at once.
    fn submit(&mut self, rounds: usize) -> Result<PendingRead> {
        let round = self.round_steps();
        let mut steps: Vec<Step> = self.order_step().into_iter().collect();
        for _ in 0..rounds {
            steps.extend(round.iter().map(|(_, step)| *step));
        }
        let encoder = self.gpu.encode(&steps);
        self.turn = 1 - self.turn;
        self.gpu.submit_read(encoder, &self.state.buffer, &self.staging[self.turn], 4 * word::ALL as u64)
    }

    /// Sets how long a submission should last, scaling the rounds at once (adapting by
    /// halves would leave several submissions of the old length).
    fn set_target(&mut self, target: Duration) {
        if target != self.target {
            self.rounds = (self.rounds as u128 * target.as_micros() / self.target.as_micros().max(1)).max(1) as usize;
            self.target = target;
        }
    }

    /// The next batch (queued already, or submitted now) and, with `queue`, one more submitted
    /// behind it: (the batch's status read, when it started). Not queued under a node limit,
    /// where the search stops within a batch of it.
    fn submit_queued(&mut self, queue: bool) -> Result<(PendingRead, Instant)> {
        let current = match self.ahead.take() {
            Some(queued) => (queued, self.last_end),
            None => (self.submit(self.rounds)?, Instant::now()),
        };
        if queue {
            self.ahead = Some(self.submit(self.rounds)?);
        }
        Ok(current)
    }

    /// The batch queued ahead, if there is one: (its status read, when it started). Taken
    /// before anything that needs the device still.
    fn queued(&mut self) -> Option<(PendingRead, Instant)> {
        self.ahead.take().map(|queued| (queued, self.last_end))
    }

    /// The status of a batch that started at `started`, read back as `bytes`: how long it
    /// took (the rounds adapt to it).
    fn took(&mut self, bytes: &[u8], started: Instant) -> Result<Duration> {
        self.take_bytes(bytes)?;
        self.last_end = Instant::now();
        let took = self.last_end - started;
        // a device searching alone is never given nodes: its rounds may grow on any quick one
        let grow = self.last.open as usize >= self.pool || self.target == BATCH_ALONE;
        adapt(&mut self.rounds, took, self.target, grow);
        Ok(took)
    }

    /// `resident_order`, run once per submission where the pair order is learned.
    fn order_step(&self) -> Option<Step<'_>> {
        let (order, order_bind) = self.screen.as_ref()?.order.as_ref()?;
        Some(Step::dispatch(order, order_bind, [1, 1, 1]))
    }

    /// One round of the search: its steps, each named by its kernel.
    fn round_steps<'s>(&'s self) -> Vec<(&'static str, Step<'s>)> {
        let groups = (self.pool as u32).div_ceil(WORKGROUP_SIZE);
        let [plan, select, finish, branch] = &self.kernels;
        let [plan_bind, select_bind, finish_bind, branch_bind] = &self.binds;
        let launch = &self.launch.buffer;
        let indirect =
            |(kernel, bind): &'s (Arc<Kernel>, wgpu::BindGroup), offset| Step::DispatchIndirect { kernel, bind, args: launch, offset };
        let mut steps = vec![
            ("resident_plan", Step::dispatch(plan, plan_bind, [1, 1, 1])),
            ("resident_select", Step::dispatch(select, select_bind, [groups, 1, 1])),
        ];
        if let Some((masks, masks_bind)) = &self.masks {
            let rows = (self.pool as u32).div_ceil(MASK_ROW);
            steps.push(("resident_masks", Step::dispatch(masks, masks_bind, [(self.pool as u32).min(MASK_ROW), rows, 1])));
        }
        steps.extend([
            ("resident_finish", Step::dispatch(finish, finish_bind, [1, 1, 1])),
            ("copy", Step::copy(&self.launch, &self.params, 32)),
        ]);
        match &self.screen {
            Some(Screen { passes: [screen, size, listed, size_rest, rest], .. }) => steps.extend([
                ("lb2_screen", indirect(screen, 32)),
                ("resident_listed", Step::dispatch(&size.0, &size.1, [1, 1, 1])),
                ("lb2_listed", indirect(listed, 44)),
                ("resident_rest", Step::dispatch(&size_rest.0, &size_rest.1, [1, 1, 1])),
                ("lb2_rest", indirect(rest, 56)),
            ]),
            None => steps.push((
                "bound",
                Step::DispatchIndirect { kernel: &self.bound_kernel, bind: &self.bound_bind, args: &self.launch.buffer, offset: 32 },
            )),
        }
        steps.push(("resident_branch", Step::dispatch(branch, branch_bind, [groups, 1, 1])));
        steps
    }

    /// Runs one round a step per submission, each timed, and adds each kernel's device time
    /// to `seconds` (for SIMTLAB_RESIDENT_PROFILE; it waits after every step).
    fn profile_round(&self, seconds: &mut std::collections::BTreeMap<String, f64>) -> Result<()> {
        let order = self.order_step().map(|step| ("resident_order", step));
        for (name, step) in order.into_iter().chain(self.round_steps()) {
            let timing = self.gpu.run_once(&[step], true)?;
            if !matches!(step, Step::Copy { .. }) {
                *seconds.entry(name.to_string()).or_default() += timing.seconds;
            }
        }
        Ok(())
    }

    /// The status of a [`ResidentDevice::submit`], once its rounds are done.
    #[cfg(test)]
    fn take(&mut self, read: PendingRead) -> Result<Status> {
        let bytes = read.finish(self.gpu)?;
        self.take_bytes(&bytes)
    }

    /// The status read back as `bytes`, checked and kept as the last.
    fn take_bytes(&mut self, bytes: &[u8]) -> Result<Status> {
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(bytes);
        let status = Status::from_words(&words);
        if status.full {
            return Err(Error::Limit {
                what: "open nodes of the resident search on one device".into(),
                requested: status.open as u64 + 1,
                limit: self.capacity as u64,
                hint: format!(
                    "the stack ({} entries), the record store ({} records) or the frames ({} in use) had no room for one more \
                     node; raise memory_budget",
                    self.capacity, self.store_capacity, status.frames
                ),
            });
        }
        self.last = status;
        Ok(status)
    }

    /// Submits a copy of `words` words of `buffer` from word `first` into a new readback
    /// (none when `words` is 0); [`finish_read`] reads it.
    fn start_read(&self, buffer: &GpuBuffer<u32>, first: usize, words: usize) -> Result<Option<PendingRead>> {
        if words == 0 {
            return Ok(None);
        }
        let (offset, bytes) = (4 * first as u64, 4 * words as u64);
        let encoder = self.gpu.device().create_command_encoder(&Default::default());
        let staging = self.gpu.readback_buffer("resident open nodes readback", bytes);
        self.gpu.submit_read_at(encoder, &buffer.buffer, offset, &staging, bytes).map(Some)
    }

    /// The open nodes `from..to` above the floor (stack order, bottom first) on their way out:
    /// their entries read, the copy of the records they refer to submitted.
    fn start_open(&self, from: usize, to: usize) -> Result<Gift> {
        let stride = self.node_stride;
        if from >= to {
            return Ok(Gift { entries: Vec::new(), low: 0, records: None, stride });
        }
        let base = self.last.floor as usize;
        let read = self.start_read(&self.stack, ENTRY_WORDS * (base + from), ENTRY_WORDS * (to - from))?;
        let entries = finish_read(self.gpu, read, <[u32]>::to_vec)?;
        let (low, high) = entries.chunks_exact(ENTRY_WORDS).fold((u32::MAX, 0), |(l, h), e| (l.min(e[0]), h.max(e[0])));
        let records = self.start_read(&self.store, low as usize * stride, (high - low + 1) as usize * stride)?;
        Ok(Gift { entries, low, records, stride })
    }

    /// The open nodes `from..to` above the floor, with the records they refer to and no others.
    fn read_open(&self, from: usize, to: usize) -> Result<Frontier> {
        self.start_open(from, to)?.finish(self.gpu)
    }

    /// Moves open nodes out from the bottom of the stack (the largest subtrees): a
    /// [`gift_size`], at most `most`; this device keeps the rest above a raised floor. The
    /// records' copy runs ahead of the next submission: the host reads them ([`Gift::finish`])
    /// while it runs.
    fn give_bottom(&mut self, most: usize) -> Result<Gift> {
        let moved = (gift_size(u64::from(self.last.open), self.pool as u64) as usize).min(most);
        let gift = self.start_open(0, moved)?;
        self.last.floor += moved as u32;
        self.set_word(word::FLOOR, self.last.floor);
        self.last.open -= moved as u32;
        Ok(gift)
    }

    /// Lowers the incumbent to `best` where that is lower (between submissions): offered, the
    /// next round takes the lower of it and the device's own, which a batch queued ahead may
    /// have lowered meanwhile (a plain write landing after that batch raised it back).
    fn lower_best(&mut self, best: u32) {
        if best < self.last.best {
            self.set_word(word::OFFER, best);
            self.last.best = best;
        }
    }

    /// This device's share of the search (between submissions).
    fn part(&self) -> Result<Part> {
        let last = self.last;
        Ok(Part {
            open: self.read_open(0, last.open as usize)?,
            counted: (last.nodes, last.leaves),
            best: last.best,
            leaf: self.best_leaf()?,
        })
    }

    /// The best leaf any select thread met: `(makespan, permutation)`.
    fn best_leaf(&self) -> Result<Option<(u32, Vec<usize>)>> {
        let words: Vec<u32> = self.gpu.read(&self.results)?;
        Ok(words
            .chunks_exact(self.result_stride)
            .filter(|slot| slot[0] != u32::MAX)
            .min_by_key(|slot| slot[0])
            .map(|slot| (slot[0], slot[1..].iter().map(|&j| j as usize).collect())))
    }
}

/// Open nodes leaving a device ([`ResidentDevice::give_bottom`]): their entries, and the copy
/// of the records they refer to, from record `low` on.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug)]
struct Gift {
    entries: Vec<u32>,
    low: u32,
    records: Option<PendingRead>,
    stride: usize,
}

#[cfg(not(target_arch = "wasm32"))]
impl Gift {
    /// The open nodes, with the records they refer to and no others, once the copy is done.
    fn finish(self, gpu: &Gpu) -> Result<Frontier> {
        let Gift { entries, low, records, stride } = self;
        finish_read(gpu, records, |span| compact(span, low, entries.chunks_exact(ENTRY_WORDS), stride))
    }
}

/// `read` of the words a [`ResidentDevice::start_read`] copied, where the readback lies.
#[cfg(not(target_arch = "wasm32"))]
fn finish_read<T>(gpu: &Gpu, pending: Option<PendingRead>, read: impl FnOnce(&[u32]) -> T) -> Result<T> {
    match pending {
        None => Ok(read(&[])),
        Some(pending) => pending.finish_with(gpu, |bytes| match bytemuck::try_cast_slice(bytes) {
            Ok(words) => read(words),
            Err(_) => read(&bytemuck::pod_collect_to_vec(bytes)),
        }),
    }
}

/// Scales `rounds` by how far a submission of them that `took` so long missed `target`: by at
/// most half or twice at once, and not while within a quarter of it (rounds are whole, and a
/// submission's length varies with the nodes its rounds meet). Doubling or halving only beyond
/// twice or half of the target left submissions of a shared search at 8 ms on a 5 ms target:
/// a device asked for nodes waits out the one queued. Scaled rounds halved the waiting of two
/// devices in one process and cut that of two MPI ranks by a third (on two H200,
/// `benches/results/multi-gpu-h200-x2.md`). Grows only when it may `grow`:
/// a device that shares the search grows only after a submission that ended with a full pool
/// of open nodes: one that ran short was quick for want of work, not because rounds are cheap,
/// and rounds grown over a device's dry statuses made its next submissions, once it was given
/// nodes, six times too long, while every other device waited on them for its own gifts.
#[cfg(not(target_arch = "wasm32"))]
fn adapt(rounds: &mut usize, took: Duration, target: Duration, grow: bool) {
    let scale = (target.as_secs_f64() / took.as_secs_f64().max(1e-6)).clamp(0.5, 2.0);
    if (0.8..=1.25).contains(&scale) || (scale > 1.0 && !grow) {
        return;
    }
    *rounds = ((*rounds as f64 * scale).round() as usize).clamp(1, 1 << 12);
}

/// Refuses sizes the resident kernels cannot run: more than [`RESIDENT_MAX_JOBS`] jobs, pools
/// beyond the dispatch limits, and loops llvmpipe would cut short.
#[cfg(not(target_arch = "wasm32"))]
fn check_resident_size(gpu: &Gpu, data: &BoundData, bound: LowerBound, pool: usize) -> Result<()> {
    let (n, m) = (data.jobs, data.machines);
    if n > RESIDENT_MAX_JOBS {
        return Err(Error::Limit {
            what: "jobs for the resident search".into(),
            requested: n as u64,
            limit: RESIDENT_MAX_JOBS as u64,
            hint: "use the host search (`search=host`)".into(),
        });
    }
    let max_pool = 65535 * WORKGROUP_SIZE as usize;
    if !(1..=max_pool).contains(&pool) {
        return Err(Error::invalid("pool", format!("{pool} nodes per round; the resident search takes 1..={max_pool}")));
    }
    if let Some(limit) = gpu.loop_iteration_limit() {
        // the busiest invocation: an LB2 child walks every job per machine pair; a branching
        // thread orders and writes up to n children
        let bounding = (m + if bound == LowerBound::Lb2 { data.pair_count() * n } else { 0 }) as u64;
        let branching = (n * (m + n + node_stride(n, m) + m)) as u64;
        let busiest = bounding.max(branching);
        if busiest > limit {
            return Err(Error::Limit {
                what: format!("loop iterations per invocation of the resident search on {}", gpu.adapter_name()),
                requested: busiest,
                limit,
                hint: "this driver cuts longer loops short, which would give wrong bounds: use a GPU driver, the host search \
                       (`search=host`) bounding on the CPU (`device=cpu`), or LB1"
                    .into(),
            });
        }
    }
    Ok(())
}

/// Solves `instance` with the search resident on `gpus` (one search, a host thread per device;
/// a device that runs dry takes open nodes from another, see `threads`). Honours the bound,
/// branching, limits, interrupt flag and progress interval of `options`; `exploration` must
/// be depth-first and `pool_size` is the number of nodes one round branches per device.
#[cfg(not(target_arch = "wasm32"))]
pub fn solve_resident(
    gpus: &[&Gpu],
    instance: &Instance,
    options: &SearchOptions,
    resident: &ResidentOptions,
    progress: Option<&mut dyn FnMut(&Progress)>,
) -> Result<Solution> {
    if gpus.is_empty() {
        return Err(Error::invalid("devices", "no device to run the resident search on; give at least one"));
    }
    let start = Instant::now();
    let data = BoundData::new(instance);
    check_resident_options(gpus, &data, options)?;
    // before any work: a search must not run for hours and then find it cannot keep its state
    let checkpoint_file = resident.checkpoint.as_deref().map(CheckpointFile::claim).transpose()?;
    let mut begin = beginning(instance, options, resident, start)?;
    let open = begin.take_open();
    // each device's buffers and kernels made on its own thread: the devices start together
    let mut devices = std::thread::scope(|scope| {
        let making: Vec<_> = gpus
            .iter()
            .map(|gpu| {
                let data = &data;
                scope.spawn(move || {
                    ResidentDevice::new(gpu, data, options.bound, options.branching, options.pool_size, resident.memory_budget)
                })
            })
            .collect();
        making
            .into_iter()
            .map(|thread| thread.join().unwrap_or_else(|_| Err(Error::invalid("devices", "a device's setup failed; run the search again"))))
            .collect::<Result<Vec<_>>>()
    })?;
    // the open nodes dealt out over the devices; the first carries the counts so far
    for (i, (device, part)) in devices.iter_mut().zip(open.split(gpus.len(), node_stride(data.jobs, data.machines))).enumerate() {
        let counted = if i == 0 { (begin.nodes_counted, begin.leaves_counted) } else { (0, 0) };
        device.load(&part, begin.best, counted)?;
    }

    let run = Run { instance, options, begin: &begin, start, checkpoint: checkpoint_file.as_ref(), every: resident.checkpoint_every };
    let outcome = threads::search(&mut devices, &run, progress)?;
    let mut parts = devices.iter().map(ResidentDevice::part).collect::<Result<Vec<_>>>()?;
    // open nodes given to a device that had not loaded them when the search stopped
    parts.extend(outcome.undelivered.into_iter().map(Part::of_open));
    let seconds = run.seconds(outcome.gpu_seconds);
    let end = run.checkpoint_of(parts, seconds);
    // the final state: the open nodes of a stopped search, or none once it finished (so a
    // resume of a finished search ends at once with its result)
    let written = checkpoint_file.as_ref().and_then(|file| file.write(&end).err().map(|e| e.to_string()));
    let frontier = FrontierUse {
        bytes_allocated: devices.iter().map(|d| 4 * (d.capacity * ENTRY_WORDS + d.store_capacity * d.node_stride) as u64).sum(),
        capacity: devices.iter().map(|d| d.capacity as u64).sum(),
        peak_open: outcome.peak_open.max(end.open_nodes() as u64),
    };
    let mut solution = run.solution(end, outcome.stopped, &data)?;
    // the result is returned either way; a failed write travels with it
    solution.checkpoint_failure = if checkpoint_file.is_some() { written } else { outcome.checkpoint_failure };
    solution.kernel_seconds = outcome.kernel_seconds;
    solution.incumbents = outcome.incumbents;
    solution.frontier = Some(frontier);
    solution.devices = outcome.devices;
    Ok(solution)
}

/// Refuses what the resident search cannot run: exploration other than depth-first, sizes the
/// kernels cannot take on any of `gpus`.
#[cfg(not(target_arch = "wasm32"))]
fn check_resident_options(gpus: &[&Gpu], data: &BoundData, options: &SearchOptions) -> Result<()> {
    if options.exploration != Exploration::DepthFirst {
        return Err(Error::invalid(
            "exploration",
            "the resident search is depth-first; use depth-first exploration or the host search (`search=host`)",
        ));
    }
    data.check_gpu()?;
    for gpu in gpus {
        check_resident_size(gpu, data, options.bound, options.pool_size)?;
    }
    Ok(())
}

/// The start of a search: the heuristic's schedule and the root, or the checkpoint resumed
/// (checked against `instance` and `options`). Its `best` is the value a schedule must beat.
#[cfg(not(target_arch = "wasm32"))]
fn beginning(instance: &Instance, options: &SearchOptions, resident: &ResidentOptions, start: Instant) -> Result<Checkpoint> {
    if let Some(checkpoint) = &resident.resume {
        return Ok(checkpoint.check_against(instance, options)?.clone());
    }
    let data = BoundData::new(instance);
    let (n, m) = (data.jobs, data.machines);
    let interrupted = || options.interrupted.is_some_and(|flag| flag.load(std::sync::atomic::Ordering::Relaxed));
    let heuristic_deadline = options.time_limit.and_then(|limit| start.checked_add(limit / 10));
    let stop = || interrupted() || heuristic_deadline.is_some_and(|d| Instant::now() >= d);
    let (value, perm) = heuristic::iterated_greedy(n, m, &data.ptimes, &options.heuristic, &stop);
    check_schedule(&data, &perm, value, "start heuristic")?;
    let best = options.upper_bound.map_or(value, |ub| ub.min(value));
    let root = Frontier::of_nodes(data.root_record(), node_stride(n, m));
    let start_schedule = (value, perm, start.elapsed().as_secs_f64());
    let schedule = (value == best).then(|| start_schedule.1.clone());
    Ok(Checkpoint::new(instance, options, best, schedule, start_schedule, (0.0, 0.0), (0, 0), root))
}

/// One search as every device's driver sees it: what it solves, how it started, where its
/// checkpoints go.
#[cfg(not(target_arch = "wasm32"))]
struct Run<'r> {
    instance: &'r Instance,
    options: &'r SearchOptions<'r>,
    /// The start: the root and the heuristic's schedule, or the checkpoint resumed.
    begin: &'r Checkpoint,
    start: Instant,
    checkpoint: Option<&'r CheckpointFile>,
    every: Option<Duration>,
}

#[cfg(not(target_arch = "wasm32"))]
impl Run<'_> {
    /// The checkpoint of the search made of every device's `parts` (taken at one quiescent
    /// point): their open nodes, counts, and the best incumbent with its schedule.
    fn checkpoint_of(&self, parts: Vec<Part>, seconds: (f64, f64)) -> Checkpoint {
        let begin = self.begin;
        let best = parts.iter().map(|p| p.best).fold(begin.best, u32::min);
        let leaf = parts.iter().filter_map(|p| p.leaf.as_ref()).find(|(value, _)| *value == best).map(|(_, perm)| perm.clone());
        let schedule = begin.best_permutation.clone().filter(|_| begin.best == best).or(leaf);
        let counted = parts.iter().fold((0, 0), |(a, b), p| (a + p.counted.0, b + p.counted.1));
        let stride = node_stride(self.instance.jobs, self.instance.machines);
        let mut open = Frontier::default();
        for part in parts {
            open.append(part.open, stride);
        }
        let start = (begin.start_makespan, begin.start_permutation.clone(), begin.heuristic_seconds);
        Checkpoint::new(self.instance, self.options, best, schedule, start, seconds, counted, open)
    }

    /// The result of the search that ended at `end` (finished unless `stopped`).
    fn solution(&self, end: Checkpoint, stopped: Option<super::search::Stop>, data: &BoundData) -> Result<Solution> {
        if let Some(perm) = &end.best_permutation {
            check_schedule(data, perm, end.best, "resident search")?;
        }
        let finished = stopped.is_none();
        let begin = self.begin;
        Ok(Solution {
            makespan: end.best_permutation.is_some().then_some(end.best),
            optimal: finished && end.best_permutation.is_some(),
            proven_lower_bound: finished.then_some(end.best),
            permutation: end.best_permutation.unwrap_or_default(),
            stopped,
            start_makespan: begin.start_makespan,
            start_permutation: begin.start_permutation.clone(),
            heuristic_seconds: begin.heuristic_seconds,
            nodes: end.nodes_counted,
            leaves: end.leaves_counted,
            seconds: end.seconds,
            bounding_seconds: end.gpu_seconds,
            kernel_seconds: Default::default(),
            checkpoint_failure: None,
            incumbents: Vec::new(),
            frontier: None,
            devices: Vec::new(),
        })
    }

    /// Seconds over every run of the search: (all, `gpu` of them waiting for the devices).
    fn seconds(&self, gpu: Duration) -> (f64, f64) {
        (self.begin.seconds + self.start.elapsed().as_secs_f64(), self.begin.gpu_seconds + gpu.as_secs_f64())
    }
}

/// A device's share of the search at a quiescent point.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Clone, Debug)]
struct Part {
    open: Frontier,
    /// (nodes, leaves) it counted, its share of the start's included.
    counted: (u64, u64),
    /// Its incumbent value.
    best: u32,
    /// The best leaf it met: (makespan, schedule).
    leaf: Option<(u32, Vec<usize>)>,
}

#[cfg(not(target_arch = "wasm32"))]
impl Part {
    /// Open nodes on their way to a device: no counts, no incumbent.
    fn of_open(open: Frontier) -> Self {
        Part { open, counted: (0, 0), best: u32::MAX, leaf: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::GpuOptions;
    use crate::kernels::flowshop::taillard;

    /// Rounds follow the target in proportion, at most twice or half at once, not within a
    /// quarter of it; they grow only after a submission that ended with a full pool.
    #[test]
    fn rounds_follow_the_target_and_grow_only_while_the_pools_are_full() {
        let ms = Duration::from_millis;
        let target = ms(5);
        let mut rounds = 16;
        adapt(&mut rounds, ms(1), target, true);
        assert_eq!(rounds, 32, "five times too quick: twice the rounds at most");
        adapt(&mut rounds, ms(1), target, false);
        assert_eq!(rounds, 32, "a dry submission is quick for want of work");
        adapt(&mut rounds, ms(8), target, true);
        assert_eq!(rounds, 20, "8 ms: rounds scaled by 5/8");
        adapt(&mut rounds, ms(4), target, true);
        adapt(&mut rounds, Duration::from_micros(5900), target, false);
        assert_eq!(rounds, 20, "within a quarter of the target either way");
        adapt(&mut rounds, ms(3), target, false);
        assert_eq!(rounds, 20, "quicker, but not full");
        adapt(&mut rounds, ms(40), target, true);
        assert_eq!(rounds, 10, "eight times too slow: half the rounds at most");
        let mut one = 1;
        adapt(&mut one, ms(11), target, true);
        assert_eq!(one, 1, "never below one round");
        let mut most = 1 << 12;
        adapt(&mut most, ms(1), target, true);
        assert_eq!(most, 1 << 12, "never above 4096 rounds");
    }

    /// Nodes move to a device with fewer than two pools, dry or not, from one with twice as
    /// many and two pools at least: a dry device waits rather than take a few nodes.
    #[test]
    fn a_device_short_of_two_pools_is_given_by_one_with_twice_as_many() {
        let pool = 100;
        assert!(gives(200, 0, pool), "a dry device, a giver with two pools");
        assert!(!gives(199, 0, pool), "a dry device, a giver short of two pools");
        assert!(!gives(2, 0, pool), "two nodes are not worth a move");
        assert!(gives(300, 150, pool), "hungry, and the giver has twice as many");
        assert!(!gives(299, 150, pool), "the giver has less than twice as many");
        assert!(!gives(10_000, 200, pool), "two pools are not hungry");
    }

    /// Devices that share a search submit long batches only while every one holds 16 pools.
    #[test]
    fn submissions_are_long_only_while_every_device_holds_sixteen_pools() {
        assert_eq!(tempo(1600, 100), BATCH_CALM);
        assert_eq!(tempo(1599, 100), BATCH_SHARED);
        assert_eq!(tempo(0, 100), BATCH_SHARED);
    }

    /// A gift is the bottom of the giver's stack: half its open nodes, one pool at most, and
    /// no more than the taker's room; the giver keeps the rest, above the raised floor.
    #[test]
    fn a_gift_is_the_bottom_pool_at_most() {
        let gpu = Gpu::new(&GpuOptions::default()).unwrap();
        let instance = taillard(1).unwrap();
        let data = BoundData::new(&instance);
        let stride = node_stride(data.jobs, data.machines);
        let pool = 64;
        let mut device = ResidentDevice::new(&gpu, &data, LowerBound::Lb1, Branching::Forward, pool, None).unwrap();
        // 300 nodes told apart by their bound word
        let records: Vec<u32> =
            (0..300u32).flat_map(|i| data.root_record().into_iter().enumerate().map(move |(w, v)| if w == 2 { i } else { v })).collect();
        device.load(&Frontier::of_nodes(records, stride), instance.upper_bound, (0, 0)).unwrap();
        let gift = device.give_bottom(usize::MAX).unwrap().finish(&gpu).unwrap();
        let bounds: Vec<u32> = gift.entries.chunks_exact(ENTRY_WORDS).map(|e| e[2]).collect();
        assert_eq!(bounds, (0..64).collect::<Vec<u32>>(), "the bottom pool, in order");
        assert_eq!((device.last.open, device.last.floor), (236, 64));
        let kept = device.read_open(0, device.last.open as usize).unwrap();
        assert_eq!(kept.entries[2], 64, "the giver keeps the nodes above the gift");
        assert_eq!(device.give_bottom(10).unwrap().finish(&gpu).unwrap().len(), 10, "the taker's room");
        let mut few = ResidentDevice::new(&gpu, &data, LowerBound::Lb1, Branching::Forward, pool, None).unwrap();
        let records: Vec<u32> = (0..90).flat_map(|_| data.root_record()).collect();
        few.load(&Frontier::of_nodes(records, stride), instance.upper_bound, (0, 0)).unwrap();
        assert_eq!(few.give_bottom(usize::MAX).unwrap().finish(&gpu).unwrap().len(), 45, "half, under a pool");
    }

    /// An incumbent the host offers lowers the device's at the next round, and never raises
    /// one the device found meanwhile (in a batch queued ahead of the offer).
    #[test]
    fn an_offered_incumbent_never_raises_the_devices_own() {
        let gpu = Gpu::new(&GpuOptions::default()).unwrap();
        let instance = taillard(1).unwrap();
        let data = BoundData::new(&instance);
        let n = data.jobs;
        let mut device = ResidentDevice::new(&gpu, &data, LowerBound::Lb1, Branching::Forward, 256, None).unwrap();
        let start = instance.upper_bound + 500;
        device.load(&Frontier::of_nodes(data.root_record(), node_stride(n, data.machines)), start, (0, 0)).unwrap();
        let round = |device: &mut ResidentDevice| {
            let read = device.submit(1).unwrap();
            device.take(read).unwrap().best
        };
        assert_eq!(round(&mut device), start, "a round from the root reaches no leaf");
        // the device finds start - 300 while the host, a batch behind, still knows start
        let (found, offered) = (start - 300, start - 100);
        device.set_word(word::BEST, found);
        device.lower_best(offered);
        assert_eq!(round(&mut device), found, "the offer raised the device's own incumbent");
        device.lower_best(found - 50);
        assert_eq!(round(&mut device), found - 50, "a lower offer is taken");
        assert!(device.last.nodes > 0 && device.last.open > 0, "the rounds branched nothing");
    }

    /// `resident_order` sorts the pairs by how often each pruned a child: the search counts
    /// prunes per pair, and one more sort orders the pairs by the counts, most first (ties by
    /// pair index); counts that reach HITS_LIMIT are halved, all of them.
    #[test]
    fn the_pair_order_follows_the_prune_counts() {
        let gpu = Gpu::new(&GpuOptions::default()).unwrap();
        let instance = taillard(11).unwrap();
        let data = BoundData::new(&instance);
        let (n, q) = (data.jobs, data.pair_count());
        let mut device = ResidentDevice::new(&gpu, &data, LowerBound::Lb2, Branching::Bidirectional, 256, None).unwrap();
        device.load(&Frontier::of_nodes(data.root_record(), node_stride(n, data.machines)), instance.upper_bound, (0, 0)).unwrap();
        for _ in 0..3 {
            let read = device.submit(4).unwrap();
            device.take(read).unwrap();
        }
        assert!(device.last.nodes > 0, "the search branched nothing");
        let sort = |device: &mut ResidentDevice| {
            // no round: the sort alone
            let read = device.submit(0).unwrap();
            device.take(read).unwrap();
            let order = gpu.read(&device.pairs).unwrap()[2 * q..3 * q].to_vec();
            (order, gpu.read(&device.listed).unwrap()[2..2 + q].to_vec())
        };
        let sorted_by = |order: &[u32], hits: &[u32]| {
            let mut indices = order.to_vec();
            indices.sort_unstable();
            assert_eq!(indices, (0..q as u32).collect::<Vec<_>>(), "not a permutation: {order:?}");
            for w in order.windows(2) {
                let (a, b) = (w[0] as usize, w[1] as usize);
                assert!(hits[a] > hits[b] || (hits[a] == hits[b] && a < b), "pair {a} ({}) before {b} ({})", hits[a], hits[b]);
            }
        };
        let searched = gpu.read(&device.listed).unwrap()[2..2 + q].to_vec();
        assert!(searched.iter().sum::<u32>() > 0, "no pair pruned a child");
        let (order, kept) = sort(&mut device);
        sorted_by(&order, &searched);
        assert_eq!(kept, searched, "counts below the limit are kept as they are");
        assert_ne!(order[0], 0, "the host's first pair is still first: {searched:?}");

        // counts at the limit: ties, a reversed order, the largest at HITS_LIMIT
        let crafted: Vec<u32> = (0..q as u32).map(|p| if p == q as u32 - 1 { HITS_LIMIT } else { (p / 2) * 1000 }).collect();
        gpu.queue().write_buffer(&device.listed.buffer, 8, bytemuck::cast_slice(&crafted));
        let (order, halved) = sort(&mut device);
        sorted_by(&order, &crafted);
        assert_eq!(order[0], q as u32 - 1);
        assert_eq!(halved, crafted.iter().map(|h| h / 2).collect::<Vec<_>>());
    }
}
