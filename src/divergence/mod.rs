//! Divergence metrics (nvprof/Nsight definitions), host emulation at any width, and decoding of
//! the GPU probe counters written by `shaders/shared/probe.wgsl`.
//!
//! Both the emulation and the GPU probe count, per probe site, *subgroup evaluations*: one per
//! subgroup each time its active lanes evaluate the site's condition. From those:
//! - SIMT efficiency = Σ lanes running the guarded code / (subgroup-steps running it × W);
//! - branch efficiency = uniform evaluations / all evaluations;
//! - divergence ratio (Zhang) = fraction of warps whose path vectors differ.

mod emulate;
mod join;
mod probe;

pub use emulate::{emulate_loops, emulate_loops_with_idle_lanes, emulate_paths};
pub use join::{join_sites, join_warps};
#[cfg(not(target_arch = "wasm32"))]
pub use probe::read_probe;
pub use probe::{ProbeLayout, ProbeRecords, PROBE_BINDING};

use serde::{Deserialize, Serialize};

/// The width host emulation reports divergence at beside the native one: an NVIDIA warp,
/// the width of the GPUs the divergence literature measured on.
pub const EMULATION_WIDTH: u32 = 32;

/// Counters of one probe site, summed over subgroups (or over one subgroup for a heat-map cell).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteCounters {
    /// Subgroup-level evaluations of the condition.
    pub evaluations: u64,
    /// Evaluations where the active lanes disagreed.
    pub divergent: u64,
    /// Evaluations where at least one lane took the guarded path (subgroup-steps spent in it).
    pub taken_steps: u64,
    /// Σ lanes that took the guarded path.
    pub taken_lanes: u64,
}

impl SiteCounters {
    /// Adds `other`'s counters to these (summing sites or subgroups).
    pub fn add(&mut self, other: &SiteCounters) {
        self.evaluations += other.evaluations;
        self.divergent += other.divergent;
        self.taken_steps += other.taken_steps;
        self.taken_lanes += other.taken_lanes;
    }

    /// Fraction of lane slots doing useful work in the guarded code (1.0 when nothing ran).
    pub fn simt_efficiency(&self, width: u32) -> f64 {
        if self.taken_steps == 0 {
            1.0
        } else {
            self.taken_lanes as f64 / (self.taken_steps as f64 * width as f64)
        }
    }

    /// Uniform evaluations / all evaluations (1.0 when never evaluated).
    pub fn branch_efficiency(&self) -> f64 {
        if self.evaluations == 0 {
            1.0
        } else {
            1.0 - self.divergent as f64 / self.evaluations as f64
        }
    }
}

/// Divergence of one run: per-site totals, per-warp heat-map values and Zhang's ratio.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Divergence {
    /// Warp/subgroup width the counters refer to.
    pub width: u32,
    /// Counters per probe site, in the order of the kernel's site numbers.
    pub sites: Vec<SiteCounters>,
    /// Per warp: divergent evaluations over all sites (the heat map).
    pub per_warp_divergent: Vec<u32>,
    /// Per warp: fraction of active lanes in the guarded code, over all sites.
    pub per_warp_efficiency: Vec<f32>,
    /// Warps whose lanes did not all follow one path.
    pub divergent_warps: u64,
    /// Warps (subgroups) with at least one lane reaching a site; all-idle ones are not counted.
    pub warps: u64,
}

impl Divergence {
    /// The counters of all sites summed.
    pub fn totals(&self) -> SiteCounters {
        let mut t = SiteCounters::default();
        self.sites.iter().for_each(|s| t.add(s));
        t
    }

    /// SIMT efficiency over all sites at [`Divergence::width`], in [0, 1] (1.0 when nothing ran).
    pub fn simt_efficiency(&self) -> f64 {
        self.totals().simt_efficiency(self.width)
    }

    /// Branch efficiency over all sites, in [0, 1] (1.0 when nothing was evaluated).
    pub fn branch_efficiency(&self) -> f64 {
        self.totals().branch_efficiency()
    }

    /// Zhang's divergence ratio: divergent warps / warps.
    pub fn divergence_ratio(&self) -> f64 {
        if self.warps == 0 {
            0.0
        } else {
            self.divergent_warps as f64 / self.warps as f64
        }
    }

    /// Serializable summary for benchmark records.
    pub fn summary(&self) -> DivergenceSummary {
        DivergenceSummary {
            width: self.width,
            simt_efficiency: self.simt_efficiency(),
            branch_efficiency: self.branch_efficiency(),
            divergence_ratio: self.divergence_ratio(),
            warps: self.warps,
        }
    }
}

/// The three metrics of a [`Divergence`], as stored in benchmark records.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DivergenceSummary {
    /// Warp/subgroup width the metrics refer to.
    pub width: u32,
    /// See [`Divergence::simt_efficiency`]; in [0, 1].
    pub simt_efficiency: f64,
    /// See [`Divergence::branch_efficiency`]; in [0, 1].
    pub branch_efficiency: f64,
    /// See [`Divergence::divergence_ratio`]; in [0, 1].
    pub divergence_ratio: f64,
    /// Warps with at least one lane reaching a site.
    pub warps: u64,
}

/// Divergence of one run as reported: measured (GPU probe at the native width) when the
/// adapter has subgroups, and always the host emulation at [`EMULATION_WIDTH`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DivergenceReport {
    /// From the GPU probe at the adapter's subgroup width; None without subgroups or probe.
    pub native: Option<DivergenceSummary>,
    /// From host emulation at [`EMULATION_WIDTH`] (32) lanes.
    pub emulated_w32: DivergenceSummary,
}

impl DivergenceReport {
    /// Summarises a probe result (if any) and an emulation at [`EMULATION_WIDTH`].
    pub fn new(native: Option<&Divergence>, emulated_w32: &Divergence) -> Self {
        DivergenceReport { native: native.map(Divergence::summary), emulated_w32: emulated_w32.summary() }
    }
}
