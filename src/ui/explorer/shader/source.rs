//! The profiled shader's source, each probed line coloured by the metric the user picks (SIMT
//! efficiency by default, or branch efficiency), with a legend and picker, and the counts of the
//! line's sites on hover.

use std::collections::BTreeMap;

use egui::{vec2, Color32, Label, RichText, ScrollArea, Sense, Shape, TextStyle, Ui};

use crate::profile::SiteRow;
use crate::ui::overlay::{cell_color, color_bar, ColorBy};

/// Colour of a line whose sites were never evaluated (no efficiency to show).
pub const NOT_REACHED: Color32 = Color32::from_rgb(120, 120, 120);

/// The colour of an efficiency `e` (0..=1): the heat map's active-lane scale, red for 0 % to
/// green for 100 %.
pub fn efficiency_color(e: f64) -> Color32 {
    cell_color(ColorBy::ActiveLanes, e as f32)
}

/// What the source view colours its probed lines by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SourceMetric {
    /// Active lanes / (subgroup-steps × width) in the code the site guards: how full the
    /// subgroup runs there (a loop whose lanes leave one by one scores low).
    #[default]
    SimtEfficiency,
    /// Uniform evaluations / evaluations of the site's condition: how often the subgroup agreed.
    BranchEfficiency,
}

impl SourceMetric {
    /// Both, in the picker's order.
    pub const ALL: [SourceMetric; 2] = [SourceMetric::SimtEfficiency, SourceMetric::BranchEfficiency];

    /// Its name in the picker and the legend.
    pub fn label(self) -> &'static str {
        match self {
            SourceMetric::SimtEfficiency => "SIMT efficiency",
            SourceMetric::BranchEfficiency => "branch efficiency",
        }
    }

    /// What it measures, on hover.
    pub fn explanation(self) -> &'static str {
        match self {
            SourceMetric::SimtEfficiency => {
                "active lanes / (subgroup steps × subgroup width) while the code the site guards runs: 100 % = every lane busy"
            }
            SourceMetric::BranchEfficiency => {
                "uniform evaluations / all evaluations of the site's condition: 100 % = the subgroup always agreed"
            }
        }
    }

    /// Its value for one site.
    pub fn of(self, row: &SiteRow) -> f64 {
        match self {
            SourceMetric::SimtEfficiency => row.simt_efficiency,
            SourceMetric::BranchEfficiency => row.branch_efficiency,
        }
    }
}

/// The probe sites of each source line (1-based), and the colour the line gets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LineMarks {
    /// Line -> indices into the run's site rows.
    pub sites: BTreeMap<u32, Vec<usize>>,
}

impl LineMarks {
    /// Groups `rows` by their line.
    pub fn new(rows: &[SiteRow]) -> LineMarks {
        let mut sites: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (i, r) in rows.iter().enumerate() {
            sites.entry(r.place.line).or_default().push(i);
        }
        LineMarks { sites }
    }

    /// The lowest `metric` of the sites on `line` that were evaluated at all (a line holding
    /// several sites shows its worst).
    pub fn efficiency(&self, rows: &[SiteRow], line: u32, metric: SourceMetric) -> Option<f64> {
        self.sites.get(&line)?.iter().filter(|&&i| rows[i].counts.evaluations > 0).map(|&i| metric.of(&rows[i])).reduce(f64::min)
    }

    /// The colour of `line` by `metric`: [`NOT_REACHED`] when its sites never ran, None when it
    /// has no site.
    pub fn color(&self, rows: &[SiteRow], line: u32, metric: SourceMetric) -> Option<Color32> {
        self.sites.get(&line)?;
        Some(self.efficiency(rows, line, metric).map_or(NOT_REACHED, efficiency_color))
    }
}

/// What the tooltip of a probed line says: each site's counts.
fn line_tooltip(rows: &[SiteRow], divergent_subgroups: &[u64], subgroups: u64, sites: &[usize]) -> String {
    sites
        .iter()
        .map(|&i| {
            let r = &rows[i];
            format!(
                "site {} ({} `{}`)\nevaluations: {}\ndivergent evaluations: {}\ndivergent subgroups: {} of {}\nbranch efficiency: {:.1} %\nSIMT efficiency: {:.1} %",
                r.site,
                r.place.kind.name(),
                r.place.source,
                r.counts.evaluations,
                r.counts.evaluations - r.counts.uniform_evaluations,
                divergent_subgroups.get(i).copied().unwrap_or(0),
                subgroups,
                100.0 * r.branch_efficiency,
                100.0 * r.simt_efficiency
            )
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The metric picker and the colour scale of the source view with its end values.
pub(crate) fn legend(ui: &mut Ui, metric: &mut SourceMetric) {
    ui.horizontal(|ui| {
        ui.small("colour by");
        for m in SourceMetric::ALL {
            ui.selectable_value(metric, m, m.label()).on_hover_text(m.explanation());
        }
    });
    ui.horizontal(|ui| {
        ui.small(format!("{}: 0 %", metric.label())).on_hover_text(metric.explanation());
        color_bar(ui, efficiency_color);
        ui.small("100 %");
        let (swatch, _) = ui.allocate_exact_size(vec2(10.0, 10.0), Sense::hover());
        ui.painter().rect_filled(swatch, 0.0, NOT_REACHED);
        ui.small("never evaluated");
    });
}

/// A profiled shader's source with what the view colours it by: plain data, borrowed.
#[derive(Clone, Copy, Debug)]
pub struct ProfiledSource<'a> {
    /// The WGSL that ran.
    pub source: &'a str,
    /// The run's site rows.
    pub rows: &'a [SiteRow],
    /// The rows of each line.
    pub marks: &'a LineMarks,
    /// Per site: subgroups in which its lanes disagreed at least once.
    pub divergent_subgroups: &'a [u64],
    /// Subgroups in the dispatch.
    pub subgroups: u64,
}

/// Draws the source with line numbers; each probed line gets a swatch, a tinted background and
/// its `metric`, and shows its sites' counts on hover. Only the visible lines are laid out.
pub(crate) fn source_view(ui: &mut Ui, profiled: &ProfiledSource<'_>, metric: SourceMetric, height: f32) {
    let ProfiledSource { source, rows, marks, divergent_subgroups, subgroups } = *profiled;
    let lines: Vec<&str> = source.lines().collect();
    let digits = lines.len().max(1).to_string().len();
    let row_height = ui.text_style_height(&TextStyle::Monospace) + 2.0;
    ScrollArea::both().id_salt("simtlab-shader-source").max_height(height).auto_shrink([false, true]).show_rows(
        ui,
        row_height,
        lines.len(),
        |ui, range| {
            for index in range {
                let number = index as u32 + 1;
                let color = marks.color(rows, number, metric);
                let gutter = match (color, marks.efficiency(rows, number, metric)) {
                    (Some(_), Some(e)) => format!("{:>5.1} %", 100.0 * e),
                    (Some(_), None) => "    –  ".to_string(),
                    (None, _) => "       ".to_string(),
                };
                let text = format!("{gutter} {number:>digits$} │ {}", lines[index]);
                ui.horizontal(|ui| {
                    ui.spacing_mut().item_spacing.x = 4.0;
                    let (swatch, _) = ui.allocate_exact_size(vec2(8.0, row_height - 2.0), Sense::hover());
                    // the tint goes under the text: reserve its place before the label is drawn
                    let background = ui.painter().add(Shape::Noop);
                    let label = Label::new(RichText::new(text).monospace()).extend().sense(Sense::hover());
                    let response = ui.add(label);
                    if let Some(c) = color {
                        ui.painter().rect_filled(swatch, 0.0, c);
                        let tint = Color32::from_rgba_unmultiplied(c.r(), c.g(), c.b(), 48);
                        ui.painter().set(background, Shape::rect_filled(response.rect, 0.0, tint));
                        if let Some(sites) = marks.sites.get(&number) {
                            response.on_hover_text(line_tooltip(rows, divergent_subgroups, subgroups, sites));
                        }
                    }
                });
            }
        },
    );
}
