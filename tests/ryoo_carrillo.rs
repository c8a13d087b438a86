//! Ryoo's matmul ladder and Carrillo's branch/loop splitting on the default adapter (lavapipe
//! in CI): every matmul variant against the f64 CPU product, branched against split kernels
//! for every mask, loop-split against loop-fused.

mod common;

use simtlab::experiments::carrillo;
use simtlab::gpu::PreparedRun;
use simtlab::harness::{Check, Protocol};
use simtlab::kernels::matmul::{self, cpu, Compiler, Prepared, RegtileConfig, Shape, Variant};
use simtlab::kernels::split::{self, BranchConfig, BranchPrepared, LoopConfig, LoopPrepared, MaskLayout};
use simtlab::rng::Rng;

fn matmul_matches_cpu(gpu: &simtlab::Gpu, variant: Variant, shape: Shape, regtile: &RegtileConfig, seed: u64) {
    let mut rng = Rng::new(seed);
    let a = matmul::random_matrix(shape.m, shape.k, &mut rng);
    let b = matmul::random_matrix(shape.k, shape.n, &mut rng);
    let run = Prepared::new(gpu, variant, shape, &a, &b, regtile).unwrap();
    run.clear(gpu).unwrap();
    run.dispatch(gpu).unwrap();
    let (tol, floor) = matmul::check_bounds(shape.k);
    let check = Check::relative(&run.result(gpu).unwrap(), &cpu::matmul(&a, &b, shape), tol, floor);
    assert!(check.passed, "{} {shape:?} {regtile:?}: {:?}", variant.name(), check.first_mismatch);
}

/// Relative error ≤ 1e-4 · max(|c|, √K/3) against the f64-accumulated product, at a size that
/// is a multiple of every tile (64) and one that is not (67×45×53, K and N odd).
#[test]
fn every_matmul_variant_matches_the_cpu_product() {
    let gpu = common::gpu();
    let regtile = RegtileConfig::default();
    for (i, shape) in [Shape::square(64), Shape { m: 67, n: 45, k: 53 }].into_iter().enumerate() {
        for v in Variant::ALL {
            matmul_matches_cpu(&gpu, v, shape, &regtile, 10 + i as u64);
        }
    }
}

/// regtile's vec4 path on shapes that are not multiples of the workgroup tile, its scalar
/// path, and other tile configurations.
#[test]
fn regtile_configurations_match_the_cpu_product() {
    let gpu = common::gpu();
    let configs = [
        RegtileConfig::default(),
        RegtileConfig { wg_y: 16, bk: 8, ..Default::default() },
        RegtileConfig { wg_x: 8, wg_y: 8, tm: 4, tn: 4, bk: 16, ..Default::default() },
        RegtileConfig { wg_x: 16, wg_y: 8, tm: 8, tn: 4, bk: 8, warp_x: 16, warp_y: 2, group_m: 1, loops: false },
        RegtileConfig { wg_x: 8, wg_y: 16, tm: 4, tn: 8, bk: 12, warp_x: 3, warp_y: 4, group_m: 2, loops: false },
        RegtileConfig { wg_x: 12, wg_y: 4, tm: 8, tn: 8, bk: 4, warp_x: 4, warp_y: 2, group_m: 3, loops: false },
        // the loop form, on the same shapes (its scalar path too)
        RegtileConfig { loops: true, ..Default::default() },
        RegtileConfig { wg_y: 16, bk: 8, loops: true, ..Default::default() },
        RegtileConfig { wg_x: 12, wg_y: 4, tm: 8, tn: 8, bk: 4, warp_x: 4, warp_y: 2, group_m: 3, loops: true },
    ];
    let err = matmul::spec(Variant::Regtile, Shape::square(64), &RegtileConfig { tm: 4, loops: true, ..Default::default() }).unwrap_err();
    assert!(err.to_string().contains("leave `tm` and `tn` at 8"), "{err}");
    for (i, cfg) in configs.iter().enumerate() {
        // the last has 5×3 workgroup tiles with the default config: grouping leaves a partial group
        for shape in
            [Shape { m: 68, n: 36, k: 44 }, Shape { m: 33, n: 70, k: 9 }, Shape { m: 130, n: 132, k: 20 }, Shape { m: 600, n: 300, k: 8 }]
        {
            matmul_matches_cpu(&gpu, Variant::Regtile, shape, cfg, 20 + i as u64);
        }
    }
}

#[test]
fn matmul_resources_come_from_the_naga_ir() {
    let shape = Shape::square(64);
    let res = |v: Variant, cfg: &RegtileConfig| matmul::resources(&matmul::spec(v, shape, cfg).unwrap()).unwrap();
    let d = RegtileConfig::default();
    let naive = res(Variant::Naive, &d);
    assert_eq!((naive.threads_per_workgroup, naive.workgroup_bytes), (256, 0));
    for (v, t) in [(Variant::Tiled4, 4u32), (Variant::Tiled8, 8), (Variant::Tiled12, 12), (Variant::Tiled16, 16)] {
        let r = res(v, &d);
        assert_eq!(r.threads_per_workgroup, t * t, "{v:?}");
        assert_eq!(r.workgroup_bytes, 2 * 4 * (t * t) as u64, "{v:?}");
        assert_eq!(r.workgroup_bytes_per_thread, 8.0, "{v:?}");
    }
    for v in [Variant::Unrolled, Variant::Prefetch] {
        assert_eq!(res(v, &d).workgroup_bytes, 2048);
    }
    // 64×128 tile, BK = 16, two buffers of A and B: 2·(16·64 + 16·128)·4 bytes
    let r = res(Variant::Regtile, &d);
    assert_eq!((r.threads_per_workgroup, r.workgroup_bytes), (128, 24576));
    assert_eq!(r.workgroup_bytes_per_thread, 192.0);
    // 128×128 tile, BK = 8: 2·(8·128 + 8·128)·4 bytes
    let r = res(Variant::Regtile, &RegtileConfig { wg_y: 16, bk: 8, ..d });
    assert_eq!((r.threads_per_workgroup, r.workgroup_bytes), (256, 16384));
    assert_eq!(r.workgroup_bytes_per_thread, 64.0);
    let small = RegtileConfig { wg_x: 8, wg_y: 8, tm: 4, tn: 4, bk: 16, ..d };
    let r = res(Variant::Regtile, &small);
    assert_eq!((r.threads_per_workgroup, r.workgroup_bytes), (64, 2 * (16 * 32 * 2) * 4));
    assert!(RegtileConfig { bk: 6, ..d }.validate().is_err());
    assert!(RegtileConfig { wg_x: 4, wg_y: 4, bk: 32, ..d }.validate().is_err());
    assert_eq!(Variant::parse_list("all").unwrap().len(), 8);
    assert_eq!(Variant::parse_list("naive,regtile").unwrap(), vec![Variant::Naive, Variant::Regtile]);
    assert!(Variant::parse_list("tiled5").is_err());
}

#[test]
fn matmul_bench_records_gflops_and_resources() {
    let gpu = common::gpu();
    let protocol = Protocol { warmup: 0, samples: 1 };
    let r = matmul::bench(&gpu, Variant::Tiled12, Shape { m: 40, n: 30, k: 20 }, &RegtileConfig::default(), &protocol, 3).unwrap();
    assert!(r.check.passed, "{:?}", r.check.first_mismatch);
    assert_eq!(r.check.checked, 40 * 30);
    assert!(r.throughput.as_ref().unwrap().value > 0.0);
    assert_eq!(r.extra["threads_per_workgroup"], 144);
}

#[test]
fn decision_masks_have_the_requested_layout() {
    let n = 10_000;
    let lin = split::decision_mask(MaskLayout::Linear, n, 0.25, 1).unwrap();
    assert_eq!(lin.iter().filter(|&&m| m == 1).count(), 2500);
    assert!(lin[..2500].iter().all(|&m| m == 1) && lin[2500..].iter().all(|&m| m == 0));
    let rnd = split::decision_mask(MaskLayout::Random, n, 0.1, 1).unwrap();
    let ones = rnd.iter().filter(|&&m| m == 1).count();
    assert!((800..1200).contains(&ones), "{ones}");
    for layout in [MaskLayout::Linear, MaskLayout::Random] {
        assert!(split::decision_mask(layout, n, 0.0, 2).unwrap().iter().all(|&m| m == 0));
        assert!(split::decision_mask(layout, n, 1.0, 2).unwrap().iter().all(|&m| m == 1));
    }
    assert!(split::decision_mask(MaskLayout::Random, n, 1.5, 1).is_err());
    let f = split::sweep_fractions(MaskLayout::Random, 10).unwrap();
    assert_eq!((f[0], *f.last().unwrap()), (0.0, 1.0));
    assert!(f.contains(&0.01) && f.contains(&0.16) && f.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(split::sweep_fractions(MaskLayout::Linear, 4).unwrap(), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
}

/// Branched and split kernels write identical outputs, equal to the CPU reference, for masks
/// of both layouts over the whole range of else-fractions (n not a multiple of the workgroup).
#[test]
fn branched_and_split_kernels_agree_for_every_mask() {
    let gpu = common::gpu();
    let cfg = BranchConfig { n: 5003, light_rounds: 8, heavy_rounds: 2, seed: 7 };
    let data = cfg.data();
    let run = BranchPrepared::new(&gpu, &cfg, &data, false).unwrap();
    for layout in [MaskLayout::Linear, MaskLayout::Random] {
        for f in [0.0, 0.005, 0.01, 0.1, 0.16, 0.5, 0.9, 0.995, 1.0] {
            let mask = split::decision_mask(layout, cfg.n, f, cfg.seed).unwrap();
            run.set_mask(&gpu, &mask).unwrap();
            run.clear_results(&gpu).unwrap();
            run.run_branched(&gpu).unwrap();
            run.run_split(&gpu).unwrap();
            let branched = run.results_branched(&gpu).unwrap();
            let split = run.results_split(&gpu).unwrap();
            assert_eq!(branched, split, "{layout:?} else {f}");
            let expected = split::cpu::branch(&mask, &data, cfg.light_rounds, cfg.heavy_rounds);
            assert_eq!(branched, expected, "{layout:?} else {f}");
        }
    }
}

/// The probe on the branch sees what host emulation predicts: with the linear mask only the
/// boundary subgroup diverges; probing changes no result.
#[test]
fn branch_probe_matches_emulation() {
    let Some((gpu, width)) = common::gpu_with_subgroups() else { return };
    let cfg = BranchConfig { n: 3001, light_rounds: 4, heavy_rounds: 1, seed: 3 };
    let data = cfg.data();
    let run = BranchPrepared::new(&gpu, &cfg, &data, true).unwrap();
    for (layout, f) in [(MaskLayout::Linear, 0.3), (MaskLayout::Random, 0.05), (MaskLayout::Random, 0.5)] {
        let mask = split::decision_mask(layout, cfg.n, f, cfg.seed).unwrap();
        run.set_mask(&gpu, &mask).unwrap();
        run.run_branched(&gpu).unwrap();
        run.run_split(&gpu).unwrap();
        let expected = split::cpu::branch(&mask, &data, cfg.light_rounds, cfg.heavy_rounds);
        assert_eq!(run.results_branched(&gpu).unwrap(), expected);
        assert_eq!(run.results_split(&gpu).unwrap(), expected);
        let d = run.divergences(&gpu).unwrap().unwrap();
        // the prepared-run contract's counts are the branched kernel's
        assert_eq!(PreparedRun::divergence(&run, &gpu).unwrap(), Some(d.branched.clone()));
        let emulated = split::emulate(&mask, width).unwrap();
        assert_eq!(d.branched.divergent_warps, emulated.divergent_warps, "{layout:?} {f}");
        assert_eq!(d.branched.sites, emulated.sites, "{layout:?} {f}");
        // the split kernels test the same condition (negated in the else kernel)
        assert_eq!(d.split_if.divergent_warps, emulated.divergent_warps);
        assert_eq!(d.split_else.divergent_warps, emulated.divergent_warps);
        if layout == MaskLayout::Linear {
            assert_eq!(d.branched.divergent_warps, 1, "only the boundary subgroup diverges");
        }
    }
}

#[test]
fn carrillo_sweep_records_pass_their_checks() {
    let gpu = common::gpu();
    let cfg = BranchConfig { n: 2048, light_rounds: 4, heavy_rounds: 1, seed: 5 };
    let protocol = Protocol { warmup: 0, samples: 1 };
    let records = split::sweep(&gpu, &cfg, MaskLayout::Random, &[0.0, 0.1, 1.0], &protocol, None).unwrap();
    assert_eq!(records.len(), 6);
    assert!(records.iter().all(|r| r.check.passed), "{:?}", records.iter().map(|r| &r.check).collect::<Vec<_>>());
    assert!(records.iter().all(|r| r.divergence.is_some()));
    for r in records.iter().filter(|r| r.kernel == split::SPLIT_KERNEL) {
        let extra = r.extra_as::<split::SplitExtra>().unwrap();
        assert!(extra.split_over_branched > 0.0 && extra.split_over_branched.is_finite(), "{extra:?}");
    }
}

#[test]
fn loop_split_equals_loop_fused() {
    let gpu = common::gpu();
    for (n, len) in [(1000, 5), (257, 1), (4096, 12)] {
        let cfg = LoopConfig { n, len, seed: n as u64 };
        let inputs = cfg.inputs().unwrap();
        let run = LoopPrepared::new(&gpu, &cfg, &inputs).unwrap();
        run.run_fused(&gpu).unwrap();
        run.run_split(&gpu).unwrap();
        let fused = run.results_fused(&gpu).unwrap();
        assert_eq!(fused, run.results_split(&gpu).unwrap(), "n {n} len {len}");
        let expected = split::cpu::loop_split([&inputs[0], &inputs[1], &inputs[2], &inputs[3]], n, len);
        assert_eq!(fused, expected);
    }
    let records = split::bench_loops(&gpu, &LoopConfig { n: 500, len: 3, seed: 1 }, &Protocol { warmup: 0, samples: 1 }).unwrap();
    assert!(records.iter().all(|r| r.check.passed));
    let ratio = records[1].extra_as::<split::LoopSplitExtra>().unwrap().split_over_fused;
    assert!((ratio - records[1].stats.median / records[0].stats.median).abs() < 1e-12, "{ratio}");
    assert!(LoopConfig { n: 10, len: 0, seed: 1 }.validate().is_err());
}

// ---------------------------------------------------------------- options and sizes

fn carrillo_args() -> split::SplitSweep {
    split::SplitSweep {
        layout: MaskLayout::Linear,
        steps: None,
        fractions: Vec::new(),
        n: 4096,
        light_rounds: 8,
        heavy_rounds: 1,
        loop_len: 0,
        loop_n: 1024,
        seed: 1,
    }
}

#[test]
fn carrillo_out_of_range_options_are_errors_not_clamped() {
    let gpu = common::gpu();
    let p = Protocol { warmup: 0, samples: 1 };
    for steps in [0, split::MAX_STEPS + 1] {
        let err = carrillo::run_sweep(&gpu, &split::SplitSweep { steps: Some(steps), ..carrillo_args() }, &p).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, simtlab::Error::Invalid { .. }), "{text}");
        assert!(text.contains("invalid steps") && text.contains(&format!("{steps}")) && text.contains("1..=1000"), "{text}");
        assert!(split::sweep_fractions(MaskLayout::Random, steps).is_err());
    }
    let both = split::SplitSweep { steps: Some(4), fractions: vec![0.5], ..carrillo_args() };
    let text = carrillo::run_sweep(&gpu, &both, &p).unwrap_err().to_string();
    assert!(text.contains("`steps`") && text.contains("`fractions`"), "{text}");
    // one step: the two ends, each branched and split
    let records = carrillo::run_sweep(&gpu, &split::SplitSweep { steps: Some(1), ..carrillo_args() }, &p).unwrap();
    assert_eq!(records.len(), 4);
    assert!(records.iter().all(|r| r.check.passed));
    let fractions: Vec<f64> = records.iter().map(|r| r.params["else_fraction"].as_f64().unwrap()).collect();
    assert_eq!(fractions, [0.0, 0.0, 1.0, 1.0]);
    // the loop pair's options are checked before the sweep runs
    let text = carrillo::run_sweep(&gpu, &split::SplitSweep { loop_len: 5000, ..carrillo_args() }, &p).unwrap_err().to_string();
    assert!(text.contains("`loop_len=5000`"), "{text}");
    let huge = split::SplitSweep { loop_len: 4, loop_n: 1 << 29, ..carrillo_args() };
    let err = carrillo::run_sweep(&gpu, &huge, &p).unwrap_err();
    assert!(matches!(err, simtlab::Error::Limit { .. }) && err.to_string().contains("lower `loop_n`"), "{err}");
    if let Some(limit) = gpu.loop_iteration_limit() {
        let long = split::SplitSweep { light_rounds: limit as u32 + 1, ..carrillo_args() };
        let err = carrillo::run_sweep(&gpu, &long, &p).unwrap_err();
        assert!(matches!(err, simtlab::Error::Limit { .. }) && err.to_string().contains("lower `light_rounds`"), "{err}");
    }
}

#[test]
fn matmul_sizes_past_memory_are_refused_before_generating() {
    let gpu = common::gpu();
    let p = Protocol { warmup: 0, samples: 1 };
    let t0 = std::time::Instant::now();
    // 60000² fits u32 indices, but A alone is 14.4 GB
    let err = matmul::bench(&gpu, Variant::Naive, Shape::square(60000), &RegtileConfig::default(), &p, 1).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, simtlab::Error::Limit { requested, limit, .. } if requested == 60000 * 60000 * 4 && requested > limit), "{text}");
    assert!(text.contains("60000×60000×60000") && text.contains("lower `n`"), "{text}");
    assert!(t0.elapsed().as_secs() < 10, "refused before generating: {:?}", t0.elapsed());
}

#[test]
fn regtile_errors_describe_the_options_not_the_struct() {
    for (cfg, option) in [
        (RegtileConfig { bk: 6, ..Default::default() }, "invalid bk"),
        (RegtileConfig { tm: 5, ..Default::default() }, "invalid tm"),
        (RegtileConfig { wg_x: 64, wg_y: 32, ..Default::default() }, "invalid wg_x"),
        (RegtileConfig { group_m: 0, ..Default::default() }, "invalid group_m"),
    ] {
        let text = cfg.validate().unwrap_err().to_string();
        assert!(text.contains(option) && text.contains("workgroup tile"), "{text}");
        assert!(!text.contains("RegtileConfig") && !text.contains('{'), "{text}");
    }
    let text = matmul::spec(Variant::Regtile, Shape::square(64), &RegtileConfig { bk: 0, ..Default::default() }).unwrap_err().to_string();
    assert!(text.contains("`bk=0`"), "{text}");
}

/// The default size runs on the default adapter: the paper's 4096 on a GPU, 512 on a CPU
/// adapter (where one 4096³ tiled4 product takes minutes, past the submission timeout), and
/// the record says why.
#[test]
fn matmul_default_size_fits_the_adapter() {
    let gpu = common::gpu();
    let args = matmul::Ladder { variants: vec![Variant::Naive], seed: 3, ..Default::default() };
    let (shape, note) = args.shape(&gpu);
    if gpu.info().device_type != wgpu::DeviceType::Cpu {
        assert_eq!((shape, note), (Shape::square(matmul::PAPER_N), None));
        return;
    }
    assert_eq!(shape, Shape::square(matmul::CPU_ADAPTER_N));
    assert!(note.as_deref().is_some_and(|n| n.contains("`n=4096`")), "{note:?}");
    let records = simtlab::experiments::run_ladder(&gpu, &args, &Protocol { warmup: 0, samples: 1 }).unwrap();
    assert!(records[0].check.passed && records[0].variant == "512x512x512", "{}", records[0].variant);
    assert!(records[0].extra["size_note"].as_str().is_some_and(|n| n.contains("CPU adapter")), "{}", records[0].extra);
    // an explicit size is kept
    let (shape, note) = matmul::Ladder { n: Some(96), ..args }.shape(&gpu);
    assert_eq!((shape, note), (Shape::square(96), None));
}

/// `bench matmul`'s ladder runs through the registry's `matmul-*` workloads: each kernel once
/// per compiler, in order, with the register tiles it was given, every product checked.
#[test]
fn the_ladder_runs_each_kernel_once_per_compiler_with_its_tiles() {
    let gpu = common::gpu();
    let regtile = RegtileConfig { bk: 8, loops: true, ..Default::default() };
    let ladder = matmul::Ladder {
        variants: vec![Variant::Naive, Variant::Regtile],
        n: Some(96),
        regtile,
        compilers: Compiler::parse_list("wgpu,naga").unwrap(),
        seed: 5,
        ..Default::default()
    };
    let records = simtlab::experiments::run_ladder(&gpu, &ladder, &Protocol { warmup: 0, samples: 1 }).unwrap();
    let kernels: Vec<&str> = records.iter().map(|r| r.kernel.as_str()).collect();
    assert_eq!(kernels, ["naive", "naive [naga]", "regtile-loops", "regtile-loops [naga]"]);
    assert!(records.iter().all(|r| r.check.passed && r.variant == "96x96x96" && r.seed == 5), "{records:?}");
    assert_eq!(records[2].params["regtile"]["bk"], 8);
    // the lists' checks come before any run
    let none = matmul::Ladder { compilers: Vec::new(), ..ladder };
    let e = simtlab::experiments::run_ladder(&gpu, &none, &Protocol { warmup: 0, samples: 1 }).unwrap_err().to_string();
    assert!(e.contains("compilers"), "{e}");
}
