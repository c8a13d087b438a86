//! JSON and CSV output of records.

use super::Record;
use crate::error::{Error, Result};
use std::path::Path;

fn create_parent(path: &Path) -> Result<()> {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => std::fs::create_dir_all(p).map_err(|e| Error::io(p, e)),
        _ => Ok(()),
    }
}

/// Writes records as a pretty JSON array (through a temporary file so a crash never leaves a
/// truncated result behind).
pub fn write_json(path: &Path, records: &[Record]) -> Result<()> {
    create_parent(path)?;
    let text = serde_json::to_string_pretty(records).map_err(|e| Error::invalid("record", e.to_string()))?;
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

pub fn read_json(path: &Path) -> Result<Vec<Record>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::File { path: path.into(), message: format!("not a simtlab record file: {e}") })
}

const CSV_HEADER: &str = "family,kernel,variant,seed,adapter,backend,subgroup_size,timing,median_s,min_s,max_s,mean_s,stddev_s,samples,check_passed,max_rel_error,simt_efficiency,divergence_ratio,throughput,throughput_unit,params";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn write_csv(path: &Path, records: &[Record]) -> Result<()> {
    create_parent(path)?;
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for r in records {
        let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
        let row = [
            csv_field(&r.family),
            csv_field(&r.kernel),
            csv_field(&r.variant),
            r.seed.to_string(),
            csv_field(&r.environment.adapter),
            csv_field(&r.environment.backend),
            r.environment.subgroup_size.map(|s| s.to_string()).unwrap_or_default(),
            format!("{:?}", r.stats.source),
            r.stats.median.to_string(),
            r.stats.min.to_string(),
            r.stats.max.to_string(),
            r.stats.mean.to_string(),
            r.stats.stddev.to_string(),
            r.stats.samples.len().to_string(),
            r.check.passed.to_string(),
            r.check.max_rel_error.to_string(),
            opt(r.divergence.map(|d| d.simt_efficiency)),
            opt(r.divergence.map(|d| d.divergence_ratio)),
            opt(r.throughput.as_ref().map(|t| t.value)),
            r.throughput.as_ref().map(|t| csv_field(&t.unit)).unwrap_or_default(),
            csv_field(&r.params.to_string()),
        ];
        out += &row.join(",");
        out.push('\n');
    }
    std::fs::write(path, out).map_err(|e| Error::io(path, e))
}

/// A terminal table of records: what ran, time, throughput, divergence and the CPU check.
pub fn table(records: &[Record]) -> String {
    let mut rows = vec![[
        "kernel".to_string(),
        "variant".into(),
        "median".into(),
        "spread (min..max)".into(),
        "throughput".into(),
        "SIMT eff.".into(),
        "div. ratio".into(),
        "check".into(),
    ]];
    for r in records {
        let d = r.divergence;
        rows.push([
            r.kernel.clone(),
            r.variant.clone(),
            format_seconds(r.stats.median),
            format!("{}..{}", format_seconds(r.stats.min), format_seconds(r.stats.max)),
            r.throughput.as_ref().map(|t| format!("{:.3} {}", t.value, t.unit)).unwrap_or_default(),
            d.map(|d| format!("{:.1} %", 100.0 * d.simt_efficiency)).unwrap_or_default(),
            d.map(|d| format!("{:.3}", d.divergence_ratio)).unwrap_or_default(),
            if r.check.passed { "ok".into() } else { format!("FAILED ({} wrong)", r.check.mismatches) },
        ]);
    }
    let widths: Vec<usize> = (0..8).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let line: Vec<String> = row.iter().zip(&widths).map(|(s, w)| format!("{s:<w$}")).collect();
        out += line.join("  ").trim_end();
        out.push('\n');
        if i == 0 {
            out += &"-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1));
            out.push('\n');
        }
    }
    out
}

/// Seconds with a unit that keeps 3-4 significant digits.
pub fn format_seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.2} us", s * 1e6)
    }
}
