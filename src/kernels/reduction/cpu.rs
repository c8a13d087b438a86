//! CPU references of `shaders/reduction/*.wgsl`: every variant computes the sum of its input;
//! the reference sums in f64 (the kernels in f32 are checked by relative error).

use crate::kernels::parallel_ranges;

/// Σ input in f64.
pub fn sum(input: &[f32]) -> f64 {
    parallel_ranges(input.len(), |r| input[r].iter().map(|&v| v as f64).sum::<f64>()).into_iter().sum()
}

/// `interleaved.wgsl` (with or without the id array: the same sum).
pub fn interleaved(input: &[f32]) -> f64 {
    sum(input)
}

/// `sequential.wgsl`.
pub fn sequential(input: &[f32]) -> f64 {
    sum(input)
}

/// `fast.wgsl`.
pub fn fast(input: &[f32]) -> f64 {
    sum(input)
}
