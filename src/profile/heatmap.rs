//! The per-subgroup heat map of a profiled dispatch as a PNG: one cell per subgroup in dispatch
//! order, coloured by the fraction of its lanes doing useful work (red 0 %, green 100 %),
//! grey where the subgroup evaluated no site.

use super::counts::Counts;
use crate::error::{Error, Result};
use plotters::prelude::*;
use std::path::Path;

/// Cell size in pixels and the widest row, in cells.
const CELL: u32 = 8;
const MAX_COLUMNS: usize = 128;

/// Colour of a cell at SIMT efficiency `e` (0..=1).
fn color(e: f64) -> RGBColor {
    let e = e.clamp(0.0, 1.0);
    RGBColor((255.0 * (1.0 - e)) as u8, (200.0 * e) as u8, 40)
}

/// The heat map of `counts` as PNG bytes (drawn in memory: it works in a browser page too).
pub fn heatmap_png(counts: &Counts) -> Result<Vec<u8>> {
    let subgroups = counts.per_subgroup.len() / counts.sites.max(1);
    let columns = subgroups.clamp(1, MAX_COLUMNS);
    let rows = subgroups.div_ceil(columns).max(1);
    let (width, height) = (columns as u32 * CELL, rows as u32 * CELL);
    let err = |e: String| Error::invalid("heat map", format!("drawing it: {e}"));
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        for (g, record) in counts.per_subgroup.chunks_exact(counts.sites.max(1)).enumerate() {
            let (lanes, steps) = record.iter().fold((0u64, 0u64), |(l, s), c| (l + c.active_lanes, s + c.evaluations));
            let fill = if steps == 0 { RGBColor(200, 200, 200) } else { color(lanes as f64 / (steps as f64 * counts.width as f64)) };
            let (x, y) = ((g % columns) as i32 * CELL as i32, (g / columns) as i32 * CELL as i32);
            root.draw(&Rectangle::new([(x, y), (x + CELL as i32 - 1, y + CELL as i32 - 1)], fill.filled()))
                .map_err(|e| err(e.to_string()))?;
        }
        root.present().map_err(|e| err(e.to_string()))?;
    }
    let encoding = |e: png::EncodingError| err(format!("encoding the PNG: {e}"));
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(encoding)?;
    writer.write_image_data(&rgb).map_err(encoding)?;
    writer.finish().map_err(encoding)?;
    Ok(out)
}

/// Writes the heat map of `counts` to `path` ([`crate::harness::write_file`]: a failed write
/// is an I/O error naming `path`).
pub fn write_heatmap(counts: &Counts, path: &Path) -> Result<()> {
    crate::harness::write_file(path, &heatmap_png(counts)?)
}
