//! GPU context, buffers, errors and the micro kernels against their CPU references.

mod common;

use simtlab::gpu::shader::registry;
use simtlab::gpu::{BufferKind, GpuOptions};
use simtlab::kernels::micro::{self, Distribution, MicroConfig, Pattern, Prepared, RunOptions};
use simtlab::{Error, Gpu};

#[test]
fn devices_are_listed_with_measured_capabilities() {
    let reports = simtlab::gpu::survey(&GpuOptions::default()).unwrap();
    assert!(!reports.is_empty());
    let gpu = common::gpu();
    if let Some(w) = gpu.caps().subgroup_size {
        assert!(w.is_power_of_two() && (4..=128).contains(&w), "subgroup size {w}");
        assert!(w >= gpu.caps().subgroup_min_size.min(w) && w <= gpu.caps().subgroup_max_size.max(w));
    }
}

#[test]
fn unknown_adapter_is_a_clear_error() {
    let err = Gpu::new(&GpuOptions { adapter: Some("no-such-gpu-xyz".into()), ..Default::default() }).unwrap_err();
    assert!(matches!(err, Error::NoAdapter { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("no-such-gpu-xyz") && text.contains("`adapter`"), "{text}");
}

#[test]
fn over_limit_buffer_is_an_error_not_a_panic() {
    let gpu = common::gpu();
    let too_big = gpu.caps().max_storage_buffer_binding_size / 4 + 1;
    let err = gpu.buffer_zeroed::<u32>("huge", too_big as usize, BufferKind::Storage).unwrap_err();
    match err {
        Error::Limit { requested, limit, .. } => assert!(requested > limit),
        other => panic!("expected a limit error, got {other}"),
    }
    let err = gpu.grid(u64::MAX / 2, 256).unwrap_err();
    assert!(err.to_string().contains("split the problem"), "{err}");
}

#[test]
fn buffers_round_trip() {
    let gpu = common::gpu();
    let data: Vec<u32> = simtlab::rng::Rng::new(3).vec_u32(1001);
    let b = gpu.buffer("rt", &data, BufferKind::Storage).unwrap();
    assert_eq!(gpu.read(&b).unwrap(), data);
}

fn check_micro(gpu: &Gpu, cfg: &MicroConfig) {
    let input = micro::generate(cfg).unwrap();
    let expected = micro::reference(cfg, &input);
    let run = Prepared::new(gpu, cfg, &input, RunOptions::default()).unwrap();
    run.dispatch(gpu).unwrap();
    let got = run.results(gpu).unwrap();
    assert_eq!(got.len(), expected.len());
    let bad = got.iter().zip(&expected).position(|(g, e)| g != e);
    assert!(bad.is_none(), "{cfg:?}: first mismatch at {bad:?}");
    // the inputs are not degenerate: outputs differ from each other
    assert!(expected.iter().any(|&x| x != expected[0]) || cfg.n == 1);
}

#[test]
fn micro_kernels_equal_cpu_reference_at_odd_sizes() {
    let gpu = common::gpu();
    for (k, n) in [1usize, 255, 1000, 4097, 70_001].into_iter().enumerate() {
        for distribution in [Distribution::Uniform, Distribution::OneLong, Distribution::Random, Distribution::Sorted] {
            let cfg = MicroConfig { n, distribution, seed: 10 + k as u64, long: 64, short: 3, ..Default::default() };
            check_micro(&gpu, &cfg);
        }
        for p in [0.0, 0.3, 1.0] {
            let cfg = MicroConfig {
                pattern: Pattern::If,
                distribution: Distribution::Random,
                n,
                probability: p,
                heavy: 40,
                seed: 20 + k as u64,
                ..Default::default()
            };
            check_micro(&gpu, &cfg);
        }
    }
}

#[test]
fn redirected_loop_gives_identical_outputs() {
    let gpu = common::gpu();
    let cfg = MicroConfig { n: 10_000, long: 100, short: 2, ..Default::default() };
    let input = micro::generate(&cfg).unwrap();
    let expected = micro::reference(&cfg, &input);
    // thread i works on element order[i]: longest trips first
    let mut order: Vec<u32> = (0..cfg.n as u32).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(input.primary[i as usize]));
    let run = Prepared::new(&gpu, &cfg, &input, RunOptions { remap: Some(&order), ..Default::default() }).unwrap();
    run.dispatch(&gpu).unwrap();
    assert_eq!(run.results(&gpu).unwrap(), expected);
}

#[test]
fn bench_record_carries_check_divergence_and_environment() {
    let gpu = common::gpu();
    let cfg = MicroConfig { n: 5000, long: 40, short: 4, ..Default::default() };
    let rec = micro::bench(&gpu, &cfg, &simtlab::harness::Protocol { warmup: 1, samples: 3 }).unwrap();
    assert!(rec.check.passed && rec.check.checked == 5000);
    assert_eq!(rec.stats.samples.len(), 3);
    assert!(rec.stats.min <= rec.stats.median && rec.stats.median <= rec.stats.max && rec.stats.min > 0.0);
    let d = rec.divergence.unwrap();
    // one long lane per 32 threads: a subgroup of width W < 32 diverges with probability W/32
    let w = gpu.caps().subgroup_size.unwrap_or(cfg.group) as f64;
    let expected = (w / cfg.group as f64).min(1.0);
    assert!((d.divergence_ratio - expected).abs() < 0.06, "{d:?}, expected about {expected}");
    assert!(d.simt_efficiency < 0.8);
    assert_eq!(rec.environment.adapter, gpu.info().name);
    let json = serde_json::to_string(&rec).unwrap();
    let back: simtlab::harness::Record = serde_json::from_str(&json).unwrap();
    assert_eq!(back.schema, simtlab::harness::SCHEMA_VERSION);
}

#[test]
fn short_timed_runs_repeat_to_the_minimum_sample_time_when_asked() {
    let gpu = Gpu::new(&GpuOptions::from_env()).unwrap();
    if !gpu.caps().timestamps {
        eprintln!("no timestamps on {}: repetition applies to device-timed runs only", gpu.adapter_name());
        return;
    }
    // relaunch: workgroup 0 adds 1 to word 2 per dispatch, so the word counts the runs
    let kernel = gpu.kernel(registry::pt::capability::RELAUNCH, &[]).unwrap();
    let result = gpu.buffer_zeroed::<u32>("runs", 4, BufferKind::Storage).unwrap();
    let bind = kernel.bind(&gpu, &[&result]).unwrap();
    let steps = [simtlab::gpu::Step::dispatch(&kernel, &bind, [1, 1, 1])];
    let runs = |gpu: &Gpu| gpu.read(&result).unwrap()[2];

    let alone = gpu.run(&steps, true).unwrap();
    assert_eq!(runs(&gpu), 1, "off by default: one run");
    gpu.set_min_timed_seconds(0.02);
    assert_eq!(gpu.min_timed_seconds(), 0.02);
    let repeated = gpu.run(&steps, true).unwrap();
    let copies = runs(&gpu) - 2; // the first run of the call, then the repetitions
    assert!(copies >= 2, "{copies} repetitions of a {} s run", alone.seconds);
    assert!(copies <= 1000);
    assert!(repeated.seconds > 0.0 && repeated.seconds < 0.02, "time per repetition: {}", repeated.seconds);
    // untimed runs never repeat
    gpu.run(&steps, false).unwrap();
    assert_eq!(runs(&gpu), 2 + copies + 1);
    gpu.set_min_timed_seconds(f64::NAN);
    assert_eq!(gpu.min_timed_seconds(), 0.0, "a bad value turns it off");
}

#[test]
fn micro_sizes_past_memory_are_refused_before_generating() {
    let gpu = common::gpu();
    let p = simtlab::harness::Protocol { warmup: 0, samples: 1 };
    let t0 = std::time::Instant::now();
    for pattern in [Pattern::Loop, Pattern::If] {
        let distribution = if pattern == Pattern::If { Distribution::Random } else { Distribution::OneLong };
        let cfg = MicroConfig { pattern, distribution, n: u32::MAX as usize, ..Default::default() };
        let err = micro::bench(&gpu, &cfg, &p).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Limit { requested, limit, .. } if requested == 4 * u32::MAX as u64 && requested > limit), "{text}");
        assert!(text.contains("`n=4294967295`") && text.contains("lower `n`"), "{text}");
        // the generator alone refuses what the host cannot hold
        if simtlab::harness::footprint::host_limit() < cfg.footprint().host {
            let err = micro::generate(&cfg).unwrap_err();
            assert!(matches!(err, Error::Limit { .. }) && err.to_string().contains("host memory"), "{err}");
        }
    }
    assert!(t0.elapsed().as_secs() < 10, "refused before generating: {:?}", t0.elapsed());
}

#[test]
fn micro_errors_name_options_not_structs() {
    let gpu = common::gpu();
    let cfg = MicroConfig { n: 1000, ..Default::default() };
    let input = micro::generate(&cfg).unwrap();
    let tile = micro::TileSort { lo: 16, width: 50, classes: 10, workgroup: 0, per_thread: 4 };
    let err = Prepared::new(&gpu, &cfg, &input, RunOptions { tile: Some(tile), ..Default::default() }).err().unwrap().to_string();
    assert!(err.contains("invalid tile_workgroup: ") && err.contains("0 invocations × 4 elements"), "{err}");
    assert!(!err.contains("TileSort") && !err.contains('{'), "{err}");
    let err = MicroConfig { short: 9, long: 8, ..cfg.clone() }.validate().unwrap_err().to_string();
    assert!(err.contains("invalid short/long: short 9 is above long 8"), "{err}");
    if let Some(limit) = gpu.loop_iteration_limit() {
        // lavapipe would cut these loops short: an error, not a failed check
        let long = MicroConfig { long: limit as u32 + 1, ..cfg.clone() };
        let err = micro::bench(&gpu, &long, &simtlab::harness::Protocol { warmup: 0, samples: 1 }).unwrap_err();
        assert!(matches!(err, Error::Limit { .. }) && err.to_string().contains("lower `long`"), "{err}");
    }
}
