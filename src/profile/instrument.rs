//! Splicing probes into the user's WGSL at naga's spans: every other byte of the user's text
//! stays as it was, so the instrumented shader computes what the original does. The probe
//! functions and the records buffer are appended; the entry point gets the builtins the probe
//! needs (reusing those it already declares).

use super::sites::{analyse, mask_comments, FoundSite, Site, Splice};
use crate::error::{Error, Result};
use crate::gpu::shader::{preprocess_text, validate, ShaderSource};
use serde::{Deserialize, Serialize};

/// Prefix of every name the instrumentation adds; a shader that already uses it is refused.
const PREFIX: &str = "simtlab_probe";

/// Words at the start of the records buffer: subgroup width, subgroups per workgroup, a flag
/// set when an invocation's record did not fit, and one spare.
pub(crate) const HEADER_WORDS: usize = 4;

/// Words per site in a subgroup's record: evaluations, active lanes, taken lanes, uniform
/// evaluations, taken steps.
pub(crate) const WORDS_PER_SITE: usize = 5;

/// How the instrumented shader counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Counting {
    /// Per-subgroup counters from ballots (needs `wgpu::Features::SUBGROUP`): the GPU's own
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstrumentOptions {
    /// Ballots on subgroups or per-invocation outcomes.
    pub counting: Counting,
    /// (group, binding) of the records buffer; None = a group the shader does not use (the
    /// one after its highest), or, past `max_bind_groups`, the next binding of its last group.
    pub slot: Option<(u32, u32)>,
    /// The device's `max_bind_groups`.
    pub max_bind_groups: u32,
}

impl Default for InstrumentOptions {
    fn default() -> Self {
        InstrumentOptions { counting: Counting::Subgroups, slot: None, max_bind_groups: 4 }
    }
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
    /// The entry point's `@workgroup_size`.
    pub workgroup_size: [u32; 3],
    pub(crate) found: Vec<FoundSite>,
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
        let per_group = match self.counting {
            Counting::Subgroups => (self.threads().div_ceil(min_width.max(1)) as u64) * (self.sites.len() * WORDS_PER_SITE) as u64,
            Counting::Trace { events } => self.threads() as u64 * (1 + 2 * events as u64),
        };
        (HEADER_WORDS as u64 + groups * per_group) * 4
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
    let mut analysis = analyse(wgsl, &module, &info, entry)?;
    for s in &mut analysis.sites {
        s.site.line = source.origin(s.site.line as usize).1 as u32;
    }
    if analysis.sites.is_empty() {
        return Err(Error::invalid(
            "shader",
            format!("{file}: entry point '{entry}' has no branches (no if, loop, switch or function call): every lane follows one path, nothing to profile"),
        ));
    }
    let slot = match options.slot {
        Some(s) => s,
        None => free_slot(&module, options.max_bind_groups),
    };
    if module.global_variables.iter().any(|(_, g)| g.binding.as_ref().is_some_and(|b| (b.group, b.binding) == slot)) {
        return Err(Error::invalid("probe slot", format!("group {} binding {} is used by the shader; choose a free one", slot.0, slot.1)));
    }

    let mut inserts: Vec<(usize, String)> = Vec::new();
    for (k, s) in analysis.sites.iter().enumerate() {
        match &s.splice {
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
        ],
        Counting::Trace { .. } => &[
            (naga::BuiltIn::WorkGroupId, "workgroup_id", "vec3<u32>"),
            (naga::BuiltIn::NumWorkGroups, "num_workgroups", "vec3<u32>"),
            (naga::BuiltIn::LocalInvocationIndex, "local_invocation_index", "u32"),
        ],
    };
    // naga allows subgroup_id only in one-dimensional workgroups; in others the subgroup's
    // slot is its first lane's local index / width (exact where subgroups are laid out
    // linearly, as on every driver we know)
    let one_dimensional = analysis.workgroup_size[1] == 1 && analysis.workgroup_size[2] == 1;
    let masked = mask_comments(wgsl);
    let mut comma = !analysis.params_empty && masked[..analysis.params_end].iter().rev().find(|c| !c.is_ascii_whitespace()) != Some(&b',');
    let mut args = Vec::new();
    for (builtin, name, ty) in needed {
        if *builtin == naga::BuiltIn::SubgroupId && !one_dimensional {
            args.push(format!("{} / {}", args[2], args[4]));
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
    inserts.sort_by_key(|(at, _)| *at);

    let mut out = String::with_capacity(wgsl.len() + 4096);
    let mut prev = 0;
    for (at, text) in &inserts {
        out.push_str(&wgsl[prev..*at]);
        out.push_str(text);
        prev = *at;
    }
    out.push_str(&wgsl[prev..]);
    out.push_str(&prelude(options.counting, slot, analysis.sites.len(), analysis.workgroup_size.iter().product()));

    parse(&format!("{file} (instrumented)"), &out).map_err(|e| {
        Error::invalid(
            "instrumentation",
            format!("the instrumented shader does not validate ({e}); profile with --slot or report the shader"),
        )
    })?;
    let sites = analysis.sites.iter().map(|s| s.site.clone()).collect();
    Ok(Instrumented {
        wgsl: out,
        entry: entry.to_string(),
        sites,
        slot,
        counting: options.counting,
        workgroup_size: analysis.workgroup_size,
        found: analysis.sites,
    })
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
fn prelude(counting: Counting, (group, binding): (u32, u32), sites: usize, threads: u32) -> String {
    let w = WORDS_PER_SITE;
    let h = HEADER_WORDS;
    let p = PREFIX;
    match counting {
        Counting::Subgroups => format!(
            r#"

// ---- simtlab divergence probe: per-subgroup counters from ballots ----
@group({group}) @binding({binding}) var<storage, read_write> {p}_words: array<atomic<u32>>;
var<private> {p}_record: u32;
var<private> {p}_local: u32;
var<private> {p}_on: bool;

fn {p}_begin(wg: vec3<u32>, groups: vec3<u32>, local: u32, subgroups: u32, width: u32, subgroup: u32) {{
    let index = (wg.x + groups.x * (wg.y + groups.y * wg.z)) * subgroups + min(subgroup, subgroups - 1u);
    {p}_record = {h}u + index * {sites}u * {w}u;
    {p}_local = local;
    {p}_on = {p}_record + {sites}u * {w}u <= arrayLength(&{p}_words);
    if (!{p}_on) {{
        atomicStore(&{p}_words[2], 1u);
    }}
    if (index == 0u && local == 0u) {{
        atomicStore(&{p}_words[0], width);
        atomicStore(&{p}_words[1], subgroups);
    }}
}}

fn {p}_lanes(mask: vec4<u32>) -> u32 {{
    let c = countOneBits(mask);
    return c.x + c.y + c.z + c.w;
}}

fn {p}_cond(site: u32, cond: bool) -> bool {{
    let lanes = {p}_lanes(subgroupBallot(true));
    let taken = {p}_lanes(subgroupBallot(cond));
    let first = subgroupBroadcastFirst({p}_local) == {p}_local;
    if ({p}_on && first) {{
        let b = {p}_record + site * {w}u;
        atomicAdd(&{p}_words[b], 1u);
        atomicAdd(&{p}_words[b + 1u], lanes);
        atomicAdd(&{p}_words[b + 2u], taken);
        if (taken == 0u || taken == lanes) {{
            atomicAdd(&{p}_words[b + 3u], 1u);
        }}
        if (taken != 0u) {{
            atomicAdd(&{p}_words[b + 4u], 1u);
        }}
    }}
    return cond;
}}

fn {p}_switch_u32(site: u32, selector: u32) -> u32 {{
    {p}_cond(site, subgroupBroadcastFirst(selector) == selector);
    return selector;
}}

fn {p}_switch_i32(site: u32, selector: i32) -> i32 {{
    {p}_cond(site, subgroupBroadcastFirst(selector) == selector);
    return selector;
}}

fn {p}_enter(site: u32) {{
    {p}_cond(site, true);
}}
"#
        ),
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
