//! Ryoo et al., PPoPP'08, section 4: the matrix-multiplication optimization ladder, C = A·B
//! (f32, row-major, any M, N, K), plus a modern register-tiled kernel.
//!
//! | variant | kernel |
//! | --- | --- |
//! | `naive` | Figure 3(a): one invocation per element of C, A and B from global memory |
//! | `tiled4` .. `tiled16` | Figure 3(b): T×T workgroups stage T×T tiles of A and B in workgroup memory (Figure 4's tile sizes) |
//! | `unrolled` | Figure 3(c): tiled16 with the inner loop fully unrolled |
//! | `prefetch` | section 4.4: unrolled + the next tiles prefetched into registers |
//! | `regtile` | TM×TN outputs per invocation, BM×BN workgroup tiles, vec4 loads, double-buffered workgroup memory ([`RegtileConfig`]) |
//!
//! Every variant reports GFLOPS, threads per workgroup and workgroup memory per thread (read
//! from the naga IR of the module with its overrides applied, see [`resources`]).
//!
//! Measured on an NVIDIA H100 80GB HBM3 through Vulkan at 4096³ (debug host build; the GPU
//! time is device timestamps): naive 1.57 TFLOPS, tiled4 0.85, tiled8 2.37, tiled12 2.24,
//! tiled16 2.67, unrolled 6.27, prefetch 6.46, regtile 32.4 (default config); cuBLAS SGEMM
//! (torch.matmul, TF32 off) on the same machine: 50.8 TFLOPS, so regtile is at 64 %. The same
//! kernel ported line by line to CUDA (`benches/baselines/regtile_port.cu`) runs at 33.9 or
//! 38.3 (0.75 of cuBLAS) depending on a launch-bounds hint to nvcc.
//!
//! Each kernel can be built by another [`Compiler`]: naga's SPIR-V with or without wgpu's
//! checks, with loops marked for unrolling, or a module from glslang, passed to the driver
//! unchanged. `regtile`'s loop form ([`RegtileConfig::loops`]) through `naga-unroll` runs at 39.6
//! TFLOP/s on that H100, 0.78 of cuBLAS: the driver builds its best code when it unrolls hinted
//! loops itself (benches/results/sgemm-spirv-h100.md).

mod compiler;
pub mod cpu;

pub use compiler::Compiler;

#[cfg(not(target_arch = "wasm32"))]
use crate::divergence::Divergence;
use crate::error::{Error, Result};
use crate::gpu::shader::{preprocess, validate};
use crate::gpu::shader::{registry, Entry};
use crate::gpu::PreparedRun;
use crate::gpu::{Bind, BufferKind, Gpu, GpuBuffer, Kernel, Step};
use crate::harness::footprint::{bytes, Footprint};
#[cfg(not(target_arch = "wasm32"))]
use crate::harness::{self, Check, Environment, Protocol, Record, Throughput};
use crate::rng::Rng;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The rungs of the ladder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// Figure 3(a): one invocation per element of C, A and B read from global memory.
    Naive,
    /// Figure 3(b) with 4×4 tiles of A and B in workgroup memory.
    Tiled4,
    /// Figure 3(b) with 8×8 tiles.
    Tiled8,
    /// Figure 3(b) with 12×12 tiles.
    Tiled12,
    /// Figure 3(b) with 16×16 tiles.
    Tiled16,
    /// Figure 3(c): `tiled16` with the inner loop over the tile fully unrolled.
    Unrolled,
    /// Section 4.4: `unrolled` with the next tiles prefetched into registers.
    Prefetch,
    /// Register tiling beyond the paper: TM×TN outputs per invocation, sized by [`RegtileConfig`].
    Regtile,
}

impl Variant {
    /// Every rung, in ladder order.
    pub const ALL: [Variant; 8] = [
        Variant::Naive,
        Variant::Tiled4,
        Variant::Tiled8,
        Variant::Tiled12,
        Variant::Tiled16,
        Variant::Unrolled,
        Variant::Prefetch,
        Variant::Regtile,
    ];

    /// Name on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Naive => "naive",
            Variant::Tiled4 => "tiled4",
            Variant::Tiled8 => "tiled8",
            Variant::Tiled12 => "tiled12",
            Variant::Tiled16 => "tiled16",
            Variant::Unrolled => "unrolled",
            Variant::Prefetch => "prefetch",
            Variant::Regtile => "regtile",
        }
    }

    /// `naive`, ..., `regtile`, or `all`; a comma list is accepted.
    pub fn parse_list(text: &str) -> Result<Vec<Variant>> {
        let mut out = Vec::new();
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            if word == "all" {
                out.extend(Variant::ALL);
            } else {
                let v = Variant::ALL.into_iter().find(|v| v.name() == word).ok_or_else(|| {
                    Error::invalid(
                        "variants",
                        format!("'{word}' (use naive, tiled4, tiled8, tiled12, tiled16, unrolled, prefetch, regtile or all)"),
                    )
                })?;
                out.push(v);
            }
        }
        out.dedup();
        if out.is_empty() {
            return Err(Error::invalid(
                "variants",
                "no kernel named (use naive, tiled4, tiled8, tiled12, tiled16, unrolled, prefetch or regtile)",
            ));
        }
        Ok(out)
    }

    fn tile(self) -> Option<u32> {
        match self {
            Variant::Tiled4 => Some(4),
            Variant::Tiled8 => Some(8),
            Variant::Tiled12 => Some(12),
            Variant::Tiled16 => Some(16),
            _ => None,
        }
    }
}

/// C (M×N) = A (M×K) · B (K×N).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    /// Rows of A and C.
    pub m: usize,
    /// Columns of B and C.
    pub n: usize,
    /// Columns of A, rows of B.
    pub k: usize,
}

impl Shape {
    /// The n×n×n product.
    pub fn square(n: usize) -> Shape {
        Shape { m: n, n, k: n }
    }

    /// Err ([`Error::Invalid`]) when a dimension is 0 or a matrix would hold 2^32 elements or more.
    pub fn validate(&self) -> Result<()> {
        let fits = |x: usize, y: usize| (x as u64) * (y as u64) <= u32::MAX as u64;
        if self.m == 0 || self.n == 0 || self.k == 0 || !fits(self.m, self.k) || !fits(self.k, self.n) || !fits(self.m, self.n) {
            return Err(Error::invalid("n/m/k", format!("M×N×K = {self} (every dimension ≥ 1 and each matrix under 2^32 elements)")));
        }
        Ok(())
    }

    /// What a run allocates: A, B and C on the device; on the host A, B, C read back and
    /// the checked rows of the reference.
    pub fn footprint(&self) -> Footprint {
        let (a, b, c) = (bytes(self.m, self.k as u64 * 4), bytes(self.k, self.n as u64 * 4), bytes(self.m, self.n as u64 * 4));
        Footprint::new("`n` (or `m`, `k`)", format!("matmul M×N×K = {self}"))
            .device("A", a)
            .device("B", b)
            .device("C", c)
            .host(a.saturating_add(b).saturating_add(c).saturating_add(bytes(65, self.n as u64 * 12)))
    }

    /// Floating-point operations of one product, 2·M·N·K (multiply and add counted apart).
    fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// K and N multiples of 4: the vec4 path of `regtile`.
    fn vec4_aligned(&self) -> bool {
        self.k.is_multiple_of(4) && self.n.is_multiple_of(4)
    }
}

/// `M×N×K`, as the user gives sizes.
impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}×{}×{}", self.m, self.n, self.k)
    }
}

/// Tile sizes of `regtile`: workgroups of `wg_x × wg_y` invocations, each computing `tm × tn`
/// outputs, so a workgroup tile of (wg_y·tm) × (wg_x·tn), stepping `bk` along K. Consecutive
/// invocations form `warp_x × warp_y` blocks of the invocation grid (8 × 4 = one 32-wide
/// subgroup reads few distinct fragments); when they do not divide `wg_x`, `wg_y` the kernel
/// uses row order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegtileConfig {
    /// Invocations per workgroup along x (columns of C).
    pub wg_x: u32,
    /// Invocations per workgroup along y (rows of C).
    pub wg_y: u32,
    /// Rows of C per invocation (4 or 8).
    pub tm: u32,
    /// Columns of C per invocation (4 or 8).
    pub tn: u32,
    /// Step along K per stage in workgroup memory (a multiple of 4 in 4..=64).
    pub bk: u32,
    /// Width of the blocks consecutive invocations form in the invocation grid.
    pub warp_x: u32,
    /// Height of those blocks.
    pub warp_y: u32,
    /// Workgroups run in groups of `group_m` tile rows (L2 reuse); 1 = row order.
    pub group_m: u32,
    /// The form with loops for the driver to unroll (`regtile_loops.wgsl`, 8×8 outputs only)
    /// instead of every step written out (`regtile.wgsl`).
    #[serde(default)]
    pub loops: bool,
}

impl Default for RegtileConfig {
    /// 64×128 workgroup tiles of 16×8 invocations with 8×8 outputs each, BK = 16: the best of
    /// the configurations tried on an H100 (Vulkan) at 4096³, 32.4 TFLOPS against 30.5 for
    /// BK = 8 and 24.4 for 128×128 tiles of 16×16 invocations.
    fn default() -> Self {
        RegtileConfig { wg_x: 16, wg_y: 8, tm: 8, tn: 8, bk: 16, warp_x: 8, warp_y: 4, group_m: 8, loops: false }
    }
}

/// The tile sizes in field terms (`` `wg_x=16` `wg_y=8` ... ``).
impl std::fmt::Display for RegtileConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`wg_x={}` `wg_y={}` `tm={}` `tn={}` `bk={}` `warp_x={}` `warp_y={}` `group_m={}`{} (workgroup tile {}×{})",
            self.wg_x,
            self.wg_y,
            self.tm,
            self.tn,
            self.bk,
            self.warp_x,
            self.warp_y,
            self.group_m,
            if self.loops { " `loops`" } else { "" },
            self.bm(),
            self.bn()
        )
    }
}

/// Most vec4 an invocation loads per step for A and for B (`MAX_LOADS` in regtile.wgsl).
pub const REGTILE_MAX_LOADS: u32 = 4;

impl RegtileConfig {
    /// Invocations per workgroup, wg_x · wg_y.
    pub fn threads(&self) -> u32 {
        self.wg_x * self.wg_y
    }

    /// Rows of C per workgroup tile, wg_y · tm.
    fn bm(&self) -> u32 {
        self.wg_y * self.tm
    }

    /// Columns of C per workgroup tile, wg_x · tn.
    fn bn(&self) -> u32 {
        self.wg_x * self.tn
    }

    /// Err ([`Error::Invalid`]) naming the option to change: tm or tn not 4 or 8, the loop form with other than 8×8, bk not a multiple of 4 in 4..=64, group_m 0, more than 1024 invocations, or more than [`REGTILE_MAX_LOADS`] vec4 loads per invocation and step.
    pub fn validate(&self) -> Result<()> {
        let bad = |option: &str, msg: String| Err(Error::invalid(option, format!("regtile {self}: {msg}")));
        if ![4, 8].contains(&self.tm) || ![4, 8].contains(&self.tn) {
            return bad("tm/tn", "outputs per invocation must be 4 or 8 along each axis".into());
        }
        if self.loops && (self.tm != 8 || self.tn != 8) {
            return bad("loops", "the loop form computes 8×8 outputs per invocation: leave `tm` and `tn` at 8".into());
        }
        if self.bk == 0 || !self.bk.is_multiple_of(4) || self.bk > 64 {
            return bad("bk", "the K step must be a multiple of 4 in 4..=64".into());
        }
        if self.group_m == 0 {
            return bad("group_m", "use at least 1 tile row per group".into());
        }
        if self.wg_x == 0 || self.wg_y == 0 || self.threads() > 1024 {
            return bad("wg_x/wg_y", "use 1..=1024 invocations per workgroup (`wg_x` × `wg_y`)".into());
        }
        let loads_a = (self.bm() * self.bk / 4).div_ceil(self.threads());
        let loads_b = (self.bn() * self.bk / 4).div_ceil(self.threads());
        if loads_a > REGTILE_MAX_LOADS || loads_b > REGTILE_MAX_LOADS {
            return bad(
                "wg_x/wg_y/bk",
                format!(
                    "each invocation would load {loads_a} (A) and {loads_b} (B) vec4 per K step; at most {REGTILE_MAX_LOADS}: use more invocations (`wg_x`, `wg_y`) or a smaller `bk`"
                ),
            );
        }
        Ok(())
    }

    /// The subgroup block actually used: (warp_x, warp_y) when they divide the workgroup,
    /// else row order (wg_x, 1).
    fn warp_block(&self) -> (u32, u32) {
        let ok = self.warp_x > 0 && self.warp_y > 0 && self.wg_x.is_multiple_of(self.warp_x) && self.wg_y.is_multiple_of(self.warp_y);
        if ok {
            (self.warp_x, self.warp_y)
        } else {
            (self.wg_x, 1)
        }
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        let (wx, wy) = self.warp_block();
        vec![
            ("WG_X", self.wg_x as f64),
            ("WG_Y", self.wg_y as f64),
            ("BK", self.bk as f64),
            ("WARP_X", wx as f64),
            ("WARP_Y", wy as f64),
            ("GROUP_M", self.group_m as f64),
        ]
    }
}

/// What a variant compiles to: entry point, defines, override values, output tile per workgroup.
#[derive(Clone, Debug)]
pub struct KernelSpec {
    /// The WGSL entry point.
    pub entry: Entry,
    /// `#ifdef` names set when preprocessing (for `regtile`: `TM4`, `TN4`, `UNALIGNED`).
    pub defines: Vec<&'static str>,
    /// Pipeline-override values by name (`TILE`, `WG_X`, `BK`, ...).
    pub constants: Vec<(&'static str, f64)>,
    /// Rows × columns of C per workgroup.
    pub tile: (u32, u32),
    /// Invocations per workgroup along x and y.
    pub threads: (u32, u32),
}

/// The kernel `variant` runs for `shape` (regtile takes its vec4 path when K and N allow).
pub fn spec(variant: Variant, shape: Shape, regtile: &RegtileConfig) -> Result<KernelSpec> {
    Ok(match variant {
        Variant::Naive => {
            KernelSpec { entry: registry::matmul::naive::MAIN, defines: vec![], constants: vec![], tile: (16, 16), threads: (16, 16) }
        }
        Variant::Unrolled => {
            KernelSpec { entry: registry::matmul::unrolled::MAIN, defines: vec![], constants: vec![], tile: (16, 16), threads: (16, 16) }
        }
        Variant::Prefetch => {
            KernelSpec { entry: registry::matmul::prefetch::MAIN, defines: vec![], constants: vec![], tile: (16, 16), threads: (16, 16) }
        }
        Variant::Tiled4 | Variant::Tiled8 | Variant::Tiled12 | Variant::Tiled16 => {
            let t = variant.tile().unwrap_or(16);
            KernelSpec {
                entry: registry::matmul::tiled::MAIN,
                defines: vec![],
                constants: vec![("TILE", t as f64)],
                tile: (t, t),
                threads: (t, t),
            }
        }
        Variant::Regtile => {
            regtile.validate()?;
            let mut defines = Vec::new();
            if regtile.tm == 4 {
                defines.push("TM4");
            }
            if regtile.tn == 4 {
                defines.push("TN4");
            }
            if !shape.vec4_aligned() {
                defines.push("UNALIGNED");
            }
            KernelSpec {
                entry: if regtile.loops { registry::matmul::regtile_loops::MAIN } else { registry::matmul::regtile::MAIN },
                defines,
                constants: regtile.constants(),
                tile: (regtile.bm(), regtile.bn()),
                threads: (regtile.wg_x, regtile.wg_y),
            }
        }
    })
}

/// Static resources of a kernel, from its naga IR with the overrides applied.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    /// Invocations per workgroup (the product of the workgroup size).
    pub threads_per_workgroup: u32,
    /// Sum of the sizes of the `var<workgroup>` variables the entry point uses.
    pub workgroup_bytes: u64,
    /// `workgroup_bytes` / `threads_per_workgroup`.
    pub workgroup_bytes_per_thread: f64,
}

/// Threads per workgroup and workgroup memory of `spec`'s entry point `main`.
pub fn resources(spec: &KernelSpec) -> Result<Resources> {
    let source = preprocess(spec.entry.file.path, &spec.defines)?;
    let (module, info) = validate(&source)?;
    let mut constants = naga::back::PipelineConstants::default();
    for (name, value) in &spec.constants {
        constants.insert(name.to_string(), *value);
    }
    let (module, _) =
        naga::back::pipeline_constants::process_overrides(&module, &info, Some((naga::ShaderStage::Compute, "main")), &constants)
            .map_err(|e| Error::invalid("override constants", format!("{}: {e}", spec.entry.file.path)))?;
    let entry = module
        .entry_points
        .iter()
        .find(|e| e.name == "main")
        .ok_or_else(|| Error::invalid("entry point", format!("{}: no main", spec.entry.file.path)))?;
    let threads = entry.workgroup_size.iter().product::<u32>();
    let workgroup_bytes: u64 = module
        .global_variables
        .iter()
        .filter(|(_, g)| g.space == naga::AddressSpace::WorkGroup)
        .map(|(_, g)| module.types[g.ty].inner.size(module.to_ctx()) as u64)
        .sum();
    Ok(Resources {
        threads_per_workgroup: threads,
        workgroup_bytes,
        workgroup_bytes_per_thread: workgroup_bytes as f64 / threads.max(1) as f64,
    })
}

/// Uniform random matrix entries in [-1, 1).
pub fn random_matrix(rows: usize, cols: usize, rng: &mut Rng) -> Vec<f32> {
    (0..rows * cols).map(|_| rng.next_f32() * 2.0 - 1.0).collect()
}

/// Relative-error check bound for f32 products of K terms in [-1, 1] against the f64
/// reference: |gpu − cpu| ≤ `tolerance` · max(|cpu|, `floor`) with tolerance 1e-4 and floor
/// √K / 3 (the typical magnitude of an entry of C), so cancellation to near 0 does not fail.
pub fn check_bounds(k: usize) -> (f64, f64) {
    (1e-4, (k as f64).sqrt() / 3.0)
}

/// A bound kernel with uploaded A and B, ready to dispatch repeatedly.
#[derive(Debug)]
pub struct Prepared {
    /// The rung it runs.
    pub variant: Variant,
    /// What built the kernel's code.
    pub compiler: Compiler,
    /// Entry point, defines and overrides it was built with.
    pub spec: KernelSpec,
    /// Sizes of the product.
    pub shape: Shape,
    kernel: Arc<Kernel>,
    bind: wgpu::BindGroup,
    c: GpuBuffer<f32>,
    grid: [u32; 3],
    _inputs: Vec<Box<dyn Bind>>,
}

impl Prepared {
    /// Builds `variant` through wgpu (naga, with wgpu's checks), uploads A (M×K) and B (K×N) row-major and allocates C; Err when the shape or `regtile` is invalid, A or B has the wrong length, or a buffer exceeds the device's limits.
    pub fn new(gpu: &Gpu, variant: Variant, shape: Shape, a: &[f32], b: &[f32], regtile: &RegtileConfig) -> Result<Prepared> {
        Prepared::compiled(gpu, variant, &Compiler::Wgpu, shape, a, b, regtile)
    }

    /// As [`Prepared::new`], with the kernel built by `compiler`.
    pub fn compiled(
        gpu: &Gpu,
        variant: Variant,
        compiler: &Compiler,
        shape: Shape,
        a: &[f32],
        b: &[f32],
        regtile: &RegtileConfig,
    ) -> Result<Prepared> {
        shape.validate()?;
        if a.len() != shape.m * shape.k || b.len() != shape.k * shape.n {
            return Err(Error::invalid("matrices", format!("A has {} and B {} entries for M×N×K = {shape}", a.len(), b.len())));
        }
        let spec = spec(variant, shape, regtile)?;
        let res = resources(&spec)?;
        let caps = gpu.caps();
        let fixed = || format!("the {} kernel's tiles are fixed: leave it out of `variants` on this adapter", variant.name());
        if res.threads_per_workgroup > caps.max_compute_invocations_per_workgroup {
            return Err(Error::Limit {
                what: format!("{} invocations per workgroup", variant.name()),
                requested: res.threads_per_workgroup as u64,
                limit: caps.max_compute_invocations_per_workgroup as u64,
                hint: if variant == Variant::Regtile { "lower `wg_x` or `wg_y`".into() } else { fixed() },
            });
        }
        if res.workgroup_bytes > caps.max_compute_workgroup_storage_size as u64 {
            return Err(Error::Limit {
                what: format!("{} workgroup memory", variant.name()),
                requested: res.workgroup_bytes,
                limit: caps.max_compute_workgroup_storage_size as u64,
                hint: if variant == Variant::Regtile { "lower `wg_x`, `wg_y`, `tm`, `tn` or `bk`".into() } else { fixed() },
            });
        }
        let groups_x = shape.n.div_ceil(spec.tile.1 as usize) as u64;
        let groups_y = shape.m.div_ceil(spec.tile.0 as usize) as u64;
        let max = caps.max_compute_workgroups_per_dimension as u64;
        if groups_x > max || groups_y > max {
            return Err(Error::Limit {
                what: format!("{} workgroups per dimension for M×N×K = {shape}", variant.name()),
                requested: groups_x.max(groups_y),
                limit: max,
                hint: "lower `n` (or `m`, `k`)".into(),
            });
        }
        let kernel = compiler.kernel(gpu, &spec)?;
        let a = gpu.buffer("A", a, BufferKind::Storage)?;
        let b = gpu.buffer("B", b, BufferKind::Storage)?;
        let c = gpu.buffer_zeroed::<f32>("C", shape.m * shape.n, BufferKind::Storage)?;
        let params = registry::shared::matmul_bindings::Params { m: shape.m as u32, n: shape.n as u32, k: shape.k as u32, pad: 0 };
        let params = gpu.buffer("params", &[params], BufferKind::Uniform)?;
        use crate::gpu::shader::registry::shared::matmul_bindings::binding as slot;
        let bind = kernel.bind_at(gpu, &[(slot::A, &a), (slot::B, &b), (slot::C, &c), (slot::PARAMS, &params)])?;
        Ok(Prepared {
            variant,
            compiler: compiler.clone(),
            spec,
            shape,
            kernel,
            bind,
            c,
            grid: [groups_x as u32, groups_y as u32, 1],
            _inputs: vec![Box::new(a), Box::new(b), Box::new(params)],
        })
    }
}

impl PreparedRun for Prepared {
    /// The kernel's dispatch.
    fn steps(&self) -> Vec<Step<'_>> {
        vec![Step::dispatch(&self.kernel, &self.bind, self.grid)]
    }
    /// C (M×N f32, row-major).
    fn outputs(&self) -> Vec<(&wgpu::Buffer, u64)> {
        vec![(self.c.wgpu_buffer(), self.c.bytes())]
    }
    /// None: the matmul kernels have no probe sites.
    #[cfg(not(target_arch = "wasm32"))]
    fn divergence(&self, _gpu: &Gpu) -> Result<Option<Divergence>> {
        Ok(None)
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Prepared {
    /// Zeroes C (so a check cannot pass on stale values).
    pub fn clear(&self, gpu: &Gpu) -> Result<()> {
        gpu.run(&[Step::clear(&self.c)], false).map(|_| ())
    }

    /// C (M×N, row-major) as the last run left it.
    pub fn result(&self, gpu: &Gpu) -> Result<Vec<f32>> {
        gpu.read(&self.c)
    }
}

/// Above this many multiply-adds the check compares a sample of rows of C, not all of it.
pub const FULL_CHECK_MACS: f64 = (1u64 << 30) as f64;

/// The rows of C the check compares: every row up to [`FULL_CHECK_MACS`], else 64 evenly
/// spaced rows and the last.
pub fn checked_rows(shape: Shape) -> Vec<usize> {
    if shape.flops() / 2.0 <= FULL_CHECK_MACS {
        return (0..shape.m).collect();
    }
    let mut r: Vec<usize> = (0..64).map(|i| i * shape.m / 64).collect();
    r.push(shape.m - 1);
    r.dedup();
    r
}

/// Times `variant` on random A, B of `shape`, checks C against the f64 CPU reference (every
/// row up to [`FULL_CHECK_MACS`], else 64 evenly spaced rows and the last), and reports GFLOPS
/// and the kernel's resources.
#[cfg(not(target_arch = "wasm32"))]
pub fn bench(gpu: &Gpu, variant: Variant, shape: Shape, regtile: &RegtileConfig, protocol: &Protocol, seed: u64) -> Result<Record> {
    bench_compiled(gpu, variant, &Compiler::Wgpu, shape, regtile, protocol, seed)
}

/// As [`bench()`], with the kernel built by `compiler`; the record's kernel is named
/// `variant [compiler]` unless the compiler is wgpu (`regtile-loops` for regtile's loop form).
#[cfg(not(target_arch = "wasm32"))]
pub fn bench_compiled(
    gpu: &Gpu,
    variant: Variant,
    compiler: &Compiler,
    shape: Shape,
    regtile: &RegtileConfig,
    protocol: &Protocol,
    seed: u64,
) -> Result<Record> {
    shape.validate()?;
    shape.footprint().check(gpu)?;
    let mut rng = Rng::new(seed);
    let a = random_matrix(shape.m, shape.k, &mut rng);
    let b = random_matrix(shape.k, shape.n, &mut rng);
    let run = Prepared::compiled(gpu, variant, compiler, shape, &a, &b, regtile)?;
    let res = resources(&run.spec)?;
    run.clear(gpu)?;
    run.dispatch(gpu)?;
    let c = run.result(gpu)?;
    // Time before the CPU reference, so the GPU has not dropped its clocks while idle.
    let stats = harness::measure(protocol, || run.dispatch(gpu))?;
    let rows = checked_rows(shape);
    let expected = cpu::matmul_rows(&a, &b, shape, &rows);
    let got: Vec<f32> = rows.iter().flat_map(|&r| c[r * shape.n..(r + 1) * shape.n].iter().copied()).collect();
    let (tol, floor) = check_bounds(shape.k);
    let check = Check::relative(&got, &expected, tol, floor);
    let gflops = shape.flops() / stats.median * 1e-9;
    Ok(Record {
        schema: harness::SCHEMA_VERSION,
        family: "matmul".into(),
        kernel: {
            let name = if variant == Variant::Regtile && regtile.loops { "regtile-loops" } else { variant.name() };
            match compiler {
                Compiler::Wgpu => name.to_string(),
                other => format!("{name} [{}]", other.name()),
            }
        },
        variant: format!("{}x{}x{}", shape.m, shape.n, shape.k),
        params: serde_json::json!({
            "compiler": compiler.name(),
            "shape": shape,
            "regtile": (variant == Variant::Regtile).then_some(regtile),
            "defines": run.spec.defines,
            "constants": run.spec.constants,
        }),
        seed,
        environment: Environment::of(gpu),
        stats,
        check,
        divergence: None,
        throughput: Some(Throughput { value: gflops, unit: "GFLOPS".into() }),
        extra: serde_json::to_value(MatmulExtra {
            resources: res,
            workgroup_tile: [run.spec.tile.0, run.spec.tile.1],
            checked_rows: rows.len(),
            size_note: None,
        })
        .unwrap_or_default(),
    })
}

/// What a matmul record keeps in `extra` (Figure 4's resource columns), read back with
/// [`Record::extra_as`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MatmulExtra {
    /// Threads and workgroup memory of the kernel.
    #[serde(flatten)]
    pub resources: Resources,
    /// Rows × columns of C one workgroup computes.
    pub workgroup_tile: [u32; 2],
    /// Rows of C compared with the CPU reference.
    pub checked_rows: usize,
    /// Why the matrix size differs from the one asked for, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_note: Option<String>,
}

/// The paper's matrix size, `--n` by default.
pub const PAPER_N: usize = 4096;
/// `--n` by default on a CPU adapter (lavapipe, llvmpipe): there the slowest kernel (tiled4)
/// runs at about 0.2 GFLOPS, so one 4096³ product takes about 10 minutes, far past the
/// submission timeout, and 512³ about a second.
pub const CPU_ADAPTER_N: usize = 512;

/// Kernels of the ladder run on one shape (`simtlab bench matmul`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Ladder {
    /// The kernels to run, in order.
    pub variants: Vec<Variant>,
    /// Square size M = N = K. None: [`PAPER_N`], or [`CPU_ADAPTER_N`] on a CPU adapter
    /// (lavapipe, llvmpipe), where 4096 runs past the submission timeout.
    pub n: Option<usize>,
    /// Rows of A and C (None: n).
    pub m: Option<usize>,
    /// Columns of A, rows of B (None: n).
    pub k: Option<usize>,
    /// Tile sizes of `regtile`.
    pub regtile: RegtileConfig,
    /// Each kernel runs once per compiler, in this order.
    pub compilers: Vec<Compiler>,
    /// Seed of A and B.
    pub seed: u64,
}

impl Default for Ladder {
    fn default() -> Self {
        Ladder {
            variants: Variant::ALL.to_vec(),
            n: None,
            m: None,
            k: None,
            regtile: RegtileConfig::default(),
            compilers: vec![Compiler::Wgpu],
            seed: 1,
        }
    }
}

impl Ladder {
    /// The shape to run on `gpu` and, when `n` was left out and the paper's size was cut
    /// for the adapter, why.
    pub fn shape(&self, gpu: &Gpu) -> (Shape, Option<String>) {
        let (n, note) = match self.n {
            Some(n) => (n, None),
            None if gpu.info().device_type == wgpu::DeviceType::Cpu => (
                CPU_ADAPTER_N,
                Some(format!(
                    "`n` defaults to {CPU_ADAPTER_N} on the CPU adapter {}: the paper's {PAPER_N} runs past the {:.0} s submission timeout there (give `n={PAPER_N}` and a longer `timeout` to insist)",
                    gpu.adapter_name(),
                    gpu.timeout().as_secs_f64()
                )),
            ),
            None => (PAPER_N, None),
        };
        (Shape { m: self.m.unwrap_or(n), n, k: self.k.unwrap_or(n) }, note)
    }
}

/// The ladder's checks before any kernel runs: kernels and compilers named, the shape valid and
/// within the adapter, `regtile`'s tiles valid where it runs. Gives the shape and, where `n`
/// was left to the adapter, why it is the one it is.
pub fn check_ladder(gpu: &Gpu, ladder: &Ladder) -> Result<(Shape, Option<String>)> {
    if ladder.variants.is_empty() {
        return Err(Error::invalid(
            "variants",
            "no kernel named (use naive, tiled4, tiled8, tiled12, tiled16, unrolled, prefetch or regtile)",
        ));
    }
    if ladder.compilers.is_empty() {
        return Err(Error::invalid(
            "compilers",
            "no compiler named (use wgpu, naga, naga-unchecked, naga-unroll, or a SPIR-V module from another compiler as `spirv`)",
        ));
    }
    let (shape, size_note) = ladder.shape(gpu);
    shape.validate()?;
    shape.footprint().check(gpu)?;
    if ladder.variants.contains(&Variant::Regtile) {
        ladder.regtile.validate()?;
    }
    Ok((shape, size_note))
}
