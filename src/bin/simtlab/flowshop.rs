//! `simtlab flowshop instance|bound|solve`.

use crate::gpu_args::GpuArgs;
use crate::INTERRUPTED;
use clap::Subcommand;
use simtlab::gpu::GpuOptions;
use simtlab::kernels::flowshop::cli as flowshop_cli;
use simtlab::{Error, Result};
use std::sync::atomic::Ordering;

#[derive(Subcommand)]
pub enum FlowshopCommand {
    /// Print a Taillard instance (generated from its seed) or an instance file.
    Instance(flowshop_cli::InstanceArgs),
    /// LB1 and LB2 of one node (prefix and suffix fixed, 0-based job numbers).
    Bound(flowshop_cli::BoundArgs),
    /// Branch-and-bound to optimality (or to the limits), bounding on the GPU or the CPU.
    Solve {
        #[command(flatten)]
        args: flowshop_cli::SolveArgs,
        #[command(flatten)]
        gpu: GpuArgs,
    },
}


pub fn run(command: &FlowshopCommand) -> Result<()> {
    let (command, options) = match command {
        FlowshopCommand::Instance(a) => (flowshop_cli::FlowshopCommand::Instance(a.clone()), GpuOptions::default()),
        FlowshopCommand::Bound(a) => (flowshop_cli::FlowshopCommand::Bound(a.clone()), GpuOptions::default()),
        FlowshopCommand::Solve { args, gpu } => (flowshop_cli::FlowshopCommand::Solve(args.clone()), gpu.options()),
    };
    print!("{}", flowshop_cli::run(&flowshop_cli::FlowshopArgs { command }, &options, &INTERRUPTED)?);
    if INTERRUPTED.load(Ordering::Relaxed) {
        return Err(Error::Cancelled { what: "the search".into(), kept: "the best schedule found so far is printed above (not proven optimal)".into() });
    }
    Ok(())
}
