//! Real-world shaders nobody here wrote: every compute entry point of Vello's shaders
//! (tests/fixtures/vello, vendored with attribution) instruments, validates and builds a
//! pipeline; those that bind only buffers run on synthetic inputs with identical outputs.

mod common;

use simtlab::gpu::shader::{preprocess_text, ShaderSource};
use simtlab::profile::{self, instrument, BindingSpec, Counting, InstrumentOptions, ProfileRequest};

fn vello_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vello")
}

/// Every Vello shader preprocessed with `defines` (its `#import`s from `shared/`).
fn vello_shaders(defines: &[&str]) -> Vec<(String, ShaderSource)> {
    let mut files: Vec<_> = std::fs::read_dir(vello_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "wgsl"))
        .collect();
    files.sort();
    let import = |name: &str| -> Option<&'static str> {
        std::fs::read_to_string(vello_dir().join(format!("shared/{name}.wgsl"))).ok().map(|t| &*Box::leak(t.into_boxed_str()))
    };
    files
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            // Vello's preprocessor allows a comment after a directive (`#endif // msaa`)
            let text: String = std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .map(|l| if l.trim_start().starts_with('#') { l.split("//").next().unwrap_or(l).trim_end() } else { l })
                .map(|l| format!("{l}\n"))
                .collect();
            let source = preprocess_text(&name, &text, defines, &import).unwrap_or_else(|e| panic!("{e}"));
            (name, source)
        })
        .collect()
}

#[test]
fn every_vello_compute_shader_instruments_validates_and_builds() {
    let gpu = common::gpu();
    let counting = if gpu.caps().subgroups { Counting::Subgroups } else { Counting::Trace { events: 64 } };
    let mut entries = 0;
    let mut sites = 0;
    for defines in [&[][..], &["full"][..]] {
        for (name, source) in vello_shaders(defines) {
            let (module, _) = profile::parse(&name, &source.text).unwrap();
            for ep in module.entry_points.iter().filter(|e| e.stage == naga::ShaderStage::Compute) {
                let probed = instrument(&name, &source.text, &ep.name, &InstrumentOptions { counting, ..Default::default() })
                    .unwrap_or_else(|e| panic!("{name} {defines:?} {}: {e}", ep.name));
                assert!(!probed.sites.is_empty(), "{name}");
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
                entries += 1;
                sites += probed.sites.len();
            }
        }
    }
    eprintln!("{entries} Vello entry points, {sites} sites");
    assert!(entries >= 38, "{entries}");
}

#[test]
fn vello_shaders_that_bind_only_buffers_give_the_same_outputs_instrumented() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let mut ran = Vec::new();
    for (name, source) in vello_shaders(&[]) {
        // random curves make flatten's subdivision loops run without end
        if name == "flatten.wgsl" {
            continue;
        }
        let (module, info) = profile::parse(&name, &source.text).unwrap();
        let Ok(bindings) = profile::entry_bindings(&source.text, &module, &info, "main") else { continue };
        // the configuration zero (every offset and count 0), everything else random
        let specs = bindings
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let words = (b.min_bytes as usize / 4).max(1) * 4096;
                let spec = if b.uniform {
                    BindingSpec::Bytes(vec![0; b.min_bytes as usize])
                } else if b.scalars == [naga::Scalar::F32] {
                    BindingSpec::F32Random(words, i as u64 + 1)
                } else {
                    BindingSpec::U32Random(words, i as u64 + 1)
                };
                (b.name.clone(), spec)
            })
            .collect();
        let request = ProfileRequest {
            file: &name,
            wgsl: &source.text,
            entry: "main",
            workgroups: [2, 1, 1],
            bindings: specs,
            width: None,
            emulate: false,
            trace_events: 1024,
            slot: None,
            samples: 1,
        };
        match profile::profile(&gpu, &request) {
            Ok(run) => {
                eprintln!("{name}: {} sites, outputs identical: {}", run.sites.len(), run.outputs_identical);
                ran.push((name, run.outputs_identical));
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }
    assert!(ran.len() >= 15, "{ran:?}");
    assert!(ran.iter().all(|r| r.1), "{ran:?}");
}
