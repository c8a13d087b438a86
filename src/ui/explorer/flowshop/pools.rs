//! The DFS vs BFS pool divergence panel: runs the `flowshop-bound-pools` workload (LB2 on pools
//! taken from the real search depth-first and breadth-first, every bound checked against the
//! CPU) on a background thread and draws its records' divergence as bars per pool order.

use std::sync::mpsc::{channel, Receiver, TryRecvError};

use egui::{Color32, RichText, Ui};
use egui_plot::{Bar, BarChart, Plot};

use super::GpuSlot;
use crate::gpu::GpuOptions;
use crate::harness::Record;
#[cfg(not(target_arch = "wasm32"))]
use crate::workload;
use crate::workload::Scale;

/// The registry entry the panel runs.
pub const POOLS_WORKLOAD: &str = "flowshop-bound-pools";

const DFS_COLOR: Color32 = Color32::from_rgb(66, 133, 244);
const BFS_COLOR: Color32 = Color32::from_rgb(234, 120, 40);

/// A plotted measure: its name and how a bar gets it.
type Metric = (&'static str, fn(&PoolBar) -> f64);

/// One bar: a record's divergence ratio and efficiencies at the probe's width.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolBar {
    /// `dfs` or `bfs`.
    pub order: String,
    /// Kernel and pool, e.g. `refactored, 256 children`.
    pub label: String,
    /// Fraction of subgroups whose lanes took different paths.
    pub divergence_ratio: f64,
    /// Uniform branch evaluations over all evaluations.
    pub branch_efficiency: f64,
    /// Active lanes over subgroup steps × width.
    pub simt_efficiency: f64,
    /// Subgroup width of the probe.
    pub width: u32,
}

impl PoolBar {
    /// The bar of a `flowshop-bound-pools` record; `None` for records without a probe run.
    pub fn of(record: &Record) -> Option<PoolBar> {
        let d = record.divergence?;
        let kernel = if record.params["branchless"] == true { "refactored" } else { "basic" };
        Some(PoolBar {
            order: record.params["strategy"].as_str().unwrap_or("?").to_string(),
            label: format!("{kernel}, {} children", record.params["children"]),
            divergence_ratio: d.divergence_ratio,
            branch_efficiency: d.branch_efficiency,
            simt_efficiency: d.simt_efficiency,
            width: d.width,
        })
    }
}

/// The panel's state: the scale to run at and the last run's records.
#[derive(Debug)]
pub struct PoolsPanel {
    /// Pool sizes of the workload at this scale (tiny: 256 children, seconds on a CPU driver).
    pub scale: Scale,
    records: Vec<Record>,
    running: Option<Receiver<crate::error::Result<Vec<Record>>>>,
    error: Option<String>,
}

/// The records of [`POOLS_WORKLOAD`] at `scale` (the pool run's thread).
#[cfg(not(target_arch = "wasm32"))]
fn measure(slot: &GpuSlot, options: &GpuOptions, scale: Scale) -> crate::error::Result<Vec<Record>> {
    let gpu = super::open_cached(slot, options)?;
    let entry = workload::find(POOLS_WORKLOAD)?;
    entry.run(&gpu, &entry.params(scale), &scale.protocol())
}

/// The page has no worker threads, so the pool run never starts there (its spawn fails and
/// the panel says so), and it could not wait on the GPU between pools if it did.
#[cfg(target_arch = "wasm32")]
fn measure(_slot: &GpuSlot, _options: &GpuOptions, _scale: Scale) -> crate::error::Result<Vec<Record>> {
    Err(crate::error::Error::invalid("pool run", super::super::browser::FLOWSHOP))
}

impl PoolsPanel {
    pub(super) fn new() -> Self {
        PoolsPanel { scale: Scale::Tiny, records: Vec::new(), running: None, error: None }
    }

    /// Runs the workload on a background thread (nothing when one is running).
    pub(super) fn start(&mut self, gpu_options: &GpuOptions, slot: &GpuSlot, ctx: &egui::Context) {
        if self.running.is_some() {
            return;
        }
        let (tx, rx) = channel();
        let (options, slot, ctx, scale) = (gpu_options.clone(), slot.clone(), ctx.clone(), self.scale);
        let spawned = std::thread::Builder::new().name("simtlab-flowshop-pools".into()).spawn(move || {
            let _ = tx.send(measure(&slot, &options, scale));
            ctx.request_repaint();
        });
        match spawned {
            Ok(_) => {
                self.running = Some(rx);
                self.error = None;
            }
            Err(e) => self.error = Some(format!("could not start the pool run: {e}")),
        }
    }

    /// Takes the records of a finished run.
    pub(super) fn poll(&mut self) {
        let Some(rx) = &self.running else { return };
        let finished = match rx.try_recv() {
            Ok(result) => Some(result),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(crate::error::Error::invalid("pool run", "its thread ended without a result"))),
        };
        if let Some(result) = finished {
            self.running = None;
            match result {
                Ok(records) => self.records = records,
                Err(e) => self.error = Some(e.to_string()),
            }
        }
    }

    /// True while the workload runs.
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Records of the last finished run (the same as `simtlab run flowshop-bound-pools`).
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// The bars drawn: one per record with a divergence measurement, in record order.
    pub fn bars(&self) -> Vec<PoolBar> {
        self.records.iter().filter_map(PoolBar::of).collect()
    }

    /// The last run's error, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Scale, run button, the bar plot and a line per record.
    pub(super) fn ui(&mut self, ui: &mut Ui, gpu_options: &GpuOptions, slot: &GpuSlot) {
        ui.label(
            "LB2 on pools taken from the search depth-first (mixed tree levels) and breadth-first (one or two levels): \
             the divergence the GPU probe counts in each.",
        );
        ui.horizontal(|ui| {
            egui::ComboBox::from_label("pool scale").selected_text(format!("{:?}", self.scale).to_lowercase()).show_ui(ui, |ui| {
                for scale in [Scale::Tiny, Scale::Quick, Scale::Full] {
                    ui.selectable_value(&mut self.scale, scale, format!("{scale:?}").to_lowercase());
                }
            });
            let running = self.is_running();
            let unavailable = crate::ui::explorer::browser::unavailable(crate::ui::explorer::browser::FLOWSHOP);
            if ui
                .add_enabled(!running && unavailable.is_none(), egui::Button::new("Measure pools"))
                .on_disabled_hover_text(unavailable.unwrap_or_default())
                .clicked()
            {
                self.start(gpu_options, slot, ui.ctx());
            }
            if running {
                ui.spinner();
                ui.label("measuring pools");
            }
        });
        if let Some(e) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        let bars = self.bars();
        if bars.is_empty() {
            if !self.records.is_empty() {
                ui.label("these records carry no divergence: the adapter has no subgroups for the probe");
            }
            return;
        }
        let labels: Vec<String> = bars.iter().filter(|b| b.order == "dfs").map(|b| b.label.clone()).collect();
        let width = ((ui.available_width() - ui.spacing().item_spacing.x) / 2.0).max(160.0);
        let metrics: [Metric; 2] = [("divergence ratio", |b| b.divergence_ratio), ("branch efficiency", |b| b.branch_efficiency)];
        ui.horizontal(|ui| {
            for (metric, value) in metrics {
                ui.vertical(|ui| {
                    ui.set_width(width);
                    ui.horizontal(|ui| {
                        ui.label(RichText::new(format!("{metric} at W = {}:", bars[0].width)).strong());
                        ui.label(RichText::new("DFS").color(DFS_COLOR).strong());
                        ui.label(RichText::new("BFS").color(BFS_COLOR).strong());
                    });
                    let names = labels.clone();
                    Plot::new(("simtlab-flowshop-pools", metric))
                        .height(140.0)
                        .width(width)
                        .include_y(0.0)
                        .include_y(1.0)
                        .allow_scroll(false)
                        .allow_drag(false)
                        .x_axis_formatter(move |mark, _| {
                            let i = mark.value.round();
                            match names.get(i as usize) {
                                Some(name) if (mark.value - i).abs() < 1e-6 && i >= 0.0 => name.clone(),
                                _ => String::new(),
                            }
                        })
                        .show(ui, |plot| {
                            for (order, color, offset) in [("dfs", DFS_COLOR, -0.2), ("bfs", BFS_COLOR, 0.2)] {
                                let items: Vec<Bar> = bars
                                    .iter()
                                    .filter(|b| b.order == order)
                                    .map(|b| {
                                        let x = labels.iter().position(|l| *l == b.label).unwrap_or(labels.len()) as f64 + offset;
                                        Bar::new(x, value(b)).width(0.35).name(format!("{}, {}", order.to_uppercase(), b.label)).fill(color)
                                    })
                                    .collect();
                                let chart = BarChart::new(order.to_uppercase(), items)
                                    .color(color)
                                    .element_formatter(Box::new(move |bar, _| format!("{}\n{metric} {:.3}", bar.name, bar.value)));
                                plot.bar_chart(chart);
                            }
                        });
                });
            }
        });
        pool_lines(ui, &bars);
    }
}

/// A line per bar with its order, kernel and pool, and the three measures.
pub fn pool_lines(ui: &mut Ui, bars: &[PoolBar]) {
    for b in bars {
        ui.label(format!(
            "{} {}: divergence ratio {:.3}, branch efficiency {:.3}, SIMT efficiency {:.3}",
            b.order.to_uppercase(),
            b.label,
            b.divergence_ratio,
            b.branch_efficiency,
            b.simt_efficiency
        ));
    }
}
