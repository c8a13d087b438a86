//! Use case 3, producer-consumer locality: global sum reduction and the two-stage synthetic
//! workload (`shaders/pt/prodcons.wgsl`).

use super::{check_n, cpu, Case};
use crate::error::Result;
use crate::harness::named;
use crate::pt::Tier;
use crate::rng::Rng;
use serde::{Deserialize, Serialize};
#[cfg(not(target_arch = "wasm32"))]
use {
    super::Prepared,
    crate::gpu::shader::{registry, Entry},
    crate::gpu::{Bind, BufferKind, Gpu, GpuBuffer, Kernel, Step, Timing},
    crate::pt::{Control, Plan, Runtime, Status},
    std::sync::Arc,
};

/// Which producer-consumer workload runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// Global sum of n values.
    Reduce,
    /// Stage 1 on every item, stage 2 on `pass` of every 256.
    TwoStage,
}

named!(Workload { Reduce => "reduce", TwoStage => "two-stage" });

/// Parameters of the producer-consumer case.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProdConsConfig {
    /// Reduction or two-stage pipeline.
    pub workload: Workload,
    /// Input items.
    pub n: usize,
    /// Two-stage: multiply-adds per stage.
    pub fmas: u32,
    /// Two-stage: items of every 256 passed to stage 2 (0..=256).
    pub pass: u32,
    /// PT reduce: most workgroups (the paper uses at most 256).
    pub max_workgroups: u32,
    /// Seed of the input values.
    pub seed: u64,
}

impl Default for ProdConsConfig {
    fn default() -> Self {
        ProdConsConfig { workload: Workload::Reduce, n: 1 << 22, fmas: 100, pass: 128, max_workgroups: 256, seed: 1 }
    }
}

impl ProdConsConfig {
    /// Errors on a value the case cannot run, naming it: `n` 1..=2^31 - 1, `pass` 0..=256.
    pub fn validate(&self) -> Result<()> {
        check_n("n", self.n, u32::MAX as usize / 2)?;
        if self.pass > 256 {
            return Err(crate::Error::invalid("pass", format!("{} (items per 256: use 0..=256)", self.pass)));
        }
        Ok(())
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    fmas: u32,
    pass_per_256: u32,
    mul: u32,
    add: u32,
    final_in_kernel: u32,
    parts: u32,
    pad: u32,
}

/// The producer-consumer case with its generated inputs.
#[derive(Debug)]
pub struct ProdConsCase {
    /// Its parameters.
    pub cfg: ProdConsConfig,
    input: Vec<u32>,
}

impl ProdConsCase {
    /// The tiers a workload has.
    pub fn tiers(workload: Workload) -> &'static [Tier] {
        match workload {
            Workload::Reduce => &[Tier::Multi, Tier::NonBlocking, Tier::Blocking],
            Workload::TwoStage => &[Tier::Multi, Tier::NonBlocking],
        }
    }

    /// Checks `cfg` (`n` in range, `pass` at most 256) and generates the inputs.
    pub fn new(cfg: ProdConsConfig) -> Result<ProdConsCase> {
        cfg.validate()?;
        let input = Rng::new(cfg.seed).vec_u32(cfg.n);
        Ok(ProdConsCase { cfg, input })
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn params(&self, n: usize, final_in_kernel: bool, parts: u32) -> Params {
        Params {
            n: n as u32,
            fmas: self.cfg.fmas,
            pass_per_256: self.cfg.pass,
            mul: cpu::MUL,
            add: cpu::ADD,
            final_in_kernel: final_in_kernel as u32,
            parts,
            pad: 0,
        }
    }
}

/// One dispatch of a prepared run.
#[cfg(not(target_arch = "wasm32"))]
struct Launch {
    kernel: Arc<Kernel>,
    bind: wgpu::BindGroup,
    grid: Option<[u32; 3]>,
}

#[cfg(not(target_arch = "wasm32"))]
struct ProdConsRun {
    launches: Vec<Launch>,
    clears: Vec<wgpu::Buffer>,
    args: GpuBuffer<u32>,
    result: GpuBuffer<u32>,
    /// Read only the first word (reduce).
    scalar: bool,
    control: Option<Control>,
    _keep: Vec<GpuBuffer<u32>>,
    _params: Vec<GpuBuffer<Params>>,
}

#[cfg(not(target_arch = "wasm32"))]
impl Prepared for ProdConsRun {
    fn once(&self, gpu: &Gpu) -> Result<Timing> {
        let mut steps: Vec<Step> = self.clears.iter().map(|b| Step::clear(b)).collect();
        if let Some(c) = &self.control {
            steps.push(c.reset());
        }
        for l in &self.launches {
            steps.push(match l.grid {
                Some(g) => Step::dispatch(&l.kernel, &l.bind, g),
                None => Step::DispatchIndirect { kernel: &l.kernel, bind: &l.bind, args: &self.args.buffer, offset: 0 },
            });
        }
        gpu.run(&steps, true)
    }

    fn status(&self, gpu: &Gpu) -> Result<Option<Status>> {
        self.control.as_ref().map(|c| c.status(gpu)).transpose()
    }

    fn output(&self, gpu: &Gpu) -> Result<Vec<u32>> {
        let v = gpu.read(&self.result)?;
        Ok(if self.scalar { v[..1].to_vec() } else { v })
    }
}

impl Case for ProdConsCase {
    fn name(&self) -> &'static str {
        match self.cfg.workload {
            Workload::Reduce => "prodcons-reduce",
            Workload::TwoStage => "prodcons-two-stage",
        }
    }

    fn supported(&self) -> &'static [Tier] {
        Self::tiers(self.cfg.workload)
    }

    fn variants(&self, tier: Tier) -> &'static [&'static str] {
        match (self.cfg.workload, tier) {
            (Workload::Reduce, Tier::Multi) => &["multi-kernel"],
            (Workload::Reduce, Tier::NonBlocking) => &["persistent+final-kernel"],
            (Workload::Reduce, Tier::Blocking) => &["persistent-barrier"],
            (Workload::TwoStage, Tier::Multi) => &["single-kernel", "two-kernel"],
            (Workload::TwoStage, _) => &["persistent-shared-queue"],
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn prepare<'a>(&'a self, gpu: &Gpu, rt: &Runtime, plan: &Plan, variant: &str, _retry: u32) -> Result<Box<dyn Prepared + 'a>> {
        let n = self.cfg.n;
        let tier = plan.used;
        let input = gpu.buffer("prodcons input", &self.input, BufferKind::Storage)?;
        let args = gpu.buffer_zeroed::<u32>("prodcons args", 4, BufferKind::Indirect)?;
        let hdr = gpu.buffer_zeroed::<u32>("prodcons header", 4, BufferKind::Storage)?;
        let launch = plan.launch.max(1).min(if self.cfg.workload == Workload::Reduce { self.cfg.max_workgroups.max(1) } else { u32::MAX });
        let control = (tier != Tier::Multi).then(|| Control::new(gpu, rt.config(gpu, tier, launch))).transpose()?;
        let mut launches = Vec::new();
        let mut keep = Vec::new();
        let mut params = Vec::new();
        let bind = |kernel: &Arc<Kernel>, bufs: &[(u32, &dyn Bind)]| -> Result<wgpu::BindGroup> {
            let mut slots = bufs.to_vec();
            if let Some(c) = &control {
                slots.extend(c.slots());
            }
            kernel.bind_at(gpu, &slots)
        };
        use registry::pt::prodcons::binding as slot;
        let dummy = gpu.buffer_zeroed::<u32>("prodcons unused", 4, BufferKind::Storage)?;
        let (result, scalar, clears) = match self.cfg.workload {
            Workload::Reduce if tier == Tier::Multi => {
                let k = gpu.kernel(registry::pt::prodcons::REDUCE_BLOCK, &[])?;
                let scratch = n.div_ceil(256).max(1);
                let bufs = [
                    gpu.buffer_zeroed::<u32>("reduce scratch a", scratch, BufferKind::Storage)?,
                    gpu.buffer_zeroed::<u32>("reduce scratch b", scratch, BufferKind::Storage)?,
                ];
                let mut len = n;
                let mut pass = 0;
                loop {
                    let p = gpu.buffer("reduce params", &[self.params(len, false, 0)], BufferKind::Uniform)?;
                    let src: &dyn Bind = if pass == 0 { &input } else { &bufs[(pass - 1) % 2] };
                    let b = bind(
                        &k,
                        &[
                            (slot::INPUT, src),
                            (slot::OUT, &bufs[pass % 2]),
                            (slot::PARTIALS, &dummy),
                            (slot::PAIRS, &dummy),
                            (slot::HDR, &hdr),
                            (slot::ARGS, &args),
                            (slot::PARAMS, &p),
                        ],
                    )?;
                    launches.push(Launch { kernel: k.clone(), bind: b, grid: Some(gpu.grid(len as u64, 256)?) });
                    params.push(p);
                    len = len.div_ceil(256);
                    pass += 1;
                    if len == 1 {
                        break;
                    }
                }
                let [a, b] = bufs;
                let (result, other) = if (pass - 1) % 2 == 0 { (a, b) } else { (b, a) };
                keep.push(other);
                (result, true, Vec::new())
            }
            Workload::Reduce => {
                let k = gpu.kernel(registry::pt::prodcons::REDUCE_PT, &[])?;
                let out = gpu.buffer_zeroed::<u32>("reduce out", 4, BufferKind::Storage)?;
                let partials = gpu.buffer_zeroed::<u32>("reduce partials", launch as usize, BufferKind::Storage)?;
                let blocking = tier == Tier::Blocking;
                let p = gpu.buffer("reduce params", &[self.params(n, blocking, launch)], BufferKind::Uniform)?;
                let slots: [(u32, &dyn Bind); 7] = [
                    (slot::INPUT, &input),
                    (slot::OUT, &out),
                    (slot::PARTIALS, &partials),
                    (slot::PAIRS, &dummy),
                    (slot::HDR, &hdr),
                    (slot::ARGS, &args),
                    (slot::PARAMS, &p),
                ];
                launches.push(Launch { kernel: k.clone(), bind: bind(&k, &slots)?, grid: Some([launch, 1, 1]) });
                if !blocking {
                    let f = gpu.kernel(registry::pt::prodcons::REDUCE_FINAL, &[])?;
                    launches.push(Launch { kernel: f.clone(), bind: bind(&f, &slots)?, grid: Some([1, 1, 1]) });
                }
                params.push(p);
                keep.push(partials);
                (out, true, Vec::new())
            }
            Workload::TwoStage => {
                let out = gpu.buffer_zeroed::<u32>("two-stage out", n, BufferKind::Storage)?;
                let pairs_len = if variant == "two-kernel" && tier == Tier::Multi { 2 * n } else { 1 };
                let pairs = gpu.buffer_zeroed::<u32>("two-stage pairs", pairs_len, BufferKind::Storage)?;
                let p = gpu.buffer("two-stage params", &[self.params(n, false, 0)], BufferKind::Uniform)?;
                let slots: [(u32, &dyn Bind); 7] = [
                    (slot::INPUT, &input),
                    (slot::OUT, &out),
                    (slot::PARTIALS, &dummy),
                    (slot::PAIRS, &pairs),
                    (slot::HDR, &hdr),
                    (slot::ARGS, &args),
                    (slot::PARAMS, &p),
                ];
                let grid = gpu.grid(n as u64, 256)?;
                let mut add = |entry: Entry, grid: Option<[u32; 3]>| -> Result<()> {
                    let k = gpu.kernel(entry, &[])?;
                    launches.push(Launch { kernel: k.clone(), bind: bind(&k, &slots)?, grid });
                    Ok(())
                };
                match (tier, variant) {
                    (Tier::Multi, "two-kernel") => {
                        add(registry::pt::prodcons::STAGE_PRODUCE, Some(grid))?;
                        add(registry::pt::prodcons::STAGE_ARGS, Some([1, 1, 1]))?;
                        add(registry::pt::prodcons::STAGE_CONSUME, None)?;
                    }
                    (Tier::Multi, _) => add(registry::pt::prodcons::STAGE_SINGLE, Some(grid))?,
                    _ => add(registry::pt::prodcons::STAGE_PT, Some([launch, 1, 1]))?,
                }
                params.push(p);
                keep.push(pairs);
                let clears = vec![out.buffer.clone()];
                (out, false, clears)
            }
        };
        keep.extend([input, dummy]);
        let mut clears = clears;
        clears.push(hdr.buffer.clone());
        keep.push(hdr);
        Ok(Box::new(ProdConsRun { launches, clears, args, result, scalar, control, _keep: keep, _params: params }))
    }

    fn reference(&self) -> Vec<u32> {
        match self.cfg.workload {
            Workload::Reduce => vec![cpu::reduce(&self.input)],
            Workload::TwoStage => cpu::two_stage(&self.input, self.cfg.fmas, self.cfg.pass),
        }
    }

    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).unwrap_or_default()
    }

    fn seed(&self) -> u64 {
        self.cfg.seed
    }

    fn work(&self) -> (f64, &'static str) {
        (self.cfg.n as f64 * 1e-6, "M items/s")
    }
}
