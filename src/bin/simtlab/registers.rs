//! `simtlab registers`: the driver's register count for each of simtlab's kernels, beside the
//! occupancy model's verdict with that count.

use crate::gpu_args::GpuArgs;
use crate::output::{print_text, write_json};
use clap::Args;
use simtlab::occupancy::arch_for_adapter;
use simtlab::profile::compiled_kernels;
use simtlab::{Error, Gpu, Result};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Arguments of the `registers` subcommand.
#[derive(Args, Clone)]
pub struct RegistersArgs {
    /// Only shaders whose `path:entry` contains this.
    #[arg(long, default_value = "")]
    pub shader: String,
    /// Occupancy preset (default: the one matching the adapter; `simtlab occupancy --arch list`).
    #[arg(long)]
    pub arch: Option<String>,
    /// Write every kernel's statistics as JSON (`-` = standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub gpu: GpuArgs,
}

pub fn run(args: &RegistersArgs) -> Result<()> {
    let gpu = Gpu::new(&args.gpu.options())?;
    let arch = match &args.arch {
        Some(name) => crate::occupancy::arch(name)?,
        None => arch_for_adapter(&gpu.info().name).ok_or_else(|| {
            Error::invalid(
                "--arch",
                format!("no preset matches '{}'; pick one with --arch (see `simtlab occupancy --arch list`)", gpu.info().name),
            )
        })?,
    };
    let kernels = compiled_kernels(&gpu, arch, &args.shader, &mut |done, total, name| eprint!("\r[{done}/{total}] {name:<60}"));
    // end the progress line, so that an error starts on its own
    eprintln!();
    let kernels = kernels?;
    let mut text = format!("adapter: {} [{}]; occupancy on {}\n\n", gpu.info().name, gpu.info().driver_info, arch.name);
    let _ = writeln!(
        text,
        "{:<44} {:<22} {:>7} {:>8} {:>9} {:>9} {:>10}  limited by",
        "shader", "entry", "threads", "smem B", "registers", "subgroup", "occupancy"
    );
    for k in &kernels {
        let (occupancy, limiter) = match &k.occupancy {
            Some(o) => (format!("{:.0} %", 100.0 * o.occupancy), format!("{:?}", o.limited_by)),
            None => ("-".into(), "no register count from the driver".into()),
        };
        let _ = writeln!(
            text,
            "{:<44} {:<22} {:>7} {:>8} {:>9} {:>9} {:>10}  {limiter}",
            k.shader,
            k.entry,
            k.threads_per_workgroup,
            k.workgroup_memory_bytes,
            k.registers.map_or("-".into(), |r| r.to_string()),
            k.subgroup_size,
            occupancy
        );
    }
    if let Some(first) = kernels.first() {
        let names: Vec<&str> = first.statistics.executables.iter().flat_map(|e| &e.statistics).map(|s| s.name.as_str()).collect();
        let _ = writeln!(text, "\nthe driver reports: {} (all of them in --json)", names.join(", "));
    }
    print_text(&text, args.json.as_ref());
    if let Some(path) = &args.json {
        write_json(path, &kernels)?;
    }
    Ok(())
}
