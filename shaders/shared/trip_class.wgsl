// Equal-width class of a loop trip count: min((t - lo) / width, classes - 1), with values
// below lo in class 0. Shared by classify_trips.wgsl and the fused regroup kernels
// (classify_histogram.wgsl, scatter.wgsl); with lo = 0 and width = 1 it passes class ids
// below `classes` through unchanged. CPU reference: simtlab::remap::classify_trips_reference.

fn trip_class(t: u32, lo: u32, width: u32, classes: u32) -> u32 {
    let above = select(0u, t - lo, t > lo);
    return min(above / max(width, 1u), classes - 1u);
}
