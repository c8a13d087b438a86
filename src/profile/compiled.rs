//! simtlab's own kernels as the driver compiles them: the register count and other statistics
//! the driver reports (`VK_KHR_pipeline_executable_properties`), and the occupancy model's
//! verdict on a preset with that count (`simtlab registers`).

use crate::error::{Error, Result};
use crate::gpu::shader::{preprocess, registry, validate};
use crate::gpu::{DriverStatistics, Gpu};
use crate::occupancy::{kernel_occupancy, module_resources, Arch, Occupancy};
use serde::Serialize;

/// One compute entry point of simtlab's shaders (its file without `#define`s), compiled.
#[derive(Clone, Debug, Serialize)]
pub struct CompiledKernel {
    /// Shader file under `shaders/`.
    pub shader: String,
    /// Entry point.
    pub entry: String,
    /// Invocations per workgroup.
    pub threads_per_workgroup: u32,
    /// Workgroup memory per workgroup, as naga lays it out.
    pub workgroup_memory_bytes: u32,
    /// Registers per thread the driver reports (None when it reports no such statistic).
    pub registers: Option<u32>,
    /// The subgroup size the driver compiled for (0 when it does not say).
    pub subgroup_size: u32,
    /// The occupancy model on the chosen preset with the driver's register count.
    pub occupancy: Option<Occupancy>,
    /// Everything the driver reported.
    pub statistics: DriverStatistics,
}

/// Every registry entry point whose shader path or name contains `filter`, compiled by the
/// driver with statistics; `progress(done, total, name)` hears of each before it compiles.
/// [`Error::Unsupported`] at once when the driver does not report statistics at all.
pub fn compiled_kernels(gpu: &Gpu, arch: &Arch, filter: &str, progress: &mut dyn FnMut(usize, usize, &str)) -> Result<Vec<CompiledKernel>> {
    let entries: Vec<_> = registry::ALL
        .iter()
        .filter(|e| !e.file.path.starts_with("shared/") && format!("{}:{}", e.file.path, e.name).contains(filter))
        .collect();
    if entries.is_empty() {
        return Err(Error::invalid("filter", format!("'{filter}' matches no shader path or entry point of the shader registry")));
    }
    let mut out = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let name = format!("{}:{}", entry.file.path, entry.name);
        progress(i, entries.len(), &name);
        let source = preprocess(entry.file.path, &[])?;
        let (module, info) = validate(&source)?;
        // an entry point only some variants declare is left out, as in the registry tests
        if !module.entry_points.iter().any(|e| e.name == entry.name) {
            continue;
        }
        let statistics = gpu.driver_statistics(&source, entry.name, &[])?;
        // override defaults applied, as the pipeline gets them: sizes set by overrides are final
        let stage = Some((naga::ShaderStage::Compute, entry.name));
        let (module, info) = naga::back::pipeline_constants::process_overrides(&module, &info, stage, &Default::default())
            .map_err(|e| Error::invalid("override constants", format!("{name}: {e}")))?;
        let resources = module_resources(&module, &info, entry.name, None)?;
        let registers = statistics.registers();
        let occupancy = registers.map(|r| kernel_occupancy(arch, &resources, r)).transpose()?;
        out.push(CompiledKernel {
            shader: entry.file.path.to_string(),
            entry: entry.name.to_string(),
            threads_per_workgroup: resources.threads_per_workgroup,
            workgroup_memory_bytes: resources.workgroup_memory_bytes,
            registers,
            subgroup_size: statistics.executables.first().map_or(0, |e| e.subgroup_size),
            occupancy,
            statistics,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workgroup_memory_sized_by_overrides_is_counted_once_they_are_applied() {
        let source = preprocess("matmul/regtile.wgsl", &[]).unwrap();
        assert!(crate::occupancy::kernel_resources(&source.text, "main").is_err(), "the plain text has override-sized arrays");
        let (module, info) = validate(&source).unwrap();
        let stage = Some((naga::ShaderStage::Compute, "main"));
        let (module, info) = naga::back::pipeline_constants::process_overrides(&module, &info, stage, &Default::default()).unwrap();
        let r = module_resources(&module, &info, "main", None).unwrap();
        // defaults: 16×16 threads, tiles BM = BN = 16·8 and BK = 8, two buffers each of vec4s:
        // As and Bs hold 2·(128·8/4) vec4 = 8 KiB each
        assert_eq!(r.threads_per_workgroup, 256);
        assert_eq!(r.workgroup_memory_bytes, 2 * (2 * 128 * 8 / 4) * 16);
    }
}
