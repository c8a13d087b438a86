//! Use case 4, global synchronization: kernel relaunch vs an in-dispatch global barrier
//! (`shaders/pt/gsync.wgsl`).

use super::{check_n, cpu, Case};
use crate::error::Result;
use crate::pt::Tier;
use crate::rng::Rng;
use serde::{Deserialize, Serialize};
#[cfg(not(target_arch = "wasm32"))]
use {
    super::Prepared,
    crate::gpu::shader::registry,
    crate::gpu::{Bind, BufferKind, Gpu, GpuBuffer, Kernel, Step, Timing},
    crate::pt::{Control, Plan, Runtime, Status},
    std::sync::Arc,
};

/// Parameters of the global-synchronization case.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GsyncConfig {
    /// Blocks of 256 items (the nonPT kernel's workgroups per phase).
    pub blocks: u32,
    /// Global synchronizations; the work runs in syncs + 1 phases.
    pub syncs: u32,
    /// Multiply-adds per item per phase.
    pub fmas: u32,
    /// Seed of the initial values.
    pub seed: u64,
}

impl Default for GsyncConfig {
    fn default() -> Self {
        GsyncConfig { blocks: 1024, syncs: 100, fmas: 1000, seed: 1 }
    }
}

impl GsyncConfig {
    /// Errors on a value the case cannot run, naming it: `blocks` 1..=2^23 - 1, `syncs` below
    /// 2^32 - 1.
    pub fn validate(&self) -> Result<()> {
        check_n("blocks", self.blocks as usize, (u32::MAX / 512) as usize)?;
        if self.syncs == u32::MAX {
            return Err(crate::Error::invalid(
                "syncs",
                format!("{} (use 0..={}: the work runs in syncs + 1 phases)", self.syncs, u32::MAX - 1),
            ));
        }
        Ok(())
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    fmas: u32,
    phases: u32,
    shift: u32,
    mul: u32,
    add: u32,
    pad: [u32; 2],
}

/// The global-synchronization case with its generated inputs.
#[derive(Debug)]
pub struct GsyncCase {
    /// Its parameters.
    pub cfg: GsyncConfig,
    init: Vec<u32>,
}

impl GsyncCase {
    /// The tiers this case has.
    pub const TIERS: &'static [Tier] = &[Tier::Multi, Tier::Blocking];

    /// Checks `cfg` (blocks in range, `syncs` below `u32::MAX`) and generates the inputs.
    pub fn new(cfg: GsyncConfig) -> Result<GsyncCase> {
        cfg.validate()?;
        let init = Rng::new(cfg.seed).vec_u32(cfg.blocks as usize * 256);
        Ok(GsyncCase { cfg, init })
    }

    /// Work phases: `syncs + 1`.
    pub fn phases(&self) -> u32 {
        self.cfg.syncs + 1
    }

    fn n(&self) -> u32 {
        self.cfg.blocks * 256
    }

    /// The neighbour offset: half the items plus one, so every phase reads other workgroups' data.
    fn shift(&self) -> u32 {
        self.n() / 2 + 1
    }
}

#[cfg(not(target_arch = "wasm32"))]
struct GsyncRun {
    tier: Tier,
    kernel: Arc<Kernel>,
    binds: Vec<wgpu::BindGroup>,
    init: GpuBuffer<u32>,
    a: GpuBuffer<u32>,
    b: GpuBuffer<u32>,
    control: Control,
    phases: u32,
    grid: [u32; 3],
    _params: GpuBuffer<Params>,
}

#[cfg(not(target_arch = "wasm32"))]
impl Prepared for GsyncRun {
    fn once(&self, gpu: &Gpu) -> Result<Timing> {
        let mut steps = vec![Step::copy(&self.init, &self.a, self.a.bytes()), self.control.reset()];
        if self.tier == Tier::Blocking {
            steps.push(Step::dispatch(&self.kernel, &self.binds[0], self.grid));
        } else {
            for s in 0..self.phases {
                steps.push(Step::dispatch(&self.kernel, &self.binds[s as usize % 2], self.grid));
            }
        }
        gpu.run(&steps, true)
    }

    fn status(&self, gpu: &Gpu) -> Result<Option<Status>> {
        Ok(if self.tier == Tier::Blocking { Some(self.control.status(gpu)?) } else { None })
    }

    fn output(&self, gpu: &Gpu) -> Result<Vec<u32>> {
        gpu.read(if self.phases.is_multiple_of(2) { &self.a } else { &self.b })
    }
}

impl Case for GsyncCase {
    fn name(&self) -> &'static str {
        "gsync"
    }

    fn supported(&self) -> &'static [Tier] {
        Self::TIERS
    }

    fn variants(&self, tier: Tier) -> &'static [&'static str] {
        match tier {
            Tier::Blocking => &["barrier"],
            _ => &["relaunch"],
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn prepare<'a>(&'a self, gpu: &Gpu, rt: &Runtime, plan: &Plan, _variant: &str, _retry: u32) -> Result<Box<dyn Prepared + 'a>> {
        let tier = plan.used;
        let blocking = tier == Tier::Blocking;
        let kernel =
            if blocking { gpu.kernel(registry::pt::gsync::PHASES_PT, &[])? } else { gpu.kernel(registry::pt::gsync::PHASE, &["PLAIN"])? };
        let n = self.n() as usize;
        let init = gpu.buffer("gsync init", &self.init, BufferKind::Storage)?;
        let a = gpu.buffer_zeroed::<u32>("gsync a", n, BufferKind::Storage)?;
        let b = gpu.buffer_zeroed::<u32>("gsync b", n, BufferKind::Storage)?;
        let params = gpu.buffer(
            "gsync params",
            &[Params {
                n: n as u32,
                fmas: self.cfg.fmas,
                phases: self.phases(),
                shift: self.shift(),
                mul: cpu::MUL,
                add: cpu::ADD,
                pad: [0; 2],
            }],
            BufferKind::Uniform,
        )?;
        let launch = plan.launch.max(1);
        let control = Control::new(gpu, rt.config(gpu, tier, launch))?;
        let mut binds = Vec::new();
        for (x, y) in [(&a, &b), (&b, &a)] {
            use crate::gpu::shader::registry::pt::gsync::binding as slot;
            let mut slots: Vec<(u32, &dyn Bind)> = vec![(slot::A, x), (slot::B, y), (slot::PARAMS, &params)];
            slots.extend(control.slots());
            binds.push(kernel.bind_at(gpu, &slots)?);
        }
        let grid = if blocking { [launch, 1, 1] } else { gpu.grid(n as u64, 256)? };
        Ok(Box::new(GsyncRun { tier, kernel, binds, init, a, b, control, phases: self.phases(), grid, _params: params }))
    }

    fn reference(&self) -> Vec<u32> {
        cpu::gsync(&self.init, self.cfg.fmas, self.phases(), self.shift())
    }

    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).unwrap_or_default()
    }

    fn seed(&self) -> u64 {
        self.cfg.seed
    }

    fn work(&self) -> (f64, &'static str) {
        (self.phases() as f64 * self.n() as f64 * 1e-6, "M item-phases/s")
    }
}
