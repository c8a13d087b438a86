//! Host reference and dispatch geometry of the on-GPU regroup in `shaders/remap/`.
//!
//! The GPU builds the same index array as [`super::redirect_index`] in three dispatches, so
//! classification can stay on the GPU and no index array crosses the bus:
//!
//! 1. `classify_histogram.wgsl`, one workgroup per tile of `workgroup_size` elements:
//!    `histogram[c × tiles + t]` = elements of class c in tile t (class-major order).
//! 2. `scan.wgsl`, a single workgroup: exclusive scan of `histogram` in place. In class-major
//!    order the scanned value is where tile t's class-c elements start in the output: after
//!    all smaller classes, and after class c's elements of earlier tiles.
//! 3. `scatter.wgsl`, one workgroup per tile: each element's rank among the same-class
//!    elements of its tile that precede it, from per-class lane bitmasks in workgroup memory;
//!    `index[offset + rank] = element`.
//!
//! Ranks follow element order inside a tile and offsets follow tile order, so the result is
//! a *stable* counting sort by class: deterministic, and equal to the host redirect index.

use crate::error::{Error, Result};

/// Most classes the kernels handle (`override CLASSES`).
pub const MAX_GPU_CLASSES: u32 = 256;
/// Elements per tile (the workgroup size) of the histogram and scatter kernels.
pub const GPU_TILE: u32 = 256;
/// Largest tile the algorithm supports: the scatter keeps 256 lane bits per class in
/// workgroup memory.
pub const MAX_TILE: u32 = 256;
/// Threads of the single scan workgroup.
pub const SCAN_WORKGROUP_SIZE: u32 = 256;
/// WebGPU's minimum `maxComputeWorkgroupsPerDimension`.
pub const MAX_WORKGROUPS_PER_DIMENSION: u32 = 65535;

/// Uniform shared by the three kernels (binding 0), four u32 words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegroupParams {
    /// Elements.
    pub n: u32,
    /// Tiles = workgroups doing work = ceil(n / workgroup_size).
    pub tiles: u32,
    /// Histogram entries = tiles × classes.
    pub histogram_len: u32,
}

impl RegroupParams {
    /// Bytes as the kernels read them (`struct RegroupParams { n, tiles, histogram_len, pad }`).
    pub fn to_words(&self) -> [u32; 4] {
        [self.n, self.tiles, self.histogram_len, 0]
    }
}

/// Everything the host needs to encode the three dispatches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegroupDispatch {
    pub params: RegroupParams,
    /// Workgroup grid of the histogram and scatter dispatches (2D past 65535 workgroups;
    /// surplus workgroups exit at once).
    pub grid: [u32; 3],
    /// The scan dispatch.
    pub scan_grid: [u32; 3],
}

/// Geometry of the shipped kernels (tiles of [`GPU_TILE`]) for `n` elements in `classes`
/// classes.
pub fn regroup_dispatch(n: usize, classes: u32) -> Result<RegroupDispatch> {
    tiled_dispatch(n, classes, GPU_TILE)
}

fn tiled_dispatch(n: usize, classes: u32, workgroup_size: u32) -> Result<RegroupDispatch> {
    check_shape(classes, workgroup_size)?;
    let n32 = u32::try_from(n)
        .map_err(|_| Error::invalid("element count", format!("{n}; the GPU regroup indexes with u32")))?;
    let tiles = n32.div_ceil(workgroup_size);
    let histogram_len = tiles.checked_mul(classes).ok_or_else(|| Error::Limit {
        what: "GPU regroup histogram entries".into(),
        requested: tiles as u64 * classes as u64,
        limit: u32::MAX as u64,
        hint: "use fewer classes or a larger workgroup size".into(),
    })?;
    Ok(RegroupDispatch {
        params: RegroupParams { n: n32, tiles, histogram_len },
        grid: workgroup_grid(tiles, MAX_WORKGROUPS_PER_DIMENSION)?,
        scan_grid: [1, 1, 1],
    })
}

/// Grid of at least `workgroups` workgroups with no dimension above `max_per_dimension`;
/// kernels index workgroups as `wid.x + wid.y × nwg.x`.
pub fn workgroup_grid(workgroups: u32, max_per_dimension: u32) -> Result<[u32; 3]> {
    if max_per_dimension == 0 {
        return Err(Error::invalid("workgroups per dimension", "0"));
    }
    if workgroups <= max_per_dimension {
        return Ok([workgroups, 1, 1]);
    }
    let y = workgroups.div_ceil(max_per_dimension);
    if y > max_per_dimension {
        return Err(Error::Limit {
            what: "workgroups".into(),
            requested: workgroups as u64,
            limit: max_per_dimension as u64 * max_per_dimension as u64,
            hint: "split the work into several dispatches".into(),
        });
    }
    Ok([workgroups.div_ceil(y), y, 1])
}

fn check_shape(classes: u32, workgroup_size: u32) -> Result<()> {
    if classes == 0 || classes > MAX_GPU_CLASSES {
        return Err(Error::invalid("GPU regroup classes", format!("{classes}; use 1..={MAX_GPU_CLASSES}")));
    }
    if workgroup_size == 0 || workgroup_size > MAX_TILE {
        return Err(Error::invalid("GPU regroup workgroup size", format!("{workgroup_size}; use 1..={MAX_TILE}")));
    }
    Ok(())
}

/// What the three kernels compute, step by step, on the host, with tiles of `workgroup_size`
/// elements (the kernels use [`GPU_TILE`]): the index array (thread i works on element
/// `index[i]`). Equals a stable counting sort by class whatever the tile size.
pub fn gpu_regroup_reference(classes: &[u32], classes_count: u32, workgroup_size: u32) -> Result<Vec<u32>> {
    let d = tiled_dispatch(classes.len(), classes_count, workgroup_size)?;
    if let Some(i) = classes.iter().position(|&c| c >= classes_count) {
        return Err(Error::invalid(
            "class id",
            format!("element {i} has class {}, not below {classes_count}", classes[i]),
        ));
    }
    let (tiles, tile) = (d.params.tiles as usize, workgroup_size as usize);

    // 1. per-tile histogram, class-major
    let mut histogram = vec![0u32; d.params.histogram_len as usize];
    for (t, chunk) in classes.chunks(tile).enumerate() {
        chunk.iter().for_each(|&c| histogram[c as usize * tiles + t] += 1);
    }
    // 2. exclusive scan
    let mut running = 0u32;
    for h in histogram.iter_mut() {
        let count = *h;
        *h = running;
        running += count;
    }
    // 3. scatter with in-tile ranks (the kernel counts set bits of lower lanes instead)
    let mut index = vec![0u32; classes.len()];
    let mut rank = vec![0u32; classes_count as usize];
    for (t, chunk) in classes.chunks(tile).enumerate() {
        rank.fill(0);
        for (lane, &c) in chunk.iter().enumerate() {
            let slot = histogram[c as usize * tiles + t] + rank[c as usize];
            rank[c as usize] += 1;
            index[slot as usize] = (t * tile + lane) as u32;
        }
    }
    Ok(index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remap::redirect_index_of;

    #[test]
    fn equals_the_stable_counting_sort() {
        let classes: Vec<u32> = (0..10_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 7) % 10).collect();
        for wg in [1, 31, 64, 256] {
            assert_eq!(gpu_regroup_reference(&classes, 10, wg).unwrap(), redirect_index_of(&classes, 10).unwrap());
        }
        assert!(gpu_regroup_reference(&[], 3, 64).unwrap().is_empty());
    }

    #[test]
    fn grids_split_past_the_dimension_limit() {
        assert_eq!(workgroup_grid(100, 65535).unwrap(), [100, 1, 1]);
        let [x, y, _] = workgroup_grid(200_000, 65535).unwrap();
        assert!(x <= 65535 && y <= 65535 && x * y >= 200_000 && x * (y - 1) < 200_000);
        assert!(workgroup_grid(u32::MAX, 1000).is_err());
        let d = regroup_dispatch(1 << 20, 10).unwrap();
        assert_eq!(d.params, RegroupParams { n: 1 << 20, tiles: 4096, histogram_len: 40960 });
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(gpu_regroup_reference(&[0, 3], 3, 64).is_err());
        assert!(gpu_regroup_reference(&[0], 0, 64).is_err());
        assert!(gpu_regroup_reference(&[0], 300, 64).is_err());
        assert!(gpu_regroup_reference(&[0], 3, 512).is_err());
    }
}
