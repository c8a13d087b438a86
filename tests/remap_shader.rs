//! Remapping a user's shader without editing it (`simtlab remap`, `remap::remap_run`): three
//! divergent kernels written for these tests regroup to a SIMT efficiency of at least 0.8 with
//! byte-identical outputs (checked against host references too), a kernel without divergence
//! is left as written by `auto`, and shaders whose results depend on lanes are refused at the
//! construct's line before any GPU work.

mod common;

use simtlab::profile::{BindingSpec, ShaderDispatch};
use simtlab::remap::{redirect_index_of, remap_run, Calibration, RemapRequest, RemapRun, Strategy};
use simtlab::{Error, Gpu};

const N: usize = 4096;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/fixtures/remap/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn request<'a>(file: &'a str, wgsl: &'a str, input: BindingSpec, output: BindingSpec, strategy: Strategy) -> RemapRequest<'a> {
    // work[0] = 1: the loops as long as the data makes them
    let bindings = vec![("0".into(), input), ("1".into(), output), ("2".into(), BindingSpec::Bytes(1u32.to_le_bytes().to_vec()))];
    RemapRequest {
        shader: ShaderDispatch { bindings, ..ShaderDispatch::new(file, wgsl, "main", [(N / 64) as u32, 1, 1]) },
        key: None,
        strategy,
        width: None,
        samples: 1,
        slot: None,
        dispatches: 1,
        calibration: None,
    }
}

/// The final contents of the binding at group 0 `binding`, as the shader written left them.
fn output_words(run: &RemapRun, binding: u32) -> Vec<u32> {
    let (_, bytes) = run.runs.0.outputs.iter().find(|(b, _)| b.group == 0 && b.binding == binding).unwrap();
    bytemuck::pod_collect_to_vec(bytes)
}

fn remapped(gpu: &Gpu, name: &str, input: BindingSpec, output: BindingSpec) -> RemapRun {
    remapped_with(gpu, name, input, output, Strategy::Redirect)
}

fn remapped_with(gpu: &Gpu, name: &str, input: BindingSpec, output: BindingSpec, strategy: Strategy) -> RemapRun {
    let wgsl = fixture(name);
    let run = remap_run(gpu, &request(name, &wgsl, input, output, strategy)).unwrap_or_else(|e| panic!("{name}: {e}"));
    eprintln!(
        "{name} ({strategy}): SIMT efficiency {:.3} -> {:.3}, {} classes, index {:.3} ms, {}",
        run.before.simt_efficiency,
        run.after.simt_efficiency,
        run.classes,
        run.index_seconds * 1e3,
        run.reason
    );
    assert!(run.outputs_identical, "{name}: outputs differ");
    assert_eq!(run.strategy, strategy, "{name}");
    assert!(run.after.simt_efficiency >= 0.8, "{name}: {} after", run.after.simt_efficiency);
    assert!(run.before.simt_efficiency < run.after.simt_efficiency - 0.1, "{name}: {} before", run.before.simt_efficiency);
    // the index is a permutation: every element ran exactly once
    let mut seen = run.index.clone();
    seen.sort_unstable();
    assert_eq!(seen, (0..N as u32).collect::<Vec<_>>(), "{name}");
    run
}

fn scattered(i: u32, trips: u32) -> u32 {
    let mut x = i.wrapping_mul(2654435761).wrapping_add(1);
    for _ in 0..trips % 64 {
        x = x.wrapping_mul(1664525).wrapping_add(1013904223);
        x ^= x >> 13;
    }
    x
}

fn scramble(seed: u32, rounds: u32) -> u32 {
    (0..rounds).fold(seed, |x, _| (x ^ (x >> 16)).wrapping_mul(73244475))
}

#[test]
fn three_divergent_kernels_regroup_with_identical_outputs() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let trips = BindingSpec::U32Random(N, 11);
    let run = remapped(&gpu, "scattered_loop.wgsl", trips.clone(), BindingSpec::U32Zero(N));
    let inputs: Vec<u32> = bytemuck::pod_collect_to_vec(&trips.bytes().unwrap());
    let expected: Vec<u32> = (0..N as u32).map(|i| scattered(i, inputs[i as usize])).collect();
    assert_eq!(output_words(&run, 1), expected);

    let kinds = BindingSpec::U32Random(N, 12);
    let run = remapped(&gpu, "kinds_switch.wgsl", kinds.clone(), BindingSpec::U32Zero(N));
    let inputs: Vec<u32> = bytemuck::pod_collect_to_vec(&kinds.bytes().unwrap());
    let expected: Vec<u32> = (0..N as u32)
        .map(|i| match inputs[i as usize] % 4 {
            0 => scramble(i, 4),
            1 => scramble(i + 7, 20).wrapping_add(1),
            2 => scramble(i * 3, 60) ^ 5,
            _ => i,
        })
        .collect();
    assert_eq!(output_words(&run, 1), expected);

    let values = BindingSpec::F32Random(N, 13);
    let run = remapped(&gpu, "newton_tolerance.wgsl", values.clone(), BindingSpec::F32Zero(N));
    let inputs: Vec<f32> = bytemuck::pod_collect_to_vec(&values.bytes().unwrap());
    for (i, root) in output_words(&run, 1).into_iter().map(f32::from_bits).enumerate() {
        let exact = (48.0 * f64::from(inputs[i])).exp2().sqrt();
        assert!((f64::from(root) - exact).abs() <= 1e-5 * exact, "element {i}: {root} for {exact}");
    }
}

#[test]
fn the_gpu_strategy_builds_the_index_on_the_gpu() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    for (name, input, output) in [
        ("scattered_loop.wgsl", BindingSpec::U32Random(N, 11), BindingSpec::U32Zero(N)),
        ("kinds_switch.wgsl", BindingSpec::U32Random(N, 12), BindingSpec::U32Zero(N)),
        ("newton_tolerance.wgsl", BindingSpec::F32Random(N, 13), BindingSpec::F32Zero(N)),
    ] {
        let run = remapped_with(&gpu, name, input.clone(), output.clone(), Strategy::GpuRegroup);
        // the GPU's index groups equal keys: classes never go down along it, and it is the
        // host's stable counting sort of the same classes, element for element
        assert_eq!(run.class_ids.len(), N, "{name}");
        let along: Vec<u32> = run.index.iter().map(|&e| run.class_ids[e as usize]).collect();
        assert!(along.windows(2).all(|w| w[0] <= w[1]), "{name}: the GPU index does not group equal keys");
        assert_eq!(run.index, redirect_index_of(&run.class_ids, run.classes).unwrap(), "{name}");
        assert!(run.index_seconds > 0.0 && run.classes_seconds > 0.0, "{name}");
        assert!(run.reason.contains("(GPU)"), "{name}: {}", run.reason);
        // the same outputs as the host's index gives
        let host = remapped(&gpu, name, input, output);
        assert_eq!(host.runs.1.as_ref().unwrap().outputs, run.runs.1.as_ref().unwrap().outputs, "{name}");
    }
}

#[test]
fn auto_takes_the_gpu_index_where_the_model_prefers_it() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let wgsl = fixture("kinds_switch.wgsl");
    let mut req = request("kinds_switch.wgsl", &wgsl, BindingSpec::U32Random(N, 12), BindingSpec::U32Zero(N), Strategy::Auto);
    req.dispatches = 1000;
    let run = remap_run(&gpu, &req).unwrap();
    // the model weighs the GPU's regroup against the host's counting sort: the GPU's costs less
    assert_eq!(run.decision.strategy, Strategy::GpuRegroup, "{}", run.decision.reason);
    assert!(run.decision.reason.contains("Also considered: ") && run.decision.reason.contains("redirect"), "{}", run.decision.reason);
    assert!(run.outputs_identical);
    // what runs is the GPU's index, unless it measured slower end to end (then as written)
    match run.strategy {
        Strategy::GpuRegroup => assert!(run.speedup >= 1.0 && run.index_seconds > 0.0, "{}", run.reason),
        Strategy::None => assert!(run.reason.contains("measured slower"), "{}", run.reason),
        other => panic!("{other}: {}", run.reason),
    }
}

#[test]
fn what_the_adapter_measured_turns_the_next_decision() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let wgsl = fixture("kinds_switch.wgsl");
    let mut req = request("kinds_switch.wgsl", &wgsl, BindingSpec::U32Random(N, 12), BindingSpec::U32Zero(N), Strategy::Auto);
    req.dispatches = 1000;
    let first = remap_run(&gpu, &req).unwrap();
    assert_eq!(first.decision.strategy, Strategy::GpuRegroup, "{}", first.decision.reason);
    // the run learned from its own measurement of the GPU index
    assert_eq!(first.lessons.len(), 1, "{}", first.reason);
    assert_eq!(first.lessons[0].strategy, Strategy::GpuRegroup);
    assert!(first.lessons[0].to_string().starts_with("gpu: predicted "), "{}", first.lessons[0]);
    assert_eq!(
        (first.calibration.adapter.as_str(), first.calibration.get(Strategy::GpuRegroup).unwrap().runs),
        (gpu.adapter_name().as_str(), 1)
    );

    // on this adapter the GPU index measured slower than the shader as written, the host's
    // index twice as fast: the same keys now get the host's index, and the reason says why
    let mut calibration = Calibration::new(&gpu.adapter_name());
    let lessons = calibration.learn(&first.decision, 1.0, &[(Strategy::GpuRegroup, 1.5), (Strategy::Redirect, 0.5)]).unwrap();
    assert!(lessons[0].predicted_s > 0.0 && lessons[0].model_now_s < 0.0, "{:?}", lessons[0]);
    req.calibration = Some(&calibration);
    let next = remap_run(&gpu, &req).unwrap();
    assert_eq!(next.decision.strategy, Strategy::Redirect, "{}", next.decision.reason);
    assert!(
        next.decision.reason.starts_with("redirect: ") && next.decision.reason.contains("measured on this adapter at "),
        "{}",
        next.decision.reason
    );
    assert!(next.decision.reason.contains("gpu: ") && next.decision.reason.contains("(1 run), so net -"), "{}", next.decision.reason);
    assert_eq!(next.calibration.get(Strategy::Redirect).unwrap().runs, 2, "the host index's own measurement is learned too");

    // a calibration of another adapter is refused before any GPU work
    let other = Calibration { adapter: "another adapter".into(), ..calibration.clone() };
    req.calibration = Some(&other);
    let e = remap_run(&gpu, &req).unwrap_err().to_string();
    assert!(e.contains("calibration") && e.contains("another adapter"), "{e}");
}

#[test]
fn auto_leaves_a_kernel_without_divergence_as_written_and_says_why() {
    let gpu = common::gpu();
    let wgsl = fixture("uniform_scale.wgsl");
    let run = remap_run(&gpu, &request("uniform_scale.wgsl", &wgsl, BindingSpec::U32Random(N, 3), BindingSpec::U32Zero(N), Strategy::Auto))
        .unwrap();
    assert_eq!(run.strategy, Strategy::None);
    assert!(run.reason.contains("runs as written") && run.reason.contains("none of its 512 subgroups diverges"), "{}", run.reason);
    // the kernel that runs is the shader as written, decided from the profile alone: no key
    // pass, no index
    assert!(run.index.is_empty() && run.runs.1.is_none() && run.after.seconds == run.before.seconds);
    assert_eq!((run.key.as_str(), run.key_seconds, run.index_seconds, run.speedup), ("none needed", 0.0, 0.0, 1.0));
    let values: Vec<u32> = bytemuck::pod_collect_to_vec(&BindingSpec::U32Random(N, 3).bytes().unwrap());
    assert_eq!(output_words(&run, 1), values.iter().map(|v| v.wrapping_mul(3).wrapping_add(1)).collect::<Vec<_>>());
}

#[test]
fn a_key_binding_orders_the_invocations() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let wgsl = fixture("kinds_switch.wgsl");
    // the kinds themselves (0..4) are the keys: four classes, one per case
    let mut rng_words: Vec<u32> = bytemuck::pod_collect_to_vec(&BindingSpec::U32Random(N, 21).bytes().unwrap());
    rng_words.iter_mut().for_each(|k| *k %= 4);
    let kinds = BindingSpec::Bytes(bytemuck::cast_slice(&rng_words).to_vec());
    let mut req = request("kinds_switch.wgsl", &wgsl, kinds, BindingSpec::U32Zero(N), Strategy::Redirect);
    req.key = Some("0".into());
    let run = remap_run(&gpu, &req).unwrap();
    assert_eq!((run.key.as_str(), run.classes), ("binding 0", 4));
    assert!(run.outputs_identical && run.after.simt_efficiency >= 0.8, "{}", run.after.simt_efficiency);
    let ordered: Vec<u32> = run.index.iter().map(|&e| rng_words[e as usize]).collect();
    assert!(ordered.windows(2).all(|w| w[0] <= w[1]), "the index does not sort by key");
    // a key binding shorter than the dispatch is refused
    req.shader.bindings[0].1 = BindingSpec::Bytes(bytemuck::cast_slice(&rng_words[..100]).to_vec());
    let err = remap_run(&gpu, &req).unwrap_err().to_string();
    assert!(err.contains("100 u32 values for 4096 invocations"), "{err}");
}

#[test]
fn lane_dependent_shaders_are_refused_at_their_line_before_the_gpu_runs() {
    let gpu = common::gpu();
    for (wgsl, line, expected) in [
        (
            "var<workgroup> tile: array<u32, 64>;\n@group(0) @binding(0) var<storage, read_write> v: array<u32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n    tile[g.x % 64u] = v[g.x];\n    workgroupBarrier();\n    v[g.x] = tile[63u - g.x % 64u];\n}\n",
            1,
            "workgroup variable",
        ),
        (
            "@group(0) @binding(0) var<storage, read_write> v: array<u32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n    v[g.x] = subgroupAdd(v[g.x]);\n}\n",
            4,
            "subgroup operation",
        ),
        (
            "@group(0) @binding(0) var<storage, read_write> v: array<u32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {\n    v[g.x] = l.x;\n}\n",
            4,
            "local_invocation_id",
        ),
    ] {
        let mut req = request("bad.wgsl", wgsl, BindingSpec::U32Zero(1), BindingSpec::U32Zero(1), Strategy::Auto);
        req.shader.bindings = vec![("v".into(), BindingSpec::U32Zero(64))];
        req.shader.workgroups = [1, 1, 1];
        match remap_run(&gpu, &req) {
            Err(Error::Shader { file, line: at, message, .. }) => {
                assert_eq!((file.as_str(), at), ("bad.wgsl", line), "{message}");
                assert!(message.contains(expected) && message.contains("independent") || message.contains("do not depend"), "{message}");
            }
            other => panic!("{expected}: {other:?}"),
        }
    }
}

#[test]
fn overrides_reach_every_run_and_the_workgroup_size_follows_them() {
    let Some((gpu, _)) = common::gpu_with_subgroups() else { return };
    let wgsl = fixture("override_loop.wgsl");
    let trips = BindingSpec::U32Random(N, 31);
    let bindings = vec![("trips".into(), trips.clone()), ("mixed".into(), BindingSpec::U32Zero(N))];
    let mut req = RemapRequest {
        shader: ShaderDispatch { bindings, ..ShaderDispatch::new("override_loop.wgsl", &wgsl, "main", [(N / 32) as u32, 1, 1]) },
        ..request("override_loop.wgsl", &wgsl, BindingSpec::U32Zero(1), BindingSpec::U32Zero(1), Strategy::Redirect)
    };
    req.shader.overrides = vec![("block".into(), 32.0), ("multiplier".into(), 69069.0)];
    let run = remap_run(&gpu, &req).unwrap();
    eprintln!("override_loop.wgsl: SIMT efficiency {:.3} -> {:.3}", run.before.simt_efficiency, run.after.simt_efficiency);
    // block = 32: the remapped shader linearises ids over workgroups of 32, all runs use it
    assert_eq!(run.remapped.workgroup_size, [32, 1, 1]);
    assert_eq!(run.runs.0.workgroup_size, [32, 1, 1]);
    assert_eq!(run.runs.1.as_ref().unwrap().workgroup_size, [32, 1, 1]);
    assert_eq!(run.runs.0.overrides, req.shader.overrides);
    assert!(run.outputs_identical && run.after.simt_efficiency >= 0.8, "{}", run.after.simt_efficiency);
    // multiplier = 69069 in effect, in the shader as written and remapped alike
    let inputs: Vec<u32> = bytemuck::pod_collect_to_vec(&trips.bytes().unwrap());
    let expected: Vec<u32> = (0..N as u32)
        .map(|i| {
            let mut x = i.wrapping_mul(2654435761).wrapping_add(1);
            for _ in 0..inputs[i as usize] % 64 {
                x = x.wrapping_mul(69069).wrapping_add(1013904223);
                x ^= x >> 13;
            }
            x
        })
        .collect();
    assert_eq!(output_words(&run, 1), expected);
    let (_, remapped) = run.runs.1.as_ref().unwrap().outputs.iter().find(|(b, _)| b.binding == 1).unwrap();
    assert_eq!(bytemuck::pod_collect_to_vec::<u8, u32>(remapped), expected);
    // an override without a default must be given
    req.shader.overrides.truncate(1);
    let e = remap_run(&gpu, &req).unwrap_err().to_string();
    assert!(e.contains("override multiplier") && e.contains("multiplier=VALUE"), "{e}");
}
