//! Removing divergence from a user's shader on a [`Gpu`] (the `simtlab remap` command): the
//! shader runs as written with the probe (SIMT efficiency before, time, outputs); a key pass
//! records each invocation's path signature (the probe's trace: how many branch outcomes it
//! had, and its first ones), or the keys come from a binding the user names; the keys become
//! classes and a redirect index ([`super::redirect_index_of`]); [`super::decide`] weighs the
//! predicted gain against the cost; the remapped shader ([`super::remap_shader`]) then runs
//! with the probe from the same inputs (SIMT efficiency after, time, outputs), and every
//! writable binding is compared byte for byte with the run as written.

use super::calibration::{Calibration, Lesson};
use super::classes::{classify_loops, Bucketing, Classes, MAX_CLASSES};
use super::control::{decide_calibrated, CostModel, Decision, Profile, Strategy};
use super::gpu::GpuRegroup;
use super::gpu_regroup::MAX_GPU_CLASSES;
use super::redirect::{redirect_index_of, TILE_ELEMENTS};
use super::shader::{remap_shader, RemapShaderOptions, RemappedShader, INDEX_NAME};
use crate::error::{Error, Result};
use crate::gpu::{BufferKind, Gpu, Timing};
use crate::harness::Named;
use crate::profile::{profile_async, BindingSpec, ProfileRequest, ProfileRun, ProfileStep, ShaderDispatch, Summary};
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use web_time::Instant;

/// Branch outcomes per invocation the key pass records (the rest are only counted): enough to
/// tell a `switch`'s cases and the first turns of a path apart.
pub const SIGNATURE_EVENTS: u32 = 8;

/// What to remap and how.
#[derive(Clone, Debug)]
pub struct RemapRequest<'a> {
    /// The shader, its dispatch, bindings and overrides (as profiling takes them): every run
    /// (as written, the key pass, remapped) uses them.
    pub shader: ShaderDispatch<'a>,
    /// A binding whose initial `u32` values (one per invocation, in the linear order of the
    /// global ids) are the keys; None = each invocation's path signature.
    pub key: Option<String>,
    /// `Auto` (remap only where the model predicts a gain, with the index from the host or the
    /// GPU as the model prefers, and never keep a remap that measured slower), `None` (run as
    /// written), `Redirect` (always remap, the index built on the host) or `GpuRegroup`
    /// (always remap, the index built on the GPU by [`super::GpuRegroup`]).
    pub strategy: Strategy,
    /// Emulate subgroups of this width on the host (as [`ProfileRequest::width`]).
    pub width: Option<u32>,
    /// Timed runs of each variant (the median is reported).
    pub samples: usize,
    /// (group, binding) of the index; None = a free one.
    pub slot: Option<(u32, u32)>,
    /// Dispatches one index serves (the same data each time, as in an iterative solver or a
    /// frame loop over slowly changing data): the keys and the index are paid once for them.
    pub dispatches: usize,
    /// What earlier runs on this adapter taught the cost model ([`Calibration`]); None = the
    /// model alone. The run learns from its own measurement into [`RemapRun::calibration`].
    pub calibration: Option<&'a Calibration>,
}

/// One side of the comparison: the shader as written, or remapped.
#[derive(Clone, Debug, Serialize)]
pub struct RemapSide {
    /// SIMT efficiency over all sites (the probe's counts).
    pub simt_efficiency: f64,
    /// Branch efficiency over all sites.
    pub branch_efficiency: f64,
    /// Median kernel time of the uninstrumented shader.
    pub seconds: f64,
    /// How it was timed.
    pub timing: Timing,
    /// Per-site rows and totals.
    pub summary: Summary,
}

impl RemapSide {
    fn of(run: &ProfileRun) -> RemapSide {
        RemapSide {
            simt_efficiency: run.summary.simt_efficiency,
            branch_efficiency: run.summary.branch_efficiency,
            seconds: run.plain.seconds,
            timing: run.plain,
            summary: run.summary.clone(),
        }
    }
}

/// The result of [`remap_run`].
#[derive(Clone, Debug, Serialize)]
pub struct RemapRun {
    /// The shader's name (its path).
    pub file: String,
    /// The entry point.
    pub entry: String,
    /// The adapter it ran on.
    pub adapter: String,
    /// What an app should run: `none` (the shader as written), `redirect` (the remapped shader
    /// with the host's index) or `gpu` (with the index built on the GPU). With `none`,
    /// `after` is what the remapped shader measured if it ran (auto found it slower), else
    /// `before` again.
    pub strategy: Strategy,
    /// Why, in words: the model's prediction, and what the measurement changed.
    pub reason: String,
    /// The model's prediction.
    pub decision: Decision,
    /// What this run's measurement taught the model (empty when the remapped shader did not
    /// run, or its outputs differed): the prediction, the measurement, the model now.
    pub lessons: Vec<Lesson>,
    /// The request's calibration with this run's lessons learned: give it to the next run on
    /// this adapter (and keep it where you keep results, [`Calibration::to_json`]).
    #[serde(skip)]
    pub calibration: Calibration,
    /// What the keys were: "path signature" or the binding's name.
    pub key: String,
    /// Distinct keys (classes) among the invocations.
    pub classes: usize,
    /// The shader as written.
    pub before: RemapSide,
    /// The remapped shader (equal to `before` when it did not run).
    pub after: RemapSide,
    /// GPU time of the key pass (the shader with the probe recording each invocation's path
    /// signature); 0 with a key binding.
    pub key_seconds: f64,
    /// Host time to turn the keys into classes (one id per invocation).
    pub classes_seconds: f64,
    /// Time to build the index from the classes: the host's counting sort (`redirect`), or
    /// the GPU time of the regroup's five dispatches ([`super::GpuRegroup`], `gpu`); 0 when
    /// the shader runs as written.
    pub index_seconds: f64,
    /// Dispatches the keys and the index are paid for once ([`RemapRequest::dispatches`]).
    pub dispatches: usize,
    /// `before.seconds / after.seconds`: one dispatch, the index given.
    pub kernel_speedup: f64,
    /// End to end: `dispatches · before.seconds / (key_seconds + classes_seconds +
    /// index_seconds + dispatches · after.seconds)`.
    pub speedup: f64,
    /// Every writable binding ended with the same bytes as written and remapped.
    pub outputs_identical: bool,
    /// (group, binding) of the index in the remapped shader.
    pub slot: (u32, u32),
    /// The remapped WGSL (what `--emit` writes).
    #[serde(skip)]
    pub remapped: RemappedShader,
    /// The index the remapped run read (element of each invocation).
    #[serde(skip)]
    pub index: Vec<u32>,
    /// Each invocation's class (its key's rank among the distinct keys), in the linear order
    /// of the global ids; empty when no keys were taken.
    #[serde(skip)]
    pub class_ids: Vec<u32>,
    /// The profile of the shader as written and of the remapped one (heat maps).
    #[serde(skip)]
    pub runs: (ProfileRun, Option<ProfileRun>),
}

/// Remaps the shader of `request` and measures it against the shader as written (blocking; see
/// [`remap_run_async`]).
#[cfg(not(target_arch = "wasm32"))]
pub fn remap_run(gpu: &Gpu, request: &RemapRequest) -> Result<RemapRun> {
    crate::gpu::block_on(remap_run_async(gpu, request, &AtomicBool::new(false), &mut |_| {}))
}

/// [`remap_run`], awaited: `progress` hears of every step, and once `cancel` is set the run
/// stops before its next step with [`Error::Cancelled`].
pub async fn remap_run_async(
    gpu: &Gpu,
    request: &RemapRequest<'_>,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(ProfileStep),
) -> Result<RemapRun> {
    if request.dispatches == 0 {
        return Err(Error::invalid("dispatches", "0: an index serves at least one dispatch"));
    }
    if !Strategy::FOR_SHADERS.contains(&request.strategy) {
        let names: Vec<&str> = Strategy::FOR_SHADERS.iter().map(|s| s.name()).collect();
        return Err(Error::invalid(
            "strategy",
            format!("'{}' needs a kernel written for it; a user's shader is remapped with {}", request.strategy, names.join(", ")),
        ));
    }
    // refusals come before any GPU work
    let options = RemapShaderOptions {
        slot: request.slot,
        max_bind_groups: gpu.device().limits().max_bind_groups,
        overrides: request.shader.overrides.clone(),
    };
    let remapped = remap_shader(request.shader.file, request.shader.wgsl, request.shader.entry, &options)?;
    let adapter = gpu.adapter_name();
    let mut calibration = request.calibration.cloned().unwrap_or_default();
    if !calibration.applies_to(&adapter) {
        return Err(Error::invalid(
            "calibration",
            format!(
                "it was learned on '{}' and this run is on '{adapter}'; give a calibration of this adapter, or none to start one",
                calibration.adapter
            ),
        ));
    }
    calibration.adapter = adapter;
    let as_written = profile_request(request, request.shader.file, request.shader.wgsl, request.shader.bindings.clone());
    let before = profile_async(gpu, &as_written, cancel, &mut |s| progress(prefixed("as written", s))).await?;
    let invocations = invocations(&remapped, request.shader.workgroups)?;
    // auto: a shader whose subgroups never diverge runs as written, without a key pass
    if request.strategy == Strategy::Auto && before.summary.divergent_subgroups == 0 {
        let reason = format!(
            "the shader runs as written: none of its {} subgroups diverges (SIMT efficiency {:.1} %), so remapping could only add its cost",
            before.summary.subgroups,
            100.0 * before.summary.simt_efficiency
        );
        let decision = Decision {
            strategy: Strategy::None,
            reason: reason.clone(),
            predicted_gain_s: 0.0,
            cost_s: 0.0,
            abandon_after_s: 0.0,
            predictions: Vec::new(),
            baseline_s: before.plain.seconds * request.dispatches as f64,
        };
        let paid = Paid { key: "none needed".into(), classes: 0, key_seconds: 0.0, classes_seconds: 0.0, calibration };
        return Ok(as_written_run(request, gpu, remapped, before, decision, reason, paid));
    }

    // the keys, one per invocation in the linear order of the global ids
    let (key, keys, weights, key_seconds) = match &request.key {
        Some(name) => {
            let values = key_values(request, name, invocations)?;
            (format!("binding {name}"), values.iter().map(|&v| (0, v)).collect::<Vec<_>>(), None, 0.0)
        }
        None => {
            progress(ProfileStep { done: 0, total: 1, what: "key pass: each invocation's path signature".into() });
            let (trace, timing) = crate::profile::trace_async(gpu, &as_written, SIGNATURE_EVENTS).await?;
            let signatures = signatures(&trace, remapped.workgroup_size, request.shader.workgroups)?;
            let trips = signatures.iter().map(|&(events, _)| events).collect::<Vec<_>>();
            ("path signature".to_string(), signatures, Some(trips), timing.seconds)
        }
    };

    let started = Instant::now();
    let classes = classes_of(&keys)?;
    let classes_seconds = started.elapsed().as_secs_f64();

    let width = before.summary.subgroup_width;
    // the model weighs each invocation's branch outcomes as its work (a user key carries no
    // measure of work: its classes are taken as one loop trip each)
    let trips = weights.unwrap_or_else(|| vec![1; keys.len()]);
    // the model sees the time of all the dispatches one index serves
    let profile = Profile::from_loops(&trips, &classes, width, TILE_ELEMENTS, before.plain.seconds * request.dispatches as f64)?;
    let classes_count = classes.count();
    let gpu_classes = u32::try_from(classes_count).ok().filter(|&c| c <= MAX_GPU_CLASSES);
    if request.strategy == Strategy::GpuRegroup && gpu_classes.is_none() {
        return Err(Error::invalid(
            "strategy",
            format!("gpu: the keys form {classes_count} classes and the GPU regroup sorts at most {MAX_GPU_CLASSES}; use redirect (the host's index) or a coarser key"),
        ));
    }
    let costs = CostModel { layout_applicable: false, gpu_regroup_available: gpu_classes.is_some(), ..CostModel::default() };
    let decision = decide_calibrated(request.strategy, &profile, &costs, &calibration)?;

    if decision.strategy == Strategy::None {
        let reason = format!("the shader runs as written: {}", decision.reason);
        let paid = Paid { key, classes: classes_count, key_seconds, classes_seconds, calibration };
        return Ok(as_written_run(request, gpu, remapped, before, decision, reason, paid));
    }
    // the index: the host's counting sort, or the GPU regroup over the class ids (the same
    // stable counting sort, built in five dispatches)
    let mechanism = decision.strategy;
    let (index, index_seconds) = match (mechanism, gpu_classes) {
        (Strategy::GpuRegroup, Some(count)) => {
            progress(ProfileStep { done: 0, total: 1, what: "building the index on the GPU".into() });
            gpu_index(gpu, classes.ids(), count, request.samples).await?
        }
        _ => {
            let started = Instant::now();
            let index = redirect_index_of(classes.ids(), classes_count)?;
            (index, started.elapsed().as_secs_f64())
        }
    };

    let mut bindings = request.shader.bindings.clone();
    bindings.push((INDEX_NAME.to_string(), BindingSpec::Bytes(bytemuck::cast_slice(&index).to_vec())));
    let file = format!("{} (remapped)", request.shader.file);
    let after =
        profile_async(gpu, &profile_request(request, &file, &remapped.wgsl, bindings), cancel, &mut |s| progress(prefixed("remapped", s)))
            .await?;
    let outputs_identical = before.outputs.iter().filter(|(b, _)| b.writable).all(|(b, bytes)| {
        after.outputs.iter().find(|(a, _)| a.group == b.group && a.binding == b.binding).is_some_and(|(_, remapped)| remapped == bytes)
    });
    let d = request.dispatches as f64;
    let kernel_speedup = before.plain.seconds / after.plain.seconds.max(1e-12);
    let speedup = d * before.plain.seconds / (key_seconds + classes_seconds + index_seconds + d * after.plain.seconds).max(1e-12);
    let measured = format!(
        "{:.3} ms as written, {:.3} ms remapped ({kernel_speedup:.2}x); keys {:.3} ms, classes {:.3} ms and index {:.3} ms ({}) once for {} dispatch(es): {speedup:.2}x end to end",
        before.plain.seconds * 1e3,
        after.plain.seconds * 1e3,
        key_seconds * 1e3,
        classes_seconds * 1e3,
        index_seconds * 1e3,
        if mechanism == Strategy::GpuRegroup { "GPU" } else { "host" },
        request.dispatches
    );
    // the measurement corrects the model for the next decision (a remap that changed an
    // output measured nothing worth learning)
    let lessons = if outputs_identical {
        let total = key_seconds + classes_seconds + index_seconds + d * after.plain.seconds;
        calibration.learn(&decision, d * before.plain.seconds, &[(mechanism, total)])?
    } else {
        Vec::new()
    };
    // auto never ships a remap that measured slower or changed an output: the shader runs as
    // written, and the record keeps what the remapped run measured
    let rejected = request.strategy == Strategy::Auto && (speedup < 1.0 || !outputs_identical);
    let (strategy, reason) = if rejected {
        let why = if outputs_identical { format!("remapping measured slower ({measured})") } else { "the remapped outputs differ".into() };
        (Strategy::None, format!("the shader runs as written: {why}; the model predicted {}", decision.reason))
    } else {
        (mechanism, format!("{}; measured {measured}", decision.reason))
    };
    Ok(RemapRun {
        file: request.shader.file.to_string(),
        entry: request.shader.entry.to_string(),
        adapter: gpu.adapter_name(),
        strategy,
        reason,
        decision,
        lessons,
        calibration,
        key,
        classes: classes_count,
        before: RemapSide::of(&before),
        after: RemapSide::of(&after),
        key_seconds,
        classes_seconds,
        index_seconds,
        dispatches: request.dispatches,
        kernel_speedup,
        speedup,
        outputs_identical,
        slot: remapped.slot,
        remapped,
        index,
        class_ids: classes.ids().to_vec(),
        runs: (before, Some(after)),
    })
}

/// The index built on the GPU ([`GpuRegroup`] over each invocation's class id: lo 0, width 1)
/// and the median GPU time of its five dispatches over `samples` runs.
async fn gpu_index(gpu: &Gpu, class_ids: &[u32], classes: u32, samples: usize) -> Result<(Vec<u32>, f64)> {
    let ids = gpu.buffer("remap class ids", class_ids, BufferKind::Storage)?;
    let regroup = GpuRegroup::new(gpu, &ids, class_ids.len(), 0, 1, classes)?;
    let steps = regroup.steps();
    let mut times = Vec::with_capacity(samples.max(1));
    for _ in 0..samples.max(1) {
        times.push(gpu.run_async(&steps, true).await?.seconds);
    }
    times.sort_by(f64::total_cmp);
    let index = gpu.read_async(&regroup.index).await?;
    Ok((index, times[times.len() / 2]))
}

/// What finding the keys and their classes cost before the decision to run as written.
struct Paid {
    key: String,
    classes: usize,
    key_seconds: f64,
    classes_seconds: f64,
    /// The request's calibration, unchanged (nothing was measured to learn from).
    calibration: Calibration,
}

/// The record of a shader that runs as written: `after` is `before`, and the end-to-end figure
/// counts what the decision cost once over the dispatches.
fn as_written_run(
    request: &RemapRequest,
    gpu: &Gpu,
    remapped: RemappedShader,
    before: ProfileRun,
    decision: Decision,
    reason: String,
    paid: Paid,
) -> RemapRun {
    let d = request.dispatches as f64;
    RemapRun {
        file: request.shader.file.to_string(),
        entry: request.shader.entry.to_string(),
        adapter: gpu.adapter_name(),
        strategy: Strategy::None,
        reason,
        decision,
        lessons: Vec::new(),
        calibration: paid.calibration,
        key: paid.key,
        classes: paid.classes,
        before: RemapSide::of(&before),
        after: RemapSide::of(&before),
        key_seconds: paid.key_seconds,
        classes_seconds: paid.classes_seconds,
        index_seconds: 0.0,
        dispatches: request.dispatches,
        kernel_speedup: 1.0,
        speedup: d * before.plain.seconds / (paid.key_seconds + paid.classes_seconds + d * before.plain.seconds).max(1e-12),
        outputs_identical: true,
        slot: remapped.slot,
        remapped,
        index: Vec::new(),
        class_ids: Vec::new(),
        runs: (before, None),
    }
}

/// The profile of `wgsl` with `bindings` under `request`'s dispatch, width and samples.
fn profile_request<'a>(
    request: &RemapRequest<'a>,
    file: &'a str,
    wgsl: &'a str,
    bindings: Vec<(String, BindingSpec)>,
) -> ProfileRequest<'a> {
    let s = &request.shader;
    let shader = ShaderDispatch { file, wgsl, entry: s.entry, workgroups: s.workgroups, bindings, overrides: s.overrides.clone() };
    ProfileRequest { width: request.width, samples: request.samples, ..ProfileRequest::new(shader) }
}

/// A profile's progress step, named as a step of the remapping.
fn prefixed(what: &str, step: ProfileStep) -> ProfileStep {
    ProfileStep { what: format!("{what}: {}", step.what), ..step }
}

/// Invocations of the dispatch.
fn invocations(remapped: &RemappedShader, workgroups: [u32; 3]) -> Result<usize> {
    let total = workgroups.iter().chain(&remapped.workgroup_size).map(|&w| w as u64).product::<u64>();
    if total > u32::MAX as u64 {
        return Err(Error::Limit {
            what: "invocations of one remapped dispatch".into(),
            requested: total,
            limit: u32::MAX as u64,
            hint: "the index holds u32 element ids: dispatch fewer workgroups".into(),
        });
    }
    Ok(total as usize)
}

/// The keys of a user's key binding: its initial `u32` words, one per invocation.
fn key_values(request: &RemapRequest, name: &str, invocations: usize) -> Result<Vec<u32>> {
    let spec = request.shader.bindings.iter().find(|(k, _)| k == name).map(|(_, s)| s).ok_or_else(|| {
        Error::invalid("key", format!("'{name}' is not one of the bindings given; name the binding that holds one u32 key per invocation"))
    })?;
    let bytes = spec.bytes()?;
    if bytes.len() < 4 * invocations {
        return Err(Error::invalid(
            "key",
            format!("binding '{name}' holds {} u32 values for {invocations} invocations; give one key per invocation", bytes.len() / 4),
        ));
    }
    Ok(bytemuck::pod_collect_to_vec(&bytes[..4 * invocations]))
}

/// Each invocation's (branch outcomes, hash of its first recorded outcomes) from the probe's
/// trace, in the linear order of the global ids. The trace holds invocations by workgroup,
/// then local index; the remapped shader reads its index in the order `x + width · (y +
/// height · z)` of the global ids; `workgroup_size` is the entry point's.
pub(crate) fn signatures(trace: &[u32], workgroup_size: [u32; 3], workgroups: [u32; 3]) -> Result<Vec<(u32, u32)>> {
    let [wx, wy, wz] = workgroup_size.map(|w| w as usize);
    let [gx, gy, gz] = workgroups.map(|w| w as usize);
    let threads = wx * wy * wz;
    let stride = 1 + 2 * SIGNATURE_EVENTS as usize;
    let header = crate::profile::HEADER_WORDS;
    let (width, height) = (gx * wx, gy * wy);
    let total = threads * gx * gy * gz;
    if trace.len() < header + total * stride {
        return Err(Error::invalid("key pass", format!("the trace holds {} words for {total} invocations", trace.len())));
    }
    let mut keys = vec![(0, 0); total];
    for group in 0..gx * gy * gz {
        let (bx, by, bz) = (group % gx, (group / gx) % gy, group / (gx * gy));
        for local in 0..threads {
            let (lx, ly, lz) = (local % wx, (local / wx) % wy, local / (wx * wy));
            let (x, y, z) = (bx * wx + lx, by * wy + ly, bz * wz + lz);
            let record = &trace[header + (group * threads + local) * stride..][..stride];
            let events = record[0];
            let recorded = 2 * events.min(SIGNATURE_EVENTS) as usize;
            // a multiplicative hash of the recorded (site, value) words: cheap, and equal paths
            // give equal hashes, which is all the classes need
            let hash = record[1..1 + recorded].iter().fold(0x811c_9dc5u32, |h, &w| (h ^ w).wrapping_mul(0x9e37_79b1).rotate_left(5));
            keys[x + width * (y + height * z)] = (events, hash);
        }
    }
    Ok(keys)
}

/// A hasher for the keys, which are hashes and counts already: one multiply per word, where
/// the standard one (SipHash, made to resist chosen keys) took most of the index's time.
#[derive(Default)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|&b| self.write_u32(u32::from(b)));
    }

    fn write_u32(&mut self, word: u32) {
        self.0 = (self.0.rotate_left(29) ^ u64::from(word)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Classes from keys: one per distinct key, ordered by key (fewest branch outcomes first, so
/// that neighbouring classes do similar work); past [`MAX_CLASSES`] distinct keys, classes of
/// equal width over the outcome counts.
pub(crate) fn classes_of(keys: &[(u32, u32)]) -> Result<Classes> {
    // kernels have few distinct paths: find them in one pass, then rank them in key order
    let mut seen: std::collections::HashMap<(u32, u32), u32, std::hash::BuildHasherDefault<KeyHasher>> = Default::default();
    for &k in keys {
        if seen.len() > MAX_CLASSES {
            break;
        }
        seen.entry(k).or_default();
    }
    if seen.len() <= MAX_CLASSES {
        let mut distinct: Vec<(u32, u32)> = seen.keys().copied().collect();
        distinct.sort_unstable();
        for (rank, k) in distinct.iter().enumerate() {
            seen.insert(*k, rank as u32);
        }
        let ids = keys.iter().map(|k| seen[k]).collect();
        return Classes::from_ids(ids, distinct.len().max(1));
    }
    let trips: Vec<u32> = keys.iter().map(|&(events, _)| events).collect();
    classify_loops(&trips, MAX_CLASSES, Bucketing::EqualWidth)
}
