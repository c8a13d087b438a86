// What the marching-cubes passes that read the field (mcubes/classify.wgsl, mcubes/generate.wgsl)
// share: the parameters, the sampled volume, the tables, and where a voxel's corners lie.

const WG: u32 = 256u;

struct Params {
    // voxels per side
    edge: u32,
    voxels: u32,
    iso: f32,
    pad: u32,
}

// (edge + 1)³ samples, x fastest
@group(0) @binding(0) var<storage, read> volume: array<f32>;
// 256 × 16 triangle-table entries, then 256 vertex counts
@group(0) @binding(1) var<storage, read> tables: array<i32>;

// Offset of corner i (0..8, Bourke's order) from its voxel's lowest corner.
fn corner(i: u32) -> vec3<u32> {
    return vec3<u32>(((i + 1u) >> 1u) & 1u, (i >> 1u) & 1u, i >> 2u);
}
