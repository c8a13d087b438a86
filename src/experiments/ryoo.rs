//! Ryoo et al., PPoPP'08: the G80 occupancy of the matmul versions (Figure 4 / section 4).

use super::{point, section, About, Experiment, ModelExtra, Outcome, Point, Scale};
use crate::harness::Record;
use crate::kernels::matmul::{Ladder, Variant};
use crate::report::{Cell, PaperValues, Section, Table, Verdict};
#[cfg(not(target_arch = "wasm32"))]
use {
    super::{model_record, params},
    crate::error::Result,
    crate::gpu::Gpu,
    crate::harness::Protocol,
    crate::kernels::matmul::{self, MatmulExtra},
    crate::occupancy::{calculate, find_arch, Launch},
    crate::workload::{self, MatmulParams, Run},
};

pub(crate) fn experiments() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(MatmulOccupancy)]
}

/// The paper's blocks per SM for each matmul version, recomputed with the calculator.
struct MatmulOccupancy;

#[derive(serde::Serialize, serde::Deserialize)]
struct Version {
    version: String,
    registers: u32,
    paper_blocks: u32,
}

impl Experiment for MatmulOccupancy {
    fn about(&self) -> About {
        About {
            paper: "ryoo",
            id: "ryoo-fig4-occupancy",
            title: "Figure 4 / section 4: G80 blocks per SM of the matmul versions (256 threads), from the occupancy model",
        }
    }
    fn points(&self, _scale: Scale) -> Vec<Point> {
        let values = PaperValues::of("ryoo").unwrap_or_default();
        let Some(t) = values.table("fig4") else { return Vec::new() };
        let col = |name: &str| t.columns.iter().position(|c| c == name);
        let (Some(v), Some(r), Some(b)) = (col("version"), col("registers_per_thread"), col("blocks_per_sm")) else {
            return Vec::new();
        };
        t.rows
            .iter()
            .filter_map(|row| {
                let version = row.get(v)?.as_str()?.to_string();
                let registers = row.get(r)?.as_integer()? as u32;
                let paper_blocks = row.get(b)?.as_integer()? as u32;
                let key = format!("{}-r{registers}", version.split_whitespace().take(3).collect::<Vec<_>>().join("-"));
                Some(point(self.id(), key, serde_json::to_value(Version { version, registers, paper_blocks }).ok()?))
            })
            .collect()
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn run(&self, gpu: &Gpu, p: &Point) -> Result<Vec<Record>> {
        let v: Version = params(p)?;
        let occ = calculate(find_arch("cc1.0")?, Launch::new(256, v.registers, 0))?;
        let extra = ModelExtra {
            model: occ.active_blocks_per_sm as f64,
            paper: v.paper_blocks as f64,
            occupancy: Some(occ.occupancy),
            limited_by: Some(occ.limited_by.as_str().into()),
            ..Default::default()
        };
        Ok(vec![model_record(gpu, "occupancy", "matmul", &v.version, p.params.clone(), extra)])
    }
    fn render(&self, outcomes: &[&Outcome], paper: &PaperValues) -> Section {
        let mut table = Table::new(
            "cc1.0 (GeForce 8800 GTX), 256 threads per block",
            &["version", "registers", "blocks/SM (paper)", "blocks/SM (model)", "occupancy", "limited by", "agrees"],
        );
        let mut all_agree = true;
        for o in outcomes {
            for r in &o.records {
                all_agree &= r.check.passed;
                let extra: ModelExtra = r.extra_as().unwrap_or_default();
                table.rows.push(vec![
                    Cell::text(&r.variant),
                    Cell::exact(r.params["registers"].as_f64().unwrap_or(0.0), 0),
                    Cell::exact(extra.paper, 0),
                    Cell::exact(extra.model, 0),
                    Cell::exact(extra.occupancy.unwrap_or(0.0) * 100.0, 1),
                    Cell::text(extra.limited_by.as_deref().unwrap_or("?")),
                    Cell::text(if r.check.passed { "yes" } else { "NO" }),
                ]);
            }
        }
        let gflops = |row: &str| paper.value("fig4", row, "gflops");
        let prefetch_loss =
            gflops("tiled & unrolled + prefetch (Section 4.4)").zip(gflops("tiled & unrolled (Fig. 3c)")).map(|(a, b)| a / b);
        Section {
            tables: vec![table],
            paper_tables: vec!["fig4".into()],
            verdicts: vec![Verdict::holds(
                "the occupancy model reproduces the paper's blocks per SM for every version",
                all_agree && !outcomes.is_empty(),
            )],
            notes: prefetch_loss
                .map(|x| format!("The paper's prefetch version ran at {x:.3}× the unrolled one: one more register (11) costs a block per SM (3 → 2), which the model shows."))
                .into_iter()
                .collect(),
            failures: outcomes.iter().filter_map(|o| o.error.clone()).collect(),
            ..section(self, outcomes)
        }
    }
}

/// Each kernel of `ladder` once per compiler, in that order, as runs of the registry's
/// `matmul-*` workloads (checked whole before the first starts); where `n` was left to the
/// adapter, each record says why it is the one it is.
#[cfg(not(target_arch = "wasm32"))]
pub fn run_ladder(gpu: &Gpu, ladder: &Ladder, protocol: &Protocol) -> Result<Vec<Record>> {
    let (shape, size_note) = matmul::check_ladder(gpu, ladder)?;
    let mut runs = Vec::new();
    for &variant in &ladder.variants {
        for compiler in &ladder.compilers {
            let name = format!("matmul-{}", variant.name());
            let params = MatmulParams { shape, seed: ladder.seed, regtile: ladder.regtile, compiler: compiler.clone() };
            runs.push(Run { label: format!("{} [{}]", variant.name(), compiler.name()), ..Run::new(&name, &params)? });
        }
    }
    let mut records = workload::run_all(gpu, &runs, protocol, "matmul")?;
    if let Some(note) = size_note {
        for r in &mut records {
            if let Some(extra) = r.extra_as::<MatmulExtra>() {
                r.add_extra(MatmulExtra { size_note: Some(note.clone()), ..extra });
            }
        }
    }
    Ok(records)
}

/// The ladder's size at each scale, keyed by the `bench matmul` options it is.
fn ladder_points(scale: Scale) -> Vec<(&'static str, Ladder)> {
    let (options, n) = scale.pick(("--kernel all --n 64", 64), ("--kernel all --n 256", 256), ("--kernel all --n 4096", 4096));
    vec![(options, Ladder { variants: Variant::ALL.to_vec(), n: Some(n), ..Default::default() })]
}

fn gflops(records: &[&Record], kernel: Variant) -> Option<f64> {
    records.iter().filter(|r| r.kernel == kernel.name()).filter_map(|r| r.throughput.as_ref().map(|t| t.value)).reduce(f64::max)
}

fn ladder_verdicts(records: &[&Record], paper: &PaperValues) -> Vec<Verdict> {
    let p = |row: &str| paper.value("fig4", row, "gflops");
    let (naive, tiled, unrolled) = (p("not tiled (initial, Fig. 3a)"), p("tiled only (Fig. 3b)"), p("tiled & unrolled (Fig. 3c)"));
    let ratio = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| a / b);
    vec![
        Verdict::direction(
            "16x16 tiling speeds up the naive kernel",
            ratio(tiled, naive),
            ratio(gflops(records, Variant::Tiled16), gflops(records, Variant::Naive)),
            "x",
            1.0,
        ),
        Verdict::direction(
            "unrolling speeds up the tiled kernel",
            ratio(unrolled, tiled),
            ratio(gflops(records, Variant::Unrolled), gflops(records, Variant::Tiled16)),
            "x",
            1.0,
        ),
        Verdict::direction(
            "4x4 tiles are slower than the naive kernel (paper: 'worse than non-tiled')",
            Some(0.5),
            ratio(gflops(records, Variant::Tiled4), gflops(records, Variant::Naive)),
            "x",
            1.0,
        ),
    ]
}

fn ladder_figure(records: &[&Record]) -> crate::report::Figure {
    let points = Variant::ALL.iter().enumerate().filter_map(|(i, &k)| gflops(records, k).map(|g| (i as f64, g))).collect();
    crate::report::Figure {
        id: "ryoo-matmul-ladder".into(),
        title: "matmul ladder: GFLOPS (0 naive, 1-4 tiled 4/8/12/16, 5 unrolled, 6 prefetch, 7 regtile)".into(),
        x_label: "kernel".into(),
        y_label: "GFLOPS".into(),
        log_y: true,
        categories: None,
        series: vec![crate::report::Series { name: "simtlab".into(), points, spread: Vec::new() }],
        ..Default::default()
    }
}

pub(crate) fn ladder() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(super::ConfigSweep {
        paper: "ryoo",
        id: "ryoo-fig4-matmul",
        title: "Figure 4: the matmul optimization ladder (GFLOPS), plus a modern register-tiled kernel",
        points: ladder_points,
        #[cfg(not(target_arch = "wasm32"))]
        run: run_ladder,
        verdicts: ladder_verdicts,
        figure: Some(ladder_figure),
        paper_tables: &["fig4"],
        notes: None,
    })]
}
