// Black-Scholes prices of European call and put options (NVIDIA SDK BlackScholes), f32.
// Zhang's control case: the only condition, the sign test in the cumulative normal
// distribution, is a select (predicated, as nvcc compiles it), so no warp diverges. The probed
// control flow is the option loop: thread t prices options t, t + T, t + 2T, ... (T threads),
// uniform across lanes when n is a multiple of T.
// CPU reference: kernels::blackscholes::cpu::black_scholes. With REMAP, option slot k is
// option remap_index[k] (reference redirection).
//! variants: PROBE REMAP

#import grid
#import probe
#import remap

const PROBE_SITES: u32 = 1u;
const WG: u32 = 256u;

struct Params {
    n: u32,
    threads: u32,
    riskfree: f32,
    volatility: f32,
}

@group(0) @binding(0) var<storage, read> price: array<f32>;
@group(0) @binding(1) var<storage, read> strike: array<f32>;
@group(0) @binding(2) var<storage, read> years: array<f32>;
@group(0) @binding(3) var<storage, read_write> call: array<f32>;
@group(0) @binding(4) var<storage, read_write> put: array<f32>;
@group(0) @binding(5) var<uniform> params: Params;

// Polynomial approximation of the cumulative normal distribution (Abramowitz-Stegun 26.2.17).
fn cnd(d: f32) -> f32 {
    let k = 1.0 / (1.0 + 0.2316419 * abs(d));
    let poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))));
    let c = 0.39894228040143267794 * exp(-0.5 * d * d) * poly;
    return select(c, 1.0 - c, d > 0.0);
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    probe_begin(ids);
    let t = global_index(ids, WG);
    if (t < params.threads) {
        for (var k = t; probe(0u, k < params.n); k += params.threads) {
            let i = remapped_id(k);
            let s = price[i];
            let x = strike[i];
            let y = years[i];
            let sqrt_t = sqrt(y);
            let d1 = (log(s / x) + (params.riskfree + 0.5 * params.volatility * params.volatility) * y) / (params.volatility * sqrt_t);
            let d2 = d1 - params.volatility * sqrt_t;
            let cnd1 = cnd(d1);
            let cnd2 = cnd(d2);
            let discount = exp(-params.riskfree * y);
            call[i] = s * cnd1 - x * discount * cnd2;
            put[i] = x * discount * (1.0 - cnd2) - s * (1.0 - cnd1);
        }
    }
    probe_end();
}
