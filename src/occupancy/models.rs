//! Two analytical performance models from the G80 literature that build on occupancy.
//!
//! - Carrillo, Siegel, Li, "Impact analysis of conditional and loop statements for the NVIDIA
//!   G80 architecture", Ingeniería y Desarrollo 27 (2010): eq. (1) for the speedup of splitting
//!   a divergent kernel into one kernel per branch, and the worst case of section 5 (eq. 2).
//! - Ryoo et al., "Optimization principles and application performance evaluation of a
//!   multithreaded GPU using CUDA", PPoPP 2008, section 4: potential throughput from the
//!   instruction mix, and the bandwidth a mix needs to keep the SPs busy.

use serde::Serialize;

use super::arch::Arch;
use super::calculator::{calculate, Launch};
use crate::error::{Error, Result};

fn positive(what: &str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(Error::invalid(what, format!("{value} must be a finite number above 0")))
    }
}

fn non_negative(what: &str, value: f64) -> Result<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(Error::invalid(what, format!("{value} must be a finite number, 0 or more")))
    }
}

fn fraction(what: &str, value: f64) -> Result<f64> {
    if value.is_finite() && (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(Error::invalid(what, format!("{value} must lie in 0..=1")))
    }
}

/// One branch of a divergent kernel: its time inside the unsplit kernel and the occupancy
/// its own kernel reaches after splitting.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Branch {
    /// `t_i`: runtime of this branch before splitting (any time unit, the same for all).
    pub time: f64,
    /// `ρ_i`: occupancy of the branch's kernel when it runs on its own, 0..=1.
    pub occupancy: f64,
}

/// Carrillo et al. eq. (1): `speedup = T / (Σ t_i·ρ_min/ρ_i + σ)`.
///
/// `branched_time` is `T`, the worst-case runtime of the unsplit kernel (all branches executed);
/// `branched_occupancy` is `ρ_min`, the occupancy of the unsplit kernel, which is set by its
/// most demanding branch; `launch_overhead` is `σ`, the cost of the extra kernel launches.
/// Each split kernel's time shrinks by `ρ_min/ρ_i` since throughput is taken to scale with
/// occupancy.
pub fn carrillo_speedup(branched_time: f64, branches: &[Branch], branched_occupancy: f64, launch_overhead: f64) -> Result<f64> {
    let total = positive("branched time T", branched_time)?;
    let split = split_time(branches, branched_occupancy, launch_overhead)?;
    Ok(total / split)
}

fn split_time(branches: &[Branch], branched_occupancy: f64, launch_overhead: f64) -> Result<f64> {
    if branches.is_empty() {
        return Err(Error::invalid("branches", "need at least one branch"));
    }
    let rho_min = positive("branched occupancy ρ_min", branched_occupancy)?;
    fraction("branched occupancy ρ_min", rho_min)?;
    let sigma = non_negative("launch overhead σ", launch_overhead)?;
    let mut sum = 0.0;
    for branch in branches {
        let t = non_negative("branch time t_i", branch.time)?;
        let rho = positive("branch occupancy ρ_i", branch.occupancy)?;
        fraction("branch occupancy ρ_i", rho)?;
        sum += t * rho_min / rho;
    }
    let denominator = sum + sigma;
    if denominator <= 0.0 {
        return Err(Error::invalid("branches", "split runtime Σ t_i·ρ_min/ρ_i + σ is 0; give the branches a time"));
    }
    Ok(denominator)
}

/// The worst case of Carrillo et al. section 5: every warp holds threads of every branch, so
/// the unsplit kernel executes all branches (`T = Σ t_i`) at the occupancy of its most
/// demanding branch (`ρ_min = min ρ_i`), while each split kernel runs at its own occupancy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SplitComparison {
    /// `ρ_min`.
    pub branched_occupancy: f64,
    /// `T`.
    pub branched_time: f64,
    /// `Σ t_i·ρ_min/ρ_i + σ`.
    pub split_time: f64,
    /// `T / split_time`; above 1 means splitting pays.
    pub speedup: f64,
    /// `(speedup - 1) * 100`, the form the paper quotes (≈ 19.7 % for 67 % vs 100 %).
    pub gain_percent: f64,
}

/// Eq. (2) generalized: speedup of splitting in the worst case.
pub fn carrillo_worst_case(branches: &[Branch], launch_overhead: f64) -> Result<SplitComparison> {
    if branches.is_empty() {
        return Err(Error::invalid("branches", "need at least one branch"));
    }
    let mut rho_min = f64::INFINITY;
    for branch in branches {
        non_negative("branch time t_i", branch.time)?;
        rho_min = rho_min.min(positive("branch occupancy ρ_i", branch.occupancy)?);
    }
    compare(branches, rho_min, launch_overhead)
}

/// The comparison once the unsplit kernel's occupancy `ρ_min` is known: `T = Σ t_i` against
/// the split time.
fn compare(branches: &[Branch], rho_min: f64, launch_overhead: f64) -> Result<SplitComparison> {
    let split = split_time(branches, rho_min, launch_overhead)?;
    let total = positive("branched time T = Σ t_i", branches.iter().map(|b| b.time).sum())?;
    let speedup = total / split;
    Ok(SplitComparison {
        branched_occupancy: rho_min,
        branched_time: total,
        split_time: split,
        speedup,
        gain_percent: (speedup - 1.0) * 100.0,
    })
}

/// A branch described by its register use, for [`branch_split_on_arch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BranchKernel {
    /// Registers per thread a kernel holding only this branch needs.
    pub registers_per_thread: u32,
}

/// Worst-case split speedup with occupancies from the calculator: the unsplit kernel holds the
/// registers of its largest branch, each split kernel only its own. `times[i]` is `t_i`.
pub fn branch_split_on_arch(
    arch: &Arch,
    threads_per_block: u32,
    shared_memory_per_block: u32,
    branches: &[BranchKernel],
    times: &[f64],
    launch_overhead: f64,
) -> Result<SplitComparison> {
    if branches.len() != times.len() {
        return Err(Error::invalid("branches", format!("{} branches but {} times; give one time per branch", branches.len(), times.len())));
    }
    let branched_registers = branches.iter().map(|b| b.registers_per_thread).max().unwrap_or(0);
    let occupancy_at = |registers: u32| -> Result<f64> {
        let result = calculate(arch, Launch::new(threads_per_block, registers, shared_memory_per_block))?;
        if result.active_blocks_per_sm == 0 {
            return Err(Error::invalid(
                "branch kernel",
                format!("{registers} registers/thread does not launch: {}", result.reason.unwrap_or_default()),
            ));
        }
        Ok(result.occupancy)
    };
    let rho_min = occupancy_at(branched_registers)?;
    let mut described = Vec::with_capacity(branches.len());
    for (branch, &time) in branches.iter().zip(times) {
        described.push(Branch { time, occupancy: occupancy_at(branch.registers_per_thread)? });
    }
    compare(&described, rho_min, launch_overhead)
}

/// Issue-rate figures of a GPU for Ryoo's estimates.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ThroughputDevice {
    /// Board name, for tables.
    pub name: &'static str,
    /// Scalar processors (CUDA cores) on the chip, each issuing one instruction per clock.
    pub scalar_processors: u32,
    /// Shader (SP) clock in GHz.
    pub clock_ghz: f64,
    /// Peak DRAM bandwidth in GB/s.
    pub memory_bandwidth_gb_per_s: f64,
}

impl ThroughputDevice {
    /// Instructions the SPs issue per second, in G/s (172.8 on the 8800 GTX).
    pub fn issue_rate_gops(&self) -> f64 {
        f64::from(self.scalar_processors) * self.clock_ghz
    }
}

/// GeForce 8800 GTX as Ryoo et al. describe it: 16 SMs x 8 SPs at 1.35 GHz, 86.4 GB/s.
pub const GEFORCE_8800_GTX: ThroughputDevice =
    ThroughputDevice { name: "GeForce 8800 GTX", scalar_processors: 128, clock_ghz: 1.35, memory_bandwidth_gb_per_s: 86.4 };

/// Fractions of a kernel's executed instructions (Ryoo counts them in PTX).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct InstructionMix {
    /// Fused multiply-adds over all instructions (1/8 for the plain matmul loop).
    pub fma_fraction: f64,
    /// Global-memory loads over all instructions (1/4 for the plain matmul loop).
    pub global_load_fraction: f64,
    /// Bytes each load moves (4 for a float).
    pub bytes_per_load: f64,
}

/// Ryoo's two upper bounds for one instruction mix.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThroughputEstimate {
    /// SPs x clock, G instructions/s.
    pub issue_rate_gops: f64,
    /// `2 flop x fma_fraction x issue rate`, GFLOP/s, reached only if nothing else stalls.
    pub potential_gflops: f64,
    /// `SPs x load fraction x bytes x clock`: bandwidth needed to keep every SP issuing, GB/s.
    pub required_bandwidth_gb_per_s: f64,
    /// The device's peak DRAM bandwidth, GB/s.
    pub available_bandwidth_gb_per_s: f64,
    /// Required over available; above 1 the kernel is bandwidth-bound.
    pub bandwidth_ratio: f64,
    /// `bandwidth_ratio > 1`.
    pub bandwidth_bound: bool,
    /// Potential throughput scaled down by the bandwidth shortfall (an upper bound; Ryoo's
    /// plain matmul reaches 10.58 of the 21.6 GFLOP/s this gives).
    pub bandwidth_limited_gflops: f64,
}

/// Ryoo et al. section 4.1/4.3: potential throughput and the bandwidth check.
pub fn ryoo_estimate(device: &ThroughputDevice, mix: InstructionMix) -> Result<ThroughputEstimate> {
    let fma = fraction("FMA fraction", mix.fma_fraction)?;
    let loads = fraction("global load fraction", mix.global_load_fraction)?;
    let bytes = non_negative("bytes per load", mix.bytes_per_load)?;
    if device.scalar_processors == 0 {
        return Err(Error::invalid("device", "needs at least one scalar processor"));
    }
    positive("clock (GHz)", device.clock_ghz)?;
    let available = positive("memory bandwidth (GB/s)", device.memory_bandwidth_gb_per_s)?;

    let issue = device.issue_rate_gops();
    let potential = 2.0 * fma * issue;
    let required = f64::from(device.scalar_processors) * loads * bytes * device.clock_ghz;
    let ratio = required / available;
    Ok(ThroughputEstimate {
        issue_rate_gops: issue,
        potential_gflops: potential,
        required_bandwidth_gb_per_s: required,
        available_bandwidth_gb_per_s: available,
        bandwidth_ratio: ratio,
        bandwidth_bound: ratio > 1.0,
        bandwidth_limited_gflops: if ratio > 1.0 { potential / ratio } else { potential },
    })
}
