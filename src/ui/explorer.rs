//! The desktop explorer behind `simtlab gui` (feature `gui`).
//!
//! Pick an adapter and a kernel family ([`families()`]), set its parameters, optionally sweep
//! one of them, and run: the runs happen on a background thread on a [`Gpu`] the explorer
//! opens itself (never on the UI's device), with progress and cancel. The window shows time
//! and throughput across the sweep, the divergence overlay of the last run (GPU probe when
//! the adapter has subgroups, else host emulation; before/after when remapping ran), the
//! occupancy panel for the family's WGSL, and the paper's figure for the experiment beside
//! ours.
//!
//! [`Explorer`] is plain egui ([`Explorer::ui`] draws into any `Ui`); [`run`] wraps it in an
//! eframe window with the wgpu renderer.

pub mod families;
pub mod flowshop;
pub mod shader;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use egui::{CentralPanel, ComboBox, Panel, ProgressBar, RichText, ScrollArea, Slider, Ui};
use egui_plot::{Legend, Line, MarkerShape, Plot, PlotPoints, Points};

use crate::error::{Error, Result};
use crate::gpu::{self, Gpu, GpuOptions};
use crate::harness::Protocol;
use crate::occupancy::{find_arch, Launch};
use crate::report::PaperValues;
use crate::ui::overlay::{DivergenceOverlay, OccupancyPanel};

pub use families::{families, Family, ParamKind, ParamSpec, ParamValues, PointResult, RunRequest};

/// One adapter the explorer can run on.
struct AdapterEntry {
    label: String,
    adapter: wgpu::Adapter,
    /// Opened on first use, on the worker thread.
    gpu: Arc<Mutex<Option<Arc<Gpu>>>>,
}

/// What the worker reports.
enum Message {
    Opened(String),
    Progress {
        done: usize,
        total: usize,
        what: String,
    },
    /// A finished point, with its overlay built on the worker (copying and binning millions
    /// of warps is kept off the UI thread).
    Point(Box<PointResult>, Box<DivergenceOverlay>),
    Failed(String),
    Finished {
        cancelled: bool,
    },
}

struct Running {
    rx: Receiver<Message>,
    cancel: Arc<AtomicBool>,
    done: usize,
    total: usize,
    what: String,
    started: Instant,
}

/// Sweep settings: `key` from `from` to `to` in `points` steps.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// Sweep at all; off runs one point at the current values.
    pub enabled: bool,
    /// The parameter swept ([`ParamSpec::key`]).
    pub key: &'static str,
    /// First value.
    pub from: f64,
    /// Last value.
    pub to: f64,
    /// Number of values (geometric steps for log parameters; every option for a choice).
    pub points: usize,
}

/// The explorer's state. Everything the window shows is drawn by [`Explorer::ui`].
pub struct Explorer {
    adapters: Vec<AdapterEntry>,
    /// Index of the selected adapter in [`Explorer::adapter_labels`].
    pub adapter: usize,
    /// Index into [`families()`].
    pub family: usize,
    /// Parameter values per family.
    pub params: Vec<ParamValues>,
    /// Sweep settings per family.
    pub sweeps: Vec<Sweep>,
    /// Timed samples per point (at least 1 is used).
    pub samples: usize,
    /// Untimed warm-up runs per point.
    pub warmup: usize,
    /// Also run after remapping (families that support it).
    pub remap: bool,
    /// Count divergence with the GPU probe when the adapter has subgroups.
    pub prefer_probe: bool,
    /// Warp width of the host emulation, in lanes.
    pub emulation_width: u32,
    running: Option<Running>,
    /// Points of the last (or current) run, with the family they belong to.
    results: Vec<PointResult>,
    results_family: usize,
    results_sweep: Option<&'static str>,
    overlay: Option<DivergenceOverlay>,
    /// The occupancy panel, pointed at the selected family's kernel.
    pub occupancy: OccupancyPanel,
    papers: Vec<Option<PaperValues>>,
    status: String,
    error: Option<String>,
    last_run_seconds: Option<f64>,
    /// Start a run on the first frame (`simtlab gui --run`).
    pub run_on_start: bool,
}

impl Explorer {
    /// Lists the adapters of `options` (plus `WGPU_BACKEND`/`WGPU_ADAPTER_NAME`); none is
    /// opened until the first run.
    pub fn new(options: &GpuOptions) -> Explorer {
        let options = options.clone().or_env();
        let (adapters, error) = match gpu::adapters(&options) {
            Ok(list) => (list, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        let wanted = options.adapter.as_deref().map(str::to_lowercase);
        let adapters: Vec<AdapterEntry> = adapters
            .into_iter()
            .filter(|a| wanted.as_ref().is_none_or(|w| a.get_info().name.to_lowercase().contains(w)))
            .map(|adapter| {
                let i = adapter.get_info();
                AdapterEntry {
                    label: format!("{} ({:?}, {:?})", i.name, i.backend, i.device_type),
                    adapter,
                    gpu: Arc::new(Mutex::new(None)),
                }
            })
            .collect();
        let fams = families();
        let mut occupancy = OccupancyPanel::new(find_arch("cc9.0").unwrap_or(&crate::occupancy::ARCHS[0]), Launch::new(256, 32, 0));
        occupancy.plot_height = 90.0;
        let mut explorer = Explorer {
            status: if adapters.is_empty() { "no adapter found".into() } else { "ready".into() },
            adapters,
            adapter: 0,
            family: 0,
            params: fams.iter().map(|f| ParamValues::defaults(f.params)).collect(),
            sweeps: fams
                .iter()
                .map(|f| Sweep { enabled: true, key: f.sweep.0, from: f.sweep.1, to: f.sweep.2, points: f.sweep.3 })
                .collect(),
            samples: 5,
            warmup: 1,
            remap: true,
            prefer_probe: true,
            emulation_width: 32,
            running: None,
            results: Vec::new(),
            results_family: 0,
            results_sweep: None,
            overlay: None,
            occupancy,
            papers: fams.iter().map(|f| f.paper.and_then(|p| PaperValues::of(p.paper).ok())).collect(),
            error,
            last_run_seconds: None,
            run_on_start: false,
        };
        explorer.select_family(0);
        explorer
    }

    /// Labels of the adapters, in the order of [`Explorer::adapter`].
    pub fn adapter_labels(&self) -> Vec<&str> {
        self.adapters.iter().map(|a| a.label.as_str()).collect()
    }

    /// The selected family.
    pub fn family(&self) -> &'static Family {
        &families()[self.family.min(families().len() - 1)]
    }

    /// Switches family and points the occupancy panel at its WGSL.
    pub fn select_family(&mut self, index: usize) {
        self.family = index.min(families().len() - 1);
        let f = self.family();
        match gpu::shader::preprocess(f.shader, &[]) {
            Ok(src) => {
                if let Err(e) = self.occupancy.set_kernel(f.shader, &src.text, f.entry_point) {
                    self.error = Some(format!("occupancy of {}: {e}", f.shader));
                }
            }
            Err(e) => self.error = Some(format!("{}: {e}", f.shader)),
        }
    }

    /// Selects the family called `name` (case-insensitive); errors list the known names.
    pub fn select_family_by_name(&mut self, name: &str) -> Result<()> {
        match families().iter().position(|f| f.name.eq_ignore_ascii_case(name)) {
            Some(i) => {
                self.select_family(i);
                Ok(())
            }
            None => Err(Error::invalid(
                "--family",
                format!("'{name}'; known: {}", families().iter().map(|f| f.name).collect::<Vec<_>>().join(", ")),
            )),
        }
    }

    /// True while a run is in progress on the worker thread.
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Points of the last run.
    pub fn results(&self) -> &[PointResult] {
        &self.results
    }

    /// The divergence overlay of the last finished point.
    pub fn overlay(&self) -> Option<&DivergenceOverlay> {
        self.overlay.as_ref()
    }

    /// The last error (failed run, missing adapter), if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The status line: "ready", "running …", or how the last run ended.
    pub fn status(&self) -> &str {
        &self.status
    }

    /// Starts the current family on a background thread; `ctx` is asked to repaint as results
    /// come in.
    pub fn start_run(&mut self, ctx: &egui::Context) {
        if self.running.is_some() {
            return;
        }
        let Some(entry) = self.adapters.get(self.adapter) else {
            self.error = Some("no adapter to run on".into());
            return;
        };
        let family = self.family;
        let fam = self.family();
        let params = self.params[family].clone();
        let sweep = &self.sweeps[family];
        let values: Vec<(Option<&'static str>, f64)> = match (sweep.enabled, fam.param(sweep.key)) {
            (true, Some(spec)) => spec.sweep_values(sweep.from, sweep.to, sweep.points).into_iter().map(|v| (Some(spec.key), v)).collect(),
            _ => vec![(None, 0.0)],
        };
        let total = values.len();
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = channel();
        let job = Job {
            family: fam,
            params,
            values,
            protocol: Protocol { warmup: self.warmup, samples: self.samples.max(1) },
            remap: self.remap && fam.can_remap,
            prefer_probe: self.prefer_probe,
            emulation_width: self.emulation_width,
            adapter: entry.adapter.clone(),
            gpu: entry.gpu.clone(),
            cancel: cancel.clone(),
        };
        self.results.clear();
        self.results_family = family;
        self.results_sweep = job.values.first().and_then(|v| v.0);
        self.error = None;
        self.status = format!("running {}", fam.name);
        let ctx = ctx.clone();
        let spawned = std::thread::Builder::new().name("simtlab-explorer-run".into()).spawn(move || {
            let panic_tx = tx.clone();
            let panic_ctx = ctx.clone();
            if catch_unwind(AssertUnwindSafe(|| job.run(&tx, &ctx))).is_err() {
                let _ = panic_tx.send(Message::Failed("the run panicked (a bug in simtlab)".into()));
                let _ = panic_tx.send(Message::Finished { cancelled: false });
                panic_ctx.request_repaint();
            }
        });
        match spawned {
            Ok(_) => {
                self.running = Some(Running { rx, cancel, done: 0, total, what: "opening the adapter".into(), started: Instant::now() })
            }
            Err(e) => self.error = Some(format!("could not start the run thread: {e}")),
        }
    }

    /// Asks the running job to stop after the current dispatch.
    pub fn cancel(&mut self) {
        if let Some(r) = &self.running {
            r.cancel.store(true, Ordering::Relaxed);
            self.status = "cancelling".into();
        }
    }

    /// Drains the worker's messages (called every frame by [`Explorer::ui`]).
    pub fn poll(&mut self) {
        let Some(running) = &mut self.running else { return };
        let mut finished = None;
        let mut new_points = Vec::new();
        let mut new_overlay = None;
        loop {
            match running.rx.try_recv() {
                Ok(Message::Opened(what)) => self.status = what,
                Ok(Message::Progress { done, total, what }) => {
                    running.done = done;
                    running.total = total;
                    running.what = what;
                }
                Ok(Message::Point(p, overlay)) => {
                    running.done += 1;
                    new_points.push(*p);
                    new_overlay = Some(overlay);
                }
                Ok(Message::Failed(e)) => self.error = Some(e),
                Ok(Message::Finished { cancelled }) => finished = Some(cancelled),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    finished.get_or_insert(false);
                    break;
                }
            }
        }
        let elapsed = running.started.elapsed().as_secs_f64();
        if let Some(mut overlay) = new_overlay {
            if let Some(old) = &self.overlay {
                overlay.color_by = old.color_by;
            }
            self.overlay = Some(*overlay);
        }
        self.results.extend(new_points);
        if let Some(cancelled) = finished {
            self.running = None;
            self.last_run_seconds = Some(elapsed);
            self.status = match (cancelled, &self.error) {
                (true, _) => format!("cancelled after {} point(s)", self.results.len()),
                (false, Some(_)) => "failed".into(),
                (false, None) => format!("done: {} point(s) in {elapsed:.1} s", self.results.len()),
            };
        }
    }

    fn param_ui(ui: &mut Ui, spec: &ParamSpec, value: &mut f64) -> bool {
        match spec.kind {
            ParamKind::Range { min, max, log, integer } => {
                let mut s = Slider::new(value, min..=max).text(spec.label).logarithmic(log);
                if integer {
                    s = s.integer();
                }
                ui.add(s).changed()
            }
            ParamKind::Choice(options) => {
                let mut index = (*value as usize).min(options.len() - 1);
                let before = index;
                ComboBox::from_label(spec.label).selected_text(options[index]).show_ui(ui, |ui| {
                    for (i, o) in options.iter().enumerate() {
                        ui.selectable_value(&mut index, i, *o);
                    }
                });
                *value = index as f64;
                before != index
            }
        }
    }

    fn controls(&mut self, ui: &mut Ui) {
        ui.heading("run");
        let running = self.running.is_some();
        ui.add_enabled_ui(!running, |ui| {
            let labels: Vec<String> = self.adapters.iter().map(|a| a.label.clone()).collect();
            let current = self.adapters.get(self.adapter).map_or_else(
                || "none".into(),
                |a| {
                    let i = a.adapter.get_info();
                    format!("{} ({:?})", i.name.split(" (").next().unwrap_or(&i.name), i.backend)
                },
            );
            ComboBox::from_label("adapter").selected_text(current).width((ui.available_width() - 70.0).max(80.0)).show_ui(ui, |ui| {
                for (i, l) in labels.iter().enumerate() {
                    ui.selectable_value(&mut self.adapter, i, l);
                }
            });
            let mut family = self.family;
            ComboBox::from_label("kernel family").selected_text(self.family().name).show_ui(ui, |ui| {
                for (i, f) in families().iter().enumerate() {
                    ui.selectable_value(&mut family, i, f.name);
                }
            });
            if family != self.family {
                self.select_family(family);
            }
            let fam = self.family();
            ui.small(fam.description);
            ui.separator();
            let values = &mut self.params[self.family];
            for spec in fam.params {
                if let Some(v) = values.get_mut(spec.key) {
                    Self::param_ui(ui, spec, v);
                }
            }
            ui.separator();
            let sweep = &mut self.sweeps[self.family];
            ui.checkbox(&mut sweep.enabled, "sweep one parameter");
            if sweep.enabled {
                let current = fam.param(sweep.key).map_or("?", |p| p.label);
                ComboBox::from_label("sweep over").selected_text(current).show_ui(ui, |ui| {
                    for spec in fam.params.iter().filter(|p| p.key != "seed") {
                        ui.selectable_value(&mut sweep.key, spec.key, spec.label);
                    }
                });
                if let Some(ParamSpec { kind: ParamKind::Range { min, max, log, integer }, .. }) = fam.param(sweep.key).copied() {
                    sweep.from = sweep.from.clamp(min, max);
                    sweep.to = sweep.to.clamp(min, max);
                    let mut from = Slider::new(&mut sweep.from, min..=max).text("from").logarithmic(log);
                    let mut to = Slider::new(&mut sweep.to, min..=max).text("to").logarithmic(log);
                    if integer {
                        from = from.integer();
                        to = to.integer();
                    }
                    ui.add(from);
                    ui.add(to);
                    ui.add(Slider::new(&mut sweep.points, 1..=12).text("points"));
                }
            }
            ui.add(Slider::new(&mut self.samples, 1..=50).text("timed samples"));
            if fam.can_remap {
                ui.checkbox(&mut self.remap, "also run remapped (threads sorted by work)");
            }
            ui.checkbox(&mut self.prefer_probe, "divergence from the GPU probe (when the adapter has subgroups)");
            ui.add(Slider::new(&mut self.emulation_width, 1..=128).text("emulated warp width"));
        });
        ui.separator();
        ui.horizontal(|ui| {
            if ui.add_enabled(!running && !self.adapters.is_empty(), egui::Button::new("Run")).clicked() {
                self.start_run(ui.ctx());
            }
            if ui.add_enabled(running, egui::Button::new("Cancel")).clicked() {
                self.cancel();
            }
        });
        if let Some(r) = &self.running {
            let frac = if r.total == 0 { 0.0 } else { r.done as f32 / r.total as f32 };
            ui.add(ProgressBar::new(frac).text(format!("{}/{} · {}", r.done, r.total, r.what)).animate(true));
            ui.ctx().request_repaint_after(Duration::from_millis(100));
        }
        ui.label(format!("status: {}", self.status));
        if let Some(e) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
    }

    /// x of a result on the sweep axis.
    fn x_of(&self, r: &PointResult) -> f64 {
        self.results_sweep.and_then(|k| r.params.get(k).ok()).unwrap_or(0.0)
    }

    fn sweep_plots(&self, ui: &mut Ui) {
        let fam = &families()[self.results_family];
        let spec = self.results_sweep.and_then(|k| fam.param(k)).copied();
        let x_label = spec.map_or("run", |s| s.label);
        let unit = self.results.first().map_or("", |r| r.throughput_unit);
        let series = |f: &dyn Fn(&PointResult) -> Option<f64>| -> Vec<[f64; 2]> {
            self.results.iter().filter_map(|r| f(r).map(|y| [self.x_of(r), y])).collect()
        };
        let time_plain = series(&|r| Some(r.plain.median_s * 1e3));
        let time_remap = series(&|r| r.remapped.as_ref().map(|m| m.median_s * 1e3));
        let tp_plain = series(&|r| Some(r.plain.throughput));
        let tp_remap = series(&|r| r.remapped.as_ref().map(|m| m.throughput));
        let width = ((ui.available_width() - ui.spacing().item_spacing.x) / 2.0).max(120.0);
        let fmt_x = move |mark: egui_plot::GridMark, _range: &std::ops::RangeInclusive<f64>| match spec {
            Some(s @ ParamSpec { kind: ParamKind::Choice(_), .. }) => {
                if (mark.value - mark.value.round()).abs() < 1e-9 {
                    s.format(mark.value)
                } else {
                    String::new()
                }
            }
            _ => egui_plot::format_number(mark.value, 3),
        };
        ui.horizontal(|ui| {
            for (id, title, plain, remap) in [
                ("time", "median time (ms)".to_string(), time_plain, time_remap),
                ("throughput", format!("throughput ({unit})"), tp_plain, tp_remap),
            ] {
                ui.vertical(|ui| {
                    ui.set_width(width);
                    ui.label(RichText::new(&title).strong());
                    Plot::new(("simtlab-sweep", id))
                        .height(170.0)
                        .width(width)
                        .legend(Legend::default())
                        .x_axis_label(x_label)
                        .x_axis_formatter(fmt_x)
                        .include_y(0.0)
                        .allow_scroll(false)
                        .show(ui, |plot| {
                            plot.line(Line::new("as laid out", PlotPoints::from(plain.clone())).color(PLAIN_COLOR));
                            plot.points(
                                Points::new("as laid out", plain).radius(3.0).shape(MarkerShape::Circle).filled(true).color(PLAIN_COLOR),
                            );
                            if !remap.is_empty() {
                                plot.line(Line::new("remapped", PlotPoints::from(remap.clone())).color(REMAP_COLOR));
                                plot.points(
                                    Points::new("remapped", remap).radius(3.0).shape(MarkerShape::Square).filled(true).color(REMAP_COLOR),
                                );
                            }
                        });
                });
            }
        });
        if let Some(r) = self.results.last() {
            let mut line = format!(
                "last point: {} ms median ({}..{} ms), {:.3} {}, check {}",
                fmt3(r.plain.median_s * 1e3),
                fmt3(r.plain.min_s * 1e3),
                fmt3(r.plain.max_s * 1e3),
                r.plain.throughput,
                r.throughput_unit,
                if r.plain.check_passed { "ok" } else { "FAILED" }
            );
            if let Some(m) = &r.remapped {
                line.push_str(&format!(
                    "; remapped {} ms ({:.2}x), check {}",
                    fmt3(m.median_s * 1e3),
                    r.plain.median_s / m.median_s,
                    if m.check_passed { "ok" } else { "FAILED" }
                ));
            }
            ui.label(line);
        }
    }

    fn paper_panel(&self, ui: &mut Ui) {
        let fam = self.family();
        let Some(paper) = fam.paper else {
            ui.label("no paper figure for this family");
            return;
        };
        ui.heading(format!("paper: {} {}", paper.paper, paper.figure));
        ui.label(paper.caption);
        if let Some(values) = &self.papers[self.family] {
            for id in paper.claims {
                if let Some(c) = values.claim(id) {
                    let value = c.value.map_or("—".to_string(), |v| format!("{v} {}", c.unit));
                    ui.label(format!("• {} — {value}", c.text));
                }
            }
        }
        if let (Some((model_label, model)), Some((ours_label, ours))) = (paper.model, paper.ours) {
            let now = model(&self.params[self.family]);
            ui.label(format!("{model_label}: {}", now.map_or("—".into(), |v| format!("{v:.3}"))));
            if self.results_family == self.family && !self.results.is_empty() {
                let paper_pts: Vec<[f64; 2]> = self.results.iter().filter_map(|r| model(&r.params).map(|y| [self.x_of(r), y])).collect();
                let ours_pts: Vec<[f64; 2]> = self.results.iter().map(|r| [self.x_of(r), ours(r)]).collect();
                let x_label = self.results_sweep.and_then(|k| fam.param(k)).map_or("run", |s| s.label);
                Plot::new("simtlab-paper-vs-ours")
                    .height(150.0)
                    .legend(Legend::default())
                    .x_axis_label(x_label)
                    .include_y(0.0)
                    .include_y(1.0)
                    .allow_scroll(false)
                    .show(ui, |plot| {
                        plot.line(
                            Line::new(model_label, PlotPoints::from(paper_pts.clone()))
                                .style(egui_plot::LineStyle::dashed_loose())
                                .color(PAPER_COLOR),
                        );
                        plot.points(Points::new(model_label, paper_pts).radius(3.0).shape(MarkerShape::Diamond).color(PAPER_COLOR));
                        plot.line(Line::new(ours_label, PlotPoints::from(ours_pts.clone())).color(PLAIN_COLOR));
                        plot.points(
                            Points::new(ours_label, ours_pts).radius(3.0).shape(MarkerShape::Circle).filled(true).color(PLAIN_COLOR),
                        );
                    });
                if let Some(r) = self.results.last() {
                    ui.small(format!("ours: {} (the paper's warp is 32 lanes)", r.plain.divergence_source));
                }
            }
        }
    }

    /// The whole explorer: controls on the left, occupancy and the paper on the right, plots
    /// and the divergence overlay in the middle.
    pub fn ui(&mut self, ui: &mut Ui) {
        if std::mem::take(&mut self.run_on_start) {
            self.start_run(ui.ctx());
        }
        self.poll();
        Panel::left("simtlab-controls").resizable(true).default_size(290.0).size_range(220.0..=360.0).show(ui, |ui| {
            ScrollArea::vertical().show(ui, |ui| self.controls(ui));
        });
        Panel::right("simtlab-side").resizable(true).default_size(420.0).size_range(300.0..=560.0).show(ui, |ui| {
            ScrollArea::vertical().show(ui, |ui| {
                ui.heading("occupancy");
                self.occupancy.ui(ui);
                ui.separator();
                self.paper_panel(ui);
            });
        });
        CentralPanel::default().show(ui, |ui| {
            ScrollArea::vertical().show(ui, |ui| {
                ui.heading(format!("{} — sweep", families()[self.results_family].name));
                if self.results.is_empty() {
                    ui.label("no results yet: press Run");
                } else {
                    self.sweep_plots(ui);
                }
                ui.separator();
                ui.heading("divergence of the last run");
                match &mut self.overlay {
                    Some(o) => o.ui(ui),
                    None => {
                        ui.label("no run yet");
                    }
                }
            });
        });
    }
}

const PLAIN_COLOR: egui::Color32 = egui::Color32::from_rgb(240, 140, 50);
const REMAP_COLOR: egui::Color32 = egui::Color32::from_rgb(80, 190, 110);
const PAPER_COLOR: egui::Color32 = egui::Color32::from_rgb(120, 150, 240);

fn fmt3(x: f64) -> String {
    format!("{x:.3}")
}

/// A run on the worker thread.
struct Job {
    family: &'static Family,
    params: ParamValues,
    values: Vec<(Option<&'static str>, f64)>,
    protocol: Protocol,
    remap: bool,
    prefer_probe: bool,
    emulation_width: u32,
    adapter: wgpu::Adapter,
    gpu: Arc<Mutex<Option<Arc<Gpu>>>>,
    cancel: Arc<AtomicBool>,
}

impl Job {
    fn open(&self) -> Result<Arc<Gpu>> {
        let mut slot = self.gpu.lock().map_err(|_| Error::invalid("adapter", "a previous run panicked while opening it"))?;
        if let Some(g) = slot.as_ref() {
            return Ok(g.clone());
        }
        let g = Arc::new(Gpu::open(&self.adapter)?);
        *slot = Some(g.clone());
        Ok(g)
    }

    fn run(self, tx: &Sender<Message>, ctx: &egui::Context) {
        let send = |m: Message| {
            let _ = tx.send(m);
            ctx.request_repaint();
        };
        let gpu = match self.open() {
            Ok(g) => g,
            Err(e) => {
                send(Message::Failed(format!("opening the adapter: {e}")));
                send(Message::Finished { cancelled: false });
                return;
            }
        };
        send(Message::Opened(format!(
            "{}: subgroup width {}",
            gpu.adapter_name(),
            gpu.caps.subgroup_size.map_or("none (host emulation)".to_string(), |w| w.to_string())
        )));
        let total = self.values.len();
        for (i, &(key, value)) in self.values.iter().enumerate() {
            if self.cancel.load(Ordering::Relaxed) {
                send(Message::Finished { cancelled: true });
                return;
            }
            let mut params = self.params.clone();
            let what = match key {
                Some(k) => {
                    params.set(k, value);
                    let shown = self.family.param(k).map_or(value.to_string(), |s| s.format(value));
                    format!("{k} = {shown}")
                }
                None => self.family.name.to_string(),
            };
            send(Message::Progress { done: i, total, what });
            let req = RunRequest {
                gpu: &gpu,
                params: &params,
                protocol: self.protocol,
                remap: self.remap,
                prefer_probe: self.prefer_probe,
                emulation_width: self.emulation_width,
                cancel: &self.cancel,
            };
            match (self.family.run)(&req) {
                Ok(p) => {
                    let mut overlay = DivergenceOverlay::new(&p.plain.divergence, p.plain.divergence_source.clone());
                    if let Some(r) = &p.remapped {
                        overlay = overlay.with_after(&r.divergence, r.divergence_source.clone());
                    }
                    send(Message::Point(Box::new(p), Box::new(overlay)))
                }
                Err(_) if self.cancel.load(Ordering::Relaxed) => {
                    send(Message::Finished { cancelled: true });
                    return;
                }
                Err(e) => {
                    send(Message::Failed(e.to_string()));
                    send(Message::Finished { cancelled: false });
                    return;
                }
            }
        }
        send(Message::Finished { cancelled: false });
    }
}

struct ExplorerApp(Explorer);

impl eframe::App for ExplorerApp {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        self.0.ui(ui);
    }
}

/// Opens the explorer window (eframe, wgpu renderer). Runs use their own `Gpu`, opened on a
/// background thread on the adapter picked in the window.
/// `family` preselects a kernel family by name; `run_now` starts a run as the window opens.
pub fn run(options: &GpuOptions, family: Option<&str>, run_now: bool) -> Result<()> {
    let has_display = ["DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET"].iter().any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
    if cfg!(target_os = "linux") && !has_display {
        return Err(Error::Unsupported {
            what: "a window".into(),
            adapter: "this session (neither DISPLAY nor WAYLAND_DISPLAY is set)".into(),
            hint: "run it on a desktop, or under a virtual display (`xvfb-run simtlab gui`); the other commands need no display".into(),
        });
    }
    let mut explorer = Explorer::new(options);
    if let Some(name) = family {
        explorer.select_family_by_name(name)?;
    }
    explorer.run_on_start = run_now;
    let native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default().with_inner_size([1280.0, 800.0]).with_title("simtlab explorer"),
        renderer: eframe::Renderer::Wgpu,
        ..Default::default()
    };
    eframe::run_native("simtlab explorer", native, Box::new(|_cc| Ok(Box::new(ExplorerApp(explorer))))).map_err(|e| Error::Unsupported {
        what: "the explorer window".into(),
        adapter: "this display".into(),
        hint: format!("the window system or its GPU surface refused it ({e})"),
    })
}
