//! The explorer in a browser page (wasm32, feature `gui`): `web/index.html` creates a
//! [`WebExplorer`] and starts it on a `<canvas>`. It is the desktop explorer, drawn by eframe's
//! web runner, with runs on the page's WebGPU adapter through the async core (see the explorer's
//! `browser` module for what runs there and what says why it does not).
//!
//! The page's state is published on the canvas as `data-simtlab-state` (JSON: status, error,
//! adapters, whether a run is going, the finished run's records with their CPU checks, and
//! each point's heat maps: layout, where the counts come from, warps and divergent warps), so
//! that a test driving the browser reads what the window shows.
//!
//! The keys work as on the desktop: the page keeps Ctrl+R and F5 from reloading it (which would
//! lose the run) and the explorer runs instead; Ctrl+S saves the run as a download.

use serde_json::json;
use wasm_bindgen::prelude::*;
use web_sys::HtmlCanvasElement;

use crate::gpu::{self, GpuOptions};
use crate::ui::explorer::{Explorer, View};
use crate::workload::Scale;

/// The shader `remap=STRATEGY` opens: an iteration with a data-dependent tolerance test, whose
/// invocations run from one to about thirty steps.
pub const REMAP_EXAMPLE: (&str, &str) = ("newton_tolerance.wgsl", include_str!("../../tests/fixtures/remap/newton_tolerance.wgsl"));

/// Its bindings (2048 invocations; `work` = 0: the iteration alone).
const REMAP_BINDINGS: [(&str, &str); 3] = [("values", "f32:2048:random:13"), ("roots", "f32:2048:zero"), ("work", "u32:1:zero")];

/// The attribute of the canvas that holds the page's state.
const STATE_ATTRIBUTE: &str = "data-simtlab-state";

/// The explorer in a page, held by the page's script.
#[wasm_bindgen]
pub struct WebExplorer {
    runner: eframe::WebRunner,
}

impl std::fmt::Debug for WebExplorer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebExplorer").finish_non_exhaustive()
    }
}

#[wasm_bindgen]
impl WebExplorer {
    /// Installs eframe's panic handler (a panic is reported through
    /// [`WebExplorer::panic_message`]), then returns.
    #[wasm_bindgen(constructor)]
    #[allow(clippy::new_without_default, reason = "the page constructs it through wasm-bindgen, never by default")]
    pub fn new() -> WebExplorer {
        WebExplorer { runner: eframe::WebRunner::new() }
    }

    /// Starts the explorer on `canvas`, on the page's WebGPU adapters. `query` is the page's
    /// query string: `workload=NAME` opens on that workload, `scale=tiny|quick|paper` sets the
    /// parameters' scale, `view=shader|flowshop` opens that tab, and `run` starts a run as the
    /// explorer opens; `remap=STRATEGY` opens the "Your shader" tab on the tolerance iteration
    /// of the remap tests ([`REMAP_EXAMPLE`]) and remaps it with that strategy (auto, redirect,
    /// gpu, none). An unknown workload opens the page on the first workload with the message
    /// shown (and runs nothing); an unknown scale or strategy rejects with the message; a page
    /// without WebGPU opens with the error shown.
    pub async fn start(&self, canvas: HtmlCanvasElement, query: String) -> Result<(), JsValue> {
        let options = GpuOptions::default();
        let mut remap_on_start = false;
        let mut explorer = Explorer::with_adapters(&options, gpu::adapters_async(&options).await);
        let mut unknown = None;
        for (key, value) in query.trim_start_matches('?').split('&').filter(|p| !p.is_empty()).map(|p| p.split_once('=').unwrap_or((p, "")))
        {
            match key {
                // an unknown workload is said in the page, which opens on the first one
                "workload" => {
                    if let Err(e) = explorer.select_by_name(value) {
                        unknown = Some(format!("the page's address asks for {e}"));
                    }
                }
                "scale" => explorer.set_scale(match value {
                    "tiny" => Scale::Tiny,
                    "quick" => Scale::Quick,
                    "paper" => Scale::Full,
                    _ => return Err(JsValue::from_str(&format!("scale '{value}': use tiny, quick or paper"))),
                }),
                "run" => explorer.run_on_start = true,
                "remap" => {
                    explorer.shader.remap.strategy = value.parse().map_err(|e: crate::Error| JsValue::from_str(&e.to_string()))?;
                    explorer.view = View::Shader;
                    explorer.shader.load_source(REMAP_EXAMPLE.0, REMAP_EXAMPLE.1);
                    explorer.shader.workgroups = [32, 1, 1];
                    explorer.shader.samples = 1;
                    for (key, spec) in REMAP_BINDINGS {
                        explorer.shader.set_binding(key, spec).map_err(|e| JsValue::from_str(&e.to_string()))?;
                    }
                    remap_on_start = true;
                }
                "view" => match value {
                    "shader" => explorer.view = View::Shader,
                    "flowshop" => explorer.view = View::FlowShop,
                    _ => explorer.view = View::Workloads,
                },
                _ => {}
            }
        }
        if let Some(message) = unknown {
            explorer.show_error(message);
        }
        keep_run_keys()?;
        let app = PageApp { explorer, canvas: canvas.clone(), shown: None, remap_on_start };
        self.runner.start(canvas, eframe::WebOptions::default(), Box::new(move |_| Ok(Box::new(app)))).await
    }

    /// Whether the explorer panicked (a bug in simtlab); the page then shows the message.
    pub fn has_panicked(&self) -> bool {
        self.runner.has_panicked()
    }

    /// The panic's message, if the explorer panicked.
    pub fn panic_message(&self) -> Option<String> {
        self.runner.panic_summary().map(|s| s.message())
    }
}

/// Keeps Ctrl+R and F5 from reloading the page: the explorer runs on them, as on the desktop
/// (eframe already keeps Ctrl+S from the browser's own "save page").
fn keep_run_keys() -> Result<(), JsValue> {
    let document = web_sys::window().and_then(|w| w.document()).ok_or("the page has no document")?;
    let on_key = Closure::<dyn FnMut(web_sys::KeyboardEvent)>::new(|event: web_sys::KeyboardEvent| {
        let command = (event.ctrl_key() || event.meta_key()) && !event.shift_key() && !event.alt_key();
        if event.key() == "F5" || (command && event.key().eq_ignore_ascii_case("r")) {
            event.prevent_default();
        }
    });
    document.add_event_listener_with_callback("keydown", on_key.as_ref().unchecked_ref())?;
    // one listener for the page's lifetime
    on_key.forget();
    Ok(())
}

/// The explorer and the canvas its state is published on.
/// The page's state as last published: status, error, whether running, points, the remap's
/// status, the view, the shader tab's text and its error.
type Shown = (String, Option<String>, bool, usize, String, View, String, Option<String>);

struct PageApp {
    explorer: Explorer,
    canvas: HtmlCanvasElement,
    /// What the state attribute shows: status, error, whether running, points, the remap's
    /// status, and the view with the shader tab's text and error.
    shown: Option<Shown>,
    /// Start the remap of the "Your shader" tab on the first frame (`remap=STRATEGY`).
    remap_on_start: bool,
}

impl PageApp {
    /// Writes the state attribute when what it shows changed (after the first frame, after
    /// every status change and every finished point).
    fn publish(&mut self) {
        let e = &self.explorer;
        let now = (
            e.status().to_string(),
            e.error().map(String::from),
            e.is_running(),
            e.run().points.len(),
            e.shader.remap.status().to_string(),
            e.view,
            e.shader.source().to_string(),
            e.shader.error().map(String::from),
        );
        if self.shown.as_ref() == Some(&now) {
            return;
        }
        let state = json!({
            "status": now.0,
            "error": now.1,
            "running": now.2,
            "adapters": e.adapter_labels(),
            "view": match e.view {
                View::Workloads => "workloads",
                View::FlowShop => "flowshop",
                View::Shader => "shader",
            },
            "shader": {
                "source": now.6,
                "error": now.7,
                "entries": e.shader.entries(),
                "bindings": e.shader.bindings().iter().map(|b| b.info.name.as_str()).collect::<Vec<_>>(),
            },
            "workload": e.run().workload,
            "selected": e.workload().name(),
            "occupancy_kernel": e.occupancy_kernel(),
            "records": e.run().to_records(),
            "heat_maps": e.run().points.iter().map(|p| p.warps.iter().map(|m| json!({
                "layout": m.layout,
                "source": m.source,
                "width": m.divergence.width,
                "warps": m.divergence.warps,
                "divergent_warps": m.divergence.divergent_warps,
            })).collect::<Vec<_>>()).collect::<Vec<_>>(),
            "remap": {
                "status": now.4,
                "running": e.shader.remap.is_running(),
                "error": e.shader.remap.error(),
                "run": e.shader.remap.result(),
                "index": e.shader.remap.result().map(|r| &r.index),
                "class_ids": e.shader.remap.result().map(|r| &r.class_ids),
            },
        });
        // the attribute is for tests and scripts; the window shows the same, so a failure to
        // set it changes nothing the user sees
        let _ = self.canvas.set_attribute(STATE_ATTRIBUTE, &state.to_string());
        self.shown = Some(now);
    }
}

impl eframe::App for PageApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        if std::mem::take(&mut self.remap_on_start) {
            self.explorer.shader.start_remap(ui.ctx());
        }
        self.explorer.ui(ui);
        self.publish();
    }
}
