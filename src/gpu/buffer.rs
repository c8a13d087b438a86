//! Typed buffers with limit checks, uploads and readback with a timeout.

use super::Gpu;
use crate::error::{Error, Result};
use futures::channel::oneshot;
use std::marker::PhantomData;
use wgpu::util::DeviceExt;

/// How a buffer may be bound, which sets its wgpu usages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferKind {
    /// Read-write storage, also a copy source/destination.
    Storage,
    /// Uniform data, written from the host only.
    Uniform,
    /// Storage that also holds indirect dispatch arguments.
    Indirect,
}

impl BufferKind {
    fn usages(self) -> wgpu::BufferUsages {
        use wgpu::BufferUsages as U;
        match self {
            BufferKind::Storage => U::STORAGE | U::COPY_SRC | U::COPY_DST,
            BufferKind::Uniform => U::UNIFORM | U::COPY_DST,
            BufferKind::Indirect => U::STORAGE | U::INDIRECT | U::COPY_SRC | U::COPY_DST,
        }
    }
}

/// A device buffer of `len` values of `T`.
#[derive(Debug)]
pub struct GpuBuffer<T> {
    /// The wgpu buffer, for bind groups and copies.
    pub buffer: wgpu::Buffer,
    /// Number of `T` values it holds.
    pub len: usize,
    /// How it may be bound.
    pub kind: BufferKind,
    _t: PhantomData<T>,
}

/// Anything that can be bound as a buffer binding.
pub trait Bind {
    /// The buffer to bind.
    fn wgpu_buffer(&self) -> &wgpu::Buffer;
}

impl<T> Bind for GpuBuffer<T> {
    fn wgpu_buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }
}

impl Bind for wgpu::Buffer {
    fn wgpu_buffer(&self) -> &wgpu::Buffer {
        self
    }
}

impl<T> GpuBuffer<T> {
    /// Size on the device in bytes (may exceed `len * size_of::<T>()` after padding).
    pub fn bytes(&self) -> u64 {
        self.buffer.size()
    }
}

impl Gpu {
    /// Checks that `bytes` fits one binding of `kind` on this device.
    pub fn check_buffer_size(&self, label: &str, bytes: u64, kind: BufferKind) -> Result<()> {
        let (limit, what) = match kind {
            BufferKind::Uniform => (self.device.limits().max_uniform_buffer_binding_size, "uniform binding"),
            _ => (self.caps.max_storage_buffer_binding_size, "max_storage_buffer_binding_size"),
        };
        let limit = limit.min(self.caps.max_buffer_size);
        if bytes > limit {
            return Err(Error::Limit {
                what: format!("buffer '{label}' of {bytes} bytes ({what})"),
                requested: bytes,
                limit,
                hint: format!("use a smaller problem size or split it into chunks on {}", self.adapter_name()),
            });
        }
        Ok(())
    }

    /// Uploads `data` into a new buffer. Empty data gets a 4-byte buffer (bindings cannot be empty).
    pub fn buffer<T: bytemuck::Pod>(&self, label: &str, data: &[T], kind: BufferKind) -> Result<GpuBuffer<T>> {
        self.check_not_abandoned("creating a buffer")?;
        let bytes: &[u8] = bytemuck::cast_slice(data);
        self.check_buffer_size(label, bytes.len() as u64, kind)?;
        let padded;
        let contents = if !bytes.len().is_multiple_of(4) || bytes.is_empty() {
            let mut v = bytes.to_vec();
            v.resize(bytes.len().div_ceil(4).max(1) * 4, 0);
            padded = v;
            &padded[..]
        } else {
            bytes
        };
        let buffer =
            self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents, usage: kind.usages() });
        Ok(GpuBuffer { buffer, len: data.len(), kind, _t: PhantomData })
    }

    /// A new zero-filled buffer of `len` values.
    pub fn buffer_zeroed<T: bytemuck::Pod>(&self, label: &str, len: usize, kind: BufferKind) -> Result<GpuBuffer<T>> {
        self.check_not_abandoned("creating a buffer")?;
        let bytes = (len * std::mem::size_of::<T>()) as u64;
        self.check_buffer_size(label, bytes, kind)?;
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.max(4).next_multiple_of(4),
            usage: kind.usages(),
            mapped_at_creation: false,
        });
        Ok(GpuBuffer { buffer, len, kind, _t: PhantomData })
    }

    /// Overwrites the start of `buffer` with `data`.
    pub fn write<T: bytemuck::Pod>(&self, buffer: &GpuBuffer<T>, data: &[T]) -> Result<()> {
        if data.len() > buffer.len {
            return Err(Error::invalid("write", format!("{} values into a buffer of {}", data.len(), buffer.len)));
        }
        self.queue.write_buffer(&buffer.buffer, 0, bytemuck::cast_slice(data));
        Ok(())
    }

    /// Copies the whole buffer back to the host (blocking; see [`Gpu::read_async`]).
    #[track_caller]
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read<T: bytemuck::Pod>(&self, buffer: &GpuBuffer<T>) -> Result<Vec<T>> {
        super::block_on(self.read_async(buffer))
    }

    /// Copies the whole buffer back to the host.
    pub async fn read_async<T: bytemuck::Pod>(&self, buffer: &GpuBuffer<T>) -> Result<Vec<T>> {
        let bytes = (buffer.len * std::mem::size_of::<T>()) as u64;
        let raw = self.read_bytes_async(&buffer.buffer, bytes.next_multiple_of(4)).await?;
        Ok(bytemuck::pod_collect_to_vec(&raw[..bytes as usize]))
    }

    /// Copies the first `bytes` (multiple of 4) of `buffer` to the host (blocking; see
    /// [`Gpu::read_bytes_async`]).
    #[track_caller]
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read_bytes(&self, buffer: &wgpu::Buffer, bytes: u64) -> Result<Vec<u8>> {
        super::block_on(self.read_bytes_async(buffer, bytes))
    }

    /// Copies the first `bytes` (multiple of 4) of `buffer` to the host, waiting at most the
    /// GPU's timeout on native backends.
    pub async fn read_bytes_async(&self, buffer: &wgpu::Buffer, bytes: u64) -> Result<Vec<u8>> {
        if bytes == 0 {
            return Ok(Vec::new());
        }
        let staging = self.readback_buffer("readback", bytes);
        let encoder = self.device.create_command_encoder(&Default::default());
        self.submit_read(encoder, buffer, &staging, bytes)?.finish_async(self).await
    }

    /// A mappable buffer of `bytes` to read results back through ([`Gpu::submit_read`]).
    pub fn readback_buffer(&self, label: &str, bytes: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Submits `encoder`'s work followed by a copy of the first `bytes` of `buffer` into
    /// `staging` (from [`Gpu::readback_buffer`]), requests the mapping and returns at once:
    /// the host can work while the GPU runs, then [`PendingRead::finish`] waits and reads.
    pub fn submit_read(
        &self,
        encoder: wgpu::CommandEncoder,
        buffer: &wgpu::Buffer,
        staging: &wgpu::Buffer,
        bytes: u64,
    ) -> Result<PendingRead> {
        self.submit_read_at(encoder, buffer, 0, staging, bytes)
    }

    /// As [`Gpu::submit_read`], of the `bytes` of `buffer` from byte `offset` (a multiple of 4).
    pub fn submit_read_at(
        &self,
        mut encoder: wgpu::CommandEncoder,
        buffer: &wgpu::Buffer,
        offset: u64,
        staging: &wgpu::Buffer,
        bytes: u64,
    ) -> Result<PendingRead> {
        let commands = self.checked_now("recording work and its readback", || {
            encoder.copy_buffer_to_buffer(buffer, offset, staging, 0, bytes);
            encoder.finish()
        })?;
        let submission = self.submit(commands, "submitting work and its readback")?;
        Ok(PendingRead::map(staging.clone(), Some(submission), bytes))
    }

    /// After a timeout: the device and queue are never destroyed, because destroying them
    /// waits, without any bound, for the work still running. The caller gets its error now;
    /// the handles live until the process ends, and later submissions and waits on this
    /// device fail at once instead of queueing behind the hung work.
    fn abandon_pending_work(&self) {
        std::mem::forget(self.device.clone());
        std::mem::forget(self.queue.clone());
        self.abandoned.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    fn timeout_error(&self, what: &str) -> Error {
        Error::Timeout {
            what: what.to_string(),
            seconds: self.timeout.as_secs_f64(),
            hint:
                "a kernel may be spinning; persistent-thread kernels abort through their status word, use a lower `tier` or a smaller size"
                    .into(),
        }
    }

    /// An error when an earlier submission timed out: that work still runs, and on GL it
    /// holds the driver's context, so anything new would wait behind it without a bound.
    fn check_not_abandoned(&self, what: &str) -> Result<()> {
        if self.abandoned.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(Error::gpu(
                what,
                format!(
                    "an earlier submission on {} did not finish within its timeout and still runs; open a new Gpu (or end the process) to go on",
                    self.adapter_name()
                ),
            ));
        }
        Ok(())
    }

    /// Submits `commands`, returning within the timeout. wgpu's GL backend runs the commands
    /// inside `submit`, and GL drivers that execute compute synchronously (llvmpipe) return
    /// from it only when the kernel ends, so no wait afterwards could bound it: there the
    /// submission runs on a helper thread and a submission still running after the timeout
    /// is [`Error::Timeout`] (the thread finishes on its own when the kernel does).
    pub fn submit(&self, commands: wgpu::CommandBuffer, what: &str) -> Result<wgpu::SubmissionIndex> {
        self.check_not_abandoned(what)?;
        if self.cancel_requested() {
            return Err(Error::Cancelled { what: what.to_string(), kept: "the work submitted before it finished".into() });
        }
        #[cfg(not(target_arch = "wasm32"))]
        if self.info.backend == wgpu::Backend::Gl {
            use std::sync::mpsc::RecvTimeoutError;
            let queue = self.queue.clone();
            let (sender, submitted) = std::sync::mpsc::channel();
            std::thread::Builder::new()
                .name("simtlab GL submit".into())
                .spawn(move || {
                    let _ = sender.send(queue.submit([commands]));
                })
                .map_err(|e| Error::gpu(what, e))?;
            return match submitted.recv_timeout(self.timeout) {
                Ok(index) => Ok(index),
                Err(RecvTimeoutError::Timeout) => {
                    self.abandon_pending_work();
                    Err(self.timeout_error(what))
                }
                Err(RecvTimeoutError::Disconnected) => Err(Error::gpu(what, "the GL submission thread ended without submitting")),
            };
        }
        Ok(self.queue.submit([commands]))
    }

    /// Waits for `submission` (or all work): on native backends by driving the device, at
    /// most `self.timeout`; in the browser by awaiting the queue's completion callback.
    pub(crate) async fn settle(&self, submission: Option<wgpu::SubmissionIndex>, what: &str) -> Result<()> {
        #[cfg(not(target_arch = "wasm32"))]
        return self.wait(submission, what);
        #[cfg(target_arch = "wasm32")]
        {
            let _ = submission;
            let (sender, done) = oneshot::channel();
            self.queue.on_submitted_work_done(move || {
                let _ = sender.send(());
            });
            done.await.map_err(|_| Error::gpu(what, "the device was lost"))
        }
    }

    /// Blocks until `submission` (or all work) finishes, at most `self.timeout`. The wait is
    /// made in slices of at most 2 s: wgpu's GL backend caps one fence wait near 2.1 s
    /// (`glClientWaitSync` takes an i32 of nanoseconds there) and would report a longer
    /// timeout as expired early.
    pub fn wait(&self, submission: Option<wgpu::SubmissionIndex>, what: &str) -> Result<()> {
        const SLICE: std::time::Duration = std::time::Duration::from_secs(2);
        self.check_not_abandoned(what)?;
        let deadline = web_time::Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(web_time::Instant::now());
            let poll = wgpu::PollType::Wait { submission_index: submission.clone(), timeout: Some(left.min(SLICE)) };
            match self.device.poll(poll) {
                Ok(_) => return Ok(()),
                Err(wgpu::PollError::Timeout) if left > SLICE => continue,
                Err(wgpu::PollError::Timeout) => {
                    self.abandon_pending_work();
                    return Err(self.timeout_error(what));
                }
                Err(other) => return Err(Error::gpu(what, other)),
            }
        }
    }
}

/// Work and a readback submitted by [`Gpu::submit_read`], not waited for yet.
#[derive(Debug)]
pub struct PendingRead {
    staging: wgpu::Buffer,
    /// None when the caller submitted the work ([`RecordedRead::map`]).
    submission: Option<wgpu::SubmissionIndex>,
    mapped: oneshot::Receiver<std::result::Result<(), wgpu::BufferAsyncError>>,
    bytes: u64,
}

impl PendingRead {
    /// Requests the mapping of `staging`'s first `bytes`.
    fn map(staging: wgpu::Buffer, submission: Option<wgpu::SubmissionIndex>, bytes: u64) -> PendingRead {
        let (sender, mapped) = oneshot::channel();
        staging.map_async(wgpu::MapMode::Read, ..bytes, move |r| {
            let _ = sender.send(r);
        });
        PendingRead { staging, submission, mapped, bytes }
    }

    /// Waits (at most the GPU's timeout) for the work and returns the bytes read back
    /// (blocking; see [`PendingRead::finish_async`]).
    #[track_caller]
    #[cfg(not(target_arch = "wasm32"))]
    pub fn finish(self, gpu: &Gpu) -> Result<Vec<u8>> {
        super::block_on(self.finish_async(gpu))
    }

    /// The bytes read back, once the work and the copy are done. On native backends the
    /// future drives the device itself (bounded by the GPU's timeout); in the browser the
    /// mapping completes on its own.
    pub async fn finish_async(self, gpu: &Gpu) -> Result<Vec<u8>> {
        self.finish_with_async(gpu, <[u8]>::to_vec).await
    }

    /// As [`PendingRead::finish`], handing the bytes to `read` where they lie instead of
    /// copying them out (for reads of many megabytes, where the copies cost more than the
    /// transfer).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn finish_with<T>(self, gpu: &Gpu, read: impl FnOnce(&[u8]) -> T) -> Result<T> {
        super::block_on(self.finish_with_async(gpu, read))
    }

    async fn finish_with_async<T>(self, gpu: &Gpu, read: impl FnOnce(&[u8]) -> T) -> Result<T> {
        gpu.settle(self.submission.clone(), "reading a buffer back").await?;
        let mapped = self.mapped.await.map_err(|_| Error::gpu("mapping a readback buffer", "the mapping was dropped"))?;
        mapped.map_err(|e| Error::gpu("mapping a readback buffer", e))?;
        with_mapped(&self.staging, self.bytes, read)
    }

    /// As [`PendingRead::finish`], calling `meanwhile` about every 100 µs until the work is
    /// done (for a caller with its own traffic to serve while the GPU runs), within the same
    /// bound: past the GPU's timeout the work is abandoned as [`Gpu::wait`] does.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn finish_polling(mut self, gpu: &Gpu, mut meanwhile: impl FnMut() -> Result<()>) -> Result<Vec<u8>> {
        const WHAT: &str = "reading a buffer back";
        gpu.check_not_abandoned(WHAT)?;
        let deadline = web_time::Instant::now() + gpu.timeout;
        loop {
            if let Some(bytes) = self.try_finish(gpu)? {
                return Ok(bytes);
            }
            if web_time::Instant::now() >= deadline {
                gpu.abandon_pending_work();
                return Err(gpu.timeout_error(WHAT));
            }
            meanwhile()?;
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }

    /// The bytes once the GPU has finished the work and the copy, `None` before. Never blocks:
    /// a frame loop calls it once per frame until it gives the bytes.
    pub fn try_finish(&mut self, gpu: &Gpu) -> Result<Option<Vec<u8>>> {
        gpu.device.poll(wgpu::PollType::Poll).map_err(|e| Error::gpu("polling the device", e))?;
        match self.mapped.try_recv() {
            Ok(None) => Ok(None),
            Err(oneshot::Canceled) => Err(Error::gpu("mapping a readback buffer", "the mapping was dropped")),
            Ok(Some(mapped)) => {
                mapped.map_err(|e| Error::gpu("mapping a readback buffer", e))?;
                mapped_bytes(&self.staging, self.bytes).map(Some)
            }
        }
    }
}

fn mapped_bytes(staging: &wgpu::Buffer, bytes: u64) -> Result<Vec<u8>> {
    with_mapped(staging, bytes, <[u8]>::to_vec)
}

/// `read` of the first `bytes` of the mapped `staging`, which is unmapped after.
fn with_mapped<T>(staging: &wgpu::Buffer, bytes: u64, read: impl FnOnce(&[u8]) -> T) -> Result<T> {
    let view = staging.get_mapped_range(..bytes).map_err(|e| Error::gpu("reading a mapped buffer", e))?;
    let out = read(&view);
    drop(view);
    staging.unmap();
    Ok(out)
}

/// A copy of a buffer into a mappable one, recorded into the caller's encoder
/// ([`Gpu::record_read`]); once the caller has submitted that encoder, [`RecordedRead::map`]
/// requests the mapping, and [`PendingRead::try_finish`] gives the bytes without blocking.
#[derive(Debug)]
pub struct RecordedRead {
    staging: wgpu::Buffer,
    bytes: u64,
}

impl RecordedRead {
    /// Call after submitting the encoder the copy was recorded into.
    pub fn map(self) -> PendingRead {
        PendingRead::map(self.staging, None, self.bytes)
    }
}

impl Gpu {
    /// Records a copy of the first `bytes` (a multiple of 4) of `buffer` into the caller's
    /// `encoder`, to read back after the caller submits it; nothing waits.
    pub fn record_read(&self, encoder: &mut wgpu::CommandEncoder, buffer: &wgpu::Buffer, bytes: u64) -> RecordedRead {
        let staging = self.readback_buffer("readback", bytes);
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
        RecordedRead { staging, bytes }
    }
}

impl std::fmt::Debug for dyn Bind + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bind").field("buffer", self.wgpu_buffer()).finish()
    }
}
