//! What the explorer does differently in a browser page (wasm32, WebGPU): a page has one thread
//! and must never wait, so runs go through the async core on the page's event loop, and only
//! the workloads that record into an encoder ([`Workload::prepare`]) can run there. Everything
//! that waits on the GPU between steps, or reads and writes files, says why it is unavailable
//! instead (it never hangs the tab). On native builds every function here says "available".

use crate::workload::Workload;

/// Why the flow-shop tab's runs cannot start in a browser.
pub(super) const FLOWSHOP: &str = "not in the browser: the search and the pool measurement wait on the GPU between rounds, \
     which a page cannot do; run them in the desktop explorer (`simtlab gui`) or with `simtlab flowshop solve`";

/// Why files cannot be saved or opened in a browser.
pub(super) const FILES: &str = "files are not in the browser build (a page has no file system): \
     save, open, CSV and PNG are in the desktop explorer (`simtlab gui`)";

/// `reason` in the browser build; None in native builds, where everything runs.
pub(super) fn unavailable(reason: &'static str) -> Option<&'static str> {
    cfg!(target_arch = "wasm32").then_some(reason)
}

/// Why `workload` cannot run in this build: in a browser, a workload without a recording
/// (it waits on the GPU between steps); None where it can run.
pub(super) fn workload_unavailable(workload: &dyn Workload) -> Option<String> {
    (cfg!(target_arch = "wasm32") && !workload.can_prepare()).then(|| {
        let name = workload.name();
        format!(
            "{name} is not in the browser: it waits on the GPU between its steps, which a page cannot do; \
             run it in the desktop explorer (`simtlab gui`) or with `simtlab run {name}`"
        )
    })
}

#[cfg(target_arch = "wasm32")]
pub(super) use page::records;

#[cfg(target_arch = "wasm32")]
mod page {
    use serde_json::{json, Value};

    use crate::error::{Error, Result};
    use crate::gpu::{Gpu, TimingSource};
    use crate::harness::{Check, Protocol, Record, Stats};
    use crate::workload::{self, Workload};

    /// Runs `workload`'s recording with `params` as `protocol` says (untimed warm-up, then
    /// timed samples), each run submitted with its readback and checked against the CPU
    /// reference; one record, timed by the wall clock around submit and readback (a page has
    /// no blocking timer path). The record's check is the first that failed, else the last.
    pub(in crate::ui::explorer) async fn records(
        gpu: &Gpu,
        workload: &dyn Workload,
        params: &Value,
        protocol: &Protocol,
    ) -> Result<Vec<Record>> {
        let name = workload.name();
        let recording = workload.prepare(gpu, params)?.ok_or_else(|| Error::Unsupported {
            what: name.into(),
            adapter: gpu.adapter_name(),
            hint: "it has no recording (it waits on the GPU between steps): run it in the desktop explorer".into(),
        })?;
        for _ in 0..protocol.warmup {
            workload::run_recording_async(gpu, recording.as_ref()).await?;
        }
        let mut samples = Vec::with_capacity(protocol.samples.max(1));
        let mut check: Option<Check> = None;
        for _ in 0..protocol.samples.max(1) {
            let start = web_time::Instant::now();
            let this = workload::run_recording_async(gpu, recording.as_ref()).await?;
            samples.push(start.elapsed().as_secs_f64());
            if check.as_ref().is_none_or(|c| c.passed) {
                check = Some(this);
            }
        }
        let check = check.ok_or_else(|| Error::invalid("samples", "at least one timed sample is needed"))?;
        let stats = Stats::from_samples(samples, TimingSource::WallClock)?;
        let seed = params.get("seed").and_then(Value::as_u64).unwrap_or(0);
        let record = Record::new(gpu, workload.family(), name, "browser recording", stats, check)
            .with_config(params, seed)
            .with_extra(json!({ "timing": "wall clock around one submission with its readback" }));
        Ok(vec![record])
    }
}
