//! The library in a browser's WebGPU (headless Chromium through `wasm-bindgen-test`; README,
//! "In the browser"): every variant of every shader compiles there, so the browser's WGSL
//! compiler (Tint, whose uniformity analysis is stricter than naga's) accepts them, and every
//! workload that records into an encoder runs at the tiny scale through the async path with
//! its CPU check passed in the page.
#![cfg(target_arch = "wasm32")]

use simtlab::gpu::shader::{preprocess, preprocess_text, registry, validate};
use simtlab::gpu::PreparedRun;
use simtlab::workload::{self, Scale};
use simtlab::{Gpu, GpuOptions};
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// The page's WebGPU device; a browser without WebGPU or without subgroups fails the test
/// (CI must not pass by skipping).
async fn gpu() -> Gpu {
    let gpu = Gpu::new_async(&GpuOptions::default()).await.unwrap_or_else(|e| panic!("no WebGPU device in this browser: {e}"));
    assert_eq!(gpu.info().backend, wgpu::Backend::BrowserWebGpu, "{}", gpu.adapter_name());
    let width = gpu.require_subgroups().unwrap_or_else(|e| panic!("{e}"));
    assert!(width.is_power_of_two() && (4..=128).contains(&width), "measured subgroup width {width}");
    gpu
}

#[wasm_bindgen_test]
async fn every_shader_variant_compiles_in_the_browsers_webgpu() {
    let gpu = gpu().await;
    let (mut compiled, mut failures) = (0, Vec::new());
    for entry in registry::ALL {
        let variants = entry.file.variants;
        for mask in 0..1u32 << variants.len() {
            let defines: Vec<&str> = variants.iter().enumerate().filter(|(i, _)| mask >> i & 1 == 1).map(|(_, v)| *v).collect();
            let source = preprocess(entry.file.path, &defines).unwrap_or_else(|e| panic!("{e}"));
            match validate(&source) {
                // an entry point that only some variants declare (`run_deferred` with DEFER)
                Ok((module, _)) if !module.entry_points.iter().any(|e| e.name == entry.name) => continue,
                Ok(_) => {}
                // a library under shared/ whose entry points need what the importer defines
                // (as in the native registry test)
                Err(_) if entry.file.path.starts_with("shared/") => break,
                Err(e) => panic!("{e}"),
            }
            let name = format!("{}:{} {defines:?}", entry.file.path, entry.name);
            match gpu.compile_async(&source, &name, entry.name, &[]).await {
                Ok(kernel) => {
                    assert!(kernel.workgroup_size.iter().all(|&d| d > 0), "{name}");
                    compiled += 1;
                }
                Err(e) => failures.push(format!("{name}: {e}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} variants fail in the browser:\n{}",
        failures.len(),
        compiled + failures.len(),
        failures.join("\n")
    );
    assert!(compiled >= registry::ALL.len() / 2, "only {compiled} variants compiled");
}

#[wasm_bindgen_test]
async fn every_recording_workload_passes_its_cpu_check_in_the_page() {
    let gpu = gpu().await;
    let mut families: Vec<&str> = Vec::new();
    for w in workload::registry() {
        let recording = w.prepare(&gpu, &w.params(Scale::Tiny)).unwrap_or_else(|e| panic!("{}: {e}", w.name()));
        // what the web explorer decides from before it has a GPU
        assert_eq!(w.can_prepare(), recording.is_some(), "{}: can_prepare disagrees with prepare", w.name());
        let Some(recording) = recording else { continue };
        let check = workload::run_recording_async(&gpu, recording.as_ref()).await.unwrap_or_else(|e| panic!("{}: {e}", w.name()));
        assert!(check.passed, "{}: {:?}", w.name(), check.first_mismatch);
        assert!(check.checked > 0, "{}: nothing was checked", w.name());
        if !families.contains(&w.family()) {
            families.push(w.family());
        }
    }
    // every family: the persistent-threads family through its claims queues (which never
    // wait on another workgroup), the flow shop through its bounding pools
    let mut every: Vec<&str> = workload::registry().iter().map(|w| w.family()).collect();
    every.dedup();
    assert_eq!(families, every);
}

#[wasm_bindgen_test]
async fn a_timed_run_is_timed_around_its_passes_and_its_results_match_the_cpu() {
    use simtlab::gpu::TimingSource;
    use simtlab::kernels::micro::{self, MicroConfig};
    let gpu = gpu().await;
    let cfg = MicroConfig { n: 1 << 14, ..Default::default() };
    let input = micro::generate(&cfg).unwrap();
    let prepared = micro::Prepared::new(&gpu, &cfg, &input, Default::default()).unwrap();
    let timing = gpu.run_async(&prepared.steps(), true).await.unwrap();
    // the browser has no timestamps inside passes: the queries sit at the pass boundaries
    let source = if gpu.caps().timestamps { TimingSource::DeviceTimestamps } else { TimingSource::WallClock };
    assert_eq!(timing.source, source, "{:?}", gpu.caps());
    assert!(timing.seconds > 0.0 && timing.seconds <= timing.wall_seconds, "{timing:?}");
    let results = gpu.read_async(prepared.results_buffer()).await.unwrap();
    assert_eq!(results, micro::reference(&cfg, &input));
}

/// The negative control of the shader test: a barrier after an early exit that depends on a
/// struct of builtins, which naga accepts and the browser's uniformity analysis does not,
/// fails to compile there, with the error at its own file and line.
#[wasm_bindgen_test]
async fn a_barrier_the_browser_cannot_prove_uniform_fails_at_its_file_and_line() {
    let gpu = gpu().await;
    let text = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;
struct Ids { @builtin(workgroup_id) workgroup: vec3<u32>, @builtin(local_invocation_index) local: u32 }
@compute @workgroup_size(64)
fn main(ids: Ids) {
    if (ids.workgroup.x >= 4u) {
        return;
    }
    workgroupBarrier();
    out[ids.local] = ids.workgroup.x;
}
";
    let source = preprocess_text("early_exit.wgsl", text, &[], &|_| None).unwrap();
    validate(&source).unwrap_or_else(|e| panic!("naga should accept it: {e}"));
    match gpu.compile_async(&source, "early_exit", "main", &[]).await {
        Err(simtlab::Error::Shader { file, line, message, .. }) => {
            assert_eq!((file.as_str(), line), ("early_exit.wgsl", 8), "{message}");
            assert!(message.contains("uniform control flow"), "{message}");
        }
        Err(other) => panic!("the error names no place: {other}"),
        Ok(_) => panic!("the browser accepted a barrier it cannot prove uniform"),
    }
}

/// The explorer's "Your shader" tab in a page: `profile_async` runs a user's shader plain and
/// instrumented on the browser's WebGPU without a blocking call; the GPU probe's counts on the
/// page's subgroups equal the host emulation's at that width, and the output is the CPU's.
#[wasm_bindgen_test]
async fn a_users_shader_is_profiled_in_the_page() {
    use simtlab::profile::{profile_async, BindingSpec, CountSource, ProfileRequest, ShaderDispatch};
    use std::sync::atomic::AtomicBool;
    let gpu = gpu().await;
    let wgsl = include_str!("fixtures/profile/collatz.wgsl");
    let bindings = vec![("values".into(), BindingSpec::U32Random(300, 4)), ("steps".into(), BindingSpec::U32Zero(300))];
    let shader = ShaderDispatch { bindings, ..ShaderDispatch::new("collatz.wgsl", wgsl, "main", [5, 1, 1]) };
    let request = ProfileRequest { trace_events: 1024, samples: 2, ..ProfileRequest::new(shader) };
    let never = AtomicBool::new(false);
    let mut steps = Vec::new();
    let on_gpu = profile_async(&gpu, &request, &never, &mut |s| steps.push(s.done)).await.unwrap_or_else(|e| panic!("{e}"));
    let emulated = profile_async(&gpu, &ProfileRequest { emulate: true, ..request.clone() }, &never, &mut |_| ()).await.unwrap();
    assert_eq!(steps, [0, 1, 2, 3], "every step reported");
    assert_eq!((on_gpu.summary.source, emulated.summary.source), (CountSource::GpuProbe, CountSource::HostEmulation));
    assert_eq!(on_gpu.counts.width, gpu.caps().subgroup_size.unwrap());
    assert_eq!(emulated.counts.per_subgroup, on_gpu.counts.per_subgroup);
    assert!(on_gpu.outputs_identical && emulated.outputs_identical);
    // steps[i] is the Collatz step count of values[i] % 1000 + 1
    let words = |b: &[u8]| bytemuck::cast_slice::<u8, u32>(b).to_vec();
    let (values, steps) = (words(&on_gpu.outputs[0].1), words(&on_gpu.outputs[1].1));
    let collatz = |v: u32| {
        let (mut n, mut k) = (v % 1000 + 1, 0);
        while n != 1 {
            n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
            k += 1;
        }
        k
    };
    assert!(values.iter().any(|&v| v % 1000 > 10), "random inputs");
    assert_eq!(steps, values.iter().map(|&v| collatz(v)).collect::<Vec<_>>());
    let totals = on_gpu.counts.totals();
    assert!(totals.iter().any(|c| c.uniform_evaluations < c.evaluations), "collatz diverges: {totals:?}");
}

/// A user's shader remapped in the page (`remap_run_async`, what the explorer's Remap awaits),
/// its index built on the GPU: outputs identical, SIMT efficiency after at least 0.8, and the
/// index the host's stable counting sort of the same classes.
#[wasm_bindgen_test]
async fn a_users_shader_is_remapped_in_the_page_with_the_index_built_on_the_gpu() {
    use simtlab::profile::{BindingSpec, ShaderDispatch};
    use simtlab::remap::{redirect_index_of, remap_run_async, RemapRequest, Strategy};
    use std::sync::atomic::AtomicBool;
    let gpu = gpu().await;
    let wgsl = include_str!("fixtures/remap/newton_tolerance.wgsl");
    let bindings = vec![
        ("values".into(), BindingSpec::F32Random(2048, 13)),
        ("roots".into(), BindingSpec::F32Zero(2048)),
        ("work".into(), BindingSpec::U32Zero(1)),
    ];
    let request = RemapRequest {
        shader: ShaderDispatch { bindings, ..ShaderDispatch::new("newton_tolerance.wgsl", wgsl, "main", [32, 1, 1]) },
        key: None,
        strategy: Strategy::GpuRegroup,
        width: None,
        samples: 1,
        slot: None,
        dispatches: 1,
        calibration: None,
    };
    let run = remap_run_async(&gpu, &request, &AtomicBool::new(false), &mut |_| ()).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run.strategy, Strategy::GpuRegroup);
    assert!(run.outputs_identical && run.after.simt_efficiency >= 0.8, "{} -> {}", run.before.simt_efficiency, run.after.simt_efficiency);
    assert_eq!(run.index, redirect_index_of(&run.class_ids, run.classes).unwrap());
}

/// The explorer's heat maps in a page: the registry's async per-warp count of micro-loop at the
/// tiny scale (what the page's run path awaits), by the GPU probe on the page's subgroups,
/// equals host emulation at the adapter's width, as laid out and with threads sorted by trip
/// count; asked for emulation, it emulates at the width given.
#[wasm_bindgen_test]
async fn micro_loops_async_heat_maps_equal_host_emulation_in_the_page() {
    use simtlab::kernels::micro::{self, MicroConfig};
    use simtlab::workload::Counting;
    let gpu = gpu().await;
    let width = gpu.caps().subgroup_size.unwrap();
    let w = workload::find("micro-loop").unwrap();
    let params = w.params(Scale::Tiny);
    let cfg: MicroConfig = serde_json::from_value(params.clone()).unwrap();
    let input = micro::generate(&cfg).unwrap();
    let mut sorted: Vec<u32> = (0..cfg.n as u32).collect();
    sorted.sort_by_key(|&i| input.primary[i as usize]);
    for (counting, at) in [(Counting::Probe(32), width), (Counting::Emulate(32), 32)] {
        let maps = w.warps_async(&gpu, &params, counting).await.unwrap_or_else(|e| panic!("{counting:?}: {e}"));
        let layouts: Vec<&str> = maps.iter().map(|m| m.layout.as_str()).collect();
        assert_eq!(layouts, ["as laid out", "threads sorted by trip count"], "{counting:?}");
        for (map, order) in maps.iter().zip([None, Some(sorted.as_slice())]) {
            let source = match counting {
                Counting::Probe(_) => format!("GPU probe, subgroup width {at}"),
                Counting::Emulate(_) => format!("host emulation, W = {at}"),
            };
            assert_eq!(map.source, source);
            let (d, e) = (&map.divergence, micro::emulate(&cfg, &input, order, at).unwrap());
            let what = format!("{counting:?}, {}", map.layout);
            assert_eq!((d.width, d.warps, d.divergent_warps), (e.width, e.warps, e.divergent_warps), "{what}");
            assert_eq!(d.sites, e.sites, "{what}");
            assert_eq!(d.per_warp_divergent, e.per_warp_divergent, "{what}");
            assert_eq!(d.warps as usize, cfg.n.div_ceil(at as usize), "{what}");
        }
        // one long lane per 32 threads: every warp that holds one diverges until they are sorted
        assert!(maps[0].divergence.divergent_warps > maps[1].divergence.divergent_warps, "{counting:?}");
    }
}

/// The plots a page downloads (the explorer's PNG button): drawn and encoded in the browser,
/// with the embedded font, as on the desktop: an 800×500 PNG with the series' colours in it.
/// The drawing is the `report` feature's (the CI runs this file with it).
#[cfg(feature = "report")]
#[wasm_bindgen_test]
async fn a_plot_is_drawn_as_a_png_in_the_page() {
    use simtlab::report::{png_bytes, Figure, Series};
    let figure = Figure {
        id: "time".into(),
        title: "time vs n".into(),
        x_label: "n".into(),
        y_label: "ms".into(),
        series: vec![Series { name: "data_loop".into(), points: vec![(1.0, 2.0), (2.0, 3.5), (4.0, 3.0)], spread: Vec::new() }],
        ..Default::default()
    };
    let bytes = png_bytes(&figure).unwrap_or_else(|e| panic!("{e}"));
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((frame.width, frame.height, frame.color_type), (800, 500, png::ColorType::Rgb));
    let rgb: Vec<&[u8]> = pixels[..frame.buffer_size()].chunks(3).collect();
    // the first series' colour (31, 119, 180) draws the line, and black draws the axes and text
    let blue = rgb.iter().filter(|p| **p == [31, 119, 180]).count();
    let black = rgb.iter().filter(|p| **p == [0, 0, 0]).count();
    assert!(blue > 500 && black > 500, "{blue} line pixels, {black} axis and text pixels");
    // the caption, lettered by the browser, is all there is above the plot area
    let caption = rgb[..800 * 34].iter().filter(|p| **p != [255, 255, 255]).count();
    assert!(caption > 100, "{caption} caption pixels: the title was not drawn");
}
