//! "Your own shader": open or paste a WGSL compute shader, give its bindings with the specs of
//! `simtlab profile`, run the profile on a background thread, and see each probed line of the
//! source coloured by the metric picked (SIMT or branch efficiency), the sites in a sortable table, the heat map per
//! subgroup and the occupancy of the kernel.
//!
//! [`ShaderView`] is plain egui: [`ShaderView::ui`] draws into any `Ui`. The profile runs on a
//! [`Gpu`] the view opens itself on its worker thread ([`crate::profile::profile_with`], with
//! progress and cancel), so the UI thread never waits for the GPU.
//!
//! A shader that calls the persistent-threads module ([`crate::pt::user`]) runs on the same
//! worker through the runtime instead ([`crate::pt::user::run_async`], as `simtlab pt` runs
//! it): the profiler's probes do not apply to workgroups that wait on each other. The view
//! then shows the tier that ran, the workgroups launched and participating, any fallback, the
//! time and the outputs, or the runtime's refusal where the adapter cannot run blocking waits.

mod inputs;
mod sites;
mod source;

use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use egui::{Color32, ProgressBar, RichText, ScrollArea, Ui};

use crate::error::{Error, Result};
use crate::gpu::{Gpu, GpuOptions};
use crate::occupancy::{find_arch, Launch};
use crate::profile::{self, BindingSpec, CountSource, ProfileRequest, ProfileRun, ProfileStep, ShaderDispatch, DEFAULT_TRACE_EVENTS};
use crate::pt::user::{self, PtRequest, PtRun, QueueOptions};
use crate::pt::{PtOptions, Runtime, Tier};
use crate::ui::overlay::{ColorBy, HeatMap, OccupancyPanel};

pub use inputs::{default_spec, BindingField};
pub use sites::{SiteOrder, COLUMNS};
pub use source::{efficiency_color, LineMarks, ProfiledSource, SourceMetric, NOT_REACHED};

/// What the worker reports.
enum Message {
    Opened(String),
    Step(ProfileStep),
    Done(Box<Loaded>),
    PtDone(Box<PtRun>),
    Failed(String),
    Cancelled,
}

#[derive(Debug)]
struct Running {
    rx: Receiver<Message>,
    cancel: Arc<AtomicBool>,
    step: Option<ProfileStep>,
    /// A persistent-threads run (no steps, no cancel).
    pt: bool,
}

/// A finished profile with what the view draws from it (built on the worker thread).
#[derive(Debug)]
struct Loaded {
    run: ProfileRun,
    /// The source that ran (the editor may have changed since).
    source: String,
    marks: LineMarks,
    /// Per site: subgroups in which its lanes disagreed at least once.
    divergent_subgroups: Vec<u64>,
    heat_map: HeatMap,
}

/// The "your own shader" view: inputs, run control, and the profile of the last run.
#[derive(Debug)]
pub struct ShaderView {
    options: GpuOptions,
    /// Opened on the first run, on the worker thread.
    gpu: Arc<Mutex<Option<Arc<Gpu>>>>,
    /// Runs persistent-threads kernels; keeps the adapter's capability check between runs.
    runtime: Arc<Runtime>,
    /// The path typed in the path field.
    pub path: String,
    /// The shader's name in messages (its path, or "pasted.wgsl").
    name: String,
    /// The WGSL as loaded or edited.
    source: String,
    inputs: inputs::Inputs,
    /// Show the source as an editor (paste or change the WGSL) instead of the coloured view.
    pub editing: bool,
    /// Workgroups to dispatch.
    pub workgroups: [u32; 3],
    /// Emulate subgroups of this width on the host instead of the GPU's own.
    pub emulate_width: Option<u32>,
    /// Timed runs of the plain and the instrumented shader (the median is shown).
    pub samples: usize,
    /// Order of the site table.
    pub order: SiteOrder,
    /// What the heat map's colour shows.
    pub color_by: ColorBy,
    /// What the source view colours its probed lines by.
    pub source_metric: SourceMetric,
    /// The occupancy panel, pointed at the kernel's WGSL.
    pub occupancy: OccupancyPanel,
    /// Remap of the shader: before and after ([`super::remap_view`]).
    pub remap: super::remap_view::RemapPanel,
    running: Option<Running>,
    result: Option<Box<Loaded>>,
    /// The last finished persistent-threads run.
    pt_result: Option<Box<PtRun>>,
    status: String,
    error: Option<String>,
}

impl ShaderView {
    /// An empty view; runs go to the adapter `options` pick (then `WGPU_BACKEND` /
    /// `WGPU_ADAPTER_NAME`), opened on the first run.
    pub fn new(options: &GpuOptions) -> ShaderView {
        let mut occupancy = OccupancyPanel::new(find_arch("cc9.0").unwrap_or(&crate::occupancy::ARCHS[0]), Launch::new(64, 32, 0));
        occupancy.plot_height = 90.0;
        ShaderView {
            options: options.clone(),
            gpu: Arc::new(Mutex::new(None)),
            runtime: Arc::new(Runtime::new(PtOptions::default())),
            path: String::new(),
            name: "pasted.wgsl".into(),
            source: String::new(),
            inputs: inputs::Inputs::default(),
            editing: true,
            workgroups: [16, 1, 1],
            emulate_width: None,
            samples: 3,
            order: SiteOrder::default(),
            color_by: ColorBy::default(),
            source_metric: SourceMetric::default(),
            occupancy,
            remap: Default::default(),
            running: None,
            result: None,
            pt_result: None,
            status: "open a WGSL file or paste one".into(),
            error: None,
        }
    }

    /// Takes `wgsl` as the shader called `name`: finds its compute entry points and the
    /// bindings of the first, each prefilled with a default spec. A shader naga rejects
    /// leaves the message (with line and column) in [`ShaderView::error`].
    pub fn load_source(&mut self, name: &str, wgsl: &str) {
        self.name = name.to_string();
        self.source = wgsl.to_string();
        self.reparse();
    }

    /// Reads the WGSL file at `path` and loads it ([`ShaderView::load_source`]).
    pub fn load_file(&mut self, path: &str) -> Result<()> {
        self.path = path.to_string();
        match std::fs::read_to_string(path) {
            Ok(text) => {
                self.load_source(path, &text);
                self.editing = false;
                Ok(())
            }
            Err(e) => {
                let e = Error::io(path, e);
                self.error = Some(shown(&e));
                Err(e)
            }
        }
    }

    fn reparse(&mut self) {
        self.error = self.inputs.parse(&self.name, &self.source, self.workgroups).err().map(|e| shown(&e));
        self.point_occupancy();
    }

    fn point_occupancy(&mut self) {
        if let Some(entry) = self.inputs.entry() {
            // a persistent-threads kernel is read with the module placed
            let text = self.inputs.pt.as_ref().map_or(self.source.as_str(), |s| s.source.text.as_str());
            if let Err(e) = self.occupancy.set_kernel(&self.name, text, entry) {
                self.error.get_or_insert(shown(&e));
            }
        }
    }

    /// The WGSL as loaded, pasted or typed.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The compute entry points of the loaded shader.
    pub fn entries(&self) -> &[String] {
        &self.inputs.entries
    }

    /// Profiles entry point `entry` (its bindings get default specs, keeping those given).
    pub fn set_entry(&mut self, entry: &str) -> Result<()> {
        self.inputs.select(&self.name, &self.source, entry, self.workgroups)?;
        self.point_occupancy();
        Ok(())
    }

    /// The bindings of the entry point and the spec typed for each.
    pub fn bindings(&self) -> &[BindingField] {
        &self.inputs.bindings
    }

    /// Types `spec` into the field of the binding `key` names (its name, `N` or `G:N`).
    pub fn set_binding(&mut self, key: &str, spec: &str) -> Result<()> {
        let names = self.inputs.binding_names();
        let field = self.inputs.bindings.iter_mut().find(|f| f.info.matches(key));
        let field =
            field.ok_or_else(|| Error::invalid("binding", format!("'{key}' names no binding of the entry point; it has {names}")))?;
        field.spec = spec.to_string();
        Ok(())
    }

    /// True while a profile runs on the worker thread.
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// The step the running profile is at (None before its first, or when none runs).
    pub fn progress(&self) -> Option<&ProfileStep> {
        self.running.as_ref()?.step.as_ref()
    }

    /// The last finished profile.
    pub fn result(&self) -> Option<&ProfileRun> {
        self.result.as_ref().map(|l| &l.run)
    }

    /// The tier the selected entry point needs where it calls the persistent-threads module
    /// (then it runs through the runtime), None otherwise.
    pub fn persistent_tier(&self) -> Option<Tier> {
        self.inputs.pt.as_ref().map(|s| s.needs)
    }

    /// The last finished persistent-threads run.
    pub fn pt_result(&self) -> Option<&PtRun> {
        self.pt_result.as_deref()
    }

    /// Why the selected kernel cannot run in this build: in a browser, every persistent-threads
    /// kernel; None where it can run.
    fn pt_unavailable(&self) -> Option<&'static str> {
        let reason = match self.persistent_tier()? {
            Tier::Blocking => super::browser::PT_WAITS,
            _ => super::browser::PT_CLAIMS,
        };
        super::browser::unavailable(reason)
    }

    /// The last error, as `simtlab profile` prints it (`error: …`).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The status line: what runs now, or how the last run ended.
    pub fn status(&self) -> &str {
        &self.status
    }

    /// The colour of source line `line` (1-based) in the last profile: by the lowest
    /// [`ShaderView::source_metric`] of its sites, [`NOT_REACHED`] when none was evaluated, None
    /// for a line without a site.
    pub fn line_color(&self, line: u32) -> Option<Color32> {
        let l = self.result.as_ref()?;
        l.marks.color(&l.run.summary.sites, line, self.source_metric)
    }

    /// Starts profiling the current shader, entry point and bindings on a background thread;
    /// `ctx` is asked to repaint as it goes. Bad specs and shaders stop here with the error
    /// the command line would print.
    pub fn start(&mut self, ctx: &egui::Context) {
        if self.running.is_some() {
            return;
        }
        let request = match self.request() {
            Ok(r) => r,
            Err(e) => {
                self.error = Some(shown(&e));
                self.status = "not started".into();
                return;
            }
        };
        self.error = None;
        let pt = request.pt;
        self.status = if pt {
            format!("running {} ({}) with persistent threads", request.name, request.entry)
        } else {
            format!("profiling {} ({})", request.name, request.entry)
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = channel();
        let job =
            Job { options: self.options.clone(), gpu: self.gpu.clone(), runtime: self.runtime.clone(), request, cancel: cancel.clone() };
        match job.spawn(tx, ctx.clone()) {
            Ok(()) => self.running = Some(Running { rx, cancel, step: None, pt }),
            Err(e) => self.error = Some(format!("error: could not start the profile thread: {e}")),
        }
    }

    /// Everything the worker needs, owned; the specs parsed as `--bind` parses them.
    fn request(&self) -> Result<OwnedRequest> {
        if self.source.trim().is_empty() {
            return Err(Error::invalid("shader", "no WGSL loaded; open a file or paste one"));
        }
        let entry = self.inputs.entry().ok_or_else(|| Error::invalid("entry point", "the shader has no compute entry point"))?;
        if let Some(why) = self.pt_unavailable() {
            return Err(Error::Unsupported { what: format!("'{entry}' of {}", self.name), adapter: "this page".into(), hint: why.into() });
        }
        let bindings = self
            .inputs
            .bindings
            .iter()
            .map(|f| Ok((format!("{}:{}", f.info.group, f.info.binding), f.spec.trim().parse::<BindingSpec>()?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(OwnedRequest {
            name: self.name.clone(),
            source: self.source.clone(),
            entry: entry.to_string(),
            workgroups: self.workgroups,
            bindings,
            emulate_width: self.emulate_width,
            samples: self.samples.max(1),
            pt: self.inputs.pt.is_some(),
        })
    }

    /// Starts remapping the current shader, entry point and bindings off the frame
    /// ([`super::remap_view::RemapPanel::start`]).
    pub fn start_remap(&mut self, ctx: &egui::Context) {
        if self.running.is_some() {
            return;
        }
        match self.request() {
            Ok(r) => {
                let input = super::remap_view::RemapInput {
                    name: r.name,
                    source: r.source,
                    entry: r.entry,
                    workgroups: r.workgroups,
                    bindings: r.bindings,
                    width: r.emulate_width,
                    samples: r.samples,
                };
                self.remap.start(ctx, &self.options, &self.gpu, input);
            }
            Err(e) => self.remap.refuse(&e),
        }
    }

    /// Asks the running profile to stop before its next step.
    pub fn cancel(&mut self) {
        super::runs::request_cancel(self.running.as_ref().map(|r| &*r.cancel), &mut self.status);
    }

    /// Takes the worker's messages (called every frame by [`ShaderView::ui`]).
    pub fn poll(&mut self) {
        let Some(running) = &mut self.running else { return };
        let mut finished = false;
        loop {
            match running.rx.try_recv() {
                Ok(Message::Opened(what)) => self.status = what,
                Ok(Message::Step(step)) => running.step = Some(step),
                Ok(Message::Done(loaded)) => {
                    let s = &loaded.run.summary;
                    self.status = format!("done: {} sites, {} subgroups of {}", s.sites.len(), s.subgroups, s.subgroup_width);
                    if let Some(registers) = loaded.run.registers() {
                        self.occupancy.registers_per_thread = registers;
                    }
                    self.result = Some(loaded);
                    self.pt_result = None;
                    self.editing = false;
                    finished = true;
                }
                Ok(Message::PtDone(run)) => {
                    self.status = format!(
                        "done: {}, {} of {} workgroups participating",
                        run.plan.used.label(),
                        run.participants,
                        run.workgroups.iter().product::<u32>()
                    );
                    self.pt_result = Some(run);
                    self.result = None;
                    finished = true;
                }
                Ok(Message::Failed(e)) => {
                    self.error = Some(e);
                    self.status = "failed".into();
                    finished = true;
                }
                Ok(Message::Cancelled) => {
                    self.status = "cancelled".into();
                    finished = true;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    finished = true;
                    break;
                }
            }
        }
        if finished {
            self.running = None;
        }
    }

    fn controls(&mut self, ui: &mut Ui) {
        let running = self.running.is_some() || self.remap.is_running();
        ui.add_enabled_ui(!running, |ui| {
            ui.horizontal(|ui| {
                ui.label("WGSL file");
                ui.add(egui::TextEdit::singleline(&mut self.path).desired_width(320.0).hint_text("path/to/shader.wgsl"));
                let files = super::browser::unavailable(super::browser::WGSL_PATH);
                if ui.add_enabled(files.is_none(), egui::Button::new("Load")).on_disabled_hover_text(files.unwrap_or_default()).clicked() {
                    let path = self.path.clone();
                    let _ = self.load_file(&path);
                }
                ui.toggle_value(&mut self.editing, "edit / paste WGSL");
            });
            let changed = self.inputs.ui(ui, &self.name, &self.source, self.workgroups);
            if changed {
                self.point_occupancy();
            }
            ui.horizontal(|ui| {
                ui.label("workgroups");
                for (w, axis) in self.workgroups.iter_mut().zip(["x", "y", "z"]) {
                    ui.add(egui::DragValue::new(w).range(1..=65535).prefix(format!("{axis} ")));
                }
                ui.label(format!("({} invocations)", self.inputs.invocations(self.workgroups)));
            });
            ui.horizontal(|ui| {
                let mut emulate = self.emulate_width.is_some();
                ui.checkbox(&mut emulate, "emulate subgroups on the host");
                let label = ui.label("width");
                let mut width = self.emulate_width.unwrap_or(32);
                ui.add_enabled(emulate, egui::DragValue::new(&mut width).range(1..=128)).labelled_by(label.id);
                self.emulate_width = emulate.then_some(width);
                ui.add(egui::Slider::new(&mut self.samples, 1..=20).text("timed samples"));
            });
        });
        if let Some(shader) = &self.inputs.pt {
            let waits = shader.waits_at.as_deref().map(|w| format!(", waits: {w}")).unwrap_or_default();
            ui.label(format!(
                "persistent threads: '{}' needs {}{waits}; it runs through the runtime, which picks the workgroups, not the profiler (whose probes do not apply to workgroups that wait on each other)",
                shader.entry,
                shader.needs.label()
            ));
        }
        let unavailable = self.pt_unavailable();
        if let Some(why) = unavailable {
            ui.colored_label(ui.visuals().warn_fg_color, why);
        }
        let pt = self.inputs.pt.is_some();
        ui.horizontal(|ui| {
            let button = egui::Button::new(if pt { "Run" } else { "Profile" });
            if ui.add_enabled(!running && unavailable.is_none(), button).clicked() {
                self.start(ui.ctx());
            }
            let cancellable = self.running.as_ref().is_some_and(|r| !r.pt);
            if ui.add_enabled(cancellable, egui::Button::new("Cancel")).clicked() {
                self.cancel();
            }
            ui.label(format!("status: {}", self.status));
        });
        if self.remap.controls(ui, !running && !pt && unavailable.is_none()) {
            self.start_remap(ui.ctx());
        }
        if let Some(r) = &self.running {
            let (frac, text) = match &r.step {
                Some(s) => (s.done as f32 / s.total.max(1) as f32, format!("{}/{} · {}", s.done, s.total, s.what)),
                None if r.pt => (0.0, "checking the adapter and running the kernel".to_string()),
                None => (0.0, "opening the adapter".to_string()),
            };
            ui.add(ProgressBar::new(frac).text(text).animate(true));
            ui.ctx().request_repaint_after(Duration::from_millis(100));
        }
    }

    /// What a persistent-threads run shows: the tier, the launch, any fallback, the time and
    /// the first words of each output.
    fn pt_summary(run: &PtRun, ui: &mut Ui) {
        ui.label(format!("{} · {} on {} · persistent threads", run.file, run.entry, run.adapter));
        ui.label(
            RichText::new(format!(
                "{} ran · {} workgroups launched, {} participating",
                run.plan.used.label(),
                run.workgroups.iter().product::<u32>(),
                run.participants
            ))
            .strong(),
        );
        if let Some(w) = &run.waits_at {
            ui.label(format!("waits: {w}"));
        }
        ui.label(format!("fallback: {}", run.plan.message().unwrap_or_else(|| "none".into())));
        ui.label(format!(
            "time ({:?}, median of {}): {}",
            run.stats.source,
            run.stats.samples.len(),
            crate::harness::format_seconds(run.stats.median)
        ));
        ui.heading("outputs");
        for (name, _) in &run.outputs {
            let words = run.output_u32(name).unwrap_or_default();
            let shown: Vec<String> = words.iter().take(OUTPUT_WORDS).map(u32::to_string).collect();
            let more = if words.len() > OUTPUT_WORDS { ", …" } else { "" };
            ui.label(RichText::new(format!("{name} ({} words): {}{more}", words.len(), shown.join(", "))).monospace());
        }
    }

    fn summary(l: &Loaded, ui: &mut Ui) {
        let run = &l.run;
        let s = &run.summary;
        let counted = match s.source {
            CountSource::GpuProbe => format!("GPU probe (votes on native subgroups of {})", s.subgroup_width),
            CountSource::HostEmulation => format!("host emulation of subgroups of {} from each invocation's outcomes", s.subgroup_width),
        };
        ui.label(format!("{} · {} on {} · counts: {counted}", run.file, run.entry, run.adapter));
        ui.label(
            RichText::new(format!(
                "SIMT efficiency {:.1} % · branch efficiency {:.1} % · divergent subgroups {} of {} (ratio {:.3})",
                100.0 * s.simt_efficiency,
                100.0 * s.branch_efficiency,
                s.divergent_subgroups,
                s.subgroups,
                s.divergence_ratio
            ))
            .strong(),
        );
        if !run.outputs_identical {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                "outputs DIFFER with and without the probe (a shader whose result depends on timing, or a bug: please report it)",
            );
        }
        egui::CollapsingHeader::new("GPU time").id_salt("simtlab-shader-time").show(ui, |ui| {
            ui.label(probe_cost(run));
        });
    }

    /// Inputs and run control on top; below, the coloured source on the left and the site
    /// table, heat map and occupancy on the right.
    pub fn ui(&mut self, ui: &mut Ui) {
        self.poll();
        ui.push_id("simtlab-shader-view", |ui| {
            self.controls(ui);
            ui.separator();
            let height = ui.available_height().max(200.0);
            // the source gets 45 %, the wider site table the rest; both scroll on their own
            let left = (ui.available_width() * 0.45).max(320.0);
            ui.horizontal_top(|ui| {
                ui.vertical(|ui| {
                    ui.set_width(left);
                    self.source_column(ui, height);
                });
                ui.separator();
                ui.vertical(|ui| {
                    ScrollArea::both().id_salt("simtlab-shader-results").max_height(height).show(ui, |ui| self.results_column(ui));
                });
            });
        });
    }

    /// The source (coloured, or the editor) with the error line below it: a message that comes
    /// and goes while typing moves nothing above the editor, and the editor's id is fixed, so it
    /// keeps the focus whatever the controls above it show.
    fn source_column(&mut self, ui: &mut Ui, height: f32) {
        // the error's line (two when long) stays below the source
        let below = 2.5 * ui.text_style_height(&egui::TextStyle::Monospace);
        match (&self.result, self.editing) {
            (Some(l), false) => {
                source::legend(ui, &mut self.source_metric);
                let profiled = ProfiledSource {
                    source: &l.source,
                    rows: &l.run.summary.sites,
                    marks: &l.marks,
                    divergent_subgroups: &l.divergent_subgroups,
                    subgroups: l.run.summary.subgroups,
                };
                source::source_view(ui, &profiled, self.source_metric, height - 50.0 - below);
            }
            _ => {
                ScrollArea::vertical().id_salt("simtlab-shader-editor").max_height(height - below).show(ui, |ui| {
                    let editor = egui::TextEdit::multiline(&mut self.source)
                        .id(egui::Id::unique(EDITOR_ID))
                        .code_editor()
                        .desired_width(f32::INFINITY)
                        .desired_rows(24)
                        .hint_text("paste a WGSL compute shader here");
                    if ui.add(editor).changed() {
                        self.reparse();
                    }
                });
            }
        }
        if let Some(e) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, RichText::new(e).monospace());
        }
    }

    fn results_column(&mut self, ui: &mut Ui) {
        self.remap.ui(ui, self.color_by);
        match &mut self.result {
            None if self.pt_result.is_some() => {
                if let Some(run) = &self.pt_result {
                    Self::pt_summary(run, ui);
                }
            }
            None => {
                ui.label("no profile yet: load a shader, give its bindings and press Profile");
            }
            Some(l) => {
                Self::summary(l, ui);
                ui.separator();
                ui.heading("sites");
                let subgroups = l.run.summary.subgroups;
                sites::site_table(ui, &l.run.summary.sites, &l.divergent_subgroups, subgroups, &mut self.order);
                ui.separator();
                ui.heading("heat map per subgroup");
                ui.horizontal(|ui| {
                    ui.label("colour:");
                    for c in [ColorBy::DivergentEvaluations, ColorBy::ActiveLanes] {
                        ui.selectable_value(&mut self.color_by, c, c.label());
                    }
                });
                l.heat_map.ui(ui, self.color_by);
                l.heat_map.legend(ui, self.color_by);
            }
        }
        ui.separator();
        ui.heading("occupancy");
        let registers = self.result.as_ref().map(|l| (l.run.registers(), l.run.driver_statistics_missing.as_deref()));
        ui.small(match registers {
            Some((Some(r), _)) => format!("registers: {r} per thread, as the driver compiled the shader"),
            Some((None, Some(why))) => format!("registers: {why}"),
            _ => "registers: the driver's count comes with a profile where the driver reports it; until then, the slider's".into(),
        });
        self.occupancy.ui(ui);
    }
}

/// What one run profiles, owned by the worker.
struct OwnedRequest {
    name: String,
    source: String,
    entry: String,
    workgroups: [u32; 3],
    bindings: Vec<(String, BindingSpec)>,
    emulate_width: Option<u32>,
    samples: usize,
    /// Run through the persistent-threads runtime instead of the profiler.
    pt: bool,
}

/// The source editor's widget id: fixed, so the editor keeps its focus and cursor whatever
/// appears above it while the user types.
const EDITOR_ID: &str = "simtlab-shader-editor-text";

/// First words of each output a persistent-threads run shows.
const OUTPUT_WORDS: usize = 8;

/// A profile (or a persistent-threads run) on the worker thread.
struct Job {
    options: GpuOptions,
    gpu: Arc<Mutex<Option<Arc<Gpu>>>>,
    runtime: Arc<Runtime>,
    request: OwnedRequest,
    cancel: Arc<AtomicBool>,
}

impl Job {
    /// Runs the profile on a worker thread (native) or on the page's event loop (a browser has
    /// no threads and cannot wait); its messages go to `tx`, and `ctx` repaints after each.
    fn spawn(self, tx: Sender<Message>, ctx: egui::Context) -> std::io::Result<()> {
        let send = move |m: Message| {
            let _ = tx.send(m);
            ctx.request_repaint();
        };
        #[cfg(not(target_arch = "wasm32"))]
        std::thread::Builder::new().name("simtlab-shader-profile".into()).spawn(move || {
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crate::gpu::block_on(self.run(&send)))).is_err() {
                send(Message::Failed("error: the profile panicked (a bug in simtlab)".into()));
            }
        })?;
        #[cfg(target_arch = "wasm32")]
        wasm_bindgen_futures::spawn_local(async move { self.run(&send).await });
        Ok(())
    }

    async fn open(&self) -> Result<Arc<Gpu>> {
        let opened = || Error::invalid("adapter", "a previous run panicked while opening it");
        if let Some(g) = self.gpu.lock().map_err(|_| opened())?.as_ref() {
            return Ok(g.clone());
        }
        // one profile at a time opens it (the view starts none while one is going)
        let g = Arc::new(Gpu::new_async(&self.options).await?);
        *self.gpu.lock().map_err(|_| opened())? = Some(g.clone());
        Ok(g)
    }

    async fn run(self, send: &dyn Fn(Message)) {
        let gpu = match self.open().await {
            Ok(g) => g,
            Err(e) => return send(Message::Failed(shown(&e))),
        };
        let r = &self.request;
        if r.pt {
            send(Message::Opened(format!("running on {} with persistent threads", gpu.adapter_name())));
            let request = PtRequest {
                file: &r.name,
                wgsl: &r.source,
                entry: &r.entry,
                bindings: r.bindings.clone(),
                workgroups: None,
                dispatches: 1,
                samples: r.samples,
                expect: Vec::new(),
                queue: QueueOptions::default(),
            };
            // the runtime plans first: a waiting kernel is refused there, before any dispatch
            return match user::run_async(&gpu, &self.runtime, &request).await {
                Ok(run) => send(Message::PtDone(Box::new(run))),
                Err(e) => send(Message::Failed(shown(&e))),
            };
        }
        send(Message::Opened(format!("profiling on {}", gpu.adapter_name())));
        let shader = ShaderDispatch { bindings: r.bindings.clone(), ..ShaderDispatch::new(&r.name, &r.source, &r.entry, r.workgroups) };
        let request = ProfileRequest {
            width: r.emulate_width,
            emulate: r.emulate_width.is_some(),
            trace_events: DEFAULT_TRACE_EVENTS,
            samples: r.samples,
            ..ProfileRequest::new(shader)
        };
        // the device refuses work once cancelled, so a long sample stops where it is
        gpu.set_cancel(Some(self.cancel.clone()));
        let profiled = profile::profile_async(&gpu, &request, &self.cancel, &mut |step| send(Message::Step(step))).await;
        gpu.set_cancel(None);
        match profiled {
            Ok(run) => {
                let loaded = Loaded {
                    marks: LineMarks::new(&run.summary.sites),
                    divergent_subgroups: run.counts.divergent_subgroups(),
                    heat_map: HeatMap::new(&run.counts.divergence()),
                    source: self.request.source.clone(),
                    run,
                };
                send(Message::Done(Box::new(loaded)));
            }
            Err(Error::Cancelled { .. }) => send(Message::Cancelled),
            Err(e) => send(Message::Failed(shown(&e))),
        }
    }
}

/// An error as `simtlab profile` prints it.
fn shown(e: &Error) -> String {
    format!("error: {e}").trim_end().to_string()
}

/// What the probe costs, with the noise of both times: each median with its fastest and
/// slowest runs and their count, and whether the difference is within that noise.
pub fn probe_cost(run: &ProfileRun) -> String {
    use super::plots::{format_range, Comparison, Measured};
    let (plain, probed) = (Measured::of_stats(&run.plain_stats), Measured::of_stats(&run.instrumented_stats));
    let seconds = crate::harness::format_seconds;
    let mut line = format!(
        "{:?}: {} plain ({}), {} instrumented ({})",
        run.plain_stats.source,
        seconds(plain.value),
        format_range(&plain),
        seconds(probed.value),
        format_range(&probed)
    );
    line += &match Comparison::of(&probed, &plain) {
        Some(c) if c.within_noise && plain.samples > 1 => {
            format!("; the probe's cost is within noise ({:+.0} % time)", 100.0 * (1.0 / c.speedup - 1.0))
        }
        Some(c) => format!("; the probe adds {:.0} % time", 100.0 * (1.0 / c.speedup - 1.0)),
        None => String::new(),
    };
    line
}
