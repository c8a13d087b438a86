//! The browser's WebGPU, where wgpu's WebGPU backend falls short of what simtlab uses.
//!
//! wgpu 30 never asks the browser for the `subgroups` feature and does not report it, so
//! [`request_subgroups`] wraps `GPUAdapter.prototype.requestDevice` to add it whenever the
//! adapter has it, and [`has_subgroups`] reads it back from the device. Chrome then wants
//! `enable subgroups;` at the top of a shader that uses them ([`SUBGROUPS_DIRECTIVE`]); naga
//! rejects that directive, so it is added for the browser only.

use wasm_bindgen::prelude::wasm_bindgen;

/// The WGSL directives a browser needs before subgroup built-ins. The divergence probe takes
/// ballots in divergent control flow on purpose (that is what it measures), so the browser's
/// `subgroup_uniformity` check, an error by default in Chrome, is turned off.
pub(crate) const SUBGROUPS_DIRECTIVE: &str = "enable subgroups;\ndiagnostic(off, subgroup_uniformity);\n";

#[wasm_bindgen(inline_js = r#"
export function request_subgroups() {
    const proto = globalThis.GPUAdapter && globalThis.GPUAdapter.prototype;
    if (!proto || proto.__simtlab_requests_subgroups) {
        return;
    }
    const request = proto.requestDevice;
    proto.requestDevice = function (descriptor) {
        const desc = Object.assign({}, descriptor || {});
        if (this.features.has("subgroups")) {
            const features = Array.from(desc.requiredFeatures || []);
            if (!features.includes("subgroups")) {
                features.push("subgroups");
            }
            desc.requiredFeatures = features;
        }
        return request.call(this, desc);
    };
    proto.__simtlab_requests_subgroups = true;
}
"#)]
extern "C" {
    /// Makes every later `requestDevice` ask for `subgroups` where the adapter offers them
    /// (once per page; a no-op without WebGPU).
    pub(crate) fn request_subgroups();
}

/// Whether `device` (on the WebGPU backend) was opened with the `subgroups` feature.
pub(crate) fn has_subgroups(device: &wgpu::Device) -> bool {
    device.as_webgpu().is_some_and(|d| d.features().has("subgroups"))
}
