// GPU classifier for loop trip counts: equal-width ranges, class = min((t - lo) / width, R - 1)
// (values below lo go to class 0), formula in shaders/shared/trip_class.wgsl. Standalone
// classifier: the regroup kernels (classify_histogram.wgsl, scatter.wgsl) apply the same
// formula inline instead of reading a class array. CPU reference: simtlab::remap::classify_trips_reference.
// Bindings (group 0):
//   0  uniform             params   { n, lo, width, classes }
//   1  storage, read       trips    array<u32>, n trip counts
//   2  storage, read_write classes  array<u32>, n class ids

#import grid
#import trip_class

const WG: u32 = 256u;

struct Params {
    n: u32,
    lo: u32,
    width: u32,
    classes: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> trips: array<u32>;
@group(0) @binding(2) var<storage, read_write> classes: array<u32>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let i = global_index(ids, WG);
    if (i < params.n) {
        classes[i] = trip_class(trips[i], params.lo, params.width, params.classes);
    }
}
