//! The sweep `simtlab bench pt` runs: a use case or benchmark over lists of options.

use super::barrier;
use super::cases::forest::{ForestCase, ForestConfig, Shape};
use super::cases::gsync::{GsyncCase, GsyncConfig};
use super::cases::prodcons::{ProdConsCase, ProdConsConfig, Workload};
use super::cases::sync::{SyncCase, SyncConfig, Work};
use super::cases::{bench, Case};
use super::queue::{self, QueueConfig, QueueKind};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::harness::{Progress, Protocol, Record};
use crate::pt::{PtOptions, Runtime, Tier};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PtCase {
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
    /// Only the capability probe (discovery, barrier, message passing).
    Probe,
}

/// Arguments of `simtlab bench pt`. List-valued options are swept (cartesian product). An
/// option the chosen case does not use is an error ([`validate`]), so defaults live here in
/// code, not in clap.
#[derive(clap::Args, Debug, Clone)]
pub struct PtArgs {
    #[arg(long, value_enum)]
    pub case: PtCase,
    /// sync, forest, prodcons, gsync: tiers to run (0 multi-dispatch, 1 non-blocking PT,
    /// 2 blocking PT); default every tier the case has.
    #[arg(long, value_delimiter = ',')]
    pub tier: Vec<u8>,
    /// Multiply-adds per item (sync, forest, prodcons two-stage, gsync; default 64, 1000, 100, 1000).
    #[arg(long, value_delimiter = ',')]
    pub fmas: Vec<u32>,
    /// sync / prodcons / queue (not ring): items (default 2^20, 2^22, 2^24 or what the driver's
    /// loop limit allows).
    #[arg(long, value_delimiter = ',')]
    pub n: Vec<usize>,
    /// sync: fraction of inputs the producer emits, 0..=1 (default 0.5).
    #[arg(long)]
    pub emit: Option<f64>,
    /// sync: ci (compute-intensive) or cmi (compute + memory) (default ci).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub work: Vec<Work>,
    /// forest: complete or tilted (default tilted).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub shape: Vec<Shape>,
    /// forest: initial items (default 128).
    #[arg(long, value_delimiter = ',')]
    pub items: Vec<u32>,
    /// forest: depth (levels, 1..=1000; default 50).
    #[arg(long, value_delimiter = ',')]
    pub depth: Vec<u32>,
    /// forest (tier 2) / queue ring: queue capacity (default: twice the widest level / the participants).
    #[arg(long)]
    pub capacity: Option<u32>,
    /// prodcons: reduce or two-stage (default both).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub workload: Vec<Workload>,
    /// prodcons two-stage: items passed to stage 2 per 256, 0..=256 (default 0,32,128,256).
    #[arg(long, value_delimiter = ',')]
    pub pass: Vec<u32>,
    /// gsync: global syncs (default 100).
    #[arg(long, value_delimiter = ',')]
    pub syncs: Vec<u32>,
    /// gsync: blocks of 256 items (default 1024).
    #[arg(long, value_delimiter = ',')]
    pub blocks: Vec<u32>,
    /// barrier: workgroup counts; queue: workgroups launched (default: discovered).
    #[arg(long, value_delimiter = ',')]
    pub workgroups: Vec<u32>,
    /// barrier: how workgroups arrive (device: storageBarrier; none: workgroupBarrier only; default device).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub fence: Vec<barrier::BarrierFence>,
    /// barrier: where workgroups arrive (flat: one counter; tree: sub-counters, then one; default flat).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub arrival: Vec<barrier::BarrierArrival>,
    /// barrier: barriers per launch (default 1000).
    #[arg(long)]
    pub iterations: Option<u32>,
    /// queue: kinds to measure (default single,chunked,distributed,ring).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub kind: Vec<QueueKind>,
    /// queue chunked: items per chunk (default 256).
    #[arg(long)]
    pub chunk: Option<u32>,
    /// queue distributed: heads, 1..=64 (default 64).
    #[arg(long)]
    pub heads: Option<u32>,
    /// queue ring: items per participant (default 1024).
    #[arg(long)]
    pub rounds: Option<u32>,
    /// Tiers 1 and 2 of sync, forest, prodcons, gsync, and queue: persistent kernels launch this
    /// many workgroups instead of the discovered count.
    #[arg(long)]
    pub launch: Option<u32>,
    /// Bound of every wait loop, in polls.
    #[arg(long, default_value_t = crate::pt::launch::DEFAULT_SPIN_CAP)]
    pub spin_cap: u32,
    /// Discovery grace period in polls, at most --spin-cap (default: 32 on GPUs, 2048 on CPU adapters).
    #[arg(long)]
    pub grace: Option<u32>,
    /// sync, forest, prodcons, gsync: seed of the random inputs (default 1).
    #[arg(long)]
    pub seed: Option<u64>,
}

const DEFAULT_KINDS: [QueueKind; 4] = [QueueKind::Single, QueueKind::Chunked, QueueKind::Distributed, QueueKind::Ring];
const DEFAULT_WORKLOADS: [Workload; 2] = [Workload::Reduce, Workload::TwoStage];

fn case_name(case: PtCase) -> &'static str {
    match case {
        PtCase::Sync => "sync",
        PtCase::Forest => "forest",
        PtCase::Prodcons => "prodcons",
        PtCase::Gsync => "gsync",
        PtCase::Barrier => "barrier",
        PtCase::Queue => "queue",
        PtCase::Probe => "probe",
    }
}

/// The tiers `args` asks for (every tier by default), each checked.
fn tiers(args: &PtArgs) -> Result<Vec<Tier>> {
    if args.tier.is_empty() {
        return Ok(Tier::ALL.to_vec());
    }
    args.tier.iter().map(|&t| Tier::from_number(t).ok_or_else(|| Error::invalid("--tier", format!("{t} (use 0, 1 or 2)")))).collect()
}

/// The tiers the case of `args` has (for prodcons: any of the chosen workloads).
fn case_tiers(args: &PtArgs) -> Vec<Tier> {
    match args.case {
        PtCase::Sync => SyncCase::TIERS.to_vec(),
        PtCase::Forest => ForestCase::TIERS.to_vec(),
        PtCase::Gsync => GsyncCase::TIERS.to_vec(),
        PtCase::Prodcons => {
            let workloads = or(&args.workload, &DEFAULT_WORKLOADS);
            Tier::ALL.into_iter().filter(|t| workloads.iter().any(|&w| ProdConsCase::tiers(w).contains(t))).collect()
        }
        PtCase::Barrier | PtCase::Queue | PtCase::Probe => Vec::new(),
    }
}

fn or<T: Clone>(v: &[T], default: &[T]) -> Vec<T> {
    if v.is_empty() {
        default.to_vec()
    } else {
        v.to_vec()
    }
}

/// Checks `args` before anything runs: an option the chosen case (or, within it, the chosen
/// queue kinds, prodcons workloads or tiers) does not use is an error, and so is a value out
/// of range; each error names the option and what is allowed. Ranges that need the adapter
/// (workgroups per dispatch) and per-size limits are checked when the run is built.
pub fn validate(args: &PtArgs) -> Result<()> {
    use PtCase::*;
    let case = args.case;
    let name = case_name(case);
    let uses: [(&str, bool, &[PtCase]); 22] = [
        ("--tier", !args.tier.is_empty(), &[Sync, Forest, Prodcons, Gsync]),
        ("--fmas", !args.fmas.is_empty(), &[Sync, Forest, Prodcons, Gsync]),
        ("--n", !args.n.is_empty(), &[Sync, Prodcons, Queue]),
        ("--emit", args.emit.is_some(), &[Sync]),
        ("--work", !args.work.is_empty(), &[Sync]),
        ("--shape", !args.shape.is_empty(), &[Forest]),
        ("--items", !args.items.is_empty(), &[Forest]),
        ("--depth", !args.depth.is_empty(), &[Forest]),
        ("--capacity", args.capacity.is_some(), &[Forest, Queue]),
        ("--workload", !args.workload.is_empty(), &[Prodcons]),
        ("--pass", !args.pass.is_empty(), &[Prodcons]),
        ("--syncs", !args.syncs.is_empty(), &[Gsync]),
        ("--blocks", !args.blocks.is_empty(), &[Gsync]),
        ("--workgroups", !args.workgroups.is_empty(), &[Barrier, Queue]),
        ("--fence", !args.fence.is_empty(), &[Barrier]),
        ("--arrival", !args.arrival.is_empty(), &[Barrier]),
        ("--iterations", args.iterations.is_some(), &[Barrier]),
        ("--kind", !args.kind.is_empty(), &[Queue]),
        ("--chunk", args.chunk.is_some(), &[Queue]),
        ("--heads", args.heads.is_some(), &[Queue]),
        ("--rounds", args.rounds.is_some(), &[Queue]),
        ("--launch", args.launch.is_some(), &[Sync, Forest, Prodcons, Gsync, Queue]),
    ];
    for (option, given, cases) in uses {
        if given && !cases.contains(&case) {
            let to: Vec<&str> = cases.iter().map(|&c| case_name(c)).collect();
            return Err(Error::invalid(option, format!("--case {name} does not use it (it applies to --case {})", to.join(", "))));
        }
    }
    if args.seed.is_some() && !matches!(case, Sync | Forest | Prodcons | Gsync) {
        return Err(Error::invalid("--seed", format!("--case {name} has no random inputs (it applies to --case sync, forest, prodcons, gsync)")));
    }

    // tiers: each one the case has
    let tiers = tiers(args)?;
    if !args.tier.is_empty() {
        let has = case_tiers(args);
        if let Some(t) = tiers.iter().find(|t| !has.contains(t)) {
            let list: Vec<String> = has.iter().map(|t| t.number().to_string()).collect();
            return Err(Error::invalid("--tier", format!("{} (--case {name} has tiers {})", t.number(), list.join(", "))));
        }
    }
    let persistent = case == Queue || tiers.iter().any(|&t| t != Tier::Multi);
    if let Some(l) = args.launch {
        if !persistent {
            return Err(Error::invalid("--launch", "tier 0 launches no persistent kernel (it applies to tiers 1 and 2)"));
        }
        if l == 0 {
            return Err(Error::invalid("--launch", "0 workgroups (use 1 or more)"));
        }
    }
    if args.spin_cap == 0 {
        return Err(Error::invalid("--spin-cap", "0 polls (use 1 or more)"));
    }
    if let Some(g) = args.grace {
        if g == 0 || g > args.spin_cap {
            return Err(Error::invalid("--grace", format!("{g} polls (use 1..={}, at most --spin-cap)", args.spin_cap)));
        }
    }
    if args.workgroups.contains(&0) {
        return Err(Error::invalid("--workgroups", "0 (use 1 or more)"));
    }

    match case {
        Sync => {
            if let Some(e) = args.emit {
                if !(0.0..=1.0).contains(&e) {
                    return Err(Error::invalid("--emit", format!("{e} (use 0..=1)")));
                }
            }
        }
        Forest => {
            if args.capacity.is_some() && !tiers.contains(&Tier::Blocking) {
                return Err(Error::invalid("--capacity", "--case forest uses a queue only at tier 2"));
            }
            if args.capacity == Some(0) {
                return Err(Error::invalid("--capacity", "0 slots (use 1 or more)"));
            }
        }
        Prodcons => {
            let workloads = or(&args.workload, &DEFAULT_WORKLOADS);
            if !workloads.contains(&Workload::TwoStage) {
                for (option, given) in [("--pass", !args.pass.is_empty()), ("--fmas", !args.fmas.is_empty())] {
                    if given {
                        return Err(Error::invalid(option, "--workload reduce does not use it (it applies to --workload two-stage)"));
                    }
                }
            }
            if let Some(p) = args.pass.iter().find(|&&p| p > 256) {
                return Err(Error::invalid("--pass", format!("{p} (items per 256: use 0..=256)")));
            }
        }
        Barrier => {
            if args.iterations == Some(0) {
                return Err(Error::invalid("--iterations", "0 barriers (use 1 or more)"));
            }
        }
        Queue => {
            let kinds = or(&args.kind, &DEFAULT_KINDS);
            for (option, given, kind) in [
                ("--chunk", args.chunk.is_some(), QueueKind::Chunked),
                ("--heads", args.heads.is_some(), QueueKind::Distributed),
                ("--rounds", args.rounds.is_some(), QueueKind::Ring),
                ("--capacity", args.capacity.is_some(), QueueKind::Ring),
            ] {
                if given && !kinds.contains(&kind) {
                    return Err(Error::invalid(option, format!("no chosen --kind uses it (it applies to --kind {})", kind_name(kind))));
                }
            }
            if !args.n.is_empty() && kinds.iter().all(|&k| k == QueueKind::Ring) {
                return Err(Error::invalid("--n", "--kind ring moves --rounds items per participant (--n applies to single, chunked, distributed)"));
            }
            if args.launch.is_some() && !args.workgroups.is_empty() {
                return Err(Error::invalid("--launch", "--case queue launches --workgroups when given: use one of them"));
            }
            // every value through the queue's own check (n as a claims kind reads it)
            for &n in &or(&args.n, &[1]) {
                let n = u32::try_from(n).map_err(|_| Error::invalid("--n", format!("{n} (use 1..={})", queue::MAX_QUEUE_ITEMS)))?;
                queue_config(args, QueueKind::Single, n, None).validate()?;
            }
        }
        Gsync | Probe => {}
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

fn queue_config(args: &PtArgs, kind: QueueKind, n: u32, workgroups: Option<u32>) -> QueueConfig {
    let d = QueueConfig::default();
    QueueConfig {
        kind,
        n,
        chunk: args.chunk.unwrap_or(d.chunk),
        heads: args.heads.unwrap_or(d.heads),
        rounds: args.rounds.unwrap_or(d.rounds),
        capacity: args.capacity,
        workgroups,
    }
}

/// Runs the sweep `args` asks for and returns its records.
pub fn bench_cli(gpu: &Gpu, args: &PtArgs, protocol: &Protocol) -> Result<Vec<Record>> {
    validate(args)?;
    let tiers = tiers(args)?;
    let seed = args.seed.unwrap_or(1);
    let mut cases: Vec<Box<dyn Case>> = Vec::new();
    match args.case {
        PtCase::Sync => {
            for &work in &or(&args.work, &[Work::Ci]) {
                for &fmas in &or(&args.fmas, &[64]) {
                    for &n in &or(&args.n, &[1 << 20]) {
                        let cfg = SyncConfig { n, emit: args.emit.unwrap_or(0.5), fmas, work, seed, ..Default::default() };
                        cases.push(Box::new(SyncCase::new(cfg)?));
                    }
                }
            }
        }
        PtCase::Forest => {
            for &shape in &or(&args.shape, &[Shape::Tilted]) {
                for &items in &or(&args.items, &[128]) {
                    for &depth in &or(&args.depth, &[50]) {
                        for &fmas in &or(&args.fmas, &[1000]) {
                            let cfg = ForestConfig { shape, items, depth, fmas, capacity: args.capacity, seed };
                            cases.push(Box::new(ForestCase::new(cfg)?));
                        }
                    }
                }
            }
        }
        PtCase::Prodcons => {
            for &workload in &or(&args.workload, &DEFAULT_WORKLOADS) {
                for &n in &or(&args.n, &[1 << 22]) {
                    let passes = if workload == Workload::Reduce { vec![0] } else { or(&args.pass, &[0, 32, 128, 256]) };
                    for &pass in &passes {
                        for &fmas in &or(&args.fmas, &[100]) {
                            let cfg = ProdConsConfig { workload, n, fmas, pass, seed, ..Default::default() };
                            cases.push(Box::new(ProdConsCase::new(cfg)?));
                        }
                    }
                }
            }
        }
        PtCase::Gsync => {
            for &blocks in &or(&args.blocks, &[1024]) {
                for &syncs in &or(&args.syncs, &[100]) {
                    for &fmas in &or(&args.fmas, &[1000]) {
                        cases.push(Box::new(GsyncCase::new(GsyncConfig { blocks, syncs, fmas, seed })?));
                    }
                }
            }
        }
        PtCase::Barrier | PtCase::Queue | PtCase::Probe => {}
    }
    let rt = Runtime::new(PtOptions { spin_cap: args.spin_cap, grace: args.grace, launch: args.launch, ..Default::default() });
    let cap = rt.capability(gpu)?;
    eprintln!(
        "pt probe on {}: {} co-resident workgroups of 256 (of {} launched, {:.1} us); blocking tier {}",
        gpu.adapter_name(),
        cap.discovered,
        cap.discovery_launch,
        cap.discovery_seconds * 1e6,
        if cap.blocking_ok { "allowed".to_string() } else { format!("refused: {}", cap.reason.as_deref().unwrap_or("?")) }
    );
    match args.case {
        PtCase::Probe => {
            println!("{}", serde_json::to_string_pretty(&cap).unwrap_or_default());
            return Ok(Vec::new());
        }
        PtCase::Barrier => {
            let w = if args.workgroups.is_empty() { vec![cap.discovered.max(1)] } else { args.workgroups.clone() };
            let arrivals = or(&args.arrival, &[barrier::BarrierArrival::Flat]);
            let fences = or(&args.fence, &[barrier::BarrierFence::Device]);
            let kinds: Vec<barrier::BarrierKind> =
                arrivals.iter().flat_map(|&arrival| fences.iter().map(move |&fence| barrier::BarrierKind { arrival, fence })).collect();
            return barrier::bench_barrier(gpu, &rt, &w, &kinds, args.iterations.unwrap_or(1000), protocol);
        }
        PtCase::Queue => {
            let mut records = Vec::new();
            let workgroups: Vec<Option<u32>> = args.workgroups.iter().map(|&w| Some(w)).collect();
            for &kind in &or(&args.kind, &DEFAULT_KINDS) {
                for &w in &or(&workgroups, &[None]) {
                    for &n in &or(&args.n, &[queue::default_queue_items(gpu) as usize]) {
                        let n = u32::try_from(n).map_err(|_| Error::invalid("--n", format!("{n} (use 1..={})", queue::MAX_QUEUE_ITEMS)))?;
                        records.push(queue::bench_queue(gpu, &rt, &queue_config(args, kind, n, w), protocol)?);
                    }
                }
            }
            return Ok(records);
        }
        _ => {}
    }
    let progress = Progress::new(cases.len() as u64, "pt");
    let mut records = Vec::new();
    for case in &cases {
        progress.message(case.name().to_string());
        let wanted: Vec<Tier> = tiers.iter().copied().filter(|t| case.supported().contains(t)).collect();
        let wanted = if wanted.is_empty() { tiers.clone() } else { wanted };
        records.extend(bench(gpu, &rt, case.as_ref(), &wanted, protocol)?);
        progress.step("");
    }
    progress.finish();
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        pt: PtArgs,
    }

    fn check(line: &str) -> Result<()> {
        let cli = Cli::try_parse_from(std::iter::once("pt").chain(line.split_whitespace())).unwrap_or_else(|e| panic!("{line}: {e}"));
        validate(&cli.pt)
    }

    /// The error message of `line`, which must be invalid and name `option`.
    fn rejected(line: &str, option: &str) -> String {
        match check(line) {
            Err(Error::Invalid { what, message }) => {
                assert_eq!(what, option, "{line}: {message}");
                message
            }
            other => panic!("{line}: expected an invalid {option}, got {other:?}"),
        }
    }

    #[test]
    fn pt_options_out_of_range_are_rejected_with_the_range() {
        let m = rejected("--case queue --heads 100000", "--heads");
        assert!(m.contains("100000") && m.contains("1..=64"), "{m}");
        assert!(rejected("--case queue --heads 0", "--heads").contains("1..=64"));
        assert!(rejected("--case queue --chunk 0 --kind chunked", "--chunk").contains("1..="));
        assert!(rejected("--case queue --n 0", "--n").contains("1..="));
        assert!(rejected("--case queue --n 4294967296", "--n").contains("1..="));
        assert!(rejected("--case sync --tier 3", "--tier").contains("0, 1 or 2"));
        assert!(rejected("--case gsync --tier 1", "--tier").contains("tiers 0, 2"));
        assert!(rejected("--case prodcons --workload two-stage --tier 2", "--tier").contains("tiers 0, 1"));
        assert!(rejected("--case sync --emit 1.5", "--emit").contains("0..=1"));
        assert!(rejected("--case prodcons --pass 300", "--pass").contains("0..=256"));
        assert!(rejected("--case sync --launch 0", "--launch").contains("1 or more"));
        assert!(rejected("--case barrier --iterations 0", "--iterations").contains("1 or more"));
        assert!(rejected("--case sync --spin-cap 0", "--spin-cap").contains("1 or more"));
        assert!(rejected("--case sync --spin-cap 100 --grace 200", "--grace").contains("1..=100"));
        assert!(rejected("--case barrier --workgroups 4,0", "--workgroups").contains("1 or more"));
    }

    #[test]
    fn pt_options_the_case_ignores_are_rejected() {
        let m = rejected("--case barrier --launch 4", "--launch");
        assert!(m.contains("--case barrier does not use it") && m.contains("sync, forest, prodcons, gsync, queue"), "{m}");
        assert!(rejected("--case probe --tier 2", "--tier").contains("--case probe"));
        assert!(rejected("--case queue --tier 1", "--tier").contains("--case queue"));
        assert!(rejected("--case gsync --n 5", "--n").contains("sync, prodcons, queue"));
        assert!(rejected("--case forest --emit 0.3", "--emit").contains("--case sync"));
        assert!(rejected("--case sync --heads 8", "--heads").contains("--case queue"));
        assert!(rejected("--case queue --seed 3", "--seed").contains("no random inputs"));
        assert!(rejected("--case sync --tier 0 --launch 8", "--launch").contains("tier 0"));
        assert!(rejected("--case queue --kind single --heads 8", "--heads").contains("--kind distributed"));
        assert!(rejected("--case queue --kind single,chunked --rounds 8", "--rounds").contains("--kind ring"));
        assert!(rejected("--case queue --kind ring --n 100", "--n").contains("--rounds"));
        assert!(rejected("--case queue --workgroups 2 --launch 3", "--launch").contains("one of them"));
        assert!(rejected("--case prodcons --workload reduce --pass 32", "--pass").contains("two-stage"));
        assert!(rejected("--case prodcons --workload reduce --fmas 9", "--fmas").contains("two-stage"));
        assert!(rejected("--case forest --tier 0,1 --capacity 64", "--capacity").contains("tier 2"));
    }

    #[test]
    fn pt_options_each_case_uses_are_accepted() {
        for line in [
            "--case queue",
            "--case queue --heads 64 --kind distributed --n 65536 --workgroups 1,2",
            "--case queue --kind chunked,ring --chunk 64 --rounds 10 --capacity 8 --launch 2",
            "--case barrier --workgroups 132,1056 --fence none --arrival tree --iterations 10",
            "--case sync --n 2048 --emit 0.25 --work cmi --tier 0,2 --launch 3 --seed 4",
            "--case forest --depth 20 --items 64 --shape complete --capacity 16",
            "--case prodcons --n 65536 --pass 0,256 --fmas 5 --tier 2",
            "--case gsync --syncs 5 --blocks 8 --tier 2 --spin-cap 1000 --grace 10",
            "--case probe --spin-cap 5000",
        ] {
            check(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        }
    }
}
