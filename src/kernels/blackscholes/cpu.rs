//! CPU reference of `shaders/blackscholes/black_scholes.wgsl`, in f64 over the same f32 inputs.

use crate::kernels::parallel_ranges;

/// The polynomial cumulative normal distribution the kernel uses (Abramowitz-Stegun 26.2.17).
fn cnd(d: f64) -> f64 {
    let k = 1.0 / (1.0 + 0.2316419 * d.abs());
    let poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))));
    let c = 0.398_942_280_401_432_7 * (-0.5 * d * d).exp() * poly;
    if d > 0.0 {
        1.0 - c
    } else {
        c
    }
}

/// d1 of option i (the value the kernel's only condition tests).
pub fn d1(s: f64, x: f64, t: f64, riskfree: f64, volatility: f64) -> f64 {
    ((s / x).ln() + (riskfree + 0.5 * volatility * volatility) * t) / (volatility * t.sqrt())
}

/// `black_scholes.wgsl`: (call, put) prices of every option.
pub fn black_scholes(price: &[f32], strike: &[f32], years: &[f32], riskfree: f32, volatility: f32) -> (Vec<f64>, Vec<f64>) {
    let (r, v) = (riskfree as f64, volatility as f64);
    let parts = parallel_ranges(price.len(), |range| {
        range
            .map(|i| {
                let (s, x, t) = (price[i] as f64, strike[i] as f64, years[i] as f64);
                let d1 = d1(s, x, t, r, v);
                let d2 = d1 - v * t.sqrt();
                let (c1, c2) = (cnd(d1), cnd(d2));
                let discount = (-r * t).exp();
                (s * c1 - x * discount * c2, x * discount * (1.0 - c2) - s * (1.0 - c1))
            })
            .collect::<Vec<_>>()
    });
    parts.into_iter().flatten().unzip()
}
