//! CPU reference of `shaders/matmul/*.wgsl` (every variant computes the same product).

use super::Shape;
use crate::kernels::parallel_ranges;

/// C = A·B, row-major, accumulated in f64 and rounded once to f32.
pub fn matmul(a: &[f32], b: &[f32], shape: Shape) -> Vec<f32> {
    let rows: Vec<usize> = (0..shape.m).collect();
    matmul_rows(a, b, shape, &rows)
}

/// The given rows of C = A·B (row-major, `rows.len() × n`), accumulated in f64.
pub fn matmul_rows(a: &[f32], b: &[f32], shape: Shape, rows: &[usize]) -> Vec<f32> {
    let Shape { n, k, .. } = shape;
    parallel_ranges(rows.len(), |range| {
        let mut out = vec![0f32; range.len() * n];
        let mut acc = vec![0f64; n];
        for (o, row) in range.clone().map(|r| rows[r]).enumerate() {
            acc.iter_mut().for_each(|x| *x = 0.0);
            for kk in 0..k {
                let av = a[row * k + kk] as f64;
                let brow = &b[kk * n..(kk + 1) * n];
                for (x, &bv) in acc.iter_mut().zip(brow) {
                    *x += av * bv as f64;
                }
            }
            for (dst, &x) in out[o * n..(o + 1) * n].iter_mut().zip(&acc) {
                *dst = x as f32;
            }
        }
        out
    })
    .concat()
}
