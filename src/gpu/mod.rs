//! GPU context: adapter choice, device creation with the features simtlab can use, measured
//! capabilities, typed buffers, readback, shader loading and timing.
//!
//! Standalone: [`Gpu::new`] picks an adapter (honouring `WGPU_BACKEND` / `WGPU_ADAPTER_NAME` or
//! [`GpuOptions`]). Embedded: [`Gpu::from_device`] wraps the host app's own device and queue.

mod buffer;
mod capabilities;
mod driver_stats;
mod recording;
pub mod shader;
pub mod spirv;
mod timing;
#[cfg(target_arch = "wasm32")]
mod web;

pub use buffer::{Bind, BufferKind, GpuBuffer, PendingRead, RecordedRead};
pub use capabilities::Capabilities;
pub use driver_stats::{DriverStatistic, DriverStatistics, PipelineExecutable};
pub use recording::{read_recording_async, run_recording_async, Checked, PreparedRun, Recording};
pub use shader::{Kernel, KernelGroup, ShaderSource};
pub use timing::{BindGroups, Step, Timing, TimingSource};

use crate::error::{Error, Result};
use serde::Serialize;
use std::time::Duration;

/// How long the host waits for one submission before reporting a hang.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Adapter selection. Empty fields fall back to `WGPU_BACKEND` / `WGPU_ADAPTER_NAME`, then to
/// the first adapter in the order: discrete, integrated, virtual, CPU, other.
#[derive(Clone, Debug, Default)]
pub struct GpuOptions {
    /// Comma list of backends (`vulkan`, `gl`, `metal`, `dx12`).
    pub backend: Option<String>,
    /// Which adapter: `#N` (its index in `simtlab devices`), a PCI bus id (any value with a
    /// `:`, e.g. `0000:3b:00.0` or `3b:00`), else a case-insensitive part of its name.
    pub adapter: Option<String>,
    /// How long to wait for one submission.
    pub timeout: Option<Duration>,
}

impl GpuOptions {
    /// Backend and adapter from `WGPU_BACKEND` and `WGPU_ADAPTER_NAME` (unset or empty: None); no timeout.
    pub fn from_env() -> Self {
        GpuOptions {
            backend: std::env::var("WGPU_BACKEND").ok().filter(|s| !s.is_empty()),
            adapter: std::env::var("WGPU_ADAPTER_NAME").ok().filter(|s| !s.is_empty()),
            timeout: None,
        }
    }

    /// Explicit values win over the environment.
    pub fn or_env(self) -> Self {
        let env = Self::from_env();
        GpuOptions { backend: self.backend.or(env.backend), adapter: self.adapter.or(env.adapter), timeout: self.timeout }
    }

    fn backends(&self) -> Result<wgpu::Backends> {
        match &self.backend {
            None => Ok(wgpu::Backends::all()),
            Some(list) => {
                let b = wgpu::Backends::from_comma_list(list);
                if b.is_empty() {
                    Err(Error::invalid("backend", format!("'{list}': use vulkan, gl, metal or dx12 (comma list)")))
                } else {
                    Ok(b)
                }
            }
        }
    }
}

/// What `simtlab devices` prints for one adapter.
#[derive(Clone, Debug, Serialize)]
pub struct AdapterReport {
    /// Its place in the list, best first: `--adapter '#N'` selects it.
    pub index: usize,
    /// PCI bus id as the driver reports it (empty where the backend gives none): `--adapter`
    /// selects by it too. Vulkan ignores `CUDA_VISIBLE_DEVICES`, so this is how to pick one GPU
    /// of several identical ones.
    pub pci_bus: String,
    /// Adapter name as the driver reports it.
    pub name: String,
    /// Backend (`Vulkan`, `Gl`, `Metal`, `Dx12`, ...).
    pub backend: String,
    /// Device type (`DiscreteGpu`, `IntegratedGpu`, `Cpu`, ...).
    pub device_type: String,
    /// Driver name.
    pub driver: String,
    /// Driver version and details.
    pub driver_info: String,
    /// Features, limits and measured subgroup width; None when opening the device failed.
    pub capabilities: Option<Capabilities>,
    /// Why the capabilities could not be measured, if so.
    pub error: Option<String>,
}

/// A device and queue plus what simtlab measured about them.
pub struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    caps: Capabilities,
    timeout: Duration,
    /// Timed runs shorter than this (f64 bits; 0 = off) are repeated, see [`Gpu::set_min_timed_seconds`].
    min_timed: std::sync::atomic::AtomicU64,
    pipelines: shader::PipelineCache,
    /// Set when a submission timed out: that work may still hold the device (see
    /// `Gpu::submit`), so later submissions and waits fail at once.
    abandoned: std::sync::atomic::AtomicBool,
    /// Once set, every later submission fails with [`Error::Cancelled`] (see [`Gpu::set_cancel`]).
    cancel: std::sync::RwLock<Option<std::sync::Arc<std::sync::atomic::AtomicBool>>>,
    /// Measurements of this device that every later run shares, by key (see [`Gpu::remember`]).
    remembered: std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<dyn std::any::Any + Send + Sync>>>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("adapter", &self.info.name).field("caps", &self.caps).finish()
    }
}

fn instance(backends: wgpu::Backends) -> wgpu::Instance {
    // WGPU_* variables (e.g. WGPU_VALIDATION_INDIRECT_CALL=0) adjust wgpu's own checks
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends = backends;
    wgpu::Instance::new(desc)
}

fn type_rank(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    }
}

fn describe(info: &wgpu::AdapterInfo) -> String {
    format!("'{}' ({:?}, {:?})", adapter_label(info), info.backend, info.device_type)
}

/// The adapter's name for people: its own, or what it is where it has none (browsers keep
/// their WebGPU adapter's name private, so messages never show a blank).
pub fn adapter_label(info: &wgpu::AdapterInfo) -> String {
    match (info.name.is_empty(), info.backend) {
        (false, _) => info.name.clone(),
        (true, wgpu::Backend::BrowserWebGpu) => {
            let vendor = [&info.driver, &info.driver_info].into_iter().find(|s| !s.is_empty());
            match vendor {
                Some(v) => format!("the browser's WebGPU adapter ({v})"),
                None => "the browser's WebGPU adapter (its name kept private)".into(),
            }
        }
        (true, _) => "an unnamed adapter".into(),
    }
}

/// Runs a future of the async core to completion on the calling thread: the thin blocking
/// layer the command line and tests use. On native backends every future of the core is
/// ready once the device has been driven, which the core does itself within the timeout.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn block_on<F: std::future::Future>(future: F) -> F::Output {
    pollster::block_on(future)
}

/// All adapters of the chosen backends, best first (blocking; see [`adapters_async`]).
#[cfg(not(target_arch = "wasm32"))]
pub fn adapters(options: &GpuOptions) -> Result<Vec<wgpu::Adapter>> {
    block_on(adapters_async(options))
}

/// All adapters of the chosen backends, best first. Vulkan before GL for the same device
/// because only Vulkan exposes subgroups and timestamps on Mesa.
pub async fn adapters_async(options: &GpuOptions) -> Result<Vec<wgpu::Adapter>> {
    let mut list = instance(options.backends()?).enumerate_adapters(options.backends()?).await;
    list.sort_by_key(|a| {
        let i = a.get_info();
        (type_rank(i.device_type), i.backend != wgpu::Backend::Vulkan)
    });
    Ok(list)
}

/// Every adapter on every backend, described for an error message; with the install hint when
/// there is none at all.
async fn available_adapters() -> String {
    let all = instance(wgpu::Backends::all()).enumerate_adapters(wgpu::Backends::all()).await;
    if all.is_empty() && cfg!(target_arch = "wasm32") {
        "none: this browser offers no WebGPU adapter (Chromium on Linux needs --enable-unsafe-webgpu)".to_string()
    } else if all.is_empty() {
        "none on any backend (install a Vulkan driver; without a GPU, Mesa's lavapipe: `apt-get install mesa-vulkan-drivers libvulkan1` as root)".to_string()
    } else {
        all.iter().map(|a| describe(&a.get_info())).collect::<Vec<_>>().join(", ")
    }
}

/// What the options ask for, in words.
fn wanted(options: &GpuOptions) -> String {
    let name = options
        .adapter
        .as_deref()
        .map_or("any adapter".to_string(), |w| format!("an adapter matching '{w}' (#index, PCI bus or part of the name)"));
    match &options.backend {
        Some(b) => format!("{name} on backend {b}"),
        None => name,
    }
}

/// The error when no adapter of `available` matches `options`.
fn no_adapter(options: &GpuOptions, available: String) -> Error {
    Error::NoAdapter {
        wanted: wanted(options),
        available,
        hint: "Set `adapter` (or WGPU_ADAPTER_NAME) to part of one of these names, and `backend` (or WGPU_BACKEND) to its backend".into(),
    }
}

/// The adapters `wanted` (see [`GpuOptions::adapter`]) selects from `list`, with their indices
/// in `list`; all of them when `wanted` is `None`.
pub fn select_adapters(list: Vec<wgpu::Adapter>, wanted: Option<&str>) -> Result<Vec<(usize, wgpu::Adapter)>> {
    let indexed = list.into_iter().enumerate();
    let Some(wanted) = wanted.map(str::trim) else { return Ok(indexed.collect()) };
    if let Some(index) = wanted.strip_prefix('#') {
        let index: usize =
            index.parse().map_err(|_| Error::invalid("adapter", format!("'{wanted}': give #N with N an index from `simtlab devices`")))?;
        return Ok(indexed.filter(|(i, _)| *i == index).collect());
    }
    let wanted = wanted.to_lowercase();
    let by_bus = wanted.contains(':');
    Ok(indexed
        .filter(|(_, a)| {
            let info = a.get_info();
            if by_bus {
                info.device_pci_bus_id.to_lowercase().contains(&wanted)
            } else {
                info.name.to_lowercase().contains(&wanted)
            }
        })
        .collect())
}

async fn choose_adapter(options: &GpuOptions) -> Result<wgpu::Adapter> {
    let list = adapters_async(options).await?;
    match select_adapters(list, options.adapter.as_deref())?.into_iter().next() {
        Some((_, adapter)) => Ok(adapter),
        None => Err(no_adapter(options, available_adapters().await)),
    }
}

/// Features simtlab uses when present; none is required.
pub fn wanted_features() -> wgpu::Features {
    wgpu::Features::SUBGROUP
        | wgpu::Features::SUBGROUP_BARRIER
        | wgpu::Features::TIMESTAMP_QUERY
        | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES
        | wgpu::Features::MEMORY_DECORATION_COHERENT
        | wgpu::Features::PASSTHROUGH_SHADERS
        | wgpu::Features::IMMEDIATES
}

impl Gpu {
    /// Picks an adapter (options, then environment) and opens a device on it (blocking; see
    /// [`Gpu::new_async`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new(options: &GpuOptions) -> Result<Gpu> {
        block_on(Self::new_async(options))
    }

    /// Picks an adapter (options, then environment) and opens a device on it; the form a
    /// browser page calls (the blocking [`Gpu::new`] is native-only).
    pub async fn new_async(options: &GpuOptions) -> Result<Gpu> {
        let options = options.clone().or_env();
        let adapter = choose_adapter(&options).await?;
        let mut gpu = Self::open_async(&adapter).await?;
        if let Some(t) = options.timeout {
            gpu.timeout = t;
        }
        Ok(gpu)
    }

    /// Opens a device on `adapter` (blocking; see [`Gpu::open_async`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn open(adapter: &wgpu::Adapter) -> Result<Gpu> {
        block_on(Self::open_async(adapter))
    }

    /// Opens a device on `adapter` with the wanted features it supports and its full limits.
    pub async fn open_async(adapter: &wgpu::Adapter) -> Result<Gpu> {
        let info = adapter.get_info();
        #[cfg(target_arch = "wasm32")]
        web::request_subgroups();
        let features = adapter.features() & wanted_features();
        let desc = wgpu::DeviceDescriptor {
            label: Some("simtlab"),
            required_features: features,
            required_limits: adapter.limits(),
            ..Default::default()
        };
        let (device, queue) =
            adapter.request_device(&desc).await.map_err(|e| Error::gpu(format!("opening a device on {}", describe(&info)), e))?;
        Self::from_device_async(device, queue, info).await
    }

    /// Wraps a device and queue owned by the host application (blocking; see
    /// [`Gpu::from_device_async`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn from_device(device: wgpu::Device, queue: wgpu::Queue, info: wgpu::AdapterInfo) -> Result<Gpu> {
        block_on(Self::from_device_async(device, queue, info))
    }

    /// Wraps a device and queue owned by the host application (embedded mode). simtlab never
    /// creates its own instance here; it uses only the features the host enabled. Measuring
    /// the subgroup width runs one tiny kernel.
    pub async fn from_device_async(device: wgpu::Device, queue: wgpu::Queue, info: wgpu::AdapterInfo) -> Result<Gpu> {
        let mut gpu = Gpu {
            caps: Capabilities::from_device(&device, &info),
            device,
            queue,
            info,
            timeout: DEFAULT_TIMEOUT,
            min_timed: Default::default(),
            pipelines: Default::default(),
            abandoned: Default::default(),
            cancel: Default::default(),
            remembered: Default::default(),
        };
        gpu.caps.subgroup_size = capabilities::measure_subgroup_size(&gpu).await?;
        Ok(gpu)
    }

    /// Runs `record` inside a validation error scope and returns its value, or the first
    /// validation error as [`Error::Gpu`] with `what` as its context.
    pub async fn checked<T>(&self, what: &str, record: impl FnOnce() -> T) -> Result<T> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let value = record();
        match scope.pop().await {
            Some(e) => Err(Error::gpu(what, e)),
            None => Ok(value),
        }
    }

    /// [`Gpu::checked`] without waiting: native backends report validation errors at once,
    /// so the scope's answer is ready. Where it is not (the browser), the object is returned
    /// and an error in it surfaces where it is used (an invalid bind group fails the
    /// encoder that records it). Never blocks.
    pub(crate) fn checked_now<T>(&self, what: &str, record: impl FnOnce() -> T) -> Result<T> {
        use futures::FutureExt;
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let value = record();
        match scope.pop().now_or_never() {
            Some(Some(e)) => Err(Error::gpu(what, e)),
            _ => Ok(value),
        }
    }

    /// From now on, a timed [`Gpu::run`] whose device time comes out below `seconds` runs its
    /// steps again, repeated back to back in one submission until they last about `seconds`,
    /// and reports the time per repetition. A GPU sampled with one short submission at a
    /// time idles between samples and its clock governor settles below the working clock
    /// (on an H100, sub-millisecond kernels timed one by one ran up to 2× slower). The steps
    /// must give the same result when repeated (every benchmark's do: they clear what they
    /// accumulate). 0 turns it off (the default).
    pub fn set_min_timed_seconds(&self, seconds: f64) {
        let s = if seconds.is_finite() && seconds > 0.0 { seconds } else { 0.0 };
        self.min_timed.store(s.to_bits(), std::sync::atomic::Ordering::Relaxed);
    }

    /// The minimum timed duration set by [`Gpu::set_min_timed_seconds`] (0 = off).
    pub fn min_timed_seconds(&self) -> f64 {
        f64::from_bits(self.min_timed.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// From now on, once `flag` is set every submission on this device fails with
    /// [`Error::Cancelled`] before it reaches the queue, so a run stops within the sample it
    /// is in, wherever that is (a warm-up, a timed sample, a check); None stops watching.
    /// One flag at a time: the run that installs it owns the device until it ends.
    pub fn set_cancel(&self, flag: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) {
        *self.cancel.write().unwrap_or_else(|e| e.into_inner()) = flag;
    }

    /// True once the flag of [`Gpu::set_cancel`] is set.
    pub fn cancel_requested(&self) -> bool {
        let flag = self.cancel.read().unwrap_or_else(|e| e.into_inner());
        flag.as_ref().is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// The wgpu device (simtlab's own or the embedding app's).
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue work is submitted on.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The adapter the device came from.
    pub fn info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }

    /// Features, limits and measured subgroup width.
    pub fn caps(&self) -> &Capabilities {
        &self.caps
    }

    /// Longest wait for one submission before it counts as hung ([`DEFAULT_TIMEOUT`] unless
    /// set by [`GpuOptions::timeout`] or [`Gpu::set_timeout`]).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Changes how long one submission may run before it counts as hung (for a device opened
    /// with [`Gpu::open`] or wrapped with [`Gpu::from_device`], which start at [`DEFAULT_TIMEOUT`]).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// One line naming the adapter for records and logs.
    pub fn adapter_name(&self) -> String {
        format!("{} ({:?})", adapter_label(&self.info), self.info.backend)
    }

    /// Keeps `value` under `key` for as long as this `Gpu` lives, so that a measurement of the
    /// device (the persistent-threads capability check) is made once and every later run on it
    /// agrees with it; a later value under the same key replaces it.
    pub fn remember<T: Send + Sync + 'static>(&self, key: &str, value: T) {
        if let Ok(mut kept) = self.remembered.lock() {
            kept.insert(key.to_string(), std::sync::Arc::new(value));
        }
    }

    /// The value [`Gpu::remember`] kept under `key`, if it is a `T`.
    pub fn remembered<T: Clone + 'static>(&self, key: &str) -> Option<T> {
        self.remembered.lock().ok()?.get(key)?.downcast_ref::<T>().cloned()
    }

    /// Loop iterations one invocation may run in total before the driver silently cuts its
    /// loops short: llvmpipe/lavapipe stop at 65535; None where no such limit is known.
    pub fn loop_iteration_limit(&self) -> Option<u64> {
        self.info.name.contains("llvmpipe").then_some(65535)
    }

    /// Subgroup width for probes and emulation; errors when subgroups are missing.
    pub fn require_subgroups(&self) -> Result<u32> {
        self.caps.subgroup_size.ok_or_else(|| Error::Unsupported {
            what: "subgroup operations".into(),
            adapter: self.adapter_name(),
            hint: "use a Vulkan adapter (on a machine without a GPU: `apt-get install mesa-vulkan-drivers libvulkan1` for lavapipe, then WGPU_BACKEND=vulkan)".into(),
        })
    }
}

/// Reports every adapter with its measured capabilities (`simtlab devices`).
#[cfg(not(target_arch = "wasm32"))]
pub fn survey(options: &GpuOptions) -> Result<Vec<AdapterReport>> {
    let options = options.clone().or_env();
    let mut out = Vec::new();
    for (index, adapter) in select_adapters(adapters(&options)?, options.adapter.as_deref())? {
        let info = adapter.get_info();
        let (capabilities, error) = match Gpu::open(&adapter) {
            Ok(gpu) => (Some(gpu.caps), None),
            Err(e) => (None, Some(e.to_string())),
        };
        out.push(AdapterReport {
            index,
            pci_bus: info.device_pci_bus_id.clone(),
            name: info.name.clone(),
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            driver: info.driver.clone(),
            driver_info: info.driver_info.clone(),
            capabilities,
            error,
        });
    }
    if out.is_empty() {
        return Err(no_adapter(&options, block_on(available_adapters())));
    }
    Ok(out)
}
