//! Architecture presets: every per-SM limit the CUDA Occupancy Calculator uses, for NVIDIA
//! compute capabilities 1.0 to 9.0 and for AMD GCN, CDNA and RDNA.
//!
//! Sources:
//! - NVIDIA limits: CUDA C++ Programming Guide, "Compute Capabilities" appendix, table
//!   "Technical Specifications per Compute Capability" (threads/warps/blocks per SM, register
//!   file, registers per block and per thread, shared memory per SM and per block, the 1 KB
//!   of shared memory the runtime reserves per block on 8.x and 9.0).
//! - Allocation units and granularities: CUDA_Occupancy_Calculator.xls, "GPU Data" sheet
//!   (register allocation unit 256 per block on 1.0/1.1, 512 per block on 1.2/1.3, 64 per warp
//!   on 2.x, 256 per warp from 3.0; warp allocation granularity 2 on 1.x/2.x/6.0, 4 elsewhere;
//!   124 registers per thread on 1.x; shared memory unit 512 B on 1.x, 128 B on 2.x, 256 B on
//!   3.x-7.x) and `cuda_occupancy.h` from the CUDA 12 toolkit (128 B unit on 8.x/9.0,
//!   register sub-partitions per SM, the per-block register check).
//! - SM counts: the product whitepapers of the named boards (G80 technical brief, GT200,
//!   Fermi, GK110, GM204, GP100, GV100, Turing, GA100, GA102, Ada, GH100).
//! - AMD: AMD "Vega" ISA reference (10 waves per SIMD, 256 VGPRs per lane, granule 4),
//!   CDNA2/CDNA3 ISA references and whitepapers (512 unified VGPR/AGPR per lane, granule 8,
//!   8 waves per SIMD), RDNA/RDNA2/RDNA3 whitepapers (128 KB / 192 KB VGPR file per SIMD32,
//!   WGP of four SIMD32 with 128 KB LDS), GPUOpen "Occupancy explained", and LLVM
//!   `AMDGPUBaseInfo.cpp` (VGPR allocation granule, total VGPRs, max waves per EU,
//!   16 barriers per CU or 32 per WGP, single-wave workgroups needing no barrier).

use serde::Serialize;

use crate::error::{Error, Result};

/// GPU vendor; decides the wording ("warp"/"SM" against "wave"/"CU").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Vendor {
    /// NVIDIA: warps on streaming multiprocessors.
    Nvidia,
    /// AMD: waves on compute units (WGPs on RDNA).
    Amd,
}

/// How the register file is carved up between resident blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RegisterGranularity {
    /// CC 1.x: one allocation per block of `ceil(warps, warp granularity) * 32 * R` registers,
    /// rounded up to the allocation unit.
    Block,
    /// CC 2.0 and later, and AMD: each warp (wave) gets `R * warp size` registers rounded up to
    /// the allocation unit, out of one of `warp_allocation_granularity` equal register banks
    /// (SM sub-partitions on NVIDIA, SIMDs on AMD).
    Warp,
}

/// Per-SM (per-CU, per-WGP on RDNA) resource limits of one GPU generation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Arch {
    /// Canonical preset name, e.g. `cc8.0` or `rdna3`.
    pub name: &'static str,
    /// Other names accepted by [`find_arch`].
    pub aliases: &'static [&'static str],
    /// Who makes it; decides the wording of messages.
    pub vendor: Vendor,
    /// The board the SM count belongs to, and its chip.
    pub device: &'static str,
    /// ISA target (`sm_80`, `gfx942`).
    pub isa: &'static str,
    /// Streaming multiprocessors (NVIDIA), compute units (GCN/CDNA) or WGPs (RDNA).
    pub sm_count: u32,
    /// Warp (wave) width in threads.
    pub threads_per_warp: u32,
    /// Resident warps an SM can hold.
    pub max_warps_per_sm: u32,
    /// Resident threads an SM can hold.
    pub max_threads_per_sm: u32,
    /// Resident blocks (workgroups) an SM can hold.
    pub max_blocks_per_sm: u32,
    /// AMD: `max_blocks_per_sm` counts hardware barriers, which single-wave workgroups do not
    /// take, so those are limited only by wave slots.
    pub single_warp_blocks_skip_block_limit: bool,
    /// 32-bit registers per SM (AMD: VGPRs per lane * wave size * SIMDs).
    pub registers_per_sm: u32,
    /// 32-bit registers one block may hold in all.
    pub max_registers_per_block: u32,
    /// Registers handed out at a time (per block on CC 1.x, per warp after).
    pub register_allocation_unit: u32,
    /// Whether registers are allocated per block or per warp.
    pub register_granularity: RegisterGranularity,
    /// CC 1.x: block warps are rounded up to this before sizing registers. Later: warps
    /// limited by registers are a multiple of this (one register bank per scheduler/SIMD).
    pub warp_allocation_granularity: u32,
    /// Per-thread maximum the compiler can use (AMD: VGPRs per wave, AGPRs included on CDNA).
    pub max_registers_per_thread: u32,
    /// Shared memory (LDS) per SM at the largest carveout, in bytes.
    pub shared_memory_per_sm: u32,
    /// Shared memory is handed to a block in multiples of this many bytes.
    pub shared_memory_allocation_unit: u32,
    /// Largest shared memory a block may request (the opt-in maximum on 7.x and later).
    pub max_shared_memory_per_block: u32,
    /// Shared memory the CUDA runtime takes for itself in every block (1 KB on 8.x, 9.0).
    pub reserved_shared_memory_per_block: u32,
    /// Largest block (workgroup) in threads.
    pub max_threads_per_block: u32,
}

impl Arch {
    /// "warp" or "wave", for messages.
    pub fn warp_word(&self) -> &'static str {
        match self.vendor {
            Vendor::Nvidia => "warp",
            Vendor::Amd => "wave",
        }
    }

    /// "SM", "CU" or "WGP", for messages.
    pub fn sm_word(&self) -> &'static str {
        match self.vendor {
            Vendor::Nvidia => "SM",
            Vendor::Amd if self.name.starts_with("rdna") => "WGP",
            Vendor::Amd => "CU",
        }
    }

    /// Register banks per SM: SM sub-partitions (NVIDIA) or SIMDs (AMD).
    pub fn register_banks(&self) -> u32 {
        match self.register_granularity {
            RegisterGranularity::Block => 1,
            RegisterGranularity::Warp => self.warp_allocation_granularity.max(1),
        }
    }

    /// Warps (waves) one register bank holds at `registers_per_thread`; on AMD this is the
    /// classic "waves per SIMD from the VGPR count": `min(max waves, total / align(R, granule))`.
    pub fn warps_per_register_bank(&self, registers_per_thread: u32) -> u32 {
        let banks = self.register_banks();
        let bank_cap = self.max_warps_per_sm / banks;
        let per_warp =
            round_up(u64::from(registers_per_thread) * u64::from(self.threads_per_warp), u64::from(self.register_allocation_unit));
        if per_warp == 0 {
            return bank_cap;
        }
        let bank_registers = u64::from(self.registers_per_sm / banks);
        (bank_registers / per_warp).min(u64::from(bank_cap)) as u32
    }
}

/// `x` rounded up to a multiple of `unit` (a zero unit leaves `x` alone).
pub(crate) fn round_up(x: u64, unit: u64) -> u64 {
    if unit == 0 {
        x
    } else {
        x.div_ceil(unit) * unit
    }
}

/// `x` rounded down to a multiple of `unit`.
pub(crate) fn round_down(x: u64, unit: u64) -> u64 {
    x.checked_div(unit).map_or(x, |quotient| quotient * unit)
}

const KB: u32 = 1024;

/// An NVIDIA preset whose per-warp fields follow the occupancy calculator; only the fields
/// that differ between generations are parameters.
#[allow(clippy::too_many_arguments, reason = "one argument per column of the architecture table")]
const fn nvidia(
    name: &'static str,
    aliases: &'static [&'static str],
    device: &'static str,
    isa: &'static str,
    sm_count: u32,
    max_warps_per_sm: u32,
    max_blocks_per_sm: u32,
    registers_per_sm: u32,
    register_allocation_unit: u32,
    register_granularity: RegisterGranularity,
    warp_allocation_granularity: u32,
    max_registers_per_thread: u32,
    shared_memory_per_sm: u32,
    shared_memory_allocation_unit: u32,
    max_shared_memory_per_block: u32,
    reserved_shared_memory_per_block: u32,
    max_threads_per_block: u32,
) -> Arch {
    Arch {
        name,
        aliases,
        vendor: Vendor::Nvidia,
        device,
        isa,
        sm_count,
        threads_per_warp: 32,
        max_warps_per_sm,
        max_threads_per_sm: max_warps_per_sm * 32,
        max_blocks_per_sm,
        single_warp_blocks_skip_block_limit: false,
        registers_per_sm,
        // Every listed generation lets one block use the whole register file.
        max_registers_per_block: registers_per_sm,
        register_allocation_unit,
        register_granularity,
        warp_allocation_granularity,
        max_registers_per_thread,
        shared_memory_per_sm,
        shared_memory_allocation_unit,
        max_shared_memory_per_block,
        reserved_shared_memory_per_block,
        max_threads_per_block,
    }
}

/// An AMD preset from the vendor's own quantities. The per-SIMD VGPR file maps onto the
/// calculator's per-warp model: one register bank per SIMD, the allocation unit is the VGPR
/// granule times the wave size, and the SM warp cap is SIMDs times waves per SIMD.
#[allow(clippy::too_many_arguments, reason = "one argument per column of the architecture table")]
const fn amd(
    name: &'static str,
    aliases: &'static [&'static str],
    device: &'static str,
    isa: &'static str,
    sm_count: u32,
    wave_size: u32,
    simds: u32,
    max_waves_per_simd: u32,
    vgprs_per_lane: u32,
    vgpr_granule: u32,
    max_vgprs_per_wave: u32,
    max_barriers: u32,
    lds_per_sm: u32,
) -> Arch {
    Arch {
        name,
        aliases,
        vendor: Vendor::Amd,
        device,
        isa,
        sm_count,
        threads_per_warp: wave_size,
        max_warps_per_sm: simds * max_waves_per_simd,
        max_threads_per_sm: simds * max_waves_per_simd * wave_size,
        max_blocks_per_sm: max_barriers,
        single_warp_blocks_skip_block_limit: true,
        registers_per_sm: simds * vgprs_per_lane * wave_size,
        max_registers_per_block: simds * vgprs_per_lane * wave_size,
        register_allocation_unit: vgpr_granule * wave_size,
        register_granularity: RegisterGranularity::Warp,
        warp_allocation_granularity: simds,
        max_registers_per_thread: max_vgprs_per_wave,
        shared_memory_per_sm: lds_per_sm,
        // LDS_SIZE in COMPUTE_PGM_RSRC2 counts 128-dword blocks on GFX7 and later.
        shared_memory_allocation_unit: 512,
        // A workgroup addresses at most 64 KB of LDS on all listed generations.
        max_shared_memory_per_block: 64 * KB,
        reserved_shared_memory_per_block: 0,
        max_threads_per_block: 1024,
    }
}

use RegisterGranularity::{Block, Warp};

/// All presets, oldest first, NVIDIA then AMD.
#[rustfmt::skip]
pub static ARCHS: &[Arch] = &[
    // CC 1.0/1.1: 8 K registers per SM allocated per block in units of 256 (xls).
    nvidia("cc1.0", &["g80", "8800gtx", "geforce8800gtx", "sm_10", "tesla1"],
        "GeForce 8800 GTX (G80)", "sm_10", 16,
        24, 8, 8192, 256, Block, 2, 124, 16 * KB, 512, 16 * KB, 0, 512),
    nvidia("cc1.1", &["g92", "9800gtx", "sm_11"],
        "GeForce 9800 GTX (G92)", "sm_11", 16,
        24, 8, 8192, 256, Block, 2, 124, 16 * KB, 512, 16 * KB, 0, 512),
    // CC 1.2/1.3: 16 K registers, per-block unit 512 (xls).
    nvidia("cc1.2", &["gt215", "gt240", "sm_12"],
        "GeForce GT 240 (GT215)", "sm_12", 12,
        32, 8, 16384, 512, Block, 2, 124, 16 * KB, 512, 16 * KB, 0, 512),
    nvidia("cc1.3", &["gt200", "gtx280", "sm_13"],
        "GeForce GTX 280 (GT200)", "sm_13", 30,
        32, 8, 16384, 512, Block, 2, 124, 16 * KB, 512, 16 * KB, 0, 512),
    // CC 2.0: registers per warp in units of 64, two schedulers (xls).
    nvidia("cc2.0", &["fermi", "gf100", "gtx480", "sm_20"],
        "GeForce GTX 480 (GF100)", "sm_20", 15,
        48, 8, 32768, 64, Warp, 2, 63, 48 * KB, 128, 48 * KB, 0, 1024),
    nvidia("cc3.5", &["kepler", "gk110", "k20x", "sm_35"],
        "Tesla K20X (GK110)", "sm_35", 14,
        64, 16, 65536, 256, Warp, 4, 255, 48 * KB, 256, 48 * KB, 0, 1024),
    nvidia("cc5.2", &["maxwell", "gm204", "gtx980", "sm_52"],
        "GeForce GTX 980 (GM204)", "sm_52", 16,
        64, 32, 65536, 256, Warp, 4, 255, 96 * KB, 256, 48 * KB, 0, 1024),
    // CC 6.0: GP100 has two sub-partitions per SM (cuda_occupancy.h), hence granularity 2.
    nvidia("cc6.0", &["pascal", "gp100", "p100", "sm_60"],
        "Tesla P100 (GP100)", "sm_60", 56,
        64, 32, 65536, 256, Warp, 2, 255, 64 * KB, 256, 48 * KB, 0, 1024),
    nvidia("cc7.0", &["volta", "gv100", "v100", "sm_70"],
        "Tesla V100 (GV100)", "sm_70", 80,
        64, 32, 65536, 256, Warp, 4, 255, 96 * KB, 256, 96 * KB, 0, 1024),
    nvidia("cc7.5", &["turing", "tu102", "rtx2080ti", "t4", "sm_75"],
        "GeForce RTX 2080 Ti (TU102)", "sm_75", 68,
        32, 16, 65536, 256, Warp, 4, 255, 64 * KB, 256, 64 * KB, 0, 1024),
    // 8.x and 9.0: 128 B shared memory unit and 1 KB reserved per block (cuda_occupancy.h).
    nvidia("cc8.0", &["ampere", "ga100", "a100", "sm_80"],
        "A100 (GA100)", "sm_80", 108,
        64, 32, 65536, 256, Warp, 4, 255, 164 * KB, 128, 163 * KB, KB, 1024),
    nvidia("cc8.6", &["ga102", "rtx3090", "a40", "sm_86"],
        "GeForce RTX 3090 (GA102)", "sm_86", 82,
        48, 16, 65536, 256, Warp, 4, 255, 100 * KB, 128, 99 * KB, KB, 1024),
    nvidia("cc8.9", &["ada", "ad102", "rtx4090", "l40", "sm_89"],
        "GeForce RTX 4090 (AD102)", "sm_89", 128,
        48, 24, 65536, 256, Warp, 4, 255, 100 * KB, 128, 99 * KB, KB, 1024),
    nvidia("cc9.0", &["hopper", "gh100", "h100", "h200", "sm_90"],
        "H100 SXM5 / H200 (GH100)", "sm_90", 132,
        64, 32, 65536, 256, Warp, 4, 255, 228 * KB, 128, 227 * KB, KB, 1024),
    // GCN (Vega): 4 x SIMD16 running wave64, 10 waves per SIMD, 256 VGPRs per lane, granule 4.
    amd("gcn", &["gfx900", "vega", "vega64", "gcn5"],
        "Radeon RX Vega 64 (gfx900)", "gfx900", 64,
        64, 4, 10, 256, 4, 256, 16, 64 * KB),
    // CDNA2/3: unified 512 VGPR+AGPR per lane, granule 8, 8 waves per SIMD (LLVM isGFX90A).
    amd("cdna2", &["gfx90a", "mi250x", "mi210", "mi200"],
        "Instinct MI250X, one GCD (gfx90a)", "gfx90a", 110,
        64, 4, 8, 512, 8, 512, 16, 64 * KB),
    amd("cdna3", &["gfx942", "mi300x", "mi300a", "mi300"],
        "Instinct MI300X (gfx942)", "gfx942", 304,
        64, 4, 8, 512, 8, 512, 16, 64 * KB),
    // RDNA in WGP mode (the compute default): 4 x SIMD32, wave32, 128 KB LDS per WGP,
    // 32 barriers. VGPRs per lane in wave32: 1024 (RDNA1/2), 1536 (Navi31).
    amd("rdna1", &["gfx1010", "rx5700xt", "navi10", "rdna"],
        "Radeon RX 5700 XT (gfx1010), per WGP", "gfx1010", 20,
        32, 4, 20, 1024, 8, 256, 32, 128 * KB),
    amd("rdna2", &["gfx1030", "rx6900xt", "navi21"],
        "Radeon RX 6900 XT (gfx1030), per WGP", "gfx1030", 40,
        32, 4, 16, 1024, 16, 256, 32, 128 * KB),
    amd("rdna3", &["gfx1100", "rx7900xtx", "navi31"],
        "Radeon RX 7900 XTX (gfx1100), per WGP", "gfx1100", 48,
        32, 4, 16, 1536, 24, 256, 32, 128 * KB),
];

/// Canonical names of all presets, for error messages and `--arch list`.
pub fn arch_names() -> Vec<&'static str> {
    ARCHS.iter().map(|arch| arch.name).collect()
}

/// The preset whose device an adapter's name describes (`NVIDIA H100 80GB HBM3` → `cc9.0`):
/// the longest alias of three or more characters that spans whole words of the name ("RTX 4090"
/// is `rtx4090`, but "adapter" is not `ada`); None for adapters no preset describes (software
/// rasterisers, unknown boards).
pub fn arch_for_adapter(adapter_name: &str) -> Option<&'static Arch> {
    let lower = adapter_name.to_ascii_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    // an alias matches when it is words[i] + words[i + 1] + ... + words[j] for some i <= j
    let spans_words = |alias: &str| {
        (0..words.len()).any(|i| {
            let mut joined = String::new();
            words[i..].iter().any(|w| {
                joined.push_str(w);
                joined == alias
            })
        })
    };
    ARCHS
        .iter()
        .flat_map(|arch| arch.aliases.iter().map(move |alias| (arch, normalize(alias).replace('_', ""))))
        .filter(|(_, alias)| alias.len() >= 3 && spans_words(alias))
        .max_by_key(|(_, alias)| alias.len())
        .map(|(arch, _)| arch)
}

fn normalize(name: &str) -> String {
    name.trim().to_ascii_lowercase().chars().filter(|c| !matches!(c, ' ' | '-')).collect()
}

/// Looks a preset up by name or alias, case-insensitively; `8.0`, `sm80` and `sm_80` also
/// find `cc8.0`.
pub fn find_arch(name: &str) -> Result<&'static Arch> {
    let wanted = normalize(name);
    let as_cc = if let Some(digits) = wanted.strip_prefix("sm_").or_else(|| wanted.strip_prefix("sm")) {
        // sm_86 -> cc8.6
        let mut chars = digits.chars();
        match (chars.next(), chars.next(), chars.next()) {
            (Some(major), Some(minor), None) if major.is_ascii_digit() && minor.is_ascii_digit() => Some(format!("cc{major}.{minor}")),
            _ => None,
        }
    } else if wanted.starts_with(|c: char| c.is_ascii_digit()) {
        Some(format!("cc{wanted}"))
    } else {
        None
    };
    ARCHS
        .iter()
        .find(|arch| {
            arch.name == wanted || as_cc.as_deref() == Some(arch.name) || arch.aliases.iter().any(|alias| normalize(alias) == wanted)
        })
        .ok_or_else(|| {
            Error::invalid(
                "arch",
                format!("unknown architecture '{name}'; valid: {} (or an alias such as g80, h100, a100, mi300x)", arch_names().join(", ")),
            )
        })
}
