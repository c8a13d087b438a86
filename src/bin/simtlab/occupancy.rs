//! `simtlab occupancy`: the analytical occupancy calculator.

use clap::Args;
use simtlab::occupancy::{self, OccupancyQuery};
use simtlab::Result;

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

impl OccupancyArgs {
    pub fn query(&self) -> OccupancyQuery {
        OccupancyQuery { arch: self.arch.clone(), threads: self.threads, regs: self.regs, smem: self.smem, json: self.json }
    }
}

pub fn run(args: &OccupancyArgs) -> Result<()> {
    println!("{}", occupancy::report(&args.query())?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ArgsOnly;

    #[test]
    fn args_parse_into_the_query() {
        let parse = ArgsOnly::<OccupancyArgs>::parse_words;
        let args = parse("--arch cc9.0 --threads 128 --regs 40 --smem 4096 --json").unwrap();
        assert_eq!(args.query(), OccupancyQuery { arch: "cc9.0".into(), threads: Some(128), regs: Some(40), smem: 4096, json: true });
        assert_eq!(parse("--arch list").unwrap().query(), OccupancyQuery { arch: "list".into(), ..Default::default() });
        assert!(parse("--threads 1").is_err(), "--arch is required");
    }
}
