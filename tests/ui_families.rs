//! A snapshot of every family's view in the explorer: each workload runs live at the tiny
//! scale through the Run button (every point checked against the CPU), then its run, kept in
//! `tests/fixtures/NAME.json`, is drawn and the view is checked to show the kept records'
//! values (the family panel, the table) before its image is compared.
//!
//! Update the fixtures and snapshots with `UPDATE_SNAPSHOTS=true cargo test --test ui_families`.

#![cfg(feature = "gui")]

mod common;

use common::explorer::{explorer_harness, kept_run, live_run, snapshot_kept_run, WINDOW};
use egui_kittest::kittest::Queryable;
use simtlab::gpu::shader::{self, registry::split::branch_split};
use simtlab::harness::format_significant;
use simtlab::harness::{format_seconds, Record};
use simtlab::kernels::{matmul::MatmulExtra, split::SplitExtra};
use simtlab::occupancy::{calculate, kernel_resources, Launch};
use simtlab::pt::{barrier::BarrierExtra, queue::QueueExtra, tier_that_ran};
use simtlab::ui::explorer::flowshop::PoolBar;
use simtlab::ui::explorer::plots::{format_value, Comparison, Measured};
use simtlab::ui::explorer::{Explorer, Run, FAMILY_SWEEP};
use simtlab::workload;

/// Sweeps `key` over `from..=to` in `points` steps.
fn sweep(e: &mut Explorer, key: &str, from: f64, to: f64, points: usize) {
    let s = e.sweep_mut();
    (s.enabled, s.key, s.from, s.to, s.points) = (true, key.into(), from, to, points);
}

/// Runs every workload of the selected one's family side by side.
fn family_sweep(e: &mut Explorer) {
    let s = e.sweep_mut();
    (s.enabled, s.key) = (true, FAMILY_SWEEP.into());
}

/// The swept values of `run`'s points, as numbers.
fn xs(run: &Run) -> Vec<f64> {
    run.points.iter().map(|p| p.x.as_ref().and_then(|x| x.as_f64()).unwrap()).collect()
}

/// The names of the registry's workloads of `family`, in registry order.
fn family(family: &str) -> Vec<String> {
    workload::registry().iter().filter(|w| w.family() == family).map(|w| w.name().to_string()).collect()
}

#[test]
fn persistent_threads_barrier_latency_over_workgroups() {
    // 16 barriers per run, not the tiny scale's 100: fewer chances for the CPU driver's loop
    // limit (see live_run)
    let live = live_run("pt-barrier", |e: &mut Explorer| {
        sweep(e, "workgroups", 1.0, 4.0, 3);
        e.params_mut()["iterations"] = 16.into();
    });
    let run = live.state().run();
    assert_eq!(xs(run), [1.0, 2.0, 4.0]);
    for p in &run.points {
        assert_eq!(p.params["workgroups"], p.x.clone().unwrap());
        let r = &p.records[0];
        // as many take part as are co-resident, never more than were launched
        let barrier = r.extra_as::<BarrierExtra>().unwrap();
        let participants = f64::from(barrier.participants);
        assert!(participants >= 1.0 && participants <= p.params["workgroups"].as_f64().unwrap(), "{:?}", r.extra);
        assert!(barrier.relaunch_us > 0.0, "{:?}", r.extra);
    }

    let h = snapshot_kept_run(live.state(), "explorer_pt_barrier_workgroups", 2);
    h.get_by_label("persistent threads");
    for r in h.state().run().records() {
        // in the records table and in the panel's row
        assert_eq!(h.get_all_by_label(&r.variant).count(), 2, "{}", r.variant);
        let relaunch = r.extra_as::<BarrierExtra>().unwrap().relaunch_us;
        assert!(h.get_all_by_label(&format!("{} us", format_significant(relaunch))).count() >= 1, "{relaunch}");
    }
}

#[test]
fn persistent_threads_cases_and_queue_kinds_with_their_tiers() {
    let live = live_run("pt-queue-single", family_sweep);
    let run = live.state().run();
    let names: Vec<&str> = run.points.iter().map(|p| p.workload.as_str()).collect();
    assert_eq!(names, family("pt"));
    // every queue kind ran as its own workload, with the tier that ran it
    for kind in ["single", "chunked", "distributed"] {
        let point = run.points.iter().find(|p| p.workload == format!("pt-queue-{kind}")).unwrap();
        assert_eq!(point.params["kind"], kind);
        assert!(point.records[0].extra_as::<QueueExtra>().is_some(), "{:?}", point.records[0].extra);
    }

    let h = snapshot_kept_run(live.state(), "explorer_pt_cases", 7);
    h.get_by_label("persistent threads");
    h.get_by_label("tier that ran");
    for kind in ["single", "chunked", "distributed"] {
        h.get_by_label(&format!("queue {kind}"));
    }
    for p in &h.state().run().points {
        for r in &p.records {
            if let Some(tier) = tier_that_ran(r) {
                h.get_all_by_label(&tier).next().unwrap_or_else(|| panic!("{}: tier {tier} not shown", p.workload));
            }
        }
    }
}

#[test]
fn carrillo_branched_and_split_over_the_else_fraction() {
    let live = live_run("branch-split-random", |e| {
        e.sweep_mut().enabled = false;
        e.params_mut()["else_fractions"] = serde_json::json!([0.0, 0.5, 1.0]);
    });
    let run = live.state().run();
    let fractions: Vec<f64> = run.records().filter(|r| r.kernel == "split").map(|r| r.params["else_fraction"].as_f64().unwrap()).collect();
    assert_eq!(fractions, [0.0, 0.5, 1.0]);
    // the branched kernel diverges only when both paths are taken in a warp
    let branched_eff: Vec<f64> =
        run.records().filter(|r| r.kernel == "branched").map(|r| r.divergence.unwrap().branch_efficiency).collect();
    assert_eq!((branched_eff[0], branched_eff[2]), (1.0, 1.0));
    assert!(branched_eff[1] < 0.5, "{branched_eff:?}");

    let h = snapshot_kept_run(live.state(), "explorer_carrillo_split", 0);
    h.get_by_label("split vs branched");
    for r in h.state().run().records().filter(|r| r.kernel == "split") {
        let f = r.params["else_fraction"].as_f64().unwrap();
        let ratio = r.extra_as::<SplitExtra>().unwrap().split_over_branched;
        h.get_by_label(&format!("else fraction {:.0} %: split's speed-up over branched {:.2}×", 100.0 * f, 1.0 / ratio));
    }
    // each kernel's occupancy, from its WGSL through the model of the panel's preset
    let (arch, registers) = (h.state().occupancy.arch, h.state().occupancy.registers_per_thread);
    h.get_by_label(&format!("occupancy of each kernel on {} ({registers} registers/thread):", arch.name));
    let source = shader::preprocess(branch_split::FILE.path, &[]).unwrap();
    for entry in [branch_split::BRANCHED, branch_split::SPLIT_IF, branch_split::SPLIT_ELSE] {
        let kernel = kernel_resources(&source.text, entry.name).unwrap();
        let o = calculate(arch, kernel.launch(registers)).unwrap();
        assert!(h.get_all_by_label(entry.name).count() >= 1, "{}", entry.name);
        h.get_all_by_label(&format!("{} of {}", o.active_warps_per_sm, o.max_warps_per_sm)).next().unwrap();
        h.get_all_by_label(&format!("{:.0} %", 100.0 * o.occupancy)).next().unwrap();
    }
}

#[test]
fn matmul_ladder_with_the_occupancy_model_per_rung() {
    let live = live_run("matmul-naive", family_sweep);
    let run = live.state().run();
    let names: Vec<&str> = run.points.iter().map(|p| p.workload.as_str()).collect();
    assert_eq!(names, family("matmul"));

    let h = snapshot_kept_run(live.state(), "explorer_matmul_ladder", 4);
    let e = h.state();
    let (arch, registers) = (e.occupancy.arch, e.occupancy.registers_per_thread);
    h.get_by_label(&format!("matmul ladder on {} ({registers} registers/thread)", arch.name));
    let mut rungs = 0;
    for r in e.run().records() {
        let resources = r.extra_as::<MatmulExtra>().unwrap().resources;
        let (threads, bytes) = (resources.threads_per_workgroup, resources.workgroup_bytes as u32);
        let o = calculate(arch, Launch::new(threads, registers, bytes)).unwrap();
        h.get_all_by_label(&format!("{} of {}", o.active_warps_per_sm, o.max_warps_per_sm)).next().unwrap();
        h.get_all_by_label(&format!("{bytes} B")).next().unwrap();
        rungs += 1;
    }
    assert_eq!(rungs, names.len());
}

/// A family with an original and its variants: a size sweep, each point's variants against
/// the point's first record.
fn variants_view(name: &str, key: &str, from: f64, to: f64, snapshot: &str) {
    let live = live_run(name, |e| sweep(e, key, from, to, 2));
    let run = live.state().run();
    assert_eq!(xs(run), [from, to]);
    assert!(run.points.iter().all(|p| p.records.len() >= 2), "{name}: an original and a variant per point");

    let h = snapshot_kept_run(live.state(), snapshot, 1);
    for p in &h.state().run().points {
        let first: &Record = &p.records[0];
        h.get_by_label(&format!("{key} = {}: against {} {}", format_value(p.x.as_ref().unwrap()), first.kernel, first.variant));
        for r in &p.records[1..] {
            // the speed-up over the original, or "within noise" where their samples overlap
            let (time, original) = (Measured::time(r), Measured::time(first));
            let versus = Comparison::of(&time, &original).unwrap();
            assert_eq!(versus.speedup, first.stats.median / r.stats.median);
            assert_eq!(versus.within_noise, r.stats.min <= first.stats.max && first.stats.min <= r.stats.max);
            let range = format!("{}–{}, n = {}", format_seconds(r.stats.min), format_seconds(r.stats.max), r.stats.samples.len());
            h.get_by_label(&format!("{} {}: {} ({range}): {}", r.kernel, r.variant, format_seconds(r.stats.median), versus.label()));
        }
    }
}

#[test]
fn reduction_variants_over_the_size() {
    variants_view("reduction", "n", 1024.0, 4096.0, "explorer_reduction");
}

#[test]
fn blackscholes_variants_over_the_size() {
    variants_view("blackscholes", "n", 1024.0, 4096.0, "explorer_blackscholes");
}

#[test]
fn lbm_variants_over_the_edge() {
    variants_view("lbm", "edge", 8.0, 12.0, "explorer_lbm");
}

#[test]
fn gafort_variants_over_the_children() {
    variants_view("gafort", "children", 512.0, 1024.0, "explorer_gafort");
}

#[test]
fn marching_cubes_variants_over_the_edge() {
    variants_view("mcubes", "edge", 8.0, 12.0, "explorer_mcubes");
}

#[test]
fn flowshop_bound_pools_depth_and_breadth_first() {
    let live = live_run("flowshop-bound-pools", |e| e.sweep_mut().enabled = false);
    let strategies: Vec<String> = live.state().run().records().map(|r| r.params["strategy"].as_str().unwrap().to_string()).collect();
    assert!(strategies.contains(&"dfs".to_string()) && strategies.contains(&"bfs".to_string()), "{strategies:?}");

    let h = snapshot_kept_run(live.state(), "explorer_flowshop_pools", 0);
    h.get_by_label("bounding pools: DFS vs BFS");
    let records: Vec<&Record> = h.state().run().records().collect();
    for r in &records {
        h.get_by_label(&r.variant);
    }
    let bars: Vec<PoolBar> = records.iter().filter_map(|r| PoolBar::of(r)).collect();
    assert_eq!(bars.len(), records.len(), "the probe counted every kernel");
    for b in &bars {
        h.get_by_label_contains(&format!("{} {}: divergence ratio {:.3}", b.order.to_uppercase(), b.label, b.divergence_ratio));
    }
}

#[test]
fn baseline_diff_of_a_shorter_long_trip() {
    // the baseline runs long trips of 512, the run of 64: the run takes less time
    let setup = |long: u64| {
        move |e: &mut Explorer| {
            sweep(e, "n", 2048.0, 4096.0, 2);
            e.params_mut()["long"] = long.into();
        }
    };
    let baseline = live_run("micro-loop", setup(512));
    let live = live_run("micro-loop", setup(64));
    let base_path = kept_run(baseline.state(), "explorer_baseline_diff_baseline");
    let run_path = kept_run(live.state(), "explorer_baseline_diff_run");

    let mut h = explorer_harness(WINDOW);
    h.state_mut().open_file(&run_path).unwrap();
    h.state_mut().open_baseline(&base_path).unwrap();
    h.run();
    let (run, base) = (h.state().run().clone(), h.state().baseline().unwrap().clone());
    assert_eq!(run.points.len(), 2);
    h.get_by_label_contains(&format!("baseline: micro-loop ({} point(s)), dashed in the plots", base.points.len()));
    for (p, b) in run.points.iter().zip(&base.points) {
        assert_eq!((p.params["long"].as_u64(), b.params["long"].as_u64()), (Some(64), Some(512)));
        let speedup = b.records[0].stats.median / p.records[0].stats.median;
        assert!(speedup > 1.0, "a shorter long trip takes less time: {speedup}");
        let versus = Comparison::of(&Measured::time(&p.records[0]), &Measured::time(&b.records[0])).unwrap();
        assert_eq!(versus.speedup, speedup);
        h.get_all_by_label(&versus.label()).next().unwrap();
    }
    h.snapshot("explorer_baseline_diff");
}
