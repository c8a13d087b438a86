//! Gupta et al.'s four persistent-threads use cases as benchmarks, each with nonPT and PT
//! formulations over the three tiers of [`crate::pt`], and a CPU reference ([`cpu`]):
//! - [`sync`]: CPU-GPU synchronization (producer emits a variable count; consumer sized by a
//!   host readback or indirect dispatch vs a persistent consumer vs one fused PT kernel);
//! - [`forest`]: load balancing on complete and tilted forest expansion (level-by-level
//!   kernels vs persistent level kernels vs one PT kernel with a ring queue);
//! - [`prodcons`]: producer-consumer locality (global sum reduction; two-stage workload);
//! - [`gsync`]: global synchronization (kernel relaunch vs in-dispatch barrier).
//!
//! [`execute`] runs a case at a requested tier with automatic fallback (capability verdict,
//! aborts, queue overflow retries) and returns the output with the [`Plan`] that says what ran.

pub mod cpu;
pub mod forest;
pub mod gsync;
pub mod prodcons;
pub mod sync;

use crate::error::{Error, Result};
use crate::harness::Stats;
use crate::pt::{Plan, Runtime, Status, Tier, TierVerdict};
#[cfg(not(target_arch = "wasm32"))]
use {
    crate::gpu::{Gpu, Timing, TimingSource},
    crate::harness::{self, Check, Environment, Protocol, Record, Throughput},
    crate::pt::AbortReason,
    web_time::Instant,
};

/// Invocations per workgroup of the case kernels (`@workgroup_size(256)` in `shaders/pt/`;
/// the one-invocation indirect-argument writers excepted).
pub const WORKGROUP_SIZE: u32 = 256;

/// Overflow retries (each multiplies the queue capacity by 4).
pub const MAX_RETRIES: u32 = 6;

/// One formulation of a case (a tier and a variant), with its buffers, ready to run repeatedly.
#[cfg(not(target_arch = "wasm32"))]
pub trait Prepared {
    /// Runs once (resetting its own buffers first) and times it.
    fn once(&self, gpu: &Gpu) -> Result<Timing>;
    /// The control words of the last run (None for kernels without them).
    fn status(&self, gpu: &Gpu) -> Result<Option<Status>>;
    /// The result to compare with the CPU reference.
    fn output(&self, gpu: &Gpu) -> Result<Vec<u32>>;
}

/// A use case: its tiers, variants, preparation and reference.
pub trait Case {
    /// The case's name in records (`sync`, `forest`, `prodcons`, `gsync`).
    fn name(&self) -> &'static str;
    /// Tiers the case has a formulation for.
    fn supported(&self) -> &'static [Tier];
    /// Variant names of a tier, the default first.
    fn variants(&self, tier: Tier) -> &'static [&'static str];
    /// Builds `variant` of `plan.used`; `retry` counts queue-overflow retries so far.
    #[cfg(not(target_arch = "wasm32"))]
    fn prepare<'a>(&'a self, gpu: &Gpu, rt: &Runtime, plan: &Plan, variant: &str, retry: u32) -> Result<Box<dyn Prepared + 'a>>;
    /// The expected output, from the CPU reference ([`cpu`]).
    fn reference(&self) -> Vec<u32>;
    /// The configuration, as JSON for records.
    fn params(&self) -> serde_json::Value;
    /// Seed of the generated inputs.
    fn seed(&self) -> u64;
    /// Work per run for throughput: (amount, unit per second).
    fn work(&self) -> (f64, &'static str);
}

/// What a run did.
#[derive(Debug)]
pub struct Outcome {
    /// The output of the checked run, to compare with [`Case::reference`].
    pub output: Vec<u32>,
    /// The tier asked for, the one used and the fallbacks taken.
    pub plan: Plan,
    /// The variant that ran.
    pub variant: String,
    /// The control words of the last run (None for kernels without them).
    pub status: Option<Status>,
    /// Queue-overflow retries.
    pub retries: u32,
    /// Timing statistics; None when no protocol was given.
    pub stats: Option<Stats>,
    /// Wall time of the first (checked) run.
    pub first_seconds: f64,
}

impl Outcome {
    /// The tier verdict for `Record.extra` (see [`Plan::verdict`]).
    pub fn verdict(&self, rt: &Runtime) -> TierVerdict {
        self.plan.verdict(rt.assessed().as_ref(), self.status.as_ref(), self.retries)
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn aborted(status: &Option<Status>) -> Option<&Status> {
    status.as_ref().filter(|s| s.aborted())
}

/// Runs `case` at `requested` (variant `variant` or the tier's default), falling back to a lower
/// tier when the capability check fails or a blocking kernel aborts (in the checked run or in a timed one),
/// and retrying with a larger queue on overflow. With a protocol, times it after the first
/// (checked) run.
#[cfg(not(target_arch = "wasm32"))]
pub fn execute(
    gpu: &Gpu,
    rt: &Runtime,
    case: &dyn Case,
    requested: Tier,
    variant: Option<&str>,
    protocol: Option<&Protocol>,
) -> Result<Outcome> {
    let mut plan = rt.plan(gpu, requested, case.supported())?;
    let pick = |tier: Tier| -> &'static str {
        let vs = case.variants(tier);
        variant.and_then(|v| vs.iter().find(|x| **x == v).copied()).unwrap_or(vs[0])
    };
    let mut variant_name = pick(plan.used);
    let mut retries = 0;
    loop {
        let prepared = case.prepare(gpu, rt, &plan, variant_name, retries)?;
        let t0 = Instant::now();
        prepared.once(gpu)?;
        let first_seconds = t0.elapsed().as_secs_f64();
        let status = prepared.status(gpu)?;
        let mut abort = aborted(&status).map(|st| (st.clone(), "checked run"));
        let mut stats = None;
        if let (None, Some(p)) = (&abort, protocol) {
            // an abort in a timed run (e.g. another process starving the spinning workgroups)
            // is handled like one in the checked run, not returned as an error
            let mut timed_abort = None;
            let measured = harness::measure(p, || {
                let t = prepared.once(gpu)?;
                if let Some(st) = aborted(&prepared.status(gpu)?) {
                    let e = st.error(case.name(), &gpu.adapter_name(), t.wall_seconds);
                    timed_abort = Some(st.clone());
                    return Err(e);
                }
                Ok(t)
            });
            match (measured, timed_abort) {
                (Ok(s), _) => stats = Some(s),
                (Err(_), Some(st)) => abort = Some((st, "timed run")),
                (Err(e), None) => return Err(e),
            }
        }
        if let Some((st, when)) = abort {
            if st.abort == Some(AbortReason::QueueOverflow) && retries < MAX_RETRIES {
                retries += 1;
                continue;
            }
            if plan.lower().is_some() {
                let why = format!(
                    "{} aborted in a {when}: {} (detail {})",
                    case.name(),
                    st.abort.map(|a| a.describe()).unwrap_or_default(),
                    st.detail
                );
                plan.fall_back(&why)?;
                plan.launch = rt.launch(gpu, plan.used)?;
                variant_name = pick(plan.used);
                continue;
            }
            return Err(st.error(case.name(), &gpu.adapter_name(), first_seconds));
        }
        let output = prepared.output(gpu)?;
        return Ok(Outcome { output, plan, variant: variant_name.to_string(), status, retries, stats, first_seconds });
    }
}

/// Runs a case and checks it against its reference (exact).
#[cfg(not(target_arch = "wasm32"))]
pub fn run_checked(gpu: &Gpu, rt: &Runtime, case: &dyn Case, tier: Tier, variant: Option<&str>) -> Result<(Outcome, Check)> {
    let out = execute(gpu, rt, case, tier, variant, None)?;
    let check = Check::exact(&out.output, &case.reference());
    Ok((out, check))
}

/// The record's label: "variant (tier N)".
#[cfg(not(target_arch = "wasm32"))]
fn label(variant: &str, tier: Tier) -> String {
    format!("{variant} (tier {})", tier.number())
}

/// Benchmarks every variant of every tier in `tiers` (each may fall back) into records, one
/// per formulation that ran. A tier that fell back onto a formulation this sweep already
/// measured adds no second row: its fallback is noted on that record instead (`fallbacks`, and
/// the failed tier in `failed_tiers`), so the results of the tiers that passed are kept.
#[cfg(not(target_arch = "wasm32"))]
pub fn bench(gpu: &Gpu, rt: &Runtime, case: &dyn Case, tiers: &[Tier], protocol: &Protocol) -> Result<Vec<Record>> {
    let expected = case.reference();
    let mut records: Vec<Record> = Vec::new();
    let mut tiers = tiers.to_vec();
    // lower tiers first, so a fallback lands on a formulation already measured
    tiers.sort();
    tiers.dedup();
    for &tier in &tiers {
        let variants: &[&str] = if case.supported().contains(&tier) { case.variants(tier) } else { &[""] };
        for v in variants {
            let out = execute(gpu, rt, case, tier, Some(v), Some(protocol))?;
            let variant = label(&out.variant, out.plan.used);
            if let Some(same) = records.iter_mut().find(|r| r.variant == variant && !out.plan.fallbacks.is_empty()) {
                note_fallback(same, &out.plan);
                continue;
            }
            let check = Check::exact(&out.output, &expected);
            let stats = out.stats.clone().ok_or_else(|| Error::invalid("bench", "no samples"))?;
            let (work, unit) = case.work();
            records.push(Record {
                schema: harness::SCHEMA_VERSION,
                family: "pt".into(),
                kernel: case.name().into(),
                variant,
                params: case.params(),
                seed: case.seed(),
                environment: Environment::of(gpu),
                throughput: Some(Throughput { value: work / stats.median, unit: unit.into() }),
                stats,
                check,
                divergence: None,
                extra: serde_json::to_value(out.verdict(rt)).unwrap_or_default(),
            });
        }
    }
    Ok(records)
}

/// Notes on `record` that a run requested at `plan.requested` fell back onto it.
#[cfg(not(target_arch = "wasm32"))]
fn note_fallback(record: &mut Record, plan: &Plan) {
    let Some(mut verdict) = record.extra_as::<TierVerdict>() else { return };
    verdict.fallbacks.extend(plan.fallbacks.iter().cloned());
    verdict.failed_tiers.push(plan.requested.number());
    record.add_extra(verdict);
}

/// A wall-clock timing (for formulations with a host readback in the middle).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn wall(seconds: f64) -> Timing {
    Timing { seconds, source: TimingSource::WallClock, wall_seconds: seconds }
}

pub(crate) fn check_n(what: &str, n: usize, max: usize) -> Result<()> {
    if n == 0 || n > max {
        return Err(Error::invalid(what, format!("{n} (use 1..={max})")));
    }
    Ok(())
}
