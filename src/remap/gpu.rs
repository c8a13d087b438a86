//! On-GPU regrouping with no host round trip: classify (trip counts → equal-width classes)
//! fused into the per-tile class histogram, a multi-workgroup exclusive scan, and a stable
//! scatter of an index array that reclassifies each element. The index feeds a kernel's
//! REMAP variant (`remap_index`), all in one submission.

use super::gpu_regroup::{regroup_dispatch, RegroupDispatch, GPU_SUBTILES};
use crate::error::{Error, Result};
use crate::gpu::shader::registry;
use crate::gpu::{Bind, BufferKind, Gpu, GpuBuffer, Kernel, Step};
use std::sync::Arc;

/// CPU reference of `shaders/shared/trip_class.wgsl` (used by `shaders/remap/classify_trips.wgsl`
/// and, inline, by the regroup kernels).
pub fn classify_trips_reference(trips: &[u32], lo: u32, width: u32, classes: u32) -> Vec<u32> {
    trips.iter().map(|&t| (t.saturating_sub(lo) / width.max(1)).min(classes.max(1) - 1)).collect()
}

/// Equal-width ranges over [lo, hi] in `classes` classes: the width the classifier uses.
pub fn equal_width(lo: u32, hi: u32, classes: u32) -> u32 {
    ((hi as u64 - lo as u64 + 1).div_ceil(classes.max(1) as u64)).max(1) as u32
}

/// Buffers and kernels of the regroup of `n` trip counts into `classes` classes.
#[derive(Debug)]
pub struct GpuRegroup {
    histogram: Arc<Kernel>,
    reduce: Arc<Kernel>,
    spine: Arc<Kernel>,
    rescan: Arc<Kernel>,
    scatter: Arc<Kernel>,
    binds: [wgpu::BindGroup; 5],
    dispatch: RegroupDispatch,
    /// Output: thread i of the remapped kernel works on element `index[i]`.
    pub index: GpuBuffer<u32>,
    /// Each element's class id, written by the histogram pass; only with
    /// [`GpuRegroup::new_with_classes`] (the kernels recompute classes instead of storing them).
    pub classes: Option<GpuBuffer<u32>>,
    _buffers: (GpuBuffer<u32>, GpuBuffer<u32>, GpuBuffer<u32>),
}

impl GpuRegroup {
    /// Prepares the regroup of `trips` (already on the GPU) with ranges [lo, lo + width·classes).
    pub fn new(gpu: &Gpu, trips: &dyn Bind, n: usize, lo: u32, width: u32, classes: u32) -> Result<GpuRegroup> {
        Self::build(gpu, trips, n, lo, width, classes, false)
    }

    /// As [`GpuRegroup::new`], and the histogram pass also stores each element's class id in
    /// [`GpuRegroup::classes`] (one more write of n words).
    pub fn new_with_classes(gpu: &Gpu, trips: &dyn Bind, n: usize, lo: u32, width: u32, classes: u32) -> Result<GpuRegroup> {
        Self::build(gpu, trips, n, lo, width, classes, true)
    }

    fn build(gpu: &Gpu, trips: &dyn Bind, n: usize, lo: u32, width: u32, classes: u32, keep_classes: bool) -> Result<GpuRegroup> {
        if classes == 0 || classes > super::MAX_GPU_CLASSES || width == 0 {
            return Err(Error::invalid(
                "GPU regroup",
                format!("{classes} classes of width {width} (use 1..={} classes, width ≥ 1)", super::MAX_GPU_CLASSES),
            ));
        }
        let dispatch = regroup_dispatch(n, classes)?;
        let constants = [("CLASSES", classes as f64), ("SUBTILES", GPU_SUBTILES as f64)];
        let defines: &[&str] = if keep_classes { &["WRITE_CLASSES"] } else { &[] };
        let histogram = gpu.kernel_with_constants(registry::remap::classify_histogram::MAIN, defines, &constants)?;
        let reduce = gpu.kernel(registry::remap::scan::REDUCE_BLOCKS, &[])?;
        let spine = gpu.kernel(registry::remap::scan::SCAN_BLOCK_SUMS, &[])?;
        let rescan = gpu.kernel(registry::remap::scan::SCAN_BLOCKS, &[])?;
        let scatter = gpu.kernel_with_constants(registry::remap::scatter::MAIN, &[], &constants)?;
        let params = gpu.buffer("regroup params", &dispatch.params.to_words(lo, width), BufferKind::Uniform)?;
        let hist = gpu.buffer_zeroed::<u32>("histogram", dispatch.params.histogram_len as usize, BufferKind::Storage)?;
        let block_sums = gpu.buffer_zeroed::<u32>("histogram block sums", dispatch.params.blocks as usize, BufferKind::Storage)?;
        let index = gpu.buffer_zeroed::<u32>("remap index", n, BufferKind::Storage)?;
        let class_ids = if keep_classes { Some(gpu.buffer_zeroed::<u32>("classes", n, BufferKind::Storage)?) } else { None };
        use registry::remap::{classify_histogram::binding as counted, scan::binding as scanned, scatter::binding as scattered};
        let mut counting: Vec<(u32, &dyn Bind)> = vec![(counted::PARAMS, &params), (counted::TRIPS, trips), (counted::HISTOGRAM, &hist)];
        if let Some(ids) = &class_ids {
            counting.push((counted::CLASSES, ids));
        }
        let scan: [(u32, &dyn Bind); 3] = [(scanned::PARAMS, &params), (scanned::HISTOGRAM, &hist), (scanned::BLOCK_SUMS, &block_sums)];
        let binds = [
            histogram.bind_at(gpu, &counting)?,
            reduce.bind_at(gpu, &scan)?,
            spine.bind_at(gpu, &scan)?,
            rescan.bind_at(gpu, &scan)?,
            scatter.bind_at(
                gpu,
                &[(scattered::PARAMS, &params), (scattered::TRIPS, trips), (scattered::OFFSETS, &hist), (scattered::INDEX, &index)],
            )?,
        ];
        Ok(GpuRegroup {
            histogram,
            reduce,
            spine,
            rescan,
            scatter,
            binds,
            dispatch,
            index,
            classes: class_ids,
            _buffers: (params, hist, block_sums),
        })
    }

    /// The five dispatches, to put in front of the remapped kernel in one `Gpu::run`.
    pub fn steps(&self) -> Vec<Step<'_>> {
        let d = &self.dispatch;
        vec![
            Step::dispatch(&self.histogram, &self.binds[0], d.grid),
            Step::dispatch(&self.reduce, &self.binds[1], d.scan_grid),
            Step::dispatch(&self.spine, &self.binds[2], d.spine_grid),
            Step::dispatch(&self.rescan, &self.binds[3], d.scan_grid),
            Step::dispatch(&self.scatter, &self.binds[4], d.grid),
        ]
    }
}
