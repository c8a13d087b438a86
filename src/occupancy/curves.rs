//! The three graphs of the occupancy calculator: occupancy against block size, registers
//! per thread and shared memory per block, each holding the other two inputs fixed.

use serde::Serialize;

use super::arch::Arch;
use super::calculator::{check_launch, compute, Launch};
use crate::error::Result;

/// The input a curve varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CurveAxis {
    /// Block size in threads.
    ThreadsPerBlock,
    /// 32-bit registers per thread.
    RegistersPerThread,
    /// Shared memory per block in bytes.
    SharedMemoryPerBlock,
}

impl CurveAxis {
    /// Axis title for plots (shared memory says its unit, bytes).
    pub fn label(self) -> &'static str {
        match self {
            CurveAxis::ThreadsPerBlock => "threads per block",
            CurveAxis::RegistersPerThread => "registers per thread",
            CurveAxis::SharedMemoryPerBlock => "shared memory per block (bytes)",
        }
    }
}

/// One plotted series: `(x, occupancy in 0..=1)` in increasing `x`, plus the launch's own point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Curve {
    /// The input varied along `x`.
    pub axis: CurveAxis,
    /// `(x, occupancy)` samples, `x` in the axis' unit and increasing.
    pub points: Vec<(u32, f64)>,
    /// The point of the launch the curves were drawn for.
    pub current: (u32, f64),
    /// Index of `current` in `points`, when its `x` lies on the sampled grid.
    pub current_index: Option<usize>,
}

/// All three curves for one launch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OccupancyCurves {
    /// Occupancy against threads per block.
    pub threads_per_block: Curve,
    /// Occupancy against registers per thread.
    pub registers_per_thread: Curve,
    /// Occupancy against shared memory per block.
    pub shared_memory_per_block: Curve,
}

/// Step of the shared memory axis: the spreadsheet samples every 512 bytes; archs with a
/// coarser allocation unit would only repeat values at that spacing.
pub fn shared_memory_step(arch: &Arch) -> u32 {
    arch.shared_memory_allocation_unit.max(512)
}

fn sample(arch: &Arch, axis: CurveAxis, launch: Launch, xs: impl Iterator<Item = u32>) -> Curve {
    let at = |x: u32| {
        let mut varied = launch;
        match axis {
            CurveAxis::ThreadsPerBlock => varied.threads_per_block = x,
            CurveAxis::RegistersPerThread => varied.registers_per_thread = x,
            CurveAxis::SharedMemoryPerBlock => varied.shared_memory_per_block = x,
        }
        compute(arch, varied).occupancy(arch)
    };
    let points: Vec<(u32, f64)> = xs.map(|x| (x, at(x))).collect();
    let current_x = match axis {
        CurveAxis::ThreadsPerBlock => launch.threads_per_block,
        CurveAxis::RegistersPerThread => launch.registers_per_thread,
        CurveAxis::SharedMemoryPerBlock => launch.shared_memory_per_block,
    };
    let current_index = points.binary_search_by_key(&current_x, |&(x, _)| x).ok();
    let current = (current_x, current_index.map_or_else(|| at(current_x), |i| points[i].1));
    Curve { axis, points, current, current_index }
}

/// Occupancy for every multiple of the warp size up to the largest block.
pub fn threads_curve(arch: &Arch, launch: Launch) -> Result<Curve> {
    check_launch(arch, launch)?;
    let step = arch.threads_per_warp.max(1) as usize;
    let xs = (step as u32..=arch.max_threads_per_block).step_by(step);
    Ok(sample(arch, CurveAxis::ThreadsPerBlock, launch, xs))
}

/// Occupancy for 1 to the maximum registers per thread; never increases with `x`.
pub fn registers_curve(arch: &Arch, launch: Launch) -> Result<Curve> {
    check_launch(arch, launch)?;
    Ok(sample(arch, CurveAxis::RegistersPerThread, launch, 1..=arch.max_registers_per_thread))
}

/// Occupancy from 0 to the per-block shared memory maximum; never increases with `x`.
pub fn shared_memory_curve(arch: &Arch, launch: Launch) -> Result<Curve> {
    check_launch(arch, launch)?;
    let xs = (0..=arch.max_shared_memory_per_block).step_by(shared_memory_step(arch) as usize);
    Ok(sample(arch, CurveAxis::SharedMemoryPerBlock, launch, xs))
}

/// The three calculator graphs for `launch`.
pub fn occupancy_curves(arch: &Arch, launch: Launch) -> Result<OccupancyCurves> {
    Ok(OccupancyCurves {
        threads_per_block: threads_curve(arch, launch)?,
        registers_per_thread: registers_curve(arch, launch)?,
        shared_memory_per_block: shared_memory_curve(arch, launch)?,
    })
}
