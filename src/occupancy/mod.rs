//! Analytical occupancy model: how many blocks (workgroups) of a kernel fit on one SM (CU)
//! given its block size, registers per thread and shared memory, following the CUDA
//! Occupancy Calculator; the three calculator curves; the workgroup size and workgroup
//! memory of a WGSL kernel; and two occupancy-based performance models (Carrillo et al.'s
//! branch splitting, Ryoo et al.'s throughput and bandwidth bounds).
//!
//! Nothing here touches a GPU, so it is cheap enough to re-run on every UI frame.

mod arch;
mod calculator;
mod curves;
mod kernel;
mod models;

#[cfg(test)]
mod tests;

pub use arch::{arch_for_adapter, arch_names, find_arch, Arch, RegisterGranularity, Vendor, ARCHS};
pub use calculator::{calculate, check_launch, BlockLimits, Launch, Limiter, Occupancy};
pub use curves::{
    occupancy_curves, registers_curve, shared_memory_curve, shared_memory_step, threads_curve, Curve, CurveAxis, OccupancyCurves,
};
pub use kernel::{
    kernel_occupancy, kernel_resources, kernel_resources_with_workgroup_size, module_resources, KernelResources, WorkgroupVariable,
};
pub use models::{
    branch_split_on_arch, carrillo_speedup, carrillo_worst_case, ryoo_estimate, Branch, BranchKernel, InstructionMix, SplitComparison,
    ThroughputDevice, ThroughputEstimate, GEFORCE_8800_GTX,
};
