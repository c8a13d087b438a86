//! The shader's inputs: its compute entry points (from naga) and one spec field per binding
//! the chosen entry point uses, in the syntax of `simtlab profile --bind`. A shader written
//! against the persistent-threads module is read with the module placed, and its fields are
//! the kernel's own bindings (the runtime binds the module's).

use egui::{ComboBox, Grid, RichText, TextEdit, Ui};

use crate::error::{Error, Result};
use crate::gpu::shader::validate;
use crate::profile::{entry_bindings, parse, BindingInfo};
use crate::pt::user::{self, PtShader};
use crate::pt::Tier;

/// Bind groups assumed while reading a kernel on the UI thread (WebGPU's minimum, so every
/// adapter has them); the run checks the device's own limit.
const READ_GROUPS: u32 = 4;

/// One binding of the entry point and the spec typed for it.
#[derive(Clone, Debug, PartialEq)]
pub struct BindingField {
    /// The binding as naga found it.
    pub info: BindingInfo,
    /// Its contents, as `--bind` takes them (`u32:1024:random:1`, `file:PATH`, …).
    pub spec: String,
}

/// A spec that fills `b` for a dispatch of `invocations`: random inputs, zeroed outputs and
/// uniforms, of the binding's scalar type, one element per invocation or the binding's
/// minimum size, whichever is larger (uniforms: exactly their size).
pub fn default_spec(b: &BindingInfo, invocations: u64) -> String {
    let scalar = if b.scalars == [naga::Scalar::F32] { "f32" } else { "u32" };
    let words = b.min_bytes.div_ceil(4).max(1);
    let n = if b.uniform { words } else { words.max(invocations) };
    let fill = if b.writable || b.uniform { "zero" } else { "random:1" };
    format!("{scalar}:{n}:{fill}")
}

/// The entry points of the loaded shader and the fields of the selected one.
#[derive(Debug, Default)]
pub(super) struct Inputs {
    /// Names of the compute entry points, in source order.
    pub entries: Vec<String>,
    /// Index into `entries`.
    selected: usize,
    /// `@workgroup_size` of the selected entry point.
    workgroup_size: [u32; 3],
    pub bindings: Vec<BindingField>,
    /// The selected entry point with the persistent-threads module placed, where it calls
    /// one of the module's functions (then it runs through the runtime, not the profiler).
    pub pt: Option<PtShader>,
}

impl Inputs {
    /// The selected entry point.
    pub(crate) fn entry(&self) -> Option<&str> {
        self.entries.get(self.selected).map(String::as_str)
    }

    /// Invocations in one workgroup of the selected entry point.
    pub(crate) fn threads_per_workgroup(&self) -> u32 {
        self.workgroup_size.iter().product::<u32>().max(1)
    }

    /// Invocations a dispatch of `workgroups` launches.
    pub(crate) fn invocations(&self, workgroups: [u32; 3]) -> u64 {
        workgroups.iter().map(|&w| w as u64).product::<u64>() * self.threads_per_workgroup() as u64
    }

    /// The bindings' names, for messages.
    pub(crate) fn binding_names(&self) -> String {
        let names: Vec<String> = self.bindings.iter().map(|f| format!("{} ({}:{})", f.info.name, f.info.group, f.info.binding)).collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    }

    /// Re-reads the entry points of `source`, keeping the selected one where it still exists.
    pub(crate) fn parse(&mut self, name: &str, source: &str, workgroups: [u32; 3]) -> Result<()> {
        let entries = if user::uses_module(source) {
            user::entry_points(name, source)
        } else {
            parse(name, source).map(|(module, _)| {
                module.entry_points.iter().filter(|e| e.stage == naga::ShaderStage::Compute).map(|e| e.name.clone()).collect()
            })
        };
        let entries = entries.inspect_err(|_| {
            self.entries.clear();
            self.bindings.clear();
            self.pt = None;
        })?;
        let previous = self.entry().map(str::to_string);
        self.entries = entries;
        let entry = previous.filter(|p| self.entries.contains(p)).or_else(|| self.entries.first().cloned());
        match entry {
            Some(entry) => self.select(name, source, &entry, workgroups),
            None => {
                self.bindings.clear();
                Err(Error::invalid("entry point", format!("{name} has no @compute entry point")))
            }
        }
    }

    /// Selects `entry` and lists its bindings: specs already typed for a binding stay, the
    /// others get [`default_spec`].
    pub(crate) fn select(&mut self, name: &str, source: &str, entry: &str, workgroups: [u32; 3]) -> Result<()> {
        let index = self.entries.iter().position(|e| e == entry).ok_or_else(|| {
            Error::invalid("entry point", format!("'{entry}' is not a compute entry point of {name}; it has {}", self.entries.join(", ")))
        })?;
        let pt = if user::uses_module(source) {
            Some(user::shader(name, source, entry, READ_GROUPS)?).filter(|s| s.needs != Tier::Multi)
        } else {
            None
        };
        let found = match &pt {
            Some(shader) => {
                self.workgroup_size = shader.workgroup_size;
                let (module, info) = validate(&shader.source)?;
                let all = entry_bindings(&shader.source.text, &module, &info, entry)?;
                all.into_iter().filter(|b| b.group != shader.group).collect()
            }
            None => {
                let (module, info) = parse(name, source)?;
                let point = module.entry_points.iter().find(|e| e.name == entry).ok_or_else(|| Error::invalid("entry point", entry))?;
                self.workgroup_size = point.workgroup_size;
                entry_bindings(source, &module, &info, entry)?
            }
        };
        self.pt = pt;
        let invocations = self.invocations(workgroups);
        let old = std::mem::take(&mut self.bindings);
        self.bindings = found
            .into_iter()
            .map(|info| {
                let kept = old.iter().find(|f| f.info == info).map(|f| f.spec.clone());
                let spec = kept.unwrap_or_else(|| default_spec(&info, invocations));
                BindingField { info, spec }
            })
            .collect();
        self.selected = index;
        Ok(())
    }

    /// The entry point picker and the binding fields; true when another entry point was picked.
    pub(crate) fn ui(&mut self, ui: &mut Ui, name: &str, source: &str, workgroups: [u32; 3]) -> bool {
        let mut changed = false;
        if self.entries.is_empty() {
            return false;
        }
        let mut selected = self.selected;
        ComboBox::from_label("entry point").selected_text(self.entry().unwrap_or("")).show_ui(ui, |ui| {
            for (i, e) in self.entries.iter().enumerate() {
                ui.selectable_value(&mut selected, i, e);
            }
        });
        if selected != self.selected {
            let entry = self.entries[selected].clone();
            // the entry point comes from the parsed list, so this only fails if the text changed
            changed = self.select(name, source, &entry, workgroups).is_ok();
        }
        ui.horizontal(|ui| {
            ui.label(format!("bindings ({})", self.bindings.len()));
            ui.small("u32:N:seq · u32:N:zero · u32:N:random:SEED · f32:N:zero · f32:N:random:SEED · file:PATH");
        });
        Grid::new("simtlab-shader-bindings").num_columns(2).show(ui, |ui| {
            for f in &mut self.bindings {
                let label = ui.label(RichText::new(format!("{}:{} {}", f.info.group, f.info.binding, f.info.declaration)).monospace());
                let field =
                    TextEdit::singleline(&mut f.spec).desired_width(220.0).id_salt(("simtlab-binding", f.info.group, f.info.binding));
                ui.add(field).labelled_by(label.id);
                ui.end_row();
            }
        });
        if !self.bindings.is_empty()
            && ui.small_button("default specs").on_hover_text("refill every binding for the current workgroups").clicked()
        {
            let invocations = self.invocations(workgroups);
            for f in &mut self.bindings {
                f.spec = default_spec(&f.info, invocations);
            }
        }
        changed
    }
}
