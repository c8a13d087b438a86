//! Remap in the "Your shader" tab: the shader as loaded, remapped without edits
//! ([`crate::remap::remap_run_async`], what `simtlab remap` runs), shown as the heat maps per
//! subgroup before and after side by side, the timings (as written, remapped, key pass,
//! classes, index), the decision with its reasons, and whether every writable binding came out
//! identical.
//!
//! [`RemapPanel`] holds the run's state; the tab starts it with [`RemapPanel::start`] and draws
//! [`RemapPanel::controls`] and [`RemapPanel::ui`]. The run goes off the frame as the tab's
//! profiles do: on a worker thread natively, on the page's event loop in a browser, with its
//! messages polled every frame.

use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use egui::{ProgressBar, RichText, Ui};

use crate::error::{Error, Result};
use crate::gpu::{Gpu, GpuOptions};
use crate::harness::format_seconds;
use crate::profile::{BindingSpec, ProfileStep, ShaderDispatch};
use crate::remap::{remap_run_async, Calibration, RemapRequest, RemapRun, Strategy};
use crate::ui::overlay::{ColorBy, HeatMap};

/// What one remap runs, owned by the worker: the tab's shader, entry, dispatch and bindings.
#[derive(Clone, Debug)]
pub struct RemapInput {
    /// The shader's name in messages.
    pub name: String,
    /// Its WGSL.
    pub source: String,
    /// The entry point.
    pub entry: String,
    /// Workgroups to dispatch.
    pub workgroups: [u32; 3],
    /// `(binding key, contents)`.
    pub bindings: Vec<(String, BindingSpec)>,
    /// Emulate subgroups of this width on the host.
    pub width: Option<u32>,
    /// Timed runs of each variant.
    pub samples: usize,
}

enum Message {
    Opened(String),
    Step(ProfileStep),
    Done(Box<Remapped>),
    Failed(String),
    Cancelled,
}

/// A finished remap with its heat maps (built on the worker).
#[derive(Debug)]
struct Remapped {
    run: RemapRun,
    before: HeatMap,
    /// None when the remapped shader did not run (auto kept the shader as written).
    after: Option<HeatMap>,
}

#[derive(Debug)]
struct Running {
    rx: Receiver<Message>,
    cancel: Arc<AtomicBool>,
    step: Option<ProfileStep>,
}

/// The remap of the tab's shader: strategy, run state and the last result.
#[derive(Debug)]
pub struct RemapPanel {
    /// The strategy the next remap asks for.
    pub strategy: Strategy,
    /// Dispatches one index serves (the key pass and the index are paid once for them).
    pub dispatches: usize,
    running: Option<Running>,
    result: Option<Box<Remapped>>,
    status: String,
    error: Option<String>,
    /// What the remaps so far measured on the tab's adapter: the next decision weighs it.
    calibration: Calibration,
}

impl Default for RemapPanel {
    fn default() -> Self {
        RemapPanel {
            strategy: Strategy::Auto,
            dispatches: 1,
            running: None,
            result: None,
            status: "not run".into(),
            error: None,
            calibration: Calibration::default(),
        }
    }
}

impl RemapPanel {
    /// Whether a remap is running.
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// The last finished remap.
    pub fn result(&self) -> Option<&RemapRun> {
        self.result.as_ref().map(|r| &r.run)
    }

    /// What the remaps so far taught the cost model on the tab's adapter.
    pub fn calibration(&self) -> &Calibration {
        &self.calibration
    }

    /// The last error, as the command line prints it.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// What the panel is doing, in a few words.
    pub fn status(&self) -> &str {
        &self.status
    }

    /// Records an error that stopped a remap before it started (a bad spec, no shader).
    pub fn refuse(&mut self, e: &Error) {
        self.error = Some(shown(e));
        self.status = "not started".into();
    }

    /// Starts remapping `input` with [`RemapPanel::strategy`] off the frame, on the adapter the
    /// tab shares (`gpu`, opened with `options` on first use); `ctx` repaints as it goes.
    pub fn start(&mut self, ctx: &egui::Context, options: &GpuOptions, gpu: &Arc<Mutex<Option<Arc<Gpu>>>>, input: RemapInput) {
        if self.running.is_some() {
            return;
        }
        self.error = None;
        self.status = format!("remapping {} ({}) with {}", input.name, input.entry, self.strategy);
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = channel();
        let job = Job {
            options: options.clone(),
            gpu: gpu.clone(),
            input,
            strategy: self.strategy,
            dispatches: self.dispatches.max(1),
            cancel: cancel.clone(),
            calibration: self.calibration.clone(),
        };
        match job.spawn(tx, ctx.clone()) {
            Ok(()) => self.running = Some(Running { rx, cancel, step: None }),
            Err(e) => self.error = Some(format!("error: could not start the remap thread: {e}")),
        }
    }

    /// Takes the worker's messages (called every frame by [`RemapPanel::ui`]).
    pub fn poll(&mut self) {
        let Some(running) = &mut self.running else { return };
        let mut finished = false;
        loop {
            match running.rx.try_recv() {
                Ok(Message::Opened(what)) => self.status = what,
                Ok(Message::Step(step)) => running.step = Some(step),
                Ok(Message::Done(remapped)) => {
                    let r = &remapped.run;
                    self.status = format!(
                        "done: {}, SIMT efficiency {:.1} % -> {:.1} %",
                        r.strategy,
                        100.0 * r.before.simt_efficiency,
                        100.0 * r.after.simt_efficiency
                    );
                    self.calibration = r.calibration.clone();
                    self.result = Some(remapped);
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

    /// The strategy choice and the Remap and Cancel buttons; true when Remap was clicked
    /// (`enabled`: nothing else runs and the shader can be remapped).
    pub fn controls(&mut self, ui: &mut Ui, enabled: bool) -> bool {
        let mut clicked = false;
        ui.horizontal(|ui| {
            let running = self.running.is_some();
            clicked = ui.add_enabled(enabled && !running, egui::Button::new("Remap")).clicked();
            ui.add_enabled_ui(!running, |ui| {
                let label = ui.label("strategy");
                egui::ComboBox::from_id_salt("simtlab-remap-strategy")
                    .selected_text(self.strategy.to_string())
                    .show_ui(ui, |ui| {
                        for &s in Strategy::FOR_SHADERS {
                            ui.selectable_value(&mut self.strategy, s, s.to_string());
                        }
                    })
                    .response
                    .labelled_by(label.id);
                let label = ui.label("dispatches per index");
                ui.add(egui::DragValue::new(&mut self.dispatches).range(1..=1_000_000)).labelled_by(label.id);
            });
            if ui.add_enabled(running, egui::Button::new("Cancel remap")).clicked() {
                super::runs::request_cancel(self.running.as_ref().map(|r| &*r.cancel), &mut self.status);
            }
            ui.label(format!("remap: {}", self.status));
        });
        clicked
    }

    /// The last remap (or its progress, or its error): decision and reasons, efficiencies,
    /// timings, outputs, and the heat maps before and after side by side. Draws nothing before
    /// the first remap.
    pub fn ui(&mut self, ui: &mut Ui, color_by: ColorBy) {
        self.poll();
        if self.running.is_none() && self.result.is_none() && self.error.is_none() {
            return;
        }
        ui.heading("remap");
        if let Some(r) = &self.running {
            let (frac, text) = match &r.step {
                Some(s) => (s.done as f32 / s.total.max(1) as f32, format!("{}/{} · {}", s.done, s.total, s.what)),
                None => (0.0, "opening the adapter".to_string()),
            };
            ui.add(ProgressBar::new(frac).text(text).animate(true));
            ui.ctx().request_repaint_after(Duration::from_millis(100));
        }
        if let Some(e) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, RichText::new(e).monospace());
        }
        let Some(remapped) = &mut self.result else { return };
        let r = &remapped.run;
        let (b, a) = (&r.before, &r.after);
        ui.label(RichText::new(format!("decision: {}", r.strategy)).strong());
        // the reasons quote measured times: folded, so that the view reads the same each run
        egui::CollapsingHeader::new("why (the model's prediction and what was measured)").id_salt("simtlab-remap-why").show(ui, |ui| {
            ui.label(&r.reason);
            // what the measurement taught the model: the next remap on this adapter decides with it
            for lesson in &r.lessons {
                ui.label(format!("learned on this adapter: {lesson}")).on_hover_text(
                    "the saving predicted, the saving measured, and what the corrected model predicts now for the same keys",
                );
            }
        });
        ui.label(format!("keys: {} ({} classes); index at group {} binding {}", r.key, r.classes, r.slot.0, r.slot.1));
        egui::Grid::new("simtlab-remap-figures").num_columns(3).striped(true).show(ui, |ui| {
            ui.label("");
            ui.strong("as written");
            ui.strong("remapped");
            ui.end_row();
            ui.label("SIMT efficiency");
            ui.label(format!("before: {:.1} %", 100.0 * b.simt_efficiency));
            ui.label(format!("after: {:.1} %", 100.0 * a.simt_efficiency));
            ui.end_row();
            ui.label("branch efficiency");
            ui.label(format!("before: {:.1} %", 100.0 * b.branch_efficiency));
            ui.label(format!("after: {:.1} %", 100.0 * a.branch_efficiency));
            ui.end_row();
        });
        let index_where = match r.strategy {
            Strategy::GpuRegroup => " on the GPU",
            Strategy::Redirect => " on the host",
            _ => "",
        };
        egui::CollapsingHeader::new("timings").id_salt("simtlab-remap-timings").show(ui, |ui| {
            ui.label(format!(
                "GPU time ({:?}): plain {}, remapped {} ({:.2}x)",
                b.timing.source,
                format_seconds(b.seconds),
                format_seconds(a.seconds),
                r.kernel_speedup
            ));
            ui.label(format!(
                "key pass {}, classes {} on the host, index {}{index_where}; end to end over {} dispatch(es): {:.2}x",
                format_seconds(r.key_seconds),
                format_seconds(r.classes_seconds),
                format_seconds(r.index_seconds),
                r.dispatches,
                r.speedup
            ));
        });
        if r.outputs_identical {
            ui.label("outputs identical: every writable binding, as written and remapped");
        } else {
            ui.colored_label(ui.visuals().error_fg_color, "outputs DIFFER as written and remapped");
        }
        ui.columns(2, |columns| {
            columns[0].label(format!("as written: SIMT efficiency {:.1} %", 100.0 * b.simt_efficiency));
            remapped.before.ui(&mut columns[0], color_by);
            match &mut remapped.after {
                Some(after) => {
                    columns[1].label(format!("remapped: SIMT efficiency {:.1} %", 100.0 * a.simt_efficiency));
                    after.ui(&mut columns[1], color_by);
                }
                None => {
                    columns[1].label("remapped: not run (the shader runs as written)");
                }
            }
        });
        remapped.before.legend(ui, color_by);
        ui.small("both maps on the scale of the shader as written");
    }
}

/// A remap on the worker.
struct Job {
    options: GpuOptions,
    gpu: Arc<Mutex<Option<Arc<Gpu>>>>,
    input: RemapInput,
    strategy: Strategy,
    dispatches: usize,
    cancel: Arc<AtomicBool>,
    calibration: Calibration,
}

impl Job {
    /// Runs the remap on a worker thread (native) or on the page's event loop (a browser has no
    /// threads and cannot wait); its messages go to `tx`, and `ctx` repaints after each.
    fn spawn(self, tx: Sender<Message>, ctx: egui::Context) -> std::io::Result<()> {
        let send = move |m: Message| {
            let _ = tx.send(m);
            ctx.request_repaint();
        };
        #[cfg(not(target_arch = "wasm32"))]
        std::thread::Builder::new().name("simtlab-shader-remap".into()).spawn(move || {
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crate::gpu::block_on(self.run(&send)))).is_err() {
                send(Message::Failed("error: the remap panicked (a bug in simtlab)".into()));
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
        let g = Arc::new(Gpu::new_async(&self.options).await?);
        *self.gpu.lock().map_err(|_| opened())? = Some(g.clone());
        Ok(g)
    }

    async fn run(self, send: &dyn Fn(Message)) {
        let gpu = match self.open().await {
            Ok(g) => g,
            Err(e) => return send(Message::Failed(shown(&e))),
        };
        send(Message::Opened(format!("remapping on {}", gpu.adapter_name())));
        let i = &self.input;
        let request = RemapRequest {
            shader: ShaderDispatch { bindings: i.bindings.clone(), ..ShaderDispatch::new(&i.name, &i.source, &i.entry, i.workgroups) },
            key: None,
            strategy: self.strategy,
            width: i.width,
            samples: i.samples.max(1),
            slot: None,
            dispatches: self.dispatches,
            calibration: Some(&self.calibration),
        };
        match remap_run_async(&gpu, &request, &self.cancel, &mut |step| send(Message::Step(step))).await {
            Ok(run) => {
                let before = HeatMap::new(&run.runs.0.counts.divergence());
                // one colour scale for both: the map as written has the most divergence
                let after = run.runs.1.as_ref().map(|p| HeatMap::new(&p.counts.divergence()).with_max_divergent(before.max_divergent()));
                send(Message::Done(Box::new(Remapped { run, before, after })));
            }
            Err(Error::Cancelled { .. }) => send(Message::Cancelled),
            Err(e) => send(Message::Failed(shown(&e))),
        }
    }
}

/// An error as `simtlab remap` prints it.
fn shown(e: &Error) -> String {
    format!("error: {e}").trim_end().to_string()
}
