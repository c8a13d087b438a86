//! Remapping a kernel inside an application, on the fly: the app's own WGSL, on its own
//! `Device`, recorded into its own encoder, never blocking.
//!
//! The remapped shader ([`super::remap_shader`]) reads each invocation's element through an
//! index buffer, and carries the probe in trace mode so that every dispatch also records the
//! path signature of every invocation (its branch outcomes, [`super::SIGNATURE_EVENTS`] of
//! them remembered) while it computes. As the paper pipelines remapping with the computation,
//! the signatures recorded by dispatch t order a later dispatch (t+1 when the app polls
//! between frames): once they are read back, invocation i's signature belongs to element
//! `index_t[i]` (the index dispatch t read), the signatures become classes and a redirect
//! index ([`super::redirect_index_of`]), and [`Remapper::begin`] copies that index into the
//! app's encoder ahead of its next dispatch. Outputs do not depend on the order: each element
//! is computed by exactly one invocation whatever the index says.

use super::classes::Classes;
use super::redirect::redirect_index_of;
use super::shader::{remap_shader, RemapShaderOptions, RemappedShader};
use super::shader_run::{classes_of, signatures, SIGNATURE_EVENTS};
use crate::divergence::{emulate_loops, EMULATION_WIDTH};
use crate::error::{Error, Result};
use crate::profile::{instrument, Counting, InstrumentOptions, Instrumented};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::Arc;
use wgpu::util::DeviceExt;

/// How [`Remapper::new`] sets up the remapping.
#[derive(Clone, Debug)]
pub struct RemapperOptions {
    /// Subgroup width the predicted SIMT efficiencies are emulated at: the adapter's (e.g.
    /// `wgpu::AdapterInfo::subgroup_max_size`, 32 on most NVIDIA GPUs, 8 on lavapipe).
    pub width: u32,
    /// (group, binding) of the index; the path records go at the next binding of that group.
    /// None = a group the shader does not use.
    pub slot: Option<(u32, u32)>,
    /// Values of the shader's pipeline-overridable constants; give the same to the pipeline
    /// (`PipelineCompilationOptions::constants`).
    pub overrides: Vec<(String, f64)>,
    /// Apply a new order only when it raises the predicted SIMT efficiency by at least this much
    /// (in [0, 1]); below, the order in use stays.
    pub min_gain: f64,
}

impl Default for RemapperOptions {
    fn default() -> Self {
        RemapperOptions { width: EMULATION_WIDTH, slot: None, overrides: Vec::new(), min_gain: 0.01 }
    }
}

/// What one read-back of the path signatures gave ([`Remapper::poll`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RemapUpdate {
    /// The dispatch whose signatures these are, counted by [`Remapper::end`] from 0.
    pub dispatch: u64,
    /// Distinct path signatures (classes) among the elements.
    pub classes: usize,
    /// Predicted SIMT efficiency of the order that dispatch ran in.
    pub before: f64,
    /// Predicted SIMT efficiency of the order built from its signatures.
    pub after: f64,
    /// Whether the new order replaces the one in use (from the next [`Remapper::begin`]): only
    /// when remapping is enabled and `after` beats `before` by [`RemapperOptions::min_gain`].
    pub applied: bool,
}

#[derive(Debug)]
enum State {
    Idle,
    /// The records were copied to the staging buffer in the app's encoder.
    Copied {
        dispatch: u64,
        index: Arc<Vec<u32>>,
        generation: u64,
    },
    /// The app submitted it; the staging buffer is being mapped.
    Mapping {
        dispatch: u64,
        index: Arc<Vec<u32>>,
        generation: u64,
        receiver: Receiver<std::result::Result<(), wgpu::BufferAsyncError>>,
    },
}

/// A user's kernel that reads its elements through an index rebuilt from its own path
/// signatures, in the manner of [`crate::profile::Profiler`].
///
/// ```no_run
/// # fn frame(device: &wgpu::Device, queue: &wgpu::Queue, my_wgsl: &str, my_group: &wgpu::BindGroup) -> simtlab::Result<()> {
/// use simtlab::remap::{Remapper, RemapperOptions};
/// let options = RemapperOptions { width: 32, ..Default::default() };
/// let mut remapper = Remapper::new(device, my_wgsl, "main", [64, 1, 1], &options)?;
/// let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
///     label: None,
///     source: wgpu::ShaderSource::Wgsl(remapper.shader().into()),
/// });
/// let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
///     label: None, layout: None, module: &module, entry_point: Some("main"),
///     compilation_options: Default::default(), cache: None,
/// });
/// let remap_group = remapper.bind_group_for(&pipeline);
/// // every frame
/// let mut encoder = device.create_command_encoder(&Default::default());
/// remapper.begin(&mut encoder);
/// {
///     let mut pass = encoder.begin_compute_pass(&Default::default());
///     pass.set_pipeline(&pipeline);
///     pass.set_bind_group(0, Some(my_group), &[]);
///     pass.set_bind_group(remapper.group(), Some(&remap_group), &[]);
///     pass.dispatch_workgroups(64, 1, 1);
/// }
/// remapper.end(&mut encoder);
/// queue.submit([encoder.finish()]);
/// remapper.after_submit();
/// // any time later: Some once the signatures are back, never waiting
/// if let Some(update) = remapper.poll()? {
///     println!("SIMT efficiency {:.2} -> {:.2}", update.before, update.after);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Remapper {
    device: wgpu::Device,
    remapped: RemappedShader,
    instrumented: Instrumented,
    workgroups: [u32; 3],
    options: RemapperOptions,
    index: wgpu::Buffer,
    records: wgpu::Buffer,
    staging: wgpu::Buffer,
    layout: wgpu::BindGroupLayout,
    bind_group: wgpu::BindGroup,
    /// The index the next dispatch reads (after [`Remapper::begin`]).
    current: Arc<Vec<u32>>,
    /// Whether `current` still has to be copied into the index buffer.
    upload: bool,
    begun: bool,
    enabled: bool,
    dispatches: u64,
    /// Bumped by [`Remapper::set_enabled`]: signatures read under another setting are dropped.
    generation: u64,
    state: State,
}

impl Remapper {
    /// Remaps entry point `entry` of `wgsl` for `device`, to be dispatched as `workgroups`
    /// workgroups every time, and creates its index (identity order at first) and records.
    pub fn new(device: &wgpu::Device, wgsl: &str, entry: &str, workgroups: [u32; 3], options: &RemapperOptions) -> Result<Remapper> {
        if workgroups.contains(&0) {
            return Err(Error::invalid(
                "workgroups",
                format!("{workgroups:?}: give the dispatch the app records, at least 1 per dimension"),
            ));
        }
        if !(1..=128).contains(&options.width) {
            return Err(Error::invalid("width", format!("{}: give the adapter's subgroup width (1 to 128 lanes)", options.width)));
        }
        if !(0.0..=1.0).contains(&options.min_gain) {
            return Err(Error::invalid("min_gain", format!("{}: give a gain in SIMT efficiency between 0 and 1", options.min_gain)));
        }
        let max_bind_groups = device.limits().max_bind_groups;
        let remapped = remap_shader(
            "<shader>",
            wgsl,
            entry,
            &RemapShaderOptions { slot: options.slot, max_bind_groups, overrides: options.overrides.clone() },
        )?;
        let (group, binding) = remapped.slot;
        let (module, _) = crate::profile::parse("<shader>", wgsl)?;
        if group >= max_bind_groups || module.global_variables.iter().any(|(_, g)| g.binding.as_ref().is_some_and(|b| b.group == group)) {
            return Err(Error::invalid(
                "index slot",
                format!(
                    "the remapping needs a bind group of its own, below the device's {max_bind_groups}, and group {group} is not free; \
                     choose one with RemapperOptions::slot or request a device with more max_bind_groups"
                ),
            ));
        }
        let records_slot = binding
            .checked_add(1)
            .ok_or_else(|| Error::invalid("index slot", "binding u32::MAX leaves no room for the records; choose a lower binding"))?;
        let instrumented = instrument(
            "<shader> (remapped)",
            &remapped.wgsl,
            entry,
            &InstrumentOptions {
                counting: Counting::Trace { events: SIGNATURE_EVENTS },
                slot: Some((group, records_slot)),
                max_bind_groups,
                overrides: options.overrides.clone(),
                ..Default::default()
            },
        )
        .map_err(|e| match e {
            Error::Invalid { what, message } if what == "shader" => Error::invalid(
                "shader",
                format!(
                    "{message}; the remapping orders invocations by the paths they take, so a shader without branches has nothing to gain"
                ),
            ),
            other => other,
        })?;
        let threads = instrumented.workgroup_size.iter().map(|&w| w as u64).product::<u64>();
        let invocations = workgroups.iter().map(|&w| w as u64).product::<u64>() * threads;
        let limit = device.limits().max_storage_buffer_binding_size;
        let records_bytes = instrumented.records_bytes(workgroups, 1);
        for (what, bytes) in [("index", invocations * 4), ("path records", records_bytes)] {
            if invocations > u32::MAX as u64 || bytes > limit {
                return Err(Error::Limit {
                    what: format!("remapping {what} for {workgroups:?} workgroups"),
                    requested: bytes,
                    limit,
                    hint: "remap a smaller dispatch, or split the work into several dispatches".into(),
                });
            }
        }
        let identity: Vec<u32> = (0..invocations as u32).collect();
        let index = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("simtlab remap index"),
            contents: bytemuck::cast_slice(&identity),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
        });
        let records = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("simtlab remap path records"),
            size: records_bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("simtlab remap path readback"),
            size: records_bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let entry_of = |binding, read_only| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("simtlab remap"),
            entries: &[entry_of(binding, true), entry_of(records_slot, false)],
        });
        let bind_group = Self::group_on(device, &layout, (binding, records_slot), &index, &records);
        Ok(Remapper {
            device: device.clone(),
            remapped,
            instrumented,
            workgroups,
            options: options.clone(),
            index,
            records,
            staging,
            layout,
            bind_group,
            current: Arc::new(identity),
            upload: false,
            begun: false,
            enabled: true,
            dispatches: 0,
            generation: 0,
            state: State::Idle,
        })
    }

    fn group_on(
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        (index_binding, records_binding): (u32, u32),
        index: &wgpu::Buffer,
        records: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("simtlab remap"),
            layout,
            entries: &[
                wgpu::BindGroupEntry { binding: index_binding, resource: index.as_entire_binding() },
                wgpu::BindGroupEntry { binding: records_binding, resource: records.as_entire_binding() },
            ],
        })
    }

    /// The WGSL to build the pipeline from: the app's shader remapped, with the probe.
    pub fn shader(&self) -> &str {
        &self.instrumented.wgsl
    }

    /// The remapped shader without the probe (what `simtlab remap --emit` writes): it reads the
    /// index at the same slot, for an app that builds its index by other means.
    pub fn remapped(&self) -> &RemappedShader {
        &self.remapped
    }

    /// The bind group index the remapping's group goes at.
    pub fn group(&self) -> u32 {
        self.remapped.slot.0
    }

    /// The remapping's bind group, for a pipeline whose explicit layout has
    /// [`Remapper::bind_group_layout`] at [`Remapper::group`].
    pub fn bind_group(&self) -> &wgpu::BindGroup {
        &self.bind_group
    }

    /// The layout of the remapping's group (index and path records), for an explicit
    /// pipeline layout.
    pub fn bind_group_layout(&self) -> &wgpu::BindGroupLayout {
        &self.layout
    }

    /// The remapping's bind group for a pipeline built with an automatic layout.
    pub fn bind_group_for(&self, pipeline: &wgpu::ComputePipeline) -> wgpu::BindGroup {
        let slots = (self.remapped.slot.1, self.instrumented.slot.1);
        Self::group_on(&self.device, &pipeline.get_bind_group_layout(self.group()), slots, &self.index, &self.records)
    }

    /// The workgroups every dispatch must have.
    pub fn workgroups(&self) -> [u32; 3] {
        self.workgroups
    }

    /// The index the next dispatch reads: invocation i (in the linear order `x + width · (y +
    /// height · z)` of the global ids) works on element `index()[i]`.
    pub fn index(&self) -> &[u32] {
        &self.current
    }

    /// The index buffer on the device (storage, copy source and destination).
    pub fn index_buffer(&self) -> &wgpu::Buffer {
        &self.index
    }

    /// Whether the order follows the signatures ([`Remapper::set_enabled`]).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Turns the remapping on or off. Off, the next [`Remapper::begin`] puts back the identity
    /// order (each invocation its own element, as the shader as written runs) and no
    /// signatures are read; on again, the order follows the signatures of the dispatches from
    /// then on. Signatures in flight when it changes are dropped.
    pub fn set_enabled(&mut self, enabled: bool) {
        if enabled == self.enabled {
            return;
        }
        self.enabled = enabled;
        self.generation += 1;
        if !enabled && !is_identity(&self.current) {
            self.current = Arc::new((0..self.current.len() as u32).collect());
            self.upload = true;
        }
    }

    /// Records into the app's `encoder`, before its dispatch: the copy of a new index when one
    /// is due, and the clearing of the path records. One `begin` and one [`Remapper::end`]
    /// around each dispatch, in the encoder the app submits next.
    pub fn begin(&mut self, encoder: &mut wgpu::CommandEncoder) {
        if self.upload {
            let upload = self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("simtlab remap index upload"),
                contents: bytemuck::cast_slice(&self.current),
                usage: wgpu::BufferUsages::COPY_SRC,
            });
            encoder.copy_buffer_to_buffer(&upload, 0, &self.index, 0, self.index.size());
            self.upload = false;
        }
        encoder.clear_buffer(&self.records, 0, None);
        self.begun = true;
    }

    /// Records into the app's `encoder`, after its dispatch, a copy of the path records when
    /// remapping is enabled and no earlier copy is still being read. Returns whether it
    /// copied (that dispatch's signatures will come from [`Remapper::poll`]).
    pub fn end(&mut self, encoder: &mut wgpu::CommandEncoder) -> bool {
        let dispatch = self.dispatches;
        self.dispatches += 1;
        let copy = std::mem::take(&mut self.begun) && self.enabled && matches!(self.state, State::Idle);
        if copy {
            encoder.copy_buffer_to_buffer(&self.records, 0, &self.staging, 0, self.records.size());
            self.state = State::Copied { dispatch, index: self.current.clone(), generation: self.generation };
        }
        copy
    }

    /// Call after submitting the encoder given to [`Remapper::end`]: requests the mapping of
    /// the records it copied (nothing waits).
    pub fn after_submit(&mut self) {
        if let State::Copied { dispatch, index, generation } = std::mem::replace(&mut self.state, State::Idle) {
            let (sender, receiver) = std::sync::mpsc::channel();
            self.staging.map_async(wgpu::MapMode::Read, .., move |r| {
                let _ = sender.send(r);
            });
            self.state = State::Mapping { dispatch, index, generation, receiver };
        }
    }

    /// Whether a copy of the records is waiting for [`Remapper::after_submit`] or being read.
    pub fn in_flight(&self) -> bool {
        !matches!(self.state, State::Idle)
    }

    /// Polls the device without waiting; once the signatures of a submitted dispatch are back,
    /// builds the order they call for and says what it predicts. None before (and when
    /// nothing is in flight).
    pub fn poll(&mut self) -> Result<Option<RemapUpdate>> {
        if !matches!(self.state, State::Mapping { .. }) {
            return Ok(None);
        }
        self.device.poll(wgpu::PollType::Poll).map_err(|e| Error::gpu("polling the device", e))?;
        let State::Mapping { receiver, .. } = &self.state else { return Ok(None) };
        let mapped = match receiver.try_recv() {
            Err(TryRecvError::Empty) => return Ok(None),
            Err(TryRecvError::Disconnected) => Err(Error::gpu("mapping the remap path records", "the mapping was dropped")),
            Ok(r) => r.map_err(|e| Error::gpu("mapping the remap path records", e)),
        };
        let State::Mapping { dispatch, index, generation, .. } = std::mem::replace(&mut self.state, State::Idle) else {
            return Ok(None);
        };
        mapped?;
        let words: Vec<u32> = {
            let view = self.staging.get_mapped_range(..).map_err(|e| Error::gpu("reading the remap path records", e))?;
            bytemuck::pod_collect_to_vec(&view)
        };
        self.staging.unmap();
        if generation != self.generation {
            return Ok(None);
        }
        if words.get(2).is_some_and(|&w| w != 0) {
            return Err(Error::invalid(
                "dispatch",
                format!(
                    "dispatch {dispatch} ran more invocations than the Remapper was made for ({:?} workgroups); dispatch exactly Remapper::workgroups()",
                    self.workgroups
                ),
            ));
        }
        let update = self.update(dispatch, &words, &index)?;
        Ok(Some(update))
    }

    /// The order that dispatch `dispatch`'s records (`words`, read with `used` as the index)
    /// call for, applied when it gains enough.
    fn update(&mut self, dispatch: u64, words: &[u32], used: &[u32]) -> Result<RemapUpdate> {
        // per invocation, in the linear order of the global ids; invocation i worked on used[i]
        let by_invocation = signatures(words, self.instrumented.workgroup_size, self.workgroups)?;
        let mut by_element = vec![(0u32, 0u32); by_invocation.len()];
        for (&signature, &element) in by_invocation.iter().zip(used) {
            if let Some(slot) = by_element.get_mut(element as usize) {
                *slot = signature;
            }
        }
        let classes: Classes = classes_of(&by_element)?;
        let next = redirect_index_of(classes.ids(), classes.count())?;
        let width = self.options.width;
        let before_trips: Vec<u32> = by_invocation.iter().map(|&(events, _)| events).collect();
        let after_trips: Vec<u32> = next.iter().map(|&e| by_element.get(e as usize).map_or(0, |&(events, _)| events)).collect();
        let before = emulate_loops(&before_trips, width)?.simt_efficiency();
        let after = emulate_loops(&after_trips, width)?.simt_efficiency();
        let applied = self.enabled && after >= before + self.options.min_gain && next != *self.current;
        if applied {
            self.current = Arc::new(next);
            self.upload = true;
        }
        Ok(RemapUpdate { dispatch, classes: classes.count(), before, after, applied })
    }
}

fn is_identity(index: &[u32]) -> bool {
    index.iter().enumerate().all(|(i, &e)| i as u32 == e)
}
