//! The run's records as plots and a table: time, throughput and SIMT efficiency over the
//! swept value (log x for geometric sweeps, named bars for categories), hover labels with the
//! values, a legend beside the plot rather than over it, the CPU check per point, and a click
//! on a point to pick the point whose heat map is shown.

use egui::{Color32, RichText, Ui};
use egui_plot::{
    uniform_grid_spacer, Bar, BarChart, GridInput, GridMark, HoverPosition, Line, LineStyle, MarkerShape, Plot, PlotPoints, Points,
};
use serde_json::Value;

use super::runs::{Point, Run};
use crate::harness::{format_number, format_seconds, format_significant, Record};
use crate::report::{Figure, Series};
use crate::ui::overlay::series_color;
use crate::workload::{ParamKind, ParamSpec};

/// A parameter value as people read it (`16.8 M`, `one-long`, `true`).
pub fn format_value(v: &Value) -> String {
    match v {
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), format_number),
        Value::String(s) => s.clone(),
        Value::Null => "auto".into(),
        other => other.to_string(),
    }
}

/// Grid steps on the 1-2-5 sequence, the middle one at least `labelled` times the finest
/// (8 points): egui_plot's powers of ten leave a 180-point axis from 0 to 9 with only "0"
/// labelled. Labels need 20 points between them on a y axis, 60 on an x axis.
pub fn one_two_five(input: GridInput, labelled: f64) -> [f64; 3] {
    let base = input.base_step_size;
    if !(base.is_finite() && base > 0.0) {
        return [1.0, 10.0, 100.0];
    }
    let at_least = |x: f64| {
        let power = 10f64.powf(x.log10().floor());
        [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * power).find(|&step| step >= x).unwrap_or(10.0 * power)
    };
    let labelled = at_least(labelled * base);
    // the coarse step a multiple of the labelled one (2 -> 10, 5 -> 10, 1 -> 5): no 5 between 4 and 6
    let leading = (labelled / 10f64.powf(labelled.log10().floor())).round();
    [at_least(base), labelled, labelled * if leading == 5.0 { 2.0 } else { 5.0 }]
}

/// Labelled steps of [`one_two_five`] on a y axis (24 points) and an x axis (72 points).
pub(super) const Y_LABELS: f64 = 3.0;
pub(super) const X_LABELS: f64 = 9.0;

/// The prefix through the last '-' that all of `names` share (when each keeps a rest), and
/// the rests with '-' as line breaks (for more than one name): `pt-queue-single` → `pt-` and
/// `queue\nsingle`.
fn tick_names(names: &[String]) -> (String, Vec<String>) {
    let shared = names.iter().skip(1).fold(names.first().map_or("", String::as_str), |p, n| {
        let common = p.char_indices().zip(n.chars()).take_while(|((_, a), b)| a == b).last().map_or(0, |((i, c), _)| i + c.len_utf8());
        &p[..common]
    });
    let prefix = match shared.rfind('-') {
        Some(end) if names.len() > 1 && names.iter().all(|n| n.len() > end + 1) => &shared[..=end],
        _ => "",
    };
    let short = |n: &String| if names.len() > 1 { n[prefix.len()..].replace('-', "\n") } else { n.clone() };
    (prefix.to_string(), names.iter().map(short).collect())
}

/// The x grid of a sweep's plot: on a log axis a mark at each swept value (`positions`), else
/// 1-2-5 steps.
pub fn x_grid(log: bool, mut positions: Vec<f64>) -> Box<dyn Fn(GridInput) -> Vec<GridMark>> {
    if log {
        positions.sort_by(f64::total_cmp);
        positions.dedup();
        Box::new(move |_| marks_at(&positions))
    } else {
        uniform_grid_spacer(|input| one_two_five(input, X_LABELS))
    }
}

/// One grid mark at each of `positions` (sorted, deduplicated), all of one step so that their
/// labels show or hide together: a geometric sweep's values, where egui_plot would label
/// 1.259 and 3.981 on a log axis.
fn marks_at(positions: &[f64]) -> Vec<GridMark> {
    let step = positions.windows(2).map(|w| w[1] - w[0]).fold(f64::INFINITY, f64::min);
    let step_size = if step.is_finite() && step > 0.0 { step } else { 1.0 };
    positions.iter().map(|&value| GridMark { value, step_size }).collect()
}

/// What a plot shows per record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Median time, milliseconds.
    TimeMs,
    /// Work per second in the record's unit.
    Throughput,
    /// SIMT efficiency in percent (records with divergence).
    SimtEfficiency,
}

impl Metric {
    /// Every metric, in display order.
    pub const ALL: [Metric; 3] = [Metric::TimeMs, Metric::Throughput, Metric::SimtEfficiency];

    /// The value of `r`, if it has one.
    pub fn of(self, r: &Record) -> Option<f64> {
        self.measured(r).map(|m| m.value)
    }

    /// The value of `r` with the spread of its timed samples, if it has one.
    pub fn measured(self, r: &Record) -> Option<Measured> {
        match self {
            Metric::TimeMs => Some(Measured::time(r).scaled(1e3)),
            Metric::Throughput => Measured::throughput(r),
            Metric::SimtEfficiency => r.divergence.map(|d| Measured::counted(100.0 * d.simt_efficiency)),
        }
    }

    /// Axis title (`unit` is the throughput's unit).
    pub fn title(self, unit: &str) -> String {
        match self {
            Metric::TimeMs => "median time (ms)".into(),
            Metric::Throughput if is_time_per_item(unit) => format!("time per item ({unit})"),
            Metric::Throughput => format!("throughput ({unit})"),
            Metric::SimtEfficiency => "SIMT efficiency (%): active lanes / (steps × width)".into(),
        }
    }

    /// What it is, on hover.
    pub fn explanation(self) -> &'static str {
        match self {
            Metric::TimeMs => "the median of the timed samples (device timestamps where the adapter has them, else the wall clock around submit and wait); whiskers span the fastest to the slowest sample",
            Metric::Throughput => "work done per second at the median time, in each workload's own unit (one plot per unit); whiskers span the slowest to the fastest sample",
            Metric::SimtEfficiency => "active lanes / (subgroup steps × subgroup width), counted by the probe or host emulation: 100 % = no lane idle (a count, no spread)",
        }
    }
}

/// True for a "throughput" unit that is a time per item (`us/barrier`): it grows with the
/// time, where a rate (`M items/s`) shrinks.
fn is_time_per_item(unit: &str) -> bool {
    unit.split_once('/').is_some_and(|(t, _)| matches!(t.trim(), "s" | "ms" | "us" | "µs" | "ns"))
}

/// A figure with the spread of the samples behind it: what every plot and table shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    /// The median (a time, a throughput), or the counted value.
    pub value: f64,
    /// The lowest the samples gave (the value itself when counted).
    pub low: f64,
    /// The highest the samples gave (the value itself when counted).
    pub high: f64,
    /// Timed samples behind it; 0 for a count, which has no spread.
    pub samples: usize,
}

impl Measured {
    /// A count: no samples, no spread.
    pub fn counted(value: f64) -> Measured {
        Measured { value, low: value, high: value, samples: 0 }
    }

    /// The record's median time with its fastest and slowest samples, in seconds.
    pub fn time(r: &Record) -> Measured {
        Measured::of_stats(&r.stats)
    }

    /// The median of timed samples with the fastest and slowest, in seconds.
    pub fn of_stats(s: &crate::harness::Stats) -> Measured {
        Measured { value: s.median, low: s.min.min(s.median), high: s.max.max(s.median), samples: s.samples.len().max(1) }
    }

    /// The record's throughput at the median time, and at its slowest and fastest samples
    /// (a time per item, at its fastest and slowest).
    pub fn throughput(r: &Record) -> Option<Measured> {
        let t = r.throughput.as_ref()?;
        let time = Measured::time(r);
        let at = |seconds: f64| {
            let ratio = if is_time_per_item(&t.unit) { seconds / time.value } else { time.value / seconds };
            if ratio.is_finite() && ratio > 0.0 {
                t.value * ratio
            } else {
                t.value
            }
        };
        let (a, b) = (at(time.low), at(time.high));
        Some(Measured { value: t.value, low: a.min(b), high: a.max(b), samples: time.samples })
    }

    /// Every bound times `k` (a change of unit).
    pub fn scaled(self, k: f64) -> Measured {
        Measured { value: self.value * k, low: self.low * k, high: self.high * k, ..self }
    }

    /// True when the two ranges of samples overlap: a difference between them is within the
    /// noise of the measurement.
    fn overlaps(&self, other: &Measured) -> bool {
        self.low <= other.high && other.low <= self.high
    }
}

/// A time against a reference time, as a speed-up: the one sense of "×" in the explorer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    /// Reference median time / this median time: above 1 = faster than the reference.
    pub speedup: f64,
    /// The fastest-to-slowest ranges of the two overlap: the difference is within the noise.
    pub within_noise: bool,
}

impl Comparison {
    /// `time` against `reference` (both [`Measured::time`]); None when either median is 0.
    pub fn of(time: &Measured, reference: &Measured) -> Option<Comparison> {
        (time.value > 0.0 && reference.value > 0.0)
            .then(|| Comparison { speedup: reference.value / time.value, within_noise: time.overlaps(reference) })
    }

    /// `1.25× faster`, `0.80× (slower)`, or `within noise (1.03×)`.
    pub fn label(&self) -> String {
        match self.within_noise {
            true => format!("within noise ({:.2}×)", self.speedup),
            false if self.speedup >= 1.0 => format!("{:.2}× faster", self.speedup),
            false => format!("{:.2}× (slower)", self.speedup),
        }
    }
}

/// One plot: a metric, and for throughput the unit its records share.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// What it shows.
    pub metric: Metric,
    /// The throughput's unit (empty for the other metrics).
    pub unit: String,
}

impl Panel {
    /// The value of `r` in this panel: None where it has none, or a throughput in another unit.
    pub fn measured(&self, r: &Record) -> Option<Measured> {
        if self.metric == Metric::Throughput && r.throughput.as_ref().is_none_or(|t| t.unit != self.unit) {
            return None;
        }
        self.metric.measured(r)
    }

    /// The y axis title.
    pub fn title(&self) -> String {
        self.metric.title(&self.unit)
    }

    /// A short name for ids and file names.
    fn slug(&self) -> String {
        match self.metric {
            Metric::TimeMs => "time".into(),
            Metric::SimtEfficiency => "simt-efficiency".into(),
            Metric::Throughput => {
                let unit: String =
                    self.unit.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
                format!("throughput-{}", unit.split('-').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("-"))
            }
        }
    }
}

/// The plots `run` needs: time, one throughput plot per unit (one unit per axis), and SIMT
/// efficiency, each where some record has a value.
pub fn panels(run: &Run) -> Vec<Panel> {
    let mut out = Vec::new();
    for metric in Metric::ALL {
        if metric == Metric::Throughput {
            for r in run.records() {
                if let Some(t) = &r.throughput {
                    if !out.iter().any(|p: &Panel| p.metric == metric && p.unit == t.unit) {
                        out.push(Panel { metric, unit: t.unit.clone() });
                    }
                }
            }
        } else if run.records().any(|r| metric.of(r).is_some()) {
            out.push(Panel { metric, unit: String::new() });
        }
    }
    out
}

/// What the whiskers of `run`'s timed plots span: `whiskers: fastest to slowest of 3 samples`.
fn spread_note(run: &Run) -> String {
    let counts: Vec<usize> = run.records().map(|r| r.stats.samples.len().max(1)).collect();
    let (lo, hi) = (counts.iter().copied().min().unwrap_or(0), counts.iter().copied().max().unwrap_or(0));
    let n = if lo == hi { format!("{lo}") } else { format!("{lo} to {hi}") };
    match hi {
        0 | 1 => format!("n = {n} sample per point: no spread to show (more samples give whiskers)"),
        _ => format!("whiskers: fastest to slowest of n = {n} samples per point"),
    }
}

/// How points sit on the x axis.
#[derive(Clone, Debug, PartialEq)]
pub enum XAxis {
    /// Numeric values of the swept parameter (log10 when geometric).
    Numeric {
        /// The parameter as people read it.
        label: String,
        /// Positions are log10 of the values.
        log: bool,
    },
    /// Named categories: a choice, a flag, the workloads of a family, or records of one run.
    Categories(Vec<String>),
}

/// Where each point sits: its x (a position on the axis) and the axis.
pub fn x_axis(run: &Run, spec: Option<&ParamSpec>) -> (XAxis, Vec<f64>) {
    let numeric = |p: &Point| p.x.as_ref().and_then(Value::as_f64);
    match spec {
        Some(s @ ParamSpec { kind: ParamKind::Number { log, .. }, .. }) if run.points.iter().all(|p| numeric(p).is_some()) => {
            let log = *log && run.points.iter().all(|p| numeric(p).is_some_and(|x| x > 0.0));
            let xs = run.points.iter().map(|p| numeric(p).map_or(0.0, |x| if log { x.log10() } else { x })).collect();
            (XAxis::Numeric { label: s.label(), log }, xs)
        }
        _ => {
            let names: Vec<String> = run.points.iter().map(|p| p.x.as_ref().map_or_else(|| run.workload.clone(), format_value)).collect();
            (XAxis::Categories(names), (0..run.points.len()).map(|i| i as f64).collect())
        }
    }
}

/// The series name of a record: its kernel and variant, without the part a within-record
/// sweep varies (Carrillo's `else=25.0%`).
fn series_name(r: &Record) -> String {
    let variant = r.variant.split(" else=").next().unwrap_or(&r.variant);
    format!("{} {}", r.kernel, variant).trim().to_string()
}

/// The series name of every record of every point ([`series_name`]). In a sweep of one
/// workload whose points have the same kernels in the same order, a record whose variant
/// changes with the swept value (the barrier's `4 workgroups (2 participants)`) is named by its
/// kernel alone, so that its points join into one line.
fn names_by_point(run: &Run) -> Vec<Vec<String>> {
    let mut names: Vec<Vec<String>> = run.points.iter().map(|p| p.records.iter().map(series_name).collect()).collect();
    let Some(first) = run.points.first() else { return names };
    fn kernels(p: &Point) -> Vec<&str> {
        p.records.iter().map(|r| r.kernel.as_str()).collect()
    }
    if run.points.iter().any(|p| p.workload != first.workload || kernels(p) != kernels(first)) {
        return names;
    }
    for (j, r) in first.records.iter().enumerate() {
        if names.iter().all(|n| n[j] == names[0][j]) {
            continue;
        }
        let same_kernel = first.records.iter().filter(|o| o.kernel == r.kernel).count() > 1;
        let name = if same_kernel { format!("{} #{}", r.kernel, j + 1) } else { r.kernel.clone() };
        for n in &mut names {
            n[j] = name.clone();
        }
    }
    names
}

/// One plotted point: where it sits, its value with spread, and the run's point it belongs to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlotPoint {
    /// Position on the x axis.
    pub x: f64,
    /// The value and its spread.
    pub y: Measured,
    /// Index of the run's point.
    pub point: usize,
}

/// A named series of points.
pub type SeriesPoints = (String, Vec<PlotPoint>);

/// One line per series for `panel`. A run of one point whose records sweep `else_fraction`
/// themselves (Carrillo) plots over that.
pub fn series(run: &Run, xs: &[f64], panel: &Panel) -> Vec<SeriesPoints> {
    let inner = run.points.len() == 1 && run.points[0].records.iter().all(|r| r.params.get("else_fraction").is_some());
    let names = names_by_point(run);
    let mut out: Vec<SeriesPoints> = Vec::new();
    for (i, p) in run.points.iter().enumerate() {
        for (j, r) in p.records.iter().enumerate() {
            let Some(y) = panel.measured(r) else { continue };
            let x = if inner { r.params["else_fraction"].as_f64().unwrap_or(0.0) } else { xs[i] };
            let name = names[i][j].clone();
            let point = PlotPoint { x, y, point: i };
            match out.iter_mut().find(|(n, _)| *n == name) {
                Some((_, v)) => v.push(point),
                None => out.push((name, vec![point])),
            }
        }
    }
    out
}

/// Every series name of `run`, in order of first appearance (the legend's order and colours).
fn series_names(run: &Run) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for n in names_by_point(run).into_iter().flatten() {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
}

/// The plots of `run`, one per metric that has values (one per unit for throughput), side by
/// side when there is room, each point with the whiskers of its samples, and `baseline`'s
/// series dashed where the points sit on a line. Returns the point clicked, if any.
pub fn sweep_plots(ui: &mut Ui, run: &Run, spec: Option<&ParamSpec>, selected: usize, baseline: Option<&Run>) -> Option<usize> {
    let (axis, xs) = x_axis(run, spec);
    let inner = run.points.len() == 1 && run.points[0].records.iter().all(|r| r.params.get("else_fraction").is_some());
    let panels = panels(run);
    let columns = if ui.available_width() > 760.0 { 2 } else { 1 };
    let width = ((ui.available_width() - ui.spacing().item_spacing.x * (columns as f32 - 1.0)) / columns as f32).max(200.0);
    let mut clicked = None;
    let names = series_names(run);
    legend(ui, &names);
    ui.small(spread_note(run));
    for row in panels.chunks(columns) {
        ui.horizontal(|ui| {
            for panel in row {
                ui.vertical(|ui| {
                    ui.set_width(width);
                    ui.label(RichText::new(panel.title()).strong()).on_hover_text(panel.metric.explanation());
                    let lines = series(run, &xs, panel);
                    let base = baseline.map_or_else(Vec::new, |b| series(b, &x_axis(b, spec).1, panel));
                    if let Some(i) = plot(ui, panel, &axis, inner, (&lines, &base), &names, selected, width) {
                        clicked = Some(i);
                    }
                });
            }
        });
    }
    clicked
}

/// Coloured names above the plots: the legend never covers data.
fn legend(ui: &mut Ui, names: &[String]) {
    ui.horizontal_wrapped(|ui| {
        for (i, n) in names.iter().enumerate() {
            let (swatch, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
            ui.painter().rect_filled(swatch, 2.0, series_color(i));
            ui.label(RichText::new(n).color(series_color(i)));
        }
    });
}

#[allow(clippy::too_many_arguments, reason = "one plot's panel, data and styling, drawn in one place")]
fn plot(
    ui: &mut Ui,
    panel: &Panel,
    axis: &XAxis,
    inner: bool,
    (lines, baseline): (&[SeriesPoints], &[SeriesPoints]),
    names: &[String],
    selected: usize,
    width: f32,
) -> Option<usize> {
    let (x_label, log, categories) = match axis {
        _ if inner => ("else fraction".to_string(), false, None),
        XAxis::Numeric { label, log } => (label.clone(), *log, None),
        XAxis::Categories(c) => ("".to_string(), false, Some(c.clone())),
    };
    let label_of = move |names: &Option<Vec<String>>, x: f64| -> String {
        match names {
            Some(c) if (x - x.round()).abs() < 1e-9 && x >= 0.0 => c.get(x.round() as usize).cloned().unwrap_or_default(),
            Some(_) => String::new(),
            None if log => format_number(10f64.powf(x)),
            None => format_significant(x),
        }
    };
    // ticks drop the names' shared prefix (named once under the axis) and break them at '-',
    // so that `pt-queue-distributed` fits under its bar; hover labels keep the whole name
    let (prefix, short) = categories.as_deref().map(tick_names).unzip();
    let x_label = match prefix.filter(|p| !p.is_empty()) {
        Some(p) => format!("{p}…"),
        None => x_label,
    };
    let full = categories.clone();
    let fmt_tick = move |x: f64| label_of(&short, x);
    let fmt_hover = move |x: f64| label_of(&full, x);
    let unit_title = panel.title();
    let builder = Plot::new(("simtlab-sweep", panel.slug()))
        .height(180.0)
        .width(width)
        .x_axis_label(x_label)
        .x_axis_formatter(move |mark, _| fmt_tick(mark.value))
        .y_axis_formatter(|mark, _| format_significant(mark.value))
        .label_formatter(move |pos| match pos {
            HoverPosition::NearDataPoint { plot_name, position, .. } => {
                Some(format!("{plot_name}\n{}\n{}: {}", fmt_hover(position.x), unit_title, format_significant(position.y)))
            }
            HoverPosition::Elsewhere { .. } => None,
        })
        .y_grid_spacer(uniform_grid_spacer(|input| one_two_five(input, Y_LABELS)))
        .include_y(0.0)
        .allow_scroll(false);
    let builder = match &categories {
        // one tick per category, so that every name shows
        Some(c) if !inner => {
            let n = c.len();
            builder.x_grid_spacer(move |_| (0..n).map(|i| GridMark { value: i as f64, step_size: 1.0 }).collect())
        }
        _ => builder.x_grid_spacer(x_grid(log && !inner, lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.x)).collect())),
    };
    // with one point there is nothing to pick out, and a white outline on every bar hides their colours
    let highlight = lines.iter().flat_map(|(_, p)| p.iter()).any(|q| q.point != selected);
    // whiskers over bars in the text colour, which stands out on every bar colour
    let ui_text_color = ui.visuals().strong_text_color();
    let response = builder.show(ui, |plot| {
        let bars = categories.is_some() && !inner;
        for (name, points) in lines {
            let k = names.iter().position(|m| m == name).unwrap_or(0);
            let color = series_color(k);
            if bars {
                // named bars side by side per category (among the series that have one
                // there), never joined by lines
                let mut whiskers = Vec::new();
                let chart = points
                    .iter()
                    .map(|q| {
                        let here: Vec<&String> = lines.iter().filter(|(_, p)| p.iter().any(|o| o.x == q.x)).map(|(n, _)| n).collect();
                        let slot = here.iter().position(|n| *n == name).unwrap_or(0) as f64;
                        let w = 0.8 / here.len().max(1) as f64;
                        let at = q.x - 0.4 + w * (slot + 0.5);
                        whiskers.push((at, w * 0.3, q.y));
                        let bar = Bar::new(at, q.y.value).width(w * 0.95).name(name);
                        if highlight && q.point == selected {
                            bar.stroke(egui::Stroke::new(2.0, Color32::WHITE))
                        } else {
                            bar
                        }
                    })
                    .collect();
                plot.bar_chart(BarChart::new(name.clone(), chart).color(color));
                for (at, cap, y) in whiskers {
                    whisker(plot, name, at, cap, &y, ui_text_color);
                }
            } else {
                let xy: Vec<[f64; 2]> = points.iter().map(|q| [q.x, q.y.value]).collect();
                plot.line(Line::new(name.clone(), PlotPoints::from(xy.clone())).color(color));
                plot.points(Points::new(name.clone(), xy).radius(3.5).shape(MarkerShape::Circle).filled(true).color(color));
                let cap = whisker_cap(points);
                for q in points {
                    whisker(plot, name, q.x, cap, &q.y, color);
                }
                if let Some(q) = points.iter().find(|q| highlight && q.point == selected) {
                    plot.points(Points::new(name.clone(), vec![[q.x, q.y.value]]).radius(6.0).filled(false).color(Color32::WHITE));
                }
            }
        }
        for (name, points) in baseline.iter().filter(|_| !bars) {
            let color = series_color(names.iter().position(|m| m == name).unwrap_or(0));
            let xy: Vec<[f64; 2]> = points.iter().map(|q| [q.x, q.y.value]).collect();
            plot.line(Line::new(format!("{name} (baseline)"), PlotPoints::from(xy)).color(color).style(LineStyle::dashed_loose()));
        }
    });
    let pointer = response.response.clicked().then(|| response.response.interact_pointer_pos()).flatten()?;
    let at = response.transform.value_from_position(pointer);
    lines.iter().flat_map(|(_, p)| p.iter()).min_by(|a, b| (a.x - at.x).abs().total_cmp(&(b.x - at.x).abs())).map(|q| {
        if inner {
            0
        } else {
            q.point
        }
    })
}

/// Half the width of a whisker's caps on a line plot: a tenth of the closest two points' gap.
fn whisker_cap(points: &[PlotPoint]) -> f64 {
    let mut xs: Vec<f64> = points.iter().map(|q| q.x).collect();
    xs.sort_by(f64::total_cmp);
    let gap = xs.windows(2).map(|w| w[1] - w[0]).filter(|g| *g > 0.0).fold(f64::INFINITY, f64::min);
    if gap.is_finite() {
        0.04 * gap
    } else {
        0.05
    }
}

/// The whisker of `y` at `x`: a vertical line from its lowest to its highest sample with caps
/// `cap` wide each side (nothing for a count or a single sample).
fn whisker(plot: &mut egui_plot::PlotUi<'_>, name: &str, x: f64, cap: f64, y: &Measured, color: Color32) {
    if y.samples < 2 || y.high <= y.low {
        return;
    }
    let stroke = egui::Stroke::new(1.5, color);
    for segment in [[[x, y.low], [x, y.high]], [[x - cap, y.low], [x + cap, y.low]], [[x - cap, y.high], [x + cap, y.high]]] {
        plot.line(Line::new(format!("{name} (spread)"), PlotPoints::from(segment.to_vec())).stroke(stroke));
    }
}

/// Each column of the records table with what it shows, on hover.
const RECORD_COLUMNS: [(&str, &str); 11] = [
    ("point", "the sweep's point: click to see its divergence"),
    ("value", "the swept parameter's value at the point"),
    ("kernel", "the kernel that ran"),
    ("variant", "how it ran: layout, remapping, tier"),
    ("median", "median of the timed samples"),
    ("fastest–slowest", "the range of the timed samples, and how many there were (n)"),
    ("vs baseline", "speed-up against the baseline's same kernel and variant at the same point: baseline median / median; \"within noise\" where the two ranges of samples overlap"),
    ("throughput", "work per second at the median time, in the workload's unit"),
    ("SIMT eff.", "SIMT efficiency: active lanes / (subgroup steps × subgroup width)"),
    ("div. warps", "divergent warps: the fraction of warps whose lanes took different paths"),
    ("CPU check", "the GPU's result against the CPU reference on the same inputs"),
];

/// The records table: one row per record with its point, time with its spread and sample
/// count, throughput, divergence and CPU check, and the speed-up over the baseline (or "within
/// noise") when one is open. Clicking a point's number selects it; returns the point clicked.
pub fn records_table(ui: &mut Ui, run: &Run, selected: usize, baseline: Option<&[Vec<Option<Comparison>>]>) -> Option<usize> {
    let mut clicked = None;
    // the comparison with the baseline beside the time, where a narrow window still shows it
    let columns: Vec<(&str, &str)> = RECORD_COLUMNS.iter().copied().filter(|(h, _)| baseline.is_some() || *h != "vs baseline").collect();
    sideways("simtlab-records-table").show(ui, |ui| {
        egui::Grid::new("simtlab-records").striped(true).spacing([12.0, 3.0]).show(ui, |ui| {
            for (h, explanation) in columns {
                ui.label(RichText::new(h).strong()).on_hover_text(explanation);
            }
            ui.end_row();
            for (i, p) in run.points.iter().enumerate() {
                for (j, r) in p.records.iter().enumerate() {
                    if j == 0 {
                        if ui.selectable_label(i == selected, format!("#{}", i + 1)).clicked() {
                            clicked = Some(i);
                        }
                        ui.label(p.x.as_ref().map_or_else(String::new, format_value));
                    } else {
                        ui.label("");
                        ui.label("");
                    }
                    ui.label(&r.kernel);
                    ui.label(&r.variant);
                    let time = Measured::time(r);
                    ui.label(format_seconds(time.value));
                    ui.label(format_range(&time));
                    if let Some(b) = baseline {
                        let comparison = b.get(i).and_then(|p| p.get(j).copied().flatten());
                        ui.label(comparison.map_or_else(String::new, |c| c.label()));
                    }
                    ui.label(r.throughput.as_ref().map_or_else(String::new, |t| format!("{} {}", format_significant(t.value), t.unit)));
                    ui.label(r.divergence.map_or_else(String::new, |d| format!("{:.1} %", 100.0 * d.simt_efficiency)));
                    ui.label(r.divergence.map_or_else(String::new, |d| format!("{:.1} %", 100.0 * d.divergence_ratio)));
                    if r.check.passed {
                        ui.colored_label(Color32::from_rgb(80, 190, 110), "ok");
                    } else {
                        ui.colored_label(ui.visuals().error_fg_color, format!("FAILED ({} wrong)", r.check.mismatches));
                    }
                    ui.end_row();
                }
            }
        });
    });
    clicked
}

/// The area every table sits in: it scrolls sideways when wider than its panel, with its scroll
/// bar always shown, so that a clipped column is seen to go on.
pub(super) fn sideways(id: &str) -> egui::ScrollArea {
    egui::ScrollArea::horizontal().id_salt(id).scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::AlwaysVisible)
}

/// `262.1 us–290.4 us, n = 3` (a time's range and sample count), or `n = 1` alone.
pub fn format_range(m: &Measured) -> String {
    match m.samples {
        0 | 1 => format!("n = {}", m.samples),
        n => format!("{}–{}, n = {n}", format_seconds(m.low), format_seconds(m.high)),
    }
}

/// The plots of `run` as figures for PNG export: the same panels and series as on screen.
pub fn figures(run: &Run, spec: Option<&ParamSpec>) -> Vec<Figure> {
    let (axis, xs) = x_axis(run, spec);
    let inner = run.points.len() == 1 && run.points[0].records.iter().all(|r| r.params.get("else_fraction").is_some());
    let (x_label, log_x, categories) = match &axis {
        _ if inner => ("else fraction".to_string(), false, None),
        XAxis::Numeric { label, log } => (label.clone(), *log, None),
        XAxis::Categories(c) => (String::new(), false, Some(c.clone())),
    };
    panels(run)
        .into_iter()
        .filter_map(|panel| {
            let lines = series(run, &xs, &panel);
            if lines.is_empty() {
                return None;
            }
            let series = lines
                .into_iter()
                .map(|(name, p)| Series {
                    name,
                    points: p.iter().map(|q| (if log_x { 10f64.powf(q.x) } else { q.x }, q.y.value)).collect(),
                    spread: p.iter().map(|q| (q.y.samples > 1).then_some((q.y.low, q.y.high))).collect(),
                })
                .collect();
            Some(Figure {
                id: format!("{}-{}", run.workload, panel.slug()),
                title: format!("{}: {}", run.workload, panel.title()),
                x_label: x_label.clone(),
                y_label: panel.title(),
                log_x,
                log_y: false,
                categories: categories.clone(),
                series,
            })
        })
        .collect()
}

impl super::Explorer {
    /// The heat map of the selected point, or its summary where the records keep no per-warp
    /// map.
    pub(super) fn heat_map(&mut self, ui: &mut Ui) {
        let Some(point) = self.run.points.get(self.selected) else { return };
        let x = point.x.as_ref().map_or_else(String::new, |v| format!(" ({})", format_value(v)));
        ui.heading(format!("divergence of point #{}{x}", self.selected + 1));
        if point.warps.is_empty() {
            ui.label(match point.records.iter().find_map(|r| r.divergence) {
                Some(d) => format!(
                    "{} warps of {} lanes: SIMT efficiency {:.1} %, branch efficiency {:.1} % (uniform evaluations), \
                     {:.1} % of warps divergent. This workload's records keep the summary only (no per-warp map).",
                    d.warps,
                    d.width,
                    100.0 * d.simt_efficiency,
                    100.0 * d.branch_efficiency,
                    100.0 * d.divergence_ratio
                ),
                None if cfg!(target_arch = "wasm32") => "in the page this workload's run times and checks its recording only: \
                     its divergence, where it has one, is in the desktop explorer"
                    .into(),
                None => "this workload measures no divergence".into(),
            });
            return;
        }
        if self.overlay.as_ref().is_none_or(|(i, _)| *i != self.selected) {
            let color_by = self.overlay.as_ref().map(|(_, o)| o.color_by).unwrap_or_default();
            let first = &point.warps[0];
            let mut o = crate::ui::overlay::DivergenceOverlay::new(&first.divergence, format!("{}, {}", first.layout, first.source));
            if let Some(after) = point.warps.get(1) {
                o = o.with_after(&after.divergence, format!("{}, {}", after.layout, after.source));
            }
            o.color_by = color_by;
            self.overlay = Some((self.selected, o));
        }
        if let Some((_, o)) = &mut self.overlay {
            o.ui(ui);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_steps_label_an_axis_from_0_to_9() {
        // 9.2 over 150 points, at least 8 points per finest step: grid lines every 0.5, labels every 2
        let base = 9.2 / 150.0 * 8.0;
        assert_eq!(one_two_five(GridInput { bounds: (0.0, 9.2), base_step_size: base }, Y_LABELS), [0.5, 2.0, 10.0]);
        let small = one_two_five(GridInput { bounds: (0.0, 0.02), base_step_size: 0.0007 }, Y_LABELS);
        for (got, want) in small.into_iter().zip([0.001, 0.005, 0.01]) {
            assert!((got / want - 1.0).abs() < 1e-9, "{small:?}");
        }
        // an x axis from 0 to 1 over 600 points: a label every 0.2 (72 points would be 0.12)
        let x = one_two_five(GridInput { bounds: (0.0, 1.0), base_step_size: 8.0 / 600.0 }, X_LABELS);
        assert!((x[1] - 0.2).abs() < 1e-12, "{x:?}");
        let marks = marks_at(&[0.0, 2f64.log10(), 4f64.log10()]);
        assert_eq!(marks.len(), 3);
        assert!(marks.iter().all(|m| (m.step_size - 2f64.log10()).abs() < 1e-12), "{marks:?}");
    }

    #[test]
    fn category_ticks_drop_the_shared_prefix() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (prefix, short) = tick_names(&names(&["pt-sync", "pt-queue-single", "pt-queue-chunked"]));
        assert_eq!((prefix.as_str(), short), ("pt-", names(&["sync", "queue\nsingle", "queue\nchunked"])));
        // a shared start that is not a whole '-' part stays
        assert_eq!(tick_names(&names(&["tiled4", "tiled8"])), (String::new(), names(&["tiled4", "tiled8"])));
        assert_eq!(tick_names(&names(&["remap-none"])), (String::new(), names(&["remap-none"])));
    }
}
