//! `simtlab::profile` on shaders that take more than buffers: overrides (workgroup size and
//! constants), immediates, storage and sampled textures, i32 specs; figures that do not depend
//! on how a loop is written; per-clause switch counts; sampled counting. Outputs are checked
//! against host computations, and the GPU probe against host emulation.

mod common;

use simtlab::profile::{self, BindingSpec, CountSource, ProfileRequest, ShaderDispatch, SiteCounts, SiteKind, TextureFill, TextureSpec};
use simtlab::rng::Rng;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/fixtures/profile/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn request<'a>(file: &'a str, wgsl: &'a str, entry: &'a str, workgroups: u32, bindings: Vec<(&str, BindingSpec)>) -> ProfileRequest<'a> {
    let bindings = bindings.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    ProfileRequest {
        trace_events: 1024,
        ..ProfileRequest::new(ShaderDispatch { bindings, ..ShaderDispatch::new(file, wgsl, entry, [workgroups, 1, 1]) })
    }
}

fn words(run: &profile::ProfileRun, name: &str) -> Vec<u32> {
    bytemuck::pod_collect_to_vec(&run.outputs.iter().find(|(b, _)| b.name == name).unwrap().1)
}

fn bytes(w: &[u32]) -> BindingSpec {
    BindingSpec::Bytes(bytemuck::cast_slice(w).to_vec())
}

/// Runs `request` on the GPU probe and emulated at the native width; asserts the outputs are
/// unchanged by the probe and the two counts are equal; returns the GPU run.
fn probe_equals_emulation(gpu: &simtlab::Gpu, request: &ProfileRequest) -> profile::ProfileRun {
    let on_gpu = profile::profile(gpu, request).unwrap_or_else(|e| panic!("{}: {e}", request.shader.file));
    let emulated = profile::profile(gpu, &ProfileRequest { emulate: true, ..request.clone() }).unwrap();
    assert_eq!(on_gpu.counts.source, CountSource::GpuProbe);
    assert!(on_gpu.outputs_identical && emulated.outputs_identical, "{}: outputs differ with the probe", request.shader.file);
    assert_eq!(on_gpu.outputs, emulated.outputs, "{}", request.shader.file);
    assert_eq!(on_gpu.counts.per_subgroup, emulated.counts.per_subgroup, "{}: probe and emulation differ", request.shader.file);
    assert_eq!(on_gpu.counts.per_subgroup_cases, emulated.counts.per_subgroup_cases, "{}: clauses differ", request.shader.file);
    on_gpu
}

#[test]
fn overrides_set_the_workgroup_size_and_constants_and_defaults_fill_the_rest() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let wgsl = fixture("overrides.wgsl");
    let values = Rng::new(3).vec_u32(512).into_iter().map(|v| v % 1000).collect::<Vec<_>>();
    let steps = |factor: u32, limit: u32| -> Vec<u32> {
        values
            .iter()
            .map(|&v| {
                let (mut x, mut n) = (v, 0);
                while x > 1 && n < limit {
                    x = if x % 2 == 0 { x / 2 } else { factor.wrapping_mul(x).wrapping_add(1) };
                    n += 1;
                }
                n
            })
            .collect()
    };
    let base = request("overrides.wgsl", &wgsl, "main", 32, vec![("data", bytes(&values))]);
    // block = 16 by name, factor = 3, limit by its @id
    let with = |overrides: Vec<(String, f64)>, workgroups: u32| {
        let mut r = base.clone();
        r.shader.overrides = overrides;
        r.shader.workgroups = [workgroups, 1, 1];
        r
    };
    let given = with(vec![("block".into(), 16.0), ("factor".into(), 3.0), ("7".into(), 40.0)], 32);
    let run = probe_equals_emulation(&gpu, &given);
    assert_eq!(run.workgroup_size, [16, 1, 1]);
    assert_eq!(words(&run, "data"), steps(3, 40));
    assert!(run.counts.totals().iter().any(|c| c.uniform_evaluations < c.evaluations));
    // defaults for block (64) and limit (48): 512 invocations are 8 workgroups
    let defaults = with(vec![("factor".into(), 5.0)], 8);
    let run = probe_equals_emulation(&gpu, &defaults);
    assert_eq!(run.workgroup_size, [64, 1, 1]);
    assert_eq!(words(&run, "data"), steps(5, 48));
    // an override without a default must be given, and only the shader's may be
    let e = profile::profile(&gpu, &base).unwrap_err().to_string();
    assert!(e.contains("override factor") && e.contains("(factor=VALUE)"), "{e}");
    let e = profile::profile(&gpu, &with(vec![("factor".into(), 3.0), ("nope".into(), 1.0)], 32)).unwrap_err().to_string();
    assert!(e.contains("'nope'") && e.contains("block") && e.contains("limit (@id(7))"), "{e}");
}

#[test]
fn an_immediate_is_given_like_a_binding() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let wgsl = fixture("immediate.wgsl");
    let values = Rng::new(11).vec_u32(256);
    let (threshold, add) = (6u32, 1000u32);
    let req = request("immediate.wgsl", &wgsl, "main", 4, vec![("data", bytes(&values)), ("params", bytes(&[threshold, add]))]);
    if !gpu.device().features().contains(wgpu::Features::IMMEDIATES) {
        let e = profile::profile(&gpu, &req).unwrap_err().to_string();
        assert!(e.contains("immediate 'params'") && e.contains("IMMEDIATES"), "{e}");
        return;
    }
    let run = probe_equals_emulation(&gpu, &req);
    let expected: Vec<u32> = values.iter().map(|&v| if v % 16 < threshold { v.wrapping_add(add) } else { v >> 4 }).collect();
    assert_eq!(words(&run, "data"), expected);
    let taken: u64 = values.iter().filter(|&&v| v % 16 < threshold).count() as u64;
    assert_eq!(run.counts.totals()[0].taken_lanes, taken);
    // too few bytes for the immediate's struct is refused, naming it
    let short = request("immediate.wgsl", &wgsl, "main", 4, vec![("data", bytes(&values)), ("params", bytes(&[threshold]))]);
    let e = profile::profile(&gpu, &short).unwrap_err().to_string();
    assert!(e.contains("immediate 'params'") && e.contains("at least 8 bytes"), "{e}");
}

#[test]
fn a_storage_texture_is_filled_and_read_back_as_an_output() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let wgsl = fixture("storage_texture.wgsl");
    let values = Rng::new(5).vec_u32(32 * 32);
    let out = TextureSpec { size: [32, 32, 1], format: wgpu::TextureFormat::R32Uint, fill: TextureFill::Random(2) };
    let mut req = request("storage_texture.wgsl", &wgsl, "main", 4, vec![("values", bytes(&values)), ("out", BindingSpec::Texture(out))]);
    req.shader.workgroups = [4, 4, 1];
    let run = probe_equals_emulation(&gpu, &req);
    assert_eq!(run.workgroup_size, [8, 8, 1]);
    let expected: Vec<u32> = values.iter().map(|&v| if v % 3 == 0 { v / 3 } else { v ^ 255 }).collect();
    assert_eq!(words(&run, "out"), expected);
    assert_eq!(run.counts.totals()[0].taken_lanes, values.iter().filter(|&&v| v % 3 == 0).count() as u64);
    // the spec parses from the command line's form, and a format other than the declared one is refused
    let spec: BindingSpec = "texture:32x32:rgba8unorm:zero".parse().unwrap();
    let wrong = request("storage_texture.wgsl", &wgsl, "main", 4, vec![("values", bytes(&values)), ("out", spec)]);
    let e = profile::profile(&gpu, &wrong).unwrap_err().to_string();
    assert!(e.contains("declared r32uint") && e.contains("not rgba8unorm"), "{e}");
}

#[test]
fn a_sampled_texture_with_a_sampler_reads_what_the_spec_put_there() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let wgsl = fixture("sampled_texture.wgsl");
    let image: BindingSpec = "texture:16x16:rgba8unorm:random:9".parse().unwrap();
    let BindingSpec::Texture(spec) = &image else { panic!("a texture spec") };
    let texels = spec.texels().unwrap();
    let req = request(
        "sampled_texture.wgsl",
        &wgsl,
        "main",
        4,
        vec![("image", image.clone()), ("pick", "sampler:nearest".parse().unwrap()), ("out", BindingSpec::U32Zero(256))],
    );
    let run = probe_equals_emulation(&gpu, &req);
    let expected: Vec<u32> =
        texels.chunks_exact(4).map(|t| if t[0] as f32 / 255.0 > 0.5 { t[1] as u32 } else { 1000 + t[2] as u32 }).collect();
    assert_eq!(words(&run, "out"), expected);
    assert!(expected.iter().any(|&v| v >= 1000) && expected.iter().any(|&v| v < 1000), "both paths run");
    // the sampler may be left out (nearest)
    let without = request("sampled_texture.wgsl", &wgsl, "main", 4, vec![("image", image), ("out", BindingSpec::U32Zero(256))]);
    assert_eq!(words(&profile::profile(&gpu, &without).unwrap(), "out"), expected);
}

#[test]
fn i32_specs_fill_i32_bindings() {
    let spec: BindingSpec = "i32:4:seq".parse().unwrap();
    assert_eq!(spec.bytes().unwrap(), bytemuck::cast_slice::<i32, u8>(&[0, 1, 2, 3]).to_vec());
    assert_eq!(spec.scalar(), Some(naga::Scalar::I32));
    let random: BindingSpec = "i32:1000:random:4".parse().unwrap();
    let values: Vec<i32> = bytemuck::pod_collect_to_vec(&random.bytes().unwrap());
    assert!(values.iter().any(|&v| v < 0) && values.iter().any(|&v| v > 0));
    assert_eq!("i32:3:zero".parse::<BindingSpec>().unwrap().bytes().unwrap(), vec![0; 12]);
    assert!("i32:3:random".parse::<BindingSpec>().unwrap_err().to_string().contains("SEED"));
    // a u32 spec does not fill an i32 buffer, an i32 spec does
    let wgsl = "@group(0) @binding(0) var<storage, read_write> d: array<i32>;
@compute @workgroup_size(8) fn main(@builtin(global_invocation_id) id: vec3<u32>) { if (d[id.x] < 0) { d[id.x] = -d[id.x]; } }";
    let (module, info) = profile::parse("i32.wgsl", wgsl).unwrap();
    let bindings = profile::entry_bindings(wgsl, &module, &info, "main").unwrap();
    assert!(profile::contents(&bindings, &[("d".into(), BindingSpec::U32Zero(8))]).is_err());
    assert_eq!(profile::contents(&bindings, &[("d".into(), BindingSpec::I32Seq(8))]).unwrap()[0].len(), 32);
}

#[test]
fn the_same_loop_written_as_for_and_as_loop_with_break_gives_one_headline() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let wgsl = fixture("loops.wgsl");
    let values = Rng::new(17).vec_u32(512);
    let run = |entry| probe_equals_emulation(&gpu, &request("loops.wgsl", &wgsl, entry, 8, vec![("data", bytes(&values))]));
    let (counted, broken) = (run("counted"), run("broken"));
    assert_eq!(words(&counted, "data"), words(&broken, "data"));
    assert_eq!(counted.sites.iter().map(|s| s.kind).collect::<Vec<_>>(), [SiteKind::Loop, SiteKind::If]);
    assert_eq!(broken.sites.iter().map(|s| s.kind).collect::<Vec<_>>(), [SiteKind::If, SiteKind::If]);
    let (a, b) = (&counted.summary, &broken.summary);
    assert!(a.simt_efficiency < 1.0, "the loop diverges");
    assert_eq!(a.simt_efficiency, b.simt_efficiency);
    assert_eq!(a.branch_efficiency, b.branch_efficiency);
    assert_eq!(a.divergence_ratio, b.divergence_ratio);
    // the headline is Σ active lanes / (Σ evaluations × width), computed here from the counts
    let w = counted.counts.width as f64;
    let t = counted.counts.totals();
    let headline = t.iter().map(|c| c.active_lanes).sum::<u64>() as f64 / (t.iter().map(|c| c.evaluations).sum::<u64>() as f64 * w);
    assert_eq!(a.simt_efficiency, headline);
}

/// Per subgroup of `width` lanes (workgroups of 64): the lanes choosing each clause of the
/// first switch (0 / 1, 2 / default) and of the second (-1 or default / 2).
fn switch_reference(values: &[u32], width: usize) -> [SiteCounts; 5] {
    let mut out = [SiteCounts::default(); 5];
    for group in values.chunks(64) {
        for sg in group.chunks(width) {
            let clause_of = |v: u32| -> [usize; 2] {
                let first = match v % 5 {
                    0 => 0,
                    1 | 2 => 1,
                    _ => 2,
                };
                let second = if (v & 3) as i32 - 1 == 2 { 4 } else { 3 };
                [first, second]
            };
            let mut taken = [0u64; 5];
            for &v in sg {
                clause_of(v).iter().for_each(|&c| taken[c] += 1);
            }
            for (c, n) in taken.into_iter().enumerate() {
                let o = &mut out[c];
                o.evaluations += 1;
                o.active_lanes += sg.len() as u64;
                o.taken_lanes += n;
                o.uniform_evaluations += (n == 0 || n == sg.len() as u64) as u64;
                o.taken_steps += (n > 0) as u64;
            }
        }
    }
    out
}

#[test]
fn every_switch_clause_gets_counts_equal_to_emulation_and_to_the_host() {
    let Some((gpu, native)) = common::gpu_with_subgroups() else { return };
    let wgsl = fixture("switch.wgsl");
    let values = Rng::new(21).vec_u32(512);
    let run = probe_equals_emulation(&gpu, &request("switch.wgsl", &wgsl, "main", 8, vec![("data", bytes(&values))]));
    let sources: Vec<(usize, &str, Vec<u32>, bool)> =
        run.cases.iter().map(|c| (c.switch, c.source.as_str(), c.values.clone(), c.default)).collect();
    assert_eq!(
        sources,
        [
            (0, "case 0u", vec![0], false),
            (0, "case 1u, 2u", vec![1, 2], false),
            (0, "default", vec![], true),
            (1, "case -1, default", vec![u32::MAX], true),
            (1, "case 2", vec![2], false),
        ]
    );
    assert_eq!(run.cases.iter().map(|c| c.line).collect::<Vec<_>>(), [8, 11, 14, 19, 22]);
    assert_eq!(run.counts.case_totals(), switch_reference(&values, native as usize));
    assert_eq!(run.summary.sites[0].cases.len(), 3);
    assert_eq!(run.summary.sites[1].cases.len(), 2);
    // the table prints a row per clause
    let table = profile::table(&run.summary);
    assert!(table.lines().any(|l| l.contains("case") && l.contains("case 1u, 2u")), "{table}");
    // emulated at another width, the clauses follow that width
    let w5 = profile::profile(
        &gpu,
        &ProfileRequest { width: Some(5), ..request("switch.wgsl", &wgsl, "main", 8, vec![("data", bytes(&values))]) },
    )
    .unwrap();
    assert_eq!(w5.counts.case_totals(), switch_reference(&values, 5));
}

#[test]
fn a_call_row_names_the_lines_that_call_the_function() {
    let wgsl = fixture("shapes.wgsl");
    let lines: Vec<&str> = wgsl.lines().collect();
    let calls = |entry: &str| -> Vec<(String, Vec<u32>)> {
        let probed = profile::instrument("shapes.wgsl", &wgsl, entry, &Default::default()).unwrap();
        probed.sites.iter().filter(|s| s.kind == SiteKind::Call).map(|s| (s.source.clone(), s.callers.clone())).collect()
    };
    // each entry point lists the calls it makes (and its callees make), not the other's
    let main = calls("main");
    let tests = calls("tests");
    assert_eq!(main.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["bump(x: u32)"]);
    assert_eq!(tests.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["bump(x: u32)", "pick(mode: u32)"]);
    for (name, callers) in main.iter().chain(&tests) {
        let f = &name[..name.find('(').unwrap()];
        assert!(!callers.is_empty(), "{name}");
        for &l in callers {
            assert!(lines[l as usize - 1].contains(&format!("{f}(")), "line {l} calls {f}: {}", lines[l as usize - 1]);
        }
    }
    let everywhere: Vec<u32> = (1..=lines.len() as u32)
        .filter(|&l| lines[l as usize - 1].contains("bump(") && !lines[l as usize - 1].trim_start().starts_with("fn "))
        .collect();
    let mut both: Vec<u32> = main[0].1.iter().chain(&tests[0].1).copied().collect();
    both.sort_unstable();
    assert_eq!(both, everywhere, "every call of bump is named by one entry point or the other");
    // the table shows them
    let run_table = profile::table(&profile::summary(
        &profile::instrument("shapes.wgsl", &wgsl, "tests", &Default::default()).unwrap().sites,
        &profile::Counts {
            width: 8,
            source: CountSource::GpuProbe,
            sites: 6,
            per_subgroup: vec![SiteCounts::default(); 6],
            cases: 0,
            per_subgroup_cases: Vec::new(),
            sampling: None,
        },
    ));
    assert!(run_table.contains(&format!("bump(x: u32) ← line {}", tests[0].1[0])), "{run_table}");
}

#[test]
fn sampling_counts_one_subgroup_in_n_exactly_and_estimates_the_rest() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    // a shader with a call and an early return (the subgroups that do not count run the text
    // as written, the others an instrumented twin of each function), and one whose barrier
    // keeps the probe's test at each site instead
    let collatz = fixture("collatz.wgsl");
    let barrier = "@group(0) @binding(0) var<storage, read_write> data: array<u32>;\n\
        var<workgroup> tile: array<u32, 64>;\n\
        fn spin(x: u32) -> u32 { var y = x; for (var k = 0u; k < (x & 7u); k++) { y = y * 3u + 1u; } return y; }\n\
        @compute @workgroup_size(64)\n\
        fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n\
            tile[li] = spin(data[gid.x]);\n    workgroupBarrier();\n    data[gid.x] = tile[63u - li];\n}\n";
    let sampled_text = |file: &str, wgsl: &str| {
        let options = profile::InstrumentOptions { sample: 4, ..Default::default() };
        profile::instrument(file, wgsl, "main", &options).unwrap().wgsl
    };
    assert!(sampled_text("collatz.wgsl", &collatz).contains("n = simtlab_probe_f_next(n);"));
    let gated = sampled_text("barrier.wgsl", barrier);
    assert!(!gated.contains("simtlab_probe_f_spin") && gated.contains("if (simtlab_probe_on) {\n        simtlab_probe_"), "{gated}");
    let odd = Rng::new(31).vec_u32(300);
    let cases = [
        request("collatz.wgsl", &collatz, "main", 5, vec![("values", bytes(&odd)), ("steps", BindingSpec::U32Zero(300))]),
        request("barrier.wgsl", barrier, "main", 6, vec![("data", BindingSpec::U32Random(384, 7))]),
    ];
    for case in cases {
        let exact = profile::profile(&gpu, &case).unwrap();
        let sampled = profile::profile(&gpu, &ProfileRequest { sample: 4, ..case.clone() }).unwrap();
        assert!(sampled.outputs_identical && exact.outputs_identical, "{}", case.shader.file);
        assert_eq!(sampled.outputs, exact.outputs, "{}", case.shader.file);
        let sampling = sampled.counts.sampling.as_ref().expect("a sampled run says so");
        let s = exact.counts.sites;
        for (k, &g) in sampling.counted.iter().enumerate() {
            assert_eq!(
                sampled.counts.per_subgroup[k * s..(k + 1) * s],
                exact.counts.per_subgroup[g as usize * s..(g as usize + 1) * s],
                "{}",
                case.shader.file
            );
        }
        assert!(exact.counts.totals().iter().any(|c| c.evaluations > c.uniform_evaluations), "{} must diverge", case.shader.file);
    }

    let wgsl = fixture("loops.wgsl");
    let values = Rng::new(29).vec_u32(64 * 64);
    let exact = profile::profile(&gpu, &request("loops.wgsl", &wgsl, "counted", 64, vec![("data", bytes(&values))])).unwrap();
    let sampled = profile::profile(
        &gpu,
        &ProfileRequest { sample: 4, ..request("loops.wgsl", &wgsl, "counted", 64, vec![("data", bytes(&values))]) },
    )
    .unwrap();
    assert!(sampled.outputs_identical);
    assert_eq!(sampled.outputs, exact.outputs);
    let sampling = sampled.counts.sampling.as_ref().expect("a sampled run says so");
    let total = exact.counts.per_subgroup.len() / exact.counts.sites;
    assert_eq!(sampling.subgroups, total as u64);
    assert_eq!(sampling.counted.len(), total.div_ceil(4));
    // one in each run of 4, and each counted subgroup's record is the exact one
    for (k, &g) in sampling.counted.iter().enumerate() {
        assert_eq!(g as usize / 4, k);
        let s = exact.counts.sites;
        assert_eq!(sampled.counts.per_subgroup[k * s..(k + 1) * s], exact.counts.per_subgroup[g as usize * s..(g as usize + 1) * s]);
    }
    assert!(sampling.counted.iter().any(|g| g % 4 != 0), "the subgroup in each run is not always the first");
    let e = sampled.summary.sampling.as_ref().unwrap();
    assert!(e.simt_efficiency > 0.0 && e.simt_efficiency < 0.1, "{e:?}");
    assert!((sampled.summary.simt_efficiency - exact.summary.simt_efficiency).abs() <= e.simt_efficiency, "{e:?}");
    let all: u64 = exact.counts.totals().iter().map(|c| c.evaluations).sum();
    assert!((e.evaluations - all as f64).abs() <= e.evaluations_error.max(1.0), "{e:?} vs {all}");
    // sampling needs the GPU's subgroups
    let e = profile::profile(
        &gpu,
        &ProfileRequest { sample: 4, emulate: true, ..request("loops.wgsl", &wgsl, "counted", 64, vec![("data", bytes(&values))]) },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("sample"), "{e}");
}

#[test]
fn loops_longer_than_the_probes_history_are_instrumented_again_and_counted_exactly() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let wgsl = fixture("overrides.wgsl");
    // Collatz-like walks of random 32-bit starts, cut at 600 steps: some run past 256
    let values = Rng::new(29).vec_u32(256);
    let base = ProfileRequest { trace_events: 4096, ..request("overrides.wgsl", &wgsl, "main", 4, vec![("data", bytes(&values))]) };
    let base = ProfileRequest {
        shader: ShaderDispatch { overrides: vec![("factor".into(), 3.0), ("7".into(), 600.0)], ..base.shader.clone() },
        ..base
    };
    let mut runs = Vec::new();
    for loop_history in [0, 1, profile::DEFAULT_LOOP_HISTORY, 19] {
        let request = ProfileRequest { loop_history, ..base.clone() };
        let mut steps = Vec::new();
        let run = profile::profile_with(&gpu, &request, &Default::default(), &mut |s| steps.push(s.what)).unwrap();
        let again = steps.iter().find(|s| s.starts_with("instrumenting again"));
        let at = run.sites.iter().position(|s| s.kind == SiteKind::Loop).unwrap();
        let longest = run.counts.per_subgroup.chunks_exact(run.counts.sites).map(|r| r[at].evaluations).max().unwrap();
        assert!(longest > 300, "the walks are long enough to outrun the default history ({longest} loop tests)");
        // the loop ran `longest - 1` iterations: a history of fewer words is instrumented again
        assert_eq!(again.is_some(), loop_history > 0 && (longest - 1) > 32 * loop_history as u64, "{loop_history}: {steps:?}");
        runs.push(probe_equals_emulation(&gpu, &request));
    }
    for run in &runs[1..] {
        assert_eq!(run.counts.per_subgroup, runs[0].counts.per_subgroup);
    }
    // the records of a run that outran its history are refused by decode, with the words needed
    let options = profile::InstrumentOptions { loop_history: 2, overrides: base.shader.overrides.clone(), ..Default::default() };
    let instrumented = profile::instrument("overrides.wgsl", &wgsl, "main", &options).unwrap();
    let mut words = vec![0u32; (instrumented.records_bytes([4, 1, 1], 8) / 4) as usize];
    words[..4].copy_from_slice(&[8, 8, 0, 100]);
    assert_eq!(profile::loop_history_needed(&instrumented, &words), Some(4));
    let e = profile::decode(&instrumented, &words, [4, 1, 1], 8).unwrap_err().to_string();
    assert!(e.contains("loop_history 4 or more") && e.contains("ran 100 iterations"), "{e}");
    words[3] = 64;
    assert_eq!(profile::loop_history_needed(&instrumented, &words), None);
}

#[test]
fn a_break_if_loop_in_a_helper_called_in_a_data_dependent_loop_counts_as_emulated() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let wgsl = "@group(0) @binding(0) var<storage, read_write> data: array<u32>;\n\
        fn rounds(x: u32) -> u32 {\n    var j = (x & 15u) | 1u;\n    var n = 0u;\n    loop {\n        n += 1u;\n        j = j >> 1u;\n        continuing {\n            break if j == 0u;\n        }\n    }\n    return n;\n}\n\
        @compute @workgroup_size(64)\n\
        fn main(@builtin(global_invocation_id) id: vec3<u32>) {\n    var x = data[id.x];\n    var total = 0u;\n    var k = 0u;\n    while (k < (x & 7u)) {\n        total += rounds(x >> k);\n        k += 1u;\n    }\n    data[id.x] = total;\n}\n";
    let values = Rng::new(41).vec_u32(256);
    let run = probe_equals_emulation(&gpu, &request("helper.wgsl", wgsl, "main", 4, vec![("data", bytes(&values))]));
    assert!(run.summary.simt_efficiency < 1.0);
}
