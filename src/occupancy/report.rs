//! The calculator's answer as text: the table (or JSON) of one launch, and the list of
//! architecture presets (`simtlab occupancy`).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::arch::{find_arch, Arch, Vendor, ARCHS};
use super::calculator::{calculate, Launch, Limiter, Occupancy};
use crate::error::{Error, Result};

/// One question to the calculator (the options of `simtlab occupancy`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OccupancyQuery {
    /// Architecture preset: cc1.0 ... cc9.0, g80, a100, h100, gcn, cdna3, rdna3, ...;
    /// "list" asks for all presets.
    pub arch: String,
    /// Threads per block (workgroup size); required unless listing.
    pub threads: Option<u32>,
    /// Registers per thread (VGPRs per lane on AMD), as the compiler reports them; required
    /// unless listing.
    pub regs: Option<u32>,
    /// Shared (workgroup) memory per block, in bytes.
    pub smem: u32,
    /// JSON instead of a table.
    pub json: bool,
}

/// What `--json` prints: the calculator's result (which names the arch) plus the device.
#[derive(Serialize)]
struct JsonReport<'a> {
    device: &'static str,
    #[serde(flatten)]
    result: &'a Occupancy,
}

/// Answers `query`: the text to print (a table, or JSON), or the list of presets.
pub fn report(query: &OccupancyQuery) -> Result<String> {
    if query.arch.trim().eq_ignore_ascii_case("list") {
        return list_archs(query.json);
    }
    let arch = find_arch(&query.arch)?;
    let threads =
        query.threads.ok_or_else(|| Error::invalid("arguments", "--threads is required (threads per block), unless --arch list"))?;
    let registers = query
        .regs
        .ok_or_else(|| Error::invalid("arguments", "--regs is required (registers per thread from the compiler), unless --arch list"))?;
    if registers == 0 {
        return Err(Error::invalid(
            "--regs",
            "0: every kernel uses registers; pass the count the compiler reports (e.g. from ptxas -v or the driver)",
        ));
    }
    let result = calculate(arch, Launch::new(threads, registers, query.smem))?;
    if query.json {
        let report = JsonReport { device: arch.device, result: &result };
        serde_json::to_string_pretty(&report).map_err(|e| Error::invalid("JSON output", e.to_string()))
    } else {
        Ok(format_table(arch, &result))
    }
}

fn percent(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

/// The human-readable report.
pub fn format_table(arch: &Arch, result: &Occupancy) -> String {
    let warp = arch.warp_word();
    let sm = arch.sm_word();
    let mut out = String::new();
    let _ = writeln!(out, "Architecture          {} ({}, {}, {} {sm}s)", arch.name, arch.device, arch.isa, arch.sm_count);
    let _ = writeln!(
        out,
        "Launch                {} threads/block, {} registers/thread, {} B shared memory/block",
        result.threads_per_block, result.registers_per_thread, result.shared_memory_per_block
    );
    let _ = writeln!(out, "{:<22}{}", format!("{}s per block", capitalize(warp)), result.warps_per_block);
    let _ = writeln!(out, "Registers per block   {}", result.allocated_registers_per_block);
    let _ = writeln!(out, "Shared memory/block   {} B allocated", result.allocated_shared_memory_per_block);
    let _ = writeln!(out);
    let _ = writeln!(out, "Blocks per {sm} allowed by");
    let limits = result.block_limits;
    let rows = [
        (Limiter::Warps, format!("{warp} slots ({} per {sm})", arch.max_warps_per_sm), limits.warps),
        (Limiter::Blocks, "block slots".to_string(), limits.blocks),
        (Limiter::Registers, format!("registers ({} per {sm})", arch.registers_per_sm), limits.registers),
        (Limiter::SharedMemory, format!("shared memory ({} B per {sm})", arch.shared_memory_per_sm), limits.shared_memory),
    ];
    for (limiter, label, blocks) in rows {
        let mark = if result.tied_limits.first() == Some(&limiter) {
            "  <- limit"
        } else if blocks == 0 {
            "  <- no block fits"
        } else {
            ""
        };
        let _ = writeln!(out, "  {label:<36}{blocks}{mark}");
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "Active blocks/{sm:<8}{}", result.active_blocks_per_sm);
    let _ = writeln!(out, "Active {warp}s/{sm:<9}{} of {}", result.active_warps_per_sm, result.max_warps_per_sm);
    let _ = writeln!(out, "Active threads/{sm:<7}{}", result.active_threads_per_sm);
    let _ = writeln!(out, "Occupancy             {}", percent(result.occupancy));
    let _ = write!(out, "Limited by            {}", result.limited_by);
    if let Some(reason) = &result.reason {
        let _ = write!(out, "\nReason                {reason}");
    }
    out.push('\n');
    out
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
}

#[derive(Serialize)]
struct ListedArch {
    name: &'static str,
    aliases: &'static [&'static str],
    vendor: Vendor,
    device: &'static str,
    isa: &'static str,
    sm_count: u32,
}

fn list_archs(json: bool) -> Result<String> {
    if json {
        let listed: Vec<ListedArch> = ARCHS
            .iter()
            .map(|a| ListedArch { name: a.name, aliases: a.aliases, vendor: a.vendor, device: a.device, isa: a.isa, sm_count: a.sm_count })
            .collect();
        return serde_json::to_string_pretty(&listed).map_err(|e| Error::invalid("JSON output", e.to_string()));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<7} {:<8} {:<38} {:>5} {:>6} {:>7} {:>8} {:>8}  aliases",
        "name", "isa", "device", "SMs", "warps", "blocks", "regs", "smem KB"
    );
    for a in ARCHS {
        let _ = writeln!(
            out,
            "{:<7} {:<8} {:<38} {:>5} {:>6} {:>7} {:>8} {:>8}  {}",
            a.name,
            a.isa,
            a.device,
            a.sm_count,
            a.max_warps_per_sm,
            a.max_blocks_per_sm,
            a.registers_per_sm,
            a.shared_memory_per_sm / 1024,
            a.aliases.join(", ")
        );
    }
    Ok(out)
}
