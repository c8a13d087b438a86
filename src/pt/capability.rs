//! The capability check that gates the blocking tier on an adapter ([`assess`]): occupancy
//! discovery, then global barriers among the discovered workgroups with a cross-workgroup
//! message-passing check through atomics (`shaders/pt/capability.wgsl`). Every wait is bounded,
//! so a GPU that starves spinning workgroups makes the check fail (abort), not hang.

use super::launch::PtOptions;
use super::{Control, PtConfig};
use crate::error::{Error, Result};
use crate::gpu::shader::{registry, Entry};
use crate::gpu::{Bind, BufferKind, Gpu, Step, Timing};
use serde::{Deserialize, Serialize};

/// Barriers of the capability check on drivers with a loop-iteration limit.
const LOOP_LIMITED_ITERATIONS: u32 = 32;

/// What [`assess`] found on an adapter, and its verdict on the blocking tier.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Capability {
    /// Name of the adapter checked.
    pub adapter: String,
    /// Co-resident 256-invocation workgroups found by discovery.
    pub discovered: u32,
    /// Workgroups dispatched for discovery.
    pub discovery_launch: u32,
    /// Workgroups that arrived after the poll closed.
    pub late: u32,
    /// Polls without a new arrival before the discovery poll closed ([`PtConfig::grace`]).
    pub grace: u32,
    /// Most polls one wait could take ([`PtConfig::spin_cap`]).
    pub spin_cap: u32,
    /// Wall-clock seconds of the discovery kernel.
    pub discovery_seconds: f64,
    /// Barrier check: workgroups that took part (the discovered ones).
    pub barrier_participants: u32,
    /// Barrier check: barriers asked for (fewer on drivers with a loop-iteration limit).
    pub barrier_iterations: u32,
    /// Barrier check: barriers completed; must equal `barrier_iterations`.
    pub barrier_completed: u32,
    /// Barrier check: stale cross-workgroup messages seen; must be 0.
    pub stale_messages: u32,
    /// Wall-clock seconds of the barrier check.
    pub barrier_seconds: f64,
    /// The verdict: the blocking tier may run on this adapter.
    pub blocking_ok: bool,
    /// Why not, when it may not.
    pub reason: Option<String>,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct CheckParams {
    iters: u32,
    pad: [u32; 3],
}

/// Runs one kernel of `pt/capability.wgsl` (`discover`, or `barrier` compiled with `defines`)
/// over `launch` workgroups and `iters` barriers: the result words (participants, stale
/// messages, barriers completed), the decoded status and the run's timing (device timestamps
/// where `timed` and available).
pub(super) async fn run_check(
    gpu: &Gpu,
    entry: Entry,
    defines: &[&str],
    iters: u32,
    config: PtConfig,
    timed: bool,
) -> Result<([u32; 3], super::Status, Timing)> {
    let launch = config.launched;
    let kernel = gpu.kernel(entry, defines)?;
    let control = Control::new(gpu, config)?;
    let result = gpu.buffer_zeroed::<u32>("check result", 4, BufferKind::Storage)?;
    let messages = gpu.buffer_zeroed::<u32>("check messages", 2 * launch as usize, BufferKind::Storage)?;
    let params = gpu.buffer("check params", &[CheckParams { iters, pad: [0; 3] }], BufferKind::Uniform)?;
    use crate::gpu::shader::registry::pt::capability::binding as slot;
    let mut slots: Vec<(u32, &dyn Bind)> = vec![(slot::RESULT, &result), (slot::MESSAGES, &messages), (slot::PARAMS, &params)];
    slots.extend(control.slots());
    let bind = kernel.bind_at(gpu, &slots)?;
    let timing = gpu.run_async(&[control.reset(), Step::dispatch(&kernel, &bind, [launch, 1, 1])], timed).await?;
    let r = gpu.read_async(&result).await?;
    Ok(([r[0], r[1], r[2]], control.status_async(gpu).await?, timing))
}

/// Checks what `gpu` can do (blocking; see [`assess_async`]).
#[cfg(not(target_arch = "wasm32"))]
pub fn assess(gpu: &Gpu, options: &PtOptions, grace: u32) -> Result<Capability> {
    crate::gpu::block_on(assess_async(gpu, options, grace))
}

/// Checks what `gpu` can do. Errors only when the check cannot be set up; a failing capability
/// is a `Capability` with `blocking_ok == false` and a reason.
pub async fn assess_async(gpu: &Gpu, options: &PtOptions, grace: u32) -> Result<Capability> {
    let max = gpu.caps().max_compute_workgroups_per_dimension;
    let launch = options.discovery_launch.clamp(1, max);
    let config = PtConfig { spin_cap: options.spin_cap.max(1), grace, flags: 0, launched: launch, capacity: 0, heads: 1, chunk: 1, pad: 0 };
    let mut cap = Capability {
        adapter: gpu.adapter_name(),
        discovered: 0,
        discovery_launch: launch,
        late: 0,
        grace,
        spin_cap: config.spin_cap,
        discovery_seconds: 0.0,
        barrier_participants: 0,
        // A driver that caps an invocation's loop iterations (llvmpipe: 65535 in all) counts
        // every poll of every barrier: with the CPU's threads descheduled now and then, 256
        // barriers can use that budget up. Fewer barriers check the same thing there.
        barrier_iterations: match gpu.loop_iteration_limit() {
            Some(_) => options.capability_iterations.min(LOOP_LIMITED_ITERATIONS),
            None => options.capability_iterations,
        },
        barrier_completed: 0,
        stale_messages: 0,
        barrier_seconds: 0.0,
        blocking_ok: false,
        reason: None,
    };
    // wgpu's GL backend runs compute through GLSL, whose storage-memory semantics between
    // invocations are weaker than Vulkan's model; the forest ring queue gave wrong answers
    // there (Mesa llvmpipe GL) while every capability check passed, so blocking PT stays off on GL.
    if gpu.info().backend == wgpu::Backend::Gl {
        cap.reason = Some(
            "the GL backend gives no cross-invocation memory model strong enough for blocking queues; use Vulkan, Metal or DX12".into(),
        );
        return Ok(cap);
    }
    let host_failure = |e: Error| match e {
        e @ (Error::Timeout { .. } | Error::Gpu { .. }) => Ok(e.to_string()),
        e => Err(e),
    };

    match run_check(gpu, registry::pt::capability::DISCOVER, &[], 0, config, false).await {
        Ok((r, status, timing)) => {
            cap.discovered = status.discovered;
            cap.late = status.late;
            cap.discovery_seconds = timing.wall_seconds;
            if let Some(a) = status.abort {
                cap.reason = Some(format!("discovery aborted: {}", a.describe()));
                return Ok(cap);
            }
            if status.discovered == 0 || r[0] != status.discovered {
                cap.reason = Some(format!("discovery found {} workgroups but {} reported in", status.discovered, r[0]));
                return Ok(cap);
            }
        }
        Err(e) => {
            cap.reason = Some(format!("discovery kernel failed: {}", host_failure(e)?));
            return Ok(cap);
        }
    }

    let launch = cap.discovered;
    let config = PtConfig { launched: launch, ..config };
    let iterations = cap.barrier_iterations;
    match run_check(gpu, registry::pt::capability::BARRIER, &[], iterations, config, false).await {
        Ok((r, status, timing)) => {
            cap.barrier_participants = r[0];
            cap.stale_messages = r[1];
            cap.barrier_completed = r[2];
            cap.barrier_seconds = timing.wall_seconds;
            if let Some(a) = status.abort {
                cap.reason = Some(format!("barrier check aborted: {}", a.describe()));
            } else if r[1] != 0 {
                cap.reason = Some(format!("{} stale cross-workgroup messages through atomics", r[1]));
            } else if r[2] != iterations {
                cap.reason = Some(format!("{} of {iterations} barriers completed", r[2]));
            } else {
                cap.blocking_ok = true;
            }
        }
        Err(e) => cap.reason = Some(format!("barrier kernel failed: {}", host_failure(e)?)),
    }
    Ok(cap)
}
