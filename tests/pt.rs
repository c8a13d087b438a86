//! Persistent threads on the default adapter (lavapipe in CI): capability check, barrier and
//! queue correctness, never-hang aborts with fallback, queue overflow with retry, and Gupta's
//! four use cases against their CPU references at every tier.
//!
//! lavapipe runs the workgroups of a dispatch one after another here (discovery finds 1) and
//! stops every loop of an invocation after 65535 iterations in total, so the sizes are small.

mod common;

use simtlab::gpu::Gpu;
use simtlab::harness::Protocol;
use simtlab::pt::barrier::{self, BarrierArrival, BarrierFence, BarrierKind};
use simtlab::pt::cases::forest::{ForestCase, ForestConfig, Shape};
use simtlab::pt::cases::gsync::{GsyncCase, GsyncConfig};
use simtlab::pt::cases::prodcons::{ProdConsCase, ProdConsConfig, Workload};
use simtlab::pt::cases::sync::{SyncCase, SyncConfig, Work};
use simtlab::pt::cases::{self, Case};
use simtlab::pt::queue::{self, QueueConfig, QueueKind};
use simtlab::pt::{AbortReason, Plan, PtOptions, Runtime, Status, Tier};
use std::cell::Cell;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The tests here spin workgroups on the GPU. On a CPU adapter workgroups are worker threads,
/// so two tests at once can starve each other's spinning workgroups into the driver's loop
/// limit (an abort the tests rightly count as a failure): they take this lock, one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn runtime() -> Runtime {
    Runtime::new(PtOptions::default())
}

/// A runtime whose blocking kernels skip discovery and treat `launch` workgroups as co-resident:
/// far more than the adapter runs at once, so every blocking wait must abort.
fn oversubscribed(launch: u32, spin_cap: u32) -> Runtime {
    Runtime::new(PtOptions { assume_resident: true, launch: Some(launch), spin_cap, ..Default::default() })
}

/// Runs `case` at each of its tiers and checks the output against the CPU reference.
fn check_every_tier(gpu: &Gpu, rt: &Runtime, case: &dyn Case) {
    let expected = case.reference();
    for &tier in case.supported() {
        for &variant in case.variants(tier) {
            let out = cases::execute(gpu, rt, case, tier, Some(variant), None)
                .unwrap_or_else(|e| panic!("{} {variant} at {}: {e}", case.name(), tier.label()));
            assert_eq!(out.plan.used, tier, "{} {variant}: unexpected fallback {:?}", case.name(), out.plan.fallbacks);
            let bad = out.output.iter().zip(&expected).position(|(g, c)| g != c);
            assert_eq!(out.output.len(), expected.len(), "{} {variant}", case.name());
            assert!(bad.is_none(), "{} {variant} at {}: first mismatch at {bad:?}", case.name(), tier.label());
        }
    }
}

#[test]
fn capability_check_discovers_co_resident_workgroups_and_allows_the_blocking_tier() {
    let _serial = serial();
    let gpu = common::gpu();
    let rt = runtime();
    let cap = rt.capability(&gpu).unwrap();
    eprintln!("{cap:?}");
    assert!(cap.discovered >= 1 && cap.discovered <= cap.discovery_launch, "{cap:?}");
    assert_eq!(cap.discovered + cap.late, cap.discovery_launch, "every late workgroup left at once");
    assert!(cap.blocking_ok, "{cap:?}");
    assert_eq!((cap.stale_messages, cap.barrier_completed), (0, cap.barrier_iterations));
    // maximal launch = the discovered count
    assert_eq!(rt.launch(&gpu, Tier::Blocking).unwrap(), cap.discovered);
}

/// Runtimes with the same check settings share the one check kept on the `Gpu` (its measured
/// seconds are the same to the bit); other settings get a check of their own.
#[test]
fn one_capability_check_per_device_and_settings() {
    let _serial = serial();
    let gpu = common::gpu();
    let first = runtime().capability(&gpu).unwrap();
    let again = runtime().capability(&gpu).unwrap();
    assert_eq!(first, again);
    assert!(first.discovery_seconds > 0.0, "{first:?}");
    let other = Runtime::new(PtOptions { spin_cap: first.spin_cap / 2, ..Default::default() }).capability(&gpu).unwrap();
    assert_eq!(other.spin_cap, first.spin_cap / 2, "a check with its own spin cap: {other:?}");
}

/// A barrier record carries its relaunch time, the kernel's status and the capability probe,
/// read back typed.
#[test]
fn barrier_records_carry_their_relaunch_time() {
    let _serial = serial();
    let gpu = common::gpu();
    let rt = runtime();
    let kind = BarrierKind { arrival: BarrierArrival::Flat, fence: BarrierFence::Device };
    let records = barrier::bench_barrier(&gpu, &rt, &[1], &[kind], 20, &Protocol { warmup: 0, samples: 1 }).unwrap();
    let extra = records[0].extra_as::<barrier::BarrierExtra>().unwrap();
    assert_eq!(extra.participants, 1);
    assert!(extra.relaunch_us > 0.0 && extra.relaunch_us.is_finite(), "{extra:?}");
    assert_eq!(extra.status.barrier_arrivals, 20);
    assert_eq!(extra.probe.map(|p| p.adapter), Some(gpu.adapter_name()));
}

#[test]
fn barrier_passes_messages_through_atomics_over_many_iterations() {
    let _serial = serial();
    let gpu = common::gpu();
    let rt = runtime();
    let discovered = rt.capability(&gpu).unwrap().discovered;
    // llvmpipe ends any invocation's loops after 65535 iterations in all; with two or more
    // co-resident workgroups on a CPU adapter the polls of 500 barriers can reach that.
    let iterations = if gpu.info().device_type == wgpu::DeviceType::Cpu { 60 } else { 500 };
    // exactly the co-resident count, and an oversized launch that discovery trims
    let kind = |arrival, fence| BarrierKind { arrival, fence };
    for (launch, kind) in [
        (discovered, kind(BarrierArrival::Flat, BarrierFence::Device)),
        (64, kind(BarrierArrival::Flat, BarrierFence::Device)),
        (discovered, kind(BarrierArrival::Flat, BarrierFence::None)),
        // 64 launched: with two or more co-resident workgroups, sub-counters of 32 and a
        // partial last one
        (64, kind(BarrierArrival::Tree, BarrierFence::Device)),
        (discovered, kind(BarrierArrival::Tree, BarrierFence::None)),
    ] {
        let r = barrier::barrier(&gpu, &rt, launch, iterations, kind).unwrap();
        assert_eq!(r.status.abort, None, "{r:?}");
        assert!(r.participants >= 1 && r.participants <= launch.min(discovered.max(1) * 4), "{r:?}");
        assert_eq!(r.completed, iterations, "{r:?}");
        assert_eq!(r.stale_messages, 0, "{kind:?} {r:?}");
        assert_eq!(r.status.barrier_arrivals, iterations * r.participants);
        assert_eq!(r.status.late, launch - r.participants);
    }
}

#[test]
fn queues_process_every_item_exactly_once() {
    let _serial = serial();
    let gpu = common::gpu();
    let rt = runtime();
    for kind in [QueueKind::Single, QueueKind::Chunked, QueueKind::Distributed] {
        for workgroups in [1, 5] {
            let cfg = QueueConfig { kind, n: 20_011, chunk: 64, heads: 7, workgroups: Some(workgroups), ..Default::default() };
            let r = queue::queue(&gpu, &rt, &cfg, true).unwrap();
            assert_eq!(r.status.abort, None, "{kind:?}");
            let bad = r.counts.iter().position(|&c| c != 1);
            assert!(bad.is_none(), "{kind:?} with {workgroups} workgroups: item {bad:?} processed {:?} times", bad.map(|i| r.counts[i]));
            assert_eq!(r.counts.len(), 20_011);
        }
    }
    let cfg = QueueConfig { kind: QueueKind::Ring, rounds: 300, ..Default::default() };
    let r = queue::queue(&gpu, &rt, &cfg, true).unwrap();
    assert_eq!(r.status.abort, None);
    assert!(r.counts.iter().all(|&c| c == 1), "ring: {:?}", r.counts.iter().filter(|&&c| c != 1).count());
    assert_eq!(r.counts.len() as u32, 300 * r.status.discovered);
}

#[test]
fn oversubscribed_blocking_kernel_aborts_instead_of_hanging() {
    let _serial = serial();
    let gpu = common::gpu();
    // a small cap: the barrier wait times out
    let t0 = Instant::now();
    let r = barrier::barrier(&gpu, &oversubscribed(256, 20_000), 256, 10, BarrierKind::default()).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(30));
    assert_eq!(r.status.abort, Some(AbortReason::BarrierTimeout), "{r:?}");
    assert!(r.completed < 10);
    let err = r.status.error("barrier", &gpu.adapter_name(), 0.0).to_string();
    assert!(err.contains("barrier timeout") && err.contains("`tier`"), "{err}");
    // the default cap: the wait is cut by the spin cap or by the driver's loop limit, never hangs
    let t0 = Instant::now();
    let r = barrier::barrier(&gpu, &oversubscribed(256, PtOptions::default().spin_cap), 256, 10, BarrierKind::default()).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(60));
    assert!(matches!(r.status.abort, Some(AbortReason::BarrierTimeout | AbortReason::LoopLimit)), "{r:?}");
}

#[test]
fn aborted_blocking_runs_fall_back_to_a_safe_tier_with_the_right_answer() {
    let _serial = serial();
    let gpu = common::gpu();
    let rt = oversubscribed(64, 20_000);
    let gsync = GsyncCase::new(GsyncConfig { blocks: 3, syncs: 4, fmas: 12, seed: 5 }).unwrap();
    let (out, check) = cases::run_checked(&gpu, &rt, &gsync, Tier::Blocking, None).unwrap();
    assert!(check.passed, "{check:?}");
    assert_eq!(out.plan.used, Tier::Multi);
    assert!(out.plan.fallbacks[0].contains("barrier timeout"), "{:?}", out.plan.fallbacks);
    let verdict = out.verdict(&rt);
    assert_eq!(verdict.tier_requested, 2);
    assert_eq!(verdict.tier_used, 0);

    let sync = SyncCase::new(SyncConfig { n: 3000, fmas: 9, seed: 6, ..Default::default() }).unwrap();
    let (out, check) = cases::run_checked(&gpu, &rt, &sync, Tier::Blocking, None).unwrap();
    assert!(check.passed, "{check:?}");
    assert_eq!(out.plan.used, Tier::NonBlocking, "{:?}", out.plan.fallbacks);
    assert!(out.plan.message().unwrap().contains("tier 2"));
}

#[test]
fn queue_overflow_is_flagged_and_retried_with_a_larger_capacity() {
    let _serial = serial();
    let gpu = common::gpu();
    let rt = runtime();
    let cfg = ForestConfig { shape: Shape::Complete, items: 4, depth: 4, fmas: 4, capacity: Some(4), seed: 1 };
    let forest = ForestCase::new(cfg).unwrap();
    let (out, check) = cases::run_checked(&gpu, &rt, &forest, Tier::Blocking, None).unwrap();
    assert!(check.passed, "{check:?}");
    assert_eq!(out.plan.used, Tier::Blocking);
    assert!(out.retries >= 1, "capacity 4 must overflow first");
    assert_eq!(out.status.as_ref().unwrap().config.capacity, 4 << (2 * out.retries));
}

#[test]
fn sync_use_case_matches_cpu_at_every_tier() {
    let _serial = serial();
    let gpu = common::gpu();
    let rt = runtime();
    for work in [Work::Ci, Work::Cmi] {
        let case = SyncCase::new(SyncConfig { n: 3001, emit: 0.4, fmas: 21, work, stride: 97, seed: 2 }).unwrap();
        assert!(case.reference().iter().filter(|&&x| x != 0).count() > 1000, "a variable, non-trivial count");
        check_every_tier(&gpu, &rt, &case);
    }
}

#[test]
fn forest_use_case_matches_cpu_at_every_tier() {
    let _serial = serial();
    let gpu = common::gpu();
    let rt = runtime();
    let complete = ForestCase::new(ForestConfig { shape: Shape::Complete, items: 3, depth: 5, fmas: 8, capacity: None, seed: 1 }).unwrap();
    check_every_tier(&gpu, &rt, &complete);
    let tilted = ForestCase::new(ForestConfig { shape: Shape::Tilted, items: 5, depth: 30, fmas: 5, capacity: None, seed: 1 }).unwrap();
    assert_eq!(tilted.total_items(), 5 + 6 * 29);
    check_every_tier(&gpu, &rt, &tilted);
}

#[test]
fn prodcons_use_case_matches_cpu_at_every_tier() {
    let _serial = serial();
    let gpu = common::gpu();
    let rt = runtime();
    for n in [1, 300, 70_001] {
        let reduce = ProdConsCase::new(ProdConsConfig { workload: Workload::Reduce, n, seed: 3, ..Default::default() }).unwrap();
        check_every_tier(&gpu, &rt, &reduce);
    }
    for pass in [0, 1, 100, 256] {
        let cfg = ProdConsConfig { workload: Workload::TwoStage, n: 5000, fmas: 10, pass, seed: 4, ..Default::default() };
        check_every_tier(&gpu, &rt, &ProdConsCase::new(cfg).unwrap());
    }
}

#[test]
fn gsync_use_case_matches_cpu_at_every_tier() {
    let _serial = serial();
    let gpu = common::gpu();
    let rt = runtime();
    for syncs in [0, 1, 6] {
        let case = GsyncCase::new(GsyncConfig { blocks: 3, syncs, fmas: 10, seed: 7 }).unwrap();
        check_every_tier(&gpu, &rt, &case);
    }
}

#[test]
fn queue_runs_the_driver_cuts_short_abort_and_the_default_size_passes() {
    let _serial = serial();
    let gpu = common::gpu();
    let rt = runtime();
    let protocol = Protocol { warmup: 0, samples: 1 };
    let n = queue::default_queue_items(&gpu);
    // the default size: every item exactly once, for every kind
    for kind in [QueueKind::Single, QueueKind::Chunked, QueueKind::Distributed, QueueKind::Ring] {
        let cfg = QueueConfig { kind, n, ..Default::default() };
        let r = queue::bench_queue(&gpu, &rt, &cfg, &protocol).unwrap_or_else(|e| panic!("{kind:?} at n = {n}: {e}"));
        assert!(r.check.passed, "{kind:?}: {:?}", r.check);
        if kind != QueueKind::Ring {
            assert_eq!(r.check.checked, n as u64, "{kind:?}");
        }
    }
    let Some(limit) = gpu.loop_iteration_limit() else {
        assert_eq!(n, 1 << 24);
        return;
    };
    assert!(n >= 1 << 14 && (n as u64) <= limit * 8 / 3, "{n}");
    // far more items than one workgroup's invocations can claim within the loop limit: the
    // kernel reports the cut, the bench says so and never counts the missing items as wrong
    for kind in [QueueKind::Single, QueueKind::Chunked, QueueKind::Distributed] {
        let cfg = QueueConfig { kind, n: 1 << 24, workgroups: Some(1), ..Default::default() };
        let r = queue::queue(&gpu, &rt, &cfg, true).unwrap();
        assert_eq!(r.status.abort, Some(AbortReason::LoopLimit), "{kind:?}");
        assert!(r.counts.iter().filter(|&&c| c == 0).count() > 0, "{kind:?}: items were left");
        let e = queue::bench_queue(&gpu, &rt, &cfg, &protocol).unwrap_err().to_string();
        assert!(e.contains("cut short") && e.contains(&format!("{}", 1 << 24)) && e.contains(&format!("limit {n}")), "{e}");
    }
}

#[test]
fn distributed_queue_with_64_heads_on_few_workgroups_processes_every_item_once() {
    let _serial = serial();
    let gpu = common::gpu();
    let rt = runtime();
    for workgroups in [1, 2] {
        let cfg = QueueConfig { kind: QueueKind::Distributed, n: 65_536, heads: 64, workgroups: Some(workgroups), ..Default::default() };
        let r = queue::queue(&gpu, &rt, &cfg, true).unwrap();
        assert_eq!(r.status.abort, None, "{workgroups} workgroups");
        let twice = r.counts.iter().filter(|&&c| c > 1).count();
        let never = r.counts.iter().filter(|&&c| c == 0).count();
        assert_eq!((twice, never), (0, 0), "{workgroups} workgroups: items taken twice, never");
        // one failed claim per invocation ends its loop
        assert_eq!(r.claims, 65_536 + 256 * workgroups);
    }
    let bad = QueueConfig { kind: QueueKind::Distributed, n: 100, heads: 100_000, ..Default::default() };
    let e = queue::queue(&gpu, &rt, &bad, false).unwrap_err().to_string();
    assert!(e.contains("invalid heads") && e.contains("1..=64"), "{e}");
}

/// Sync with its tier-2 formulation reporting an abort from the second run on: the checked run
/// passes, a timed run aborts (as when another process starves the spinning workgroups).
struct AbortsWhenTimed(SyncCase);

struct AbortingRun<'a> {
    inner: Box<dyn cases::Prepared + 'a>,
    runs: Cell<u32>,
}

impl cases::Prepared for AbortingRun<'_> {
    fn once(&self, gpu: &Gpu) -> simtlab::Result<simtlab::gpu::Timing> {
        self.runs.set(self.runs.get() + 1);
        self.inner.once(gpu)
    }
    fn status(&self, gpu: &Gpu) -> simtlab::Result<Option<Status>> {
        let mut status = self.inner.status(gpu)?;
        if let (Some(s), true) = (status.as_mut(), self.runs.get() >= 2) {
            s.abort = Some(AbortReason::BarrierTimeout);
            s.detail = 7;
        }
        Ok(status)
    }
    fn output(&self, gpu: &Gpu) -> simtlab::Result<Vec<u32>> {
        self.inner.output(gpu)
    }
}

impl Case for AbortsWhenTimed {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn supported(&self) -> &'static [Tier] {
        self.0.supported()
    }
    fn variants(&self, tier: Tier) -> &'static [&'static str] {
        self.0.variants(tier)
    }
    fn prepare<'a>(
        &'a self,
        gpu: &Gpu,
        rt: &Runtime,
        plan: &Plan,
        variant: &str,
        retry: u32,
    ) -> simtlab::Result<Box<dyn cases::Prepared + 'a>> {
        let inner = self.0.prepare(gpu, rt, plan, variant, retry)?;
        Ok(if plan.used == Tier::Blocking { Box::new(AbortingRun { inner, runs: Cell::new(0) }) } else { inner })
    }
    fn reference(&self) -> Vec<u32> {
        self.0.reference()
    }
    fn params(&self) -> serde_json::Value {
        self.0.params()
    }
    fn seed(&self) -> u64 {
        self.0.seed()
    }
    fn work(&self) -> (f64, &'static str) {
        self.0.work()
    }
}

/// The records of a sweep over every tier: the variants, each once, all checked.
fn assert_one_row_each(records: &[simtlab::harness::Record], variants: &[&str]) {
    let got: Vec<&str> = records.iter().map(|r| r.variant.as_str()).collect();
    assert_eq!(got, variants);
    for r in records {
        assert!(r.check.passed, "{}: {:?}", r.variant, r.check);
    }
}

/// The one record a failed tier fell back onto: it carries the fallback and the failed tier.
fn assert_marked(record: &simtlab::harness::Record, failed: u8, reason: &str) {
    let fallbacks: Vec<&str> = record.extra["fallbacks"].as_array().unwrap().iter().filter_map(|f| f.as_str()).collect();
    assert_eq!(fallbacks.len(), 1, "{fallbacks:?}");
    assert!(fallbacks[0].starts_with(&format!("tier {failed} ")) && fallbacks[0].contains(reason), "{fallbacks:?}");
    assert_eq!(record.extra["failed_tiers"], serde_json::json!([failed]));
}

#[test]
fn a_tier_2_abort_keeps_the_tiers_that_passed_and_marks_the_failed_one() {
    let _serial = serial();
    let gpu = common::gpu();
    let protocol = Protocol { warmup: 0, samples: 2 };
    let sync = || SyncCase::new(SyncConfig { n: 3000, fmas: 9, seed: 6, ..Default::default() }).unwrap();
    let rows = ["readback (tier 0)", "indirect (tier 0)", "persistent (tier 1)"];

    // tier 2 aborts in a timed run, after its checked run passed (where the capability check
    // refuses the blocking tier, as on GL, tier 2 falls back before it runs)
    let rt = runtime();
    let blocking = rt.capability(&gpu).unwrap().blocking_ok;
    let records = cases::bench(&gpu, &rt, &AbortsWhenTimed(sync()), &Tier::ALL, &protocol).unwrap();
    assert_one_row_each(&records, &rows);
    assert_marked(&records[2], 2, if blocking { "aborted in a timed run: global barrier timeout" } else { "capability probe failed" });
    assert!(records[..2].iter().all(|r| r.extra.get("failed_tiers").is_none()));

    // tier 2 aborts at once: more workgroups taken as co-resident than run at once, and a
    // small spin cap (the never-hang test's runtime)
    let records = cases::bench(&gpu, &oversubscribed(64, 20_000), &sync(), &Tier::ALL, &protocol).unwrap();
    assert_one_row_each(&records, &rows);
    assert_marked(&records[2], 2, "aborted in a checked run: global barrier timeout");

    // gsync has no tier 1: its tier 2 falls back onto the tier 0 row
    let gsync = GsyncCase::new(GsyncConfig { blocks: 3, syncs: 4, fmas: 12, seed: 5 }).unwrap();
    let records = cases::bench(&gpu, &oversubscribed(64, 20_000), &gsync, &[Tier::Multi, Tier::Blocking], &protocol).unwrap();
    assert_one_row_each(&records, &["relaunch (tier 0)"]);
    assert_marked(&records[0], 2, "barrier timeout");
    // asked for tier 2 alone: the row is the fallback's, with its reason
    let records = cases::bench(&gpu, &oversubscribed(64, 20_000), &gsync, &[Tier::Blocking], &protocol).unwrap();
    assert_one_row_each(&records, &["relaunch (tier 0)"]);
    assert_eq!((records[0].extra["tier_requested"].as_u64(), records[0].extra["tier_used"].as_u64()), (Some(2), Some(0)));
}

#[test]
fn bench_pt_prints_a_fallback_once_on_stdout_without_duplicate_rows() {
    let _serial = serial();
    let gpu = common::gpu();
    if gpu.loop_iteration_limit().is_none() {
        eprintln!("skipped: {} runs gsync's blocking tier to the end (no loop limit forces the fallback)", gpu.adapter_name());
        return;
    }
    // one participant runs 101 phases x 1024 blocks: past llvmpipe's loop limit, so tier 2
    // aborts and falls back to tier 0
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_simtlab"))
        .args(["bench", "pt", "--case", "gsync", "--fmas", "1", "--syncs", "100", "--blocks", "1024", "--samples", "1", "--warmup", "0"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let fallback = "tier 2 (blocking) -> tier 0 (multi-dispatch)";
    assert_eq!(stdout.matches(fallback).count(), 1, "{stdout}");
    assert_eq!(stderr.matches(fallback).count(), 0, "{stderr}");
    // the table's rows, whatever unit a loaded machine's times come in (the fallback line also
    // starts with the case's name)
    let rows: Vec<&str> = stdout.lines().filter(|l| l.starts_with("gsync ") && !l.contains(fallback)).collect();
    assert_eq!(rows.len(), 1, "{stdout}");
    assert!(rows[0].contains("relaunch (tier 0)") && rows[0].trim_end().ends_with("ok"), "{stdout}");
}

/// `simtlab bench pt` and Gupta's points run a sweep as registry runs: one `pt-*` run per
/// configuration, with the sweep's tiers and runtime options among its parameters.
#[test]
fn a_pt_sweep_maps_to_registry_runs_with_its_tiers_and_options() {
    use serde_json::json;
    use simtlab::experiments::pt_sweep_runs;
    use simtlab::pt::sweep::{Bench, Sweep};
    let names = |runs: &[simtlab::workload::Run]| runs.iter().map(|r| r.workload.clone()).collect::<Vec<_>>();

    let sweep = Sweep {
        tier: vec![0, 1],
        launch: Some(3),
        spin_cap: 5000,
        grace: Some(40),
        n: vec![2048, 4096],
        fmas: vec![9],
        seed: Some(6),
        ..Sweep::new(Bench::Sync)
    };
    let runs = pt_sweep_runs(&sweep, 1 << 12, true).unwrap();
    assert_eq!(names(&runs), ["pt-sync", "pt-sync"]);
    let sync = |n: u32| json!({ "n": n, "emit": 0.5, "fmas": 9, "work": "ci", "stride": 4099, "seed": 6, "tier": [0, 1], "spin_cap": 5000, "grace": 40, "launch": 3 });
    assert_eq!((&runs[0].params, &runs[1].params), (&sync(2048), &sync(4096)));

    // at the defaults the parameters are the registry's own keys, nothing added
    let runs = pt_sweep_runs(&Sweep { syncs: vec![5], blocks: vec![8], ..Sweep::new(Bench::Gsync) }, 1 << 12, true).unwrap();
    assert_eq!(names(&runs), ["pt-gsync"]);
    assert_eq!(runs[0].params, json!({ "blocks": 8, "syncs": 5, "fmas": 1000, "seed": 1 }));
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    let registry = simtlab::workload::find("pt-gsync").unwrap().params(simtlab::workload::Scale::Tiny);
    assert_eq!(keys(&runs[0].params), keys(&registry));

    // prodcons: the reduction once, the two-stage workload per pass
    let runs = pt_sweep_runs(&Sweep { n: vec![65536], ..Sweep::new(Bench::Prodcons) }, 1 << 12, true).unwrap();
    let passes: Vec<_> = runs.iter().map(|r| (r.params["workload"].clone(), r.params["pass"].clone())).collect();
    assert_eq!(
        passes,
        [
            (json!("reduce"), json!(0)),
            (json!("two-stage"), json!(0)),
            (json!("two-stage"), json!(32)),
            (json!("two-stage"), json!(128)),
            (json!("two-stage"), json!(256))
        ]
    );
    assert!(names(&runs).iter().all(|n| n == "pt-prodcons"));

    // barrier: one run per workgroup count and kind, the discovered count as 0
    let runs = pt_sweep_runs(
        &Sweep { workgroups: vec![4, 8], arrival: vec![BarrierArrival::Tree, BarrierArrival::Flat], ..Sweep::new(Bench::Barrier) },
        1,
        true,
    )
    .unwrap();
    let barrier = |w: u32, arrival: &str| json!({ "workgroups": w, "iterations": 1000, "kind": { "arrival": arrival, "fence": "device" } });
    let params: Vec<_> = runs.iter().map(|r| r.params.clone()).collect();
    assert_eq!(params, [barrier(4, "tree"), barrier(4, "flat"), barrier(8, "tree"), barrier(8, "flat")]);
    let runs = pt_sweep_runs(&Sweep { spin_cap: 99, ..Sweep::new(Bench::Barrier) }, 1, true).unwrap();
    assert_eq!((runs[0].params["workgroups"].as_u64(), runs[0].params["spin_cap"].as_u64()), (Some(0), Some(99)));

    // queue: every kind at the adapter's default size; the ring only where the blocking tier
    // may run, unless asked for by name
    let queue = Sweep::new(Bench::Queue);
    assert_eq!(
        names(&pt_sweep_runs(&queue, 1 << 14, true).unwrap()),
        ["pt-queue-single", "pt-queue-chunked", "pt-queue-distributed", "pt-queue-ring"]
    );
    let runs = pt_sweep_runs(&queue, 1 << 14, false).unwrap();
    assert_eq!(names(&runs), ["pt-queue-single", "pt-queue-chunked", "pt-queue-distributed"]);
    assert!(runs.iter().all(|r| r.params["n"] == 1 << 14 && r.params.get("launch").is_none()), "{runs:?}");
    let ring = Sweep { kind: vec![QueueKind::Ring], rounds: Some(8), launch: Some(2), ..Sweep::new(Bench::Queue) };
    let runs = pt_sweep_runs(&ring, 1 << 14, false).unwrap();
    assert_eq!(names(&runs), ["pt-queue-ring"]);
    assert_eq!((runs[0].params["rounds"].as_u64(), runs[0].params["launch"].as_u64()), (Some(8), Some(2)));
    let runs =
        pt_sweep_runs(&Sweep { n: vec![100, 200], workgroups: vec![1, 2], kind: vec![QueueKind::Chunked], ..queue }, 1, true).unwrap();
    let sizes: Vec<_> = runs.iter().map(|r| (r.params["workgroups"].as_u64(), r.params["n"].as_u64())).collect();
    assert_eq!(sizes, [(Some(1), Some(100)), (Some(1), Some(200)), (Some(2), Some(100)), (Some(2), Some(200))]);

    // only the capability check: nothing to run; an invalid sweep: no runs
    assert!(pt_sweep_runs(&Sweep::new(Bench::Capability), 1, true).unwrap().is_empty());
    assert!(pt_sweep_runs(&Sweep { tier: vec![3], ..Sweep::new(Bench::Sync) }, 1, true).is_err());
}

/// The sweep's tiers and launch reach the records: only the tiers asked for run, and the
/// persistent kernel launches the workgroups the sweep sets.
#[test]
fn a_pt_sweep_runs_only_its_tiers_with_its_launch() {
    use simtlab::pt::sweep::{Bench, Sweep};
    let _serial = serial();
    let gpu = common::gpu();
    let protocol = Protocol { warmup: 0, samples: 1 };
    let sweep = Sweep { n: vec![2048], tier: vec![0], ..Sweep::new(Bench::Sync) };
    let out = simtlab::experiments::run_pt_sweep(&gpu, &sweep, &protocol).unwrap();
    let variants: Vec<&str> = out.records.iter().map(|r| r.variant.as_str()).collect();
    assert_eq!(variants, ["readback (tier 0)", "indirect (tier 0)"]);
    assert!(out.records.iter().all(|r| r.check.passed && r.params["n"] == 2048), "{:?}", out.records);

    let sweep = Sweep { n: vec![2048, 3000], tier: vec![1], launch: Some(3), seed: Some(4), ..Sweep::new(Bench::Sync) };
    let out = simtlab::experiments::run_pt_sweep(&gpu, &sweep, &protocol).unwrap();
    let rows: Vec<_> =
        out.records.iter().map(|r| (r.variant.as_str(), r.params["n"].as_u64(), r.seed, r.extra["launch"].as_u64())).collect();
    assert_eq!(rows, [("persistent (tier 1)", Some(2048), 4, Some(3)), ("persistent (tier 1)", Some(3000), 4, Some(3))]);
    assert!(out.records.iter().all(|r| r.check.passed), "{:?}", out.records);
    assert!(out.capability.discovered >= 1, "{:?}", out.capability);

    // a registry run refuses a tier that does not exist, naming the field
    let w = simtlab::workload::find("pt-sync").unwrap();
    let params = w.params(simtlab::workload::Scale::Tiny);
    let mut bad = params.clone();
    bad["tier"] = serde_json::json!([3]);
    let e = w.run(&gpu, &bad, &protocol).unwrap_err().to_string();
    assert!(e.contains("tier") && e.contains("0, 1 or 2"), "{e}");
    bad = params;
    bad["spin_cap"] = serde_json::json!(0);
    let e = w.run(&gpu, &bad, &protocol).unwrap_err().to_string();
    assert!(e.contains("spin_cap"), "{e}");
}

#[test]
fn every_pt_registry_entry_checks_its_parameters_before_running() {
    use simtlab::workload::{find, Scale};
    // (entry, parameter, a value no run can use, a word of the error) — checked without a GPU,
    // so that a sweep refuses its bad point before its first run
    let cases = [
        ("pt-forest", "depth", serde_json::json!(2000), "1..=1000"),
        ("pt-forest", "items", serde_json::json!(0), "1 or more"),
        ("pt-sync", "emit", serde_json::json!(1.5), "0..=1"),
        ("pt-sync", "tier", serde_json::json!([3]), "0, 1 or 2"),
        ("pt-prodcons", "pass", serde_json::json!(300), "0..=256"),
        ("pt-gsync", "blocks", serde_json::json!(0), "1..="),
        ("pt-gsync", "launch", serde_json::json!(0), "1 or more"),
        ("pt-barrier", "iterations", serde_json::json!(0), "1 or more"),
        ("pt-barrier", "launch", serde_json::json!(4), "workgroups"),
        ("pt-queue-chunked", "chunk", serde_json::json!(0), "1..="),
        ("pt-queue-single", "spin_cap", serde_json::json!(0), "1 or more"),
    ];
    for (name, field, value, says) in cases {
        let w = find(name).unwrap();
        let good = w.params(Scale::Tiny);
        assert!(w.footprint(&good).is_ok(), "{name}: {:?}", w.footprint(&good));
        let mut bad = good;
        bad[field] = value.clone();
        match w.footprint(&bad) {
            Err(simtlab::Error::Invalid { what, message }) => {
                assert!(what == field && message.contains(says), "{name} {field}={value}: {what}: {message}")
            }
            other => panic!("{name} {field}={value}: expected an invalid {field}, got {other:?}"),
        }
    }
}
