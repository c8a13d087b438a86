//! Decoding of the per-subgroup records written by `shaders/shared/probe.wgsl`.
//!
//! Layout: for subgroup g (global index = workgroup index × subgroups per workgroup + subgroup_id)
//! and site s, words `(g × sites + s) × 4 + [0..4]` = evaluations, divergent, taken_steps,
//! taken_lanes. Each record is written by one lane of its own subgroup, so no atomics.

use super::{Divergence, SiteCounters};
use crate::error::Result;
use crate::gpu::{Bind, BufferKind, Gpu, GpuBuffer};

/// u32 words per subgroup and site: evaluations, divergent, taken_steps, taken_lanes.
const PROBE_WORDS_PER_SITE: usize = 4;

/// Binding number (group 0) of the records buffer declared in `probe.wgsl`.
pub const PROBE_BINDING: u32 = 7;

/// Shape of a probe records buffer: one record of [`ProbeLayout::sites`] sites per subgroup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeLayout {
    /// Probe sites in the kernel.
    pub sites: usize,
    /// Subgroups in the whole grid (workgroups × subgroups per workgroup).
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

    /// Length of the records buffer in u32 words.
    pub fn words(&self) -> usize {
        self.sites * self.subgroups * PROBE_WORDS_PER_SITE
    }

    /// Sums the records; subgroups that never evaluated a site (idle lanes only) are not warps.
    pub fn decode(&self, words: &[u32]) -> Divergence {
        let mut out = Divergence { width: self.width, sites: vec![SiteCounters::default(); self.sites], ..Default::default() };
        for record in words.chunks_exact(self.sites * PROBE_WORDS_PER_SITE).take(self.subgroups) {
            let mut warp = SiteCounters::default();
            for (s, w) in record.chunks_exact(PROBE_WORDS_PER_SITE).enumerate() {
                let c =
                    SiteCounters { evaluations: w[0] as u64, divergent: w[1] as u64, taken_steps: w[2] as u64, taken_lanes: w[3] as u64 };
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

/// A probe records buffer and its layout for `sites` sites over a kernel's grid.
#[derive(Debug)]
pub struct ProbeRecords {
    /// The records, zeroed at creation; bind it at [`PROBE_BINDING`].
    pub buffer: GpuBuffer<u32>,
    /// How to decode `buffer`.
    pub layout: ProbeLayout,
}

impl ProbeRecords {
    /// Records for `sites` sites over `grid` workgroups of `workgroup_size` invocations at
    /// subgroup `width`; None when `width` is None (not probing).
    pub fn new(gpu: &Gpu, width: Option<u32>, sites: usize, grid: [u32; 3], workgroup_size: u32) -> Result<Option<Self>> {
        let Some(w) = width else { return Ok(None) };
        let workgroups = grid[0] as usize * grid[1] as usize * grid[2] as usize;
        let layout = ProbeLayout::new(sites, workgroups, workgroup_size, w);
        let buffer = gpu.buffer_zeroed::<u32>("probe records", layout.words(), BufferKind::Storage)?;
        Ok(Some(ProbeRecords { buffer, layout }))
    }

    /// The binding slot of the records (`PROBE_BINDING`).
    pub fn slot(&self) -> (u32, &dyn Bind) {
        (PROBE_BINDING, &self.buffer)
    }

    /// Reads and decodes the records.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read(&self, gpu: &Gpu) -> Result<Divergence> {
        Ok(self.layout.decode(&gpu.read(&self.buffer)?))
    }
}

/// Reads the probe of a prepared run (None when it ran without one).
#[cfg(not(target_arch = "wasm32"))]
pub fn read_probe(gpu: &Gpu, probe: &Option<ProbeRecords>) -> Result<Option<Divergence>> {
    probe.as_ref().map(|p| p.read(gpu)).transpose()
}
