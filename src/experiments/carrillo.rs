//! Carrillo et al.: occupancy of the branched and split kernels on G80 and the model's speedup,
//! and the branch- and loop-splitting sweeps ([`run_sweep`], also `simtlab bench carrillo`).

use super::{point, section, About, Experiment, ModelExtra, Outcome, Point, Scale};
use crate::error::{Error, Result};
use crate::harness::{Named, Record};
use crate::kernels::split::{self, BranchConfig, LoopConfig, MaskLayout, SplitSweep};
use crate::occupancy::{carrillo_worst_case, Branch};
use crate::report::{Cell, PaperValues, Section, Table, Verdict};
use crate::workload::{BranchSweep, Run};
#[cfg(not(target_arch = "wasm32"))]
use {
    super::{model_record, params},
    crate::gpu::Gpu,
    crate::harness::Protocol,
    crate::occupancy::{calculate, find_arch, Launch},
    crate::workload,
};

pub(crate) fn experiments() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(SplitOccupancy)]
}

struct SplitOccupancy;

#[derive(serde::Serialize, serde::Deserialize)]
struct KernelRegs {
    kernel: String,
    registers: u32,
    paper_occupancy_pct: f64,
}

impl Experiment for SplitOccupancy {
    fn about(&self) -> About {
        About {
            paper: "carrillo",
            id: "carrillo-occupancy-model",
            title: "Section 5: G80 occupancy of the if, else and branched kernels (256 threads) and the eq. 2 worst case",
        }
    }
    fn points(&self, _scale: Scale) -> Vec<Point> {
        [("if-kernel (split)", 6, 100.0), ("else-kernel (split)", 13, 67.0), ("branched kernel", 13, 67.0)]
            .into_iter()
            .map(|(kernel, registers, pct)| {
                let v = KernelRegs { kernel: kernel.into(), registers, paper_occupancy_pct: pct };
                point(
                    self.id(),
                    format!("{}-r{registers}", kernel.split_whitespace().next().unwrap_or("k")),
                    serde_json::to_value(v).unwrap_or_default(),
                )
            })
            .collect()
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn run(&self, gpu: &Gpu, p: &Point) -> Result<Vec<Record>> {
        let k: KernelRegs = params(p)?;
        let occ = calculate(find_arch("cc1.0")?, Launch::new(256, k.registers, 0))?;
        // the paper prints whole percents
        let ours = (occ.occupancy * 100.0).round();
        let extra = ModelExtra { model: ours, paper: k.paper_occupancy_pct, blocks: Some(occ.active_blocks_per_sm), ..Default::default() };
        Ok(vec![model_record(gpu, "occupancy", &k.kernel, &format!("{} registers", k.registers), p.params.clone(), extra)])
    }
    fn render(&self, outcomes: &[&Outcome], paper: &PaperValues) -> Section {
        let mut table = Table::new(
            "cc1.0, 256 threads per block",
            &["kernel", "registers", "blocks/SM", "occupancy % (model)", "occupancy % (paper)", "agrees"],
        );
        let mut agree = !outcomes.is_empty();
        for o in outcomes {
            for r in &o.records {
                agree &= r.check.passed;
                let extra: ModelExtra = r.extra_as().unwrap_or_default();
                table.rows.push(vec![
                    Cell::text(&r.kernel),
                    Cell::exact(r.params["registers"].as_f64().unwrap_or(0.0), 0),
                    Cell::exact(extra.blocks.unwrap_or(0) as f64, 0),
                    Cell::exact(extra.model, 0),
                    Cell::exact(extra.paper, 0),
                    Cell::text(if r.check.passed { "yes" } else { "NO" }),
                ]);
            }
        }
        // eq. 2: both branches equally long, the split if-kernel at full occupancy
        let worst = carrillo_worst_case(&[Branch { time: 1.0, occupancy: 1.0 }, Branch { time: 1.0, occupancy: 2.0 / 3.0 }], 0.0).ok();
        let paper_gain = paper.claims.iter().find(|c| c.text.contains("19.7")).and_then(|c| c.value);
        Section {
            tables: vec![table],
            verdicts: vec![
                Verdict::holds("the model reproduces the paper's occupancies", agree),
                Verdict::direction("eq. 2 worst-case gain of splitting (percent)", paper_gain, worst.map(|w| w.gain_percent), " %", 0.0),
            ],
            failures: outcomes.iter().filter_map(|o| o.error.clone()).collect(),
            ..section(self, outcomes)
        }
    }
}

/// The branch-splitting sweeps of each scale, keyed by the `bench carrillo` options they are.
fn sweep_points(scale: Scale) -> Vec<(&'static str, SplitSweep)> {
    match scale {
        Scale::Tiny => vec![(
            "--layout linear --steps 2 --n 4096 --loop-len 0",
            SplitSweep { layout: MaskLayout::Linear, steps: Some(2), n: 4096, loop_len: 0, ..Default::default() },
        )],
        Scale::Quick => vec![
            (
                "--layout linear --steps 5 --n 65536 --loop-n 65536",
                SplitSweep { layout: MaskLayout::Linear, steps: Some(5), n: 65536, loop_n: 65536, ..Default::default() },
            ),
            (
                "--layout random --fractions 0,0.01,0.05,0.2,0.5,1 --n 65536 --loop-len 0",
                SplitSweep {
                    layout: MaskLayout::Random,
                    fractions: vec![0.0, 0.01, 0.05, 0.2, 0.5, 1.0],
                    n: 65536,
                    loop_len: 0,
                    ..Default::default()
                },
            ),
        ],
        Scale::Full => vec![
            ("--layout linear --steps 10", SplitSweep { layout: MaskLayout::Linear, steps: Some(10), ..Default::default() }),
            (
                "--layout random --steps 10 --loop-len 0",
                SplitSweep { layout: MaskLayout::Random, steps: Some(10), loop_len: 0, ..Default::default() },
            ),
        ],
    }
}

/// A splitting sweep as registry runs: the branch sweep of its layout over the else-fractions
/// (`branch-split-linear` or `branch-split-random`), then the loop pair (`loop-split`) unless
/// `loop_len` is 0.
pub fn sweep_runs(sweep: &SplitSweep) -> Result<Vec<Run>> {
    let fractions = match (sweep.steps, sweep.fractions.is_empty()) {
        (Some(_), false) => return Err(Error::invalid("steps", "give `steps` or `fractions`, not both")),
        (steps, true) => split::sweep_fractions(sweep.layout, steps.unwrap_or(split::DEFAULT_STEPS))?,
        (None, false) => sweep.fractions.clone(),
    };
    if let Some(f) = fractions.iter().find(|f| !(0.0..=1.0).contains(*f)) {
        return Err(Error::invalid("fractions", format!("{f} (use 0..=1)")));
    }
    let config = BranchConfig { n: sweep.n, light_rounds: sweep.light_rounds, heavy_rounds: sweep.heavy_rounds, seed: sweep.seed };
    let branch = BranchSweep { config, else_fractions: fractions };
    let mut runs = vec![Run::new(&format!("branch-split-{}", sweep.layout.name()), &branch)?];
    if sweep.loop_len > 0 {
        runs.push(Run::new("loop-split", &LoopConfig { n: sweep.loop_n, len: sweep.loop_len, seed: sweep.seed })?);
    }
    Ok(runs)
}

/// Runs a splitting sweep through the registry; every option is checked, and both
/// benchmarks' memory, before anything runs.
#[cfg(not(target_arch = "wasm32"))]
pub fn run_sweep(gpu: &Gpu, sweep: &SplitSweep, protocol: &Protocol) -> Result<Vec<Record>> {
    workload::run_all(gpu, &sweep_runs(sweep)?, protocol, "carrillo")
}

/// Split time / branched time per else-fraction (below 1: splitting pays).
fn ratios(records: &[&Record], layout: &str) -> Vec<(f64, f64)> {
    let at = |kernel: &str, f: f64| {
        records
            .iter()
            .find(|r| r.kernel == kernel && r.params["layout"] == layout && r.params["else_fraction"].as_f64() == Some(f))
            .map(|r| r.stats.median)
    };
    let mut v: Vec<(f64, f64)> = records
        .iter()
        .filter(|r| r.kernel == split::BRANCHED_KERNEL && r.params["layout"] == layout)
        .filter_map(|r| {
            let f = r.params["else_fraction"].as_f64()?;
            Some((f * 100.0, at(split::SPLIT_KERNEL, f)? / r.stats.median))
        })
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

fn sweep_figure(records: &[&Record]) -> crate::report::Figure {
    let series = ["linear", "random"]
        .iter()
        .map(|l| crate::report::Series { name: format!("{l} mask: split / branched"), points: ratios(records, l), spread: Vec::new() })
        .filter(|s| !s.points.is_empty())
        .collect();
    crate::report::Figure {
        id: "carrillo-split-vs-branched".into(),
        title: "branch splitting: split time / branched time (below 1: splitting pays)".into(),
        x_label: "else fraction (%)".into(),
        y_label: "split / branched".into(),
        series,
        ..Default::default()
    }
}

fn sweep_verdicts(records: &[&Record], paper: &PaperValues) -> Vec<Verdict> {
    let gain = paper.claim("split_speedup_98pct_low").and_then(|c| c.value).map(|p| 1.0 + p / 100.0);
    ["linear", "random"]
        .iter()
        .filter_map(|l| {
            let r = ratios(records, l);
            if r.is_empty() {
                return None;
            }
            let mean_speedup = r.len() as f64 / r.iter().map(|p| p.1).sum::<f64>();
            Some(Verdict::direction(
                format!("{l} mask: splitting speeds up the branch (mean speedup over the sweep)"),
                gain,
                Some(mean_speedup),
                "x",
                1.0,
            ))
        })
        .collect()
}

pub(crate) fn sweeps() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(super::ConfigSweep {
        paper: "carrillo",
        id: "carrillo-branch-split",
        title: "Figures 7-10: branched vs split kernels over the else fraction, linear and random masks; loop splitting",
        points: sweep_points,
        #[cfg(not(target_arch = "wasm32"))]
        run: run_sweep,
        verdicts: sweep_verdicts,
        figure: Some(sweep_figure),
        paper_tables: &["fig8", "fig10"],
        notes: None,
    })]
}
