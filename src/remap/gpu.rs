//! On-GPU regrouping with no host round trip: classify (trip counts → equal-width classes),
//! per-tile class histogram, exclusive scan, stable scatter of an index array. The index feeds
//! a kernel's REMAP variant (`remap_index`), all in one submission.

use super::gpu_regroup::{regroup_dispatch, RegroupDispatch};
use crate::error::{Error, Result};
use crate::gpu::{Bind, BufferKind, Gpu, GpuBuffer, Kernel, Step};
use std::sync::Arc;

/// CPU reference of `shaders/remap/classify_trips.wgsl`.
pub fn classify_trips_reference(trips: &[u32], lo: u32, width: u32, classes: u32) -> Vec<u32> {
    trips.iter().map(|&t| (t.saturating_sub(lo) / width.max(1)).min(classes.max(1) - 1)).collect()
}

/// Equal-width ranges over [lo, hi] in `classes` classes: the width the classifier uses.
pub fn equal_width(lo: u32, hi: u32, classes: u32) -> u32 {
    ((hi as u64 - lo as u64 + 1).div_ceil(classes.max(1) as u64)).max(1) as u32
}

/// Buffers and kernels of the regroup of `n` trip counts into `classes` classes.
pub struct GpuRegroup {
    classify: Arc<Kernel>,
    histogram: Arc<Kernel>,
    scan: Arc<Kernel>,
    scatter: Arc<Kernel>,
    binds: [wgpu::BindGroup; 4],
    dispatch: RegroupDispatch,
    classify_grid: [u32; 3],
    /// Output: thread i of the remapped kernel works on element `index[i]`.
    pub index: GpuBuffer<u32>,
    pub classes: GpuBuffer<u32>,
    _buffers: (GpuBuffer<u32>, GpuBuffer<u32>, GpuBuffer<u32>),
}

impl GpuRegroup {
    /// Prepares the regroup of `trips` (already on the GPU) with ranges [lo, lo + width·classes).
    pub fn new(gpu: &Gpu, trips: &dyn Bind, n: usize, lo: u32, width: u32, classes: u32) -> Result<GpuRegroup> {
        if classes == 0 || classes > super::MAX_GPU_CLASSES || width == 0 {
            return Err(Error::invalid("GPU regroup", format!("{classes} classes of width {width} (use 1..={} classes, width ≥ 1)", super::MAX_GPU_CLASSES)));
        }
        let dispatch = regroup_dispatch(n, classes)?;
        let constants = [("CLASSES", classes as f64)];
        let classify = gpu.kernel("remap/classify_trips.wgsl", "main", &[])?;
        let histogram = gpu.kernel_with_constants("remap/classify_histogram.wgsl", "main", &[], &constants)?;
        let scan = gpu.kernel("remap/scan.wgsl", "main", &[])?;
        let scatter = gpu.kernel_with_constants("remap/scatter.wgsl", "main", &[], &constants)?;
        let classify_params = gpu.buffer("classify params", &[n as u32, lo, width, classes], BufferKind::Uniform)?;
        let params = gpu.buffer("regroup params", &dispatch.params.to_words(), BufferKind::Uniform)?;
        let class_ids = gpu.buffer_zeroed::<u32>("classes", n, BufferKind::Storage)?;
        let hist = gpu.buffer_zeroed::<u32>("histogram", dispatch.params.histogram_len as usize, BufferKind::Storage)?;
        let index = gpu.buffer_zeroed::<u32>("remap index", n, BufferKind::Storage)?;
        let binds = [
            classify.bind(gpu, &[&classify_params, trips, &class_ids])?,
            histogram.bind(gpu, &[&params, &class_ids, &hist])?,
            scan.bind(gpu, &[&params, &hist])?,
            scatter.bind(gpu, &[&params, &class_ids, &hist, &index])?,
        ];
        let classify_grid = gpu.grid(n as u64, 256)?;
        Ok(GpuRegroup {
            classify,
            histogram,
            scan,
            scatter,
            binds,
            dispatch,
            classify_grid,
            index,
            classes: class_ids,
            _buffers: (classify_params, params, hist),
        })
    }

    /// The four dispatches, to put in front of the remapped kernel in one `Gpu::run`.
    pub fn steps(&self) -> Vec<Step<'_>> {
        vec![
            Step::dispatch(&self.classify, &self.binds[0], self.classify_grid),
            Step::dispatch(&self.histogram, &self.binds[1], self.dispatch.grid),
            Step::dispatch(&self.scan, &self.binds[2], self.dispatch.scan_grid),
            Step::dispatch(&self.scatter, &self.binds[3], self.dispatch.grid),
        ]
    }
}
