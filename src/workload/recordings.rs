//! [`Recording`]s of the families whose registry lines run through a sweep or a benchmark of
//! their own: one configuration's inputs from its seed, its kernels bound, the CPU reference
//! beside them. An app records them into its own encoder, and a browser page runs them through
//! [`super::run_recording_async`], where the blocking runners cannot wait.

use super::entries::{BranchSweep, MatmulParams};
use super::Recording;
use crate::error::{Error, Result};
use crate::gpu::{Checked, Gpu};
use crate::harness::Check;
use crate::kernels::matmul::{self, Variant};
use crate::kernels::micro::{self, remapped, MicroConfig};
use crate::kernels::reduction::{self, ReductionConfig, ReductionKernel};
use crate::kernels::split::{self, BranchPrepared, MaskLayout};
use crate::remap::Strategy;
use crate::rng::Rng;

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytemuck::pod_collect_to_vec(bytes)
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytemuck::pod_collect_to_vec(bytes)
}

/// One rung of the matmul ladder on A and B from the seed; the check compares the rows
/// [`matmul::checked_rows`] picks with the f64 CPU product.
pub(super) fn matmul(gpu: &Gpu, variant: Variant, p: &MatmulParams) -> Result<Box<dyn Recording>> {
    let shape = p.shape;
    shape.validate()?;
    let mut rng = Rng::new(p.seed);
    let a = matmul::random_matrix(shape.m, shape.k, &mut rng);
    let b = matmul::random_matrix(shape.k, shape.n, &mut rng);
    let rows = matmul::checked_rows(shape);
    let expected = matmul::cpu::matmul_rows(&a, &b, shape, &rows);
    let prepared = matmul::Prepared::compiled(gpu, variant, &p.compiler, shape, &a, &b, &p.regtile)?;
    let (n, tolerance) = (shape.n, matmul::check_bounds(shape.k));
    Ok(Box::new(Checked::new(prepared, move |outputs| {
        let c = outputs.first().map(|b| floats(b)).unwrap_or_default();
        let got: Vec<f32> = rows.iter().flat_map(|&r| c.get(r * n..(r + 1) * n).unwrap_or_default().iter().copied()).collect();
        Check::relative(&got, &expected, tolerance.0, tolerance.1)
    })))
}

/// The interleaved tree reduction (the paper's original) on the seed's input.
pub(super) fn reduction(gpu: &Gpu, cfg: &ReductionConfig) -> Result<Box<dyn Recording>> {
    cfg.validate()?;
    let input = reduction::generate(cfg)?;
    let expected = reduction::cpu::sum(&input);
    let prepared = reduction::Prepared::new(gpu, ReductionKernel::Interleaved, cfg, &input, false, None)?;
    Ok(Box::new(Checked::new(prepared, move |outputs| match outputs.first().and_then(|b| floats(b).first().copied()) {
        Some(sum) => reduction::check(sum, expected),
        None => Check::relative(&[], &[expected as f32], 0.0, 0.0),
    })))
}

/// The loop or if kernel as prepared, checked exactly against `expected`: its results do not
/// depend on the order of work.
pub(super) fn micro_checked(prepared: micro::Prepared, expected: Vec<u32>) -> Box<dyn Recording> {
    Box::new(Checked::new(prepared, move |outputs| {
        let values: Vec<u32> = outputs.iter().flat_map(|b| words(b)).collect();
        Check::exact(&values, &expected)
    }))
}

/// The branched kernel and the split pair on the decision mask of the sweep's middle else
/// fraction, both checked against the CPU reference.
pub(super) fn branch(gpu: &Gpu, s: &BranchSweep, layout: MaskLayout) -> Result<Box<dyn Recording>> {
    let Some(&else_fraction) = s.else_fractions.get(s.else_fractions.len() / 2) else {
        return Err(Error::invalid("else_fractions", "empty: give at least one fraction in [0, 1]"));
    };
    let cfg = &s.config;
    let data = cfg.data();
    let mask = split::decision_mask(layout, cfg.n, else_fraction, cfg.seed)?;
    let prepared = BranchPrepared::new(gpu, cfg, &data, false)?;
    prepared.set_mask(gpu, &mask)?;
    let expected = split::cpu::branch(&mask, &data, cfg.light_rounds, cfg.heavy_rounds);
    // both kernels write the same results: the branched one's, then the pair's
    let both: Vec<u32> = expected.iter().chain(&expected).copied().collect();
    Ok(Box::new(Checked::new(prepared, move |outputs| {
        let got: Vec<u32> = outputs.iter().flat_map(|b| words(b)).collect();
        Check::exact(&got, &both)
    })))
}

/// The divergent loop remapped by `strategy` (redirect, tile sort or deferral: the ones
/// [`remapped::prepare_remapped`] prepares), checked like the plain loop: the results do not
/// depend on the order of work.
pub(super) fn remap(gpu: &Gpu, cfg: &MicroConfig, strategy: Strategy) -> Result<Box<dyn Recording>> {
    let input = micro::generate(cfg)?;
    let expected = micro::reference(cfg, &input);
    match remapped::prepare_remapped(gpu, cfg, &input, strategy)? {
        Some(prepared) => Ok(micro_checked(prepared, expected)),
        None => Err(Error::invalid("strategy", format!("{strategy:?} remaps with a GPU round trip or on the host: use Workload::run"))),
    }
}
