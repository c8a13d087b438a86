//! A kernel benchmarked without and with remapping: which variants run ([`Variants`]), the
//! options every remappable kernel's prepared run takes ([`RunOptions`]: the divergence probe
//! and a reference-redirection index), and the record of one variant ([`VariantRun`]), with
//! its divergence measured at the native width and emulated at width 32.

use crate::divergence::{DivergenceReport, DivergenceSummary};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::harness::named;
use crate::harness::{Check, Record, Stats, Throughput};
use serde::{Deserialize, Serialize};

/// Which variants of a kernel a benchmark runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variants {
    /// The original kernel only.
    None,
    /// The reference-redirection variant only (with the original as the baseline it needs).
    Redirect,
    /// Every variant the kernel has.
    All,
}

named!(Variants { None => "none", Redirect => "redirect", All => "all" });

impl Variants {
    /// True when the reference-redirection variant runs.
    pub fn includes_redirect(self) -> bool {
        matches!(self, Variants::Redirect | Variants::All)
    }
}

/// Options of a prepared run of a remappable kernel.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions<'a> {
    /// Count divergence with the GPU probe (needs subgroups).
    pub probe: bool,
    /// Reference redirection: thread t works on element `remap[t]` (the REMAP variant).
    pub remap: Option<&'a [u32]>,
}

impl RunOptions<'_> {
    /// Shader defines for these options, and the subgroup width when probing (checks that
    /// the adapter has subgroups).
    pub fn defines(&self, gpu: &Gpu) -> Result<(Vec<&'static str>, Option<u32>)> {
        let width = if self.probe { Some(gpu.require_subgroups()?) } else { None };
        let mut d = Vec::new();
        if width.is_some() {
            d.push("PROBE");
        }
        if self.remap.is_some() {
            d.push("REMAP");
        }
        Ok((d, width))
    }

    /// Err unless the redirection index, when there is one, has an entry per element.
    pub fn check_remap(&self, elements: usize) -> Result<()> {
        match self.remap {
            Some(r) if r.len() != elements => {
                Err(Error::invalid("remap", format!("an index array of {elements} entries, not {}", r.len())))
            }
            _ => Ok(()),
        }
    }
}

/// The binding of the reference-redirection index (`remap_index`, declared by
/// `shaders/shared/remap.wgsl` under `REMAP`), after the probe's records.
pub const REMAP_BINDING: u32 = crate::gpu::shader::registry::shared::remap::binding::REMAP_INDEX;

/// The variant label of a kernel's original, unremapped run: the baseline every other
/// variant of the same kernel and parameters is compared with.
pub const ORIGINAL: &str = "org";

/// Where a record's divergence came from and what it was at both widths: what
/// [`VariantRun::record`] adds to [`Record::extra`], read back with [`Record::extra_as`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DivergenceExtra {
    /// Which measurement [`Record::divergence`] holds: `gpu-probe` or a host emulation.
    pub divergence_source: String,
    /// From the GPU probe at the adapter's subgroup width; absent without subgroups.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub divergence_native: Option<DivergenceSummary>,
    /// From host emulation at 32 lanes (the papers' warp width).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub divergence_w32: Option<DivergenceSummary>,
}

/// Everything one variant's run produced, turned into a [`Record`] by [`VariantRun::record`].
#[derive(Debug)]
pub struct VariantRun {
    /// Kernel family ([`Record::family`]).
    pub family: &'static str,
    /// Kernel name within the family.
    pub kernel: String,
    /// Which variant ran (`org` for the original, `redirect`, ...).
    pub variant: String,
    /// The configuration, as JSON.
    pub params: serde_json::Value,
    /// Seed of the generated inputs.
    pub seed: u64,
    /// Timing statistics of the variant.
    pub stats: Stats,
    /// Comparison against the CPU reference.
    pub check: Check,
    /// Divergence measured by the probe and emulated at width 32.
    pub divergence: DivergenceReport,
    /// Work done per second.
    pub throughput: Throughput,
    /// The family's own figures (a JSON object), merged into [`Record::extra`].
    pub extra: serde_json::Value,
}

impl VariantRun {
    /// The record: `divergence` is the GPU probe's when measured, else the emulation at width
    /// 32; `extra` carries both plus the family's own figures.
    pub fn record(self, gpu: &Gpu) -> Record {
        let mut record = Record::new(gpu, self.family, &self.kernel, self.variant, self.stats, self.check)
            .with_config(&self.params, self.seed)
            .with_divergence(Some(self.divergence.native.unwrap_or(self.divergence.emulated_w32)))
            .with_extra(DivergenceExtra {
                divergence_source: if self.divergence.native.is_some() { "gpu-probe" } else { "host-emulation-w32" }.into(),
                divergence_native: self.divergence.native,
                divergence_w32: Some(self.divergence.emulated_w32),
            })
            .with_extra(self.extra);
        record.throughput = Some(self.throughput);
        record
    }
}

/// Host seconds of `f` (the cost of building a redirection index).
pub fn host_seconds<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t0 = web_time::Instant::now();
    let v = f();
    (v, t0.elapsed().as_secs_f64())
}
