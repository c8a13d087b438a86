//! The paper's figure beside our numbers, for the workloads that reproduce one with a
//! model the explorer can evaluate (Zhang's Figure 1, the loop and the if).

use egui::{RichText, Ui};
use egui_plot::{Line, LineStyle, MarkerShape, Plot, PlotPoints, Points};
use serde_json::Value;

use super::plots::{x_axis, x_grid, XAxis};
use super::runs::Run;
use crate::harness::{format_number, format_significant};
use crate::report::PaperValues;
use crate::ui::overlay::series_color;
use crate::workload::ParamSpec;

/// A figure of a paper and the model of it the explorer evaluates.
#[derive(Debug)]
pub struct PaperRef {
    /// Key of [`PaperValues::of`].
    pub paper: &'static str,
    /// The figure as the paper names it.
    pub figure: &'static str,
    /// What the figure shows, and whether it has numbers.
    pub caption: &'static str,
    /// Claim ids of the paper's values to list.
    pub claims: &'static [&'static str],
    /// What the model gives, and the model for a parameter object.
    pub model: (&'static str, fn(&Value) -> Option<f64>),
    /// Our measured counterpart, from a run's record.
    pub ours: (&'static str, fn(&crate::harness::Record) -> Option<f64>),
}

/// The figure a workload reproduces, if the explorer has its model.
pub fn of(workload: &str) -> Option<PaperRef> {
    match workload {
        "micro-loop" => Some(PaperRef {
            paper: "zhang",
            figure: "Figure 1 (the for loop)",
            caption: "Figure 1 is a code listing from gafort; the paper gives no measurements for it. Its text: \
                      if one of 32 lanes runs nchrome iterations, \"all the 31 threads have to stay idle and wait\".",
            claims: &["warp_size", "max_speedup", "gafort_diverg_ratio_org", "gafort_diverg_ratio_opt"],
            model: ("SIMT efficiency at W = 32, from the text's reasoning", zhang_loop_model),
            ours: ("SIMT efficiency, measured", |r| r.divergence.map(|d| d.simt_efficiency)),
        }),
        "micro-if" => Some(PaperRef {
            paper: "zhang",
            figure: "Figure 1 (the if statement)",
            caption: "Figure 1 is a code listing from gafort; the paper gives no measurements for it. Its text: \
                      with one odd element in 32, \"at most 1/32 computing power of the SM is being used\".",
            claims: &["warp_size", "max_speedup", "lbm_diverg_ratio_org_low", "lbm_diverg_ratio_org_high"],
            model: ("divergence ratio at W = 32 for random values", zhang_if_model),
            ours: ("divergence ratio, measured", |r| r.divergence.map(|d| d.divergence_ratio)),
        }),
        _ => None,
    }
}

/// Zhang §1's loop scenario at W = 32: a warp runs as long as its longest lane, so with one
/// long lane per group of 32 the lanes are busy (31·short + long) / (32·long) of the time.
fn zhang_loop_model(p: &Value) -> Option<f64> {
    let (short, long) = (p["short"].as_f64()?, p["long"].as_f64()?.max(1.0));
    match p["distribution"].as_str()? {
        "uniform" | "sorted" => Some(1.0),
        "one-long" => {
            let group = p["group"].as_f64()?.max(1.0);
            // lanes per 32-wide warp that hold a long trip
            let longs = (32.0 / group).clamp(1.0, 32.0);
            Some((longs * long + (32.0 - longs) * short) / (32.0 * long))
        }
        _ => Some((short + long) / 2.0 / long.max(short)),
    }
}

/// The `if` scenario at W = 32: with random values each lane takes the path with probability
/// p, so a warp holds both paths with probability 1 − p³² − (1 − p)³².
fn zhang_if_model(p: &Value) -> Option<f64> {
    let prob = p["probability"].as_f64()?;
    match p["distribution"].as_str()? {
        "random" => Some(1.0 - prob.powi(32) - (1.0 - prob).powi(32)),
        _ => Some(0.0),
    }
}

/// The paper panel: caption, the paper's values, the model now, and model vs ours over the run.
pub fn panel(ui: &mut Ui, paper: &PaperRef, params: &Value, run: Option<&Run>, spec: Option<&ParamSpec>) {
    ui.heading(format!("paper: {} {}", paper.paper, paper.figure));
    ui.label(paper.caption);
    if let Ok(values) = PaperValues::of(paper.paper) {
        for id in paper.claims {
            if let Some(c) = values.claim(id) {
                let value = c.value.map_or("—".to_string(), |v| format!("{v} {}", c.unit));
                ui.label(format!("• {} — {value}", c.text));
            }
        }
    }
    let (model_label, model) = paper.model;
    ui.label(format!("{model_label}: {}", model(params).map_or("—".into(), |v| format!("{v:.3}"))));
    let Some(run) = run.filter(|r| !r.points.is_empty()) else { return };
    let (axis, xs) = x_axis(run, spec);
    let model_pts: Vec<[f64; 2]> = run.points.iter().zip(&xs).filter_map(|(p, &x)| Some([x, model(&p.params)?])).collect();
    let ours_pts: Vec<[f64; 2]> = run.points.iter().zip(&xs).filter_map(|(p, &x)| Some([x, (paper.ours.1)(p.records.first()?)?])).collect();
    let (x_label, log) = match &axis {
        XAxis::Numeric { label, log } => (label.clone(), *log),
        XAxis::Categories(_) => (String::new(), false),
    };
    ui.label(RichText::new(format!("dashed: {model_label}; dots: {}", paper.ours.0)).small());
    Plot::new("simtlab-paper-vs-ours")
        .height(150.0)
        .x_axis_label(x_label)
        .x_axis_formatter(move |m, _| if log { format_number(10f64.powf(m.value)) } else { format_significant(m.value) })
        .x_grid_spacer(x_grid(log, xs.clone()))
        .y_axis_formatter(|m, _| format_significant(m.value))
        .include_y(0.0)
        .include_y(1.0)
        .allow_scroll(false)
        .show(ui, |plot| {
            plot.line(Line::new(model_label, PlotPoints::from(model_pts.clone())).style(LineStyle::dashed_loose()).color(series_color(2)));
            plot.points(Points::new(model_label, model_pts).radius(3.0).shape(MarkerShape::Diamond).color(series_color(2)));
            plot.line(Line::new(paper.ours.0, PlotPoints::from(ours_pts.clone())).color(series_color(0)));
            plot.points(Points::new(paper.ours.0, ours_pts).radius(3.0).filled(true).color(series_color(0)));
        });
    if let Some(d) = run.points[0].records.first().and_then(|r| r.divergence) {
        ui.small(format!("ours at subgroup width {} (the paper's warp is 32 lanes)", d.width));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zhang_models_match_the_text() {
        let p = serde_json::json!({"short": 0, "long": 512, "group": 32, "distribution": "one-long"});
        // one long lane of 32, the others idle: 1/32
        assert!((zhang_loop_model(&p).unwrap() - 1.0 / 32.0).abs() < 1e-12);
        let q = serde_json::json!({"probability": 0.0, "distribution": "random"});
        assert_eq!(zhang_if_model(&q), Some(0.0));
        let h = serde_json::json!({"probability": 0.5, "distribution": "random"});
        assert!((zhang_if_model(&h).unwrap() - (1.0 - 2.0 * 0.5f64.powi(32))).abs() < 1e-12);
    }
}
