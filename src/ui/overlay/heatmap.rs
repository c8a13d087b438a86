//! The divergence heat map: one cell per subgroup (or per emulated warp), or per run of
//! consecutive warps when there are more warps than cells fit on screen.
//!
//! Binning is computed once per data change and per cell count ([`HeatMap::bins`] caches it);
//! the cells are then uploaded as one small texture, also cached, so a frame costs one
//! textured rectangle however many warps the run had.

use std::ops::Range;

use egui::{pos2, vec2, Color32, ColorImage, Rect, Response, Sense, Stroke, StrokeKind, TextureHandle, TextureOptions, Ui, Vec2};

use crate::divergence::Divergence;

/// What the cells' colour shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ColorBy {
    /// Divergent evaluations per warp (over all probe sites): hot = many.
    #[default]
    DivergentEvaluations,
    /// Fraction of lanes active in the guarded code (SIMT efficiency of the warp): green = full.
    ActiveLanes,
}

impl ColorBy {
    /// Name for the toggle and the legend.
    pub fn label(self) -> &'static str {
        match self {
            ColorBy::DivergentEvaluations => "divergent evaluations",
            ColorBy::ActiveLanes => "active-lane fraction",
        }
    }
}

/// Per-cell aggregates of `warps_per_cell` consecutive warps (the last cell may hold fewer).
#[derive(Clone, Debug, PartialEq)]
pub struct Bins {
    /// Warps binned.
    pub warps: usize,
    /// Warps per cell (at least 1).
    pub warps_per_cell: usize,
    /// Per cell: mean divergent evaluations of its warps.
    pub divergent_mean: Vec<f32>,
    /// Per cell: most divergent evaluations of one of its warps.
    pub divergent_max: Vec<u32>,
    /// Per cell: mean active-lane fraction of its warps, in [0, 1].
    pub efficiency_mean: Vec<f32>,
    /// Per cell: lowest active-lane fraction of one of its warps.
    pub efficiency_min: Vec<f32>,
}

impl Bins {
    /// Aggregates `divergent[i]`, `efficiency[i]` (one entry per warp; the shorter slice
    /// decides how many warps there are) into cells of `warps_per_cell` warps.
    pub fn new(divergent: &[u32], efficiency: &[f32], warps_per_cell: usize) -> Bins {
        let warps = divergent.len().min(efficiency.len());
        let k = warps_per_cell.max(1);
        let cells = warps.div_ceil(k);
        let mut b = Bins {
            warps,
            warps_per_cell: k,
            divergent_mean: Vec::with_capacity(cells),
            divergent_max: Vec::with_capacity(cells),
            efficiency_mean: Vec::with_capacity(cells),
            efficiency_min: Vec::with_capacity(cells),
        };
        for (d, e) in divergent[..warps].chunks(k).zip(efficiency[..warps].chunks(k)) {
            let n = d.len() as f64;
            let sum: u64 = d.iter().map(|&x| x as u64).sum();
            b.divergent_mean.push((sum as f64 / n) as f32);
            b.divergent_max.push(d.iter().copied().max().unwrap_or(0));
            let esum: f64 = e.iter().map(|&x| x as f64).sum();
            b.efficiency_mean.push((esum / n) as f32);
            b.efficiency_min.push(e.iter().copied().fold(f32::INFINITY, f32::min));
        }
        b
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.divergent_mean.len()
    }

    /// The warps cell `cell` covers.
    pub fn warps_in(&self, cell: usize) -> Range<usize> {
        let start = (cell * self.warps_per_cell).min(self.warps);
        start..(start + self.warps_per_cell).min(self.warps)
    }
}

/// Where the cells go: `columns × rows` square cells of `cell` points, `warps_per_cell`
/// consecutive warps each, in row-major warp order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridLayout {
    /// Cells per row.
    pub columns: usize,
    /// Rows of cells.
    pub rows: usize,
    /// Consecutive warps sharing one cell.
    pub warps_per_cell: usize,
    /// Side of a square cell, in points.
    pub cell: f32,
}

impl GridLayout {
    /// Fits `warps` cells into `size` points with square cells between `min_cell` and
    /// `max_cell` points; when even `min_cell` cells do not fit, neighbouring warps share a cell.
    pub fn fit(warps: usize, size: Vec2, min_cell: f32, max_cell: f32) -> GridLayout {
        let (w, h) = (size.x.max(1.0), size.y.max(1.0));
        let min_cell = min_cell.max(0.5);
        let max_cell = max_cell.max(min_cell);
        if warps == 0 {
            return GridLayout { columns: 0, rows: 0, warps_per_cell: 1, cell: max_cell };
        }
        let capacity_at = |s: f32| ((w / s).floor() as usize).max(1) * ((h / s).floor() as usize).max(1);
        // the largest square cell that still holds one warp per cell, within the bounds
        let mut cell = ((w * h) / warps as f32).sqrt().clamp(min_cell, max_cell.min(w));
        while cell > min_cell && capacity_at(cell) < warps {
            cell = (cell * 0.97).max(min_cell);
        }
        let columns = ((w / cell).floor() as usize).max(1);
        let capacity = capacity_at(cell);
        let warps_per_cell = warps.div_ceil(capacity).max(1);
        let cells = warps.div_ceil(warps_per_cell);
        let columns = columns.min(cells);
        let rows = cells.div_ceil(columns);
        GridLayout { columns, rows, warps_per_cell, cell }
    }

    /// Size of the whole grid in points.
    pub fn size(&self) -> Vec2 {
        vec2(self.columns as f32 * self.cell, self.rows as f32 * self.cell)
    }

    /// The cell under `pos` for a grid drawn at `origin`.
    pub fn cell_at(&self, origin: egui::Pos2, pos: egui::Pos2) -> Option<usize> {
        let d = pos - origin;
        if d.x < 0.0 || d.y < 0.0 {
            return None;
        }
        let (c, r) = ((d.x / self.cell) as usize, (d.y / self.cell) as usize);
        (c < self.columns && r < self.rows).then_some(r * self.columns + c)
    }
}

/// Colour ramp through `stops` for `t` in 0..=1.
fn ramp(stops: &[[u8; 3]], t: f32) -> Color32 {
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    let x = t * (stops.len() - 1) as f32;
    let i = (x.floor() as usize).min(stops.len() - 2);
    let f = x - i as f32;
    let (a, b) = (stops[i], stops[i + 1]);
    let mix = |k: usize| (a[k] as f32 + (b[k] as f32 - a[k] as f32) * f).round() as u8;
    Color32::from_rgb(mix(0), mix(1), mix(2))
}

/// Dark blue (uniform) to hot yellow (most divergent), like "inferno".
const HOT: [[u8; 3]; 5] = [[20, 24, 64], [86, 30, 110], [187, 55, 84], [246, 124, 35], [252, 232, 92]];
/// Red (one lane busy) through amber to green (all lanes busy).
const LANES: [[u8; 3]; 4] = [[200, 40, 40], [235, 140, 40], [225, 215, 70], [60, 175, 85]];

/// A 120 × 10 point colour scale: 24 steps of `color` over 0..1, each at its middle value.
pub fn color_bar(ui: &mut Ui, color: impl Fn(f64) -> Color32) {
    let (rect, _) = ui.allocate_exact_size(vec2(120.0, 10.0), Sense::hover());
    let painter = ui.painter_at(rect);
    let steps = 24;
    for i in 0..steps {
        let x0 = rect.left() + rect.width() * i as f32 / steps as f32;
        let x1 = rect.left() + rect.width() * (i + 1) as f32 / steps as f32;
        painter.rect_filled(Rect::from_x_y_ranges(x0..=x1, rect.y_range()), 0.0, color((i as f64 + 0.5) / steps as f64));
    }
}

/// The colour of a value in `color_by`'s scale (`t` is already normalised to 0..=1).
pub fn cell_color(color_by: ColorBy, t: f32) -> Color32 {
    match color_by {
        ColorBy::DivergentEvaluations => ramp(&HOT, t),
        ColorBy::ActiveLanes => ramp(&LANES, t),
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct TextureKey {
    columns: usize,
    rows: usize,
    warps_per_cell: usize,
    color_by: ColorBy,
}

/// A heat map of one run's per-warp divergence, with its bins and texture cached.
pub struct HeatMap {
    width: u32,
    divergent: Vec<u32>,
    efficiency: Vec<f32>,
    max_divergent: u32,
    bins: Option<Bins>,
    texture: Option<(TextureKey, TextureHandle)>,
    /// Height of the map in points (the width is the available width).
    pub height: f32,
    /// Cells never get smaller than this (points); more warps share a cell instead.
    pub min_cell: f32,
    /// Cells never get larger than this (points).
    pub max_cell: f32,
    /// Invocations per workgroup of the kernel, when known: the tooltip then gives the
    /// workgroups a cell covers beside its threads.
    pub workgroup_size: Option<u32>,
}

impl std::fmt::Debug for HeatMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeatMap").field("width", &self.width).field("warps", &self.warps()).finish()
    }
}

impl HeatMap {
    /// Copies the per-warp values of `d` (`per_warp_divergent`, `per_warp_efficiency`).
    pub fn new(d: &Divergence) -> HeatMap {
        Self::from_values(d.width, d.per_warp_divergent.clone(), d.per_warp_efficiency.clone())
    }

    /// A heat map of per-warp values at warp width `width`.
    pub fn from_values(width: u32, divergent: Vec<u32>, efficiency: Vec<f32>) -> HeatMap {
        let max_divergent = divergent.iter().copied().max().unwrap_or(0);
        HeatMap {
            width,
            divergent,
            efficiency,
            max_divergent,
            bins: None,
            texture: None,
            height: 140.0,
            min_cell: 2.0,
            max_cell: 18.0,
            workgroup_size: None,
        }
    }

    /// Colours divergent evaluations on a scale up to `max` (or the map's own most, if
    /// higher), so that maps drawn side by side share one scale.
    pub fn with_max_divergent(mut self, max: u32) -> Self {
        self.max_divergent = self.max_divergent.max(max);
        self.texture = None;
        self
    }

    /// Sets the height of the drawn map in points (default 140).
    pub fn with_height(mut self, height: f32) -> Self {
        self.height = height;
        self
    }

    /// Number of warps in the map.
    pub fn warps(&self) -> usize {
        self.divergent.len().min(self.efficiency.len())
    }

    /// Warp width of the values, in lanes.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Most divergent evaluations of any warp (the top of the colour scale).
    pub fn max_divergent(&self) -> u32 {
        self.max_divergent
    }

    /// The bins for `warps_per_cell`, computed on the first call for that value only.
    pub fn bins(&mut self, warps_per_cell: usize) -> &Bins {
        let k = warps_per_cell.max(1);
        if self.bins.as_ref().is_none_or(|b| b.warps_per_cell != k) {
            self.bins = Some(Bins::new(&self.divergent, &self.efficiency, k));
            self.texture = None;
        }
        self.bins.as_ref().expect("bins were just computed")
    }

    /// Layout of the map in `size` points.
    pub fn layout(&self, size: Vec2) -> GridLayout {
        GridLayout::fit(self.warps(), size, self.min_cell, self.max_cell)
    }

    /// Normalised colour value of cell `i`: its worst warp (most divergent evaluations,
    /// fewest active lanes), so that a divergent warp among thousands of uniform ones keeps
    /// its colour instead of being averaged away (the tooltip gives the mean).
    fn value(bins: &Bins, max_divergent: u32, color_by: ColorBy, i: usize) -> f32 {
        match color_by {
            ColorBy::DivergentEvaluations => {
                if max_divergent == 0 {
                    0.0
                } else {
                    bins.divergent_max[i] as f32 / max_divergent as f32
                }
            }
            ColorBy::ActiveLanes => bins.efficiency_min[i],
        }
    }

    /// The threads (and workgroups, when the workgroup size is known) of `warps`.
    fn ranges(&self, warps: &Range<usize>) -> String {
        let w = self.width as u64;
        let (first, last) = (warps.start as u64 * w, warps.end as u64 * w - 1);
        match self.workgroup_size.filter(|&g| g > 0) {
            Some(g) => {
                let g = g as u64;
                format!("\nthreads {first}..{last}\nworkgroups {}..{} ({g} threads each)", first / g, last / g)
            }
            None => format!("\nthreads {first}..{last}"),
        }
    }

    fn texture(&mut self, ui: &Ui, layout: GridLayout, color_by: ColorBy) -> egui::TextureId {
        let key = TextureKey { columns: layout.columns, rows: layout.rows, warps_per_cell: layout.warps_per_cell, color_by };
        if let Some((k, t)) = &self.texture {
            if *k == key && self.bins.as_ref().is_some_and(|b| b.warps_per_cell == layout.warps_per_cell) {
                return t.id();
            }
        }
        let max_divergent = self.max_divergent;
        let bins = self.bins(layout.warps_per_cell);
        let mut pixels = vec![Color32::TRANSPARENT; layout.columns * layout.rows];
        for (i, p) in pixels.iter_mut().enumerate().take(bins.cells()) {
            *p = cell_color(color_by, Self::value(bins, max_divergent, color_by, i));
        }
        let image = ColorImage::new(
            [layout.columns.max(1), layout.rows.max(1)],
            if pixels.is_empty() { vec![Color32::TRANSPARENT] } else { pixels },
        );
        let handle = ui.ctx().load_texture("simtlab-heat-map", image, TextureOptions::NEAREST);
        let id = handle.id();
        self.texture = Some((key, handle));
        id
    }

    /// Draws the map in the available width, `self.height` points high, with a tooltip
    /// giving the numbers of the cell under the pointer.
    pub fn ui(&mut self, ui: &mut Ui, color_by: ColorBy) -> Response {
        let available = vec2(ui.available_width().max(16.0), self.height);
        let layout = self.layout(available);
        let size = if self.warps() == 0 { vec2(available.x, 24.0) } else { layout.size() };
        let (rect, response) = ui.allocate_exact_size(size, Sense::hover());
        let label = format!("heat map: {} warps of {} lanes, {} per cell", self.warps(), self.width, layout.warps_per_cell);
        response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Image, true, &label));
        if !ui.is_rect_visible(rect) {
            return response;
        }
        let painter = ui.painter_at(rect);
        if self.warps() == 0 {
            painter.text(
                rect.left_center(),
                egui::Align2::LEFT_CENTER,
                "no warps ran",
                egui::FontId::proportional(12.0),
                ui.visuals().weak_text_color(),
            );
            return response;
        }
        let texture = self.texture(ui, layout, color_by);
        let grid = Rect::from_min_size(rect.min, layout.size());
        painter.image(texture, grid, Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0)), Color32::WHITE);
        // row axis: the first warp of the first and last rows at the left edge
        let per_row = layout.columns * layout.warps_per_cell;
        let font = egui::FontId::monospace(9.0);
        let weak = ui.visuals().weak_text_color();
        if layout.rows > 1 && layout.cell * layout.rows as f32 >= 24.0 {
            let last = (layout.rows - 1) * per_row;
            painter.text(rect.left_top(), egui::Align2::LEFT_TOP, "0", font.clone(), weak);
            painter.text(rect.left_bottom(), egui::Align2::LEFT_BOTTOM, last.to_string(), font, weak);
        }
        let hovered = response.hover_pos().and_then(|p| layout.cell_at(rect.min, p));
        let bins = self.bins(layout.warps_per_cell);
        match hovered {
            Some(cell) if cell < bins.cells() => {
                let (c, r) = (cell % layout.columns, cell / layout.columns);
                let cell_rect = Rect::from_min_size(rect.min + vec2(c as f32, r as f32) * layout.cell, Vec2::splat(layout.cell));
                painter.rect_stroke(cell_rect, 0.0, Stroke::new(1.5, ui.visuals().strong_text_color()), StrokeKind::Outside);
                let warps = bins.warps_in(cell);
                let ranges = self.ranges(&warps);
                let bins = self.bins(layout.warps_per_cell);
                let text = if warps.len() == 1 {
                    format!(
                        "warp {}\ndivergent evaluations: {}\nactive lanes: {:.1} %",
                        warps.start,
                        bins.divergent_max[cell],
                        bins.efficiency_mean[cell] * 100.0
                    ) + &ranges
                } else {
                    format!(
                        "warps {}..{} ({})\ndivergent evaluations: mean {:.2}, max {}\nactive lanes: mean {:.1} %, min {:.1} %",
                        warps.start,
                        warps.end - 1,
                        warps.len(),
                        bins.divergent_mean[cell],
                        bins.divergent_max[cell],
                        bins.efficiency_mean[cell] * 100.0,
                        bins.efficiency_min[cell] * 100.0
                    ) + &ranges
                };
                response.on_hover_text_at_pointer(text)
            }
            _ => response,
        }
    }

    /// A small colour scale for `color_by` with its end values, and how to read the grid.
    pub fn legend(&self, ui: &mut Ui, color_by: ColorBy) {
        let layout = self.layout(vec2(ui.available_width().max(16.0), self.height));
        let per_row = layout.columns * layout.warps_per_cell;
        ui.small(if layout.warps_per_cell > 1 {
            format!("warps left to right, {per_row} per row; each cell {} warps, coloured by its worst warp", layout.warps_per_cell)
        } else {
            format!("warps left to right, {per_row} per row; one cell per warp")
        });
        ui.horizontal(|ui| {
            let (lo, hi) = match color_by {
                ColorBy::DivergentEvaluations => ("0".to_string(), format!("{} divergent evaluations", self.max_divergent)),
                ColorBy::ActiveLanes => ("0 %".to_string(), "100 % lanes active".to_string()),
            };
            ui.small(lo);
            color_bar(ui, |t| cell_color(color_by, t as f32));
            ui.small(hi);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_one_cell_per_warp_when_they_fit() {
        let l = GridLayout::fit(64, vec2(600.0, 140.0), 2.0, 18.0);
        assert_eq!(l.warps_per_cell, 1);
        assert_eq!(l.cell, 18.0);
        assert!(l.columns * l.rows >= 64);
        assert!(l.size().x <= 600.0 && l.size().y <= 140.0);
    }

    #[test]
    fn layout_aggregates_when_warps_outnumber_cells() {
        let l = GridLayout::fit(1 << 20, vec2(600.0, 140.0), 2.0, 18.0);
        assert_eq!((l.columns, l.cell), (300, 2.0));
        assert!(l.warps_per_cell > 1);
        assert!(l.columns * l.rows * l.warps_per_cell >= 1 << 20);
        assert!(l.rows <= 70, "{l:?}");
    }

    #[test]
    fn bins_mean_max_and_partial_last_cell() {
        let b = Bins::new(&[0, 2, 4, 1, 3], &[1.0, 0.5, 0.25, 1.0, 0.5], 2);
        assert_eq!(b.cells(), 3);
        assert_eq!(b.divergent_mean, vec![1.0, 2.5, 3.0]);
        assert_eq!(b.divergent_max, vec![2, 4, 3]);
        assert_eq!(b.efficiency_min, vec![0.5, 0.25, 0.5]);
        assert_eq!(b.warps_in(2), 4..5);
    }

    #[test]
    fn bins_are_cached_per_cell_width() {
        let mut h = HeatMap::from_values(8, vec![1; 1000], vec![0.5; 1000]);
        let p = h.bins(10) as *const Bins;
        assert_eq!(h.bins(10) as *const Bins, p);
        assert_eq!(h.bins(20).cells(), 50);
    }

    #[test]
    fn ramps_hit_their_end_stops() {
        assert_eq!(cell_color(ColorBy::ActiveLanes, 1.0), Color32::from_rgb(60, 175, 85));
        assert_eq!(cell_color(ColorBy::DivergentEvaluations, 0.0), Color32::from_rgb(20, 24, 64));
        assert_eq!(cell_color(ColorBy::DivergentEvaluations, f32::NAN), Color32::from_rgb(20, 24, 64));
    }
}
