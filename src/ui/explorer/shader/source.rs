//! The profiled shader's source, each probed line coloured by its branch efficiency, with a
//! legend and the counts of the line's sites on hover.

use std::collections::BTreeMap;

use egui::{vec2, Color32, Label, RichText, ScrollArea, Sense, Shape, TextStyle, Ui};

use crate::profile::SiteRow;
use crate::ui::overlay::{cell_color, color_bar, ColorBy};

/// Colour of a line whose sites were never evaluated (no efficiency to show).
pub const NOT_REACHED: Color32 = Color32::from_rgb(120, 120, 120);

/// The colour of branch efficiency `e` (0..=1): the heat map's active-lane scale, red for
/// 0 % (every evaluation divergent) to green for 100 % (all uniform).
pub fn efficiency_color(e: f64) -> Color32 {
    cell_color(ColorBy::ActiveLanes, e as f32)
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

    /// The lowest branch efficiency of the sites on `line` that were evaluated at all (a line
    /// holding several sites shows its worst).
    pub fn efficiency(&self, rows: &[SiteRow], line: u32) -> Option<f64> {
        self.sites.get(&line)?.iter().filter(|&&i| rows[i].counts.evaluations > 0).map(|&i| rows[i].branch_efficiency).reduce(f64::min)
    }

    /// The colour of `line`: by its efficiency, [`NOT_REACHED`] when its sites never ran, None
    /// when it has no site.
    pub fn color(&self, rows: &[SiteRow], line: u32) -> Option<Color32> {
        self.sites.get(&line)?;
        Some(self.efficiency(rows, line).map_or(NOT_REACHED, efficiency_color))
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

/// The colour scale of the source view with its end values.
pub fn legend(ui: &mut Ui) {
    ui.horizontal(|ui| {
        ui.small("branch efficiency: 0 %");
        color_bar(ui, efficiency_color);
        ui.small("100 % (every evaluation uniform)");
        let (swatch, _) = ui.allocate_exact_size(vec2(10.0, 10.0), Sense::hover());
        ui.painter().rect_filled(swatch, 0.0, NOT_REACHED);
        ui.small("never evaluated");
    });
}

/// Draws `source` with line numbers; each probed line gets a swatch, a tinted background and
/// its efficiency, and shows its sites' counts on hover. Only the visible lines are laid out.
pub fn source_view(
    ui: &mut Ui,
    source: &str,
    rows: &[SiteRow],
    marks: &LineMarks,
    divergent_subgroups: &[u64],
    subgroups: u64,
    height: f32,
) {
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
                let color = marks.color(rows, number);
                let gutter = match (color, marks.efficiency(rows, number)) {
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
