//! The occupancy calculation of the CUDA Occupancy Calculator spreadsheet, with the
//! per-block register check and reserved shared memory of `cuda_occupancy.h`.

use serde::Serialize;

use super::arch::{round_down, round_up, Arch, RegisterGranularity};
use crate::error::{Error, Result};

/// What a kernel launch asks of each block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Launch {
    /// Threads (invocations) per block (workgroup).
    pub threads_per_block: u32,
    /// 32-bit registers each thread uses (AMD: VGPRs); 0 leaves registers out of the limits.
    pub registers_per_thread: u32,
    /// Static plus dynamic shared memory (workgroup memory), in bytes.
    pub shared_memory_per_block: u32,
}

impl Launch {
    /// A launch of `threads_per_block` threads using `registers_per_thread` registers each and
    /// `shared_memory_per_block` bytes of shared memory.
    pub fn new(threads_per_block: u32, registers_per_thread: u32, shared_memory_per_block: u32) -> Self {
        Launch { threads_per_block, registers_per_thread, shared_memory_per_block }
    }
}

/// The resource that caps the number of resident blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    /// Warp (thread) slots per SM.
    Warps,
    /// Resident blocks per SM.
    Blocks,
    /// The register file.
    Registers,
    /// Shared memory (LDS).
    SharedMemory,
    /// Not even one block fits; see `reason`.
    DoesNotLaunch,
}

impl Limiter {
    /// The snake_case name also used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Limiter::Warps => "warps",
            Limiter::Blocks => "blocks",
            Limiter::Registers => "registers",
            Limiter::SharedMemory => "shared_memory",
            Limiter::DoesNotLaunch => "does_not_launch",
        }
    }
}

impl std::fmt::Display for Limiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Blocks per SM each resource alone would allow. A resource the launch does not use
/// (no registers, no shared memory) reports the block limit, as the spreadsheet does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BlockLimits {
    /// Limit from warp slots per SM.
    pub warps: u32,
    /// The hardware limit on resident blocks per SM.
    pub blocks: u32,
    /// Limit from the register file (0 when the block's registers do not fit at all).
    pub registers: u32,
    /// Limit from shared memory (0 when the block's request does not fit at all).
    pub shared_memory: u32,
}

impl BlockLimits {
    /// The tightest of the four limits: resident blocks per SM.
    pub fn min(&self) -> u32 {
        self.warps.min(self.blocks).min(self.registers).min(self.shared_memory)
    }
}

/// Result of one calculation: what the calculator's output panel shows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Occupancy {
    /// Name of the [`Arch`] preset.
    pub arch: &'static str,
    /// The launch's threads per block.
    pub threads_per_block: u32,
    /// The launch's registers per thread.
    pub registers_per_thread: u32,
    /// The launch's shared memory per block in bytes, before the runtime's reserve.
    pub shared_memory_per_block: u32,
    /// Threads per block rounded up to whole warps.
    pub warps_per_block: u32,
    /// Registers one block takes after rounding to the allocation unit and granularity.
    pub allocated_registers_per_block: u64,
    /// Requested plus reserved shared memory, rounded to the allocation unit.
    pub allocated_shared_memory_per_block: u64,
    /// Blocks per SM each resource alone allows.
    pub block_limits: BlockLimits,
    /// Resident blocks per SM: the least of `block_limits` (0 when the kernel does not launch).
    pub active_blocks_per_sm: u32,
    /// Resident warps per SM (active blocks × warps per block).
    pub active_warps_per_sm: u32,
    /// Resident threads per SM (active blocks × threads per block).
    pub active_threads_per_sm: u32,
    /// The architecture's warp slots per SM, the denominator of `occupancy`.
    pub max_warps_per_sm: u32,
    /// Active warps over the SM maximum, 0..=1.
    pub occupancy: f64,
    /// The binding limit; on a tie the first of warps, blocks, registers, shared memory,
    /// since a resource tied with a hardware slot limit costs nothing extra.
    pub limited_by: Limiter,
    /// Every limit equal to the active block count (empty when the kernel does not launch).
    pub tied_limits: Vec<Limiter>,
    /// Why no block fits, when `limited_by` is `does_not_launch`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The arithmetic core, free of allocation so that the curves stay cheap.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Core {
    pub warps_per_block: u32,
    pub registers_per_block: u64,
    pub shared_memory_per_block: u64,
    pub limits: BlockLimits,
    pub active_blocks: u32,
    /// Which check refused the launch, if any.
    pub refusal: Option<Refusal>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The block's register allocation exceeds what one block may hold.
    RegistersPerBlock {
        per_warp: u64,
        counted_warps: u64,
    },
    /// The register file cannot hold even one block.
    RegistersPerSm,
    SharedMemoryPerBlock {
        needed: u64,
    },
    SharedMemoryPerSm,
}

impl Core {
    pub(crate) fn occupancy(&self, arch: &Arch) -> f64 {
        if arch.max_warps_per_sm == 0 {
            return 0.0;
        }
        f64::from(self.active_blocks * self.warps_per_block) / f64::from(arch.max_warps_per_sm)
    }
}

/// Limits computed without input checks; callers have validated or clamp `launch`.
/// Threads per block must be at least 1.
pub(crate) fn compute(arch: &Arch, launch: Launch) -> Core {
    let warp = u64::from(arch.threads_per_warp.max(1));
    let threads = u64::from(launch.threads_per_block.max(1));
    let registers = u64::from(launch.registers_per_thread);
    let warps_per_block = threads.div_ceil(warp);

    let block_cap =
        if arch.single_warp_blocks_skip_block_limit && warps_per_block == 1 { arch.max_warps_per_sm } else { arch.max_blocks_per_sm };

    let by_warps = u64::from(arch.max_warps_per_sm) / warps_per_block;
    let mut refusal = None;

    // Registers.
    let (registers_per_block, by_registers) = match arch.register_granularity {
        RegisterGranularity::Block => {
            let warps = round_up(warps_per_block, u64::from(arch.warp_allocation_granularity));
            let per_block = round_up(warps * registers * warp, u64::from(arch.register_allocation_unit));
            let blocks = if registers == 0 { u64::from(block_cap) } else { u64::from(arch.registers_per_sm) / per_block };
            if blocks == 0 {
                refusal = Some(Refusal::RegistersPerSm);
            }
            (per_block, blocks)
        }
        RegisterGranularity::Warp => {
            let per_warp = round_up(registers * warp, u64::from(arch.register_allocation_unit));
            let per_block = per_warp * warps_per_block;
            let banks = u64::from(arch.warp_allocation_granularity.max(1));
            // cuda_occupancy.h: the hardware checks the block as if its warps were spread
            // over all sub-partitions, so the warp count is rounded up to the bank count.
            let checked = per_warp * round_up(warps_per_block, banks);
            let blocks = if registers == 0 {
                u64::from(block_cap)
            } else if checked > u64::from(arch.max_registers_per_block) {
                let counted_warps = round_up(warps_per_block, banks);
                refusal = Some(Refusal::RegistersPerBlock { per_warp, counted_warps });
                0
            } else {
                // Spreadsheet: FLOOR(FLOOR(max regs per block / regs per warp, warp
                // granularity) / warps per block) * FLOOR(regs per SM / max regs per block).
                let warps_fit = round_down(u64::from(arch.max_registers_per_block) / per_warp, banks);
                let copies = u64::from(arch.registers_per_sm / arch.max_registers_per_block.max(1));
                let blocks = warps_fit / warps_per_block * copies;
                if blocks == 0 {
                    refusal = Some(Refusal::RegistersPerSm);
                }
                blocks
            };
            (per_block, blocks)
        }
    };

    // Shared memory.
    let requested = u64::from(launch.shared_memory_per_block) + u64::from(arch.reserved_shared_memory_per_block);
    let shared_per_block = round_up(requested, u64::from(arch.shared_memory_allocation_unit));
    let shared_limit = u64::from(arch.max_shared_memory_per_block) + u64::from(arch.reserved_shared_memory_per_block);
    let by_shared = if shared_per_block > shared_limit {
        if refusal.is_none() {
            refusal = Some(Refusal::SharedMemoryPerBlock { needed: shared_per_block });
        }
        0
    } else {
        // No shared memory at all leaves only the block limit, as in the spreadsheet.
        let blocks = u64::from(arch.shared_memory_per_sm).checked_div(shared_per_block).unwrap_or(u64::from(block_cap));
        if blocks == 0 && refusal.is_none() {
            refusal = Some(Refusal::SharedMemoryPerSm);
        }
        blocks
    };

    let clamp = |x: u64| x.min(u64::from(u32::MAX)) as u32;
    let limits = BlockLimits { warps: clamp(by_warps), blocks: block_cap, registers: clamp(by_registers), shared_memory: clamp(by_shared) };
    let active_blocks = limits.min();
    Core {
        warps_per_block: clamp(warps_per_block),
        registers_per_block,
        shared_memory_per_block: shared_per_block,
        limits,
        active_blocks,
        refusal: if active_blocks == 0 { refusal } else { None },
    }
}

/// Rejects launches no kernel can have: zero threads, blocks over the arch maximum,
/// more registers than a thread can address.
pub fn check_launch(arch: &Arch, launch: Launch) -> Result<()> {
    if launch.threads_per_block == 0 {
        return Err(Error::invalid("threads per block", "must be at least 1"));
    }
    if launch.threads_per_block > arch.max_threads_per_block {
        return Err(Error::Limit {
            what: format!("threads per block on {}", arch.name),
            requested: u64::from(launch.threads_per_block),
            limit: u64::from(arch.max_threads_per_block),
            hint: format!(
                "use at most {} threads per block, ideally a multiple of the {} size {}",
                arch.max_threads_per_block,
                arch.warp_word(),
                arch.threads_per_warp
            ),
        });
    }
    if launch.registers_per_thread > arch.max_registers_per_thread {
        return Err(Error::Limit {
            what: format!("registers per thread on {}", arch.name),
            requested: u64::from(launch.registers_per_thread),
            limit: u64::from(arch.max_registers_per_thread),
            hint: "the compiler spills beyond this limit, so no kernel uses more; pass the \
                   count the compiler reports"
                .to_string(),
        });
    }
    Ok(())
}

/// Active blocks, warps and occupancy of `launch` on one SM of `arch`, and what limits them.
pub fn calculate(arch: &Arch, launch: Launch) -> Result<Occupancy> {
    check_launch(arch, launch)?;
    let core = compute(arch, launch);
    let limits = core.limits;
    let active = core.active_blocks;

    let ordered = [
        (Limiter::Warps, limits.warps),
        (Limiter::Blocks, limits.blocks),
        (Limiter::Registers, limits.registers),
        (Limiter::SharedMemory, limits.shared_memory),
    ];
    let (limited_by, tied_limits, reason) = if active == 0 {
        (Limiter::DoesNotLaunch, Vec::new(), Some(refusal_reason(arch, launch, &core)))
    } else {
        let tied: Vec<Limiter> = ordered.iter().filter(|(_, blocks)| *blocks == active).map(|(limiter, _)| *limiter).collect();
        (tied[0], tied, None)
    };

    Ok(Occupancy {
        arch: arch.name,
        threads_per_block: launch.threads_per_block,
        registers_per_thread: launch.registers_per_thread,
        shared_memory_per_block: launch.shared_memory_per_block,
        warps_per_block: core.warps_per_block,
        allocated_registers_per_block: core.registers_per_block,
        allocated_shared_memory_per_block: core.shared_memory_per_block,
        block_limits: limits,
        active_blocks_per_sm: active,
        active_warps_per_sm: active * core.warps_per_block,
        active_threads_per_sm: active * launch.threads_per_block,
        max_warps_per_sm: arch.max_warps_per_sm,
        occupancy: core.occupancy(arch),
        limited_by,
        tied_limits,
        reason,
    })
}

fn refusal_reason(arch: &Arch, launch: Launch, core: &Core) -> String {
    let sm = arch.sm_word();
    let warp = arch.warp_word();
    match core.refusal {
        Some(Refusal::RegistersPerBlock { per_warp, counted_warps }) => format!(
            "at {} registers/thread each {warp} takes {per_warp} registers; the block's {} \
             {warp}s, counted as {counted_warps} (a multiple of the {} register banks), need {} \
             registers, over the {} one block may hold; use fewer registers or smaller blocks",
            launch.registers_per_thread,
            core.warps_per_block,
            arch.register_banks(),
            per_warp * counted_warps,
            arch.max_registers_per_block
        ),
        Some(Refusal::RegistersPerSm) => format!(
            "one block needs {} registers at {} registers/thread, more than the {} one {sm} can \
             give it; use fewer registers or smaller blocks",
            core.registers_per_block, launch.registers_per_thread, arch.registers_per_sm
        ),
        Some(Refusal::SharedMemoryPerBlock { needed }) => format!(
            "a block needs {needed} bytes of shared memory ({} requested + {} reserved, rounded \
             to {} bytes), over the per-block maximum of {} bytes",
            launch.shared_memory_per_block,
            arch.reserved_shared_memory_per_block,
            arch.shared_memory_allocation_unit,
            u64::from(arch.max_shared_memory_per_block) + u64::from(arch.reserved_shared_memory_per_block)
        ),
        Some(Refusal::SharedMemoryPerSm) => format!(
            "a block needs {} bytes of shared memory, more than the {} bytes of one {sm}",
            core.shared_memory_per_block, arch.shared_memory_per_sm
        ),
        None => format!("no block fits on one {sm}"),
    }
}
