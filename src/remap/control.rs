//! Efficiency control (Zhang et al. §3.3, §5): remap only when the divergence it removes is
//! worth more than the remap costs.
//!
//! The model: time in the divergent region scales with 1 / SIMT efficiency, so a remap that
//! raises efficiency from `e0` to `e1` saves `kernel × share × (1 − e0/e1)`. Reference
//! redirection (and the GPU regroup, which builds the same index) may also lose coalescing,
//! charged as a fraction of the kernel time. Host-side remaps cost `per-element × n`; with a
//! CPU-GPU pipeline only the part that the kernel's own run time cannot cover is exposed.
//! The GPU regroup runs on the GPU itself and is always exposed, as is the in-kernel tile
//! sort, which costs no index and no dispatch but sorts only within a workgroup's tile
//! (its efficiency is emulated on that order), and deferral, which runs the longest loops in a
//! second dispatch (emulated at its best threshold, cost measured). The best positive net gain
//! wins; a kernel without divergence always gets [`Strategy::None`] (the paper's
//! BlackScholes: whatever remapping costs is pure loss there).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;
use web_time::Instant;

use serde::{Deserialize, Serialize};

use super::calibration::{corrected, Calibration};
use super::classes::Classes;
use super::defer::best_defer_threshold;
use super::lam::LamPlan;
use super::redirect::{gather, redirect_index, tile_index};
use crate::divergence::{emulate_loops, emulate_paths, Divergence};
use crate::error::{Error, Result};
use crate::harness::{named, Named};

/// How threads get their data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Let [`decide`] pick from the measurements.
    #[default]
    Auto,
    /// Original order.
    None,
    /// Host-built index array (reference redirection).
    Redirect,
    /// Host-moved data (layout transformation planned with LAM).
    Lam,
    /// Index array built on the GPU (histogram, scan, scatter).
    GpuRegroup,
    /// Each workgroup sorts its own tile by class in workgroup memory before working
    /// (`shaders/shared/tile_sort.wgsl`): no index array, no extra dispatch.
    Tile,
    /// Loops of at least a threshold of trips run side by side in a second dispatch
    /// ([`super::deferred_trips`]): no index array, no sort.
    Defer,
}

named!(Strategy { Auto => "auto", None => "none", Redirect => "redirect", Lam => "lam", GpuRegroup => "gpu", Tile => "tile", Defer => "defer" });

impl Strategy {
    /// The strategies a user's own shader is remapped with ([`super::remap_run`]): an index
    /// read through the entry point's global id, or none. The others need a kernel written
    /// for them (LAM's moved data, the tile sort, the deferred second dispatch).
    pub const FOR_SHADERS: &'static [Strategy] = &[Strategy::Auto, Strategy::Redirect, Strategy::GpuRegroup, Strategy::None];
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Strategy {
    type Err = Error;

    /// A name of the table, in any case, surrounding spaces ignored.
    fn from_str(s: &str) -> Result<Strategy> {
        let name = s.trim().to_ascii_lowercase();
        Strategy::from_name(&name)
            .ok_or_else(|| Error::invalid("remap strategy", format!("'{name}'; use one of {}", Strategy::NAMES.join("|"))))
    }
}

/// What was measured about one kernel launch over `elements` threads.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Profile {
    /// Threads (elements) of the launch.
    pub elements: usize,
    /// Time of the unmapped kernel.
    pub kernel_time_s: f64,
    /// Fraction of the kernel time spent in the divergent region (1.0 when unknown).
    pub divergent_share: f64,
    /// Zhang's divergence ratio of the original order: 0 means no warp diverges.
    pub divergence_ratio: f64,
    /// SIMT efficiency of the original order.
    pub efficiency_before: f64,
    /// SIMT efficiency after sorting by class (redirect and GPU regroup give this order).
    pub efficiency_redirect: f64,
    /// SIMT efficiency of the LAM layout.
    pub efficiency_lam: f64,
    /// SIMT efficiency after sorting each tile (the kernel's, e.g. [`super::TILE_ELEMENTS`]) on its own.
    pub efficiency_tile: f64,
    /// SIMT efficiency of both passes under deferral from `defer_from` trips (loops only).
    pub efficiency_defer: f64,
    /// The best deferral threshold ([`super::best_defer_threshold`]); None when deferral
    /// gains nothing or does not apply (`if` sites).
    pub defer_from: Option<u32>,
    /// Loops deferred at that threshold.
    pub deferred: usize,
}

impl Profile {
    /// Emulates one divergent loop (`trips[t]` = trip count of thread t) in the original,
    /// redirected, LAM and tile-sorted (tiles of `tile` elements) orders, and deferred at the
    /// best boundary of as many equal-width trip classes as `classes` has.
    pub fn from_loops(trips: &[u32], classes: &Classes, width: u32, tile: usize, kernel_time_s: f64) -> Result<Profile> {
        check_same_len(trips.len(), classes)?;
        let index = redirect_index(classes);
        let lam = LamPlan::new(classes, width)?;
        let defer = best_defer_threshold(trips, width, classes.count() as u32)?;
        let profile = Profile::from_divergence(
            &emulate_loops(trips, width)?,
            &emulate_loops(&gather(trips, &index)?, width)?,
            &emulate_loops(&lam.permute(trips)?, width)?,
            &emulate_loops(&gather(trips, &tile_index(classes, tile)?)?, width)?,
            trips.len(),
            kernel_time_s,
        );
        Ok(match defer {
            Some((from, d)) => Profile {
                efficiency_defer: d.simt_efficiency(),
                defer_from: Some(from),
                deferred: trips.iter().filter(|&&t| t >= from).count(),
                ..profile
            },
            None => profile,
        })
    }

    /// Emulates `if` sites from per-thread path vectors of `conditions` conditions (tiles of
    /// `tile` elements for the tile-sorted order).
    pub fn from_paths(paths: &[u32], conditions: usize, classes: &Classes, width: u32, tile: usize, kernel_time_s: f64) -> Result<Profile> {
        check_same_len(paths.len(), classes)?;
        let index = redirect_index(classes);
        let lam = LamPlan::new(classes, width)?;
        Ok(Profile::from_divergence(
            &emulate_paths(paths, conditions, width)?,
            &emulate_paths(&gather(paths, &index)?, conditions, width)?,
            &emulate_paths(&lam.permute(paths)?, conditions, width)?,
            &emulate_paths(&gather(paths, &tile_index(classes, tile)?)?, conditions, width)?,
            paths.len(),
            kernel_time_s,
        ))
    }

    /// From divergence measured (GPU probes) or emulated for the four orders; deferral is left
    /// out (efficiency as before, no threshold).
    pub fn from_divergence(
        before: &Divergence,
        redirect: &Divergence,
        lam: &Divergence,
        tile: &Divergence,
        elements: usize,
        kernel_time_s: f64,
    ) -> Profile {
        Profile {
            elements,
            kernel_time_s,
            divergent_share: 1.0,
            divergence_ratio: before.divergence_ratio(),
            efficiency_before: before.simt_efficiency(),
            efficiency_redirect: redirect.simt_efficiency(),
            efficiency_lam: lam.simt_efficiency(),
            efficiency_tile: tile.simt_efficiency(),
            efficiency_defer: before.simt_efficiency(),
            defer_from: None,
            deferred: 0,
        }
    }

    fn check(&self) -> Result<()> {
        finite_at_least_zero("kernel time", self.kernel_time_s)?;
        for (what, v) in [
            ("divergent share", self.divergent_share),
            ("divergence ratio", self.divergence_ratio),
            ("SIMT efficiency before remapping", self.efficiency_before),
            ("SIMT efficiency after redirect", self.efficiency_redirect),
            ("SIMT efficiency after LAM", self.efficiency_lam),
            ("SIMT efficiency after the tile sort", self.efficiency_tile),
            ("SIMT efficiency under deferral", self.efficiency_defer),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(Error::invalid(what, format!("{v}; expected a fraction in 0..=1")));
            }
        }
        Ok(())
    }
}

fn check_same_len(n: usize, classes: &Classes) -> Result<()> {
    if n != classes.len() {
        return Err(Error::invalid("profile", format!("{n} per-thread values but {} classes", classes.len())));
    }
    Ok(())
}

fn finite_at_least_zero(what: &str, v: f64) -> Result<()> {
    if !v.is_finite() || v < 0.0 {
        return Err(Error::invalid(what, format!("{v}; expected a finite value >= 0")));
    }
    Ok(())
}

/// What each mechanism costs and where it applies.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CostModel {
    /// Host seconds per element to build and upload the redirect index.
    pub redirect_s_per_element: f64,
    /// Host seconds per element to plan LAM and permute the inputs.
    pub lam_s_per_element: f64,
    /// Host seconds per element to restore the outputs of a LAM run (0 when the outputs do
    /// not depend on order, e.g. a reduction).
    pub restore_s_per_element: f64,
    /// GPU seconds per element for the on-GPU regroup.
    pub gpu_regroup_s_per_element: f64,
    /// GPU seconds per element that the in-kernel tile sort adds to the kernel.
    pub tile_s_per_element: f64,
    /// GPU seconds per element that deferral's bookkeeping adds (workgroup barriers, the
    /// second dispatch), and per deferred loop (queueing it, reading it back indirectly).
    pub defer_s_per_element: f64,
    /// See `defer_s_per_element`: GPU seconds per deferred loop.
    pub defer_s_per_deferred: f64,
    /// Kernel slowdown, as a fraction of its time, from reads through an index array (lost
    /// coalescing). 0 when reads go through a cache/texture path or the redirected id only
    /// drives computation (§3.3).
    pub redirect_memory_penalty: f64,
    /// The kernel meets the layout conditions of §3.2: disjoint per-thread inputs, no shared
    /// output locations, thread id used only for indexing (or replaced per the IDArray rule).
    pub layout_applicable: bool,
    /// The kernel has a variant that reads through a GPU-built index ([`super::GpuRegroup`]).
    pub gpu_regroup_available: bool,
    /// The kernel has a tile-sorted variant (it imports `shaders/shared/tile_sort.wgsl`).
    pub tile_available: bool,
    /// The kernel has a deferring variant (a second pass over deferred loops).
    pub defer_available: bool,
    /// Host remaps overlap kernel runs through a [`super::Pipeline`].
    pub pipelined: bool,
    /// Host worker threads computing remaps.
    pub workers: usize,
    /// Net gains below this fraction of the kernel time count as noise: stay unmapped.
    pub min_gain_fraction: f64,
}

impl Default for CostModel {
    /// Host figures measured on a shared 2-core x86 host at 2^20 elements (R = 10, W = 32),
    /// rounded up, plus the upload of 4 bytes per element; the GPU figure is a conservative
    /// guess for three memory-bound passes. [`CostModel::calibrate`] measures the host instead.
    fn default() -> Self {
        CostModel {
            // classify ~2.2 ns + counting sort ~1.5 ns + index upload
            redirect_s_per_element: 5e-9,
            // classify ~2.2 ns + plan ~3.5 ns + permute ~0.9 ns per input array
            lam_s_per_element: 8e-9,
            // gather ~2.2 ns per output array
            restore_s_per_element: 3e-9,
            gpu_regroup_s_per_element: 2e-10,
            // a guess: workgroup atomics and four barriers per tile of 1024
            tile_s_per_element: 2e-12,
            // guesses: two barriers per workgroup and one more dispatch; an atomic, a store
            // and an uncoalesced read per deferred loop
            defer_s_per_element: 2e-12,
            defer_s_per_deferred: 1e-10,
            redirect_memory_penalty: 0.0,
            layout_applicable: true,
            gpu_regroup_available: true,
            tile_available: false,
            defer_available: false,
            pipelined: false,
            workers: 1,
            min_gain_fraction: 0.02,
        }
    }
}

impl CostModel {
    /// Times the host mechanisms on `classes` on this host. Classification is excluded: add
    /// its cost to the redirect and LAM figures when classes are computed for every launch.
    pub fn calibrate(classes: &Classes, width: u32) -> Result<CostModel> {
        let n = classes.len().max(1) as f64;
        let started = Instant::now();
        std::hint::black_box(redirect_index(classes));
        let redirect = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let plan = LamPlan::new(classes, width)?;
        let permuted = plan.permute(classes.ids())?;
        let lam = started.elapsed().as_secs_f64();
        let started = Instant::now();
        std::hint::black_box(plan.restore(&permuted)?);
        let restore = started.elapsed().as_secs_f64();
        Ok(CostModel {
            redirect_s_per_element: redirect / n,
            lam_s_per_element: lam / n,
            restore_s_per_element: restore / n,
            ..CostModel::default()
        })
    }

    fn check(&self) -> Result<()> {
        for (what, v) in [
            ("redirect cost", self.redirect_s_per_element),
            ("LAM cost", self.lam_s_per_element),
            ("restore cost", self.restore_s_per_element),
            ("GPU regroup cost", self.gpu_regroup_s_per_element),
            ("tile sort cost", self.tile_s_per_element),
            ("deferral cost", self.defer_s_per_element),
            ("deferral cost per deferred loop", self.defer_s_per_deferred),
            ("redirect memory penalty", self.redirect_memory_penalty),
            ("minimum gain fraction", self.min_gain_fraction),
        ] {
            finite_at_least_zero(what, v)?;
        }
        if self.workers == 0 {
            return Err(Error::invalid("remap workers", "0; use at least 1 host thread"));
        }
        Ok(())
    }
}

/// The chosen mechanism and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Never [`Strategy::Auto`].
    pub strategy: Strategy,
    /// Why this strategy won (or why none applies), in words for people.
    pub reason: String,
    /// Kernel time saved (net of any coalescing loss).
    pub predicted_gain_s: f64,
    /// Remap time on the critical path (after pipelining hides what it can).
    pub cost_s: f64,
    /// Remap time after which the remap can no longer pay and is abandoned.
    pub abandon_after_s: f64,
    /// What the cost model predicted for every mechanism it weighed, so that the prediction can
    /// be set beside what each one measured (empty where no mechanism was weighed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub predictions: Vec<Prediction>,
    /// The time without remapping the savings are counted against (the profile's kernel time;
    /// 0 in records written before it was kept).
    #[serde(default)]
    pub baseline_s: f64,
}

/// The cost model's prediction for one mechanism.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    /// The mechanism.
    pub strategy: Strategy,
    /// Kernel time saved minus the remap time left on the critical path (seconds): above 0
    /// the mechanism is predicted to pay; None where it does not apply. With a
    /// [`Calibration`], corrected by what this adapter measured.
    pub net_saving_s: Option<f64>,
    /// The cost model's own prediction, before any correction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_net_saving_s: Option<f64>,
}

impl Decision {
    /// Deadline for the remap work: past it, the remap costs more than it can save.
    pub fn deadline(&self) -> Deadline {
        Deadline::after_s(self.abandon_after_s)
    }
}

/// Early termination: a remap that has run longer than its budget is abandoned (the chunk
/// runs unmapped, which is always correct).
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    start: Instant,
    budget: Option<Duration>,
}

impl Deadline {
    /// Never expires.
    pub fn none() -> Deadline {
        Deadline { start: Instant::now(), budget: None }
    }

    /// Expires `budget_s` seconds from now; a negative or NaN budget is already expired.
    pub fn after_s(budget_s: f64) -> Deadline {
        let budget = if budget_s.is_nan() || budget_s <= 0.0 {
            Duration::ZERO
        } else {
            Duration::try_from_secs_f64(budget_s).unwrap_or(Duration::MAX)
        };
        Deadline { start: Instant::now(), budget: Some(budget) }
    }

    /// True once the budget has run out; never for [`Deadline::none`].
    pub fn expired(&self) -> bool {
        self.budget.is_some_and(|b| self.start.elapsed() >= b)
    }

    /// Seconds since the deadline was created.
    pub fn elapsed_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
}

/// One mechanism's predicted effect.
struct Candidate {
    strategy: Strategy,
    efficiency_after: f64,
    /// Kernel time saved by the efficiency gain.
    divergence_gain_s: f64,
    /// Coalescing loss.
    penalty_s: f64,
    /// Total remap work.
    work_s: f64,
    /// Part of `work_s` on the critical path.
    exposed_s: f64,
    /// Remap time that can be spent before the gain is used up.
    budget_s: f64,
    applicable: Option<&'static str>,
    /// What this adapter taught about it: the correction to the modelled time and the saving
    /// it changes the net by.
    learned: Option<(super::calibration::Learned, f64)>,
}

impl Candidate {
    /// The model's own net saving.
    fn model_net_s(&self) -> f64 {
        self.divergence_gain_s - self.penalty_s - self.exposed_s
    }

    /// The net saving, corrected by what was learned.
    fn net_s(&self) -> f64 {
        self.model_net_s() + self.learned.map_or(0.0, |(_, shift)| shift)
    }

    fn gain_s(&self) -> f64 {
        self.net_s() + self.exposed_s
    }

    fn describe(&self, before: f64) -> String {
        let mut s = format!(
            "{}: SIMT efficiency {:.1}% -> {:.1}% saves {}",
            self.strategy,
            before * 100.0,
            self.efficiency_after * 100.0,
            ms(self.divergence_gain_s)
        );
        if self.penalty_s > 0.0 {
            s += &format!(", lost coalescing costs {}", ms(self.penalty_s));
        }
        s += &format!(", remap {} ({} exposed), net {}", ms(self.work_s), ms(self.exposed_s), ms(self.model_net_s()));
        if let Some((l, _)) = self.learned {
            s += &format!(
                "; measured on this adapter at {:.2}x the modelled time ({} run{}), so net {}",
                l.time_factor,
                l.runs,
                if l.runs == 1 { "" } else { "s" },
                ms(self.net_s())
            );
        }
        s
    }
}

fn ms(s: f64) -> String {
    format!("{:.3} ms", s * 1e3)
}

fn candidates(p: &Profile, c: &CostModel) -> Vec<Candidate> {
    let n = p.elements as f64;
    let divergence_gain = |after: f64| {
        if after > p.efficiency_before && after > 0.0 {
            p.kernel_time_s * p.divergent_share * (1.0 - p.efficiency_before / after)
        } else {
            0.0
        }
    };
    // Host work hides behind the kernel runs when pipelined; the GPU regroup never does.
    let host = |work: f64, gain: f64| -> (f64, f64) {
        if c.pipelined {
            let cover = (p.kernel_time_s - gain).max(0.0) * c.workers as f64;
            ((work - cover).max(0.0) / c.workers as f64, gain + cover)
        } else {
            (work, gain)
        }
    };
    let penalty = p.kernel_time_s * c.redirect_memory_penalty;

    let redirect_gain = divergence_gain(p.efficiency_redirect);
    let redirect_work = c.redirect_s_per_element * n;
    let (redirect_exposed, redirect_budget) = host(redirect_work, redirect_gain - penalty);

    let lam_gain = divergence_gain(p.efficiency_lam);
    let lam_work = (c.lam_s_per_element + c.restore_s_per_element) * n;
    let (lam_exposed, lam_budget) = host(lam_work, lam_gain);

    let gpu_work = c.gpu_regroup_s_per_element * n;
    let tile_gain = divergence_gain(p.efficiency_tile);
    let tile_work = c.tile_s_per_element * n;
    let defer_gain = divergence_gain(p.efficiency_defer);
    let defer_work = c.defer_s_per_element * n + c.defer_s_per_deferred * p.deferred as f64;
    vec![
        Candidate {
            strategy: Strategy::Redirect,
            efficiency_after: p.efficiency_redirect,
            divergence_gain_s: redirect_gain,
            penalty_s: penalty,
            work_s: redirect_work,
            exposed_s: redirect_exposed,
            budget_s: redirect_budget,
            applicable: None,
            learned: None,
        },
        Candidate {
            strategy: Strategy::Lam,
            efficiency_after: p.efficiency_lam,
            divergence_gain_s: lam_gain,
            penalty_s: 0.0,
            work_s: lam_work,
            exposed_s: lam_exposed,
            budget_s: lam_budget,
            applicable: (!c.layout_applicable).then_some("the kernel does not meet the layout transformation conditions"),
            learned: None,
        },
        Candidate {
            strategy: Strategy::GpuRegroup,
            efficiency_after: p.efficiency_redirect,
            divergence_gain_s: redirect_gain,
            penalty_s: penalty,
            work_s: gpu_work,
            exposed_s: gpu_work,
            budget_s: redirect_gain - penalty,
            applicable: (!c.gpu_regroup_available).then_some("the GPU regroup is not available"),
            learned: None,
        },
        Candidate {
            strategy: Strategy::Tile,
            efficiency_after: p.efficiency_tile,
            divergence_gain_s: tile_gain,
            penalty_s: 0.0,
            work_s: tile_work,
            exposed_s: tile_work,
            budget_s: tile_gain,
            applicable: (!c.tile_available).then_some("the kernel has no tile-sorted variant"),
            learned: None,
        },
        Candidate {
            strategy: Strategy::Defer,
            efficiency_after: p.efficiency_defer,
            divergence_gain_s: defer_gain,
            penalty_s: 0.0,
            work_s: defer_work,
            exposed_s: defer_work,
            budget_s: defer_gain,
            applicable: if !c.defer_available {
                Some("the kernel has no deferring variant")
            } else if p.defer_from.is_none() {
                Some("no deferral threshold gains anything (or the divergence is not a loop)")
            } else {
                None
            },
            learned: None,
        },
    ]
}

/// Every candidate's predicted net saving (None where it does not apply).
fn predictions(all: &[Candidate]) -> Vec<Prediction> {
    all.iter()
        .map(|c| {
            let applies = c.applicable.is_none();
            Prediction {
                strategy: c.strategy,
                net_saving_s: applies.then(|| c.net_s()),
                model_net_saving_s: applies.then(|| c.model_net_s()),
            }
        })
        .collect()
}

/// Picks the mechanism for `strategy` ([`Strategy::Auto`] decides; a forced value is kept and
/// its prediction reported), from the cost model alone.
pub fn decide(strategy: Strategy, profile: &Profile, costs: &CostModel) -> Result<Decision> {
    decide_calibrated(strategy, profile, costs, &Calibration::default())
}

/// [`decide`], with each strategy's modelled time corrected by what `calibration` learned on
/// this adapter (the reasons say where a correction changed a prediction).
pub fn decide_calibrated(strategy: Strategy, profile: &Profile, costs: &CostModel, calibration: &Calibration) -> Result<Decision> {
    profile.check()?;
    costs.check()?;
    let mut all = candidates(profile, costs);
    for c in &mut all {
        if let Some(l) = calibration.get(c.strategy) {
            let model = c.model_net_s();
            c.learned = Some((*l, corrected(profile.kernel_time_s, model, l.time_factor) - model));
        }
    }
    let pick = |s: Strategy| all.iter().find(|c| c.strategy == s);

    if strategy != Strategy::Auto {
        let Some(c) = pick(strategy) else {
            return Ok(Decision {
                strategy: Strategy::None,
                reason: "forced: original order".into(),
                predicted_gain_s: 0.0,
                cost_s: 0.0,
                abandon_after_s: 0.0,
                predictions: Vec::new(),
                baseline_s: profile.kernel_time_s,
            });
        };
        let mut reason = format!("forced: {}", c.describe(profile.efficiency_before));
        if let Some(why) = c.applicable {
            reason += &format!(" (warning: {why})");
        }
        return Ok(Decision {
            strategy,
            reason,
            predicted_gain_s: c.gain_s(),
            cost_s: c.exposed_s,
            abandon_after_s: c.budget_s.max(0.0),
            predictions: predictions(&all),
            baseline_s: profile.kernel_time_s,
        });
    }

    let weighed = predictions(&all);
    let none = |reason: String| Decision {
        strategy: Strategy::None,
        reason,
        predicted_gain_s: 0.0,
        cost_s: 0.0,
        abandon_after_s: 0.0,
        predictions: weighed.clone(),
        baseline_s: profile.kernel_time_s,
    };
    if profile.divergence_ratio == 0.0 || profile.efficiency_before >= 1.0 {
        return Ok(none(format!(
            "none: no warp diverges (divergence ratio {:.1}%, SIMT efficiency {:.1}%), so remapping can only add its cost",
            profile.divergence_ratio * 100.0,
            profile.efficiency_before * 100.0
        )));
    }
    let threshold = costs.min_gain_fraction * profile.kernel_time_s;
    let mut rejected = Vec::new();
    let mut best: Option<&Candidate> = None;
    for c in &all {
        if let Some(why) = c.applicable {
            rejected.push(format!("{} not applicable: {why}", c.strategy));
        } else if c.net_s() <= threshold {
            rejected.push(c.describe(profile.efficiency_before));
        } else if best.is_none_or(|b| c.net_s() > b.net_s()) {
            if let Some(b) = best {
                rejected.push(b.describe(profile.efficiency_before));
            }
            best = Some(c);
        } else {
            rejected.push(c.describe(profile.efficiency_before));
        }
    }
    let rejected = rejected.join("; ");
    Ok(match best {
        Some(c) => Decision {
            strategy: c.strategy,
            reason: format!("{}. Also considered: {rejected}", c.describe(profile.efficiency_before)),
            predicted_gain_s: c.gain_s(),
            cost_s: c.exposed_s,
            abandon_after_s: c.budget_s.max(0.0),
            predictions: weighed.clone(),
            baseline_s: profile.kernel_time_s,
        },
        None => none(format!("none: no mechanism saves more than {} (net). Considered: {rejected}", ms(threshold))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(before: f64, after: f64) -> Profile {
        Profile {
            elements: 1 << 20,
            kernel_time_s: 0.050,
            divergent_share: 1.0,
            divergence_ratio: if before < 1.0 { 0.9 } else { 0.0 },
            efficiency_before: before,
            efficiency_redirect: after,
            efficiency_lam: after * 0.98,
            efficiency_tile: after * 0.99,
            efficiency_defer: after,
            defer_from: Some(100),
            deferred: 1 << 15,
        }
    }

    #[test]
    fn strategy_round_trips_through_text() {
        for s in [Strategy::Auto, Strategy::None, Strategy::Redirect, Strategy::Lam, Strategy::GpuRegroup, Strategy::Tile, Strategy::Defer]
        {
            assert_eq!(s.to_string().parse::<Strategy>().unwrap(), s);
        }
        assert!("fast".parse::<Strategy>().is_err());
        assert_eq!(serde_json::to_string(&Strategy::GpuRegroup).unwrap(), "\"gpu\"");
    }

    #[test]
    fn no_divergence_means_no_remap() {
        let d = decide(Strategy::Auto, &profile(1.0, 1.0), &CostModel::default()).unwrap();
        assert_eq!(d.strategy, Strategy::None);
        assert!(d.reason.contains("no warp diverges"), "{}", d.reason);
    }

    #[test]
    fn cheap_remaps_pay_on_divergent_kernels() {
        let d = decide(Strategy::Auto, &profile(0.3, 0.95), &CostModel::default()).unwrap();
        // the GPU regroup is the cheapest way to the sorted order when coalescing is not at stake
        assert_eq!(d.strategy, Strategy::GpuRegroup, "{}", d.reason);
        assert!(d.predicted_gain_s > 0.03 && d.cost_s < 0.001);

        let costs = CostModel { redirect_memory_penalty: 0.5, gpu_regroup_available: false, ..CostModel::default() };
        let d = decide(Strategy::Auto, &profile(0.3, 0.95), &costs).unwrap();
        assert_eq!(d.strategy, Strategy::Lam, "uncoalesced reads rule out the index: {}", d.reason);

        // a kernel with a tile-sorted variant: nearly the sorted efficiency at almost no cost
        let costs = CostModel { tile_available: true, ..CostModel::default() };
        let d = decide(Strategy::Auto, &profile(0.3, 0.95), &costs).unwrap();
        assert_eq!(d.strategy, Strategy::Tile, "{}", d.reason);
        // unless tiles are too small to group a subgroup's worth of each class
        let p = Profile { efficiency_tile: 0.35, ..profile(0.3, 0.95) };
        assert_eq!(decide(Strategy::Auto, &p, &costs).unwrap().strategy, Strategy::GpuRegroup);

        // deferral, when the kernel has it, beats the tile sort where the tile cannot group
        let costs = CostModel { tile_available: true, defer_available: true, ..CostModel::default() };
        let d = decide(Strategy::Auto, &p, &costs).unwrap();
        assert_eq!(d.strategy, Strategy::Defer, "{}", d.reason);
        // not without a threshold that gains, nor when it costs more than it saves
        let no_threshold = Profile { defer_from: None, ..p };
        assert_eq!(decide(Strategy::Auto, &no_threshold, &costs).unwrap().strategy, Strategy::GpuRegroup);
        let dear = CostModel { defer_s_per_element: 1e-6, ..costs };
        assert_eq!(decide(Strategy::Auto, &p, &dear).unwrap().strategy, Strategy::GpuRegroup);
    }

    #[test]
    fn a_decision_keeps_every_mechanisms_prediction() {
        let d = decide(Strategy::Auto, &profile(0.3, 0.95), &CostModel::default()).unwrap();
        let weighed: Vec<Strategy> = d.predictions.iter().map(|p| p.strategy).collect();
        assert_eq!(weighed, [Strategy::Redirect, Strategy::Lam, Strategy::GpuRegroup, Strategy::Tile, Strategy::Defer]);
        // the chosen one's prediction is the decision's net saving; kernels without a tile or
        // deferring variant have no prediction for those
        let chosen = d.predictions.iter().find(|p| p.strategy == d.strategy).unwrap();
        assert_eq!(chosen.net_saving_s, Some(d.predicted_gain_s - d.cost_s));
        assert!(d.predictions.iter().filter(|p| matches!(p.strategy, Strategy::Tile | Strategy::Defer)).all(|p| p.net_saving_s.is_none()));
        // a record without predictions (written before they were kept) still reads
        let mut old = serde_json::to_value(&d).unwrap();
        old.as_object_mut().unwrap().remove("predictions");
        assert!(serde_json::from_value::<Decision>(old).unwrap().predictions.is_empty());
    }

    #[test]
    fn a_measured_slowdown_turns_the_next_decision_to_the_measured_faster_strategy() {
        let p = profile(0.3, 0.95);
        let costs = CostModel { tile_available: true, ..CostModel::default() };
        let first = decide(Strategy::Auto, &p, &costs).unwrap();
        assert_eq!(first.strategy, Strategy::Tile, "{}", first.reason);
        // on this adapter the tile sort ran slower than no remapping, the GPU regroup saved a
        // fifth, the host index a tenth (baseline 40 ms measured in the same run)
        let mut calibration = Calibration::new("adapter");
        let measured = [(Strategy::Tile, 0.044), (Strategy::GpuRegroup, 0.032), (Strategy::Redirect, 0.036), (Strategy::Lam, 0.039)];
        let lessons = calibration.learn(&first, 0.040, &measured).unwrap();
        assert_eq!(lessons.len(), 4, "every measured strategy with a prediction is learned from");
        let tile = lessons.iter().find(|l| l.strategy == Strategy::Tile).unwrap();
        assert!(tile.predicted_s > 0.0 && tile.measured_s < 0.0, "{tile:?}");
        // one measurement: the model now reproduces it, scaled to the model's baseline
        assert!((tile.model_now_s - 0.050 * (1.0 - 0.044 / 0.040)).abs() < 1e-9, "{tile:?}");
        assert!(tile.to_string().starts_with("tile: predicted "), "{tile}");
        assert!(tile.to_string().contains(", measured −4.000 ms, model now −5.000 ms (1 run)"), "{tile}");

        let next = decide_calibrated(Strategy::Auto, &p, &costs, &calibration).unwrap();
        assert_eq!(next.strategy, Strategy::GpuRegroup, "{}", next.reason);
        assert!(
            next.reason.starts_with("gpu: ") && next.reason.contains("x the modelled time (1 run), so net 10.000 ms"),
            "{}",
            next.reason
        );
        assert!(
            next.reason.contains("tile: SIMT efficiency") && next.reason.contains("x the modelled time (1 run), so net -"),
            "{}",
            next.reason
        );
        let gpu = next.predictions.iter().find(|q| q.strategy == Strategy::GpuRegroup).unwrap();
        assert!((gpu.net_saving_s.unwrap() - 0.050 * 0.2).abs() < 1e-9, "{gpu:?}");
        assert_eq!(gpu.net_saving_s, Some(next.predicted_gain_s - next.cost_s));
        assert!(gpu.model_net_saving_s.unwrap() > gpu.net_saving_s.unwrap());

        // a second, different measurement moves the correction without replacing it
        calibration.learn(&next, 0.040, &[(Strategy::GpuRegroup, 0.040)]).unwrap();
        let l = calibration.get(Strategy::GpuRegroup).unwrap();
        assert_eq!(l.runs, 2);
        let again = decide_calibrated(Strategy::Auto, &p, &costs, &calibration).unwrap();
        let net = again.predictions.iter().find(|q| q.strategy == Strategy::GpuRegroup).unwrap().net_saving_s.unwrap();
        assert!(net > 0.0 && net < 0.050 * 0.2, "{net}");

        // it travels as JSON; nonsense is refused with what to do
        assert_eq!(Calibration::from_json(&calibration.to_json()).unwrap(), calibration);
        assert!(Calibration::from_json("{}").unwrap_err().to_string().contains("calibration"));
        assert!(calibration.learn(&next, 0.0, &measured).is_err());
        assert!(calibration.learn(&next, 0.04, &[(Strategy::Tile, f64::NAN)]).is_err());
        assert!(calibration.applies_to("adapter") && !calibration.applies_to("another") && Calibration::default().applies_to("another"));
    }

    #[test]
    fn loop_profiles_find_the_deferral_threshold() {
        let trips: Vec<u32> = (0..4096).map(|i| if i % 32 == 7 { 500 } else { 10 }).collect();
        let classes = crate::remap::classify_loops(&trips, 10, crate::remap::Bucketing::EqualWidth).unwrap();
        let p = Profile::from_loops(&trips, &classes, 32, 1024, 0.01).unwrap();
        let from = p.defer_from.expect("one long loop per warp is worth deferring");
        assert!(from > 10 && from <= 500, "{from}");
        assert!(p.efficiency_before < 0.1 && p.efficiency_defer > 0.9, "{p:?}");
        let flat = Profile::from_loops(
            &[10; 256],
            &crate::remap::classify_loops(&[10; 256], 10, crate::remap::Bucketing::EqualWidth).unwrap(),
            32,
            1024,
            0.01,
        )
        .unwrap();
        assert_eq!(flat.defer_from, None);
    }

    #[test]
    fn pipelining_hides_host_work() {
        // order-free outputs (no restore)
        let slow = CostModel {
            lam_s_per_element: 5e-9,
            restore_s_per_element: 0.0,
            gpu_regroup_available: false,
            redirect_memory_penalty: 0.5,
            ..CostModel::default()
        };
        let p = Profile { kernel_time_s: 0.004, ..profile(0.6, 0.9) };
        assert_eq!(decide(Strategy::Auto, &p, &slow).unwrap().strategy, Strategy::None);
        let piped = CostModel { pipelined: true, workers: 2, ..slow };
        let d = decide(Strategy::Auto, &p, &piped).unwrap();
        assert_eq!(d.strategy, Strategy::Lam, "{}", d.reason);
        assert!(d.abandon_after_s > d.predicted_gain_s);
    }

    #[test]
    fn forced_strategies_are_kept() {
        let d = decide(Strategy::Lam, &profile(1.0, 1.0), &CostModel::default()).unwrap();
        assert_eq!(d.strategy, Strategy::Lam);
        assert!(d.reason.starts_with("forced"));
    }

    #[test]
    fn bad_measurements_are_errors() {
        assert!(decide(Strategy::Auto, &profile(1.5, 1.0), &CostModel::default()).is_err());
        let p = Profile { kernel_time_s: f64::NAN, ..profile(0.5, 0.9) };
        assert!(decide(Strategy::Auto, &p, &CostModel::default()).is_err());
        let c = CostModel { workers: 0, ..CostModel::default() };
        assert!(decide(Strategy::Auto, &profile(0.5, 0.9), &c).is_err());
    }

    #[test]
    fn deadlines_expire() {
        assert!(Deadline::after_s(0.0).expired());
        assert!(Deadline::after_s(f64::NAN).expired());
        assert!(!Deadline::after_s(60.0).expired());
        assert!(!Deadline::none().expired());
    }
}
