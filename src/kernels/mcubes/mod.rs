//! MarchingCubes (Zhang 5.4): isosurface extraction from a sum of metaballs sampled on a grid.
//! Three passes, as in the CUDA SDK: classify voxels (cube index, vertex count), an exclusive
//! scan of the counts, and triangle generation over every voxel, whose vertex loop (0..15
//! trips) diverges. The redirection groups voxels by vertex count; the output order is fixed by
//! the scan, so both variants write the same mesh.

pub mod cpu;
pub mod tables;

pub use tables::Tables;

use crate::divergence::{self, Divergence};
use crate::error::{Error, Result};
use crate::gpu::shader::{registry, Entry};
use crate::gpu::PreparedRun;
#[cfg(not(target_arch = "wasm32"))]
use crate::gpu::Timing;
use crate::gpu::{BufferKind, Gpu, GpuBuffer, Kernel, Step};
use crate::harness::footprint::{bytes, Footprint};
#[cfg(not(target_arch = "wasm32"))]
use crate::harness::{self, Protocol};
use crate::harness::{Check, Throughput};
use crate::kernels::redirect::{output_as, BoundKernel, RedirectConfig, RedirectKernel};
use crate::remap::{self, RunOptions};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Invocations per workgroup of the classify, scan and generate kernels.
pub const WORKGROUP_SIZE: u32 = 256;
/// Vertex positions (in [0, 1]³) against the f64 reference: |gpu - cpu| ≤ TOL · max(|cpu|, 1).
pub const TOLERANCE: f64 = 1e-5;

/// Grid and field of one marching-cubes run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct McConfig {
    /// Voxels per side (voxels = edge³, samples = (edge + 1)³).
    pub edge: usize,
    /// Metaballs in the field.
    pub balls: usize,
    /// Iso value of the field Σ r² / |p - c|².
    pub iso: f32,
    /// Seed of the metaball centres and radii.
    pub seed: u64,
}

impl Default for McConfig {
    fn default() -> Self {
        McConfig { edge: 128, balls: 8, iso: 1.0, seed: 1 }
    }
}

impl RedirectConfig for McConfig {
    /// Err ([`Error::Invalid`]) when the edge is outside 1..=1024 or the balls outside 1..=1024.
    fn validate(&self) -> Result<()> {
        if self.edge < 1 || self.edge > 1024 {
            return Err(Error::invalid("edge", format!("{} voxels per side of the grid (use 1..=1024)", self.edge)));
        }
        if self.balls == 0 || self.balls > 1024 {
            return Err(Error::invalid("mcubes balls", format!("{} (use 1..=1024)", self.balls)));
        }
        Ok(())
    }

    /// What a run allocates before the mesh (whose size the scan decides; its buffer is
    /// checked when it is made): the sampled field and 3 words per voxel on the device; on the
    /// host the field, the reference's and the GPU's classification, and the redirect index.
    fn footprint(&self) -> Footprint {
        let samples = (self.edge + 1).saturating_pow(3);
        Footprint::new("`edge`", format!("mcubes `edge={}` ({} voxels)", self.edge, self.edge.saturating_pow(3)))
            .device("volume", bytes(samples, 4))
            .host(bytes(samples, 4))
            .host(bytes(self.edge.saturating_pow(3), 32))
    }

    fn seed(&self) -> u64 {
        self.seed
    }
}

impl McConfig {
    /// Voxels in the grid, edge³.
    pub fn voxels(&self) -> usize {
        self.edge.pow(3)
    }
}

/// A triangle mesh: three vertices per triangle, positions in [0, 1]³.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    /// Vertex positions, three per triangle.
    pub vertices: Vec<[f32; 3]>,
}

impl Mesh {
    /// Triangles in the mesh.
    pub fn triangles(&self) -> usize {
        self.vertices.len() / 3
    }
}

/// The CPU pipeline: cube indices, vertex counts, offsets, and the mesh (f64 vertices).
#[derive(Clone, Debug)]
pub struct McReference {
    /// Per voxel, the 8-bit case index: one bit per corner, set by which side of the iso value it lies.
    pub cube_index: Vec<u32>,
    /// Per voxel, the vertices its case emits (a multiple of 3).
    pub counts: Vec<u32>,
    /// Per voxel, the exclusive prefix sum of `counts`: where its vertices start.
    pub offsets: Vec<u32>,
    /// Vertices in the mesh, the sum of `counts`.
    pub total: u32,
    /// Vertex positions in [0, 1]³, three per triangle.
    pub vertices: Vec<[f64; 3]>,
}

/// MarchingCubes in the generic redirect bench: the generate pass is timed (as Table 4),
/// voxels/s; `extra` has the triangles and the whole pipeline's median time.
#[derive(Debug)]
pub struct MarchingCubes;

impl RedirectKernel for MarchingCubes {
    type Config = McConfig;
    /// The sampled field, (edge + 1)³ values, x fastest.
    type Input = Vec<f32>;
    type Expected = McReference;
    type Run = Prepared;
    const FAMILY: &'static str = "mcubes";
    const KERNEL: &'static str = "generate";

    /// Random metaballs sampled on the grid's corners.
    fn generate(cfg: &McConfig) -> Result<Vec<f32>> {
        let mut rng = cfg.rng()?;
        let balls: Vec<([f64; 3], f64)> = (0..cfg.balls)
            .map(|_| {
                let c = [0.2 + 0.6 * rng.next_f64(), 0.2 + 0.6 * rng.next_f64(), 0.2 + 0.6 * rng.next_f64()];
                (c, 0.06 + 0.1 * rng.next_f64())
            })
            .collect();
        let s = cfg.edge + 1;
        let h = 1.0 / cfg.edge as f64;
        Ok(crate::kernels::parallel_ranges(s * s * s, |range| {
            range
                .map(|i| {
                    let p = [(i % s) as f64 * h, ((i / s) % s) as f64 * h, (i / (s * s)) as f64 * h];
                    let v: f64 = balls
                        .iter()
                        .map(|(c, r)| {
                            let d2 = (p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2) + (p[2] - c[2]).powi(2);
                            r * r / (d2 + 1e-9)
                        })
                        .sum();
                    v as f32
                })
                .collect::<Vec<_>>()
        })
        .concat())
    }
    /// Classifies, scans and triangulates the volume on the CPU, in f64.
    fn reference(cfg: &McConfig, volume: &Vec<f32>) -> McReference {
        let t = Tables::get();
        let (cube_index, counts) = cpu::classify(volume, cfg.edge, cfg.iso, t);
        let (offsets, total) = cpu::scan(&counts);
        let vertices = cpu::generate(volume, cfg.edge, cfg.iso, t, &cube_index);
        McReference { cube_index, counts, offsets, total, vertices }
    }
    /// Voxels grouped by vertex count (0..=15; stable counting sort).
    fn redirect(_: &McConfig, _: &Vec<f32>, expected: &McReference) -> Result<Vec<u32>> {
        remap::redirect_index_of(&expected.counts, 16)
    }
    fn prepare(gpu: &Gpu, cfg: &McConfig, volume: &Vec<f32>, options: RunOptions) -> Result<Prepared> {
        Prepared::new(gpu, cfg, volume, options)
    }
    /// Classification, offsets and the vertex total exactly, vertices by relative error; one check.
    fn check(_: &McConfig, expected: &McReference, outputs: &[Vec<u8>]) -> Check {
        let words = |i: usize| output_as::<u32>(outputs, i);
        let vertices = output_as::<f32>(outputs, 3);
        let total = (vertices.len() / 3) as u32;
        let exact = Check::exact(
            &[words(0), words(1), words(2), vec![total]].concat(),
            &[expected.cube_index.clone(), expected.counts.clone(), expected.offsets.clone(), vec![expected.total]].concat(),
        );
        if !exact.passed {
            return exact;
        }
        let c: Vec<f32> = expected.vertices.iter().flatten().map(|&v| v as f32).collect();
        Check::relative(&vertices, &c, TOLERANCE, 1.0)
    }
    /// The vertex loop; thread t handles voxel `order[t]`.
    fn emulate(_: &McConfig, _: &Vec<f32>, expected: &McReference, order: Option<&[u32]>, width: u32) -> Result<Divergence> {
        divergence::emulate_loops(&remap::in_order(&expected.counts, order), width)
    }
    fn throughput(cfg: &McConfig, median_seconds: f64) -> Throughput {
        Throughput { value: cfg.voxels() as f64 / median_seconds * 1e-6, unit: "M voxels/s".into() }
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn extra(
        gpu: &Gpu,
        _: &McConfig,
        _: &Vec<f32>,
        expected: &McReference,
        run: &Prepared,
        protocol: &Protocol,
    ) -> Result<serde_json::Value> {
        let pipeline = harness::measure(protocol, || run.dispatch_pipeline(gpu))?;
        Ok(serde_json::json!({ "triangles": expected.total / 3, "pipeline_median_seconds": pipeline.median }))
    }
}

/// Uploaded volume with classification and scan done; the generate pass bound.
#[derive(Debug)]
pub struct Prepared {
    #[cfg_attr(target_arch = "wasm32", expect(dead_code, reason = "read by the native pipeline timing"))]
    classify: (Arc<Kernel>, wgpu::BindGroup),
    #[cfg_attr(target_arch = "wasm32", expect(dead_code, reason = "read by the native pipeline timing"))]
    scan: [(Arc<Kernel>, wgpu::BindGroup, [u32; 3]); 3],
    generate: BoundKernel,
    #[cfg_attr(target_arch = "wasm32", expect(dead_code, reason = "read by the native pipeline timing"))]
    grid: [u32; 3],
    cube_index: GpuBuffer<u32>,
    counts: GpuBuffer<u32>,
    offsets: GpuBuffer<u32>,
    vertices: GpuBuffer<f32>,
    total: u32,
    _keep_f32: GpuBuffer<f32>,
    _keep: Vec<GpuBuffer<u32>>,
    _params: (GpuBuffer<registry::shared::mcubes_volume::Params>, GpuBuffer<registry::mcubes::scan::Params>),
    _tables: GpuBuffer<i32>,
}

impl Prepared {
    /// Uploads, classifies and scans (untimed), then binds the generate pass.
    pub fn new(gpu: &Gpu, cfg: &McConfig, volume: &[f32], options: RunOptions) -> Result<Prepared> {
        cfg.validate()?;
        let voxels = cfg.voxels();
        if volume.len() != (cfg.edge + 1).pow(3) {
            return Err(Error::invalid("mcubes volume", format!("{} samples for edge {}", volume.len(), cfg.edge)));
        }
        options.check_remap(voxels)?;
        let grid = gpu.grid(voxels as u64, WORKGROUP_SIZE)?;
        let blocks = voxels.div_ceil(WORKGROUP_SIZE as usize);
        let vol = gpu.buffer("volume", volume, BufferKind::Storage)?;
        let tables = gpu.buffer("mc tables", &Tables::get().gpu_words(), BufferKind::Storage)?;
        let cube_index = gpu.buffer_zeroed::<u32>("cube index", voxels, BufferKind::Storage)?;
        let counts = gpu.buffer_zeroed::<u32>("vertex counts", voxels, BufferKind::Storage)?;
        let offsets = gpu.buffer_zeroed::<u32>("offsets", voxels, BufferKind::Storage)?;
        let sums = gpu.buffer_zeroed::<u32>("block sums", blocks, BufferKind::Storage)?;
        let total = gpu.buffer_zeroed::<u32>("total", 1, BufferKind::Storage)?;
        let params = registry::shared::mcubes_volume::Params { edge: cfg.edge as u32, voxels: voxels as u32, iso: cfg.iso, pad: 0 };
        let params = gpu.buffer("params", &[params], BufferKind::Uniform)?;
        let scan_params = registry::mcubes::scan::Params { n: voxels as u32, m: blocks as u32, ..Default::default() };
        let scan_params = gpu.buffer("scan params", &[scan_params], BufferKind::Uniform)?;

        let k = gpu.kernel(registry::mcubes::classify::MAIN, &[])?;
        use registry::mcubes::classify::binding as classify_slot;
        let b = k.bind_at(
            gpu,
            &[
                (classify_slot::VOLUME, &vol),
                (classify_slot::TABLES, &tables),
                (classify_slot::CUBE_INDEX, &cube_index),
                (classify_slot::VERT_COUNT, &counts),
                (classify_slot::PARAMS, &params),
            ],
        )?;
        let classify = (k, b);
        let scan_bind = |entry: Entry, grid: [u32; 3]| -> Result<(Arc<Kernel>, wgpu::BindGroup, [u32; 3])> {
            let k = gpu.kernel(entry, &[])?;
            use registry::mcubes::scan::binding as scan_slot;
            let b = k.bind_at(
                gpu,
                &[(scan_slot::DATA, &offsets), (scan_slot::SUMS, &sums), (scan_slot::PARAMS, &scan_params), (scan_slot::TOTAL, &total)],
            )?;
            Ok((k, b, grid))
        };
        let scan = [
            scan_bind(registry::mcubes::scan::SCAN_BLOCKS, grid)?,
            scan_bind(registry::mcubes::scan::SCAN_SUMS, [1, 1, 1])?,
            scan_bind(registry::mcubes::scan::ADD_OFFSETS, grid)?,
        ];

        let mut steps = vec![Step::dispatch(&classify.0, &classify.1, grid), Step::copy(&counts, &offsets, counts.bytes())];
        steps.extend(scan.iter().map(|(k, b, g)| Step::dispatch(k, b, *g)));
        // Submitted, not waited for: the generate pass, submitted later on the same queue, reads
        // these offsets. The vertex buffer is sized from the CPU's classification of the same
        // volume, since a page cannot wait for the GPU's total; the check compares the GPU's
        // counts and offsets with the reference, so a GPU total that differs fails it.
        let commands = gpu.checked_now("classifying and scanning the volume", || gpu.encode(&steps).finish())?;
        gpu.submit(commands, "classifying and scanning the volume")?;
        let total_vertices: u32 = cpu::classify(volume, cfg.edge, cfg.iso, Tables::get()).1.iter().sum();

        let vertices = gpu.buffer_zeroed::<f32>("vertices", 3 * (total_vertices as usize).max(1), BufferKind::Storage)?;
        use registry::mcubes::generate::binding as slot;
        let slots: [(u32, &dyn crate::gpu::Bind); 7] = [
            (slot::VOLUME, &vol),
            (slot::TABLES, &tables),
            (slot::CUBE_INDEX, &cube_index),
            (slot::VERT_COUNT, &counts),
            (slot::OFFSETS, &offsets),
            (slot::VERTICES, &vertices),
            (slot::PARAMS, &params),
        ];
        let generate = BoundKernel::new(gpu, registry::mcubes::generate::MAIN, &options, voxels, voxels, 1, &slots)?;
        Ok(Prepared {
            classify,
            scan,
            generate,
            grid,
            cube_index,
            counts,
            offsets,
            vertices,
            total: total_vertices,
            _keep_f32: vol,
            _keep: vec![sums, total],
            _params: (params, scan_params),
            _tables: tables,
        })
    }

    /// Vertices generated (3 per triangle).
    pub fn total_vertices(&self) -> u32 {
        self.total
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Prepared {
    /// The whole pipeline: classify, scan and generate.
    pub fn dispatch_pipeline(&self, gpu: &Gpu) -> Result<Timing> {
        let mut steps = vec![
            Step::dispatch(&self.classify.0, &self.classify.1, self.grid),
            Step::copy(&self.counts, &self.offsets, self.counts.bytes()),
        ];
        steps.extend(self.scan.iter().map(|(k, b, g)| Step::dispatch(k, b, *g)));
        steps.push(self.generate.step());
        gpu.run(&steps, true)
    }

    /// (cube index, vertex count, offset) per voxel from the GPU.
    pub fn classification(&self, gpu: &Gpu) -> Result<(Vec<u32>, Vec<u32>, Vec<u32>)> {
        Ok((gpu.read(&self.cube_index)?, gpu.read(&self.counts)?, gpu.read(&self.offsets)?))
    }

    /// The mesh the last run generated (`total` vertices read back).
    pub fn mesh(&self, gpu: &Gpu) -> Result<Mesh> {
        let flat = gpu.read(&self.vertices)?;
        Ok(Mesh { vertices: flat.chunks_exact(3).take(self.total as usize).map(|v| [v[0], v[1], v[2]]).collect() })
    }
}

impl PreparedRun for Prepared {
    /// The triangle-generation pass alone (the kernel the paper times).
    fn steps(&self) -> Vec<Step<'_>> {
        vec![self.generate.step()]
    }
    /// Cube index, vertex count and offset per voxel, then the vertices generated.
    fn outputs(&self) -> Vec<(&wgpu::Buffer, u64)> {
        vec![
            (&self.cube_index.buffer, self.cube_index.bytes()),
            (&self.counts.buffer, self.counts.bytes()),
            (&self.offsets.buffer, self.offsets.bytes()),
            (&self.vertices.buffer, 12 * self.total as u64),
        ]
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn divergence(&self, gpu: &Gpu) -> Result<Option<Divergence>> {
        self.generate.divergence(gpu)
    }
}
