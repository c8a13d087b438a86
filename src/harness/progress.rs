//! Progress bars for long sweeps; silent when stderr is not a terminal (CI logs stay clean).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

pub struct Progress(ProgressBar);

impl Progress {
    pub fn new(total: u64, what: &str) -> Self {
        let bar = if std::io::stderr().is_terminal() { ProgressBar::new(total) } else { ProgressBar::hidden() };
        bar.set_style(
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg} (eta {eta})")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_prefix(what.to_string());
        Progress(bar)
    }

    /// Moves one step on, showing what runs next.
    pub fn step(&self, message: impl Into<String>) {
        self.0.set_message(message.into());
        self.0.inc(1);
    }

    pub fn message(&self, message: impl Into<String>) {
        self.0.set_message(message.into());
    }

    /// Prints a line above the bar (or plainly when hidden).
    pub fn println(&self, line: impl AsRef<str>) {
        if self.0.is_hidden() {
            eprintln!("{}", line.as_ref());
        } else {
            self.0.println(line.as_ref());
        }
    }

    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}
