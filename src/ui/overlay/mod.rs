//! egui widgets for divergence, occupancy and pipeline timelines (feature `overlay`).
//!
//! The widgets take plain data and hold no GPU handles, so they draw in any egui host:
//!
//! - [`DivergenceOverlay`]: heat map of per-warp divergence ([`HeatMap`], one cell per
//!   subgroup, or per run of warps when there are more warps than cells fit), colour toggle
//!   (divergent evaluations / active-lane fraction), hover for the numbers, per-site table,
//!   and a before/after view when a remapping ran.
//! - [`OccupancyPanel`]: architecture preset, launch inputs (or the kernel's WGSL), the
//!   calculator's answer and its three curves with the current launch marked.
//! - [`Timeline`]: bars per lane from a list of `(lane, label, start_s, end_s)` spans.
//!
//! The heat map bins its warps once per data change and uploads the cells as one texture, so
//! a frame draws one textured rectangle whatever the warp count (see `benches/overlay.rs`).
//!
//! # Adding the overlay to a wgpu app
//!
//! The app owns its `wgpu::Device`/`Queue` and an `egui_wgpu::Renderer` + `egui_winit::State`
//! (see `examples/embed_overlay.rs` for the whole program). Per frame, after the app's own pass:
//!
//! ```ignore
//! // once: simtlab on the app's device, and the widget state
//! let gpu = simtlab::Gpu::from_device(device.clone(), queue.clone(), adapter.get_info())?;
//! let mut overlay: Option<DivergenceOverlay> = None;
//!
//! // whenever a simtlab run finished: plain data in, no GPU handles kept
//! overlay = Some(DivergenceOverlay::new(&divergence, "GPU probe"));
//!
//! // every frame
//! let output = egui_ctx.run_ui(egui_state.take_egui_input(&window), |ui| {
//!     egui::Window::new("simtlab").show(ui.ctx(), |ui| {
//!         if let Some(o) = &mut overlay { o.ui(ui) }
//!     });
//! });
//! let jobs = egui_ctx.tessellate(output.shapes, output.pixels_per_point);
//! for (id, deltas) in output.textures_delta.set.drain() {
//!     for d in deltas { egui_renderer.update_texture(&device, &queue, id, &d) }
//! }
//! egui_renderer.update_buffers(&device, &queue, &mut encoder, &jobs, &screen);
//! // ... begin a render pass on the frame (LoadOp::Load), then:
//! egui_renderer.render(&mut pass.forget_lifetime(), &jobs, &screen);
//! ```

mod divergence;
mod heatmap;
mod occupancy;
mod timeline;

pub use divergence::{DivergenceOverlay, DivergenceRun};
pub use heatmap::{cell_color, color_bar, Bins, ColorBy, GridLayout, HeatMap};
pub use occupancy::OccupancyPanel;
pub use timeline::{Span, Timeline};

use egui::Color32;

/// One palette for every series the UI draws: plots, timeline bars.
const PALETTE: [Color32; 8] = [
    Color32::from_rgb(240, 140, 50),
    Color32::from_rgb(80, 190, 110),
    Color32::from_rgb(120, 150, 240),
    Color32::from_rgb(220, 90, 160),
    Color32::from_rgb(200, 200, 80),
    Color32::from_rgb(90, 200, 220),
    Color32::from_rgb(170, 120, 230),
    Color32::from_rgb(160, 160, 160),
];

/// The colour of the `i`-th series.
pub fn series_color(i: usize) -> Color32 {
    PALETTE[i % PALETTE.len()]
}
