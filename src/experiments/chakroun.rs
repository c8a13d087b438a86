//! Chakroun et al., PPAM'11: GPU bounding of flow-shop B&B pools. Table 1: pools built
//! depth-first vs breadth-first (thread-data reordering); Table 2: branch-refactored vs basic
//! kernel as a speedup over one CPU core. Pools come from the real search of Taillard
//! instances; every GPU bound is checked against the CPU. The tables and the means behind the
//! verdicts also serve `simtlab bench flowshop` ([`bench_summary`]).

use super::{point, section, About, Experiment, Outcome, Point, Scale};
use crate::error::Result;
use crate::harness::Record;
use crate::kernels::flowshop::bench::BoundingExtra;
use crate::report::{Cell, PaperValues, Section, Table, Verdict};
#[cfg(not(target_arch = "wasm32"))]
use {
    super::{params, run_workload},
    crate::gpu::Gpu,
    crate::kernels::flowshop::bench::BenchConfig,
    crate::kernels::flowshop::gpu::ThreadMapping,
    crate::kernels::flowshop::{Exploration, LowerBound},
};

pub(crate) fn experiments() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(Table1), Box::new(Table2)]
}

/// Instances and pool sizes (children) per scale: Tiny runs in seconds on a CPU adapter.
fn sweep(scale: Scale) -> (&'static [&'static str], &'static [usize]) {
    scale.pick(
        (&["ta021"], &[256]),
        (&["ta021", "ta051", "ta081"], &[1024, 4096]),
        (&["ta021", "ta051", "ta081", "ta101", "ta111"], &[4096, 8192, 16384, 32768, 65536]),
    )
}

#[derive(serde::Serialize, serde::Deserialize)]
struct InstancePoint {
    instance: String,
    pools: Vec<usize>,
    scale: Scale,
}

fn points(id: &str, scale: Scale) -> Vec<Point> {
    let (instances, pools) = sweep(scale);
    instances
        .iter()
        .map(|name| {
            let p = InstancePoint { instance: name.to_string(), pools: pools.to_vec(), scale };
            point(id, format!("{name} [{scale:?}]"), serde_json::to_value(p).unwrap_or_default())
        })
        .collect()
}

#[cfg(not(target_arch = "wasm32"))]
fn run_point(gpu: &Gpu, p: &Point, table2: bool) -> Result<Vec<Record>> {
    let ip: InstancePoint = params(p)?;
    let config = BenchConfig {
        instance: ip.instance,
        pool_sizes: ip.pools,
        bound: LowerBound::Lb2,
        strategies: if table2 { vec![Exploration::BreadthFirst] } else { vec![Exploration::DepthFirst, Exploration::BreadthFirst] },
        branchless: if table2 { vec![true, false] } else { vec![false] },
        // Table 1 also runs the paper's kernel, which walks each node's prefix
        walk_prefix: if table2 { vec![false] } else { vec![false, true] },
        mapping: ThreadMapping::PerChild,
        cpu: table2,
        probe: true,
    };
    run_workload(gpu, "flowshop-bound-pools", &config, &ip.scale.protocol())
}

struct Table1;

impl Experiment for Table1 {
    fn about(&self) -> About {
        About {
            paper: "chakroun",
            id: "chakroun-table1-dfs-bfs",
            title: "Table 1: kernel time to bound a pool on the GPU (LB2, basic kernel), pools built depth-first vs breadth-first",
        }
    }
    fn points(&self, scale: Scale) -> Vec<Point> {
        points(self.id(), scale)
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn run(&self, gpu: &Gpu, p: &Point) -> Result<Vec<Record>> {
        run_point(gpu, p, false)
    }
    fn render(&self, outcomes: &[&Outcome], paper: &PaperValues) -> Section {
        let records: Vec<&Record> = outcomes.iter().flat_map(|o| o.records.iter()).collect();
        let (walked, theirs) = dfs_over_bfs(&records, paper, true);
        let (record, _) = dfs_over_bfs(&records, paper, false);
        Section {
            tables: vec![table1(&records, paper), throughput_table(&records)],
            paper_tables: vec!["table1".into()],
            verdicts: vec![
                Verdict::direction(
                    "with the paper's kernel (heads walked along the prefix), pools built breadth-first bound faster than depth-first ones (mean DFS kernel time / BFS kernel time)",
                    theirs,
                    walked,
                    "x",
                    1.0,
                ),
                Verdict::direction(
                    "with heads read from the parent record, pools built breadth-first bound faster than depth-first ones (mean DFS kernel time / BFS kernel time)",
                    theirs,
                    record,
                    "x",
                    1.0,
                ),
            ],
            notes: vec![
                "Our times are kernel milliseconds per pool (device timestamps where the adapter has them, else wall \
                 time with upload and readback); the paper prints no unit. 'prefix walk' is the paper's kernel: each \
                 thread recomputes its parent's heads along the prefix, a loop whose trip count is the node's depth, \
                 so nodes of different tree levels in one warp diverge (probe site 3). 'record heads' is simtlab's \
                 kernel: the heads come with the parent record, no loop depends on the depth, and only the \
                 unscheduled-job test of LB2 still depends on the node."
                    .into(),
            ],
            ..section(self, outcomes)
        }
    }
}

struct Table2;

impl Experiment for Table2 {
    fn about(&self) -> About {
        About {
            paper: "chakroun",
            id: "chakroun-table2-refactoring",
            title: "Table 2: speedup over one CPU core of the branch-refactored and basic LB2 kernels (breadth-first pools)",
        }
    }
    fn points(&self, scale: Scale) -> Vec<Point> {
        points(self.id(), scale)
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn run(&self, gpu: &Gpu, p: &Point) -> Result<Vec<Record>> {
        run_point(gpu, p, true)
    }
    fn render(&self, outcomes: &[&Outcome], paper: &PaperValues) -> Section {
        let records: Vec<&Record> = outcomes.iter().flat_map(|o| o.records.iter()).collect();
        let (ours, theirs) = refactoring_gain(&records, paper);
        let paper_best = paper.claim("max_speedup_refactored_table").and_then(|c| c.value);
        Section {
            tables: vec![table2(&records, paper), throughput_table(&records)],
            paper_tables: vec!["table2".into()],
            verdicts: vec![
                Verdict::direction(
                    "branch refactoring speeds up the bound kernel (mean basic time / refactored time)",
                    theirs,
                    ours,
                    "x",
                    1.0,
                ),
                Verdict::direction(
                    "the GPU bounds a pool faster than one CPU core (best refactored speedup)",
                    paper_best,
                    best_speedup(&records),
                    "x",
                    1.0,
                ),
            ],
            notes: vec!["Speedup = one-core CPU time / GPU time (upload, kernel, readback) on the same pool.".into()],
            ..section(self, outcomes)
        }
    }
}

/// What `simtlab bench flowshop` shows: Tables 1 and 2 (the paper's values beside ours), bounds
/// per second, and the means the verdicts compare.
#[derive(Clone, Debug)]
pub struct BenchSummary {
    /// Table 1, Table 2 and bounds per second: those the records give rows to.
    pub tables: Vec<Table>,
    /// DFS kernel time / BFS kernel time of the basic kernel, mean, with record heads then with
    /// the prefix walk: (ours, the paper's).
    pub dfs_over_bfs: [(Option<f64>, Option<f64>); 2],
    /// Basic kernel time / refactored kernel time, mean: (ours, the paper's).
    pub refactoring_gain: (Option<f64>, Option<f64>),
}

/// The tables and means of `simtlab bench flowshop` from its records.
pub fn bench_summary(records: &[Record]) -> Result<BenchSummary> {
    let paper = PaperValues::of("chakroun")?;
    let refs: Vec<&Record> = records.iter().collect();
    let tables = [table1(&refs, &paper), table2(&refs, &paper), throughput_table(&refs)];
    Ok(BenchSummary {
        tables: tables.into_iter().filter(|t| !t.rows.is_empty()).collect(),
        dfs_over_bfs: [dfs_over_bfs(&refs, &paper, false), dfs_over_bfs(&refs, &paper, true)],
        refactoring_gain: refactoring_gain(&refs, &paper),
    })
}

fn param_str(r: &Record, key: &str) -> String {
    r.params[key].as_str().unwrap_or("").to_string()
}

/// Instance sizes ("20x20", ...) in the order they appear.
fn sizes(records: &[&Record]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in records {
        let s = param_str(r, "size");
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

fn pool_sizes(records: &[&Record]) -> Vec<u64> {
    let mut v: Vec<u64> = records.iter().filter_map(|r| r.params["pool_size"].as_u64()).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The paper's value for `pool` × `label` (4th column) in table `id`, instance size `size`.
fn paper_value(paper: &PaperValues, id: &str, pool: u64, label: &str, size: &str) -> Option<f64> {
    let t = paper.table(id)?;
    let column = t.columns.iter().position(|c| *c == format!("ta_{size}"))?;
    let row = t
        .rows
        .iter()
        .find(|r| r.first().and_then(|v| v.as_integer()) == Some(pool as i64) && r.get(3).and_then(|v| v.as_str()) == Some(label))?;
    match row.get(column)? {
        toml::Value::Float(f) => Some(*f),
        toml::Value::Integer(i) => Some(*i as f64),
        _ => None,
    }
}

fn find<'r>(records: &[&'r Record], pred: impl Fn(&Record) -> bool) -> Option<&'r Record> {
    records.iter().copied().find(|r| pred(r))
}

/// The GPU record of a kernel (`branchless`, `walk_prefix`) on one pool.
fn gpu_record<'r>(
    records: &[&'r Record],
    size: &str,
    pool: u64,
    strategy: &str,
    branchless: bool,
    walk_prefix: bool,
) -> Option<&'r Record> {
    find(records, |r| {
        r.params["device"] == "gpu"
            && param_str(r, "size") == size
            && r.params["pool_size"].as_u64() == Some(pool)
            && param_str(r, "strategy") == strategy
            && r.params["branchless"] == branchless
            && r.params["walk_prefix"].as_bool().unwrap_or(false) == walk_prefix
    })
}

/// Kernel time of a GPU record (device timestamps where the adapter has them), else its
/// wall time per pool.
fn kernel_seconds(r: &Record) -> f64 {
    r.extra_as::<BoundingExtra>().and_then(|e| e.kernel_seconds_median).unwrap_or(r.stats.median)
}

/// Table 1: kernel time to bound a pool built depth-first vs breadth-first (basic kernel),
/// with the heads read from the parent record and walked along the prefix (the paper's
/// kernel), in ms beside the paper's values (unit not printed in the paper).
fn table1(records: &[&Record], paper: &PaperValues) -> Table {
    let sizes = sizes(records);
    let mut columns = vec!["pool".to_string(), "pool order".into()];
    for s in &sizes {
        columns.extend([format!("{s} record heads (ms)"), format!("{s} prefix walk (ms)"), format!("{s} paper")]);
    }
    let mut rows = Vec::new();
    for pool in pool_sizes(records) {
        for (strategy, label) in [("dfs", "DFS"), ("bfs", "BFS")] {
            let mut row = vec![Cell::exact(pool as f64, 0), Cell::text(label)];
            let mut any = false;
            for s in &sizes {
                for walk in [false, true] {
                    let ours = gpu_record(records, s, pool, strategy, false, walk).map(|r| kernel_seconds(r) * 1e3);
                    any |= ours.is_some();
                    row.push(ours.map_or(Cell::Missing, |v| Cell::measured(v, 3)));
                }
                row.push(paper_value(paper, "table1", pool, label, s).map_or(Cell::Missing, |v| Cell::exact(v, 2)));
            }
            if any {
                rows.push(row);
            }
        }
    }
    Table { title: "Table 1: kernel time to bound one pool on the GPU, basic kernel, pools built DFS vs BFS".into(), columns, rows }
}

/// Mean over (instance, pool) pairs of DFS kernel time / BFS kernel time (basic kernel,
/// heads walked along the prefix when `walk_prefix`), ours and the paper's.
fn dfs_over_bfs(records: &[&Record], paper: &PaperValues, walk_prefix: bool) -> (Option<f64>, Option<f64>) {
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for s in sizes(records) {
        for pool in pool_sizes(records) {
            let dfs = gpu_record(records, &s, pool, "dfs", false, walk_prefix);
            let bfs = gpu_record(records, &s, pool, "bfs", false, walk_prefix);
            if let (Some(d), Some(b)) = (dfs, bfs) {
                ours.push(kernel_seconds(d) / kernel_seconds(b));
                if let (Some(pd), Some(pb)) = (paper_value(paper, "table1", pool, "DFS", &s), paper_value(paper, "table1", pool, "BFS", &s))
                {
                    theirs.push(pd / pb);
                }
            }
        }
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    (mean(&ours), mean(&theirs))
}

fn speedup(r: &Record) -> Option<f64> {
    r.extra_as::<BoundingExtra>()?.speedup_over_one_core
}

/// The pool order the GPU records of Table 2 use: the one the CPU was timed on.
fn table2_strategy(records: &[&Record]) -> String {
    find(records, |r| r.params["device"] == "cpu").map_or("bfs".into(), |r| param_str(r, "strategy"))
}

/// Table 2: speedup of the refactored and basic kernels over one CPU core (same pool).
fn table2(records: &[&Record], paper: &PaperValues) -> Table {
    let sizes = sizes(records);
    let strategy = table2_strategy(records);
    let mut columns = vec!["pool".to_string(), "version".into()];
    for s in &sizes {
        columns.extend([format!("{s} ours (x)"), format!("{s} paper (x)")]);
    }
    let mut rows = Vec::new();
    for pool in pool_sizes(records) {
        for (branchless, label) in [(true, "refactored"), (false, "basic")] {
            let mut row = vec![Cell::exact(pool as f64, 0), Cell::text(label)];
            let mut any = false;
            for s in &sizes {
                let ours = gpu_record(records, s, pool, &strategy, branchless, false).and_then(speedup);
                any |= ours.is_some();
                row.push(ours.map_or(Cell::Missing, |v| Cell::measured(v, 2)));
                row.push(paper_value(paper, "table2", pool, label, s).map_or(Cell::Missing, |v| Cell::exact(v, 2)));
            }
            if any {
                rows.push(row);
            }
        }
    }
    Table {
        title: format!("Table 2: speedup over one CPU core, refactored vs basic kernel ({} pools)", strategy.to_uppercase()),
        columns,
        rows,
    }
}

/// Mean over (instance, pool) of basic time / refactored time, ours and the paper's
/// (the paper's from its speedups: refactored speedup / basic speedup).
fn refactoring_gain(records: &[&Record], paper: &PaperValues) -> (Option<f64>, Option<f64>) {
    let strategy = table2_strategy(records);
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for s in sizes(records) {
        for pool in pool_sizes(records) {
            if let (Some(r), Some(b)) =
                (gpu_record(records, &s, pool, &strategy, true, false), gpu_record(records, &s, pool, &strategy, false, false))
            {
                ours.push(b.stats.median / r.stats.median);
                if let (Some(pr), Some(pb)) =
                    (paper_value(paper, "table2", pool, "refactored", &s), paper_value(paper, "table2", pool, "basic", &s))
                {
                    theirs.push(pr / pb);
                }
            }
        }
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    (mean(&ours), mean(&theirs))
}

/// Largest speedup over one core among the GPU records (refactored kernel).
fn best_speedup(records: &[&Record]) -> Option<f64> {
    records.iter().filter(|r| r.params["branchless"] == true).filter_map(|r| speedup(r)).reduce(f64::max)
}

/// Bounds per second: GPU kernels, one CPU core, all CPU cores, per instance and pool.
fn throughput_table(records: &[&Record]) -> Table {
    let mut table = Table::new(
        "Bounds per second (GPU: upload + kernel + readback; CPU: bounding only)",
        &["instance", "size", "pool", "variant", "min depth", "max depth", "median (ms)", "Mbounds/s", "branch eff.", "check"],
    );
    for r in records {
        table.rows.push(vec![
            Cell::text(param_str(r, "instance")),
            Cell::text(param_str(r, "size")),
            Cell::exact(r.params["pool_size"].as_f64().unwrap_or(0.0), 0),
            Cell::text(&r.variant),
            Cell::exact(r.params["min_depth"].as_f64().unwrap_or(0.0), 0),
            Cell::exact(r.params["max_depth"].as_f64().unwrap_or(0.0), 0),
            Cell::measured(r.stats.median * 1e3, 3),
            r.throughput.as_ref().map_or(Cell::Missing, |t| Cell::measured(t.value, 3)),
            r.divergence.map_or(Cell::Missing, |d| Cell::measured(d.branch_efficiency, 3)),
            Cell::check(r.check.passed),
        ]);
    }
    table
}
