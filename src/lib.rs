#![warn(missing_docs)]
//! simtlab: measure, explain and remove SIMT divergence and scheduling limits on any GPU that
//! wgpu reaches (Vulkan, Metal, DX12, GL).
//!
//! - [`gpu`]: the GPU context ([`gpu::Gpu::new`] standalone, [`gpu::Gpu::from_device`] embedded),
//!   shader loading and timing; [`Recording`], work recorded into an app's encoder and checked,
//!   and the one contract of a prepared kernel run beneath it ([`PreparedRun`], [`Checked`]).
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
//!
//! # Tutorial: your own kernel, timed, checked and profiled
//!
//! An app brings its WGSL; simtlab compiles it, times it with the device's timestamps where
//! it has them, and counts the divergence of each of its branches without an edit to the text.
//! Embedded in an app, [`Gpu::from_device`] wraps the device the app already has.
//!
//! ```
//! use simtlab::gpu::{shader::preprocess_text, BufferKind};
//! use simtlab::profile::{profile, BindingSpec, ProfileRequest, ShaderDispatch};
//! use simtlab::{Gpu, GpuOptions, Step};
//!
//! # fn main() -> simtlab::Result<()> {
//! // steps of the Collatz sequence of each value: a data-dependent loop, lanes leave at
//! // different times
//! let wgsl = "@group(0) @binding(0) var<storage, read_write> v: array<u32>;
//! @compute @workgroup_size(64)
//! fn main(@builtin(global_invocation_id) id: vec3<u32>) {
//!     var n = v[id.x];
//!     var k = 0u;
//!     while (n > 1u) {
//!         if (n % 2u == 0u) { n = n / 2u; } else { n = 3u * n + 1u; }
//!         k += 1u;
//!     }
//!     v[id.x] = k;
//! }";
//! // a machine without an adapter has nothing to run this on
//! let Ok(gpu) = Gpu::new(&GpuOptions::default()) else { return Ok(()) };
//!
//! // 1. compile, bind, dispatch and time; read the results back
//! let kernel = gpu.compile(&preprocess_text("collatz.wgsl", wgsl, &[], &|_| None)?, "collatz", "main", &[])?;
//! let values: Vec<u32> = (1..=256).collect();
//! let buffer = gpu.buffer("values", &values, BufferKind::Storage)?;
//! let bind = kernel.bind(&gpu, &[&buffer])?;
//! let timing = gpu.run(&[Step::dispatch(&kernel, &bind, [4, 1, 1])], true)?;
//! let steps = gpu.read(&buffer)?;
//! assert_eq!((steps[0], steps[5], steps[26]), (0, 8, 111)); // 1, 6 and 27
//! println!("{} µs on {}", timing.seconds * 1e6, gpu.adapter_name());
//!
//! // 2. the same shader's divergence per branch: the GPU's own subgroups where it has them,
//! //    subgroups emulated on the host elsewhere; the outputs are checked to be unchanged
//! let mut dispatch = ShaderDispatch::new("collatz.wgsl", wgsl, "main", [4, 1, 1]);
//! dispatch.bindings = vec![("v".into(), BindingSpec::Bytes(bytemuck::cast_slice(&values).to_vec()))];
//! let run = profile(&gpu, &ProfileRequest::new(dispatch))?;
//! assert!(run.outputs_identical);
//! assert!(run.summary.simt_efficiency > 0.0 && run.summary.simt_efficiency < 1.0);
//! for row in &run.summary.sites {
//!     println!("line {}: {} ({:.0} % SIMT efficiency)", row.place.line, row.place.source, 100.0 * row.simt_efficiency);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! In a frame loop, [`Profiler`] does the same without ever blocking the frame, and
//! [`Remapper`] regroups the work of a divergent kernel so that lanes of a subgroup agree.

pub mod divergence;
mod error;
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
pub use gpu::{Checked, Gpu, GpuOptions, Kernel, PreparedRun, Recording, Step};
pub use harness::{Check, Record};
pub use profile::{ProfileRequest, Profiler};
pub use remap::Remapper;
