//! What the driver's compiler says about a compute kernel: register count, instruction count,
//! spills and the like, read through `VK_KHR_pipeline_executable_properties`.
//!
//! wgpu neither enables that extension nor asks for statistics when it builds a pipeline, so
//! simtlab opens a second, bare Vulkan device on the same physical GPU (through wgpu's Vulkan
//! interop: the same instance and physical device), builds the kernel there from naga's
//! SPIR-V with `CAPTURE_STATISTICS`, reads the statistics and destroys everything again. The
//! caller's device is untouched. Names and meanings of statistics are the driver's own
//! (NVIDIA, RADV, ANV and lavapipe each report different ones); [`DriverStatistics::registers`]
//! picks the per-thread register count where the driver reports one.

use super::shader::ShaderSource;
use super::spirv::{naga_spirv_validated, NagaSpirvOptions};
use super::Gpu;
use crate::error::Result;
use serde::{Deserialize, Serialize};

/// One statistic of a compiled pipeline executable, as the driver names and describes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DriverStatistic {
    /// The driver's short name (e.g. "Register Count", "VGPRs", "Instructions").
    pub name: String,
    /// The driver's description of it.
    pub description: String,
    /// Its value (booleans as 0 or 1).
    pub value: f64,
}

/// The statistics of one executable (one compiled shader stage) of a pipeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PipelineExecutable {
    /// The driver's name for the executable.
    pub name: String,
    /// The driver's description of it.
    pub description: String,
    /// The subgroup size the driver compiled it for (0 when it does not say).
    pub subgroup_size: u32,
    /// Every statistic the driver reports for it.
    pub statistics: Vec<DriverStatistic>,
}

/// What the driver reported for one compute kernel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DriverStatistics {
    /// The adapter and driver that compiled it.
    pub driver: String,
    /// One entry per executable; a compute pipeline normally has one.
    pub executables: Vec<PipelineExecutable>,
}

impl DriverStatistics {
    /// Registers per thread, where the driver reports them: a statistic named like "Register
    /// Count" or "Registers" (NVIDIA), else "VGPRs" (AMD, per lane), else "GPRs"; spill and
    /// scalar-register counts are skipped. The largest over the executables.
    pub fn registers(&self) -> Option<u32> {
        let named = |test: &dyn Fn(&str) -> bool| {
            self.executables
                .iter()
                .flat_map(|e| &e.statistics)
                .filter(|s| {
                    let n = s.name.to_ascii_lowercase();
                    !n.contains("spill") && !n.contains("sgpr") && !n.contains("uniform") && test(&n)
                })
                .map(|s| s.value as u32)
                .max()
        };
        named(&|n| n.contains("register"))
            .or_else(|| named(&|n| n.contains("vgpr")))
            .or_else(|| named(&|n| n.contains("gpr")))
            .filter(|&r| r > 0)
    }

    /// The first statistic whose name contains `name` (case-insensitive).
    pub fn find(&self, name: &str) -> Option<&DriverStatistic> {
        let name = name.to_ascii_lowercase();
        self.executables.iter().flat_map(|e| &e.statistics).find(|s| s.name.to_ascii_lowercase().contains(&name))
    }
}

impl Gpu {
    /// The driver's compile statistics for `entry` of `source` (override `constants`
    /// applied), compiled from naga's SPIR-V as wgpu would give it (bounds checks included).
    /// [`crate::Error::Unsupported`] when the adapter is not a Vulkan one or its driver lacks
    /// `VK_KHR_pipeline_executable_properties` (say so, and fall back to an assumed count).
    pub fn driver_statistics(&self, source: &ShaderSource, entry: &str, constants: &[(&str, f64)]) -> Result<DriverStatistics> {
        let (module, info) = super::shader::validate(source)?;
        self.driver_statistics_validated(&module, &info, entry, constants)
    }

    /// [`Gpu::driver_statistics`] of a module naga has already validated.
    pub(crate) fn driver_statistics_validated(
        &self,
        module: &naga::Module,
        info: &naga::valid::ModuleInfo,
        entry: &str,
        constants: &[(&str, f64)],
    ) -> Result<DriverStatistics> {
        let driver_zeroes = self.zeroes_workgroup_memory();
        let spirv = naga_spirv_validated(module, info, entry, entry, constants, NagaSpirvOptions::CHECKED, driver_zeroes)?;
        let layout = descriptor_layout(module);
        let driver = format!("{} ({})", self.info.name, self.info.driver_info);
        let executables = vulkan::statistics(self, &spirv.words, entry, &layout, driver_zeroes)?;
        Ok(DriverStatistics { driver, executables })
    }

    /// Whether the device zeroes `var<workgroup>` memory itself: wgpu enables
    /// `shaderZeroInitializeWorkgroupMemory` where Vulkan has it (1.3, or
    /// `VK_KHR_zero_initialize_workgroup_memory`) and then leaves WGSL's zeroing to the driver
    /// instead of having naga write it. False on other backends.
    pub fn zeroes_workgroup_memory(&self) -> bool {
        vulkan::zeroes_workgroup_memory(self)
    }
}

/// What each (group, binding) of the module holds, as Vulkan descriptor kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DescriptorKind {
    StorageBuffer,
    UniformBuffer,
    Sampler,
    SampledImage,
    StorageImage,
}

fn descriptor_layout(module: &naga::Module) -> Vec<(u32, u32, DescriptorKind)> {
    let mut out: Vec<(u32, u32, DescriptorKind)> = module
        .global_variables
        .iter()
        .filter_map(|(_, var)| {
            let binding = var.binding.as_ref()?;
            let kind = match var.space {
                naga::AddressSpace::Storage { .. } => DescriptorKind::StorageBuffer,
                naga::AddressSpace::Uniform => DescriptorKind::UniformBuffer,
                naga::AddressSpace::Handle => match module.types[var.ty].inner {
                    naga::TypeInner::Sampler { .. } => DescriptorKind::Sampler,
                    naga::TypeInner::Image { class: naga::ImageClass::Storage { .. }, .. } => DescriptorKind::StorageImage,
                    _ => DescriptorKind::SampledImage,
                },
                _ => return None,
            };
            Some((binding.group, binding.binding, kind))
        })
        .collect();
    out.sort_by_key(|&(g, b, _)| (g, b));
    out
}

#[cfg(any(target_os = "linux", target_os = "windows", target_os = "android"))]
mod vulkan {
    use super::{DescriptorKind, DriverStatistic, Gpu, PipelineExecutable};
    use crate::error::{Error, Result};
    use ash::vk;
    use std::ffi::CString;

    fn not_exposed(gpu: &Gpu, why: &str) -> Error {
        Error::Unsupported {
            what: "the driver's pipeline statistics (register count)".into(),
            adapter: crate::gpu::adapter_label(&gpu.info),
            hint: format!("{why}; give the register count yourself (the occupancy model's registers per thread)"),
        }
    }

    fn vk_error(gpu: &Gpu, what: &str, e: vk::Result) -> Error {
        not_exposed(gpu, &format!("{what} failed ({e})"))
    }

    /// Owns a bare VkDevice and the objects made on it; destroys them in reverse order.
    struct Bare {
        device: ash::Device,
        module: vk::ShaderModule,
        set_layouts: Vec<vk::DescriptorSetLayout>,
        layout: vk::PipelineLayout,
        pipeline: vk::Pipeline,
    }

    impl Drop for Bare {
        fn drop(&mut self) {
            // SAFETY: every handle was created on `device`, none is in use (nothing was
            // submitted), and null handles are valid arguments to the destroy calls.
            unsafe {
                self.device.destroy_pipeline(self.pipeline, None);
                self.device.destroy_pipeline_layout(self.layout, None);
                for &l in &self.set_layouts {
                    self.device.destroy_descriptor_set_layout(l, None);
                }
                self.device.destroy_shader_module(self.module, None);
                self.device.destroy_device(None);
            }
        }
    }

    /// The device's Vulkan version, as wgpu-hal reads it.
    fn api_version(instance: &ash::Instance, physical: vk::PhysicalDevice) -> u32 {
        // SAFETY: `physical` belongs to `instance`, which outlives the call.
        unsafe { instance.get_physical_device_properties(physical) }.api_version
    }

    pub(super) fn zeroes_workgroup_memory(gpu: &Gpu) -> bool {
        if gpu.info.backend != wgpu::Backend::Vulkan {
            return false;
        }
        // SAFETY: the hal device is only read (its instance, physical device and extensions).
        let Some(hal) = (unsafe { gpu.device.as_hal::<wgpu::hal::api::Vulkan>() }) else { return false };
        let (instance, physical) = (hal.shared_instance().raw_instance(), hal.raw_physical_device());
        let extension = hal.enabled_device_extensions().contains(&ash::khr::zero_initialize_workgroup_memory::NAME);
        if api_version(instance, physical) < vk::API_VERSION_1_3 && !extension {
            return false;
        }
        let mut zeroing = vk::PhysicalDeviceZeroInitializeWorkgroupMemoryFeatures::default();
        {
            let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut zeroing);
            // SAFETY: as above; the chained struct is known to a 1.3 device or one with the extension.
            unsafe { instance.get_physical_device_features2(physical, &mut features) };
        }
        zeroing.shader_zero_initialize_workgroup_memory == vk::TRUE
    }

    /// Compiles `spirv` on a bare device that captures the driver's statistics, and reads them.
    /// `driver_zeroes`: the module leaves workgroup zeroing to the driver, as on wgpu's device,
    /// so the bare device enables it too.
    pub(super) fn statistics(
        gpu: &Gpu,
        spirv: &[u32],
        entry: &str,
        bindings: &[(u32, u32, DescriptorKind)],
        driver_zeroes: bool,
    ) -> Result<Vec<PipelineExecutable>> {
        if gpu.info.backend != wgpu::Backend::Vulkan {
            return Err(not_exposed(gpu, &format!("the adapter runs on {:?}, and only Vulkan has the extension", gpu.info.backend)));
        }
        // SAFETY: the hal device is only read (its instance and physical device handles).
        let hal = unsafe { gpu.device.as_hal::<wgpu::hal::api::Vulkan>() }
            .ok_or_else(|| not_exposed(gpu, "wgpu gave no Vulkan handle for the device"))?;
        let instance = hal.shared_instance().raw_instance();
        let physical = hal.raw_physical_device();
        let name = ash::khr::pipeline_executable_properties::NAME;
        // SAFETY: `physical` belongs to `instance`, both live as long as `hal`.
        let extensions = unsafe { instance.enumerate_device_extension_properties(physical) }
            .map_err(|e| vk_error(gpu, "listing the device extensions", e))?;
        if !extensions.iter().any(|e| e.extension_name_as_c_str() == Ok(name)) {
            return Err(not_exposed(gpu, "the driver does not expose VK_KHR_pipeline_executable_properties"));
        }
        // SAFETY: as above.
        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let family = families
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
            .ok_or_else(|| not_exposed(gpu, "the device has no compute queue family"))? as u32;
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
        let mut feature = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default().pipeline_executable_info(true);
        let mut zeroing = vk::PhysicalDeviceZeroInitializeWorkgroupMemoryFeatures::default().shader_zero_initialize_workgroup_memory(true);
        let mut extension_names = vec![name.as_ptr()];
        if driver_zeroes && api_version(instance, physical) < vk::API_VERSION_1_3 {
            extension_names.push(ash::khr::zero_initialize_workgroup_memory::NAME.as_ptr());
        }
        let mut info =
            vk::DeviceCreateInfo::default().queue_create_infos(&queues).enabled_extension_names(&extension_names).push_next(&mut feature);
        if driver_zeroes {
            info = info.push_next(&mut zeroing);
        }
        // SAFETY: valid create info; the device is destroyed by `Bare::drop`.
        let device = unsafe { instance.create_device(physical, &info, None) }.map_err(|e| vk_error(gpu, "opening a device", e))?;
        let mut bare = Bare {
            device,
            module: vk::ShaderModule::null(),
            set_layouts: Vec::new(),
            layout: vk::PipelineLayout::null(),
            pipeline: vk::Pipeline::null(),
        };
        let d = &bare.device;
        // SAFETY: naga wrote `spirv` and validated the module it came from.
        bare.module = unsafe { d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(spirv), None) }
            .map_err(|e| vk_error(gpu, "creating the shader module", e))?;
        let groups = bindings.iter().map(|&(g, _, _)| g + 1).max().unwrap_or(0);
        for group in 0..groups {
            let entries: Vec<vk::DescriptorSetLayoutBinding> = bindings
                .iter()
                .filter(|&&(g, _, _)| g == group)
                .map(|&(_, b, kind)| {
                    vk::DescriptorSetLayoutBinding::default()
                        .binding(b)
                        .descriptor_count(1)
                        .stage_flags(vk::ShaderStageFlags::COMPUTE)
                        .descriptor_type(match kind {
                            DescriptorKind::StorageBuffer => vk::DescriptorType::STORAGE_BUFFER,
                            DescriptorKind::UniformBuffer => vk::DescriptorType::UNIFORM_BUFFER,
                            DescriptorKind::Sampler => vk::DescriptorType::SAMPLER,
                            DescriptorKind::SampledImage => vk::DescriptorType::SAMPLED_IMAGE,
                            DescriptorKind::StorageImage => vk::DescriptorType::STORAGE_IMAGE,
                        })
                })
                .collect();
            // SAFETY: valid create info on a live device.
            let layout = unsafe { d.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&entries), None) }
                .map_err(|e| vk_error(gpu, "creating a descriptor set layout", e))?;
            bare.set_layouts.push(layout);
        }
        // SAFETY: the set layouts live until `bare` drops.
        bare.layout = unsafe { d.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().set_layouts(&bare.set_layouts), None) }
            .map_err(|e| vk_error(gpu, "creating the pipeline layout", e))?;
        let entry_name = CString::new(entry).map_err(|_| Error::invalid("entry point", format!("'{entry}' contains a NUL byte")))?;
        let stage = vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(bare.module).name(&entry_name);
        let create = vk::ComputePipelineCreateInfo::default()
            .flags(vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR)
            .stage(stage)
            .layout(bare.layout);
        // SAFETY: module and layout are live; the pipeline is destroyed by `bare`.
        bare.pipeline = unsafe { d.create_compute_pipelines(vk::PipelineCache::null(), &[create], None) }
            .map_err(|(_, e)| vk_error(gpu, "compiling the pipeline", e))?[0];
        let loader = ash::khr::pipeline_executable_properties::Device::new(instance, d);
        // SAFETY: the pipeline was created with CAPTURE_STATISTICS on a device with the extension.
        let properties = unsafe { loader.get_pipeline_executable_properties(&vk::PipelineInfoKHR::default().pipeline(bare.pipeline)) }
            .map_err(|e| vk_error(gpu, "reading the pipeline's executables", e))?;
        let text = |c: std::result::Result<&std::ffi::CStr, std::ffi::FromBytesUntilNulError>| {
            c.map(|s| s.to_string_lossy().trim().to_string()).unwrap_or_default()
        };
        let mut executables = Vec::new();
        for (index, p) in properties.iter().enumerate() {
            let info = vk::PipelineExecutableInfoKHR::default().pipeline(bare.pipeline).executable_index(index as u32);
            // SAFETY: `index` is one of the executables the driver listed.
            let stats = unsafe { loader.get_pipeline_executable_statistics(&info) }
                .map_err(|e| vk_error(gpu, "reading the pipeline's statistics", e))?;
            let statistics = stats
                .iter()
                .map(|s| {
                    // SAFETY: `format` says which member of the union the driver wrote.
                    let value = unsafe {
                        match s.format {
                            vk::PipelineExecutableStatisticFormatKHR::BOOL32 => s.value.b32 as f64,
                            vk::PipelineExecutableStatisticFormatKHR::INT64 => s.value.i64 as f64,
                            vk::PipelineExecutableStatisticFormatKHR::UINT64 => s.value.u64 as f64,
                            _ => s.value.f64,
                        }
                    };
                    DriverStatistic { name: text(s.name_as_c_str()), description: text(s.description_as_c_str()), value }
                })
                .collect();
            executables.push(PipelineExecutable {
                name: text(p.name_as_c_str()),
                description: text(p.description_as_c_str()),
                subgroup_size: p.subgroup_size,
                statistics,
            });
        }
        drop(bare);
        Ok(executables)
    }
}

#[cfg(not(any(target_os = "linux", target_os = "windows", target_os = "android")))]
mod vulkan {
    use super::{DescriptorKind, Gpu, PipelineExecutable};
    use crate::error::{Error, Result};

    pub(super) fn zeroes_workgroup_memory(_: &Gpu) -> bool {
        false
    }

    pub(super) fn statistics(gpu: &Gpu, _: &[u32], _: &str, _: &[(u32, u32, DescriptorKind)], _: bool) -> Result<Vec<PipelineExecutable>> {
        Err(Error::Unsupported {
            what: "the driver's pipeline statistics (register count)".into(),
            adapter: crate::gpu::adapter_label(&gpu.info),
            hint: "simtlab reads them through Vulkan, which this build has not; give the register count yourself (the occupancy model's registers per thread)".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(names: &[(&str, f64)]) -> DriverStatistics {
        let statistics = names.iter().map(|&(n, v)| DriverStatistic { name: n.into(), description: String::new(), value: v }).collect();
        DriverStatistics {
            driver: "test".into(),
            executables: vec![PipelineExecutable { name: "CS".into(), description: String::new(), subgroup_size: 32, statistics }],
        }
    }

    #[test]
    fn the_register_count_is_found_under_each_vendors_name() {
        // as NVIDIA's 580 driver reports a compute pipeline
        let nvidia = stats(&[("Register Count", 16.0), ("Binary Size", 1024.0), ("Stack Size", 0.0), ("Shared Memory Size", 0.0)]);
        assert_eq!(nvidia.registers(), Some(16));
        // RADV: per-lane VGPRs, not SGPRs or spills
        let radv = stats(&[("SGPRs", 96.0), ("VGPRs", 40.0), ("Spilled SGPRs", 0.0), ("Spilled VGPRs", 0.0), ("Code size", 900.0)]);
        assert_eq!(radv.registers(), Some(40));
        // a driver without a register statistic says nothing rather than something wrong
        let anv = stats(&[("Instruction Count", 120.0), ("SEND Count", 4.0), ("Max dispatch width", 32.0)]);
        assert_eq!(anv.registers(), None);
        assert_eq!(anv.find("send").map(|s| s.value), Some(4.0));
    }
}
