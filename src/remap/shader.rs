//! Remapping any WGSL compute shader without editing it: the entry point's
//! `global_invocation_id` is read through an index buffer that simtlab binds at a group the
//! shader does not use, so invocation `i` works on element `index[i]`. Everything else in the
//! user's text stays byte for byte as it was (spliced at naga's spans, as the probe is), so an
//! element's writes land where they always did and the outputs are identical whatever the
//! order.
//!
//! Only entry points whose invocations are independent qualify: a result that depends on which
//! lane or workgroup ran which element would change. So workgroup variables, barriers,
//! subgroup operations and the local or workgroup builtins (`local_invocation_id`,
//! `local_invocation_index`, `workgroup_id`, the subgroup builtins) are refused with an error
//! naming the construct and its line; compute the element from `global_invocation_id` instead.
//!
//! ```
//! use simtlab::remap::{remap_shader, RemapShaderOptions};
//! let wgsl = "@group(0) @binding(0) var<storage, read_write> data: array<u32>;
//! @compute @workgroup_size(64)
//! fn main(@builtin(global_invocation_id) id: vec3<u32>) {
//!     var n = data[id.x];
//!     while (n > 1u) { n = select(3u * n + 1u, n / 2u, n % 2u == 0u); }
//!     data[id.x] = n;
//! }";
//! let remapped = remap_shader("collatz.wgsl", wgsl, "main", &RemapShaderOptions::default())?;
//! assert_eq!(remapped.slot, (1, 0)); // the index buffer: the group after the shader's own
//! assert!(remapped.wgsl.contains("let id = vec3<u32>(simtlab_remap_element % simtlab_remap_width,"));
//! # Ok::<(), simtlab::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::profile::{is_ident, parse_source};

/// Prefix of every name the remapping adds; a shader that already uses it is refused.
const PREFIX: &str = "simtlab_remap";

/// Where the index buffer goes, and the overrides the shader runs with.
#[derive(Clone, Debug, PartialEq)]
pub struct RemapShaderOptions {
    /// (group, binding) of the index buffer; None = a group the shader does not use.
    pub slot: Option<(u32, u32)>,
    /// The device's `max_bind_groups`.
    pub max_bind_groups: u32,
    /// Values of the shader's pipeline-overridable constants, by name or `@id` (the others
    /// keep their defaults): a workgroup size taken from overrides is resolved with them, and
    /// the remapped shader turns global ids into linear ones for that size.
    pub overrides: Vec<(String, f64)>,
}

impl Default for RemapShaderOptions {
    fn default() -> Self {
        RemapShaderOptions { slot: None, max_bind_groups: 4, overrides: Vec::new() }
    }
}

/// A user's shader whose entry point reads its global invocation id through an index buffer.
#[derive(Clone, Debug)]
pub struct RemappedShader {
    /// The remapped WGSL (validated by naga).
    pub wgsl: String,
    /// The entry point remapped.
    pub entry: String,
    /// (group, binding) of the index: `array<u32>`, one element id per invocation in the
    /// linear order `x + width · (y + height · z)` of the global ids (width and height in
    /// invocations). Invocations past its length keep their own element.
    pub slot: (u32, u32),
    /// The entry point's `@workgroup_size` (with the overrides applied; the remapped text
    /// holds it as numbers, so the shader is to run with the same overrides).
    pub workgroup_size: [u32; 3],
}

/// The binding name of the index buffer in a remapped shader.
pub const INDEX_NAME: &str = "simtlab_remap_index";

/// Rewrites entry point `entry` of `wgsl` (named `file` in errors) to take its element from
/// an index buffer, or says which construct of the shader makes the order matter.
pub fn remap_shader(file: &str, wgsl: &str, entry: &str, options: &RemapShaderOptions) -> Result<RemappedShader> {
    let (source, module, info) = parse_source(file, wgsl)?;
    let text = source.text.as_str();
    let masked = crate::profile::mask_comments(text);
    let refuse = |offset: usize, what: String| {
        let (line, column) = crate::profile::line_column(text, offset);
        let (file, line) = source.origin(line as usize);
        Error::Shader {
            file,
            line,
            column: column as usize,
            message: format!("{what}; remapping needs invocations that do not depend on each other"),
        }
    };
    if let Some(at) = String::from_utf8_lossy(&masked).find(PREFIX) {
        return Err(refuse(at, format!("names starting with '{PREFIX}' are reserved for the remapping; rename this one")));
    }
    let sized = match module.entry_points.iter().find(|e| e.name == entry) {
        Some(_) if !module.overrides.is_empty() || !options.overrides.is_empty() => {
            Some(crate::profile::workgroup_size(&module, &info, entry, &options.overrides)?)
        }
        _ => None,
    };
    let analysis = crate::profile::analyse_sized(text, &module, &info, entry, sized)?;
    let index = module.entry_points.iter().position(|e| e.name == entry).unwrap_or_default();
    if let Some((at, what)) = order_dependence(&module, &info, index) {
        return Err(refuse(at, what));
    }
    let params_start = analysis.params_start;
    for (builtin, name) in &analysis.builtins {
        if let Some(what) = lane_builtin(*builtin) {
            let used = uses(&masked, analysis.body_start, name);
            if let Some(at) = used {
                return Err(refuse(at, format!("'{name}' ({what}) ties the result to the invocation's place in its workgroup or subgroup; derive the element from global_invocation_id alone")));
            }
        }
    }
    let Some((_, gid)) = analysis.builtins.iter().find(|(b, _)| *b == naga::BuiltIn::GlobalInvocationId) else {
        return Err(Error::invalid(
            "entry point",
            format!(
                "{file}: '{entry}' does not read global_invocation_id, so no invocation is tied to an element: there is nothing to remap"
            ),
        ));
    };
    let slot = match options.slot {
        Some(s) => s,
        None => crate::profile::free_slot(&module, options.max_bind_groups),
    };
    if module.global_variables.iter().any(|(_, g)| g.binding.as_ref().is_some_and(|b| (b.group, b.binding) == slot)) {
        return Err(Error::invalid("index slot", format!("group {} binding {} is used by the shader; choose a free one", slot.0, slot.1)));
    }

    // The parameter that carries the id is renamed, and the body starts by declaring the old
    // name (or, for a struct of builtins, a copy with the id replaced).
    let raw = format!("{PREFIX}_raw");
    let (param, member) = match gid.split_once('.') {
        Some((param, member)) => (param, Some(member)),
        None => (gid.as_str(), None),
    };
    let param_at = find_word(&masked[params_start..analysis.params_end], param)
        .map(|at| params_start + at)
        .ok_or_else(|| Error::invalid("entry point", format!("could not find the parameter '{param}' of '{entry}' in the source")))?;
    let mut inserts: Vec<(usize, usize, String)> = vec![(param_at, param_at + param.len(), raw.clone())];
    let groups = match analysis.builtins.iter().find(|(b, _)| *b == naga::BuiltIn::NumWorkGroups) {
        Some((_, expr)) => match expr.split_once('.') {
            Some((p, m)) if p == param => format!("{raw}.{m}"),
            _ if expr == param => raw.clone(),
            _ => expr.clone(),
        },
        None => {
            let comma =
                !analysis.params_empty && masked[..analysis.params_end].iter().rev().find(|c| !c.is_ascii_whitespace()) != Some(&b',');
            let name = format!("{PREFIX}_groups");
            let declaration = format!("{}@builtin(num_workgroups) {name}: vec3<u32>", if comma { ", " } else { "" });
            inserts.push((analysis.params_end, analysis.params_end, declaration));
            name
        }
    };
    let declaration = match member {
        None => format!("{} let {param} = {};", element_of(&raw, &groups, analysis.workgroup_size), element_id()),
        Some(m) => format!(
            "{} var {param} = {raw}; {param}.{m} = {};",
            element_of(&format!("{raw}.{m}"), &groups, analysis.workgroup_size),
            element_id()
        ),
    };
    inserts.push((analysis.body_start, analysis.body_start, declaration));
    inserts.sort_by_key(|(at, _, _)| *at);

    let mut out = String::with_capacity(text.len() + 1024);
    let mut prev = 0;
    for (from, to, with) in &inserts {
        out.push_str(&text[prev..*from]);
        out.push_str(with);
        prev = *to;
    }
    out.push_str(&text[prev..]);
    out.push_str(&prelude(slot));
    crate::profile::parse(&format!("{file} (remapped)"), &out).map_err(|e| {
        Error::invalid("remapping", format!("the remapped shader does not validate ({e}); choose another index slot or report the shader"))
    })?;
    Ok(RemappedShader { wgsl: out, entry: entry.to_string(), slot, workgroup_size: analysis.workgroup_size })
}

/// The index binding, appended to the user's module.
fn prelude((group, binding): (u32, u32)) -> String {
    format!(
        "\n\n// ---- simtlab thread-data remapping: invocation i works on element {INDEX_NAME}[i] ----\n\
         @group({group}) @binding({binding}) var<storage, read> {INDEX_NAME}: array<u32>;\n"
    )
}

/// The statements that turn the raw id `raw` into the element's id, branch-free and without a
/// call, so that profiling the remapped shader counts only the user's own sites: the linear
/// invocation `x + width · (y + height · z)` reads the index (past its end, the invocation
/// keeps its own element), and the element's linear id goes back to three dimensions.
fn element_of(raw: &str, groups: &str, [wx, wy, _]: [u32; 3]) -> String {
    let p = PREFIX;
    let len = format!("arrayLength(&{INDEX_NAME})");
    format!(
        " let {p}_width = {groups}.x * {wx}u; let {p}_height = {groups}.y * {wy}u; \
         let {p}_linear = {raw}.x + {p}_width * ({raw}.y + {p}_height * {raw}.z); \
         let {p}_element = select({p}_linear, {INDEX_NAME}[min({p}_linear, {len} - 1u)], {p}_linear < {len});"
    )
}

/// The element id `element_of` computed, as a `vec3<u32>` global id.
fn element_id() -> String {
    let p = PREFIX;
    format!("vec3<u32>({p}_element % {p}_width, ({p}_element / {p}_width) % {p}_height, {p}_element / ({p}_width * {p}_height))")
}

/// What a builtin ties to the lane's place, for those that make the order matter.
fn lane_builtin(builtin: naga::BuiltIn) -> Option<&'static str> {
    use naga::BuiltIn as B;
    match builtin {
        B::LocalInvocationId => Some("local_invocation_id"),
        B::LocalInvocationIndex => Some("local_invocation_index"),
        B::WorkGroupId => Some("workgroup_id"),
        B::SubgroupId => Some("subgroup_id"),
        B::SubgroupInvocationId => Some("subgroup_invocation_id"),
        B::NumSubgroups => Some("num_subgroups"),
        B::SubgroupSize => Some("subgroup_size"),
        _ => None,
    }
}

/// Offset of `word` as a whole identifier in `text`.
fn find_word(text: &[u8], word: &str) -> Option<usize> {
    let w = word.as_bytes();
    (0..text.len().saturating_sub(w.len() - 1))
        .find(|&i| text[i..].starts_with(w) && (i == 0 || !is_ident(text[i - 1])) && text.get(i + w.len()).is_none_or(|&c| !is_ident(c)))
}

/// Where the entry body (from `body_start`) uses `expr` (`name` or `param.member`).
fn uses(masked: &[u8], body_start: usize, expr: &str) -> Option<usize> {
    let body = &masked[body_start..];
    match expr.split_once('.') {
        None => find_word(body, expr).map(|at| body_start + at),
        Some((_, member)) => {
            let mut from = 0;
            while let Some(at) = find_word(&body[from..], member).map(|at| from + at) {
                let before = body[..at].iter().rev().find(|c| !c.is_ascii_whitespace());
                if before == Some(&b'.') {
                    return Some(body_start + at);
                }
                from = at + member.len();
            }
            None
        }
    }
}

/// The first construct of entry point `index` (or a function it calls) under which the result
/// depends on which lane runs which element: workgroup memory, a barrier, a subgroup
/// operation. Its byte offset and a description.
fn order_dependence(module: &naga::Module, info: &naga::valid::ModuleInfo, index: usize) -> Option<(usize, String)> {
    let ep_info = info.get_entry_point(index);
    for (h, g) in module.global_variables.iter() {
        if g.space == naga::AddressSpace::WorkGroup && !ep_info[h].is_empty() {
            let at = module.global_variables.get_span(h).to_range().map_or(0, |r| r.start);
            let name = g.name.clone().unwrap_or_default();
            return Some((at, format!("workgroup variable '{name}' is shared by the invocations of a workgroup")));
        }
    }
    let mut functions = vec![&module.entry_points[index].function];
    let mut seen = Vec::new();
    while let Some(f) = functions.pop() {
        if let Some(found) = block_dependence(&f.body) {
            return Some(found);
        }
        let mut calls = Vec::new();
        collect_calls(&f.body, &mut calls);
        for h in calls {
            if !seen.contains(&h) {
                seen.push(h);
                functions.push(&module.functions[h]);
            }
        }
    }
    None
}

fn block_dependence(block: &naga::Block) -> Option<(usize, String)> {
    use naga::Statement as S;
    for (statement, span) in block.span_iter() {
        let at = span.to_range().map_or(0, |r| r.start);
        let found = match statement {
            S::ControlBarrier(_) | S::MemoryBarrier(_) => Some("a barrier synchronises the invocations of a workgroup"),
            S::WorkGroupUniformLoad { .. } => Some("workgroupUniformLoad reads memory shared by a workgroup"),
            S::SubgroupBallot { .. } | S::SubgroupGather { .. } | S::SubgroupCollectiveOperation { .. } => {
                Some("a subgroup operation combines the values of the lanes that run together")
            }
            _ => None,
        };
        if let Some(what) = found {
            return Some((at, what.to_string()));
        }
        let nested: Vec<&naga::Block> = match statement {
            S::Block(b) => vec![b],
            S::If { accept, reject, .. } => vec![accept, reject],
            S::Switch { cases, .. } => cases.iter().map(|c| &c.body).collect(),
            S::Loop { body, continuing, .. } => vec![body, continuing],
            _ => Vec::new(),
        };
        if let Some(found) = nested.into_iter().find_map(block_dependence) {
            return Some(found);
        }
    }
    None
}

fn collect_calls(block: &naga::Block, calls: &mut Vec<naga::Handle<naga::Function>>) {
    use naga::Statement as S;
    for statement in block.iter() {
        match statement {
            S::Call { function, .. } => calls.push(*function),
            S::Block(b) => collect_calls(b, calls),
            S::If { accept, reject, .. } => {
                collect_calls(accept, calls);
                collect_calls(reject, calls);
            }
            S::Switch { cases, .. } => cases.iter().for_each(|c| collect_calls(&c.body, calls)),
            S::Loop { body, continuing, .. } => {
                collect_calls(body, calls);
                collect_calls(continuing, calls);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remap(wgsl: &str) -> Result<RemappedShader> {
        remap_shader("t.wgsl", wgsl, "main", &RemapShaderOptions::default())
    }

    #[test]
    fn only_the_id_parameter_and_the_body_start_change() {
        let wgsl = "@group(0) @binding(0) var<storage, read_write> v: array<f32>;\n@compute @workgroup_size(8, 2)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n    v[g.x] = v[g.x] * 2.0;\n}\n";
        let r = remap(wgsl).unwrap();
        assert_eq!(r.slot, (1, 0));
        assert_eq!(r.workgroup_size, [8, 2, 1]);
        let head = "@group(0) @binding(0) var<storage, read_write> v: array<f32>;\n@compute @workgroup_size(8, 2)\nfn main(@builtin(global_invocation_id) simtlab_remap_raw: vec3<u32>, @builtin(num_workgroups) simtlab_remap_groups: vec3<u32>) { let simtlab_remap_width = simtlab_remap_groups.x * 8u; let simtlab_remap_height = simtlab_remap_groups.y * 2u;";
        assert!(r.wgsl.starts_with(head), "{}", r.wgsl);
        let tail = " let g = vec3<u32>(simtlab_remap_element % simtlab_remap_width, (simtlab_remap_element / simtlab_remap_width) % simtlab_remap_height, simtlab_remap_element / (simtlab_remap_width * simtlab_remap_height));\n    v[g.x] = v[g.x] * 2.0;\n}\n";
        assert!(r.wgsl.contains(tail), "{}", r.wgsl);
    }

    #[test]
    fn a_struct_of_builtins_keeps_its_other_members() {
        let wgsl = "struct In { @builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) n: vec3<u32> }\n@group(0) @binding(0) var<storage, read_write> v: array<u32>;\n@compute @workgroup_size(64)\nfn main(input: In) {\n    v[input.id.x] = input.n.x;\n}\n";
        let r = remap(wgsl).unwrap();
        assert!(r.wgsl.contains("fn main(simtlab_remap_raw: In) { let simtlab_remap_width = simtlab_remap_raw.n.x * 64u;"), "{}", r.wgsl);
        assert!(r.wgsl.contains("var input = simtlab_remap_raw; input.id = vec3<u32>("), "{}", r.wgsl);
    }

    #[test]
    fn constructs_that_tie_results_to_lanes_are_refused_at_their_line() {
        let cases = [
            ("var<workgroup> tile: array<u32, 64>;\n@group(0) @binding(0) var<storage, read_write> v: array<u32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n    tile[g.x % 64u] = v[g.x];\n    workgroupBarrier();\n    v[g.x] = tile[63u - g.x % 64u];\n}\n", 1, "workgroup variable 'tile'"),
            ("@group(0) @binding(0) var<storage, read_write> v: array<u32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n    v[g.x] = v[g.x] + 1u;\n    storageBarrier();\n}\n", 5, "a barrier"),
            ("@group(0) @binding(0) var<storage, read_write> v: array<u32>;\nfn total(x: u32) -> u32 {\n    return subgroupAdd(x);\n}\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n    v[g.x] = total(v[g.x]);\n}\n", 3, "a subgroup operation"),
            ("@group(0) @binding(0) var<storage, read_write> v: array<u32>;\n@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) l: u32) {\n    let i = g.x;\n    v[i] = l;\n}\n", 5, "'l' (local_invocation_index)"),
        ];
        for (wgsl, line, expected) in cases {
            match remap(wgsl) {
                Err(Error::Shader { line: at, message, .. }) => {
                    assert_eq!(at, line, "{message}");
                    assert!(message.contains(expected), "{message}");
                }
                other => panic!("{expected}: {other:?}"),
            }
        }
    }
}
