//! `simtlab bench FAMILY`: one file per family with its arguments, its sweep and its headline.

pub mod carrillo;
mod flowshop;
mod matmul;
pub mod micro;
pub mod pt;
pub mod remap;
pub mod zhang;

use clap::Subcommand;
use simtlab::{Gpu, Result};

#[allow(clippy::large_enum_variant, reason = "parsed once per process: the size of the largest variant does not matter")]
#[derive(Subcommand)]
pub enum BenchFamily {
    /// Zhang's Figure 1 patterns: a data-dependent if and a data-dependent loop.
    Micro(micro::MicroArgs),
    /// Zhang et al. ICS'10 section 5: 3D-LBM, GAFORT, MarchingCubes, Reduction, BlackScholes,
    /// original vs reference redirection.
    Zhang(zhang::ZhangCli),
    /// Thread-data remapping of the divergent loop: none, redirect, LAM, GPU regroup or auto,
    /// with the remap cost beside the kernel time; `--pipeline` hides host remaps behind chunks.
    Remap(remap::RemapArgs),
    /// Persistent threads (Gupta et al.): use cases sync, forest, prodcons, gsync and the
    /// barrier / queue microbenchmarks, over tiers 0 (multi-dispatch), 1 (non-blocking PT) and
    /// 2 (blocking PT, after a capability probe).
    Pt(pt::PtBenchArgs),
    /// Carrillo's branch splitting (branched vs split kernels over a decision-mask sweep) and
    /// loop splitting.
    Carrillo(carrillo::CarrilloCli),
    /// Ryoo's matrix-multiplication ladder (naive, tiled, unrolled, prefetch) and a
    /// register-tiled kernel: GFLOPS, threads and workgroup memory per thread.
    Matmul(matmul::MatmulCli),
    /// Chakroun's flow-shop B&B bounding: DFS vs BFS pools (Table 1), refactored vs basic
    /// kernel over one CPU core (Table 2), bounds/s on GPU vs CPU.
    Flowshop(flowshop::BenchArgs),
}

pub fn run(gpu: &Gpu, family: &BenchFamily) -> Result<()> {
    match family {
        BenchFamily::Micro(a) => micro::run(gpu, a),
        BenchFamily::Remap(a) => remap::run(gpu, a),
        BenchFamily::Zhang(a) => zhang::run(gpu, a),
        BenchFamily::Pt(a) => pt::run(gpu, a),
        BenchFamily::Carrillo(a) => carrillo::run(gpu, a),
        BenchFamily::Matmul(a) => matmul::run(gpu, a),
        BenchFamily::Flowshop(a) => flowshop::run(gpu, a),
    }
}

/// Every `reproduce` point of `paper` whose parameters hold a typed configuration: the options
/// its key names (the key without its " [Scale]") and that configuration. Tests check that
/// parsing the options gives the configuration.
#[cfg(test)]
pub fn keyed_configs<C: serde::de::DeserializeOwned>(paper: &str) -> Vec<(String, C)> {
    use simtlab::experiments::{select, Scale};
    let mut out = Vec::new();
    for e in select(paper).unwrap() {
        for p in [Scale::Tiny, Scale::Quick, Scale::Full].into_iter().flat_map(|s| e.points(s)) {
            let Some(config) = p.params.get("config") else { continue };
            let (words, _) = p.key.rsplit_once(" [").unwrap_or_else(|| panic!("{}: no scale in the key", p.key));
            let config = serde_json::from_value(config.clone()).unwrap_or_else(|e| panic!("{}: {e}", p.key));
            out.push((words.to_string(), config));
        }
    }
    assert!(!out.is_empty(), "{paper} has no typed points");
    out
}
