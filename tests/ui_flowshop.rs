//! The live flow-shop view driven through its widgets: searches run to the end on the host
//! (CPU and GPU bounding) and resident on the default adapter (lavapipe here), their proofs
//! compared with `flowshop solve`'s, the Gantt chart checked against the processing times,
//! the progress series checked for a non-increasing incumbent above the bound; a cancelled
//! search; the DFS vs BFS pool panel against the workload's records.
//!
//! Update the snapshot with `UPDATE_SNAPSHOTS=true cargo test --test ui_flowshop`.

#![cfg(feature = "gui")]

mod common;

use std::time::{Duration, Instant};

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use serde_json::Value;
use simtlab::kernels::flowshop::commands;
use simtlab::kernels::flowshop::{makespan, Instance};
use simtlab::ui::explorer::flowshop::{FlowshopView, Gantt, InstanceChoice, Method, PoolBar, POOLS_WORKLOAD};
use simtlab::workload::{self, Scale};
use simtlab::{Gpu, GpuOptions};

fn view_harness(setup: impl FnOnce(&mut FlowshopView)) -> Harness<'static, FlowshopView> {
    let mut view = FlowshopView::new(&GpuOptions::default());
    setup(&mut view);
    Harness::builder().with_size([1100.0, 1000.0]).build_ui_state(|ui, v: &mut FlowshopView| v.ui(ui), view)
}

/// Steps the view until `busy` turns false (at most 300 s).
fn wait_while(h: &mut Harness<'_, FlowshopView>, busy: fn(&FlowshopView) -> bool) {
    let start = Instant::now();
    h.step();
    while busy(h.state()) {
        assert!(start.elapsed() < Duration::from_secs(300), "still running: {}", h.state().status());
        std::thread::sleep(Duration::from_millis(10));
        h.step();
    }
    h.run();
}

/// Clicks Solve and waits for the search; it must end without an error.
fn solve_through_the_widget(h: &mut Harness<'_, FlowshopView>) {
    h.run();
    h.get_by_label("Solve").click();
    wait_while(h, FlowshopView::is_running);
    assert!(h.state().error().is_none(), "search failed: {:?}", h.state().error());
}

/// `flowshop solve --json` on the view's settings (the command's library call).
fn solve_command(view: &FlowshopView, gpu: Option<&Gpu>) -> Value {
    serde_json::to_value(commands::solve(&view.solve_options(), gpu, None).unwrap()).unwrap()
}

/// The bars never overlap on a machine, each job visits the machines in order and the
/// machines take the jobs in the schedule's order, every bar lasts the job's processing time,
/// and the chart ends at the makespan the crate computes for the order.
fn check_gantt(instance: &Instance, gantt: &Gantt, reported: u32) {
    assert_eq!(gantt.bars.len(), instance.jobs * instance.machines);
    for bar in &gantt.bars {
        assert_eq!(bar.end - bar.start, instance.time(bar.machine, bar.job), "{bar:?}");
    }
    for machine in 0..instance.machines {
        let mut row: Vec<_> = gantt.bars.iter().filter(|b| b.machine == machine).collect();
        row.sort_by_key(|b| b.start);
        assert_eq!(row.iter().map(|b| b.job).collect::<Vec<_>>(), gantt.order, "machine {machine} runs the jobs in the schedule's order");
        for pair in row.windows(2) {
            assert!(pair[0].end <= pair[1].start, "overlap on machine {machine}: {:?}", pair);
        }
    }
    for job in 0..instance.jobs {
        let mut visits: Vec<_> = gantt.bars.iter().filter(|b| b.job == job).collect();
        visits.sort_by_key(|b| b.machine);
        for pair in visits.windows(2) {
            assert!(
                pair[0].end <= pair[1].start,
                "job {job} starts on machine {} before machine {} ends",
                pair[1].machine,
                pair[0].machine
            );
        }
    }
    let end = gantt.bars.iter().map(|b| b.end).max().unwrap();
    assert_eq!((end, gantt.makespan), (reported, reported));
    assert_eq!(makespan(instance, &gantt.order).unwrap(), reported);
}

/// The incumbent never rises, the bound never passes it, and a finished search closes with
/// the bound equal to the incumbent.
fn check_samples(view: &FlowshopView, optimum: u32) {
    let samples = view.samples();
    assert!(samples.len() >= 2, "a report and the result: {samples:?}");
    let incumbents: Vec<u32> = samples.iter().filter_map(|p| p.best).collect();
    assert!(incumbents.windows(2).all(|w| w[1] <= w[0]), "incumbent rose: {incumbents:?}");
    for p in samples {
        assert!(p.best.is_none_or(|b| p.lower_bound <= b), "bound above the incumbent: {p:?}");
        assert!(p.lower_bound <= optimum, "bound above the optimum: {p:?}");
    }
    assert!(samples.windows(2).all(|w| w[1].seconds >= w[0].seconds && w[1].nodes >= w[0].nodes));
    let last = samples.last().unwrap();
    assert_eq!((last.best, last.lower_bound, last.open), (Some(optimum), optimum, 0));
}

#[test]
fn host_search_proves_ta001_as_the_command_does_and_draws_its_schedule() {
    let mut h = view_harness(|v| {
        v.instance = InstanceChoice::Taillard(1);
        v.method = Method::HostCpu;
        v.pool = 64;
        v.heuristic_rounds = 0; // NEH's 1286: the search improves it
        v.progress_every = 0.0;
    });
    h.run();
    h.get_by_label("no search yet");
    solve_through_the_widget(&mut h);

    let expected = solve_command(h.state(), None);
    let run = h.state().results().unwrap();
    let s = &run.solution;
    assert!(s.optimal, "{s:?}");
    assert_eq!(s.makespan, Some(1278), "Taillard's optimum");
    assert_eq!(Value::from(s.makespan), expected["makespan"]);
    assert_eq!((Value::from(s.nodes), Value::from(s.leaves)), (expected["nodes"].clone(), expected["leaves"].clone()));
    assert!(s.nodes > 1000 && s.start_makespan > 1278, "a search that did work: {s:?}");
    check_gantt(&run.instance, run.gantt.as_ref().unwrap(), 1278);
    check_samples(h.state(), 1278);
    h.get_by_label_contains("makespan 1278 proven optimal");
    h.get_by_label("Gantt chart: 20 jobs on 5 machines, makespan 1278");
    h.get_by_label("status: proved optimal: makespan 1278");

    // the chart alone, for the snapshot (the search is deterministic, so is its schedule)
    let gantt = run.gantt.clone().unwrap();
    let mut chart = Harness::builder().with_size([760.0, 110.0]).build_ui_state(
        |ui, g: &mut Gantt| {
            g.ui(ui);
        },
        gantt,
    );
    chart.run();
    chart.snapshot("flowshop_gantt_ta001");
    // hovering the first bar of machine 0 names the schedule's first job, from time 0
    let area = chart.get_by_label("Gantt chart: 20 jobs on 5 machines, makespan 1278").rect();
    chart.hover_at(area.left_top() + egui::vec2(36.0, 8.0));
    chart.run();
    let first = chart.state().order[0];
    let instance = simtlab::kernels::flowshop::taillard(1).unwrap();
    chart.get_by_label_contains(&format!("job {first} on machine 0\nstart 0, end {}", instance.time(0, first)));
}

/// Every permutation of a small instance: the optimum by enumeration.
fn brute_force_optimum(instance: &Instance) -> u32 {
    fn visit(order: &mut Vec<usize>, k: usize, instance: &Instance, best: &mut u32) {
        if k == order.len() {
            *best = (*best).min(makespan(instance, order).unwrap());
            return;
        }
        for i in k..order.len() {
            order.swap(k, i);
            visit(order, k + 1, instance, best);
            order.swap(k, i);
        }
    }
    let mut best = u32::MAX;
    visit(&mut (0..instance.jobs).collect(), 0, instance, &mut best);
    best
}

#[test]
fn gpu_bounding_and_resident_searches_of_a_random_instance_reach_the_enumerated_optimum() {
    let choice = InstanceChoice::Random { jobs: 8, machines: 4, seed: 4242 };
    let instance = choice.instance().unwrap();
    let optimum = brute_force_optimum(&instance);
    let gpu = common::gpu();
    for method in [Method::HostGpu, Method::Resident] {
        let mut h = view_harness(|v| {
            v.instance = choice;
            v.method = method;
            v.pool = 4;
            v.heuristic_rounds = 0;
            v.progress_every = 0.0;
        });
        solve_through_the_widget(&mut h);
        let view = h.state();
        let run = view.results().unwrap();
        assert_eq!((run.solution.makespan, run.solution.optimal), (Some(optimum), true), "{method:?}: {:?}", run.solution);
        let expected = commands::solve_loaded(&view.solve_options(), &instance, &[&gpu], None, None).unwrap();
        assert_eq!((run.solution.nodes, run.solution.leaves), (expected.nodes, expected.leaves), "{method:?}");
        check_gantt(&instance, run.gantt.as_ref().unwrap(), optimum);
        check_samples(view, optimum);
        h.get_by_label(&format!("Gantt chart: 8 jobs on 4 machines, makespan {optimum}"));
    }
}

#[test]
fn cancel_stops_a_long_search_with_the_best_schedule_so_far() {
    let mut h = view_harness(|v| {
        v.instance = InstanceChoice::Taillard(21); // 20x20: minutes from a proof on a CPU
        v.method = Method::HostCpu;
        v.pool = 64;
        v.heuristic_rounds = 0;
        v.progress_every = 0.05;
    });
    h.run();
    h.get_by_label("Solve").click();
    let start = Instant::now();
    while h.state().samples().len() < 3 {
        assert!(start.elapsed() < Duration::from_secs(120), "no reports: {}", h.state().status());
        std::thread::sleep(Duration::from_millis(10));
        h.step();
    }
    assert!(h.state().is_running());
    let nodes_then = h.state().samples().last().unwrap().nodes;
    h.get_by_label("Cancel").click();
    let cancelled = Instant::now();
    wait_while(&mut h, FlowshopView::is_running);
    assert!(cancelled.elapsed() < Duration::from_secs(5), "cancel took {:?}", cancelled.elapsed());
    let run = h.state().results().unwrap();
    let s = &run.solution;
    assert!(!s.optimal && s.proven_lower_bound.is_none(), "{s:?}");
    assert_eq!(s.stopped.map(|x| x.to_string()).as_deref(), Some("interrupted"));
    assert!(s.nodes >= nodes_then && s.nodes > 0);
    let best = s.makespan.unwrap();
    check_gantt(&run.instance, run.gantt.as_ref().unwrap(), best);
    let last = h.state().samples().last().unwrap();
    // Taillard's ta021 optimum (2297, proven) lies between the bound and the incumbent
    assert!(last.lower_bound <= run.instance.upper_bound && run.instance.upper_bound <= best, "{last:?}");
    h.get_by_label(&format!("status: stopped (interrupted): best makespan {best}, not proven optimal"));
}

#[test]
fn pool_panel_plots_the_workloads_divergence_per_order() {
    let mut h = view_harness(|_| {});
    h.run();
    h.get_by_label("Measure pools").click();
    wait_while(&mut h, |v| v.pools.is_running());
    assert!(h.state().pools.error().is_none(), "{:?}", h.state().pools.error());
    let bars = h.state().pools.bars();

    let gpu = common::gpu();
    let entry = workload::find(POOLS_WORKLOAD).unwrap();
    let records = entry.run(&gpu, &entry.params(Scale::Tiny), &Scale::Tiny.protocol()).unwrap();
    assert!(records.iter().all(|r| r.check.passed));
    assert_eq!(bars, records.iter().filter_map(PoolBar::of).collect::<Vec<_>>());
    if gpu.caps().subgroup_size.is_none() {
        return;
    }
    assert_eq!(bars.len(), 4, "refactored and basic kernels on a DFS and a BFS pool: {bars:?}");
    for order in ["dfs", "bfs"] {
        assert_eq!(bars.iter().filter(|b| b.order == order).count(), 2);
    }
    // the basic kernel's data-dependent ifs diverge where the refactored one does not
    let of = |order: &str, kernel: &str| bars.iter().find(|b| b.order == order && b.label.starts_with(kernel)).unwrap().branch_efficiency;
    assert!(of("dfs", "basic") < 1.0 && of("dfs", "basic") < of("dfs", "refactored"), "{bars:?}");
    h.snapshot("flowshop_pools");
    for b in &bars {
        h.get_by_label_contains(&format!("{} {}: divergence ratio {:.3}", b.order.to_uppercase(), b.label, b.divergence_ratio));
    }
}
