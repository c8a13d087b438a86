//! The markdown report.

use super::{render_png, Cell, PaperValues, Section, Table};
use crate::error::{Error, Result};
use std::fmt::Write;
use std::path::Path;

fn table_md(t: &Table) -> String {
    let mut s = String::new();
    if !t.title.is_empty() {
        let _ = writeln!(s, "**{}**\n", t.title);
    }
    let _ = writeln!(s, "| {} |", t.columns.join(" | "));
    let _ = writeln!(s, "|{}", " --- |".repeat(t.columns.len()));
    for r in &t.rows {
        let _ = writeln!(s, "| {} |", r.iter().map(Cell::render).collect::<Vec<_>>().join(" | "));
    }
    s
}

fn paper_table_md(values: &PaperValues, id: &str) -> Option<String> {
    let t = values.table(id)?;
    let header: Vec<String> = t
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| match t.units.get(i).filter(|u| !u.is_empty()) {
            Some(u) => format!("{c} ({u})"),
            None => c.clone(),
        })
        .collect();
    let mut s = format!("*Paper, {}: {}*\n\n| {} |\n|{}\n", t.id, t.title, header.join(" | "), " --- |".repeat(header.len()));
    for r in &t.rows {
        let cells: Vec<String> = r
            .iter()
            .map(|v| match v {
                toml::Value::String(x) => x.clone(),
                other => other.to_string(),
            })
            .collect();
        let _ = writeln!(s, "| {} |", cells.join(" | "));
    }
    if !t.note.is_empty() {
        let _ = writeln!(s, "\n*{}*", t.note);
    }
    Some(s)
}

/// Writes `dir/report.md` and one PNG per figure; `header` lines go first (adapter, command).
pub fn render_report(dir: &Path, title: &str, header: &[String], sections: &[Section]) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut md = format!("# {title}\n\n");
    for h in header {
        let _ = writeln!(md, "- {h}");
    }
    let mut current_paper = String::new();
    for s in sections {
        if s.paper != current_paper {
            current_paper = s.paper.clone();
            let values = PaperValues::of(&s.paper)?;
            let name = if values.paper.is_empty() { s.paper.clone() } else { values.paper.clone() };
            let _ = writeln!(md, "\n## {name}\n");
            if !values.hardware.is_empty() {
                let _ = writeln!(md, "Paper's hardware: {}\n", values.hardware);
            }
        }
        let _ = writeln!(md, "### {} (`{}`)\n", s.title, s.id);
        for t in &s.tables {
            md += &table_md(t);
            md.push('\n');
        }
        let values = PaperValues::of(&s.paper)?;
        for id in &s.paper_tables {
            if let Some(t) = paper_table_md(&values, id) {
                md += &t;
                md.push('\n');
            }
        }
        for f in &s.figures {
            let file = format!("{}.png", f.id);
            render_png(f, &dir.join(&file))?;
            let _ = writeln!(md, "![{}]({file})\n", f.title);
        }
        if !s.verdicts.is_empty() {
            let _ = writeln!(md, "Verdicts:\n");
            for v in &s.verdicts {
                let _ = writeln!(md, "- {}", v.line());
            }
            md.push('\n');
        }
        for n in &s.notes {
            let _ = writeln!(md, "{n}\n");
        }
        for f in &s.failures {
            let _ = writeln!(md, "- **failed**: {f}");
        }
    }
    let path = dir.join("report.md");
    crate::harness::replace_file(&path, md.as_bytes())
}
