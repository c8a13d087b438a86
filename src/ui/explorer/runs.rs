//! Runs of the explorer: the points a sweep made (one registry call each, with the same
//! [`Record`]s `simtlab run NAME` writes), the worker that makes them off the UI thread, and
//! the JSON files they are kept in.
//!
//! The worker is started by `spawn`, the one place that creates a thread; in a browser page it
//! runs on the page's event loop instead (`wasm_bindgen_futures::spawn_local`), through the
//! async core, and keeps the rest.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::harness::{self, Protocol, Record};
use crate::workload::{self, Counting, WarpMap};

use super::plots::{Comparison, Measured};
#[cfg(not(target_arch = "wasm32"))]
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Key under each saved record's `extra` that says which run and point it belongs to.
const EXTRA_KEY: &str = "explorer";

/// One point of a run: the workload's parameters, the swept value, and what the run gave.
#[derive(Clone, Debug)]
pub struct Point {
    /// The workload that ran (a sweep over a family's workloads runs several).
    pub workload: String,
    /// The workload's parameters at this point.
    pub params: Value,
    /// The swept parameter's value (None without a sweep).
    pub x: Option<Value>,
    /// The records the workload produced, each with its CPU check.
    pub records: Vec<Record>,
    /// Per-warp divergence for the heat map (not kept in files).
    pub warps: Vec<WarpMap>,
}

impl Point {
    /// Every record's GPU result matched the CPU reference.
    pub fn checks_passed(&self) -> bool {
        !self.records.is_empty() && self.records.iter().all(|r| r.check.passed)
    }
}

/// A finished (or running) sweep of one workload.
#[derive(Clone, Debug, Default)]
pub struct Run {
    /// The workload's registry name.
    pub workload: String,
    /// The swept parameter's key, if any.
    pub sweep: Option<String>,
    /// How each point was timed, where known (a file from `simtlab run --json` says the
    /// samples through its records, not the warm-up).
    pub protocol: Option<Protocol>,
    /// Points in the order they ran.
    pub points: Vec<Point>,
}

impl Run {
    /// Every record of every point, in order.
    pub fn records(&self) -> impl Iterator<Item = &Record> {
        self.points.iter().flat_map(|p| &p.records)
    }

    /// The records with the run and point each belongs to noted under `extra.explorer`, so
    /// that [`Run::from_records`] can rebuild the run; otherwise the CLI's records.
    pub fn to_records(&self) -> Vec<Record> {
        let mut out = Vec::new();
        for (i, p) in self.points.iter().enumerate() {
            for r in &p.records {
                let mut r = r.clone();
                let note = json!({
                    "run": self.workload, "workload": p.workload, "point": i, "sweep": self.sweep, "x": p.x, "params": p.params,
                    "protocol": self.protocol,
                });
                match &mut r.extra {
                    Value::Object(map) => {
                        map.insert(EXTRA_KEY.into(), note);
                    }
                    extra @ Value::Null => *extra = json!({ EXTRA_KEY: note }),
                    _ => {}
                }
                out.push(r);
            }
        }
        out
    }

    /// Rebuilds a run from records written by [`Run::to_records`]; records without the note
    /// (a file from `simtlab run --json`) make one point.
    pub fn from_records(records: Vec<Record>) -> Result<Run> {
        let first = records.first().ok_or_else(|| Error::invalid("run file", "it holds no records"))?;
        let note_of = |r: &Record| r.extra.get(EXTRA_KEY).cloned();
        let mut run = Run {
            // a file of `simtlab run NAME` names the family: the workload is the one that fits
            workload: note_of(first)
                .and_then(|n| n["run"].as_str().map(String::from))
                .or_else(|| workload::of_record(first).map(|w| w.name().to_string()))
                .unwrap_or_else(|| first.family.clone()),
            sweep: note_of(first).and_then(|n| n["sweep"].as_str().map(String::from)),
            protocol: note_of(first).and_then(|n| Protocol::deserialize(&n["protocol"]).ok()),
            points: Vec::new(),
        };
        for mut r in records {
            let note = note_of(&r).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut r.extra {
                map.remove(EXTRA_KEY);
                if map.is_empty() {
                    r.extra = Value::Null;
                }
            }
            let index = note["point"].as_u64().unwrap_or(0) as usize;
            while run.points.len() <= index {
                let workload = note["workload"].as_str().map_or_else(|| run.workload.clone(), String::from);
                run.points.push(Point { workload, params: note["params"].clone(), x: None, records: Vec::new(), warps: Vec::new() });
            }
            let point = &mut run.points[index];
            point.x = note.get("x").filter(|x| !x.is_null()).cloned();
            if point.params.is_null() {
                point.params = r.params.clone();
            }
            point.records.push(r);
        }
        run.points.retain(|p| !p.records.is_empty());
        Ok(run)
    }

    /// The run as a JSON array of records (`harness` format, readable by every tool that reads
    /// `simtlab run --json`): what [`Run::save`] writes and a browser page downloads.
    pub fn to_json(&self) -> Result<String> {
        harness::records_json(&self.to_records())
    }

    /// The run in `text`, as [`Run::to_json`] or `simtlab run NAME --json` wrote it; an error
    /// names `file`, where the text came from.
    pub fn from_json(text: &str, file: &Path) -> Result<Run> {
        Run::from_records(harness::parse_records(text, file)?)
    }

    /// Writes the run to `path` as [`Run::to_json`] makes it.
    pub fn save(&self, path: &Path) -> Result<()> {
        harness::write_file(path, self.to_json()?.as_bytes())
    }

    /// Reads a run written by [`Run::save`] or by `simtlab run NAME --json FILE`.
    pub fn open(path: &Path) -> Result<Run> {
        Run::from_records(harness::read_json(path)?)
    }
}

/// What the worker reports.
pub(super) enum Message {
    /// The adapter opened, with a line saying how divergence will be counted.
    Opened(String),
    /// A point started: `done` finished of `total`, with what runs now.
    Progress { done: usize, total: usize, what: String },
    /// The driver's register count for the kernel (`path:entry`) of the run's first
    /// workload, or why there is none.
    Registers { kernel: String, registers: std::result::Result<u32, String> },
    /// A finished point.
    Point(Box<Point>),
    /// The run stopped on an error.
    Failed(String),
    /// No more messages follow.
    Finished { cancelled: bool },
}

/// One point to run: the workload, its parameters, the swept value.
pub(super) struct Planned {
    pub workload: String,
    pub params: Value,
    pub x: Option<Value>,
}

/// A sweep to run on the worker.
pub(super) struct Job {
    pub points: Vec<Planned>,
    /// What the sweep varies, as people read it (progress lines).
    pub swept: Option<String>,
    pub protocol: Protocol,
    pub counting: Counting,
    pub adapter: wgpu::Adapter,
    /// The adapter's device, opened by the first run and kept for the next.
    pub gpu: Arc<Mutex<Option<Arc<Gpu>>>>,
    pub timeout: Option<std::time::Duration>,
    pub min_sample_seconds: f64,
    pub cancel: Arc<AtomicBool>,
}

/// Starts `job` on a background thread; its messages go to `tx` and `ctx` is asked to repaint
/// after each. A panic in the job becomes a `Failed` message.
#[cfg(not(target_arch = "wasm32"))]
pub(super) fn spawn(job: Job, tx: Sender<Message>, ctx: egui::Context) -> Result<()> {
    std::thread::Builder::new()
        .name("simtlab-explorer-run".into())
        .spawn(move || {
            let send = |m: Message| {
                let _ = tx.send(m);
                ctx.request_repaint();
            };
            if catch_unwind(AssertUnwindSafe(|| crate::gpu::block_on(job.run(&send)))).is_err() {
                send(Message::Failed("the run panicked (a bug in simtlab)".into()));
                send(Message::Finished { cancelled: false });
            }
        })
        .map(drop)
        .map_err(|e| Error::invalid("run thread", format!("could not start it: {e}")))
}

/// Starts `job` on the page's event loop (a browser has no threads and cannot wait): it runs
/// between frames, awaiting the GPU; its messages go to `tx` and `ctx` is asked to repaint
/// after each.
#[cfg(target_arch = "wasm32")]
pub(super) fn spawn(job: Job, tx: Sender<Message>, ctx: egui::Context) -> Result<()> {
    wasm_bindgen_futures::spawn_local(async move {
        let send = |m: Message| {
            let _ = tx.send(m);
            ctx.request_repaint();
        };
        job.run(&send).await;
    });
    Ok(())
}

impl Job {
    async fn open(&self) -> Result<Arc<Gpu>> {
        let opened = || Error::invalid("adapter", "a previous run panicked while opening it");
        if let Some(g) = self.gpu.lock().map_err(|_| opened())?.as_ref() {
            return Ok(g.clone());
        }
        // one run at a time opens it (the explorer starts no run while one is going)
        let mut g = Gpu::open_async(&self.adapter).await?;
        if let Some(t) = self.timeout {
            g.set_timeout(t);
        }
        if g.info().device_type != wgpu::DeviceType::Cpu {
            g.set_min_timed_seconds(self.min_sample_seconds);
        }
        let g = Arc::new(g);
        *self.gpu.lock().map_err(|_| opened())? = Some(g.clone());
        Ok(g)
    }

    /// One point's records and per-warp maps. The records come from the registry's run on the
    /// worker thread (blocking), or in a browser page from the workload's recording, awaited;
    /// the maps from the workload's async count on both.
    async fn point(&self, gpu: &Gpu, workload: &str, params: &Value) -> Result<(Vec<Record>, Vec<WarpMap>)> {
        let w = workload::find(workload)?;
        #[cfg(not(target_arch = "wasm32"))]
        let records = w.run(gpu, params, &self.protocol)?;
        #[cfg(target_arch = "wasm32")]
        let records = super::browser::records(gpu, w.as_ref(), params, &self.protocol).await?;
        let warps = w.warps_async(gpu, params, self.counting).await?;
        Ok((records, warps))
    }

    async fn run(self, send: &dyn Fn(Message)) {
        let gpu = match self.open().await {
            Ok(g) => g,
            Err(e) => {
                send(Message::Failed(format!("opening the adapter: {e}")));
                return send(Message::Finished { cancelled: false });
            }
        };
        // Cancel acts inside a point: the device refuses the next submission once the flag is
        // set, so a point of many long samples stops within the one it is in
        gpu.set_cancel(Some(self.cancel.clone()));
        self.points_on(&gpu, send).await;
        gpu.set_cancel(None);
    }

    async fn points_on(mut self, gpu: &Arc<Gpu>, send: &dyn Fn(Message)) {
        send(Message::Opened(format!(
            "{}: {}",
            gpu.adapter_name(),
            match (self.counting, gpu.caps().subgroup_size) {
                (Counting::Probe(_), Some(w)) => format!("subgroups of {w}, divergence from the GPU probe"),
                (Counting::Probe(w) | Counting::Emulate(w), _) => format!("divergence from host emulation at W = {w}"),
            }
        )));
        if let Some(registers) = self.points.first().and_then(|p| driver_registers(gpu, &p.workload)) {
            send(registers);
        }
        let total = self.points.len();
        for (i, Planned { workload, params, x }) in std::mem::take(&mut self.points).into_iter().enumerate() {
            if self.cancel.load(Ordering::Relaxed) {
                return send(Message::Finished { cancelled: true });
            }
            let what = match (&self.swept, &x) {
                (Some(swept), Some(v)) => format!("{workload}, {swept} = {}", super::plots::format_value(v)),
                _ => workload.clone(),
            };
            send(Message::Progress { done: i, total, what });
            match self.point(gpu, &workload, &params).await {
                Ok((records, warps)) => send(Message::Point(Box::new(Point { workload, params, x, records, warps }))),
                Err(_) if self.cancel.load(Ordering::Relaxed) => return send(Message::Finished { cancelled: true }),
                Err(e) => {
                    send(Message::Failed(e.to_string()));
                    return send(Message::Finished { cancelled: false });
                }
            }
        }
        send(Message::Finished { cancelled: false });
    }
}

/// Asks a worker to stop at its next check and says so in the status line (nothing when idle).
pub fn request_cancel(cancel: Option<&AtomicBool>, status: &mut String) {
    if let Some(cancel) = cancel {
        cancel.store(true, Ordering::Relaxed);
        *status = "cancelling".into();
    }
}

/// The driver's register count for `workload`'s kernel as [`Message::Registers`] (None for a
/// workload without one kernel).
fn driver_registers(gpu: &Gpu, workload: &str) -> Option<Message> {
    let entry = workload::find(workload).ok()?.shader()?;
    let registers = crate::gpu::shader::preprocess(entry.file.path, &[])
        .and_then(|source| gpu.driver_statistics(&source, entry.name, &[]))
        .map_err(|e| e.to_string())
        .and_then(|statistics| statistics.registers().ok_or_else(|| "the driver reports no register count".to_string()));
    Some(Message::Registers { kernel: format!("{}:{}", entry.file.path, entry.name), registers })
}

/// Per point, each of `run`'s records against the baseline's record of the same kernel and
/// variant at the same point index: the speed-up of the medians and whether the two ranges of
/// samples overlap (None where the baseline has none).
pub fn baseline_comparisons(run: &Run, baseline: &Run) -> Vec<Vec<Option<Comparison>>> {
    run.points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            p.records
                .iter()
                .map(|r| {
                    let base = baseline.points.get(i)?.records.iter().find(|b| b.kernel == r.kernel && b.variant == r.variant)?;
                    Comparison::of(&Measured::time(r), &Measured::time(base))
                })
                .collect()
        })
        .collect()
}
