//! The explorer in a test harness: at the tiny scale on the default adapter, runs awaited
//! through its widgets, and runs kept in `tests/fixtures/` so that snapshots do not change
//! with measured times.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use simtlab::ui::explorer::Explorer;
use simtlab::workload::Scale;
use simtlab::GpuOptions;

/// The window size of the explorer's snapshots: wide enough for the side panel.
pub const WINDOW: [f32; 2] = [1400.0, 900.0];

/// Steps the explorer until its run finishes; the run must not fail.
pub fn wait_for_run(h: &mut Harness<'_, Explorer>) {
    let failed = finish_run(h);
    assert!(failed.is_none(), "run failed: {failed:?}");
}

/// Steps the explorer until its run finishes (at most 300 s); returns its error, if any.
pub fn finish_run(h: &mut Harness<'_, Explorer>) -> Option<String> {
    let start = Instant::now();
    h.step();
    while h.state().is_running() {
        assert!(start.elapsed() < Duration::from_secs(300), "run did not finish: {}", h.state().status());
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
    h.run();
    h.state().error().map(String::from)
}

/// The explorer at the tiny scale, one sample per point, on the default adapter.
pub fn explorer_harness(size: [f32; 2]) -> Harness<'static, Explorer> {
    let mut explorer = Explorer::new(&GpuOptions::default());
    assert!(!explorer.adapter_labels().is_empty(), "no adapter");
    explorer.set_scale(Scale::Tiny);
    explorer.samples = 1;
    explorer.warmup = 0;
    Harness::builder().with_size(size).build_ui_state(|ui, e: &mut Explorer| e.ui(ui), explorer)
}

/// Runs workload `name` through the Run button after `setup` (parameters, sweep), at three
/// samples per point after a warm-up, and returns the harness with the finished run; every
/// point passed its CPU check.
///
/// llvmpipe ends an invocation's loops after 65535 iterations in all: on a loaded CPU a
/// workgroup waiting at a persistent-threads barrier for one the driver has not started yet
/// can reach that, and the run says so (cut short, not wrong). That is the CPU driver's
/// scheduling, so such a run gets five tries; any other error fails at once.
pub fn live_run(name: &str, setup: impl Fn(&mut Explorer)) -> Harness<'static, Explorer> {
    let mut tries = 0;
    loop {
        tries += 1;
        match try_live_run(name, &setup) {
            Ok(h) => return h,
            Err(e) if tries < 5 && e.contains("driver's iteration limit") => eprintln!("{name}, try {tries}: {e}"),
            Err(e) => panic!("{name}: run failed: {e}"),
        }
    }
}

/// One try of [`live_run`], with the run's error returned rather than failing the test.
fn try_live_run(name: &str, setup: impl Fn(&mut Explorer)) -> Result<Harness<'static, Explorer>, String> {
    // one live run at a time: the CPU adapter's threads are few
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut h = explorer_harness(WINDOW);
    // one sample without a warm-up is noisy on a CPU adapter (a smaller size can look slower):
    // the kept runs plot medians of three after one warm-up
    (h.state_mut().samples, h.state_mut().warmup) = (3, 1);
    h.state_mut().select_by_name(name).unwrap();
    setup(h.state_mut());
    h.run();
    h.get_by_label("Run").click();
    if let Some(e) = finish_run(&mut h) {
        return Err(e);
    }
    let run = h.state().run();
    assert!(!run.points.is_empty(), "{name}: no points");
    for p in &run.points {
        assert!(p.checks_passed(), "{name} at {:?}: {:?}", p.x, p.records.iter().map(|r| (&r.variant, &r.check)).collect::<Vec<_>>());
    }
    Ok(h)
}

/// The file `tests/fixtures/NAME.json`, where `live`'s run is kept first when `UPDATE_SNAPSHOTS`
/// is set.
pub fn kept_run(live: &Explorer, name: &str) -> PathBuf {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(format!("{name}.json"));
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        live.save(&path).unwrap();
    }
    path
}

/// Snapshots the view of the run kept as `name` (see [`kept_run`]) with point `select`
/// picked, and returns the harness showing it for checks on what the view says. Kept runs
/// have no per-warp maps: the view says so.
pub fn snapshot_kept_run(live: &Explorer, name: &str, select: usize) -> Harness<'static, Explorer> {
    let path = kept_run(live, name);
    let mut h = explorer_harness(WINDOW);
    h.state_mut().open_file(&path).unwrap();
    h.state_mut().select_point(select);
    h.run();
    assert_eq!(h.state().run().workload, live.run().workload);
    h.get_by_label_contains(&format!("divergence of point #{}", select + 1));
    h.snapshot(name);
    h
}
