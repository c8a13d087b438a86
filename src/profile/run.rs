//! Running a user's shader plain and instrumented on a [`Gpu`] (the command line's path):
//! buffers from binding specs, one checked run of each (outputs compared byte for byte), then
//! timed runs of each from the same inputs.

use super::bindings::{contents_within, entry_bindings, BindingInfo, BindingSpec};
use super::counts::{decode, Counts};
use super::instrument::{instrument, parse_source, Counting, InstrumentOptions, Instrumented};
use super::sites::SiteKind;
use super::table::{summary, Summary};
use crate::divergence::EMULATION_WIDTH;
use crate::error::{Error, Result};
use crate::gpu::{BufferKind, DriverStatistics, Gpu, Timing, TimingSource};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use web_time::Instant;

/// What to profile and how.
#[derive(Clone, Debug)]
pub struct ProfileRequest<'a> {
    /// Name of the shader in messages (its path).
    pub file: &'a str,
    /// The shader's WGSL.
    pub wgsl: &'a str,
    /// The compute entry point.
    pub entry: &'a str,
    /// Workgroups to dispatch.
    pub workgroups: [u32; 3],
    /// `(binding key, contents)`: the key is the variable's name, `N` (group 0) or `G:N`.
    pub bindings: Vec<(String, BindingSpec)>,
    /// Emulate subgroups of this width on the host; None = the GPU's own subgroups, or
    /// [`EMULATION_WIDTH`] where the adapter has none.
    pub width: Option<u32>,
    /// Emulate on the host even at the native width (to compare with the GPU probe).
    pub emulate: bool,
    /// Outcomes each invocation may record when emulating.
    pub trace_events: u32,
    /// (group, binding) for the probe records; None = a free one.
    pub slot: Option<(u32, u32)>,
    /// Timed runs of each variant (the median is reported).
    pub samples: usize,
}

/// The result of [`profile`].
#[derive(Clone, Debug, Serialize)]
pub struct ProfileRun {
    /// The shader's name (its path).
    pub file: String,
    /// The entry point profiled.
    pub entry: String,
    /// The adapter it ran on.
    pub adapter: String,
    /// Workgroups dispatched and their size.
    pub workgroups: [u32; 3],
    /// The entry point's `@workgroup_size`.
    pub workgroup_size: [u32; 3],
    /// (group, binding) of the probe records.
    pub slot: (u32, u32),
    /// How the probe counted.
    pub counting: Counting,
    /// The probe sites.
    pub sites: Vec<super::Site>,
    /// Per-site rows and whole-dispatch figures (what the JSON holds).
    pub summary: Summary,
    /// The counts per subgroup (the heat map's data).
    #[serde(skip)]
    pub counts: Counts,
    /// Median time of the shader as written and instrumented.
    pub plain: Timing,
    /// Median time of the instrumented shader.
    pub instrumented: Timing,
    /// Every writable binding ended with the same bytes in both runs.
    pub outputs_identical: bool,
    /// Final contents of every binding (of the plain run), in binding order.
    #[serde(skip)]
    pub outputs: Vec<(BindingInfo, Vec<u8>)>,
    /// What the driver's compiler reports for the shader as written (registers per thread,
    /// instructions, ...), where the driver exposes it.
    pub driver_statistics: Option<DriverStatistics>,
    /// Why `driver_statistics` is missing (not a Vulkan adapter, or a driver without
    /// `VK_KHR_pipeline_executable_properties`).
    pub driver_statistics_missing: Option<String>,
    /// Set when a subgroup ran as many loop iterations as the adapter runs before silently
    /// leaving the loop (lavapipe: 65535): the outputs and counts may be those of a cut loop,
    /// not of the shader as written.
    pub loop_limit_reached: Option<LoopLimitReached>,
}

/// A subgroup whose loops ran up to the adapter's loop iteration limit
/// ([`Gpu::loop_iteration_limit`]): the driver may have left them early without a word, so the
/// run is not to be trusted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoopLimitReached {
    /// The loop site with the most evaluations in that subgroup.
    pub site: usize,
    /// Its line in the shader.
    pub line: u32,
    /// The subgroup (in dispatch order) with the most loop evaluations.
    pub subgroup: usize,
    /// Evaluations of all loop tests in that subgroup.
    pub iterations: u64,
    /// The adapter's limit.
    pub limit: u64,
    /// What happened and what to do, in one sentence.
    pub message: String,
}

/// The subgroup whose loop tests ran most often, when that reaches `limit`. The driver counts
/// iterations of all loops of an invocation together, so the loop sites are summed.
fn loop_limit_reached(sites: &[super::Site], counts: &Counts, limit: u64, adapter: &str) -> Option<LoopLimitReached> {
    let loops: Vec<usize> = (0..sites.len()).filter(|&k| sites[k].kind == SiteKind::Loop).collect();
    let (subgroup, record) = counts
        .per_subgroup
        .chunks_exact(counts.sites.max(1))
        .enumerate()
        .max_by_key(|(_, r)| loops.iter().map(|&k| r[k].evaluations).sum::<u64>())?;
    let iterations: u64 = loops.iter().map(|&k| record[k].evaluations).sum();
    if loops.is_empty() || iterations < limit {
        return None;
    }
    let site = *loops.iter().max_by_key(|&&k| record[k].evaluations)?;
    let line = sites[site].line;
    Some(LoopLimitReached {
        site,
        line,
        subgroup,
        iterations,
        limit,
        message: format!(
            "subgroup {subgroup} evaluated loop tests {iterations} times (the loop at line {line} most), reaching the {limit} iterations after which {adapter} silently leaves loops: outputs and counts may be those of a cut-short loop; profile a smaller input or on another adapter"
        ),
    })
}

impl ProfileRun {
    /// Registers per thread as the driver compiled the shader, where it says.
    pub fn registers(&self) -> Option<u32> {
        self.driver_statistics.as_ref().and_then(DriverStatistics::registers)
    }
}

/// Where a [`profile_with`] run is: `done` of `total` steps, and the one starting now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileStep {
    /// Steps finished.
    pub done: usize,
    /// Steps in the whole run (3 plus one per timed sample after the first).
    pub total: usize,
    /// The step starting now, e.g. "timed run 2 of 5".
    pub what: String,
}

/// One pipeline and its bind groups over one set of buffers.
struct Prepared {
    pipeline: wgpu::ComputePipeline,
    groups: Vec<(u32, wgpu::BindGroup)>,
    buffers: Vec<wgpu::Buffer>,
    /// Initial contents of each writable buffer, copied back before every run.
    pristine: Vec<Option<wgpu::Buffer>>,
    records: Option<wgpu::Buffer>,
}

impl Prepared {
    async fn new(
        gpu: &Gpu,
        label: &str,
        wgsl: &str,
        entry: &str,
        bindings: &[BindingInfo],
        data: &[Vec<u8>],
        probe: Option<(u32, u32, u64)>,
    ) -> Result<Self> {
        let scope = gpu.device().push_error_scope(wgpu::ErrorFilter::Validation);
        let module = gpu.device().create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(gpu.driver_text(wgsl).into()),
        });
        let pipeline = gpu.device().create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: None,
            module: &module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        });
        if let Some(e) = scope.pop().await {
            return Err(Error::gpu(format!("creating the pipeline of {label} on {}", gpu.adapter_name()), e));
        }
        let mut buffers = Vec::new();
        let mut pristine = Vec::new();
        for (b, bytes) in bindings.iter().zip(data) {
            let kind = if b.uniform { BufferKind::Uniform } else { BufferKind::Storage };
            buffers.push(gpu.buffer::<u8>(&b.name, bytes, kind)?.buffer);
            pristine.push(if b.writable { Some(gpu.buffer::<u8>(&b.name, bytes, kind)?.buffer) } else { None });
        }
        let records = match probe {
            Some((_, _, bytes)) => Some(gpu.buffer_zeroed::<u32>("probe records", (bytes / 4) as usize, BufferKind::Storage)?.buffer),
            None => None,
        };
        let mut slots: Vec<(u32, u32, &wgpu::Buffer)> = bindings.iter().zip(&buffers).map(|(b, buf)| (b.group, b.binding, buf)).collect();
        if let (Some((g, n, _)), Some(r)) = (probe, &records) {
            slots.push((g, n, r));
        }
        let mut group_numbers: Vec<u32> = slots.iter().map(|s| s.0).collect();
        group_numbers.sort_unstable();
        group_numbers.dedup();
        let scope = gpu.device().push_error_scope(wgpu::ErrorFilter::Validation);
        let groups = group_numbers
            .iter()
            .map(|&g| {
                let entries: Vec<wgpu::BindGroupEntry> = slots
                    .iter()
                    .filter(|s| s.0 == g)
                    .map(|s| wgpu::BindGroupEntry { binding: s.1, resource: s.2.as_entire_binding() })
                    .collect();
                let layout = pipeline.get_bind_group_layout(g);
                (g, gpu.device().create_bind_group(&wgpu::BindGroupDescriptor { label: Some(label), layout: &layout, entries: &entries }))
            })
            .collect();
        if let Some(e) = scope.pop().await {
            return Err(Error::gpu(format!("binding the buffers of {label}"), e));
        }
        Ok(Prepared { pipeline, groups, buffers, pristine, records })
    }

    /// Restores the inputs, clears the records, runs the dispatch once and times it.
    async fn run(&self, gpu: &Gpu, workgroups: [u32; 3]) -> Result<Timing> {
        let queries = gpu.caps().timestamps.then(|| {
            let set = gpu.device().create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("profile timing"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let resolve = gpu.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("profile timestamps"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            (set, resolve)
        });
        let scope = gpu.device().push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        for (buffer, from) in self.buffers.iter().zip(&self.pristine) {
            if let Some(from) = from {
                encoder.copy_buffer_to_buffer(from, 0, buffer, 0, from.size());
            }
        }
        if let Some(r) = &self.records {
            encoder.clear_buffer(r, 0, None);
        }
        {
            let timestamp_writes = queries.as_ref().map(|(set, _)| wgpu::ComputePassTimestampWrites {
                query_set: set,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            });
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("profile"), timestamp_writes });
            pass.set_pipeline(&self.pipeline);
            for (g, group) in &self.groups {
                pass.set_bind_group(*g, Some(group), &[]);
            }
            pass.dispatch_workgroups(workgroups[0], workgroups[1], workgroups[2]);
        }
        if let Some((set, resolve)) = &queries {
            encoder.resolve_query_set(set, 0..2, resolve, 0);
        }
        let commands = encoder.finish();
        if let Some(e) = scope.pop().await {
            return Err(Error::gpu("recording the profiled dispatch", e));
        }
        let t0 = Instant::now();
        let index = gpu.queue().submit([commands]);
        gpu.settle(Some(index), "running the profiled shader").await?;
        let wall_seconds = t0.elapsed().as_secs_f64();
        Ok(match &queries {
            Some((_, resolve)) => {
                let ticks: [u64; 2] = bytemuck::pod_read_unaligned(&gpu.read_bytes_async(resolve, 16).await?[..16]);
                let ns = ticks[1].saturating_sub(ticks[0]) as f64 * gpu.queue().get_timestamp_period() as f64;
                Timing { seconds: ns * 1e-9, source: TimingSource::DeviceTimestamps, wall_seconds }
            }
            None => Timing { seconds: wall_seconds, source: TimingSource::WallClock, wall_seconds },
        })
    }

    async fn read(&self, gpu: &Gpu, i: usize) -> Result<Vec<u8>> {
        gpu.read_bytes_async(&self.buffers[i], self.buffers[i].size()).await
    }
}

fn median(mut t: Vec<Timing>) -> Timing {
    t.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    t[t.len() / 2]
}

/// Checks the dispatch against the device's limits.
fn check_limits(gpu: &Gpu, instrumented: &Instrumented, workgroups: [u32; 3]) -> Result<()> {
    let max = gpu.caps().max_compute_workgroups_per_dimension;
    if let Some(&w) = workgroups.iter().find(|&&w| w > max || w == 0) {
        return Err(Error::Limit {
            what: format!("--workgroups {workgroups:?}"),
            requested: w as u64,
            limit: max as u64,
            hint: format!("give 1..={max} workgroups in each dimension on {}", gpu.adapter_name()),
        });
    }
    let threads = instrumented.threads();
    if threads > gpu.caps().max_compute_invocations_per_workgroup {
        return Err(Error::Limit {
            what: format!("workgroup size {:?} of '{}'", instrumented.workgroup_size, instrumented.entry),
            requested: threads as u64,
            limit: gpu.caps().max_compute_invocations_per_workgroup as u64,
            hint: format!("use a smaller @workgroup_size on {}", gpu.adapter_name()),
        });
    }
    Ok(())
}

/// Runs the shader as written and instrumented from the same inputs, checks that the outputs
/// agree, counts every site and times both.
pub fn profile(gpu: &Gpu, request: &ProfileRequest) -> Result<ProfileRun> {
    profile_with(gpu, request, &AtomicBool::new(false), &mut |_| {})
}

/// [`profile`] for a caller that shows progress and may stop it (blocking; see
/// [`profile_async`]).
pub fn profile_with(gpu: &Gpu, request: &ProfileRequest, cancel: &AtomicBool, progress: &mut dyn FnMut(ProfileStep)) -> Result<ProfileRun> {
    crate::gpu::block_on(profile_async(gpu, request, cancel, progress))
}

/// The profile, awaited (no blocking call: it runs in a browser page too): `progress` hears of
/// every step as it starts, and once `cancel` is set the run stops before its next step with
/// [`Error::Cancelled`].
pub async fn profile_async(
    gpu: &Gpu,
    request: &ProfileRequest<'_>,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(ProfileStep),
) -> Result<ProfileRun> {
    if request.samples == 0 {
        return Err(Error::invalid("samples", "0: give at least one timed run"));
    }
    if let Some(w) = request.width.filter(|w| !(1..=128).contains(w)) {
        return Err(Error::invalid("width", format!("{w}: emulate subgroups of 1..=128 lanes")));
    }
    let total = 3 + request.samples - 1;
    let mut step = |done: usize, what: String| {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled {
                what: format!("profiling {}", request.file),
                kept: "nothing (a run's counts are read whole); run it again".into(),
            });
        }
        progress(ProfileStep { done, total, what });
        Ok(())
    };
    let native = gpu.caps().subgroup_size.filter(|_| gpu.caps().subgroups);
    let emulate = request.emulate || native.is_none() || request.width.is_some_and(|w| Some(w) != native);
    let counting = if emulate { Counting::Trace { events: request.trace_events } } else { Counting::Subgroups };
    let width = request.width.or(native).unwrap_or(EMULATION_WIDTH);
    let options = InstrumentOptions { counting, slot: request.slot, max_bind_groups: gpu.device().limits().max_bind_groups };
    let instrumented = instrument(request.file, request.wgsl, request.entry, &options)?;
    // the plain run takes the same preprocessed text (LF line ends) the probes went into
    let (source, module, info) = parse_source(request.file, request.wgsl)?;
    let bindings = entry_bindings(&source.text, &module, &info, request.entry)?;
    check_limits(gpu, &instrumented, request.workgroups)?;
    let data = contents_within(&bindings, &request.bindings, &|b, bytes| {
        gpu.check_buffer_size(&b.name, bytes, if b.uniform { BufferKind::Uniform } else { BufferKind::Storage })
    })?;
    let records_bytes = instrumented.records_bytes(request.workgroups, gpu.caps().subgroup_min_size.max(1));
    gpu.check_buffer_size("probe records", records_bytes, BufferKind::Storage)?;

    step(0, "building the pipelines".into())?;
    let plain = Prepared::new(gpu, request.file, &source.text, request.entry, &bindings, &data, None).await?;
    let probe = Some((instrumented.slot.0, instrumented.slot.1, records_bytes));
    let probed =
        Prepared::new(gpu, &format!("{} (instrumented)", request.file), &instrumented.wgsl, request.entry, &bindings, &data, probe).await?;

    step(1, "running as written and instrumented".into())?;
    let mut plain_times = vec![plain.run(gpu, request.workgroups).await?];
    let mut probed_times = vec![probed.run(gpu, request.workgroups).await?];
    let mut outputs = Vec::new();
    let mut outputs_identical = true;
    for (i, (b, bytes)) in bindings.iter().zip(&data).enumerate() {
        if b.writable {
            let out = plain.read(gpu, i).await?;
            outputs_identical &= out == probed.read(gpu, i).await?;
            outputs.push((b.clone(), out[..bytes.len()].to_vec()));
        } else {
            outputs.push((b.clone(), bytes.clone()));
        }
    }
    step(2, "reading the counts".into())?;
    let records = probed.records.as_ref().ok_or_else(|| Error::invalid("profile", "the instrumented run has no records buffer"))?;
    let words: Vec<u32> = bytemuck::pod_collect_to_vec(&gpu.read_bytes_async(records, records_bytes).await?);
    let counts = decode(&instrumented, &words, request.workgroups, width)?;
    for k in 1..request.samples {
        step(2 + k, format!("timed run {} of {}", k + 1, request.samples))?;
        plain_times.push(plain.run(gpu, request.workgroups).await?);
        probed_times.push(probed.run(gpu, request.workgroups).await?);
    }
    let (driver_statistics, driver_statistics_missing) = match gpu.driver_statistics(&source, request.entry, &[]) {
        Ok(stats) => (Some(stats), None),
        Err(e) => (None, Some(e.to_string())),
    };
    Ok(ProfileRun {
        file: request.file.to_string(),
        entry: request.entry.to_string(),
        adapter: gpu.adapter_name(),
        workgroups: request.workgroups,
        workgroup_size: instrumented.workgroup_size,
        slot: instrumented.slot,
        counting,
        summary: summary(&instrumented.sites, &counts),
        loop_limit_reached: gpu
            .loop_iteration_limit()
            .and_then(|l| loop_limit_reached(&instrumented.sites, &counts, l, &gpu.adapter_name())),
        sites: instrumented.sites,
        counts,
        plain: median(plain_times),
        instrumented: median(probed_times),
        outputs_identical,
        outputs,
        driver_statistics,
        driver_statistics_missing,
    })
}

/// The probe's raw trace of one run of `request`'s shader: after the header words, each
/// invocation's outcome count and first `events` outcomes (workgroups in dispatch order, then
/// local index), and the time of that run. Remapping's key pass reads the trace itself; an
/// invocation with more outcomes than `events` is not an error here, as its count is whole.
pub(crate) async fn trace_async(gpu: &Gpu, request: &ProfileRequest<'_>, events: u32) -> Result<(Vec<u32>, Timing)> {
    let options = InstrumentOptions {
        counting: Counting::Trace { events },
        slot: request.slot,
        max_bind_groups: gpu.device().limits().max_bind_groups,
    };
    let instrumented = instrument(request.file, request.wgsl, request.entry, &options)?;
    let (source, module, info) = parse_source(request.file, request.wgsl)?;
    let bindings = entry_bindings(&source.text, &module, &info, request.entry)?;
    check_limits(gpu, &instrumented, request.workgroups)?;
    let data = contents_within(&bindings, &request.bindings, &|b, bytes| {
        gpu.check_buffer_size(&b.name, bytes, if b.uniform { BufferKind::Uniform } else { BufferKind::Storage })
    })?;
    let records_bytes = instrumented.records_bytes(request.workgroups, 1);
    gpu.check_buffer_size("probe records", records_bytes, BufferKind::Storage)?;
    let probe = Some((instrumented.slot.0, instrumented.slot.1, records_bytes));
    let traced =
        Prepared::new(gpu, &format!("{} (key pass)", request.file), &instrumented.wgsl, request.entry, &bindings, &data, probe).await?;
    let timing = traced.run(gpu, request.workgroups).await?;
    let records = traced.records.as_ref().ok_or_else(|| Error::invalid("key pass", "the instrumented run has no records buffer"))?;
    Ok((bytemuck::pod_collect_to_vec(&gpu.read_bytes_async(records, records_bytes).await?), timing))
}
