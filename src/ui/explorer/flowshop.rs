//! The flow-shop branch-and-bound, live: pick a Taillard instance or a small random one and a
//! search (host with CPU or GPU bounding, or resident on the GPU), run it on a background
//! thread with cancel, and watch the incumbent and the proven lower bound close in, with
//! nodes/s and open nodes; when it ends, the proof and a Gantt chart of the best schedule.
//! A second panel measures the divergence of LB2 on pools built depth-first vs breadth-first.
//!
//! The search runs through [`commands::solve_loaded`], the function behind `simtlab flowshop
//! solve`, so its results are the command's; its [`Progress`] reports come over a channel (the
//! search never waits for the window) and Cancel sets the interrupt flag Ctrl-C sets on the
//! command line.

mod gantt;
mod pools;

pub use gantt::{job_color, Gantt, GanttBar};
pub use pools::{pool_lines, PoolBar, PoolsPanel, POOLS_WORKLOAD};

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use egui::{CollapsingHeader, ComboBox, RichText, ScrollArea, Slider, Ui};
use egui_plot::{uniform_grid_spacer, HoverPosition, Line, LineStyle, Plot, PlotPoints};

use crate::harness::format_significant;

use crate::error::{Error, Result};
use crate::gpu::{Gpu, GpuOptions};
use crate::kernels::flowshop::commands::{self, Device, Search, SolveOptions};
use crate::kernels::flowshop::taillard::{generate, taillard_entries};
use crate::kernels::flowshop::{taillard, Branching, Exploration, Instance, LowerBound, Progress, Solution};

/// The GPU the view's runs share, opened on first use on a worker thread.
type GpuSlot = Arc<Mutex<Option<Arc<Gpu>>>>;

/// The GPU of `slot`, opened with `options` if it is not yet.
#[cfg(not(target_arch = "wasm32"))]
fn open_cached(slot: &GpuSlot, options: &GpuOptions) -> Result<Arc<Gpu>> {
    let mut held = slot.lock().map_err(|_| Error::invalid("adapter", "a previous run panicked while opening it"))?;
    if let Some(gpu) = held.as_ref() {
        return Ok(gpu.clone());
    }
    let gpu = Arc::new(Gpu::new(options)?);
    *held = Some(gpu.clone());
    Ok(gpu)
}

/// Which instance to solve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstanceChoice {
    /// Taillard's instance `taNNN` (1..=120).
    Taillard(usize),
    /// Taillard's generator (processing times 1..=99) at a chosen size and seed.
    Random {
        /// Jobs.
        jobs: usize,
        /// Machines.
        machines: usize,
        /// Generator seed (at least 1).
        seed: u32,
    },
}

impl InstanceChoice {
    /// The instance, generated from its seed.
    pub fn instance(self) -> Result<Instance> {
        match self {
            InstanceChoice::Taillard(number) => taillard(number),
            InstanceChoice::Random { jobs, machines, seed } => {
                let p = generate(jobs, machines, seed)?;
                Instance::new(format!("random {jobs}x{machines} seed {seed}"), jobs, machines, seed, p, 0, 0)
            }
        }
    }

    fn label(self) -> String {
        match self {
            InstanceChoice::Taillard(number) => format!("ta{number:03}"),
            InstanceChoice::Random { .. } => "random".into(),
        }
    }
}

/// Where the search runs (`flowshop solve --search`, `--device`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// The host searches, CPU threads bound the pools.
    HostCpu,
    /// The host searches, the GPU bounds the pools (in the background while the host branches).
    HostGpu,
    /// The whole search on the GPU.
    Resident,
}

impl Method {
    const ALL: [Method; 3] = [Method::HostCpu, Method::HostGpu, Method::Resident];

    fn label(self) -> &'static str {
        match self {
            Method::HostCpu => "host search, CPU bounding",
            Method::HostGpu => "host search, GPU bounding",
            Method::Resident => "resident on the GPU",
        }
    }
}

/// A finished (or cancelled) search.
#[derive(Clone, Debug)]
pub struct FlowshopRun {
    /// The instance solved.
    pub instance: Instance,
    /// What the search found and proved.
    pub solution: Solution,
    /// The best schedule laid out; `None` when no schedule met the search's upper bound.
    pub gantt: Option<Gantt>,
}

enum Message {
    #[cfg_attr(target_arch = "wasm32", expect(dead_code, reason = "sent by the native search only"))]
    Status(String),
    #[cfg_attr(target_arch = "wasm32", expect(dead_code, reason = "sent by the native search only"))]
    Progress(Progress),
    Finished(Box<Result<(Instance, Solution)>>),
}

#[derive(Debug)]
struct Running {
    rx: Receiver<Message>,
    cancel: Arc<AtomicBool>,
    started: Instant,
}

/// The live flow-shop view. Settings are public fields; [`FlowshopView::ui`] draws it.
#[derive(Debug)]
pub struct FlowshopView {
    gpu_options: GpuOptions,
    gpu: GpuSlot,
    /// The instance to solve.
    pub instance: InstanceChoice,
    /// Where the search runs.
    pub method: Method,
    /// Lower bound that prunes the tree.
    pub bound: LowerBound,
    /// Order in which open nodes are expanded (the host search; the resident one is depth-first).
    pub exploration: Exploration,
    /// How a node's children are formed.
    pub branching: Branching,
    /// Open nodes expanded per iteration.
    pub pool: usize,
    /// Iterated-greedy rounds after NEH for the start schedule (0: NEH alone).
    pub heuristic_rounds: u32,
    /// Seconds between two progress samples.
    pub progress_every: f64,
    /// The DFS vs BFS pool divergence panel.
    pub pools: PoolsPanel,
    running: Option<Running>,
    samples: Vec<Progress>,
    result: Option<FlowshopRun>,
    status: String,
    error: Option<String>,
}

const INCUMBENT_COLOR: egui::Color32 = egui::Color32::from_rgb(214, 60, 60);
const BOUND_COLOR: egui::Color32 = egui::Color32::from_rgb(66, 133, 244);

impl FlowshopView {
    /// A view that opens its GPU with `options` (plus `WGPU_BACKEND`/`WGPU_ADAPTER_NAME`) on
    /// the first run that needs one; ta001 with the host search bounding on the CPU.
    pub fn new(options: &GpuOptions) -> Self {
        FlowshopView {
            gpu_options: options.clone().or_env(),
            gpu: Arc::new(Mutex::new(None)),
            instance: InstanceChoice::Taillard(1),
            method: Method::HostCpu,
            bound: LowerBound::Lb2,
            exploration: Exploration::DepthFirst,
            branching: Branching::Bidirectional,
            pool: 1024,
            heuristic_rounds: 0,
            progress_every: 0.1,
            pools: PoolsPanel::new(),
            running: None,
            samples: Vec::new(),
            result: None,
            status: "ready".into(),
            error: None,
        }
    }

    /// The `flowshop solve` options of the current settings (`instance` names the Taillard
    /// instance; a random one is passed to the search directly).
    pub fn solve_options(&self) -> SolveOptions {
        let (device, search) = match self.method {
            Method::HostCpu => (Device::Cpu, Search::Host),
            Method::HostGpu => (Device::Gpu, Search::Host),
            Method::Resident => (Device::Gpu, Search::Resident),
        };
        SolveOptions {
            bound: self.bound,
            exploration: if search == Search::Resident { Exploration::DepthFirst } else { self.exploration },
            branching: self.branching,
            pool: self.pool,
            heuristic_rounds: Some(self.heuristic_rounds),
            device,
            search,
            progress_every: Some(self.progress_every),
            ..SolveOptions::new(self.instance.label())
        }
    }

    /// True while a search runs on the worker thread.
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// The progress samples of the last (or current) search, oldest first; a finished search
    /// ends with a sample of its result.
    pub fn samples(&self) -> &[Progress] {
        &self.samples
    }

    /// The last finished search.
    pub fn results(&self) -> Option<&FlowshopRun> {
        self.result.as_ref()
    }

    /// The status line.
    pub fn status(&self) -> &str {
        &self.status
    }

    /// The last error, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Starts the search of the current settings on a background thread; `ctx` is asked to
    /// repaint as reports come in. Nothing happens while one runs.
    pub fn start(&mut self, ctx: &egui::Context) {
        if self.running.is_some() {
            return;
        }
        if let Some(why) = super::browser::unavailable(super::browser::FLOWSHOP) {
            self.error = Some(why.into());
            return;
        }
        let instance = match self.instance.instance() {
            Ok(instance) => instance,
            Err(e) => {
                self.error = Some(e.to_string());
                return;
            }
        };
        let args = self.solve_options();
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = channel();
        let worker = Worker { args, instance, gpu_options: self.gpu_options.clone(), gpu: self.gpu.clone(), cancel: cancel.clone() };
        let ctx = ctx.clone();
        let spawned = std::thread::Builder::new().name("simtlab-flowshop-search".into()).spawn(move || {
            let result = catch_unwind(AssertUnwindSafe(|| worker.run(&tx, &ctx)))
                .unwrap_or_else(|_| Err(Error::invalid("flowshop search", "the search panicked (a bug in simtlab)")));
            let _ = tx.send(Message::Finished(Box::new(result)));
            ctx.request_repaint();
        });
        match spawned {
            Ok(_) => {
                self.samples.clear();
                self.result = None;
                self.error = None;
                self.status = "starting".into();
                self.running = Some(Running { rx, cancel, started: Instant::now() });
            }
            Err(e) => self.error = Some(format!("could not start the search thread: {e}")),
        }
    }

    /// Asks the search to stop; it ends within one pool (host) or one submission (resident)
    /// with the best schedule found so far.
    pub fn cancel(&mut self) {
        if let Some(r) = &self.running {
            r.cancel.store(true, Ordering::Relaxed);
            self.status = "cancelling".into();
        }
    }

    /// Takes the worker's reports (called every frame by [`FlowshopView::ui`]).
    pub fn poll(&mut self) {
        self.pools.poll();
        let Some(running) = &self.running else { return };
        let mut finished = None;
        loop {
            match running.rx.try_recv() {
                Ok(Message::Status(text)) => self.status = text,
                Ok(Message::Progress(p)) => self.samples.push(p),
                Ok(Message::Finished(result)) => {
                    finished = Some(*result);
                    break;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    finished = Some(Err(Error::invalid("flowshop search", "its thread ended without a result")));
                    break;
                }
            }
        }
        let Some(result) = finished else { return };
        let seconds = running.started.elapsed().as_secs_f64();
        self.running = None;
        match result.and_then(|(instance, solution)| self.finish(instance, solution)) {
            Ok(()) => {}
            Err(e) => {
                self.status = format!("failed after {seconds:.1} s");
                self.error = Some(e.to_string());
            }
        }
    }

    /// Keeps the result, its closing sample and its Gantt chart.
    fn finish(&mut self, instance: Instance, solution: Solution) -> Result<()> {
        let gantt = match solution.makespan {
            Some(_) => Some(Gantt::new(&instance, &solution.permutation)?),
            None => None,
        };
        let last = self.samples.last().copied();
        self.samples.push(Progress {
            nodes: solution.nodes,
            leaves: solution.leaves,
            best: solution.makespan,
            open: if solution.stopped.is_none() { 0 } else { last.map_or(0, |p| p.open) },
            lower_bound: solution.proven_lower_bound.or(last.map(|p| p.lower_bound)).unwrap_or(0),
            seconds: solution.seconds,
            gpu_seconds: solution.bounding_seconds,
        });
        self.status = match (solution.stopped, solution.makespan) {
            (None, Some(m)) => format!("proved optimal: makespan {m}"),
            (None, None) => "finished: no schedule within the upper bound".into(),
            (Some(stop), Some(m)) => format!("stopped ({stop}): best makespan {m}, not proven optimal"),
            (Some(stop), None) => format!("stopped ({stop}): no schedule found"),
        };
        self.result = Some(FlowshopRun { instance, solution, gantt });
        Ok(())
    }

    fn controls(&mut self, ui: &mut Ui) {
        let idle = self.running.is_none();
        // one row per group: composite widgets (a combo box with its label) do not wrap
        ui.add_enabled_ui(idle, |ui| {
            ui.horizontal(|ui| {
                ComboBox::from_label("instance").selected_text(self.instance.label()).height(300.0).show_ui(ui, |ui| {
                    let random = InstanceChoice::Random { jobs: 10, machines: 5, seed: 1 };
                    if ui.selectable_label(matches!(self.instance, InstanceChoice::Random { .. }), "random").clicked()
                        && !matches!(self.instance, InstanceChoice::Random { .. })
                    {
                        self.instance = random;
                    }
                    for entry in taillard_entries() {
                        let text = format!("{} ({}×{}, best {})", entry.name(), entry.jobs, entry.machines, entry.best_known);
                        ui.selectable_value(&mut self.instance, InstanceChoice::Taillard(entry.number), text);
                    }
                });
                if let InstanceChoice::Random { jobs, machines, seed } = &mut self.instance {
                    ui.add(Slider::new(jobs, 2..=20).text("jobs"));
                    ui.add(Slider::new(machines, 2..=20).text("machines"));
                    ui.add(egui::DragValue::new(seed).range(1..=2_147_483_646).prefix("seed "));
                }
            });
            ui.horizontal(|ui| {
                ComboBox::from_label("search").selected_text(self.method.label()).show_ui(ui, |ui| {
                    for method in Method::ALL {
                        ui.selectable_value(&mut self.method, method, method.label());
                    }
                });
                ComboBox::from_label("bound").width(60.0).selected_text(format!("{:?}", self.bound).to_uppercase()).show_ui(ui, |ui| {
                    ui.selectable_value(&mut self.bound, LowerBound::Lb1, "LB1");
                    ui.selectable_value(&mut self.bound, LowerBound::Lb2, "LB2");
                });
                ComboBox::from_label("branching").selected_text(format!("{:?}", self.branching).to_lowercase()).show_ui(ui, |ui| {
                    ui.selectable_value(&mut self.branching, Branching::Bidirectional, "bidirectional");
                    ui.selectable_value(&mut self.branching, Branching::Forward, "forward");
                });
                ui.add_enabled_ui(self.method != Method::Resident, |ui| {
                    ComboBox::from_label("order").selected_text(order_name(self.exploration)).show_ui(ui, |ui| {
                        ui.selectable_value(&mut self.exploration, Exploration::DepthFirst, "depth-first");
                        ui.selectable_value(&mut self.exploration, Exploration::BreadthFirst, "breadth-first");
                    })
                });
            });
            ui.horizontal(|ui| {
                ui.add(Slider::new(&mut self.pool, 1..=65536).logarithmic(true).text("pool"));
                ui.add(Slider::new(&mut self.heuristic_rounds, 0..=1000).text("greedy rounds"));
            });
        });
        let unavailable = super::browser::unavailable(super::browser::FLOWSHOP);
        ui.horizontal(|ui| {
            if ui.add_enabled(idle && unavailable.is_none(), egui::Button::new("Solve")).clicked() {
                self.start(ui.ctx());
            }
            if ui.add_enabled(!idle, egui::Button::new("Cancel")).clicked() {
                self.cancel();
            }
            if !idle {
                ui.spinner();
            }
            ui.label(format!("status: {}", self.status));
        });
        if let Some(why) = unavailable {
            ui.colored_label(ui.visuals().warn_fg_color, why);
        }
        if let Some(e) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
    }

    /// Incumbent, bound, nodes/s, open nodes and elapsed time of the newest sample.
    fn live_numbers(&self, ui: &mut Ui) {
        let Some(last) = self.samples.last() else {
            ui.label(if self.running.is_some() { "waiting for the first report" } else { "no search yet" });
            return;
        };
        let rate = match (&self.running, &self.result) {
            (None, Some(run)) => run.solution.nodes as f64 / run.solution.seconds.max(1e-9),
            _ => nodes_per_second(&self.samples),
        };
        let best = last.best.map_or("none yet".into(), |b| b.to_string());
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new(format!("best makespan: {best}")).color(INCUMBENT_COLOR).strong());
            ui.label(RichText::new(format!("lower bound: {}", last.lower_bound)).color(BOUND_COLOR).strong());
            ui.label(format!("nodes/s: {}", si(rate)));
            ui.label(format!("open nodes: {}", last.open));
            ui.label(format!("nodes: {}", last.nodes));
            ui.label(format!("elapsed: {:.2} s", last.seconds));
        });
    }

    /// Incumbent and lower bound over time (steps), and open nodes over time.
    fn plots(&self, ui: &mut Ui) {
        if self.samples.is_empty() {
            return;
        }
        let incumbent = steps(self.samples.iter().filter_map(|p| p.best.map(|b| (p.seconds, f64::from(b)))));
        let bound = steps(self.samples.iter().map(|p| (p.seconds, f64::from(p.lower_bound))));
        let open: Vec<[f64; 2]> = self.samples.iter().map(|p| [p.seconds, p.open as f64]).collect();
        let width = ((ui.available_width() - ui.spacing().item_spacing.x) / 2.0).max(160.0);
        let hover = |unit: &'static str| {
            move |pos: &HoverPosition<'_>| match pos {
                HoverPosition::NearDataPoint { plot_name, position, .. } => {
                    Some(format!("{plot_name}: {} {unit}\nat {:.2} s", si(position.y), position.x))
                }
                HoverPosition::Elsewhere { .. } => None,
            }
        };
        ui.horizontal(|ui| {
            ui.vertical(|ui| {
                ui.set_width(width);
                ui.horizontal(|ui| {
                    ui.label(RichText::new("makespan:").strong());
                    ui.label(RichText::new("incumbent").color(INCUMBENT_COLOR).strong());
                    ui.label(RichText::new("and proven lower bound").color(BOUND_COLOR).strong());
                });
                // makespans are whole numbers a few apart: 1-2-5 steps label every few of them
                Plot::new("simtlab-flowshop-bounds")
                    .height(170.0)
                    .width(width)
                    .x_axis_label("seconds")
                    .allow_scroll(false)
                    .y_grid_spacer(uniform_grid_spacer(|input| super::plots::one_two_five(input, super::plots::Y_LABELS)))
                    .y_axis_formatter(|mark, _| format_significant(mark.value))
                    .y_axis_min_width(44.0)
                    .label_formatter(hover(""))
                    .show(ui, |plot| {
                        // step lines, never filled: each value holds until the next report
                        let line = |name: &str, points: Vec<[f64; 2]>, color| {
                            Line::new(name, PlotPoints::from(points)).color(color).width(2.0).style(LineStyle::Solid)
                        };
                        plot.line(line("incumbent", incumbent, INCUMBENT_COLOR));
                        plot.line(line("lower bound", bound, BOUND_COLOR));
                    });
            });
            ui.vertical(|ui| {
                ui.set_width(width);
                ui.label(RichText::new("open nodes").strong());
                Plot::new("simtlab-flowshop-open")
                    .height(170.0)
                    .width(width)
                    .x_axis_label("seconds")
                    .include_y(0.0)
                    .allow_scroll(false)
                    .y_axis_formatter(|mark, _| si(mark.value))
                    .y_axis_min_width(44.0)
                    .label_formatter(hover("nodes"))
                    .show(ui, |plot| plot.line(Line::new("open nodes", PlotPoints::from(open))));
            });
        });
    }

    /// The proof and the Gantt chart of the best schedule.
    fn result_panel(&self, ui: &mut Ui) {
        let Some(run) = &self.result else { return };
        let s = &run.solution;
        let proof = match (s.optimal, s.proven_lower_bound) {
            (true, _) => format!(
                "{}: makespan {} proven optimal: {} nodes and {} leaves in {:.2} s (start schedule {})",
                run.instance.name,
                s.makespan.unwrap_or_default(),
                s.nodes,
                s.leaves,
                s.seconds,
                s.start_makespan
            ),
            (false, Some(lb)) => format!("{}: no schedule below {lb} (proven); none at it found", run.instance.name),
            (false, None) => format!(
                "{}: best makespan {} after {} nodes, {:.2} s; not proven (the search stopped: {})",
                run.instance.name,
                s.makespan.map_or("none".into(), |m| m.to_string()),
                s.nodes,
                s.seconds,
                s.stopped.map_or("?".into(), |x| x.to_string())
            ),
        };
        ui.label(RichText::new(proof).strong());
        if run.instance.upper_bound != 0 {
            ui.label(format!("best known for {}: {}", run.instance.name, run.instance.upper_bound));
        }
        if let Some(gantt) = &run.gantt {
            ui.label(format!("best schedule (0-based job order): {}", commands::job_list(&gantt.order)));
            gantt.ui(ui);
        }
    }

    /// Draws the whole view: settings, live numbers and plots, the result, the pool panel.
    pub fn ui(&mut self, ui: &mut Ui) {
        self.poll();
        if self.running.is_some() || self.pools.is_running() {
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(100));
        }
        ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
            self.controls(ui);
            ui.separator();
            self.live_numbers(ui);
            self.plots(ui);
            self.result_panel(ui);
            ui.separator();
            let (options, slot) = (self.gpu_options.clone(), self.gpu.clone());
            CollapsingHeader::new("DFS vs BFS pool divergence").default_open(true).show(ui, |ui| self.pools.ui(ui, &options, &slot));
        });
    }
}

/// A search on the worker thread.
#[cfg_attr(target_arch = "wasm32", expect(dead_code, reason = "a page has no thread to search on: only the native search reads it"))]
struct Worker {
    args: SolveOptions,
    instance: Instance,
    gpu_options: GpuOptions,
    gpu: GpuSlot,
    cancel: Arc<AtomicBool>,
}

impl Worker {
    #[cfg(not(target_arch = "wasm32"))]
    fn run(self, tx: &Sender<Message>, ctx: &egui::Context) -> Result<(Instance, Solution)> {
        let send = |m: Message| {
            let _ = tx.send(m);
            ctx.request_repaint();
        };
        let gpu = match self.args.device {
            Device::Gpu => {
                send(Message::Status("opening the adapter".into()));
                Some(open_cached(&self.gpu, &self.gpu_options)?)
            }
            Device::Cpu => None,
        };
        let on = gpu.as_ref().map_or("the CPU".into(), |g| g.adapter_name());
        send(Message::Status(format!("solving {} on {on}", self.instance.name)));
        let mut report = |p: &Progress| send(Message::Progress(*p));
        let gpus: Vec<&Gpu> = gpu.as_deref().into_iter().collect();
        let solution = commands::solve_loaded(&self.args, &self.instance, &gpus, Some(&self.cancel), Some(&mut report))?;
        Ok((self.instance, solution))
    }

    /// The page has no worker threads, so the search never starts there (its spawn fails and
    /// the view says so), and it could not wait on the GPU between rounds if it did.
    #[cfg(target_arch = "wasm32")]
    fn run(self, _tx: &Sender<Message>, _ctx: &egui::Context) -> Result<(Instance, Solution)> {
        Err(Error::invalid("flow-shop search", super::browser::FLOWSHOP))
    }
}

fn order_name(exploration: Exploration) -> &'static str {
    match exploration {
        Exploration::DepthFirst => "depth-first",
        Exploration::BreadthFirst => "breadth-first",
    }
}

/// Nodes per second between the last two samples (over the whole search with one sample).
fn nodes_per_second(samples: &[Progress]) -> f64 {
    match samples {
        [.., a, b] if b.seconds > a.seconds => (b.nodes - a.nodes.min(b.nodes)) as f64 / (b.seconds - a.seconds),
        [.., b] => b.nodes as f64 / b.seconds.max(1e-9),
        [] => 0.0,
    }
}

/// A step line through `(x, y)` points: each value holds until the next.
fn steps(points: impl Iterator<Item = (f64, f64)>) -> Vec<[f64; 2]> {
    let mut out: Vec<[f64; 2]> = Vec::new();
    for (x, y) in points {
        if let Some(&[_, previous]) = out.last() {
            out.push([x, previous]);
        }
        out.push([x, y]);
    }
    out
}

/// A count with a k/M/G suffix and 3 significant digits.
fn si(value: f64) -> String {
    let a = value.abs();
    match a {
        _ if a >= 1e9 => format!("{:.3} G", value * 1e-9),
        _ if a >= 1e6 => format!("{:.3} M", value * 1e-6),
        _ if a >= 1e4 => format!("{:.1} k", value * 1e-3),
        _ => format!("{}", value.round()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_hold_each_value_until_the_next_sample() {
        let line = steps([(0.0, 10.0), (1.0, 8.0), (2.5, 7.0)].into_iter());
        assert_eq!(line, [[0.0, 10.0], [1.0, 10.0], [1.0, 8.0], [2.5, 8.0], [2.5, 7.0]]);
    }

    #[test]
    fn rate_comes_from_the_last_two_samples() {
        let at = |seconds: f64, nodes: u64| Progress { nodes, leaves: 0, best: None, open: 0, lower_bound: 0, seconds, gpu_seconds: 0.0 };
        assert_eq!(nodes_per_second(&[at(1.0, 100), at(3.0, 500)]), 200.0);
        assert_eq!(nodes_per_second(&[at(2.0, 100)]), 50.0);
        assert_eq!(si(12_345.0), "12.3 k");
        assert_eq!(si(2_500_000.0), "2.500 M");
    }
}
