//! Properties of the remap module on random inputs, and validation of its WGSL.

use std::collections::HashSet;
use std::time::Duration;

use proptest::prelude::*;

use super::Strategy;
use super::*;
use crate::divergence::emulate_loops;
use proptest::strategy::Strategy as _;

/// Class ids in 0..r: uniform noise, or runs of one class with noise (so segments have a
/// dominant class, as real data often does).
fn class_array() -> impl proptest::strategy::Strategy<Value = (Vec<u32>, usize)> {
    (1usize..12).prop_flat_map(|r| {
        let noise = prop::collection::vec(0..r as u32, 0..700);
        let runs = (prop::collection::vec((0..r as u32, 1usize..80), 0..20), prop::collection::vec(0..r as u32, 0..40)).prop_map(
            |(runs, noise)| {
                let mut ids: Vec<u32> = runs.iter().flat_map(|&(c, len)| std::iter::repeat_n(c, len)).collect();
                // sprinkle foreign elements over the runs
                for (k, &c) in noise.iter().enumerate() {
                    if !ids.is_empty() {
                        let at = (k * 7919) % ids.len();
                        ids[at] = c;
                    }
                }
                ids
            },
        );
        prop_oneof![noise, runs].prop_map(move |ids| (ids, r))
    })
}

fn width() -> impl proptest::strategy::Strategy<Value = u32> {
    prop_oneof![Just(1u32), Just(2), Just(3), Just(4), Just(8), Just(32), Just(64)]
}

fn is_permutation(p: &[u32]) -> bool {
    let mut seen = vec![false; p.len()];
    p.iter().all(|&d| match seen.get_mut(d as usize) {
        Some(s) if !*s => {
            *s = true;
            true
        }
        _ => false,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn lam_is_a_permutation_with_pure_warps_and_exact_quotas((ids, r) in class_array(), w in width()) {
        let plan = LamPlan::from_ids(&ids, r, w).unwrap();
        let wu = w as usize;
        prop_assert!(is_permutation(plan.destination()));
        prop_assert_eq!(plan.labels().len(), ids.len().div_ceil(wu));
        prop_assert_eq!(plan.moved(), plan.destination().iter().enumerate().filter(|(i, &d)| d as usize != *i).count());

        let data: Vec<u64> = (0..ids.len() as u64).map(|i| i * 31 + 7).collect();
        prop_assert_eq!(plan.restore(&plan.permute(&data).unwrap()).unwrap(), data);

        let after = plan.permute(&ids).unwrap();
        for (s, label) in plan.labels().iter().enumerate() {
            let segment = &after[s * wu..ids.len().min((s + 1) * wu)];
            if let Label::Pure(c) = *label {
                prop_assert_eq!(segment.len(), wu);
                prop_assert!(segment.iter().all(|&x| x == c), "segment {} labelled {} holds {:?}", s, c, segment);
                // elements already in place stay
                for (i, &id) in ids.iter().enumerate().skip(s * wu).take(wu) {
                    if id == c {
                        prop_assert_eq!(plan.destination()[i] as usize, i);
                    }
                }
            }
        }
        if ids.len() % wu != 0 {
            prop_assert_eq!(plan.labels().last(), Some(&Label::Mixed));
        }
        let mut sizes = vec![0usize; r];
        ids.iter().for_each(|&c| sizes[c as usize] += 1);
        let quotas: Vec<usize> = sizes.iter().map(|&n| n / wu).collect();
        prop_assert_eq!(plan.pure_warps(r), quotas);
    }

    #[test]
    fn redirect_is_a_stable_sort_by_class_and_matches_the_gpu_regroup((ids, r) in class_array(), wg in 1u32..=256) {
        let index = redirect_index_of(&ids, r).unwrap();
        prop_assert!(is_permutation(&index));
        let sorted = gather(&ids, &index).unwrap();
        prop_assert!(sorted.windows(2).all(|p| p[0] <= p[1]));
        prop_assert!(index.windows(2).all(|p| ids[p[0] as usize] != ids[p[1] as usize] || p[0] < p[1]), "stable");
        let inv = inverse(&index).unwrap();
        prop_assert!(index.iter().enumerate().all(|(i, &d)| inv[d as usize] as usize == i));
        prop_assert_eq!(gpu_regroup_reference(&ids, r as u32, wg).unwrap(), index);
    }

    #[test]
    fn remaps_never_add_divergence_for_exact_loop_classes(
        values in prop::collection::vec(0u32..1000, 1..10),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..700),
        w in width(),
    ) {
        let trips: Vec<u32> = picks.iter().map(|p| values[p.index(values.len())]).collect();
        let classes = classify_loops(&trips, 10, Bucketing::Quantile).unwrap();
        let distinct = trips.iter().collect::<HashSet<_>>().len();
        prop_assert_eq!(classes.count(), distinct, "at most 10 distinct trip counts give exact classes");

        let before = emulate_loops(&trips, w).unwrap().divergent_warps;
        let lam = LamPlan::new(&classes, w).unwrap();
        let after_lam = emulate_loops(&lam.permute(&trips).unwrap(), w).unwrap().divergent_warps;
        prop_assert!(after_lam <= before, "LAM {} > original {}", after_lam, before);
        // the sorted order diverges only in warps straddling a class boundary
        let sorted = gather(&trips, &redirect_index(&classes)).unwrap();
        let after_redirect = emulate_loops(&sorted, w).unwrap().divergent_warps;
        prop_assert!(after_redirect <= distinct.saturating_sub(1) as u64);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn loop_classes_are_ascending_ranges_that_hold_their_elements(
        trips in prop::collection::vec(prop_oneof![0u32..50, 0u32..5000, any::<u32>()], 1..600),
        r in 1usize..20,
        quantile in any::<bool>(),
    ) {
        let bucketing = if quantile { Bucketing::Quantile } else { Bucketing::EqualWidth };
        let classes = classify_loops(&trips, r, bucketing).unwrap();
        prop_assert!(classes.count() <= r && classes.count() >= 1);
        prop_assert_eq!(classes.sizes().iter().sum::<usize>(), trips.len());
        prop_assert!(classes.sizes().iter().all(|&s| s > 0));
        let ranges: Vec<(u32, u32)> = classes.keys().iter().map(|k| match *k {
            ClassKey::Trips { lo, hi } => (lo, hi),
            _ => (1, 0),
        }).collect();
        prop_assert!(ranges.iter().all(|&(lo, hi)| lo <= hi));
        prop_assert!(ranges.windows(2).all(|w| w[0].1 < w[1].0), "ascending, disjoint: {:?}", ranges);
        for (&t, &id) in trips.iter().zip(classes.ids()) {
            let (lo, hi) = ranges[id as usize];
            prop_assert!(lo <= t && t <= hi, "{} outside class {} = {}..={}", t, id, lo, hi);
        }
    }

    #[test]
    fn path_classes_are_exact_when_few_and_merge_into_nearest_seeds(
        paths in prop::collection::vec(0u32..64, 1..400),
        r in 1usize..12,
    ) {
        let classes = classify_paths(&paths, 6, r, None).unwrap();
        let distinct = paths.iter().collect::<HashSet<_>>().len();
        prop_assert_eq!(classes.count(), distinct.min(r));
        let reps: Vec<u32> = classes.keys().iter().map(|k| match *k {
            ClassKey::Path { representative } => representative,
            _ => u32::MAX,
        }).collect();
        for (&p, &id) in paths.iter().zip(classes.ids()) {
            let own = (p ^ reps[id as usize]).count_ones();
            prop_assert!(reps.iter().all(|&q| (p ^ q).count_ones() >= own), "{} is nearer another seed", p);
            if distinct <= r {
                prop_assert_eq!(reps[id as usize], p);
            }
        }
    }
}

fn shuffled_trips(n: usize, values: &[u32]) -> Vec<u32> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            values[(state % values.len() as u64) as usize]
        })
        .collect()
}

#[test]
fn remaps_cut_the_divergence_of_a_shuffled_loop() {
    let trips = shuffled_trips(1 << 14, &[1, 4, 9, 16, 25, 36, 49, 64, 81, 100]);
    let classes = classify_loops(&trips, 10, Bucketing::EqualWidth).unwrap();
    let before = emulate_loops(&trips, 32).unwrap();
    let lam = emulate_loops(&LamPlan::new(&classes, 32).unwrap().permute(&trips).unwrap(), 32).unwrap();
    let redirect = emulate_loops(&gather(&trips, &redirect_index(&classes)).unwrap(), 32).unwrap();
    assert!(before.divergence_ratio() > 0.99);
    assert!(lam.divergence_ratio() < 0.03, "{}", lam.divergence_ratio());
    assert!(redirect.divergence_ratio() < 0.03, "{}", redirect.divergence_ratio());
    assert!(lam.simt_efficiency() > 2.0 * before.simt_efficiency());

    let profile = Profile::from_loops(&trips, &classes, 32, TILE_ELEMENTS, 0.01).unwrap();
    let decision = decide(Strategy::Auto, &profile, &CostModel::default()).unwrap();
    assert_ne!(decision.strategy, Strategy::None, "{}", decision.reason);
}

#[test]
fn control_leaves_a_divergence_free_kernel_alone() {
    // every warp uniform (like BlackScholes: branches exist, no warp splits on them)
    let trips: Vec<u32> = (0..4096u32).map(|i| (i / 32) % 5 * 10).collect();
    let classes = classify_loops(&trips, 10, Bucketing::EqualWidth).unwrap();
    let profile = Profile::from_loops(&trips, &classes, 32, TILE_ELEMENTS, 0.05).unwrap();
    assert_eq!(profile.divergence_ratio, 0.0);
    let decision = decide(Strategy::Auto, &profile, &CostModel { gpu_regroup_s_per_element: 0.0, ..CostModel::default() }).unwrap();
    assert_eq!(decision.strategy, Strategy::None, "{}", decision.reason);
    assert_eq!(decision.predicted_gain_s, 0.0);

    let paths: Vec<u32> = (0..1024u32).map(|i| i / 64 % 4).collect();
    let classes = classify_paths(&paths, 2, 10, None).unwrap();
    let profile = Profile::from_paths(&paths, 2, &classes, 32, TILE_ELEMENTS, 0.05).unwrap();
    assert_eq!(decide(Strategy::Auto, &profile, &CostModel::default()).unwrap().strategy, Strategy::None);
}

/// The "kernel": a pure function of each element, as a data-parallel kernel is.
fn kernel(x: u32) -> u32 {
    x.wrapping_mul(2_654_435_761).rotate_left(5) ^ x
}

#[test]
fn pipeline_outputs_equal_unmapped_sequential_runs() {
    const CHUNKS: usize = 12;
    const CHUNK: usize = 3000;
    let inputs: Vec<Vec<u32>> = (0..CHUNKS).map(|c| shuffled_trips(CHUNK, &[c as u32, 3, 70, 500, 9])).collect();
    let expected: Vec<Vec<u32>> = inputs.iter().map(|chunk| chunk.iter().map(|&x| kernel(x)).collect()).collect();

    let pipeline = Pipeline::new(2, 4).unwrap();
    let mut outputs: Vec<Vec<u32>> = vec![Vec::new(); CHUNKS];
    let report = pipeline
        .run(
            CHUNKS,
            |c| {
                // some remaps are slow enough to be late; chunk 5 gives up
                if c % 4 == 1 {
                    std::thread::sleep(Duration::from_millis(12));
                }
                if c == 5 {
                    return None;
                }
                let classes = classify_loops(&inputs[c], 10, Bucketing::Quantile).ok()?;
                LamPlan::new(&classes, 32).ok()
            },
            |c, plan| {
                std::thread::sleep(Duration::from_millis(4));
                outputs[c] = match plan {
                    Some(plan) => {
                        let laid_out = plan.permute(&inputs[c])?;
                        let out: Vec<u32> = laid_out.iter().map(|&x| kernel(x)).collect();
                        plan.restore(&out)?
                    }
                    None => inputs[c].iter().map(|&x| kernel(x)).collect(),
                };
                Ok(())
            },
        )
        .unwrap();
    assert_eq!(outputs, expected);

    // timeline consistency
    assert_eq!(report.chunks.len(), CHUNKS);
    assert!(report.count(ChunkOutcome::Mapped) > 0);
    assert!(report.depth_reached >= 1 && report.depth_reached <= 4);
    for (i, c) in report.chunks.iter().enumerate() {
        assert_eq!(c.chunk, i);
        assert!(c.gpu_start_s <= c.gpu_end_s && c.gpu_end_s <= report.wall_s);
        assert_eq!(c.mapped, c.outcome == ChunkOutcome::Mapped);
        if let Some(r) = c.remap {
            assert!(r.start_s <= r.end_s && r.worker < 2);
            if c.mapped {
                assert!(r.end_s <= c.gpu_start_s, "a mapping is used only once computed");
            }
        }
        if c.outcome == ChunkOutcome::Declined {
            assert!(c.remap.is_some());
        }
        if c.outcome == ChunkOutcome::Warmup {
            assert!(c.remap.is_none());
        }
    }
    assert_ne!(report.chunks[5].outcome, ChunkOutcome::Mapped);
    for pair in report.chunks.windows(2) {
        assert!(pair[0].gpu_end_s <= pair[1].gpu_start_s, "GPU runs chunks one at a time, in order");
        assert!(pair[0].depth <= pair[1].depth);
    }
    for worker in 0..2 {
        let mut spans: Vec<RemapSpan> = report.chunks.iter().filter_map(|c| c.remap).filter(|r| r.worker == worker).collect();
        spans.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        assert!(spans.windows(2).all(|p| p[0].end_s <= p[1].start_s), "a worker does one remap at a time");
    }

    let trace: serde_json::Value = serde_json::from_str(&report.to_chrome_trace()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let complete = events.iter().filter(|e| e["ph"] == "X").count();
    assert_eq!(complete, CHUNKS + report.chunks.iter().filter(|c| c.remap.is_some()).count());
    assert!(events.iter().filter(|e| e["ph"] == "X").all(|e| e["dur"].as_f64().unwrap() >= 0.0));
}

// ---- WGSL

const SHADERS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/shaders");

fn shader_dir() -> std::path::PathBuf {
    // The scratch crate used for development lives outside the main tree; find the sources.
    let here = std::path::Path::new(SHADERS);
    if here.join("remap").exists() {
        here.to_path_buf()
    } else {
        std::path::Path::new(file!()).ancestors().nth(3).map(|root| root.join("shaders")).unwrap_or_default()
    }
}

/// The project preprocessor's subset used here: `#import name` (shaders/shared/name.wgsl),
/// `#ifdef` / `#ifndef` / `#else` / `#endif` against `defines`.
fn preprocess(source: &str, defines: &[&str]) -> String {
    let mut out = String::new();
    let mut active: Vec<bool> = Vec::new();
    for line in source.lines() {
        let t = line.trim();
        let on = active.iter().all(|&a| a);
        if let Some(name) = t.strip_prefix("#ifdef ") {
            active.push(defines.contains(&name.trim()));
        } else if let Some(name) = t.strip_prefix("#ifndef ") {
            active.push(!defines.contains(&name.trim()));
        } else if t == "#else" {
            let last = active.pop().expect("#else without #ifdef");
            active.push(!last);
        } else if t == "#endif" {
            active.pop().expect("#endif without #ifdef");
        } else if let Some(name) = t.strip_prefix("#import ") {
            if on {
                let path = shader_dir().join("shared").join(format!("{}.wgsl", name.trim()));
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                out += &preprocess(&text, defines);
            }
        } else if on {
            out += line;
            out.push('\n');
        }
    }
    assert!(active.is_empty(), "unterminated #ifdef");
    out
}

fn validate(name: &str, source: &str) -> naga::Module {
    let module = naga::front::wgsl::parse_str(source).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    module
}

#[test]
fn remapped_id_compiles_with_and_without_an_index_array() {
    let with = "#import remap\n\
        @group(0) @binding(0) var<storage, read_write> data: array<u32>;\n\
        @compute @workgroup_size(64)\n\
        fn main(@builtin(global_invocation_id) g: vec3<u32>) {\n\
            if (g.x >= arrayLength(&data)) { return; }\n\
            let id = remapped_id(g.x);\n\
            data[id] = data[id] * 2u + id;\n\
        }\n";
    let remapped = validate("remap.wgsl with REMAP", &preprocess(with, &["REMAP"]));
    assert_eq!(remapped.global_variables.len(), 2);
    let plain = validate("remap.wgsl without REMAP", &preprocess(with, &[]));
    assert_eq!(plain.global_variables.len(), 1);
}

#[test]
fn regroup_kernels_validate() {
    let kernels: [(&str, &[&str]); 4] = [
        ("classify_histogram", &["main"]),
        ("scan", &["reduce_blocks", "scan_block_sums", "scan_blocks"]),
        ("scatter", &["main"]),
        ("classify_trips", &["main"]),
    ];
    for (name, entries) in kernels {
        let path = shader_dir().join("remap").join(format!("{name}.wgsl"));
        let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let module = validate(name, &preprocess(&source, &[]));
        let names: Vec<&str> = module.entry_points.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, entries, "{name}");
        for e in &module.entry_points {
            // the harness reads the workgroup size from the module: keep it a constant
            assert_eq!(e.workgroup_size, [256, 1, 1], "{name}::{}", e.name);
        }
    }
}

#[test]
fn the_index_binding_is_the_one_the_shared_remap_wgsl_declares() {
    let remap: Vec<(u32, &str)> = crate::gpu::shader::registry::shared::remap::FILE.bindings.iter().map(|b| (b.binding, b.name)).collect();
    assert_eq!(remap, [(super::REMAP_BINDING, "remap_index")]);
}
