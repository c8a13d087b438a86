//! Work recorded into a caller's encoder and checked after readback: what every registry
//! workload prepares (`workload::Workload::prepare`) and what the kernel families implement.
//! It lives here, beneath them, since it needs only the GPU and a [`Check`].

use super::Gpu;
use crate::error::Result;
use crate::harness::Check;

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
