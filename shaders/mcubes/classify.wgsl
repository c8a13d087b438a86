// Marching cubes, pass 1: classify every voxel. Corner i of voxel (x, y, z) is grid point
// (x + dx_i, y + dy_i, z + dz_i) with dx = ((i + 1) >> 1) & 1, dy = (i >> 1) & 1, dz = i >> 2
// (Bourke's corner order); bit i of the cube index is set when that sample is below the iso
// value. The vertex count comes from the table (tables[4096 + cube index]).
// CPU reference: kernels::mcubes::cpu::classify.
//! variants: (none)

#import grid
#import mcubes_volume

@group(0) @binding(2) var<storage, read_write> cube_index: array<u32>;
@group(0) @binding(3) var<storage, read_write> vert_count: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let v = global_index(ids, WG);
    if (v < params.voxels) {
        let e = params.edge;
        let s = e + 1u;
        let x = v % e;
        let y = (v / e) % e;
        let z = v / (e * e);
        var index = 0u;
        for (var i = 0u; i < 8u; i++) {
            let c = corner(i);
            let p = (x + c.x) + s * ((y + c.y) + s * (z + c.z));
            index |= select(0u, 1u << i, volume[p] < params.iso);
        }
        cube_index[v] = index;
        vert_count[v] = u32(tables[4096u + index]);
    }
}
