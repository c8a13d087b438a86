//! UI tests: the overlay widgets (with snapshot images rendered by wgpu, lavapipe here) and the
//! explorer driven through its widgets, kernels running on the default adapter.
//!
//! Update the snapshots with `UPDATE_SNAPSHOTS=true cargo test --test ui`.

#![cfg(feature = "gui")]

mod common;

use common::explorer::{explorer_harness, snapshot_kept_run, wait_for_run};
use egui::accesskit::Role;
use egui_kittest::kittest::{NodeT, Queryable};
use egui_kittest::Harness;
use simtlab::divergence::{emulate_loops, Divergence};
use simtlab::kernels::micro::{self, remapped, Distribution, MicroConfig, Pattern};
use simtlab::occupancy::{find_arch, Launch};
use simtlab::remap::Calibration;
use simtlab::ui::explorer::plots::{self, Metric};
use simtlab::ui::explorer::{Explorer, Run, View, FAMILY_SWEEP};
use simtlab::ui::overlay::{ColorBy, DivergenceOverlay, HeatMap, OccupancyPanel, Span, Timeline};
use simtlab::workload::{self, Scale};
use simtlab::GpuOptions;

/// One long lane in each group of 32 (short 4, long 64), emulated at width 8: 512 warps, a
/// quarter of them divergent; and the same trips sorted (Zhang's remapping).
fn loop_divergence() -> (Divergence, Divergence) {
    let cfg = MicroConfig {
        pattern: Pattern::Loop,
        distribution: Distribution::OneLong,
        n: 4096,
        short: 4,
        long: 64,
        group: 32,
        seed: 7,
        ..Default::default()
    };
    let input = micro::generate(&cfg).unwrap();
    let before = micro::emulate(&cfg, &input, None, 8).unwrap();
    let mut order: Vec<u32> = (0..cfg.n as u32).collect();
    order.sort_by_key(|&i| input.primary[i as usize]);
    let after = micro::emulate(&cfg, &input, Some(&order), 8).unwrap();
    (before, after)
}

fn overlay_harness(overlay: DivergenceOverlay, size: [f32; 2]) -> Harness<'static, DivergenceOverlay> {
    Harness::builder().with_size(size).build_ui_state(|ui, o: &mut DivergenceOverlay| o.ui(ui), overlay)
}

#[test]
fn heat_map_snapshot_and_colour_toggle() {
    let (before, _) = loop_divergence();
    assert_eq!(before.warps, 512);
    let mut h = overlay_harness(DivergenceOverlay::new(&before, "host emulation, W = 8"), [520.0, 330.0]);
    h.run();
    h.get_by_label("heat map: 512 warps of 8 lanes, 1 per cell");
    h.get_by_label_contains("512 warps × 8 lanes, 128 divergent");
    h.snapshot("heat_map_divergent_evaluations");

    h.get_by_label("active-lane fraction").click();
    h.run();
    assert_eq!(h.state().color_by, ColorBy::ActiveLanes);
    h.snapshot("heat_map_active_lanes");
}

#[test]
fn heat_map_hover_shows_the_cell_numbers() {
    // warp 0 divergent (one lane of 8 runs 9 trips), warp 1 uniform
    let d = emulate_loops(&[1, 1, 1, 1, 1, 1, 1, 9, 2, 2, 2, 2, 2, 2, 2, 2], 8).unwrap();
    let mut h = overlay_harness(DivergenceOverlay::new(&d, "host emulation, W = 8"), [400.0, 260.0]);
    h.run();
    let map = h.get_by_label("heat map: 2 warps of 8 lanes, 1 per cell").rect();
    h.hover_at(map.left_top() + egui::vec2(4.0, 4.0));
    h.run();
    h.get_by_label_contains("warp 0\ndivergent evaluations: 1\nactive lanes: 22.2 %");
    h.hover_at(map.left_top() + egui::vec2(map.width() - 4.0, 4.0));
    h.run();
    h.get_by_label_contains("warp 1\ndivergent evaluations: 0\nactive lanes: 100.0 %");
}

#[test]
fn per_site_table_lists_evaluations_divergence_and_efficiency() {
    // two if sites: site 0 diverges in warp 0, site 1 never
    let d = simtlab::divergence::emulate_paths(&[0b10, 0b11, 0b10, 0b10, 0b01, 0b01, 0b01, 0b01], 2, 4).unwrap();
    let mut h = overlay_harness(DivergenceOverlay::new(&d, "host emulation, W = 4"), [520.0, 330.0]);
    h.run();
    // site 0: 2 evaluations, 1 divergent, lanes 5 of 2 steps x 4
    assert_eq!(h.get_all_by_label("50.0 %").count(), 1);
    h.get_by_label("62.5 %");
    h.get_by_label("all");
    h.get_by_label_contains("divergence ratio 0.500");
}

#[test]
fn before_after_view_when_a_remapping_ran() {
    let (before, after) = loop_divergence();
    assert!(after.divergence_ratio() < before.divergence_ratio());
    let overlay = DivergenceOverlay::new(&before, "one long lane per 32").with_after(&after, "sorted by trips");
    let mut h = overlay_harness(overlay, [820.0, 380.0]);
    h.run();
    h.get_by_label("before");
    h.get_by_label("after remapping");
    h.get_by_label_contains("divergence ratio 0.250 -> 0.000");
    assert_eq!(h.get_all_by_label_contains("heat map: 512 warps").count(), 2);
    h.snapshot("divergence_before_after");
}

#[test]
fn heat_map_aggregates_a_million_warps() {
    let divergent: Vec<u32> = (0..1u32 << 20).map(|i| i % 7).collect();
    let efficiency: Vec<f32> = (0..1u32 << 20).map(|i| (i % 32) as f32 / 32.0).collect();
    let mut map = HeatMap::from_values(32, divergent, efficiency);
    let mut h = Harness::builder().with_size([600.0, 200.0]).build_ui_state(
        |ui, m: &mut HeatMap| {
            m.ui(ui, ColorBy::DivergentEvaluations);
        },
        {
            map.height = 140.0;
            map
        },
    );
    h.run();
    let node = h.get_by_label_contains("heat map: 1048576 warps of 32 lanes");
    let label = node.accesskit_node().label().unwrap_or_default().to_string();
    let per_cell: usize = label.rsplit(", ").next().unwrap().trim_end_matches(" per cell").parse().unwrap();
    assert!(per_cell > 1, "{label}");
    let rect = node.rect();
    assert!(rect.width() <= 600.0 && rect.height() <= 140.0, "{rect:?}");
}

#[test]
fn occupancy_panel_g80_register_cliff() {
    // Ryoo et al.'s matmul: 256 threads x 10 registers fit 3 blocks (all 24 warps) on G80;
    // one more register per thread leaves room for only 2.
    let panel = OccupancyPanel::new(find_arch("g80").unwrap(), Launch::new(256, 10, 0));
    let mut h = Harness::builder().with_size([760.0, 420.0]).build_ui_state(|ui, p: &mut OccupancyPanel| p.ui(ui), panel);
    h.run();
    h.get_by_label("active blocks per SM: 3");
    h.get_by_label("active warps per SM: 24 of 24");
    h.get_by_label("occupancy: 100 %");
    h.snapshot("occupancy_g80_256x10");

    h.get_by_role_and_label(Role::Slider, "registers per thread").set_value_accesskit(11.0);
    h.run();
    assert_eq!(h.state().registers_per_thread, 11);
    h.get_by_label("active blocks per SM: 2");
    h.get_by_label("occupancy: 67 %");
    h.get_by_label("limited by: registers");
    h.snapshot("occupancy_g80_256x11");
}

#[test]
fn occupancy_panel_reads_the_kernels_wgsl() {
    let src = simtlab::gpu::shader::preprocess("micro/data_loop.wgsl", &[]).unwrap();
    let mut panel = OccupancyPanel::new(find_arch("g80").unwrap(), Launch::new(64, 10, 0));
    panel.set_kernel("data_loop", &src.text, "main").unwrap();
    let mut h = Harness::builder().with_size([760.0, 420.0]).build_ui_state(|ui, p: &mut OccupancyPanel| p.ui(ui), panel);
    h.run();
    h.get_by_label_contains("from data_loop's WGSL (256 threads, 0 B workgroup memory)");
    h.get_by_label("active blocks per SM: 3");
    h.get_by_label("from data_loop's WGSL (256 threads, 0 B workgroup memory)").click();
    h.run();
    // back to the slider's 64 threads: 8 blocks of 2 warps, capped by the 8 block slots
    h.get_by_label("active blocks per SM: 8");
    h.get_by_label("limited by: blocks");
}

#[test]
fn timeline_snapshot() {
    let mut spans = Vec::new();
    for c in 0..6 {
        let t = c as f64 * 1.0e-3;
        spans.push(Span::new("gpu", format!("kernel {c}"), t + 0.5e-3, t + 1.4e-3));
        spans.push(Span::new(format!("worker {}", c % 2), format!("remap {}", c + 1), t, t + 1.6e-3));
    }
    let timeline = Timeline::new(spans);
    assert_eq!(timeline.lanes, vec!["gpu", "worker 0", "worker 1"]);
    let mut h = Harness::builder().with_size([520.0, 90.0]).build_ui_state(
        |ui, t: &mut Timeline| {
            t.ui(ui);
        },
        timeline,
    );
    h.run();
    h.get_by_label("timeline: 12 spans on 3 lanes");
    h.snapshot("timeline_pipeline");
}

/// A record as the comparisons see it: family, kernel, variant, parameters, check passed.
type Key = (String, String, String, serde_json::Value, bool);

/// The records' identity and deterministic content: what ran, with which parameters, and the check.
fn keys(records: &[simtlab::harness::Record]) -> Vec<Key> {
    // the auto strategy's pick (after the colon) depends on the timings of the moment
    let variant = |r: &simtlab::harness::Record| r.variant.split(':').next().unwrap_or_default().to_string();
    records.iter().map(|r| (r.family.clone(), r.kernel.clone(), variant(r), r.params.clone(), r.check.passed)).collect()
}

#[test]
fn explorer_runs_every_workload_as_the_cli_does() {
    let gpu = simtlab::Gpu::new(&GpuOptions::default()).unwrap();
    let protocol = simtlab::harness::Protocol { warmup: 0, samples: 1 };
    let mut h = explorer_harness([1400.0, 900.0]);
    h.run();
    // the first one through the workload picker, the others by name
    h.get_by_label("workload").click();
    h.run();
    h.get_by_label("micro-if").click();
    h.run();
    assert_eq!(h.state().workload().name(), "micro-if");
    let names: Vec<&str> = workload::registry().iter().map(|w| w.name()).collect();
    assert!(names.len() >= 30, "{names:?}");
    for name in ["micro-if"].into_iter().chain(names.iter().copied().filter(|n| *n != "micro-if")) {
        h.state_mut().select_by_name(name).unwrap();
        h.state_mut().sweep_mut().enabled = false;
        // how many workgroups are co-resident (0 or null asks for all of them) varies with the load
        if let Some(w) = h.state_mut().params_mut().get_mut("workgroups").filter(|w| w.is_null() || **w == 0) {
            *w = 1.into();
        }
        h.run();
        h.get_by_label("Run").click();
        wait_for_run(&mut h);
        let run = h.state().run();
        assert_eq!(run.points.len(), 1, "{name}");
        let point = &run.points[0];
        assert_eq!(point.workload, name);
        assert!(point.checks_passed(), "{name}: {:?}", keys(&point.records));
        let w = workload::find(name).unwrap();
        // the blocking tier (2) of the persistent-threads cases is assessed on each device as it
        // runs, and a CPU driver under load may grant it to one device and not to the other: a
        // run of that tier alone may be refused there; every other record must agree
        let shown = keys(&point.records);
        let cli = match w.run(&gpu, &point.params, &protocol) {
            Ok(records) => Some(keys(&records)),
            Err(simtlab::Error::Unsupported { what, .. }) if name.starts_with("pt-") && what.contains("(blocking tier 2)") => None,
            Err(e) => panic!("{name}: {e}"),
        };
        if let Some(cli) = cli.filter(|cli| *cli != shown) {
            let below_blocking = |k: &[Key]| k.iter().filter(|k| !k.2.ends_with("(tier 2)")).cloned().collect::<Vec<_>>();
            assert!(name.starts_with("pt-"), "{name}: {shown:?}\n{cli:?}");
            assert_eq!(below_blocking(&shown), below_blocking(&cli), "{name}");
        }
        // the plotted times are the records' medians, one series per kernel and variant
        let (_, xs) = plots::x_axis(run, None);
        let time = plots::Panel { metric: Metric::TimeMs, unit: String::new() };
        let plotted: Vec<f64> = plots::series(run, &xs, &time).iter().flat_map(|(_, p)| p.iter().map(|q| q.y.value)).collect();
        let mut medians: Vec<f64> = point.records.iter().map(|r| r.stats.median * 1e3).collect();
        let mut plotted_sorted = plotted.clone();
        medians.sort_by(f64::total_cmp);
        plotted_sorted.sort_by(f64::total_cmp);
        assert_eq!(plotted_sorted, medians, "{name}");
        // the table lists every record's kernel and its check
        assert_eq!(h.get_all_by_label("ok").count(), point.records.len(), "{name}");
        h.get_by_label_contains("CPU check: 1 of 1 point(s) passed");
    }
}

#[test]
fn explorer_sweeps_the_loop_and_shows_the_heat_map_of_the_point_clicked() {
    let mut h = explorer_harness([1400.0, 900.0]);
    (h.state_mut().samples, h.state_mut().warmup) = (3, 1);
    h.state_mut().select_by_name("micro-loop").unwrap();
    h.run();
    h.get_by_label("sweep one parameter").click();
    h.run();
    // the sweep starts on the problem size around its value (4096 at the tiny scale)
    assert_eq!(h.state_mut().sweep_mut().key, "n");
    assert_eq!((h.state_mut().sweep_mut().from, h.state_mut().sweep_mut().to), (512.0, 32768.0));
    h.get_by_role_and_label(Role::Slider, "to");
    // another parameter takes a range of its own, not the previous one's
    let long = h.state().specs().iter().find(|s| s.key == "long").unwrap().clone();
    let params = h.state_mut().params_mut().clone();
    {
        let s = h.state_mut().sweep_mut();
        s.select(&long, &params);
        assert_eq!((s.from, s.to), (64.0, 4096.0));
        (s.from, s.to, s.points) = (16.0, 1024.0, 3);
    }
    h.run();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::R);
    h.step();
    assert!(h.state().is_running() || !h.state().run().points.is_empty(), "Ctrl+R did not start a run");
    wait_for_run(&mut h);
    let run = h.state().run().clone();
    assert_eq!(run.points.len(), 3);
    let longs: Vec<u64> = run.points.iter().map(|p| p.params["long"].as_u64().unwrap()).collect();
    assert_eq!(longs, vec![16, 128, 1024]);
    // a longer long trip leaves the short lanes idle longer: SIMT efficiency falls
    let eff: Vec<f64> = run.points.iter().map(|p| p.warps[0].divergence.simt_efficiency()).collect();
    assert!(eff[0] > eff[1] && eff[1] > eff[2], "{eff:?}");
    h.get_by_label_contains("divergence of point #3 (1024)");
    h.get_by_label("#1").click();
    h.run();
    assert_eq!(h.state().selected(), 0);
    h.get_by_label_contains("divergence of point #1 (16)");
    let d = &run.points[0].warps[0].divergence;
    assert_eq!(h.get_all_by_label_contains(&format!("heat map: {} warps of {} lanes", d.warps, d.width)).count(), 2);
    h.get_by_label_contains("threads sorted by trip count");
    // the probe counts on lavapipe's subgroups: the emulated width does not apply
    let slider = h.get_by_role_and_label(Role::Slider, "emulated warp width");
    assert!(slider.accesskit_node().is_disabled());
    assert!(h.get_all_by_label_contains("SIMT efficiency at W = 32, from the text's reasoning").count() >= 1);
    snapshot_kept_run(h.state(), "explorer_micro_loop_sweep", 1);
}

#[test]
fn explorer_runs_every_remapping_strategy_side_by_side() {
    let mut h = explorer_harness([1400.0, 900.0]);
    // medians of three after a warm-up, with their spread, as the kept run shows them
    (h.state_mut().samples, h.state_mut().warmup) = (3, 1);
    h.state_mut().select_by_name("remap-auto").unwrap();
    {
        let s = h.state_mut().sweep_mut();
        (s.enabled, s.key) = (true, FAMILY_SWEEP.into());
    }
    h.run();
    h.get_by_label("Run").click();
    wait_for_run(&mut h);
    let run = h.state().run();
    let names: Vec<&str> = run.points.iter().map(|p| p.workload.as_str()).collect();
    assert_eq!(names, ["remap-none", "remap-redirect", "remap-lam", "remap-gpu", "remap-tile", "remap-defer", "remap-auto"]);
    assert!(run.points.iter().all(|p| p.checks_passed()));
    let reason = run.points[6].records[0].extra["decision"]["reason"].as_str().unwrap().to_string();
    h.get_by_label("auto decided:");
    h.get_by_label_contains(reason.split(". Also considered").next().unwrap());
    h.get_by_label("remapping strategies");
    assert!(h.query_by_label("run remap-none too").is_none());
    // the cost model's prediction for every strategy beside what each measured
    let decision: simtlab::remap::Decision = serde_json::from_value(run.points[6].records[0].extra["decision"].clone()).unwrap();
    let weighed: Vec<String> = decision.predictions.iter().map(|p| p.strategy.to_string()).collect();
    assert_eq!(weighed, ["redirect", "lam", "gpu", "tile", "defer"]);
    let end_to_end = |i: usize| run.points[i].records[0].extra["end_to_end_s"].as_f64().unwrap();
    let (none, chosen) = (end_to_end(0), decision.strategy.to_string());
    let i = names.iter().position(|n| *n == format!("remap-{chosen}")).unwrap();
    let measured = none - end_to_end(i);
    let sign = if measured < 0.0 { "−" } else { "" };
    h.get_by_label_contains(&format!(
        "auto chose {chosen}: predicted saving {}, measured {sign}{}",
        simtlab::harness::format_seconds(decision.predicted_gain_s - decision.cost_s),
        simtlab::harness::format_seconds(measured.abs())
    ));
    h.get_by_label("predicted saving");
    h.get_by_label("measured saving");

    // what this run measured corrects the model: each strategy's prediction, measurement and
    // the model now, and the next auto run on this adapter decides with it
    let (calibration, lessons) = remapped::learn(run.records()).unwrap().unwrap();
    assert_eq!(
        lessons.iter().map(|l| l.strategy).collect::<Vec<_>>(),
        decision.predictions.iter().filter(|p| p.net_saving_s.is_some()).map(|p| p.strategy).collect::<Vec<_>>()
    );
    h.get_by_label("learned on this adapter (the next auto run weighs it):");
    for l in &lessons {
        h.get_by_label(&format!("  {l}"));
    }
    let first = run.clone();
    h.get_by_label("Run").click();
    wait_for_run(&mut h);
    let run = h.state().run();
    assert!(run.points.iter().all(|p| p.checks_passed()));
    let auto = &run.points[6].records[0];
    let used: Calibration = serde_json::from_value(auto.params["calibration"].clone()).expect("auto decided with the calibration");
    assert_eq!(used, calibration);
    let next: simtlab::remap::Decision = serde_json::from_value(auto.extra["decision"].clone()).unwrap();
    for l in &lessons {
        assert!(next.reason.contains(&format!("{}: SIMT efficiency", l.strategy)), "{}", next.reason);
        // on the keys it was measured on, the corrected model reproduces the measurement's
        // sign: a strategy measured slower than no remapping is no longer predicted to pay
        let none_s = first.points[0].records[0].extra["end_to_end_s"].as_f64().unwrap();
        if l.measured_s.abs() > 0.05 * none_s {
            assert_eq!(l.model_now_s < 0.0, l.measured_s < 0.0, "{l}");
        }
        // the next run's keys are profiled afresh (their times vary from run to run), and each
        // prediction is that run's model scaled by the factor learned
        let factor = calibration.get(l.strategy).unwrap().time_factor;
        let p = next.predictions.iter().find(|p| p.strategy == l.strategy).unwrap();
        let (raw, predicted) = (p.model_net_saving_s.unwrap(), p.net_saving_s.unwrap());
        let expected = next.baseline_s - factor * (next.baseline_s - raw);
        assert!((predicted - expected).abs() <= 1e-9 * next.baseline_s.max(1e-6), "{l}: now predicted {predicted}, expected {expected}");
    }
    assert_eq!(next.reason.matches("measured on this adapter at ").count(), lessons.len(), "{}", next.reason);
    snapshot_kept_run(h.state(), "explorer_remap_strategies", 6);
}

#[test]
fn explorer_saves_reopens_compares_and_exports() {
    let dir = std::env::temp_dir().join(format!("simtlab-explorer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut h = explorer_harness([1400.0, 900.0]);
    h.state_mut().select_by_name("branch-split-random").unwrap();
    h.state_mut().sweep_mut().enabled = false;
    (h.state_mut().samples, h.state_mut().warmup) = (3, 2);
    h.run();
    h.get_by_label("Run").click();
    wait_for_run(&mut h);
    // the occupancy panel says where its registers come from: the driver's count for the
    // kernel that ran, or why there is none (lavapipe reports none)
    let entry = h.state().workload().shader().unwrap();
    let kernel = format!("{}:{}", entry.file.path, entry.name);
    let registers = h.state().occupancy.registers_per_thread;
    let counted = h.query_by_label_contains(&format!("registers: {registers} per thread, as the driver compiled {kernel}")).is_some();
    assert!(counted || h.query_by_label_contains(&format!("registers: the slider's; no driver count for {kernel} (")).is_some());
    if h.state().adapter_labels()[h.state().adapter].contains("llvmpipe") {
        assert!(!counted, "lavapipe has no register statistics");
    }
    let file = dir.join("run.json");
    h.state_mut().file = file.display().to_string();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::S);
    h.run();
    h.get_by_label_contains("status: saved");
    let original = h.state().run().clone();
    let reopened = Run::open(&file).unwrap();
    // the same records as the run's, written and read back by the CLI's record functions
    let plain = dir.join("plain.json");
    simtlab::harness::write_json(&plain, &original.records().cloned().collect::<Vec<_>>()).unwrap();
    let json = |r: &[simtlab::harness::Record]| serde_json::to_value(r).unwrap();
    assert_eq!(json(&reopened.records().cloned().collect::<Vec<_>>()), json(&simtlab::harness::read_json(&plain).unwrap()));
    assert_eq!(keys(&reopened.points[0].records), keys(&original.points[0].records));
    // to the last bit of every time (serde_json's float_roundtrip)
    assert_eq!(json(&reopened.to_records()), json(&original.to_records()));
    assert_eq!(reopened.workload, "branch-split-random");
    // the file is the CLI's record format
    let records = simtlab::harness::read_json(&file).unwrap();
    assert_eq!(records.len(), original.records().count());

    // reopen in a fresh explorer, with the run itself as the baseline: every record is within
    // noise of itself, at a speed-up of 1
    let mut fresh = explorer_harness([1400.0, 900.0]);
    fresh.state_mut().open_file(&file).unwrap();
    fresh.state_mut().open_baseline(&file).unwrap();
    fresh.run();
    assert_eq!(fresh.state().workload().name(), "branch-split-random");
    assert_eq!(fresh.get_all_by_label("within noise (1.00×)").count(), original.records().count());

    let csv = dir.join("run.csv");
    h.state().export_csv(&csv).unwrap();
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + original.records().count());
    assert!(lines[0].starts_with("family,kernel,variant"));
    for (line, r) in lines[1..].iter().zip(original.records()) {
        assert!(line.starts_with(&format!("carrillo,{},{},", r.kernel, r.variant)), "{line}");
        assert!(line.contains(&r.stats.median.to_string()), "{line}");
    }
    let pngs = h.state().export_png(&dir.join("run.png")).unwrap();
    assert!(pngs.len() >= 2, "{pngs:?}");
    for p in &pngs {
        assert!(std::fs::read(p).unwrap().starts_with(b"\x89PNG"), "{}", p.display());
    }

    // the bytes a browser page downloads and opens are the files' bytes (only the transport differs)
    let e = h.state();
    assert_eq!(std::fs::read(&file).unwrap(), e.run_json().unwrap());
    assert_eq!(std::fs::read(&csv).unwrap(), e.run_csv());
    let made = e.run_pngs("run").unwrap();
    assert_eq!(made.iter().map(|f| dir.join(&f.name)).collect::<Vec<_>>(), pngs);
    for f in &made {
        assert_eq!(std::fs::read(dir.join(&f.name)).unwrap(), f.bytes, "{}", f.name);
    }
    let mut uploaded = explorer_harness([1400.0, 900.0]);
    // settings other than the run's, which opening it must replace
    uploaded.state_mut().select_by_name("branch-split-random").unwrap();
    uploaded.state_mut().params_mut()["seed"] = 99.into();
    uploaded.state_mut().sweep_mut().enabled = true;
    (uploaded.state_mut().samples, uploaded.state_mut().warmup) = (9, 0);
    let text = String::from_utf8(e.run_json().unwrap()).unwrap();
    uploaded.state_mut().open_text(&text, std::path::Path::new("run.json")).unwrap();
    assert_eq!(json(&uploaded.state().run().to_records()), json(&reopened.to_records()));
    assert_eq!(uploaded.state().workload().name(), "branch-split-random");
    // its editors show what the run ran, not a fresh explorer's defaults
    assert_eq!(*uploaded.state_mut().params_mut(), original.points[0].params);
    let sweep = uploaded.state_mut().sweep_mut().clone();
    assert_eq!(sweep.enabled, original.sweep.is_some());
    if let Some(key) = &original.sweep {
        assert_eq!((&sweep.key, sweep.points), (key, original.points.len()));
    }
    assert_eq!((uploaded.state().samples, uploaded.state().warmup), (3, 2), "the run's timing, not the editors'");
    // a CLI file keeps each record's samples, not the warm-up
    uploaded.state_mut().warmup = 0;
    uploaded.state_mut().open_file(&plain).unwrap();
    assert_eq!((uploaded.state().samples, uploaded.state().warmup), (3, 0));
    uploaded.state_mut().open_text(&text, std::path::Path::new("run.json")).unwrap();
    let refused = uploaded.state_mut().open_text("{\"not\": \"records\"}", std::path::Path::new("notes.json")).unwrap_err().to_string();
    assert!(refused.starts_with("notes.json: not a simtlab record file"), "{refused}");
    assert_eq!(uploaded.state().run().records().count(), original.records().count(), "a refused file keeps the run");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn explorer_fits_900_px_at_1_2_zoom_and_has_the_other_views() {
    let mut h = Harness::builder().with_size([900.0 / 1.2, 700.0 / 1.2]).with_pixels_per_point(1.2).build_ui_state(
        |ui, e: &mut Explorer| e.ui(ui),
        {
            let mut e = Explorer::new(&GpuOptions::default());
            e.set_scale(Scale::Tiny);
            e
        },
    );
    h.run();
    let run = h.get_by_label("Run").rect();
    assert!(run.right() <= 900.0 / 1.2, "{run:?}");
    // narrow: occupancy sits below the records instead of in a third column
    h.get_by_label_contains("no results yet");
    h.snapshot("explorer_narrow_zoomed");
    h.get_by_label("Your shader").click();
    h.run();
    assert_eq!(h.state().view, View::Shader);
    // the shader view's own controls, not a placeholder
    h.get_by_label("Load");
    h.get_by_label("Flow-shop search").click();
    h.run();
    assert_eq!(h.state().view, View::FlowShop);
    h.get_by_label("Solve");
    assert!(!h.state().flowshop.is_running());
}

#[test]
fn explorer_occupancy_preset_follows_the_adapter() {
    let mut h = explorer_harness([1400.0, 900.0]);
    h.run();
    // lavapipe matches no preset: the stated default
    h.get_by_label_contains("no preset matches llvmpipe");
    assert_eq!(h.state().occupancy.arch.name, "cc9.0");
    h.state_mut().select_by_name("micro-if").unwrap();
    h.run();
    h.get_by_label_contains("from micro/if_branch.wgsl:main's WGSL (256 threads");
}

#[test]
fn esc_stops_a_run_within_one_sample_of_a_long_point() {
    // one point of many long samples: the loop runs 1000 to 2000 trips in every lane
    let params = |p: &mut serde_json::Value| {
        p["n"] = (1 << 18).into();
        p["short"] = 1000.into();
        p["long"] = 2000.into();
    };
    // what one sample costs here, measured directly: a run of one sample without warm-up,
    // input generation and CPU check included (more than the sample alone)
    let gpu = simtlab::Gpu::new(&GpuOptions::default()).unwrap();
    let w = workload::find("micro-loop").unwrap();
    let mut p = w.params(Scale::Tiny);
    params(&mut p);
    let started = std::time::Instant::now();
    let records = w.run(&gpu, &p, &simtlab::harness::Protocol { warmup: 0, samples: 1 }).unwrap();
    let one_sample = started.elapsed();
    assert!(records[0].check.passed);
    drop(gpu);

    let mut h = explorer_harness([1400.0, 900.0]);
    h.state_mut().select_by_name("micro-loop").unwrap();
    h.state_mut().sweep_mut().enabled = false;
    params(h.state_mut().params_mut());
    (h.state_mut().samples, h.state_mut().warmup) = (500, 0);
    h.run();
    h.get_by_label("Run").click();
    h.step();
    // the adapter opens, then the point's samples run for a while
    let start = std::time::Instant::now();
    while h.state().status() == "running micro-loop" {
        assert!(start.elapsed() < std::time::Duration::from_secs(120), "the adapter did not open");
        std::thread::sleep(std::time::Duration::from_millis(20));
        h.step();
    }
    let running = std::time::Instant::now();
    while running.elapsed() < one_sample * 2 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        h.step();
    }
    assert!(h.state().is_running(), "500 samples outlast two");
    h.key_press(egui::Key::Escape);
    let pressed = std::time::Instant::now();
    h.step();
    // the frame that takes the key shows the run cancelling, unless its worker already stopped
    let status = h.state().status();
    assert!(status == "cancelling" || !h.state().is_running(), "{status}");
    while h.state().is_running() {
        assert!(pressed.elapsed() < std::time::Duration::from_secs(300), "Esc did not stop the run");
        std::thread::sleep(std::time::Duration::from_millis(5));
        h.step();
    }
    let latency = pressed.elapsed();
    assert!(
        latency <= one_sample + std::time::Duration::from_millis(500),
        "Esc took {latency:?}; one sample (with its set-up and check) takes {one_sample:?}"
    );
    assert_eq!(h.state().status(), "cancelled after 0 point(s)");
    assert!(h.state().run().points.is_empty() && h.state().error().is_none(), "{:?}", h.state().error());
}

/// The run kept as `tests/fixtures/NAME.json`.
fn fixture_run(name: &str) -> (std::path::PathBuf, Run) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(format!("{name}.json"));
    let run = Run::open(&path).unwrap();
    (path, run)
}

/// `run` with point `i`'s first record timed by `samples_ms`.
fn with_samples(mut run: Run, i: usize, samples_ms: &[f64]) -> Run {
    let r = &mut run.points[i].records[0];
    let source = r.stats.source;
    r.stats = simtlab::harness::Stats::from_samples(samples_ms.iter().map(|ms| ms * 1e-3).collect(), source).unwrap();
    run
}

#[test]
fn plots_and_tables_show_the_spread_and_say_within_noise() {
    // point 1: the run's samples overlap the baseline's; point 2: the run is twice as fast
    let (_, kept) = fixture_run("explorer_baseline_diff_run");
    let run = with_samples(with_samples(kept.clone(), 0, &[1.0, 1.1, 1.2]), 1, &[1.0, 1.05, 1.1]);
    let base = with_samples(with_samples(kept, 0, &[1.05, 1.15, 1.25]), 1, &[2.0, 2.1, 2.2]);
    let dir = common::scratch("ui-noise");
    let (run_path, base_path) = (dir.join("run.json"), dir.join("baseline.json"));
    run.save(&run_path).unwrap();
    base.save(&base_path).unwrap();

    let mut h = explorer_harness([1400.0, 900.0]);
    h.state_mut().open_file(&run_path).unwrap();
    h.state_mut().open_baseline(&base_path).unwrap();
    h.run();
    h.get_by_label("whiskers: fastest to slowest of n = 3 samples per point");
    // the table: each time's range and sample count, the speed-up or "within noise"
    let fmt = simtlab::harness::format_seconds;
    h.get_by_label(&format!("{}–{}, n = 3", fmt(1.0e-3), fmt(1.2e-3)));
    h.get_by_label(&format!("{}–{}, n = 3", fmt(1.0e-3), fmt(1.1e-3)));
    let first =
        plots::Comparison::of(&plots::Measured::time(&run.points[0].records[0]), &plots::Measured::time(&base.points[0].records[0]));
    let first = first.unwrap();
    assert!((first.speedup - 1.15 / 1.1).abs() < 1e-12 && first.within_noise, "{first:?}");
    h.get_by_label(&format!("within noise ({:.2}×)", 1.15 / 1.1));
    h.get_by_label("2.00× faster");
    // the plotted whiskers are the records' fastest and slowest samples
    let (_, xs) = plots::x_axis(&run, None);
    let time = plots::Panel { metric: Metric::TimeMs, unit: String::new() };
    let points: Vec<plots::PlotPoint> = plots::series(&run, &xs, &time).into_iter().flat_map(|(_, p)| p).collect();
    assert_eq!(points.len(), 2);
    for (q, r) in points.iter().zip(run.records()) {
        assert_eq!((q.y.low, q.y.value, q.y.high, q.y.samples), (r.stats.min * 1e3, r.stats.median * 1e3, r.stats.max * 1e3, 3));
    }
    h.snapshot("explorer_noise");
}

#[test]
fn persistent_threads_view_has_one_unit_per_axis() {
    let (path, run) = fixture_run("explorer_pt_cases");
    let units: std::collections::BTreeSet<String> = run.records().filter_map(|r| Some(r.throughput.as_ref()?.unit.clone())).collect();
    assert!(units.len() >= 4, "{units:?}");
    let panels = plots::panels(&run);
    // one throughput plot per unit, each holding only its unit's records
    let throughput: Vec<&plots::Panel> = panels.iter().filter(|p| p.metric == Metric::Throughput).collect();
    assert_eq!(throughput.iter().map(|p| p.unit.clone()).collect::<std::collections::BTreeSet<_>>(), units);
    let (_, xs) = plots::x_axis(&run, None);
    for p in &throughput {
        let plotted: usize = plots::series(&run, &xs, p).iter().map(|(_, s)| s.len()).sum();
        let of_unit = run.records().filter(|r| r.throughput.as_ref().is_some_and(|t| t.unit == p.unit)).count();
        assert_eq!(plotted, of_unit, "{}", p.unit);
    }
    let mut h = explorer_harness([1400.0, 1400.0]);
    h.state_mut().open_file(&path).unwrap();
    h.run();
    h.get_by_label("time per item (us/barrier)");
    for unit in units.iter().filter(|u| *u != "us/barrier") {
        h.get_by_label(&format!("throughput ({unit})"));
    }
    h.snapshot("explorer_pt_units");
}

#[test]
fn a_single_point_png_export_shows_what_the_screen_shows() {
    let (path, run) = fixture_run("explorer_flowshop_pools");
    assert_eq!(run.points.len(), 1);
    let mut h = explorer_harness([1400.0, 900.0]);
    h.state_mut().open_file(&path).unwrap();
    h.run();
    let (axis, xs) = plots::x_axis(&run, None);
    let plots::XAxis::Categories(names) = axis else { panic!("a single point is a category") };
    let figures = plots::figures(&run, None);
    let panels = plots::panels(&run);
    assert_eq!(figures.len(), panels.len());
    for (figure, panel) in figures.iter().zip(&panels) {
        // the same title, categories, series and values as the plot on screen
        h.get_by_label(&panel.title());
        assert_eq!(figure.y_label, panel.title());
        assert_eq!(figure.categories.as_ref(), Some(&names));
        let screen = plots::series(&run, &xs, panel);
        assert_eq!(figure.series.len(), screen.len());
        for (s, (name, points)) in figure.series.iter().zip(&screen) {
            assert_eq!(&s.name, name);
            assert_eq!(s.points, points.iter().map(|q| (q.x, q.y.value)).collect::<Vec<_>>());
            let spread: Vec<Option<(f64, f64)>> = points.iter().map(|q| (q.y.samples > 1).then_some((q.y.low, q.y.high))).collect();
            assert_eq!(s.spread, spread);
        }
        // drawn as bars: each series' colour covers an area, not a dot at x = 0
        let bytes = simtlab::report::png_bytes(figure).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut pixels).unwrap();
        assert_eq!((info.width, info.height), (800, 500));
        for (i, color) in [[31u8, 119, 180], [255, 127, 14], [44, 160, 44], [214, 39, 40]].iter().enumerate().take(screen.len()) {
            let count = pixels.chunks(3).filter(|p| p == color).count();
            assert!(count > 100, "{}: series {i} covers {count} pixels", figure.id);
        }
    }
}

#[test]
fn an_opened_cli_run_selects_its_own_workload() {
    // a record file as `simtlab run micro-if --json` writes it: the family, no workload name
    let gpu = simtlab::Gpu::new(&GpuOptions::default()).unwrap();
    let w = workload::find("micro-if").unwrap();
    let mut params = w.params(Scale::Tiny);
    params["n"] = 2048.into();
    let mut records = w.run(&gpu, &params, &simtlab::harness::Protocol { warmup: 0, samples: 2 }).unwrap();
    assert_eq!(records[0].family, "micro");
    // a live run's timings (and the build's hash) vary: fixed ones keep the snapshot comparable
    for (i, r) in records.iter_mut().enumerate() {
        let t = 1e-3 * (i + 1) as f64;
        r.stats.samples = vec![0.9 * t, 1.1 * t];
        (r.stats.min, r.stats.median, r.stats.mean, r.stats.max, r.stats.stddev) = (0.9 * t, t, t, 1.1 * t, 0.1 * t);
        if let Some(throughput) = r.throughput.as_mut() {
            throughput.value = 100.0 * (i + 1) as f64;
        }
        r.environment.git_hash = "0000000".into();
    }
    let dir = common::scratch("ui-cli-run");
    let file = dir.join("cli.json");
    simtlab::harness::write_json(&file, &records).unwrap();

    let mut h = explorer_harness([1400.0, 900.0]);
    h.state_mut().select_by_name("reduction").unwrap();
    h.run();
    h.state_mut().open_file(&file).unwrap();
    h.run();
    assert_eq!(h.state().workload().name(), "micro-if");
    assert_eq!(h.state().run().workload, "micro-if");
    assert_eq!(h.state_mut().params_mut()["n"], 2048);
    assert_eq!(h.state().samples, 2);
    assert_eq!(h.state().occupancy_kernel(), Some("micro/if_branch.wgsl:main"));
    h.get_by_label("micro-if — records");
    h.get_by_label_contains("from micro/if_branch.wgsl:main's WGSL");
    h.snapshot("explorer_opened_cli_run");
}

#[test]
fn the_occupancy_panel_follows_the_selected_point() {
    for (fixture, wanted) in [("explorer_pt_cases", "pt/"), ("explorer_matmul_ladder", "matmul/")] {
        let (path, run) = fixture_run(fixture);
        let mut h = explorer_harness([1400.0, 900.0]);
        h.state_mut().open_file(&path).unwrap();
        h.run();
        for (i, p) in run.points.iter().enumerate() {
            h.state_mut().select_point(i);
            h.run();
            let w = workload::find(&p.workload).unwrap();
            let Some(entry) = w.shader() else { continue };
            let kernel = format!("{}:{}", entry.file.path, entry.name);
            assert!(kernel.starts_with(wanted), "{kernel}");
            assert_eq!(h.state().occupancy_kernel(), Some(kernel.as_str()), "point {i}: {}", p.workload);
            h.get_by_label_contains(&format!("from {kernel}'s WGSL"));
        }
    }
    // a rung sized by an override constant, picked without a run: its own tile's launch
    let mut h = explorer_harness([1400.0, 900.0]);
    for (rung, threads) in [("matmul-tiled4", 16), ("matmul-tiled16", 256)] {
        h.state_mut().select_by_name(rung).unwrap();
        h.run();
        assert_eq!(h.state().occupancy_kernel(), Some("matmul/tiled.wgsl:main"), "{rung}");
        h.get_by_label_contains(&format!("from matmul/tiled.wgsl:main's WGSL ({threads} threads"));
    }
}

#[test]
fn parameters_and_metrics_say_what_they_are_on_hover() {
    let mut h = explorer_harness([1400.0, 900.0]);
    h.state_mut().select_by_name("micro-loop").unwrap();
    h.run();
    let spec = h.state().specs().iter().find(|s| s.key == "long").unwrap().clone();
    let explanation = spec.explanation("micro");
    assert_eq!(explanation, "loop: trip count of the long lanes (at least short)");
    h.get_all_by_label("long").next().unwrap().hover();
    h.run();
    assert!(h.get_all_by_label(explanation).count() >= 1);
    // a parameter the workload fixes says what it is too
    let pattern = h.state().specs().iter().find(|s| s.key == "pattern").unwrap().explanation("micro");
    h.get_by_label_contains("pattern: loop (set by the workload)").hover();
    h.run();
    assert!(h.get_all_by_label(pattern).count() >= 1);
    // the metrics: a plot title and a table column of a run
    let (path, _) = fixture_run("explorer_baseline_diff_run");
    h.state_mut().open_file(&path).unwrap();
    h.run();
    h.get_by_label("SIMT eff.").hover();
    h.run();
    assert!(h.get_all_by_label("SIMT efficiency: active lanes / (subgroup steps × subgroup width)").count() >= 1);
    h.get_by_label("median time (ms)").hover();
    h.run();
    assert!(h.get_all_by_label(Metric::TimeMs.explanation()).count() >= 1);
}
