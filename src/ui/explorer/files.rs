//! Runs you keep: save and reopen (record files), a baseline to compare with, CSV and PNG.

use std::path::{Path, PathBuf};

use egui::{TextEdit, Ui};

use super::runs::Run;
use super::{plots, Explorer};
use crate::error::Result;
use crate::harness;
use crate::report::render_png;

impl Explorer {
    /// `file` with its extension replaced by `ext`.
    fn path_with(&self, ext: &str) -> PathBuf {
        Path::new(&self.file).with_extension(ext)
    }

    /// Saves the run as a JSON record file at `path` (the CLI's record format).
    pub fn save(&self, path: &Path) -> Result<()> {
        self.run.save(path)
    }

    /// Opens a run file (saved here or by `simtlab run NAME --json`) as the current run, and
    /// selects its workload.
    pub fn open_file(&mut self, path: &Path) -> Result<()> {
        let run = Run::open(path)?;
        let name = run.points.first().map_or_else(|| run.workload.clone(), |p| p.workload.clone());
        if self.select_by_name(&run.workload).is_err() {
            // a CLI file names the family, not the workload: its first point's workload then
            let _ = self.select_by_name(&name);
        }
        self.run = run;
        self.selected = 0;
        self.overlay = None;
        Ok(())
    }

    /// Opens a run file as the baseline the current run is compared with, point by point.
    pub fn open_baseline(&mut self, path: &Path) -> Result<()> {
        self.baseline = Some(Run::open(path)?);
        Ok(())
    }

    /// Writes the run's records as CSV (the CLI's columns).
    pub fn export_csv(&self, path: &Path) -> Result<()> {
        let records: Vec<_> = self.run.records().cloned().collect();
        harness::write_csv(path, &records)
    }

    /// Writes each plot of the run as a PNG named `<stem>-<workload>-<metric>.png` beside
    /// `path`; returns the files written.
    pub fn export_png(&self, path: &Path) -> Result<Vec<PathBuf>> {
        let spec = self.run.sweep.as_deref().and_then(|k| self.specs.iter().find(|s| s.key == k));
        let stem = path.file_stem().map_or("simtlab".into(), |s| s.to_string_lossy().into_owned());
        let dir = path.parent().unwrap_or(Path::new(""));
        let mut written = Vec::new();
        for figure in plots::figures(&self.run, spec) {
            let file = dir.join(format!("{stem}-{}.png", figure.id));
            render_png(&figure, &file)?;
            written.push(file);
        }
        Ok(written)
    }

    /// Saves to the file field's path (Ctrl+S), reporting the outcome in the status line.
    pub(super) fn save_to_file(&mut self) {
        let path = self.path_with("json");
        self.report(self.save(&path).map(|()| format!("saved {}", path.display())));
    }

    fn report(&mut self, outcome: Result<String>) {
        match outcome {
            Ok(status) => {
                self.status = status;
                self.error = None;
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    /// The file field and the save, open, baseline and export buttons.
    pub(super) fn files_ui(&mut self, ui: &mut Ui) {
        if let Some(why) = super::browser::unavailable(super::browser::FILES) {
            ui.label(why);
            return;
        }
        ui.horizontal(|ui| {
            let name = ui.label("file");
            ui.add(TextEdit::singleline(&mut self.file).desired_width(ui.available_width())).labelled_by(name.id);
        });
        let has_run = !self.run.points.is_empty();
        ui.horizontal_wrapped(|ui| {
            if ui.add_enabled(has_run, egui::Button::new("Save")).on_hover_text("Ctrl+S: the records as JSON").clicked() {
                self.save_to_file();
            }
            if ui.button("Open").clicked() {
                let path = self.path_with("json");
                let outcome = self.open_file(&path).map(|()| format!("opened {}", path.display()));
                self.report(outcome);
            }
            if ui.button("Open as baseline").clicked() {
                let path = self.path_with("json");
                let outcome = self.open_baseline(&path).map(|()| format!("baseline {}", path.display()));
                self.report(outcome);
            }
            if self.baseline.is_some() && ui.button("Close baseline").clicked() {
                self.baseline = None;
            }
            if ui.add_enabled(has_run, egui::Button::new("CSV")).on_hover_text("the records as CSV").clicked() {
                let path = self.path_with("csv");
                let outcome = self.export_csv(&path).map(|()| format!("wrote {}", path.display()));
                self.report(outcome);
            }
            if ui.add_enabled(has_run, egui::Button::new("PNG")).on_hover_text("each plot as a PNG beside the file").clicked() {
                let path = self.path_with("png");
                let outcome = self.export_png(&path).map(|files| format!("wrote {} PNG file(s) beside {}", files.len(), path.display()));
                self.report(outcome);
            }
        });
    }
}
