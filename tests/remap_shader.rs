//! Remapping a user's shader without editing it (`simtlab remap`, `remap::remap_run`): three
//! divergent kernels written for these tests regroup to a SIMT efficiency of at least 0.8 with
//! byte-identical outputs (checked against host references too), a kernel without divergence
//! is left as written by `auto`, and shaders whose results depend on lanes are refused at the
//! construct's line before any GPU work.

mod common;

use simtlab::profile::BindingSpec;
use simtlab::remap::{remap_run, RemapRequest, RemapRun, Strategy};
use simtlab::{Error, Gpu};

const N: usize = 4096;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/fixtures/remap/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn request<'a>(file: &'a str, wgsl: &'a str, input: BindingSpec, output: BindingSpec, strategy: Strategy) -> RemapRequest<'a> {
    RemapRequest {
        file,
        wgsl,
        entry: "main",
        workgroups: [(N / 64) as u32, 1, 1],
        // work[0] = 1: the loops as long as the data makes them
        bindings: vec![("0".into(), input), ("1".into(), output), ("2".into(), BindingSpec::Bytes(1u32.to_le_bytes().to_vec()))],
        key: None,
        strategy,
        width: None,
        samples: 1,
        slot: None,
        dispatches: 1,
    }
}

/// The final contents of the binding at group 0 `binding`, as the shader written left them.
fn output_words(run: &RemapRun, binding: u32) -> Vec<u32> {
    let (_, bytes) = run.runs.0.outputs.iter().find(|(b, _)| b.group == 0 && b.binding == binding).unwrap();
    bytemuck::pod_collect_to_vec(bytes)
}

fn remapped(gpu: &Gpu, name: &str, input: BindingSpec, output: BindingSpec) -> RemapRun {
    let wgsl = fixture(name);
    let run = remap_run(gpu, &request(name, &wgsl, input, output, Strategy::Redirect)).unwrap_or_else(|e| panic!("{name}: {e}"));
    eprintln!(
        "{name}: SIMT efficiency {:.3} -> {:.3}, {} classes, {}",
        run.before.simt_efficiency, run.after.simt_efficiency, run.classes, run.reason
    );
    assert!(run.outputs_identical, "{name}: outputs differ");
    assert_eq!(run.strategy, Strategy::Redirect, "{name}");
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
    req.bindings[0].1 = BindingSpec::Bytes(bytemuck::cast_slice(&rng_words[..100]).to_vec());
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
        let req = RemapRequest {
            bindings: vec![("v".into(), BindingSpec::U32Zero(64))],
            workgroups: [1, 1, 1],
            ..request("bad.wgsl", wgsl, BindingSpec::U32Zero(1), BindingSpec::U32Zero(1), Strategy::Auto)
        };
        match remap_run(&gpu, &req) {
            Err(Error::Shader { file, line: at, message, .. }) => {
                assert_eq!((file.as_str(), at), ("bad.wgsl", line), "{message}");
                assert!(message.contains(expected) && message.contains("independent") || message.contains("do not depend"), "{message}");
            }
            other => panic!("{expected}: {other:?}"),
        }
    }
}
