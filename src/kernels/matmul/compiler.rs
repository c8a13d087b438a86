//! Which compiler builds a matmul kernel: wgpu from WGSL, or SPIR-V passed through to the driver.

use super::KernelSpec;
use crate::error::{Error, Result};
use crate::gpu::shader::preprocess;
use crate::gpu::spirv::{naga_spirv, NagaSpirvOptions, SpirvModule};
use crate::gpu::{Gpu, Kernel};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What turns a kernel into the code the driver compiles. The driver's own compiler does the
/// rest in every case; comparing these separates naga's SPIR-V from the driver
/// (`benches/results/sgemm-spirv-h100.md`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Compiler {
    /// WGSL through wgpu (naga inside wgpu, with wgpu's checks): the default.
    #[default]
    Wgpu,
    /// naga's SPIR-V written by simtlab with these options, passed through unchanged.
    Naga(NagaSpirvOptions),
    /// A module built by another compiler (glslang from GLSL, say), passed through unchanged.
    /// It must implement the kernel it stands for: the same bindings (set 0: A, B read-only
    /// storage; C read-write storage; the M, N, K uniform), workgroup size and output tile.
    Spirv(SpirvModule),
}

impl Compiler {
    /// `wgpu`, `naga`, `naga-unchecked`, `naga-unroll` (other naga options spelled out), or the
    /// external module's label.
    pub fn name(&self) -> String {
        match self {
            Compiler::Wgpu => "wgpu".into(),
            Compiler::Naga(o) if *o == NagaSpirvOptions::CHECKED => "naga".into(),
            Compiler::Naga(o) if *o == NagaSpirvOptions::UNCHECKED => "naga-unchecked".into(),
            Compiler::Naga(o) if *o == NagaSpirvOptions::UNROLL => "naga-unroll".into(),
            Compiler::Naga(o) => format!(
                "naga(bounds {}, loop bounding {}, zeroed workgroup memory {}, division checks {}, unroll hints {})",
                o.bounds_checks, o.loop_bounding, o.zero_workgroup_memory, o.int_div_checks, o.unroll_hints
            ),
            Compiler::Spirv(m) => m.label.clone(),
        }
    }

    /// `wgpu`, `naga` (naga's SPIR-V with wgpu's checks), `naga-unchecked` (without) or
    /// `naga-unroll` (without, every loop marked for the driver to unroll); a comma list is
    /// accepted. External modules come from files ([`SpirvModule::from_bytes`]).
    pub fn parse_list(text: &str) -> Result<Vec<Compiler>> {
        let mut out = Vec::new();
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            out.push(match word {
                "wgpu" => Compiler::Wgpu,
                "naga" => Compiler::Naga(NagaSpirvOptions::CHECKED),
                "naga-unchecked" => Compiler::Naga(NagaSpirvOptions::UNCHECKED),
                "naga-unroll" => Compiler::Naga(NagaSpirvOptions::UNROLL),
                _ => {
                    return Err(Error::invalid(
                        "compilers",
                        format!(
                            "'{word}' (use wgpu, naga, naga-unchecked or naga-unroll; a module from another compiler is given as `spirv`, a SPIR-V file)"
                        ),
                    ))
                }
            });
        }
        Ok(out)
    }

    /// The SPIR-V this compiler passes through for `spec` on `gpu` (None for wgpu, which
    /// compiles inside the device).
    pub fn module(&self, gpu: &Gpu, spec: &KernelSpec) -> Result<Option<SpirvModule>> {
        Ok(match self {
            Compiler::Wgpu => None,
            Compiler::Naga(options) => Some(naga_spirv(
                &preprocess(spec.entry.file.path, &spec.defines)?,
                spec.entry.file.path,
                spec.entry.name,
                &spec.constants,
                *options,
                gpu.zeroes_workgroup_memory(),
            )?),
            Compiler::Spirv(module) => Some(module.clone()),
        })
    }

    /// The kernel of `spec` built this way (passthrough paths need `PASSTHROUGH_SHADERS`).
    pub fn kernel(&self, gpu: &Gpu, spec: &KernelSpec) -> Result<Arc<Kernel>> {
        let Some(module) = self.module(gpu, spec)? else {
            return gpu.kernel_with_constants(spec.entry, &spec.defines, &spec.constants);
        };
        let (read, write, uniform) = (
            wgpu::BufferBindingType::Storage { read_only: true },
            wgpu::BufferBindingType::Storage { read_only: false },
            wgpu::BufferBindingType::Uniform,
        );
        let kernel = gpu.kernel_from_spirv(&module, "main", &[read, read, write, uniform])?;
        let expected = [spec.threads.0, spec.threads.1, 1];
        if kernel.workgroup_size != expected {
            return Err(Error::invalid(
                "SPIR-V module",
                format!(
                    "{}: workgroup size {:?}, but the kernel it stands for runs {:?} invocations per workgroup (build it for the same tile sizes)",
                    module.label, kernel.workgroup_size, expected
                ),
            ));
        }
        Ok(Arc::new(kernel))
    }
}
