//! The papers' published values (`assets/papers/<paper>.toml`), embedded in the binary.

use crate::error::{Error, Result};
use serde::Deserialize;

/// One table or figure of a paper, transcribed as rows of values.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct PaperTable {
    /// Id the experiments look it up by.
    pub id: String,
    /// The paper's caption.
    pub title: String,
    /// `table`, or `figure` when the values were read off a plot.
    #[serde(default)]
    pub kind: String,
    /// Column headers.
    pub columns: Vec<String>,
    /// Unit of each column (may be empty, or shorter than `columns`).
    #[serde(default)]
    pub units: Vec<String>,
    /// The values as written in the TOML (numbers or text).
    pub rows: Vec<Vec<toml::Value>>,
    /// Where the values come from or how they were read.
    #[serde(default)]
    pub note: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Claim {
    pub id: String,
    pub text: String,
    pub value: Option<f64>,
    #[serde(default)]
    pub unit: String,
}

/// A paper's published values, from `assets/papers/<paper>.toml`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct PaperValues {
    /// Full citation.
    #[serde(default)]
    pub paper: String,
    /// The hardware the paper measured on.
    #[serde(default)]
    pub hardware: String,
    /// Its tables and figures (`[[table]]` in the TOML).
    #[serde(default, rename = "table")]
    pub tables: Vec<PaperTable>,
    /// Its claims (`[[claim]]` in the TOML).
    #[serde(default, rename = "claim")]
    pub claims: Vec<Claim>,
}

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/papers.rs"));
}
const EMBEDDED: &[(&str, &str)] = embedded::PAPERS;

impl PaperValues {
    /// Parses the TOML `text` of paper `name`; a syntax error is an [`Error::File`] naming
    /// `assets/papers/<name>.toml`.
    pub fn parse(name: &str, text: &str) -> Result<PaperValues> {
        toml::from_str(text).map_err(|e| Error::File { path: format!("assets/papers/{name}.toml").into(), message: e.to_string() })
    }

    /// The embedded values of `paper` (empty when the paper has none).
    pub fn of(paper: &str) -> Result<PaperValues> {
        match EMBEDDED.iter().find(|(n, _)| *n == paper) {
            Some((n, text)) => Self::parse(n, text),
            None => Ok(PaperValues::default()),
        }
    }

    /// The table or figure with id `id`.
    pub fn table(&self, id: &str) -> Option<&PaperTable> {
        self.tables.iter().find(|t| t.id == id)
    }

    /// The claim with id `id`.
    pub fn claim(&self, id: &str) -> Option<&Claim> {
        self.claims.iter().find(|c| c.id == id)
    }

    /// A numeric cell of a table: the row whose first cell is `row`, the column named `column`.
    pub fn value(&self, table: &str, row: &str, column: &str) -> Option<f64> {
        let t = self.table(table)?;
        let c = t.columns.iter().position(|x| x == column)?;
        let r = t.rows.iter().find(|r| r.first().and_then(|v| v.as_str()) == Some(row))?;
        match r.get(c)? {
            toml::Value::Float(f) => Some(*f),
            toml::Value::Integer(i) => Some(*i as f64),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_paper_file_parses() {
        for (name, _) in EMBEDDED {
            let v = PaperValues::of(name).unwrap();
            assert!(!v.tables.is_empty() || !v.claims.is_empty(), "{name} has no values");
            for t in &v.tables {
                for r in &t.rows {
                    assert_eq!(r.len(), t.columns.len(), "{name} {}: row {r:?}", t.id);
                }
            }
        }
    }
}
