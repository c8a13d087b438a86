//! Work recorded into a caller's encoder and checked after readback ([`Recording`]: what every
//! registry workload prepares, `workload::Workload::prepare`), and beneath it the one contract
//! of a kernel's prepared run ([`PreparedRun`]), which every kernel family and the
//! persistent-threads queue implement and [`Checked`] records with its check. Both live here,
//! beneath the kernels, since they need only the GPU, a [`Check`] and the probe's counts.

use super::{Gpu, Step};
use crate::error::Result;
use crate::harness::Check;
#[cfg(not(target_arch = "wasm32"))]
use {super::Timing, crate::divergence::Divergence};

/// A workload's inputs uploaded and its kernels bound, recorded into the caller's encoder as
/// often as wanted: nothing here submits or waits.
pub trait Recording {
    /// Records the dispatches into `encoder`.
    fn record(&self, gpu: &Gpu, encoder: &mut wgpu::CommandEncoder);
    /// The buffers holding the results, each with the bytes to read back (a multiple of 4).
    fn outputs(&self) -> Vec<(&wgpu::Buffer, u64)>;
    /// Checks the bytes read back from [`Recording::outputs`], in their order, against the
    /// CPU reference.
    fn check(&self, outputs: &[Vec<u8>]) -> Check;
}

/// A kernel's inputs uploaded and its kernels bound: the timed work as steps, the buffers
/// its check reads, and the probe's counts.
pub trait PreparedRun {
    /// The timed GPU work, to run or to record into a caller's encoder.
    fn steps(&self) -> Vec<Step<'_>>;
    /// The buffers the check reads, in its order, each with the bytes to read (a multiple of 4).
    fn outputs(&self) -> Vec<(&wgpu::Buffer, u64)>;
    /// The GPU probe's counts after a run prepared with the probe (`None` without it).
    #[cfg(not(target_arch = "wasm32"))]
    fn divergence(&self, gpu: &Gpu) -> Result<Option<Divergence>>;
    /// Runs the steps once, timed.
    #[cfg(not(target_arch = "wasm32"))]
    fn dispatch(&self, gpu: &Gpu) -> Result<Timing> {
        gpu.run(&self.steps(), true)
    }
}

/// Any prepared run beside the check of what it writes against the CPU reference: the one
/// [`Recording`] of the kernel families and the persistent-threads queue, recorded from
/// [`PreparedRun::steps`] and read back from [`PreparedRun::outputs`].
pub struct Checked<P> {
    prepared: P,
    check: Box<CheckOutputs>,
}

/// Compares the bytes read back from a prepared run's outputs with the reference.
type CheckOutputs = dyn Fn(&[Vec<u8>]) -> Check;

impl<P: PreparedRun> Checked<P> {
    /// `prepared`, whose outputs (read back in [`PreparedRun::outputs`]' order) `check` compares
    /// with the reference.
    pub fn new(prepared: P, check: impl Fn(&[Vec<u8>]) -> Check + 'static) -> Self {
        Checked { prepared, check: Box::new(check) }
    }
}

impl<P: std::fmt::Debug> std::fmt::Debug for Checked<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checked").field("prepared", &self.prepared).finish_non_exhaustive()
    }
}

impl<P: PreparedRun> Recording for Checked<P> {
    fn record(&self, gpu: &Gpu, encoder: &mut wgpu::CommandEncoder) {
        gpu.record_into(encoder, &self.prepared.steps());
    }
    fn outputs(&self) -> Vec<(&wgpu::Buffer, u64)> {
        self.prepared.outputs()
    }
    fn check(&self, outputs: &[Vec<u8>]) -> Check {
        (self.check)(outputs)
    }
}

/// Records `recording` and the readback of its outputs into one encoder, submits it, and checks
/// what comes back against the CPU reference. Only awaits (never blocks): the path a browser
/// page takes, where the blocking `Workload::run` cannot wait.
pub async fn run_recording_async(gpu: &Gpu, recording: &dyn Recording) -> Result<Check> {
    let outputs = read_recording_async(gpu, recording).await?;
    Ok(recording.check(&outputs))
}

/// The GPU part of [`run_recording_async`]: records `recording` and the readback of its outputs
/// into one encoder, submits it and returns the bytes read back, unchecked (a page times this
/// part alone, then checks).
pub async fn read_recording_async(gpu: &Gpu, recording: &dyn Recording) -> Result<Vec<Vec<u8>>> {
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    recording.record(gpu, &mut encoder);
    let reads: Vec<_> = recording.outputs().into_iter().map(|(buffer, bytes)| gpu.record_read(&mut encoder, buffer, bytes)).collect();
    let commands = gpu.checked("recording a workload and its readback", || encoder.finish()).await?;
    gpu.submit(commands, "running a workload and its readback")?;
    let mut outputs = Vec::with_capacity(reads.len());
    for read in reads {
        outputs.push(read.map().finish_async(gpu).await?);
    }
    Ok(outputs)
}
