//! The one bench path of the kernels whose variants are the original order (`org`) and the
//! host-side reference redirection (`redirect`): LBM, GAFORT, MarchingCubes and BlackScholes.
//!
//! A family says what is particular to it ([`RedirectKernel`]: inputs, CPU reference,
//! redirection index, prepared run, check, emulation, throughput), in its impl of the trait and
//! nowhere else; [`bench()`] does the rest
//! the same way for all of them (timing, check, GPU probe, emulation at width 32, records),
//! and [`recorded`] offers any of them for recording into a caller's encoder. Every family's
//! prepared run implements [`crate::gpu::PreparedRun`], and [`crate::gpu::Checked`] records any
//! of them with its check.

use crate::divergence::{Divergence, ProbeRecords};
use crate::error::Result;
use crate::gpu::shader::Entry;
use crate::gpu::{Bind, BufferKind, Checked, Gpu, GpuBuffer, Kernel, PreparedRun, Step};
use crate::harness::footprint::Footprint;
use crate::harness::{Check, Throughput};
use crate::remap::{RunOptions, REMAP_BINDING};
use crate::rng::Rng;
use serde::Serialize;
use std::sync::Arc;
#[cfg(not(target_arch = "wasm32"))]
use {
    crate::divergence::{self, DivergenceReport, EMULATION_WIDTH},
    crate::harness::{self, Protocol, Record},
    crate::remap::{self, VariantRun, Variants},
};

/// A family's typed configuration: checked, sized and seeded the same way in every family.
pub trait RedirectConfig: Serialize {
    /// Err ([`crate::error::Error::Invalid`]) naming the first parameter out of range and the
    /// range to use.
    fn validate(&self) -> Result<()>;
    /// What a run allocates on the device and on the host.
    fn footprint(&self) -> Footprint;
    /// The seed the inputs come from.
    fn seed(&self) -> u64;

    /// Err unless the configuration is valid and its footprint fits the host and `gpu`.
    fn check_fits(&self, gpu: &Gpu) -> Result<()> {
        self.validate()?;
        self.footprint().check(gpu)
    }
    /// The input generator of a valid configuration whose host footprint fits.
    fn rng(&self) -> Result<Rng> {
        self.validate()?;
        self.footprint().check_host()?;
        Ok(Rng::new(self.seed()))
    }
}

/// What is particular to one family of [`bench()`].
pub trait RedirectKernel {
    /// The family's typed configuration (serialised into each record's `params`).
    type Config: RedirectConfig;
    /// The generated inputs.
    type Input;
    /// The CPU reference's results.
    type Expected;
    /// A prepared run.
    type Run: PreparedRun;
    /// The record's `family`.
    const FAMILY: &'static str;
    /// The record's `kernel`.
    const KERNEL: &'static str;

    /// Inputs generated from the configuration's seed.
    fn generate(cfg: &Self::Config) -> Result<Self::Input>;
    /// The CPU reference.
    fn reference(cfg: &Self::Config, input: &Self::Input) -> Self::Expected;
    /// The reference-redirection index: thread t works on element `index[t]`.
    fn redirect(cfg: &Self::Config, input: &Self::Input, expected: &Self::Expected) -> Result<Vec<u32>>;
    /// Uploads and binds one run.
    fn prepare(gpu: &Gpu, cfg: &Self::Config, input: &Self::Input, options: RunOptions) -> Result<Self::Run>;
    /// Compares the bytes read from [`PreparedRun::outputs`] with the reference.
    fn check(cfg: &Self::Config, expected: &Self::Expected, outputs: &[Vec<u8>]) -> Check;
    /// Host emulation of the kernel's divergence at `width`, threads in `order`.
    fn emulate(cfg: &Self::Config, input: &Self::Input, expected: &Self::Expected, order: Option<&[u32]>, width: u32)
        -> Result<Divergence>;
    /// Work per second from the median time.
    fn throughput(cfg: &Self::Config, median_seconds: f64) -> Throughput;
    /// The family's own figures for `extra`, measured on a prepared run where needed (none by
    /// default).
    #[cfg(not(target_arch = "wasm32"))]
    fn extra(
        _gpu: &Gpu,
        _cfg: &Self::Config,
        _input: &Self::Input,
        _expected: &Self::Expected,
        _run: &Self::Run,
        _protocol: &Protocol,
    ) -> Result<serde_json::Value> {
        Ok(serde_json::json!({}))
    }
}

/// A family's timed kernel, bound: its own buffers at their slots, the redirection index at
/// [`REMAP_BINDING`] and the probe's records, where the run's options ask for them.
#[derive(Debug)]
pub struct BoundKernel {
    kernel: Arc<Kernel>,
    bind: wgpu::BindGroup,
    grid: [u32; 3],
    #[cfg_attr(target_arch = "wasm32", expect(dead_code, reason = "read back by the native divergence"))]
    probe: Option<ProbeRecords>,
    _remap: Option<GpuBuffer<u32>>,
}

impl BoundKernel {
    /// Compiles `entry` for `options`, sizes a grid of `threads` invocations and binds `slots`
    /// (with the probe's `sites`); Err when the index does not have one entry per element of
    /// `elements`, the probe finds no subgroups, or a buffer exceeds the device's limits.
    pub fn new(
        gpu: &Gpu,
        entry: Entry,
        options: &RunOptions,
        threads: usize,
        elements: usize,
        sites: usize,
        slots: &[(u32, &dyn Bind)],
    ) -> Result<BoundKernel> {
        options.check_remap(elements)?;
        let (defines, width) = options.defines(gpu)?;
        let kernel = gpu.kernel(entry, &defines)?;
        let workgroup_size = kernel.workgroup_size[0];
        let grid = gpu.grid(threads as u64, workgroup_size)?;
        let remap = options.remap.map(|r| gpu.buffer("remap index", r, BufferKind::Storage)).transpose()?;
        let probe = ProbeRecords::new(gpu, width, sites, grid, workgroup_size)?;
        let mut slots = slots.to_vec();
        slots.extend(remap.as_ref().map(|r| (REMAP_BINDING, r as &dyn Bind)));
        slots.extend(probe.as_ref().map(ProbeRecords::slot));
        let bind = kernel.bind_at(gpu, &slots)?;
        Ok(BoundKernel { kernel, bind, grid, probe, _remap: remap })
    }

    /// One dispatch of the kernel over its grid.
    pub fn step(&self) -> Step<'_> {
        Step::dispatch(&self.kernel, &self.bind, self.grid)
    }

    /// The probe's counts after a run ([`PreparedRun::divergence`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn divergence(&self, gpu: &Gpu) -> Result<Option<Divergence>> {
        divergence::read_probe(gpu, &self.probe)
    }
}

/// Reads every output of `run` (blocking).
#[cfg(not(target_arch = "wasm32"))]
pub fn read_outputs(gpu: &Gpu, run: &impl PreparedRun) -> Result<Vec<Vec<u8>>> {
    run.outputs().into_iter().map(|(buffer, bytes)| gpu.read_bytes(buffer, bytes)).collect()
}

/// Output `i` of [`read_outputs`] as values of `T` (empty when there is no such output, which
/// the check then reports as a length mismatch).
pub fn output_as<T: bytemuck::Pod>(outputs: &[Vec<u8>], i: usize) -> Vec<T> {
    outputs.get(i).map(|b| bytemuck::pod_collect_to_vec(b)).unwrap_or_default()
}

/// `org` and, when `which` includes it, `redirect`: each timed, checked against the CPU
/// reference, its divergence from the GPU probe (where the adapter has subgroups) and
/// emulated at width 32.
#[cfg(not(target_arch = "wasm32"))]
pub fn bench<K: RedirectKernel>(gpu: &Gpu, cfg: &K::Config, which: Variants, protocol: &Protocol) -> Result<Vec<Record>> {
    cfg.check_fits(gpu)?;
    let input = K::generate(cfg)?;
    let expected = K::reference(cfg, &input);
    let mut variants: Vec<(&str, Option<Vec<u32>>, f64)> = vec![(remap::ORIGINAL, None, 0.0)];
    if which.includes_redirect() {
        let (index, secs) = remap::host_seconds(|| K::redirect(cfg, &input, &expected));
        variants.push(("redirect", Some(index?), secs));
    }
    let mut records = Vec::new();
    for (variant, order, remap_seconds) in variants {
        let order = order.as_deref();
        let run = K::prepare(gpu, cfg, &input, RunOptions { probe: false, remap: order })?;
        let stats = harness::measure(protocol, || run.dispatch(gpu))?;
        let check = K::check(cfg, &expected, &read_outputs(gpu, &run)?);
        let mut extra = K::extra(gpu, cfg, &input, &expected, &run, protocol)?;
        drop(run);
        let native = if gpu.caps().subgroup_size.is_some() {
            let probed = K::prepare(gpu, cfg, &input, RunOptions { probe: true, remap: order })?;
            gpu.run(&probed.steps(), false)?;
            probed.divergence(gpu)?
        } else {
            None
        };
        let w32 = K::emulate(cfg, &input, &expected, order, EMULATION_WIDTH)?;
        if let Some(map) = extra.as_object_mut() {
            map.insert("remap_host_seconds".into(), remap_seconds.into());
        }
        records.push(
            VariantRun {
                family: K::FAMILY,
                kernel: K::KERNEL.into(),
                variant: variant.into(),
                params: serde_json::to_value(cfg).unwrap_or_default(),
                seed: cfg.seed(),
                throughput: K::throughput(cfg, stats.median),
                stats,
                check,
                divergence: DivergenceReport::new(native.as_ref(), &w32),
                extra,
            }
            .record(gpu),
        );
    }
    Ok(records)
}

/// A [`RedirectKernel`]'s original variant prepared for recording into a caller's encoder (as
/// the registry prepares it): the inputs generated, the reference computed, the run prepared
/// (no probe, no remap).
pub fn recorded<K: RedirectKernel>(gpu: &Gpu, cfg: K::Config) -> Result<Checked<K::Run>>
where
    K::Config: 'static,
    K::Expected: 'static,
{
    cfg.check_fits(gpu)?;
    let input = K::generate(&cfg)?;
    let expected = K::reference(&cfg, &input);
    let run = K::prepare(gpu, &cfg, &input, RunOptions::default())?;
    Ok(Checked::new(run, move |outputs| K::check(&cfg, &expected, outputs)))
}
