//! Host reference and dispatch geometry of the on-GPU regroup in `shaders/remap/`.
//!
//! The GPU builds the same index array as [`super::redirect_index`] in five dispatches, so
//! classification can stay on the GPU and no index array crosses the bus:
//!
//! 1. `classify_histogram.wgsl`, one workgroup of 256 threads per tile of [`GPU_TILE`]
//!    elements ([`GPU_SUBTILES`] sub-tiles of 256): classifies each trip count and writes
//!    `histogram[c × tiles + t]` = elements of class c in tile t (class-major order).
//! 2. – 4. `scan.wgsl`: exclusive scan of `histogram` in place, reduce-then-scan over blocks
//!    of [`SCAN_BLOCK`] entries: `reduce_blocks` (one workgroup per block: block sums),
//!    `scan_block_sums` (one workgroup: exclusive scan of the block sums), `scan_blocks` (one
//!    workgroup per block: rescan from the block's prefix). In class-major order the scanned
//!    value is where tile t's class-c elements start in the output: after all smaller
//!    classes, and after class c's elements of earlier tiles.
//! 5. `scatter.wgsl`, one workgroup per tile: reclassifies each element and computes its rank
//!    among the same-class elements of its tile that precede it (a per-class running base
//!    over the sub-tiles, plus set bits of lower lanes in per-class lane bitmasks inside a
//!    sub-tile); `index[offset + rank] = element`.
//!
//! Ranks follow element order inside a tile and offsets follow tile order, so the result is
//! a *stable* counting sort by class: deterministic, and equal to the host redirect index.

use crate::error::{Error, Result};

/// Most classes the kernels handle (`override CLASSES`).
pub const MAX_GPU_CLASSES: u32 = 256;
/// Threads per workgroup of the histogram, scan and scatter kernels; also the sub-tile the
/// scatter ranks with lane bitmasks (256 lane bits per class in workgroup memory).
pub const GPU_WORKGROUP_SIZE: u32 = 256;
/// Sub-tiles of [`GPU_WORKGROUP_SIZE`] elements per tile (`override SUBTILES`).
pub const GPU_SUBTILES: u32 = 4;
/// Elements per tile (one workgroup) of the histogram and scatter kernels.
pub const GPU_TILE: u32 = GPU_WORKGROUP_SIZE * GPU_SUBTILES;
/// Largest tile the geometry accepts (256 sub-tiles of 256 elements).
pub const MAX_TILE: u32 = GPU_WORKGROUP_SIZE * 256;
/// Threads of each scan workgroup.
pub const SCAN_WORKGROUP_SIZE: u32 = 256;
/// Histogram entries per scan block (`BLOCK` in scan.wgsl: 256 threads × 4 entries).
pub const SCAN_BLOCK: u32 = SCAN_WORKGROUP_SIZE * 4;
/// WebGPU's minimum `maxComputeWorkgroupsPerDimension`.
pub const MAX_WORKGROUPS_PER_DIMENSION: u32 = 65535;

/// Geometry shared by the kernels (the first four words of their `RegroupParams` uniform).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegroupParams {
    /// Elements.
    pub n: u32,
    /// Tiles = histogram/scatter workgroups doing work = ceil(n / tile).
    pub tiles: u32,
    /// Histogram entries = tiles × classes.
    pub histogram_len: u32,
    /// Scan blocks = scan workgroups doing work = ceil(histogram_len / [`SCAN_BLOCK`]).
    pub blocks: u32,
}

impl RegroupParams {
    /// Bytes as the kernels read them (`struct RegroupParams { n, tiles, histogram_len,
    /// blocks, lo, width, pad0, pad1 }`), with the classifier's `lo` and `width`.
    pub fn to_words(&self, lo: u32, width: u32) -> [u32; 8] {
        [self.n, self.tiles, self.histogram_len, self.blocks, lo, width, 0, 0]
    }
}

/// Everything the host needs to encode the five dispatches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegroupDispatch {
    /// Sizes the kernels read from their uniform (see [`RegroupParams::to_words`]).
    pub params: RegroupParams,
    /// Workgroup grid of the histogram and scatter dispatches (2D past 65535 workgroups;
    /// surplus workgroups exit at once).
    pub grid: [u32; 3],
    /// Workgroup grid of `reduce_blocks` and `scan_blocks` (`blocks` workgroups, 2D past
    /// 65535).
    pub scan_grid: [u32; 3],
    /// Grid of `scan_block_sums`: one workgroup.
    pub spine_grid: [u32; 3],
}

/// Geometry of the shipped kernels (tiles of [`GPU_TILE`]) for `n` elements in `classes`
/// classes.
pub fn regroup_dispatch(n: usize, classes: u32) -> Result<RegroupDispatch> {
    tiled_dispatch(n, classes, GPU_TILE)
}

fn tiled_dispatch(n: usize, classes: u32, tile: u32) -> Result<RegroupDispatch> {
    check_shape(classes, tile)?;
    let n32 = u32::try_from(n).map_err(|_| Error::invalid("element count", format!("{n}; the GPU regroup indexes with u32")))?;
    let tiles = n32.div_ceil(tile);
    let histogram_len = tiles.checked_mul(classes).ok_or_else(|| Error::Limit {
        what: "GPU regroup histogram entries".into(),
        requested: tiles as u64 * classes as u64,
        limit: u32::MAX as u64,
        hint: "use fewer classes or a larger tile".into(),
    })?;
    let blocks = histogram_len.div_ceil(SCAN_BLOCK);
    Ok(RegroupDispatch {
        params: RegroupParams { n: n32, tiles, histogram_len, blocks },
        grid: workgroup_grid(tiles, MAX_WORKGROUPS_PER_DIMENSION)?,
        scan_grid: workgroup_grid(blocks, MAX_WORKGROUPS_PER_DIMENSION)?,
        spine_grid: [1, 1, 1],
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

fn check_shape(classes: u32, tile: u32) -> Result<()> {
    if classes == 0 || classes > MAX_GPU_CLASSES {
        return Err(Error::invalid("GPU regroup classes", format!("{classes}; use 1..={MAX_GPU_CLASSES}")));
    }
    if tile == 0 || tile > MAX_TILE {
        return Err(Error::invalid("GPU regroup tile", format!("{tile}; use 1..={MAX_TILE}")));
    }
    Ok(())
}

/// What the five kernels compute, step by step, on the host, with tiles of `tile` elements
/// (the kernels use [`GPU_TILE`]): the index array (thread i works on element `index[i]`).
/// Equals a stable counting sort by class whatever the tile size.
pub fn gpu_regroup_reference(classes: &[u32], classes_count: u32, tile: u32) -> Result<Vec<u32>> {
    let d = tiled_dispatch(classes.len(), classes_count, tile)?;
    if let Some(i) = classes.iter().position(|&c| c >= classes_count) {
        return Err(Error::invalid("class id", format!("element {i} has class {}, not below {classes_count}", classes[i])));
    }
    let (tiles, tile) = (d.params.tiles as usize, tile as usize);

    // 1. per-tile histogram, class-major
    let mut histogram = vec![0u32; d.params.histogram_len as usize];
    for (t, chunk) in classes.chunks(tile).enumerate() {
        chunk.iter().for_each(|&c| histogram[c as usize * tiles + t] += 1);
    }
    // 2.-4. exclusive scan, by blocks: block sums, their exclusive scan, rescan of each block
    let block = SCAN_BLOCK as usize;
    let mut block_sums: Vec<u32> = histogram.chunks(block).map(|b| b.iter().sum()).collect();
    let mut running = 0u32;
    for s in block_sums.iter_mut() {
        let sum = *s;
        *s = running;
        running += sum;
    }
    for (b, chunk) in histogram.chunks_mut(block).enumerate() {
        let mut running = block_sums[b];
        for h in chunk.iter_mut() {
            let count = *h;
            *h = running;
            running += count;
        }
    }
    // 5. scatter with in-tile ranks (the kernel adds a per-class running base over its
    //    sub-tiles to the set bits of lower lanes inside a sub-tile)
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
        for wg in [1, 31, 64, 256, GPU_TILE, 4096] {
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
        assert_eq!(d.params, RegroupParams { n: 1 << 20, tiles: 1024, histogram_len: 10240, blocks: 10 });
        assert_eq!((d.grid, d.scan_grid, d.spine_grid), ([1024, 1, 1], [10, 1, 1], [1, 1, 1]));
        // 2^24 elements in 10 classes: 16384 tiles, 160 scan blocks
        let d = regroup_dispatch(1 << 24, 10).unwrap();
        assert_eq!((d.params.tiles, d.params.histogram_len, d.params.blocks), (16384, 163840, 160));
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(gpu_regroup_reference(&[0, 3], 3, 64).is_err());
        assert!(gpu_regroup_reference(&[0], 0, 64).is_err());
        assert!(gpu_regroup_reference(&[0], 300, 64).is_err());
        assert!(gpu_regroup_reference(&[0], 3, MAX_TILE + 1).is_err());
        assert!(gpu_regroup_reference(&[0], 3, 0).is_err());
    }
}
