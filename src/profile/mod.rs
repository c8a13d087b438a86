//! Profiling any WGSL compute shader: divergence per branch without editing it.
//!
//! [`instrument`] parses the user's WGSL with naga, finds every `if` condition, loop exit
//! test, `switch` selector and called function, and wraps each in a probe call at naga's
//! spans (the rest of the text is untouched, so the shader computes what it did). Each
//! [`Site`] keeps its line, column and source text. The probe's records buffer goes at a
//! group the shader does not use.
//!
//! With subgroups the probe counts per subgroup with subgroup votes ([`Counting::Subgroups`]): per site
//! `evaluations` (subgroup-steps at which a lane evaluated it), `active_lanes`, `taken_lanes`
//! and `uniform_evaluations` ([`SiteCounts`]). Without (GL), each invocation records its
//! outcomes and subgroups of any width are emulated on the host ([`Counting::Trace`]); the
//! [`Counts`] say which.
//!
//! Two ways in: [`profile`] runs a shader from binding specs on a [`crate::Gpu`] (the
//! `simtlab profile` command), and [`Profiler`] works inside an app on its own device,
//! recording into its encoder without ever blocking. [`compiled_kernels`] reads the register
//! counts the driver gives simtlab's own kernels (see [`crate::gpu::DriverStatistics`]).
//!
//! Using it with your own kernel:
//! ```
//! use simtlab::profile::{instrument, InstrumentOptions, SiteKind};
//! let wgsl = "@group(0) @binding(0) var<storage, read_write> data: array<u32>;
//! @compute @workgroup_size(64)
//! fn main(@builtin(global_invocation_id) id: vec3<u32>) {
//!     var n = data[id.x];
//!     while (n > 1u) {
//!         if (n % 2u == 0u) { n = n / 2u; } else { n = 3u * n + 1u; }
//!     }
//!     data[id.x] = n;
//! }";
//! let probed = instrument("collatz.wgsl", wgsl, "main", &InstrumentOptions::default())?;
//! let kinds: Vec<_> = probed.sites.iter().map(|s| (s.kind, s.line, s.source.as_str())).collect();
//! assert_eq!(kinds, [(SiteKind::Loop, 5, "n > 1u"), (SiteKind::If, 6, "n % 2u == 0u")]);
//! assert_eq!(probed.slot, (1, 0)); // the group after the shader's own
//! # Ok::<(), simtlab::Error>(())
//! ```

mod bindings;
mod compiled;
mod counts;
mod instrument;
mod profiler;
mod run;
mod sites;
mod table;

pub use bindings::{contents, contents_within, entry_bindings, scalar_name, BindingInfo, BindingSpec, Resource, TextureFill, TextureSpec};
pub use compiled::{compiled_kernels, CompiledKernel};
pub use counts::{decode, loop_history_needed, CountSource, Counts, Sampling, SiteCounts};
pub use instrument::{
    instrument, parse, Counting, InstrumentOptions, Instrumented, DEFAULT_LOOP_HISTORY, DEFAULT_TRACE_EVENTS, MAX_LOOP_HISTORY,
};
// what remapping a user's shader shares with instrumenting it
pub(crate) use instrument::{free_slot, parse_source, workgroup_size, HEADER_WORDS};
pub use profiler::{Profiler, ProfilerOptions};
pub(crate) use run::trace_async;
#[cfg(not(target_arch = "wasm32"))]
pub use run::{profile, profile_with};
pub use run::{profile_async, LoopLimitReached, ProfileRequest, ProfileRun, ProfileStep, ShaderDispatch};
pub(crate) use sites::{analyse_sized, is_ident, line_column, mask_comments};
pub use sites::{Case, Site, SiteKind};
pub use table::{summary, summary_with_cases, table, CaseRow, SampleError, SiteRow, Summary};
