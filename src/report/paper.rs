//! The papers' published values (`assets/papers/<paper>.toml`), embedded in the binary.

use crate::error::{Error, Result};
use serde::Deserialize;

#[derive(Clone, Debug, Default, Deserialize)]
pub struct PaperTable {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub kind: String,
    pub columns: Vec<String>,
    #[serde(default)]
    pub units: Vec<String>,
    pub rows: Vec<Vec<toml::Value>>,
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

#[derive(Clone, Debug, Default, Deserialize)]
pub struct PaperValues {
    #[serde(default)]
    pub paper: String,
    #[serde(default)]
    pub hardware: String,
    #[serde(default, rename = "table")]
    pub tables: Vec<PaperTable>,
    #[serde(default, rename = "claim")]
    pub claims: Vec<Claim>,
}

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/papers.rs"));
}
const EMBEDDED: &[(&str, &str)] = embedded::PAPERS;

impl PaperValues {
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

    pub fn table(&self, id: &str) -> Option<&PaperTable> {
        self.tables.iter().find(|t| t.id == id)
    }

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
