//! Remapping on the GPU: identical outputs under every strategy, lower divergence, the GPU
//! regroup equal to its CPU reference, and efficiency control switching off where nothing diverges.

mod common;

use simtlab::gpu::PreparedRun;
use simtlab::gpu::{BufferKind, Step};
use simtlab::kernels::micro::remapped::{bench_pipelined, bench_remap, PipelinedFigures, RemapFigures};
use simtlab::kernels::micro::{Distribution, MicroConfig, Prepared, RunOptions};
use simtlab::remap::{self, GpuRegroup, Strategy};

#[test]
fn gpu_regroup_equals_its_cpu_reference() {
    let gpu = common::gpu();
    // sizes around the tile edge (1024 elements), several scan blocks (300_000 in 37 classes:
    // 10_841 histogram entries, 11 blocks of 1024), and more block sums than one 256-wide
    // chunk of scan_block_sums (1_048_577 in 256 classes: 262_400 entries, 257 blocks)
    for (n, classes) in
        [(1usize, 3u32), (255, 10), (1000, 10), (1024, 10), (1025, 1), (70_001, 37), (4096, 256), (300_000, 37), (1_048_577, 256)]
    {
        let mut rng = simtlab::rng::Rng::new(n as u64);
        let trips: Vec<u32> = (0..n).map(|_| rng.range_u32(3, 900)).collect();
        let width = remap::equal_width(3, 900, classes);
        let buf = gpu.buffer("trips", &trips, BufferKind::Storage).unwrap();
        let ids = remap::classify_trips_reference(&trips, 3, width, classes);
        let expected = remap::gpu_regroup_reference(&ids, classes, remap::GPU_TILE).unwrap();
        assert_eq!(expected, remap::redirect_index_of(&ids, classes as usize).unwrap(), "= stable counting sort");

        let regroup = GpuRegroup::new_with_classes(&gpu, &buf, n, 3, width, classes).unwrap();
        gpu.run(&regroup.steps(), false).unwrap();
        assert_eq!(gpu.read(regroup.classes.as_ref().unwrap()).unwrap(), ids, "classes n={n}");
        assert_eq!(gpu.read(&regroup.index).unwrap(), expected, "index n={n} R={classes}");

        // the default path recomputes classes instead of storing them: same index
        let fused = GpuRegroup::new(&gpu, &buf, n, 3, width, classes).unwrap();
        assert!(fused.classes.is_none());
        gpu.run(&fused.steps(), false).unwrap();
        assert_eq!(gpu.read(&fused.index).unwrap(), expected, "fused index n={n} R={classes}");
    }
    let _ = Step::clear; // the steps above are plain dispatches
}

fn figures(r: &simtlab::harness::Record) -> RemapFigures {
    r.extra_as::<RemapFigures>().unwrap_or_else(|| panic!("a remap record carries its RemapFigures: {}", r.extra))
}

#[test]
fn every_strategy_gives_identical_outputs_and_remapping_lowers_divergence() {
    let gpu = common::gpu();
    let cfg = MicroConfig { n: 20_011, short: 2, long: 60, group: 32, seed: 5, ..Default::default() };
    let protocol = simtlab::harness::Protocol { warmup: 0, samples: 1 };
    let none = bench_remap(&gpu, &cfg, Strategy::None, &protocol).unwrap();
    assert!(none.check.passed);
    let before = figures(&none).emulated_before.divergence_ratio;
    assert!(before > 0.99, "one long lane per 32 diverges every warp at W=32: {before}");
    for s in [Strategy::Redirect, Strategy::Lam, Strategy::GpuRegroup, Strategy::Tile, Strategy::Defer] {
        let r = bench_remap(&gpu, &cfg, s, &protocol).unwrap();
        assert!(r.check.passed, "{s}: {:?}", r.check.first_mismatch);
        let f = figures(&r);
        let after = f.emulated_after.divergence_ratio;
        assert!(after < 0.05, "{s}: W=32 divergence ratio {before} -> {after}");
        assert!(f.emulated_after.simt_efficiency > 0.9, "{s}");
        if let (Some(b), Some(a)) = (f.probe_before.map(|d| d.divergence_ratio), f.probe_after.map(|d| d.divergence_ratio)) {
            assert!(a <= b, "{s}: probe {b} -> {a}");
            assert!(a < 0.05, "{s}: probe after {a}");
        }
        if s == Strategy::Defer {
            let per_group = cfg.n.div_ceil(32) as u64;
            assert_eq!(f.deferred.map(u64::from), Some(per_group), "one long loop per 32 deferred: {:?}", f.defer_from);
        }
        if s == Strategy::Lam {
            let moved = f.moved.unwrap() as u64;
            assert!(moved > 0 && moved < cfg.n as u64, "LAM moves only what must move: {moved}");
        }
    }
}

#[test]
fn the_tile_sort_keeps_outputs_with_many_classes_and_a_partial_last_tile() {
    let gpu = common::gpu();
    let protocol = simtlab::harness::Protocol { warmup: 0, samples: 1 };
    // trips uniform in 1..=300: all ten classes in every subgroup, 5 full tiles and one of 333
    let cfg = MicroConfig { n: 5 * 1024 + 333, short: 1, long: 300, distribution: Distribution::Random, seed: 9, ..Default::default() };
    let r = bench_remap(&gpu, &cfg, Strategy::Tile, &protocol).unwrap();
    assert!(r.check.passed, "{:?}", r.check.first_mismatch);
    let f = figures(&r);
    let (before, after) = (f.emulated_before.simt_efficiency, f.emulated_after.simt_efficiency);
    assert!(after > before + 0.2, "W=32 SIMT efficiency {before} -> {after}");
    if let (Some(b), Some(a)) = (f.probe_before.map(|d| d.simt_efficiency), f.probe_after.map(|d| d.simt_efficiency)) {
        assert!(a > b + 0.2, "measured SIMT efficiency {b} -> {a}");
    }
}

#[test]
fn deferral_keeps_outputs_whatever_it_defers() {
    let gpu = common::gpu();
    let protocol = simtlab::harness::Protocol { warmup: 0, samples: 1 };
    // trips uniform in 1..=300 over 3 workgroups and a part: defer none, some, all
    let base = MicroConfig { n: 3 * 256 + 77, short: 1, long: 300, distribution: Distribution::Random, seed: 4, ..Default::default() };
    let input = simtlab::kernels::micro::generate(&base).unwrap();
    // elements per invocation of the first pass: 1, some that leave a partial round, all in one workgroup
    for (from, per_thread) in [(u32::MAX, 4), (250, 1), (100, 3), (0, 32)] {
        let cfg = MicroConfig { defer_from: Some(from), defer_per_thread: per_thread, ..base.clone() };
        let r = bench_remap(&gpu, &cfg, Strategy::Defer, &protocol).unwrap();
        assert!(r.check.passed, "defer from {from}, {per_thread} per invocation: {:?}", r.check.first_mismatch);
        let expected = input.primary.iter().filter(|&&t| t >= from).count() as u64;
        assert_eq!(figures(&r).deferred.map(u64::from), Some(expected), "defer from {from}");
    }
    // the second pass leaves the queue empty for the next run: repeated runs defer the same loops
    let cfg = MicroConfig { defer_from: Some(150), ..base.clone() };
    let run = Prepared::new(&gpu, &cfg, &input, RunOptions { defer_from: cfg.defer_from, ..Default::default() }).unwrap();
    let expected_outputs = simtlab::kernels::micro::reference(&cfg, &input);
    let expected = input.primary.iter().filter(|&&t| t >= 150).count() as u32;
    for _ in 0..3 {
        run.dispatch(&gpu).unwrap();
        assert_eq!(run.deferred_count(&gpu).unwrap(), Some(expected));
        assert_eq!(run.results(&gpu).unwrap(), expected_outputs);
    }
    // a one-long input: the chosen threshold moves exactly the long loops, and the
    // efficiency measured on the GPU rises
    let cfg = MicroConfig { n: 10_000, short: 3, long: 200, seed: 8, ..Default::default() };
    let r = bench_remap(&gpu, &cfg, Strategy::Defer, &protocol).unwrap();
    assert!(r.check.passed);
    let f = figures(&r);
    let from = f.defer_from.unwrap();
    assert!(from > 3 && from <= 200, "{from}");
    assert_eq!(f.deferred.map(u64::from), Some(cfg.n.div_ceil(32) as u64));
    assert!(f.emulated_after.simt_efficiency > 0.9, "{:?}", f.emulated_after);
    if let (Some(b), Some(a)) = (f.probe_before.map(|d| d.simt_efficiency), f.probe_after.map(|d| d.simt_efficiency)) {
        assert!(a > b + 0.3, "measured SIMT efficiency {b} -> {a}");
    }
}

#[test]
fn auto_switches_remapping_off_without_divergence_and_on_with_it() {
    let gpu = common::gpu();
    let protocol = simtlab::harness::Protocol { warmup: 0, samples: 1 };
    let flat = MicroConfig { n: 50_000, distribution: Distribution::Uniform, ..Default::default() };
    let r = bench_remap(&gpu, &flat, Strategy::Auto, &protocol).unwrap();
    assert!(r.check.passed);
    let f = figures(&r);
    assert_eq!(r.variant, "auto: none", "no divergence, no remapping: {:?}", f.decision);
    assert_eq!(f.strategy, Strategy::None);
    assert!(f.decision.unwrap().reason.len() > 10);
    let divergent = MicroConfig { n: 50_000, short: 1, long: 4000, ..Default::default() };
    let r = bench_remap(&gpu, &divergent, Strategy::Auto, &protocol).unwrap();
    assert!(r.check.passed);
    let f = figures(&r);
    assert_ne!(f.strategy, Strategy::None, "a 1-in-32 long loop pays for remapping: {:?}", f.decision);
}

#[test]
fn pipelined_remapping_keeps_outputs_and_maps_chunks() {
    let gpu = common::gpu();
    let cfg = MicroConfig { n: 40_000, short: 2, long: 80, ..Default::default() };
    let (rec, report) = bench_pipelined(&gpu, &cfg, 6, 2, true).unwrap();
    assert!(rec.check.passed, "{:?}", rec.check.first_mismatch);
    assert_eq!(report.chunks.len(), 6);
    // which chunks get their remap in time depends on the host's load (the pipeline's own tests
    // pin that down); none is declined, and a chunk runs mapped exactly when its remap came in time
    use remap::ChunkOutcome::{Late, Mapped, Warmup};
    assert!(report.chunks.iter().all(|c| matches!(c.outcome, Mapped | Late | Warmup) && c.mapped == (c.outcome == Mapped)), "{report:?}");
    let recorded = rec.extra_as::<PipelinedFigures>().unwrap();
    assert_eq!((recorded.mapped_chunks, recorded.workers), (report.count(remap::ChunkOutcome::Mapped), 2));
    let trace: serde_json::Value = serde_json::from_str(&report.to_chrome_trace()).unwrap();
    assert!(trace["traceEvents"].as_array().unwrap().len() >= 6);
    let (plain, _) = bench_pipelined(&gpu, &cfg, 6, 2, false).unwrap();
    assert!(plain.check.passed);
}

#[test]
fn pipeline_options_out_of_range_are_errors() {
    let gpu = common::gpu();
    let cfg = MicroConfig { n: 1000, short: 2, long: 20, ..Default::default() };
    let err = bench_pipelined(&gpu, &cfg, 4, 0, true).err().unwrap().to_string();
    assert!(err.contains("invalid workers: 0"), "{err}");
    let err = bench_pipelined(&gpu, &cfg, 1001, 2, true).err().unwrap().to_string();
    assert!(err.contains("invalid pipeline: ") && err.contains("1..=1000"), "{err}");
    let huge = MicroConfig { n: u32::MAX as usize, ..cfg.clone() };
    let err = bench_remap(&gpu, &huge, Strategy::Redirect, &simtlab::harness::Protocol { warmup: 0, samples: 1 }).err().unwrap();
    assert!(matches!(err, simtlab::Error::Limit { .. }) && err.to_string().contains("lower `n`"), "{err}");
}
