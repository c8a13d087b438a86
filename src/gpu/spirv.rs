//! SPIR-V handed to the driver as it is (wgpu's shader passthrough), to compare shader
//! compilers on one kernel: naga's own SPIR-V written with chosen options ([`naga_spirv`]), or
//! a module built by another compiler (glslang) and read from a file ([`SpirvModule::from_bytes`]).
//!
//! The driver sees exactly these words: no naga validation, no bounds checks added by wgpu, no
//! override constants (the module must be fully specialized). Only adapters with
//! `PASSTHROUGH_SHADERS` (every Vulkan adapter in wgpu 30) accept it; elsewhere
//! [`Gpu::kernel_from_spirv`] returns [`Error::Unsupported`].

use super::shader::{validate, Kernel, ShaderSource};
use super::Gpu;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

const MAGIC: u32 = 0x0723_0203;
const OP_ENTRY_POINT: u32 = 15;
const OP_EXECUTION_MODE: u32 = 16;
const EXECUTION_MODE_LOCAL_SIZE: u32 = 17;
const EXECUTION_MODEL_GL_COMPUTE: u32 = 5;
const OP_LOOP_MERGE: u32 = 246;
#[cfg(test)]
const OP_VARIABLE: u32 = 59;
#[cfg(test)]
const STORAGE_CLASS_WORKGROUP: u32 = 4;
const LOOP_CONTROL_UNROLL: u32 = 0x1;
const LOOP_CONTROL_DONT_UNROLL: u32 = 0x2;

/// A SPIR-V module as 32-bit words, with the name it is reported under (records keep the
/// label alone).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpirvModule {
    /// Name reported in records and error messages.
    pub label: String,
    /// The module's 32-bit words, magic number first.
    #[serde(skip)]
    pub words: Vec<u32>,
}

/// A compute entry point of a module and its `LocalSize` (None when the size comes from a
/// specialization constant or `LocalSizeId`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpirvEntryPoint {
    /// Entry point name.
    pub name: String,
    /// `LocalSize` (x, y, z), or None when set by `LocalSizeId` or a specialization constant.
    pub workgroup_size: Option<[u32; 3]>,
}

impl SpirvModule {
    /// Reads a binary module (either byte order), as glslang's `-o` writes it.
    pub fn from_bytes(label: impl Into<String>, bytes: &[u8]) -> Result<SpirvModule> {
        let label = label.into();
        if bytes.len() < 20 || !bytes.len().is_multiple_of(4) {
            return Err(Error::invalid(
                "SPIR-V module",
                format!(
                    "{label}: {} bytes is not a SPIR-V binary (a 20-byte header, then 4-byte words); give the .spv file a compiler wrote",
                    bytes.len()
                ),
            ));
        }
        let le: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let words = if le[0] == MAGIC {
            le
        } else if le[0].swap_bytes() == MAGIC {
            le.into_iter().map(u32::swap_bytes).collect()
        } else {
            return Err(Error::invalid(
                "SPIR-V module",
                format!("{label}: no SPIR-V magic number (0x07230203) at the start; is it a text disassembly or GLSL source? Compile it with glslangValidator -V"),
            ));
        };
        let module = SpirvModule { label, words };
        module.entry_points()?;
        Ok(module)
    }

    /// Where each instruction starts (word index past the header), checked to lie in the module.
    fn instructions(&self) -> Result<Vec<usize>> {
        let mut starts = Vec::new();
        let mut at = 5;
        while at < self.words.len() {
            let count = (self.words[at] >> 16) as usize;
            if count == 0 || at + count > self.words.len() {
                return Err(Error::invalid(
                    "SPIR-V module",
                    format!("{}: instruction at word {at} runs past the end of the module", self.label),
                ));
            }
            starts.push(at);
            at += count;
        }
        Ok(starts)
    }

    /// The opcode and operands of the instruction at `at` (a start from [`Self::instructions`]).
    fn instruction(&self, at: usize) -> (u32, &[u32]) {
        let count = (self.words[at] >> 16) as usize;
        (self.words[at] & 0xffff, &self.words[at + 1..at + count])
    }

    /// The module's compute entry points, read from `OpEntryPoint` and `OpExecutionMode LocalSize`.
    pub fn entry_points(&self) -> Result<Vec<SpirvEntryPoint>> {
        let mut ids = Vec::new();
        let mut out: Vec<SpirvEntryPoint> = Vec::new();
        for at in self.instructions()? {
            let (opcode, operands) = self.instruction(at);
            if opcode == OP_ENTRY_POINT && operands.len() >= 3 && operands[0] == EXECUTION_MODEL_GL_COMPUTE {
                ids.push(operands[1]);
                out.push(SpirvEntryPoint { name: literal_string(&operands[2..]), workgroup_size: None });
            } else if opcode == OP_EXECUTION_MODE && operands.len() == 5 && operands[1] == EXECUTION_MODE_LOCAL_SIZE {
                if let Some(i) = ids.iter().position(|&id| id == operands[0]) {
                    out[i].workgroup_size = Some([operands[2], operands[3], operands[4]]);
                }
            }
        }
        Ok(out)
    }

    /// Asks the driver to unroll every loop (the `Unroll` loop control on each `OpLoopMerge`,
    /// what glslang writes for `[[unroll]]`); returns how many loops were marked.
    pub fn hint_unroll(&mut self) -> Result<usize> {
        let mut marked = 0;
        for at in self.instructions()? {
            let (opcode, operands) = self.instruction(at);
            if opcode == OP_LOOP_MERGE && operands.len() >= 3 {
                self.words[at + 3] = (self.words[at + 3] & !LOOP_CONTROL_DONT_UNROLL) | LOOP_CONTROL_UNROLL;
                marked += 1;
            }
        }
        Ok(marked)
    }

    /// The compute entry point `name`, or an error that lists the module's entry points.
    pub fn entry_point(&self, name: &str) -> Result<SpirvEntryPoint> {
        let all = self.entry_points()?;
        let names: Vec<&str> = all.iter().map(|e| e.name.as_str()).collect();
        all.iter().find(|e| e.name == name).cloned().ok_or_else(|| {
            Error::invalid("SPIR-V module", format!("{}: no compute entry point '{name}' (it has: {})", self.label, names.join(", ")))
        })
    }
}

/// A nul-terminated string packed into words, little end first.
fn literal_string(words: &[u32]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// What naga's SPIR-V writer adds around the kernel's own code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NagaSpirvOptions {
    /// Index clamping of arrays and buffers (`BoundsCheckPolicy::Restrict`), as wgpu asks for
    /// by default; off: `Unchecked`.
    pub bounds_checks: bool,
    /// The extra counter naga puts in every loop so the driver may not assume it terminates.
    pub loop_bounding: bool,
    /// Zero `var<workgroup>` memory at the start of the entry point (WGSL's semantics): by the
    /// driver where the device has it enabled, else by stores naga writes, as wgpu does
    /// ([`naga_spirv`]'s `driver_zeroes`).
    pub zero_workgroup_memory: bool,
    /// Integer division and remainder through helpers that replace a zero divisor (WGSL's
    /// semantics); off: plain `OpUDiv` / `OpUMod`.
    pub int_div_checks: bool,
    /// Mark every loop for the driver to unroll ([`SpirvModule::hint_unroll`]); WGSL has no
    /// way to say it, glslang writes it for `[[unroll]]`.
    pub unroll_hints: bool,
}

impl NagaSpirvOptions {
    /// What wgpu's Vulkan backend asks of naga by default.
    pub const CHECKED: NagaSpirvOptions = NagaSpirvOptions {
        bounds_checks: true,
        loop_bounding: true,
        zero_workgroup_memory: true,
        int_div_checks: true,
        unroll_hints: false,
    };
    /// Nothing added: the kernel's own code alone.
    pub const UNCHECKED: NagaSpirvOptions = NagaSpirvOptions {
        bounds_checks: false,
        loop_bounding: false,
        zero_workgroup_memory: false,
        int_div_checks: false,
        unroll_hints: false,
    };
    /// [`NagaSpirvOptions::UNCHECKED`] with every loop marked for unrolling.
    pub const UNROLL: NagaSpirvOptions = NagaSpirvOptions { unroll_hints: true, ..NagaSpirvOptions::UNCHECKED };
}

/// naga's SPIR-V (version 1.3) for `entry` of preprocessed WGSL with its override constants
/// applied, written with `options`. `driver_zeroes`: the device the module is for zeroes
/// workgroup memory itself ([`Gpu::zeroes_workgroup_memory`]), so naga marks the variables for
/// it, as wgpu does there, instead of writing the stores (which some drivers, lavapipe's LLVM
/// among them, take a minute to compile for large tiles).
pub fn naga_spirv(
    source: &ShaderSource,
    label: &str,
    entry: &str,
    constants: &[(&str, f64)],
    options: NagaSpirvOptions,
    driver_zeroes: bool,
) -> Result<SpirvModule> {
    let (module, info) = validate(source)?;
    naga_spirv_validated(&module, &info, label, entry, constants, options, driver_zeroes)
}

/// [`naga_spirv`] of a module naga has already validated.
pub(crate) fn naga_spirv_validated(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    label: &str,
    entry: &str,
    constants: &[(&str, f64)],
    options: NagaSpirvOptions,
    driver_zeroes: bool,
) -> Result<SpirvModule> {
    use naga::back::spv;
    let mut values = naga::back::PipelineConstants::default();
    for (name, value) in constants {
        values.insert(name.to_string(), *value);
    }
    let (module, info) =
        naga::back::pipeline_constants::process_overrides(module, info, Some((naga::ShaderStage::Compute, entry)), &values)
            .map_err(|e| Error::invalid("override constants", format!("{label}: {e}")))?;
    let policy = if options.bounds_checks { naga::proc::BoundsCheckPolicy::Restrict } else { naga::proc::BoundsCheckPolicy::Unchecked };
    let writer_options = spv::Options {
        lang_version: (1, 3),
        flags: spv::WriterFlags::empty(),
        bounds_check_policies: naga::proc::BoundsCheckPolicies {
            index: policy,
            buffer: policy,
            image_load: policy,
            binding_array: naga::proc::BoundsCheckPolicy::Unchecked,
        },
        zero_initialize_workgroup_memory: match (options.zero_workgroup_memory, driver_zeroes) {
            (false, _) => spv::ZeroInitializeWorkgroupMemoryMode::None,
            (true, true) => spv::ZeroInitializeWorkgroupMemoryMode::Native,
            (true, false) => spv::ZeroInitializeWorkgroupMemoryMode::Polyfill,
        },
        force_loop_bounding: options.loop_bounding,
        emit_int_div_checks: options.int_div_checks,
        ..Default::default()
    };
    let pipeline = spv::PipelineOptions { shader_stage: naga::ShaderStage::Compute, entry_point: entry.to_string() };
    let words = spv::write_vec(&module, &info, &writer_options, Some(&pipeline))
        .map_err(|e| Error::invalid("SPIR-V output", format!("{label}: naga could not write SPIR-V: {e}")))?;
    let mut module = SpirvModule { label: label.to_string(), words };
    if options.unroll_hints {
        module.hint_unroll()?;
    }
    Ok(module)
}

impl Gpu {
    /// A compute kernel from SPIR-V passed to the driver as it is. Never waits: native
    /// backends report a driver error at once; in the browser it surfaces where the kernel is
    /// used, and [`Gpu::kernel_from_spirv_async`] reports it here.
    pub fn kernel_from_spirv(&self, module: &SpirvModule, entry: &str, bindings: &[wgpu::BufferBindingType]) -> Result<Kernel> {
        let (what, create) = self.spirv_kernel(module, entry, bindings)?;
        self.checked_now(&what, create)
    }

    /// A compute kernel from SPIR-V passed to the driver as it is. `bindings[i]` is the type of
    /// binding i of descriptor set 0, all of which the kernel is given by [`Kernel::bind`].
    /// Errors when the adapter lacks `PASSTHROUGH_SHADERS`, when the module has no compute
    /// entry point `entry` with a literal workgroup size, or when the driver rejects it.
    pub async fn kernel_from_spirv_async(&self, module: &SpirvModule, entry: &str, bindings: &[wgpu::BufferBindingType]) -> Result<Kernel> {
        let (what, create) = self.spirv_kernel(module, entry, bindings)?;
        self.checked(&what, create).await
    }

    /// What creating the kernel of [`Gpu::kernel_from_spirv_async`] is called in errors, and
    /// the creation itself, once the adapter and the module are found fit for it.
    fn spirv_kernel<'a>(
        &'a self,
        module: &'a SpirvModule,
        entry: &'a str,
        bindings: &[wgpu::BufferBindingType],
    ) -> Result<(String, impl FnOnce() -> Kernel + 'a)> {
        if !self.caps.spirv_passthrough {
            return Err(Error::Unsupported {
                what: "SPIR-V passthrough (PASSTHROUGH_SHADERS)".into(),
                adapter: self.adapter_name(),
                hint: "use a Vulkan adapter (`backend=vulkan`), or the WGSL path".into(),
            });
        }
        let ep = module.entry_point(entry)?;
        let workgroup_size = ep.workgroup_size.ok_or_else(|| {
            Error::invalid(
                "SPIR-V module",
                format!("{}: entry point '{entry}' has no literal LocalSize (specialization constants are not applied to passthrough modules); build it with fixed sizes", module.label),
            )
        })?;
        let name = format!("{}:{entry}", module.label);
        let layout_entries: Vec<wgpu::BindGroupLayoutEntry> = bindings
            .iter()
            .enumerate()
            .map(|(i, &ty)| wgpu::BindGroupLayoutEntry {
                binding: i as u32,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer { ty, has_dynamic_offset: false, min_binding_size: None },
                count: None,
            })
            .collect();
        let what = format!("creating the pipeline {name} from SPIR-V on {}", self.adapter_name());
        let groups = (0..bindings.len() as u32).collect();
        let create = move || {
            let layout =
                self.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(&name), entries: &layout_entries });
            let pipeline_layout = self.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(&name),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            let entry_points = [wgpu::PassthroughShaderEntryPoint {
                name: entry.into(),
                workgroup_size: (workgroup_size[0], workgroup_size[1], workgroup_size[2]),
            }];
            // SAFETY: the driver gets these words unchecked; they come from naga's writer or
            // from a compiler the caller named, the kernel runs only on buffers of the
            // declared binding types, and its results are checked against a CPU reference.
            let shader = unsafe {
                self.device.create_shader_module_passthrough(wgpu::ShaderModuleDescriptorPassthrough {
                    label: Some(&name),
                    entry_points: entry_points.as_slice().into(),
                    spirv: Some(module.words.as_slice().into()),
                    ..Default::default()
                })
            };
            let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&name),
                layout: Some(&pipeline_layout),
                module: &shader,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            });
            Kernel::with_group0(name, pipeline, layout, groups, workgroup_size)
        };
        Ok((what, create))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::shader::preprocess;

    #[test]
    fn naga_output_names_its_entry_point_and_workgroup_size() {
        let source = preprocess("matmul/regtile.wgsl", &[]).unwrap();
        let constants = [("WG_X", 16.0), ("WG_Y", 8.0), ("BK", 16.0)];
        let checked = naga_spirv(&source, "regtile", "main", &constants, NagaSpirvOptions::CHECKED, false).unwrap();
        let unchecked = naga_spirv(&source, "regtile", "main", &constants, NagaSpirvOptions::UNCHECKED, false).unwrap();
        assert_eq!(checked.entry_point("main").unwrap().workgroup_size, Some([16, 8, 1]));
        // the clamps and the loop counters are instructions the unchecked module does not have
        assert!(checked.words.len() > unchecked.words.len() + 50, "{} vs {} words", checked.words.len(), unchecked.words.len());
        let bytes: Vec<u8> = checked.words.iter().flat_map(|w| w.to_be_bytes()).collect();
        assert_eq!(SpirvModule::from_bytes("swapped", &bytes).unwrap().words, checked.words);
        // the hints change one word per loop (its loop control), nothing else
        let mut hinted = unchecked.clone();
        let marked = hinted.hint_unroll().unwrap();
        assert!(marked >= 2, "regtile has its K-step and inner loops, {marked} marked");
        let changed: Vec<(u32, u32)> = unchecked.words.iter().zip(&hinted.words).filter(|(a, b)| a != b).map(|(a, b)| (*a, *b)).collect();
        assert_eq!(changed.len(), marked);
        assert!(changed.iter().all(|&(before, after)| after == before | LOOP_CONTROL_UNROLL), "{changed:?}");
        let unrolled = naga_spirv(&source, "regtile", "main", &constants, NagaSpirvOptions::UNROLL, false).unwrap();
        assert_eq!(unrolled.words, hinted.words);
        let e = checked.entry_point("other").unwrap_err().to_string();
        assert!(e.contains("no compute entry point 'other'") && e.contains("main"), "{e}");
    }

    /// Where the driver zeroes workgroup memory, naga gives each workgroup variable a null
    /// initializer for it, as wgpu does, instead of its own stores and barrier.
    #[test]
    fn workgroup_memory_is_left_to_a_driver_that_zeroes_it() {
        let source = preprocess("matmul/regtile.wgsl", &[]).unwrap();
        let constants = [("WG_X", 16.0), ("WG_Y", 8.0), ("BK", 16.0)];
        let build = |options, driver_zeroes| naga_spirv(&source, "regtile", "main", &constants, options, driver_zeroes).unwrap();
        // OpVariable operands: type, id, storage class, then the initializer if there is one
        let initialised = |m: &SpirvModule| {
            let instructions = m.instructions().unwrap().into_iter().map(|at| m.instruction(at));
            instructions
                .filter(|(op, operands)| *op == OP_VARIABLE && operands.len() == 4 && operands[2] == STORAGE_CLASS_WORKGROUP)
                .count()
        };
        let (polyfill, native) = (build(NagaSpirvOptions::CHECKED, false), build(NagaSpirvOptions::CHECKED, true));
        assert_eq!(initialised(&polyfill), 0);
        assert_eq!(initialised(&native), 2, "regtile's A and B tiles");
        assert!(native.words.len() < polyfill.words.len(), "{} vs {} words", native.words.len(), polyfill.words.len());
        // no zeroing asked for: neither way
        assert_eq!(initialised(&build(NagaSpirvOptions::UNCHECKED, true)), 0);
    }

    #[test]
    fn text_and_truncated_modules_are_refused() {
        let e = SpirvModule::from_bytes("k.comp", b"#version 450\nvoid main() {}\n\0\0\0\0").unwrap_err().to_string();
        assert!(e.contains("no SPIR-V magic number"), "{e}");
        let e = SpirvModule::from_bytes("k.spv", &[3, 2, 35]).unwrap_err().to_string();
        assert!(e.contains("is not a SPIR-V binary"), "{e}");
        // a header and one instruction claiming 9 words
        let words = [MAGIC, 0x0001_0300, 0, 10, 0, (9 << 16) | OP_ENTRY_POINT, 5];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let e = SpirvModule::from_bytes("cut.spv", &bytes).unwrap_err().to_string();
        assert!(e.contains("runs past the end"), "{e}");
    }
}
