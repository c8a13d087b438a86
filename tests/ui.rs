//! UI tests: the overlay widgets (with snapshot images rendered by wgpu, lavapipe here) and the
//! explorer driven through its widgets, kernels running on the default adapter.
//!
//! Update the snapshots with `UPDATE_SNAPSHOTS=true cargo test --test ui`.

#![cfg(feature = "gui")]

use std::time::{Duration, Instant};

use egui::accesskit::Role;
use egui_kittest::kittest::{NodeT, Queryable};
use egui_kittest::Harness;
use simtlab::divergence::{emulate_loops, Divergence};
use simtlab::kernels::micro::{self, Distribution, MicroConfig, Pattern};
use simtlab::occupancy::{find_arch, Launch};
use simtlab::ui::explorer::Explorer;
use simtlab::ui::overlay::{ColorBy, DivergenceOverlay, HeatMap, OccupancyPanel, Span, Timeline};
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

/// Steps the explorer until its run finishes.
fn wait_for_run(h: &mut Harness<'_, Explorer>) {
    let start = Instant::now();
    h.step();
    while h.state().is_running() {
        assert!(start.elapsed() < Duration::from_secs(300), "run did not finish: {}", h.state().status());
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    h.run();
    assert!(h.state().error().is_none(), "run failed: {:?}", h.state().error());
}

fn explorer_harness() -> Harness<'static, Explorer> {
    let explorer = Explorer::new(&GpuOptions::default());
    assert!(!explorer.adapter_labels().is_empty(), "no adapter");
    Harness::builder().with_size([1280.0, 800.0]).build_ui_state(|ui, e: &mut Explorer| e.ui(ui), explorer)
}

#[test]
fn explorer_runs_the_micro_loop_and_shows_before_and_after() {
    let mut h = explorer_harness();
    h.run();
    h.get_by_label("no run yet");
    h.get_by_label("sweep one parameter").click();
    h.run();
    h.get_by_role_and_label(Role::Slider, "threads").set_value_accesskit(4096.0);
    h.run();
    h.get_by_label("Run").click();
    wait_for_run(&mut h);

    let e = h.state();
    assert_eq!(e.results().len(), 1);
    let p = &e.results()[0];
    assert!(p.plain.check_passed && p.remapped.as_ref().is_some_and(|r| r.check_passed));
    let before = &p.plain.divergence;
    let after = &p.remapped.as_ref().unwrap().divergence;
    assert!(before.warps > 0 && before.divergence_ratio() > 0.0);
    assert!(after.divergence_ratio() < before.divergence_ratio(), "{} !< {}", after.divergence_ratio(), before.divergence_ratio());
    let heat = format!("heat map: {} warps of {} lanes", before.warps, before.width);
    assert!(h.query_by_label("no run yet").is_none());
    assert_eq!(h.get_all_by_label_contains(&heat).count(), 2);
    h.get_by_label("after remapping");
    h.get_by_label_contains("status: done: 1 point(s)");
}

#[test]
fn explorer_sweeps_the_micro_if_and_updates_occupancy() {
    let mut h = explorer_harness();
    h.run();
    // pick the family through its combo box
    h.get_by_label("kernel family").click();
    h.run();
    h.get_by_label("micro if").click();
    h.run();
    assert_eq!(h.state().family().name, "micro if");
    h.get_by_role_and_label(Role::Slider, "divergence probability p");
    h.get_by_role_and_label(Role::Slider, "threads").set_value_accesskit(2048.0);
    h.get_by_role_and_label(Role::Slider, "points").set_value_accesskit(3.0);
    h.run();

    // the occupancy panel follows the kernel's WGSL (256 threads) on the default H100 preset
    h.get_by_label_contains("from micro/if_branch.wgsl's WGSL (256 threads");
    h.get_by_label("active blocks per SM: 8");
    h.get_by_role_and_label(Role::Slider, "registers per thread").set_value_accesskit(128.0);
    h.run();
    h.get_by_label("active blocks per SM: 2");
    h.get_by_label("occupancy: 25 %");

    h.get_by_label("Run").click();
    wait_for_run(&mut h);
    let e = h.state();
    assert_eq!(e.results().len(), 3);
    let ratios: Vec<f64> = e.results().iter().map(|r| r.plain.divergence.divergence_ratio()).collect();
    // p = 0 and p = 1 never diverge; p = 0.5 with random values almost always does
    assert_eq!((ratios[0], ratios[2]), (0.0, 0.0), "{ratios:?}");
    assert!(ratios[1] > 0.9, "{ratios:?}");
    let last = &e.results()[2].plain.divergence;
    h.get_by_label(&format!("heat map: {} warps of {} lanes, 1 per cell", last.warps, last.width));
    h.get_by_label_contains("status: done: 3 point(s)");
    h.get_by_label("divergence ratio at W = 32 for random values: 1.000");
}
