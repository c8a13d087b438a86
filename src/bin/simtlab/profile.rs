//! `simtlab profile`: divergence per branch of any WGSL compute shader, without editing it.

use crate::gpu_args::GpuArgs;
use crate::output::{print_text, write_json};
use clap::Args;
use simtlab::harness::{format_seconds, write_file};
use simtlab::occupancy::{kernel_occupancy, kernel_resources};
use simtlab::profile::{self, BindingSpec, CountSource, Counting, ProfileRequest, ShaderDispatch};
use simtlab::{Error, Gpu, Result};
use std::path::PathBuf;

/// What each printed figure is.
const FIGURES: &str = "Figures (per subgroup of the width printed; a site is an if condition, a loop test, a switch selector or a called function's entry):
  evaluations          subgroup-steps at which at least one lane evaluated the site
  active_lanes         Σ over those of the lanes evaluating it
  taken_lanes          Σ lanes for which it was true (loop: the loop goes on; switch: the lane's selector equals the first lane's; call: every lane)
  uniform_evaluations  evaluations at which all active lanes agreed
  active_eff           active_lanes / (evaluations × width): how full the subgroup is where it evaluates the site
  simt_eff             taken_lanes / (steps at which a lane took it × width): how full it is in the code the site guards
  branch_eff           uniform_evaluations / evaluations
  case rows            one per switch clause: the switch's evaluations and active lanes, taken = lanes that ran the clause
  call rows            the function's signature, then ← the lines that call it
  SIMT efficiency      Σ active_lanes / (Σ evaluations × width) over all sites: how full subgroups are where they branch; the same
                       whether a loop is written `for`/`while` or `loop { if c { break } }`
  branch efficiency    Σ uniform_evaluations / Σ evaluations
  divergence ratio     subgroups whose lanes disagreed at some site / subgroups that reached a site (Zhang)
  --sample N           one subgroup in each run of N counts; the figures are ratio estimates with 95 % intervals";

/// A user's shader, its dispatch and the contents of its bindings: what `profile` and `remap`
/// both run.
#[derive(Args, Clone)]
pub struct ShaderInput {
    /// The WGSL file.
    pub shader: PathBuf,
    /// The compute entry point.
    #[arg(long, default_value = "main")]
    pub entry: String,
    /// Workgroups to dispatch: X or X,Y or X,Y,Z (`pt`: a persistent kernel's launch instead
    /// of the one discovered; required otherwise).
    #[arg(long, value_parser = parse_workgroups)]
    pub workgroups: Option<[u32; 3]>,
    /// Contents of a binding (repeatable): NAME=SPEC, N=SPEC (group 0) or G:N=SPEC, SPEC one of
    /// u32:N:seq, u32:N:zero, u32:N:random:SEED, i32:N:seq, i32:N:zero, i32:N:random:SEED,
    /// f32:N:zero, f32:N:random:SEED, file:PATH (raw little-endian bytes);
    /// texture:WxH[xD]:FORMAT:zero|random:SEED|file:PATH for a sampled or storage texture
    /// (FORMAT as WGSL writes it: rgba8unorm, r32float, r32uint, rgba32float...; a storage
    /// texture's must be the one it declares); sampler:nearest|linear (default nearest).
    /// A `var<immediate>` is given by its NAME like a buffer.
    #[arg(long = "bind", value_name = "B=SPEC")]
    pub binds: Vec<String>,
}

impl ShaderInput {
    /// The shader's name in messages (its path) and its text.
    pub fn source(&self) -> Result<(String, String)> {
        let wgsl = std::fs::read_to_string(&self.shader).map_err(|e| Error::io(&self.shader, e))?;
        Ok((self.shader.display().to_string(), wgsl))
    }

    /// The `--bind` values as the library's binding specs.
    pub fn bindings(&self) -> Result<Vec<(String, BindingSpec)>> {
        specs(&self.binds, "--bind")
    }

    /// `--workgroups`, where the command needs it.
    pub fn workgroups(&self) -> Result<[u32; 3]> {
        self.workgroups.ok_or_else(|| Error::invalid("--workgroups", "give the workgroups to dispatch: X, X,Y or X,Y,Z"))
    }
}

/// `B=SPEC` values of `flag` as binding specs.
pub(crate) fn specs(values: &[String], flag: &str) -> Result<Vec<(String, BindingSpec)>> {
    values.iter().map(|b| split_pair(b, flag).and_then(|(k, v)| Ok((k.to_string(), v.parse::<BindingSpec>()?)))).collect()
}

/// Arguments of the `profile` subcommand.
#[derive(Args, Clone)]
#[command(after_help = FIGURES)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub input: ShaderInput,
    /// Value of a pipeline-overridable constant (repeatable): NAME=VALUE or ID=VALUE for
    /// `@id(ID) override`; those not given keep their defaults (an override without a default
    /// must be given). Workgroup sizes from overrides follow.
    #[arg(long = "override", value_name = "NAME=VALUE")]
    pub overrides: Vec<String>,
    /// Count one subgroup in N (the others skip the probe): the figures become estimates,
    /// printed with their 95 % interval, at a fraction of the probe's cost. GPU subgroups only.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub sample: u32,
    /// Words of outcome history each lane keeps for an `if` inside a loop (32 iterations a
    /// word), so that nothing in the loop waits on other lanes: a longer loop is profiled again
    /// with the words it needs; 0 votes at every iteration instead (slower, no limit).
    #[arg(long, default_value_t = profile::DEFAULT_LOOP_HISTORY, value_parser = clap::value_parser!(u32).range(..=profile::MAX_LOOP_HISTORY as i64))]
    pub loop_history: u32,
    /// Write a binding's final contents as raw little-endian bytes (repeatable): B=FILE.
    #[arg(long = "dump", value_name = "B=FILE")]
    pub dumps: Vec<String>,
    /// Emulate subgroups of this width on the host (default: the GPU's own subgroups; 32 on an
    /// adapter without subgroups).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=128))]
    pub width: Option<u32>,
    /// Emulate on the host even at the native width.
    #[arg(long)]
    pub emulate: bool,
    /// Branch outcomes each invocation may record when emulating.
    #[arg(long, default_value_t = profile::DEFAULT_TRACE_EVENTS)]
    pub trace_events: u32,
    /// Group and binding for the probe's records (G:N); default: a group the shader does not use.
    #[arg(long, value_parser = parse_slot)]
    pub slot: Option<(u32, u32)>,
    /// Timed runs of the plain and of the instrumented shader (the median is reported).
    #[arg(long, default_value_t = 5, value_parser = parse_positive)]
    pub samples: usize,
    /// Write the per-site table and figures as JSON (`-` = standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the per-subgroup heat map as a PNG.
    #[arg(long, value_name = "FILE")]
    pub heatmap: Option<PathBuf>,
    /// Occupancy of the kernel on this preset (`simtlab occupancy --arch list`).
    #[arg(long)]
    pub arch: Option<String>,
    /// Registers per thread for --arch (default: the driver's count where it reports one, else 32).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub regs: Option<u32>,
    #[command(flatten)]
    pub gpu: GpuArgs,
}

pub(crate) fn parse_workgroups(s: &str) -> std::result::Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() > 3 {
        return Err(format!("'{s}': give X, X,Y or X,Y,Z"));
    }
    let mut out = [1u32; 3];
    for (o, p) in out.iter_mut().zip(&parts) {
        *o = p.trim().parse().ok().filter(|&v| v > 0).ok_or_else(|| format!("'{p}' is not a positive workgroup count"))?;
    }
    Ok(out)
}

pub(crate) fn parse_positive(s: &str) -> std::result::Result<usize, String> {
    s.trim().parse().ok().filter(|&v| v > 0).ok_or_else(|| format!("'{s}' is not a positive count"))
}

pub(crate) fn parse_slot(s: &str) -> std::result::Result<(u32, u32), String> {
    let (g, b) = s.split_once(':').ok_or_else(|| format!("'{s}': give GROUP:BINDING"))?;
    Ok((g.trim().parse().map_err(|_| format!("'{g}' is not a group"))?, b.trim().parse().map_err(|_| format!("'{b}' is not a binding"))?))
}

fn split_pair<'a>(arg: &'a str, flag: &str) -> Result<(&'a str, &'a str)> {
    arg.split_once('=').ok_or_else(|| Error::invalid(flag, format!("'{arg}': give B=VALUE")))
}

/// Refuses an output path that cannot be a file before the GPU runs: a directory, or one under
/// something that is not a directory (a missing directory is made when writing).
pub(crate) fn writable(path: &std::path::Path) -> Result<()> {
    let not_a_directory =
        |p: &std::path::Path, why: &str| Error::io(p, std::io::Error::new(std::io::ErrorKind::NotADirectory, why.to_string()));
    if path.as_os_str() == "-" {
        return Ok(());
    }
    if path.is_dir() {
        return Err(Error::io(path, std::io::Error::new(std::io::ErrorKind::IsADirectory, "it is a directory; give a file path")));
    }
    let mut parent = path.parent();
    while let Some(p) = parent.filter(|p| !p.as_os_str().is_empty()) {
        if p.exists() {
            return if p.is_dir() { Ok(()) } else { Err(not_a_directory(p, "it is not a directory, so nothing can be written under it")) };
        }
        parent = p.parent();
    }
    Ok(())
}

/// `--override NAME=VALUE` values, checked against `entry` of the shader before the GPU runs.
pub(crate) fn overrides(values: &[String], file: &str, wgsl: &str, entry: &str) -> Result<Vec<(String, f64)>> {
    let overrides = values
        .iter()
        .map(|o| {
            let (k, v) = split_pair(o, "--override")?;
            let value = match v.trim() {
                "true" => 1.0,
                "false" => 0.0,
                v => v.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| {
                    Error::invalid("--override", format!("'{o}': the value is a number (or true/false for a bool override)"))
                })?,
            };
            Ok((k.trim().to_string(), value))
        })
        .collect::<Result<Vec<_>>>()?;
    let (module, _) = profile::parse(file, wgsl)?;
    if !overrides.is_empty() || !module.overrides.is_empty() {
        profile::instrument(file, wgsl, entry, &profile::InstrumentOptions { overrides: overrides.clone(), ..Default::default() })
            .map(|_| ())
            .or_else(|e| match e {
                Error::Invalid { what, message } if what == "overrides" => Err(Error::invalid("--override", message)),
                _ => Ok(()),
            })?;
    }
    Ok(overrides)
}

pub fn run(args: &ProfileArgs) -> Result<()> {
    let (file, wgsl) = args.input.source()?;
    let bindings = args.input.bindings()?;
    let dumps = args.dumps.iter().map(|d| split_pair(d, "--dump")).collect::<Result<Vec<_>>>()?;
    let overrides = overrides(&args.overrides, &file, &wgsl, &args.input.entry)?;
    if args.sample > 1 && (args.emulate || args.width.is_some()) {
        return Err(Error::invalid("--sample", "sampling counts the GPU's own subgroups; leave out --emulate and --width, or --sample"));
    }
    // everything that can be checked without the GPU is, before it runs
    let arch = args.arch.as_deref().map(crate::occupancy::arch).transpose()?;
    if !dumps.is_empty() {
        let (module, info) = profile::parse(&file, &wgsl)?;
        let known = profile::entry_bindings(&wgsl, &module, &info, &args.input.entry)?;
        if let Some((key, _)) = dumps.iter().find(|(key, _)| !known.iter().any(|b| b.matches(key))) {
            let names: Vec<&str> = known.iter().map(|b| b.name.as_str()).collect();
            return Err(Error::invalid(
                "--dump",
                format!("'{key}' names no binding of '{}'; it binds {}", args.input.entry, names.join(", ")),
            ));
        }
    }
    for path in args.heatmap.iter().chain(args.json.iter()).map(PathBuf::as_path).chain(dumps.iter().map(|(_, p)| std::path::Path::new(*p)))
    {
        writable(path)?;
    }
    let gpu = Gpu::new(&args.gpu.options())?;
    let request = ProfileRequest {
        shader: ShaderDispatch {
            file: &file,
            wgsl: &wgsl,
            entry: &args.input.entry,
            workgroups: args.input.workgroups()?,
            bindings,
            overrides,
        },
        width: args.width,
        emulate: args.emulate,
        trace_events: args.trace_events,
        slot: args.slot,
        samples: args.samples,
        sample: args.sample,
        loop_history: args.loop_history,
    };
    let run = profile::profile(&gpu, &request)?;
    let s = &run.summary;
    let mut text = String::new();
    text += &format!("adapter: {} [{}]\n", run.adapter, gpu.info().driver);
    text += &match (s.source, run.counting) {
        (CountSource::GpuProbe, _) => format!("counts: GPU probe (votes on native subgroups of {})\n", s.subgroup_width),
        (CountSource::HostEmulation, Counting::Trace { events }) => format!(
            "counts: host emulation of subgroups of {} from each invocation's recorded outcomes (up to {events}){}\n",
            s.subgroup_width,
            if gpu.caps().subgroups { "" } else { "; this adapter has no subgroups" }
        ),
        (CountSource::HostEmulation, Counting::Subgroups) => String::new(),
    };
    text += &format!("probe records at group {} binding {}\n\n", run.slot.0, run.slot.1);
    text += &profile::table(s);
    text += &match &s.sampling {
        None => format!(
            "\nSIMT efficiency {:.1} %, branch efficiency {:.1} %, divergent subgroups {} of {} (ratio {:.3})\n",
            100.0 * s.simt_efficiency,
            100.0 * s.branch_efficiency,
            s.divergent_subgroups,
            s.subgroups,
            s.divergence_ratio
        ),
        Some(e) => format!(
            "\nestimated from {} of {} subgroups (one in {}; 95 % intervals): SIMT efficiency {:.1} ± {:.1} %, branch efficiency {:.1} ± {:.1} %, divergence ratio {:.3} ± {:.3}, {:.0} ± {:.0} site evaluations in all (the rows count the sampled subgroups)\n",
            e.counted,
            e.subgroups,
            e.one_in,
            100.0 * s.simt_efficiency,
            100.0 * e.simt_efficiency,
            100.0 * s.branch_efficiency,
            100.0 * e.branch_efficiency,
            s.divergence_ratio,
            e.divergence_ratio,
            e.evaluations,
            e.evaluations_error
        ),
    };
    text += "(SIMT efficiency: Σ active lanes / (Σ evaluations × width) over all sites, how full subgroups are where they branch; branch efficiency: evaluations where all active lanes agreed / evaluations; divergence ratio: subgroups whose lanes disagreed somewhere / subgroups that reached a site. Per row: active_eff = active lanes / (evaluations × width); simt_eff = taken lanes / (steps with a lane taking it × width), how full the subgroup is in the code the site guards; a case row counts one switch clause, a call row lists the lines calling it)\n";
    text += &format!(
        "GPU time ({:?}, median of {}): {} plain, {} instrumented ({:.2}x)\n",
        run.plain.source,
        args.samples.max(1),
        format_seconds(run.plain.seconds),
        format_seconds(run.instrumented.seconds),
        run.instrumented.seconds / run.plain.seconds.max(1e-12)
    );
    text += if run.outputs_identical {
        "outputs: every writable binding identical with and without the probe\n"
    } else {
        "outputs: DIFFER with and without the probe (a shader whose result depends on timing, e.g. atomics racing, or a bug: please report it)\n"
    };
    text += &match (&run.driver_statistics, run.registers()) {
        (Some(stats), registers) => format!(
            "driver: {}{}\n",
            registers.map_or("no register count among its statistics".into(), |r| format!("{r} registers per thread")),
            stats.executables.iter().flat_map(|e| &e.statistics).map(|s| format!("; {} {}", s.name, s.value)).collect::<String>()
        ),
        (None, _) => format!("driver statistics: {}\n", run.driver_statistics_missing.as_deref().unwrap_or("not read")),
    };
    if let Some(loops) = &run.loop_limit_reached {
        text += &format!("\nWARNING: not trustworthy: {}\n", loops.message);
        eprintln!("warning: {}", loops.message);
    }
    if let Some(arch) = arch {
        let k = kernel_resources(&wgsl, &args.input.entry)?;
        let (regs, from) = match (args.regs, run.registers()) {
            (Some(r), _) => (r, "--regs"),
            (None, Some(r)) => (r, "the driver's count"),
            (None, None) => (32, "assumed; give --regs"),
        };
        let occ = kernel_occupancy(arch, &k, regs)?;
        text += &format!(
            "occupancy on {}: {} threads per workgroup, {} B workgroup memory, {regs} registers per thread ({from}): {:.0} % ({} workgroups per {}, limited by {:?})\n",
            arch.name,
            k.threads_per_workgroup,
            k.workgroup_memory_bytes,
            100.0 * occ.occupancy,
            occ.active_blocks_per_sm,
            arch.sm_word(),
            occ.limited_by
        );
    }
    print_text(&text, args.json.as_ref());
    if let Some(path) = &args.heatmap {
        simtlab::report::write_heatmap(&run.counts, path)?;
        eprintln!("wrote {}", path.display());
    }
    for (key, path) in dumps {
        let (_, bytes) = run
            .outputs
            .iter()
            .find(|(b, _)| b.matches(key))
            .ok_or_else(|| Error::invalid("--dump", format!("'{key}' names no binding of '{}'", args.input.entry)))?;
        write_file(path.as_ref(), bytes)?;
        eprintln!("wrote {path}");
    }
    if let Some(path) = &args.json {
        write_json(path, &run)?;
    }
    Ok(())
}
