//! The data of a line plot: plain values that records and sections carry; drawn to PNG by
//! `report::render_png` (feature `report`).

use serde::{Deserialize, Serialize};

/// One line of a plot.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// `(x, y)` points, drawn in the given order.
    pub points: Vec<(f64, f64)>,
    /// Per point, the lowest and highest of the samples behind its y (drawn as a whisker);
    /// empty, or None for a point, where there is no spread.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spread: Vec<Option<(f64, f64)>>,
}

impl Series {
    /// Adds `point` to the series named `name` in `series`, starting that series if there is none.
    pub fn add(series: &mut Vec<Series>, name: &str, point: (f64, f64)) {
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => series.push(Series { name: name.to_string(), points: vec![point], spread: Vec::new() }),
        }
    }
}

/// A line plot, or bars over named categories (drawn to PNG by `render_png`, feature `report`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// File stem of the PNG.
    pub id: String,
    /// Caption drawn above the plot.
    pub title: String,
    /// x axis title, with its unit.
    pub x_label: String,
    /// y axis title, with its unit.
    pub y_label: String,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Named categories at x = 0, 1, …: the series are drawn as bars side by side, each
    /// category's name under its bars (a run of one point, or of a family's workloads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub categories: Option<Vec<String>>,
    /// The lines, coloured in turn from a fixed palette.
    pub series: Vec<Series>,
}
