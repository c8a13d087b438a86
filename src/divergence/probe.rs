//! Decoding of the per-subgroup records written by `shaders/shared/probe.wgsl`.
//!
//! Layout: for subgroup g (global index = workgroup index × subgroups per workgroup + subgroup_id)
//! and site s, words `(g × sites + s) × 4 + [0..4]` = evaluations, divergent, taken_steps,
//! taken_lanes. Each record is written by one lane of its own subgroup, so no atomics.

use super::{Divergence, SiteCounters};

pub const PROBE_WORDS_PER_SITE: usize = 4;

/// Binding number (group 0) of the records buffer declared in `probe.wgsl`.
pub const PROBE_BINDING: u32 = 7;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeLayout {
    pub sites: usize,
    pub subgroups: usize,
    /// Native subgroup width the kernel ran with.
    pub width: u32,
}

impl ProbeLayout {
    /// Layout for `workgroups` workgroups of `workgroup_size` invocations at subgroup `width`.
    pub fn new(sites: usize, workgroups: usize, workgroup_size: u32, width: u32) -> Self {
        let per_wg = workgroup_size.div_ceil(width.max(1)) as usize;
        ProbeLayout { sites, subgroups: workgroups * per_wg, width }
    }

    pub fn words(&self) -> usize {
        self.sites * self.subgroups * PROBE_WORDS_PER_SITE
    }

    /// Sums the records; subgroups that never evaluated a site (idle lanes only) are not warps.
    pub fn decode(&self, words: &[u32]) -> Divergence {
        let mut out = Divergence { width: self.width, sites: vec![SiteCounters::default(); self.sites], ..Default::default() };
        for record in words.chunks_exact(self.sites * PROBE_WORDS_PER_SITE).take(self.subgroups) {
            let mut warp = SiteCounters::default();
            for (s, w) in record.chunks_exact(PROBE_WORDS_PER_SITE).enumerate() {
                let c = SiteCounters {
                    evaluations: w[0] as u64,
                    divergent: w[1] as u64,
                    taken_steps: w[2] as u64,
                    taken_lanes: w[3] as u64,
                };
                out.sites[s].add(&c);
                warp.add(&c);
            }
            if warp.evaluations == 0 {
                continue;
            }
            out.warps += 1;
            out.divergent_warps += (warp.divergent > 0) as u64;
            out.per_warp_divergent.push(warp.divergent as u32);
            out.per_warp_efficiency.push(warp.simt_efficiency(self.width) as f32);
        }
        out
    }
}
