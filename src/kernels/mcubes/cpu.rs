//! CPU references of `shaders/mcubes/{classify,scan,generate}.wgsl`, over the same layouts.

use super::tables::Tables;
use crate::kernels::parallel_ranges;

/// Offset of corner i (Bourke's order).
pub fn corner(i: u32) -> [u32; 3] {
    [((i + 1) >> 1) & 1, (i >> 1) & 1, i >> 2]
}

/// The corners edge e joins.
pub fn edge_corners(e: u32) -> [u32; 2] {
    match e {
        0..=3 => [e, (e + 1) % 4],
        4..=7 => [e, 4 + (e + 1) % 4],
        _ => [e - 8, e - 4],
    }
}

/// `classify.wgsl`: (cube index, vertex count) of every voxel of an `edge`³ grid.
pub fn classify(volume: &[f32], edge: usize, iso: f32, tables: &Tables) -> (Vec<u32>, Vec<u32>) {
    let s = edge + 1;
    let parts = parallel_ranges(edge * edge * edge, |range| {
        range
            .map(|v| {
                let (x, y, z) = (v % edge, (v / edge) % edge, v / (edge * edge));
                let mut index = 0u32;
                for i in 0..8 {
                    let [dx, dy, dz] = corner(i);
                    let p = (x + dx as usize) + s * ((y + dy as usize) + s * (z + dz as usize));
                    if volume[p] < iso {
                        index |= 1 << i;
                    }
                }
                (index, tables.vertex_count(index))
            })
            .collect::<Vec<_>>()
    });
    parts.into_iter().flatten().unzip()
}

/// `scan.wgsl`: exclusive prefix sum and total.
pub fn scan(counts: &[u32]) -> (Vec<u32>, u32) {
    let mut running = 0u32;
    let offsets = counts
        .iter()
        .map(|&c| {
            let o = running;
            running += c;
            o
        })
        .collect();
    (offsets, running)
}

/// `generate.wgsl`: the vertices (three per triangle) in voxel order, in f64.
pub fn generate(volume: &[f32], edge: usize, iso: f32, tables: &Tables, cube_index: &[u32]) -> Vec<[f64; 3]> {
    let s = edge + 1;
    let at = |p: [usize; 3]| volume[p[0] + s * (p[1] + s * p[2])] as f64;
    let scale = 1.0 / edge as f64;
    parallel_ranges(cube_index.len(), |range| {
        let mut out = Vec::new();
        for v in range {
            let base = [v % edge, (v / edge) % edge, v / (edge * edge)];
            for &e in tables.edges(cube_index[v]) {
                let [a, b] = edge_corners(e as u32);
                let (ca, cb) = (corner(a), corner(b));
                let pa = [base[0] + ca[0] as usize, base[1] + ca[1] as usize, base[2] + ca[2] as usize];
                let pb = [base[0] + cb[0] as usize, base[1] + cb[1] as usize, base[2] + cb[2] as usize];
                let (va, vb) = (at(pa), at(pb));
                let w = (iso as f64 - va) / (vb - va);
                out.push([0, 1, 2].map(|k| (pa[k] as f64 + w * (pb[k] as f64 - pa[k] as f64)) * scale));
            }
        }
        out
    })
    .concat()
}
