//! Zhang ICS'10 section 5 on the default adapter (lavapipe in CI): every benchmark equals its
//! CPU reference with and without reference redirection; divergence before and after
//! redirection from the GPU probe at the native width (checked against host emulation at that
//! width) and from host emulation at the paper's width 32.

mod common;

use simtlab::divergence::Divergence;
use simtlab::experiments::zhang::{self, Benchmark, BenchmarkSweep};
use simtlab::gpu::PreparedRun;
use simtlab::harness::Protocol;
use simtlab::kernels::blackscholes::BlackScholes;
use simtlab::kernels::gafort::Gafort;
use simtlab::kernels::lbm::Lbm;
use simtlab::kernels::mcubes::MarchingCubes;
use simtlab::kernels::redirect::{read_outputs, RedirectKernel};
use simtlab::kernels::{blackscholes, gafort, lbm, mcubes, reduction};
use simtlab::remap::{RunOptions, Variants};
use simtlab::Gpu;

/// The GPU probe must count exactly what host emulation at the same width predicts.
fn assert_probe_matches(measured: &Divergence, emulated: &Divergence, what: &str) {
    assert_eq!(measured.warps, emulated.warps, "{what}: warps");
    assert_eq!(measured.sites, emulated.sites, "{what}: per-site counters");
    assert_eq!(measured.divergent_warps, emulated.divergent_warps, "{what}: divergent warps");
    assert_eq!(measured.per_warp_divergent, emulated.per_warp_divergent, "{what}: per-warp divergence");
}

/// Divergence ratios (org, opt) at the native width by the probe and at 32 by emulation.
struct Ratios {
    native: Option<(f64, f64)>,
    w32: (f64, f64),
}

fn report(name: &str, r: &Ratios) {
    let pct = |(a, b): (f64, f64)| format!("{:.1}% -> {:.1}%", 100.0 * a, 100.0 * b);
    eprintln!("{name}: native {}, w32 {}", r.native.map_or("n/a".into(), pct), pct(r.w32));
}

/// One family without and with reference redirection: each run checked against the CPU
/// reference, with and without the probe (probing must not change results), the probe's counts
/// equal to host emulation at the native width. Returns the redirection index and the ratios.
fn org_and_redirect<K: RedirectKernel>(gpu: &Gpu, cfg: &K::Config, input: &K::Input, expected: &K::Expected) -> (Vec<u32>, Ratios) {
    let index = K::redirect(cfg, input, expected).unwrap();
    let mut native = Vec::new();
    for order in [None, Some(index.as_slice())] {
        let what = format!("{} remap {}", K::FAMILY, order.is_some());
        let run = K::prepare(gpu, cfg, input, RunOptions { probe: false, remap: order }).unwrap();
        run.dispatch(gpu).unwrap();
        K::check(cfg, expected, &read_outputs(gpu, &run).unwrap()).into_result(&what).unwrap();
        if let Some(w) = gpu.caps().subgroup_size {
            let run = K::prepare(gpu, cfg, input, RunOptions { probe: true, remap: order }).unwrap();
            run.dispatch(gpu).unwrap();
            K::check(cfg, expected, &read_outputs(gpu, &run).unwrap()).into_result(&format!("{what} probed")).unwrap();
            let d = run.divergence(gpu).unwrap().unwrap();
            assert_probe_matches(&d, &K::emulate(cfg, input, expected, order, w).unwrap(), &what);
            native.push(d.divergence_ratio());
        }
    }
    let w32 = |order: Option<&[u32]>| K::emulate(cfg, input, expected, order, 32).unwrap().divergence_ratio();
    let r = Ratios { native: (native.len() == 2).then(|| (native[0], native[1])), w32: (w32(None), w32(Some(&index))) };
    report(K::FAMILY, &r);
    (index, r)
}

// ---------------------------------------------------------------- BlackScholes

#[test]
fn blackscholes_matches_reference_and_never_diverges() {
    let gpu = common::gpu();
    let cfg = blackscholes::BsConfig { n: 4096, seed: 11, ..Default::default() };
    let input = BlackScholes::generate(&cfg).unwrap();
    let expected = BlackScholes::reference(&cfg, &input);
    let (index, r) = org_and_redirect::<BlackScholes>(&gpu, &cfg, &input, &expected);
    assert!(index.iter().enumerate().any(|(t, &i)| t as u32 != i), "the sign classes are mixed: redirection moves options");
    assert_eq!(r.w32, (0.0, 0.0));
    if let Some(n) = r.native {
        assert_eq!(n, (0.0, 0.0), "no warp diverges, with or without remapping");
    }
}

// ---------------------------------------------------------------- Reduction

#[test]
fn reduction_variants_match_the_f64_sum() {
    let gpu = common::gpu();
    let ids = reduction::id_array();
    for (n, seed) in [(1usize, 1u64), (1000, 2), (65_536 + 5, 3), (300_000, 4)] {
        let cfg = reduction::ReductionConfig { n, seed, fast_groups: None };
        let input = reduction::generate(&cfg).unwrap();
        let expected = reduction::cpu::sum(&input);
        for (kernel, order) in [
            (reduction::ReductionKernel::Interleaved, None),
            (reduction::ReductionKernel::Interleaved, Some(ids.as_slice())),
            (reduction::ReductionKernel::Sequential, None),
            (reduction::ReductionKernel::Fast, None),
            (reduction::ReductionKernel::Blocked, None),
        ] {
            let run = reduction::Prepared::new(&gpu, kernel, &cfg, &input, false, order).unwrap();
            run.dispatch(&gpu).unwrap();
            let got = run.result(&gpu).unwrap();
            let check = reduction::check(got, expected);
            assert!(check.passed, "{kernel:?} remap {} n {n}: gpu {got}, cpu {expected}", order.is_some());
        }
        // A tuned grid (odd counts round up to a multiple of 4) sums the same elements.
        for groups in [1usize, 7, 300] {
            let tuned = reduction::ReductionConfig { fast_groups: Some(groups), ..cfg.clone() };
            assert_eq!(tuned.fast_groups(), groups.div_ceil(4) * 4);
            let run = reduction::Prepared::new(&gpu, reduction::ReductionKernel::Fast, &tuned, &input, false, None).unwrap();
            run.dispatch(&gpu).unwrap();
            let got = run.result(&gpu).unwrap();
            assert!(reduction::check(got, expected).passed, "fast with {groups} groups, n {n}: gpu {got}, cpu {expected}");
        }
    }
    let bad = reduction::ReductionConfig { n: 1000, seed: 1, fast_groups: Some(0) };
    assert!(bad.validate().unwrap_err().to_string().contains("invalid reduction_groups: 0"));
}

#[test]
fn reduction_id_array_halves_divergent_warps() {
    let gpu = common::gpu();
    let cfg = reduction::ReductionConfig { n: 1 << 14, seed: 5, fast_groups: None };
    let input = reduction::generate(&cfg).unwrap();
    let ids = reduction::id_array();
    assert_eq!(&ids[..4], &[0, 2, 4, 6]);
    assert_eq!(&ids[128..130], &[1, 3]);
    let k = reduction::ReductionKernel::Interleaved;
    let e = |order: Option<&[u32]>, w| reduction::emulate(k, &cfg, order, w).unwrap().divergence_ratio();
    let w32 = (e(None, 32), e(Some(&ids), 32));
    // Table 5: 100% -> 50%.
    assert_eq!(w32, (1.0, 0.5));
    let mut native = None;
    if let Some(w) = gpu.caps().subgroup_size {
        let mut r = Vec::new();
        for order in [None, Some(ids.as_slice())] {
            let run = reduction::Prepared::new(&gpu, k, &cfg, &input, true, order).unwrap();
            run.dispatch(&gpu).unwrap();
            assert!(reduction::check(run.result(&gpu).unwrap(), reduction::cpu::sum(&input)).passed);
            let d = run.divergence(&gpu).unwrap().unwrap();
            assert_probe_matches(&d, &reduction::emulate(k, &cfg, order, w).unwrap(), "reduction");
            r.push(d.divergence_ratio());
        }
        assert_eq!((r[0], r[1]), (1.0, 0.5), "at width {w} too");
        native = Some((r[0], r[1]));
        // sequential addressing: only the warp holding the last levels diverges
        let run = reduction::Prepared::new(&gpu, reduction::ReductionKernel::Sequential, &cfg, &input, true, None).unwrap();
        run.dispatch(&gpu).unwrap();
        let d = run.divergence(&gpu).unwrap().unwrap();
        assert_probe_matches(&d, &reduction::emulate(reduction::ReductionKernel::Sequential, &cfg, None, w).unwrap(), "sequential");
        assert!((d.divergence_ratio() - w as f64 / 256.0).abs() < 1e-12, "one warp of each workgroup");
    }
    report("reduction", &Ratios { native, w32 });
}

// ---------------------------------------------------------------- GAFORT

#[test]
fn gafort_matches_reference_and_redirect_reduces_divergence() {
    let gpu = common::gpu();
    let cfg = gafort::GaConfig { children: 4096 + 7, genes: 32, seed: 21, ..Default::default() };
    let input = Gafort::generate(&cfg).unwrap();
    let expected = Gafort::reference(&cfg, &input);
    let (_, r) = org_and_redirect::<Gafort>(&gpu, &cfg, &input, &expected);
    let w32 = r.w32;
    // Table 3: every warp diverges before; fewer after (the trip counts still vary).
    assert_eq!(w32.0, 1.0);
    assert!(w32.1 < w32.0 * 0.5, "{w32:?}");
    if let Some((a, b)) = r.native {
        assert!(a > 0.9 && b < a * 0.5, "{a} -> {b}");
    }
}

// ---------------------------------------------------------------- 3D-LBM

#[test]
fn lbm_matches_reference_and_redirect_reduces_divergence() {
    let gpu = common::gpu();
    let cfg = lbm::LbmConfig { edge: 16, seed: 31, ..Default::default() };
    let input = Lbm::generate(&cfg).unwrap();
    let fluid = input.flags.iter().filter(|&&f| f == 1).count() as f64 / cfg.cells() as f64;
    assert!(fluid > 0.5 && fluid < 0.97, "obstacles present: fluid fraction {fluid}");
    let expected = Lbm::reference(&cfg, &input);
    let (_, r) = org_and_redirect::<Lbm>(&gpu, &cfg, &input, &expected);
    let w32 = r.w32;
    // Table 2: 50-100% of warps diverge (walls and obstacles); remapping removes most of it.
    assert!(w32.0 >= 0.5, "{w32:?}");
    assert!(w32.1 < w32.0 * 0.6, "{w32:?}");
    if let Some((a, b)) = r.native {
        assert!(a >= 0.5 && b < a * 0.6, "{a} -> {b}");
    }
}

// ---------------------------------------------------------------- MarchingCubes

#[test]
fn mcubes_matches_reference_and_redirect_reduces_divergence() {
    let gpu = common::gpu();
    let cfg = mcubes::McConfig { edge: 24, seed: 41, ..Default::default() };
    let volume = MarchingCubes::generate(&cfg).unwrap();
    let expected = MarchingCubes::reference(&cfg, &volume);
    assert!(expected.total > 300 && expected.total.is_multiple_of(3), "a surface: {} vertices", expected.total);
    let (index, r) = org_and_redirect::<MarchingCubes>(&gpu, &cfg, &volume, &expected);
    let mut meshes = Vec::new();
    for order in [None, Some(index.as_slice())] {
        let run = mcubes::Prepared::new(&gpu, &cfg, &volume, RunOptions { probe: false, remap: order }).unwrap();
        run.dispatch(&gpu).unwrap();
        meshes.push(run.mesh(&gpu).unwrap());
        // the whole pipeline again gives the same mesh
        run.dispatch_pipeline(&gpu).unwrap();
        assert_eq!(run.mesh(&gpu).unwrap(), meshes[meshes.len() - 1]);
    }
    assert_eq!(meshes[0], meshes[1], "redirection leaves the mesh unchanged");
    assert_eq!(meshes[0].triangles() as u32, expected.total / 3);
    let w32 = r.w32;
    // Table 4: the divergence ratio drops to a few per cent (boundaries between count classes).
    assert!(w32.0 > 0.0 && w32.1 < w32.0 * 0.5, "{w32:?}");
    if let Some((a, b)) = r.native {
        assert!(a > 0.0 && b < a * 0.5, "{a} -> {b}");
    }
}

// ---------------------------------------------------------------- the CLI sweep

#[test]
fn bench_zhang_runs_every_kernel_and_checks_it() {
    let gpu: Gpu = common::gpu();
    let sweep = BenchmarkSweep {
        benchmark: Benchmark::All,
        variants: Variants::All,
        n: vec![16],
        protocol: Protocol { warmup: 0, samples: 1 },
        seed: 3,
        reduction_groups: vec![8],
    };
    let records = zhang::run_benchmarks(&gpu, &sweep).unwrap();
    for r in &records {
        assert!(r.check.passed, "{} {}: {:?}", r.family, r.variant, r.check.first_mismatch);
        assert!(r.extra.get("divergence_w32").is_some());
    }
    let families: std::collections::BTreeSet<&str> = records.iter().map(|r| r.family.as_str()).collect();
    assert_eq!(families.len(), 5);
    // reduction: org, redirect, sequential, fast, blocked; the others org + redirect
    assert_eq!(records.len(), 4 * 2 + 5);
}

// ---------------------------------------------------------------- sizes against the adapter's limits

fn args(benchmark: Benchmark, n: Vec<usize>) -> BenchmarkSweep {
    BenchmarkSweep {
        benchmark,
        variants: Variants::None,
        n,
        protocol: Protocol { warmup: 0, samples: 1 },
        seed: 7,
        reduction_groups: Vec::new(),
    }
}

/// Table 5's sizes need probe records of 16 bytes per element at subgroup width 8 (4× the
/// input): past the storage binding limit on lavapipe from 2^24 elements. The probe runs in
/// chunks that fit, and counts what one probe over the whole grid would.
#[test]
fn reduction_probe_records_past_the_binding_limit_run_in_chunks() {
    let Some((gpu, w)) = common::gpu_with_subgroups() else { return };
    let limit = gpu.caps().max_storage_buffer_binding_size.min(gpu.caps().max_buffer_size);
    let probe_bytes_per_element = (reduction::LEVELS as u64 * 16).div_ceil(w as u64);
    // the smallest power of two whose probe does not fit one binding, if its input does
    let n = (2 * limit / probe_bytes_per_element).next_power_of_two() as usize;
    if n as u64 * 4 > limit {
        eprintln!("skipped: the probe of any input that fits {} fits too", gpu.adapter_name());
        return;
    }
    let records = zhang::run_benchmarks(&gpu, &args(Benchmark::Reduction, vec![n])).unwrap();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert!(r.check.passed, "{:?}", r.check.first_mismatch);
    assert!(r.extra["probe_chunks"].as_u64().unwrap() >= 2, "{}", r.extra);
    assert_eq!(r.extra["divergence_native"]["divergence_ratio"].as_f64(), Some(1.0), "{}", r.extra);
    assert_eq!(r.extra["divergence_native"]["warps"].as_u64(), Some((n / w as usize) as u64), "{}", r.extra);
}

#[test]
fn reduction_probe_in_chunks_equals_one_probe() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let ids = reduction::id_array();
    let cfg = reduction::ReductionConfig { n: 70_000 + 3, seed: 9, fast_groups: None };
    let input = reduction::generate(&cfg).unwrap();
    for (kernel, order) in [
        (reduction::ReductionKernel::Interleaved, None),
        (reduction::ReductionKernel::Interleaved, Some(ids.as_slice())),
        (reduction::ReductionKernel::Sequential, None),
    ] {
        let whole = reduction::Prepared::new(&gpu, kernel, &cfg, &input, true, order).unwrap();
        whole.dispatch(&gpu).unwrap();
        let whole = whole.divergence(&gpu).unwrap().unwrap();
        for chunk_groups in [1, 7, 64, 1 << 20] {
            let (d, chunks) = reduction::probe_in_chunks(&gpu, kernel, &cfg, &input, order, chunk_groups).unwrap();
            assert_eq!(chunks, cfg.n.div_ceil(256).div_ceil(chunk_groups), "{kernel:?}");
            assert_eq!(d, whole, "{kernel:?} in chunks of {chunk_groups} workgroups");
        }
    }
    let err = reduction::probe_in_chunks(&gpu, reduction::ReductionKernel::Fast, &cfg, &input, None, 8).unwrap_err();
    assert!(err.to_string().contains("fast"), "{err}");
}

/// Sizes that pass validation but cannot be allocated are refused before any input is made
/// (these would take minutes and tens of GiB to generate), naming the option to lower.
#[test]
fn zhang_sizes_past_memory_are_refused_before_generating() {
    let gpu = common::gpu();
    let t0 = std::time::Instant::now();
    // each named by its kernel's size field: the grid's edge, the children, the options
    for (kernel, n, field) in [
        (Benchmark::Lbm, 512, "edge"),
        (Benchmark::Mcubes, 1024, "edge"),
        (Benchmark::Blackscholes, (1 << 31) - 1, "n"),
        (Benchmark::Gafort, (1 << 26) - 1, "children"),
    ] {
        let err = zhang::run_benchmarks(&gpu, &args(kernel, vec![n])).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, simtlab::Error::Limit { requested, limit, .. } if requested > limit), "{kernel:?}: {text}");
        assert!(text.contains(&format!("lower `{field}`")) && text.contains(&format!("`{field}={n}`")), "{kernel:?}: {text}");
    }
    // with --kernel all, a size no benchmark can run fails before the first one starts
    let err = zhang::run_benchmarks(&gpu, &args(Benchmark::All, vec![16, 512])).unwrap_err();
    assert!(err.to_string().contains("lbm `edge=512`"), "{err}");
    assert!(t0.elapsed().as_secs() < 30, "refusals must not generate inputs: {:?}", t0.elapsed());
}

#[test]
fn zhang_options_out_of_range_or_unused_are_errors() {
    let gpu = common::gpu();
    let mut a = args(Benchmark::Lbm, vec![16]);
    a.reduction_groups = vec![8];
    let err = zhang::run_benchmarks(&gpu, &a).unwrap_err().to_string();
    assert!(err.contains("invalid reduction_groups: ") && err.contains("kernel reduction"), "{err}");
    let mut a = args(Benchmark::Reduction, vec![1000]);
    a.reduction_groups = vec![70_000];
    let err = zhang::run_benchmarks(&gpu, &a).unwrap_err().to_string();
    assert!(err.contains("invalid reduction_groups: ") && err.contains("1..=65532"), "{err}");
    for (kernel, n, option) in [
        (Benchmark::Lbm, 1, "invalid edge: 1 cells per side of the lattice (use 2..=512)"),
        (Benchmark::Mcubes, 0, "invalid edge: 0 voxels per side of the grid (use 1..=1024)"),
        (Benchmark::Gafort, 1, "invalid children: 1 (use 2..=2^29-1)"),
        (Benchmark::Gafort, 1 << 27, "use children ≤ 67108863"),
    ] {
        let err = zhang::run_benchmarks(&gpu, &args(kernel, vec![n])).unwrap_err().to_string();
        assert!(err.contains(option), "{err}");
    }
}
