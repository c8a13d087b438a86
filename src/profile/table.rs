//! The per-site table `simtlab profile` prints and the rows its JSON holds.

use super::counts::{CountSource, Counts, SiteCounts};
use super::sites::Site;
use serde::Serialize;

/// One site with its counts and the metrics derived from them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SiteRow {
    /// The site's number.
    pub site: usize,
    /// Where it is and what it counts.
    #[serde(flatten)]
    pub place: Site,
    /// Its counts over the whole dispatch.
    #[serde(flatten)]
    pub counts: SiteCounts,
    /// Lanes in the guarded code / (subgroup-steps in it × width).
    pub simt_efficiency: f64,
    /// Uniform evaluations / evaluations.
    pub branch_efficiency: f64,
}

/// Whole-dispatch figures: per-site rows, totals and where the counts come from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Width the counts refer to.
    pub subgroup_width: u32,
    /// GPU probe or host emulation.
    pub source: CountSource,
    /// One row per site.
    pub sites: Vec<SiteRow>,
    /// Over all sites: lanes in guarded code / (subgroup-steps in it × width).
    pub simt_efficiency: f64,
    /// Over all sites: uniform evaluations / evaluations.
    pub branch_efficiency: f64,
    /// Zhang's divergence ratio: divergent subgroups / subgroups.
    pub divergence_ratio: f64,
    /// Subgroups that evaluated at least one site.
    pub subgroups: u64,
    /// Of those, the ones whose lanes disagreed somewhere.
    pub divergent_subgroups: u64,
}

/// The rows and totals of `counts` over `sites`.
pub fn summary(sites: &[Site], counts: &Counts) -> Summary {
    let rows = sites
        .iter()
        .zip(counts.totals())
        .enumerate()
        .map(|(k, (site, c))| SiteRow {
            site: k,
            place: site.clone(),
            counts: c,
            simt_efficiency: c.simt_efficiency(counts.width),
            branch_efficiency: c.branch_efficiency(),
        })
        .collect();
    let d = counts.divergence();
    Summary {
        subgroup_width: counts.width,
        source: counts.source,
        sites: rows,
        simt_efficiency: d.simt_efficiency(),
        branch_efficiency: d.branch_efficiency(),
        divergence_ratio: d.divergence_ratio(),
        subgroups: d.warps,
        divergent_subgroups: d.divergent_warps,
    }
}

/// One row per site: where it is, what it counts, and the metrics derived from the counts.
pub fn table(summary: &Summary) -> String {
    let header = [
        "site",
        "line",
        "column",
        "kind",
        "source",
        "evaluations",
        "active_lanes",
        "taken_lanes",
        "uniform_evaluations",
        "simt_eff",
        "branch_eff",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for r in &summary.sites {
        let mut source = r.place.source.clone();
        if source.chars().count() > 40 {
            source = source.chars().take(39).collect::<String>() + "…";
        }
        rows.push(vec![
            r.site.to_string(),
            r.place.line.to_string(),
            r.place.column.to_string(),
            r.place.kind.name().to_string(),
            source,
            r.counts.evaluations.to_string(),
            r.counts.active_lanes.to_string(),
            r.counts.taken_lanes.to_string(),
            r.counts.uniform_evaluations.to_string(),
            format!("{:.1} %", 100.0 * r.simt_efficiency),
            format!("{:.1} %", 100.0 * r.branch_efficiency),
        ]);
    }
    let widths: Vec<usize> = (0..header.len()).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r.iter().zip(&widths).map(|(v, w)| format!("{v:<w$}")).collect();
        out += line.join("  ").trim_end();
        out.push('\n');
    }
    out
}
