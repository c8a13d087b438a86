//! The occupancy panel: an architecture preset, the launch (threads per block, registers per
//! thread, shared memory per block, or the kernel's own WGSL for the first and last), the
//! calculator's answer and its three curves with the current launch marked.

use egui::{ComboBox, RichText, Slider, Ui};
use egui_plot::{Line, MarkerShape, Plot, PlotPoints, Points};

use crate::occupancy::{
    calculate, kernel_resources, occupancy_curves, Arch, Curve, KernelResources, Launch, Occupancy, OccupancyCurves, ARCHS,
};
use crate::Result;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    arch: &'static str,
    launch: Launch,
}

/// State of the occupancy panel. The calculation and the curves are cached per input, so the
/// panel costs nothing while the inputs stay put.
#[derive(Debug)]
pub struct OccupancyPanel {
    /// The selected architecture preset.
    pub arch: &'static Arch,
    /// Threads per block from the slider (ignored while `use_kernel` is set).
    pub threads_per_block: u32,
    /// Registers per thread from the slider.
    pub registers_per_thread: u32,
    /// Shared memory per block in bytes from the slider (ignored while `use_kernel` is set).
    pub shared_memory_per_block: u32,
    /// A kernel whose WGSL gives threads per block and shared memory, with its name.
    pub kernel: Option<(String, KernelResources)>,
    /// Take threads per block and shared memory from `kernel` instead of the sliders.
    pub use_kernel: bool,
    /// Draw the three occupancy curves below the answer.
    pub show_curves: bool,
    /// Height of each curve plot in points.
    pub plot_height: f32,
    cache: Option<(Key, std::result::Result<Occupancy, String>, Option<OccupancyCurves>)>,
}

impl OccupancyPanel {
    /// A panel on `arch` with the sliders at `launch`, curves shown.
    pub fn new(arch: &'static Arch, launch: Launch) -> OccupancyPanel {
        OccupancyPanel {
            arch,
            threads_per_block: launch.threads_per_block,
            registers_per_thread: launch.registers_per_thread,
            shared_memory_per_block: launch.shared_memory_per_block,
            kernel: None,
            use_kernel: false,
            show_curves: true,
            plot_height: 110.0,
            cache: None,
        }
    }

    /// Reads the workgroup size and workgroup memory of `entry_point` in `wgsl` and uses them
    /// (registers stay the user's: WGSL does not say).
    pub fn set_kernel(&mut self, name: impl Into<String>, wgsl: &str, entry_point: &str) -> Result<()> {
        let resources = kernel_resources(wgsl, entry_point)?;
        self.kernel = Some((name.into(), resources));
        self.use_kernel = true;
        Ok(())
    }

    /// The launch the panel computes for.
    pub fn launch(&self) -> Launch {
        match (&self.kernel, self.use_kernel) {
            (Some((_, k)), true) => k.launch(self.registers_per_thread),
            _ => Launch::new(self.threads_per_block, self.registers_per_thread, self.shared_memory_per_block),
        }
    }

    /// The calculator's answer for the current inputs (cached), or why there is none.
    pub fn result(&mut self) -> std::result::Result<&Occupancy, &str> {
        self.refresh();
        match &self.cache {
            Some((_, Ok(o), _)) => Ok(o),
            Some((_, Err(e), _)) => Err(e.as_str()),
            None => Err("not computed"),
        }
    }

    fn refresh(&mut self) {
        let key = Key { arch: self.arch.name, launch: self.launch() };
        if self.cache.as_ref().is_some_and(|(k, _, _)| *k == key) {
            return;
        }
        let result = calculate(self.arch, key.launch).map_err(|e| e.to_string());
        let curves = occupancy_curves(self.arch, key.launch).ok();
        self.cache = Some((key, result, curves));
    }

    fn inputs(&mut self, ui: &mut Ui) {
        let arch = self.arch;
        ComboBox::from_label("architecture").selected_text(format!("{} — {}", arch.name, arch.device)).show_ui(ui, |ui| {
            for a in ARCHS {
                ui.selectable_value(&mut self.arch, a, format!("{} — {}", a.name, a.device));
            }
        });
        let arch = self.arch;
        self.threads_per_block = self.threads_per_block.clamp(1, arch.max_threads_per_block);
        self.registers_per_thread = self.registers_per_thread.clamp(1, arch.max_registers_per_thread);
        self.shared_memory_per_block = self.shared_memory_per_block.min(arch.max_shared_memory_per_block);
        if let Some((name, k)) = &self.kernel {
            ui.checkbox(
                &mut self.use_kernel,
                format!("from {name}'s WGSL ({} threads, {} B workgroup memory)", k.threads_per_workgroup, k.workgroup_memory_bytes),
            );
        }
        let from_kernel = self.use_kernel && self.kernel.is_some();
        ui.add_enabled(!from_kernel, Slider::new(&mut self.threads_per_block, 1..=arch.max_threads_per_block).text("threads per block"));
        ui.add(Slider::new(&mut self.registers_per_thread, 1..=arch.max_registers_per_thread).text("registers per thread"));
        ui.add_enabled(
            !from_kernel,
            Slider::new(&mut self.shared_memory_per_block, 0..=arch.max_shared_memory_per_block).text("shared memory per block (bytes)"),
        );
    }

    fn outputs(&mut self, ui: &mut Ui) {
        let arch = self.arch;
        let sm = arch.sm_word();
        let warp = arch.warp_word();
        let launch = self.launch();
        match self.result() {
            Ok(o) => {
                ui.label(RichText::new(format!("active blocks per {sm}: {}", o.active_blocks_per_sm)).strong());
                ui.label(format!("active {warp}s per {sm}: {} of {}", o.active_warps_per_sm, o.max_warps_per_sm));
                ui.label(RichText::new(format!("occupancy: {:.0} %", o.occupancy * 100.0)).strong());
                ui.label(format!("limited by: {}", o.limited_by.as_str().replace('_', " ")));
                let l = o.block_limits;
                ui.small(format!(
                    "blocks allowed by {warp}s {} · by block slots {} · by registers {} · by shared memory {}",
                    l.warps, l.blocks, l.registers, l.shared_memory
                ));
                if let Some(reason) = &o.reason {
                    ui.colored_label(ui.visuals().warn_fg_color, reason);
                }
            }
            Err(e) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("no occupancy for {launch:?}: {e}"));
            }
        }
    }

    fn curve_plot(ui: &mut Ui, curve: &Curve, id: &str, height: f32, width: f32) {
        ui.vertical(|ui| {
            ui.set_width(width);
            ui.small(curve.axis.label());
            let points: Vec<[f64; 2]> = curve.points.iter().map(|&(x, y)| [x as f64, y * 100.0]).collect();
            let current = [curve.current.0 as f64, curve.current.1 * 100.0];
            Plot::new(("simtlab-occupancy-curve", id))
                .height(height)
                .width(width)
                .allow_zoom(false)
                .allow_drag(false)
                .allow_scroll(false)
                .allow_boxed_zoom(false)
                .include_y(0.0)
                .include_y(100.0)
                .show_x(true)
                .show_y(true)
                .y_axis_label("occupancy %")
                .show(ui, move |plot| {
                    plot.line(Line::new("occupancy", PlotPoints::from(points)).width(1.5));
                    plot.points(Points::new("this launch", vec![current]).radius(4.0).shape(MarkerShape::Circle).filled(true));
                });
        });
    }

    /// Inputs, answer and (when `show_curves`) the three curves side by side.
    pub fn ui(&mut self, ui: &mut Ui) {
        ui.push_id("simtlab-occupancy", |ui| {
            self.inputs(ui);
            ui.separator();
            self.outputs(ui);
            if self.show_curves {
                self.refresh();
                if let Some((_, _, Some(c))) = &self.cache {
                    let width = ((ui.available_width() - 2.0 * ui.spacing().item_spacing.x) / 3.0).max(80.0);
                    let height = self.plot_height;
                    ui.horizontal(|ui| {
                        Self::curve_plot(ui, &c.threads_per_block, "threads", height, width);
                        Self::curve_plot(ui, &c.registers_per_thread, "registers", height, width);
                        Self::curve_plot(ui, &c.shared_memory_per_block, "shared", height, width);
                    });
                }
            }
        });
    }
}
