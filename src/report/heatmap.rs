//! The per-subgroup heat map of a profiled dispatch as a PNG: one cell per subgroup in dispatch
//! order, coloured by its SIMT efficiency (the fraction of its lanes doing useful work: red 0 %,
//! green 100 %), grey where the subgroup evaluated no site. Rows of up to 128 subgroups; the
//! left axis gives each row's first subgroup, the bottom axis the place in the row, and a legend
//! gives the colour scale.

use crate::error::{Error, Result};
use crate::profile::Counts;
use plotters::prelude::*;
use std::path::Path;

/// Cell size in pixels and the widest row, in cells.
const CELL: u32 = 8;
const MAX_COLUMNS: usize = 128;
/// Room around the cells: title above, row numbers left, column numbers below, legend right.
const TOP: u32 = 34;
const LEFT: u32 = 78;
const BOTTOM: u32 = 46;
const RIGHT: u32 = 150;
/// Height of the legend's colour bar; the image is at least this tall.
const LEGEND_BAR: u32 = 160;
const NO_SITE: RGBColor = RGBColor(200, 200, 200);

/// Colour of a cell at SIMT efficiency `e` (0..=1).
fn color(e: f64) -> RGBColor {
    let e = e.clamp(0.0, 1.0);
    RGBColor((255.0 * (1.0 - e)) as u8, (200.0 * e) as u8, 40)
}

/// Each subgroup's SIMT efficiency (None: it evaluated no site), in the order of `counts`.
fn efficiencies(counts: &Counts) -> Vec<Option<f64>> {
    counts
        .per_subgroup
        .chunks_exact(counts.sites.max(1))
        .map(|record| {
            let (lanes, steps) = record.iter().fold((0u64, 0u64), |(l, s), c| (l + c.active_lanes, s + c.evaluations));
            (steps > 0).then(|| lanes as f64 / (steps as f64 * counts.width as f64))
        })
        .collect()
}

/// The heat map of `counts` as PNG bytes (drawn in memory: it works in a browser page too).
pub fn heatmap_png(counts: &Counts) -> Result<Vec<u8>> {
    let cells = efficiencies(counts);
    let columns = cells.len().clamp(1, MAX_COLUMNS);
    let rows = cells.len().div_ceil(columns).max(1);
    let grid = (columns as u32 * CELL, rows as u32 * CELL);
    let size = (LEFT + grid.0.max(4 * CELL) + RIGHT, TOP + grid.1.max(LEGEND_BAR + 40) + BOTTOM);
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    let bitmap = BitMapBackend::with_buffer(&mut rgb, size);
    #[cfg(target_arch = "wasm32")]
    let bitmap = super::browser_text::BrowserText::new(bitmap)?;
    draw(counts, &cells, columns, bitmap)?;
    super::plot::encode_png(&rgb, size)
}

/// Title, cells, axes and legend on `backend`.
fn draw<B: DrawingBackend>(counts: &Counts, cells: &[Option<f64>], columns: usize, backend: B) -> Result<()> {
    super::plot::register_font();
    let err = |e: String| Error::invalid("heat map", format!("drawing it: {e}"));
    let root = backend.into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let text =
        |s: &str, at: (i32, i32), size: u32| root.draw(&Text::new(s.to_string(), at, ("sans-serif", size).into_font().color(&BLACK)));
    // which subgroup each cell is: dispatch order, or the counted ones of a sampled run
    let subgroup = |cell: usize| counts.sampling.as_ref().and_then(|s| s.counted.get(cell).copied()).unwrap_or(cell as u64);
    let sampled = counts.sampling.as_ref().map_or(String::new(), |s| format!(", one in {} counted", s.one_in));
    let title = format!("SIMT efficiency per subgroup of {} lanes ({} subgroups{sampled})", counts.width, cells.len());
    text(&title, (LEFT as i32, 8), 16).map_err(|e| err(e.to_string()))?;
    for (g, e) in cells.iter().enumerate() {
        let fill = e.map_or(NO_SITE, color);
        let x = LEFT as i32 + (g % columns) as i32 * CELL as i32;
        let y = TOP as i32 + (g / columns) as i32 * CELL as i32;
        root.draw(&Rectangle::new([(x, y), (x + CELL as i32 - 1, y + CELL as i32 - 1)], fill.filled())).map_err(|e| err(e.to_string()))?;
    }
    // rows: the first subgroup of every few rows, spaced to stay legible
    let rows = cells.len().div_ceil(columns).max(1);
    let every = (rows / 16).max(1).next_power_of_two().max(if CELL < 14 { 2 } else { 1 }).min(rows.next_power_of_two());
    for r in (0..rows).step_by(every) {
        let y = TOP as i32 + r as i32 * CELL as i32;
        text(&subgroup(r * columns).to_string(), (6, y - 2), 12).map_err(|e| err(e.to_string()))?;
    }
    text("first subgroup", (6, TOP as i32 - 16), 11).map_err(|e| err(e.to_string()))?;
    let below = TOP as i32 + rows as i32 * CELL as i32 + 4;
    for c in (0..columns).step_by(32) {
        text(&c.to_string(), (LEFT as i32 + c as i32 * CELL as i32, below), 12).map_err(|e| err(e.to_string()))?;
    }
    text("place in the row (subgroups, dispatch order)", (LEFT as i32, below + 18), 12).map_err(|e| err(e.to_string()))?;
    // legend: the colour scale, 100 % at the top, and the grey of a subgroup without a site
    let x = LEFT as i32 + (columns.max(4) as u32 * CELL) as i32 + 24;
    let (top, bar) = (TOP as i32, LEGEND_BAR as i32);
    for k in 0..bar {
        let e = 1.0 - k as f64 / (bar - 1) as f64;
        root.draw(&Rectangle::new([(x, top + k), (x + 16, top + k + 1)], color(e).filled())).map_err(|e| err(e.to_string()))?;
    }
    for (label, at) in [("100 %", 0), ("50 %", bar / 2), ("0 %", bar - 1)] {
        text(label, (x + 22, top + at - 6), 12).map_err(|e| err(e.to_string()))?;
    }
    root.draw(&Rectangle::new([(x, top + bar + 14), (x + 16, top + bar + 26)], NO_SITE.filled())).map_err(|e| err(e.to_string()))?;
    text("no site", (x + 22, top + bar + 14), 12).map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))
}

/// Writes the heat map of `counts` to `path` ([`crate::harness::write_file`]: a failed write
/// is an I/O error naming `path`).
pub fn write_heatmap(counts: &Counts, path: &Path) -> Result<()> {
    crate::harness::write_file(path, &heatmap_png(counts)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{CountSource, SiteCounts};

    /// The PNG's pixels and its width.
    fn decode(png: &[u8]) -> (Vec<u8>, usize) {
        let mut reader = png::Decoder::new(std::io::Cursor::new(png)).read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        (buf, info.width as usize)
    }

    #[test]
    fn cells_sit_beside_their_axes_in_the_colour_the_legend_gives() {
        // 200 subgroups of 8 lanes, one site: subgroup g has (g % 9) lanes of 8 busy, the
        // last one evaluated nothing
        let per_subgroup: Vec<SiteCounts> = (0..200u64)
            .map(|g| {
                let steps = u64::from(g != 199);
                SiteCounts { evaluations: steps, active_lanes: steps * (g % 9), taken_lanes: 0, uniform_evaluations: steps, taken_steps: 0 }
            })
            .collect();
        let counts = Counts {
            width: 8,
            source: CountSource::GpuProbe,
            sites: 1,
            per_subgroup,
            cases: 0,
            per_subgroup_cases: Vec::new(),
            sampling: None,
        };
        let (rgb, width) = decode(&heatmap_png(&counts).unwrap());
        let pixel = |(x, y): (u32, u32)| {
            let at = (y as usize * width + x as usize) * 3;
            [rgb[at], rgb[at + 1], rgb[at + 2]]
        };
        let centre = |g: u32| (LEFT + (g % 128) * CELL + CELL / 2, TOP + (g / 128) * CELL + CELL / 2);
        for g in [0u32, 4, 8, 130, 152] {
            let c = color((g % 9) as f64 / 8.0);
            assert_eq!(pixel(centre(g)), [c.0, c.1, c.2], "subgroup {g}");
        }
        assert_eq!(pixel(centre(199)), [NO_SITE.0, NO_SITE.1, NO_SITE.2]);
        // the legend's bar: green (100 %) at its top, red (0 %) at its bottom
        let bar_x = LEFT + 128 * CELL + 24 + 8;
        assert_eq!(pixel((bar_x, TOP)), [0, 200, 40]);
        assert_eq!(pixel((bar_x, TOP + LEGEND_BAR - 1)), [255, 0, 40]);
        // labels are drawn: dark pixels in the row-number margin and under the cells
        let dark = |x0: u32, x1: u32, y0: u32, y1: u32| {
            (y0..y1).flat_map(|y| (x0..x1).map(move |x| (x, y))).any(|p| pixel(p).iter().all(|&v| v < 100))
        };
        assert!(dark(4, LEFT - 4, TOP, TOP + 16), "row numbers");
        assert!(dark(LEFT, LEFT + 300, TOP + 2 * CELL + 4, TOP + 2 * CELL + 40), "column numbers and axis title");
    }
}
