//! Profiling a kernel inside an application, in the style of wgpu-profiler: it lives on the
//! app's own `Device`, records into the app's encoder and never submits or blocks.

use super::counts::{decode, Counts};
use super::instrument::{instrument, Counting, InstrumentOptions, Instrumented, DEFAULT_LOOP_HISTORY, DEFAULT_TRACE_EVENTS};
use super::sites::Site;
use crate::divergence::EMULATION_WIDTH;
use crate::error::{Error, Result};
use std::sync::mpsc::{Receiver, TryRecvError};

/// How [`Profiler::instrument`] sets up the probe.
#[derive(Clone, Debug)]
pub struct ProfilerOptions {
    /// The largest dispatch that one [`Profiler::resolve`] covers (the records are sized for it).
    pub workgroups: [u32; 3],
    /// None: votes on the device's subgroups when it has `SUBGROUP`, else each invocation's
    /// outcomes with host emulation at `width`.
    pub counting: Option<Counting>,
    /// Width of the emulated subgroups (trace mode).
    pub width: u32,
    /// Narrowest subgroup the device may use (sizes the records in subgroup mode).
    pub min_subgroup_width: u32,
    /// (group, binding) of the records; None = the group after the shader's highest.
    pub slot: Option<(u32, u32)>,
    /// Count one subgroup in `sample` (1: all; subgroup counting only): the counts then
    /// carry [`super::Sampling`] and [`super::summary`] gives estimates with their errors.
    pub sample: u32,
    /// Values of the shader's pipeline-overridable constants; give the same to the pipeline
    /// (`PipelineCompilationOptions::constants`).
    pub overrides: Vec<(String, f64)>,
    /// Words of outcome history per lane for an `if` inside a loop
    /// ([`InstrumentOptions::loop_history`]): a frame whose loops ran longer is refused with the
    /// words it needs; 0 votes at every iteration instead.
    pub loop_history: u32,
}

impl Default for ProfilerOptions {
    fn default() -> Self {
        ProfilerOptions {
            workgroups: [1, 1, 1],
            counting: None,
            width: EMULATION_WIDTH,
            min_subgroup_width: wgpu::MINIMUM_SUBGROUP_MIN_SIZE,
            slot: None,
            sample: 1,
            overrides: Vec::new(),
            loop_history: DEFAULT_LOOP_HISTORY,
        }
    }
}

#[derive(Debug)]
enum State {
    Idle,
    /// A copy of the records was recorded into the app's encoder.
    Resolved,
    /// The app submitted it and the staging buffer is being mapped.
    Mapping(Receiver<std::result::Result<(), wgpu::BufferAsyncError>>),
}

/// A user's kernel with probes, and the buffers that carry its counts back.
///
/// ```no_run
/// # fn frame(device: &wgpu::Device, queue: &wgpu::Queue, my_wgsl: &str) -> simtlab::Result<()> {
/// use simtlab::profile::{Profiler, ProfilerOptions};
/// let options = ProfilerOptions { workgroups: [64, 1, 1], ..Default::default() };
/// let mut probe = Profiler::instrument(device, my_wgsl, "main", &options)?;
/// // build the pipeline from probe.shader() (auto layout here), bind the probe's group
/// let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
///     label: None,
///     source: wgpu::ShaderSource::Wgsl(probe.shader().into()),
/// });
/// let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
///     label: None, layout: None, module: &module, entry_point: Some("main"),
///     compilation_options: Default::default(), cache: None,
/// });
/// let probe_group = probe.bind_group_for(&pipeline);
/// let mut encoder = device.create_command_encoder(&Default::default());
/// {
///     let mut pass = encoder.begin_compute_pass(&Default::default());
///     pass.set_pipeline(&pipeline);
///     // ... the app's own bind groups ...
///     pass.set_bind_group(probe.group(), Some(&probe_group), &[]);
///     pass.dispatch_workgroups(64, 1, 1);
/// }
/// probe.resolve(&mut encoder);
/// queue.submit([encoder.finish()]);
/// // later frames: Some once the GPU is done, never waiting
/// if let Some(counts) = probe.try_finish()? {
///     println!("{:.1} % SIMT efficiency", 100.0 * counts.divergence().simt_efficiency());
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Profiler {
    device: wgpu::Device,
    instrumented: Instrumented,
    workgroups: [u32; 3],
    width: u32,
    records: wgpu::Buffer,
    staging: wgpu::Buffer,
    layout: wgpu::BindGroupLayout,
    bind_group: wgpu::BindGroup,
    state: State,
}

impl Profiler {
    /// Instruments entry point `entry` of `wgsl` for `device` and creates its records buffer.
    pub fn instrument(device: &wgpu::Device, wgsl: &str, entry: &str, options: &ProfilerOptions) -> Result<Profiler> {
        let has_subgroups = device.features().contains(wgpu::Features::SUBGROUP);
        let counting =
            options.counting.unwrap_or(if has_subgroups { Counting::Subgroups } else { Counting::Trace { events: DEFAULT_TRACE_EVENTS } });
        if counting == Counting::Subgroups && !has_subgroups {
            return Err(Error::Unsupported {
                what: "counting on subgroups".into(),
                adapter: "this device".into(),
                hint: "request wgpu::Features::SUBGROUP when creating the device, or count with Counting::Trace".into(),
            });
        }
        let max_bind_groups = device.limits().max_bind_groups;
        let instrumented = instrument(
            "<shader>",
            wgsl,
            entry,
            &InstrumentOptions {
                counting,
                slot: options.slot,
                max_bind_groups,
                overrides: options.overrides.clone(),
                sample: options.sample,
                loop_history: options.loop_history,
            },
        )?;
        if instrumented.slot.0 >= max_bind_groups {
            return Err(Error::invalid(
                "probe slot",
                format!(
                    "group {} is past the device's {max_bind_groups} bind groups; choose a slot with ProfilerOptions::slot",
                    instrumented.slot.0
                ),
            ));
        }
        let bytes = instrumented.records_bytes(options.workgroups, options.min_subgroup_width);
        if bytes > device.limits().max_storage_buffer_binding_size {
            return Err(Error::Limit {
                what: format!("probe records for {:?} workgroups", options.workgroups),
                requested: bytes,
                limit: device.limits().max_storage_buffer_binding_size,
                hint: "profile a smaller dispatch".into(),
            });
        }
        let records = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("simtlab probe records"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("simtlab probe readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("simtlab probe"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: instrumented.slot.1,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: false },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }],
        });
        let bind_group = Self::group_on(device, &layout, instrumented.slot.1, &records);
        Ok(Profiler {
            device: device.clone(),
            workgroups: options.workgroups,
            width: options.width,
            instrumented,
            records,
            staging,
            layout,
            bind_group,
            state: State::Idle,
        })
    }

    fn group_on(device: &wgpu::Device, layout: &wgpu::BindGroupLayout, binding: u32, records: &wgpu::Buffer) -> wgpu::BindGroup {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("simtlab probe"),
            layout,
            entries: &[wgpu::BindGroupEntry { binding, resource: records.as_entire_binding() }],
        })
    }

    /// The instrumented WGSL to build the pipeline from.
    pub fn shader(&self) -> &str {
        &self.instrumented.wgsl
    }

    /// The probe sites, in the order of the counts.
    pub fn sites(&self) -> &[Site] {
        &self.instrumented.sites
    }

    /// The bind group index the probe's group goes at.
    pub fn group(&self) -> u32 {
        self.instrumented.slot.0
    }

    /// The probe's bind group, for a pipeline whose explicit layout has
    /// [`Profiler::bind_group_layout`] at [`Profiler::group`].
    pub fn bind_group(&self) -> &wgpu::BindGroup {
        &self.bind_group
    }

    /// The layout of the probe's group, for an explicit pipeline layout.
    pub fn bind_group_layout(&self) -> &wgpu::BindGroupLayout {
        &self.layout
    }

    /// The probe's bind group for a pipeline built with an automatic layout.
    pub fn bind_group_for(&self, pipeline: &wgpu::ComputePipeline) -> wgpu::BindGroup {
        Self::group_on(&self.device, &pipeline.get_bind_group_layout(self.group()), self.instrumented.slot.1, &self.records)
    }

    /// Records into the app's `encoder`, after its dispatch, a copy of the counts and the
    /// clearing of the records for the next dispatch. While the previous counts have not been
    /// taken by [`Profiler::try_finish`] it only clears them (that dispatch is not reported)
    /// and returns false.
    pub fn resolve(&mut self, encoder: &mut wgpu::CommandEncoder) -> bool {
        let copy = matches!(self.state, State::Idle);
        if copy {
            encoder.copy_buffer_to_buffer(&self.records, 0, &self.staging, 0, self.records.size());
            self.state = State::Resolved;
        }
        encoder.clear_buffer(&self.records, 0, None);
        copy
    }

    /// The counts of the resolved dispatch once the GPU has finished it, None before (and
    /// when nothing was resolved). Call it after submitting the encoder given to
    /// [`Profiler::resolve`]; it polls the device and never waits.
    pub fn try_finish(&mut self) -> Result<Option<Counts>> {
        if matches!(self.state, State::Resolved) {
            let (sender, receiver) = std::sync::mpsc::channel();
            self.staging.map_async(wgpu::MapMode::Read, .., move |r| {
                let _ = sender.send(r);
            });
            self.state = State::Mapping(receiver);
        }
        let State::Mapping(receiver) = &self.state else { return Ok(None) };
        self.device.poll(wgpu::PollType::Poll).map_err(|e| Error::gpu("polling the device", e))?;
        let mapped = match receiver.try_recv() {
            Err(TryRecvError::Empty) => return Ok(None),
            Err(TryRecvError::Disconnected) => Err(Error::gpu("mapping the probe records", "the mapping was dropped")),
            Ok(r) => r.map_err(|e| Error::gpu("mapping the probe records", e)),
        };
        self.state = State::Idle;
        mapped?;
        let words: Vec<u32> = {
            let view = self.staging.get_mapped_range(..).map_err(|e| Error::gpu("reading the probe records", e))?;
            bytemuck::pod_collect_to_vec(&view)
        };
        self.staging.unmap();
        decode(&self.instrumented, &words, self.workgroups, self.width).map(Some)
    }
}
