//! `simtlab occupancy`: the analytical occupancy calculator's answer as a table (or JSON) of
//! one launch, and the list of architecture presets.

use std::fmt::Write as _;

use clap::Args;
use serde::Serialize;
use simtlab::occupancy::{calculate, find_arch, Arch, Launch, Limiter, Occupancy, Vendor, ARCHS};
use simtlab::{Error, Result};

use crate::output;

/// Arguments of the `occupancy` subcommand.
#[derive(Args, Clone, Debug, PartialEq, Eq)]
pub struct OccupancyArgs {
    /// Architecture preset: cc1.0 ... cc9.0, g80, a100, h100, gcn, cdna3, rdna3, ...;
    /// "list" prints all presets.
    #[arg(long)]
    pub arch: String,
    /// Threads per block (workgroup size).
    #[arg(long)]
    pub threads: Option<u32>,
    /// Registers per thread (VGPRs per lane on AMD), as the compiler reports them.
    #[arg(long)]
    pub regs: Option<u32>,
    /// Shared (workgroup) memory per block, in bytes.
    #[arg(long, default_value_t = 0)]
    pub smem: u32,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// What `--json` prints: the calculator's result (which names the arch) plus the device.
#[derive(Serialize)]
struct JsonReport<'a> {
    device: &'static str,
    #[serde(flatten)]
    result: &'a Occupancy,
}

pub fn run(args: &OccupancyArgs) -> Result<()> {
    println!("{}", report(args)?);
    Ok(())
}

/// The preset `--arch` names; an unknown name's error says how to list them all.
pub fn arch(name: &str) -> Result<&'static Arch> {
    find_arch(name).map_err(|e| match e {
        Error::Invalid { what, message } => {
            Error::Invalid { what, message: format!("{message}; --arch list shows every preset and alias") }
        }
        e => e,
    })
}

/// Answers `args`: the text to print (a table, or JSON), or the list of presets.
fn report(args: &OccupancyArgs) -> Result<String> {
    if args.arch.trim().eq_ignore_ascii_case("list") {
        return list_archs(args.json);
    }
    let arch = arch(&args.arch)?;
    let threads =
        args.threads.ok_or_else(|| Error::invalid("arguments", "--threads is required (threads per block), unless --arch list"))?;
    let registers = args
        .regs
        .ok_or_else(|| Error::invalid("arguments", "--regs is required (registers per thread from the compiler), unless --arch list"))?;
    if registers == 0 {
        return Err(Error::invalid(
            "--regs",
            "0: every kernel uses registers; pass the count the compiler reports (e.g. from ptxas -v or the driver)",
        ));
    }
    let result = calculate(arch, Launch::new(threads, registers, args.smem))?;
    if args.json {
        output::json_text(&JsonReport { device: arch.device, result: &result })
    } else {
        Ok(format_table(arch, &result))
    }
}

fn percent(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

/// The human-readable report.
fn format_table(arch: &Arch, result: &Occupancy) -> String {
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
        return output::json_text(&listed);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ArgsOnly;

    fn answer(words: &str) -> Result<String> {
        report(&ArgsOnly::<OccupancyArgs>::parse_words(words).unwrap())
    }

    #[test]
    fn args_parse() {
        let parse = ArgsOnly::<OccupancyArgs>::parse_words;
        let args = parse("--arch cc9.0 --threads 128 --regs 40 --smem 4096 --json").unwrap();
        assert_eq!(args, OccupancyArgs { arch: "cc9.0".into(), threads: Some(128), regs: Some(40), smem: 4096, json: true });
        assert_eq!(parse("--arch list").unwrap(), OccupancyArgs { arch: "list".into(), threads: None, regs: None, smem: 0, json: false });
        assert!(parse("--threads 1").is_err(), "--arch is required");
    }

    #[test]
    fn json_and_table() {
        let json: serde_json::Value = serde_json::from_str(&answer("--arch g80 --threads 256 --regs 11 --json").unwrap()).unwrap();
        assert_eq!(json["arch"], "cc1.0");
        assert_eq!(json["active_blocks_per_sm"], 2);
        assert_eq!(json["active_warps_per_sm"], 16);
        assert_eq!(json["active_threads_per_sm"], 512);
        assert_eq!(json["limited_by"], "registers");
        assert!(json.get("reason").is_none());
        assert!((json["occupancy"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12);

        let json: serde_json::Value = serde_json::from_str(&answer("--arch h100 --threads 1024 --regs 65 --json").unwrap()).unwrap();
        assert_eq!(json["limited_by"], "does_not_launch");
        assert!(json["reason"].as_str().unwrap().contains("registers"));

        let table = answer("--arch h100 --threads 1024 --regs 65").unwrap();
        assert!(table.contains("does_not_launch"));
        let table = answer("--arch cc8.0 --threads 256 --regs 64").unwrap();
        assert!(table.contains("50.0 %") && table.contains("registers"));

        let list = answer("--arch list").unwrap();
        assert!(list.contains("cc9.0") && list.contains("rdna3") && list.contains("g80"));
        let list: serde_json::Value = serde_json::from_str(&answer("--arch list --json").unwrap()).unwrap();
        assert_eq!(list.as_array().unwrap().len(), ARCHS.len());

        assert!(answer("--arch g80 --regs 1").is_err());
        assert!(answer("--arch nope --threads 1 --regs 1").is_err());
    }
}
