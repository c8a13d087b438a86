//! The GPU divergence probe agrees exactly with host emulation at the native subgroup width.

mod common;

use simtlab::gpu::PreparedRun;
use simtlab::kernels::micro::{self, Distribution, MicroConfig, Pattern, Prepared, RunOptions};

fn probe_vs_emulation(cfg: &MicroConfig) {
    let Some((gpu, width)) = common::gpu_with_subgroups() else { return };
    let input = micro::generate(cfg).unwrap();
    let run = Prepared::new(&gpu, cfg, &input, RunOptions { probe: true, ..Default::default() }).unwrap();
    run.dispatch(&gpu).unwrap();
    assert_eq!(run.results(&gpu).unwrap(), micro::reference(cfg, &input), "probing must not change results");
    let measured = run.divergence(&gpu).unwrap().unwrap();
    let emulated = micro::emulate(cfg, &input, None, width).unwrap();
    assert_eq!(measured.sites, emulated.sites, "{cfg:?}");
    assert_eq!(measured.warps, emulated.warps);
    assert_eq!(measured.divergent_warps, emulated.divergent_warps);
    assert_eq!(measured.per_warp_divergent, emulated.per_warp_divergent);
    assert!(measured.warps as usize == cfg.n.div_ceil(width as usize));
}

#[test]
fn loop_probe_matches_emulation_for_every_distribution() {
    for (i, distribution) in
        [Distribution::Uniform, Distribution::OneLong, Distribution::Random, Distribution::Sorted].into_iter().enumerate()
    {
        // sizes not a multiple of the workgroup or the subgroup
        let cfg = MicroConfig { n: 3000 + 37 * i, distribution, short: 1, long: 50, group: 8, seed: i as u64, ..Default::default() };
        probe_vs_emulation(&cfg);
    }
}

#[test]
fn if_probe_matches_emulation() {
    for p in [0.1, 0.5, 0.97] {
        let cfg = MicroConfig {
            pattern: Pattern::If,
            distribution: Distribution::Random,
            n: 5003,
            probability: p,
            heavy: 8,
            ..Default::default()
        };
        probe_vs_emulation(&cfg);
    }
}

/// The registry's heat maps (`Workload::warps_async`, what a browser page awaits) give the same
/// counts as the blocking `Workload::warps`, and both equal host emulation at the adapter's
/// subgroup width.
#[test]
fn registry_heat_maps_are_the_same_async_and_blocking_and_equal_emulation() {
    use simtlab::workload::{self, Counting, Scale};
    let Some((gpu, width)) = common::gpu_with_subgroups() else { return };
    for name in ["micro-loop", "micro-if", "remap-redirect"] {
        let w = workload::find(name).unwrap();
        let params = w.params(Scale::Tiny);
        let blocking = w.warps(&gpu, &params, Counting::Probe(32)).unwrap();
        let awaited = pollster::block_on(w.warps_async(&gpu, &params, Counting::Probe(32))).unwrap();
        let cfg: MicroConfig = serde_json::from_value(params).unwrap();
        let input = micro::generate(&cfg).unwrap();
        assert_eq!(blocking.len(), if cfg.pattern == Pattern::Loop { 2 } else { 1 }, "{name}");
        assert_eq!(awaited.len(), blocking.len(), "{name}");
        for (a, b) in awaited.iter().zip(&blocking) {
            assert_eq!((&a.layout, &a.source), (&b.layout, &b.source), "{name}");
            assert_eq!(a.source, format!("GPU probe, subgroup width {width}"), "{name}");
            assert_eq!(a.divergence, b.divergence, "{name}, {}", a.layout);
        }
        let emulated = micro::emulate(&cfg, &input, None, width).unwrap();
        let d = &awaited[0].divergence;
        assert_eq!((d.warps, d.divergent_warps), (emulated.warps, emulated.divergent_warps), "{name}");
        assert_eq!(d.per_warp_divergent, emulated.per_warp_divergent, "{name}");
        assert!(d.divergent_warps > 0, "{name}: the tiny inputs diverge");
    }
}
