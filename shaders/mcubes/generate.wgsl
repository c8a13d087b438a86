// Marching cubes, pass 3: generate triangles (the SDK's generateTriangles2, which scans every
// voxel). Thread t handles voxel v and writes its vert_count[v] vertices (0..15, three per
// triangle) at offsets[v]; the vertex loop (site 0) diverges with the per-voxel count. Each
// vertex interpolates the iso crossing along its edge (edge e joins corners a and b: e < 4:
// (e, (e+1)%4); e < 8: (e, 4+(e+1)%4); else (e-8, e-4)).
// Output: vertices as x, y, z f32 triples in [0, 1]³.
// CPU reference: kernels::mcubes::cpu::generate. With REMAP, thread t handles voxel
// remap_index[t] (voxels grouped by vertex count); the output order is unchanged.
//! variants: PROBE REMAP

#import grid
#import probe
#import remap
#import mcubes_volume

const PROBE_SITES: u32 = 1u;

@group(0) @binding(2) var<storage, read> cube_index: array<u32>;
@group(0) @binding(3) var<storage, read> vert_count: array<u32>;
@group(0) @binding(4) var<storage, read> offsets: array<u32>;
@group(0) @binding(5) var<storage, read_write> vertices: array<f32>;
@group(0) @binding(6) var<uniform> params: Params;

fn edge_corners(e: u32) -> vec2<u32> {
    if (e < 4u) {
        return vec2<u32>(e, (e + 1u) % 4u);
    }
    if (e < 8u) {
        return vec2<u32>(e, 4u + (e + 1u) % 4u);
    }
    return vec2<u32>(e - 8u, e - 4u);
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    probe_begin(ids);
    let t = global_index(ids, WG);
    if (t < params.voxels) {
        let v = remapped_id(t);
        let e = params.edge;
        let s = e + 1u;
        let base = vec3<u32>(v % e, (v / e) % e, v / (e * e));
        let index = cube_index[v];
        let count = vert_count[v];
        let first = offsets[v];
        let scale = 1.0 / f32(e);
        for (var k = 0u; probe(0u, k < count); k++) {
            let ab = edge_corners(u32(tables[index * 16u + k]));
            let pa = base + corner(ab.x);
            let pb = base + corner(ab.y);
            let va = volume[pa.x + s * (pa.y + s * pa.z)];
            let vb = volume[pb.x + s * (pb.y + s * pb.z)];
            let w = (params.iso - va) / (vb - va);
            let p = (vec3<f32>(pa) + w * (vec3<f32>(pb) - vec3<f32>(pa))) * scale;
            let o = 3u * (first + k);
            vertices[o] = p.x;
            vertices[o + 1u] = p.y;
            vertices[o + 2u] = p.z;
        }
    }
    probe_end();
}
