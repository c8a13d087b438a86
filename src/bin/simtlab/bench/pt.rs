//! `simtlab bench pt`: persistent threads, Gupta's use cases and the barrier / queue benchmarks.

use crate::output::sayln;
use crate::output::{finish, Output};
use crate::value::choice;
use clap::Args;
use simtlab::harness::Record;
use simtlab::pt::barrier::{BarrierArrival, BarrierExtra, BarrierFence};
use simtlab::pt::cases::forest::Shape;
use simtlab::pt::cases::prodcons::Workload;
use simtlab::pt::cases::sync::Work;
use simtlab::pt::queue::QueueKind;
use simtlab::pt::sweep::{Bench, Sweep};
use simtlab::pt::TierVerdict;
use simtlab::{Gpu, Result};

#[derive(Args)]
pub struct PtBenchArgs {
    #[command(flatten)]
    pub pt: PtArgs,
    #[command(flatten)]
    pub output: Output,
}

/// Help lines of [`Bench`]'s values.
pub const CASES: &[(Bench, &str)] = &[
    (Bench::Sync, "Use case 1: CPU-GPU synchronization"),
    (Bench::Forest, "Use case 2: load balancing, complete / tilted forest expansion"),
    (Bench::Prodcons, "Use case 3: producer-consumer locality (reduce, two-stage)"),
    (Bench::Gsync, "Use case 4: global synchronization"),
    (Bench::Barrier, "Global barrier latency vs relaunch"),
    (Bench::Queue, "Queue throughput per queue kind"),
    (Bench::Capability, "Only the capability probe (discovery, barrier, message passing)"),
];

/// Help lines of [`Work`]'s values.
pub const WORKS: &[(Work, &str)] =
    &[(Work::Ci, "Compute-intensive: multiply-adds only"), (Work::Cmi, "Compute and memory: a strided load with every multiply-add")];
/// Help lines of [`Shape`]'s values.
pub const SHAPES: &[(Shape, &str)] = &[
    (Shape::Complete, "Every item has two children until the depth: a complete binary tree per input"),
    (Shape::Tilted, "The second half of each level has two children, the first half none"),
];
/// Help lines of [`Workload`]'s values.
pub const WORKLOADS: &[(Workload, &str)] =
    &[(Workload::Reduce, "Global sum of n values"), (Workload::TwoStage, "Stage 1 on every item, stage 2 on `pass` of every 256")];
/// Help lines of [`BarrierFence`]'s values.
pub const FENCES: &[(BarrierFence, &str)] = &[
    (BarrierFence::Device, "storageBarrier: a control barrier with a device-scope fence on storage"),
    (BarrierFence::None, "workgroupBarrier only (PT_BARRIER_NO_FENCE): data crosses only through atomics"),
];
/// Help lines of [`BarrierArrival`]'s values.
pub const ARRIVALS: &[(BarrierArrival, &str)] = &[
    (BarrierArrival::Flat, "One counter for all participants"),
    (BarrierArrival::Tree, "Sub-counters of at least 32 participants, then one top counter (PT_BARRIER_TREE)"),
];
/// Help lines of [`QueueKind`]'s values.
pub const QUEUE_KINDS: &[(QueueKind, &str)] = &[
    (QueueKind::Single, "One global head, one atomicAdd per item"),
    (QueueKind::Chunked, "One global head, `chunk` items per atomicAdd"),
    (QueueKind::Distributed, "`heads` heads over item ranges, stealing when the home range is empty"),
    (QueueKind::Ring, "The bounded MPMC ring (push + pop per item; blocking tier)"),
];

/// Arguments of `simtlab bench pt`. List-valued options are swept (cartesian product). An
/// option the chosen case does not use is an error ([`Sweep::validate`]), so defaults live in
/// the library's [`Sweep`], not in clap.
#[derive(Args, Debug, Clone)]
pub struct PtArgs {
    #[arg(long, value_parser = choice::<Bench>(CASES))]
    pub case: Bench,
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
    #[arg(long, value_parser = choice::<Work>(WORKS), value_delimiter = ',')]
    pub work: Vec<Work>,
    /// forest: complete or tilted (default tilted).
    #[arg(long, value_parser = choice::<Shape>(SHAPES), value_delimiter = ',')]
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
    #[arg(long, value_parser = choice::<Workload>(WORKLOADS), value_delimiter = ',')]
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
    #[arg(long, value_parser = choice::<BarrierFence>(FENCES), value_delimiter = ',')]
    pub fence: Vec<BarrierFence>,
    /// barrier: where workgroups arrive (flat: one counter; tree: sub-counters, then one; default flat).
    #[arg(long, value_parser = choice::<BarrierArrival>(ARRIVALS), value_delimiter = ',')]
    pub arrival: Vec<BarrierArrival>,
    /// barrier: barriers per launch (default 1000).
    #[arg(long)]
    pub iterations: Option<u32>,
    /// queue: kinds to measure (default single,chunked,distributed,ring).
    #[arg(long, value_parser = choice::<QueueKind>(QUEUE_KINDS), value_delimiter = ',')]
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
    #[arg(long, default_value_t = simtlab::pt::DEFAULT_SPIN_CAP)]
    pub spin_cap: u32,
    /// Discovery grace period in polls, at most --spin-cap (default: 32 on GPUs, 2048 on CPU adapters).
    #[arg(long)]
    pub grace: Option<u32>,
    /// sync, forest, prodcons, gsync: seed of the random inputs (default 1).
    #[arg(long)]
    pub seed: Option<u64>,
}

impl PtArgs {
    /// The library's description of the sweep these arguments ask for.
    pub fn sweep(&self) -> Sweep {
        let a = self.clone();
        Sweep {
            bench: a.case,
            tier: a.tier,
            fmas: a.fmas,
            n: a.n,
            emit: a.emit,
            work: a.work,
            shape: a.shape,
            items: a.items,
            depth: a.depth,
            capacity: a.capacity,
            workload: a.workload,
            pass: a.pass,
            syncs: a.syncs,
            blocks: a.blocks,
            workgroups: a.workgroups,
            fence: a.fence,
            arrival: a.arrival,
            iterations: a.iterations,
            kind: a.kind,
            chunk: a.chunk,
            heads: a.heads,
            rounds: a.rounds,
            launch: a.launch,
            spin_cap: a.spin_cap,
            grace: a.grace,
            seed: a.seed,
        }
    }
}

pub fn run(gpu: &Gpu, a: &PtBenchArgs) -> Result<()> {
    let protocol = a.output.protocol();
    let sweep = a.pt.sweep();
    let out = simtlab::experiments::run_pt_sweep(gpu, &sweep, &protocol)?;
    let cap = &out.capability;
    eprintln!(
        "pt probe on {}: {} co-resident workgroups of 256 (of {} launched, {:.1} us); blocking tier {}",
        gpu.adapter_name(),
        cap.discovered,
        cap.discovery_launch,
        cap.discovery_seconds * 1e6,
        if cap.blocking_ok { "allowed".to_string() } else { format!("refused: {}", cap.reason.as_deref().unwrap_or("?")) }
    );
    if sweep.bench == Bench::Capability {
        sayln!("{}", serde_json::to_string_pretty(&out.capability).unwrap_or_default());
    }
    print_pt_verdicts(&out.records);
    finish(&out.records, &a.output)
}

/// The tier each persistent-threads record ran at, and any fallback.
pub fn print_pt_verdicts(records: &[Record]) {
    for r in records {
        let barrier = if r.kernel == "barrier" { r.extra_as::<BarrierExtra>() } else { None };
        if let Some(probe) = barrier.as_ref().and_then(|b| b.probe.as_ref()).filter(|p| !p.blocking_ok) {
            sayln!(
                "barrier {}: the capability probe failed ({}); measured anyway with bounded waits",
                r.variant,
                probe.reason.as_deref().unwrap_or("no reason given")
            );
        }
        if let Some(f) = r.extra_as::<TierVerdict>().map(|v| v.fallbacks).filter(|f| !f.is_empty()) {
            sayln!("{} {}: {}", r.kernel, r.variant, f.join("; "));
        }
        if let Some(b) = barrier {
            sayln!("barrier {}: {:.2} us in-dispatch vs {:.2} us per relaunch", r.variant, r.stats.median * 1e6, b.relaunch_us);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ArgsOnly;
    use clap::CommandFactory;
    use simtlab::harness::Named;

    type Cli = ArgsOnly<PtArgs>;

    fn parse(line: &str) -> Sweep {
        Cli::parse_words(line).unwrap_or_else(|e| panic!("{line}: {e}")).sweep()
    }

    #[test]
    fn pt_lines_become_the_sweeps_they_name() {
        let s = parse("--case queue --kind chunked,ring --chunk 64 --n 100,200 --workgroups 1,2");
        let want = Sweep {
            kind: vec![QueueKind::Chunked, QueueKind::Ring],
            chunk: Some(64),
            n: vec![100, 200],
            workgroups: vec![1, 2],
            ..Sweep::new(Bench::Queue)
        };
        assert_eq!(s, want);
        let s = parse("--case barrier --fence none --arrival tree,flat --iterations 10 --spin-cap 99 --grace 9");
        let want = Sweep {
            fence: vec![BarrierFence::None],
            arrival: vec![BarrierArrival::Tree, BarrierArrival::Flat],
            iterations: Some(10),
            spin_cap: 99,
            grace: Some(9),
            ..Sweep::new(Bench::Barrier)
        };
        assert_eq!(s, want);
        let s = parse("--case sync --work cmi,ci --tier 0,2 --emit 0.25 --seed 4 --launch 3");
        assert_eq!((s.work, s.tier, s.emit, s.seed, s.launch), (vec![Work::Cmi, Work::Ci], vec![0, 2], Some(0.25), Some(4), Some(3)));
        let s = parse("--case forest --shape complete --items 64 --depth 20 --capacity 16 --fmas 5");
        assert_eq!((s.shape, s.items, s.depth, s.capacity, s.fmas), (vec![Shape::Complete], vec![64], vec![20], Some(16), vec![5]));
        let s = parse("--case prodcons --workload two-stage --pass 0,256");
        assert_eq!((s.workload, s.pass), (vec![Workload::TwoStage], vec![0, 256]));
        assert_eq!(parse("--case probe"), Sweep::new(Bench::Capability));
        // the library's messages name the command line's values
        for case in ["sync", "forest", "prodcons", "gsync", "barrier", "queue", "probe"] {
            assert_eq!(parse(&format!("--case {case}")).bench.short_name(), case);
        }
    }

    #[test]
    fn pt_help_lists_every_value_of_every_enum_option() {
        let cmd = Cli::command();
        let values = |id: &str| -> Vec<String> {
            let arg = cmd.get_arguments().find(|a| a.get_id() == id).unwrap_or_else(|| panic!("--{id}"));
            arg.get_possible_values().iter().map(|v| v.get_name().to_string()).collect()
        };
        let expect = [
            ("case", vec!["sync", "forest", "prodcons", "gsync", "barrier", "queue", "probe"]),
            ("work", vec!["ci", "cmi"]),
            ("shape", vec!["complete", "tilted"]),
            ("workload", vec!["reduce", "two-stage"]),
            ("fence", vec!["device", "none"]),
            ("arrival", vec!["flat", "tree"]),
            ("kind", vec!["single", "chunked", "distributed", "ring"]),
        ];
        for (id, names) in expect {
            assert_eq!(values(id), names, "--{id}");
        }
        // every variant has its help line
        fn every_value_has_help<T: Named>(help: &[(T, &str)]) {
            for &v in T::VALUES {
                assert!(help.iter().any(|h| h.0 == v && !h.1.is_empty()), "{} has no help line", v.name());
            }
        }
        every_value_has_help(CASES);
        every_value_has_help(WORKS);
        every_value_has_help(SHAPES);
        every_value_has_help(WORKLOADS);
        every_value_has_help(FENCES);
        every_value_has_help(ARRIVALS);
        every_value_has_help(QUEUE_KINDS);
    }

    /// Gupta's experiment keys its points by these arguments: each point runs what they say.
    #[test]
    fn gupta_points_run_the_sweeps_their_keys_name() {
        for (line, sweep) in super::super::keyed_configs::<Sweep>("gupta") {
            assert_eq!(sweep, parse(&line), "{line}");
        }
    }

    #[test]
    fn pt_lines_are_checked_by_the_library() {
        // the library names fields; the command line prints them as its flags
        let e = parse("--case barrier --launch 4").validate().unwrap_err();
        assert!(e.to_string().contains("`bench=barrier` does not use it"), "{e}");
        let (cli, words) = (<crate::Cli as clap::CommandFactory>::command(), ["bench".to_string(), "pt".to_string()]);
        let e = crate::flags::name_flags_in(e, &cli, &words).to_string();
        assert!(e.contains("--launch") && e.contains("--case barrier does not use it"), "{e}");
        let e = crate::flags::name_flags_in(parse("--case probe --tier 2").validate().unwrap_err(), &cli, &words).to_string();
        assert!(e.contains("--case probe"), "{e}");
    }
}
