//! Editors for a workload's typed parameters ([`ParamSpec`]) and the sweep settings.

use egui::{ComboBox, DragValue, Slider, TextEdit, Ui};
use serde_json::Value;

use super::plots::format_value;
use crate::harness::format_number;
use crate::workload::{number_value, ParamKind, ParamSpec};

/// The sweep key that runs every workload of the selected one's family (the remapping
/// strategies, the matmul ladder, the queue kinds) at the same parameters.
pub const FAMILY_SWEEP: &str = "workload";

/// Sweep settings: `key` from `from` to `to` in `points` steps.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// Sweep at all; off runs one point at the current values.
    pub enabled: bool,
    /// The swept parameter's key ([`ParamSpec::key`]).
    pub key: String,
    /// First value (numbers).
    pub from: f64,
    /// Last value (numbers).
    pub to: f64,
    /// Number of values (geometric steps for log parameters; every option for a choice).
    pub points: usize,
}

impl Sweep {
    /// A sweep of the problem size `n` when there is one, else of the first sweepable size,
    /// else of the first sweepable parameter, around its current value (off until enabled).
    pub fn default_for(specs: &[ParamSpec], params: &Value) -> Sweep {
        let pick = specs
            .iter()
            .find(|s| s.sweepable() && s.key == "n")
            .or_else(|| specs.iter().find(|s| s.sweepable() && matches!(s.kind, ParamKind::Number { log: true, .. }) && s.key != "seed"))
            .or_else(|| specs.iter().find(|s| s.sweepable() && s.key != "seed"));
        let mut sweep = Sweep { enabled: false, key: String::new(), from: 0.0, to: 1.0, points: 4 };
        if let Some(spec) = pick {
            sweep.select(spec, params);
        }
        sweep
    }

    /// Sweeps `spec` from its current value over a range that fits it (never the previous
    /// parameter's from/to).
    pub fn select(&mut self, spec: &ParamSpec, params: &Value) {
        self.key = spec.key.clone();
        let now = spec.get(params).as_f64();
        if let ParamKind::Number { min, max, log, .. } = spec.kind {
            let v = now.unwrap_or(min).clamp(min, max);
            (self.from, self.to) = if log && v > 0.0 { ((v / 8.0).max(min.max(1.0)), (v * 8.0).min(max)) } else { (min, max) };
        }
    }

    /// The values the sweep runs, with the parameter (None when off or nothing to sweep).
    pub fn values<'a>(&self, specs: &'a [ParamSpec]) -> Option<(&'a ParamSpec, Vec<Value>)> {
        let spec = specs.iter().find(|s| s.key == self.key && s.sweepable()).filter(|_| self.enabled)?;
        Some((spec, spec.sweep_values(self.from, self.to, self.points)))
    }

    /// The sweep controls (`family` names the family when it has several workloads to run
    /// side by side); returns true when anything changed.
    pub fn ui(&mut self, ui: &mut Ui, specs: &[ParamSpec], params: &Value, family: Option<&str>) -> bool {
        let mut changed = ui.checkbox(&mut self.enabled, "sweep one parameter").changed();
        if !self.enabled {
            return changed;
        }
        let sweepable: Vec<&ParamSpec> = specs.iter().filter(|s| s.sweepable()).collect();
        let family_label = family.map(|f| format!("every {f} workload"));
        let current = match &family_label {
            Some(l) if self.key == FAMILY_SWEEP => l.clone(),
            _ => specs.iter().find(|s| s.key == self.key).map_or("—".into(), ParamSpec::label),
        };
        let mut picked = None;
        ComboBox::from_label("swept parameter").selected_text(current).show_ui(ui, |ui| {
            if let Some(l) = &family_label {
                if ui.selectable_label(self.key == FAMILY_SWEEP, l).clicked() && self.key != FAMILY_SWEEP {
                    self.key = FAMILY_SWEEP.into();
                    changed = true;
                }
            }
            for s in &sweepable {
                if ui.selectable_label(s.key == self.key, s.label()).clicked() {
                    picked = Some((*s).clone());
                }
            }
        });
        if let Some(spec) = picked.filter(|s| s.key != self.key) {
            self.select(&spec, params);
            changed = true;
        }
        let Some(spec) = specs.iter().find(|s| s.key == self.key) else { return changed };
        match spec.kind {
            ParamKind::Number { min, max, integer, log } => {
                for (value, label) in [(&mut self.from, "from"), (&mut self.to, "to")] {
                    let mut s = Slider::new(value, min..=max).text(label).logarithmic(log).custom_formatter(|v, _| format_number(v));
                    if integer {
                        s = s.integer();
                    }
                    changed |= ui.add(s).changed();
                }
                changed |= ui.add(Slider::new(&mut self.points, 2..=12).text("points")).changed();
                let n = spec.sweep_values(self.from, self.to, self.points).len();
                ui.small(format!("{n} values, {}", if log { "geometric steps" } else { "even steps" }));
            }
            ParamKind::Choice(options) => {
                ui.small(format!("every option: {}", options.join(", ")));
            }
            ParamKind::Flag => {
                ui.small("false and true");
            }
            ParamKind::Text => {}
        }
        changed
    }
}

/// One editor per parameter; returns true when a value changed. The swept parameter's editor
/// is disabled (the sweep sets it).
pub fn editors(ui: &mut Ui, specs: &[ParamSpec], params: &mut Value, swept: Option<&str>, family: &str) -> bool {
    let mut changed = false;
    for spec in specs {
        ui.add_enabled_ui(!spec.fixed && swept != Some(spec.key.as_str()), |ui| {
            // every parameter says what it is on hover
            let response = ui.scope(|ui| editor(ui, spec, params));
            changed |= response.inner;
            response.response.on_hover_text(spec.explanation(family)).on_disabled_hover_text(spec.explanation(family));
        });
    }
    changed
}

fn editor(ui: &mut Ui, spec: &ParamSpec, params: &mut Value) -> bool {
    let label = spec.label();
    let value = spec.get(params).clone();
    if spec.fixed {
        ui.label(format!("{label}: {} (set by the workload)", format_value(&value)));
        return false;
    }
    let mut next = value.clone();
    match &spec.kind {
        &ParamKind::Number { min, max, integer, log } => {
            ui.horizontal(|ui| {
                let mut auto = value.is_null();
                if spec.nullable {
                    ui.checkbox(&mut auto, "auto").on_hover_text("null: the workload chooses");
                }
                if auto {
                    next = Value::Null;
                    ui.label(label.as_str());
                    return;
                }
                let mut x = value.as_f64().unwrap_or(min);
                let mut s = Slider::new(&mut x, min..=max).text(label.as_str()).logarithmic(log).custom_formatter(|v, _| format_number(v));
                if integer {
                    s = s.integer();
                }
                ui.add(s);
                next = number_value(x, integer);
            });
        }
        ParamKind::Choice(options) => {
            let current = value.as_str().unwrap_or("").to_string();
            ComboBox::from_label(label.as_str()).selected_text(current.as_str()).show_ui(ui, |ui| {
                for o in *options {
                    if ui.selectable_label(current == *o, *o).clicked() {
                        next = Value::from(*o);
                    }
                }
            });
        }
        ParamKind::Flag => {
            let mut b = value.as_bool().unwrap_or(false);
            ui.checkbox(&mut b, label.as_str());
            next = Value::Bool(b);
        }
        ParamKind::Text => {
            let id = ui.scope_id().with(("param-text", &spec.key));
            let mut text = ui.data_mut(|d| d.get_temp::<String>(id)).unwrap_or_else(|| value.to_string());
            ui.horizontal(|ui| {
                let name = ui.label(label.as_str()).on_hover_text("JSON: a number, a quoted string, a [list] or null");
                let r = ui.add(TextEdit::singleline(&mut text).desired_width(140.0)).labelled_by(name.id);
                if r.changed() {
                    // a name without quotes is taken as a string, as on the command line
                    match serde_json::from_str::<Value>(&text) {
                        Ok(v) => next = v,
                        Err(_) if value.is_string() => next = Value::from(text.clone()),
                        Err(_) => {}
                    }
                }
            });
            ui.data_mut(|d| d.insert_temp(id, text));
        }
    }
    if next != value {
        spec.set(params, next);
        return true;
    }
    false
}

/// A drag field for a count (samples, warm-up) that keeps it within `range`.
pub fn count(ui: &mut Ui, value: &mut usize, range: std::ops::RangeInclusive<usize>, label: &str) {
    ui.horizontal(|ui| {
        let name = ui.label(label);
        ui.add(DragValue::new(value).range(range)).labelled_by(name.id);
    });
}
