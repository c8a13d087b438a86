//! The per-site table `simtlab profile` prints and the rows its JSON holds.

use super::counts::{CountSource, Counts, SiteCounts};
use super::sites::{Case, Site};
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
    /// Lanes in the guarded code / (subgroup-steps in it × width): how full the subgroup is
    /// while it runs the code the site guards (an `if`'s accept block, a loop's body, a
    /// called function).
    pub simt_efficiency: f64,
    /// Active lanes / (evaluations × width): how full the subgroup is where it evaluates the
    /// site.
    pub active_efficiency: f64,
    /// Uniform evaluations / evaluations.
    pub branch_efficiency: f64,
    /// For a switch: one row per clause.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<CaseRow>,
}

/// One clause of a switch with its counts: evaluations and active lanes are the switch's,
/// taken lanes the lanes that ran the clause.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CaseRow {
    /// Where the clause is and the values that choose it.
    #[serde(flatten)]
    pub place: Case,
    /// Its counts over the whole dispatch.
    #[serde(flatten)]
    pub counts: SiteCounts,
    /// Lanes that ran the clause / (subgroup-steps running it × width).
    pub simt_efficiency: f64,
}

/// How far a sampled run's figures may be from those of counting every subgroup: 95 %
/// intervals (1.96 standard errors) of ratio estimates over the counted subgroups, with the
/// finite-population correction, and never narrower than 3 (1 − n/N) / n for n of N subgroups
/// counted: subgroups of a kind that no counted one shows may still be up to 3/n of them (the
/// rule of three), which no spread among the counted ones reveals.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SampleError {
    /// One subgroup in `one_in` was counted.
    pub one_in: u32,
    /// Subgroups counted.
    pub counted: u64,
    /// Subgroups in the dispatch.
    pub subgroups: u64,
    /// ± of [`Summary::simt_efficiency`].
    pub simt_efficiency: f64,
    /// ± of [`Summary::branch_efficiency`].
    pub branch_efficiency: f64,
    /// ± of [`Summary::divergence_ratio`].
    pub divergence_ratio: f64,
    /// Site evaluations in the whole dispatch estimated from the counted subgroups (the
    /// rows' counts are those of the counted subgroups only).
    pub evaluations: f64,
    /// ± of `evaluations`.
    pub evaluations_error: f64,
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
    /// Over all sites: Σ active lanes / (Σ evaluations × width), the mean fraction of the
    /// subgroup's lanes active where it evaluates a branch (nvprof's warp execution efficiency
    /// sampled at the branches). It does not depend on how a loop is written: a `for` test and
    /// an `if … { break }` are evaluated by the same lanes at the same steps.
    pub simt_efficiency: f64,
    /// Over all sites: uniform evaluations / evaluations.
    pub branch_efficiency: f64,
    /// Zhang's divergence ratio: divergent subgroups / subgroups.
    pub divergence_ratio: f64,
    /// Subgroups that evaluated at least one site.
    pub subgroups: u64,
    /// Of those, the ones whose lanes disagreed somewhere.
    pub divergent_subgroups: u64,
    /// Set when one subgroup in N was counted: the figures are estimates, within these.
    pub sampling: Option<SampleError>,
}

/// 1.96 standard errors of the ratio estimate Σy / Σx over `n` counted units of `population`.
fn ratio_error(pairs: &[(f64, f64)], population: u64) -> f64 {
    let n = pairs.len() as f64;
    let (sy, sx): (f64, f64) = pairs.iter().fold((0.0, 0.0), |(a, b), (y, x)| (a + y, b + x));
    if pairs.len() < 2 || sx == 0.0 {
        return 0.0;
    }
    let r = sy / sx;
    let spread = pairs.iter().map(|(y, x)| (y - r * x).powi(2)).sum::<f64>() / (n - 1.0);
    let f = (n / population.max(1) as f64).min(1.0);
    let unseen = 3.0 * (1.0 - f) / n;
    (1.96 * ((1.0 - f) * spread / n).sqrt() / (sx / n)).max(unseen)
}

/// The errors of a sampled run's figures.
fn sample_error(counts: &Counts) -> Option<SampleError> {
    let sampling = counts.sampling.as_ref()?;
    let w = counts.width.max(1) as f64;
    let records: Vec<&[SiteCounts]> = counts.per_subgroup.chunks_exact(counts.sites.max(1)).collect();
    let sum = |r: &[SiteCounts], f: &dyn Fn(&SiteCounts) -> u64| r.iter().map(f).sum::<u64>() as f64;
    let simt: Vec<(f64, f64)> = records.iter().map(|r| (sum(r, &|c| c.active_lanes), w * sum(r, &|c| c.evaluations))).collect();
    let branch: Vec<(f64, f64)> = records.iter().map(|r| (sum(r, &|c| c.uniform_evaluations), sum(r, &|c| c.evaluations))).collect();
    let ratio: Vec<(f64, f64)> = records
        .iter()
        .map(|r| {
            let ran = r.iter().any(|c| c.evaluations > 0);
            let diverged = r.iter().any(|c| c.uniform_evaluations < c.evaluations);
            (diverged as u8 as f64, ran as u8 as f64)
        })
        .collect();
    let population = sampling.subgroups;
    let n = records.len() as f64;
    let evaluations: Vec<f64> = branch.iter().map(|p| p.1).collect();
    let mean = evaluations.iter().sum::<f64>() / n.max(1.0);
    let variance = if records.len() > 1 { evaluations.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
    let f = (n / population.max(1) as f64).min(1.0);
    Some(SampleError {
        one_in: sampling.one_in,
        counted: records.len() as u64,
        subgroups: population,
        simt_efficiency: ratio_error(&simt, population),
        branch_efficiency: ratio_error(&branch, population),
        divergence_ratio: ratio_error(&ratio, population),
        evaluations: mean * population as f64,
        evaluations_error: 1.96 * population as f64 * ((1.0 - f) * variance / n.max(1.0)).sqrt(),
    })
}

/// The rows and totals of `counts` over `sites`.
pub fn summary(sites: &[Site], counts: &Counts) -> Summary {
    summary_with_cases(sites, &[], counts)
}

/// [`summary`] with the rows of each switch's clauses (`cases` as in
/// [`super::Instrumented::cases`], counted in `counts`).
pub fn summary_with_cases(sites: &[Site], cases: &[Case], counts: &Counts) -> Summary {
    let case_totals = counts.case_totals();
    let totals = counts.totals();
    let rows = sites
        .iter()
        .zip(&totals)
        .enumerate()
        .map(|(k, (site, c))| SiteRow {
            site: k,
            place: site.clone(),
            counts: *c,
            simt_efficiency: c.simt_efficiency(counts.width),
            active_efficiency: c.active_efficiency(counts.width),
            branch_efficiency: c.branch_efficiency(),
            cases: cases
                .iter()
                .zip(&case_totals)
                .filter(|(case, _)| case.switch == k)
                .map(|(case, c)| CaseRow { place: case.clone(), counts: *c, simt_efficiency: c.simt_efficiency(counts.width) })
                .collect(),
        })
        .collect();
    let d = counts.divergence();
    let (active, evaluations) = totals.iter().fold((0u64, 0u64), |(a, e), c| (a + c.active_lanes, e + c.evaluations));
    Summary {
        subgroup_width: counts.width,
        source: counts.source,
        sites: rows,
        simt_efficiency: if evaluations == 0 { 1.0 } else { active as f64 / (evaluations as f64 * counts.width.max(1) as f64) },
        branch_efficiency: d.branch_efficiency(),
        divergence_ratio: d.divergence_ratio(),
        subgroups: d.warps,
        divergent_subgroups: d.divergent_warps,
        sampling: sample_error(counts),
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
        "active_eff",
        "simt_eff",
        "branch_eff",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    let short = |s: &str| if s.chars().count() > 40 { s.chars().take(39).collect::<String>() + "…" } else { s.to_string() };
    for r in &summary.sites {
        let mut source = r.place.source.clone();
        if !r.place.callers.is_empty() {
            let lines: Vec<String> = r.place.callers.iter().map(|l| l.to_string()).collect();
            source = format!("{} ← line {}", short(&source), lines.join(", "));
        } else {
            source = short(&source);
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
            format!("{:.1} %", 100.0 * r.active_efficiency),
            format!("{:.1} %", 100.0 * r.simt_efficiency),
            format!("{:.1} %", 100.0 * r.branch_efficiency),
        ]);
        for c in &r.cases {
            rows.push(vec![
                String::new(),
                c.place.line.to_string(),
                c.place.column.to_string(),
                "case".into(),
                short(&c.place.source),
                c.counts.evaluations.to_string(),
                c.counts.active_lanes.to_string(),
                c.counts.taken_lanes.to_string(),
                c.counts.uniform_evaluations.to_string(),
                String::new(),
                format!("{:.1} %", 100.0 * c.simt_efficiency),
                format!("{:.1} %", 100.0 * c.counts.branch_efficiency()),
            ]);
        }
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

#[cfg(test)]
mod tests {
    use super::ratio_error;

    #[test]
    fn a_sample_without_spread_still_states_what_it_may_have_missed() {
        // ten counted subgroups of a hundred, all with the same ratio 3/4: no spread, but a
        // kind of subgroup none of them shows may be up to 3 in 10 of the rest
        let same = vec![(3.0, 4.0); 10];
        assert!((ratio_error(&same, 100) - 3.0 * 0.9 / 10.0).abs() < 1e-12);
        // every subgroup counted: nothing left unseen, nothing to spread
        assert_eq!(ratio_error(&same, 10), 0.0);
        // with spread the interval is the ratio estimate's: 1.96 sqrt((1 - f) s² / n) / mean x
        let spread: Vec<(f64, f64)> = [(1.0, 4.0), (3.0, 4.0), (2.0, 4.0), (4.0, 4.0)].repeat(25);
        let r = 250.0 / 400.0;
        let s2 = spread.iter().map(|(y, x)| (y - r * x) * (y - r * x)).sum::<f64>() / 99.0;
        let expected = 1.96 * ((1.0 - 0.1) * s2 / 100.0).sqrt() / 4.0;
        assert!(expected > 3.0 * 0.9 / 100.0);
        assert!((ratio_error(&spread, 1000) - expected).abs() < 1e-12, "{} vs {expected}", ratio_error(&spread, 1000));
    }
}
