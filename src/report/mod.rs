//! Reports: markdown with our tables beside the papers' values, direction-of-effect verdicts,
//! PNG plots, and chrome traces of GPU/CPU timelines.

mod markdown;
mod paper;
mod plot;

pub use markdown::render_report;
pub use paper::{PaperTable, PaperValues};
pub use plot::{render_png, Figure, Series};

use serde::{Deserialize, Serialize};

/// A table cell; `measured` cells (times, throughputs) vary run to run, the others
/// (sizes, divergence counts, checks) are deterministic for a given adapter and seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Cell {
    Text(String),
    Number { value: f64, digits: usize, measured: bool },
    Missing,
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }
    pub fn exact(value: f64, digits: usize) -> Cell {
        Cell::Number { value, digits, measured: false }
    }
    pub fn measured(value: f64, digits: usize) -> Cell {
        Cell::Number { value, digits, measured: true }
    }
    pub fn render(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Number { value, digits, .. } => format!("{value:.digits$}"),
            Cell::Missing => "—".into(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Table {
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

/// A claim of the paper checked against ours: the direction of an effect (e.g. a speedup > 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub claim: String,
    pub paper: Option<f64>,
    pub ours: Option<f64>,
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
    pub paper: String,
    pub id: String,
    pub title: String,
    pub tables: Vec<Table>,
    /// The paper's own tables to show beside ours (ids in `assets/papers/<paper>.toml`).
    pub paper_tables: Vec<String>,
    pub figures: Vec<Figure>,
    pub verdicts: Vec<Verdict>,
    pub notes: Vec<String>,
    /// Points that failed, with their errors.
    pub failures: Vec<String>,
}
