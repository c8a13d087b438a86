//! The workload registry end to end: every workload runs at the tiny scale on the default
//! adapter and every record passes its CPU check; `simtlab list --json` and `simtlab run` agree
//! with the registry.

mod common;

use simtlab::gpu::shader::registry;
use simtlab::workload::{self, Scale};

#[test]
fn every_workload_runs_at_tiny_scale_and_passes_its_cpu_check() {
    let gpu = common::gpu();
    let protocol = simtlab::harness::Protocol { warmup: 0, samples: 1 };
    for w in workload::registry() {
        let records = w.run(&gpu, &w.params(Scale::Tiny), &protocol).unwrap_or_else(|e| panic!("{}: {e}", w.name()));
        assert!(!records.is_empty(), "{} gave no records", w.name());
        for r in &records {
            assert!(r.check.passed, "{} {} {}: {:?}", w.name(), r.kernel, r.variant, r.check.first_mismatch);
            assert!(r.check.checked > 0, "{}: nothing was checked", w.name());
            assert!(r.stats.median > 0.0, "{}: no time", w.name());
        }
    }
}

#[test]
fn list_json_describes_every_workload_with_its_scales() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_simtlab")).args(["list", "--json"]).output().unwrap();
    assert!(out.status.success());
    let list: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let registry = workload::registry();
    assert_eq!(list.len(), registry.len());
    for (json, w) in list.iter().zip(&registry) {
        assert_eq!(json["name"], w.name());
        assert_eq!(json["family"], w.family());
        for (key, scale) in [("tiny", Scale::Tiny), ("quick", Scale::Quick), ("paper_scale", Scale::Full)] {
            assert_eq!(json[key], w.params(scale), "{} {key}", w.name());
        }
    }
    for family in ["micro", "lbm", "gafort", "mcubes", "reduction", "blackscholes", "carrillo", "matmul", "remap"] {
        assert!(list.iter().any(|w| w["family"] == family), "no {family} workload");
    }
}

#[test]
fn run_applies_parameters_and_refuses_unknown_ones() {
    let bin = env!("CARGO_BIN_EXE_simtlab");
    let out = std::process::Command::new(bin)
        .args([
            "run",
            "micro-loop",
            "--scale",
            "tiny",
            "--param",
            "n=3000",
            "--param",
            "distribution=sorted",
            "--samples",
            "1",
            "--warmup",
            "0",
            "--json",
            "-",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let records: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(records[0]["params"]["n"], 3000);
    assert_eq!(records[0]["variant"], "sorted");
    assert_eq!(records[0]["check"]["passed"], true);
    for (args, needle) in [
        (vec!["run", "micro-loop", "--param", "nn=3"], "no parameter 'nn'"),
        (vec!["run", "micro-loop", "--param", "n=abc"], "micro-loop"),
        (vec!["run", "no-such-workload"], "no such workload; the workloads are: micro-loop"),
    ] {
        let out = std::process::Command::new(bin).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(needle) && !err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn a_workload_records_into_the_callers_encoder_and_reads_back_without_blocking() {
    let gpu = common::gpu();
    let mut recorded = Vec::new();
    for w in workload::registry() {
        let params = w.params(Scale::Tiny);
        let Some(recording) = w.prepare(&gpu, &params).unwrap() else { continue };
        recorded.push(w.name());
        // the app's frame: its own encoder, its own submit
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        recording.record(&gpu, &mut encoder);
        let reads: Vec<_> = recording.outputs().into_iter().map(|(buffer, bytes)| gpu.record_read(&mut encoder, buffer, bytes)).collect();
        gpu.queue().submit([encoder.finish()]);
        let mut pending: Vec<_> = reads.into_iter().map(|r| r.map()).collect();
        let mut outputs: Vec<Option<Vec<u8>>> = vec![None; pending.len()];
        let t0 = std::time::Instant::now();
        let mut frames = 0u32;
        while outputs.iter().any(Option::is_none) {
            for (slot, read) in outputs.iter_mut().zip(&mut pending) {
                if slot.is_none() {
                    *slot = read.try_finish(&gpu).unwrap();
                }
            }
            frames += 1;
            assert!(t0.elapsed().as_secs() < 60, "{}: no result after {frames} frames", w.name());
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let outputs: Vec<Vec<u8>> = outputs.into_iter().flatten().collect();
        let check = recording.check(&outputs);
        assert!(check.passed, "{}: {:?}", w.name(), check.first_mismatch);
        assert!(check.checked > 0, "{}: nothing checked", w.name());
        // a wrong result must fail the check: flip an exponent bit of the first output's first word
        let mut broken = outputs.clone();
        broken[0][3] ^= 0x40;
        assert!(!recording.check(&broken).passed, "{}: a corrupted result passed", w.name());
    }
    for name in [
        "micro-loop",
        "micro-if",
        "lbm",
        "gafort",
        "mcubes",
        "blackscholes",
        "reduction",
        "branch-split-random",
        "matmul-regtile",
        "pt-queue-single",
        "pt-queue-chunked",
        "pt-queue-distributed",
        "flowshop-bound-pools",
    ] {
        assert!(recorded.contains(&name), "{name} offers a recording: {recorded:?}");
    }
}

#[test]
fn the_async_core_opens_compiles_runs_and_reads_back() {
    use simtlab::gpu::{BufferKind, Step};
    let gpu = pollster::block_on(simtlab::Gpu::new_async(&Default::default())).unwrap();
    assert_eq!(gpu.caps().subgroup_size, common::gpu().caps().subgroup_size, "both paths measure the same subgroup width");
    let values: Vec<u32> = (0..1000u32).map(|i| i.wrapping_mul(2654435761) >> 7).collect();
    let input = gpu.buffer("input", &values, BufferKind::Storage).unwrap();
    assert_eq!(pollster::block_on(gpu.read_async(&input)).unwrap(), values);
    let Some(width) = gpu.caps().subgroup_size else { return };
    // the subgroup-size kernel writes each invocation's subgroup width; run it through the async path
    let kernel = pollster::block_on(gpu.kernel_async(registry::shared::subgroup_size::MAIN, &[], &[])).unwrap();
    let out = gpu.buffer("out", &vec![u32::MAX; 256], BufferKind::Storage).unwrap();
    let bind = kernel.bind(&gpu, &[&out]).unwrap();
    let timing = pollster::block_on(gpu.run_async(&[Step::dispatch(&kernel, &bind, [1, 1, 1])], true)).unwrap();
    assert!(timing.wall_seconds > 0.0);
    let sizes = pollster::block_on(gpu.read_async(&out)).unwrap();
    assert!(sizes.iter().all(|&s| s == width), "every invocation wrote the width {width}: {sizes:?}");
}

#[test]
fn an_empty_sweep_and_a_wrong_type_are_refused_in_the_workloads_terms() {
    let gpu = common::gpu();
    let protocol = simtlab::harness::Protocol { warmup: 0, samples: 1 };
    let split = workload::find("branch-split-random").unwrap();
    let empty = workload::with_overrides(&*split, split.params(Scale::Tiny), &[("else_fractions", "[]")]).unwrap();
    let err = split.run(&gpu, &empty, &protocol).expect_err("an empty sweep would print an empty table and succeed");
    assert!(err.to_string().contains("else_fractions") && err.to_string().contains("empty"), "{err}");
    let matmul = workload::find("matmul-naive").unwrap();
    let wrong = workload::with_overrides(&*matmul, matmul.params(Scale::Tiny), &[("seed", "x")]).unwrap();
    let err = matmul.check_params(&wrong).unwrap_err().to_string();
    assert!(err.contains("seed") && err.contains("shape") && !err.contains("paper"), "{err}");
}

/// The ring queue waits on other workgroups (tier 2): where the capability check refuses that
/// tier (GL), it is refused too, instead of running and saying tier 2.
#[test]
fn the_ring_queue_runs_only_where_the_blocking_tier_may() {
    use simtlab::pt::queue::{self, QueueConfig, QueueKind};
    let options = simtlab::GpuOptions { backend: Some("gl".into()), ..Default::default() };
    let gpu = match simtlab::Gpu::new(&options) {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!("skipped: no GL adapter ({e})");
            return;
        }
    };
    let rt = simtlab::pt::Runtime::new(Default::default());
    let blocking_ok = rt.capability(&gpu).unwrap().blocking_ok;
    assert!(!blocking_ok, "the capability check refuses tier 2 on GL");
    let cfg = QueueConfig { kind: QueueKind::Ring, rounds: 4, workgroups: Some(4), ..Default::default() };
    let err = queue::queue(&gpu, &rt, &cfg, true).expect_err("the ring needs tier 2");
    assert!(matches!(err, simtlab::Error::Unsupported { .. }) && err.to_string().contains("GL"), "{err}");
    // the registry's ring, asked for by name, says the same
    let ring = workload::find("pt-queue-ring").unwrap();
    let protocol = simtlab::harness::Protocol { warmup: 0, samples: 1 };
    let err = ring.run(&gpu, &ring.params(Scale::Tiny), &protocol).expect_err("the ring needs tier 2");
    assert!(matches!(err, simtlab::Error::Unsupported { .. }) && err.to_string().contains("GL"), "{err}");
}

/// Collects the events of every sweep.
struct Collect(std::sync::Mutex<Vec<(u64, simtlab::harness::progress::Event)>>);

impl simtlab::harness::progress::Reporter for Collect {
    fn report(&self, sweep: u64, event: simtlab::harness::progress::Event) {
        self.0.lock().unwrap().push((sweep, event));
    }
}

#[test]
fn a_sweep_moves_its_progress_on_per_point_of_each_run() {
    use simtlab::harness::progress::{set_reporter, Event};
    let gpu = common::gpu();
    let protocol = simtlab::harness::Protocol { warmup: 0, samples: 1 };
    let run = |name: &str, overrides: &[(&str, &str)]| {
        let w = workload::find(name).unwrap();
        let params = workload::with_overrides(&*w, w.params(Scale::Tiny), overrides).unwrap();
        workload::Run { workload: name.into(), params, label: name.into() }
    };
    let runs = [
        run("branch-split-linear", &[("else_fractions", "[0.0, 0.5, 1.0]")]),
        run("micro-loop", &[]),
        run("flowshop-bound-pools", &[("pool_sizes", "[64, 128]"), ("branchless", "[true]"), ("probe", "false")]),
    ];
    let collect = std::sync::Arc::new(Collect(Default::default()));
    set_reporter(Some(collect.clone()));
    let records = workload::run_all(&gpu, &runs, &protocol, "points of a sweep");
    set_reporter(None);
    assert!(records.unwrap().iter().all(|r| r.check.passed));
    let events = collect.0.lock().unwrap().clone();
    let sweep = events.iter().find(|(_, e)| matches!(e, Event::Start { what, .. } if what == "points of a sweep")).unwrap().0;
    let events: Vec<Event> = events.into_iter().filter(|(s, _)| *s == sweep).map(|(_, e)| e).collect();
    // three fractions, the micro run in one piece, two pool sizes of two orders each
    assert_eq!(events[0], Event::Start { what: "points of a sweep".into(), total: 8 });
    assert_eq!(events.last(), Some(&Event::Finish));
    // each position the bar reaches, with what it said ran last
    let mut shown = String::new();
    let mut positions = Vec::new();
    for e in &events {
        match e {
            Event::Message { text } => shown = text.clone(),
            Event::Step { .. } => positions.push((positions.len() + 1, shown.clone())),
            _ => {}
        }
    }
    let want = [
        "linear else 0.0%",
        "linear else 50.0%",
        "linear else 100.0%",
        "micro-loop",
        "ta021 pool 64 dfs",
        "ta021 pool 64 bfs",
        "ta021 pool 128 dfs",
        "ta021 pool 128 bfs",
    ];
    assert_eq!(positions, want.iter().enumerate().map(|(i, w)| (i + 1, w.to_string())).collect::<Vec<_>>());
}
