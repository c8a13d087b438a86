//! Submitting a sequence of steps and timing it: device timestamps around the compute passes
//! when TIMESTAMP_QUERY is present, wall clock around submit + wait otherwise.

use super::buffer::Bind;
use super::{Gpu, Kernel};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use web_time::Instant;

/// Most repetitions of one timed run (see [`Gpu::set_min_timed_seconds`]).
const MAX_REPEATS: usize = 1000;

/// Which clock a [`Timing`] was taken with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimingSource {
    /// GPU timestamp queries around the compute passes.
    DeviceTimestamps,
    /// Host clock around submit and completion (includes submission overhead).
    WallClock,
}

/// How long one timed run of steps took.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Timing {
    /// The measured time of the steps: device time when `source` says so.
    pub seconds: f64,
    /// Which clock `seconds` comes from.
    pub source: TimingSource,
    /// Host time from submit to completion, always recorded.
    pub wall_seconds: f64,
}

/// The bind groups a [`Step::Dispatch`] sets.
#[derive(Clone, Copy, Debug)]
pub enum BindGroups<'a> {
    /// Group 0 only.
    Zero(&'a wgpu::BindGroup),
    /// Each `(group number, bind group)`.
    Numbered(&'a [(u32, &'a wgpu::BindGroup)]),
}

/// One piece of GPU work. Consecutive dispatches share one compute pass (wgpu orders them and
/// makes earlier storage writes visible to later dispatches).
#[derive(Clone, Copy, Debug)]
pub enum Step<'a> {
    /// A compute dispatch with a grid known on the host.
    Dispatch {
        /// The pipeline to run.
        kernel: &'a Kernel,
        /// The bind groups it runs with.
        groups: BindGroups<'a>,
        /// Immediate data set at offset 0 before the dispatch (`var<immediate>`; empty: none).
        immediates: &'a [u8],
        /// Workgroup counts (x, y, z).
        workgroups: [u32; 3],
    },
    /// A compute dispatch whose workgroup counts the GPU reads from a buffer.
    DispatchIndirect {
        /// The pipeline to run.
        kernel: &'a Kernel,
        /// Bind group 0.
        bind: &'a wgpu::BindGroup,
        /// Buffer holding three `u32` workgroup counts (an [`BufferKind::Indirect`](super::BufferKind::Indirect) buffer).
        args: &'a wgpu::Buffer,
        /// Byte offset of the counts in `args` (a multiple of 4).
        offset: u64,
    },
    /// A buffer-to-buffer copy from offset 0 to offset 0.
    Copy {
        /// Source buffer.
        from: &'a wgpu::Buffer,
        /// Destination buffer.
        to: &'a wgpu::Buffer,
        /// Bytes to copy (a multiple of 4).
        bytes: u64,
    },
    /// A whole texture copied onto another of the same size and format (mip level 0).
    CopyTexture {
        /// Source texture.
        from: &'a wgpu::Texture,
        /// Destination texture.
        to: &'a wgpu::Texture,
    },
    /// Zeroes a whole buffer.
    Clear {
        /// The buffer to zero.
        buffer: &'a wgpu::Buffer,
    },
}

impl<'a> Step<'a> {
    /// A dispatch of `workgroups` (x, y, z) of `kernel` with bind group 0 = `bind`.
    pub fn dispatch(kernel: &'a Kernel, bind: &'a wgpu::BindGroup, workgroups: [u32; 3]) -> Self {
        Step::Dispatch { kernel, groups: BindGroups::Zero(bind), immediates: &[], workgroups }
    }

    /// A dispatch of `workgroups` (x, y, z) of `kernel` with each `(group number, bind group)`
    /// of `groups` (see [`Kernel::bind_group`]).
    pub fn dispatch_groups(kernel: &'a Kernel, groups: &'a [(u32, &'a wgpu::BindGroup)], workgroups: [u32; 3]) -> Self {
        Step::Dispatch { kernel, groups: BindGroups::Numbered(groups), immediates: &[], workgroups }
    }

    /// This dispatch with `bytes` of immediate data at offset 0 (needs
    /// `wgpu::Features::IMMEDIATES`); other steps are returned as they are.
    pub fn with_immediates(self, bytes: &'a [u8]) -> Self {
        match self {
            Step::Dispatch { kernel, groups, workgroups, .. } => Step::Dispatch { kernel, groups, immediates: bytes, workgroups },
            other => other,
        }
    }

    /// Copies the first `bytes` bytes of `from` to the start of `to`.
    pub fn copy(from: &'a dyn Bind, to: &'a dyn Bind, bytes: u64) -> Self {
        Step::Copy { from: from.wgpu_buffer(), to: to.wgpu_buffer(), bytes }
    }

    /// Copies the whole of texture `from` onto `to` (e.g. restoring a written texture from
    /// its initial contents).
    pub fn copy_texture(from: &'a wgpu::Texture, to: &'a wgpu::Texture) -> Self {
        Step::CopyTexture { from, to }
    }

    /// Zeroes the whole buffer.
    pub fn clear(buffer: &'a dyn Bind) -> Self {
        Step::Clear { buffer: buffer.wgpu_buffer() }
    }

    fn is_pass_work(&self) -> bool {
        matches!(self, Step::Dispatch { .. } | Step::DispatchIndirect { .. })
    }
}

impl Gpu {
    /// Workgroup grid covering `items` items at `workgroup_size` per group: 1D while it fits
    /// `max_compute_workgroups_per_dimension`, else 2D (kernels linearise with `#import grid`).
    pub fn grid(&self, items: u64, workgroup_size: u32) -> Result<[u32; 3]> {
        let groups = items.div_ceil(workgroup_size as u64).max(1);
        let max = self.caps.max_compute_workgroups_per_dimension as u64;
        if groups <= max {
            return Ok([groups as u32, 1, 1]);
        }
        let rows = groups.div_ceil(max);
        if rows > max {
            return Err(Error::Limit {
                what: format!("dispatch of {items} items in workgroups of {workgroup_size}"),
                requested: groups,
                limit: max * max,
                hint: "split the problem into chunks".into(),
            });
        }
        Ok([groups.div_ceil(rows) as u32, rows as u32, 1])
    }

    /// Records and submits `steps`, waits for them (bounded by the timeout) and times them
    /// (blocking; see [`Gpu::run_async`]).
    #[track_caller]
    #[cfg(not(target_arch = "wasm32"))]
    pub fn run(&self, steps: &[Step], timed: bool) -> Result<Timing> {
        super::block_on(self.run_async(steps, timed))
    }

    /// Records and submits `steps`, waits for them (bounded by the timeout) and times them;
    /// short timed runs are repeated per [`Gpu::set_min_timed_seconds`].
    pub async fn run_async(&self, steps: &[Step<'_>], timed: bool) -> Result<Timing> {
        let once = self.run_once_async(steps, timed).await?;
        let min = self.min_timed_seconds();
        if !timed || min <= 0.0 || once.source != TimingSource::DeviceTimestamps || once.seconds >= min || once.seconds <= 0.0 {
            return Ok(once);
        }
        let copies = ((min / once.seconds).ceil() as usize).clamp(2, MAX_REPEATS);
        let repeated: Vec<Step> = steps.iter().cycle().take(steps.len() * copies).copied().collect();
        let t = self.run_once_async(&repeated, true).await?;
        Ok(Timing { seconds: t.seconds / copies as f64, source: t.source, wall_seconds: t.wall_seconds / copies as f64 })
    }

    /// Like [`Gpu::run`], but runs the steps exactly once whatever
    /// [`Gpu::set_min_timed_seconds`] says: for work whose results are used (a search's
    /// pool), where repeating it would only add time (blocking; see [`Gpu::run_once_async`]).
    #[track_caller]
    #[cfg(not(target_arch = "wasm32"))]
    pub fn run_once(&self, steps: &[Step], timed: bool) -> Result<Timing> {
        super::block_on(self.run_once_async(steps, timed))
    }

    /// Runs `steps` exactly once and times them (see [`Gpu::run_once`]).
    pub async fn run_once_async(&self, steps: &[Step<'_>], timed: bool) -> Result<Timing> {
        let use_timestamps = timed && self.caps.timestamps && steps.iter().any(Step::is_pass_work);
        let queries = use_timestamps.then(|| {
            let set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("simtlab timing"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let resolve = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            (set, resolve)
        });
        let commands = self
            .checked("recording GPU work", || {
                let mut encoder = self.record(steps, queries.as_ref().map(|(set, _)| set));
                if let Some((set, resolve)) = &queries {
                    encoder.resolve_query_set(set, 0..2, resolve, 0);
                }
                encoder.finish()
            })
            .await?;
        let t0 = Instant::now();
        let index = self.submit(commands, "running GPU work")?;
        self.settle(Some(index), "running GPU work").await?;
        let wall_seconds = t0.elapsed().as_secs_f64();

        match &queries {
            Some((_, resolve)) => {
                let raw = self.read_bytes_async(resolve, 16).await?;
                let ticks: [u64; 2] = bytemuck::pod_read_unaligned(&raw[..16]);
                let ns = ticks[1].saturating_sub(ticks[0]) as f64 * self.queue.get_timestamp_period() as f64;
                Ok(Timing { seconds: ns * 1e-9, source: TimingSource::DeviceTimestamps, wall_seconds })
            }
            None => Ok(Timing { seconds: wall_seconds, source: TimingSource::WallClock, wall_seconds }),
        }
    }

    /// `steps` recorded into a new encoder, untimed and not submitted: for work submitted
    /// together with something else, e.g. its readback through [`Gpu::submit_read`].
    pub fn encode(&self, steps: &[Step]) -> wgpu::CommandEncoder {
        self.record(steps, None)
    }

    /// Records `steps` into the caller's `encoder` (an app's frame encoder): nothing is
    /// submitted and nothing waits.
    pub fn record_into(&self, encoder: &mut wgpu::CommandEncoder, steps: &[Step]) {
        record_steps(encoder, steps, None);
    }

    /// Records `steps` into a new encoder ([`record_steps`]).
    fn record(&self, steps: &[Step], timestamps: Option<&wgpu::QuerySet>) -> wgpu::CommandEncoder {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        record_steps(&mut encoder, steps, timestamps);
        encoder
    }
}

/// Records `steps`, consecutive pass work in one compute pass; with `timestamps`, query 0 is
/// written at the start of the first pass and query 1 at the end of the last.
fn record_steps(encoder: &mut wgpu::CommandEncoder, steps: &[Step], timestamps: Option<&wgpu::QuerySet>) {
    let first_pass = steps.iter().position(Step::is_pass_work);
    let last_pass = steps.iter().rposition(Step::is_pass_work);
    let mut i = 0;
    while i < steps.len() {
        match &steps[i] {
            Step::Copy { from, to, bytes } => {
                encoder.copy_buffer_to_buffer(from, 0, to, 0, *bytes);
                i += 1;
            }
            Step::CopyTexture { from, to } => {
                encoder.copy_texture_to_texture(from.as_image_copy(), to.as_image_copy(), to.size());
                i += 1;
            }
            Step::Clear { buffer } => {
                encoder.clear_buffer(buffer, 0, None);
                i += 1;
            }
            _ => {
                let start = i;
                while i < steps.len() && steps[i].is_pass_work() {
                    i += 1;
                }
                let timestamp_writes = timestamps.map(|set| wgpu::ComputePassTimestampWrites {
                    query_set: set,
                    beginning_of_pass_write_index: (Some(start) == first_pass).then_some(0),
                    end_of_pass_write_index: (last_pass.is_some_and(|l| l < i)).then_some(1),
                });
                let timestamp_writes =
                    timestamp_writes.filter(|w| w.beginning_of_pass_write_index.is_some() || w.end_of_pass_write_index.is_some());
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("simtlab"), timestamp_writes });
                for step in &steps[start..i] {
                    match step {
                        Step::Dispatch { kernel, groups, immediates, workgroups } => {
                            pass.set_pipeline(&kernel.pipeline);
                            match groups {
                                BindGroups::Zero(bind) => pass.set_bind_group(0, Some(*bind), &[]),
                                BindGroups::Numbered(groups) => {
                                    for (g, bind) in groups.iter() {
                                        pass.set_bind_group(*g, Some(*bind), &[]);
                                    }
                                }
                            }
                            if !immediates.is_empty() {
                                pass.set_immediates(0, immediates);
                            }
                            pass.dispatch_workgroups(workgroups[0], workgroups[1], workgroups[2]);
                        }
                        Step::DispatchIndirect { kernel, bind, args, offset } => {
                            pass.set_pipeline(&kernel.pipeline);
                            pass.set_bind_group(0, Some(*bind), &[]);
                            pass.dispatch_workgroups_indirect(args, *offset);
                        }
                        _ => unreachable!("only pass work is grouped"),
                    }
                }
            }
        }
    }
}
