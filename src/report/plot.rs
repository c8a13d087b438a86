//! Line plots of sweeps as PNG (plotters, with an embedded DejaVu Sans font).

use super::Figure;
use crate::error::{Error, Result};
use plotters::prelude::*;
use std::path::Path;

#[cfg(not(target_arch = "wasm32"))]
static FONT: std::sync::Once = std::sync::Once::new();

/// Gives plotters its one font (in a browser page the browser letters plots instead,
/// `report::browser_text`).
pub(super) fn register_font() {
    #[cfg(not(target_arch = "wasm32"))]
    FONT.call_once(|| {
        let bytes: &'static [u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
        // Only fails on a corrupt font file, which the plot test would reveal.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, bytes);
    });
}

fn range(values: impl Iterator<Item = f64> + Clone, log: bool) -> (f64, f64) {
    let finite = values.filter(|v| v.is_finite() && (!log || *v > 0.0));
    let lo = finite.clone().fold(f64::INFINITY, f64::min);
    let hi = finite.fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return (if log { 0.1 } else { 0.0 }, 1.0);
    }
    if log {
        (lo / 1.3, hi * 1.3)
    } else {
        let pad = ((hi - lo) * 0.05).max(hi.abs() * 1e-3).max(1e-12);
        (if lo >= 0.0 { (lo - pad).max(0.0) } else { lo - pad }, hi + pad)
    }
}

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// Pixels of the PNG [`png_bytes`] draws.
const PLOT_SIZE: (u32, u32) = (800, 500);

/// Draws `figure` into `path` (800×500 PNG, [`png_bytes`]), replacing it atomically, a link
/// there included ([`crate::harness::replace_file`]: the report's own files).
pub fn render_png(figure: &Figure, path: &Path) -> Result<()> {
    let bytes = png_bytes(figure).map_err(|e| Error::File { path: path.into(), message: e.to_string() })?;
    crate::harness::replace_file(path, &bytes)
}

/// `figure` drawn as an 800×500 PNG, in memory: the bytes [`render_png`] writes, and what a
/// browser page offers as a download.
pub fn png_bytes(figure: &Figure) -> Result<Vec<u8>> {
    let (width, height) = PLOT_SIZE;
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    let bitmap = BitMapBackend::with_buffer(&mut rgb, PLOT_SIZE);
    #[cfg(target_arch = "wasm32")]
    let bitmap = super::browser_text::BrowserText::new(bitmap)?;
    draw(figure, bitmap)?;
    encode_png(&rgb, (width, height))
}

/// 8-bit RGB pixels (`width × height × 3` bytes) as PNG bytes.
pub(super) fn encode_png(rgb: &[u8], (width, height): (u32, u32)) -> Result<Vec<u8>> {
    let encoding = |e: png::EncodingError| Error::invalid("PNG", format!("encoding it: {e}"));
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    // a filter per row, as image's encoder chose: plots compress several times smaller
    encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let mut writer = encoder.write_header().map_err(encoding)?;
    writer.write_image_data(rgb).map_err(encoding)?;
    writer.finish().map_err(encoding)?;
    Ok(out)
}

/// Draws `figure` on `backend`: title, axes with their labels, one line per series (or bars
/// side by side over named categories), each point's whisker where it has a spread, legend.
fn draw<B: DrawingBackend>(figure: &Figure, backend: B) -> Result<()> {
    register_font();
    let err = |e: String| Error::invalid("plot", format!("drawing '{}': {e}", figure.title));
    let spreads = || figure.series.iter().flat_map(|s| s.spread.iter().flatten().flat_map(|&(lo, hi)| [lo, hi]));
    let xs = figure.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = figure.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).chain(spreads());
    let categories = figure.categories.as_deref();
    let (x0, x1) = match categories {
        Some(names) => (-0.5, names.len().max(1) as f64 - 0.5),
        None => range(xs, figure.log_x),
    };
    // bars stand on zero
    let (y0, y1) = match categories {
        Some(_) if !figure.log_y => range(ys.chain([0.0]), false),
        _ => range(ys, figure.log_y),
    };
    let root = backend.into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    // a category's name under its bars, nothing between two categories
    let category_tick = |x: &f64| match categories {
        Some(names) if (x - x.round()).abs() < 1e-6 && *x >= -1e-6 => names.get(x.round() as usize).cloned().unwrap_or_default(),
        Some(_) => String::new(),
        None => crate::harness::format_significant(*x),
    };
    let x_ticks = categories.map_or(10, |names| names.len().max(1));
    macro_rules! draw {
        ($x:expr, $y:expr) => {{
            let mut chart = ChartBuilder::on(&root)
                .caption(&figure.title, ("sans-serif", 20))
                .margin(12)
                .x_label_area_size(45)
                .y_label_area_size(70)
                .build_cartesian_2d($x, $y)
                .map_err(|e| err(e.to_string()))?;
            chart
                .configure_mesh()
                .x_desc(&figure.x_label)
                .y_desc(&figure.y_label)
                .x_labels(x_ticks)
                .x_label_formatter(&category_tick)
                .y_label_formatter(&|y| crate::harness::format_significant(*y))
                .label_style(("sans-serif", 13))
                .draw()
                .map_err(|e| err(e.to_string()))?;
            let n = figure.series.len().max(1) as f64;
            for (i, s) in figure.series.iter().enumerate() {
                let color = COLORS[i % COLORS.len()];
                let points: Vec<(f64, f64, Option<(f64, f64)>)> = s
                    .points
                    .iter()
                    .enumerate()
                    .map(|(k, p)| (p.0, p.1, s.spread.get(k).copied().flatten()))
                    .filter(|p| p.0.is_finite() && p.1.is_finite())
                    .collect();
                let legend = move |(x, y): (i32, i32)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(4));
                // where each point's whisker stands, and how wide its caps are
                let mut whiskers: Vec<(f64, f64, (f64, f64))> = Vec::new();
                if categories.is_some() {
                    let w = 0.8 / n;
                    let bars: Vec<(f64, f64, f64)> =
                        points.iter().map(|p| (p.0 - 0.4 + w * i as f64, p.0 - 0.4 + w * (i as f64 + 1.0), p.1)).collect();
                    let base = if figure.log_y { y0 } else { 0.0 };
                    chart
                        .draw_series(
                            bars.iter().map(|&(l, r, y)| Rectangle::new([(l + 0.05 * w, base), (r - 0.05 * w, y)], color.filled())),
                        )
                        .map_err(|e| err(e.to_string()))?
                        .label(&s.name)
                        .legend(legend);
                    whiskers.extend(points.iter().zip(&bars).filter_map(|(p, b)| Some((0.5 * (b.0 + b.1), 0.15 * w, p.2?))));
                } else {
                    let pts: Vec<(f64, f64)> = points.iter().map(|p| (p.0, p.1)).collect();
                    chart
                        .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                        .map_err(|e| err(e.to_string()))?
                        .label(&s.name)
                        .legend(legend);
                    chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled()))).map_err(|e| err(e.to_string()))?;
                    let cap = 0.01 * (x1 - x0);
                    whiskers.extend(points.iter().filter_map(|p| Some((p.0, cap, p.2?))));
                }
                let ink = if categories.is_some() { BLACK } else { color };
                for (x, cap, (lo, hi)) in whiskers {
                    let (l, r) = if figure.log_x { (x / (1.0 + cap), x * (1.0 + cap)) } else { (x - cap, x + cap) };
                    for segment in [vec![(x, lo), (x, hi)], vec![(l, lo), (r, lo)], vec![(l, hi), (r, hi)]] {
                        chart
                            .draw_series(std::iter::once(PathElement::new(segment, ink.stroke_width(2))))
                            .map_err(|e| err(e.to_string()))?;
                    }
                }
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 13))
                .draw()
                .map_err(|e| err(e.to_string()))?;
        }};
    }
    match (figure.log_x, figure.log_y) {
        (false, false) => draw!(x0..x1, y0..y1),
        (true, false) => draw!((x0..x1).log_scale(), y0..y1),
        (false, true) => draw!(x0..x1, (y0..y1).log_scale()),
        (true, true) => draw!((x0..x1).log_scale(), (y0..y1).log_scale()),
    }
    root.present().map_err(|e| err(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Series;

    #[test]
    fn renders_a_png_with_the_series_drawn() {
        let fig = Figure {
            id: "t".into(),
            title: "time vs p".into(),
            x_label: "p".into(),
            y_label: "ms".into(),
            series: vec![
                Series { name: "a".into(), points: vec![(0.0, 1.0), (0.5, 2.0), (1.0, 4.0)], spread: Vec::new() },
                Series { name: "b".into(), points: vec![(0.0, 2.0), (1.0, 1.0)], spread: Vec::new() },
            ],
            ..Default::default()
        };
        let dir = std::env::temp_dir().join(format!("simtlab-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.png");
        render_png(&fig, &path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        assert!(bytes.len() > 5000, "a plot with axes, text and lines is more than a blank image");
        let log = Figure { log_x: true, log_y: true, ..fig };
        render_png(&log, &dir.join("l.png")).unwrap();
        std::fs::remove_dir_all(&dir).ok();
    }
}
