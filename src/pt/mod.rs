//! Persistent threads (Gupta et al.): maximal launch, work queues and global barriers, made
//! safe on GPUs that give no forward-progress guarantee between workgroups.
//!
//! Three tiers, from always safe to needing a passed capability check:
//! - [`Tier::Multi`] (0): multi-dispatch / indirect dispatch; no workgroup ever waits for another.
//! - [`Tier::NonBlocking`] (1): persistent workgroups that claim work with atomics and never wait.
//! - [`Tier::Blocking`] (2): persistent workgroups that wait (global barriers, queue pops),
//!   used only after [`capability::assess`] passed on the adapter (occupancy discovery, barriers
//!   and a cross-workgroup message-passing check through atomics, all time-capped).
//!
//! Device side: `shaders/shared/pt_{control,discovery,barrier,queue}.wgsl`. Every wait loop there
//! is bounded by [`PtConfig::spin_cap`] polls and leaves through the abort word of the control
//! buffer with an [`AbortReason`]; the host decodes it ([`Status`]) into a clear [`crate::Error`]
//! or an automatic fallback to a lower tier ([`launch::Runtime`], [`launch::Plan`]).
//!
//! What runs on it:
//! - [`cases`]: Gupta's four use cases (sync, forest, prodcons, gsync), nonPT and PT
//!   formulations over the tiers, each checked against its CPU reference ([`cases::cpu`]);
//! - [`barrier`]: global barrier latency against relaunch;
//! - [`queue`]: queue throughput per queue kind;
//! - [`sweep`]: a sweep over any of them (what `simtlab bench pt` runs), checked before it runs
//!   and expanded into its configurations, each one run of a `pt-*` registry workload;
//! - [`user`]: the same for a user's own kernel: the public WGSL module ([`user::module`]: global
//!   barrier, participant index and count, queue claims, the stop test) at a group the kernel
//!   does not use, the tier it needs, and [`Runtime::plan_shader`] / [`Runtime::prepare`] to
//!   launch it on the app's device (what `simtlab pt` runs).

pub mod barrier;
pub(crate) mod capability;
pub mod cases;
pub mod graph;
pub(crate) mod launch;
pub mod queue;
pub(crate) mod status;
pub mod sweep;
pub mod user;

#[cfg(not(target_arch = "wasm32"))]
pub use capability::assess;
pub use capability::{assess_async, Capability};
pub use launch::{tier_that_ran, Plan, PtOptions, Runtime, TierVerdict, DEFAULT_SPIN_CAP};
pub use status::{AbortReason, Status};

use crate::error::Result;
use crate::gpu::{Bind, BufferKind, Gpu, GpuBuffer, Step};
#[cfg(not(target_arch = "wasm32"))]
use crate::harness::{self, Check, Environment, Record, Stats, Throughput};
use serde::{Deserialize, Serialize};

/// Binding of the control words (`pt_ctl`) in every PT kernel.
pub const CONTROL_BINDING: u32 = crate::gpu::shader::registry::shared::pt_control::binding::PT_CTL;
/// Binding of the [`PtConfig`] uniform (`pt_cfg`).
pub const CONFIG_BINDING: u32 = crate::gpu::shader::registry::shared::pt_control::binding::PT_CFG;
/// Binding of the queue buffer (`pt_queue`).
pub const QUEUE_BINDING: u32 = crate::gpu::shader::registry::shared::pt_queue::binding::PT_QUEUE;
/// u32 words of the control buffer.
pub const CONTROL_WORDS: usize = 2112;

/// Word indices of the control buffer (mirror of `pt_control.wgsl`).
pub mod word {
    /// First abort reason ([`super::AbortReason`] code; 0 = none).
    pub const ABORT: usize = 0;
    /// Detail of the first abort (barrier arrival, ticket, slot, ...).
    pub const DETAIL: usize = 1;
    /// Discovery tickets; bit 31 ([`CLOSED`]) marks the poll closed.
    pub const TICKET: usize = 2;
    /// Discovered participants (0 until the poll closes).
    pub const COUNT: usize = 3;
    /// Workgroups that arrived after the discovery poll closed.
    pub const LATE: usize = 4;
    /// Participants that reached `pt_finish`.
    pub const DONE: usize = 5;
    /// Longest wait seen, in polls (diagnostic).
    pub const MAX_POLLS: usize = 6;
    /// Most polls one invocation took over all its waits (user kernels, `PT_COUNT_POLLS`).
    pub const TOTAL_POLLS: usize = 7;
    /// Monotonic barrier counter, on its own 128-byte line.
    pub const BARRIER: usize = 32;
    /// Sub-counters of the tree barrier: `SUB + s * SUB_STRIDE` for `s < SUBS`.
    pub const SUB: usize = 64;
    /// Words between two sub-counters (one 128-byte line each).
    pub const SUB_STRIDE: usize = 32;
    /// Number of sub-counters.
    pub const SUBS: usize = 64;
    /// Bit 31 of the ticket word: the discovery poll is closed.
    pub const CLOSED: u32 = 0x8000_0000;
}

/// Word indices of the queue buffer (mirror of `pt_queue.wgsl`).
pub mod queue_word {
    /// Next index to claim (single head) or ring position to pop.
    pub const HEAD: usize = 0;
    /// Ring positions reserved by pushes.
    pub const TAIL: usize = 1;
    /// Ring slots emptied by pops (a push overflows when `TAIL - FREED` reaches the capacity).
    pub const FREED: usize = 2;
    /// Items pushed but not yet finished (the forest case's termination count).
    pub const PENDING: usize = 3;
    /// Set to 1 when a push found the ring full.
    pub const OVERFLOW: usize = 4;
    /// First distributed head: head k is at `HEADS + k * HEAD_STRIDE`.
    pub const HEADS: usize = 32;
    /// Words between two distributed heads (one 128-byte line each).
    pub const HEAD_STRIDE: usize = 32;
    /// Most distributed heads.
    pub const MAX_HEADS: usize = 64;
    /// First ring slot (`HEADS + MAX_HEADS * HEAD_STRIDE`); a slot holds item + 1, 0 when empty.
    pub const SLOTS: usize = 2080;
}

/// Words of a queue buffer with a ring of `capacity` slots.
pub fn queue_words(capacity: u32) -> usize {
    queue_word::SLOTS + capacity.max(1) as usize
}

/// `pt_cfg.flags` bit: every launched workgroup participates, without discovery. Right for
/// non-blocking kernels; for blocking ones it is the test-only "assume resident" switch.
pub const FLAG_ALL_PARTICIPATE: u32 = 1;

/// The uniform every PT kernel reads (mirror of `struct PtConfig` in `pt_control.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable, Serialize, Deserialize)]
pub struct PtConfig {
    /// Most polls one wait may take before it aborts.
    pub spin_cap: u32,
    /// Discovery: polls without a new arrival before the poll closes.
    pub grace: u32,
    /// Bit set: [`FLAG_ALL_PARTICIPATE`].
    pub flags: u32,
    /// Workgroups in the dispatch.
    pub launched: u32,
    /// Ring queue capacity (slots).
    pub capacity: u32,
    /// Distributed queue heads.
    pub heads: u32,
    /// Items per claim of a chunked queue.
    pub chunk: u32,
    /// Unused; pads the uniform to 32 bytes.
    pub pad: u32,
}

/// The execution tier of a persistent-threads formulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    /// 0: multi-dispatch or indirect dispatch, no waiting on other workgroups.
    Multi,
    /// 1: persistent workgroups claiming work with atomics, never waiting.
    NonBlocking,
    /// 2: persistent workgroups that wait (barriers, queue pops); needs a passed capability check.
    Blocking,
}

impl Tier {
    /// The three tiers, in order of their numbers.
    pub const ALL: [Tier; 3] = [Tier::Multi, Tier::NonBlocking, Tier::Blocking];

    /// The tier's number: 0, 1 or 2 (as in `--tier`).
    pub fn number(self) -> u8 {
        self as u8
    }

    /// The tier numbered `n`; None above 2.
    fn from_number(n: u8) -> Option<Tier> {
        Tier::ALL.get(n as usize).copied()
    }

    /// The tiers numbered `numbers` (the `tier` field of sweeps and registry runs), each checked.
    pub fn numbered(numbers: &[u8]) -> Result<Vec<Tier>> {
        numbers
            .iter()
            .map(|&t| Tier::from_number(t).ok_or_else(|| crate::Error::invalid("tier", format!("{t} (give tier 0, 1 or 2)"))))
            .collect()
    }

    /// Short name: `multi-dispatch`, `non-blocking` or `blocking`.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Multi => "multi-dispatch",
            Tier::NonBlocking => "non-blocking",
            Tier::Blocking => "blocking",
        }
    }

    /// "tier N (name)" for messages.
    pub fn label(self) -> String {
        format!("tier {} ({})", self.number(), self.name())
    }
}

/// Control and config buffers of one PT launch.
#[derive(Debug)]
pub struct Control {
    /// The [`CONTROL_WORDS`] control words (indices in [`word`]), bound at [`CONTROL_BINDING`].
    ctl: GpuBuffer<u32>,
    /// `config` as a uniform, bound at [`CONFIG_BINDING`].
    pub cfg: GpuBuffer<PtConfig>,
    /// The launch's configuration, kept to decode the status.
    pub config: PtConfig,
}

impl Control {
    /// Zeroed control words and the `config` uniform.
    pub fn new(gpu: &Gpu, config: PtConfig) -> Result<Control> {
        Ok(Control {
            ctl: gpu.buffer_zeroed::<u32>("pt control", CONTROL_WORDS, BufferKind::Storage)?,
            cfg: gpu.buffer("pt config", &[config], BufferKind::Uniform)?,
            config,
        })
    }

    /// (binding, buffer) pairs for `Kernel::bind_at`.
    pub fn slots(&self) -> [(u32, &dyn Bind); 2] {
        [(CONTROL_BINDING, &self.ctl as &dyn Bind), (CONFIG_BINDING, &self.cfg as &dyn Bind)]
    }

    /// Clears the control words; put it in the same submission, before the PT dispatch.
    pub fn reset(&self) -> Step<'_> {
        Step::clear(&self.ctl)
    }

    /// Reads and decodes the control words after a launch (blocking; see
    /// [`Control::status_async`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn status(&self, gpu: &Gpu) -> Result<Status> {
        crate::gpu::block_on(self.status_async(gpu))
    }

    /// Reads and decodes the control words after a launch.
    pub async fn status_async(&self, gpu: &Gpu) -> Result<Status> {
        Ok(Status::decode(&gpu.read_async(&self.ctl).await?, &self.config))
    }
}

/// A record of the `pt` family for a benchmark without random inputs (barrier, queue).
#[cfg(not(target_arch = "wasm32"))]
#[allow(clippy::too_many_arguments, reason = "one argument per record field that differs")]
pub(crate) fn record(
    gpu: &Gpu,
    kernel: &str,
    variant: String,
    params: serde_json::Value,
    stats: Stats,
    check: Check,
    throughput: Throughput,
    extra: impl serde::Serialize,
) -> Record {
    Record {
        schema: harness::SCHEMA_VERSION,
        family: "pt".into(),
        kernel: kernel.into(),
        variant,
        params,
        seed: 0,
        environment: Environment::of(gpu),
        stats,
        check,
        divergence: None,
        throughput: Some(throughput),
        extra: serde_json::to_value(extra).unwrap_or_default(),
    }
}
