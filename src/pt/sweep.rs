//! The sweep `simtlab bench pt` runs: one use case or benchmark of [`crate::pt`] over lists of
//! options ([`Sweep`]), checked before anything runs ([`Sweep::validate`]) and expanded into the
//! configurations it measures ([`Sweep::configurations`], each one run of a `pt-*` registry
//! workload: `experiments::run_pt_sweep` runs them). List-valued fields are swept (cartesian
//! product); an empty list or `None` takes the default, and a field the chosen benchmark does
//! not use is an error.

use super::barrier::{BarrierArrival, BarrierFence, BarrierKind};
use super::cases::forest::{ForestCase, ForestConfig, Shape};
use super::cases::gsync::{GsyncCase, GsyncConfig};
use super::cases::prodcons::{ProdConsCase, ProdConsConfig, Workload};
use super::cases::sync::{SyncCase, SyncConfig, Work};
use super::queue::{self, QueueConfig, QueueKind};
use crate::error::{Error, Result};
use crate::harness::{named, Named, Record};
use crate::pt::{Capability, PtOptions, Tier};
use serde::{Deserialize, Serialize};

/// What a sweep runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bench {
    /// Use case 1: CPU-GPU synchronization.
    Sync,
    /// Use case 2: load balancing, complete / tilted forest expansion.
    Forest,
    /// Use case 3: producer-consumer locality (reduce, two-stage).
    Prodcons,
    /// Use case 4: global synchronization.
    Gsync,
    /// Global barrier latency vs relaunch.
    Barrier,
    /// Queue throughput per queue kind.
    Queue,
    /// Only the capability check (discovery, barrier, message passing); `probe` for short (the
    /// command line's name, and the messages of [`Sweep::validate`]: `bench=probe`).
    Capability,
}

named!(Bench { Sync => "sync", Forest => "forest", Prodcons => "prodcons", Gsync => "gsync", Barrier => "barrier", Queue => "queue", Capability => "capability" | "probe" });

/// A sweep: the benchmark and its options, each named in errors by its field (`tier`, `fmas`,
/// ...). [`Sweep::new`] gives every default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    /// What the sweep measures.
    pub bench: Bench,
    /// sync, forest, prodcons, gsync: tiers to run (0 multi-dispatch, 1 non-blocking PT,
    /// 2 blocking PT); default every tier the case has.
    pub tier: Vec<u8>,
    /// Multiply-adds per item (sync, forest, prodcons two-stage, gsync; default 64, 1000, 100, 1000).
    pub fmas: Vec<u32>,
    /// sync / prodcons / queue (not ring): items (default 2^20, 2^22, 2^24 or what the driver's
    /// loop limit allows).
    pub n: Vec<usize>,
    /// sync: fraction of inputs the producer emits, 0..=1 (default 0.5).
    pub emit: Option<f64>,
    /// sync: compute-intensive or compute + memory (default ci).
    pub work: Vec<Work>,
    /// forest: complete or tilted (default tilted).
    pub shape: Vec<Shape>,
    /// forest: initial items (default 128).
    pub items: Vec<u32>,
    /// forest: depth (levels, 1..=1000; default 50).
    pub depth: Vec<u32>,
    /// forest (tier 2) / queue ring: queue capacity (default: twice the widest level / the participants).
    pub capacity: Option<u32>,
    /// prodcons: reduce or two-stage (default both).
    pub workload: Vec<Workload>,
    /// prodcons two-stage: items passed to stage 2 per 256, 0..=256 (default 0,32,128,256).
    pub pass: Vec<u32>,
    /// gsync: global syncs (default 100).
    pub syncs: Vec<u32>,
    /// gsync: blocks of 256 items (default 1024).
    pub blocks: Vec<u32>,
    /// barrier: workgroup counts; queue: workgroups launched (default: discovered).
    pub workgroups: Vec<u32>,
    /// barrier: how workgroups arrive (default device).
    pub fence: Vec<BarrierFence>,
    /// barrier: where workgroups arrive (default flat).
    pub arrival: Vec<BarrierArrival>,
    /// barrier: barriers per launch (default 1000).
    pub iterations: Option<u32>,
    /// queue: kinds to measure (default single, chunked, distributed, ring).
    pub kind: Vec<QueueKind>,
    /// queue chunked: items per chunk (default 256).
    pub chunk: Option<u32>,
    /// queue distributed: heads, 1..=64 (default 64).
    pub heads: Option<u32>,
    /// queue ring: items per participant (default 1024).
    pub rounds: Option<u32>,
    /// Tiers 1 and 2 of sync, forest, prodcons, gsync, and queue: persistent kernels launch this
    /// many workgroups instead of the discovered count.
    pub launch: Option<u32>,
    /// Bound of every wait loop, in polls (default [`crate::pt::DEFAULT_SPIN_CAP`]).
    pub spin_cap: u32,
    /// Discovery grace period in polls, at most `spin_cap` (default: 32 on GPUs, 2048 on CPU adapters).
    pub grace: Option<u32>,
    /// sync, forest, prodcons, gsync: seed of the random inputs (default 1).
    pub seed: Option<u64>,
}

impl Sweep {
    /// A sweep of `bench` with every option at its default.
    pub fn new(bench: Bench) -> Sweep {
        Sweep {
            bench,
            tier: Vec::new(),
            fmas: Vec::new(),
            n: Vec::new(),
            emit: None,
            work: Vec::new(),
            shape: Vec::new(),
            items: Vec::new(),
            depth: Vec::new(),
            capacity: None,
            workload: Vec::new(),
            pass: Vec::new(),
            syncs: Vec::new(),
            blocks: Vec::new(),
            workgroups: Vec::new(),
            fence: Vec::new(),
            arrival: Vec::new(),
            iterations: None,
            kind: Vec::new(),
            chunk: None,
            heads: None,
            rounds: None,
            launch: None,
            spin_cap: super::launch::DEFAULT_SPIN_CAP,
            grace: None,
            seed: None,
        }
    }
}

/// What a sweep produced: the adapter's capability (assessed before anything runs) and one
/// record per formulation or configuration measured (none for [`Bench::Capability`]).
#[derive(Clone, Debug)]
pub struct SweepOutput {
    /// The adapter's capability, assessed before anything ran.
    pub capability: Capability,
    /// One record per formulation or configuration measured.
    pub records: Vec<Record>,
}

const DEFAULT_KINDS: [QueueKind; 4] = [QueueKind::Single, QueueKind::Chunked, QueueKind::Distributed, QueueKind::Ring];
const DEFAULT_WORKLOADS: [Workload; 2] = [Workload::Reduce, Workload::TwoStage];

/// The tiers `sweep` asks for (every tier by default), each checked.
fn tiers(sweep: &Sweep) -> Result<Vec<Tier>> {
    if sweep.tier.is_empty() {
        return Ok(Tier::ALL.to_vec());
    }
    Tier::numbered(&sweep.tier)
}

/// The tiers the benchmark of `sweep` has (for prodcons: any of the chosen workloads).
fn case_tiers(sweep: &Sweep) -> Vec<Tier> {
    match sweep.bench {
        Bench::Sync => SyncCase::TIERS.to_vec(),
        Bench::Forest => ForestCase::TIERS.to_vec(),
        Bench::Gsync => GsyncCase::TIERS.to_vec(),
        Bench::Prodcons => {
            let workloads = or(&sweep.workload, &DEFAULT_WORKLOADS);
            Tier::ALL.into_iter().filter(|t| workloads.iter().any(|&w| ProdConsCase::tiers(w).contains(t))).collect()
        }
        Bench::Barrier | Bench::Queue | Bench::Capability => Vec::new(),
    }
}

fn or<T: Clone>(v: &[T], default: &[T]) -> Vec<T> {
    if v.is_empty() {
        default.to_vec()
    } else {
        v.to_vec()
    }
}

impl Sweep {
    /// Checks the sweep before anything runs: an option the chosen benchmark (or, within it,
    /// the chosen queue kinds, prodcons workloads or tiers) does not use is an error, and so is
    /// a value out of range; each error names the field and what is allowed.
    /// Ranges that need the adapter (workgroups per dispatch) and per-size limits are checked
    /// when the run is built.
    pub fn validate(&self) -> Result<()> {
        validate(self)
    }

    /// The persistent-threads runtime's options the sweep sets (`spin_cap`, `grace`, `launch`).
    pub fn options(&self) -> PtOptions {
        PtOptions { spin_cap: self.spin_cap, grace: self.grace, launch: self.launch, ..Default::default() }
    }
}

fn validate(sweep: &Sweep) -> Result<()> {
    use Bench::*;
    let case = sweep.bench;
    let name = case.short_name();
    let uses: [(&str, bool, &[Bench]); 22] = [
        ("tier", !sweep.tier.is_empty(), &[Sync, Forest, Prodcons, Gsync]),
        ("fmas", !sweep.fmas.is_empty(), &[Sync, Forest, Prodcons, Gsync]),
        ("n", !sweep.n.is_empty(), &[Sync, Prodcons, Queue]),
        ("emit", sweep.emit.is_some(), &[Sync]),
        ("work", !sweep.work.is_empty(), &[Sync]),
        ("shape", !sweep.shape.is_empty(), &[Forest]),
        ("items", !sweep.items.is_empty(), &[Forest]),
        ("depth", !sweep.depth.is_empty(), &[Forest]),
        ("capacity", sweep.capacity.is_some(), &[Forest, Queue]),
        ("workload", !sweep.workload.is_empty(), &[Prodcons]),
        ("pass", !sweep.pass.is_empty(), &[Prodcons]),
        ("syncs", !sweep.syncs.is_empty(), &[Gsync]),
        ("blocks", !sweep.blocks.is_empty(), &[Gsync]),
        ("workgroups", !sweep.workgroups.is_empty(), &[Barrier, Queue]),
        ("fence", !sweep.fence.is_empty(), &[Barrier]),
        ("arrival", !sweep.arrival.is_empty(), &[Barrier]),
        ("iterations", sweep.iterations.is_some(), &[Barrier]),
        ("kind", !sweep.kind.is_empty(), &[Queue]),
        ("chunk", sweep.chunk.is_some(), &[Queue]),
        ("heads", sweep.heads.is_some(), &[Queue]),
        ("rounds", sweep.rounds.is_some(), &[Queue]),
        ("launch", sweep.launch.is_some(), &[Sync, Forest, Prodcons, Gsync, Queue]),
    ];
    for (option, given, cases) in uses {
        if given && !cases.contains(&case) {
            let to: Vec<&str> = cases.iter().map(|&c| c.short_name()).collect();
            return Err(Error::invalid(option, format!("`bench={name}` does not use it (it applies to `bench` {})", to.join(", "))));
        }
    }
    if sweep.seed.is_some() && !matches!(case, Sync | Forest | Prodcons | Gsync) {
        return Err(Error::invalid(
            "seed",
            format!("`bench={name}` has no random inputs (it applies to `bench` sync, forest, prodcons, gsync)"),
        ));
    }

    // tiers: each one the case has
    let tiers = tiers(sweep)?;
    if !sweep.tier.is_empty() {
        let has = case_tiers(sweep);
        if let Some(t) = tiers.iter().find(|t| !has.contains(t)) {
            let list: Vec<String> = has.iter().map(|t| t.number().to_string()).collect();
            return Err(Error::invalid("tier", format!("{} (`bench={name}` has tiers {})", t.number(), list.join(", "))));
        }
    }
    let persistent = case == Queue || tiers.iter().any(|&t| t != Tier::Multi);
    if sweep.launch.is_some() && !persistent {
        return Err(Error::invalid("launch", "tier 0 launches no persistent kernel (it applies to `tier` 1 and 2)"));
    }
    sweep.options().validate()?;
    if sweep.workgroups.contains(&0) {
        return Err(Error::invalid("workgroups", "0 (use 1 or more)"));
    }

    match case {
        Sync => {
            if let Some(e) = sweep.emit {
                if !(0.0..=1.0).contains(&e) {
                    return Err(Error::invalid("emit", format!("{e} (use 0..=1)")));
                }
            }
        }
        Forest => {
            if sweep.capacity.is_some() && !tiers.contains(&Tier::Blocking) {
                return Err(Error::invalid("capacity", "`bench=forest` uses a queue only at tier 2 (add 2 to `tier`)"));
            }
            if sweep.capacity == Some(0) {
                return Err(Error::invalid("capacity", "0 slots (use 1 or more)"));
            }
        }
        Prodcons => {
            let workloads = or(&sweep.workload, &DEFAULT_WORKLOADS);
            if !workloads.contains(&Workload::TwoStage) {
                for (option, given) in [("pass", !sweep.pass.is_empty()), ("fmas", !sweep.fmas.is_empty())] {
                    if given {
                        return Err(Error::invalid(option, "`workload=reduce` does not use it (it applies to `workload=two-stage`)"));
                    }
                }
            }
            if let Some(p) = sweep.pass.iter().find(|&&p| p > 256) {
                return Err(Error::invalid("pass", format!("{p} (items per 256: use 0..=256)")));
            }
        }
        Barrier => {
            if sweep.iterations == Some(0) {
                return Err(Error::invalid("iterations", "0 barriers (use 1 or more)"));
            }
        }
        Queue => {
            let kinds = or(&sweep.kind, &DEFAULT_KINDS);
            for (option, given, kind) in [
                ("chunk", sweep.chunk.is_some(), QueueKind::Chunked),
                ("heads", sweep.heads.is_some(), QueueKind::Distributed),
                ("rounds", sweep.rounds.is_some(), QueueKind::Ring),
                ("capacity", sweep.capacity.is_some(), QueueKind::Ring),
            ] {
                if given && !kinds.contains(&kind) {
                    return Err(Error::invalid(option, format!("no chosen `kind` uses it (it applies to `kind={}`)", kind_name(kind))));
                }
            }
            if !sweep.n.is_empty() && kinds.iter().all(|&k| k == QueueKind::Ring) {
                return Err(Error::invalid(
                    "n",
                    "`kind=ring` moves `rounds` items per participant (`n` applies to `kind` single, chunked, distributed)",
                ));
            }
            if sweep.launch.is_some() && !sweep.workgroups.is_empty() {
                return Err(Error::invalid("launch", "`bench=queue` launches `workgroups` when given: give one of them"));
            }
            // every value through the queue's own check (n as a claims kind reads it)
            for &n in &or(&sweep.n, &[1]) {
                let n = u32::try_from(n).map_err(|_| Error::invalid("n", format!("{n} (use 1..={})", queue::MAX_QUEUE_ITEMS)))?;
                queue_config(sweep, QueueKind::Single, n, None).validate()?;
            }
        }
        Gsync | Capability => {}
    }
    Ok(())
}

fn kind_name(kind: QueueKind) -> &'static str {
    match kind {
        QueueKind::Single => "single",
        QueueKind::Chunked => "chunked",
        QueueKind::Distributed => "distributed",
        QueueKind::Ring => "ring",
    }
}

fn queue_config(sweep: &Sweep, kind: QueueKind, n: u32, workgroups: Option<u32>) -> QueueConfig {
    let d = QueueConfig::default();
    QueueConfig {
        kind,
        n,
        chunk: sweep.chunk.unwrap_or(d.chunk),
        heads: sweep.heads.unwrap_or(d.heads),
        rounds: sweep.rounds.unwrap_or(d.rounds),
        capacity: sweep.capacity,
        workgroups,
    }
}

/// One configuration a sweep measures: one run of a `pt-*` registry workload.
#[derive(Clone, Debug)]
pub enum Configuration {
    /// Use case 1 at every tier the sweep asks for.
    Sync(SyncConfig),
    /// Use case 2 at every tier the sweep asks for.
    Forest(ForestConfig),
    /// Use case 3 at every tier the sweep asks for.
    Prodcons(ProdConsConfig),
    /// Use case 4 at every tier the sweep asks for.
    Gsync(GsyncConfig),
    /// Barrier latency at one workgroup count (`None`: as many as are co-resident).
    Barrier {
        /// Workgroups launched.
        workgroups: Option<u32>,
        /// How they arrive.
        kind: BarrierKind,
        /// Barriers per launch.
        iterations: u32,
    },
    /// One queue launch.
    Queue(QueueConfig),
}

impl Sweep {
    /// The configurations the sweep measures, in order, after [`Sweep::validate`]. A queue
    /// sweep's default `n` is `queue_items` ([`queue::default_queue_items`] of the adapter);
    /// its default kinds take the ring only where `ring_allowed` (the capability check allows
    /// the blocking tier, [`queue::ring_allowed`]): asked for by name, the ring's run fails
    /// with the reason. None for [`Bench::Capability`].
    pub fn configurations(&self, queue_items: u32, ring_allowed: bool) -> Result<Vec<Configuration>> {
        validate(self)?;
        let seed = self.seed.unwrap_or(1);
        let mut out = Vec::new();
        match self.bench {
            Bench::Sync => {
                for &work in &or(&self.work, &[Work::Ci]) {
                    for &fmas in &or(&self.fmas, &[64]) {
                        for &n in &or(&self.n, &[1 << 20]) {
                            let cfg = SyncConfig { n, emit: self.emit.unwrap_or(0.5), fmas, work, seed, ..Default::default() };
                            out.push(Configuration::Sync(cfg));
                        }
                    }
                }
            }
            Bench::Forest => {
                for &shape in &or(&self.shape, &[Shape::Tilted]) {
                    for &items in &or(&self.items, &[128]) {
                        for &depth in &or(&self.depth, &[50]) {
                            for &fmas in &or(&self.fmas, &[1000]) {
                                out.push(Configuration::Forest(ForestConfig { shape, items, depth, fmas, capacity: self.capacity, seed }));
                            }
                        }
                    }
                }
            }
            Bench::Prodcons => {
                for &workload in &or(&self.workload, &DEFAULT_WORKLOADS) {
                    for &n in &or(&self.n, &[1 << 22]) {
                        let passes = if workload == Workload::Reduce { vec![0] } else { or(&self.pass, &[0, 32, 128, 256]) };
                        for &pass in &passes {
                            for &fmas in &or(&self.fmas, &[100]) {
                                out.push(Configuration::Prodcons(ProdConsConfig { workload, n, fmas, pass, seed, ..Default::default() }));
                            }
                        }
                    }
                }
            }
            Bench::Gsync => {
                for &blocks in &or(&self.blocks, &[1024]) {
                    for &syncs in &or(&self.syncs, &[100]) {
                        for &fmas in &or(&self.fmas, &[1000]) {
                            out.push(Configuration::Gsync(GsyncConfig { blocks, syncs, fmas, seed }));
                        }
                    }
                }
            }
            Bench::Barrier => {
                let workgroups: Vec<Option<u32>> = self.workgroups.iter().map(|&w| Some(w)).collect();
                for &workgroups in &or(&workgroups, &[None]) {
                    for &arrival in &or(&self.arrival, &[BarrierArrival::Flat]) {
                        for &fence in &or(&self.fence, &[BarrierFence::Device]) {
                            let kind = BarrierKind { arrival, fence };
                            out.push(Configuration::Barrier { workgroups, kind, iterations: self.iterations.unwrap_or(1000) });
                        }
                    }
                }
            }
            Bench::Queue => {
                let workgroups: Vec<Option<u32>> = self.workgroups.iter().map(|&w| Some(w)).collect();
                for &kind in &or(&self.kind, &DEFAULT_KINDS) {
                    if kind == QueueKind::Ring && self.kind.is_empty() && !ring_allowed {
                        continue;
                    }
                    for &w in &or(&workgroups, &[None]) {
                        for &n in &or(&self.n, &[queue_items as usize]) {
                            let n =
                                u32::try_from(n).map_err(|_| Error::invalid("n", format!("{n} (use 1..={})", queue::MAX_QUEUE_ITEMS)))?;
                            out.push(Configuration::Queue(queue_config(self, kind, n, w)));
                        }
                    }
                }
            }
            Bench::Capability => {}
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::Bench::*;
    use super::*;

    /// A sweep of `bench` with `set` applied to its defaults.
    fn sweep(bench: Bench, set: impl FnOnce(&mut Sweep)) -> Sweep {
        let mut s = Sweep::new(bench);
        set(&mut s);
        s
    }

    /// The error message of `s`, which must be invalid and name `option`.
    fn rejected(s: Sweep, option: &str) -> String {
        match s.validate() {
            Err(Error::Invalid { what, message }) => {
                assert_eq!(what, option, "{s:?}: {message}");
                message
            }
            other => panic!("{s:?}: expected an invalid {option}, got {other:?}"),
        }
    }

    #[test]
    fn pt_options_out_of_range_are_rejected_with_the_range() {
        let m = rejected(sweep(Queue, |s| s.heads = Some(100000)), "heads");
        assert!(m.contains("100000") && m.contains("1..=64"), "{m}");
        assert!(rejected(sweep(Queue, |s| s.heads = Some(0)), "heads").contains("1..=64"));
        assert!(rejected(sweep(Queue, |s| (s.chunk, s.kind) = (Some(0), vec![QueueKind::Chunked])), "chunk").contains("1..="));
        assert!(rejected(sweep(Queue, |s| s.n = vec![0]), "n").contains("1..="));
        assert!(rejected(sweep(Queue, |s| s.n = vec![4294967296]), "n").contains("1..="));
        assert!(rejected(sweep(Sync, |s| s.tier = vec![3]), "tier").contains("0, 1 or 2"));
        assert!(rejected(sweep(Gsync, |s| s.tier = vec![1]), "tier").contains("tiers 0, 2"));
        assert!(rejected(sweep(Prodcons, |s| (s.workload, s.tier) = (vec![Workload::TwoStage], vec![2])), "tier").contains("tiers 0, 1"));
        assert!(rejected(sweep(Sync, |s| s.emit = Some(1.5)), "emit").contains("0..=1"));
        assert!(rejected(sweep(Prodcons, |s| s.pass = vec![300]), "pass").contains("0..=256"));
        assert!(rejected(sweep(Sync, |s| s.launch = Some(0)), "launch").contains("1 or more"));
        assert!(rejected(sweep(Barrier, |s| s.iterations = Some(0)), "iterations").contains("1 or more"));
        assert!(rejected(sweep(Sync, |s| s.spin_cap = 0), "spin_cap").contains("1 or more"));
        assert!(rejected(sweep(Sync, |s| (s.spin_cap, s.grace) = (100, Some(200))), "grace").contains("1..=100"));
        assert!(rejected(sweep(Barrier, |s| s.workgroups = vec![4, 0]), "workgroups").contains("1 or more"));
    }

    #[test]
    fn pt_options_the_case_ignores_are_rejected() {
        let m = rejected(sweep(Barrier, |s| s.launch = Some(4)), "launch");
        assert!(m.contains("`bench=barrier` does not use it") && m.contains("sync, forest, prodcons, gsync, queue"), "{m}");
        assert!(rejected(sweep(Capability, |s| s.tier = vec![2]), "tier").contains("`bench=probe`"));
        assert!(rejected(sweep(Queue, |s| s.tier = vec![1]), "tier").contains("`bench=queue`"));
        assert!(rejected(sweep(Gsync, |s| s.n = vec![5]), "n").contains("sync, prodcons, queue"));
        assert!(rejected(sweep(Forest, |s| s.emit = Some(0.3)), "emit").contains("(it applies to `bench` sync)"));
        assert!(rejected(sweep(Sync, |s| s.heads = Some(8)), "heads").contains("(it applies to `bench` queue)"));
        assert!(rejected(sweep(Queue, |s| s.seed = Some(3)), "seed").contains("no random inputs"));
        assert!(rejected(sweep(Sync, |s| (s.tier, s.launch) = (vec![0], Some(8))), "launch").contains("tier 0"));
        assert!(rejected(sweep(Queue, |s| (s.kind, s.heads) = (vec![QueueKind::Single], Some(8))), "heads").contains("`kind=distributed`"));
        let single_chunked = vec![QueueKind::Single, QueueKind::Chunked];
        assert!(rejected(sweep(Queue, |s| (s.kind, s.rounds) = (single_chunked, Some(8))), "rounds").contains("`kind=ring`"));
        assert!(rejected(sweep(Queue, |s| (s.kind, s.n) = (vec![QueueKind::Ring], vec![100])), "n").contains("`rounds`"));
        assert!(rejected(sweep(Queue, |s| (s.workgroups, s.launch) = (vec![2], Some(3))), "launch").contains("one of them"));
        assert!(rejected(sweep(Prodcons, |s| (s.workload, s.pass) = (vec![Workload::Reduce], vec![32])), "pass").contains("two-stage"));
        assert!(rejected(sweep(Prodcons, |s| (s.workload, s.fmas) = (vec![Workload::Reduce], vec![9])), "fmas").contains("two-stage"));
        assert!(rejected(sweep(Forest, |s| (s.tier, s.capacity) = (vec![0, 1], Some(64))), "capacity").contains("tier 2"));
    }

    #[test]
    fn pt_options_each_case_uses_are_accepted() {
        for s in [
            Sweep::new(Queue),
            sweep(Queue, |s| (s.heads, s.kind, s.n, s.workgroups) = (Some(64), vec![QueueKind::Distributed], vec![65536], vec![1, 2])),
            sweep(Queue, |s| {
                (s.kind, s.chunk, s.rounds) = (vec![QueueKind::Chunked, QueueKind::Ring], Some(64), Some(10));
                (s.capacity, s.launch) = (Some(8), Some(2));
            }),
            sweep(Barrier, |s| {
                (s.workgroups, s.iterations) = (vec![132, 1056], Some(10));
                (s.fence, s.arrival) = (vec![BarrierFence::None], vec![BarrierArrival::Tree]);
            }),
            sweep(Sync, |s| {
                (s.n, s.emit, s.work) = (vec![2048], Some(0.25), vec![Work::Cmi]);
                (s.tier, s.launch, s.seed) = (vec![0, 2], Some(3), Some(4));
            }),
            sweep(Forest, |s| (s.depth, s.items, s.shape, s.capacity) = (vec![20], vec![64], vec![Shape::Complete], Some(16))),
            sweep(Prodcons, |s| (s.n, s.pass, s.fmas, s.tier) = (vec![65536], vec![0, 256], vec![5], vec![2])),
            sweep(Gsync, |s| (s.syncs, s.blocks, s.tier, s.spin_cap, s.grace) = (vec![5], vec![8], vec![2], 1000, Some(10))),
            sweep(Capability, |s| s.spin_cap = 5000),
        ] {
            s.validate().unwrap_or_else(|e| panic!("{s:?}: {e}"));
        }
    }
}
