//! The divergence panel: heat map, colour toggle, per-site table, and a before/after view
//! when a remapping ran.

use egui::{Grid, RichText, Ui};

use super::heatmap::{ColorBy, HeatMap};
use crate::divergence::{Divergence, SiteCounters};

/// One run's divergence, ready to draw: the counters (without the per-warp vectors, which
/// the heat map has binned) and the heat map.
#[derive(Debug)]
pub struct DivergenceRun {
    /// Where the numbers come from, e.g. "GPU probe" or "host emulation, W = 32".
    pub source: String,
    /// The counters and metrics; the per-warp vectors are left empty.
    pub counts: Divergence,
    /// The per-warp values, binned for drawing.
    pub heat_map: HeatMap,
}

impl DivergenceRun {
    /// Copies `d`'s counters and bins its per-warp values; `source` says where they come from.
    pub fn new(d: &Divergence, source: impl Into<String>) -> DivergenceRun {
        DivergenceRun {
            source: source.into(),
            counts: Divergence { sites: d.sites.clone(), per_warp_divergent: Vec::new(), per_warp_efficiency: Vec::new(), ..*d },
            heat_map: HeatMap::new(d),
        }
    }

    /// Summary line, e.g. `SIMT efficiency 22.5 % · branch efficiency 98.1 % · divergence ratio 0.250`.
    pub fn summary_line(&self) -> String {
        format!(
            "SIMT efficiency {:.1} % · branch efficiency {:.1} % · divergence ratio {:.3}",
            self.counts.simt_efficiency() * 100.0,
            self.counts.branch_efficiency() * 100.0,
            self.counts.divergence_ratio()
        )
    }

    /// The per-site table: evaluations, divergent share, SIMT efficiency (plus a total row
    /// when there is more than one site).
    pub fn site_table(&self, ui: &mut Ui, id_salt: &str) {
        Grid::new(("simtlab-sites", id_salt)).striped(true).num_columns(4).show(ui, |ui| {
            ui.strong("site");
            ui.strong("evaluations");
            ui.strong("divergent evaluations");
            ui.strong("SIMT eff.");
            ui.end_row();
            let row = |ui: &mut Ui, name: String, s: &SiteCounters| {
                ui.label(name);
                ui.label(s.evaluations.to_string());
                ui.label(format!("{:.1} %", (1.0 - s.branch_efficiency()) * 100.0));
                ui.label(format!("{:.1} %", s.simt_efficiency(self.counts.width) * 100.0));
                ui.end_row();
            };
            for (i, s) in self.counts.sites.iter().enumerate() {
                row(ui, format!("{i}"), s);
            }
            if self.counts.sites.len() > 1 {
                row(ui, "all".into(), &self.counts.totals());
            }
        });
    }

    /// Heading, summary, heat map, legend and site table.
    pub fn ui(&mut self, ui: &mut Ui, color_by: ColorBy, id_salt: &str) {
        ui.label(RichText::new(format!(
            "{} warps × {} lanes, {} divergent warps — {}",
            self.counts.warps, self.counts.width, self.counts.divergent_warps, self.source
        )));
        ui.label(self.summary_line()).on_hover_text(
            "a divergent warp had lanes on both sides of a branch at least once; a divergent evaluation is one \
             warp evaluating one branch with its lanes split",
        );
        self.heat_map.ui(ui, color_by);
        self.heat_map.legend(ui, color_by);
        self.site_table(ui, id_salt);
    }
}

/// The divergence overlay: one run, or a run before and after a remapping side by side.
#[derive(Debug)]
pub struct DivergenceOverlay {
    /// The run as is.
    pub before: DivergenceRun,
    /// The same workload after a remapping, when one ran.
    pub after: Option<DivergenceRun>,
    /// What the heat maps' colour shows (the toggle's state).
    pub color_by: ColorBy,
}

impl DivergenceOverlay {
    /// The overlay of one run; `source` says where the counters come from.
    pub fn new(d: &Divergence, source: impl Into<String>) -> DivergenceOverlay {
        DivergenceOverlay { before: DivergenceRun::new(d, source), after: None, color_by: ColorBy::default() }
    }

    /// Adds the same workload after a remapping, shown beside the first.
    pub fn with_after(mut self, d: &Divergence, source: impl Into<String>) -> DivergenceOverlay {
        self.after = Some(DivergenceRun::new(d, source));
        self
    }

    /// Draws the colour toggle, then one run or both side by side.
    pub fn ui(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            ui.label("colour:");
            for c in [ColorBy::DivergentEvaluations, ColorBy::ActiveLanes] {
                ui.selectable_value(&mut self.color_by, c, c.label());
            }
        });
        let color_by = self.color_by;
        match &mut self.after {
            None => self.before.ui(ui, color_by, "run"),
            Some(after) => {
                let before = &mut self.before;
                let speedup_line = format!(
                    "remapping: SIMT efficiency {:.1} % -> {:.1} %, divergence ratio {:.3} -> {:.3}",
                    before.counts.simt_efficiency() * 100.0,
                    after.counts.simt_efficiency() * 100.0,
                    before.counts.divergence_ratio(),
                    after.counts.divergence_ratio()
                );
                ui.label(RichText::new(speedup_line).strong());
                ui.columns(2, |cols| {
                    cols[0].push_id("before", |ui| {
                        ui.heading("before");
                        before.ui(ui, color_by, "before");
                    });
                    cols[1].push_id("after", |ui| {
                        ui.heading("after remapping");
                        after.ui(ui, color_by, "after");
                    });
                });
            }
        }
    }
}
