//! What the explorer does differently in a browser page (wasm32, WebGPU): a page has one thread
//! and must never wait, so runs go through the async core on the page's event loop, and only
//! the workloads that record into an encoder ([`Workload::prepare`]) can run there. Everything
//! that waits on the GPU between steps says why it is unavailable instead (it never hangs the
//! tab). A page has no file system: the files the explorer makes are downloads (`download`),
//! and the run files it opens come through the page's file input (`Upload`). On native builds
//! every function here says "available".

use crate::workload::Workload;

/// Why the flow-shop tab's runs cannot start in a browser.
pub(super) const FLOWSHOP: &str = "not in the browser: the search and the pool measurement wait on the GPU between rounds, \
     which a page cannot do; run them in the desktop explorer";

/// Why a shader file cannot be loaded by its path in a browser.
pub(super) const WGSL_PATH: &str = "a page cannot read files by their path: paste the WGSL with \"edit / paste WGSL\"";

/// Why a kernel that waits for other workgroups (persistent threads) cannot run in a browser.
pub(super) const PT_WAITS: &str = "not in the browser: this kernel waits for other workgroups (a global barrier or a queue), \
     and a browser gives no forward-progress guarantee that they all run at once, so the wait could hang the page; \
     run it in the desktop explorer";

/// Why a kernel that only claims work (persistent threads, no waits) cannot run in a browser
/// either.
pub(super) const PT_CLAIMS: &str = "not in the browser: the persistent-threads runtime checks the adapter and sizes the launch \
     by waiting on the GPU before the run, which a page cannot do; run it in the desktop explorer";

/// What a page's time is, shown beside its runs: WebGPU in a page has no blocking wait, so each
/// sample is the page's wall clock from recording the work to its readback arriving on the
/// page's event loop (frames drawn in between count); the CPU check is not timed.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code, reason = "shown only in the browser page"))]
pub(super) const PAGE_CLOCK: &str = "page wall clock per sample: recording, submission, GPU work and the readback, \
     awaited on the page's event loop (frames drawn meanwhile count, so it is far above the GPU time); the CPU check is not timed";

/// `reason` in the browser build; None in native builds, where everything runs.
pub(super) fn unavailable(reason: &'static str) -> Option<&'static str> {
    cfg!(target_arch = "wasm32").then_some(reason)
}

/// Why `workload` cannot run in this build: in a browser, a workload without a recording
/// (it waits on the GPU between steps); None where it can run.
pub(super) fn workload_unavailable(workload: &dyn Workload) -> Option<String> {
    (cfg!(target_arch = "wasm32") && !workload.can_prepare()).then(|| {
        let name = workload.name();
        format!(
            "{name} is not in the browser: it waits on the GPU between its steps, which a page cannot do; \
             run it in the desktop explorer"
        )
    })
}

#[cfg(target_arch = "wasm32")]
pub(super) use page::{download, records, Upload};

#[cfg(target_arch = "wasm32")]
mod page {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;
    use std::sync::mpsc::{channel, Receiver, Sender};

    use serde_json::{json, Value};
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::{JsCast, JsValue};
    use web_sys::js_sys;

    use super::super::files::FileOut;
    use crate::error::{Error, Result};
    use crate::gpu::{Gpu, TimingSource};
    use crate::harness::{Check, Protocol, Record, Stats};
    use crate::workload::{self, Workload};

    /// Runs `workload`'s recording with `params` as `protocol` says (untimed warm-up, then
    /// timed samples), each run submitted with its readback and checked against the CPU
    /// reference; one record, timed by the page's wall clock around recording, submission and
    /// readback, the CPU check left out ([`PAGE_CLOCK`]). The record's check is the first that
    /// failed, else the last.
    pub(in crate::ui::explorer) async fn records(
        gpu: &Gpu,
        workload: &dyn Workload,
        params: &Value,
        protocol: &Protocol,
    ) -> Result<Vec<Record>> {
        let name = workload.name();
        let recording = workload.prepare(gpu, params)?.ok_or_else(|| Error::Unsupported {
            what: name.into(),
            adapter: gpu.adapter_name(),
            hint: "it has no recording (it waits on the GPU between steps): run it in the desktop explorer".into(),
        })?;
        for _ in 0..protocol.warmup {
            workload::run_recording_async(gpu, recording.as_ref()).await?;
        }
        let mut samples = Vec::with_capacity(protocol.samples.max(1));
        let mut check: Option<Check> = None;
        for _ in 0..protocol.samples.max(1) {
            let start = web_time::Instant::now();
            let outputs = workload::read_recording_async(gpu, recording.as_ref()).await?;
            samples.push(start.elapsed().as_secs_f64());
            let this = recording.check(&outputs);
            if check.as_ref().is_none_or(|c| c.passed) {
                check = Some(this);
            }
        }
        let check = check.ok_or_else(|| Error::invalid("samples", "at least one timed sample is needed"))?;
        let stats = Stats::from_samples(samples, TimingSource::WallClock)?;
        let seed = params.get("seed").and_then(Value::as_u64).unwrap_or(0);
        let record = Record::new(gpu, workload.family(), name, "browser recording", stats, check)
            .with_config(params, seed)
            .with_extra(json!({ "timing": super::PAGE_CLOCK }));
        Ok(vec![record])
    }

    /// The id of the page's file input, the one the Open buttons click (a test drives it too).
    pub(super) const INPUT_ID: &str = "simtlab-open";

    /// How long a download's object URL lives: the browser reads the blob after the click
    /// returns.
    const DOWNLOAD_URL_MS: i32 = 60_000;

    /// Offers `file` as a download of type `mime` (a Blob behind a clicked `<a download>`).
    pub(in crate::ui::explorer) fn download(file: &FileOut, mime: &str) -> Result<()> {
        let failed = |e: JsValue| Error::File {
            path: file.name.clone().into(),
            message: format!("the page could not offer it as a download: {e:?}"),
        };
        let window = web_sys::window().ok_or_else(|| failed("no window".into()))?;
        let document = window.document().ok_or_else(|| failed("no document".into()))?;
        let body = document.body().ok_or_else(|| failed("no body".into()))?;
        let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(file.bytes.as_slice()));
        let options = web_sys::BlobPropertyBag::new();
        options.set_type(mime);
        let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options).map_err(failed)?;
        let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(failed)?;
        let link: web_sys::HtmlElement = document.create_element("a").map_err(failed)?.dyn_into().map_err(|e| failed(e.into()))?;
        link.set_attribute("href", &url).map_err(failed)?;
        link.set_attribute("download", &file.name).map_err(failed)?;
        body.append_child(&link).map_err(failed)?;
        link.click();
        link.remove();
        let revoke = Closure::once_into_js(move || {
            let _ = web_sys::Url::revoke_object_url(&url);
        });
        window.set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), DOWNLOAD_URL_MS).map_err(failed)?;
        Ok(())
    }

    /// A run file the user picked in the page, read.
    pub(in crate::ui::explorer) struct Picked {
        /// The file's name.
        pub name: String,
        /// Whether it was asked for as the baseline.
        pub baseline: bool,
        /// Its text, or why it could not be read.
        pub text: Result<String>,
    }

    /// The page's file input (`<input type=file id=simtlab-open>`, hidden): the Open buttons
    /// click it, the file the user picks is read without blocking and waits in a channel that
    /// the explorer polls every frame.
    pub(in crate::ui::explorer) struct Upload {
        /// The input, or why the page has none.
        input: std::result::Result<web_sys::HtmlInputElement, String>,
        /// What the next picked file is for: set by [`Upload::pick`], read by the input.
        baseline: Rc<Cell<bool>>,
        picked: Receiver<Picked>,
        /// Asked to repaint when a file has been read.
        ctx: Rc<RefCell<Option<egui::Context>>>,
    }

    impl std::fmt::Debug for Upload {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Upload").field("input", &self.input.is_ok()).field("baseline", &self.baseline.get()).finish()
        }
    }

    impl Upload {
        /// Adds the file input to the page.
        pub(crate) fn new() -> Upload {
            let (sender, picked) = channel();
            let (baseline, ctx) = (Rc::new(Cell::new(false)), Rc::new(RefCell::new(None)));
            let input = file_input(sender, baseline.clone(), ctx.clone()).map_err(|e| format!("{e:?}"));
            Upload { input, baseline, picked, ctx }
        }

        /// Opens the browser's file chooser; the file picked is for the baseline if `baseline`.
        pub(crate) fn pick(&self, baseline: bool) -> Result<()> {
            let input = self.input.as_ref().map_err(|why| Error::Unsupported {
                what: "opening a file".into(),
                adapter: "this page".into(),
                hint: format!("the page could not add its file input ({why}); open runs in the desktop explorer"),
            })?;
            self.baseline.set(baseline);
            input.click();
            Ok(())
        }

        /// The file picked and read since the last call, if any; `ctx` is repainted when the
        /// next one has been read.
        pub(crate) fn poll(&self, ctx: &egui::Context) -> Option<Picked> {
            self.ctx.borrow_mut().get_or_insert_with(|| ctx.clone());
            self.picked.try_recv().ok()
        }
    }

    /// The hidden `<input type=file>` in the page's body; each file picked is read as text and
    /// sent on `sender` with what it is for (`baseline`, which then goes back to "open").
    fn file_input(
        sender: Sender<Picked>,
        baseline: Rc<Cell<bool>>,
        ctx: Rc<RefCell<Option<egui::Context>>>,
    ) -> std::result::Result<web_sys::HtmlInputElement, JsValue> {
        let document = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
        let input: web_sys::HtmlInputElement = document.create_element("input")?.dyn_into()?;
        input.set_type("file");
        input.set_accept(".json,application/json");
        input.set_id(INPUT_ID);
        input.set_hidden(true);
        document.body().ok_or("no body")?.append_child(&input)?;
        let target = input.clone();
        let on_change = Closure::<dyn FnMut()>::new(move || {
            let Some(file) = target.files().and_then(|list| list.get(0)) else { return };
            // picking the same file again is a change again
            target.set_value("");
            let (sender, ctx, baseline) = (sender.clone(), ctx.clone(), baseline.replace(false));
            wasm_bindgen_futures::spawn_local(async move {
                let name = file.name();
                let unreadable =
                    |e: JsValue| Error::File { path: name.clone().into(), message: format!("the page could not read it: {e:?}") };
                let text = wasm_bindgen_futures::JsFuture::from(file.text())
                    .await
                    .map_err(unreadable)
                    .and_then(|v| v.as_string().ok_or_else(|| unreadable("it is not text".into())));
                let _ = sender.send(Picked { name: name.clone(), baseline, text });
                if let Some(ctx) = ctx.borrow().as_ref() {
                    ctx.request_repaint();
                }
            });
        });
        input.add_event_listener_with_callback("change", on_change.as_ref().unchecked_ref())?;
        // the input lives as long as the page, and its listener with it
        on_change.forget();
        Ok(input)
    }
}
