//! Cost of drawing the divergence overlay at 2^20 warps, as an egui frame on the CPU (the
//! app's own GPU pass is not included): the heat map alone and the whole overlay (toggle,
//! summary, heat map, legend, per-site table), each as `Context::run_ui` plus tessellation,
//! with the bins and texture cached (every frame after a data change), and the first frame
//! after a data change (binning 2^20 warps and building the texture).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use egui::{pos2, vec2, Context, RawInput, Rect};
use simtlab::divergence::{Divergence, SiteCounters};
use simtlab::ui::overlay::{ColorBy, DivergenceOverlay, HeatMap};

const WARPS: usize = 1 << 20;

fn divergence() -> Divergence {
    let mut x = 0x9E37_79B9u32;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    let per_warp_divergent: Vec<u32> = (0..WARPS).map(|_| next() % 5).collect();
    let per_warp_efficiency: Vec<f32> = (0..WARPS).map(|_| (next() % 33) as f32 / 32.0).collect();
    let divergent_warps = per_warp_divergent.iter().filter(|&&d| d > 0).count() as u64;
    Divergence {
        width: 32,
        sites: vec![SiteCounters {
            evaluations: 4 * WARPS as u64,
            divergent: 2 * WARPS as u64,
            taken_steps: 3 * WARPS as u64,
            taken_lanes: 50 * WARPS as u64,
        }],
        per_warp_divergent,
        per_warp_efficiency,
        divergent_warps,
        warps: WARPS as u64,
    }
}

fn input() -> RawInput {
    RawInput { screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), vec2(1280.0, 800.0))), ..Default::default() }
}

/// One frame: the ui pass and its tessellation, deltas dropped as a renderer would consume them.
fn frame(ctx: &Context, mut ui: impl FnMut(&mut egui::Ui)) -> usize {
    let mut out = ctx.run_ui(input(), |root| ui(root));
    let jobs = ctx.tessellate(std::mem::take(&mut out.shapes), out.pixels_per_point);
    out.textures_delta.clear();
    jobs.len()
}

fn overlay(c: &mut Criterion) {
    let d = divergence();
    let ctx = Context::default();

    let mut map = HeatMap::new(&d);
    frame(&ctx, |ui| {
        map.ui(ui, ColorBy::DivergentEvaluations);
    });
    c.bench_function("overlay/heat_map_frame/2^20_warps", |b| {
        b.iter(|| {
            black_box(frame(&ctx, |ui| {
                map.ui(ui, ColorBy::DivergentEvaluations);
            }))
        })
    });

    let mut full = DivergenceOverlay::new(&d, "bench");
    frame(&ctx, |ui| full.ui(ui));
    c.bench_function("overlay/full_overlay_frame/2^20_warps", |b| b.iter(|| black_box(frame(&ctx, |ui| full.ui(ui)))));

    let mut before_after = DivergenceOverlay::new(&d, "before").with_after(&d, "after");
    frame(&ctx, |ui| before_after.ui(ui));
    c.bench_function("overlay/before_after_frame/2^20_warps", |b| b.iter(|| black_box(frame(&ctx, |ui| before_after.ui(ui)))));

    // a data change: copy the per-warp values, bin them, build and upload the texture
    c.bench_function("overlay/first_frame_after_data_change/2^20_warps", |b| {
        b.iter(|| {
            let mut fresh = HeatMap::new(&d);
            black_box(frame(&ctx, |ui| {
                fresh.ui(ui, ColorBy::DivergentEvaluations);
            }))
        })
    });

    // its parts: copying the per-warp vectors, and binning them for the on-screen cell count
    c.bench_function("overlay/data_change_copy/2^20_warps", |b| b.iter(|| black_box(HeatMap::new(&d))));
    let cells_per_bin = map.layout(vec2(1264.0, 140.0)).warps_per_cell;
    c.bench_function("overlay/data_change_bin/2^20_warps", |b| {
        b.iter(|| black_box(simtlab::ui::overlay::Bins::new(&d.per_warp_divergent, &d.per_warp_efficiency, cells_per_bin)))
    });

    // an empty frame, for the egui baseline the overlay adds to
    c.bench_function("overlay/empty_frame", |b| b.iter(|| black_box(frame(&ctx, |_ui| {}))));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = overlay
}
criterion_main!(benches);
