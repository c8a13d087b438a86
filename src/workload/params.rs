//! What each workload parameter is, for editors and sweeps: a number with its range (and
//! whether it grows geometrically), one of named options, a flag, or free text (lists,
//! instance names). [`Workload::param_specs`](super::Workload::param_specs) derives them from
//! the parameters at the tiny and paper scales; the few facts the values cannot tell (which
//! enum a field is, whose name table gives its options; a probability's bounds; a parameter the
//! entry fixes) are the tables below, kept equal to the configuration types by unit tests.

use serde_json::Value;

use super::Scale;
use crate::harness::Named;
use crate::kernels::flowshop::{gpu::ThreadMapping, LowerBound};
use crate::kernels::micro::{Distribution, Pattern};
use crate::pt::barrier::{BarrierArrival, BarrierFence};
use crate::pt::cases::{forest::Shape, prodcons::Workload, sync::Work};
use crate::pt::queue::QueueKind;

/// How a parameter is edited and swept.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamKind {
    /// A number in `min..=max`: whole numbers when `integer`; geometric sliders and sweeps
    /// when `log` (sizes that the scales grow by factors).
    Number {
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
        /// Whole numbers only.
        integer: bool,
        /// Logarithmic slider and geometric sweeps.
        log: bool,
    },
    /// One of named options (a serde enum's names).
    Choice(&'static [&'static str]),
    /// `true` or `false`.
    Flag,
    /// Anything else (a list, an instance name), edited as JSON text.
    Text,
}

/// One parameter of a workload.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSpec {
    /// Its path in the parameter object: `n`, or `shape.m` inside a nested object.
    pub key: String,
    /// Editor and sweep kind.
    pub kind: ParamKind,
    /// `null` is a value (the runner then chooses, e.g. as many workgroups as fit).
    pub nullable: bool,
    /// Set by the registry entry itself (`micro-loop` runs the loop pattern): shown, not edited.
    pub fixed: bool,
}

impl ParamSpec {
    /// The key as people read it: `shape.m` → `shape m`, `else_fractions` → `else fractions`.
    pub fn label(&self) -> String {
        self.key.replace(['_', '.'], " ")
    }

    /// What the parameter is, in a line for people (the explorer's hover text); `family` is
    /// the workload's family, where a name means different things in different families.
    pub fn explanation(&self, family: &str) -> &'static str {
        explanation(family, &self.key)
    }

    /// Can be swept (numbers, choices and flags).
    pub fn sweepable(&self) -> bool {
        !self.fixed && !matches!(self.kind, ParamKind::Text)
    }

    /// `count` values from `from` to `to` (geometric for log numbers, rounded for integers);
    /// every option of a choice and both values of a flag.
    pub fn sweep_values(&self, from: f64, to: f64, count: usize) -> Vec<Value> {
        match &self.kind {
            ParamKind::Choice(options) => options.iter().map(|o| Value::from(*o)).collect(),
            ParamKind::Flag => vec![Value::Bool(false), Value::Bool(true)],
            ParamKind::Text => Vec::new(),
            &ParamKind::Number { min, max, integer, log } => {
                let (a, b) = (from.clamp(min, max), to.clamp(min, max));
                let count = count.max(1);
                let mut values: Vec<f64> = (0..count)
                    .map(|i| {
                        let f = if count == 1 { 0.0 } else { i as f64 / (count - 1) as f64 };
                        if log && a > 0.0 && b > 0.0 {
                            (a.ln() + (b.ln() - a.ln()) * f).exp()
                        } else {
                            a + (b - a) * f
                        }
                    })
                    .map(|x| if integer { x.round() } else { (x * 1e6).round() / 1e6 })
                    .collect();
                values.dedup();
                values.into_iter().map(|x| number_value(x, integer)).collect()
            }
        }
    }

    /// The value at `key` of `params` (`Value::Null` when absent).
    pub fn get<'a>(&self, params: &'a Value) -> &'a Value {
        self.key.split('.').try_fold(params, |v, part| v.get(part)).unwrap_or(&Value::Null)
    }

    /// Sets the value at `key` of `params` (nested objects are created as needed).
    pub fn set(&self, params: &mut Value, value: Value) {
        let mut slot = params;
        for part in self.key.split('.') {
            if !slot.is_object() {
                *slot = Value::Object(Default::default());
            }
            slot = slot.as_object_mut().expect("made an object above").entry(part).or_insert(Value::Null);
        }
        *slot = value;
    }
}

/// `x` as JSON: an integer when `integer`.
pub fn number_value(x: f64, integer: bool) -> Value {
    if integer && x >= 0.0 && x <= u64::MAX as f64 {
        Value::from(x.round() as u64)
    } else if integer {
        Value::from(x.round() as i64)
    } else {
        Value::from(x)
    }
}

/// Options of the string-valued enums in the registry's configurations, by parameter name: each
/// enum's name table.
pub(crate) const CHOICES: &[(&str, &[&str])] = &[
    ("distribution", Distribution::NAMES),
    ("pattern", Pattern::NAMES),
    ("work", Work::NAMES),
    ("shape", Shape::NAMES),
    ("workload", Workload::NAMES),
    ("kind", QueueKind::NAMES),
    ("arrival", BarrierArrival::NAMES),
    ("fence", BarrierFence::NAMES),
    ("bound", LowerBound::NAMES),
    ("mapping", ThreadMapping::NAMES),
];

/// Number ranges the scales cannot tell: `(name, min, max, log)`.
const RANGES: &[(&str, f64, f64, bool)] = &[
    ("probability", 0.0, 1.0, false),
    ("emit", 0.0, 1.0, false),
    ("obstacles", 0.0, 0.9, false),
    ("pcross", 0.0, 1.0, false),
    ("pmutate", 0.0, 1.0, false),
    ("omega", 0.1, 1.99, false),
    ("iso", 0.1, 4.0, false),
    ("seed", 1.0, 1000.0, false),
    ("workgroups", 0.0, 4096.0, true),
    ("group", 1.0, 1024.0, true),
    ("long", 1.0, 4096.0, true),
    ("short", 0.0, 4096.0, false),
    ("heavy", 1.0, 4096.0, true),
];

/// Parameters a registry entry fixes, by family: the entry's name says their value.
const FIXED: &[(&str, &str)] = &[("micro", "pattern"), ("remap", "pattern"), ("pt", "kind")];

/// The specs of a workload's parameters, in the order of its parameter object (nested objects
/// flattened to dotted keys).
pub(super) fn derive(family: &str, tiny: &Value, paper: &Value) -> Vec<ParamSpec> {
    let mut out = Vec::new();
    walk(family, "", tiny, paper, &mut out);
    out
}

fn walk(family: &str, prefix: &str, tiny: &Value, paper: &Value, out: &mut Vec<ParamSpec>) {
    let Some(object) = tiny.as_object() else { return };
    for (name, value) in object {
        let key = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
        let at_paper = paper.get(name).unwrap_or(value);
        if value.is_object() {
            walk(family, &key, value, at_paper, out);
            continue;
        }
        let fixed = prefix.is_empty() && FIXED.iter().any(|&(f, k)| f == family && k == name) && value.is_string();
        let nullable = value.is_null() || at_paper.is_null();
        let kind = kind_of(name, value, at_paper);
        out.push(ParamSpec { key, kind, nullable, fixed });
    }
}

fn kind_of(name: &str, tiny: &Value, paper: &Value) -> ParamKind {
    let sample = if tiny.is_null() { paper } else { tiny };
    match sample {
        Value::Bool(_) => ParamKind::Flag,
        Value::String(_) => CHOICES.iter().find(|(k, _)| *k == name).map_or(ParamKind::Text, |&(_, options)| ParamKind::Choice(options)),
        Value::Number(_) => {
            let integer = [tiny, paper].iter().all(|v| v.is_null() || v.is_u64() || v.is_i64());
            if let Some(&(_, min, max, log)) = RANGES.iter().find(|(k, ..)| *k == name) {
                return ParamKind::Number { min, max, integer, log };
            }
            let values: Vec<f64> = [tiny, paper].iter().filter_map(|v| v.as_f64()).collect();
            let hi = values.iter().copied().fold(0.0, f64::max);
            let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
            if !integer && hi <= 1.0 {
                return ParamKind::Number { min: 0.0, max: 1.0, integer, log: false };
            }
            let min = if integer && lo >= 1.0 { 1.0 } else { 0.0 };
            let max = (hi * 4.0).max(16.0);
            // sizes the scales grow by large factors are swept geometrically
            let log = integer && (hi >= 1024.0 || (lo > 0.0 && hi / lo >= 16.0));
            ParamKind::Number { min, max, integer, log }
        }
        _ => ParamKind::Text,
    }
}

/// The specs at both scales the derivation reads.
pub(super) fn of(family: &str, params: impl Fn(Scale) -> Value) -> Vec<ParamSpec> {
    derive(family, &params(Scale::Tiny), &params(Scale::Full))
}

/// What each parameter is: by family where a name means different things, else by name.
fn explanation(family: &str, key: &str) -> &'static str {
    match (family, key) {
        (_, "seed") => "seed of the generated inputs: the same seed gives the same data",
        ("blackscholes", "n") => "options priced (one thread each)",
        ("carrillo", "n") => "threads, one element each",
        ("micro" | "remap", "n") => "threads, one data-dependent branch or loop each",
        ("reduction", "n") => "elements summed",
        ("pt", "n") => "items the case processes",
        (_, "n") => "problem size",
        (_, "pattern") => "the divergent construct: a data-dependent if, or a loop with data-dependent trip counts",
        (_, "distribution") => {
            "how the trip counts (loop) or values (if) are laid out over the threads: the layout decides which warps diverge"
        }
        (_, "probability") => "if: fraction of threads that take the expensive path",
        (_, "heavy") => "if: mixing rounds on the expensive path",
        (_, "short") => "loop: trip count of the short lanes",
        (_, "long") => "loop: trip count of the long lanes (at least short)",
        (_, "group") => "loop: the group width the one-long layout targets (32 = an NVIDIA warp)",
        (_, "defer_from") => {
            "deferral: loops of at least this many trips run in a second, dense pass (auto: the threshold the emulation finds best)"
        }
        (_, "defer_per_thread") => "deferral: elements per invocation of the first pass (1 to 32)",
        (_, "defer_workgroups") => "deferral: workgroups of the second pass",
        (_, "tile_workgroup") => "tile sort: invocations per workgroup",
        (_, "tile_per_thread") => "tile sort: elements per invocation (a tile is workgroup × this many elements)",
        (_, "edge") => "cells (or voxels) per side of the cubic box: edge³ in all",
        (_, "obstacles") => "target fraction of obstacle cells (random spheres until it is reached)",
        (_, "omega") => "BGK relaxation rate 1/τ",
        (_, "children") => "children (= parents) per generation",
        (_, "genes") => "genes (bits) per chromosome",
        (_, "pcross") => "crossover probability",
        (_, "pmutate") => "jump-mutation probability per child",
        (_, "balls") => "metaballs in the field",
        (_, "iso") => "iso value of the field Σ r² / |p − c|²",
        (_, "riskfree") => "risk-free interest rate per year (0.02 = 2 %)",
        (_, "volatility") => "volatility per year (0.30 = 30 %)",
        (_, "else_fractions") => "fractions of threads that take the heavy else-branch, one measurement each",
        (_, "len") => "elements per thread in each of the four arrays",
        (_, "heavy_rounds") => "double rounds of the heavy else-branch",
        (_, "light_rounds") => "mixing rounds of the light if-branch",
        (_, "shape.m") => "rows of A and C",
        (_, "shape.n") => "columns of B and C",
        (_, "shape.k") => "columns of A, rows of B",
        ("pt", "shape") => "forest: complete or tilted expansion",
        ("pt", "work") => "sync: compute only (ci), or compute with strided loads (cmi)",
        ("pt", "emit") => "sync: fraction of inputs the producer emits",
        ("pt", "stride") => "sync: stride (words) of the loads",
        ("pt", "fmas") => "multiply-adds per item: the work each item costs",
        ("pt", "depth") => "forest: levels of the tree (roots are level 0)",
        ("pt", "items") => "forest: initial items (roots)",
        ("pt", "capacity") => "queue capacity (auto: twice the widest level, or the participants)",
        ("pt", "workload") => "producer-consumer: a reduction, or two stages",
        ("pt", "pass") => "two-stage: items of every 256 passed to stage 2",
        ("pt", "max_workgroups") => "persistent reduction: most workgroups launched",
        ("pt", "blocks") => "gsync: blocks of 256 items",
        ("pt", "syncs") => "gsync: global synchronizations (the work runs in syncs + 1 phases)",
        ("pt", "iterations") => "barrier: barriers per launch",
        ("pt", "kind.arrival") => "barrier: where workgroups arrive (flat: one counter; tree: sub-counters, then one)",
        ("pt", "kind.fence") => "barrier: whether the arrival fences storage (device) or only the workgroup (none)",
        ("pt", "kind") => "queue: single head, chunked claims, or distributed heads",
        ("pt", "workgroups") => "workgroups launched (auto: as many as are co-resident)",
        ("pt", "chunk") => "chunked queue: items per claim",
        ("pt", "heads") => "distributed queue: heads the items are spread over",
        ("pt", "rounds") => "ring queue: items each participant pushes and pops",
        ("flowshop", "instance") => "the Taillard instance (taNNN) whose pools are bounded",
        ("flowshop", "bound") => "the lower bound computed for each node",
        ("flowshop", "branchless") => "the branch-refactored kernel: max()/select() instead of data-dependent ifs",
        ("flowshop", "cpu") => "also time one CPU core and all CPU cores on the same pool",
        ("flowshop", "mapping") => "GPU threads per child or per parent",
        ("flowshop", "probe") => "count divergence with the GPU probe, in a separate untimed run",
        ("flowshop", "pool_sizes") => "children per pool",
        ("flowshop", "strategies") => "pool orders to build: depth first (DFS) and breadth first (BFS)",
        ("flowshop", "walk_prefix") => {
            "the paper's kernel: each thread walks its node's prefix for the heads (a loop as long as the node is deep)"
        }
        _ => "a parameter of the workload's configuration",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{registry, Scale};

    #[test]
    fn every_choice_and_sweep_value_is_accepted_by_the_workload() {
        for w in registry() {
            let tiny = w.params(Scale::Tiny);
            for spec in w.param_specs() {
                assert!(!spec.get(&tiny).is_null() || spec.nullable, "{} {}", w.name(), spec.key);
                let values = match &spec.kind {
                    ParamKind::Number { min, max, .. } => spec.sweep_values(*min, *max, 3),
                    _ => spec.sweep_values(0.0, 0.0, 0),
                };
                for v in values {
                    let mut p = tiny.clone();
                    spec.set(&mut p, v.clone());
                    assert_eq!(spec.get(&p), &v);
                    // the configuration type takes the value (whether a combination runs is the runner's)
                    let err = w.check_params(&p).err();
                    assert!(err.is_none(), "{} {}={v}: {err:?}", w.name(), spec.key);
                }
            }
        }
    }

    #[test]
    fn every_parameter_of_every_workload_says_what_it_is() {
        for w in crate::workload::registry() {
            for spec in w.param_specs() {
                let text = spec.explanation(w.family());
                assert_ne!(text, explanation("", ""), "{} has no explanation for '{}'", w.name(), spec.key);
            }
        }
    }

    #[test]
    fn choices_list_every_option_serde_knows() {
        // an unknown name makes serde list the options it expects: they must be the table's
        for w in registry() {
            let tiny = w.params(Scale::Tiny);
            for spec in w.param_specs() {
                let ParamKind::Choice(options) = spec.kind else { continue };
                let mut p = tiny.clone();
                spec.set(&mut p, Value::from("no-such-option"));
                let err = w.check_params(&p).unwrap_err().to_string();
                for o in options {
                    assert!(err.contains(&format!("`{o}`")), "{} {}: {err}", w.name(), spec.key);
                }
                assert_eq!(err.matches('`').count(), 2 * (options.len() + 1), "{} {}: {err}", w.name(), spec.key);
            }
        }
    }

    /// `T`'s name table is its JSON spelling both ways; its short names are read as well.
    fn table_is_serde<T: Named + std::fmt::Debug + serde::Serialize + serde::de::DeserializeOwned>(field: &str) {
        assert_eq!(T::VALUES.len(), T::NAMES.len(), "{field}");
        for (&value, &name) in T::VALUES.iter().zip(T::NAMES) {
            assert_eq!(value.name(), name);
            assert_eq!(T::from_name(name), Some(value));
            assert_eq!(serde_json::to_value(value).unwrap(), Value::from(name), "{field}");
            assert_eq!(serde_json::from_value::<T>(Value::from(name)).unwrap(), value, "{field}");
        }
        for &(short, value) in T::SHORT_NAMES {
            assert!(!T::NAMES.contains(&short), "{field}: {short} is a name and a short name");
            assert_eq!(T::from_name(short), Some(value), "{field}");
            assert_eq!(serde_json::from_value::<T>(Value::from(short)).unwrap(), value, "{field}");
        }
    }

    /// [`table_is_serde`], and the options the explorer offers for `field` in every workload
    /// that has it.
    fn table_is_serde_and_editor_options<T: Named + std::fmt::Debug + serde::Serialize + serde::de::DeserializeOwned>(field: &str) {
        table_is_serde::<T>(field);
        let mut workloads = 0;
        for w in registry() {
            for spec in w.param_specs().into_iter().filter(|s| s.key.rsplit('.').next() == Some(field)) {
                assert_eq!(spec.kind, ParamKind::Choice(T::NAMES), "{} {}", w.name(), spec.key);
                workloads += 1;
            }
        }
        assert!(workloads > 0, "no workload has a parameter '{field}'");
    }

    #[test]
    fn every_choice_is_its_enums_name_table() {
        table_is_serde_and_editor_options::<Distribution>("distribution");
        table_is_serde_and_editor_options::<Pattern>("pattern");
        table_is_serde_and_editor_options::<Work>("work");
        table_is_serde_and_editor_options::<Shape>("shape");
        table_is_serde_and_editor_options::<Workload>("workload");
        table_is_serde_and_editor_options::<QueueKind>("kind");
        table_is_serde_and_editor_options::<BarrierArrival>("arrival");
        table_is_serde_and_editor_options::<BarrierFence>("fence");
        table_is_serde_and_editor_options::<LowerBound>("bound");
        table_is_serde_and_editor_options::<ThreadMapping>("mapping");
        assert_eq!(CHOICES.len(), 10, "a choice without its enum's check above");
        // the enums no workload parameter offers as a choice: named in sweeps, records and
        // on the command line
        use crate::kernels::flowshop::Exploration;
        use crate::pt::sweep::Bench;
        use crate::remap::Strategy;
        table_is_serde::<Exploration>("exploration");
        table_is_serde::<Bench>("bench");
        table_is_serde::<Strategy>("strategy");
        assert_eq!(Exploration::NAMES, ["depthfirst", "breadthfirst"]);
        assert_eq!(Exploration::SHORT_NAMES, [("dfs", Exploration::DepthFirst), ("bfs", Exploration::BreadthFirst)]);
        assert_eq!((Bench::Capability.name(), Bench::Capability.short_name()), ("capability", "probe"));
        assert_eq!((Exploration::BreadthFirst.name(), Exploration::BreadthFirst.short_name()), ("breadthfirst", "bfs"));
        assert_eq!(Bench::SHORT_NAMES, [("probe", Bench::Capability)]);
        assert_eq!(Strategy::NAMES, ["auto", "none", "redirect", "lam", "gpu", "tile", "defer"]);
        assert!(Strategy::SHORT_NAMES.is_empty());
    }

    #[test]
    fn sizes_sweep_geometrically_and_keys_nest() {
        let m = crate::workload::find("matmul-naive").unwrap().param_specs();
        let shape_m = m.iter().find(|s| s.key == "shape.m").unwrap();
        assert!(matches!(shape_m.kind, ParamKind::Number { integer: true, log: true, .. }), "{shape_m:?}");
        assert_eq!(shape_m.sweep_values(64.0, 256.0, 3), vec![Value::from(64), Value::from(128), Value::from(256)]);
        let mut p = serde_json::json!({"shape": {"m": 1}});
        shape_m.set(&mut p, Value::from(5));
        assert_eq!(p["shape"]["m"], 5);
        let l = crate::workload::find("micro-loop").unwrap().param_specs();
        assert!(l.iter().any(|s| s.key == "pattern" && s.fixed));
        assert!(l.iter().any(|s| s.key == "defer_from" && s.nullable));
        let q = crate::workload::find("pt-barrier").unwrap().param_specs();
        assert!(q.iter().any(|s| s.key == "kind.arrival" && !s.fixed && s.kind == ParamKind::Choice(&["flat", "tree"])));
    }
}
