//! Running a user's shader plain and instrumented on a [`Gpu`] (the command line's path):
//! buffers from binding specs, one checked run of each (outputs compared byte for byte), then
//! timed runs of each from the same inputs.

use super::bindings::{contents_within, entry_bindings, format_name, specs_for, BindingInfo, BindingSpec, Resource, TextureSpec};
use super::counts::{decode, loop_history_needed, Counts};
use super::instrument::{instrument_parsed, parse_source, Counting, InstrumentOptions, Instrumented, MAX_LOOP_HISTORY};
use super::sites::SiteKind;
use super::table::{summary_with_cases, Summary};
use crate::divergence::EMULATION_WIDTH;
use crate::error::{Error, Result};
use crate::gpu::shader::{interface_of, EntryInterface};
use crate::gpu::{BufferKind, DriverStatistics, Gpu, Kernel, Step, Timing, TimingSource};
use crate::harness::Stats;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};

/// A user's shader and what one dispatch of it runs with: its entry point, workgroups, the
/// contents of its bindings and the values of its overrides. What profiling
/// ([`ProfileRequest`]) and remapping (`remap::RemapRequest`) both take.
#[derive(Clone, Debug)]
pub struct ShaderDispatch<'a> {
    /// Name of the shader in messages (its path).
    pub file: &'a str,
    /// The shader's WGSL.
    pub wgsl: &'a str,
    /// The compute entry point.
    pub entry: &'a str,
    /// Workgroups to dispatch.
    pub workgroups: [u32; 3],
    /// `(binding key, contents)`: the key is the variable's name, `N` (group 0) or `G:N`; a
    /// `var<immediate>` is given by its name like a buffer, a texture or sampler by its spec.
    pub bindings: Vec<(String, BindingSpec)>,
    /// Values of the shader's pipeline-overridable constants (`override`), by name or `@id`;
    /// the others keep their defaults. Workgroup sizes from overrides follow.
    pub overrides: Vec<(String, f64)>,
}

impl<'a> ShaderDispatch<'a> {
    /// `entry` of `wgsl` (named `file`) over `workgroups`, without bindings or overrides.
    pub fn new(file: &'a str, wgsl: &'a str, entry: &'a str, workgroups: [u32; 3]) -> Self {
        ShaderDispatch { file, wgsl, entry, workgroups, bindings: Vec::new(), overrides: Vec::new() }
    }
}

/// What to profile and how.
#[derive(Clone, Debug)]
pub struct ProfileRequest<'a> {
    /// The shader, its dispatch, bindings and overrides.
    pub shader: ShaderDispatch<'a>,
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
    /// Count one subgroup in `sample` (1: all); the figures are then estimates with their
    /// errors ([`Summary::sampling`]). Counting on subgroups only.
    pub sample: u32,
    /// Words of outcome history per lane for an `if` inside a loop to start with
    /// ([`InstrumentOptions::loop_history`]): a run whose loops outran it is instrumented and
    /// run once more with what they need (with votes past [`MAX_LOOP_HISTORY`]).
    pub loop_history: u32,
}

impl<'a> ProfileRequest<'a> {
    /// A profile of `shader` on the GPU's own subgroups, one timed run, every subgroup counted.
    pub fn new(shader: ShaderDispatch<'a>) -> Self {
        ProfileRequest {
            shader,
            width: None,
            emulate: false,
            trace_events: super::DEFAULT_TRACE_EVENTS,
            slot: None,
            samples: 1,
            sample: 1,
            loop_history: super::DEFAULT_LOOP_HISTORY,
        }
    }
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
    /// The clauses of every switch (their counts are in `counts` and in the summary's rows).
    pub cases: Vec<super::Case>,
    /// The override values the shader ran with (those given; the others took defaults).
    pub overrides: Vec<(String, f64)>,
    /// Per-site rows and whole-dispatch figures (what the JSON holds).
    pub summary: Summary,
    /// The counts per subgroup (the heat map's data).
    #[serde(skip)]
    pub counts: Counts,
    /// Median time of the shader as written and instrumented.
    pub plain: Timing,
    /// Median time of the instrumented shader.
    pub instrumented: Timing,
    /// Every timed run of the shader as written: the spread behind `plain`.
    pub plain_stats: Stats,
    /// Every timed run of the instrumented shader: the spread behind `instrumented`.
    pub instrumented_stats: Stats,
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

/// One resource of the entry point as bound.
enum Bound {
    Buffer {
        buffer: wgpu::Buffer,
        /// Initial contents of a writable buffer, copied back before every run.
        pristine: Option<wgpu::Buffer>,
    },
    Immediate(Vec<u8>),
    Texture {
        texture: wgpu::Texture,
        pristine: Option<wgpu::Texture>,
        spec: TextureSpec,
    },
    Sampler,
}

/// One pipeline and its bind groups over one set of resources.
struct Prepared {
    kernel: Kernel,
    groups: Vec<(u32, wgpu::BindGroup)>,
    bound: Vec<Bound>,
    records: Option<wgpu::Buffer>,
}

/// The shader's resources as the user gave them, for messages: `declaration ← spec`.
fn resources_given(bindings: &[BindingInfo], specs: &[BindingSpec]) -> String {
    let given: Vec<String> = bindings
        .iter()
        .zip(specs)
        .map(|(b, s)| {
            let spec = match s {
                BindingSpec::Texture(t) => format!("a {}x{}x{} {} texture", t.size[0], t.size[1], t.size[2], format_name(t.format)),
                BindingSpec::Sampler { linear } => format!("a {} sampler", if *linear { "linear" } else { "nearest" }),
                other => format!("{} bytes", other.byte_len("").unwrap_or(0)),
            };
            format!("{} ← {spec}", b.label())
        })
        .collect();
    if given.is_empty() {
        "no resources".into()
    } else {
        given.join("; ")
    }
}

fn texture_dimension(resource: &Resource) -> (wgpu::TextureDimension, wgpu::TextureViewDimension) {
    let view = match resource {
        Resource::SampledTexture { dimension, .. } | Resource::StorageTexture { dimension, .. } => *dimension,
        _ => wgpu::TextureViewDimension::D2,
    };
    let dimension = match view {
        wgpu::TextureViewDimension::D1 => wgpu::TextureDimension::D1,
        wgpu::TextureViewDimension::D3 => wgpu::TextureDimension::D3,
        _ => wgpu::TextureDimension::D2,
    };
    (dimension, view)
}

impl Prepared {
    /// The kernel of entry point `inputs.instrumented.entry` of `wgsl` (validated, using
    /// `interface`) and its bind groups over fresh copies of the inputs; `probed`: `wgsl` is
    /// the instrumented text, whose records buffer is bound at the probe's slot.
    async fn new(
        gpu: &Gpu,
        label: &str,
        wgsl: &str,
        interface: &EntryInterface,
        inputs: &Inputs,
        overrides: &[(String, f64)],
        probed: bool,
    ) -> Result<Self> {
        let Inputs { instrumented, bindings, specs, .. } = inputs;
        let entry = instrumented.entry.as_str();
        let constants: Vec<(&str, f64)> = overrides.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let kernel = gpu.compile_validated_async(wgsl, label, entry, &constants, interface.clone()).await.map_err(|e| match e {
            Error::Gpu { source, .. } => Error::Gpu {
                context: format!(
                    "{} refused to build entry point '{entry}' of {label} with {} (overrides: {}); the cause is in the first line below",
                    gpu.adapter_name(),
                    resources_given(bindings, specs),
                    if overrides.is_empty() {
                        "defaults".to_string()
                    } else {
                        overrides.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
                    }
                ),
                source,
            },
            other => other,
        })?;
        let scope = gpu.device().push_error_scope(wgpu::ErrorFilter::Validation);
        let made = Self::bind(gpu, &kernel, inputs, probed);
        let refused = scope.pop().await;
        let (bound, records, groups) = made?;
        if let Some(e) = refused {
            let unfilterable: Vec<String> = bindings
                .iter()
                .zip(specs)
                .filter_map(|(b, s)| match (&b.resource, s) {
                    (Resource::SampledTexture { kind: naga::ScalarKind::Float, .. }, BindingSpec::Texture(t))
                        if !t.format.guaranteed_format_features(gpu.device().features()).flags.contains(wgpu::TextureFormatFeatureFlags::FILTERABLE) =>
                    {
                        Some(format!("{} is given {}, which this device cannot filter: where the shader samples it with a sampler, wgpu asks for a filterable format (rgba8unorm, rgba8snorm, bgra8unorm)", b.label(), format_name(t.format)))
                    }
                    _ => None,
                })
                .collect();
            return Err(Error::gpu(
                format!(
                    "binding the resources of {label} ({}){}",
                    resources_given(bindings, specs),
                    if unfilterable.is_empty() { String::new() } else { format!("; {}", unfilterable.join("; ")) }
                ),
                e,
            ));
        }
        Ok(Prepared { kernel, groups, bound, records })
    }

    /// The resources of `inputs` (and the probe's records when `probed`) made and bound to
    /// every group of `kernel`; wgpu's errors go to the caller's error scope.
    #[allow(clippy::type_complexity, reason = "the resources, views and bind groups made together, returned together")]
    fn bind(
        gpu: &Gpu,
        kernel: &Kernel,
        inputs: &Inputs,
        probed: bool,
    ) -> Result<(Vec<Bound>, Option<wgpu::Buffer>, Vec<(u32, wgpu::BindGroup)>)> {
        let device = gpu.device();
        let Inputs { bindings, specs, data, .. } = inputs;
        let mut bound = Vec::new();
        for ((b, bytes), spec) in bindings.iter().zip(data).zip(specs) {
            bound.push(match (&b.resource, spec) {
                (Resource::Immediate, _) => Bound::Immediate(bytes.clone()),
                (Resource::Sampler, BindingSpec::Sampler { .. }) => Bound::Sampler,
                (Resource::SampledTexture { .. } | Resource::StorageTexture { .. }, BindingSpec::Texture(t)) => {
                    let storage = matches!(b.resource, Resource::StorageTexture { .. });
                    let (dimension, _) = texture_dimension(&b.resource);
                    let make = |name: &str| {
                        let texture = device.create_texture(&wgpu::TextureDescriptor {
                            label: Some(name),
                            size: wgpu::Extent3d { width: t.size[0], height: t.size[1], depth_or_array_layers: t.size[2] },
                            mip_level_count: 1,
                            sample_count: 1,
                            dimension,
                            format: t.format,
                            usage: wgpu::TextureUsages::COPY_DST
                                | wgpu::TextureUsages::COPY_SRC
                                | if storage { wgpu::TextureUsages::STORAGE_BINDING } else { wgpu::TextureUsages::TEXTURE_BINDING },
                            view_formats: &[],
                        });
                        gpu.queue().write_texture(
                            texture.as_image_copy(),
                            bytes,
                            wgpu::TexelCopyBufferLayout {
                                offset: 0,
                                bytes_per_row: Some(t.size[0] * t.format.block_copy_size(None).unwrap_or(4)),
                                rows_per_image: Some(t.size[1]),
                            },
                            texture.size(),
                        );
                        texture
                    };
                    let pristine = b.writable.then(|| make(&format!("{} (initial)", b.name)));
                    Bound::Texture { texture: make(&b.name), pristine, spec: t.clone() }
                }
                _ => {
                    let kind = if b.uniform { BufferKind::Uniform } else { BufferKind::Storage };
                    let buffer = gpu.buffer::<u8>(&b.name, bytes, kind)?.buffer;
                    let pristine = if b.writable { Some(gpu.buffer::<u8>(&b.name, bytes, kind)?.buffer) } else { None };
                    Bound::Buffer { buffer, pristine }
                }
            });
        }
        let records = match probed {
            true => Some(gpu.buffer_zeroed::<u32>("probe records", (inputs.records_bytes / 4) as usize, BufferKind::Storage)?.buffer),
            false => None,
        };
        let samplers: Vec<Option<wgpu::Sampler>> = specs
            .iter()
            .map(|s| match s {
                BindingSpec::Sampler { linear } => {
                    let filter = if *linear { wgpu::FilterMode::Linear } else { wgpu::FilterMode::Nearest };
                    Some(device.create_sampler(&wgpu::SamplerDescriptor {
                        label: Some("profile sampler"),
                        mag_filter: filter,
                        min_filter: filter,
                        ..Default::default()
                    }))
                }
                _ => None,
            })
            .collect();
        let views: Vec<Option<wgpu::TextureView>> =
            bindings
                .iter()
                .zip(&bound)
                .map(|(b, r)| match r {
                    Bound::Texture { texture, .. } => Some(texture.create_view(&wgpu::TextureViewDescriptor {
                        dimension: Some(texture_dimension(&b.resource).1),
                        ..Default::default()
                    })),
                    _ => None,
                })
                .collect();
        let mut slots: Vec<(u32, u32, wgpu::BindingResource)> = Vec::new();
        for (k, (b, r)) in bindings.iter().zip(&bound).enumerate() {
            let resource = match r {
                Bound::Buffer { buffer, .. } => buffer.as_entire_binding(),
                Bound::Texture { .. } => wgpu::BindingResource::TextureView(views[k].as_ref().expect("a view per texture")),
                Bound::Sampler => wgpu::BindingResource::Sampler(samplers[k].as_ref().expect("a sampler per sampler spec")),
                Bound::Immediate(_) => continue,
            };
            slots.push((b.group, b.binding, resource));
        }
        if let Some(r) = &records {
            let (g, n) = inputs.instrumented.slot;
            slots.push((g, n, r.as_entire_binding()));
        }
        let groups = kernel
            .groups()
            .iter()
            .map(|g| {
                let given: Vec<(u32, wgpu::BindingResource)> =
                    slots.iter().filter(|s| s.0 == g.group).map(|s| (s.1, s.2.clone())).collect();
                Ok((g.group, kernel.create_bind_group(gpu, g.group, &given)?))
            })
            .collect::<Result<_>>()?;
        Ok((bound, records, groups))
    }

    /// Restores the inputs, clears the records, runs the dispatch once and times it.
    async fn run(&self, gpu: &Gpu, workgroups: [u32; 3]) -> Result<Timing> {
        let mut steps = Vec::new();
        let mut immediates: &[u8] = &[];
        for b in &self.bound {
            match b {
                Bound::Buffer { buffer, pristine: Some(from) } => steps.push(Step::Copy { from, to: buffer, bytes: from.size() }),
                Bound::Texture { texture, pristine: Some(from), .. } => steps.push(Step::copy_texture(from, texture)),
                Bound::Immediate(bytes) => immediates = bytes,
                _ => {}
            }
        }
        if let Some(r) = &self.records {
            steps.push(Step::Clear { buffer: r });
        }
        let groups: Vec<(u32, &wgpu::BindGroup)> = self.groups.iter().map(|(g, b)| (*g, b)).collect();
        steps.push(Step::dispatch_groups(&self.kernel, &groups, workgroups).with_immediates(immediates));
        gpu.run_once_async(&steps, true).await
    }

    /// The first `bytes` of the probe's records, as words.
    async fn read_records(&self, gpu: &Gpu, bytes: u64) -> Result<Vec<u32>> {
        let records = self.records.as_ref().ok_or_else(|| Error::invalid("probe records", "the instrumented run has no records buffer"))?;
        Ok(bytemuck::pod_collect_to_vec(&gpu.read_bytes_async(records, bytes).await?))
    }

    /// The final contents of resource `i`: a buffer's bytes, a texture's texels (rows tightly
    /// packed).
    async fn read(&self, gpu: &Gpu, i: usize) -> Result<Vec<u8>> {
        match &self.bound[i] {
            Bound::Buffer { buffer, .. } => gpu.read_bytes_async(buffer, buffer.size()).await,
            Bound::Texture { texture, spec, .. } => {
                let row = spec.size[0] * spec.format.block_copy_size(None).unwrap_or(4);
                let padded = row.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
                let rows = spec.size[1] * spec.size[2];
                let staging = gpu.device().create_buffer(&wgpu::BufferDescriptor {
                    label: Some("profile texture readback"),
                    size: padded as u64 * rows as u64,
                    usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                });
                let mut encoder = gpu.device().create_command_encoder(&Default::default());
                encoder.copy_texture_to_buffer(
                    texture.as_image_copy(),
                    wgpu::TexelCopyBufferInfo {
                        buffer: &staging,
                        layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(padded), rows_per_image: Some(spec.size[1]) },
                    },
                    texture.size(),
                );
                gpu.queue().submit([encoder.finish()]);
                let bytes = gpu.read_bytes_async(&staging, staging.size()).await?;
                Ok(bytes.chunks_exact(padded as usize).flat_map(|r| &r[..row as usize]).copied().collect())
            }
            Bound::Immediate(bytes) => Ok(bytes.clone()),
            Bound::Sampler => Ok(Vec::new()),
        }
    }
}

/// The spread of timed runs (in the first run's clock).
fn stats_of(t: &[Timing]) -> Result<Stats> {
    Stats::from_samples(t.iter().map(|t| t.seconds).collect(), t.first().map_or(TimingSource::WallClock, |t| t.source))
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
            what: format!("`workgroups` {workgroups:?}"),
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

/// Refuses resources the device cannot give before wgpu is asked: immediates without
/// `IMMEDIATES`, storage textures of a format it cannot store.
fn check_resources(gpu: &Gpu, bindings: &[BindingInfo]) -> Result<()> {
    let features = gpu.device().features();
    for b in bindings {
        match &b.resource {
            Resource::Immediate if !features.contains(wgpu::Features::IMMEDIATES) => {
                return Err(Error::Unsupported {
                    what: format!("the shader's {}", b.label()),
                    adapter: gpu.adapter_name(),
                    hint: "open the device with wgpu::Features::IMMEDIATES (Vulkan, Metal, DX12 have it; WebGPU does not yet), or profile a variant that reads the value from a uniform buffer".into(),
                })
            }
            Resource::StorageTexture { format, .. } => {
                let flags = format.guaranteed_format_features(features);
                if !flags.allowed_usages.contains(wgpu::TextureUsages::STORAGE_BINDING) {
                    return Err(Error::Unsupported {
                        what: format!("the shader's {} (a {} storage texture)", b.label(), format_name(*format)),
                        adapter: gpu.adapter_name(),
                        hint: "declare a storage format every device stores, such as rgba8unorm, r32float, r32uint or rgba32float".into(),
                    });
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Runs the shader as written and instrumented from the same inputs, checks that the outputs
/// agree, counts every site and times both.
#[cfg(not(target_arch = "wasm32"))]
pub fn profile(gpu: &Gpu, request: &ProfileRequest) -> Result<ProfileRun> {
    profile_with(gpu, request, &AtomicBool::new(false), &mut |_| {})
}

/// [`profile`] for a caller that shows progress and may stop it (blocking; see
/// [`profile_async`]).
#[cfg(not(target_arch = "wasm32"))]
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
                what: format!("profiling {}", request.shader.file),
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
    if request.sample > 1 && emulate {
        return Err(Error::invalid(
            "sample",
            format!("{}: sampling counts the GPU's own subgroups; host emulation (emulate, width, or an adapter without subgroups) counts every invocation, so give sample 1", request.sample),
        ));
    }
    let mut inputs = inputs(gpu, request, counting)?;

    step(0, "building the pipelines".into())?;
    let overrides = &request.shader.overrides;
    let plain = Prepared::new(gpu, request.shader.file, &inputs.source.text, &inputs.interface, &inputs, overrides, false).await?;
    let label = format!("{} (instrumented)", request.shader.file);
    let mut probed =
        Prepared::new(gpu, &label, &inputs.instrumented.wgsl, &inputs.instrumented.interface, &inputs, overrides, true).await?;

    step(1, "running as written and instrumented".into())?;
    let mut plain_times = vec![plain.run(gpu, request.shader.workgroups).await?];
    let mut probed_times = vec![probed.run(gpu, request.shader.workgroups).await?];
    let mut words = probed.read_records(gpu, inputs.records_bytes).await?;
    if let Some(needed) = loop_history_needed(&inputs.instrumented, &words) {
        // a loop outran the probe's history: once more with enough of it, or with votes
        let loop_history = if needed <= MAX_LOOP_HISTORY { needed } else { 0 };
        step(1, format!("instrumenting again for loops of {} iterations", words[3]))?;
        let options = InstrumentOptions { loop_history, ..instrument_options(gpu, request, counting) };
        inputs.instrumented =
            instrument_parsed(request.shader.file, &inputs.source, &inputs.module, &inputs.info, request.shader.entry, &options)?;
        probed = Prepared::new(gpu, &label, &inputs.instrumented.wgsl, &inputs.instrumented.interface, &inputs, overrides, true).await?;
        probed_times = vec![probed.run(gpu, request.shader.workgroups).await?];
        words = probed.read_records(gpu, inputs.records_bytes).await?;
    }
    step(2, "comparing the outputs and decoding the counts".into())?;
    let Inputs { instrumented, bindings, data, module, info, .. } = inputs;
    let mut outputs = Vec::new();
    let mut outputs_identical = true;
    for (i, (b, bytes)) in bindings.iter().zip(&data).enumerate() {
        if b.writable {
            let out = plain.read(gpu, i).await?;
            outputs_identical &= out == probed.read(gpu, i).await?;
            outputs.push((b.clone(), out[..bytes.len().min(out.len())].to_vec()));
        } else {
            outputs.push((b.clone(), bytes.clone()));
        }
    }
    let counts = decode(&instrumented, &words, request.shader.workgroups, width)?;
    for k in 1..request.samples {
        step(2 + k, format!("timed run {} of {}", k + 1, request.samples))?;
        plain_times.push(plain.run(gpu, request.shader.workgroups).await?);
        probed_times.push(probed.run(gpu, request.shader.workgroups).await?);
    }
    let constants: Vec<(&str, f64)> = overrides.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let (driver_statistics, driver_statistics_missing) =
        match gpu.driver_statistics_validated(&module, &info, request.shader.entry, &constants) {
            Ok(stats) => (Some(stats), None),
            Err(e) => (None, Some(e.to_string())),
        };
    Ok(ProfileRun {
        file: request.shader.file.to_string(),
        entry: request.shader.entry.to_string(),
        adapter: gpu.adapter_name(),
        workgroups: request.shader.workgroups,
        workgroup_size: instrumented.workgroup_size,
        slot: instrumented.slot,
        counting,
        summary: summary_with_cases(&instrumented.sites, &instrumented.cases, &counts),
        loop_limit_reached: gpu
            .loop_iteration_limit()
            .and_then(|l| loop_limit_reached(&instrumented.sites, &counts, l, &gpu.adapter_name())),
        sites: instrumented.sites,
        cases: instrumented.cases,
        overrides: request.shader.overrides.clone(),
        counts,
        plain_stats: stats_of(&plain_times)?,
        instrumented_stats: stats_of(&probed_times)?,
        plain: median(plain_times),
        instrumented: median(probed_times),
        outputs_identical,
        outputs,
        driver_statistics,
        driver_statistics_missing,
    })
}

/// What both runs of a profile (and the key pass of remapping) start from: the instrumented
/// shader, the preprocessed text the plain run takes with naga's module of it and what its
/// entry point binds, the bindings with their specs and contents (checked against the
/// device), and the size of the probe's records.
struct Inputs {
    instrumented: Instrumented,
    source: crate::gpu::ShaderSource,
    module: naga::Module,
    info: naga::valid::ModuleInfo,
    interface: EntryInterface,
    bindings: Vec<BindingInfo>,
    specs: Vec<BindingSpec>,
    data: Vec<Vec<u8>>,
    records_bytes: u64,
}

fn instrument_options(gpu: &Gpu, request: &ProfileRequest, counting: Counting) -> InstrumentOptions {
    InstrumentOptions {
        counting,
        slot: request.slot,
        max_bind_groups: gpu.device().limits().max_bind_groups,
        overrides: request.shader.overrides.clone(),
        sample: request.sample,
        loop_history: request.loop_history,
    }
}

fn inputs(gpu: &Gpu, request: &ProfileRequest, counting: Counting) -> Result<Inputs> {
    let options = instrument_options(gpu, request, counting);
    // the one parse of the shader: the probes go into its preprocessed text (LF line ends),
    // which the plain run takes as it is
    let (source, module, info) = parse_source(request.shader.file, request.shader.wgsl)?;
    let instrumented = instrument_parsed(request.shader.file, &source, &module, &info, request.shader.entry, &options)?;
    let interface = EntryInterface {
        workgroup_size: instrumented.workgroup_size,
        ..interface_of(&module, &info, request.shader.file, request.shader.entry)?
    };
    let bindings = entry_bindings(&source.text, &module, &info, request.shader.entry)?;
    check_limits(gpu, &instrumented, request.shader.workgroups)?;
    check_resources(gpu, &bindings)?;
    let specs = specs_for(&bindings, &request.shader.bindings)?;
    let data = contents_within(&bindings, &request.shader.bindings, &|b, bytes| match b.resource {
        Resource::Buffer => gpu.check_buffer_size(&b.name, bytes, if b.uniform { BufferKind::Uniform } else { BufferKind::Storage }),
        Resource::Immediate => {
            let limit = gpu.device().limits().max_immediate_size as u64;
            if bytes > limit {
                return Err(Error::Limit {
                    what: b.label(),
                    requested: bytes,
                    limit,
                    hint: format!("{} takes at most {limit} bytes of immediates; give fewer", gpu.adapter_name()),
                });
            }
            Ok(())
        }
        _ => Ok(()),
    })?;
    let records_bytes = instrumented.records_bytes(request.shader.workgroups, gpu.caps().subgroup_min_size.max(1));
    gpu.check_buffer_size("probe records", records_bytes, BufferKind::Storage)?;

    Ok(Inputs { instrumented, source, module, info, interface, bindings, specs, data, records_bytes })
}

/// The probe's raw trace of one run of `request`'s shader: after the header words, each
/// invocation's outcome count and first `events` outcomes (workgroups in dispatch order, then
/// local index), and the time of that run. Remapping's key pass reads the trace itself; an
/// invocation with more outcomes than `events` is not an error here, as its count is whole.
pub(crate) async fn trace_async(gpu: &Gpu, request: &ProfileRequest<'_>, events: u32) -> Result<(Vec<u32>, Timing)> {
    let inputs = inputs(gpu, request, Counting::Trace { events })?;
    let label = format!("{} (key pass)", request.shader.file);
    let traced =
        Prepared::new(gpu, &label, &inputs.instrumented.wgsl, &inputs.instrumented.interface, &inputs, &request.shader.overrides, true)
            .await?;
    let timing = traced.run(gpu, request.shader.workgroups).await?;
    Ok((traced.read_records(gpu, inputs.records_bytes).await?, timing))
}
