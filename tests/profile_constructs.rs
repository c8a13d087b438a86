//! `simtlab::profile` over shaders written here for the constructs real kernels use (nested
//! loops, switch, calls, atomics, structs of mixed types, workgroup memory, several entry
//! points, `#import` and `#ifdef`), in tests/fixtures/profile/constructs: every entry point
//! instruments, validates and builds a pipeline; every one runs on small synthetic inputs with
//! the same outputs instrumented, the outputs computed on the host, and the GPU probe equal to
//! host emulation. Sizes take seconds on lavapipe; the GPU timeout only catches real hangs.

mod common;

use simtlab::gpu::shader::{preprocess_text, ShaderSource};
use simtlab::profile::{self, instrument, BindingSpec, CountSource, Counting, InstrumentOptions, ProfileRequest, ShaderDispatch, SiteKind};
use simtlab::rng::Rng;
use simtlab::Gpu;
use std::time::Duration;

/// Long enough that only a hang reaches it, however loaded the machine.
const HANG_TIMEOUT: Duration = Duration::from_secs(600);

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/profile/constructs")
}

/// Every construct shader preprocessed with `defines` (its `#import`s from `shared/`).
fn shaders(defines: &[&str]) -> Vec<(String, ShaderSource)> {
    let mut files: Vec<_> =
        std::fs::read_dir(dir()).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "wgsl")).collect();
    files.sort();
    let import = |name: &str| -> Option<&'static str> {
        std::fs::read_to_string(dir().join(format!("shared/{name}.wgsl"))).ok().map(|t| &*Box::leak(t.into_boxed_str()))
    };
    files
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let source = preprocess_text(&name, &std::fs::read_to_string(p).unwrap(), defines, &import).unwrap_or_else(|e| panic!("{e}"));
            (name, source)
        })
        .collect()
}

fn patient(mut gpu: Gpu) -> Gpu {
    gpu.set_timeout(HANG_TIMEOUT);
    gpu
}

#[test]
fn every_construct_entry_point_instruments_validates_and_builds() {
    let gpu = patient(common::gpu());
    let mut modes = vec![Counting::Trace { events: 64 }];
    if gpu.caps().subgroups {
        modes.push(Counting::Subgroups);
    }
    let mut entries = Vec::new();
    let mut kinds = Vec::new();
    for defines in [&[][..], &["WIDE"][..]] {
        for (name, source) in shaders(defines) {
            let (module, _) = profile::parse(&name, &source.text).unwrap();
            for ep in module.entry_points.iter().filter(|e| e.stage == naga::ShaderStage::Compute) {
                for &counting in &modes {
                    let probed = instrument(&name, &source.text, &ep.name, &InstrumentOptions { counting, ..Default::default() })
                        .unwrap_or_else(|e| panic!("{name} {defines:?} {}: {e}", ep.name));
                    assert!(!probed.sites.is_empty(), "{name}");
                    kinds.extend(probed.sites.iter().map(|s| s.kind));
                    // the driver takes it too
                    let scope = gpu.device().push_error_scope(wgpu::ErrorFilter::Validation);
                    let module = gpu.device().create_shader_module(wgpu::ShaderModuleDescriptor {
                        label: Some(&name),
                        source: wgpu::ShaderSource::Wgsl(probed.wgsl.as_str().into()),
                    });
                    let _ = gpu.device().create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                        label: Some(&name),
                        layout: None,
                        module: &module,
                        entry_point: Some(&ep.name),
                        compilation_options: Default::default(),
                        cache: None,
                    });
                    if let Some(e) = pollster::block_on(scope.pop()) {
                        panic!("{name} {defines:?} {}: {e}", ep.name);
                    }
                    if counting == modes[0] {
                        entries.push((name.clone(), ep.name.clone(), probed.workgroup_size[0]));
                    }
                }
            }
        }
    }
    // two files of two entry points each, without and with WIDE (which widens `reduce`)
    let expected = [
        ("histogram.wgsl", "main", 64),
        ("histogram.wgsl", "clear", 16),
        ("tiles.wgsl", "main", 32),
        ("tiles.wgsl", "reduce", 16),
        ("histogram.wgsl", "main", 64),
        ("histogram.wgsl", "clear", 16),
        ("tiles.wgsl", "main", 32),
        ("tiles.wgsl", "reduce", 64),
    ];
    let found: Vec<(&str, &str, u32)> = entries.iter().map(|(f, e, w)| (f.as_str(), e.as_str(), *w)).collect();
    assert_eq!(found, expected);
    for kind in [SiteKind::If, SiteKind::Loop, SiteKind::Switch, SiteKind::Call] {
        assert!(kinds.contains(&kind), "no {kind:?} site among {kinds:?}");
    }
}

fn mix_bits(x: u32) -> u32 {
    let h = (x ^ (x >> 13)).wrapping_mul(2654435761);
    h ^ (h >> 17)
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytemuck::pod_collect_to_vec(bytes)
}

/// One entry point's run: its bindings and what its outputs must be, from the inputs.
struct Case {
    file: &'static str,
    entry: &'static str,
    workgroups: u32,
    bindings: Vec<(&'static str, BindingSpec)>,
    /// (binding, expected words) checked after the run; `visits` and `mixed` are fields of
    /// tiles' `results`.
    expected: Vec<(&'static str, Vec<u32>)>,
}

fn cases() -> Vec<Case> {
    let values = Rng::new(5).vec_u32(4096);
    let (buckets, shift) = (16u32, 3u32);
    let mut histogram = vec![0u32; 16];
    for &v in &values {
        let b = match (v >> shift) & 3 {
            0 => v,
            1 | 2 => mix_bits(v),
            _ => v >> 8,
        };
        histogram[((b % buckets) % 16) as usize] += 1;
    }
    // items: 1024 of 6 words (origin.xy, weight, steps, offset, flags)
    let items = Rng::new(8).vec_u32(1024 * 6);
    let (mut visits, mut mixed) = (Vec::new(), Vec::new());
    for item in items.chunks_exact(6) {
        let (steps, offset, flags) = (item[3] & 7, item[4] as i32 % 5, item[5]);
        visits.push(steps * offset.max(0) as u32);
        let rounds = 32 - (((flags >> steps) & 15) | 1).leading_zeros();
        mixed.push(mix_bits(rounds));
    }
    // reduce reads visits from results laid out as (total, visits, mixed)
    let results = Rng::new(9).vec_u32(1024 * 3);
    let sums: Vec<u32> = results.chunks_exact(3 * 16).map(|g| g.chunks_exact(3).map(|r| r[1]).fold(0u32, u32::wrapping_add)).collect();
    let bytes = |w: &[u32]| BindingSpec::Bytes(bytemuck::cast_slice(w).to_vec());
    vec![
        Case {
            file: "histogram.wgsl",
            entry: "main",
            workgroups: 64,
            bindings: vec![("values", bytes(&values)), ("counts", BindingSpec::U32Zero(16)), ("config", bytes(&[buckets, shift]))],
            expected: vec![("counts", histogram)],
        },
        Case {
            file: "histogram.wgsl",
            entry: "clear",
            workgroups: 2,
            bindings: vec![("counts", BindingSpec::U32Random(24, 3))],
            expected: vec![("counts", vec![0; 24])],
        },
        Case {
            file: "tiles.wgsl",
            entry: "main",
            workgroups: 32,
            bindings: vec![("items", bytes(&items)), ("results", BindingSpec::U32Zero(1024 * 3))],
            expected: vec![("visits", visits), ("mixed", mixed)],
        },
        Case {
            file: "tiles.wgsl",
            entry: "reduce",
            workgroups: 64,
            bindings: vec![("results", bytes(&results)), ("sums", BindingSpec::U32Zero(64))],
            expected: vec![("sums", sums), ("results", results.clone())],
        },
    ]
}

#[test]
fn every_construct_entry_point_gives_the_same_outputs_instrumented_and_the_probe_equals_emulation() {
    let Some((gpu, native)) = common::gpu_with_subgroups() else { return };
    let gpu = patient(gpu);
    let sources = shaders(&[]);
    let mut ran = Vec::new();
    for case in cases() {
        let source = &sources.iter().find(|(n, _)| n == case.file).unwrap().1;
        let bindings = case.bindings.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let shader = ShaderDispatch { bindings, ..ShaderDispatch::new(case.file, &source.text, case.entry, [case.workgroups, 1, 1]) };
        let request = ProfileRequest { trace_events: 256, ..ProfileRequest::new(shader) };
        let what = format!("{} {}", case.file, case.entry);
        let on_gpu = profile::profile(&gpu, &request).unwrap_or_else(|e| panic!("{what}: {e}"));
        let emulated =
            profile::profile(&gpu, &ProfileRequest { emulate: true, ..request.clone() }).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!((on_gpu.counts.source, on_gpu.counts.width), (CountSource::GpuProbe, native), "{what}");
        assert_eq!(emulated.counts.source, CountSource::HostEmulation, "{what}");
        assert!(on_gpu.outputs_identical && emulated.outputs_identical, "{what}: outputs differ with and without the probe");
        assert_eq!(on_gpu.outputs, emulated.outputs, "{what}");
        let differ: Vec<usize> = (0..on_gpu.sites.len())
            .filter(|&k| {
                let of = |c: &profile::Counts| c.per_subgroup.iter().skip(k).step_by(c.sites).copied().collect::<Vec<_>>();
                of(&on_gpu.counts) != of(&emulated.counts)
            })
            .collect();
        assert!(
            differ.is_empty(),
            "{what}: the probe and the emulation disagree at sites {:?}",
            differ.iter().map(|&k| &on_gpu.sites[k]).collect::<Vec<_>>()
        );
        assert_eq!(emulated.counts.per_subgroup, on_gpu.counts.per_subgroup, "{what}: the probe and the emulation disagree");
        assert!(on_gpu.loop_limit_reached.is_none(), "{what}");
        let output = |name: &str| words(&on_gpu.outputs.iter().find(|(b, _)| b.name == name).unwrap().1);
        for (name, expected) in &case.expected {
            let got = match *name {
                "visits" => output("results").chunks_exact(3).map(|r| r[1]).collect(),
                "mixed" => output("results").chunks_exact(3).map(|r| r[2]).collect(),
                _ => output(name),
            };
            assert_eq!(&got, expected, "{what}: {name}");
        }
        let totals = on_gpu.counts.totals();
        if case.entry == "main" {
            assert!(totals.iter().all(|c| c.evaluations > 0), "every site of {what} runs: {totals:?}");
            assert!(totals.iter().any(|c| c.uniform_evaluations < c.evaluations), "{what} diverges");
        }
        ran.push(what);
    }
    assert_eq!(ran, ["histogram.wgsl main", "histogram.wgsl clear", "tiles.wgsl main", "tiles.wgsl reduce"]);
}
