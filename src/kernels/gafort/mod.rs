//! GAFORT-like genetic algorithm (Zhang 5.3): the children-generation kernel, where a random
//! draw decides crossover and the crossover loop runs L - icross trips (0 without crossover).
//!
//! SPEC OMP's gafort source is not public: this GA is written from the paper's description
//! (tournament selection of mates by fitness, single-point crossover with probability pcross,
//! jump mutation, fitness of each child). As in the paper, the two divergences (the crossover
//! `if` and the loop) are combined into one class, the trip count, and the redirection groups
//! children of equal trip count.

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

/// Invocations per workgroup of the generation kernel.
pub const WORKGROUP_SIZE: u32 = 256;
/// Probe sites: 0 = the crossover decision, 1 = the crossover loop.
pub const SITES: usize = 2;

/// Size and rates of one generation of the genetic algorithm.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GaConfig {
    /// Children (= parents) per generation.
    pub children: usize,
    /// Genes (bits) per chromosome.
    pub genes: u32,
    /// Crossover probability.
    pub pcross: f64,
    /// Jump-mutation probability per child.
    pub pmutate: f64,
    /// Seed of the input generator (same seed, same population and draws).
    pub seed: u64,
}

impl Default for GaConfig {
    fn default() -> Self {
        GaConfig { children: 1 << 16, genes: 64, pcross: 0.6, pmutate: 0.2, seed: 1 }
    }
}

impl RedirectConfig for GaConfig {
    fn validate(&self) -> Result<()> {
        if self.children < 2 || self.children > (u32::MAX / 8) as usize {
            return Err(Error::invalid("children", format!("{} (use 2..=2^29-1)", self.children)));
        }
        if self.genes == 0 || self.genes as u64 * self.children as u64 > u32::MAX as u64 {
            return Err(Error::invalid(
                "children",
                format!(
                    "{} children of {} genes (genes × children must be under 2^32: use children ≤ {})",
                    self.children,
                    self.genes,
                    u32::MAX / self.genes.max(1)
                ),
            ));
        }
        if !(0.0..=1.0).contains(&self.pcross) || !(0.0..=1.0).contains(&self.pmutate) {
            return Err(Error::invalid("gafort probabilities", "pcross and pmutate must be in 0..=1"));
        }
        Ok(())
    }

    /// What a run allocates: the genes of every parent (and child) on the device; on the host
    /// parents, two sets of children (reference and read back) and 8 draws per child.
    fn footprint(&self) -> Footprint {
        let genes = bytes(self.children, self.genes as u64 * 4);
        Footprint::new("`children`", format!("gafort `children={}` ({} genes each)", self.children, self.genes))
            .device("parents", genes)
            .host(genes.saturating_mul(3))
            .host(bytes(self.children, 64))
    }

    fn seed(&self) -> u64 {
        self.seed
    }
}

impl GaConfig {
    /// Crossover when the u32 draw is below this.
    pub fn threshold(&self) -> u32 {
        (self.pcross * u32::MAX as f64).round() as u32
    }
}

/// One generation's inputs: parent genes (gene-major bits), parent fitness, and per child
/// 8 draws: 4 candidate parents, crossover draw, crossover point icross in [0, L), jump gene
/// (L = no mutation), 0.
#[derive(Clone, Debug)]
pub struct GaInput {
    /// Parent genes, one bit (0 or 1) per word, gene-major: `parents[gene * children + parent]`.
    pub parents: Vec<u32>,
    /// Fitness per parent: the weighted sum of its genes.
    pub fitness: Vec<u32>,
    /// Eight random words per child, in the order above.
    pub draws: Vec<u32>,
}

/// GAFORT's children generation in the generic redirect bench: children/s, the best child
/// fitness in `extra`.
#[derive(Debug)]
pub struct Gafort;

impl RedirectKernel for Gafort {
    type Config = GaConfig;
    type Input = GaInput;
    /// (children genes gene-major, child fitness).
    type Expected = (Vec<u32>, Vec<u32>);
    type Run = Prepared;
    const FAMILY: &'static str = "gafort";
    const KERNEL: &'static str = "children";

    /// A random population and draws from `cfg.seed`.
    fn generate(cfg: &GaConfig) -> Result<GaInput> {
        let mut rng = cfg.rng()?;
        let (p, l) = (cfg.children, cfg.genes);
        let parents: Vec<u32> = (0..p * l as usize).map(|_| rng.next_u32() >> 31).collect();
        let fitness: Vec<u32> = (0..p).map(|c| (0..l as usize).map(|n| parents[n * p + c] * cpu::weight(n as u32)).sum()).collect();
        let mut draws = Vec::with_capacity(8 * p);
        for _ in 0..p {
            for _ in 0..4 {
                draws.push(rng.range_u32(0, p as u32 - 1));
            }
            draws.push(rng.next_u32());
            draws.push(rng.range_u32(0, l - 1));
            draws.push(if rng.next_f64() < cfg.pmutate { rng.range_u32(0, l - 1) } else { l });
            draws.push(0);
        }
        Ok(GaInput { parents, fitness, draws })
    }
    fn reference(cfg: &GaConfig, input: &GaInput) -> Self::Expected {
        cpu::children(&input.parents, &input.fitness, &input.draws, cfg.children, cfg.genes, cfg.threshold())
    }
    /// Children sorted by trip count (stable counting sort, L + 1 classes).
    fn redirect(cfg: &GaConfig, input: &GaInput, _: &Self::Expected) -> Result<Vec<u32>> {
        remap::redirect_index_of(&trips(cfg, input), (cfg.genes + 1) as usize)
    }
    fn prepare(gpu: &Gpu, cfg: &GaConfig, input: &GaInput, options: RunOptions) -> Result<Prepared> {
        Prepared::new(gpu, cfg, input, options)
    }
    /// Genes and fitness, exactly.
    fn check(_: &GaConfig, expected: &Self::Expected, outputs: &[Vec<u8>]) -> Check {
        let g = [output_as::<u32>(outputs, 0), output_as::<u32>(outputs, 1)].concat();
        Check::exact(&g, &[expected.0.as_slice(), &expected.1].concat())
    }
    /// Both sites; thread t makes child `order[t]`.
    fn emulate(cfg: &GaConfig, input: &GaInput, _: &Self::Expected, order: Option<&[u32]>, width: u32) -> Result<Divergence> {
        let trips = remap::in_order(&trips(cfg, input), order);
        let crossed: Vec<u32> = trips.iter().map(|&t| (t > 0) as u32).collect();
        divergence::join_sites(vec![divergence::emulate_paths(&crossed, 1, width)?, divergence::emulate_loops(&trips, width)?])
    }
    fn throughput(cfg: &GaConfig, median_seconds: f64) -> Throughput {
        Throughput { value: cfg.children as f64 / median_seconds * 1e-6, unit: "M children/s".into() }
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn extra(_: &Gpu, _: &GaConfig, _: &GaInput, expected: &Self::Expected, _: &Prepared, _: &Protocol) -> Result<serde_json::Value> {
        Ok(serde_json::json!({ "best_fitness": expected.1.iter().copied().max().unwrap_or(0) }))
    }
}

/// The combined class of each child: its crossover trip count (0 = no crossover).
pub fn trips(cfg: &GaConfig, input: &GaInput) -> Vec<u32> {
    (0..cfg.children).map(|c| cpu::trips(&input.draws, c, cfg.genes, cfg.threshold())).collect()
}

/// Uploaded population and the bound generation kernel, ready to run repeatedly.
#[derive(Debug)]
pub struct Prepared {
    run: BoundKernel,
    children: GpuBuffer<u32>,
    fitness: GpuBuffer<u32>,
    _keep: Vec<GpuBuffer<u32>>,
    _params: GpuBuffer<registry::gafort::children::Params>,
}

impl Prepared {
    /// Uploads `input` and binds the kernel (with probe buffers when `options` ask); Err when `cfg` is invalid or a buffer exceeds the device's limits.
    pub fn new(gpu: &Gpu, cfg: &GaConfig, input: &GaInput, options: RunOptions) -> Result<Prepared> {
        cfg.validate()?;
        let (p, l) = (cfg.children, cfg.genes as usize);
        if input.parents.len() != p * l || input.fitness.len() != p || input.draws.len() != 8 * p {
            return Err(Error::invalid("gafort input", format!("arrays for {p} members of {l} genes")));
        }
        let parents = gpu.buffer("parents", &input.parents, BufferKind::Storage)?;
        let pfit = gpu.buffer("parent fitness", &input.fitness, BufferKind::Storage)?;
        let draws = gpu.buffer("draws", &input.draws, BufferKind::Storage)?;
        let children = gpu.buffer_zeroed::<u32>("children", p * l, BufferKind::Storage)?;
        let fitness = gpu.buffer_zeroed::<u32>("child fitness", p, BufferKind::Storage)?;
        let params = registry::gafort::children::Params { population: p as u32, genes: l as u32, threshold: cfg.threshold(), pad: 0 };
        let params = gpu.buffer("params", &[params], BufferKind::Uniform)?;
        use registry::gafort::children::binding as slot;
        let slots: [(u32, &dyn crate::gpu::Bind); 6] = [
            (slot::PARENTS, &parents),
            (slot::PARENT_FITNESS, &pfit),
            (slot::DRAWS, &draws),
            (slot::CHILDREN, &children),
            (slot::CHILD_FITNESS, &fitness),
            (slot::PARAMS, &params),
        ];
        let run = BoundKernel::new(gpu, registry::gafort::children::MAIN, &options, p, p, SITES, &slots)?;
        Ok(Prepared { run, children, fitness, _keep: vec![parents, pfit, draws], _params: params })
    }

    /// (children genes gene-major, child fitness).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn results(&self, gpu: &Gpu) -> Result<(Vec<u32>, Vec<u32>)> {
        Ok((gpu.read(&self.children)?, gpu.read(&self.fitness)?))
    }
}

impl PreparedRun for Prepared {
    fn steps(&self) -> Vec<Step<'_>> {
        vec![self.run.step()]
    }
    fn outputs(&self) -> Vec<(&wgpu::Buffer, u64)> {
        vec![(&self.children.buffer, self.children.bytes()), (&self.fitness.buffer, self.fitness.bytes())]
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn divergence(&self, gpu: &Gpu) -> Result<Option<Divergence>> {
        self.run.divergence(gpu)
    }
}
