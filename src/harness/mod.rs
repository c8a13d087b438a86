//! The benchmark protocol: warm-up, N samples, summary statistics, a CPU-reference check on
//! every record, and schema-versioned records (JSON, CSV) that say where they were measured.

pub mod footprint;
pub mod named;
mod output;
pub mod progress;

pub use footprint::Footprint;
pub(crate) use named::named;
pub use named::Named;
pub use output::{
    format_number, format_seconds, format_significant, parse_records, read_json, records_csv, records_json, replace_file, table, try_lock,
    write_csv, write_file, write_json,
};
pub use progress::Progress;

use crate::divergence::DivergenceSummary;
use crate::error::{Error, Result};
use crate::gpu::{Gpu, Timing, TimingSource};
use serde::{Deserialize, Serialize};

/// Version of the [`Record`] layout; bump when fields change meaning.
pub const SCHEMA_VERSION: u32 = 1;

/// How a configuration is timed: untimed warm-up runs, then timed samples.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Protocol {
    /// Runs before timing starts (pipelines compiled, caches and clocks warm).
    pub warmup: usize,
    /// Timed runs (at least 1); the record keeps each one.
    pub samples: usize,
}

impl Default for Protocol {
    fn default() -> Self {
        Protocol { warmup: 2, samples: 10 }
    }
}

/// Problem sizes: `Tiny` for the test suite, `Quick` for a CPU adapter (minutes), `Full` for
/// the papers' sizes on a real GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// Smallest sizes, seconds on lavapipe: for tests.
    Tiny,
    /// Minutes on a CPU adapter.
    Quick,
    /// The papers' sizes, for a real GPU.
    Full,
}

impl Scale {
    /// Picks by scale.
    pub fn pick<T>(self, tiny: T, quick: T, full: T) -> T {
        match self {
            Scale::Tiny => tiny,
            Scale::Quick => quick,
            Scale::Full => full,
        }
    }

    /// Timing protocol for the scale.
    pub fn protocol(self) -> Protocol {
        let (warmup, samples) = self.pick((0, 1), (1, 3), (2, 10));
        Protocol { warmup, samples }
    }
}

/// Summary of the timed samples, in seconds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Stats {
    /// Fastest sample.
    pub min: f64,
    /// Median sample: the figure throughputs and speedups use.
    pub median: f64,
    /// Slowest sample.
    pub max: f64,
    /// Mean of the samples.
    pub mean: f64,
    /// Population standard deviation of the samples.
    pub stddev: f64,
    /// Device timestamps or host wall clock.
    pub source: TimingSource,
    /// Every sample, in the order measured.
    pub samples: Vec<f64>,
}

impl Stats {
    /// The summary of `samples` (seconds); an error when there are none.
    pub fn from_samples(samples: Vec<f64>, source: TimingSource) -> Result<Stats> {
        if samples.is_empty() {
            return Err(Error::invalid("samples", "at least one timed sample is needed"));
        }
        let mut sorted = samples.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 { sorted[n / 2] } else { 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]) };
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let var = sorted.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n.max(2) - 1) as f64;
        Ok(Stats { min: sorted[0], median, max: sorted[n - 1], mean, stddev: var.sqrt(), source, samples })
    }
}

/// Least wall time a warm-up lasts (when the protocol asks for one). An idle GPU runs at a
/// fraction of its clock (an H100 idles at 345 MHz and boosts to 1980 MHz) and needs a stretch
/// of load to ramp up; two short dispatches would time the ramp, not the kernel.
pub const MIN_WARMUP_S: f64 = 0.25;
/// Bound on warm-up runs, for kernels far shorter than [`MIN_WARMUP_S`].
const MAX_WARMUP_RUNS: usize = 100_000;

/// Runs `once` untimed at least `warmup` times and, if `warmup` > 0, for at least
/// [`MIN_WARMUP_S`]; then `samples` times, and summarises.
pub fn measure(protocol: &Protocol, mut once: impl FnMut() -> Result<Timing>) -> Result<Stats> {
    if protocol.samples == 0 {
        return Err(Error::invalid("samples", "0: at least one timed sample is needed"));
    }
    let start = web_time::Instant::now();
    let mut runs = 0;
    while runs < protocol.warmup || (protocol.warmup > 0 && runs < MAX_WARMUP_RUNS && start.elapsed().as_secs_f64() < MIN_WARMUP_S) {
        once()?;
        runs += 1;
    }
    let mut samples = Vec::with_capacity(protocol.samples);
    let mut source = TimingSource::DeviceTimestamps;
    for _ in 0..protocol.samples {
        let t = once()?;
        if t.source == TimingSource::WallClock {
            source = TimingSource::WallClock;
        }
        samples.push(t.seconds);
    }
    Stats::from_samples(samples, source)
}

/// The comparison of a GPU result with its CPU reference.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Check {
    /// Whether every compared element is within tolerance.
    pub passed: bool,
    /// Elements compared.
    pub checked: u64,
    /// Elements outside tolerance (integers: not equal).
    pub mismatches: u64,
    /// Largest relative error (0 for exact integer comparisons).
    pub max_rel_error: f64,
    /// Tolerance used for floats (0 = exact).
    pub tolerance: f64,
    /// First mismatch, for the error message.
    pub first_mismatch: Option<String>,
}

impl Check {
    /// Exact comparison (integers).
    pub fn exact<T: PartialEq + std::fmt::Debug>(gpu: &[T], cpu: &[T]) -> Check {
        let mut mismatches = (gpu.len() != cpu.len()) as u64;
        let mut first = (gpu.len() != cpu.len()).then(|| format!("length {} vs {}", gpu.len(), cpu.len()));
        for (i, (g, c)) in gpu.iter().zip(cpu).enumerate() {
            if g != c {
                mismatches += 1;
                first.get_or_insert_with(|| format!("[{i}]: gpu {g:?}, cpu {c:?}"));
            }
        }
        Check { passed: mismatches == 0, checked: cpu.len() as u64, mismatches, max_rel_error: 0.0, tolerance: 0.0, first_mismatch: first }
    }

    /// Relative-error comparison of floats: |g - c| <= tol * max(|c|, floor).
    pub fn relative(gpu: &[f32], cpu: &[f32], tolerance: f64, floor: f64) -> Check {
        let mut mismatches = (gpu.len() != cpu.len()) as u64;
        let mut first = (gpu.len() != cpu.len()).then(|| format!("length {} vs {}", gpu.len(), cpu.len()));
        let mut max_rel: f64 = 0.0;
        for (i, (&g, &c)) in gpu.iter().zip(cpu).enumerate() {
            let rel = (g as f64 - c as f64).abs() / (c as f64).abs().max(floor);
            let rel = if rel.is_nan() { f64::INFINITY } else { rel };
            max_rel = max_rel.max(rel);
            if rel > tolerance {
                mismatches += 1;
                first.get_or_insert_with(|| format!("[{i}]: gpu {g}, cpu {c}, relative error {rel:.3e}"));
            }
        }
        Check { passed: mismatches == 0, checked: cpu.len() as u64, mismatches, max_rel_error: max_rel, tolerance, first_mismatch: first }
    }

    /// Turns a failed check into [`Error::CheckFailed`] (for tests and strict runs): one
    /// configuration, `what`, with its mismatches.
    pub fn into_result(self, what: &str) -> Result<Check> {
        if self.passed {
            Ok(self)
        } else {
            Err(Error::CheckFailed {
                failed: 1,
                total: 1,
                first: format!(
                    "{what}: {} of {} elements differ, first {}",
                    self.mismatches,
                    self.checked,
                    self.first_mismatch.as_deref().unwrap_or("?")
                ),
            })
        }
    }
}

/// Where a record was measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Environment {
    /// The adapter's name.
    pub adapter: String,
    /// wgpu backend (`Vulkan`, `Gl`, …).
    pub backend: String,
    /// Discrete, integrated, virtual or CPU.
    pub device_type: String,
    /// Driver name and version as the adapter reports them.
    pub driver: String,
    /// Measured native subgroup width (None without subgroups).
    pub subgroup_size: Option<u32>,
    /// The commit simtlab was built from (`unknown` outside a git checkout).
    pub git_hash: String,
    /// Seconds since the Unix epoch.
    pub unix_time: u64,
    /// Timed runs shorter than this were repeated back to back and averaged (0: never).
    #[serde(default)]
    pub min_timed_s: f64,
}

impl Environment {
    /// The environment of `gpu`, now.
    pub fn of(gpu: &Gpu) -> Self {
        Environment {
            adapter: crate::gpu::adapter_label(gpu.info()),
            backend: format!("{:?}", gpu.info().backend),
            device_type: format!("{:?}", gpu.info().device_type),
            driver: format!("{} {}", gpu.info().driver, gpu.info().driver_info).trim().to_string(),
            subgroup_size: gpu.caps().subgroup_size,
            git_hash: env!("SIMTLAB_GIT_HASH").to_string(),
            unix_time: web_time::SystemTime::now().duration_since(web_time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
            min_timed_s: gpu.min_timed_seconds(),
        }
    }
}

/// A throughput figure derived from the median time.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Throughput {
    /// Work per second in `unit`.
    pub value: f64,
    /// E.g. `MLUPS`, `M options/s`, `GFLOP/s`.
    pub unit: String,
}

/// One measured configuration: what ran, on what, how fast, and whether it was right.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Record {
    /// [`SCHEMA_VERSION`] when written.
    pub schema: u32,
    /// Family and kernel, e.g. `micro` / `data_loop`.
    pub family: String,
    /// The kernel within the family.
    pub kernel: String,
    /// Variant label, e.g. the distribution or strategy.
    pub variant: String,
    /// The typed configuration, serialised.
    pub params: serde_json::Value,
    /// Seed of the generated inputs.
    pub seed: u64,
    /// Where it was measured.
    pub environment: Environment,
    /// The timed samples.
    pub stats: Stats,
    /// The comparison with the CPU reference.
    pub check: Check,
    /// Divergence metrics (GPU probe or host emulation; `extra` says which), if measured.
    pub divergence: Option<DivergenceSummary>,
    /// Work per second from the median time.
    pub throughput: Option<Throughput>,
    /// Family-specific figures (elements moved, remap cost, ...).
    #[serde(default)]
    pub extra: serde_json::Value,
}

impl Record {
    /// The record of `family`/`kernel`/`variant` measured on `gpu` with its timing and its
    /// check against the CPU reference; the `with_*` methods add the rest.
    pub fn new(gpu: &Gpu, family: &str, kernel: &str, variant: impl Into<String>, stats: Stats, check: Check) -> Record {
        Record {
            schema: SCHEMA_VERSION,
            family: family.into(),
            kernel: kernel.into(),
            variant: variant.into(),
            params: serde_json::Value::Null,
            seed: 0,
            environment: Environment::of(gpu),
            stats,
            check,
            divergence: None,
            throughput: None,
            extra: serde_json::Value::Null,
        }
    }

    /// The typed configuration it ran with, and the seed of its inputs.
    pub fn with_config(mut self, config: &impl Serialize, seed: u64) -> Record {
        self.params = serde_json::to_value(config).unwrap_or_default();
        self.seed = seed;
        self
    }

    /// Its divergence metrics.
    pub fn with_divergence(mut self, divergence: Option<DivergenceSummary>) -> Record {
        self.divergence = divergence;
        self
    }

    /// `work` units per median second, scaled by `scale` (1e-6 for millions) into `unit`.
    pub fn with_throughput(mut self, work: f64, scale: f64, unit: &str) -> Record {
        self.throughput = Some(Throughput { value: work / self.stats.median * scale, unit: unit.into() });
        self
    }

    /// Adds the fields of `extra` (any struct or map that serialises to an object) to `extra`.
    pub fn with_extra(mut self, extra: impl Serialize) -> Record {
        self.add_extra(extra);
        self
    }

    /// [`Record::with_extra`] on a record in place: fields of `extra` replace those of the
    /// same name.
    pub fn add_extra(&mut self, extra: impl Serialize) {
        if let serde_json::Value::Object(more) = serde_json::to_value(extra).unwrap_or_default() {
            match &mut self.extra {
                serde_json::Value::Object(map) => map.extend(more),
                other => *other = serde_json::Value::Object(more),
            }
        }
    }

    /// The whole `extra` object read back as the typed struct its writer serialised with
    /// [`Record::with_extra`] (`None` when it does not fit `T`; fields of `T` that are
    /// `Option`s may be absent, other keys are ignored). Reading through the writer's own type
    /// makes a renamed field a compile error instead of a silently missing value.
    pub fn extra_as<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        T::deserialize(&self.extra).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counting(calls: &mut usize) -> impl FnMut() -> Result<Timing> + '_ {
        move || {
            *calls += 1;
            std::thread::sleep(std::time::Duration::from_millis(1));
            Ok(Timing { seconds: *calls as f64, source: TimingSource::WallClock, wall_seconds: 0.001 })
        }
    }

    #[test]
    fn warm_up_lasts_at_least_its_minimum_and_is_not_sampled() {
        let mut calls = 0;
        let t0 = web_time::Instant::now();
        let stats = measure(&Protocol { warmup: 1, samples: 3 }, counting(&mut calls)).unwrap();
        assert!(t0.elapsed().as_secs_f64() >= MIN_WARMUP_S);
        // 1 ms runs: well over 3 + 1 calls, and the samples are the last three
        assert!(calls > 20, "{calls} calls");
        assert_eq!(stats.samples, vec![(calls - 2) as f64, (calls - 1) as f64, calls as f64]);
    }

    #[test]
    fn a_failed_check_is_a_check_failure_naming_what_and_its_first_mismatch() {
        let check = Check::exact(&[1u32, 2, 7], &[1u32, 2, 3]);
        let e = check.clone().into_result("scan").unwrap_err();
        assert!(
            matches!(&e, Error::CheckFailed { failed: 1, total: 1, first } if first.starts_with("scan: 1 of 3 elements differ")),
            "{e}"
        );
        assert!(e.to_string().contains(check.first_mismatch.as_deref().unwrap()), "{e}");
        assert!(Check::exact(&[4u32], &[4u32]).into_result("scan").is_ok());
    }

    #[test]
    fn no_warm_up_means_samples_only() {
        let mut calls = 0;
        let stats = measure(&Protocol { warmup: 0, samples: 2 }, counting(&mut calls)).unwrap();
        assert_eq!(calls, 2);
        assert_eq!(stats.samples, vec![1.0, 2.0]);
    }
}
