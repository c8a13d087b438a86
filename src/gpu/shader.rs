//! Shader loading: the WGSL files under `shaders/` (embedded at build time), a small
//! preprocessor (`#import name`, `#ifdef X`, `#ifndef X`, `#else`, `#endif`), naga validation
//! with errors mapped back to file:line:col, and cached compute pipelines.
//!
//! A file may declare its variants on a line `//! variants: A B` (the defines it reacts to);
//! the test suite validates every file under every combination of them.

use super::buffer::Bind;
use super::Gpu;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/shaders.rs"));
}

/// The typed shader registry the build writes: one module per folder and file under
/// `shaders/`, one [`Entry`] constant per compute entry point (a wrong name does not compile).
pub use embedded::{registry, Binding, Entry, ShaderFile};

/// Every embedded WGSL file as (path under `shaders/`, text).
pub fn files() -> &'static [(&'static str, &'static str)] {
    embedded::FILES
}

fn embedded_text(path: &str) -> Option<&'static str> {
    files().iter().find(|(p, _)| *p == path).map(|(_, t)| *t)
}

/// Preprocessed WGSL with a map from each output line to (file, line) for error messages.
#[derive(Clone, Debug)]
pub struct ShaderSource {
    /// The preprocessed WGSL, imports inlined and `#ifdef`s resolved.
    pub text: String,
    origins: Vec<(usize, usize)>,
    files: Vec<String>,
}

impl ShaderSource {
    /// (file, 1-based line) of a 1-based output line.
    pub fn origin(&self, line: usize) -> (String, usize) {
        match self.origins.get(line.wrapping_sub(1)) {
            Some(&(f, l)) => (self.files[f].clone(), l),
            None => (self.files.first().cloned().unwrap_or_default(), line),
        }
    }
}

/// The defines a file reacts to (its `//! variants:` line; `(none)` or absent means none).
pub fn declared_variants(text: &str) -> Vec<String> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("//! variants:"))
        .map(|v| v.split_whitespace().filter(|w| *w != "(none)").map(String::from).collect())
        .unwrap_or_default()
}

/// Preprocesses an embedded file.
pub fn preprocess(path: &str, defines: &[&str]) -> Result<ShaderSource> {
    let text = embedded_text(path).ok_or_else(|| Error::Shader {
        file: path.into(),
        line: 0,
        column: 0,
        message: "no such shader file under shaders/".into(),
    })?;
    preprocess_text(path, text, defines, &|name| embedded_text(&format!("shared/{name}.wgsl")))
}

/// Preprocesses `text` (named `path` in errors); `import` resolves `#import name`.
pub fn preprocess_text(path: &str, text: &str, defines: &[&str], import: &dyn Fn(&str) -> Option<&'static str>) -> Result<ShaderSource> {
    let mut out = ShaderSource { text: String::new(), origins: Vec::new(), files: Vec::new() };
    let mut imported = Vec::new();
    expand(path, text, defines, import, &mut out, &mut imported)?;
    Ok(out)
}

fn expand(
    path: &str,
    text: &str,
    defines: &[&str],
    import: &dyn Fn(&str) -> Option<&'static str>,
    out: &mut ShaderSource,
    imported: &mut Vec<String>,
) -> Result<()> {
    let file = out.files.len();
    out.files.push(path.to_string());
    let err = |line: usize, message: String| Error::Shader { file: path.into(), line, column: 1, message };
    // Each open conditional: (this branch active, some earlier branch taken, line opened).
    let mut stack: Vec<(bool, bool, usize)> = Vec::new();
    // `/* */` comments open at the start of the line (WGSL's nest): a `#` there is text
    let mut in_comment = 0usize;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let active = stack.iter().all(|s| s.0);
        let t = line.trim();
        let word = |prefix: &str| t.strip_prefix(prefix).map(str::trim);
        let commented = in_comment > 0;
        in_comment = block_comment_depth(line, in_comment);
        if commented {
            if active {
                out.text.push_str(line);
                out.text.push('\n');
                out.origins.push((file, n));
            }
        } else if let Some(name) = word("#ifdef ").or_else(|| word("#ifndef ")) {
            let defined = defines.contains(&name);
            let on = if t.starts_with("#ifdef") { defined } else { !defined };
            stack.push((on, on, n));
        } else if t == "#else" {
            let top = stack.last_mut().ok_or_else(|| err(n, "#else without #ifdef".into()))?;
            top.0 = !top.1;
            top.1 = true;
        } else if t == "#endif" {
            stack.pop().ok_or_else(|| err(n, "#endif without #ifdef".into()))?;
        } else if let Some(name) = word("#import ") {
            if active && !imported.iter().any(|m| m == name) {
                imported.push(name.to_string());
                let body = import(name).ok_or_else(|| err(n, format!("unknown import '{name}' (files in shaders/shared/)")))?;
                expand(&format!("shared/{name}.wgsl"), body, defines, import, out, imported)?;
            }
        } else if t.starts_with('#') {
            return Err(err(n, format!("unknown directive '{t}' (use #import, #ifdef, #ifndef, #else, #endif)")));
        } else if active {
            out.text.push_str(line);
            out.text.push('\n');
            out.origins.push((file, n));
        }
    }
    if let Some(&(_, _, opened)) = stack.last() {
        return Err(err(opened, "#ifdef without #endif".into()));
    }
    Ok(())
}

/// How many `/* */` comments are open after `line`, `depth` being open before it.
fn block_comment_depth(line: &str, mut depth: usize) -> usize {
    let b = line.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        match &b[i..i + 2] {
            b"//" if depth == 0 => break,
            b"/*" => depth += 1,
            b"*/" if depth > 0 => depth -= 1,
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    depth
}

/// Parses and validates preprocessed WGSL; errors name the original file:line:col.
pub fn validate(source: &ShaderSource) -> Result<(naga::Module, naga::valid::ModuleInfo)> {
    let located = |loc: Option<naga::SourceLocation>, message: String| {
        let (line, column) = loc.map(|l| (l.line_number as usize, l.line_position as usize)).unwrap_or((0, 0));
        let (file, line) = source.origin(line);
        Error::Shader { file, line, column, message }
    };
    let module =
        naga::front::wgsl::parse_str(&source.text).map_err(|e| located(e.location(&source.text), e.emit_to_string(&source.text)))?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .map_err(|e| located(e.location(&source.text), e.emit_to_string(&source.text)))?;
    Ok((module, info))
}

/// A compute pipeline and what simtlab knows about its entry point.
#[derive(Debug)]
pub struct Kernel {
    /// Entry point name.
    pub name: String,
    /// The compiled pipeline.
    pub pipeline: wgpu::ComputePipeline,
    groups: Vec<KernelGroup>,
    /// `@workgroup_size` of the entry point (x, y, z).
    pub workgroup_size: [u32; 3],
}

/// One bind group of a [`Kernel`]'s pipeline layout.
#[derive(Debug)]
pub struct KernelGroup {
    /// The group number (`@group(N)`).
    pub group: u32,
    /// Its layout in the pipeline.
    pub layout: wgpu::BindGroupLayout,
    /// The binding numbers the entry point uses in it, sorted (empty for a group below the
    /// last one used that the entry point leaves out).
    pub bindings: Vec<u32>,
}

/// What a compute entry point uses, as naga sees it: for each bind group from 0 to the last
/// one it uses, the binding numbers it uses there (sorted), and its `@workgroup_size`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryInterface {
    /// `(group, bindings)` for every group 0..=last used, in order.
    pub groups: Vec<(u32, Vec<u32>)>,
    /// `@workgroup_size` (x, y, z) as declared (zeros where an override sets it).
    pub workgroup_size: [u32; 3],
}

impl Kernel {
    /// A kernel over `pipeline`, its layouts taken for every group of `interface`.
    pub(crate) fn new(name: &str, pipeline: wgpu::ComputePipeline, interface: EntryInterface) -> Self {
        let groups = interface
            .groups
            .into_iter()
            .map(|(group, bindings)| KernelGroup { group, layout: pipeline.get_bind_group_layout(group), bindings })
            .collect();
        Kernel { name: name.to_string(), pipeline, groups, workgroup_size: interface.workgroup_size }
    }

    /// A kernel whose layout was built by hand: group 0 only, with `bindings`.
    pub(super) fn with_group0(
        name: String,
        pipeline: wgpu::ComputePipeline,
        layout: wgpu::BindGroupLayout,
        bindings: Vec<u32>,
        workgroup_size: [u32; 3],
    ) -> Self {
        Kernel { name, pipeline, groups: vec![KernelGroup { group: 0, layout, bindings }], workgroup_size }
    }

    /// Every bind group of the pipeline layout, in group order.
    pub fn groups(&self) -> &[KernelGroup] {
        &self.groups
    }

    /// Binding numbers of `group` the entry point uses (empty for a group it does not use).
    pub fn bindings(&self, group: u32) -> &[u32] {
        self.groups.iter().find(|g| g.group == group).map_or(&[], |g| g.bindings.as_slice())
    }

    /// Binds `buffers[i]` at binding i of group 0, skipping bindings this variant does not use.
    pub fn bind(&self, gpu: &Gpu, buffers: &[&dyn Bind]) -> Result<wgpu::BindGroup> {
        let slots: Vec<(u32, &dyn Bind)> = buffers.iter().enumerate().map(|(i, b)| (i as u32, *b)).collect();
        self.bind_at(gpu, &slots)
    }

    /// Binds each (binding, buffer) of group 0; bindings the entry point does not use are
    /// skipped, and every binding it uses must be given. Never blocks: native backends report a validation error at once, elsewhere it surfaces where the bind group is used.
    pub fn bind_at(&self, gpu: &Gpu, slots: &[(u32, &dyn Bind)]) -> Result<wgpu::BindGroup> {
        let resources: Vec<(u32, wgpu::BindingResource)> =
            slots.iter().map(|(b, buffer)| (*b, buffer.wgpu_buffer().as_entire_binding())).collect();
        self.bind_group(gpu, 0, &resources)
    }

    /// Binds group `group` to each (binding, resource): a buffer, texture view or sampler.
    /// Bindings the entry point does not use are skipped, and every binding it uses in the
    /// group must be given. Never blocks, as [`Kernel::bind_at`].
    pub fn bind_group(&self, gpu: &Gpu, group: u32, resources: &[(u32, wgpu::BindingResource)]) -> Result<wgpu::BindGroup> {
        gpu.checked_now(&format!("binding group {group} of {}", self.name), || self.create_bind_group(gpu, group, resources))?
    }

    /// [`Kernel::bind_group`] without an error scope of its own: wgpu's errors go to the
    /// caller's scope (to be awaited there, with what the caller knows to say about them).
    pub(crate) fn create_bind_group(&self, gpu: &Gpu, group: u32, resources: &[(u32, wgpu::BindingResource)]) -> Result<wgpu::BindGroup> {
        let place = |b: u32| if group == 0 { format!("binding {b}") } else { format!("group {group} binding {b}") };
        let layout = self.groups.iter().find(|g| g.group == group).ok_or_else(|| {
            let used: Vec<String> = self.groups.iter().map(|g| g.group.to_string()).collect();
            Error::invalid(
                "bindings",
                format!("{} has no bind group {group}: its pipeline has groups [{}]; bind one of those", self.name, used.join(", ")),
            )
        })?;
        let mut entries = Vec::new();
        for &b in &layout.bindings {
            let resource = resources
                .iter()
                .find(|(i, _)| *i == b)
                .map(|(_, r)| r.clone())
                .ok_or_else(|| Error::invalid("bindings", format!("{} uses {}, which was not given", self.name, place(b))))?;
            entries.push(wgpu::BindGroupEntry { binding: b, resource });
        }
        Ok(gpu.device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some(&self.name), layout: &layout.layout, entries: &entries }))
    }
}

#[derive(Default)]
pub(super) struct PipelineCache(Mutex<HashMap<String, Arc<Kernel>>>);

impl Gpu {
    /// The compute kernel `entry` (from [`registry`]) with `defines`, cached.
    pub fn kernel(&self, entry: Entry, defines: &[&str]) -> Result<Arc<Kernel>> {
        self.kernel_with_constants(entry, defines, &[])
    }

    /// As [`Gpu::kernel`], with values for pipeline-overridable constants. Never waits: native
    /// backends report a driver error at once; in the browser it surfaces where the kernel is
    /// used (the submission that runs it), and [`Gpu::kernel_async`] reports it here.
    pub fn kernel_with_constants(&self, entry: Entry, defines: &[&str], constants: &[(&str, f64)]) -> Result<Arc<Kernel>> {
        let key = kernel_key(entry, defines, constants);
        if let Some(kernel) = self.cached_kernel(&key) {
            return Ok(kernel);
        }
        let source = preprocess(entry.file.path, defines)?;
        let kernel = Arc::new(self.compile(&source, &format!("{}:{}", entry.file.path, entry.name), entry.name, constants)?);
        Ok(self.cache_kernel(key, kernel))
    }

    /// The compute kernel `entry` (from [`registry`]) with `defines` and values for
    /// pipeline-overridable constants, cached.
    pub async fn kernel_async(&self, entry: Entry, defines: &[&str], constants: &[(&str, f64)]) -> Result<Arc<Kernel>> {
        let key = kernel_key(entry, defines, constants);
        if let Some(kernel) = self.cached_kernel(&key) {
            return Ok(kernel);
        }
        let source = preprocess(entry.file.path, defines)?;
        let kernel = Arc::new(self.compile_async(&source, &format!("{}:{}", entry.file.path, entry.name), entry.name, constants).await?);
        Ok(self.cache_kernel(key, kernel))
    }

    fn cached_kernel(&self, key: &str) -> Option<Arc<Kernel>> {
        self.pipelines.0.lock().expect("pipeline cache lock").get(key).cloned()
    }

    fn cache_kernel(&self, key: String, kernel: Arc<Kernel>) -> Arc<Kernel> {
        self.pipelines.0.lock().expect("pipeline cache lock").insert(key, kernel.clone());
        kernel
    }

    /// Compiles preprocessed WGSL (e.g. a user's own kernel) into a [`Kernel`] without waiting
    /// for the driver: see [`Gpu::kernel_with_constants`] and [`Gpu::compile_async`].
    pub fn compile(&self, source: &ShaderSource, name: &str, entry: &str, constants: &[(&str, f64)]) -> Result<Kernel> {
        let interface = entry_interface(source, name, entry)?;
        let pipeline = self.checked_now(&self.pipeline_context(name), || self.create_pipeline(&source.text, name, entry, constants))?;
        Ok(Kernel::new(name, pipeline, interface))
    }

    /// Compiles preprocessed WGSL (e.g. a user's own kernel) into a [`Kernel`]; naga's
    /// errors name the original file:line:col, the driver's come as [`Error::Gpu`].
    pub async fn compile_async(&self, source: &ShaderSource, name: &str, entry: &str, constants: &[(&str, f64)]) -> Result<Kernel> {
        let interface = entry_interface(source, name, entry)?;
        self.compile_validated_async(&source.text, name, entry, constants, interface)
            .await
            .map_err(|e| driver_error(source, self.driver_text(&source.text).lines().count() - source.text.lines().count(), e))
    }

    /// [`Gpu::compile_async`] of WGSL naga has already validated, whose entry point uses
    /// `interface`: nothing is parsed here (the driver's own compiler aside), and the driver's
    /// errors come as [`Error::Gpu`], as it gave them.
    pub(crate) async fn compile_validated_async(
        &self,
        wgsl: &str,
        name: &str,
        entry: &str,
        constants: &[(&str, f64)],
        interface: EntryInterface,
    ) -> Result<Kernel> {
        let pipeline = self.checked(&self.pipeline_context(name), || self.create_pipeline(wgsl, name, entry, constants)).await?;
        Ok(Kernel::new(name, pipeline, interface))
    }

    fn pipeline_context(&self, name: &str) -> String {
        format!("creating the pipeline {name} on {}", self.adapter_name())
    }

    fn create_pipeline(&self, wgsl: &str, name: &str, entry: &str, constants: &[(&str, f64)]) -> wgpu::ComputePipeline {
        let shader = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(name),
            source: wgpu::ShaderSource::Wgsl(self.driver_text(wgsl).into()),
        });
        self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(name),
            layout: None,
            module: &shader,
            entry_point: Some(entry),
            compilation_options: wgpu::PipelineCompilationOptions { constants, zero_initialize_workgroup_memory: true },
            cache: None,
        })
    }
}

/// A driver's compile error on the text from [`Gpu::driver_text`] (`skip` lines of
/// directives before `source`) as an [`Error::Shader`] at the first `:line:col` it names,
/// every such location rewritten to the original file:line:col through the preprocessor's
/// map. The browser's compiler reports this way (naga's errors are mapped in [`validate`]);
/// an error without a location stays as it is.
fn driver_error(source: &ShaderSource, skip: usize, error: Error) -> Error {
    let message = error.to_string();
    let (mut out, mut rest, mut first) = (String::new(), message.as_str(), None);
    while let Some(i) = rest.find(':') {
        let after = &rest[i + 1..];
        match line_and_column(after).filter(|(line, _, _)| *line > skip) {
            Some((line, column, len)) => {
                let (file, original) = source.origin(line - skip);
                out.push_str(&format!("{}{file}:{original}:{column}", &rest[..i]));
                first.get_or_insert((file, original, column));
                rest = &after[len..];
            }
            None => {
                out.push_str(&rest[..=i]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    match first {
        Some((file, line, column)) => Error::Shader { file, line, column, message: out },
        None => error,
    }
}
/// `line:column` and the bytes they take at the start of `text`, followed by a space.
fn line_and_column(text: &str) -> Option<(usize, usize, usize)> {
    let (line, rest) = text.split_once(':')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if !rest[digits..].starts_with(' ') {
        return None;
    }
    Some((line.parse().ok()?, rest[..digits].parse().ok()?, line.len() + 1 + digits))
}

/// The pipeline cache's key of `entry` under `defines` and `constants`.
fn kernel_key(entry: Entry, defines: &[&str], constants: &[(&str, f64)]) -> String {
    format!("{}:{}:{defines:?}:{constants:?}", entry.file.path, entry.name)
}

/// What compute entry point `entry` of `source` uses ([`EntryInterface`]), as naga sees it
/// (naga's errors name the original file:line:col).
fn entry_interface(source: &ShaderSource, name: &str, entry: &str) -> Result<EntryInterface> {
    let (module, info) = validate(source)?;
    interface_of(&module, &info, name, entry)
}

/// What compute entry point `entry` of a validated module uses (`name` in errors).
pub(crate) fn interface_of(module: &naga::Module, info: &naga::valid::ModuleInfo, name: &str, entry: &str) -> Result<EntryInterface> {
    let index = module
        .entry_points
        .iter()
        .position(|e| e.name == entry && e.stage == naga::ShaderStage::Compute)
        .ok_or_else(|| Error::invalid("entry point", format!("{name}: no compute entry point '{entry}'")))?;
    let uses = info.get_entry_point(index);
    let used: Vec<(u32, u32)> = module
        .global_variables
        .iter()
        .filter(|(h, _)| !uses[*h].is_empty())
        .filter_map(|(_, g)| g.binding.as_ref().map(|b| (b.group, b.binding)))
        .collect();
    let last = used.iter().map(|&(g, _)| g + 1).max().unwrap_or(0);
    let groups = (0..last)
        .map(|group| {
            let mut bindings: Vec<u32> = used.iter().filter(|u| u.0 == group).map(|u| u.1).collect();
            bindings.sort_unstable();
            (group, bindings)
        })
        .collect();
    Ok(EntryInterface { groups, workgroup_size: module.entry_points[index].workgroup_size })
}

impl Gpu {
    /// The WGSL handed to the driver: the browser needs `enable subgroups;` before subgroup
    /// built-ins, which naga (every other backend) rejects.
    pub(crate) fn driver_text(&self, wgsl: &str) -> String {
        #[cfg(target_arch = "wasm32")]
        if self.caps.subgroups {
            return format!("{}{wgsl}", super::web::SUBGROUPS_DIRECTIVE);
        }
        wgsl.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every combination of a file's declared variants.
    fn variant_sets(text: &str) -> Vec<Vec<String>> {
        let vars = declared_variants(text);
        (0..1u32 << vars.len())
            .map(|mask| vars.iter().enumerate().filter(|(i, _)| mask >> i & 1 == 1).map(|(_, v)| v.clone()).collect())
            .collect()
    }

    #[test]
    fn the_probe_binding_below_the_registry_is_the_one_probe_wgsl_declares() {
        // `divergence` sits below `gpu`, so it keeps its own constant: this keeps the two equal
        assert_eq!(crate::divergence::PROBE_BINDING, registry::shared::probe::binding::PROBE_RECORDS);
        assert_eq!(registry::mcubes::generate::binding::VOLUME, 0, "imported bindings count as the file's own");
        assert_eq!(registry::mcubes::generate::binding::VERTICES, 5);
    }

    #[test]
    fn every_shader_file_validates_in_every_variant() {
        let on_disk = {
            let mut v = Vec::new();
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
            let mut stack = vec![root.clone()];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(d).unwrap().flatten() {
                    let p = e.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if p.extension().is_some_and(|x| x == "wgsl") {
                        v.push(p.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/"));
                    }
                }
            }
            v
        };
        assert!(on_disk.len() >= 3, "shaders/ should hold the kernels");
        let mut checked = 0;
        for path in &on_disk {
            let text = embedded_text(path).unwrap_or_else(|| panic!("{path} is not embedded; rebuild"));
            // shared/ files are libraries: they validate through the kernels that import them,
            // unless they have an entry point of their own.
            if path.starts_with("shared/") && !text.contains("@compute") {
                continue;
            }
            for set in variant_sets(text) {
                let defines: Vec<&str> = set.iter().map(String::as_str).collect();
                let src = preprocess(path, &defines).unwrap_or_else(|e| panic!("{e}"));
                if let Err(e) = validate(&src) {
                    panic!("{path} with {defines:?}: {e}");
                }
                checked += 1;
            }
        }
        assert!(checked >= on_disk.len() / 2);
    }

    /// The build's text scan of every file agrees with naga: each compute entry point naga
    /// finds in any variant of a file is registered under that file with its workgroup size,
    /// and the registry has no others.
    #[test]
    fn the_registry_matches_what_naga_finds() {
        let mut found = std::collections::BTreeSet::new();
        let mut libraries = Vec::new();
        for (path, text) in files() {
            for set in variant_sets(text) {
                let defines: Vec<&str> = set.iter().map(String::as_str).collect();
                let module = match validate(&preprocess(path, &defines).unwrap()) {
                    Ok((module, _)) => module,
                    // a library under shared/ whose entry points need what the importer defines
                    Err(_) if path.starts_with("shared/") => {
                        libraries.push(*path);
                        break;
                    }
                    Err(e) => panic!("{e}"),
                };
                for e in module.entry_points.iter().filter(|e| e.stage == naga::ShaderStage::Compute) {
                    // imported entry points belong to the file that declares them
                    let own = registry::ALL.iter().find(|r| r.name == e.name && r.file.path == *path);
                    let imported = || registry::ALL.iter().find(|r| r.name == e.name && r.file.path.starts_with("shared/"));
                    let Some(entry) = own.or_else(imported) else { panic!("{path}: {} is not in the registry", e.name) };
                    assert_eq!(entry.file.variants, declared_variants(embedded_text(entry.file.path).unwrap()).as_slice(), "{path}");
                    let literal: Option<Vec<u32>> = entry.workgroup_size.split(',').map(|d| d.trim().parse().ok()).collect();
                    if let Some(dims) = literal {
                        assert_eq!(&e.workgroup_size[..dims.len()], dims.as_slice(), "{path}:{}", e.name);
                    }
                    found.insert((entry.file.path, entry.name));
                }
            }
        }
        for entry in registry::ALL.iter().filter(|r| !libraries.contains(&r.file.path)) {
            assert!(
                found.contains(&(entry.file.path, entry.name)),
                "{}:{} is registered but naga never sees it",
                entry.file.path,
                entry.name
            );
        }
        assert_eq!(registry::pt::capability::DISCOVER.workgroup_size, "256");
        assert_eq!(registry::lbm::stream_collide::MAIN.workgroup_size, "WG");
        let names: Vec<&str> = registry::lbm::stream_collide::FILE.bindings.iter().map(|b| b.name).collect();
        assert_eq!(names, ["f_in", "f_out", "flags", "params"]);
    }

    #[test]
    fn preprocessor_handles_nesting_and_imports() {
        let lib: &'static str = "fn lib_fn() -> u32 { return 1u; }\n";
        let text = "#import lib\n#ifdef A\na\n#ifndef B\nab\n#else\nb\n#endif\n#else\nnot_a\n#endif\nend\n";
        let src = preprocess_text("k.wgsl", text, &["A"], &|n| (n == "lib").then_some(lib)).unwrap();
        assert_eq!(src.text, "fn lib_fn() -> u32 { return 1u; }\na\nab\nend\n");
        assert_eq!(src.origin(1), ("shared/lib.wgsl".into(), 1));
        assert_eq!(src.origin(3), ("k.wgsl".into(), 5));
        let src = preprocess_text("k.wgsl", text, &["B"], &|n| (n == "lib").then_some(lib)).unwrap();
        assert_eq!(src.text, "fn lib_fn() -> u32 { return 1u; }\nnot_a\nend\n");
    }

    #[test]
    fn a_hash_inside_a_block_comment_is_text_not_a_directive() {
        let none = |_: &str| None;
        let text = "/* notes\n# not a directive\n  /* nested\n#ifdef X\n  */\n#endif\n*/\n#ifdef A\na\n#endif\n// #x\nend /* one line */\n";
        let src = preprocess_text("k.wgsl", text, &[], &none).unwrap();
        assert_eq!(src.text, "/* notes\n# not a directive\n  /* nested\n#ifdef X\n  */\n#endif\n*/\n// #x\nend /* one line */\n");
        assert_eq!(src.origin(8), ("k.wgsl".into(), 11));
        // after the comment closes, a `#` line is a directive again
        let e = preprocess_text("k.wgsl", "/* a */\n#bad\n", &[], &none).unwrap_err().to_string();
        assert!(e.starts_with("k.wgsl:2:") && e.contains("unknown directive"), "{e}");
    }

    #[test]
    fn preprocessor_errors_name_file_and_line() {
        let none = |_: &str| None;
        let e = preprocess_text("k.wgsl", "x\n#import nope\n", &[], &none).unwrap_err().to_string();
        assert!(e.starts_with("k.wgsl:2:") && e.contains("unknown import 'nope'"), "{e}");
        let e = preprocess_text("k.wgsl", "#ifdef A\n", &[], &none).unwrap_err().to_string();
        assert!(e.starts_with("k.wgsl:1:") && e.contains("without #endif"), "{e}");
        let e = preprocess_text("k.wgsl", "#endif\n", &[], &none).unwrap_err().to_string();
        assert!(e.contains("without #ifdef"), "{e}");
    }

    #[test]
    fn a_drivers_error_locations_map_to_the_original_file_and_line() {
        let lib: &'static str = "fn helper() -> u32 { return 1u; }\n";
        let text = "#import lib\n// comment\nfn broken() {\n    workgroupBarrier();\n}\n";
        let src = preprocess_text("k.wgsl", text, &[], &|_| Some(lib)).unwrap();
        // as the browser reports it, with two directive lines before the source
        let reported =
            "Error while parsing WGSL: :6:5 error: 'workgroupBarrier' must only be called from uniform control flow\n:5:1 note: here";
        match driver_error(&src, 2, Error::gpu("creating the pipeline k", reported)) {
            Error::Shader { file, line, column, message } => {
                assert_eq!((file.as_str(), line, column), ("k.wgsl", 4, 5));
                assert!(message.contains("WGSL: k.wgsl:4:5 error") && message.contains("k.wgsl:3:1 note"), "{message}");
            }
            other => panic!("unexpected {other}"),
        }
        let unplaced = Error::gpu("creating the pipeline k", "out of memory: try 2:30 later");
        assert!(matches!(driver_error(&src, 2, unplaced), Error::Gpu { .. }));
    }

    #[test]
    fn invalid_wgsl_reports_the_original_file_line_and_column() {
        let lib: &'static str = "fn helper() -> u32 { return 1u; }\n";
        let text = "#import lib\n// comment\nfn broken() -> u32 {\n    return 1u + true_value;\n}\n";
        let src = preprocess_text("bad.wgsl", text, &[], &|_| Some(lib)).unwrap();
        match validate(&src).unwrap_err() {
            Error::Shader { file, line, column, message } => {
                assert_eq!(file, "bad.wgsl");
                assert_eq!(line, 4);
                assert_eq!(column, 17);
                assert!(message.contains("true_value"), "{message}");
            }
            other => panic!("unexpected {other}"),
        }
    }
}
