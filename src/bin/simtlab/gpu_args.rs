//! Which adapter a command opens, and how long it may wait for it.

use clap::Args;
use simtlab::gpu::{self, GpuOptions};
use simtlab::{Gpu, Result};
use std::time::Duration;

/// Which adapter to open (commands that list or open adapters).
#[derive(Args, Clone, Default)]
pub struct AdapterArgs {
    /// Backends to use (vulkan, gl, metal, dx12; comma list). Default: WGPU_BACKEND or all.
    #[arg(long, global = true)]
    pub backend: Option<String>,
    /// Adapter to use: #N (index in `simtlab devices`), a PCI bus id (e.g. 0000:3b:00.0), or
    /// part of its name. Default: WGPU_ADAPTER_NAME or the best adapter.
    #[arg(long, global = true)]
    pub adapter: Option<String>,
}

/// The adapter and how long to wait for it (commands that run GPU work).
#[derive(Args, Clone)]
pub struct GpuArgs {
    #[command(flatten)]
    pub adapter: AdapterArgs,
    /// Seconds to wait for one GPU submission before reporting a hang (0.01 to 86400).
    #[arg(long, global = true, default_value_t = 60.0, value_parser = parse_timeout)]
    pub timeout: f64,
}

/// GPU options of the benchmarks: the adapter, the timeout and the timed-run floor.
#[derive(Args, Clone)]
pub struct BenchGpuArgs {
    #[command(flatten)]
    pub gpu: GpuArgs,
    /// Benchmarks on a GPU (not a CPU adapter): a timed run shorter than this many milliseconds
    /// is repeated back to back in one submission and averaged, so that the GPU stays at its
    /// working clock (0: time each run alone; at most 10000).
    #[arg(long, global = true, default_value_t = 5.0, value_parser = parse_min_sample_ms)]
    pub min_sample_ms: f64,
}

pub fn parse_number(s: &str) -> std::result::Result<f64, String> {
    s.trim().parse::<f64>().map_err(|_| format!("'{s}' is not a number"))
}

pub fn parse_timeout(s: &str) -> std::result::Result<f64, String> {
    parse_in(s, 0.01..=86400.0, "seconds")
}

pub fn parse_min_sample_ms(s: &str) -> std::result::Result<f64, String> {
    parse_in(s, 0.0..=10000.0, "milliseconds")
}

/// A number within `range`, or what to give instead.
fn parse_in(s: &str, range: std::ops::RangeInclusive<f64>, unit: &str) -> std::result::Result<f64, String> {
    let v = parse_number(s)?;
    if v.is_finite() && range.contains(&v) {
        Ok(v)
    } else {
        Err(format!("'{s}': give {unit} between {} and {}", range.start(), range.end()))
    }
}

impl AdapterArgs {
    pub fn options(&self, timeout: Option<f64>) -> GpuOptions {
        GpuOptions { backend: self.backend.clone(), adapter: self.adapter.clone(), timeout: timeout.map(Duration::from_secs_f64) }
    }
}

impl GpuArgs {
    pub fn options(&self) -> GpuOptions {
        self.adapter.options(Some(self.timeout))
    }
}

/// Opens the adapter for a benchmark and says which one it is.
pub fn open_gpu(args: &BenchGpuArgs) -> Result<Gpu> {
    let gpu = Gpu::new(&args.gpu.options())?;
    if gpu.info().device_type != wgpu::DeviceType::Cpu {
        gpu.set_min_timed_seconds(args.min_sample_ms / 1e3);
    }
    eprintln!(
        "adapter: {} [{}], subgroup size {}",
        gpu.adapter_name(),
        gpu.info().driver,
        match gpu.caps().subgroup_size {
            Some(w) => w.to_string(),
            None => "n/a (no subgroups: divergence comes from host emulation; for a probe on a CPU machine install \
                 lavapipe: apt-get install mesa-vulkan-drivers libvulkan1, as root)"
                .into(),
        }
    );
    Ok(gpu)
}

pub fn devices(args: &AdapterArgs, json: bool) -> Result<()> {
    let reports = gpu::survey(&args.options(None))?;
    if json {
        println!("{}", crate::output::json_text(&reports)?);
        return Ok(());
    }
    for r in &reports {
        let bus = if r.pci_bus.is_empty() { String::new() } else { format!(" — PCI {}", r.pci_bus) };
        println!("#{} {} — {} {}{bus} — driver {} {}", r.index, r.name, r.backend, r.device_type, r.driver, r.driver_info);
        match (&r.capabilities, &r.error) {
            (Some(c), _) => {
                let size = c.subgroup_size.map_or("none".to_string(), |w| {
                    format!("{w} (measured; adapter says {}..{})", c.subgroup_min_size, c.subgroup_max_size)
                });
                println!("  subgroups: {size}; barrier: {}", c.subgroup_barrier);
                println!("  timestamps: {} (inside passes: {}); @coherent: {}", c.timestamps, c.timestamps_inside_passes, c.coherent);
                println!(
                    "  max storage binding: {} MiB; max workgroups/dim: {}; max invocations/workgroup: {}; workgroup memory: {} KiB",
                    c.max_storage_buffer_binding_size >> 20,
                    c.max_compute_workgroups_per_dimension,
                    c.max_compute_invocations_per_workgroup,
                    c.max_compute_workgroup_storage_size >> 10
                );
            }
            (None, Some(e)) => println!("  could not open: {e}"),
            (None, None) => {}
        }
    }
    Ok(())
}
