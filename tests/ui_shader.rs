//! The "your own shader" view driven through its widgets on the default adapter (lavapipe
//! here): the numbers it shows against `simtlab::profile` and the app-side `Profiler` run
//! directly on the same inputs, the
//! line colours against the efficiency order, the sort, cancel, errors as the command line
//! prints them, and a snapshot. Kernels written against the persistent-threads module run
//! through its runtime: a work list on lavapipe, and on GL a barrier kernel refused.
//!
//! Update the snapshot with `UPDATE_SNAPSHOTS=true cargo test --test ui_shader`.

#![cfg(feature = "gui")]

mod common;

use std::time::{Duration, Instant};

use egui::accesskit::Role;
use egui_kittest::kittest::{by, NodeT, Queryable};
use egui_kittest::Harness;
use simtlab::gpu::BufferKind;
use simtlab::profile::{self, BindingSpec, ProfileRequest, ProfileRun, ShaderDispatch};
use simtlab::pt::Tier;
use simtlab::ui::explorer::shader::{efficiency_color, ShaderView, SourceMetric};
use simtlab::{Gpu, GpuOptions};

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/profile/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn harness(view: ShaderView) -> Harness<'static, ShaderView> {
    Harness::builder().with_size([1280.0, 900.0]).build_ui_state(|ui, v: &mut ShaderView| v.ui(ui), view)
}

/// A view with `file` loaded (by its path relative to the package, as the snapshot shows it),
/// `binds` typed into its fields and `workgroups` set.
fn loaded(file: &str, workgroups: u32, binds: &[(&str, &str)]) -> ShaderView {
    let mut view = ShaderView::new(&GpuOptions::default());
    view.load_file(&format!("tests/fixtures/profile/{file}")).unwrap();
    assert_eq!(view.entries(), ["main"]);
    view.workgroups = [workgroups, 1, 1];
    view.samples = 1;
    for (key, spec) in binds {
        view.set_binding(key, spec).unwrap();
    }
    view
}

/// The same shader and specs through `profile::profile` on a GPU of the test's own.
fn reference(file: &str, workgroups: u32, binds: &[(&str, &str)]) -> ProfileRun {
    let (gpu, _) = common::gpu_with_subgroups().expect("checked by the caller");
    let wgsl = std::fs::read_to_string(fixture(file)).unwrap();
    let bindings = binds.iter().map(|(k, s)| (k.to_string(), s.parse::<BindingSpec>().unwrap())).collect();
    let request = ProfileRequest::new(ShaderDispatch { bindings, ..ShaderDispatch::new(file, &wgsl, "main", [workgroups, 1, 1]) });
    profile::profile(&gpu, &request).unwrap()
}

/// The counts of one dispatch of `file` with `binds` through the app-side `Profiler`: the app's
/// own pipeline from `probe.shader()`, its buffers from the same specs, one frame.
fn profiler_counts(file: &str, workgroups: u32, binds: &[(&str, &str)]) -> profile::Counts {
    let (gpu, _) = common::gpu_with_subgroups().expect("checked by the caller");
    let wgsl = std::fs::read_to_string(fixture(file)).unwrap();
    let (module, info) = profile::parse(file, &wgsl).unwrap();
    let bindings = profile::entry_bindings(&wgsl, &module, &info, "main").unwrap();
    let given: Vec<(String, BindingSpec)> = binds.iter().map(|(k, s)| (k.to_string(), s.parse().unwrap())).collect();
    let data = profile::contents(&bindings, &given).unwrap();
    let options = profile::ProfilerOptions { workgroups: [workgroups, 1, 1], ..Default::default() };
    let mut probe = profile::Profiler::instrument(gpu.device(), &wgsl, "main", &options).unwrap();
    let shader = gpu
        .device()
        .create_shader_module(wgpu::ShaderModuleDescriptor { label: None, source: wgpu::ShaderSource::Wgsl(probe.shader().into()) });
    let pipeline = gpu.device().create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &shader,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let buffers: Vec<_> = data.iter().map(|bytes| gpu.buffer::<u8>("input", bytes, BufferKind::Storage).unwrap().buffer).collect();
    // every fixture binds group 0 only
    let entries: Vec<wgpu::BindGroupEntry> = bindings
        .iter()
        .zip(&buffers)
        .map(|(b, buffer)| wgpu::BindGroupEntry { binding: b.binding, resource: buffer.as_entire_binding() })
        .collect();
    let app_group = gpu.device().create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    let probe_group = probe.bind_group_for(&pipeline);
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, Some(&app_group), &[]);
        pass.set_bind_group(probe.group(), Some(&probe_group), &[]);
        pass.dispatch_workgroups(workgroups, 1, 1);
    }
    assert!(probe.resolve(&mut encoder));
    gpu.queue().submit([encoder.finish()]);
    let start = Instant::now();
    loop {
        if let Some(counts) = probe.try_finish().unwrap() {
            return counts;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "the probe never finished");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Clicks Profile and steps the view until the run ends.
fn profile_in_view(h: &mut Harness<'_, ShaderView>) {
    click_profile_and_wait(h);
    assert!(h.state().error().is_none(), "profile failed: {:?}", h.state().error());
}

fn click_profile_and_wait(h: &mut Harness<'_, ShaderView>) {
    h.get_by_label("Profile").click();
    h.step();
    let start = Instant::now();
    while h.state().is_running() {
        assert!(start.elapsed() < Duration::from_secs(300), "the profile did not finish: {}", h.state().status());
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    h.run();
}

/// The site table as shown: every label after its header, nine cells a row.
fn table_rows(h: &Harness<'_, ShaderView>) -> Vec<Vec<String>> {
    let labels: Vec<String> =
        h.query_all(by().role(Role::Label)).map(|n| n.accesskit_node().value().unwrap_or_default().to_string()).collect();
    let header = labels.iter().position(|l| l == "divergent\nsubgroups").expect("the site table's header");
    assert_eq!(labels[header + 1], "SIMT\neff.", "the efficiency header is a button between the two");
    let sites = h.state().result().unwrap().sites.len();
    labels[header + 2..header + 2 + 9 * sites].chunks(9).map(|c| c.to_vec()).collect()
}

/// What the table must show for `run`, computed here from its counts.
fn expected_rows(run: &ProfileRun) -> Vec<Vec<String>> {
    let subgroups = run.counts.per_subgroup.len() / run.counts.sites;
    let active = run.summary.subgroups;
    (0..run.sites.len())
        .map(|s| {
            let c = run.counts.totals()[s];
            let site = &run.sites[s];
            let divergent_in = (0..subgroups)
                .filter(|g| {
                    let c = run.counts.per_subgroup[g * run.counts.sites + s];
                    c.uniform_evaluations < c.evaluations
                })
                .count();
            let branch = if c.evaluations == 0 { 1.0 } else { c.uniform_evaluations as f64 / c.evaluations as f64 };
            vec![
                s.to_string(),
                site.line.to_string(),
                site.kind.name().to_string(),
                if site.source.chars().count() > 32 {
                    site.source.chars().take(31).collect::<String>() + "…"
                } else {
                    site.source.clone()
                },
                c.evaluations.to_string(),
                (c.evaluations - c.uniform_evaluations).to_string(),
                format!("{divergent_in} of {active}"),
                format!("{:.1} %", 100.0 * branch),
                format!("{:.1} %", 100.0 * c.simt_efficiency(run.counts.width)),
            ]
        })
        .collect()
}

const COLLATZ_BINDS: [(&str, &str); 2] = [("values", "u32:512:random:11"), ("steps", "u32:512:zero")];
const MANDELBROT_BINDS: [(&str, &str); 1] = [("iterations", "u32:4096:zero")];

#[test]
fn the_numbers_shown_are_those_of_the_profile_run_directly() {
    if common::gpu_with_subgroups().is_none() {
        return;
    }
    for (file, workgroups, binds) in [("collatz.wgsl", 8, &COLLATZ_BINDS[..]), ("mandelbrot.wgsl", 64, &MANDELBROT_BINDS[..])] {
        let mut h = harness(loaded(file, workgroups, binds));
        h.run();
        h.get_by_label("no profile yet: load a shader, give its bindings and press Profile");
        profile_in_view(&mut h);
        let expected = reference(file, workgroups, binds);
        let shown = h.state().result().unwrap();
        assert_eq!(shown.counts, expected.counts, "{file}: the view's counts");
        assert_eq!(shown.counts, profiler_counts(file, workgroups, binds), "{file}: the Profiler's counts");
        assert_eq!(shown.summary.sites, expected.summary.sites, "{file}");
        assert!(shown.outputs_identical);
        // the inputs must diverge for the comparison to mean something
        assert!(expected.summary.divergent_subgroups > 0, "{file}: {:?}", expected.summary);
        assert_eq!(table_rows(&h), expected_rows(&expected), "{file}: the site table");
        let s = &expected.summary;
        h.get_by_label(&format!(
            "SIMT efficiency {:.1} % · branch efficiency {:.1} % · divergent subgroups {} of {} (ratio {:.3})",
            100.0 * s.simt_efficiency,
            100.0 * s.branch_efficiency,
            s.divergent_subgroups,
            s.subgroups,
            s.divergence_ratio
        ));
        h.get_by_label(&format!("heat map: {} warps of {} lanes, 1 per cell", s.subgroups, s.subgroup_width));
    }
}

#[test]
fn every_binding_gets_a_default_spec_that_runs() {
    if common::gpu_with_subgroups().is_none() {
        return;
    }
    let mut view = ShaderView::new(&GpuOptions::default());
    view.load_file("tests/fixtures/profile/collatz.wgsl").unwrap();
    view.samples = 1;
    // 16 workgroups of 64: random inputs, zeroed outputs, one element per invocation
    let specs: Vec<(&str, &str)> = view.bindings().iter().map(|f| (f.info.name.as_str(), f.spec.as_str())).collect();
    assert_eq!(specs, [("values", "u32:1024:random:1"), ("steps", "u32:1024:zero")]);
    let mut h = harness(view);
    profile_in_view(&mut h);
    let run = h.state().result().unwrap();
    assert_eq!(run.summary.subgroups, 1024 / run.summary.subgroup_width as u64);
    let expected = reference("collatz.wgsl", 16, &[("values", "u32:1024:random:1"), ("steps", "u32:1024:zero")]);
    assert_eq!(run.counts, expected.counts);
}

#[test]
fn lines_are_coloured_by_efficiency_and_hover_shows_the_sites_counts() {
    if common::gpu_with_subgroups().is_none() {
        return;
    }
    let mut h = harness(loaded("collatz.wgsl", 8, &COLLATZ_BINDS));
    profile_in_view(&mut h);
    let run = h.state().result().unwrap().clone();
    let rows = &run.summary.sites;
    assert_eq!(rows.len(), 4, "call, the bounds if, the loop test and the if in the helper");
    let worst = efficiency_color(0.0);
    let distance = |c: egui::Color32| {
        let d = |a: u8, b: u8| (a as f64 - b as f64).powi(2);
        (d(c.r(), worst.r()) + d(c.g(), worst.g()) + d(c.b(), worst.b())).sqrt()
    };
    // by default every probed line has the colour of its SIMT efficiency: the loop whose lanes
    // leave one by one is red though its test is mostly uniform
    assert_eq!(h.state().source_metric, SourceMetric::SimtEfficiency);
    let loop_row = rows.iter().find(|r| r.place.source == "n != 1u").unwrap();
    assert_eq!(h.state().line_color(loop_row.place.line), Some(efficiency_color(loop_row.simt_efficiency)));
    assert!(loop_row.simt_efficiency < loop_row.branch_efficiency - 0.2, "{loop_row:?}");
    h.get_by_label("SIMT efficiency: 0 %");
    let shown = h.get_by_label_contains("while (n != 1u) {").value().unwrap_or_default();
    assert!(shown.starts_with(&format!("{:>5.1} %", 100.0 * loop_row.simt_efficiency)), "{shown}");
    // the picker switches the view to branch efficiency
    h.get_by_label("branch efficiency").click();
    h.run();
    assert_eq!(h.state().source_metric, SourceMetric::BranchEfficiency);
    // every probed line has the colour of its efficiency; lines without a site have none
    let mut by_efficiency: Vec<(f64, f64)> = Vec::new();
    for r in rows {
        let color = h.state().line_color(r.place.line).expect("a probed line is coloured");
        assert_eq!(color, efficiency_color(r.branch_efficiency), "line {}", r.place.line);
        by_efficiency.push((r.branch_efficiency, distance(color)));
    }
    let unprobed = (1..30).find(|l| rows.iter().all(|r| r.place.line != *l)).unwrap();
    assert_eq!(h.state().line_color(unprobed), None);
    // the less efficient a line, the nearer its colour to the scale's 0 % end
    by_efficiency.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert!(by_efficiency[0].0 < by_efficiency[3].0, "the sites must differ: {by_efficiency:?}");
    for pair in by_efficiency.windows(2) {
        assert!(pair[0].0 == pair[1].0 || pair[0].1 < pair[1].1, "{by_efficiency:?}");
    }
    h.get_by_label("branch efficiency: 0 %");

    // hovering the loop's line shows its counts
    h.get_by_label_contains("while (n != 1u) {").hover();
    h.run();
    let c = loop_row.counts;
    let per_site = run.counts.divergent_subgroups()[loop_row.site];
    h.get_by_label_contains(&format!(
        "evaluations: {}\ndivergent evaluations: {}\ndivergent subgroups: {per_site} of {}\nbranch efficiency: {:.1} %",
        c.evaluations,
        c.evaluations - c.uniform_evaluations,
        run.summary.subgroups,
        100.0 * loop_row.branch_efficiency
    ));
    h.snapshot("shader_view_collatz");
}

#[test]
fn the_site_table_sorts_by_efficiency() {
    if common::gpu_with_subgroups().is_none() {
        return;
    }
    let mut h = harness(loaded("collatz.wgsl", 8, &COLLATZ_BINDS));
    profile_in_view(&mut h);
    let efficiencies = |h: &Harness<'_, ShaderView>| -> Vec<f64> {
        table_rows(h).iter().map(|r| r[7].trim_end_matches(" %").parse::<f64>().unwrap()).collect()
    };
    let source_order: Vec<String> = table_rows(&h).iter().map(|r| r[0].clone()).collect();
    assert_eq!(source_order, ["0", "1", "2", "3"]);
    h.get_by_label("branch\neff.").click();
    h.run();
    let up = efficiencies(&h);
    assert!(up.windows(2).all(|p| p[0] <= p[1]) && up[0] < up[3], "{up:?}");
    h.get_by_label("branch eff.\nlowest first").click();
    h.run();
    let down = efficiencies(&h);
    assert!(down.windows(2).all(|p| p[0] >= p[1]), "{down:?}");
    h.get_by_label("branch eff.\nhighest first");
}

/// What `simtlab profile` writes to stderr for `args`.
fn cli_error(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_simtlab")).arg("profile").args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    String::from_utf8_lossy(&out.stderr).trim().to_string()
}

#[test]
fn errors_read_as_the_command_line_prints_them() {
    let collatz = fixture("collatz.wgsl");
    let mut h = harness(loaded("collatz.wgsl", 2, &[("values", "u32:lots:random:3"), ("steps", "u32:128:zero")]));
    h.run();
    h.get_by_label("Profile").click();
    h.run();
    assert!(!h.state().is_running());
    let cli = cli_error(&[&collatz, "--workgroups", "2", "--bind", "values=u32:lots:random:3", "--bind", "steps=u32:128:zero"]);
    assert!(cli.starts_with("error: invalid binding spec: 'u32:lots:random:3'"), "{cli}");
    assert_eq!(h.state().error(), Some(cli.as_str()));
    h.get_by_label(&cli);

    // a spec of the wrong type: found on the worker, the same message
    if common::gpu_with_subgroups().is_some() {
        h.state_mut().set_binding("values", "f32:128:random:1").unwrap();
        click_profile_and_wait(&mut h);
        let cli = cli_error(&[&collatz, "--workgroups", "2", "--bind", "values=f32:128:random:1", "--bind", "steps=u32:128:zero"]);
        assert!(cli.starts_with("error: invalid --bind: binding 0:0 'values' (var<storage, read> values: array<u32>) holds u32"), "{cli}");
        // the explorer names the field the command line sets with --bind
        assert_eq!(h.state().error(), Some(cli.replacen("invalid --bind:", "invalid bindings:", 1).as_str()));
    }

    // WGSL naga rejects: the file, line and column
    let dir = common::scratch("ui-shader-bad-wgsl");
    let bad = dir.join("bad.wgsl");
    std::fs::write(&bad, std::fs::read_to_string(&collatz).unwrap().replace("return n / 2u;", "return n / 2u")).unwrap();
    let bad = bad.to_str().unwrap();
    let mut view = ShaderView::new(&GpuOptions::default());
    view.load_file(bad).unwrap();
    let cli = cli_error(&[bad, "--workgroups", "2", "--bind", "values=u32:128:seq", "--bind", "steps=u32:128:zero"]);
    let line: usize = cli.strip_prefix(&format!("error: {bad}:")).and_then(|r| r.split(':').next()).unwrap().parse().unwrap();
    assert!((7..=8).contains(&line), "the missing ';' after line 7: {cli}");
    assert_eq!(view.error(), Some(cli.as_str()));
}

#[test]
fn a_run_reports_progress_and_cancels() {
    if common::gpu_with_subgroups().is_none() {
        return;
    }
    // 256 rows of 1024 pixels: long enough per run that the cancel lands mid-way
    let mut view = loaded("mandelbrot.wgsl", 4096, &[("iterations", "u32:262144:zero")]);
    view.samples = 20;
    let mut h = harness(view);
    h.get_by_label("Profile").click();
    h.step();
    let start = Instant::now();
    while h.state().progress().is_none() {
        assert!(start.elapsed() < Duration::from_secs(60), "no progress: {}", h.state().status());
        std::thread::sleep(Duration::from_millis(5));
        h.step();
    }
    let step = h.state().progress().unwrap().clone();
    assert_eq!(step.total, 22, "3 steps and one per timed sample after the first");
    h.get_by_label("Cancel").click();
    h.step();
    while h.state().is_running() {
        assert!(start.elapsed() < Duration::from_secs(120), "cancel did not stop the run");
        std::thread::sleep(Duration::from_millis(5));
        h.step();
    }
    assert_eq!(h.state().status(), "cancelled");
    assert!(h.state().result().is_none() && h.state().error().is_none());
}

/// Clicks Run (a persistent-threads kernel) and steps the view until the run ends.
fn run_in_view(h: &mut Harness<'_, ShaderView>) {
    h.get_by_label("Run").click();
    h.step();
    let start = Instant::now();
    while h.state().is_running() {
        assert!(start.elapsed() < Duration::from_secs(300), "the run did not finish: {}", h.state().status());
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    h.run();
}

#[test]
fn a_work_list_kernel_runs_through_the_persistent_threads_runtime() {
    let mut view = ShaderView::new(&GpuOptions::default());
    view.load_file("tests/fixtures/pt/worklist.wgsl").unwrap();
    assert_eq!(view.error(), None);
    assert_eq!(view.entries(), ["worklist"]);
    assert_eq!(view.persistent_tier(), Some(Tier::NonBlocking));
    // the kernel's own bindings only: the runtime binds the module's group
    let names: Vec<&str> = view.bindings().iter().map(|f| f.info.name.as_str()).collect();
    assert_eq!(names, ["seed", "cost", "result"]);
    view.samples = 1;
    for (key, spec) in [("seed", "u32:1000:seq"), ("cost", "u32:1000:seq"), ("result", "u32:1000:zero")] {
        view.set_binding(key, spec).unwrap();
    }
    let mut h = harness(view);
    h.run();
    h.get_by_label_contains("persistent threads: 'worklist' needs tier 1 (non-blocking)");
    run_in_view(&mut h);
    assert_eq!(h.state().error(), None, "status: {}", h.state().status());
    assert!(h.state().result().is_none(), "not through the profiler");
    let run = h.state().pt_result().expect("a persistent-threads run").clone();
    assert_eq!(run.plan.used, Tier::NonBlocking);
    let launched: u32 = run.workgroups.iter().product();
    assert!(run.participants > 0 && run.participants == launched, "{} of {launched}", run.participants);
    h.get_by_label(&format!("tier 1 (non-blocking) ran · {launched} workgroups launched, {launched} participating"));
    h.get_by_label("fallback: none");
    h.get_by_label_contains("time (");
    // item i runs i % 64 rounds of the hash chain from i
    let expected: Vec<u32> = (0..1000u32)
        .map(|i| {
            (0..i % 64).fold(i, |x, _| {
                let x = x.wrapping_mul(1664525).wrapping_add(1013904223);
                x ^ (x >> 15)
            })
        })
        .collect();
    assert_eq!(run.output_u32("result").unwrap(), expected);
    let first: Vec<String> = expected.iter().take(8).map(u32::to_string).collect();
    h.get_by_label(&format!("result (1000 words): {}, …", first.join(", ")));
    assert_eq!(h.state().status(), format!("done: tier 1 (non-blocking), {launched} of {launched} workgroups participating"));
}

#[test]
fn on_gl_a_barrier_kernel_shows_the_runtimes_refusal() {
    let options = GpuOptions { backend: Some("gl".into()), ..Default::default() };
    if let Err(e) = Gpu::new(&options) {
        eprintln!("skipped: no GL adapter ({e})");
        return;
    }
    let mut view = ShaderView::new(&options);
    view.load_file("tests/fixtures/pt/bfs.wgsl").unwrap();
    assert_eq!(view.error(), None);
    assert_eq!(view.persistent_tier(), Some(Tier::Blocking));
    view.samples = 1;
    for (key, spec) in [("offsets", "u32:2:zero"), ("edges", "u32:1:zero"), ("level", "u32:1:zero"), ("counts", "u32:8:zero")] {
        view.set_binding(key, spec).unwrap();
    }
    let mut h = harness(view);
    h.run();
    h.get_by_label_contains("needs tier 2 (blocking), waits: pt_global_barrier at tests/fixtures/pt/bfs.wgsl:47");
    run_in_view(&mut h);
    assert!(h.state().pt_result().is_none() && h.state().result().is_none(), "refused, not run");
    let error = h.state().error().expect("the refusal").to_string();
    for part in [
        "error: ",
        "'bfs' of tests/fixtures/pt/bfs.wgsl waits for other workgroups",
        "a blocking wait is not supported on",
        "Split the kernel at its global barriers",
        "pt_claim",
    ] {
        assert!(error.contains(part), "missing '{part}' in: {error}");
    }
    h.get_by_label(&error);
    assert_eq!(h.state().status(), "failed");
}

#[test]
fn remap_shows_the_heat_maps_before_and_after_with_identical_outputs() {
    if common::gpu_with_subgroups().is_none() {
        return;
    }
    let mut view = ShaderView::new(&GpuOptions::default());
    view.load_file("tests/fixtures/remap/newton_tolerance.wgsl").unwrap();
    view.workgroups = [32, 1, 1];
    view.samples = 1;
    // work = [0]: the inner loop runs no step, the Newton iteration still varies per element
    for (key, spec) in [("values", "f32:2048:random:13"), ("roots", "f32:2048:zero"), ("work", "u32:1:zero")] {
        view.set_binding(key, spec).unwrap();
    }
    view.remap.strategy = simtlab::remap::Strategy::GpuRegroup;
    let mut h = harness(view);
    h.get_by_label("Remap").click();
    h.step();
    let start = Instant::now();
    while h.state().remap.is_running() {
        assert!(start.elapsed() < Duration::from_secs(300), "the remap did not finish: {}", h.state().remap.status());
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    h.run();
    assert!(h.state().remap.error().is_none(), "{:?}", h.state().remap.error());
    let run = h.state().remap.result().unwrap().clone();
    assert_eq!(run.strategy, simtlab::remap::Strategy::GpuRegroup);
    assert!(run.outputs_identical && run.after.simt_efficiency >= 0.8, "{}", run.after.simt_efficiency);
    // the view shows the run's figures: efficiencies after at least 80 %, outputs identical
    let percent = |label: &str| -> f64 {
        let node = h.get_by_label_contains(label);
        let text = node.accesskit_node().label().or(node.accesskit_node().value()).unwrap_or_default().to_string();
        text.trim_start_matches(label).trim_end_matches(" %").trim().parse().unwrap_or_else(|_| panic!("'{text}'"))
    };
    let after = percent("remapped: SIMT efficiency");
    assert!(after >= 80.0, "{after}");
    assert_eq!(format!("{after:.1}"), format!("{:.1}", 100.0 * run.after.simt_efficiency));
    let before = percent("as written: SIMT efficiency");
    assert_eq!(format!("{before:.1}"), format!("{:.1}", 100.0 * run.before.simt_efficiency));
    assert!(before < after - 10.0, "{before} -> {after}");
    h.get_by_label(&format!("after: {:.1} %", 100.0 * run.after.simt_efficiency));
    h.get_by_label("outputs identical: every writable binding, as written and remapped");
    h.get_by_label("decision: gpu");
    // the measurement taught the model, for the next remap in the tab
    assert_eq!(run.lessons.len(), 1);
    assert_eq!(h.state().remap.calibration(), &run.calibration);
    assert_eq!(run.calibration.get(simtlab::remap::Strategy::GpuRegroup).map(|l| l.runs), Some(1));
    // the two heat maps, side by side: one cell per subgroup each
    let maps: Vec<_> = h.query_all(by().role(Role::Image)).filter_map(|n| n.accesskit_node().label().map(|l| l.to_string())).collect();
    assert_eq!(maps.iter().filter(|l| l.starts_with("heat map: 256 warps of 8 lanes")).count(), 2, "{maps:?}");
    h.snapshot("shader_view_remap");
    h.get_by_label("why (the model's prediction and what was measured)").click();
    h.run();
    h.get_by_label(&format!("learned on this adapter: {}", run.lessons[0]));
}

/// The editor's node (the one multi-line text input of the view).
fn editor<'a>(h: &'a Harness<'_, ShaderView>) -> egui_kittest::Node<'a> {
    h.get_by_role(Role::MultilineTextInput)
}

#[test]
fn typing_a_whole_shader_keeps_the_editor_focused() {
    let wgsl = std::fs::read_to_string(fixture("collatz.wgsl")).unwrap();
    let mut h = harness(ShaderView::new(&GpuOptions::default()));
    h.run();
    editor(&h).click();
    h.run();
    let top = editor(&h).rect().top();
    // line by line, as typed: every partial shader shows its error below the editor, which
    // keeps its focus and its place (the binding fields come above it once the shader is whole)
    let mut errors = 0;
    for (i, line) in wgsl.lines().enumerate() {
        if i > 0 {
            h.key_press(egui::Key::Enter);
        }
        h.event(egui::Event::Text(line.to_string()));
        h.run();
        assert!(editor(&h).is_focused(), "focus lost after line {}: {line}", i + 1);
        if let Some(e) = h.state().error() {
            errors += 1;
            assert_eq!(editor(&h).rect().top(), top, "the editor moved after line {}", i + 1);
            assert!(h.get_by_label(e).rect().top() > editor(&h).rect().bottom(), "the error shows below the editor");
        }
    }
    assert!(errors > 0, "a partial shader has an error on the way");
    assert_eq!(editor(&h).value().as_deref(), Some(wgsl.trim_end()));
    assert_eq!(h.state().error(), None);
    assert_eq!(h.state().entries(), ["main"]);
    let names: Vec<&str> = h.state().bindings().iter().map(|b| b.info.name.as_str()).collect();
    assert_eq!(names, ["values", "steps"]);
    h.snapshot("shader_editor_typed");
}

#[test]
fn a_paste_fills_the_editor_and_finds_the_entry_point() {
    let wgsl = std::fs::read_to_string(fixture("collatz.wgsl")).unwrap();
    let mut h = harness(ShaderView::new(&GpuOptions::default()));
    h.run();
    editor(&h).click();
    h.run();
    h.event(egui::Event::Paste(wgsl.clone()));
    h.run();
    assert!(editor(&h).is_focused());
    assert_eq!(editor(&h).value().as_deref(), Some(wgsl.as_str()));
    assert_eq!(h.state().error(), None);
    assert_eq!(h.state().entries(), ["main"]);
    assert_eq!(h.state().bindings().len(), 2);
    h.snapshot("shader_editor_pasted");
}

#[test]
fn the_probe_cost_carries_its_noise() {
    if common::gpu_with_subgroups().is_none() {
        return;
    }
    let mut view = loaded("collatz.wgsl", 8, &COLLATZ_BINDS);
    view.samples = 5;
    let mut h = harness(view);
    profile_in_view(&mut h);
    h.get_by_label("GPU time").click();
    h.run();
    let run = h.state().result().unwrap().clone();
    assert_eq!((run.plain_stats.samples.len(), run.instrumented_stats.samples.len()), (5, 5));
    assert_eq!((run.plain_stats.median, run.instrumented_stats.median), (run.plain.seconds, run.instrumented.seconds));
    // both times with their fastest and slowest runs and count, as the plots and tables give them
    let line = simtlab::ui::explorer::shader::probe_cost(&run);
    let fmt = simtlab::harness::format_seconds;
    let range = |s: &simtlab::harness::Stats| format!("{}–{}, n = 5", fmt(s.min), fmt(s.max));
    assert!(line.contains(&format!("{} plain ({})", fmt(run.plain_stats.median), range(&run.plain_stats))), "{line}");
    assert!(line.contains(&format!("{} instrumented ({})", fmt(run.instrumented_stats.median), range(&run.instrumented_stats))), "{line}");
    assert!(line.contains("; the probe adds ") || line.contains("; the probe's cost is within noise ("), "{line}");
    h.get_by_label(&line);
}
