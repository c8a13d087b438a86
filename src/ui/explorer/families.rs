//! The registry of explorable kernel families: what the explorer can run, with which
//! parameters, and which paper figure it reproduces. A family that lands later adds one
//! [`Family`] entry to [`families`]: its parameters, a run function, and optionally its paper.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::divergence::Divergence;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::harness::{self, Check, Protocol};
use crate::kernels::micro::{self, Distribution, MicroConfig, Pattern, Prepared, RunOptions};

/// How a parameter is edited.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    /// A slider over `min..=max` (logarithmic when `log`; whole numbers when `integer`).
    Range {
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
        /// Logarithmic slider and geometric sweeps.
        log: bool,
        /// Whole numbers only.
        integer: bool,
    },
    /// One of several named options; the value is the option's index.
    Choice(&'static [&'static str]),
}

/// One parameter of a family.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    /// Name in [`ParamValues`] and in the run function.
    pub key: &'static str,
    /// What the UI shows beside the control.
    pub label: &'static str,
    /// Slider or choice.
    pub kind: ParamKind,
    /// Initial value (an option's index for a choice).
    pub default: f64,
}

impl ParamSpec {
    /// A continuous slider over `min..=max`.
    pub const fn range(key: &'static str, label: &'static str, min: f64, max: f64, default: f64) -> ParamSpec {
        ParamSpec { key, label, kind: ParamKind::Range { min, max, log: false, integer: false }, default }
    }

    /// A whole-number slider over `min..=max`, logarithmic when `log`.
    pub const fn integer(key: &'static str, label: &'static str, min: f64, max: f64, log: bool, default: f64) -> ParamSpec {
        ParamSpec { key, label, kind: ParamKind::Range { min, max, log, integer: true }, default }
    }

    /// A choice among `options`, starting at index `default`.
    pub const fn choice(key: &'static str, label: &'static str, options: &'static [&'static str], default: usize) -> ParamSpec {
        ParamSpec { key, label, kind: ParamKind::Choice(options), default: default as f64 }
    }

    /// `count` values from `from` to `to` (geometric for log ranges, every option for choices).
    pub fn sweep_values(&self, from: f64, to: f64, count: usize) -> Vec<f64> {
        match self.kind {
            ParamKind::Choice(options) => (0..options.len()).map(|i| i as f64).collect(),
            ParamKind::Range { min, max, log, integer } => {
                let (a, b) = (from.clamp(min, max), to.clamp(min, max));
                let count = count.max(1);
                let mut v: Vec<f64> = (0..count)
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
                v.dedup();
                v
            }
        }
    }

    /// A value as the UI shows it (`one-long` for a choice).
    pub fn format(&self, value: f64) -> String {
        match self.kind {
            ParamKind::Choice(options) => options.get(value as usize).copied().unwrap_or("?").to_string(),
            ParamKind::Range { integer: true, .. } => format!("{}", value.round() as i64),
            ParamKind::Range { .. } => format!("{value:.3}"),
        }
    }
}

/// Parameter values by key, in the family's order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParamValues(pub Vec<(&'static str, f64)>);

impl ParamValues {
    /// Every parameter of `specs` at its default.
    pub fn defaults(specs: &[ParamSpec]) -> ParamValues {
        ParamValues(specs.iter().map(|s| (s.key, s.default)).collect())
    }

    /// The value of `key`; an error when the family has no such parameter.
    pub fn get(&self, key: &str) -> Result<f64> {
        self.0
            .iter()
            .find(|(k, _)| *k == key)
            .map(|&(_, v)| v)
            .ok_or_else(|| Error::invalid("parameter", format!("'{key}' is not a parameter of this family")))
    }

    /// Sets `key` to `value`, adding it when absent.
    pub fn set(&mut self, key: &'static str, value: f64) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }

    /// The value of `key` for editing in place; None when absent.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut f64> {
        self.0.iter_mut().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

/// Everything a run function gets.
pub struct RunRequest<'a> {
    /// The explorer's own GPU (never the UI's device).
    pub gpu: &'a Gpu,
    /// The family's parameter values for this point.
    pub params: &'a ParamValues,
    /// Warm-up runs and timed samples.
    pub protocol: Protocol,
    /// Also run the workload after a remapping (families with `can_remap`).
    pub remap: bool,
    /// Count divergence with the GPU probe when the adapter has subgroups; otherwise (or when
    /// false) by host emulation at `emulation_width`.
    pub prefer_probe: bool,
    /// Warp width of the host emulation, in lanes.
    pub emulation_width: u32,
    /// Set by the UI's cancel button; run functions check it between dispatches.
    pub cancel: &'a AtomicBool,
}

impl RunRequest<'_> {
    /// An error once the run was cancelled.
    fn check_cancel(&self) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) {
            Err(Error::invalid("run", "cancelled"))
        } else {
            Ok(())
        }
    }
}

/// One measured configuration.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// Median of the timed samples, seconds.
    pub median_s: f64,
    /// Fastest sample, seconds.
    pub min_s: f64,
    /// Slowest sample, seconds.
    pub max_s: f64,
    /// Work per second in `throughput_unit`.
    pub throughput: f64,
    /// Divergence counted by the probe or the emulation (see `divergence_source`).
    pub divergence: Divergence,
    /// "GPU probe, subgroup width 8" or "host emulation, W = 32".
    pub divergence_source: String,
    /// The GPU output matched the CPU reference.
    pub check_passed: bool,
}

/// What one run (one sweep point) produced.
#[derive(Clone, Debug)]
pub struct PointResult {
    /// The parameter values of the point.
    pub params: ParamValues,
    /// Unit of [`Measurement::throughput`], e.g. "G iterations/s".
    pub throughput_unit: &'static str,
    /// The workload as is.
    pub plain: Measurement,
    /// The same workload after remapping, when requested and supported.
    pub remapped: Option<Measurement>,
}

/// The paper figure a family reproduces, and what to show beside our numbers.
#[derive(Clone, Copy, Debug)]
pub struct PaperRef {
    /// Key of `simtlab::report::PaperValues::of`.
    pub paper: &'static str,
    /// The figure as the paper names it, e.g. "Figure 1 (the for loop)".
    pub figure: &'static str,
    /// What the figure shows, and whether it has numbers.
    pub caption: &'static str,
    /// Claim ids of the paper's values to list.
    pub claims: &'static [&'static str],
    /// The paper's scenario as a number for these parameters (e.g. the SIMT efficiency the
    /// text's reasoning gives at its warp width), with what it means.
    pub model: Option<(&'static str, ModelValue)>,
    /// Our counterpart of the model value, from a run.
    pub ours: Option<(&'static str, OurValue)>,
}

/// The paper's scenario as a number for a parameter set.
pub type ModelValue = fn(&ParamValues) -> Option<f64>;
/// Our counterpart of a model value, from a run.
pub type OurValue = fn(&PointResult) -> f64;

/// A kernel family the explorer can run.
#[derive(Clone, Copy, Debug)]
pub struct Family {
    /// Name in the family picker and for `simtlab gui --family`.
    pub name: &'static str,
    /// One sentence on what the kernel does.
    pub description: &'static str,
    /// Its parameters, in display order.
    pub params: &'static [ParamSpec],
    /// The parameter swept by default, and its default range and point count.
    pub sweep: (&'static str, f64, f64, usize),
    /// The kernel's WGSL under `shaders/`, for the occupancy panel.
    pub shader: &'static str,
    /// The entry point of `shader` the occupancy panel reads.
    pub entry_point: &'static str,
    /// The family can also run after remapping.
    pub can_remap: bool,
    /// The paper figure it reproduces, if any.
    pub paper: Option<PaperRef>,
    /// Runs one point on the explorer's worker thread.
    pub run: fn(&RunRequest) -> Result<PointResult>,
}

impl Family {
    /// The parameter called `key`.
    pub fn param(&self, key: &str) -> Option<&ParamSpec> {
        self.params.iter().find(|p| p.key == key)
    }
}

const LOOP_DISTRIBUTIONS: &[&str] = &["uniform", "one-long", "random", "sorted"];
const IF_DISTRIBUTIONS: &[&str] = &["random", "sorted"];

const MICRO_LOOP_PARAMS: &[ParamSpec] = &[
    ParamSpec::choice("distribution", "trip-count layout", LOOP_DISTRIBUTIONS, 1),
    ParamSpec::integer("n", "threads", 256.0, (1u64 << 24) as f64, true, (1u64 << 16) as f64),
    ParamSpec::integer("short", "short trips", 0.0, 4096.0, false, 16.0),
    ParamSpec::integer("long", "long trips", 1.0, 4096.0, true, 512.0),
    ParamSpec::integer("group", "lanes per long trip (one-long)", 1.0, 128.0, true, 32.0),
    ParamSpec::integer("seed", "seed", 1.0, 1000.0, false, 1.0),
];

const MICRO_IF_PARAMS: &[ParamSpec] = &[
    ParamSpec::range("probability", "divergence probability p", 0.0, 1.0, 0.5),
    ParamSpec::choice("distribution", "value layout", IF_DISTRIBUTIONS, 0),
    ParamSpec::integer("n", "threads", 256.0, (1u64 << 24) as f64, true, (1u64 << 16) as f64),
    ParamSpec::integer("heavy", "mixing rounds on the taken path", 1.0, 4096.0, true, 256.0),
    ParamSpec::integer("seed", "seed", 1.0, 1000.0, false, 1.0),
];

fn u32_param(p: &ParamValues, key: &str) -> Result<u32> {
    let v = p.get(key)?;
    if !(0.0..=u32::MAX as f64).contains(&v) {
        return Err(Error::invalid(key, format!("{v} is out of range")));
    }
    Ok(v.round() as u32)
}

fn micro_config(p: &ParamValues, pattern: Pattern) -> Result<MicroConfig> {
    let dist_index = p.get("distribution")? as usize;
    let distribution = match pattern {
        Pattern::Loop => {
            [Distribution::Uniform, Distribution::OneLong, Distribution::Random, Distribution::Sorted].get(dist_index).copied()
        }
        Pattern::If => [Distribution::Random, Distribution::Sorted].get(dist_index).copied(),
    }
    .ok_or_else(|| Error::invalid("distribution", format!("option {dist_index}")))?;
    let mut cfg =
        MicroConfig { pattern, distribution, n: u32_param(p, "n")? as usize, seed: u32_param(p, "seed")? as u64, ..Default::default() };
    match pattern {
        Pattern::Loop => {
            cfg.short = u32_param(p, "short")?;
            cfg.long = u32_param(p, "long")?.max(cfg.short);
            cfg.group = u32_param(p, "group")?.max(1);
        }
        Pattern::If => {
            cfg.probability = p.get("probability")?;
            cfg.heavy = u32_param(p, "heavy")?;
        }
    }
    cfg.validate()?;
    Ok(cfg)
}

/// Divergence of `cfg` on `input` with thread i on element `order[i]`: the GPU probe when
/// allowed and available, else host emulation.
fn micro_divergence(req: &RunRequest, cfg: &MicroConfig, input: &micro::MicroInput, order: Option<&[u32]>) -> Result<(Divergence, String)> {
    match (req.prefer_probe, req.gpu.caps.subgroup_size) {
        (true, Some(w)) => {
            let probed = Prepared::new(req.gpu, cfg, input, RunOptions { probe: true, remap: order, ..Default::default() })?;
            probed.dispatch(req.gpu)?;
            let d = probed.divergence(req.gpu)?.ok_or_else(|| Error::gpu("probing", "no probe records"))?;
            Ok((d, format!("GPU probe, subgroup width {w}")))
        }
        _ => {
            let w = req.emulation_width;
            Ok((micro::emulate(cfg, input, order, w)?, format!("host emulation, W = {w}")))
        }
    }
}

fn measure_micro(
    req: &RunRequest,
    cfg: &MicroConfig,
    input: &micro::MicroInput,
    expected: &[u32],
    order: Option<&[u32]>,
    work: f64,
    per_second: f64,
) -> Result<Measurement> {
    req.check_cancel()?;
    let prepared = Prepared::new(req.gpu, cfg, input, RunOptions { probe: false, remap: order, ..Default::default() })?;
    let stats = harness::measure(&req.protocol, || {
        req.check_cancel()?;
        prepared.dispatch(req.gpu)
    })?;
    let check = Check::exact(&prepared.results(req.gpu)?, expected);
    drop(prepared);
    req.check_cancel()?;
    let (divergence, divergence_source) = micro_divergence(req, cfg, input, order)?;
    Ok(Measurement {
        median_s: stats.median,
        min_s: stats.min,
        max_s: stats.max,
        throughput: work / stats.median * per_second,
        divergence,
        divergence_source,
        check_passed: check.passed,
    })
}

fn run_micro(req: &RunRequest, pattern: Pattern) -> Result<PointResult> {
    let cfg = micro_config(req.params, pattern)?;
    let input = micro::generate(&cfg)?;
    let expected = micro::reference(&cfg, &input);
    let (work, scale, unit) = match pattern {
        Pattern::Loop => (input.primary.iter().map(|&t| t as f64).sum::<f64>(), 1e-9, "G iterations/s"),
        Pattern::If => (cfg.n as f64, 1e-6, "M threads/s"),
    };
    let plain = measure_micro(req, &cfg, &input, &expected, None, work, scale)?;
    let remapped = if req.remap && pattern == Pattern::Loop {
        // Zhang's remapping for a loop: threads take elements in order of trip count, so
        // each warp holds similar trips (reference redirection through an index array).
        let mut order: Vec<u32> = (0..cfg.n as u32).collect();
        order.sort_by_key(|&i| input.primary[i as usize]);
        Some(measure_micro(req, &cfg, &input, &expected, Some(&order), work, scale)?)
    } else {
        None
    };
    Ok(PointResult { params: req.params.clone(), throughput_unit: unit, plain, remapped })
}

/// Zhang §1's loop scenario at W = 32: a warp runs as long as its longest lane, so with one
/// long lane per group of 32 the lanes are busy (31·short + long) / (32·long) of the time.
fn zhang_loop_model(p: &ParamValues) -> Option<f64> {
    let (short, long) = (p.get("short").ok()?, p.get("long").ok()?.max(1.0));
    match p.get("distribution").ok()? as usize {
        0 | 3 => Some(1.0),
        1 => {
            let group = p.get("group").ok()?.max(1.0);
            // lanes per 32-wide warp that hold a long trip
            let longs = (32.0 / group).clamp(1.0, 32.0);
            Some((longs * long + (32.0 - longs) * short) / (32.0 * long))
        }
        _ => Some((short + long) / 2.0 / long.max(short)),
    }
}

/// The `if` scenario at W = 32: with random values each lane takes the path with probability
/// p, so a warp holds both paths with probability 1 − p³² − (1 − p)³².
fn zhang_if_model(p: &ParamValues) -> Option<f64> {
    let prob = p.get("probability").ok()?;
    match p.get("distribution").ok()? as usize {
        0 => Some(1.0 - prob.powi(32) - (1.0 - prob).powi(32)),
        _ => Some(0.0),
    }
}

/// Every family the explorer offers.
pub fn families() -> &'static [Family] {
    static FAMILIES: &[Family] = &[
        Family {
            name: "micro loop",
            description: "Zhang's Figure 1(b): a loop whose trip count depends on data; one long lane per group, random or sorted trips.",
            params: MICRO_LOOP_PARAMS,
            sweep: ("long", 16.0, 1024.0, 5),
            shader: "micro/data_loop.wgsl",
            entry_point: "main",
            can_remap: true,
            paper: Some(PaperRef {
                paper: "zhang",
                figure: "Figure 1 (the for loop)",
                caption: "Figure 1 is a code listing from gafort; the paper gives no measurements for it. Its text: \
                          if one of 32 lanes runs nchrome iterations, \"all the 31 threads have to stay idle and wait\".",
                claims: &["warp_size", "max_speedup", "gafort_diverg_ratio_org", "gafort_diverg_ratio_opt"],
                model: Some(("SIMT efficiency at W = 32, from the text's reasoning", zhang_loop_model)),
                ours: Some(("SIMT efficiency, measured", |r| r.plain.divergence.simt_efficiency())),
            }),
            run: |req| run_micro(req, Pattern::Loop),
        },
        Family {
            name: "micro if",
            description: "Zhang's Figure 1(a): a data-dependent if; a fraction p of threads takes an expensive path.",
            params: MICRO_IF_PARAMS,
            sweep: ("probability", 0.0, 1.0, 5),
            shader: "micro/if_branch.wgsl",
            entry_point: "main",
            can_remap: false,
            paper: Some(PaperRef {
                paper: "zhang",
                figure: "Figure 1 (the if statement)",
                caption: "Figure 1 is a code listing from gafort; the paper gives no measurements for it. Its text: \
                          with one odd element in 32, \"at most 1/32 computing power of the SM is being used\".",
                claims: &["warp_size", "max_speedup", "lbm_diverg_ratio_org_low", "lbm_diverg_ratio_org_high"],
                model: Some(("divergence ratio at W = 32 for random values", zhang_if_model)),
                ours: Some(("divergence ratio, measured", |r| r.plain.divergence.divergence_ratio())),
            }),
            run: |req| run_micro(req, Pattern::If),
        },
    ];
    FAMILIES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_has_its_sweep_parameter_and_valid_defaults() {
        for f in families() {
            assert!(f.param(f.sweep.0).is_some(), "{}", f.name);
            let values = ParamValues::defaults(f.params);
            let pattern = if f.name.contains("loop") { Pattern::Loop } else { Pattern::If };
            micro_config(&values, pattern).unwrap();
            assert!(crate::gpu::shader::preprocess(f.shader, &[]).is_ok(), "{}", f.shader);
        }
    }

    #[test]
    fn sweep_values_log_and_choice() {
        let long = MICRO_LOOP_PARAMS[3];
        assert_eq!(long.sweep_values(16.0, 1024.0, 4), vec![16.0, 64.0, 256.0, 1024.0]);
        assert_eq!(MICRO_LOOP_PARAMS[0].sweep_values(0.0, 0.0, 9), vec![0.0, 1.0, 2.0, 3.0]);
        assert_eq!(MICRO_IF_PARAMS[0].sweep_values(0.0, 1.0, 3), vec![0.0, 0.5, 1.0]);
    }

    #[test]
    fn zhang_models_match_the_text() {
        let mut p = ParamValues::defaults(MICRO_LOOP_PARAMS);
        p.set("short", 0.0);
        // one long lane of 32, the others idle: 1/32
        assert!((zhang_loop_model(&p).unwrap() - 1.0 / 32.0).abs() < 1e-12);
        let mut q = ParamValues::defaults(MICRO_IF_PARAMS);
        q.set("probability", 0.0);
        assert_eq!(zhang_if_model(&q), Some(0.0));
    }
}
