//! What the device offers, as simtlab uses it. The subgroup size is measured with a probe
//! kernel because adapters may report only a range (or 0).

use super::{BufferKind, Gpu, Step};
use crate::error::Result;
use crate::gpu::shader::registry;
use serde::{Deserialize, Serialize};

/// Device features and limits that simtlab's kernels depend on, plus the measured subgroup width.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Subgroup operations in compute shaders (SUBGROUP).
    pub subgroups: bool,
    /// Subgroup barriers (SUBGROUP_BARRIER).
    pub subgroup_barrier: bool,
    /// Measured native subgroup width (None without subgroup support).
    pub subgroup_size: Option<u32>,
    /// Range the adapter reports.
    pub subgroup_min_size: u32,
    /// Largest subgroup width the adapter reports.
    pub subgroup_max_size: u32,
    /// Timestamp queries around passes (TIMESTAMP_QUERY): device timing is available.
    pub timestamps: bool,
    /// Timestamp queries inside passes (TIMESTAMP_QUERY_INSIDE_PASSES).
    pub timestamps_inside_passes: bool,
    /// `@coherent` storage buffers (MEMORY_DECORATION_COHERENT).
    pub coherent: bool,
    /// SPIR-V handed to the driver unchanged (PASSTHROUGH_SHADERS, [`crate::gpu::spirv`]).
    #[serde(default)]
    pub spirv_passthrough: bool,
    /// Largest storage buffer binding, in bytes.
    pub max_storage_buffer_binding_size: u64,
    /// Largest buffer, in bytes.
    pub max_buffer_size: u64,
    /// Most workgroups in one dimension of a dispatch.
    pub max_compute_workgroups_per_dimension: u32,
    /// Most invocations in one workgroup.
    pub max_compute_invocations_per_workgroup: u32,
    /// Workgroup (shared) memory per workgroup, in bytes.
    pub max_compute_workgroup_storage_size: u32,
    /// Most storage buffers one shader stage may bind.
    pub max_storage_buffers_per_shader_stage: u32,
}

impl Capabilities {
    /// Features and limits as the device reports them; `subgroup_size` stays None until measured.
    pub fn from_device(device: &wgpu::Device, info: &wgpu::AdapterInfo) -> Self {
        let f = device.features();
        let l = device.limits();
        Capabilities {
            // wgpu's WebGPU backend does not report subgroups; the browser's device does
            subgroups: f.contains(wgpu::Features::SUBGROUP) || cfg!(target_arch = "wasm32") && browser_subgroups(device),
            subgroup_barrier: f.contains(wgpu::Features::SUBGROUP_BARRIER),
            subgroup_size: None,
            subgroup_min_size: info.subgroup_min_size,
            subgroup_max_size: info.subgroup_max_size,
            timestamps: f.contains(wgpu::Features::TIMESTAMP_QUERY),
            timestamps_inside_passes: f.contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES),
            coherent: f.contains(wgpu::Features::MEMORY_DECORATION_COHERENT),
            spirv_passthrough: f.contains(wgpu::Features::PASSTHROUGH_SHADERS),
            max_storage_buffer_binding_size: l.max_storage_buffer_binding_size,
            max_buffer_size: l.max_buffer_size,
            max_compute_workgroups_per_dimension: l.max_compute_workgroups_per_dimension,
            max_compute_invocations_per_workgroup: l.max_compute_invocations_per_workgroup,
            max_compute_workgroup_storage_size: l.max_compute_workgroup_storage_size,
            max_storage_buffers_per_shader_stage: l.max_storage_buffers_per_shader_stage,
        }
    }
}

#[cfg(target_arch = "wasm32")]
fn browser_subgroups(device: &wgpu::Device) -> bool {
    super::web::has_subgroups(device)
}

#[cfg(not(target_arch = "wasm32"))]
fn browser_subgroups(_: &wgpu::Device) -> bool {
    false
}

/// Runs `shared/subgroup_size.wgsl` and returns the largest `subgroup_size` any invocation saw.
pub(super) async fn measure_subgroup_size(gpu: &Gpu) -> Result<Option<u32>> {
    if !gpu.caps.subgroups {
        return Ok(None);
    }
    let kernel = gpu.kernel_async(registry::shared::subgroup_size::MAIN, &[], &[]).await?;
    let out = gpu.buffer_zeroed::<u32>("subgroup sizes", 256, BufferKind::Storage)?;
    let bind = kernel.bind_at(gpu, &[(registry::shared::subgroup_size::binding::SIZES, &out)])?;
    gpu.run_async(&[Step::dispatch(&kernel, &bind, [1, 1, 1])], false).await?;
    let sizes = gpu.read_async(&out).await?;
    Ok(sizes.into_iter().max().filter(|&s| s > 0))
}
