//! Queue throughput per queue kind: single head, chunked, distributed heads with stealing
//! (claims, tier 1) and the bounded ring (push + pop, tier 2) (`shaders/pt/queue.wgsl` over
//! `shaders/shared/pt_queue.wgsl`).

#[cfg(not(target_arch = "wasm32"))]
use super::record;
use super::{Control, Runtime, Status, Tier, FLAG_ALL_PARTICIPATE};
use crate::error::{Error, Result};
use crate::gpu::shader::registry;
use crate::gpu::{Bind, BufferKind, Checked, Gpu, PreparedRun, Step};
use crate::harness::named;
use crate::harness::Check;
#[cfg(not(target_arch = "wasm32"))]
use crate::harness::{self, Protocol, Record, Throughput};
use crate::pt;
use serde::{Deserialize, Serialize};

/// The queue a queue benchmark measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueKind {
    /// One global head, one atomicAdd per item.
    Single,
    /// One global head, `chunk` items per atomicAdd.
    Chunked,
    /// `heads` heads over item ranges, stealing when the home range is empty.
    Distributed,
    /// The bounded MPMC ring (push + pop per item; blocking tier).
    Ring,
}

named!(QueueKind { Single => "single", Chunked => "chunked", Distributed => "distributed", Ring => "ring" });

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct QueueParams {
    n: u32,
    kind: u32,
    check: u32,
    rounds: u32,
}

/// Parameters of one queue benchmark launch.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct QueueConfig {
    /// Which queue.
    pub kind: QueueKind,
    /// Items (claims kinds) — the ring moves launch × rounds items.
    pub n: u32,
    /// Chunked: items per claim.
    pub chunk: u32,
    /// Distributed: number of heads (1..=64).
    pub heads: u32,
    /// Ring: items each participant pushes and pops.
    pub rounds: u32,
    /// Ring capacity (None: twice the participants).
    pub capacity: Option<u32>,
    /// Workgroups launched (None: the discovered count).
    pub workgroups: Option<u32>,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig { kind: QueueKind::Single, n: 1 << 24, chunk: 256, heads: 64, rounds: 1024, capacity: None, workgroups: None }
    }
}

/// Most items of a claims run (indices up to `PTQ_CUT` in `pt_queue.wgsl` stay distinct).
pub const MAX_QUEUE_ITEMS: u32 = 1 << 31;

impl QueueConfig {
    /// Errors on a value the queue kernel cannot run as given, naming the option.
    pub fn validate(&self) -> Result<()> {
        let range = |what: &str, v: u32, lo: u32, hi: u32| -> Result<()> {
            if v < lo || v > hi {
                return Err(Error::invalid(what, format!("{v} (use {lo}..={hi})")));
            }
            Ok(())
        };
        if self.kind != QueueKind::Ring {
            range("n", self.n, 1, MAX_QUEUE_ITEMS)?;
        }
        range("chunk", self.chunk, 1, MAX_QUEUE_ITEMS)?;
        range("heads", self.heads, 1, pt::queue_word::MAX_HEADS as u32)?;
        range("rounds", self.rounds, 1, u32::MAX)?;
        if let Some(c) = self.capacity {
            range("capacity", c, 1, MAX_QUEUE_ITEMS)?;
        }
        if let Some(w) = self.workgroups {
            range("workgroups", w, 1, u32::MAX)?;
        }
        Ok(())
    }
}

/// Items a claims run takes by default: 2^24, or on a driver that cuts an invocation's loops
/// after a fixed number of iterations ([`Gpu::loop_iteration_limit`], llvmpipe: 65535 in all)
/// what one subgroup can claim alone within that limit. lavapipe runs the subgroups of a
/// workgroup one after another while none waits, so the first one claims everything it can;
/// a claim costs its loop 3 iterations there, and the size keeps a margin over that (4 per
/// item, rounded down to a power of two). Without a measured subgroup size (GL) it assumes 4
/// lanes, llvmpipe's narrowest vector.
pub fn default_queue_items(gpu: &Gpu) -> u32 {
    match gpu.loop_iteration_limit() {
        Some(limit) => {
            let lanes = gpu.caps().subgroup_size.unwrap_or(4).max(1) as u64;
            let items = (limit * lanes / 4).clamp(1, 1 << 24);
            1 << items.ilog2()
        }
        None => 1 << 24,
    }
}

/// One queue-kernel launch.
#[derive(Clone, Debug)]
pub struct QueueRun {
    /// Times each item was processed (with `check`).
    pub counts: Vec<u32>,
    /// Queue operations made in all (claims; a push and a pop count 2 on the ring).
    pub claims: u32,
    /// Items the run had to process.
    pub items: u32,
    /// Time of the launch (device timestamps where available, else wall clock).
    pub seconds: f64,
    /// Workgroups dispatched.
    pub launched: u32,
    /// The decoded control words.
    pub status: Status,
}

/// A queue kernel's buffers, bound for one launch of `launched` workgroups.
#[derive(Debug)]
struct Launch {
    kernel: std::sync::Arc<crate::gpu::Kernel>,
    bind: wgpu::BindGroup,
    control: Control,
    counts: crate::gpu::GpuBuffer<u32>,
    tally: crate::gpu::GpuBuffer<u32>,
    queue: crate::gpu::GpuBuffer<u32>,
    launched: u32,
    items: u32,
}

impl Launch {
    /// Binds the kernel of `cfg.kind` for `launched` workgroups (the ring only where the caller
    /// found it may run); with `check`, every item's claim count is kept.
    fn new(gpu: &Gpu, rt: &Runtime, cfg: &QueueConfig, launched: u32, check: bool) -> Result<Launch> {
        let ring = cfg.kind == QueueKind::Ring;
        let tier = if ring { Tier::Blocking } else { Tier::NonBlocking };
        let items = if ring { launched.checked_mul(cfg.rounds).ok_or_else(|| Error::invalid("rounds", "too many items"))? } else { cfg.n };
        let kernel = gpu.kernel(if ring { registry::pt::queue::RING } else { registry::pt::queue::CLAIMS }, &[])?;
        let mut config = rt.config(gpu, tier, launched);
        if !ring {
            config.flags |= FLAG_ALL_PARTICIPATE;
        }
        config.chunk = cfg.chunk;
        config.heads = cfg.heads;
        config.capacity = cfg.capacity.unwrap_or(launched.saturating_mul(2));
        let control = Control::new(gpu, config)?;
        let counts = gpu.buffer_zeroed::<u32>("queue counts", if check { items as usize } else { 1 }, BufferKind::Storage)?;
        let tally = gpu.buffer_zeroed::<u32>("queue tally", 4, BufferKind::Storage)?;
        let queue = gpu.buffer_zeroed::<u32>("queue", pt::queue_words(config.capacity), BufferKind::Storage)?;
        let kind = match cfg.kind {
            QueueKind::Single => 0,
            QueueKind::Chunked => 1,
            QueueKind::Distributed => 2,
            QueueKind::Ring => 3,
        };
        let params =
            gpu.buffer("queue params", &[QueueParams { n: items, kind, check: check as u32, rounds: cfg.rounds }], BufferKind::Uniform)?;
        use crate::gpu::shader::registry::pt::queue::binding as slot;
        let mut slots: Vec<(u32, &dyn Bind)> =
            vec![(slot::COUNTS, &counts), (slot::TALLY, &tally), (slot::PARAMS, &params), (pt::QUEUE_BINDING, &queue)];
        slots.extend(control.slots());
        let bind = kernel.bind_at(gpu, &slots)?;
        Ok(Launch { kernel, bind, control, counts, tally, queue, launched, items })
    }

    /// Clears the counts, the tally, the queue and the control words, then launches.
    fn steps(&self) -> [Step<'_>; 5] {
        [
            Step::clear(&self.counts),
            Step::clear(&self.tally),
            Step::clear(&self.queue),
            self.control.reset(),
            Step::dispatch(&self.kernel, &self.bind, [self.launched, 1, 1]),
        ]
    }
}

/// Whether the ring (tier 2: its pops wait on other workgroups' pushes) may run here: where
/// the capability check allows the blocking tier, as [`Runtime::plan`] demands of every
/// blocking case, or where the caller vouches for co-residency (`assume_resident`).
#[cfg(not(target_arch = "wasm32"))]
pub fn ring_allowed(gpu: &Gpu, rt: &Runtime) -> Result<bool> {
    Ok(rt.options.assume_resident || rt.capability(gpu)?.blocking_ok)
}

#[cfg(not(target_arch = "wasm32"))]
fn require_blocking(gpu: &Gpu, rt: &Runtime) -> Result<()> {
    if ring_allowed(gpu, rt)? {
        return Ok(());
    }
    let reason = rt.assessed().and_then(|c| c.reason).unwrap_or_default();
    Err(Error::Unsupported {
        what: "the ring queue (blocking tier 2)".into(),
        adapter: gpu.adapter_name(),
        hint: format!("the capability check refuses the blocking tier here ({reason}); use the single, chunked or distributed queue kinds"),
    })
}

/// Runs the queue kernel once.
#[cfg(not(target_arch = "wasm32"))]
pub fn queue(gpu: &Gpu, rt: &Runtime, cfg: &QueueConfig, check: bool) -> Result<QueueRun> {
    cfg.validate()?;
    let ring = cfg.kind == QueueKind::Ring;
    if ring {
        require_blocking(gpu, rt)?;
    }
    let tier = if ring { Tier::Blocking } else { Tier::NonBlocking };
    let launched = match cfg.workgroups {
        Some(w) if w > gpu.caps().max_compute_workgroups_per_dimension => {
            return Err(Error::invalid("workgroups", format!("{w} (use 1..={})", gpu.caps().max_compute_workgroups_per_dimension)));
        }
        Some(w) => w,
        None => rt.launch(gpu, tier)?,
    };
    let launch = Launch::new(gpu, rt, cfg, launched, check)?;
    let t = gpu.run(&launch.steps(), true)?;
    let status = launch.control.status(gpu)?;
    // the ring moves rounds items per participant: the discovered ones, not all launched
    let all_participate = launch.control.config.flags & FLAG_ALL_PARTICIPATE != 0;
    let items = if ring && !all_participate { status.discovered.saturating_mul(cfg.rounds) } else { launch.items };
    let mut counts = if check { gpu.read(&launch.counts)? } else { Vec::new() };
    if check && ring {
        let extra = counts.iter().skip(items as usize).filter(|&&c| c != 0).count();
        counts.truncate(items as usize);
        if extra > 0 {
            counts.push(u32::MAX); // an item outside the participants' range was processed
        }
    }
    Ok(QueueRun { counts, claims: gpu.read(&launch.tally)?[0], items, seconds: t.seconds, launched, status })
}

/// Workgroups a claims queue launches when recorded into a caller's encoder, where no
/// capability check can run first: claims never wait on another workgroup (non-blocking
/// tier), so any count is safe, and this many contend for the heads on any GPU.
pub const RECORDED_WORKGROUPS: u32 = 64;

/// A claims queue (single, chunked or distributed) prepared for recording into a caller's
/// encoder ([`recorded`] adds the check).
#[derive(Debug)]
pub struct PreparedQueue {
    launch: Launch,
}

impl PreparedQueue {
    /// Binds the kernel for `cfg.workgroups` workgroups (default [`RECORDED_WORKGROUPS`]);
    /// the ring, which waits on other workgroups, is refused: it needs the capability check.
    pub fn new(gpu: &Gpu, cfg: &QueueConfig) -> Result<PreparedQueue> {
        cfg.validate()?;
        if cfg.kind == QueueKind::Ring {
            return Err(Error::Unsupported {
                what: "recording the ring queue".into(),
                adapter: gpu.adapter_name(),
                hint: "its workgroups wait on each other, which needs the capability check first: run it with `simtlab run`".into(),
            });
        }
        let launched = cfg.workgroups.unwrap_or(RECORDED_WORKGROUPS).min(gpu.caps().max_compute_workgroups_per_dimension);
        Ok(PreparedQueue { launch: Launch::new(gpu, &Runtime::new(Default::default()), cfg, launched, true)? })
    }
}

impl PreparedRun for PreparedQueue {
    fn steps(&self) -> Vec<Step<'_>> {
        self.launch.steps().to_vec()
    }
    fn outputs(&self) -> Vec<(&wgpu::Buffer, u64)> {
        vec![(self.launch.counts.wgpu_buffer(), 4 * self.launch.items as u64)]
    }
    /// The queue has no probe: no counts.
    #[cfg(not(target_arch = "wasm32"))]
    fn divergence(&self, _gpu: &Gpu) -> Result<Option<crate::divergence::Divergence>> {
        Ok(None)
    }
}

/// [`PreparedQueue`] for `cfg` with its check: every item claimed exactly once.
pub fn recorded(gpu: &Gpu, cfg: &QueueConfig) -> Result<Checked<PreparedQueue>> {
    let prepared = PreparedQueue::new(gpu, cfg)?;
    let once = vec![1u32; prepared.launch.items as usize];
    Ok(Checked::new(prepared, move |outputs| {
        let counts: Vec<u32> = outputs.first().map(|b| bytemuck::pod_collect_to_vec(b)).unwrap_or_default();
        Check::exact(&counts, &once)
    }))
}

/// The error of an aborted queue run; a run the driver's loop limit cut short says so and
/// names the size that fits, never reports its missing items as wrong results.
#[cfg(not(target_arch = "wasm32"))]
fn queue_error(gpu: &Gpu, cfg: &QueueConfig, status: &Status, seconds: f64) -> Error {
    let what = format!("{:?} queue on {}", cfg.kind, gpu.adapter_name());
    match (status.abort, gpu.loop_iteration_limit()) {
        (Some(pt::AbortReason::LoopLimit), Some(limit)) if cfg.kind != QueueKind::Ring => Error::Limit {
            what: format!("{what}: run cut short (not wrong) by the driver's limit of {limit} loop iterations per invocation: items (`n`)"),
            requested: cfg.n as u64,
            limit: default_queue_items(gpu) as u64,
            hint: "one subgroup may claim every item on this driver, so give a smaller `n`".into(),
        },
        _ => status.error(&what, &gpu.adapter_name(), seconds),
    }
}

/// Queue throughput: claims/s and items/s, with one checked run (every item exactly once).
#[cfg(not(target_arch = "wasm32"))]
pub fn bench_queue(gpu: &Gpu, rt: &Runtime, cfg: &QueueConfig, protocol: &Protocol) -> Result<Record> {
    let checked = queue(gpu, rt, cfg, true)?;
    if checked.status.aborted() {
        return Err(queue_error(gpu, cfg, &checked.status, checked.seconds));
    }
    let check = Check::exact(&checked.counts, &vec![1u32; checked.items as usize]);
    let mut claims = 0;
    let stats = harness::measure(protocol, || {
        let r = queue(gpu, rt, cfg, false)?;
        if r.status.aborted() {
            return Err(queue_error(gpu, cfg, &r.status, r.seconds));
        }
        claims = r.claims;
        let source = if gpu.caps().timestamps { crate::gpu::TimingSource::DeviceTimestamps } else { crate::gpu::TimingSource::WallClock };
        Ok(crate::gpu::Timing { seconds: r.seconds, source, wall_seconds: r.seconds })
    })?;
    let claims_per_s = claims as f64 / stats.median;
    let items_per_s = checked.items as f64 / stats.median;
    let kind = serde_json::to_value(cfg.kind).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
    Ok(record(
        gpu,
        "queue",
        format!("{kind} ({} workgroups)", checked.launched),
        serde_json::to_value(cfg).unwrap_or_default(),
        stats,
        check,
        Throughput { value: claims_per_s * 1e-9, unit: "G claims/s".into() },
        QueueExtra {
            claims,
            items: checked.items,
            g_items_per_s: items_per_s * 1e-9,
            g_claims_per_s: claims_per_s * 1e-9,
            launched: checked.launched,
            tier: if cfg.kind == QueueKind::Ring { 2 } else { 1 },
        },
    ))
}

/// What a queue record holds beside its timing (`Record::extra_as::<QueueExtra>()`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct QueueExtra {
    /// Queue operations of one run.
    pub claims: u32,
    /// Items of one run.
    pub items: u32,
    /// Items per second, in billions.
    pub g_items_per_s: f64,
    /// Claims per second, in billions.
    pub g_claims_per_s: f64,
    /// Workgroups dispatched.
    pub launched: u32,
    /// The tier the queue kind needs: 1 (non-blocking), 2 (the ring's blocking waits).
    pub tier: u8,
}
