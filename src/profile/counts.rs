//! Per-site counts of a profiled run: decoded from the GPU probe's per-subgroup records, or
//! emulated on the host from each invocation's recorded outcomes at any width.

use super::instrument::{record_words, sampled_offset, Counting, Instrumented, HEADER_WORDS, MAX_LOOP_HISTORY, WORDS_PER_SITE};
use super::sites::{counted_by_loop, FoundSite, SiteKind};
use crate::divergence::{Divergence, ProbeLayout, SiteCounters};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Counters of one site (over one subgroup, or summed over all).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteCounts {
    /// Subgroup-steps at which at least one lane evaluated the site.
    pub evaluations: u64,
    /// Σ over those of the lanes evaluating it.
    pub active_lanes: u64,
    /// Σ lanes for which the condition was true.
    pub taken_lanes: u64,
    /// Evaluations where all active lanes agreed.
    pub uniform_evaluations: u64,
    /// Evaluations where at least one lane took it (subgroup-steps spent in the guarded code).
    pub taken_steps: u64,
}

impl SiteCounts {
    fn add(&mut self, o: &SiteCounts) {
        self.evaluations += o.evaluations;
        self.active_lanes += o.active_lanes;
        self.taken_lanes += o.taken_lanes;
        self.uniform_evaluations += o.uniform_evaluations;
        self.taken_steps += o.taken_steps;
    }

    /// One evaluation by `active` lanes of which `taken` took it.
    fn evaluate(&mut self, active: u64, taken: u64) {
        self.evaluations += 1;
        self.active_lanes += active;
        self.taken_lanes += taken;
        self.uniform_evaluations += (taken == 0 || taken == active) as u64;
        self.taken_steps += (taken > 0) as u64;
    }

    /// The same counts in the terms of [`crate::divergence`] (divergent = not uniform).
    pub fn counters(&self) -> SiteCounters {
        SiteCounters {
            evaluations: self.evaluations,
            divergent: self.evaluations - self.uniform_evaluations,
            taken_steps: self.taken_steps,
            taken_lanes: self.taken_lanes,
        }
    }

    /// Active lanes / (evaluations × width): the mean fraction of the subgroup's lanes that
    /// reach the site when it is evaluated (1.0 when never evaluated).
    pub fn active_efficiency(&self, width: u32) -> f64 {
        if self.evaluations == 0 {
            1.0
        } else {
            self.active_lanes as f64 / (self.evaluations as f64 * width.max(1) as f64)
        }
    }

    /// Lanes in the guarded code / (subgroup-steps in it × width) (1.0 when never taken).
    pub fn simt_efficiency(&self, width: u32) -> f64 {
        self.counters().simt_efficiency(width)
    }

    /// Uniform evaluations / evaluations (1.0 when never evaluated).
    pub fn branch_efficiency(&self) -> f64 {
        self.counters().branch_efficiency()
    }
}

/// Where the counts come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CountSource {
    /// Subgroup votes on the GPU's own subgroups, at its native width.
    GpuProbe,
    /// Host emulation of subgroups of the chosen width over recorded outcomes.
    HostEmulation,
}

/// The counts of one profiled dispatch: per subgroup and per site.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Subgroup width the counts refer to (native or emulated).
    pub width: u32,
    /// GPU probe or host emulation.
    pub source: CountSource,
    /// Probe sites per subgroup record.
    pub sites: usize,
    /// `per_subgroup[g * sites + s]`: site s in subgroup g (subgroups in dispatch order; with
    /// sampling, the counted ones only).
    pub per_subgroup: Vec<SiteCounts>,
    /// Switch clauses per subgroup record ([`super::Instrumented::cases`]).
    #[serde(default)]
    pub cases: usize,
    /// `per_subgroup_cases[g * cases + c]`: clause c in subgroup g. A clause's evaluations and
    /// active lanes are its switch's; taken lanes are the lanes that ran it.
    #[serde(default)]
    pub per_subgroup_cases: Vec<SiteCounts>,
    /// Set when only some subgroups were counted.
    #[serde(default)]
    pub sampling: Option<Sampling>,
}

/// Which subgroups a sampled run counted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sampling {
    /// One subgroup in `one_in` was counted.
    pub one_in: u32,
    /// Subgroups in the dispatch.
    pub subgroups: u64,
    /// Dispatch-order number of each counted subgroup (of each record).
    pub counted: Vec<u64>,
}

impl Counts {
    /// Per-site totals over all subgroups.
    pub fn totals(&self) -> Vec<SiteCounts> {
        let mut t = vec![SiteCounts::default(); self.sites];
        for record in self.per_subgroup.chunks_exact(self.sites.max(1)) {
            t.iter_mut().zip(record).for_each(|(t, c)| t.add(c));
        }
        t
    }

    /// Per switch clause: totals over all subgroups.
    pub fn case_totals(&self) -> Vec<SiteCounts> {
        let mut t = vec![SiteCounts::default(); self.cases];
        for record in self.per_subgroup_cases.chunks_exact(self.cases.max(1)) {
            t.iter_mut().zip(record).for_each(|(t, c)| t.add(c));
        }
        t
    }

    /// Per site: the subgroups in which its lanes disagreed at least once.
    pub fn divergent_subgroups(&self) -> Vec<u64> {
        let mut out = vec![0; self.sites];
        for record in self.per_subgroup.chunks_exact(self.sites.max(1)) {
            out.iter_mut().zip(record).for_each(|(n, c)| *n += (c.uniform_evaluations < c.evaluations) as u64);
        }
        out
    }

    /// As a [`Divergence`] (per-warp heat-map values, Zhang's ratio) for the overlay widgets.
    pub fn divergence(&self) -> Divergence {
        let words: Vec<u32> = self
            .per_subgroup
            .iter()
            .flat_map(|c| {
                let c = c.counters();
                [c.evaluations, c.divergent, c.taken_steps, c.taken_lanes].map(|v| v.min(u32::MAX as u64) as u32)
            })
            .collect();
        let subgroups = self.per_subgroup.len() / self.sites.max(1);
        ProbeLayout { sites: self.sites, subgroups, width: self.width }.decode(&words)
    }
}

/// The [`InstrumentOptions::loop_history`](super::InstrumentOptions::loop_history) that a run
/// whose records are `words` needed, where its longest loop outran the one it was instrumented
/// with (a loop counted per run leaves its longest run in header word 3).
pub fn loop_history_needed(instrumented: &Instrumented, words: &[u32]) -> Option<u32> {
    let longest = words.get(3).copied().filter(|&n| n > instrumented.loop_history * 32)?;
    Some(longest.div_ceil(32))
}

/// Decodes the records buffer of a run of `workgroups` workgroups: the GPU's counters in
/// subgroup mode, the host emulation at `width` in trace mode.
pub fn decode(instrumented: &Instrumented, words: &[u32], workgroups: [u32; 3], width: u32) -> Result<Counts> {
    if words.get(2).is_some_and(|&w| w != 0) {
        return Err(Error::invalid(
            "probe records",
            "some invocations found no room for their records: the dispatch is larger than the one the records were sized for",
        ));
    }
    if let Some(needed) = loop_history_needed(instrumented, words) {
        let held = instrumented.loop_history * 32;
        return Err(Error::invalid(
            "loop_history",
            format!(
                "a loop ran {} iterations in one subgroup, past the {held} that the probe's history of {} words holds, so the counts of the `if` inside it are incomplete: instrument with loop_history {needed} or more (at most {MAX_LOOP_HISTORY}), or 0 to vote at every iteration",
                words[3], instrumented.loop_history
            ),
        ));
    }
    let groups = workgroups.iter().map(|&w| w as usize).product::<usize>();
    let sites = instrumented.sites.len();
    match instrumented.counting {
        Counting::Subgroups => {
            let (native, per_group) = (words.first().copied().unwrap_or(0), words.get(1).copied().unwrap_or(0) as usize);
            if native == 0 || per_group == 0 {
                return Err(Error::invalid("probe records", "the header is empty: the instrumented kernel did not run before the read"));
            }
            let cases = instrumented.cases.len();
            let record = record_words(sites, cases);
            let sample = instrumented.sample.max(1) as u64;
            let total = (groups * per_group) as u64;
            let blocks = total.div_ceil(sample);
            let needed = HEADER_WORDS + blocks as usize * record;
            let body = words.get(HEADER_WORDS..needed).ok_or_else(|| {
                Error::invalid("probe records", format!("{} words read, {needed} needed for {groups} workgroups", words.len()))
            })?;
            let order = derivation_order(&instrumented.found);
            let (mut per_subgroup, mut per_subgroup_cases, mut counted) = (Vec::new(), Vec::new(), Vec::new());
            for (b, r) in body.chunks_exact(record).enumerate() {
                let index = b as u64 * sample + sampled_offset(b as u32, sample as u32) as u64;
                if index >= total {
                    continue;
                }
                counted.push(index);
                let counts = r.chunks_exact(WORDS_PER_SITE).map(|w| SiteCounts {
                    evaluations: w[0] as u64,
                    active_lanes: w[1] as u64,
                    taken_lanes: w[2] as u64,
                    uniform_evaluations: w[3] as u64,
                    taken_steps: w[4] as u64,
                });
                let mut counts: Vec<SiteCounts> = counts.collect();
                fill_derived(&order, &mut counts[..sites]);
                per_subgroup.extend_from_slice(&counts[..sites]);
                per_subgroup_cases.extend_from_slice(&counts[sites..]);
            }
            let sampling = (sample > 1).then_some(Sampling { one_in: sample as u32, subgroups: total, counted });
            Ok(Counts { width: native, source: CountSource::GpuProbe, sites, per_subgroup, cases, per_subgroup_cases, sampling })
        }
        Counting::Trace { events } => {
            if width == 0 || width > 128 {
                return Err(Error::invalid("width", format!("{width}: emulate subgroups of 1..=128 lanes")));
            }
            let threads = instrumented.threads() as usize;
            let stride = 1 + 2 * events as usize;
            let needed = HEADER_WORDS + groups * threads * stride;
            let body = words.get(HEADER_WORDS..needed).ok_or_else(|| {
                Error::invalid("probe records", format!("{} words read, {needed} needed for {groups} workgroups", words.len()))
            })?;
            let mut lanes = Vec::with_capacity(threads);
            let (mut per_subgroup, mut per_subgroup_cases) = (Vec::new(), Vec::new());
            for workgroup in body.chunks_exact(threads * stride) {
                for subgroup in workgroup.chunks(width as usize * stride) {
                    lanes.clear();
                    for record in subgroup.chunks_exact(stride) {
                        let count = record[0] as usize;
                        if count > events as usize {
                            return Err(Error::Limit {
                                what: "branch outcomes of one invocation".into(),
                                requested: count as u64,
                                limit: events as u64,
                                hint: "record more with a larger `trace_events`, or profile on an adapter with subgroups (Vulkan)".into(),
                            });
                        }
                        lanes.push(record[1..1 + 2 * count].chunks_exact(2).map(|e| (e[0] as usize, e[1])).collect::<Vec<_>>());
                    }
                    let (s, c) = emulate_subgroup(&instrumented.found, &lanes)?;
                    per_subgroup.extend(s);
                    per_subgroup_cases.extend(c);
                }
            }
            let cases = instrumented.cases.len();
            Ok(Counts { width, source: CountSource::HostEmulation, sites, per_subgroup, cases, per_subgroup_cases, sampling: None })
        }
    }
}

/// What a derived site's record holds besides the counts taken from its guard.
#[derive(Clone, Copy, PartialEq)]
enum Recorded {
    /// Nothing: a function entry, every lane that enters takes it, uniformly.
    Nothing,
    /// Taken lanes, uniform evaluations and taken steps.
    Votes,
    /// Taken lanes, non-uniform evaluations (counted by every lane of a loop counted per run)
    /// and taken steps.
    NonUniform,
}

/// The derived sites ([`FoundSite::derived_from`]) with their guards and what their records
/// hold, each after the site it is derived from: worked out once per decode, not per record.
fn derivation_order(found: &[FoundSite]) -> Vec<(usize, usize, Recorded)> {
    let depth = |mut k: usize| {
        let mut d = 0;
        while let Some(p) = found[k].derived_from.filter(|_| d < found.len()) {
            (k, d) = (p, d + 1);
        }
        d
    };
    let mut order: Vec<(usize, usize, Recorded)> = (0..found.len())
        .filter_map(|k| {
            let recorded = if found[k].site.kind == SiteKind::Call {
                Recorded::Nothing
            } else if counted_by_loop(found, k).is_some() {
                Recorded::NonUniform
            } else {
                Recorded::Votes
            };
            Some((k, found[k].derived_from?, recorded))
        })
        .collect();
    order.sort_by_key(|&(k, ..)| depth(k));
    order
}

/// A derived site's evaluations and active lanes from its guard's taken steps and lanes.
fn fill_derived(order: &[(usize, usize, Recorded)], counts: &mut [SiteCounts]) {
    for &(k, guard, recorded) in order {
        let (steps, lanes) = (counts[guard].taken_steps, counts[guard].taken_lanes);
        let c = &mut counts[k];
        c.evaluations = steps;
        c.active_lanes = lanes;
        match recorded {
            Recorded::Nothing => {
                c.taken_lanes = lanes;
                c.uniform_evaluations = steps;
                c.taken_steps = steps;
            }
            Recorded::NonUniform => c.uniform_evaluations = steps.saturating_sub(c.uniform_evaluations),
            Recorded::Votes => {}
        }
    }
}

/// Lock-step counts of one subgroup from its lanes' outcome sequences ((site, value) each).
///
/// The k-th evaluation of a site by different lanes is the same subgroup-step when it happens
/// in the same iteration of every enclosing loop: each event is keyed by its site, the
/// iteration counts of the loop tests around it (and its own, for a loop test) and how often
/// that key came before in the lane (a function called twice, a loop entered again). That is
/// exact for structured control flow whose loops have tests (`while`, `for`, `break if`);
/// inside a `loop` without a test, evaluations are matched by occurrence.
///
/// Every switch clause (in the order of the sites' clauses) is evaluated with its switch and
/// taken by the lanes whose selector chooses it.
pub(crate) fn emulate_subgroup(found: &[FoundSite], lanes: &[Vec<(usize, u32)>]) -> Result<(Vec<SiteCounts>, Vec<SiteCounts>)> {
    let first_case: Vec<usize> = found
        .iter()
        .scan(0, |n, s| {
            let at = *n;
            *n += s.cases.len();
            Some(at)
        })
        .collect();
    let mut case_counts = vec![SiteCounts::default(); found.iter().map(|s| s.cases.len()).sum()];
    let nested: Vec<Vec<usize>> = (0..found.len()).map(|l| (0..found.len()).filter(|&s| found[s].loops.contains(&l)).collect()).collect();
    // (site, loop iterations, occurrence) -> (lanes evaluating, lanes taking, first lane's value)
    type Step = (usize, Vec<u32>, u32);
    let mut steps: BTreeMap<Step, (u64, u64, u32, Vec<u64>)> = BTreeMap::new();
    for events in lanes {
        let mut iteration = vec![0u32; found.len()];
        let mut seen: BTreeMap<(usize, Vec<u32>), u32> = BTreeMap::new();
        for &(s, value) in events {
            let site = found
                .get(s)
                .ok_or_else(|| Error::invalid("probe records", format!("site {s} recorded; the shader has {}", found.len())))?;
            let mut context: Vec<u32> = site.loops.iter().map(|&l| iteration[l]).collect();
            if site.exit_on.is_some() {
                context.push(iteration[s]);
            }
            let occurrence = seen.entry((s, context.clone())).or_insert(0);
            let key = (s, context, *occurrence);
            *occurrence += 1;
            let step = steps.entry(key).or_insert_with(|| (0, 0, value, vec![0; site.cases.len()]));
            for (n, c) in step.3.iter_mut().zip(&site.cases) {
                *n += c.chosen_by(value, &site.cases) as u64;
            }
            let taken = match site.site.kind {
                SiteKind::Switch => value == step.2,
                _ => value != 0,
            };
            step.0 += 1;
            step.1 += taken as u64;
            if let Some(exit_on) = site.exit_on {
                iteration[s] += 1;
                nested[s].iter().for_each(|&m| iteration[m] = 0);
                if (value != 0) == exit_on {
                    iteration[s] = 0;
                }
            }
        }
    }
    let mut out = vec![SiteCounts::default(); found.len()];
    for ((s, ..), (active, taken, _, chosen)) in steps {
        out[s].evaluate(active, taken);
        for (j, n) in chosen.into_iter().enumerate() {
            case_counts[first_case[s] + j].evaluate(active, n);
        }
    }
    Ok((out, case_counts))
}
