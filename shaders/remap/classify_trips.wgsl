// GPU classifier for loop trip counts: equal-width ranges, class = min((t - lo) / width, R - 1)
// (values below lo go to class 0). Feeds classify_histogram.wgsl with no host round trip.
// CPU reference: simtlab::remap::classify_trips_reference.
// Bindings (group 0):
//   0  uniform             params   { n, lo, width, classes }
//   1  storage, read       trips    array<u32>, n trip counts
//   2  storage, read_write classes  array<u32>, n class ids

#import grid

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
        let t = trips[i];
        let above = select(0u, t - params.lo, t > params.lo);
        classes[i] = min(above / params.width, params.classes - 1u);
    }
}
