//! Thread-data remapping (Zhang et al., ICS'10): give the threads of a warp elements that take
//! the same path, so the warp stops diverging.
//!
//! Everything here is plain data in, plain data out; the GPU side is two WGSL pieces:
//! `shaders/shared/remap.wgsl` (`remapped_id`, for kernels reading through an index buffer)
//! and `shaders/remap/` (building the index buffer on the GPU).
//!
//! # Using it with your own kernel
//!
//! 1. **Classify** each thread's input: [`classify_loops`] for a loop whose trip count varies
//!    per thread, [`classify_paths`] for `if` conditions (bit k of a path vector = outcome of
//!    condition k), or [`Classes::from_ids`] for your own classes.
//! 2. **Decide** whether it pays: [`Profile::from_loops`] / [`Profile::from_paths`] emulate the
//!    divergence before and after, and [`decide`] weighs the gain against each mechanism's
//!    cost ([`CostModel`]). A kernel that does not diverge gets [`Strategy::None`]. Once a
//!    strategy has been measured on the adapter, [`Calibration::learn`] keeps how far the
//!    measurement was from the model, and [`decide_calibrated`] weighs that in the next time.
//! 3. **Remap**, one of:
//!    - *Reference redirection*: upload [`redirect_index`], bind it at [`REMAP_BINDING`] (the
//!      import declares it), define `REMAP`,
//!      `#import remap`, and start the kernel with `let id = remapped_id(gid);`, using `id`
//!      wherever the kernel used `gid` — in data indices and, per the paper's IDArray rule,
//!      in arithmetic too. Outputs written at `id` land in the original order.
//!    - *Layout transformation*: `let plan = LamPlan::new(&classes, subgroup_size)?;` upload
//!      `plan.permute(&input)?` for each per-thread input, run the kernel unchanged, and read
//!      back `plan.restore(&output)?` for each per-thread output. LAM moves only the elements
//!      that must move; memory accesses stay coalesced.
//!    - *GPU regroup*: [`GpuRegroup`] classifies trip counts already on the GPU and builds
//!      the index in five dispatches of the `shaders/remap/` kernels (geometry from
//!      [`regroup_dispatch`]); the result is the same index as [`redirect_index`], used as
//!      above.
//!    - *Tile sort*: no index at all: `#import tile_sort` (`shaders/shared/tile_sort.wgsl`)
//!      and let each workgroup sort its own tile of elements by class in workgroup memory
//!      before working through it; [`tile_index`] is the order it produces. It sorts only
//!      within a tile ([`TILE_ELEMENTS`] by default), so a subgroup gets one class only when
//!      the tile holds a subgroup's worth of it.
//!    - *Deferral*: no index and no sort: loops of at least [`Profile::defer_from`] trips
//!      are appended to a queue in the first pass and run side by side in a second,
//!      indirect dispatch (`DEFER` in `shaders/micro/data_loop.wgsl` shows the pattern);
//!      [`deferred_trips`] is what the lanes then see.
//! 4. **Hide the cost** for chunked work with a [`Pipeline`]: workers compute the mapping of
//!    chunk i+Δ while the GPU runs chunk i; a mapping that is late runs unmapped, correctly.
//! 5. **Measure** the original against the remapped variant: [`RunOptions`] is what a
//!    remappable kernel's prepared run takes, [`VariantRun`] the record of each variant.
//!
//! ```
//! use simtlab::remap::{classify_loops, Bucketing, LamPlan, redirect_index, gather};
//! let trips = [9, 1, 9, 9, 1, 1, 9, 1];
//! let classes = classify_loops(&trips, 10, Bucketing::EqualWidth)?;
//! // LAM keeps each warp's dominant class in place and swaps the two strays.
//! let plan = LamPlan::new(&classes, 4)?;
//! assert_eq!(plan.permute(&trips)?, vec![9, 9, 9, 9, 1, 1, 1, 1]);
//! assert_eq!(plan.moved(), 2);
//! // The redirect index sorts by class (ascending trip count for loops).
//! assert_eq!(gather(&trips, &redirect_index(&classes))?, vec![1, 1, 1, 1, 9, 9, 9, 9]);
//! # Ok::<(), simtlab::Error>(())
//! ```

mod calibration;
mod classes;
mod control;
mod defer;
mod gpu;
mod gpu_regroup;
mod lam;
mod pipeline;
mod redirect;
mod remapper;
mod shader;
mod shader_run;
mod variant;

pub use calibration::{Calibration, Learned, Lesson};
pub use classes::{classify_loops, classify_paths, dense_classes, Bucketing, ClassKey, Classes, MAX_CLASSES, MAX_ELEMENTS};
pub use control::{decide, decide_calibrated, CostModel, Deadline, Decision, Prediction, Profile, Strategy};
pub use defer::{best_defer_threshold, deferred_trips};
pub use gpu::{classify_trips_reference, equal_width, GpuRegroup};
pub use gpu_regroup::{
    gpu_regroup_reference, regroup_dispatch, workgroup_grid, RegroupDispatch, RegroupParams, GPU_SUBTILES, GPU_TILE, GPU_WORKGROUP_SIZE,
    MAX_GPU_CLASSES, MAX_TILE, MAX_WORKGROUPS_PER_DIMENSION, SCAN_BLOCK, SCAN_WORKGROUP_SIZE,
};
pub use lam::{Label, LamPlan};
pub use pipeline::{ChunkOutcome, ChunkTiming, Pipeline, PipelineReport, RemapSpan};
pub use redirect::{gather, in_order, inverse, redirect_index, redirect_index_of, tile_index, MAX_TILE_CLASSES, TILE_ELEMENTS};
pub use remapper::{RemapUpdate, Remapper, RemapperOptions};
pub use shader::{remap_shader, RemapShaderOptions, RemappedShader, INDEX_NAME};
#[cfg(not(target_arch = "wasm32"))]
pub use shader_run::remap_run;
pub use shader_run::{remap_run_async, RemapRequest, RemapRun, RemapSide, SIGNATURE_EVENTS};
pub use variant::{host_seconds, DivergenceExtra, RunOptions, VariantRun, Variants, ORIGINAL, REMAP_BINDING};

#[cfg(test)]
mod tests;
