//! Use case 1, CPU-GPU synchronization (`shaders/pt/sync.wgsl`).

use super::{check_n, cpu, Case};
use crate::error::{Error, Result};
use crate::harness::named;
use crate::pt::Tier;
use crate::rng::Rng;
use serde::{Deserialize, Serialize};
#[cfg(not(target_arch = "wasm32"))]
use {
    super::{wall, Prepared},
    crate::gpu::shader::registry,
    crate::gpu::{Bind, BufferKind, Gpu, GpuBuffer, Kernel, Step, Timing},
    crate::pt::{Control, Plan, Runtime, Status},
    std::sync::Arc,
    web_time::Instant,
};

/// What the consumer does per item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// Compute-intensive: multiply-adds only.
    Ci,
    /// Compute and memory: a strided load with every multiply-add.
    Cmi,
}

named!(Work { Ci => "ci", Cmi => "cmi" });

/// Parameters of the CPU-GPU synchronization case.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SyncConfig {
    /// Producer inputs.
    pub n: usize,
    /// Fraction of inputs the producer emits.
    pub emit: f64,
    /// Multiply-adds per item.
    pub fmas: u32,
    /// Compute only, or compute with strided loads.
    pub work: Work,
    /// Stride (words) of the CMI loads.
    pub stride: u32,
    /// Seed of the producer inputs and the loaded data.
    pub seed: u64,
}

impl Default for SyncConfig {
    fn default() -> Self {
        SyncConfig { n: 1 << 20, emit: 0.5, fmas: 64, work: Work::Ci, stride: 4099, seed: 1 }
    }
}

impl SyncConfig {
    /// Errors on a value the case cannot run, naming it: `n` 1..=2^31 - 1, `emit` 0..=1.
    pub fn validate(&self) -> Result<()> {
        check_n("n", self.n, u32::MAX as usize / 2)?;
        if !(0.0..=1.0).contains(&self.emit) {
            return Err(Error::invalid("emit", format!("{} (use 0..=1)", self.emit)));
        }
        Ok(())
    }
}

const DATA_WORDS: usize = 1 << 16;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    threshold: u32,
    fmas: u32,
    mode: u32,
    mul: u32,
    add: u32,
    stride: u32,
    data_mask: u32,
}

/// The CPU-GPU synchronization case with its generated inputs.
#[derive(Debug)]
pub struct SyncCase {
    /// Its parameters.
    pub cfg: SyncConfig,
    input: Vec<u32>,
    data: Vec<u32>,
}

impl SyncCase {
    /// The tiers this case has.
    pub const TIERS: &'static [Tier] = &[Tier::Multi, Tier::NonBlocking, Tier::Blocking];

    /// Checks `cfg` (`n` in range, `emit` in 0..=1) and generates the inputs.
    pub fn new(cfg: SyncConfig) -> Result<SyncCase> {
        cfg.validate()?;
        let mut rng = Rng::new(cfg.seed);
        let input = rng.vec_u32(cfg.n);
        let data = rng.vec_u32(DATA_WORDS);
        Ok(SyncCase { cfg, input, data })
    }

    fn threshold(&self) -> u32 {
        (self.cfg.emit * 4_294_967_295.0).round() as u32
    }

    fn mode(&self) -> u32 {
        match self.cfg.work {
            Work::Ci => 0,
            Work::Cmi => 1,
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
struct SyncRun {
    variant: &'static str,
    produce: Arc<Kernel>,
    consume: Arc<Kernel>,
    args_kernel: Arc<Kernel>,
    bind_produce: wgpu::BindGroup,
    bind_consume: wgpu::BindGroup,
    bind_args: wgpu::BindGroup,
    hdr: GpuBuffer<u32>,
    args: GpuBuffer<u32>,
    results: GpuBuffer<u32>,
    control: Control,
    n: usize,
    launch: u32,
    _keep: Vec<GpuBuffer<u32>>,
    _params: GpuBuffer<Params>,
}

#[cfg(not(target_arch = "wasm32"))]
impl Prepared for SyncRun {
    fn once(&self, gpu: &Gpu) -> Result<Timing> {
        let grid = gpu.grid(self.n as u64, 256)?;
        let clears = [Step::clear(&self.hdr), Step::clear(&self.results), self.control.reset()];
        let t0 = Instant::now();
        match self.variant {
            "readback" => {
                let mut steps: Vec<Step> = clears.into_iter().collect();
                steps.push(Step::dispatch(&self.produce, &self.bind_produce, grid));
                gpu.run(&steps, false)?;
                let count = gpu.read(&self.hdr)?[0];
                let grid = gpu.grid(count.max(1) as u64, 256)?;
                gpu.run(&[Step::dispatch(&self.consume, &self.bind_consume, grid)], false)?;
            }
            "indirect" => {
                let mut steps: Vec<Step> = clears.into_iter().collect();
                steps.push(Step::dispatch(&self.produce, &self.bind_produce, grid));
                steps.push(Step::dispatch(&self.args_kernel, &self.bind_args, [1, 1, 1]));
                steps.push(Step::DispatchIndirect { kernel: &self.consume, bind: &self.bind_consume, args: &self.args.buffer, offset: 0 });
                gpu.run(&steps, false)?;
            }
            "persistent" => {
                let mut steps: Vec<Step> = clears.into_iter().collect();
                steps.push(Step::dispatch(&self.produce, &self.bind_produce, grid));
                steps.push(Step::dispatch(&self.consume, &self.bind_consume, [self.launch, 1, 1]));
                gpu.run(&steps, false)?;
            }
            _ => {
                let mut steps: Vec<Step> = clears.into_iter().collect();
                steps.push(Step::dispatch(&self.consume, &self.bind_consume, [self.launch, 1, 1]));
                gpu.run(&steps, false)?;
            }
        }
        Ok(wall(t0.elapsed().as_secs_f64()))
    }

    fn status(&self, gpu: &Gpu) -> Result<Option<Status>> {
        Ok(if self.variant == "fused" || self.variant == "persistent" { Some(self.control.status(gpu)?) } else { None })
    }

    fn output(&self, gpu: &Gpu) -> Result<Vec<u32>> {
        gpu.read(&self.results)
    }
}

impl Case for SyncCase {
    fn name(&self) -> &'static str {
        "sync"
    }

    fn supported(&self) -> &'static [Tier] {
        Self::TIERS
    }

    fn variants(&self, tier: Tier) -> &'static [&'static str] {
        match tier {
            Tier::Multi => &["readback", "indirect"],
            Tier::NonBlocking => &["persistent"],
            Tier::Blocking => &["fused"],
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn prepare<'a>(&'a self, gpu: &Gpu, rt: &Runtime, plan: &Plan, variant: &str, _retry: u32) -> Result<Box<dyn Prepared + 'a>> {
        let variant: &'static str = self.variants(plan.used).iter().find(|v| **v == variant).copied().unwrap_or("readback");
        let produce = gpu.kernel(registry::pt::sync::PRODUCE, &[])?;
        let consume = gpu.kernel(
            match variant {
                "persistent" => registry::pt::sync::CONSUME_PT,
                "fused" => registry::pt::sync::FUSED,
                _ => registry::pt::sync::CONSUME,
            },
            &[],
        )?;
        let args_kernel = gpu.kernel(registry::pt::sync::INDIRECT_ARGS, &[])?;
        let n = self.cfg.n;
        let input = gpu.buffer("sync input", &self.input, BufferKind::Storage)?;
        let items = gpu.buffer_zeroed::<u32>("sync items", n, BufferKind::Storage)?;
        let hdr = gpu.buffer_zeroed::<u32>("sync header", 4, BufferKind::Storage)?;
        let args = gpu.buffer_zeroed::<u32>("sync args", 4, BufferKind::Indirect)?;
        let results = gpu.buffer_zeroed::<u32>("sync results", n, BufferKind::Storage)?;
        let data = gpu.buffer("sync data", &self.data, BufferKind::Storage)?;
        let params = gpu.buffer(
            "sync params",
            &[Params {
                n: n as u32,
                threshold: self.threshold(),
                fmas: self.cfg.fmas,
                mode: self.mode(),
                mul: cpu::MUL,
                add: cpu::ADD,
                stride: self.cfg.stride,
                data_mask: DATA_WORDS as u32 - 1,
            }],
            BufferKind::Uniform,
        )?;
        let launch = plan.launch.max(1);
        let control = Control::new(gpu, rt.config(gpu, plan.used, launch))?;
        use crate::gpu::shader::registry::pt::sync::binding as slot;
        let mut slots: Vec<(u32, &dyn Bind)> = vec![
            (slot::INPUT, &input),
            (slot::ITEMS, &items),
            (slot::HDR, &hdr),
            (slot::ARGS, &args),
            (slot::RESULTS, &results),
            (slot::DATA, &data),
            (slot::PARAMS, &params),
        ];
        slots.extend(control.slots());
        let bind_produce = produce.bind_at(gpu, &slots)?;
        let bind_consume = consume.bind_at(gpu, &slots)?;
        let bind_args = args_kernel.bind_at(gpu, &slots)?;
        Ok(Box::new(SyncRun {
            variant,
            produce,
            consume,
            args_kernel,
            bind_produce,
            bind_consume,
            bind_args,
            hdr,
            args,
            results,
            control,
            n,
            launch,
            _keep: vec![input, items, data],
            _params: params,
        }))
    }

    fn reference(&self) -> Vec<u32> {
        cpu::sync(&self.input, self.threshold(), self.cfg.fmas, self.mode(), &self.data, self.cfg.stride)
    }

    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).unwrap_or_default()
    }

    fn seed(&self) -> u64 {
        self.cfg.seed
    }

    fn work(&self) -> (f64, &'static str) {
        (self.cfg.n as f64 * 1e-6, "M inputs/s")
    }
}
