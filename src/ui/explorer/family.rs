//! What a family's records say beyond time and throughput, read from their `extra` fields:
//! remapping cost and gain with the auto decision's reasoning, the persistent-threads tier that
//! ran and any fallback, matmul rungs through the occupancy model, branched vs split, each
//! point's variants against its original, and the flow-shop pools' divergence per order.

use egui::{Grid, RichText, Ui};

use super::flowshop::{pool_lines, PoolBar};
use super::plots::{format_range, format_value, sideways, Comparison, Measured};
use super::runs::Run;
use crate::harness::{format_seconds, format_significant, Record};
use crate::kernels::matmul::MatmulExtra;
use crate::kernels::micro::remapped::{self, RemapFigures};
use crate::kernels::split::SplitExtra;
use crate::occupancy::{calculate, kernel_resources, Arch, KernelResources, Launch};
use crate::pt::{barrier::BarrierExtra, queue::QueueExtra, tier_that_ran, TierVerdict};
use crate::remap::{Decision, Strategy};

/// The family panel for `run` (nothing for families without one). `arch` and `registers` are
/// the occupancy panel's preset and registers per thread.
pub(crate) fn panel(ui: &mut Ui, run: &Run, arch: &Arch, registers: u32) {
    let records: Vec<&Record> = run.records().collect();
    let Some(first) = records.first() else { return };
    match first.family.as_str() {
        "remap" => remap(ui, &records),
        "pt" => persistent(ui, &records),
        "matmul" => matmul(ui, &records, arch, registers),
        "carrillo" => split(ui, &records, arch, registers),
        "lbm" | "gafort" | "mcubes" | "blackscholes" | "reduction" => variants(ui, run),
        "flowshop" => pools(ui, &records),
        _ => {}
    }
}

/// A striped table under `headers` that scrolls sideways when wider than the panel, so that
/// the side panel keeps its width.
fn table(ui: &mut Ui, id: &str, headers: &[&str], rows: impl FnOnce(&mut Ui)) {
    sideways(id).show(ui, |ui| {
        Grid::new(id).striped(true).show(ui, |ui| {
            for h in headers {
                ui.label(RichText::new(*h).strong());
            }
            ui.end_row();
            rows(ui);
        });
    });
}

/// A cell without a value.
const NONE: &str = "—";

/// Every strategy side by side: kernel time, remap cost, end to end, the speed-up over no
/// remapping in the same run, and the cost model's predicted saving beside the saving measured;
/// then the auto decision against what was measured, and its reasoning as the CLI prints it.
fn remap(ui: &mut Ui, records: &[&Record]) {
    ui.heading("remapping strategies");
    let figures: Vec<Option<RemapFigures>> = records.iter().map(|r| r.extra_as::<RemapFigures>()).collect();
    let none = records.iter().zip(&figures).find(|(r, _)| r.variant == "none").and_then(|(_, f)| Some(f.as_ref()?.end_to_end_s));
    let decision = figures.iter().flatten().find_map(|f| f.decision.clone());
    let predicted =
        |strategy: Strategy| -> Option<f64> { decision.as_ref()?.predictions.iter().find(|p| p.strategy == strategy)?.net_saving_s };
    let signed = |s: f64| if s < 0.0 { format!("−{}", format_seconds(-s)) } else { format_seconds(s) };
    let headers = [
        ("strategy", "the remapping that ran (auto: the one the cost model chose)"),
        ("kernel", "median kernel time after remapping"),
        ("remap cost", "host time to classify the threads and build the mapping"),
        ("end to end", "remap cost + kernel + restore, unpipelined"),
        ("speed-up vs none", "none's end-to-end time / this strategy's: above 1× the strategy pays"),
        ("predicted saving", "what the cost model (auto's) predicted this strategy saves end to end: kernel time saved minus the remap time left on the critical path"),
        ("measured saving", "none's end-to-end time minus this strategy's, in this run"),
        ("SIMT eff. before -> after", "SIMT efficiency by the GPU probe before and after remapping"),
    ];
    sideways("simtlab-remap").show(ui, |ui| {
        Grid::new("simtlab-remap").striped(true).show(ui, |ui| {
            for (h, explanation) in headers {
                ui.label(RichText::new(h).strong()).on_hover_text(explanation);
            }
            ui.end_row();
            for (r, f) in records.iter().zip(&figures) {
                let seconds = |of: fn(&RemapFigures) -> f64| f.as_ref().map_or_else(|| NONE.into(), |f| format_seconds(of(f)));
                ui.label(&r.variant);
                ui.label(seconds(|f| f.kernel_s));
                ui.label(seconds(|f| f.remap_s));
                ui.label(seconds(|f| f.end_to_end_s));
                let gain = none.zip(f.as_ref().map(|f| f.end_to_end_s)).map(|(n, t)| n / t);
                ui.label(gain.map_or_else(|| "run remap-none too".into(), |g| format!("{g:.2}×")));
                ui.label(f.as_ref().and_then(|f| predicted(f.strategy)).map_or_else(|| NONE.into(), signed));
                let measured = none.zip(f.as_ref().map(|f| f.end_to_end_s)).map(|(n, t)| n - t);
                ui.label(measured.map_or_else(|| NONE.into(), signed));
                ui.label(match f.as_ref().and_then(|f| f.probe_before.zip(f.probe_after)) {
                    Some((a, b)) => format!("{:.1} % -> {:.1} %", 100.0 * a.simt_efficiency, 100.0 * b.simt_efficiency),
                    None => NONE.into(),
                });
                ui.end_row();
            }
        });
    });
    if let (Some(d), Some(none)) = (&decision, none) {
        ui.label(decision_against_measurement(d, none, records, &figures));
    }
    // what the measurements teach the model: the next auto run on this adapter decides with it
    match remapped::learn(records.iter().copied()) {
        Some(Ok((_, lessons))) if !lessons.is_empty() => {
            ui.label(RichText::new("learned on this adapter (the next auto run weighs it):").strong()).on_hover_text(
                "per strategy: the saving auto's model predicted, the saving measured here, and what the corrected model predicts now for the same input",
            );
            for lesson in lessons {
                ui.label(format!("  {lesson}"));
            }
        }
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().warn_fg_color, format!("nothing learned: {e}"));
        }
        _ => {}
    }
    if let Some(decision) = decision {
        ui.label(RichText::new("auto decided:").strong());
        ui.label(decision.reason.replace(". Also considered: ", ".\nAlso considered:\n  ").replace("; ", ";\n  "));
    }
}

/// Auto's choice and prediction against what this run measured: the chosen strategy's saving,
/// the strategy that saved most, and where the prediction's sign was wrong.
fn decision_against_measurement(d: &Decision, none_s: f64, records: &[&Record], figures: &[Option<RemapFigures>]) -> String {
    // the explicit runs of each strategy (auto's row repeats its choice)
    let measured: Vec<(Strategy, f64)> = records
        .iter()
        .zip(figures)
        .filter(|(r, _)| !r.variant.starts_with("auto"))
        .filter_map(|(_, f)| f.as_ref().map(|f| (f.strategy, none_s - f.end_to_end_s)))
        .collect();
    let saving = |s: Strategy| measured.iter().find(|m| m.0 == s).map(|m| m.1);
    let mut line = format!("auto chose {}: predicted saving {}", d.strategy, format_seconds(d.predicted_gain_s - d.cost_s));
    if let Some(m) = saving(d.strategy) {
        line += &format!(", measured {}{}", if m < 0.0 { "−" } else { "" }, format_seconds(m.abs()));
    }
    if let Some(best) = measured.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)) {
        if best.0 != d.strategy {
            line += &format!("; the most saved here: {} ({})", best.0, format_seconds(best.1.max(0.0)));
        }
    }
    let wrong: Vec<String> = d
        .predictions
        .iter()
        .filter_map(|p| Some((p.strategy, p.net_saving_s?, saving(p.strategy)?)))
        .filter(|(_, predicted, measured)| (*predicted > 0.0) != (*measured > 0.0))
        .map(|(s, predicted, _)| {
            format!("{s} ({})", if predicted > 0.0 { "predicted to pay, measured slower" } else { "predicted not to pay, measured faster" })
        })
        .collect();
    if !wrong.is_empty() {
        line += &format!("; the prediction's sign was wrong for {}", wrong.join(", "));
    }
    line
}

/// The tier that ran, what was asked for, and any fallback; barrier latency beside a relaunch.
/// Columns no record has a value for are left out, so that the rest fit a narrow panel.
fn persistent(ui: &mut Ui, records: &[&Record]) {
    ui.heading("persistent threads");
    let rows: Vec<[String; 7]> = records
        .iter()
        .map(|r| {
            let verdict = r.extra_as::<TierVerdict>().filter(|v| !v.tier_name.is_empty());
            let barrier = r.extra_as::<BarrierExtra>();
            let fallbacks = verdict.as_ref().map(|v| v.fallbacks.clone()).unwrap_or_default();
            let workgroups = barrier.as_ref().map(|b| b.participants).or_else(|| Some(r.extra_as::<QueueExtra>()?.launched));
            // the variant's first words name the record in the narrow panel (`queue single`,
            // `sync readback`); the whole variant is the last column
            let short = r.variant.split(" (").next().unwrap_or_default().split(',').next().unwrap_or_default();
            [
                format!("{} {short}", r.kernel).trim().to_string(),
                tier_that_ran(r).unwrap_or_else(|| NONE.into()),
                verdict.as_ref().map_or_else(|| NONE.into(), |v| format!("tier {}", v.tier_requested)),
                workgroups.map_or_else(|| NONE.into(), |w| w.to_string()),
                barrier.map_or_else(|| NONE.into(), |b| format!("{} us", format_significant(b.relaunch_us))),
                if fallbacks.is_empty() { "none".into() } else { fallbacks.join("; ") },
                r.variant.clone(),
            ]
        })
        .collect();
    let headers = ["record", "tier that ran", "asked for", "workgroups", "relaunch", "fallbacks", "variant"];
    let shown: Vec<usize> = (0..headers.len()).filter(|&c| rows.iter().any(|row| row[c] != NONE)).collect();
    let headers: Vec<&str> = shown.iter().map(|&c| headers[c]).collect();
    table(ui, "simtlab-pt", &headers, |ui| {
        for row in &rows {
            for &c in &shown {
                ui.label(&row[c]);
            }
            ui.end_row();
        }
    });
}

/// Each rung's launch through the occupancy model of the chosen preset.
fn matmul(ui: &mut Ui, records: &[&Record], arch: &Arch, registers: u32) {
    ui.heading(format!("matmul ladder on {} ({registers} registers/thread)", arch.name));
    let mut headers = OCCUPANCY_HEADERS;
    headers[0] = "rung";
    table(ui, "simtlab-matmul", &headers, |ui| {
        for r in records {
            let resources = r.extra_as::<MatmulExtra>().map(|e| e.resources);
            let threads = resources.map_or(0, |x| x.threads_per_workgroup);
            let bytes = resources.and_then(|x| u32::try_from(x.workgroup_bytes).ok()).unwrap_or(0);
            occupancy_row(ui, &r.kernel, arch, Launch::new(threads, registers, bytes));
        }
    });
}

/// The columns of an occupancy table (the first names the kernel).
const OCCUPANCY_HEADERS: [&str; 6] = ["kernel", "threads", "workgroup memory", "active warps / SM", "occupancy", "limited by"];

/// One row of an occupancy table: `kernel`'s launch through the model of `arch`.
fn occupancy_row(ui: &mut Ui, kernel: &str, arch: &Arch, launch: Launch) {
    ui.label(kernel);
    ui.label(launch.threads_per_block.to_string());
    ui.label(format!("{} B", launch.shared_memory_per_block));
    match calculate(arch, launch) {
        Ok(o) => {
            ui.label(format!("{} of {}", o.active_warps_per_sm, o.max_warps_per_sm));
            ui.label(format!("{:.0} %", 100.0 * o.occupancy));
            ui.label(o.limited_by.to_string());
        }
        Err(e) => {
            ui.label(NONE);
            ui.label(NONE);
            ui.label(e.to_string());
        }
    }
    ui.end_row();
}

/// Split over branched at each else fraction, and the occupancy of each kernel.
fn split(ui: &mut Ui, records: &[&Record], arch: &Arch, registers: u32) {
    let ratios: Vec<(f64, f64)> = records
        .iter()
        .filter_map(|r| Some((r.params.get("else_fraction")?.as_f64()?, r.extra_as::<SplitExtra>()?.split_over_branched)))
        .collect();
    if ratios.is_empty() {
        return;
    }
    ui.heading("split vs branched");
    for (f, x) in ratios {
        ui.label(format!("else fraction {:.0} %: split's speed-up over branched {:.2}×", 100.0 * f, 1.0 / x));
    }
    ui.label(format!("occupancy of each kernel on {} ({registers} registers/thread):", arch.name));
    table(ui, "simtlab-split-occupancy", &OCCUPANCY_HEADERS, |ui| match split_kernels() {
        Ok(kernels) => {
            for k in kernels {
                occupancy_row(ui, &k.entry_point, arch, k.launch(registers));
            }
        }
        Err(e) => {
            ui.label(e);
            ui.end_row();
        }
    });
}

/// The branched kernel and the two split ones as WGSL declares them (read once: the files are
/// built in).
fn split_kernels() -> Result<&'static [KernelResources], &'static str> {
    use crate::gpu::shader::{self, registry::split::branch_split};
    static KERNELS: std::sync::OnceLock<Result<Vec<KernelResources>, String>> = std::sync::OnceLock::new();
    let read = || -> crate::Result<Vec<KernelResources>> {
        let source = shader::preprocess(branch_split::FILE.path, &[])?;
        [branch_split::BRANCHED, branch_split::SPLIT_IF, branch_split::SPLIT_ELSE]
            .iter()
            .map(|entry| kernel_resources(&source.text, entry.name))
            .collect()
    };
    KERNELS.get_or_init(|| read().map_err(|e| e.to_string())).as_deref().map_err(String::as_str)
}

/// Zhang's benchmarks: each variant's time against the original's at the same point (a
/// sweep's points differ in size, so they are never compared with each other), as a speed-up
/// with its noise: "within noise" where the ranges of samples overlap.
fn variants(ui: &mut Ui, run: &Run) {
    ui.heading("variants against the original").on_hover_text(
        "speed-up = the original's median time / the variant's; within noise where the fastest-to-slowest ranges of their samples overlap",
    );
    for p in &run.points {
        let Some(org) = p.records.first() else { continue };
        let at = match (&run.sweep, &p.x) {
            (Some(key), Some(x)) => format!("{key} = {}: ", format_value(x)),
            _ => String::new(),
        };
        ui.label(RichText::new(format!("{at}against {} {}", org.kernel, org.variant)).strong());
        for r in p.records.iter().skip(1) {
            let (time, reference) = (Measured::time(r), Measured::time(org));
            let versus = Comparison::of(&time, &reference).map_or_else(String::new, |c| format!(": {}", c.label()));
            ui.label(format!("{} {}: {} ({}){versus}", r.kernel, r.variant, format_seconds(time.value), format_range(&time)));
        }
    }
}

/// The bounding kernels' divergence on the depth- and breadth-first pools.
fn pools(ui: &mut Ui, records: &[&Record]) {
    let bars: Vec<PoolBar> = records.iter().filter_map(|r| PoolBar::of(r)).collect();
    if bars.is_empty() {
        return;
    }
    ui.heading("bounding pools: DFS vs BFS");
    pool_lines(ui, &bars);
}
