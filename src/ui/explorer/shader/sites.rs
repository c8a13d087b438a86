//! The table of probe sites, sortable by branch efficiency.

use egui::{Button, Grid, Ui};

use crate::profile::SiteRow;

/// Order of the site table's rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SiteOrder {
    /// As the sites appear in the source.
    #[default]
    Source,
    /// Lowest branch efficiency first (ties in source order).
    LeastEfficientFirst,
    /// Highest branch efficiency first (ties in source order).
    MostEfficientFirst,
}

impl SiteOrder {
    /// The order a click on the efficiency header switches to.
    fn next(self) -> SiteOrder {
        match self {
            SiteOrder::Source => SiteOrder::LeastEfficientFirst,
            SiteOrder::LeastEfficientFirst => SiteOrder::MostEfficientFirst,
            SiteOrder::MostEfficientFirst => SiteOrder::Source,
        }
    }

    /// Indices of `rows` in this order.
    fn arrange(self, rows: &[SiteRow]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..rows.len()).collect();
        match self {
            SiteOrder::Source => {}
            SiteOrder::LeastEfficientFirst => order.sort_by(|&a, &b| rows[a].branch_efficiency.total_cmp(&rows[b].branch_efficiency)),
            SiteOrder::MostEfficientFirst => order.sort_by(|&a, &b| rows[b].branch_efficiency.total_cmp(&rows[a].branch_efficiency)),
        }
        order
    }
}

/// Header of the table's columns (the efficiency column is a button that sorts).
pub const COLUMNS: [&str; 9] =
    ["site", "line", "kind", "source", "evaluations", "divergent\nevaluations", "divergent\nsubgroups", "branch\neff.", "SIMT\neff."];

/// The cells of one row, as the table shows them.
pub(crate) fn row_cells(row: &SiteRow, divergent_subgroups: u64, subgroups: u64) -> [String; 9] {
    let mut source = row.place.source.clone();
    if source.chars().count() > 32 {
        source = source.chars().take(31).collect::<String>() + "…";
    }
    [
        row.site.to_string(),
        row.place.line.to_string(),
        row.place.kind.name().to_string(),
        source,
        row.counts.evaluations.to_string(),
        (row.counts.evaluations - row.counts.uniform_evaluations).to_string(),
        format!("{divergent_subgroups} of {subgroups}"),
        format!("{:.1} %", 100.0 * row.branch_efficiency),
        format!("{:.1} %", 100.0 * row.simt_efficiency),
    ]
}

/// One row per site in `order`; a click on the efficiency header changes the order.
pub(crate) fn site_table(ui: &mut Ui, rows: &[SiteRow], divergent_subgroups: &[u64], subgroups: u64, order: &mut SiteOrder) {
    Grid::new("simtlab-shader-sites").striped(true).num_columns(COLUMNS.len()).show(ui, |ui| {
        for name in COLUMNS {
            if name == "branch\neff." {
                let header = match order {
                    SiteOrder::Source => name,
                    SiteOrder::LeastEfficientFirst => "branch eff.\nlowest first",
                    SiteOrder::MostEfficientFirst => "branch eff.\nhighest first",
                };
                let clicked = ui.add(Button::new(header).small()).on_hover_text("sort by branch efficiency").clicked();
                if clicked {
                    *order = order.next();
                }
            } else {
                ui.strong(name);
            }
        }
        ui.end_row();
        for i in order.arrange(rows) {
            for cell in row_cells(&rows[i], divergent_subgroups.get(i).copied().unwrap_or(0), subgroups) {
                ui.label(cell);
            }
            ui.end_row();
        }
    });
}
