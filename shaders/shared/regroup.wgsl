// The uniform block of the GPU regroup's five dispatches (remap/classify_histogram.wgsl,
// remap/scan.wgsl, remap/scatter.wgsl); host: simtlab::remap::RegroupParams::to_words.
//   n              elements
//   tiles          ceil(n / tile): the histogram and scatter workgroups that do work
//   histogram_len  tiles × CLASSES
//   blocks         ceil(histogram_len / scan block): the scan workgroups that do work
//   lo, width      the classifier's parameters (shared/trip_class.wgsl)

struct RegroupParams {
    n: u32,
    tiles: u32,
    histogram_len: u32,
    blocks: u32,
    lo: u32,
    width: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> params: RegroupParams;
