//! Embedding simtlab in a plain winit + wgpu application, and profiling the app's own kernel.
//!
//! The app owns everything: the instance, the window surface, the `Device` and `Queue`, and its
//! own compute kernel: an escape-time fractal (each pixel iterates until it escapes, so
//! neighbouring lanes run loops of very different lengths) that it dispatches and draws every
//! frame. simtlab instruments that kernel with [`Profiler`] on the app's device: the app builds
//! a second pipeline from the instrumented WGSL, binds the probe's group, records the counts'
//! copy into its own encoder and picks them up frames later, never waiting. The overlay shows
//! the divergence per subgroup and per branch site, and the frame time with the probe off and on.
//!
//! R removes the divergence instead, with [`Remapper`] on the same kernel: the app dispatches
//! the remapped kernel, which records each pixel's path while it computes; the paths of frame t
//! order the pixels of a later frame so that the lanes of a subgroup iterate alike. The overlay
//! shows the predicted SIMT efficiency before and after, and the frame time both ways.
//!
//! ```sh
//! cargo run --example embed_overlay                      # until the window is closed; P toggles the probe, R remapping
//! cargo run --example embed_overlay -- --frames 600      # 200 frames as written, 200 with the probe, 200 remapped
//! cargo run --example embed_overlay -- --vsync           # present at the display's rate
//! ```
//!
//! The lines another app needs (the rest is an ordinary winit + wgpu program):
//!
//! ```ignore
//! // once, beside the app's own pipeline
//! let mut probe = Profiler::instrument(&device, MY_WGSL, "main", &ProfilerOptions { workgroups, ..Default::default() })?;
//! let probed = make_pipeline(probe.shader()); // the same layout for the app's groups
//! let probe_group = probe.bind_group_for(&probed);
//! // every frame, in the app's encoder
//! pass.set_pipeline(&probed); pass.set_bind_group(0, &app_group, &[]);
//! pass.set_bind_group(probe.group(), Some(&probe_group), &[]); pass.dispatch_workgroups(..);
//! probe.resolve(&mut encoder);
//! // after submitting: Some(counts) once the GPU is done, never blocking
//! if let Some(counts) = probe.try_finish()? { overlay = DivergenceOverlay::new(&counts.divergence(), "GPU probe"); }
//! // the overlay, drawn with egui-wgpu over the app's frame
//! egui::Window::new("simtlab").show(ctx, |ui| overlay.ui(ui));
//! ```

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use simtlab::profile::{self, Profiler, ProfilerOptions};
use simtlab::remap::{RemapUpdate, Remapper, RemapperOptions};
use simtlab::ui::overlay::{DivergenceOverlay, Span, Timeline};
use winit::application::ApplicationHandler;
use winit::event::{ElementState, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop, OwnedDisplayHandle};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

/// The fractal image the app computes every frame.
const FRACTAL_W: u32 = 640;
const FRACTAL_H: u32 = 400;

/// The app's own compute kernel: escape-time iteration counts of a slowly zooming view.
const FRACTAL_WGSL: &str = r#"
struct View { center: vec2<f32>, scale: f32, limit: u32 }
@group(0) @binding(0) var<uniform> view: View;
@group(0) @binding(1) var<storage, read_write> iterations: array<u32>;

const WIDTH: u32 = 640u;
const HEIGHT: u32 = 400u;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= WIDTH * HEIGHT) {
        return;
    }
    let p = vec2<f32>(f32(i % WIDTH) - 0.5 * f32(WIDTH), f32(i / WIDTH) - 0.5 * f32(HEIGHT));
    let c = view.center + p * view.scale;
    var z = vec2<f32>(0.0, 0.0);
    var k = 0u;
    while (k < view.limit && dot(z, z) <= 4.0) {
        z = vec2<f32>(z.x * z.x - z.y * z.y, 2.0 * z.x * z.y) + c;
        k += 1u;
    }
    iterations[i] = k;
}
"#;

/// Draws the iteration counts: a full-screen triangle that reads the app's buffer.
const SCENE_WGSL: &str = r#"
struct View { center: vec2<f32>, scale: f32, limit: u32 }
@group(0) @binding(0) var<uniform> view: View;
@group(0) @binding(1) var<storage, read> iterations: array<u32>;

struct VertexOut { @builtin(position) position: vec4<f32>, @location(0) uv: vec2<f32> }

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> VertexOut {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    var out: VertexOut;
    out.position = vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
    out.uv = vec2<f32>(uv.x, 1.0 - uv.y);
    return out;
}

@fragment
fn fs_main(v: VertexOut) -> @location(0) vec4<f32> {
    let x = min(u32(v.uv.x * 640.0), 639u);
    let y = min(u32(v.uv.y * 400.0), 399u);
    let k = iterations[y * 640u + x];
    if (k >= view.limit) {
        return vec4<f32>(0.02, 0.02, 0.04, 1.0);
    }
    let t = sqrt(f32(k) / f32(view.limit));
    return vec4<f32>(0.5 + 0.5 * cos(6.28318 * (t + vec3<f32>(0.0, 0.33, 0.67))), 1.0);
}
"#;

/// Iteration limit of the fractal.
const LIMIT: u32 = 256;
/// Frames the frame-time averages cover.
const FRAME_WINDOW: usize = 120;
/// Rebuild the overlay from fresh counts at most this often (binning the heat map is the cost).
const OVERLAY_EVERY_S: f64 = 0.5;

/// The view at `t` seconds: a slow zoom into the seahorse valley and back.
fn view_at(t: f32) -> [u32; 4] {
    let zoom = 0.5 - 0.5 * (t * 0.15).cos();
    let scale = 3.0 / FRACTAL_W as f32 * (1.0 - 0.985 * zoom);
    let (cx, cy) = (-0.5 - 0.2435 * zoom, 0.1 * zoom);
    [cx.to_bits(), cy.to_bits(), scale.to_bits(), LIMIT]
}

/// Mean frame time, in ms, over the last frames of one mode.
#[derive(Default)]
struct FrameTimes(VecDeque<f64>);

impl FrameTimes {
    fn push(&mut self, seconds: f64) {
        self.0.push_back(seconds);
        if self.0.len() > FRAME_WINDOW {
            self.0.pop_front();
        }
    }
    fn mean_ms(&self) -> Option<f64> {
        (!self.0.is_empty()).then(|| 1e3 * self.0.iter().sum::<f64>() / self.0.len() as f64)
    }
}

/// The simtlab side of the app: the probe on the app's kernel, and what it last counted.
struct Probe {
    profiler: Profiler,
    pipeline: wgpu::ComputePipeline,
    app_group: wgpu::BindGroup,
    probe_group: wgpu::BindGroup,
    overlay: Option<DivergenceOverlay>,
    /// Per branch site: where it is and how efficient it was.
    sites: Vec<profile::SiteRow>,
    updated: f64,
}

/// The simtlab side of the app that removes the divergence: its kernel remapped on the fly.
struct Remap {
    remapper: Remapper,
    pipeline: wgpu::ComputePipeline,
    app_group: wgpu::BindGroup,
    remap_group: wgpu::BindGroup,
    /// What the last read-back of the paths predicted.
    last: Option<RemapUpdate>,
}

/// What the app dispatches for its fractal.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The kernel as written.
    Plain,
    /// Instrumented with the probe (P).
    Probed,
    /// Remapped on the fly (R).
    Remapped,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Plain => "as written",
            Mode::Probed => "probe on",
            Mode::Remapped => "remapped",
        }
    }
}

struct Frame {
    started: Instant,
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter_name: String,
    view_buffer: wgpu::Buffer,
    fractal: wgpu::ComputePipeline,
    fractal_group: wgpu::BindGroup,
    scene: wgpu::RenderPipeline,
    scene_group: wgpu::BindGroup,
    egui_ctx: egui::Context,
    egui_state: egui_winit::State,
    egui_renderer: egui_wgpu::Renderer,
    probe: Option<Probe>,
    probe_error: Option<String>,
    remap: Option<Remap>,
    remap_error: Option<String>,
    /// What the fractal dispatch runs (P toggles the probe, R remapping).
    mode: Mode,
    /// Frame times as written, with the probe, remapped.
    times: [FrameTimes; 3],
    last_frame: Option<Instant>,
    spans: Vec<Span>,
    frames: u64,
}

/// The fractal's compute pipeline from `wgsl` (the app's own or the instrumented one), with the
/// app's group 0 bound to the view and the iteration buffer.
fn fractal_pipeline(
    device: &wgpu::Device,
    wgsl: &str,
    view: &wgpu::Buffer,
    out: &wgpu::Buffer,
) -> (wgpu::ComputePipeline, wgpu::BindGroup) {
    let module =
        device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some("fractal"), source: wgpu::ShaderSource::Wgsl(wgsl.into()) });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("fractal"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("fractal"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: view.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: out.as_entire_binding() },
        ],
    });
    (pipeline, group)
}

impl Frame {
    fn new(event_loop: &ActiveEventLoop, display: OwnedDisplayHandle, vsync: bool) -> Result<Frame, String> {
        let window = Arc::new(
            event_loop
                .create_window(
                    Window::default_attributes()
                        .with_title("simtlab profiling a wgpu app's own kernel")
                        .with_inner_size(winit::dpi::LogicalSize::new(1100.0, 720.0)),
                )
                .map_err(|e| e.to_string())?,
        );
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_with_display_handle_from_env(Box::new(display)));
        let surface = instance.create_surface(window.clone()).map_err(|e| e.to_string())?;
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            compatible_surface: Some(&surface),
            force_fallback_adapter: false,
            apply_limit_buckets: false,
        }))
        .map_err(|e| e.to_string())?;
        // The app decides the features; the probe counts on subgroups when enabled here and
        // falls back to per-invocation traces with host emulation otherwise.
        let features = adapter.features() & simtlab::gpu::wanted_features();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("app device"),
            required_features: features,
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| e.to_string())?;

        let size = window.inner_size();
        let caps = surface.get_capabilities(&adapter);
        let format = caps.formats.iter().copied().find(|f| !f.is_srgb()).unwrap_or(caps.formats[0]);
        // without vsync the frame time is the work's, not the display's
        let present_mode = if vsync { wgpu::PresentMode::AutoVsync } else { wgpu::PresentMode::AutoNoVsync };
        let config = wgpu::SurfaceConfiguration {
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            format,
            width: size.width.max(1),
            height: size.height.max(1),
            present_mode,
            view_formats: vec![],
            ..surface
                .get_default_config(&adapter, size.width.max(1), size.height.max(1))
                .ok_or("the surface does not work with this adapter")?
        };
        surface.configure(&device, &config);

        let view_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("fractal view"),
            size: 16,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let iterations = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("fractal iterations"),
            size: u64::from(FRACTAL_W * FRACTAL_H) * 4,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let (fractal, fractal_group) = fractal_pipeline(&device, FRACTAL_WGSL, &view_buffer, &iterations);

        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("scene"),
            source: wgpu::ShaderSource::Wgsl(SCENE_WGSL.into()),
        });
        let scene = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("scene"),
            layout: None,
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_main"),
                buffers: &[],
                compilation_options: Default::default(),
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_main"),
                targets: &[Some(wgpu::ColorTargetState { format, blend: None, write_mask: wgpu::ColorWrites::ALL })],
                compilation_options: Default::default(),
            }),
            multiview_mask: None,
            cache: None,
        });
        let scene_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("scene"),
            layout: &scene.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: view_buffer.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: iterations.as_entire_binding() },
            ],
        });

        // simtlab instruments the app's kernel on the app's device: no instance or device of its own
        let workgroups = [(FRACTAL_W * FRACTAL_H).div_ceil(64), 1, 1];
        let (probe, probe_error) =
            match Profiler::instrument(&device, FRACTAL_WGSL, "main", &ProfilerOptions { workgroups, ..Default::default() }) {
                Ok(profiler) => {
                    let (pipeline, app_group) = fractal_pipeline(&device, profiler.shader(), &view_buffer, &iterations);
                    let probe_group = profiler.bind_group_for(&pipeline);
                    (
                        Some(Probe {
                            profiler,
                            pipeline,
                            app_group,
                            probe_group,
                            overlay: None,
                            sites: Vec::new(),
                            updated: f64::NEG_INFINITY,
                        }),
                        None,
                    )
                }
                Err(e) => (None, Some(e.to_string())),
            };
        // and remaps it, on the same device: the emulated subgroups as wide as the adapter's
        let width = match adapter.get_info().subgroup_max_size {
            0 => 32,
            w => w.min(128),
        };
        let (remap, remap_error) =
            match Remapper::new(&device, FRACTAL_WGSL, "main", workgroups, &RemapperOptions { width, ..Default::default() }) {
                Ok(remapper) => {
                    let (pipeline, app_group) = fractal_pipeline(&device, remapper.shader(), &view_buffer, &iterations);
                    let remap_group = remapper.bind_group_for(&pipeline);
                    (Some(Remap { remapper, pipeline, app_group, remap_group, last: None }), None)
                }
                Err(e) => (None, Some(e.to_string())),
            };

        let egui_ctx = egui::Context::default();
        let egui_state = egui_winit::State::new(
            egui_ctx.clone(),
            egui::ViewportId::ROOT,
            &window,
            Some(window.scale_factor() as f32),
            None,
            Some(device.limits().max_texture_dimension_2d as usize),
        );
        let egui_renderer = egui_wgpu::Renderer::new(&device, format, egui_wgpu::RendererOptions::default());
        Ok(Frame {
            started: Instant::now(),
            window,
            surface,
            config,
            device,
            queue,
            adapter_name: adapter.get_info().name,
            view_buffer,
            fractal,
            fractal_group,
            scene,
            scene_group,
            egui_ctx,
            egui_state,
            egui_renderer,
            probe,
            probe_error,
            remap,
            remap_error,
            mode: Mode::Plain,
            times: Default::default(),
            last_frame: None,
            spans: Vec::new(),
            frames: 0,
        })
    }

    fn resize(&mut self, width: u32, height: u32) {
        self.config.width = width.max(1);
        self.config.height = height.max(1);
        self.surface.configure(&self.device, &self.config);
    }

    fn now(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    fn span(&mut self, lane: &str, label: String, start: f64) {
        let end = self.now();
        self.spans.push(Span::new(lane, label, start, end));
        // keep about the last second
        let cutoff = end - 1.0;
        if self.spans.first().is_some_and(|s| s.end_s < cutoff) {
            self.spans.retain(|s| s.end_s >= cutoff);
        }
    }

    /// One line: the mean frame time as written, with the probe and remapped, and their ratios
    /// to the time as written.
    fn frame_time_line(&self) -> String {
        let [plain, probed, remapped] = [&self.times[0], &self.times[1], &self.times[2]].map(FrameTimes::mean_ms);
        let show = |t: Option<f64>| {
            let ratio = match (plain, t) {
                (Some(a), Some(b)) if t != plain => format!(" ({:.2}x)", b / a),
                _ => String::new(),
            };
            t.map_or("not yet measured".to_string(), |t| format!("{t:.2} ms{ratio}"))
        };
        format!(
            "frame time, mean of the last {FRAME_WINDOW}: as written {}, probe on {}, remapped {}",
            show(plain),
            show(probed),
            show(remapped)
        )
    }

    /// Switches the fractal dispatch to `mode`, or back to the kernel as written if it is on.
    fn toggle(&mut self, mode: Mode) {
        self.set_mode(if self.mode == mode { Mode::Plain } else { mode });
    }

    fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
        // remapping restarts from the kernel's own order each time it is turned on
        if let Some(r) = &mut self.remap {
            r.remapper.set_enabled(mode == Mode::Remapped);
        }
    }

    fn render(&mut self) {
        let frame = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(f) | wgpu::CurrentSurfaceTexture::Suboptimal(f) => f,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                self.surface.configure(&self.device, &self.config);
                return;
            }
            _ => return,
        };
        let view = frame.texture.create_view(&wgpu::TextureViewDescriptor::default());
        let mode = match self.mode {
            Mode::Probed if self.probe.is_some() => Mode::Probed,
            Mode::Remapped if self.remap.is_some() => Mode::Remapped,
            _ => Mode::Plain,
        };
        let probing = mode == Mode::Probed;
        let remapping = mode == Mode::Remapped;

        // 1. the app's own kernel, instrumented or not
        let t = self.now();
        self.queue.write_buffer(&self.view_buffer, 0, bytemuck::cast_slice(&view_at(t as f32)));
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("frame") });
        if let (Some(r), true) = (&mut self.remap, remapping) {
            // a new order, when the paths of an earlier frame gave one, goes in before the dispatch
            r.remapper.begin(&mut encoder);
        }
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("fractal"), timestamp_writes: None });
            match (&self.probe, &self.remap, mode) {
                (Some(p), _, Mode::Probed) => {
                    pass.set_pipeline(&p.pipeline);
                    pass.set_bind_group(0, &p.app_group, &[]);
                    pass.set_bind_group(p.profiler.group(), Some(&p.probe_group), &[]);
                }
                (_, Some(r), Mode::Remapped) => {
                    pass.set_pipeline(&r.pipeline);
                    pass.set_bind_group(0, &r.app_group, &[]);
                    pass.set_bind_group(r.remapper.group(), Some(&r.remap_group), &[]);
                }
                _ => {
                    pass.set_pipeline(&self.fractal);
                    pass.set_bind_group(0, &self.fractal_group, &[]);
                }
            }
            pass.dispatch_workgroups((FRACTAL_W * FRACTAL_H).div_ceil(64), 1, 1);
        }
        if let (Some(p), true) = (&mut self.probe, probing) {
            p.profiler.resolve(&mut encoder);
        }
        if let (Some(r), true) = (&mut self.remap, remapping) {
            r.remapper.end(&mut encoder);
        }
        let lane = match mode {
            Mode::Plain => "fractal",
            Mode::Probed => "fractal (probed)",
            Mode::Remapped => "fractal (remapped)",
        };
        self.span(lane, format!("frame {}", self.frames), t);

        // 2. the app's scene: the fractal
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("scene"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
                    resolve_target: None,
                    ops: wgpu::Operations { load: wgpu::LoadOp::Clear(wgpu::Color::BLACK), store: wgpu::StoreOp::Store },
                    depth_slice: None,
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_pipeline(&self.scene);
            pass.set_bind_group(0, &self.scene_group, &[]);
            pass.draw(0..3, 0..1);
        }

        // 3. the overlay: plain data in, egui-wgpu draws it over the scene
        let t = self.now();
        let input = self.egui_state.take_egui_input(&self.window);
        let timeline = Timeline::new(self.spans.iter().cloned());
        let header = format!("{} · frame {} · kernel {} (P toggles the probe, R remapping)", self.adapter_name, self.frames, mode.name());
        let times = self.frame_time_line();
        let remap_line = match (&self.remap, &self.remap_error) {
            (Some(Remap { last: Some(u), .. }), _) => format!(
                "remap: frame {}'s paths, {} classes: predicted SIMT efficiency {:.1} % in its order, {:.1} % regrouped{}",
                u.dispatch,
                u.classes,
                100.0 * u.before,
                100.0 * u.after,
                if u.applied { " (applied)" } else { "" }
            ),
            (Some(_), _) => "remap: press R to regroup the pixels by the paths they take".to_string(),
            (None, e) => format!("remap: {}", e.as_deref().unwrap_or("not started")),
        };
        let probe = &mut self.probe;
        let error = &self.probe_error;
        let output = self.egui_ctx.run_ui(input, |ui| {
            egui::Window::new("simtlab: the app's fractal kernel").default_pos([16.0, 16.0]).default_width(560.0).show(ui.ctx(), |ui| {
                ui.label(&header);
                ui.label(&times);
                ui.label(&remap_line);
                match probe {
                    Some(p) => match &mut p.overlay {
                        Some(o) => {
                            site_grid(ui, &p.sites);
                            o.ui(ui);
                        }
                        None => {
                            ui.label("press P to instrument the kernel: its counts appear a few frames later");
                        }
                    },
                    None => {
                        ui.colored_label(ui.visuals().error_fg_color, format!("simtlab: {}", error.as_deref().unwrap_or("not started")));
                    }
                }
            });
            egui::Window::new("frame timeline").anchor(egui::Align2::LEFT_BOTTOM, [16.0, -16.0]).default_width(700.0).show(
                ui.ctx(),
                |ui| {
                    timeline.ui(ui);
                },
            );
        });
        self.egui_state.handle_platform_output(&self.window, output.platform_output);
        let jobs = self.egui_ctx.tessellate(output.shapes, output.pixels_per_point);
        let screen = egui_wgpu::ScreenDescriptor {
            size_in_pixels: [self.config.width, self.config.height],
            pixels_per_point: output.pixels_per_point,
        };
        let mut textures = output.textures_delta;
        for (id, deltas) in textures.set.drain() {
            for delta in deltas {
                self.egui_renderer.update_texture(&self.device, &self.queue, id, &delta);
            }
        }
        let extra = self.egui_renderer.update_buffers(&self.device, &self.queue, &mut encoder, &jobs, &screen);
        {
            let pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("simtlab overlay"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
                    resolve_target: None,
                    ops: wgpu::Operations { load: wgpu::LoadOp::Load, store: wgpu::StoreOp::Store },
                    depth_slice: None,
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            self.egui_renderer.render(&mut pass.forget_lifetime(), &jobs, &screen);
        }
        for id in textures.free.drain() {
            self.egui_renderer.free_texture(&id);
        }
        self.span("overlay", format!("overlay {}", self.frames), t);
        let t = self.now();
        self.queue.submit(extra.into_iter().chain(std::iter::once(encoder.finish())));
        if let (Some(r), true) = (&mut self.remap, remapping) {
            r.remapper.after_submit();
        }
        self.window.pre_present_notify();
        self.queue.present(frame);
        self.span("submit + present", format!("present {}", self.frames), t);

        // 4. the probe's counts, once the GPU is done with an earlier frame: never waits
        let now = self.now();
        if let Some(p) = &mut self.probe {
            match p.profiler.try_finish() {
                Ok(Some(counts)) if now - p.updated >= OVERLAY_EVERY_S => {
                    p.sites = profile::summary(p.profiler.sites(), &counts).sites;
                    let source = format!("GPU probe on the app's kernel, subgroup width {}", counts.width);
                    let color_by = p.overlay.as_ref().map(|o| o.color_by).unwrap_or_default();
                    let mut overlay = DivergenceOverlay::new(&counts.divergence(), source);
                    overlay.color_by = color_by;
                    p.overlay = Some(overlay);
                    p.updated = now;
                }
                Ok(_) => {}
                Err(e) => self.probe_error = Some(e.to_string()),
            }
        }
        // 5. the paths of an earlier frame, regrouped into the order of a later one: never waits
        if let Some(r) = &mut self.remap {
            match r.remapper.poll() {
                Ok(Some(update)) => r.last = Some(update),
                Ok(None) => {}
                Err(e) => self.remap_error = Some(e.to_string()),
            }
        }
        let end = Instant::now();
        if let Some(last) = self.last_frame.replace(end) {
            self.times[mode as usize].push((end - last).as_secs_f64());
        }
        self.frames += 1;
    }
}

/// The probed branch sites: line, kind, source and efficiencies.
fn site_grid(ui: &mut egui::Ui, sites: &[profile::SiteRow]) {
    egui::Grid::new("sites").striped(true).show(ui, |ui| {
        for title in ["line", "kind", "source", "evaluations", "branch eff.", "SIMT eff."] {
            ui.strong(title);
        }
        ui.end_row();
        for row in sites {
            ui.label(format!("{}:{}", row.place.line, row.place.column));
            ui.label(row.place.kind.name());
            ui.monospace(&row.place.source);
            ui.label(row.counts.evaluations.to_string());
            ui.label(format!("{:.1} %", 100.0 * row.branch_efficiency));
            ui.label(format!("{:.1} %", 100.0 * row.simt_efficiency));
            ui.end_row();
        }
    });
}

struct App {
    frame: Option<Frame>,
    /// Exit after this many frames: a third as written, a third with the probe, a third
    /// remapped (screenshots and CI).
    max_frames: Option<u64>,
    vsync: bool,
    error: Option<String>,
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.frame.is_some() {
            return;
        }
        match Frame::new(event_loop, event_loop.owned_display_handle(), self.vsync) {
            Ok(f) => {
                if let Some(e) = &f.probe_error {
                    eprintln!("simtlab could not instrument the app's kernel: {e}");
                }
                if let Some(e) = &f.remap_error {
                    eprintln!("simtlab could not remap the app's kernel: {e}");
                }
                self.frame = Some(f);
            }
            Err(e) => {
                self.error = Some(e);
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(frame) = &mut self.frame else { return };
        if frame.egui_state.on_window_event(&frame.window, &event).consumed {
            return;
        }
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) => frame.resize(size.width, size.height),
            WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Pressed => match event.logical_key {
                Key::Character(c) if c.eq_ignore_ascii_case("p") => frame.toggle(Mode::Probed),
                Key::Character(c) if c.eq_ignore_ascii_case("r") => frame.toggle(Mode::Remapped),
                Key::Named(NamedKey::Escape) => event_loop.exit(),
                _ => {}
            },
            WindowEvent::RedrawRequested => {
                if let Some(m) = self.max_frames {
                    let mode = match frame.frames * 3 / m.max(1) {
                        0 => Mode::Plain,
                        1 => Mode::Probed,
                        _ => Mode::Remapped,
                    };
                    if mode != frame.mode {
                        frame.set_mode(mode);
                    }
                }
                frame.render();
                if self.max_frames.is_some_and(|m| frame.frames >= m) {
                    event_loop.exit();
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(f) = &self.frame {
            f.window.request_redraw();
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut max_frames, mut vsync) = (None, false);
    let usage = "usage: embed_overlay [--frames N] [--vsync]";
    while let Some(a) = args.next() {
        match a.as_str() {
            "--frames" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) => max_frames = Some(n),
                None => {
                    eprintln!("--frames takes a number; {usage}");
                    std::process::exit(2);
                }
            },
            "--vsync" => vsync = true,
            other => {
                eprintln!("unknown argument {other}; {usage}");
                std::process::exit(2);
            }
        }
    }
    let event_loop = EventLoop::new().expect("an event loop (is DISPLAY set?)");
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut app = App { frame: None, max_frames, vsync, error: None };
    if let Err(e) = event_loop.run_app(&mut app) {
        eprintln!("event loop: {e}");
        std::process::exit(1);
    }
    if let Some(e) = app.error {
        eprintln!("could not start: {e}");
        std::process::exit(1);
    }
    if let Some(f) = &app.frame {
        println!("{}", f.frame_time_line());
    }
}
