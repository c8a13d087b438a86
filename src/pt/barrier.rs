//! Global barrier latency: `iters` in-dispatch barriers among the participants of one launch,
//! against relaunching an empty kernel once per barrier (`shaders/pt/capability.wgsl`, the
//! kernels of the capability check, and `shaders/shared/pt_barrier.wgsl`).

use super::{Capability, Status};
use crate::harness::{named, Named};
use serde::{Deserialize, Serialize};
#[cfg(not(target_arch = "wasm32"))]
use {
    super::{record, Runtime, Tier},
    crate::error::{Error, Result},
    crate::gpu::shader::registry,
    crate::gpu::{BufferKind, Gpu, Step},
    crate::harness::{self, Check, Protocol, Record, Throughput},
};

/// How a workgroup arrives at the global barrier (`pt_barrier` in shaders/shared/pt_barrier.wgsl).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BarrierFence {
    /// storageBarrier: a control barrier with a device-scope fence on storage.
    #[default]
    Device,
    /// workgroupBarrier only (PT_BARRIER_NO_FENCE): data crosses only through atomics.
    None,
}

named!(BarrierFence { Device => "device", None => "none" });

impl BarrierFence {
    #[cfg(not(target_arch = "wasm32"))]
    fn define(self) -> Option<&'static str> {
        (self == BarrierFence::None).then_some("PT_BARRIER_NO_FENCE")
    }
}

/// Where workgroups arrive at the global barrier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BarrierArrival {
    /// One counter for all participants.
    #[default]
    Flat,
    /// Sub-counters of at least 32 participants, then one top counter (PT_BARRIER_TREE).
    Tree,
}

named!(BarrierArrival { Flat => "flat", Tree => "tree" });

impl BarrierArrival {
    #[cfg(not(target_arch = "wasm32"))]
    fn define(self) -> Option<&'static str> {
        (self == BarrierArrival::Tree).then_some("PT_BARRIER_TREE")
    }
}

/// The barrier variant: how participants arrive and whether the arrival fences.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BarrierKind {
    /// How participants arrive.
    pub arrival: BarrierArrival,
    /// Whether the arrival fences storage.
    pub fence: BarrierFence,
}

impl BarrierKind {
    #[cfg(not(target_arch = "wasm32"))]
    fn defines(self) -> Vec<&'static str> {
        self.arrival.define().into_iter().chain(self.fence.define()).collect()
    }

    /// E.g. "tree arrival, fence device", for records and tables.
    pub fn name(self) -> String {
        format!("{} arrival, fence {}", self.arrival.name(), self.fence.name())
    }
}

/// One barrier-kernel launch.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BarrierRun {
    /// Workgroups dispatched.
    pub launched: u32,
    /// Workgroups that took part (the co-resident ones found by discovery).
    pub participants: u32,
    /// Barriers asked for.
    pub iterations: u32,
    /// Barriers participant 0 passed; equals `iterations` on a correct run.
    pub completed: u32,
    /// Neighbour messages read after a barrier that were stale or wrong; 0 on a
    /// correct run.
    pub stale_messages: u32,
    /// Time of the launch (device timestamps where available, else wall clock).
    pub seconds: f64,
    /// The decoded control words (abort reason, polls).
    pub status: Status,
}

/// Launches `workgroups` workgroups running `iters` global barriers with the message-passing
/// check. With discovery (the default) the participants are the co-resident ones; with
/// `rt.options.assume_resident` every launched workgroup participates (test-only).
#[cfg(not(target_arch = "wasm32"))]
pub fn barrier(gpu: &Gpu, rt: &Runtime, workgroups: u32, iters: u32, kind: BarrierKind) -> Result<BarrierRun> {
    let config = rt.config(gpu, Tier::Blocking, workgroups);
    let (r, status, timing) =
        crate::gpu::block_on(super::capability::run_check(gpu, registry::pt::capability::BARRIER, &kind.defines(), iters, config, true))?;
    Ok(BarrierRun {
        launched: workgroups,
        participants: r[0],
        iterations: iters,
        completed: r[2],
        stale_messages: r[1],
        seconds: timing.seconds,
        status,
    })
}

/// Time of `count` back-to-back dispatches of an empty kernel over `workgroups` workgroups.
#[cfg(not(target_arch = "wasm32"))]
pub fn relaunch(gpu: &Gpu, workgroups: u32, count: u32) -> Result<f64> {
    let kernel = gpu.kernel(registry::pt::capability::RELAUNCH, &[])?;
    let result = gpu.buffer_zeroed::<u32>("relaunch result", 4, BufferKind::Storage)?;
    let bind = kernel.bind_at(gpu, &[(registry::pt::capability::binding::RESULT, &result)])?;
    let steps: Vec<Step> = (0..count.max(1)).map(|_| Step::dispatch(&kernel, &bind, [workgroups, 1, 1])).collect();
    Ok(gpu.run(&steps, true)?.seconds)
}

/// What a barrier record holds beside its timing (`Record::extra_as::<BarrierExtra>()`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BarrierExtra {
    /// Workgroups that took part.
    pub participants: u32,
    /// Microseconds per relaunch of an empty kernel, the alternative to an in-dispatch barrier.
    pub relaunch_us: f64,
    /// The kernel's status word after the last run.
    pub status: Status,
    /// The adapter's assessed capability; a refused blocking tier is measured anyway.
    pub probe: Option<Capability>,
}

/// Barrier latency at each workgroup count: (time of `iters` barriers - time of 0) / iters,
/// beside the per-dispatch time of relaunching an empty kernel.
#[cfg(not(target_arch = "wasm32"))]
pub fn bench_barrier(
    gpu: &Gpu,
    rt: &Runtime,
    workgroups: &[u32],
    kinds: &[BarrierKind],
    iters: u32,
    protocol: &Protocol,
) -> Result<Vec<Record>> {
    // a refused blocking tier is measured anyway (every wait is bounded); the record's
    // "probe" says so
    rt.capability(gpu)?;
    let mut records = Vec::new();
    for (&w, &kind) in workgroups.iter().flat_map(|w| kinds.iter().map(move |k| (w, k))) {
        let mut last = None;
        let per = harness::measure(protocol, || {
            let full = barrier(gpu, rt, w, iters, kind)?;
            let empty = barrier(gpu, rt, w, 0, kind)?;
            if full.status.aborted() {
                return Err(full.status.error(&format!("barrier at {w} workgroups"), &gpu.adapter_name(), full.seconds));
            }
            let s = (full.seconds - empty.seconds).max(0.0) / iters.max(1) as f64;
            let source =
                if gpu.caps().timestamps { crate::gpu::TimingSource::DeviceTimestamps } else { crate::gpu::TimingSource::WallClock };
            last = Some(full);
            Ok(crate::gpu::Timing { seconds: s, source, wall_seconds: s })
        })?;
        let run = last.ok_or_else(|| Error::invalid("barrier", "no samples"))?;
        let check = Check::exact(&[run.stale_messages, run.completed], &[0, iters]);
        let relaunch_s = relaunch(gpu, w, iters)? / iters.max(1) as f64;
        let value = per.median * 1e6;
        records.push(record(
            gpu,
            "barrier",
            format!("{w} workgroups ({} participants), {}", run.participants, kind.name()),
            serde_json::json!({ "workgroups": w, "iterations": iters, "fence": kind.fence, "arrival": kind.arrival }),
            per,
            check,
            Throughput { value, unit: "us/barrier".into() },
            BarrierExtra { participants: run.participants, relaunch_us: relaunch_s * 1e6, status: run.status, probe: rt.assessed() },
        ));
    }
    Ok(records)
}
