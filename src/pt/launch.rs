//! Tier choice, launch sizing and fallback: [`Runtime`] holds the options and the adapter's
//! assessed [`Capability`]; [`Runtime::plan`] picks the tier a run may use and how many
//! workgroups a persistent kernel launches; [`Plan`] records every fallback for the results.

use super::capability::{assess_async, Capability};
use super::status::Status;
use super::{PtConfig, Tier, FLAG_ALL_PARTICIPATE};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;

/// Default bound of every wait loop, in polls.
pub const DEFAULT_SPIN_CAP: u32 = 1 << 22;

/// How persistent-threads runs are bounded, checked and sized.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PtOptions {
    /// Most polls one wait may take before the kernel aborts.
    pub spin_cap: u32,
    /// Discovery grace period (polls without a new arrival before the poll closes). Default:
    /// 32 on GPUs, 2048 on CPU adapters (whose workers start slowly; llvmpipe also caps the
    /// loop iterations of an invocation at 65535 in total, so the grace must stay well below).
    pub grace: Option<u32>,
    /// Workgroups launched by the capability check's discovery (an upper bound on what can be found).
    pub discovery_launch: u32,
    /// Barriers of the capability check's barrier and message-passing test.
    pub capability_iterations: u32,
    /// Workgroups a persistent kernel launches instead of the discovered count (sweeps, tests).
    pub launch: Option<u32>,
    /// TEST ONLY: blocking kernels skip discovery and treat every launched workgroup as a
    /// participant, and the capability verdict is ignored. With a launch larger than what is
    /// co-resident this deadlocks by construction; the bounded waits must then abort.
    pub assume_resident: bool,
}

impl Default for PtOptions {
    fn default() -> Self {
        PtOptions {
            spin_cap: DEFAULT_SPIN_CAP,
            grace: None,
            discovery_launch: 4096,
            capability_iterations: 256,
            launch: None,
            assume_resident: false,
        }
    }
}

impl PtOptions {
    /// Errors on an option no run can use, naming it: `spin_cap` 0, a `grace` of 0 or above
    /// `spin_cap`, a `launch` of 0 workgroups.
    pub fn validate(&self) -> Result<()> {
        if self.launch == Some(0) {
            return Err(Error::invalid("launch", "0 workgroups (use 1 or more)"));
        }
        if self.spin_cap == 0 {
            return Err(Error::invalid("spin_cap", "0 polls (use 1 or more)"));
        }
        if let Some(g) = self.grace {
            if g == 0 || g > self.spin_cap {
                return Err(Error::invalid("grace", format!("{g} polls (use 1..={}, at most `spin_cap`)", self.spin_cap)));
            }
        }
        Ok(())
    }
}

/// The tier a run uses and why.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Plan {
    /// The tier asked for.
    pub requested: Tier,
    /// The tier that runs (lower than `requested` after a fallback).
    pub used: Tier,
    /// Every fallback taken, in order, with its reason.
    pub fallbacks: Vec<String>,
    /// Workgroups a persistent kernel launches (0 for tier 0).
    pub launch: u32,
    /// Tiers the case has, the ones a fallback may move to.
    pub supported: Vec<Tier>,
}

impl Plan {
    /// The next lower supported tier, if any.
    pub fn lower(&self) -> Option<Tier> {
        self.supported.iter().copied().filter(|&t| t < self.used).max()
    }

    /// Moves to the next lower supported tier, recording why; errors when there is none.
    pub fn fall_back(&mut self, why: &str) -> Result<Tier> {
        let to = self.lower().ok_or_else(|| Error::Unsupported {
            what: format!("{} ({why})", self.used.label()),
            adapter: "this adapter".into(),
            hint: "no lower tier is available for this case".into(),
        })?;
        self.fallbacks.push(format!("{} -> {}: {why}", self.used.label(), to.label()));
        self.used = to;
        Ok(to)
    }

    /// One line for the console.
    pub fn message(&self) -> Option<String> {
        (!self.fallbacks.is_empty()).then(|| format!("fell back: {}", self.fallbacks.join("; ")))
    }

    /// The verdict for `Record.extra`.
    pub fn verdict(&self, capability: Option<&Capability>, status: Option<&Status>, retries: u32) -> TierVerdict {
        TierVerdict {
            tier_requested: self.requested.number(),
            tier_used: self.used.number(),
            tier_name: self.used.name().into(),
            fallbacks: self.fallbacks.clone(),
            launch: self.launch,
            retries,
            probe: capability.cloned(),
            status: status.cloned(),
            failed_tiers: Vec::new(),
        }
    }
}

/// What a persistent-threads record keeps in `Record::extra`: the tier it asked for and the
/// one it ran at, and why (written by [`Plan::verdict`], read back with
/// `Record::extra_as::<TierVerdict>()`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TierVerdict {
    /// [`Plan::requested`], as its number.
    pub tier_requested: u8,
    /// [`Plan::used`], as its number.
    pub tier_used: u8,
    /// The name of the tier used.
    pub tier_name: String,
    /// [`Plan::fallbacks`], and those of later runs that fell back onto this record's tier.
    pub fallbacks: Vec<String>,
    /// [`Plan::launch`].
    pub launch: u32,
    /// Reruns with a larger queue after an overflow.
    pub retries: u32,
    /// The adapter's assessed capability, where it was assessed.
    pub probe: Option<Capability>,
    /// The kernel's status word after the run, where the case has one.
    pub status: Option<Status>,
    /// Tiers of later runs that failed and fell back onto this record.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_tiers: Vec<u8>,
}

/// The tier that ran a persistent-threads record: its verdict's tier name, or for a queue
/// record the tier its kind needs (`None` for other records).
pub fn tier_that_ran(record: &crate::harness::Record) -> Option<String> {
    let verdict = record.extra_as::<TierVerdict>().filter(|v| !v.tier_name.is_empty());
    verdict.map(|v| v.tier_name).or_else(|| Some(format!("tier {}", record.extra_as::<super::queue::QueueExtra>()?.tier)))
}

/// Options plus the adapter's capability, assessed once on first use.
#[derive(Debug)]
pub struct Runtime {
    /// The options every run uses.
    pub options: PtOptions,
    capability: Mutex<Option<Capability>>,
}

impl Runtime {
    /// A runtime with `options`; the capability is assessed on first use, not here.
    pub fn new(options: PtOptions) -> Runtime {
        Runtime { options, capability: Mutex::new(None) }
    }

    /// The discovery grace period for `gpu`.
    pub fn grace(&self, gpu: &Gpu) -> u32 {
        self.options.grace.unwrap_or(if gpu.info().device_type == wgpu::DeviceType::Cpu { 2048 } else { 32 })
    }

    /// The adapter's capability (runs [`super::assess`] on first call; blocking, see
    /// [`Runtime::capability_async`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn capability(&self, gpu: &Gpu) -> Result<Capability> {
        crate::gpu::block_on(self.capability_async(gpu))
    }

    /// The adapter's capability: the one this runtime or another with the same check settings
    /// kept on `gpu`, else it awaits [`super::assess_async`] and keeps the result on `gpu`.
    pub async fn capability_async(&self, gpu: &Gpu) -> Result<Capability> {
        if let Some(c) = self.assessed() {
            return Ok(c);
        }
        // One check per device and check settings: the runs of a sweep (each with its own
        // runtime) then launch the same workgroup count and fall back alike.
        let grace = self.grace(gpu);
        let o = &self.options;
        let key = format!(
            "pt capability: spin cap {}, grace {grace}, launch {}, barriers {}",
            o.spin_cap, o.discovery_launch, o.capability_iterations
        );
        let c = match gpu.remembered::<Capability>(&key) {
            Some(c) => c,
            None => {
                let c = assess_async(gpu, o, grace).await?;
                gpu.remember(&key, c.clone());
                c
            }
        };
        *self.capability.lock().map_err(|_| Error::gpu("pt runtime", "capability lock poisoned"))? = Some(c.clone());
        Ok(c)
    }

    /// The capability if it was already assessed.
    pub fn assessed(&self) -> Option<Capability> {
        self.capability.lock().ok().and_then(|c| c.clone())
    }

    /// The uniform for a kernel of `tier` launched with `launched` workgroups.
    pub fn config(&self, gpu: &Gpu, tier: Tier, launched: u32) -> PtConfig {
        let all = tier != Tier::Blocking || self.options.assume_resident;
        PtConfig {
            spin_cap: self.options.spin_cap.max(1),
            grace: self.grace(gpu),
            flags: if all { FLAG_ALL_PARTICIPATE } else { 0 },
            launched,
            capacity: 0,
            heads: 1,
            chunk: 1,
            pad: 0,
        }
    }

    /// Chooses the tier for a case that supports `supported`: the highest supported tier not
    /// above `requested`; the blocking tier only when the capability check passed on this adapter.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn plan(&self, gpu: &Gpu, requested: Tier, supported: &[Tier]) -> Result<Plan> {
        let mut supported = supported.to_vec();
        supported.sort();
        let lowest = *supported.first().ok_or_else(|| Error::invalid("tiers", "a case must support one tier"))?;
        let mut plan = Plan { requested, used: lowest, fallbacks: Vec::new(), launch: 0, supported: supported.clone() };
        match supported.iter().copied().filter(|&t| t <= requested).max() {
            Some(t) => {
                plan.used = t;
                if t != requested {
                    plan.fallbacks.push(format!("{} is not implemented for this case; using {}", requested.label(), t.label()));
                }
            }
            None => plan.fallbacks.push(format!("{} is not implemented for this case; using {}", requested.label(), lowest.label())),
        }
        if plan.used == Tier::Blocking && !self.options.assume_resident {
            let cap = self.capability(gpu)?;
            if !cap.blocking_ok {
                let why = format!("capability probe failed on {}: {}", gpu.adapter_name(), cap.reason.as_deref().unwrap_or("?"));
                plan.fall_back(&why)?;
            }
        }
        plan.launch = self.launch(gpu, plan.used)?;
        Ok(plan)
    }

    /// Workgroups a persistent kernel of `tier` launches: the override, else the discovered
    /// co-resident count (maximal launch); 0 for tier 0.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn launch(&self, gpu: &Gpu, tier: Tier) -> Result<u32> {
        if tier == Tier::Multi {
            return Ok(0);
        }
        if let Some(l) = self.options.launch {
            let max = gpu.caps().max_compute_workgroups_per_dimension;
            if l == 0 || l > max {
                return Err(Error::invalid("launch", format!("{l} workgroups (use 1..={max})")));
            }
            return Ok(l);
        }
        Ok(self.capability(gpu)?.discovered.max(1))
    }
}
