//! Persistent threads in a user's own kernel: the public WGSL module (global barrier,
//! participant index and count, queue claims, pushes and pops, the stop test), placed at a bind
//! group the kernel does not use; the tier the kernel needs, found with naga; and its launch on
//! any [`Gpu`], the app's own device included ([`Gpu::from_device`]).
//!
//! The kernel is plain WGSL against the functions of [`module`] (`shaders/shared/pt_user.wgsl`):
//! `pt_join`, `pt_global_barrier`, `pt_should_stop`, `pt_claim`, `pt_push`, `pt_pop`. A line
//! `//#use simtlab_pt` marks where the module goes; without it the module follows the kernel's
//! text (so the kernel's line numbers stay as written).
//!
//! Tiers ([`Tier`]): a kernel that calls none of the functions is dispatched as given
//! ([`Tier::Multi`]); one that joins and claims but never waits runs on every adapter
//! ([`Tier::NonBlocking`], every launched workgroup a participant); one that waits
//! (`pt_global_barrier`, `pt_push`, `pt_pop`) needs [`Tier::Blocking`], which runs only where
//! the adapter passed [`super::assess`] and is refused elsewhere with what to do instead.
//!
//! ```no_run
//! use simtlab::pt::{user, PtOptions, Runtime};
//! # fn main() -> simtlab::Result<()> {
//! # let gpu = simtlab::Gpu::new(&Default::default())?;
//! let wgsl = "@group(0) @binding(0) var<storage, read_write> out: array<atomic<u32>>;
//! @compute @workgroup_size(64)
//! fn main(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) w: vec3<u32>,
//!         @builtin(num_workgroups) n: vec3<u32>) {
//!     let g = pt_join(l, w, n);
//!     if (g.count == 0u) { return; }
//!     if (l == 0u) { atomicAdd(&out[0], 1u); }
//!     if (!pt_global_barrier(l)) { return; }
//!     if (l == 0u) { atomicMax(&out[1], atomicLoad(&out[0])); }
//! }";
//! let shader = user::shader("count.wgsl", wgsl, "main", gpu.device().limits().max_bind_groups)?;
//! let runtime = Runtime::new(PtOptions::default());
//! let plan = runtime.plan_shader(&gpu, &shader)?; // refused where a blocking wait is unsafe
//! let pipeline = gpu.compile(&shader.source, "count", "main", &[])?.pipeline;
//! let launch = runtime.prepare(&gpu, &shader, &plan, &pipeline, user::QueueOptions::default())?;
//! # let my_group = gpu.device().create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &pipeline.get_bind_group_layout(0), entries: &[] });
//! let mut encoder = gpu.device().create_command_encoder(&Default::default());
//! launch.record(&mut encoder, &pipeline, &[(0, &my_group)], None);
//! gpu.queue().submit([encoder.finish()]);
//! let status = launch.finish(&gpu)?; // an abort becomes an error saying what ran out
//! println!("{} participants", status.discovered);
//! # Ok(()) }
//! ```

use super::capability::Capability;
use super::launch::{Plan, Runtime};
use super::status::{AbortReason, Status};
use super::{queue_words, Control, Tier, CONTROL_WORDS};
use crate::error::{Error, Result};
use crate::gpu::shader::{files, preprocess_text, validate, ShaderSource};
use crate::gpu::{BufferKind, Gpu, GpuBuffer, Step, TimingSource};
use crate::harness::{Check, Record, Stats};
use crate::profile::{contents_within, entry_bindings, BindingInfo, BindingSpec, Resource};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Mutex;
use web_time::Instant;

/// The line that marks where the module goes in a user's kernel.
pub const USE_LINE: &str = "//#use simtlab_pt";
/// Binding (in the module's group) of the control words: abort word, discovery, barrier counters.
pub const CONTROL_BINDING: u32 = 0;
/// Binding of the launch's configuration uniform.
pub const CONFIG_BINDING: u32 = 1;
/// Binding of the queue words (shared head, ring).
pub const QUEUE_BINDING: u32 = 2;
/// Functions of the module that wait for other workgroups.
pub const WAITING: [&str; 3] = ["pt_global_barrier", "pt_push", "pt_pop"];
/// The functions of the module a kernel calls.
pub const FUNCTIONS: [&str; 6] = ["pt_join", "pt_global_barrier", "pt_should_stop", "pt_claim", "pt_push", "pt_pop"];
/// Ring slots of the queue by default.
pub const DEFAULT_CAPACITY: u32 = 1 << 16;
/// Group the module takes while the kernel's own groups are found (beyond any device's limit).
const PROVISIONAL_GROUP: u32 = 1000;

/// `(pt_control, pt_queue)` with their bindings moved to one group, made once per group.
static MOVED: Mutex<Option<HashMap<u32, (&'static str, &'static str)>>> = Mutex::new(None);

fn shared(name: &str) -> Option<&'static str> {
    let path = format!("shared/{name}.wgsl");
    files().iter().find(|(p, _)| *p == path).map(|(_, t)| *t)
}

/// The module's files with their bindings at `group` (simtlab's own kernels keep them at
/// group 0, bindings 8 to 10).
fn moved(group: u32) -> Option<(&'static str, &'static str)> {
    let mut cache = MOVED.lock().ok()?;
    let map = cache.get_or_insert_with(HashMap::new);
    if let Some(m) = map.get(&group) {
        return Some(*m);
    }
    let at = |b: u32| format!("@group({group}) @binding({b})");
    let control =
        shared("pt_control")?.replace("@group(0) @binding(8)", &at(CONTROL_BINDING)).replace("@group(0) @binding(9)", &at(CONFIG_BINDING));
    let queue = shared("pt_queue")?.replace("@group(0) @binding(10)", &at(QUEUE_BINDING));
    // at most one pair per bind group number a device can have
    let m: (&'static str, &'static str) = (Box::leak(control.into_boxed_str()), Box::leak(queue.into_boxed_str()));
    map.insert(group, m);
    Some(m)
}

fn expand(file: &str, text: &str, group: u32) -> Result<ShaderSource> {
    let (control, queue) = moved(group).ok_or_else(|| Error::gpu("persistent-threads module", "the embedded module is missing"))?;
    let resolve = move |name: &str| match name {
        "simtlab_pt" => shared("pt_user"),
        "pt_control" => Some(control),
        "pt_queue" => Some(queue),
        other => shared(other),
    };
    let marked = text.lines().any(|l| l.trim() == USE_LINE);
    let with_import = if marked {
        text.lines().map(|l| if l.trim() == USE_LINE { "#import simtlab_pt" } else { l }).collect::<Vec<_>>().join("\n")
    } else {
        format!("{}\n#import simtlab_pt\n", text.trim_end())
    };
    preprocess_text(file, &with_import, &["PT_BARRIER_TREE", "PT_COUNT_POLLS"], &resolve)
}

/// The public module's WGSL with its bindings at `group` (0: control words, 1: configuration,
/// 2: queue), for reading or for pasting into a kernel that is run elsewhere.
pub fn module(group: u32) -> Result<String> {
    Ok(expand("simtlab_pt", "", group)?.text)
}

/// A user's kernel with the module placed, and what it needs.
#[derive(Clone, Debug)]
pub struct PtShader {
    /// The kernel's name in messages (its path).
    pub file: String,
    /// The kernel's text with the module; line origins map back to the kernel's own lines.
    pub source: ShaderSource,
    /// The compute entry point.
    pub entry: String,
    /// The group the module's bindings are at.
    pub group: u32,
    /// Bindings of the module's group the entry point uses ([`CONTROL_BINDING`],
    /// [`CONFIG_BINDING`], [`QUEUE_BINDING`]).
    pub bindings: Vec<u32>,
    /// The tier the entry point needs: [`Tier::Multi`] without any module function,
    /// [`Tier::NonBlocking`] when it never waits, [`Tier::Blocking`] when it does.
    pub needs: Tier,
    /// The first wait the entry point reaches, as `function at file:line`.
    pub waits_at: Option<String>,
    /// The entry point's `@workgroup_size`.
    pub workgroup_size: [u32; 3],
}

impl PtShader {
    /// Invocations per workgroup.
    pub fn threads(&self) -> u32 {
        self.workgroup_size.iter().product::<u32>().max(1)
    }
}

/// The calls the entry point reaches, by callee name, each with its first (file, line).
fn reached_calls(module: &naga::Module, source: &ShaderSource, body: &naga::Block) -> HashMap<String, (String, usize)> {
    fn walk(
        module: &naga::Module,
        source: &ShaderSource,
        block: &naga::Block,
        seen: &mut Vec<naga::Handle<naga::Function>>,
        out: &mut HashMap<String, (String, usize)>,
    ) {
        for (statement, span) in block.span_iter() {
            match statement {
                naga::Statement::Call { function, .. } => {
                    let name = module.functions[*function].name.clone().unwrap_or_default();
                    out.entry(name).or_insert_with(|| source.origin(span.location(&source.text).line_number as usize));
                    if !seen.contains(function) {
                        seen.push(*function);
                        walk(module, source, &module.functions[*function].body, seen, out);
                    }
                }
                naga::Statement::Block(b) => walk(module, source, b, seen, out),
                naga::Statement::If { accept, reject, .. } => {
                    walk(module, source, accept, seen, out);
                    walk(module, source, reject, seen, out);
                }
                naga::Statement::Switch { cases, .. } => cases.iter().for_each(|c| walk(module, source, &c.body, seen, out)),
                naga::Statement::Loop { body, continuing, .. } => {
                    walk(module, source, body, seen, out);
                    walk(module, source, continuing, seen, out);
                }
                _ => {}
            }
        }
    }
    let mut out = HashMap::new();
    walk(module, source, body, &mut Vec::new(), &mut out);
    out
}

/// Whether `wgsl` is written against the module: it has the [`USE_LINE`] or the text of a call
/// to one of [`FUNCTIONS`]. A quick test on the text, for deciding how to read a kernel;
/// [`shader`] then finds with naga which calls the entry point actually reaches.
pub fn uses_module(wgsl: &str) -> bool {
    wgsl.lines().any(|l| l.trim() == USE_LINE) || FUNCTIONS.iter().any(|f| wgsl.contains(&format!("{f}(")))
}

/// The compute entry points of `wgsl` (named `file` in errors) with the module placed, in
/// source order.
pub fn entry_points(file: &str, wgsl: &str) -> Result<Vec<String>> {
    let (_, module) = parse(file, wgsl, PROVISIONAL_GROUP)?;
    Ok(module.entry_points.iter().filter(|e| e.stage == naga::ShaderStage::Compute).map(|e| e.name.clone()).collect())
}

/// Places the module in `wgsl` (named `file` in errors) at the first group after the
/// kernel's own, and finds the tier entry point `entry` needs.
pub fn shader(file: &str, wgsl: &str, entry: &str, max_bind_groups: u32) -> Result<PtShader> {
    let (provisional, module) = parse(file, wgsl, PROVISIONAL_GROUP)?;
    let own: Vec<u32> = module
        .global_variables
        .iter()
        .filter_map(|(_, g)| g.binding.as_ref().map(|b| b.group))
        .filter(|&g| g != PROVISIONAL_GROUP)
        .collect();
    let group = own.iter().max().map_or(0, |g| g + 1);
    if group >= max_bind_groups {
        return Err(Error::invalid(
            "bind groups",
            format!(
                "{file} uses groups up to {} and the device has {max_bind_groups}; the persistent-threads bindings need a group of their own: move the kernel's bindings into fewer groups",
                group - 1
            ),
        ));
    }
    drop(provisional);
    let source = expand(file, wgsl, group)?;
    let (module, info) = validate(&source)?;
    let index = module.entry_points.iter().position(|e| e.name == entry && e.stage == naga::ShaderStage::Compute).ok_or_else(|| {
        let names: Vec<&str> =
            module.entry_points.iter().filter(|e| e.stage == naga::ShaderStage::Compute).map(|e| e.name.as_str()).collect();
        Error::invalid("entry point", format!("{file} has no compute entry point '{entry}' (it has: {})", names.join(", ")))
    })?;
    let ep = &module.entry_points[index];
    let uses = info.get_entry_point(index);
    let mut bindings: Vec<u32> = module
        .global_variables
        .iter()
        .filter(|(h, g)| !uses[*h].is_empty() && g.binding.as_ref().is_some_and(|b| b.group == group))
        .filter_map(|(_, g)| g.binding.as_ref().map(|b| b.binding))
        .collect();
    bindings.sort_unstable();
    let calls = reached_calls(&module, &source, &ep.function.body);
    let first_wait = WAITING.iter().filter_map(|f| calls.get(*f).map(|at| (*f, at))).min_by_key(|(_, at)| at.1);
    let needs = if first_wait.is_some() {
        Tier::Blocking
    } else if FUNCTIONS.iter().any(|f| calls.contains_key(*f)) {
        Tier::NonBlocking
    } else {
        Tier::Multi
    };
    let waits_at = first_wait.map(|(f, (file, line))| format!("{f} at {file}:{line}"));
    if let (Some(wait), false) = (&waits_at, calls.contains_key("pt_join")) {
        return Err(Error::invalid(
            "entry point",
            format!("'{entry}' of {file} waits ({wait}) without joining: call pt_join(local_index, workgroup_id, num_workgroups) first, in uniform control flow"),
        ));
    }
    Ok(PtShader { file: file.into(), source, entry: entry.into(), group, bindings, needs, waits_at, workgroup_size: ep.workgroup_size })
}

fn parse(file: &str, wgsl: &str, group: u32) -> Result<(ShaderSource, naga::Module)> {
    let source = expand(file, wgsl, group)?;
    let (module, _) = validate(&source)?;
    Ok((source, module))
}

/// Sizes of the queue a launch binds.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct QueueOptions {
    /// Ring slots for `pt_push`/`pt_pop`.
    pub capacity: u32,
}

impl Default for QueueOptions {
    fn default() -> Self {
        QueueOptions { capacity: DEFAULT_CAPACITY }
    }
}

impl Runtime {
    /// The tier `shader` runs at on `gpu` and how many workgroups it launches (blocking; see
    /// [`Runtime::plan_shader_async`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn plan_shader(&self, gpu: &Gpu, shader: &PtShader) -> Result<Plan> {
        crate::gpu::block_on(self.plan_shader_async(gpu, shader))
    }

    /// The tier `shader` runs at on `gpu` and how many workgroups it launches. A kernel that
    /// waits is refused (an [`Error::Unsupported`] saying what to do) where the adapter's
    /// capability check failed.
    pub async fn plan_shader_async(&self, gpu: &Gpu, shader: &PtShader) -> Result<Plan> {
        let mut plan =
            Plan { requested: shader.needs, used: shader.needs, fallbacks: Vec::new(), launch: 0, supported: vec![shader.needs] };
        if shader.needs == Tier::Multi {
            return Ok(plan);
        }
        let capability = self.capability_async(gpu).await?;
        if shader.needs == Tier::Blocking && !capability.blocking_ok && !self.options.assume_resident {
            return Err(refusal(shader, &capability));
        }
        plan.launch = self.shader_launch(gpu, shader, &capability)?;
        Ok(plan)
    }

    /// Workgroups a persistent `shader` launches: [`super::PtOptions::launch`], else the
    /// co-resident 256-invocation workgroups discovery found, scaled to the kernel's workgroup
    /// size (the kernel's own discovery then keeps those that are co-resident). Where nothing
    /// was discovered (an adapter whose check stops early) a non-blocking kernel takes 64.
    fn shader_launch(&self, gpu: &Gpu, shader: &PtShader, capability: &Capability) -> Result<u32> {
        let max = gpu.caps().max_compute_workgroups_per_dimension;
        if let Some(l) = self.options.launch {
            if l == 0 || l > max {
                return Err(Error::invalid("launch", format!("{l} workgroups; give 1..={max}")));
            }
            return Ok(l);
        }
        let resident = if capability.discovered > 0 { capability.discovered } else { 64 };
        let scale = (256 / shader.threads()).max(1);
        Ok(resident.saturating_mul(scale).clamp(1, max))
    }

    /// Buffers and bind group of one launch of `shader` under `plan`, for `pipeline` (built
    /// from `shader.source`).
    pub fn prepare(
        &self,
        gpu: &Gpu,
        shader: &PtShader,
        plan: &Plan,
        pipeline: &wgpu::ComputePipeline,
        queue: QueueOptions,
    ) -> Result<PtLaunch> {
        let mut config = self.config(gpu, plan.used, plan.launch.max(1));
        config.capacity = queue.capacity.max(1);
        let control = Control::new(gpu, config)?;
        let words = gpu.buffer_zeroed::<u32>("pt queue", queue_words(config.capacity), BufferKind::Storage)?;
        let bind_group = if shader.bindings.is_empty() || plan.used == Tier::Multi {
            None
        } else {
            let entries: Vec<wgpu::BindGroupEntry> = shader
                .bindings
                .iter()
                .map(|&b| wgpu::BindGroupEntry {
                    binding: b,
                    resource: match b {
                        CONTROL_BINDING => control.ctl.buffer.as_entire_binding(),
                        CONFIG_BINDING => control.cfg.buffer.as_entire_binding(),
                        _ => words.buffer.as_entire_binding(),
                    },
                })
                .collect();
            let layout = pipeline.get_bind_group_layout(shader.group);
            Some(gpu.checked_now("binding the persistent-threads buffers", || {
                gpu.device().create_bind_group(&wgpu::BindGroupDescriptor { label: Some("simtlab pt"), layout: &layout, entries: &entries })
            })?)
        };
        Ok(PtLaunch {
            plan: plan.clone(),
            control,
            queue: words,
            bind_group,
            group: shader.group,
            what: format!("'{}' of {}", shader.entry, shader.file),
            reset_at: Mutex::new(None),
        })
    }
}

/// Why a waiting kernel may not run on this adapter, and what to do.
fn refusal(shader: &PtShader, capability: &Capability) -> Error {
    Error::Unsupported {
        what: format!(
            "'{}' of {} waits for other workgroups ({}): a blocking wait",
            shader.entry,
            shader.file,
            shader.waits_at.as_deref().unwrap_or("a global barrier"),
        ),
        adapter: capability.adapter.clone(),
        hint: format!(
            "the capability check failed ({}). Split the kernel at its global barriers into one dispatch per phase (each a kernel without pt_ calls), or take work with pt_claim only, which never waits and runs on every adapter",
            capability.reason.as_deref().unwrap_or("no reason given")
        ),
    }
}

/// One prepared launch of a user's kernel: the control words, configuration and queue at the
/// module's group, recorded into the caller's encoder.
#[derive(Debug)]
pub struct PtLaunch {
    /// The tier and launch size.
    pub plan: Plan,
    control: Control,
    queue: GpuBuffer<u32>,
    bind_group: Option<wgpu::BindGroup>,
    group: u32,
    what: String,
    /// When the last reset was recorded: an upper bound on the run's time, for errors.
    reset_at: Mutex<Option<Instant>>,
}

impl PtLaunch {
    /// Workgroups a persistent kernel is dispatched with (`[launch, 1, 1]`).
    pub fn workgroups(&self) -> [u32; 3] {
        [self.plan.launch.max(1), 1, 1]
    }

    /// The bind group of the module's buffers and its group number (None when the entry
    /// point uses none of them).
    pub fn bind_group(&self) -> Option<(u32, &wgpu::BindGroup)> {
        self.bind_group.as_ref().map(|b| (self.group, b))
    }

    /// Clears the control and queue words; record it before each dispatch of the kernel.
    pub fn reset(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.clear_buffer(&self.control.ctl.buffer, 0, None);
        encoder.clear_buffer(&self.queue.buffer, 0, None);
        self.mark_reset();
    }

    /// [`PtLaunch::reset`] as steps, for [`Gpu::run_once_async`] and the other runs of steps.
    fn reset_steps(&self) -> [Step<'_>; 2] {
        self.mark_reset();
        [Step::clear(&self.control.ctl), Step::clear(&self.queue)]
    }

    fn mark_reset(&self) {
        if let Ok(mut at) = self.reset_at.lock() {
            *at = Some(Instant::now());
        }
    }

    /// Records the reset and one dispatch of `pipeline` with the caller's bind groups
    /// (`(group, bind group)`) and the module's; `workgroups` replaces the launch size (for a
    /// kernel of [`Tier::Multi`], which has none).
    pub fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        pipeline: &wgpu::ComputePipeline,
        groups: &[(u32, &wgpu::BindGroup)],
        workgroups: Option<[u32; 3]>,
    ) {
        self.reset(encoder);
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("simtlab pt"), timestamp_writes: None });
        pass.set_pipeline(pipeline);
        for (g, b) in groups.iter().copied().chain(self.bind_group()) {
            pass.set_bind_group(g, Some(b), &[]);
        }
        let w = workgroups.unwrap_or(self.workgroups());
        pass.dispatch_workgroups(w[0], w[1], w[2]);
    }

    /// The control words after the launch, decoded (waits for the GPU, bounded by its timeout).
    pub async fn status_async(&self, gpu: &Gpu) -> Result<Status> {
        let bytes = gpu.read_bytes_async(&self.control.ctl.buffer, (CONTROL_WORDS * 4) as u64).await?;
        Ok(Status::decode(bytemuck::cast_slice(&bytes), &self.control.config))
    }

    /// [`PtLaunch::status_async`], blocking.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn status(&self, gpu: &Gpu) -> Result<Status> {
        crate::gpu::block_on(self.status_async(gpu))
    }

    /// The status, or the error an abort means.
    pub async fn finish_async(&self, gpu: &Gpu) -> Result<Status> {
        let status = self.status_async(gpu).await?;
        let seconds = self.reset_at.lock().ok().and_then(|at| at.map(|t| t.elapsed().as_secs_f64())).unwrap_or(0.0);
        if let Some(reason) = status.abort {
            return Err(abort_error(&self.what, &status, reason, &gpu.adapter_name(), seconds));
        }
        let participants = if status.discovered > 0 { status.discovered } else { status.config.launched };
        let cut = |why: String| {
            Error::Timeout {
            what: format!("{} on {} ({why})", self.what, gpu.adapter_name()),
            seconds,
            hint: "the run was cut short, not wrong: the driver ends an invocation's loops after a fixed number of iterations (llvmpipe: 65535 in all), waits included; run it again with the CPU less busy, give it less work per invocation, or run on a GPU".into(),
        }
        };
        // every participant arrives at every barrier: a count that is not a multiple of the
        // participants means one left early without an abort (its loops were cut)
        if self.plan.used == Tier::Blocking && participants > 0 && status.barrier_arrivals % participants != 0 {
            return Err(cut(format!("{} barrier arrivals by {participants} participants, so one stopped early", status.barrier_arrivals)));
        }
        if let Some(limit) = gpu.loop_iteration_limit() {
            if status.total_polls as u64 * 2 > limit {
                return Err(cut(format!("the waits took {} of the driver's {limit} loop iterations of one invocation, so the kernel's own loops may have been cut short", status.total_polls)));
            }
        }
        Ok(status)
    }

    /// [`PtLaunch::finish_async`], blocking.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn finish(&self, gpu: &Gpu) -> Result<Status> {
        crate::gpu::block_on(self.finish_async(gpu))
    }
}

/// The error for a user's kernel that aborted, in the library's terms.
fn abort_error(what: &str, status: &Status, reason: AbortReason, adapter: &str, seconds: f64) -> Error {
    let what = format!("{what} on {adapter}: {} (code {}, detail {})", reason.describe(), reason.code(), status.detail);
    match reason {
        AbortReason::QueueOverflow => Error::Limit {
            what,
            requested: status.detail as u64 + 1,
            limit: status.config.capacity as u64,
            hint: "give the launch a larger queue (QueueOptions::capacity), or pop items as they are pushed".into(),
        },
        AbortReason::LoopLimit => Error::Timeout {
            what,
            seconds,
            hint: "the run was cut short, not wrong: the driver ends an invocation's loops after a fixed number of iterations (llvmpipe: 65535 in all); give it less work per invocation or launch more workgroups".into(),
        },
        _ => Error::Timeout {
            what,
            seconds,
            hint: format!(
                "a wait ran past PtOptions::spin_cap ({} polls): some participant never arrived or was starved. Every participant must reach each pt_global_barrier (none may leave its loop early); where the adapter cannot keep the workgroups co-resident, split the kernel at its barriers into one dispatch per phase",
                status.config.spin_cap
            ),
        },
    }
}

/// A user's kernel to run from binding specs (what `simtlab pt` runs).
#[derive(Clone, Debug)]
pub struct PtRequest<'a> {
    /// Name of the kernel in messages (its path).
    pub file: &'a str,
    /// The kernel's WGSL.
    pub wgsl: &'a str,
    /// The compute entry point.
    pub entry: &'a str,
    /// `(binding key, contents)`: the variable's name, `N` (group 0) or `G:N`.
    pub bindings: Vec<(String, BindingSpec)>,
    /// Workgroups to dispatch: required for a kernel without module calls, else it replaces
    /// the launch the runtime picks.
    pub workgroups: Option<[u32; 3]>,
    /// Dispatches of the kernel in one pass (each sees the previous one's writes): the
    /// relaunch formulation of a kernel that a global barrier would otherwise keep running.
    pub dispatches: u32,
    /// Timed runs (the median is reported), each from the same inputs.
    pub samples: usize,
    /// Expected final contents of bindings, compared byte for byte.
    pub expect: Vec<(String, BindingSpec)>,
    /// The queue's sizes.
    pub queue: QueueOptions,
}

/// A final binding compared with its expected contents.
#[derive(Clone, Debug, Serialize)]
pub struct OutputCheck {
    /// The binding's name.
    pub binding: String,
    /// The comparison of its 32-bit words.
    pub check: Check,
}

/// What [`run`] measured.
#[derive(Clone, Debug, Serialize)]
pub struct PtRun {
    /// The kernel's name (its path).
    pub file: String,
    /// The entry point.
    pub entry: String,
    /// The adapter it ran on.
    pub adapter: String,
    /// The tier the kernel needs, the one that ran, any fallback and the launch.
    pub plan: Plan,
    /// The first wait the kernel reaches.
    pub waits_at: Option<String>,
    /// Group of the module's bindings.
    pub group: u32,
    /// Workgroups dispatched (each dispatch).
    pub workgroups: [u32; 3],
    /// The entry point's `@workgroup_size`.
    pub workgroup_size: [u32; 3],
    /// Dispatches per run.
    pub dispatches: u32,
    /// Participating workgroups (discovered, or all launched for a non-blocking kernel; 0 for
    /// a kernel without module calls).
    pub participants: u32,
    /// Timed runs.
    pub stats: Stats,
    /// The last run's status (None for a kernel without module calls).
    pub status: Option<Status>,
    /// The adapter's capability, where it was assessed.
    pub capability: Option<Capability>,
    /// Expected outputs against what the kernel wrote.
    pub checks: Vec<OutputCheck>,
    /// Final contents of every writable binding (name, bytes), after the last run.
    #[serde(skip)]
    pub outputs: Vec<(String, Vec<u8>)>,
}

impl PtRun {
    /// The final bytes of binding `name`.
    pub fn output(&self, name: &str) -> Option<&[u8]> {
        self.outputs.iter().find(|(n, _)| n == name).map(|(_, b)| b.as_slice())
    }

    /// The final contents of binding `name` as u32 words.
    pub fn output_u32(&self, name: &str) -> Option<Vec<u32>> {
        self.output(name).map(|b| b.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }

    /// The run as a harness record (family `pt`, kernel `user:ENTRY`, variant the tier name).
    pub fn record(&self, gpu: &Gpu) -> Record {
        let mut check = Check { passed: true, checked: 0, mismatches: 0, max_rel_error: 0.0, tolerance: 0.0, first_mismatch: None };
        for c in &self.checks {
            check.passed &= c.check.passed;
            check.checked += c.check.checked;
            check.mismatches += c.check.mismatches;
            if check.first_mismatch.is_none() {
                check.first_mismatch = c.check.first_mismatch.as_ref().map(|m| format!("{}{m}", c.binding));
            }
        }
        let params = serde_json::json!({
            "file": self.file, "entry": self.entry, "workgroups": self.workgroups,
            "workgroup_size": self.workgroup_size, "dispatches": self.dispatches,
        });
        let mut verdict = self.plan.verdict(self.capability.as_ref(), self.status.as_ref(), 0);
        verdict.launch = self.workgroups.iter().product();
        Record::new(gpu, "pt", &format!("user:{}", self.entry), self.plan.used.name(), self.stats.clone(), check)
            .with_config(&params, 0)
            .with_extra(verdict)
            .with_extra(serde_json::json!({ "participants": self.participants, "waits_at": self.waits_at, "group": self.group, "checks": self.checks }))
    }
}

struct Bound {
    info: BindingInfo,
    buffer: wgpu::Buffer,
    pristine: Option<wgpu::Buffer>,
}

/// Runs a user's kernel from binding specs: places the module, plans the tier (refusing a
/// waiting kernel where that is unsafe), runs it `samples` times from the same inputs with its
/// status checked after each run, compares the expected outputs.
#[cfg(not(target_arch = "wasm32"))]
pub fn run(gpu: &Gpu, runtime: &Runtime, request: &PtRequest) -> Result<PtRun> {
    crate::gpu::block_on(run_async(gpu, runtime, request))
}

/// [`run`] as a future.
pub async fn run_async(gpu: &Gpu, runtime: &Runtime, request: &PtRequest<'_>) -> Result<PtRun> {
    if request.samples == 0 || request.dispatches == 0 {
        return Err(Error::invalid("run", "samples and dispatches must each be at least 1"));
    }
    let shader = shader(request.file, request.wgsl, request.entry, gpu.device().limits().max_bind_groups)?;
    let plan = runtime.plan_shader_async(gpu, &shader).await?;
    let workgroups = match (request.workgroups, plan.used) {
        (Some(w), _) => w,
        (None, Tier::Multi) => {
            return Err(Error::invalid(
                "workgroups",
                format!(
                    "'{}' of {} calls no persistent-threads function, so it runs as a plain dispatch: give its workgroups",
                    shader.entry, shader.file
                ),
            ))
        }
        (None, _) => [plan.launch, 1, 1],
    };
    let max = gpu.caps().max_compute_workgroups_per_dimension;
    if workgroups.iter().any(|&w| w == 0 || w > max) {
        return Err(Error::invalid("workgroups", format!("{workgroups:?}: each dimension must be in 1..={max}")));
    }
    let mut plan = plan;
    if plan.used != Tier::Multi {
        plan.launch = workgroups.iter().product();
    }

    let (module, info) = validate(&shader.source)?;
    let all = entry_bindings(&shader.source.text, &module, &info, &shader.entry)?;
    let own: Vec<BindingInfo> = all.into_iter().filter(|b| b.group != shader.group || b.resource == Resource::Immediate).collect();
    if let Some(b) = own.iter().find(|b| b.resource != Resource::Buffer) {
        return Err(Error::invalid("binding", format!("{}: a persistent-threads run binds storage and uniform buffers only", b.label())));
    }
    let limit = gpu.device().limits().max_storage_buffer_binding_size;
    let data = contents_within(&own, &request.bindings, &|b, len| {
        if len > limit {
            Err(Error::Limit { what: b.label(), requested: len, limit, hint: "give a smaller buffer".into() })
        } else {
            Ok(())
        }
    })?;
    let expected: Vec<(usize, Vec<u8>)> = request
        .expect
        .iter()
        .map(|(key, spec)| {
            let i = own
                .iter()
                .position(|b| b.matches(key) && b.writable)
                .ok_or_else(|| Error::invalid("expected output", format!("'{key}' names no binding the entry point writes")))?;
            Ok((i, spec.bytes()?))
        })
        .collect::<Result<_>>()?;

    let kernel = gpu.compile(&shader.source, &format!("{}:{}", shader.file, shader.entry), &shader.entry, &[])?;
    let mut bound = Vec::new();
    for (b, bytes) in own.iter().zip(&data) {
        let kind = if b.uniform { BufferKind::Uniform } else { BufferKind::Storage };
        let buffer = gpu.buffer::<u8>(&b.name, bytes, kind)?.buffer;
        let pristine = if b.writable { Some(gpu.buffer::<u8>(&b.name, bytes, kind)?.buffer) } else { None };
        bound.push(Bound { info: b.clone(), buffer, pristine });
    }
    let mut numbers: Vec<u32> = bound.iter().map(|b| b.info.group).collect();
    numbers.sort_unstable();
    numbers.dedup();
    let groups: Vec<(u32, wgpu::BindGroup)> = numbers
        .iter()
        .map(|&g| {
            let resources: Vec<(u32, wgpu::BindingResource)> =
                bound.iter().filter(|b| b.info.group == g).map(|b| (b.info.binding, b.buffer.as_entire_binding())).collect();
            kernel.bind_group(gpu, g, &resources).map(|bg| (g, bg))
        })
        .collect::<Result<_>>()?;
    let launch = runtime.prepare(gpu, &shader, &plan, &kernel.pipeline, request.queue)?;
    let group_refs: Vec<(u32, &wgpu::BindGroup)> = groups.iter().map(|(g, b)| (*g, b)).chain(launch.bind_group()).collect();
    // each run from the same inputs: the written buffers restored, the control words cleared
    let restore: Vec<Step> =
        bound.iter().filter_map(|b| b.pristine.as_ref().map(|from| Step::copy(from, &b.buffer, from.size()))).collect();
    let dispatch = Step::dispatch_groups(&kernel, &group_refs, workgroups);

    let mut samples = Vec::new();
    let mut source = TimingSource::DeviceTimestamps;
    let mut status = None;
    for _ in 0..request.samples {
        let mut steps = restore.clone();
        steps.extend(launch.reset_steps());
        steps.extend(std::iter::repeat_n(dispatch, request.dispatches as usize));
        let timing = gpu.run_once_async(&steps, true).await?;
        samples.push(timing.seconds);
        source = timing.source;
        if plan.used != Tier::Multi {
            status = Some(launch.finish_async(gpu).await?);
        }
    }
    let mut outputs = Vec::new();
    for b in bound.iter().filter(|b| b.info.writable) {
        outputs.push((b.info.name.clone(), gpu.read_bytes_async(&b.buffer, b.buffer.size()).await?));
    }
    let checks = expected
        .iter()
        .map(|(i, want)| {
            let name = &bound[*i].info.name;
            let got = &outputs.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone()).unwrap_or_default();
            let words = |b: &[u8]| b.chunks(4).map(|c| c.iter().rev().fold(0u32, |a, &x| a << 8 | x as u32)).collect::<Vec<u32>>();
            let (got, want) = (words(got), words(want));
            // a shorter output than expected counts as a length mismatch
            OutputCheck { binding: name.clone(), check: Check::exact(&got[..want.len().min(got.len())], &want) }
        })
        .collect();
    let participants = match (&status, plan.used) {
        (_, Tier::Multi) | (None, _) => 0,
        (Some(s), Tier::Blocking) if !runtime.options.assume_resident => s.discovered,
        (Some(_), _) => workgroups.iter().product(),
    };
    Ok(PtRun {
        file: shader.file.clone(),
        entry: shader.entry.clone(),
        adapter: gpu.adapter_name(),
        plan,
        waits_at: shader.waits_at.clone(),
        group: shader.group,
        workgroups,
        workgroup_size: shader.workgroup_size,
        dispatches: request.dispatches,
        participants,
        stats: Stats::from_samples(samples, source)?,
        status,
        capability: runtime.assessed(),
        checks,
        outputs,
    })
}
