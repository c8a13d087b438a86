//! Per-block resources of a WGSL compute kernel, read from naga IR: workgroup size and
//! workgroup (shared) memory. Register counts are not in the IR; they come from the user
//! or from a driver's compile report.

use serde::Serialize;

use super::arch::Arch;
use super::calculator::{calculate, Launch, Occupancy};
use crate::error::{Error, Result};

const SOURCE_NAME: &str = "<wgsl>";

/// One `var<workgroup>` global the entry point uses.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkgroupVariable {
    /// The variable's name in the WGSL (None if naga has none).
    pub name: Option<String>,
    /// Its size in bytes as naga's layouter computes it.
    pub size_bytes: u32,
}

/// What one workgroup of the kernel occupies, independent of the GPU.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KernelResources {
    /// The compute entry point's name.
    pub entry_point: String,
    /// `@workgroup_size(x, y, z)`.
    pub workgroup_size: [u32; 3],
    /// x × y × z invocations.
    pub threads_per_workgroup: u32,
    /// Sum of the sizes of the workgroup variables below, as naga's layouter computes them.
    pub workgroup_memory_bytes: u32,
    /// The `var<workgroup>` globals the entry point uses.
    pub workgroup_variables: Vec<WorkgroupVariable>,
}

impl KernelResources {
    /// The launch this kernel makes with `registers_per_thread` registers.
    pub fn launch(&self, registers_per_thread: u32) -> Launch {
        Launch::new(self.threads_per_workgroup, registers_per_thread, self.workgroup_memory_bytes)
    }
}

/// Workgroup size and workgroup memory of compute entry point `entry_point`.
/// Fails if the workgroup size is a pipeline override; use
/// [`kernel_resources_with_workgroup_size`] to supply it.
pub fn kernel_resources(wgsl_source: &str, entry_point: &str) -> Result<KernelResources> {
    kernel_resources_with_workgroup_size(wgsl_source, entry_point, None)
}

/// Like [`kernel_resources`]; `workgroup_size` stands in for an `@workgroup_size` given by
/// override expressions and is ignored when the shader fixes the size itself.
pub fn kernel_resources_with_workgroup_size(
    wgsl_source: &str,
    entry_point: &str,
    workgroup_size: Option<[u32; 3]>,
) -> Result<KernelResources> {
    let module = naga::front::wgsl::parse_str(wgsl_source).map_err(|error| {
        let location = error.location(wgsl_source);
        Error::Shader {
            file: SOURCE_NAME.to_string(),
            line: location.map_or(0, |l| l.line_number as usize),
            column: location.map_or(0, |l| l.line_position as usize),
            message: error.message().to_string(),
        }
    })?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .map_err(|error| {
            let location = error.location(wgsl_source);
            let mut message = error.to_string();
            let mut source = std::error::Error::source(error.as_inner());
            while let Some(cause) = source {
                message.push_str(": ");
                message.push_str(&cause.to_string());
                source = cause.source();
            }
            Error::Shader {
                file: SOURCE_NAME.to_string(),
                line: location.map_or(0, |l| l.line_number as usize),
                column: location.map_or(0, |l| l.line_position as usize),
                message,
            }
        })?;

    resources(&module, &info, entry_point, workgroup_size, false)
}

/// [`kernel_resources_with_workgroup_size`] of a module whose override constants
/// [`naga::back::pipeline_constants::process_overrides`] has applied: workgroup arrays sized by
/// overrides get the length the pipeline gives them.
pub fn module_resources(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry_point: &str,
    workgroup_size: Option<[u32; 3]>,
) -> Result<KernelResources> {
    resources(module, info, entry_point, workgroup_size, true)
}

/// `overrides_applied`: override-sized arrays take their overrides' values; otherwise they
/// are an error (the pipeline may give the overrides other values).
fn resources(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry_point: &str,
    workgroup_size: Option<[u32; 3]>,
    overrides_applied: bool,
) -> Result<KernelResources> {
    let compute_entries = || {
        module
            .entry_points
            .iter()
            .filter(|ep| ep.stage == naga::ShaderStage::Compute)
            .map(|ep| ep.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (index, entry) = module.entry_points.iter().enumerate().find(|(_, ep)| ep.name == entry_point).ok_or_else(|| {
        Error::invalid("entry point", format!("no entry point named '{entry_point}'; compute entry points: {}", compute_entries()))
    })?;
    if entry.stage != naga::ShaderStage::Compute {
        return Err(Error::invalid(
            "entry point",
            format!("'{entry_point}' is a {:?} entry point, not compute; compute entry points: {}", entry.stage, compute_entries()),
        ));
    }

    let overridden = entry.workgroup_size_overrides.as_ref().is_some_and(|dims| dims.iter().any(Option::is_some));
    let size = match (overridden, workgroup_size) {
        (false, _) => entry.workgroup_size,
        (true, Some(given)) => given,
        (true, None) => {
            return Err(Error::invalid(
                "workgroup size",
                format!(
                    "@workgroup_size of '{entry_point}' is an override expression, fixed only at \
                     pipeline creation; pass the size to use"
                ),
            ))
        }
    };
    if size.contains(&0) {
        return Err(Error::invalid("workgroup size", format!("{size:?} has a zero dimension")));
    }
    let threads = size
        .iter()
        .try_fold(1u32, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| Error::invalid("workgroup size", format!("{size:?} has more than {} invocations", u32::MAX)))?;

    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).map_err(|error| Error::invalid("workgroup memory", format!("cannot lay out a type: {error}")))?;

    let uses = info.get_entry_point(index);
    let mut variables = Vec::new();
    let mut total: u64 = 0;
    for (handle, global) in module.global_variables.iter() {
        if global.space != naga::AddressSpace::WorkGroup || uses[handle].is_empty() {
            continue;
        }
        let name = global.name.as_deref().unwrap_or("(unnamed)");
        let unknown = || {
            Error::invalid(
                "workgroup memory",
                format!("the size of var<workgroup> {name} depends on an override, known only at pipeline creation"),
            )
        };
        let size_bytes = match module.types[global.ty].inner {
            naga::TypeInner::Array { base, size: size @ naga::ArraySize::Pending(_), stride }
                if overrides_applied && !sized_by_override(&module.types, base) =>
            {
                match size.resolve(module.to_ctx()) {
                    Ok(naga::proc::IndexableLength::Known(n)) => n.checked_mul(stride).ok_or_else(unknown)?,
                    _ => return Err(unknown()),
                }
            }
            _ if sized_by_override(&module.types, global.ty) => return Err(unknown()),
            _ => layouter[global.ty].size,
        };
        total += u64::from(size_bytes);
        variables.push(WorkgroupVariable { name: global.name.clone(), size_bytes });
    }
    let workgroup_memory_bytes = u32::try_from(total)
        .map_err(|_| Error::invalid("workgroup memory", format!("{total} bytes of workgroup variables exceed 4 GiB")))?;

    Ok(KernelResources {
        entry_point: entry_point.to_string(),
        workgroup_size: size,
        threads_per_workgroup: threads,
        workgroup_memory_bytes,
        workgroup_variables: variables,
    })
}

/// Whether an array inside `ty` takes its length from an override (naga lays those out
/// with length 0, which would understate the memory).
fn sized_by_override(types: &naga::UniqueArena<naga::Type>, ty: naga::Handle<naga::Type>) -> bool {
    match &types[ty].inner {
        naga::TypeInner::Array { base, size, .. } => matches!(size, naga::ArraySize::Pending(_)) || sized_by_override(types, *base),
        naga::TypeInner::Struct { members, .. } => members.iter().any(|m| sized_by_override(types, m.ty)),
        _ => false,
    }
}

/// Occupancy of the kernel on `arch` when the compiler gives it `registers_per_thread`.
pub fn kernel_occupancy(arch: &Arch, kernel: &KernelResources, registers_per_thread: u32) -> Result<Occupancy> {
    calculate(arch, kernel.launch(registers_per_thread))
}
