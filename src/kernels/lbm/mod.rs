//! 3D-LBM (Zhang 5.2): a D3Q19 lattice-Boltzmann stream-and-collide step in a box with walls
//! and a random field of spherical obstacles. Each cell checks its 19 upstream neighbours and
//! streams only from those that exist (bounce-back otherwise), so the branch outcome depends on
//! the obstacle field. The redirection groups cells by their 20-bit path vector.

pub mod cpu;

use crate::divergence::{self, Divergence};
use crate::error::{Error, Result};
use crate::gpu::shader::registry;
use crate::gpu::PreparedRun;
use crate::gpu::{BufferKind, Gpu, GpuBuffer, Step};
use crate::harness::footprint::{bytes, Footprint};
#[cfg(not(target_arch = "wasm32"))]
use crate::harness::Protocol;
use crate::harness::{Check, Throughput};
use crate::kernels::redirect::{output_as, BoundKernel, RedirectConfig, RedirectKernel};
use crate::remap::{self, RunOptions};
use serde::{Deserialize, Serialize};

/// Invocations per workgroup of the stream-collide kernel.
pub const WORKGROUP_SIZE: u32 = 256;
/// Probe sites: 0..19 = neighbour q exists, 19 = the cell is fluid (collides).
pub const SITES: usize = 20;
/// f32 kernel against the f64 reference: |gpu - cpu| ≤ TOL · max(|cpu|, FLOOR).
pub const TOLERANCE: f64 = 1e-4;
/// Magnitude below which the check compares absolute error.
pub const FLOOR: f64 = 1e-3;

/// Lattice, obstacles and relaxation of one LBM step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LbmConfig {
    /// Cells per side of the cubic box (cells = edge³).
    pub edge: usize,
    /// Target fraction of obstacle cells (random spheres are added until it is reached).
    pub obstacles: f64,
    /// BGK relaxation rate 1/τ.
    pub omega: f32,
    /// Seed of the obstacle placement and initial distributions.
    pub seed: u64,
}

impl Default for LbmConfig {
    fn default() -> Self {
        LbmConfig { edge: 64, obstacles: 0.1, omega: 1.25, seed: 1 }
    }
}

impl RedirectConfig for LbmConfig {
    /// Err ([`Error::Invalid`]) when the edge is outside 2..=512, obstacles outside 0..0.9 or ω outside (0, 2).
    fn validate(&self) -> Result<()> {
        if self.edge < 2 || self.edge > 512 {
            return Err(Error::invalid("edge", format!("{} cells per side of the lattice (use 2..=512)", self.edge)));
        }
        if !(0.0..0.9).contains(&self.obstacles) {
            return Err(Error::invalid("lbm obstacles", format!("{} (use a fraction in 0..0.9)", self.obstacles)));
        }
        if !(self.omega > 0.0 && self.omega < 2.0) {
            return Err(Error::invalid("lbm omega", format!("{} (stable BGK needs 0 < ω < 2)", self.omega)));
        }
        Ok(())
    }

    /// What a run allocates: 19 distributions per cell on the device (the largest buffers,
    /// in and out); on the host the input, the f64 reference, the result read back and the
    /// path vectors, about 400 bytes per cell.
    fn footprint(&self) -> Footprint {
        let cells = self.edge.saturating_pow(3);
        Footprint::new("`edge`", format!("lbm `edge={}` ({cells} cells)", self.edge))
            .device("f in", bytes(cells, 4 * cpu::Q as u64))
            .host(bytes(cells, 400))
    }

    fn seed(&self) -> u64 {
        self.seed
    }
}

impl LbmConfig {
    /// Cells along x, y and z.
    pub fn dims(&self) -> [usize; 3] {
        [self.edge; 3]
    }

    /// Cells in the lattice, edge³.
    pub fn cells(&self) -> usize {
        self.edge.pow(3)
    }
}

/// Obstacle flags (1 = fluid) and the distributions before the step.
#[derive(Clone, Debug)]
pub struct LbmInput {
    /// Per cell, 1 = fluid, 0 = obstacle.
    pub flags: Vec<u32>,
    /// Distributions `f[q * cells + c]`, 19 per cell.
    pub f: Vec<f32>,
}

/// LBM's stream-and-collide step in the generic redirect bench: MLUPS = cells / median time
/// / 10⁶, the fluid cells in `extra`.
#[derive(Debug)]
pub struct Lbm;

impl RedirectKernel for Lbm {
    type Config = LbmConfig;
    type Input = LbmInput;
    type Expected = Vec<f64>;
    type Run = Prepared;
    const FAMILY: &'static str = "lbm";
    const KERNEL: &'static str = "stream_collide";

    /// Random obstacles and distributions from `cfg.seed`.
    fn generate(cfg: &LbmConfig) -> Result<LbmInput> {
        let mut rng = cfg.rng()?;
        let e = cfg.edge;
        let n = cfg.cells();
        let mut flags = vec![1u32; n];
        let mut solid = 0usize;
        let target = (cfg.obstacles * n as f64) as usize;
        let mut attempts = 0;
        while solid < target && attempts < 10_000 {
            attempts += 1;
            let r = (e as f64 * (0.05 + 0.12 * rng.next_f64())).max(1.0);
            let c = [rng.next_f64() * e as f64, rng.next_f64() * e as f64, rng.next_f64() * e as f64];
            for z in 0..e {
                for y in 0..e {
                    for x in 0..e {
                        let d = [x as f64 + 0.5 - c[0], y as f64 + 0.5 - c[1], z as f64 + 0.5 - c[2]];
                        let i = x + e * (y + e * z);
                        if d[0] * d[0] + d[1] * d[1] + d[2] * d[2] <= r * r && flags[i] == 1 {
                            flags[i] = 0;
                            solid += 1;
                        }
                    }
                }
            }
        }
        let mut f = vec![0f32; cpu::Q * n];
        for c in 0..n {
            let rho = 0.95 + 0.1 * rng.next_f64();
            let u = [0.1 * rng.next_f64() - 0.05, 0.1 * rng.next_f64() - 0.05, 0.1 * rng.next_f64() - 0.05];
            for q in 0..cpu::Q {
                f[q * n + c] = (cpu::equilibrium(q, rho, u) * (0.99 + 0.02 * rng.next_f64())) as f32;
            }
        }
        Ok(LbmInput { flags, f })
    }
    /// The f64 reference of one step.
    fn reference(cfg: &LbmConfig, input: &LbmInput) -> Vec<f64> {
        cpu::stream_collide(&input.f, &input.flags, cfg.dims(), cfg.omega as f64)
    }
    /// Cells grouped by path vector (stable counting sort of dense ids).
    fn redirect(cfg: &LbmConfig, input: &LbmInput, _: &Vec<f64>) -> Result<Vec<u32>> {
        let (classes, k) = remap::dense_classes(&paths(cfg, input));
        remap::redirect_index_of(&classes, k as usize)
    }
    fn prepare(gpu: &Gpu, cfg: &LbmConfig, input: &LbmInput, options: RunOptions) -> Result<Prepared> {
        Prepared::new(gpu, cfg, input, options)
    }
    /// The distributions against the f64 reference by relative error ([`TOLERANCE`], [`FLOOR`]).
    fn check(_: &LbmConfig, expected: &Vec<f64>, outputs: &[Vec<u8>]) -> Check {
        let c: Vec<f32> = expected.iter().map(|&v| v as f32).collect();
        Check::relative(&output_as::<f32>(outputs, 0), &c, TOLERANCE, FLOOR)
    }
    /// Thread t updates cell `order[t]`.
    fn emulate(cfg: &LbmConfig, input: &LbmInput, _: &Vec<f64>, order: Option<&[u32]>, width: u32) -> Result<Divergence> {
        divergence::emulate_paths(&remap::in_order(&paths(cfg, input), order), SITES, width)
    }
    fn throughput(cfg: &LbmConfig, median_seconds: f64) -> Throughput {
        Throughput { value: cfg.cells() as f64 / median_seconds * 1e-6, unit: "MLUPS".into() }
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn extra(_: &Gpu, _: &LbmConfig, input: &LbmInput, _: &Vec<f64>, _: &Prepared, _: &Protocol) -> Result<serde_json::Value> {
        Ok(serde_json::json!({ "fluid_cells": input.flags.iter().filter(|&&f| f != 0).count() }))
    }
}

/// Path vector of every cell (bit q: neighbour q exists; bit 19: fluid).
pub fn paths(cfg: &LbmConfig, input: &LbmInput) -> Vec<u32> {
    let dims = cfg.dims();
    crate::kernels::parallel_ranges(cfg.cells(), |r| r.map(|c| cpu::path(c, dims, &input.flags)).collect::<Vec<_>>()).concat()
}

/// Uploaded lattice and the bound stream-collide kernel, ready to run repeatedly.
#[derive(Debug)]
pub struct Prepared {
    run: BoundKernel,
    f_out: GpuBuffer<f32>,
    _f_in: GpuBuffer<f32>,
    _flags: GpuBuffer<u32>,
    _params: GpuBuffer<registry::lbm::stream_collide::Params>,
}

impl Prepared {
    /// Uploads `input` and binds the kernel (with probe buffers when `options` ask); Err when `cfg` is invalid or a buffer exceeds the device's limits.
    pub fn new(gpu: &Gpu, cfg: &LbmConfig, input: &LbmInput, options: RunOptions) -> Result<Prepared> {
        cfg.validate()?;
        let n = cfg.cells();
        if input.flags.len() != n || input.f.len() != cpu::Q * n {
            return Err(Error::invalid("lbm input", format!("flags of {n} cells and 19 × {n} distributions")));
        }
        let f_in = gpu.buffer("f in", &input.f, BufferKind::Storage)?;
        let f_out = gpu.buffer_zeroed::<f32>("f out", cpu::Q * n, BufferKind::Storage)?;
        let flags = gpu.buffer("flags", &input.flags, BufferKind::Storage)?;
        let [nx, ny, nz] = cfg.dims();
        let params = registry::lbm::stream_collide::Params {
            nx: nx as u32,
            ny: ny as u32,
            nz: nz as u32,
            n: n as u32,
            omega: cfg.omega,
            ..Default::default()
        };
        let params = gpu.buffer("params", &[params], BufferKind::Uniform)?;
        use registry::lbm::stream_collide::binding as slot;
        let slots: [(u32, &dyn crate::gpu::Bind); 4] =
            [(slot::F_IN, &f_in), (slot::F_OUT, &f_out), (slot::FLAGS, &flags), (slot::PARAMS, &params)];
        let run = BoundKernel::new(gpu, registry::lbm::stream_collide::MAIN, &options, n, n, SITES, &slots)?;
        Ok(Prepared { run, f_out, _f_in: f_in, _flags: flags, _params: params })
    }

    /// The distributions after the step, `f[q * n + c]`.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn results(&self, gpu: &Gpu) -> Result<Vec<f32>> {
        gpu.read(&self.f_out)
    }
}

impl PreparedRun for Prepared {
    /// One stream-and-collide step from the input distributions.
    fn steps(&self) -> Vec<Step<'_>> {
        vec![self.run.step()]
    }
    fn outputs(&self) -> Vec<(&wgpu::Buffer, u64)> {
        vec![(&self.f_out.buffer, self.f_out.bytes())]
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn divergence(&self, gpu: &Gpu) -> Result<Option<Divergence>> {
        self.run.divergence(gpu)
    }
}

/// The unrolled body of `shaders/lbm/stream_collide.wgsl` (between its `BEGIN generated` and
/// `END generated` lines), written out from the direction tables of [`cpu`] so that every
/// direction index, offset and weight is a compile-time constant in the shader (run-time indices
/// into `const` or private arrays become local-memory arrays in naga's SPIR-V). The test
/// `generated::shader_is_current` checks the file against it; `SIMTLAB_PRINT_LBM=1 cargo test
/// --lib lbm::generated -- --nocapture` prints it.
#[cfg(test)]
mod generated {
    use super::cpu::{weight_denominator, EX, EY, EZ, OPP, Q};

    fn plane(q: usize) -> String {
        match q {
            0 => String::new(),
            1 => "n + ".into(),
            _ => format!("{q}u * n + "),
        }
    }

    /// Σ_q e_q f_q for one axis, as (Σ positive) - (Σ negative).
    fn moment(e: &[i32; Q]) -> String {
        let pick = |s: i32| (0..Q).filter(|&q| e[q] == s).map(|q| format!("f{q}")).collect::<Vec<_>>().join(" + ");
        format!("({}) - ({})", pick(1), pick(-1))
    }

    pub(crate) fn body() -> String {
        let mut s = String::new();
        let axes = [("x", "nx", "1u", &EX), ("y", "ny", "nx", &EY), ("z", "nz", "nxy", &EZ)];
        s += "        let fluid = flags[c] != 0u;\n";
        s += "        // q = 0, e = (0, 0, 0): the source is the cell itself and both outcomes read f_in[c].\n";
        s += "        _ = probe(0u, fluid);\n";
        s += "        var f0 = f_in[c];\n";
        for q in 1..Q {
            let (mut inside, mut plus, mut minus) = (Vec::new(), Vec::new(), Vec::new());
            for (coord, extent, stride, e) in axes {
                match e[q] {
                    1 => {
                        inside.push(format!("({coord} > 0u)"));
                        minus.push(stride);
                    }
                    -1 => {
                        inside.push(format!("({coord} + 1u < {extent})"));
                        plus.push(stride);
                    }
                    _ => {}
                }
            }
            let src = format!(
                "c{}{}",
                plus.iter().map(|t| format!(" + {t}")).collect::<String>(),
                minus.iter().map(|t| format!(" - {t}")).collect::<String>()
            );
            s += &format!("        // q = {q}, e = ({}, {}, {}), bounce-back from {}\n", EX[q], EY[q], EZ[q], OPP[q]);
            s += &format!("        var f{q} = pull({q}u, {}u, {}, {src}, c);\n", OPP[q], inside.join(" & "));
        }
        s += "        if (probe(19u, fluid)) {\n";
        s += &format!("            let rho = {};\n", (0..Q).map(|q| format!("f{q}")).collect::<Vec<_>>().join(" + "));
        s += &format!("            let ux = ({}) / rho;\n", moment(&EX));
        s += &format!("            let uy = ({}) / rho;\n", moment(&EY));
        s += &format!("            let uz = ({}) / rho;\n", moment(&EZ));
        s += "            let usq = 1.5 * (ux * ux + uy * uy + uz * uz);\n";
        for q in 0..Q {
            let terms: Vec<String> = [("ux", EX[q]), ("uy", EY[q]), ("uz", EZ[q])]
                .iter()
                .filter(|(_, e)| *e != 0)
                .enumerate()
                .map(|(i, (u, e))| match (i, e) {
                    (0, 1) => u.to_string(),
                    (0, _) => format!("-{u}"),
                    (_, 1) => format!(" + {u}"),
                    _ => format!(" - {u}"),
                })
                .collect();
            let cu = if terms.is_empty() { "0.0".to_string() } else { format!("3.0 * ({})", terms.concat()) };
            s += &format!("            f{q} = relax(f{q}, 1.0 / {}.0, rho, {cu}, usq);\n", weight_denominator(q));
        }
        s += "        }\n";
        for q in 0..Q {
            s += &format!("        f_out[{}c] = f{q};\n", plane(q));
        }
        s
    }

    /// Without PROBE (whose counters are its own private array) the kernel keeps no array in
    /// function or private memory and no `const` array: nothing for the SPIR-V to put in local
    /// memory.
    #[test]
    fn shader_has_no_local_arrays() {
        for defines in [&[][..], &["REMAP"][..]] {
            let source = crate::gpu::shader::preprocess("lbm/stream_collide.wgsl", defines).unwrap();
            let (module, _) = crate::gpu::shader::validate(&source).unwrap();
            let is_array = |ty: naga::Handle<naga::Type>| matches!(module.types[ty].inner, naga::TypeInner::Array { .. });
            for ep in &module.entry_points {
                for (_, v) in ep.function.local_variables.iter() {
                    assert!(!is_array(v.ty), "{defines:?}: local array {:?}", v.name);
                }
            }
            for (_, f) in module.functions.iter() {
                assert!(f.local_variables.iter().all(|(_, v)| !is_array(v.ty)), "{defines:?}: local array");
            }
            for (_, k) in module.constants.iter() {
                assert!(!is_array(k.ty), "{defines:?}: const array {:?}", k.name);
            }
            for (_, g) in module.global_variables.iter() {
                assert!(g.space != naga::AddressSpace::Private || !is_array(g.ty), "{defines:?}: private array");
            }
        }
    }

    #[test]
    fn shader_is_current() {
        let body = body();
        if std::env::var_os("SIMTLAB_PRINT_LBM").is_some() {
            println!("{body}");
        }
        let file = include_str!("../../../shaders/lbm/stream_collide.wgsl");
        let begin = file.find("// BEGIN generated\n").expect("BEGIN generated marker") + "// BEGIN generated\n".len();
        let end = file.find("        // END generated").expect("END generated marker");
        assert_eq!(&file[begin..end], body, "shaders/lbm/stream_collide.wgsl is out of date with lbm::generated::body()");
    }
}
