//! What an adapter taught the cost model: per strategy, how the time measured under it compares
//! with the time the model predicted, so that the next [`super::decide_calibrated`] weighs what
//! this adapter does rather than what the model alone expects.
//!
//! The model predicts a strategy's time as the baseline minus its net saving. After a run that
//! measured the strategy beside the baseline (no remapping, in the same run), the ratio
//! `(measured time / measured baseline) / (predicted time / baseline)` is the strategy's
//! correction on this adapter; the next prediction multiplies the modelled time by it. One
//! measurement makes the model reproduce it on the same keys; later ones are averaged in (the
//! newest weighs at least a quarter), so that noise fades and a changed adapter is followed.
//!
//! The calibration is plain data the caller holds: keep it between decisions, save it with
//! [`Calibration::to_json`] where you keep results, read it back with
//! [`Calibration::from_json`]. Nothing here touches a file.
//!
//! ```
//! use simtlab::remap::{decide, decide_calibrated, Calibration, CostModel, Profile, Strategy};
//! # let profile = Profile { elements: 1 << 20, kernel_time_s: 0.05, divergent_share: 1.0,
//! #     divergence_ratio: 0.9, efficiency_before: 0.3, efficiency_redirect: 0.95,
//! #     efficiency_lam: 0.4, efficiency_tile: 0.94, efficiency_defer: 0.95,
//! #     defer_from: None, deferred: 0 };
//! let costs = CostModel::default();
//! let first = decide(Strategy::Auto, &profile, &costs)?;
//! assert_eq!(first.strategy, Strategy::GpuRegroup);
//! // this adapter ran the GPU regroup slower than no remapping, the host index faster
//! let mut calibration = Calibration::new("my adapter");
//! let lessons = calibration.learn(&first, 0.05, &[(Strategy::GpuRegroup, 0.06), (Strategy::Redirect, 0.03)])?;
//! println!("{}", lessons[0]); // gpu: predicted …, measured …, model now …
//! let next = decide_calibrated(Strategy::Auto, &profile, &costs, &calibration)?;
//! assert_eq!(next.strategy, Strategy::Redirect);
//! # Ok::<(), simtlab::Error>(())
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

use super::control::{Decision, Strategy};
use crate::error::{Error, Result};
use crate::harness::format_seconds;

/// Measurements past this many weigh as one of this many: the newest always counts for at
/// least 1 / `MEMORY` of the correction.
const MEMORY: u32 = 4;

/// The corrections one adapter taught the cost model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// The adapter the measurements come from (as `Gpu::adapter_name` gives it).
    pub adapter: String,
    /// One correction per strategy measured.
    pub learned: Vec<Learned>,
}

/// One strategy's correction.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Learned {
    /// The strategy.
    pub strategy: Strategy,
    /// Measured time over the modelled time (each relative to its baseline): above 1 the
    /// strategy ran slower on this adapter than the model predicts.
    pub time_factor: f64,
    /// Measurements behind it.
    pub runs: u32,
}

/// What one measurement taught: the prediction, the measurement and what the model predicts
/// now, each a saving against the baseline (negative: slower than no remapping).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lesson {
    /// The strategy measured.
    pub strategy: Strategy,
    /// The saving the decision weighed for it (after any earlier correction).
    pub predicted_s: f64,
    /// The saving measured: baseline time minus the strategy's time.
    pub measured_s: f64,
    /// The saving the corrected model predicts now for the same keys.
    pub model_now_s: f64,
    /// Measurements behind the correction now.
    pub runs: u32,
}

impl fmt::Display for Lesson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: predicted {}, measured {}, model now {} ({} run{})",
            self.strategy,
            signed(self.predicted_s),
            signed(self.measured_s),
            signed(self.model_now_s),
            self.runs,
            if self.runs == 1 { "" } else { "s" }
        )
    }
}

/// A saving as people read it: negative values with a minus sign.
fn signed(s: f64) -> String {
    if s < 0.0 {
        format!("−{}", format_seconds(-s))
    } else {
        format_seconds(s)
    }
}

impl Calibration {
    /// An empty calibration for `adapter`: the model alone until something is learned.
    pub fn new(adapter: &str) -> Calibration {
        Calibration { adapter: adapter.to_string(), learned: Vec::new() }
    }

    /// Whether it holds a correction learned on `adapter` (an empty one applies anywhere).
    pub fn applies_to(&self, adapter: &str) -> bool {
        self.learned.is_empty() || self.adapter == adapter
    }

    /// The correction learned for `strategy`, if any.
    pub fn get(&self, strategy: Strategy) -> Option<&Learned> {
        self.learned.iter().find(|l| l.strategy == strategy)
    }

    /// Learns from one run that measured `baseline_s` without remapping and each strategy's
    /// time in `measured` (same units, same run, the same keys `decision` was made on).
    /// Strategies the decision weighed no prediction for are skipped. Returns a lesson per
    /// strategy learned from.
    pub fn learn(&mut self, decision: &Decision, baseline_s: f64, measured: &[(Strategy, f64)]) -> Result<Vec<Lesson>> {
        if !baseline_s.is_finite() || baseline_s <= 0.0 {
            return Err(Error::invalid("baseline time", format!("{baseline_s}; give the measured time without remapping, above 0")));
        }
        let modelled = decision.baseline_s;
        if decision.predictions.is_empty() || !modelled.is_finite() || modelled <= 0.0 {
            // a decision that weighed nothing (no divergence, or an old record) has nothing to correct
            return Ok(Vec::new());
        }
        let mut lessons = Vec::new();
        for &(strategy, seconds) in measured {
            if !seconds.is_finite() || seconds < 0.0 {
                return Err(Error::invalid("measured time", format!("{seconds} for {strategy}; expected a finite time >= 0")));
            }
            let Some(p) = decision.predictions.iter().find(|p| p.strategy == strategy) else { continue };
            let (Some(raw), Some(predicted)) = (p.model_net_saving_s, p.net_saving_s) else { continue };
            let predicted_fraction = ((modelled - raw) / modelled).max(1e-9);
            let measured_fraction = (seconds / baseline_s).max(1e-9);
            let factor = measured_fraction / predicted_fraction;
            let learned = match self.learned.iter_mut().find(|l| l.strategy == strategy) {
                Some(l) => {
                    let weight = 1.0 / f64::from(l.runs.min(MEMORY - 1) + 1);
                    l.time_factor = (l.time_factor.ln() * (1.0 - weight) + factor.ln() * weight).exp();
                    l.runs = l.runs.saturating_add(1);
                    *l
                }
                None => {
                    let l = Learned { strategy, time_factor: factor, runs: 1 };
                    self.learned.push(l);
                    l
                }
            };
            lessons.push(Lesson {
                strategy,
                predicted_s: predicted,
                measured_s: baseline_s - seconds,
                model_now_s: corrected(modelled, raw, learned.time_factor),
                runs: learned.runs,
            });
        }
        Ok(lessons)
    }

    /// The calibration as JSON, to keep beside results.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// A calibration written by [`Calibration::to_json`].
    pub fn from_json(text: &str) -> Result<Calibration> {
        let c: Calibration = serde_json::from_str(text).map_err(|e| {
            Error::invalid(
                "calibration",
                format!("not a simtlab remap calibration ({e}); give a file it wrote, or a new path to start one"),
            )
        })?;
        if let Some(l) = c.learned.iter().find(|l| !l.time_factor.is_finite() || l.time_factor <= 0.0) {
            return Err(Error::invalid(
                "calibration",
                format!("time factor {} for {}; expected a finite ratio above 0 (start a new calibration)", l.time_factor, l.strategy),
            ));
        }
        Ok(c)
    }
}

/// A saving of `net_s` against `baseline_s`, with the strategy's time scaled by `factor`.
pub(super) fn corrected(baseline_s: f64, net_s: f64, factor: f64) -> f64 {
    baseline_s - factor * (baseline_s - net_s)
}
