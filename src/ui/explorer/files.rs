//! Runs you keep: save and reopen (record files), a baseline to compare with, CSV and PNG.
//!
//! Each file's bytes are made here once ([`Explorer::run_json`], [`Explorer::run_csv`],
//! [`Explorer::run_pngs`]) and a file's text is read here once ([`Explorer::open_text`]); only
//! how files travel differs. On the desktop they are written at, and read from, the file
//! field's path; in a browser page they are downloads named after that field, and a file the
//! user picks (the `browser` module).

use std::path::{Path, PathBuf};

use egui::{TextEdit, Ui};

use super::runs::Run;
use super::{plots, Explorer};
use crate::error::Result;
use crate::harness;
use crate::report::png_bytes;

/// A file the explorer makes: its name and its bytes.
#[derive(Clone, Debug)]
pub struct FileOut {
    /// The file's name, without a directory.
    pub name: String,
    /// Its content.
    pub bytes: Vec<u8>,
}

/// What a file button or Ctrl+S asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FileAction {
    /// The run as JSON records.
    Save,
    /// A run file as the current run.
    Open,
    /// A run file as the baseline.
    OpenBaseline,
    /// The records as CSV.
    Csv,
    /// Each plot as PNG.
    Png,
}

impl FileAction {
    /// The extension of the file the action reads or writes.
    fn extension(self) -> &'static str {
        match self {
            FileAction::Save | FileAction::Open | FileAction::OpenBaseline => "json",
            FileAction::Csv => "csv",
            FileAction::Png => "png",
        }
    }
}

impl Explorer {
    /// `file` with its extension replaced by `ext`.
    fn path_with(&self, ext: &str) -> PathBuf {
        Path::new(&self.file).with_extension(ext)
    }

    /// The run as a JSON record file: the CLI's record format, each record noting its run and
    /// point so that [`Explorer::open_text`] rebuilds the run.
    pub fn run_json(&self) -> Result<Vec<u8>> {
        self.run.to_json().map(String::into_bytes)
    }

    /// The run's records as CSV (the CLI's columns).
    pub fn run_csv(&self) -> Vec<u8> {
        harness::records_csv(&self.run.records().cloned().collect::<Vec<_>>()).into_bytes()
    }

    /// Each plot of the run as a PNG named `<stem>-<figure>.png` (the plots on screen).
    pub fn run_pngs(&self, stem: &str) -> Result<Vec<FileOut>> {
        let spec = self.run.sweep.as_deref().and_then(|k| self.specs.iter().find(|s| s.key == k));
        plots::figures(&self.run, spec)
            .iter()
            .map(|figure| Ok(FileOut { name: format!("{stem}-{}.png", figure.id), bytes: png_bytes(figure)? }))
            .collect()
    }

    /// Opens a run file's `text` (saved here or by `simtlab run NAME --json`) as the current
    /// run, and selects its workload; an error names `file`, where the text came from.
    pub fn open_text(&mut self, text: &str, file: &Path) -> Result<()> {
        let run = Run::from_json(text, file)?;
        let name = run.points.first().map_or_else(|| run.workload.clone(), |p| p.workload.clone());
        if self.select_by_name(&run.workload).is_err() {
            // a CLI file names the family, not the workload: its first point's workload then
            let _ = self.select_by_name(&name);
        }
        self.show_settings_of(&run);
        self.run = run;
        self.overlay = None;
        self.select_point(0);
        Ok(())
    }

    /// Sets the editors to what `run` ran (its first point's parameters, its sweep, and its
    /// samples and warm-up where the file says them), so that an opened run is not shown
    /// beside the settings of another.
    fn show_settings_of(&mut self, run: &Run) {
        match run.protocol {
            Some(p) => (self.samples, self.warmup) = (p.samples, p.warmup),
            // a CLI file: each record keeps its samples
            None => {
                if let Some(n) = run.records().next().map(|r| r.stats.samples.len()).filter(|&n| n > 0) {
                    self.samples = n;
                }
            }
        }
        let Some(first) = run.points.first().filter(|p| p.workload == self.workload().name()) else { return };
        *self.params_mut() = first.params.clone();
        let sweep = self.sweep_mut();
        sweep.enabled = run.sweep.is_some();
        let Some(key) = &run.sweep else { return };
        sweep.key = key.clone();
        sweep.points = run.points.len().clamp(2, 12);
        let xs = run.points.iter().filter_map(|p| p.x.as_ref()?.as_f64());
        if let (Some(from), Some(to)) = (xs.clone().reduce(f64::min), xs.reduce(f64::max)) {
            (sweep.from, sweep.to) = (from, to);
        }
    }

    /// Opens a run file's `text` as the baseline the current run is compared with, point by
    /// point.
    pub fn open_baseline_text(&mut self, text: &str, file: &Path) -> Result<()> {
        self.baseline = Some(Run::from_json(text, file)?);
        Ok(())
    }

    /// Saves the run as a JSON record file at `path` ([`Explorer::run_json`]).
    pub fn save(&self, path: &Path) -> Result<()> {
        harness::write_file(path, &self.run_json()?)
    }

    /// Opens the run file at `path` as the current run ([`Explorer::open_text`]).
    pub fn open_file(&mut self, path: &Path) -> Result<()> {
        self.open_text(&read_text(path)?, path)
    }

    /// Opens the run file at `path` as the baseline ([`Explorer::open_baseline_text`]).
    pub fn open_baseline(&mut self, path: &Path) -> Result<()> {
        self.open_baseline_text(&read_text(path)?, path)
    }

    /// Writes the run's records as CSV at `path` ([`Explorer::run_csv`]).
    pub fn export_csv(&self, path: &Path) -> Result<()> {
        harness::write_file(path, &self.run_csv())
    }

    /// Writes each plot of the run as a PNG beside `path`, named after its stem
    /// ([`Explorer::run_pngs`]); returns the files written.
    pub fn export_png(&self, path: &Path) -> Result<Vec<PathBuf>> {
        let stem = path.file_stem().map_or("simtlab".into(), |s| s.to_string_lossy().into_owned());
        let dir = path.parent().unwrap_or(Path::new(""));
        let mut written = Vec::new();
        for file in self.run_pngs(&stem)? {
            let path = dir.join(&file.name);
            harness::write_file(&path, &file.bytes)?;
            written.push(path);
        }
        Ok(written)
    }

    /// Does `action`, reporting the outcome in the status line.
    pub(super) fn file_action(&mut self, action: FileAction) {
        let outcome = self.carry(action);
        self.report(outcome);
    }

    /// `action` on the desktop: files at the file field's path.
    #[cfg(not(target_arch = "wasm32"))]
    fn carry(&mut self, action: FileAction) -> Result<String> {
        let path = self.path_with(action.extension());
        let shown = path.display();
        match action {
            FileAction::Save => self.save(&path).map(|()| format!("saved {shown}")),
            FileAction::Open => self.open_file(&path).map(|()| format!("opened {shown}")),
            FileAction::OpenBaseline => self.open_baseline(&path).map(|()| format!("baseline {shown}")),
            FileAction::Csv => self.export_csv(&path).map(|()| format!("wrote {shown}")),
            FileAction::Png => self.export_png(&path).map(|files| format!("wrote {} PNG file(s) beside {shown}", files.len())),
        }
    }

    /// `action` in a browser page: downloads named after the file field, and a file the user
    /// picks (read later, [`Explorer::poll_upload`]).
    #[cfg(target_arch = "wasm32")]
    fn carry(&mut self, action: FileAction) -> Result<String> {
        use super::browser::download;
        let ext = action.extension();
        let name = self.path_with(ext).file_name().map_or_else(|| format!("simtlab-run.{ext}"), |n| n.to_string_lossy().into_owned());
        match action {
            FileAction::Save => {
                download(&FileOut { name: name.clone(), bytes: self.run_json()? }, "application/json")?;
                Ok(format!("saved {name} (a download)"))
            }
            FileAction::Open | FileAction::OpenBaseline => {
                let baseline = action == FileAction::OpenBaseline;
                self.upload.pick(baseline)?;
                Ok(format!("choose a run file to open{}", if baseline { " as the baseline" } else { "" }))
            }
            FileAction::Csv => {
                download(&FileOut { name: name.clone(), bytes: self.run_csv() }, "text/csv")?;
                Ok(format!("saved {name} (a download)"))
            }
            FileAction::Png => {
                let stem = Path::new(&name).file_stem().map_or("simtlab".into(), |s| s.to_string_lossy().into_owned());
                let files = self.run_pngs(&stem)?;
                for file in &files {
                    download(file, "image/png")?;
                }
                Ok(format!("saved {} PNG file(s) (downloads)", files.len()))
            }
        }
    }

    /// Opens the run file the user picked in the page, once it has been read (called every
    /// frame); `ctx` is asked to repaint when a later one comes in.
    #[cfg(target_arch = "wasm32")]
    pub(super) fn poll_upload(&mut self, ctx: &egui::Context) {
        let Some(picked) = self.upload.poll(ctx) else { return };
        let file = Path::new(&picked.name);
        let outcome = picked.text.and_then(|text| {
            if picked.baseline {
                self.open_baseline_text(&text, file).map(|()| format!("baseline {}", picked.name))
            } else {
                self.open_text(&text, file).map(|()| format!("opened {}", picked.name))
            }
        });
        self.report(outcome);
    }

    /// Saves the run (Ctrl+S), reporting the outcome in the status line.
    pub(super) fn save_to_file(&mut self) {
        self.file_action(FileAction::Save);
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
        ui.horizontal(|ui| {
            let name = ui.label("file");
            ui.add(TextEdit::singleline(&mut self.file).desired_width(ui.available_width())).labelled_by(name.id);
        });
        let has_run = !self.run.points.is_empty();
        let mut action = None;
        ui.horizontal_wrapped(|ui| {
            if ui.add_enabled(has_run, egui::Button::new("Save")).on_hover_text("Ctrl+S: the records as JSON").clicked() {
                action = Some(FileAction::Save);
            }
            if ui.button("Open").clicked() {
                action = Some(FileAction::Open);
            }
            if ui.button("Open as baseline").clicked() {
                action = Some(FileAction::OpenBaseline);
            }
            if self.baseline.is_some() && ui.button("Close baseline").clicked() {
                self.baseline = None;
            }
            if ui.add_enabled(has_run, egui::Button::new("CSV")).on_hover_text("the records as CSV").clicked() {
                action = Some(FileAction::Csv);
            }
            if ui.add_enabled(has_run, egui::Button::new("PNG")).on_hover_text("each plot as a PNG beside the file").clicked() {
                action = Some(FileAction::Png);
            }
        });
        if let Some(action) = action {
            self.file_action(action);
        }
    }
}

/// The text of the file at `path`.
fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| crate::error::Error::io(path, e))
}
