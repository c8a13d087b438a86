//! Reports: markdown with our tables beside the papers' values, direction-of-effect verdicts,
//! PNG plots, and chrome traces of GPU/CPU timelines.

// The tables, verdicts and figures below are plain data (kernels fill tables too); reading the
// papers' TOML, the markdown and the PNG drawing need the `report` feature.
#[cfg(all(feature = "report", target_arch = "wasm32"))]
mod browser_text;
mod figure;
#[cfg(feature = "report")]
mod heatmap;
#[cfg(feature = "report")]
mod markdown;
#[cfg(feature = "report")]
mod paper;
#[cfg(feature = "report")]
mod plot;

pub use figure::{Figure, Series};
#[cfg(feature = "report")]
pub use heatmap::{heatmap_png, write_heatmap};
#[cfg(feature = "report")]
pub use markdown::render_report;
#[cfg(feature = "report")]
pub use paper::{PaperTable, PaperValues};
#[cfg(feature = "report")]
pub use plot::{png_bytes, render_png};

use serde::{Deserialize, Serialize};

/// A table cell; `measured` cells (times, throughputs) vary run to run, the others
/// (sizes, divergence counts, checks) are deterministic for a given adapter and seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Cell {
    /// Text shown as is.
    Text(String),
    /// A number shown with a fixed number of decimals.
    Number {
        /// The value, in the column's unit.
        value: f64,
        /// Decimals shown.
        digits: usize,
        /// Varies run to run (a time or throughput) rather than fixed by adapter and seed.
        measured: bool,
    },
    /// No value (the point failed or does not apply); shown as a dash.
    Missing,
}

impl Cell {
    /// A text cell.
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }
    /// A deterministic number with `digits` decimals.
    pub fn exact(value: f64, digits: usize) -> Cell {
        Cell::Number { value, digits, measured: false }
    }
    /// A measured number (time, throughput) with `digits` decimals.
    pub fn measured(value: f64, digits: usize) -> Cell {
        Cell::Number { value, digits, measured: true }
    }
    /// The outcome of a CPU check: "ok" or "FAILED".
    pub fn check(passed: bool) -> Cell {
        Cell::text(if passed { "ok" } else { "FAILED" })
    }
    /// The cell as text: numbers with their decimals, a missing value as "—".
    pub fn render(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Number { value, digits, .. } => format!("{value:.digits$}"),
            Cell::Missing => "—".into(),
        }
    }
}

/// One of our result tables.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// Caption shown above the table.
    pub title: String,
    /// Column headers, units included.
    pub columns: Vec<String>,
    /// Rows of cells, each as long as `columns`.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// An empty table with its caption and column headers.
    pub fn new(title: impl Into<String>, columns: &[&str]) -> Table {
        Table { title: title.into(), columns: columns.iter().map(|c| c.to_string()).collect(), rows: Vec::new() }
    }
}

/// A claim of the paper checked against ours: the direction of an effect (e.g. a speedup > 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The claim in words.
    pub claim: String,
    /// The paper's value (None when the paper gives no number).
    pub paper: Option<f64>,
    /// Our measured value (None when it could not be measured).
    pub ours: Option<f64>,
    /// Unit appended to both values ("x" for speedups, may be empty).
    pub unit: String,
    /// Same direction of effect (None when we could not measure it).
    pub agrees: Option<bool>,
}

impl Verdict {
    /// "X is faster than Y"-style claims: agreement means both values lie on the same side of
    /// `pivot` (1.0 for speedups).
    pub fn direction(claim: impl Into<String>, paper: Option<f64>, ours: Option<f64>, unit: &str, pivot: f64) -> Verdict {
        let agrees = match (paper, ours) {
            (Some(p), Some(o)) => Some((p > pivot) == (o > pivot)),
            (None, Some(o)) => Some(o > pivot),
            _ => None,
        };
        Verdict { claim: claim.into(), paper, ours, unit: unit.into(), agrees }
    }

    /// A claim with no number on either side, which holds or not (e.g. "the model reproduces
    /// the paper's occupancies").
    pub fn holds(claim: impl Into<String>, agrees: bool) -> Verdict {
        Verdict { claim: claim.into(), paper: None, ours: None, unit: String::new(), agrees: Some(agrees) }
    }

    /// One line for people: claim, both values and the verdict.
    pub fn line(&self) -> String {
        let num = |v: Option<f64>| v.map_or("—".to_string(), |x| format!("{x:.3}{}", self.unit));
        let word = match self.agrees {
            Some(true) => "agrees",
            Some(false) => "differs",
            None => "not measured",
        };
        format!("{}: paper {}, here {}, {word}", self.claim, num(self.paper), num(self.ours))
    }
}

/// One experiment's part of the report.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Section {
    /// Paper short name (`zhang`, `chakroun`, `carrillo`, `gupta`, `ryoo`).
    pub paper: String,
    /// Experiment id, e.g. `zhang-fig1-loop`.
    pub id: String,
    /// Heading of the section.
    pub title: String,
    /// Our tables.
    pub tables: Vec<Table>,
    /// The paper's own tables to show beside ours (ids in `assets/papers/<paper>.toml`).
    pub paper_tables: Vec<String>,
    /// Plots, written as PNG beside the report.
    pub figures: Vec<Figure>,
    /// The paper's claims checked against ours.
    pub verdicts: Vec<Verdict>,
    /// Remarks for the reader (fallbacks taken, what differs from the paper's setup).
    pub notes: Vec<String>,
    /// Points that failed, with their errors.
    pub failures: Vec<String>,
}
