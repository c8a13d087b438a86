//! Splicing probes into the user's WGSL at naga's spans: every other byte of the user's text
//! stays as it was, so the instrumented shader computes what the original does. The probe
//! functions and the records buffer are appended; the entry point gets the builtins the probe
//! needs (reusing those it already declares).

use super::sites::{analyse_sized, counted_by_loop, mask_comments, matching_close, Case, FoundSite, Site, Splice};
use crate::error::{Error, Result};
use crate::gpu::shader::{interface_of, preprocess_text, validate, EntryInterface, ShaderSource};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Prefix of every name the instrumentation adds; a shader that already uses it is refused.
const PREFIX: &str = "simtlab_probe";

/// Words at the start of the records buffer: subgroup width, subgroups per workgroup, a flag
/// set when an invocation's record did not fit, and the most iterations a loop ran in one
/// subgroup past what [`InstrumentOptions::loop_history`] holds (0: none did).
pub(crate) const HEADER_WORDS: usize = 4;

/// Words per site in a subgroup's record: evaluations, active lanes, taken lanes, uniform
/// evaluations, taken steps.
pub(crate) const WORDS_PER_SITE: usize = 5;

/// How the instrumented shader counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Counting {
    /// Per-subgroup counters from subgroup votes (needs `wgpu::Features::SUBGROUP`): the GPU's own
    /// subgroups at their native width.
    Subgroups,
    /// Each invocation records its first `events` branch outcomes; subgroups of a chosen
    /// width are emulated on the host (adapters without subgroups, e.g. GL).
    Trace {
        /// Outcomes each invocation may record.
        events: u32,
    },
}

/// Invocation outcomes recorded per invocation in trace mode unless the caller says otherwise.
pub const DEFAULT_TRACE_EVENTS: u32 = 1024;

/// Where the probe goes and how it counts.
#[derive(Clone, Debug, PartialEq)]
pub struct InstrumentOptions {
    /// Subgroup votes or per-invocation outcomes.
    pub counting: Counting,
    /// (group, binding) of the records buffer; None = a group the shader does not use (the
    /// one after its highest), or, past `max_bind_groups`, the next binding of its last group.
    pub slot: Option<(u32, u32)>,
    /// The device's `max_bind_groups`.
    pub max_bind_groups: u32,
    /// Values of the shader's pipeline-overridable constants (`override`), by name or `@id`;
    /// those not given take their defaults. The same values must go to the pipeline.
    pub overrides: Vec<(String, f64)>,
    /// Count one subgroup in `sample` (1 = every one; subgroup counting only): in each run of
    /// `sample` consecutive subgroups one, chosen by a hash of the run's number, counts and the
    /// others skip the probe.
    pub sample: u32,
    /// Words of outcome history each lane keeps for an `if` evaluated at every iteration of a
    /// loop left only by its test (32 iterations a word; subgroup counting only): the loop's
    /// end reads the subgroup's votes from the lanes' histories, so nothing in the loop waits on
    /// the other lanes. A longer run of such a loop is reported by [`super::decode`] with the
    /// words it needs. 0: such an `if` votes at every iteration (no limit, slower).
    pub loop_history: u32,
}

/// [`InstrumentOptions::loop_history`] unless the caller says otherwise: loops of 256 iterations.
pub const DEFAULT_LOOP_HISTORY: u32 = 8;

/// The most [`InstrumentOptions::loop_history`] words (loops of 8192 iterations; 1 KiB a lane).
pub const MAX_LOOP_HISTORY: u32 = 256;

impl Default for InstrumentOptions {
    fn default() -> Self {
        InstrumentOptions {
            counting: Counting::Subgroups,
            slot: None,
            max_bind_groups: 4,
            overrides: Vec::new(),
            sample: 1,
            loop_history: DEFAULT_LOOP_HISTORY,
        }
    }
}

/// Words per subgroup record: five per site and five per switch clause.
pub(crate) fn record_words(sites: usize, cases: usize) -> usize {
    (sites + cases) * WORDS_PER_SITE
}

/// The subgroup counted in run `block` of `sample` consecutive subgroups (its offset in the
/// run); the probe's WGSL computes the same.
pub(crate) fn sampled_offset(block: u32, sample: u32) -> u32 {
    if sample <= 1 {
        return 0;
    }
    let mut h = block.wrapping_mul(0x9E37_79B1);
    h ^= h >> 16;
    h = h.wrapping_mul(0x85EB_CA6B);
    h ^= h >> 13;
    h % sample
}

/// The entry point's workgroup size with `overrides` applied (defaults where not given).
pub(crate) fn workgroup_size(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry: &str,
    overrides: &[(String, f64)],
) -> Result<[u32; 3]> {
    let mut constants = naga::back::PipelineConstants::default();
    for (name, value) in overrides {
        if constants.insert(name.clone(), *value).is_some() {
            return Err(Error::invalid("overrides", format!("'{name}' is given more than once; give each override one value")));
        }
    }
    let names = || {
        let names: Vec<String> = module
            .overrides
            .iter()
            .map(|(_, o)| match (&o.name, o.id) {
                (Some(n), Some(id)) => format!("{n} (@id({id}))"),
                (Some(n), None) => n.clone(),
                (None, Some(id)) => id.to_string(),
                (None, None) => "?".into(),
            })
            .collect();
        if names.is_empty() {
            "it declares none".to_string()
        } else {
            format!("it declares {}", names.join(", "))
        }
    };
    use naga::back::pipeline_constants::{process_overrides, PipelineConstantError as E};
    let (module, _) = process_overrides(module, info, Some((naga::ShaderStage::Compute, entry)), &constants).map_err(|e| match e {
        E::MissingValue(name) => Error::invalid(
            "overrides",
            format!("the shader's `override {name}` has no default value; give it one in overrides ({name}=VALUE)"),
        ),
        E::NotFound(name) => {
            Error::invalid("overrides", format!("'{name}' is no pipeline-overridable constant of the shader; {}", names()))
        }
        other => Error::invalid("overrides", format!("the values given do not fit the shader's overrides: {other}")),
    })?;
    let ep = module
        .entry_points
        .iter()
        .find(|e| e.name == entry)
        .ok_or_else(|| Error::invalid("entry point", format!("'{entry}' is not in the shader")))?;
    if ep.workgroup_size.contains(&0) {
        return Err(Error::invalid(
            "overrides",
            format!("'{entry}''s @workgroup_size is {:?} with the overrides given; give sizes of at least 1", ep.workgroup_size),
        ));
    }
    Ok(ep.workgroup_size)
}

/// A user's shader with probes at every site of one entry point.
#[derive(Clone, Debug)]
pub struct Instrumented {
    /// The instrumented WGSL (validated by naga).
    pub wgsl: String,
    /// The entry point instrumented.
    pub entry: String,
    /// The probe sites, in source order (a site's index is its number in the records).
    pub sites: Vec<Site>,
    /// (group, binding) of the records buffer.
    pub slot: (u32, u32),
    /// How the probe counts.
    pub counting: Counting,
    /// The entry point's `@workgroup_size` (with the overrides applied).
    pub workgroup_size: [u32; 3],
    /// The clauses of every switch, counted apart (after the sites in each record).
    pub cases: Vec<Case>,
    /// One subgroup in `sample` counts (1: every one).
    pub sample: u32,
    /// The override values the pipeline must be built with.
    pub overrides: Vec<(String, f64)>,
    /// Words of outcome history per lane for an `if` inside a loop counted per run (0: votes).
    pub loop_history: u32,
    pub(crate) found: Vec<FoundSite>,
    /// What the instrumented entry point binds, from naga's validation of `wgsl`.
    pub(crate) interface: EntryInterface,
}

impl Instrumented {
    /// Invocations per workgroup.
    pub fn threads(&self) -> u32 {
        self.workgroup_size.iter().product()
    }

    /// Size in bytes of the records buffer for `workgroups` workgroups, with subgroups of at
    /// least `min_width` lanes (trace mode ignores it).
    pub fn records_bytes(&self, workgroups: [u32; 3], min_width: u32) -> u64 {
        let groups = workgroups.iter().map(|&w| w as u64).product::<u64>();
        let body = match self.counting {
            Counting::Subgroups => {
                let subgroups = groups * self.threads().div_ceil(min_width.max(1)) as u64;
                subgroups.div_ceil(self.sample.max(1) as u64) * record_words(self.sites.len(), self.cases.len()) as u64
            }
            Counting::Trace { events } => groups * self.threads() as u64 * (1 + 2 * events as u64),
        };
        (HEADER_WORDS as u64 + body) * 4
    }
}

/// Parses and validates `wgsl` (named `file` in errors, which give file:line:col).
pub fn parse(file: &str, wgsl: &str) -> Result<(naga::Module, naga::valid::ModuleInfo)> {
    parse_source(file, wgsl).map(|(_, module, info)| (module, info))
}

/// [`parse`] with the text naga's spans point into: the preprocessed one (line ends `\n`,
/// directives resolved), which is the text to read spans from and splice into.
pub(crate) fn parse_source(file: &str, wgsl: &str) -> Result<(ShaderSource, naga::Module, naga::valid::ModuleInfo)> {
    let source = preprocess_text(file, wgsl, &[], &|_| None)?;
    let (module, info) = validate(&source)?;
    Ok((source, module, info))
}

/// Instruments entry point `entry` of `wgsl` (named `file` in errors).
///
/// The instrumented text is the preprocessed one (CRLF line ends become LF); sites keep the
/// lines of `wgsl` as written.
pub fn instrument(file: &str, wgsl: &str, entry: &str, options: &InstrumentOptions) -> Result<Instrumented> {
    let (source, module, info) = parse_source(file, wgsl)?;
    instrument_parsed(file, &source, &module, &info, entry, options)
}

/// [`instrument`] of a shader [`parse_source`] gave: nothing of it is parsed again.
pub(crate) fn instrument_parsed(
    file: &str,
    source: &ShaderSource,
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry: &str,
    options: &InstrumentOptions,
) -> Result<Instrumented> {
    // naga's spans are byte offsets into the preprocessed text, so everything below reads and
    // splices that text, never `wgsl` itself
    let wgsl = source.text.as_str();
    if let Some(at) = String::from_utf8_lossy(&mask_comments(wgsl)).find(PREFIX) {
        let (line, column) = super::sites::line_column(wgsl, at);
        let (file, line) = source.origin(line as usize);
        return Err(Error::Shader {
            file,
            line,
            column: column as usize,
            message: format!("names starting with '{PREFIX}' are reserved for the probe; rename this one"),
        });
    }
    let sized = match module.entry_points.iter().find(|e| e.name == entry) {
        Some(_) if !module.overrides.is_empty() || !options.overrides.is_empty() => {
            Some(workgroup_size(module, info, entry, &options.overrides)?)
        }
        _ => None,
    };
    if options.sample == 0 || (options.sample > 1 && options.counting != Counting::Subgroups) {
        return Err(Error::invalid(
            "sample",
            format!(
                "{}: count one subgroup in 1 or more, and sample only when counting on subgroups (Counting::Subgroups)",
                options.sample
            ),
        ));
    }
    if options.loop_history > MAX_LOOP_HISTORY {
        return Err(Error::invalid(
            "loop_history",
            format!(
                "{} words: keep at most {MAX_LOOP_HISTORY} (loops of {} iterations), or 0 to vote at every iteration",
                options.loop_history,
                MAX_LOOP_HISTORY * 32
            ),
        ));
    }
    let mut analysis = analyse_sized(wgsl, module, info, entry, sized)?;
    let origin = |line: u32| source.origin(line as usize).1 as u32;
    for s in &mut analysis.sites {
        s.site.line = origin(s.site.line);
        s.site.callers.iter_mut().for_each(|l| *l = origin(*l));
        s.cases.iter_mut().for_each(|c| c.line = origin(c.line));
    }
    let cases: Vec<Case> = analysis.sites.iter().flat_map(|s| s.cases.iter().cloned()).collect();
    if analysis.sites.is_empty() {
        return Err(Error::invalid(
            "shader",
            format!("{file}: entry point '{entry}' has no branches (no if, loop, switch or function call): every lane follows one path, nothing to profile"),
        ));
    }
    let slot = match options.slot {
        Some(s) => s,
        None => free_slot(module, options.max_bind_groups),
    };
    if module.global_variables.iter().any(|(_, g)| g.binding.as_ref().is_some_and(|b| (b.group, b.binding) == slot)) {
        return Err(Error::invalid("probe slot", format!("group {} binding {} is used by the shader; choose a free one", slot.0, slot.1)));
    }

    let subgroups = options.counting == Counting::Subgroups;
    let mut inserts: Vec<(usize, String)> = Vec::new();
    for (k, s) in analysis.sites.iter().enumerate() {
        match &s.splice {
            Splice::Condition(r) if subgroups => {
                inserts.push((r.start, format!("{PREFIX}_cond{k}(")));
                inserts.push((r.end, ")".into()));
                if let Some(at) = s.loop_exit {
                    inserts.push((at, format!(" {PREFIX}_exit{k}();")));
                }
            }
            Splice::Selector(r, _) if subgroups => {
                inserts.push((r.start, format!("{PREFIX}_switch{k}(")));
                inserts.push((r.end, ")".into()));
            }
            // a function entered by a site's taken lanes is counted from that site's counts
            Splice::Entry(_) if subgroups && s.derived_from.is_some() => {}
            Splice::Entry(at) if subgroups => inserts.push((*at, format!(" {PREFIX}_enter{k}();"))),
            Splice::Condition(r) => {
                inserts.push((r.start, format!("{PREFIX}_cond({k}u, ")));
                inserts.push((r.end, ")".into()));
            }
            Splice::Selector(r, scalar) => {
                inserts.push((r.start, format!("{PREFIX}_switch_{scalar}({k}u, ")));
                inserts.push((r.end, ")".into()));
            }
            Splice::Entry(at) => inserts.push((*at, format!(" {PREFIX}_enter({k}u);"))),
        }
    }
    let needed: &[(naga::BuiltIn, &str, &str)] = match options.counting {
        Counting::Subgroups => &[
            (naga::BuiltIn::WorkGroupId, "workgroup_id", "vec3<u32>"),
            (naga::BuiltIn::NumWorkGroups, "num_workgroups", "vec3<u32>"),
            (naga::BuiltIn::LocalInvocationIndex, "local_invocation_index", "u32"),
            (naga::BuiltIn::NumSubgroups, "num_subgroups", "u32"),
            (naga::BuiltIn::SubgroupSize, "subgroup_size", "u32"),
            (naga::BuiltIn::SubgroupId, "subgroup_id", "u32"),
            (naga::BuiltIn::SubgroupInvocationId, "subgroup_invocation_id", "u32"),
        ],
        Counting::Trace { .. } => &[
            (naga::BuiltIn::WorkGroupId, "workgroup_id", "vec3<u32>"),
            (naga::BuiltIn::NumWorkGroups, "num_workgroups", "vec3<u32>"),
            (naga::BuiltIn::LocalInvocationIndex, "local_invocation_index", "u32"),
        ],
    };
    // naga allows subgroup_id and subgroup_invocation_id only in one-dimensional workgroups;
    // in others they are the local index / width and % width (exact where subgroups are laid
    // out linearly, as on every driver we know)
    let one_dimensional = analysis.workgroup_size[1] == 1 && analysis.workgroup_size[2] == 1;
    let masked = mask_comments(wgsl);
    let mut comma = !analysis.params_empty && masked[..analysis.params_end].iter().rev().find(|c| !c.is_ascii_whitespace()) != Some(&b',');
    let mut args = Vec::new();
    for (builtin, name, ty) in needed {
        if *builtin == naga::BuiltIn::SubgroupId && !one_dimensional {
            args.push(format!("{} / {}", args[2], args[4]));
            continue;
        }
        if *builtin == naga::BuiltIn::SubgroupInvocationId && !one_dimensional {
            args.push(format!("{} % {}", args[2], args[4]));
            continue;
        }
        match analysis.builtins.iter().find(|(b, _)| b == builtin) {
            Some((_, expr)) => args.push(expr.clone()),
            None => {
                let param = format!("{PREFIX}_{name}");
                inserts.push((analysis.params_end, format!("{}@builtin({name}) {param}: {ty}", if comma { ", " } else { "" })));
                comma = true;
                args.push(param);
            }
        }
    }
    inserts.push((analysis.body_start, format!(" {PREFIX}_begin({});", args.join(", "))));
    let mut body_end = None;
    if options.counting == Counting::Subgroups {
        // the counters held per lane are added up and written once per subgroup where its
        // lanes leave: at each `return` of the entry point and at the end of its body
        for &at in &analysis.returns {
            inserts.push((at, format!("{PREFIX}_end(); ")));
        }
        let end = matching_close(&masked, analysis.body_start - 1)
            .ok_or_else(|| Error::invalid("entry point", format!("could not find the end of '{entry}''s body in the source")))?;
        inserts.push((end, format!(" {PREFIX}_end(); ")));
        body_end = Some(end);
    }
    let threads = analysis.workgroup_size.iter().product();
    let twins = body_end
        .filter(|_| options.sample > 1)
        .and_then(|end| sampled_twins(wgsl, &analysis, &inserts, end))
        .map(|text| text + &prelude(options, slot, &analysis.sites, &cases, threads, false));
    let label = format!("{file} (instrumented)");
    let (out, (probed, probed_info)) = match twins.and_then(|text| parse(&label, &text).ok().map(|parsed| (text, parsed))) {
        // subgroups that do not count run the text as written, without a probe in their loops
        Some(twins) => twins,
        // otherwise (a barrier, a call written where it cannot be renamed)
        // each site tests whether its subgroup counts
        None => {
            let out = splice(wgsl, 0..wgsl.len(), &inserts) + &prelude(options, slot, &analysis.sites, &cases, threads, options.sample > 1);
            let parsed = parse(&label, &out).map_err(|e| {
                Error::invalid(
                    "instrumentation",
                    format!("the instrumented shader does not validate ({e}); profile with another `slot` or report the shader"),
                )
            })?;
            (out, parsed)
        }
    };
    let interface = EntryInterface { workgroup_size: analysis.workgroup_size, ..interface_of(&probed, &probed_info, &label, entry)? };
    let sites = analysis.sites.iter().map(|s| s.site.clone()).collect();
    Ok(Instrumented {
        wgsl: out,
        entry: entry.to_string(),
        sites,
        slot,
        counting: options.counting,
        workgroup_size: analysis.workgroup_size,
        cases,
        sample: options.sample,
        overrides: options.overrides.clone(),
        loop_history: options.loop_history,
        found: analysis.sites,
        interface,
    })
}

/// `wgsl[range]` with the `inserts` that fall inside it (at its end included).
fn splice(wgsl: &str, range: Range<usize>, inserts: &[(usize, String)]) -> String {
    let mut at_range: Vec<&(usize, String)> = inserts.iter().filter(|(at, _)| range.contains(at) || *at == range.end).collect();
    at_range.sort_by_key(|(at, _)| *at);
    let mut out = String::with_capacity(range.len() * 2 + 4096);
    let mut prev = range.start;
    for (at, text) in at_range {
        out.push_str(&wgsl[prev..*at]);
        out.push_str(text);
        prev = *at;
    }
    out.push_str(&wgsl[prev..range.end]);
    out
}

/// The sampled shader's text: the entry point's body runs instrumented where the subgroup
/// counts and as written elsewhere; each function it calls stays as written, and an
/// instrumented twin (`simtlab_probe_f_NAME`) is what the instrumented body calls. None where
/// a call cannot be renamed or the split would put a barrier under a branch.
fn sampled_twins(wgsl: &str, analysis: &super::sites::EntryAnalysis, inserts: &[(usize, String)], body_end: usize) -> Option<String> {
    if analysis.synchronises {
        return None;
    }
    let mut inserts = inserts.to_vec();
    for (_, at) in &analysis.calls {
        inserts.push(((*at)?, format!("{PREFIX}_f_")));
    }
    if analysis.calls.iter().any(|(name, _)| !analysis.functions.iter().any(|f| &f.name == name)) {
        return None;
    }
    let body = &wgsl[analysis.body_start..body_end];
    inserts.push((analysis.body_start, format!(" if ({PREFIX}_on) {{")));
    inserts.push((body_end, format!("}} else {{{body}}}")));
    let mut functions: Vec<&super::sites::CalledFunction> = analysis.functions.iter().collect();
    functions.sort_by_key(|f| f.range.start);
    let mut out = String::with_capacity(wgsl.len() * 3 + 4096);
    let mut prev = 0;
    for f in &functions {
        // as written outside the functions, the functions themselves untouched
        out += &splice(wgsl, prev..f.range.start, &inserts);
        out += &wgsl[f.range.clone()];
        prev = f.range.end;
    }
    out += &splice(wgsl, prev..wgsl.len(), &inserts);
    for f in &functions {
        let mut twin = inserts.clone();
        twin.push((f.name_at, format!("{PREFIX}_f_")));
        out += "\n";
        out += &splice(wgsl, f.range.clone(), &twin);
    }
    Some(out)
}

/// `v` (a selector's bits) as a WGSL literal of type `scalar`.
fn literal(v: u32, scalar: &str) -> String {
    if scalar == "i32" {
        format!("i32({})", v as i32)
    } else {
        format!("{v}u")
    }
}

/// A group the shader does not use (after its highest), or the next binding of its highest
/// group when no group is left.
pub(crate) fn free_slot(module: &naga::Module, max_bind_groups: u32) -> (u32, u32) {
    let used: Vec<(u32, u32)> =
        module.global_variables.iter().filter_map(|(_, g)| g.binding.as_ref().map(|b| (b.group, b.binding))).collect();
    let Some(&last_group) = used.iter().map(|(g, _)| g).max() else { return (0, 0) };
    if last_group + 1 < max_bind_groups {
        (last_group + 1, 0)
    } else {
        (last_group, used.iter().filter(|(g, _)| *g == last_group).map(|(_, b)| b + 1).max().unwrap_or(0))
    }
}

/// The probe's declarations and functions, appended to the user's module.
/// `gated`: each site counts only where its subgroup does (sampling without twins).
fn prelude(
    options: &InstrumentOptions,
    (group, binding): (u32, u32),
    sites: &[FoundSite],
    cases: &[Case],
    threads: u32,
    gated: bool,
) -> String {
    let (counting, sample, history) = (options.counting, options.sample, options.loop_history);
    let w = WORDS_PER_SITE;
    let h = HEADER_WORDS;
    let p = PREFIX;
    match counting {
        Counting::Subgroups => {
            // every site and switch clause has its counters in private variables (registers),
            // updated by a function of its own so nothing is indexed at run time: each lane adds
            // its own evaluations and taken outcomes, the first active lane the subgroup's
            // evaluation, uniformity and taken step (three votes, no ballot mask to decode);
            // each lane adds them to its subgroup's record once, where it leaves
            let slots = sites.len() + cases.len();
            let record = record_words(sites.len(), cases.len());
            let mut decls = String::new();
            let mut flush = String::new();
            let mut functions = String::new();
            // a site counts unconditionally where only counting subgroups reach it (a subgroup
            // whose record would not fit is caught where it writes), else at its own test
            let gate = if gated { format!("{p}_on") } else { "true".to_string() };
            for k in 0..slots {
                decls += &format!("var<private> {p}_c{k}: vec4<u32>;\nvar<private> {p}_s{k}: u32;\n");
                // a called function's entry is always taken and uniform: two counters in the
                // loop, the other three are those two at the flush
                let entry = sites.get(k).is_some_and(|s| matches!(s.splice, Splice::Entry(_)));
                let (counts, steps) = if entry { ("vec4<u32>(c.x, c.y, c.y, c.x)", "c.x") } else { ("c", "s") };
                flush += &format!(
                    "        {{ let c = {p}_c{k}; let s = {p}_s{k}; {p}_write({k}u, {counts}, {steps}); {p}_c{k} = vec4<u32>(0u); {p}_s{k} = 0u; }}\n"
                );
                if entry || (k < sites.len() && counted_by_loop(sites, k).is_some()) {
                    continue;
                }
                // a derived site's evaluations and active lanes are another site's taken steps
                // and lanes (filled in when the records are decoded): only its votes count here
                let (evaluated, active) =
                    if sites.get(k).is_some_and(|s| s.derived_from.is_some()) { ("0u", "0u") } else { ("lead", "1u") };
                functions += &format!(
                    r#"
fn {p}_add{k}(lead: u32, cond: bool) {{
    let any = subgroupAny(cond);
    let all = subgroupAll(cond);
    {p}_c{k} += vec4<u32>({evaluated}, {active}, select(0u, 1u, cond), lead * select(0u, 1u, all || !any));
    {p}_s{k} += lead * select(0u, 1u, any);
}}
"#
                );
            }
            for (k, s) in sites.iter().enumerate() {
                functions += &match &s.splice {
                    Splice::Condition(_) if s.loop_exit.is_some() => {
                        decls += &format!("var<private> {p}_e{k}: u32;\n");
                        // leaving only by its test, the loop's evaluations follow from each lane's
                        // count: the subgroup evaluates it `most` times, and an evaluation splits
                        // the lanes where some lane's count ends below `most`
                        let (taken, steps) = if s.exit_on == Some(true) { ("1u", "distinct + 1u") } else { ("e - 1u", "most - 1u") };
                        let body: String = (0..sites.len())
                            .filter(|&b| counted_by_loop(sites, b) == Some(k))
                            .map(|b| if history == 0 {
                                format!("        {{ let m = subgroupMax({p}_v{b}); {p}_v{b} = vec2<u32>(0u); {p}_c{b}.w += lead * m.x; {p}_s{b} += lead * m.y; }}\n")
                            } else {
                                // iteration i's vote from the bits of the lanes that ran it
                                format!(
                                    r#"        {{
            let n = {p}_n{b};
            let longest = subgroupMax(n);
            if (longest > {held}u) {{
                atomicMax(&{p}_words[3], longest);
            }}
            var nonuniform = 0u;
            var any = 0u;
            for (var word = 0u; word * 32u < min(longest, {held}u); word++) {{
                let bits = select({p}_h{b}, {p}_w{b}[min(word, {last}u)], (word + 1u) * 32u <= n);
                let ran = select(0u, n - word * 32u, n > word * 32u);
                let valid = select((1u << min(ran, 31u)) - 1u, 0xffffffffu, ran >= 32u);
                let taken = subgroupOr(bits & valid);
                let all = subgroupAnd(bits | ~valid);
                nonuniform += countOneBits(taken & ~all);
                any += countOneBits(taken);
            }}
            {p}_n{b} = 0u;
            {p}_h{b} = 0u;
            {p}_c{b}.w += lead * nonuniform;
            {p}_s{b} += lead * any;
        }}
"#,
                                    held = history * 32,
                                    last = history - 1
                                )
                            })
                            .collect();
                        format!(
                            r#"
fn {p}_cond{k}(cond: bool) -> bool {{
    if ({gate}) {{
        {p}_e{k} += 1u;
    }}
    return cond;
}}

fn {p}_exit{k}() {{
    if ({gate}) {{
        let e = {p}_e{k};
        {p}_e{k} = 0u;
        let most = subgroupMax(e);
        var distinct = 0u;
        if (most <= 129u) {{
            // a short loop: each count below `most` sets its bit, one vote per 32 counts
            for (var word = 0u; word * 32u + 1u < most; word++) {{
                let bit = e - 1u - word * 32u;
                distinct += countOneBits(subgroupOr(select(0u, 1u << (bit & 31u), e < most && e > word * 32u && bit < 32u)));
            }}
        }} else {{
            // one pass per distinct count below `most`; a subgroup has at most 128 lanes
            var rest = e;
            for (var round = 0u; round < 128u; round++) {{
                let low = subgroupMin(select(0xffffffffu, rest, rest < most));
                if (low == 0xffffffffu) {{
                    break;
                }}
                distinct += 1u;
                rest = select(rest, most, rest == low);
            }}
        }}
        let lead = {p}_lead();
        {p}_c{k} += vec4<u32>(lead * most, e, {taken}, lead * (most - distinct));
        {p}_s{k} += lead * ({steps});
{body}    }}
}}
"#
                        )
                    }
                    // evaluated at every iteration of a loop counted per run: each lane keeps its
                    // outcome of iteration i as bit i (a word of them stored every 32 iterations)
                    // and the loop's end takes the votes from the bits (non-uniform evaluations in
                    // the uniform word, made uniform ones when decoded); nothing in the loop waits
                    // on other lanes, which on some drivers costs several times the loop itself
                    Splice::Condition(_) if counted_by_loop(sites, k).is_some() && history > 0 => {
                        decls += &format!("var<private> {p}_n{k}: u32;\nvar<private> {p}_h{k}: u32;\nvar<private> {p}_w{k}: array<u32, {history}>;\n");
                        format!(
                            r#"
fn {p}_cond{k}(cond: bool) -> bool {{
    if ({gate}) {{
        let n = {p}_n{k};
        {p}_h{k} |= select(0u, 1u << (n & 31u), cond);
        if ((n & 31u) == 31u) {{
            {p}_w{k}[min(n >> 5u, {last}u)] = {p}_h{k};
            {p}_h{k} = 0u;
        }}
        {p}_n{k} = n + 1u;
        {p}_c{k}.z += select(0u, 1u, cond);
    }}
    return cond;
}}
"#,
                            last = history - 1
                        )
                    }
                    // without a history, each lane counts the votes it sees and the loop's end keeps
                    // the longest-staying lane's
                    Splice::Condition(_) if counted_by_loop(sites, k).is_some() => {
                        decls += &format!("var<private> {p}_v{k}: vec2<u32>;\n");
                        format!(
                            r#"
fn {p}_cond{k}(cond: bool) -> bool {{
    if ({gate}) {{
        let any = subgroupAny(cond);
        let all = subgroupAll(cond);
        {p}_c{k}.z += select(0u, 1u, cond);
        {p}_v{k} += vec2<u32>(select(0u, 1u, any && !all), select(0u, 1u, any));
    }}
    return cond;
}}
"#
                        )
                    }
                    Splice::Condition(_) => format!(
                        "\nfn {p}_cond{k}(cond: bool) -> bool {{\n    if ({gate}) {{\n        {p}_add{k}({p}_lead(), cond);\n    }}\n    return cond;\n}}\n"
                    ),
                    Splice::Entry(_) if s.derived_from.is_some() => String::new(),
                    Splice::Entry(_) => {
                        format!("\nfn {p}_enter{k}() {{\n    if ({gate}) {{\n        {p}_c{k} += vec4<u32>({p}_lead(), 1u, 0u, 0u);\n    }}\n}}\n")
                    }
                    Splice::Selector(_, scalar) => {
                        let listed: Vec<String> = s.cases.iter().flat_map(|c| c.values.iter()).map(|&v| literal(v, scalar)).collect();
                        let mut body = String::new();
                        for c in &s.cases {
                            let slot = sites.len() + cases.iter().position(|x| x == c).unwrap_or(0);
                            let mut tests: Vec<String> = c.values.iter().map(|&v| format!("selector == {}", literal(v, scalar))).collect();
                            if c.default {
                                tests.push(if listed.is_empty() {
                                    "true".to_string()
                                } else {
                                    format!("!({})", listed.iter().map(|l| format!("selector == {l}")).collect::<Vec<_>>().join(" || "))
                                });
                            }
                            body += &format!("        {p}_add{slot}(lead, {});\n", tests.join(" || "));
                        }
                        format!(
                            "\nfn {p}_switch{k}(selector: {scalar}) -> {scalar} {{\n    if ({gate}) {{\n        let lead = {p}_lead();\n        {p}_add{k}(lead, subgroupBroadcastFirst(selector) == selector);\n{body}    }}\n    return selector;\n}}\n"
                        )
                    }
                };
            }
            format!(
                r#"

// ---- simtlab divergence probe: per-subgroup counters from subgroup votes ----
@group({group}) @binding({binding}) var<storage, read_write> {p}_words: array<atomic<u32>>;
var<private> {p}_record: u32;
var<private> {p}_lane: u32;
var<private> {p}_on: bool;
{decls}
fn {p}_begin(wg: vec3<u32>, groups: vec3<u32>, local: u32, subgroups: u32, width: u32, subgroup: u32, lane: u32) {{
    let index = (wg.x + groups.x * (wg.y + groups.y * wg.z)) * subgroups + min(subgroup, subgroups - 1u);
    let block = index / {sample}u;
    {p}_lane = lane;
    {p}_record = {h}u + block * {record}u;
    {p}_on = index == block * {sample}u + {p}_pick(block);
    if ({p}_on && {p}_record + {record}u > arrayLength(&{p}_words)) {{
        atomicStore(&{p}_words[2], 1u);
        {p}_on = false;
    }}
    if (index == 0u && local == 0u) {{
        atomicStore(&{p}_words[0], width);
        atomicStore(&{p}_words[1], subgroups);
    }}
}}

fn {p}_pick(block: u32) -> u32 {{
    if ({sample}u <= 1u) {{
        return 0u;
    }}
    var h = block * 0x9E3779B1u;
    h ^= h >> 16u;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13u;
    return h % {sample}u;
}}

// 1 in the first active lane, 0 in the others
fn {p}_lead() -> u32 {{
    return select(0u, 1u, subgroupBroadcastFirst({p}_lane) == {p}_lane);
}}

// each lane adds its own counters: a subgroup reduction here, in divergent code where lanes
// leave, costs the driver far more than the atomics (a few per lane, most of them zero)
fn {p}_write(slot: u32, c: vec4<u32>, s: u32) {{
    let b = {p}_record + slot * {w}u;
    if (c.x != 0u) {{
        atomicAdd(&{p}_words[b], c.x);
    }}
    if (c.y != 0u) {{
        atomicAdd(&{p}_words[b + 1u], c.y);
    }}
    if (c.z != 0u) {{
        atomicAdd(&{p}_words[b + 2u], c.z);
    }}
    if (c.w != 0u) {{
        atomicAdd(&{p}_words[b + 3u], c.w);
    }}
    if (s != 0u) {{
        atomicAdd(&{p}_words[b + 4u], s);
    }}
}}

// where lanes leave: their counters added to their subgroup's record
fn {p}_end() {{
    if ({p}_on) {{
{flush}    }}
}}
{functions}"#
            )
        }
        Counting::Trace { events } => format!(
            r#"

// ---- simtlab divergence probe: each invocation's branch outcomes, emulated on the host ----
@group({group}) @binding({binding}) var<storage, read_write> {p}_words: array<u32>;
var<private> {p}_record: u32;
var<private> {p}_events: u32;
var<private> {p}_on: bool;

fn {p}_begin(wg: vec3<u32>, groups: vec3<u32>, local: u32) {{
    let invocation = (wg.x + groups.x * (wg.y + groups.y * wg.z)) * {threads}u + local;
    {p}_record = {h}u + invocation * {stride}u;
    {p}_on = {p}_record + {stride}u <= arrayLength(&{p}_words);
    if (!{p}_on) {{
        {p}_words[2] = 1u;
    }}
}}

fn {p}_event(site: u32, value: u32) {{
    if ({p}_on) {{
        if ({p}_events < {events}u) {{
            {p}_words[{p}_record + 1u + 2u * {p}_events] = site;
            {p}_words[{p}_record + 2u + 2u * {p}_events] = value;
        }}
        {p}_events += 1u;
        {p}_words[{p}_record] = {p}_events;
    }}
}}

fn {p}_cond(site: u32, cond: bool) -> bool {{
    {p}_event(site, select(0u, 1u, cond));
    return cond;
}}

fn {p}_switch_u32(site: u32, selector: u32) -> u32 {{
    {p}_event(site, selector);
    return selector;
}}

fn {p}_switch_i32(site: u32, selector: i32) -> i32 {{
    {p}_event(site, bitcast<u32>(selector));
    return selector;
}}

fn {p}_enter(site: u32) {{
    {p}_event(site, 1u);
}}
"#,
            stride = 1 + 2 * events
        ),
    }
}
