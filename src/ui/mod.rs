//! User interfaces on top of the library.
//!
//! - [`overlay`] (feature `overlay`): egui widgets that take plain data (a
//!   [`crate::divergence::Divergence`], an occupancy launch, a list of timeline spans) and
//!   hold no GPU handles, so they draw in any egui host: the explorer, the `embed_overlay`
//!   example, or another wgpu application.
//! - [`explorer`] (feature `gui`): the desktop explorer behind `simtlab gui` (eframe, wgpu
//!   renderer); runs kernels on a background thread on a `Gpu` of its own.
//! - `web` (feature `gui`, wasm32): the same explorer in a browser page (`web/build.sh`).

pub mod overlay;

#[cfg(feature = "gui")]
pub mod explorer;

#[cfg(all(feature = "gui", target_arch = "wasm32"))]
pub mod web;
