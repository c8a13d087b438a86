//! Embedding simtlab in a plain winit + wgpu application.
//!
//! The app owns everything: the instance, the window surface, the `Device` and `Queue`. It
//! draws its own scene (a spinning triangle), runs a simtlab kernel (the divergent micro loop,
//! 16 K threads) on *its* device every few frames through
//! `Gpu::from_device(device.clone(), queue.clone(), adapter.get_info())`, and draws the
//! simtlab overlay on top with egui-wgpu. The overlay widgets take plain data (a
//! `Divergence`, a list of spans), so they hold no GPU handles of their own.
//!
//! ```sh
//! cargo run --example embed_overlay                 # until the window is closed
//! cargo run --example embed_overlay -- --frames 600 # exit after 600 frames
//! cargo run --example embed_overlay -- --layout one-long  # stay on one trip-count layout
//! ```
//!
//! The dozen lines another app needs (the rest is an ordinary winit + wgpu program):
//!
//! ```ignore
//! // once, next to the app's own renderer
//! let gpu = simtlab::Gpu::from_device(device.clone(), queue.clone(), adapter.get_info())?;
//! let egui_ctx = egui::Context::default();
//! let mut egui_state = egui_winit::State::new(egui_ctx.clone(), egui::ViewportId::ROOT, &window, None, None, None);
//! let mut egui_renderer = egui_wgpu::Renderer::new(&device, surface_format, Default::default());
//! // whenever a simtlab run finishes
//! overlay = DivergenceOverlay::new(&divergence, "GPU probe");
//! // every frame, after the app's own pass (window events go to egui_state.on_window_event)
//! let out = egui_ctx.run_ui(egui_state.take_egui_input(&window), |ui| {
//!     egui::Window::new("simtlab").show(ui.ctx(), |ui| overlay.ui(ui));
//! });
//! let jobs = egui_ctx.tessellate(out.shapes, out.pixels_per_point);
//! for (id, deltas) in out.textures_delta.set.drain() { for d in deltas { egui_renderer.update_texture(&device, &queue, id, &d); } }
//! egui_renderer.update_buffers(&device, &queue, &mut encoder, &jobs, &screen);
//! egui_renderer.render(&mut pass.forget_lifetime(), &jobs, &screen); // pass with LoadOp::Load
//! ```

use std::sync::Arc;
use std::time::Instant;

use simtlab::kernels::micro::{self, Distribution, MicroConfig, Pattern, Prepared, RunOptions};
use simtlab::ui::overlay::{DivergenceOverlay, Span, Timeline};
use simtlab::Gpu;
use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop, OwnedDisplayHandle};
use winit::window::{Window, WindowId};

const SCENE_WGSL: &str = r#"
struct Scene { time: f32, aspect: f32, pad0: f32, pad1: f32 }
@group(0) @binding(0) var<uniform> scene: Scene;

struct VertexOut { @builtin(position) position: vec4<f32>, @location(0) color: vec3<f32> }

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> VertexOut {
    let angle = scene.time * 0.8 + f32(i) * 2.0943951;
    var out: VertexOut;
    out.position = vec4<f32>(0.6 * cos(angle) / scene.aspect, 0.6 * sin(angle), 0.0, 1.0);
    let c = array<vec3<f32>, 3>(vec3<f32>(0.95, 0.3, 0.2), vec3<f32>(0.2, 0.8, 0.35), vec3<f32>(0.25, 0.45, 0.95));
    out.color = c[i % 3u];
    return out;
}

@fragment
fn fs_main(v: VertexOut) -> @location(0) vec4<f32> {
    return vec4<f32>(v.color, 1.0);
}
"#;

/// Run the simtlab kernel every this many frames.
const KERNEL_EVERY: u64 = 4;
/// Switch the trip-count layout every this many kernel runs, so the overlay changes.
const LAYOUT_EVERY: u64 = 30;

/// The simtlab side of the app: one prepared micro-loop kernel per layout, on the app's device.
struct Simtlab {
    gpu: Gpu,
    layouts: Vec<(Distribution, Prepared)>,
    /// Stay on this layout instead of cycling.
    pinned: Option<usize>,
    runs: u64,
    overlay: Option<DivergenceOverlay>,
    last: String,
}

impl Simtlab {
    fn new(gpu: Gpu, pinned: Option<Distribution>) -> simtlab::Result<Simtlab> {
        let probe = gpu.caps.subgroup_size.is_some();
        let mut layouts = Vec::new();
        for distribution in [Distribution::OneLong, Distribution::Sorted, Distribution::Random] {
            let cfg = MicroConfig { pattern: Pattern::Loop, distribution, n: 1 << 14, short: 8, long: 256, ..Default::default() };
            let input = micro::generate(&cfg)?;
            layouts.push((distribution, Prepared::new(&gpu, &cfg, &input, RunOptions { probe, remap: None, ..Default::default() })?));
        }
        let pinned = pinned.and_then(|p| layouts.iter().position(|(d, _)| *d == p));
        Ok(Simtlab { gpu, layouts, pinned, runs: 0, overlay: None, last: String::new() })
    }

    /// One dispatch on the app's queue, then the probe's counters (host emulation when the
    /// device has no subgroups would need the inputs; this example just reports the time).
    fn run(&mut self) -> simtlab::Result<()> {
        let index = self.pinned.unwrap_or((self.runs / LAYOUT_EVERY) as usize % self.layouts.len());
        let (distribution, prepared) = &self.layouts[index];
        let timing = prepared.dispatch(&self.gpu)?;
        self.last = format!("{}: {:.3} ms ({:?})", distribution.name(), timing.seconds * 1e3, timing.source);
        if self.runs.is_multiple_of(LAYOUT_EVERY) {
            if let Some(d) = prepared.divergence(&self.gpu)? {
                let source = format!("GPU probe, {} layout, subgroup width {}", distribution.name(), d.width);
                let color_by = self.overlay.as_ref().map(|o| o.color_by).unwrap_or_default();
                let mut overlay = DivergenceOverlay::new(&d, source);
                overlay.color_by = color_by;
                self.overlay = Some(overlay);
            }
        }
        self.runs += 1;
        Ok(())
    }
}

struct Frame {
    started: Instant,
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipeline: wgpu::RenderPipeline,
    scene_buffer: wgpu::Buffer,
    scene_bind: wgpu::BindGroup,
    egui_ctx: egui::Context,
    egui_state: egui_winit::State,
    egui_renderer: egui_wgpu::Renderer,
    simtlab: Option<Simtlab>,
    simtlab_error: Option<String>,
    spans: Vec<Span>,
    frames: u64,
}

impl Frame {
    fn new(event_loop: &ActiveEventLoop, display: OwnedDisplayHandle, pinned: Option<Distribution>) -> Result<Frame, String> {
        let window = Arc::new(
            event_loop
                .create_window(
                    Window::default_attributes()
                        .with_title("simtlab overlay in a wgpu app")
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
        // The app decides the features; simtlab uses subgroups for its probe when enabled here.
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
        let config = wgpu::SurfaceConfiguration {
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            format,
            width: size.width.max(1),
            height: size.height.max(1),
            present_mode: wgpu::PresentMode::AutoVsync,
            view_formats: vec![],
            ..surface
                .get_default_config(&adapter, size.width.max(1), size.height.max(1))
                .ok_or("the surface does not work with this adapter")?
        };
        surface.configure(&device, &config);

        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("scene"),
            source: wgpu::ShaderSource::Wgsl(SCENE_WGSL.into()),
        });
        let scene_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("scene uniforms"),
            size: 16,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("scene"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX,
                ty: wgpu::BindingType::Buffer { ty: wgpu::BufferBindingType::Uniform, has_dynamic_offset: false, min_binding_size: None },
                count: None,
            }],
        });
        let scene_bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("scene"),
            layout: &layout,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: scene_buffer.as_entire_binding() }],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("scene"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("scene"),
            layout: Some(&pipeline_layout),
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

        // simtlab on the app's own device and queue: no instance, no device of its own
        let (simtlab, simtlab_error) =
            match Gpu::from_device(device.clone(), queue.clone(), adapter.get_info()).and_then(|gpu| Simtlab::new(gpu, pinned)) {
                Ok(s) => (Some(s), None),
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
            pipeline,
            scene_buffer,
            scene_bind,
            egui_ctx,
            egui_state,
            egui_renderer,
            simtlab,
            simtlab_error,
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

        // 1. simtlab: every few frames, a dispatch on the app's queue
        if self.frames.is_multiple_of(KERNEL_EVERY) {
            let t = self.now();
            let result = self.simtlab.as_mut().map(|s| s.run());
            if let Some(Err(e)) = result {
                self.simtlab_error = Some(e.to_string());
            }
            self.span("simtlab kernel", format!("kernel {}", self.frames / KERNEL_EVERY), t);
        }

        // 2. the app's own scene
        let t = self.now();
        let time = self.started.elapsed().as_secs_f32();
        let aspect = self.config.width as f32 / self.config.height as f32;
        self.queue.write_buffer(&self.scene_buffer, 0, bytemuck::cast_slice(&[time, aspect, 0.0, 0.0]));
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("frame") });
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("scene"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color { r: 0.06, g: 0.07, b: 0.1, a: 1.0 }),
                        store: wgpu::StoreOp::Store,
                    },
                    depth_slice: None,
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.scene_bind, &[]);
            pass.draw(0..3, 0..1);
        }
        self.span("scene", format!("scene {}", self.frames), t);

        // 3. the overlay: plain data in, egui-wgpu draws it over the scene
        let t = self.now();
        let input = self.egui_state.take_egui_input(&self.window);
        let timeline = Timeline::new(self.spans.iter().cloned());
        let frames = self.frames;
        let simtlab = &mut self.simtlab;
        let error = &self.simtlab_error;
        let output = self.egui_ctx.run_ui(input, |ui| {
            egui::Window::new("simtlab divergence").default_pos([16.0, 16.0]).default_width(560.0).show(ui.ctx(), |ui| match simtlab {
                Some(s) => {
                    ui.label(format!("{} · {} · frame {frames}", s.gpu.adapter_name(), s.last));
                    match &mut s.overlay {
                        Some(o) => o.ui(ui),
                        None => {
                            ui.label("no probe data (the device has no subgroups)");
                        }
                    }
                }
                None => {
                    ui.colored_label(ui.visuals().error_fg_color, format!("simtlab: {}", error.as_deref().unwrap_or("not started")));
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
        self.window.pre_present_notify();
        self.queue.present(frame);
        self.span("submit + present", format!("present {}", self.frames), t);
        self.frames += 1;
    }
}

struct App {
    frame: Option<Frame>,
    /// Exit after this many frames (for screenshots and CI).
    max_frames: Option<u64>,
    layout: Option<Distribution>,
    error: Option<String>,
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.frame.is_some() {
            return;
        }
        match Frame::new(event_loop, event_loop.owned_display_handle(), self.layout) {
            Ok(f) => {
                if let Some(e) = &f.simtlab_error {
                    eprintln!("simtlab could not start on the app's device: {e}");
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
            WindowEvent::RedrawRequested => {
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
    let (mut max_frames, mut layout) = (None, None);
    let usage = "usage: embed_overlay [--frames N] [--layout one-long|sorted|random]";
    while let Some(a) = args.next() {
        match a.as_str() {
            "--frames" => max_frames = args.next().and_then(|n| n.parse().ok()),
            "--layout" => {
                layout = match args.next().as_deref() {
                    Some("one-long") => Some(Distribution::OneLong),
                    Some("sorted") => Some(Distribution::Sorted),
                    Some("random") => Some(Distribution::Random),
                    _ => {
                        eprintln!("{usage}");
                        std::process::exit(2);
                    }
                }
            }
            other => {
                eprintln!("unknown argument {other}; {usage}");
                std::process::exit(2);
            }
        }
    }
    let event_loop = EventLoop::new().expect("an event loop (is DISPLAY set?)");
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut app = App { frame: None, max_frames, layout, error: None };
    if let Err(e) = event_loop.run_app(&mut app) {
        eprintln!("event loop: {e}");
        std::process::exit(1);
    }
    if let Some(e) = app.error {
        eprintln!("could not start: {e}");
        std::process::exit(1);
    }
}
