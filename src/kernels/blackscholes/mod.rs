//! BlackScholes (Zhang 5.6): European call and put prices, the control case with no divergence.
//! The sign test in the cumulative normal distribution is a select, so remapping by its value
//! (the redirect variant) cannot reduce divergence; it only scatters memory accesses.

pub mod cpu;

use crate::divergence::{self, Divergence};
use crate::error::{Error, Result};
use crate::gpu::shader::registry;
use crate::gpu::PreparedRun;
use crate::gpu::{BufferKind, Gpu, GpuBuffer, Step};
use crate::harness::footprint::{bytes, Footprint};
use crate::harness::{Check, Throughput};
use crate::kernels::redirect::{output_as, BoundKernel, RedirectConfig, RedirectKernel};
use crate::remap::{self, RunOptions};
use serde::{Deserialize, Serialize};

/// Invocations per workgroup of the pricing kernel.
pub const WORKGROUP_SIZE: u32 = 256;
/// Options each thread prices (the kernel loops over them with stride = thread count).
pub const OPTIONS_PER_THREAD: usize = 4;
/// Tolerance of the f32 kernel against the f64 reference: |gpu - cpu| ≤ TOL · max(|cpu|, $1).
pub const TOLERANCE: f64 = 1e-4;
/// Magnitude below which the check compares absolute error (prices are in dollars, so $1).
pub const FLOOR: f64 = 1.0;

/// Size and market parameters of one pricing run (defaults: the CUDA SDK's).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BsConfig {
    /// Options.
    pub n: usize,
    /// Seed of the input generator (same seed, same options).
    pub seed: u64,
    /// Risk-free interest rate per year (0.02 = 2 %).
    pub riskfree: f32,
    /// Volatility per year (> 0; 0.30 = 30 %).
    pub volatility: f32,
}

impl Default for BsConfig {
    fn default() -> Self {
        // The SDK's parameters.
        BsConfig { n: 1 << 22, seed: 1, riskfree: 0.02, volatility: 0.30 }
    }
}

impl RedirectConfig for BsConfig {
    /// Err ([`Error::Invalid`]) when `n` is outside 1..=2^31-1 or the volatility is not positive.
    fn validate(&self) -> Result<()> {
        if self.n == 0 || self.n > u32::MAX as usize / 2 {
            return Err(Error::invalid("n", format!("{} options (use 1..=2^31-1)", self.n)));
        }
        if self.volatility.is_nan() || self.volatility <= 0.0 {
            return Err(Error::invalid("volatility", format!("{} (must be > 0)", self.volatility)));
        }
        Ok(())
    }

    /// What a run allocates: one f32 per option in each buffer on the device; on the host three
    /// inputs, the f64 reference, the prices read back and the redirect classes and index.
    fn footprint(&self) -> Footprint {
        Footprint::new("`n`", format!("blackscholes `n={}`", self.n)).device("price", bytes(self.n, 4)).host(bytes(self.n, 64))
    }

    fn seed(&self) -> u64 {
        self.seed
    }
}

impl BsConfig {
    /// Threads launched: ceil(n / OPTIONS_PER_THREAD).
    pub fn threads(&self) -> usize {
        self.n.div_ceil(OPTIONS_PER_THREAD)
    }
}

/// Stock price in [5, 30], strike in [1, 100], years in [0.25, 10] (the SDK's ranges).
#[derive(Clone, Debug)]
pub struct BsInput {
    /// Stock price per option.
    pub price: Vec<f32>,
    /// Strike price per option.
    pub strike: Vec<f32>,
    /// Time to expiry per option, in years.
    pub years: Vec<f32>,
}

/// BlackScholes pricing in the generic redirect bench: options/s.
#[derive(Debug)]
pub struct BlackScholes;

impl RedirectKernel for BlackScholes {
    type Config = BsConfig;
    type Input = BsInput;
    /// The f64 reference (call, put).
    type Expected = (Vec<f64>, Vec<f64>);
    type Run = Prepared;
    const FAMILY: &'static str = "blackscholes";
    const KERNEL: &'static str = "black_scholes";

    /// Random options from `cfg.seed`.
    fn generate(cfg: &BsConfig) -> Result<BsInput> {
        let mut rng = cfg.rng()?;
        let mut range = |lo: f32, hi: f32| -> Vec<f32> { (0..cfg.n).map(|_| lo + (hi - lo) * rng.next_f32()).collect() };
        let price = range(5.0, 30.0);
        let strike = range(1.0, 100.0);
        let years = range(0.25, 10.0);
        Ok(BsInput { price, strike, years })
    }
    fn reference(cfg: &BsConfig, input: &BsInput) -> Self::Expected {
        cpu::black_scholes(&input.price, &input.strike, &input.years, cfg.riskfree, cfg.volatility)
    }
    /// Options with d1 ≤ 0 first, then d1 > 0 (stable).
    fn redirect(cfg: &BsConfig, input: &BsInput, _: &Self::Expected) -> Result<Vec<u32>> {
        remap::redirect_index_of(&classes(cfg, input), 2)
    }
    fn prepare(gpu: &Gpu, cfg: &BsConfig, input: &BsInput, options: RunOptions) -> Result<Prepared> {
        Prepared::new(gpu, cfg, input, options)
    }
    /// Calls then puts against the f64 reference, one relative check.
    fn check(_: &BsConfig, expected: &Self::Expected, outputs: &[Vec<u8>]) -> Check {
        let g = [output_as::<f32>(outputs, 0), output_as::<f32>(outputs, 1)].concat();
        let c: Vec<f32> = expected.0.iter().chain(&expected.1).map(|&v| v as f32).collect();
        Check::relative(&g, &c, TOLERANCE, FLOOR)
    }
    /// The option loop's trip counts per thread: redirection changes which options a thread
    /// prices, not how many.
    fn emulate(cfg: &BsConfig, _: &BsInput, _: &Self::Expected, _: Option<&[u32]>, width: u32) -> Result<Divergence> {
        let t = cfg.threads();
        let trips: Vec<u32> = (0..t).map(|i| (cfg.n - i).div_ceil(t) as u32).collect();
        divergence::emulate_loops(&trips, width)
    }
    fn throughput(cfg: &BsConfig, median_seconds: f64) -> Throughput {
        Throughput { value: cfg.n as f64 / median_seconds * 1e-6, unit: "M options/s".into() }
    }
}

/// Class of an option for remapping: the outcome of the kernel's only condition, d1 > 0.
pub fn classes(cfg: &BsConfig, input: &BsInput) -> Vec<u32> {
    (0..cfg.n)
        .map(|i| {
            let d =
                cpu::d1(input.price[i] as f64, input.strike[i] as f64, input.years[i] as f64, cfg.riskfree as f64, cfg.volatility as f64);
            (d > 0.0) as u32
        })
        .collect()
}

/// Uploaded inputs and a bound kernel.
#[derive(Debug)]
pub struct Prepared {
    run: BoundKernel,
    call: GpuBuffer<f32>,
    put: GpuBuffer<f32>,
    _keep: Vec<GpuBuffer<f32>>,
    _params: GpuBuffer<registry::blackscholes::black_scholes::Params>,
}

impl Prepared {
    /// Uploads `input` and binds the kernel (with probe buffers when `options` ask); Err when `cfg` is invalid or a buffer exceeds the device's limits.
    pub fn new(gpu: &Gpu, cfg: &BsConfig, input: &BsInput, options: RunOptions) -> Result<Prepared> {
        cfg.validate()?;
        let n = cfg.n;
        if input.price.len() != n || input.strike.len() != n || input.years.len() != n {
            return Err(Error::invalid("blackscholes input", format!("three arrays of n = {n} options")));
        }
        let threads = cfg.threads();
        let price = gpu.buffer("price", &input.price, BufferKind::Storage)?;
        let strike = gpu.buffer("strike", &input.strike, BufferKind::Storage)?;
        let years = gpu.buffer("years", &input.years, BufferKind::Storage)?;
        let call = gpu.buffer_zeroed::<f32>("call", n, BufferKind::Storage)?;
        let put = gpu.buffer_zeroed::<f32>("put", n, BufferKind::Storage)?;
        let params = registry::blackscholes::black_scholes::Params {
            n: n as u32,
            threads: threads as u32,
            riskfree: cfg.riskfree,
            volatility: cfg.volatility,
        };
        let params = gpu.buffer("params", &[params], BufferKind::Uniform)?;
        use registry::blackscholes::black_scholes::binding as slot;
        let slots: [(u32, &dyn crate::gpu::Bind); 6] = [
            (slot::PRICE, &price),
            (slot::STRIKE, &strike),
            (slot::YEARS, &years),
            (slot::CALL, &call),
            (slot::PUT, &put),
            (slot::PARAMS, &params),
        ];
        let run = BoundKernel::new(gpu, registry::blackscholes::black_scholes::MAIN, &options, threads, n, 1, &slots)?;
        Ok(Prepared { run, call, put, _keep: vec![price, strike, years], _params: params })
    }

    /// (call, put) of the last dispatch.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn results(&self, gpu: &Gpu) -> Result<(Vec<f32>, Vec<f32>)> {
        Ok((gpu.read(&self.call)?, gpu.read(&self.put)?))
    }
}

impl PreparedRun for Prepared {
    fn steps(&self) -> Vec<Step<'_>> {
        vec![self.run.step()]
    }
    fn outputs(&self) -> Vec<(&wgpu::Buffer, u64)> {
        vec![(&self.call.buffer, self.call.bytes()), (&self.put.buffer, self.put.bytes())]
    }
    #[cfg(not(target_arch = "wasm32"))]
    fn divergence(&self, gpu: &Gpu) -> Result<Option<Divergence>> {
        self.run.divergence(gpu)
    }
}
