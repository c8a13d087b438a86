//! `simtlab bench pt`: the command-line sweep over the use cases and microbenchmarks.

use super::forest::{ForestCase, ForestConfig, Shape};
use super::gsync::{GsyncCase, GsyncConfig};
use super::micro::{self, QueueConfig, QueueKind};
use super::prodcons::{ProdConsCase, ProdConsConfig, Workload};
use super::sync::{SyncCase, SyncConfig, Work};
use super::{bench, Case};
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

/// Arguments of `simtlab bench pt`. List-valued options are swept (cartesian product).
#[derive(clap::Args, Debug, Clone)]
pub struct PtArgs {
    #[arg(long, value_enum)]
    pub case: PtCase,
    /// Tiers to run (0 multi-dispatch, 1 non-blocking PT, 2 blocking PT); default all the case has.
    #[arg(long, value_delimiter = ',')]
    pub tier: Vec<u8>,
    /// Multiply-adds per item (sync, forest, prodcons two-stage, gsync).
    #[arg(long, value_delimiter = ',')]
    pub fmas: Vec<u32>,
    /// sync / prodcons: items.
    #[arg(long, value_delimiter = ',')]
    pub n: Vec<usize>,
    /// sync: fraction of inputs the producer emits.
    #[arg(long, default_value_t = 0.5)]
    pub emit: f64,
    /// sync: ci (compute-intensive) or cmi (compute + memory).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "ci")]
    pub work: Vec<Work>,
    /// forest: complete or tilted.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "tilted")]
    pub shape: Vec<Shape>,
    /// forest: initial items.
    #[arg(long, value_delimiter = ',', default_value = "128")]
    pub items: Vec<u32>,
    /// forest: depth (levels, ≤ 1000).
    #[arg(long, value_delimiter = ',', default_value = "50")]
    pub depth: Vec<u32>,
    /// forest / queue ring: queue capacity (default: twice the widest level / the participants).
    #[arg(long)]
    pub capacity: Option<u32>,
    /// prodcons: reduce or two-stage.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "reduce,two-stage")]
    pub workload: Vec<Workload>,
    /// prodcons two-stage: items passed to stage 2 per 256 (0..=256).
    #[arg(long, value_delimiter = ',', default_value = "0,32,128,256")]
    pub pass: Vec<u32>,
    /// gsync: global syncs.
    #[arg(long, value_delimiter = ',', default_value = "100")]
    pub syncs: Vec<u32>,
    /// gsync: blocks of 256 items.
    #[arg(long, value_delimiter = ',', default_value = "1024")]
    pub blocks: Vec<u32>,
    /// barrier: workgroup counts; queue: workgroups launched (default: discovered).
    #[arg(long, value_delimiter = ',')]
    pub workgroups: Vec<u32>,
    /// barrier: how workgroups arrive (device: storageBarrier; none: workgroupBarrier only).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "device")]
    pub fence: Vec<micro::BarrierFence>,
    /// barrier: where workgroups arrive (flat: one counter; tree: sub-counters, then one).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "flat")]
    pub arrival: Vec<micro::BarrierArrival>,
    /// barrier: barriers per launch.
    #[arg(long, default_value_t = 1000)]
    pub iterations: u32,
    /// queue: kinds to measure.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "single,chunked,distributed,ring")]
    pub kind: Vec<QueueKind>,
    /// queue: items per chunk.
    #[arg(long, default_value_t = 256)]
    pub chunk: u32,
    /// queue: distributed heads (≤ 64).
    #[arg(long, default_value_t = 64)]
    pub heads: u32,
    /// queue ring: items per participant.
    #[arg(long, default_value_t = 1024)]
    pub rounds: u32,
    /// Persistent kernels launch this many workgroups instead of the discovered count.
    #[arg(long)]
    pub launch: Option<u32>,
    /// Bound of every wait loop, in polls.
    #[arg(long, default_value_t = crate::pt::launch::DEFAULT_SPIN_CAP)]
    pub spin_cap: u32,
    /// Discovery grace period in polls (default: 32 on GPUs, 2048 on CPU adapters).
    #[arg(long)]
    pub grace: Option<u32>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

fn tiers(args: &PtArgs) -> Result<Vec<Tier>> {
    if args.tier.is_empty() {
        return Ok(Tier::ALL.to_vec());
    }
    args.tier.iter().map(|&t| Tier::from_number(t).ok_or_else(|| Error::invalid("--tier", format!("{t} (use 0, 1 or 2)")))).collect()
}

fn or<T: Clone>(v: &[T], default: T) -> Vec<T> {
    if v.is_empty() {
        vec![default]
    } else {
        v.to_vec()
    }
}

/// Runs the sweep `args` asks for and returns its records.
pub fn bench_cli(gpu: &Gpu, args: &PtArgs, protocol: &Protocol) -> Result<Vec<Record>> {
    let rt = Runtime::new(PtOptions {
        spin_cap: args.spin_cap,
        grace: args.grace,
        launch: args.launch,
        ..Default::default()
    });
    let cap = rt.capability(gpu)?;
    eprintln!(
        "pt probe on {}: {} co-resident workgroups of 256 (of {} launched, {:.1} us); blocking tier {}",
        gpu.adapter_name(),
        cap.discovered,
        cap.discovery_launch,
        cap.discovery_seconds * 1e6,
        if cap.blocking_ok { "allowed".to_string() } else { format!("refused: {}", cap.reason.as_deref().unwrap_or("?")) }
    );
    let tiers = tiers(args)?;
    let mut cases: Vec<Box<dyn Case>> = Vec::new();
    match args.case {
        PtCase::Probe => {
            println!("{}", serde_json::to_string_pretty(&cap).unwrap_or_default());
            return Ok(Vec::new());
        }
        PtCase::Barrier => {
            let w = if args.workgroups.is_empty() { vec![cap.discovered.max(1)] } else { args.workgroups.clone() };
            let kinds: Vec<micro::BarrierKind> =
                args.arrival.iter().flat_map(|&arrival| args.fence.iter().map(move |&fence| micro::BarrierKind { arrival, fence })).collect();
            return micro::bench_barrier(gpu, &rt, &w, &kinds, args.iterations, protocol);
        }
        PtCase::Queue => {
            let mut records = Vec::new();
            for &kind in &args.kind {
                for &w in &or(&args.workgroups.iter().map(|&w| Some(w)).collect::<Vec<_>>(), None) {
                    for &n in &or(&args.n, 1 << 24) {
                        let cfg = QueueConfig {
                            kind,
                            n: u32::try_from(n).map_err(|_| Error::invalid("--n", "at most 2^32-1 items"))?,
                            chunk: args.chunk,
                            heads: args.heads,
                            rounds: args.rounds,
                            capacity: args.capacity,
                            workgroups: w,
                        };
                        records.push(micro::bench_queue(gpu, &rt, &cfg, protocol)?);
                    }
                }
            }
            return Ok(records);
        }
        PtCase::Sync => {
            for &work in &args.work {
                for &fmas in &or(&args.fmas, 64) {
                    for &n in &or(&args.n, 1 << 20) {
                        cases.push(Box::new(SyncCase::new(SyncConfig { n, emit: args.emit, fmas, work, seed: args.seed, ..Default::default() })?));
                    }
                }
            }
        }
        PtCase::Forest => {
            for &shape in &args.shape {
                for &items in &args.items {
                    for &depth in &args.depth {
                        for &fmas in &or(&args.fmas, 1000) {
                            let cfg = ForestConfig { shape, items, depth, fmas, capacity: args.capacity, seed: args.seed };
                            cases.push(Box::new(ForestCase::new(cfg)?));
                        }
                    }
                }
            }
        }
        PtCase::Prodcons => {
            for &workload in &args.workload {
                for &n in &or(&args.n, 1 << 22) {
                    let passes = if workload == Workload::Reduce { vec![0] } else { args.pass.clone() };
                    for &pass in &passes {
                        for &fmas in &or(&args.fmas, 100) {
                            let cfg = ProdConsConfig { workload, n, fmas, pass, seed: args.seed, ..Default::default() };
                            cases.push(Box::new(ProdConsCase::new(cfg)?));
                        }
                    }
                }
            }
        }
        PtCase::Gsync => {
            for &blocks in &args.blocks {
                for &syncs in &args.syncs {
                    for &fmas in &or(&args.fmas, 1000) {
                        cases.push(Box::new(GsyncCase::new(GsyncConfig { blocks, syncs, fmas, seed: args.seed })?));
                    }
                }
            }
        }
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
