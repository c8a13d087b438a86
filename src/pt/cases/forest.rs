//! Use case 2, load balancing / irregular parallelism: forest expansion
//! (`shaders/pt/forest.wgsl`).

use super::{cpu, Case};
use crate::error::{Error, Result};
use crate::harness::named;
use crate::pt::Tier;
use serde::{Deserialize, Serialize};
#[cfg(not(target_arch = "wasm32"))]
use {
    super::Prepared,
    crate::gpu::shader::registry,
    crate::gpu::{Bind, BufferKind, Gpu, GpuBuffer, Kernel, Step, Timing},
    crate::pt::{self, queue_word, Control, Plan, Runtime, Status},
    std::sync::Arc,
};

/// How the forest grows from level to level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Every item has two children until the depth: a complete binary tree per input.
    Complete,
    /// The second half of each level has two children, the first half none.
    Tilted,
}

named!(Shape { Complete => "complete", Tilted => "tilted" });

/// Parameters of the forest-expansion case.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ForestConfig {
    /// Complete or tilted expansion.
    pub shape: Shape,
    /// Initial items (roots).
    pub items: u32,
    /// Levels (the roots are level 0); at most 1000.
    pub depth: u32,
    /// Multiply-adds per invocation per item.
    pub fmas: u32,
    /// Ring queue capacity of the blocking tier (None: twice the widest level).
    pub capacity: Option<u32>,
    /// Recorded with the results; the items are derived from their indices, so it changes nothing.
    pub seed: u64,
}

impl Default for ForestConfig {
    fn default() -> Self {
        ForestConfig { shape: Shape::Tilted, items: 128, depth: 50, fmas: 1000, capacity: None, seed: 1 }
    }
}

const K_LIMIT: u64 = 1 << 22;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n0: u32,
    depth: u32,
    tilted: u32,
    fmas: u32,
    mul: u32,
    add: u32,
    width: u32,
    pad: u32,
}

/// The forest-expansion case, validated and ready to prepare at any of [`ForestCase::TIERS`].
#[derive(Debug)]
pub struct ForestCase {
    /// Its parameters.
    pub cfg: ForestConfig,
    #[cfg_attr(target_arch = "wasm32", expect(dead_code, reason = "sizes the kernels of the native preparation"))]
    width: u32,
}

impl ForestCase {
    /// The tiers this case has.
    pub const TIERS: &'static [Tier] = &[Tier::Multi, Tier::NonBlocking, Tier::Blocking];

    /// Checks `cfg` ([`ForestConfig::validate`]).
    pub fn new(cfg: ForestConfig) -> Result<ForestCase> {
        let width = cfg.validate()?;
        Ok(ForestCase { cfg, width })
    }

    fn tilted(&self) -> bool {
        self.cfg.shape == Shape::Tilted
    }

    /// Total items over all levels.
    pub fn total_items(&self) -> u64 {
        (0..self.cfg.depth).map(|l| cpu::forest_level_size(self.cfg.items, l, self.tilted())).sum()
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn capacity(&self, retry: u32) -> u32 {
        let base = self.cfg.capacity.unwrap_or(2 * self.width).max(1) as u64;
        (base << (2 * retry)).min(u32::MAX as u64 / 2) as u32
    }
}

impl ForestConfig {
    /// Errors on a value the case cannot run, naming it: at least one item, depth 1..=1000,
    /// and every level's width below 2^22 ([`crate::Error::Limit`] otherwise). Gives the
    /// widest level's width.
    pub fn validate(&self) -> Result<u32> {
        if self.items == 0 {
            return Err(Error::invalid("items", "0 (use 1 or more initial items)"));
        }
        if self.depth == 0 || self.depth > 1000 {
            return Err(Error::invalid("depth", format!("{} (use 1..=1000)", self.depth)));
        }
        let tilted = self.shape == Shape::Tilted;
        let width = (0..self.depth).map(|l| cpu::forest_level_size(self.items, l, tilted)).max().unwrap_or(1);
        if width > K_LIMIT || (!tilted && self.depth > 23) {
            return Err(Error::Limit {
                what: format!("forest level width ({} items, depth {})", self.items, self.depth),
                requested: width,
                limit: K_LIMIT,
                hint: "items are packed as level << 22 | k: use fewer items or a smaller depth".into(),
            });
        }
        Ok(width as u32)
    }
}

#[cfg(not(target_arch = "wasm32"))]
struct ForestRun {
    tier: Tier,
    args_kernel: Arc<Kernel>,
    level: Arc<Kernel>,
    bind_args: wgpu::BindGroup,
    bind_level: wgpu::BindGroup,
    items: GpuBuffer<u32>,
    items_init: GpuBuffer<u32>,
    counts: GpuBuffer<u32>,
    counts_init: GpuBuffer<u32>,
    sums: GpuBuffer<u32>,
    args: GpuBuffer<u32>,
    queue: GpuBuffer<u32>,
    queue_init: GpuBuffer<u32>,
    control: Control,
    depth: u32,
    launch: u32,
    _params: GpuBuffer<Params>,
}

#[cfg(not(target_arch = "wasm32"))]
impl Prepared for ForestRun {
    fn once(&self, gpu: &Gpu) -> Result<Timing> {
        let mut steps = vec![Step::clear(&self.sums), self.control.reset()];
        match self.tier {
            Tier::Blocking => {
                steps.push(Step::copy(&self.queue_init, &self.queue, self.queue.bytes()));
                steps.push(Step::dispatch(&self.level, &self.bind_level, [self.launch, 1, 1]));
            }
            _ => {
                steps.push(Step::copy(&self.counts_init, &self.counts, self.counts.bytes()));
                steps.push(Step::copy(&self.items_init, &self.items, self.items_init.bytes()));
                for _ in 0..self.depth {
                    steps.push(Step::dispatch(&self.args_kernel, &self.bind_args, [1, 1, 1]));
                    if self.tier == Tier::Multi {
                        steps.push(Step::DispatchIndirect {
                            kernel: &self.level,
                            bind: &self.bind_level,
                            args: &self.args.buffer,
                            offset: 0,
                        });
                    } else {
                        steps.push(Step::dispatch(&self.level, &self.bind_level, [self.launch, 1, 1]));
                    }
                }
            }
        }
        gpu.run(&steps, true)
    }

    fn status(&self, gpu: &Gpu) -> Result<Option<Status>> {
        Ok(if self.tier != Tier::Multi { Some(self.control.status(gpu)?) } else { None })
    }

    fn output(&self, gpu: &Gpu) -> Result<Vec<u32>> {
        gpu.read(&self.sums)
    }
}

impl Case for ForestCase {
    fn name(&self) -> &'static str {
        "forest"
    }

    fn supported(&self) -> &'static [Tier] {
        Self::TIERS
    }

    fn variants(&self, tier: Tier) -> &'static [&'static str] {
        match tier {
            Tier::Multi => &["levels-indirect"],
            Tier::NonBlocking => &["levels-persistent"],
            Tier::Blocking => &["ring-queue"],
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn prepare<'a>(&'a self, gpu: &Gpu, rt: &Runtime, plan: &Plan, _variant: &str, retry: u32) -> Result<Box<dyn Prepared + 'a>> {
        let tier = plan.used;
        let args_kernel = gpu.kernel(registry::pt::forest::LEVEL_ARGS, &[])?;
        let level = gpu.kernel(
            match tier {
                Tier::Multi => registry::pt::forest::LEVEL,
                Tier::NonBlocking => registry::pt::forest::LEVEL_PT,
                Tier::Blocking => registry::pt::forest::EXPAND_PT,
            },
            &[],
        )?;
        let n0 = self.cfg.items;
        let depth = self.cfg.depth;
        let blocking = tier == Tier::Blocking;
        let width = self.width as usize;
        let roots: Vec<u32> = (0..n0).collect();
        let (items_init, items) = if blocking {
            (gpu.buffer("forest roots", &[0u32], BufferKind::Storage)?, gpu.buffer_zeroed::<u32>("forest items", 1, BufferKind::Storage)?)
        } else {
            (
                gpu.buffer("forest roots", &roots, BufferKind::Storage)?,
                gpu.buffer_zeroed::<u32>("forest items", 2 * width, BufferKind::Storage)?,
            )
        };
        let mut counts0 = vec![0u32; 2 + 2 * depth as usize];
        counts0[0] = u32::MAX;
        counts0[2] = n0;
        let counts_init = gpu.buffer("forest counts init", &counts0, BufferKind::Storage)?;
        let counts = gpu.buffer_zeroed::<u32>("forest counts", counts0.len(), BufferKind::Storage)?;
        let sums = gpu.buffer_zeroed::<u32>("forest sums", 2 * depth as usize, BufferKind::Storage)?;
        let args = gpu.buffer_zeroed::<u32>("forest args", 4, BufferKind::Indirect)?;
        let capacity = if blocking { self.capacity(retry).max(n0) } else { 1 };
        let mut q = vec![0u32; if blocking { pt::queue_words(capacity) } else { pt::queue_word::SLOTS + 1 }];
        if blocking {
            q[queue_word::TAIL] = n0;
            q[queue_word::PENDING] = n0;
            for k in 0..n0 as usize {
                q[queue_word::SLOTS + k] = k as u32 + 1; // level 0: item = k, stored + 1
            }
        }
        let queue_init = gpu.buffer("forest queue init", &q, BufferKind::Storage)?;
        let queue = gpu.buffer_zeroed::<u32>("forest queue", q.len(), BufferKind::Storage)?;
        let params = gpu.buffer(
            "forest params",
            &[Params {
                n0,
                depth,
                tilted: self.tilted() as u32,
                fmas: self.cfg.fmas,
                mul: cpu::MUL,
                add: cpu::ADD,
                width: self.width,
                pad: 0,
            }],
            BufferKind::Uniform,
        )?;
        let launch = plan.launch.max(1);
        let mut config = rt.config(gpu, tier, launch);
        config.capacity = capacity;
        let control = Control::new(gpu, config)?;
        use crate::gpu::shader::registry::pt::forest::binding as slot;
        let mut slots: Vec<(u32, &dyn Bind)> = vec![
            (slot::ITEMS, &items),
            (slot::COUNTS, &counts),
            (slot::SUMS, &sums),
            (slot::ARGS, &args),
            (slot::PARAMS, &params),
            (pt::QUEUE_BINDING, &queue),
        ];
        slots.extend(control.slots());
        let bind_args = args_kernel.bind_at(gpu, &slots)?;
        let bind_level = level.bind_at(gpu, &slots)?;
        Ok(Box::new(ForestRun {
            tier,
            args_kernel,
            level,
            bind_args,
            bind_level,
            items,
            items_init,
            counts,
            counts_init,
            sums,
            args,
            queue,
            queue_init,
            control,
            depth,
            launch,
            _params: params,
        }))
    }

    fn reference(&self) -> Vec<u32> {
        cpu::forest(self.cfg.items, self.cfg.depth, self.tilted(), self.cfg.fmas)
    }

    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).unwrap_or_default()
    }

    fn seed(&self) -> u64 {
        self.cfg.seed
    }

    fn work(&self) -> (f64, &'static str) {
        (self.total_items() as f64 * 1e-6, "M items/s")
    }
}
