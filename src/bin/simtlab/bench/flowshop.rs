//! `simtlab bench flowshop`: Chakroun's Tables 1-2.

use crate::flowshop::{EXPLORATIONS, KERNELS, MAPPINGS};
use crate::output::say;
use crate::output::{finish, Output};
use crate::value::choice;
use clap::Args;
use simtlab::experiments::chakroun::{self, BenchSummary};
use simtlab::kernels::flowshop::bench::BenchConfig;
use simtlab::kernels::flowshop::commands::{Heads, KernelVariant};
use simtlab::kernels::flowshop::gpu::ThreadMapping;
use simtlab::kernels::flowshop::{Exploration, LowerBound};
use simtlab::report::{Cell, Table};
use simtlab::workload::{self, Run};
use simtlab::{Gpu, Result};

/// `simtlab bench flowshop`: Table 1 (DFS vs BFS pools), Table 2 (refactored vs basic,
/// speedup over one CPU core) and bounds/s on GPU vs one core vs all cores.
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// Taillard instances (the paper's sizes: 20x20, 50x20, 100x20, 200x20, 500x20).
    #[arg(long, value_delimiter = ',', default_value = "ta021,ta051,ta081,ta101,ta111")]
    pub instances: Vec<String>,
    /// Children per pool.
    #[arg(long, value_delimiter = ',', default_value = "4096,8192,16384,32768,65536")]
    pub pools: Vec<usize>,
    #[arg(long, value_parser = choice::<LowerBound>(&[]), default_value = "lb2")]
    pub bound: LowerBound,
    /// Pool orders.
    #[arg(long, value_parser = choice::<Exploration>(EXPLORATIONS), value_delimiter = ',', default_value = "dfs,bfs")]
    pub exploration: Vec<Exploration>,
    /// GPU kernel variants.
    #[arg(long, value_parser = choice::<KernelVariant>(KERNELS), value_delimiter = ',', default_value = "refactored,basic")]
    pub kernel: Vec<KernelVariant>,
    /// Where each GPU kernel gets a parent's heads: `record` reads them from the parent
    /// record, `walk` recomputes them along the prefix as the paper's kernel does (a loop as
    /// long as the node is deep).
    #[arg(long, value_parser = choice::<Heads>(&[]), value_delimiter = ',', default_value = "record")]
    pub heads: Vec<Heads>,
    #[arg(long, value_parser = choice::<ThreadMapping>(MAPPINGS), default_value = "per-child")]
    pub mapping: ThreadMapping,
    /// Skip the CPU timings (and with them Table 2); the CPU takes at most 3 of --samples.
    #[arg(long)]
    pub no_cpu: bool,
    /// Skip the divergence probe runs.
    #[arg(long)]
    pub no_probe: bool,
    #[command(flatten)]
    pub output: Output,
}

impl BenchArgs {
    /// One benchmark configuration per instance.
    pub fn configs(&self) -> Vec<BenchConfig> {
        self.instances
            .iter()
            .map(|name| BenchConfig {
                instance: name.to_ascii_lowercase(),
                pool_sizes: self.pools.clone(),
                bound: self.bound,
                strategies: self.exploration.clone(),
                branchless: self.kernel.iter().map(|&k| k == KernelVariant::Refactored).collect(),
                walk_prefix: self.heads.iter().map(|&h| h == Heads::Walk).collect(),
                mapping: self.mapping,
                cpu: !self.no_cpu,
                probe: !self.no_probe,
            })
            .collect()
    }
}

/// Kernel time on pools built DFS vs BFS, refactored vs basic kernel over one CPU core, and
/// bounds/s on GPU vs one core vs all cores: the registry's `flowshop-bound-pools` once per
/// instance. Every GPU result is checked against the CPU bounds of the same pool (an error on
/// the first mismatch).
pub fn run(gpu: &Gpu, a: &BenchArgs) -> Result<()> {
    let runs = a
        .configs()
        .iter()
        .map(|c| Ok(Run { label: c.instance.clone(), ..Run::new("flowshop-bound-pools", c)? }))
        .collect::<Result<Vec<Run>>>()?;
    let records = workload::run_all(gpu, &runs, &a.output.protocol(), "flowshop")?;
    let out = finish(&records, &a.output);
    say!("\n{}", summary_text(&chakroun::bench_summary(&records)?));
    out
}

/// The tables, then the means the verdicts compare.
fn summary_text(summary: &BenchSummary) -> String {
    let mut out = String::new();
    for table in &summary.tables {
        out += &table_text(table);
        out.push('\n');
    }
    let paper = |v: Option<f64>| v.map_or("—".into(), |v| format!("{v:.3}"));
    for ((ours, theirs), heads) in summary.dfs_over_bfs.iter().zip(["record heads", "prefix walk"]) {
        if let Some(ours) = ours {
            out += &format!("DFS kernel time / BFS kernel time, basic kernel, {heads}, mean: ours {ours:.3}, paper {}\n", paper(*theirs));
        }
    }
    if let (Some(ours), theirs) = summary.refactoring_gain {
        out += &format!("basic time / refactored time, mean: ours {ours:.3}, paper {}\n", paper(theirs));
    }
    out
}

/// A [`Table`] as aligned text for the terminal.
pub fn table_text(table: &Table) -> String {
    let mut rows: Vec<Vec<String>> = vec![table.columns.clone()];
    rows.extend(table.rows.iter().map(|r| r.iter().map(Cell::render).collect()));
    let columns = table.columns.len();
    let widths: Vec<usize> =
        (0..columns).map(|c| rows.iter().map(|r| r.get(c).map_or(0, |s| s.chars().count())).max().unwrap_or(0)).collect();
    let mut out = format!("{}\n", table.title);
    for (i, row) in rows.iter().enumerate() {
        let line: Vec<String> = row.iter().zip(&widths).map(|(s, w)| format!("{s:<w$}")).collect();
        out += line.join("  ").trim_end();
        out.push('\n');
        if i == 0 {
            out += &"-".repeat(widths.iter().sum::<usize>() + 2 * columns.saturating_sub(1));
            out.push('\n');
        }
    }
    out
}
