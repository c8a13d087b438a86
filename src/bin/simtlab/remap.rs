//! `simtlab remap`: remove divergence from any WGSL compute shader, without editing it.

use crate::gpu_args::GpuArgs;
use crate::output::{print_text, write_json};
use crate::profile::{overrides, parse_positive, parse_slot, writable, ShaderInput};
use clap::Args;
use simtlab::harness::{format_seconds, write_file};
use simtlab::profile::ShaderDispatch;
use simtlab::remap::{remap_run, Calibration, RemapRequest, Strategy, INDEX_NAME};
use simtlab::{Error, Gpu, Result};
use std::path::PathBuf;

/// `--strategy`: help lines of the strategies a user's shader is remapped with
/// ([`Strategy::FOR_SHADERS`], the values it offers).
pub const STRATEGIES: &[(Strategy, &str)] = &[
    (Strategy::Auto, "Remap where the model predicts a gain (index from the host or the GPU, as it prefers); run as written if remapping measures slower"),
    (Strategy::Redirect, "Always remap: an index built on the host from the keys"),
    (Strategy::GpuRegroup, "Always remap: an index built on the GPU from the keys' classes (histogram, scan, scatter; at most 256 classes)"),
    (Strategy::None, "Run as written (the keys and the prediction are still reported)"),
];

/// Arguments of the `remap` subcommand.
#[derive(Args, Clone)]
pub struct RemapArgs {
    #[command(flatten)]
    pub input: ShaderInput,
    /// A binding whose initial u32 values (one per invocation, in the order x + width·(y +
    /// height·z) of the global ids) are the keys, e.g. a material id; default: each
    /// invocation's path signature (its branch outcomes), recorded by a key pass.
    #[arg(long, value_name = "B")]
    pub key: Option<String>,
    /// Value of a pipeline-overridable constant (repeatable): NAME=VALUE or ID=VALUE for
    /// `@id(ID) override`, as `simtlab profile` takes it; every run (as written, key pass,
    /// remapped) uses it, and a workgroup size from overrides follows.
    #[arg(long = "override", value_name = "NAME=VALUE")]
    pub overrides: Vec<String>,
    /// How to remap.
    #[arg(long, default_value = "auto", value_parser = crate::value::choice_of(Strategy::FOR_SHADERS, STRATEGIES))]
    pub strategy: Strategy,
    /// Write the remapped WGSL (it reads its index at the group and binding its header names).
    #[arg(long, value_name = "FILE")]
    pub emit: Option<PathBuf>,
    /// Write the figures as JSON (`-` = standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Emulate subgroups of this width on the host (default: the GPU's own subgroups).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=128))]
    pub width: Option<u32>,
    /// Group and binding for the index (G:N); default: a group the shader does not use.
    #[arg(long, value_parser = parse_slot)]
    pub slot: Option<(u32, u32)>,
    /// Timed runs of each variant (the median is reported).
    #[arg(long, default_value_t = 5, value_parser = parse_positive)]
    pub samples: usize,
    /// Dispatches one index serves (the same data each time, as in an iterative solver): the
    /// key pass and the index are counted once in the end-to-end speed-up.
    #[arg(long, default_value_t = 1, value_parser = parse_positive)]
    pub dispatches: usize,
    /// What earlier runs on this adapter taught the cost model (JSON): read when the file
    /// exists, and written back with this run's measurement learned, so that the next run's
    /// decision weighs what this adapter measured.
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    #[command(flatten)]
    pub gpu: GpuArgs,
}

/// The calibration `--calibration FILE` names: None without the flag or before the file exists.
pub fn read_calibration(path: Option<&PathBuf>) -> Result<Option<Calibration>> {
    match path {
        Some(path) if path.exists() => Ok(Some(
            Calibration::from_json(&std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?)
                .map_err(|e| Error::invalid("--calibration", format!("{}: {e}", path.display())))?,
        )),
        _ => Ok(None),
    }
}

pub fn run(args: &RemapArgs) -> Result<()> {
    let (file, wgsl) = args.input.source()?;
    let bindings = args.input.bindings()?;
    let overrides = overrides(&args.overrides, &file, &wgsl, &args.input.entry)?;
    for path in args.emit.iter().chain(args.json.iter()).chain(args.calibration.iter()) {
        writable(path)?;
    }
    let calibration = read_calibration(args.calibration.as_ref())?;
    let gpu = Gpu::new(&args.gpu.options())?;
    let request = RemapRequest {
        shader: ShaderDispatch {
            file: &file,
            wgsl: &wgsl,
            entry: &args.input.entry,
            workgroups: args.input.workgroups()?,
            bindings,
            overrides,
        },
        key: args.key.clone(),
        strategy: args.strategy,
        width: args.width,
        samples: args.samples,
        slot: args.slot,
        dispatches: args.dispatches,
        calibration: calibration.as_ref(),
    };
    let run = remap_run(&gpu, &request).map_err(|e| match e {
        Error::Invalid { what, message } if what == "key" => Error::invalid("--key", message),
        Error::Invalid { what, message } if what == "calibration" => Error::invalid("--calibration", message),
        other => other,
    })?;
    let (b, a) = (&run.before, &run.after);
    let mut text = format!("adapter: {} [{}]\n", run.adapter, gpu.info().driver);
    text += &format!("keys: {} ({} classes); index at group {} binding {}\n", run.key, run.classes, run.slot.0, run.slot.1);
    text += &format!(
        "SIMT efficiency {:.1} % as written, {:.1} % remapped; branch efficiency {:.1} % -> {:.1} % (subgroups of {})\n",
        100.0 * b.simt_efficiency,
        100.0 * a.simt_efficiency,
        100.0 * b.branch_efficiency,
        100.0 * a.branch_efficiency,
        b.summary.subgroup_width
    );
    text += &format!(
        "GPU time ({:?}, median of {}): {} as written, {} remapped ({:.2}x); key pass {}, classes {} on the host, index built in {}{}\n",
        b.timing.source,
        args.samples,
        format_seconds(b.seconds),
        format_seconds(a.seconds),
        run.kernel_speedup,
        format_seconds(run.key_seconds),
        format_seconds(run.classes_seconds),
        format_seconds(run.index_seconds),
        match run.strategy {
            Strategy::GpuRegroup => " on the GPU",
            Strategy::Redirect => " on the host",
            _ => "",
        },
    );
    text += &format!("end to end over {} dispatch(es), keys and index paid once: {:.2}x\n", run.dispatches, run.speedup);
    text += &match run.strategy {
        Strategy::None => format!("strategy: none, run the shader as written ({})\n", run.reason),
        _ => format!("strategy: {}, run the remapped shader ({})\n", run.strategy, run.reason),
    };
    for lesson in &run.lessons {
        text += &format!("learned on this adapter: {lesson}\n");
    }
    text += if run.outputs_identical {
        "outputs: every writable binding identical as written and remapped\n"
    } else {
        "outputs: DIFFER as written and remapped (the shader's result depends on which invocation runs which element)\n"
    };
    print_text(&text, args.json.as_ref());
    if let Some(path) = &args.emit {
        let header = format!(
            "// {file} remapped by simtlab: entry point '{}' reads its global id through `{INDEX_NAME}`, an\n\
             // array<u32> at @group({}) @binding({}) holding the element of each invocation in the\n\
             // linear order x + width * (y + height * z) of the global ids (width and height in\n\
             // invocations); invocations past its length keep their own element.\n",
            run.entry, run.slot.0, run.slot.1
        );
        write_file(path, format!("{header}{}", run.remapped.wgsl).as_bytes())?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &args.json {
        write_json(path, &run)?;
    }
    if let Some(path) = &args.calibration {
        write_file(path, run.calibration.to_json().as_bytes())?;
        eprintln!("wrote {}", path.display());
    }
    if !run.outputs_identical {
        return Err(Error::invalid("remap", "the remapped shader's outputs differ from the shader's as written; do not ship it"));
    }
    Ok(())
}
