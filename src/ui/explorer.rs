//! The desktop explorer behind `simtlab gui` (feature `gui`).
//!
//! Every workload of the registry ([`crate::workload::registry`]) is explorable: pick an
//! adapter and a workload, set its typed parameters ([`crate::workload::ParamSpec`]), sweep
//! one of them (or every workload of its family side by side), and run. Runs happen on a
//! background thread on a [`Gpu`] the explorer opens itself (never on the UI's device), with
//! progress and cancel; each point gives the same [`crate::harness::Record`]s as
//! `simtlab run NAME`. The window shows them in plots and a table with the CPU check, the
//! divergence heat map of any point (click it), the occupancy panel on the preset that matches
//! the adapter, what the family's records say (remapping cost and gain, the persistent-threads
//! tier, the matmul ladder's occupancy, branched vs split), and the paper's figure beside ours.
//! Runs are saved and reopened as record files, compared with a baseline, and exported as CSV
//! and PNG.
//!
//! [`Explorer`] is plain egui ([`Explorer::ui`] draws into any `Ui`); [`run`] wraps it in an
//! eframe window with the wgpu renderer. Keys: Ctrl+R or F5 runs, Esc cancels, Ctrl+S saves.
//!
//! The same explorer runs in a browser page (wasm32, `ui::web`): there the runs and their heat
//! maps await the async core on the page's event loop, what would have to wait on the GPU says
//! why it does not run instead, and files are downloads and a file input (the `browser` module).

mod browser;
mod family;
mod files;
pub mod flowshop;
pub mod paper;
pub mod params;
pub mod plots;
pub mod remap_view;
pub mod runs;
pub mod shader;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use egui::{CentralPanel, ComboBox, Key, KeyboardShortcut, Modifiers, Panel, ProgressBar, ScrollArea, Slider, Ui};
use serde_json::Value;
// std's Instant panics in a browser page; web-time's is the same type on native
use web_time::Instant;

#[cfg(not(target_arch = "wasm32"))]
use crate::error::Error;
use crate::error::Result;
use crate::gpu::{self, Gpu, GpuOptions};
use crate::harness::Protocol;
use crate::kernels::micro::remapped;
use crate::occupancy::{arch_for_adapter, find_arch, Arch, Launch};
use crate::remap::Calibration;
use crate::ui::overlay::{DivergenceOverlay, OccupancyPanel};
use crate::workload::{self, Counting, ParamSpec, Scale, Workload};

pub use params::{Sweep, FAMILY_SWEEP};
pub use runs::{Point, Run};

/// The explorer's views, as tabs at the top of the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// Every registry workload: parameters, sweeps, records, heat maps, occupancy.
    Workloads,
    /// The live flow-shop branch-and-bound search.
    FlowShop,
    /// Your own WGSL shader, profiled.
    Shader,
}

impl View {
    /// Every view, in tab order.
    pub const ALL: [View; 3] = [View::Workloads, View::FlowShop, View::Shader];

    /// The tab's title.
    pub fn title(self) -> &'static str {
        match self {
            View::Workloads => "Workloads",
            View::FlowShop => "Flow-shop search",
            View::Shader => "Your shader",
        }
    }
}

/// One adapter the explorer can run on.
#[derive(Debug)]
struct AdapterEntry {
    label: String,
    adapter: wgpu::Adapter,
    /// Opened on first use, on the worker thread.
    gpu: Arc<Mutex<Option<Arc<Gpu>>>>,
    /// What the runs of the remapping strategies side by side measured on this adapter: the
    /// next `remap-auto` decides with it.
    calibration: Calibration,
}

/// The workload whose decision learns from what the adapter measured.
const AUTO_REMAP: &str = "remap-auto";

#[derive(Debug)]
struct Running {
    rx: Receiver<runs::Message>,
    cancel: Arc<AtomicBool>,
    done: usize,
    total: usize,
    what: String,
    started: Instant,
}

/// The occupancy preset used when no preset describes the adapter.
const DEFAULT_ARCH: &str = "cc9.0";

/// The explorer's state. Everything the window shows is drawn by [`Explorer::ui`].
#[derive(Debug)]
pub struct Explorer {
    adapters: Vec<AdapterEntry>,
    /// Index of the selected adapter in [`Explorer::adapter_labels`].
    pub adapter: usize,
    /// The tab shown.
    pub view: View,
    workloads: Vec<Box<dyn Workload>>,
    workload: usize,
    specs: Vec<ParamSpec>,
    /// Parameter values per workload (registry order).
    params: Vec<Value>,
    /// Sweep settings per workload.
    sweeps: Vec<Sweep>,
    /// The scale the parameters start from.
    pub scale: Scale,
    /// Timed samples per point (at least 1 is used).
    pub samples: usize,
    /// Untimed warm-up runs per point.
    pub warmup: usize,
    /// Count divergence with the GPU probe when the adapter has subgroups.
    pub prefer_probe: bool,
    /// Warp width of the host emulation, in lanes.
    pub emulation_width: u32,
    /// Longest wait for one GPU submission (`--timeout`); the library's default when None.
    pub timeout: Option<Duration>,
    /// GPU benchmarks repeat timed runs shorter than this (`--min-sample-ms`, in seconds).
    pub min_sample_seconds: f64,
    running: Option<Running>,
    run: Run,
    /// Index of the point whose heat map is shown.
    selected: usize,
    overlay: Option<(usize, DivergenceOverlay)>,
    baseline: Option<Run>,
    /// The occupancy panel, pointed at the selected workload's kernel.
    pub occupancy: OccupancyPanel,
    arch_note: String,
    /// Where the registers per thread come from, once a run has asked the driver.
    registers_note: String,
    /// File for save, open, CSV and PNG (the extension is replaced for each).
    pub file: String,
    status: String,
    error: Option<String>,
    /// Start a run on the first frame (`simtlab gui --run`).
    pub run_on_start: bool,
    /// The "Flow-shop search" tab.
    pub flowshop: flowshop::FlowshopView,
    /// The "Your shader" tab.
    pub shader: shader::ShaderView,
    /// The page's file input, through which run files are opened in a browser.
    #[cfg(target_arch = "wasm32")]
    upload: browser::Upload,
}

impl Explorer {
    /// Lists the adapters of `options` (plus `WGPU_BACKEND`/`WGPU_ADAPTER_NAME`); none is
    /// opened until the first run. `options.timeout` bounds every GPU wait of the runs.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new(options: &GpuOptions) -> Explorer {
        let options = options.clone().or_env();
        Explorer::with_adapters(&options, gpu::adapters(&options))
    }

    /// The explorer on `adapters` as [`gpu::adapters`] or [`gpu::adapters_async`] listed them
    /// for `options` (an error is shown in the window); a browser page awaits the list.
    pub fn with_adapters(options: &GpuOptions, adapters: Result<Vec<wgpu::Adapter>>) -> Explorer {
        let (adapters, error) = match adapters {
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
                    label: format!("{} ({:?}, {:?})", gpu::adapter_label(&i), i.backend, i.device_type),
                    adapter,
                    gpu: Arc::new(Mutex::new(None)),
                    calibration: Calibration::default(),
                }
            })
            .collect();
        let workloads = workload::registry();
        let scale = Scale::Quick;
        let params: Vec<Value> = workloads.iter().map(|w| w.params(scale)).collect();
        let sweeps = workloads.iter().zip(&params).map(|(w, p)| Sweep::default_for(&w.param_specs(), p)).collect();
        let mut occupancy = OccupancyPanel::new(find_arch(DEFAULT_ARCH).unwrap_or(&crate::occupancy::ARCHS[0]), Launch::new(256, 32, 0));
        occupancy.plot_height = 90.0;
        let mut explorer = Explorer {
            status: if adapters.is_empty() { "no adapter found".into() } else { "ready".into() },
            adapters,
            adapter: 0,
            view: View::Workloads,
            workloads,
            workload: 0,
            specs: Vec::new(),
            params,
            sweeps,
            scale,
            samples: 5,
            warmup: 1,
            prefer_probe: true,
            emulation_width: 32,
            timeout: options.timeout,
            min_sample_seconds: 0.005,
            running: None,
            run: Run::default(),
            selected: 0,
            overlay: None,
            baseline: None,
            occupancy,
            arch_note: String::new(),
            registers_note: String::new(),
            file: "simtlab-run.json".into(),
            error,
            run_on_start: false,
            flowshop: flowshop::FlowshopView::new(options),
            shader: shader::ShaderView::new(options),
            #[cfg(target_arch = "wasm32")]
            upload: browser::Upload::new(),
        };
        explorer.select_adapter(0);
        explorer.select(0);
        explorer
    }

    /// Labels of the adapters, in the order of [`Explorer::adapter`].
    pub fn adapter_labels(&self) -> Vec<&str> {
        self.adapters.iter().map(|a| a.label.as_str()).collect()
    }

    /// Selects adapter `index` and the occupancy preset that matches its name (or the default,
    /// saying so).
    fn select_adapter(&mut self, index: usize) {
        self.adapter = index.min(self.adapters.len().saturating_sub(1));
        let info = self.adapters.get(self.adapter).map(|a| a.adapter.get_info());
        let name = info.as_ref().map_or_else(String::new, gpu::adapter_label);
        // the adapter's own name only: a description could match a preset's alias by chance
        match arch_for_adapter(info.as_ref().map_or("", |i| &i.name)) {
            Some(arch) => {
                self.occupancy.arch = arch;
                self.arch_note = format!("preset {} matches {name}", arch.name);
            }
            None => {
                self.occupancy.arch = find_arch(DEFAULT_ARCH).unwrap_or(&crate::occupancy::ARCHS[0]);
                self.arch_note = format!("no preset matches {name}: {DEFAULT_ARCH} (H100) by default");
            }
        }
    }

    /// The selected workload.
    pub fn workload(&self) -> &(dyn Workload + 'static) {
        self.workloads[self.workload].as_ref()
    }

    /// The selected workload's parameter specs.
    pub fn specs(&self) -> &[ParamSpec] {
        &self.specs
    }

    /// The selected workload's parameter values, to read or change.
    pub fn params_mut(&mut self) -> &mut Value {
        &mut self.params[self.workload]
    }

    /// The selected workload's sweep settings, to read or change.
    pub fn sweep_mut(&mut self) -> &mut Sweep {
        &mut self.sweeps[self.workload]
    }

    /// Selects workload `index` of the registry and points the occupancy panel at its kernel.
    pub fn select(&mut self, index: usize) {
        self.workload = index.min(self.workloads.len() - 1);
        self.specs = self.workload().param_specs();
        // the next run asks the driver about the new workload's kernel
        self.registers_note.clear();
        self.show_occupancy_of(self.workload().name());
    }

    /// Points the occupancy panel at the main kernel of workload `name` (the selected point's,
    /// or the picker's); a workload without one kernel leaves the panel on its sliders.
    fn show_occupancy_of(&mut self, name: &str) {
        let Some(w) = self.workloads.iter().find(|w| w.name() == name) else { return };
        let Some(entry) = w.shader() else {
            (self.occupancy.kernel, self.occupancy.use_kernel) = (None, false);
            return;
        };
        let path = entry.file.path;
        let label = format!("{path}:{}", entry.name);
        if gpu::shader::preprocess(path, &[]).and_then(|src| self.occupancy.set_kernel(label.clone(), &src.text, entry.name)).is_ok() {
            return;
        }
        // a kernel sized by override constants (matmul's tiles): the launch its rung makes
        use crate::kernels::matmul::{self, RegtileConfig, Shape, Variant};
        let rung = name.strip_prefix("matmul-").and_then(|v| serde_json::from_value::<Variant>(v.into()).ok());
        let launch = rung.and_then(|v| matmul::resources(&matmul::spec(v, Shape::square(64), &RegtileConfig::default()).ok()?).ok());
        match launch {
            Some(r) => {
                let resources = crate::occupancy::KernelResources {
                    entry_point: entry.name.to_string(),
                    workgroup_size: [r.threads_per_workgroup, 1, 1],
                    threads_per_workgroup: r.threads_per_workgroup,
                    workgroup_memory_bytes: u32::try_from(r.workgroup_bytes).unwrap_or(u32::MAX),
                    workgroup_variables: Vec::new(),
                };
                (self.occupancy.kernel, self.occupancy.use_kernel) = (Some((label, resources)), true);
            }
            None => {
                // never another workload's kernel under this one's name: the sliders
                (self.occupancy.kernel, self.occupancy.use_kernel) = (None, false);
            }
        }
    }

    /// The name of the kernel the occupancy panel shows (`path:entry`), if any.
    pub fn occupancy_kernel(&self) -> Option<&str> {
        self.occupancy.kernel.as_ref().map(|(name, _)| name.as_str())
    }

    /// Selects the workload called `name`; the error lists the names.
    pub fn select_by_name(&mut self, name: &str) -> Result<()> {
        let found = self.workloads.iter().position(|w| w.name() == name);
        match found {
            Some(i) => {
                self.select(i);
                Ok(())
            }
            None => workload::find(name).map(drop),
        }
    }

    /// Resets every workload's parameters to `scale`'s values.
    pub fn set_scale(&mut self, scale: Scale) {
        self.scale = scale;
        self.params = self.workloads.iter().map(|w| w.params(scale)).collect();
        self.sweeps = self.workloads.iter().zip(&self.params).map(|(w, p)| Sweep::default_for(&w.param_specs(), p)).collect();
    }

    /// True while a run is in progress on the worker thread.
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// The last (or current) run.
    pub fn run(&self) -> &Run {
        &self.run
    }

    /// The baseline run compared against, if one is open.
    pub fn baseline(&self) -> Option<&Run> {
        self.baseline.as_ref()
    }

    /// Index of the point whose heat map is shown.
    pub fn selected(&self) -> usize {
        self.selected
    }

    /// Shows point `index`'s heat map, and its workload's kernel in the occupancy panel.
    pub fn select_point(&mut self, index: usize) {
        self.selected = index.min(self.run.points.len().saturating_sub(1));
        if let Some(name) = self.run.points.get(self.selected).map(|p| p.workload.clone()) {
            self.show_occupancy_of(&name);
        }
    }

    /// Shows `message` as the error line (what the page's address asked for and could not be
    /// done), and keeps a run from starting on its own.
    pub fn show_error(&mut self, message: String) {
        self.error = Some(message);
        self.run_on_start = false;
    }

    /// The last error (failed run, missing adapter, unreadable file), if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The status line: "ready", what is running, or how the last run ended.
    pub fn status(&self) -> &str {
        &self.status
    }

    /// Whether divergence comes from the GPU probe on the selected adapter (then the emulated
    /// width does not apply). A browser's adapter does not list subgroups: its device, once a
    /// run has opened it, says whether it has them.
    fn probe_applies(&self) -> bool {
        let opened_with_subgroups =
            |a: &AdapterEntry| a.gpu.lock().ok().is_some_and(|g| g.as_ref().is_some_and(|g| g.caps().subgroup_size.is_some()));
        self.prefer_probe
            && self
                .adapters
                .get(self.adapter)
                .is_some_and(|a| a.adapter.features().contains(wgpu::Features::SUBGROUP) || opened_with_subgroups(a))
    }

    /// The workloads of the selected one's family, when it has several to run side by side.
    fn family_members(&self) -> Vec<usize> {
        let family = self.workload().family();
        let members: Vec<usize> = (0..self.workloads.len()).filter(|&i| self.workloads[i].family() == family).collect();
        if members.len() > 1 {
            members
        } else {
            Vec::new()
        }
    }

    /// The points the current settings run.
    fn plan(&self) -> (Vec<runs::Planned>, Option<String>) {
        let params = &self.params[self.workload];
        let sweep = &self.sweeps[self.workload];
        let name = self.workload().name().to_string();
        if sweep.enabled && sweep.key == FAMILY_SWEEP && !self.family_members().is_empty() {
            let points = self
                .family_members()
                .into_iter()
                .map(|i| {
                    let w = &self.workloads[i];
                    // its own parameters, with the shown ones it shares (same key and kind, not
                    // fixed like the queue kind): the pt cases each have a configuration of their own
                    let mut p = w.params(self.scale);
                    for spec in w.param_specs().iter().filter(|s| !s.fixed && self.specs.contains(s)) {
                        spec.set(&mut p, spec.get(params).clone());
                    }
                    runs::Planned { workload: w.name().into(), params: p, x: Some(Value::from(w.name())) }
                })
                .collect();
            return (points, Some("workload".into()));
        }
        match sweep.values(&self.specs) {
            Some((spec, values)) => {
                let points = values
                    .into_iter()
                    .map(|v| {
                        let mut p = params.clone();
                        spec.set(&mut p, v.clone());
                        runs::Planned { workload: name.clone(), params: p, x: Some(v) }
                    })
                    .collect();
                (points, Some(spec.label()))
            }
            None => (vec![runs::Planned { workload: name, params: params.clone(), x: None }], None),
        }
    }

    /// Starts the current settings on the worker; `ctx` is asked to repaint as results come in.
    fn start_run(&mut self, ctx: &egui::Context) {
        if self.running.is_some() {
            return;
        }
        let Some(entry) = self.adapters.get(self.adapter) else {
            self.error = Some("no adapter to run on".into());
            return;
        };
        let (mut points, swept) = self.plan();
        // auto's decision weighs what this adapter measured before
        if !entry.calibration.learned.is_empty() {
            for p in points.iter_mut().filter(|p| p.workload == AUTO_REMAP) {
                p.params["calibration"] = serde_json::to_value(&entry.calibration).unwrap_or_default();
            }
        }
        if let Some(bad) = points.iter().find_map(|p| workload::find(&p.workload).and_then(|w| w.check_params(&p.params)).err()) {
            self.error = Some(bad.to_string());
            return;
        }
        if let Some(why) =
            points.iter().find_map(|p| workload::find(&p.workload).ok().and_then(|w| browser::workload_unavailable(w.as_ref())))
        {
            self.error = Some(why);
            return;
        }
        let total = points.len();
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = channel();
        // the probe falls back to emulation at this width where the device has no subgroups
        let counting = if self.prefer_probe { Counting::Probe(self.emulation_width) } else { Counting::Emulate(self.emulation_width) };
        let sweep = &self.sweeps[self.workload];
        let protocol = Protocol { warmup: self.warmup, samples: self.samples.max(1) };
        self.run = Run {
            workload: self.workload().name().into(),
            sweep: (sweep.enabled && swept.is_some()).then(|| sweep.key.clone()),
            protocol: Some(protocol),
            points: Vec::new(),
        };
        let job = runs::Job {
            points,
            swept,
            protocol,
            counting,
            adapter: entry.adapter.clone(),
            gpu: entry.gpu.clone(),
            timeout: self.timeout,
            min_sample_seconds: self.min_sample_seconds,
            cancel: cancel.clone(),
        };
        self.selected = 0;
        self.overlay = None;
        self.error = None;
        self.status = format!("running {}", self.run.workload);
        match runs::spawn(job, tx, ctx.clone()) {
            Ok(()) => {
                self.running = Some(Running { rx, cancel, done: 0, total, what: "opening the adapter".into(), started: Instant::now() })
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    /// Asks the running job to stop: the device refuses its next submission, so it ends within
    /// the sample it is in, keeping the points finished before.
    pub fn cancel(&mut self) {
        runs::request_cancel(self.running.as_ref().map(|r| &*r.cancel), &mut self.status);
    }

    /// Drains the worker's messages (called every frame by [`Explorer::ui`]).
    pub fn poll(&mut self) {
        use runs::Message;
        let Some(running) = &mut self.running else { return };
        let mut finished = None;
        let mut newest = false;
        loop {
            match running.rx.try_recv() {
                Ok(Message::Opened(what)) => self.status = what,
                Ok(Message::Registers { kernel, registers }) => {
                    self.registers_note = match registers {
                        Ok(r) => {
                            self.occupancy.registers_per_thread = r;
                            format!("registers: {r} per thread, as the driver compiled {kernel}")
                        }
                        Err(why) => format!("registers: the slider's; no driver count for {kernel} ({why})"),
                    }
                }
                Ok(Message::Progress { done, total, what }) => (running.done, running.total, running.what) = (done, total, what),
                Ok(Message::Point(p)) => {
                    running.done += 1;
                    self.run.points.push(*p);
                    // follow the newest point until the user picks one
                    self.selected = self.run.points.len() - 1;
                    newest = true;
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
        if let Some(cancelled) = finished {
            let elapsed = running.started.elapsed().as_secs_f64();
            self.running = None;
            self.learn_from_run();
            let n = self.run.points.len();
            self.status = match (cancelled, &self.error) {
                (true, _) => format!("cancelled after {n} point(s)"),
                (false, Some(_)) => "failed".into(),
                (false, None) => format!("done: {n} point(s) in {elapsed:.1} s"),
            };
        }
        if newest {
            self.select_point(self.selected);
        }
    }

    /// Learns from a finished run of the remapping strategies side by side: the next
    /// `remap-auto` on the adapter decides with what it measured.
    fn learn_from_run(&mut self) {
        if let (Some(Ok((calibration, _))), Some(entry)) = (remapped::learn(self.run.records()), self.adapters.get_mut(self.adapter)) {
            entry.calibration = calibration;
        }
    }

    fn shortcuts(&mut self, ctx: &egui::Context) {
        let run = KeyboardShortcut::new(Modifiers::COMMAND, Key::R);
        let save = KeyboardShortcut::new(Modifiers::COMMAND, Key::S);
        let (run_pressed, save_pressed, esc) = ctx.input_mut(|i| {
            let r = i.consume_shortcut(&run) || i.consume_key(Modifiers::NONE, Key::F5);
            (r, i.consume_shortcut(&save), i.consume_key(Modifiers::NONE, Key::Escape))
        });
        if run_pressed && self.view == View::Workloads {
            self.start_run(ctx);
        }
        if esc {
            self.cancel();
        }
        if save_pressed {
            self.save_to_file();
        }
    }

    fn controls(&mut self, ui: &mut Ui) {
        let running = self.running.is_some();
        ui.add_enabled_ui(!running, |ui| {
            let current = self.adapters.get(self.adapter).map_or_else(
                || "none".into(),
                |a| {
                    let i = a.adapter.get_info();
                    let name = gpu::adapter_label(&i);
                    format!("{} ({:?})", name.split(" (").next().unwrap_or(&name), i.backend)
                },
            );
            let mut picked = None;
            ComboBox::from_label("adapter").selected_text(current).width((ui.available_width() - 70.0).max(80.0)).show_ui(ui, |ui| {
                for (i, a) in self.adapters.iter().enumerate() {
                    if ui.selectable_label(i == self.adapter, &a.label).clicked() {
                        picked = Some(i);
                    }
                }
            });
            if let Some(i) = picked {
                self.select_adapter(i);
            }
            let mut pick = None;
            let label = format!("{} ({})", self.workload().name(), self.workload().family());
            ComboBox::from_label("workload").selected_text(label).height(500.0).show_ui(ui, |ui| {
                let mut family = "";
                for (i, w) in self.workloads.iter().enumerate() {
                    if w.family() != family {
                        family = w.family();
                        ui.label(egui::RichText::new(family).weak());
                    }
                    // in a page, the workloads it cannot run say so (they stay selectable, to
                    // see their parameters and open their runs)
                    let response = match browser::workload_unavailable(w.as_ref()) {
                        Some(why) => ui
                            .selectable_label(i == self.workload, egui::RichText::new(format!("{} (desktop only)", w.name())).weak())
                            .on_hover_text(format!("{}\n\n{why}", w.summary())),
                        None => ui.selectable_label(i == self.workload, w.name()).on_hover_text(w.summary()),
                    };
                    if response.clicked() {
                        pick = Some(i);
                    }
                }
            });
            if let Some(i) = pick {
                self.select(i);
            }
            ui.small(format!("{} — {}", self.workload().summary(), self.workload().paper()));
            ui.horizontal(|ui| {
                ui.label("start from");
                for (scale, name) in [(Scale::Tiny, "tiny"), (Scale::Quick, "quick"), (Scale::Full, "paper")] {
                    if ui.selectable_label(self.scale == scale, name).clicked() {
                        self.set_scale(scale);
                    }
                }
            });
            ui.separator();
            let family = (!self.family_members().is_empty()).then(|| self.workload().family());
            let w = self.workload;
            self.sweeps[w].ui(ui, &self.specs, &self.params[w], family);
            let swept = self.sweeps[w].enabled.then(|| self.sweeps[w].key.clone());
            params::editors(ui, &self.specs, &mut self.params[w], swept.as_deref(), self.workloads[w].family());
            ui.separator();
            params::count(ui, &mut self.samples, 1..=100, "timed samples");
            params::count(ui, &mut self.warmup, 0..=20, "warm-up runs");
            ui.checkbox(&mut self.prefer_probe, "heat maps from the GPU probe (when the adapter has subgroups)");
            let probe = self.probe_applies();
            ui.add_enabled(!probe, Slider::new(&mut self.emulation_width, 1..=128).text("emulated warp width"))
                .on_disabled_hover_text("the GPU probe counts at the adapter's own subgroup width");
        });
        ui.separator();
        let unavailable = browser::workload_unavailable(self.workload());
        ui.horizontal(|ui| {
            let can_run = !running && !self.adapters.is_empty() && unavailable.is_none();
            if ui.add_enabled(can_run, egui::Button::new("Run")).on_hover_text("Ctrl+R or F5").clicked() {
                self.start_run(ui.ctx());
            }
            if ui.add_enabled(running, egui::Button::new("Cancel")).on_hover_text("Esc").clicked() {
                self.cancel();
            }
        });
        if let Some(why) = unavailable {
            ui.colored_label(ui.visuals().warn_fg_color, why);
        }
        if let Some(r) = &self.running {
            let frac = if r.total == 0 { 0.0 } else { r.done as f32 / r.total as f32 };
            ui.add(ProgressBar::new(frac).text(format!("point {} of {}: {}", (r.done + 1).min(r.total), r.total, r.what)).animate(true));
            ui.ctx().request_repaint_after(Duration::from_millis(100));
        }
        ui.label(format!("status: {}", self.status));
        if let Some(e) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        ui.separator();
        self.files_ui(ui);
    }

    fn results(&mut self, ui: &mut Ui) {
        ui.heading(format!("{} — records", if self.run.workload.is_empty() { self.workload().name() } else { &self.run.workload }));
        if self.run.points.is_empty() {
            ui.label("no results yet: press Run (Ctrl+R)");
            return;
        }
        let spec = self.run.sweep.as_deref().and_then(|k| self.specs.iter().find(|s| s.key == k)).cloned();
        let passed = self.run.points.iter().filter(|p| p.checks_passed()).count();
        ui.label(format!("CPU check: {passed} of {} point(s) passed", self.run.points.len()));
        // what the time is, where a record says (a page's clock is not the GPU's)
        if let Some(timing) = self.run.records().find_map(|r| r.extra.get("timing")?.as_str()) {
            ui.small(format!("time: {timing}"));
        }
        if let Some(b) = &self.baseline {
            let (name, n) = (&b.workload, b.points.len());
            ui.label(format!(
                "baseline: {name} ({n} point(s)), dashed in the plots; \"vs baseline\" is the speed-up, baseline time / time, \
                 \"within noise\" where the two ranges of samples overlap"
            ));
        }
        if let Some(i) = plots::sweep_plots(ui, &self.run, spec.as_ref(), self.selected, self.baseline.as_ref()) {
            self.select_point(i);
        }
        let ratios = self.baseline.as_ref().map(|b| runs::baseline_comparisons(&self.run, b));
        if let Some(i) = plots::records_table(ui, &self.run, self.selected, ratios.as_deref()) {
            self.select_point(i);
        }
        ui.separator();
        self.heat_map(ui);
    }
    fn side(&mut self, ui: &mut Ui) {
        ui.heading("occupancy");
        ui.small(&self.arch_note);
        if !self.registers_note.is_empty() {
            ui.small(&self.registers_note);
        }
        self.occupancy.ui(ui);
        ui.separator();
        let arch: &Arch = self.occupancy.arch;
        family::panel(ui, &self.run, arch, self.occupancy.registers_per_thread);
        if let Some(paper) = paper::of(self.workload().name()) {
            ui.separator();
            let spec = self.run.sweep.as_deref().and_then(|k| self.specs.iter().find(|s| s.key == k));
            let run = (self.run.workload == self.workload().name()).then_some(&self.run);
            paper::panel(ui, &paper, &self.params[self.workload], run, spec);
        }
    }

    /// The whole explorer: view tabs on top; for workloads, controls on the left, records,
    /// plots and the heat map in the middle, occupancy and the paper on the right (below the
    /// records when the window is narrow).
    pub fn ui(&mut self, ui: &mut Ui) {
        if std::mem::take(&mut self.run_on_start) {
            self.start_run(ui.ctx());
        }
        self.poll();
        #[cfg(target_arch = "wasm32")]
        self.poll_upload(ui.ctx());
        self.shortcuts(&ui.ctx().clone());
        Panel::top("simtlab-views").show(ui, |ui| {
            ui.horizontal(|ui| {
                for v in View::ALL {
                    ui.selectable_value(&mut self.view, v, v.title());
                }
            });
        });
        match self.view {
            View::Workloads => {}
            View::FlowShop => {
                CentralPanel::default().show(ui, |ui| self.flowshop.ui(ui));
                return;
            }
            View::Shader => {
                CentralPanel::default().show(ui, |ui| self.shader.ui(ui));
                return;
            }
        }
        let wide = ui.available_width() >= 1100.0;
        Panel::left("simtlab-controls").resizable(true).default_size(300.0).size_range(240.0..=380.0).show(ui, |ui| {
            ScrollArea::vertical().show(ui, |ui| self.controls(ui));
        });
        if wide {
            Panel::right("simtlab-side").resizable(true).default_size(380.0).size_range(280.0..=560.0).show(ui, |ui| {
                ScrollArea::vertical().show(ui, |ui| self.side(ui));
            });
        }
        CentralPanel::default().show(ui, |ui| {
            ScrollArea::vertical().show(ui, |ui| {
                self.results(ui);
                if !wide {
                    ui.separator();
                    self.side(ui);
                }
            });
        });
    }
}

#[cfg(not(target_arch = "wasm32"))]
struct ExplorerApp(Explorer);

#[cfg(not(target_arch = "wasm32"))]
impl eframe::App for ExplorerApp {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        self.0.ui(ui);
    }
}

/// How `simtlab gui` opens the explorer.
#[derive(Clone, Debug, Default)]
pub struct ExplorerOptions {
    /// Adapter choice and the GPU wait timeout.
    pub options: GpuOptions,
    /// GPU benchmarks repeat timed runs shorter than this many seconds.
    pub min_sample_seconds: f64,
    /// The workload to open with (a registry name).
    pub workload: Option<String>,
    /// Start a run as the window opens.
    pub run_now: bool,
    /// A run file (`simtlab run --json` or saved by the explorer) to open.
    pub open: Option<PathBuf>,
}

/// Opens the explorer window (eframe, wgpu renderer). Runs use their own `Gpu`, opened on a
/// background thread on the adapter picked in the window.
#[cfg(not(target_arch = "wasm32"))]
pub fn run(launch: &ExplorerOptions) -> Result<()> {
    let has_display = ["DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET"].iter().any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
    if cfg!(target_os = "linux") && !has_display {
        return Err(Error::Unsupported {
            what: "a window".into(),
            adapter: "this session (neither DISPLAY nor WAYLAND_DISPLAY is set)".into(),
            hint: "run it on a desktop, or under a virtual display (`xvfb-run simtlab gui`); the other commands need no display".into(),
        });
    }
    let mut explorer = Explorer::new(&launch.options);
    explorer.min_sample_seconds = launch.min_sample_seconds;
    if let Some(name) = &launch.workload {
        explorer.select_by_name(name)?;
    }
    if let Some(path) = &launch.open {
        explorer.open_file(path)?;
    }
    explorer.run_on_start = launch.run_now;
    let native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default().with_inner_size([1400.0, 900.0]).with_title("simtlab explorer"),
        renderer: eframe::Renderer::Wgpu,
        ..Default::default()
    };
    eframe::run_native("simtlab explorer", native, Box::new(|_cc| Ok(Box::new(ExplorerApp(explorer))))).map_err(|e| Error::Unsupported {
        what: "the explorer window".into(),
        adapter: "this display".into(),
        hint: format!("the window system or its GPU surface refused it ({e})"),
    })
}
