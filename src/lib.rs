#![warn(missing_docs)]
//! simtlab: measure, explain and remove SIMT divergence and scheduling limits on any GPU that
//! wgpu reaches (Vulkan, Metal, DX12, GL).
//!
//! - [`gpu`]: the GPU context ([`gpu::Gpu::new`] standalone, [`gpu::Gpu::from_device`] embedded),
//!   shader loading and timing.
//! - [`harness`]: the benchmark protocol and result records.
//! - [`divergence`]: SIMT efficiency, branch efficiency and divergence ratio, from the GPU
//!   probe or from host emulation at any width.
//! - [`occupancy`]: the analytical occupancy model (G80 to Hopper, AMD).
//! - [`profile`]: divergence per branch of any WGSL compute shader, instrumented without edits
//!   (`simtlab profile`, and [`profile::Profiler`] inside an app).
//! - [`remap`]: thread-data remapping (redirection, LAM layout, GPU regrouping, pipelining).
//! - [`workload`]: the registry of everything runnable (`simtlab list`, `simtlab run NAME`).
//! - [`kernels`]: the benchmark kernel families, each with its CPU reference.
//! - [`pt`]: persistent threads: capability check, tiers, launch sizing, status and fallback;
//!   Gupta's use cases and the barrier and queue benchmarks on them.
//! - `ui` (features `overlay` and `gui`): egui widgets for any egui host, and the desktop
//!   explorer behind `simtlab gui`.
//! - `experiments` and the rendering half of [`report`] (feature `report`): the papers' sweeps,
//!   their published values, markdown and PNG plots.
//!
//! Features: `cli` (the `simtlab` binary), `report`, `overlay`, `gui`; the defaults hold them
//! all. An app that embeds the library takes `default-features = false`.

pub mod divergence;
pub mod error;
#[cfg(feature = "report")]
pub mod experiments;
pub mod gpu;
pub mod harness;
pub mod kernels;
pub mod occupancy;
pub mod profile;
pub mod pt;
pub mod remap;
pub mod report;
pub mod rng;
#[cfg(feature = "overlay")]
pub mod ui;
pub mod workload;

pub use error::{Error, Result};
pub use gpu::{Gpu, GpuOptions};
