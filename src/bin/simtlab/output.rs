//! Where a benchmark's records go: the table, `--json`, `--csv`.

use clap::Args;
use simtlab::harness::{self, Protocol, Record};
use simtlab::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set when the records go to standard output (`--json -` or `--csv -`): every line meant for
/// people then goes to standard error, so that standard output stays machine-readable.
static RECORDS_ON_STDOUT: AtomicBool = AtomicBool::new(false);

/// Notes from the command line whether `--json -` or `--csv -` was given.
pub fn note_record_destination(args: &[String]) {
    let dash = args.windows(2).any(|w| matches!(w[0].as_str(), "--json" | "--csv") && w[1] == "-")
        || args.iter().any(|a| a == "--json=-" || a == "--csv=-");
    RECORDS_ON_STDOUT.store(dash, Ordering::Relaxed);
}

pub fn records_on_stdout() -> bool {
    RECORDS_ON_STDOUT.load(Ordering::Relaxed)
}

/// `print!` for lines meant for people: standard error when the records use standard output.
macro_rules! say {
    ($($arg:tt)*) => {
        if $crate::output::records_on_stdout() { eprint!($($arg)*) } else { print!($($arg)*) }
    };
}

/// `println!` for lines meant for people ([`say!`]).
macro_rules! sayln {
    ($($arg:tt)*) => {
        if $crate::output::records_on_stdout() { eprintln!($($arg)*) } else { println!($($arg)*) }
    };
}

pub(crate) use {say, sayln};

#[derive(Args, Clone, Debug)]
pub struct Output {
    /// Timed samples per configuration (after warm-up).
    #[arg(long, default_value_t = 10)]
    pub samples: usize,
    /// Untimed warm-up runs per configuration.
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// Write all records as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write all records as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

impl Output {
    /// The timing protocol these options ask for.
    pub fn protocol(&self) -> Protocol {
        Protocol { warmup: self.warmup, samples: self.samples }
    }
}

/// Prints a command's text: on standard output, or on standard error when its `--json` goes
/// there (`--json -`), so that standard output stays machine-readable.
pub fn print_text(text: &str, json: Option<&PathBuf>) {
    if json.is_some_and(|p| p.as_os_str() == "-") {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
}

/// `value` as pretty-printed JSON.
pub fn json_text<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string_pretty(value).map_err(|e| Error::invalid("JSON output", e.to_string()))
}

/// Writes `value` as JSON at `path` (`-`: standard output), saying where a file went.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    let json = json_text(value)?;
    harness::write_file(path, json.as_bytes())?;
    if path.as_os_str() != "-" {
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// Prints the records, writes the files asked for, and fails if any check failed.
/// With `--json -` or `--csv -` the records go to standard output and the table to standard
/// error, so that the output stays machine-readable.
pub fn finish(records: &[Record], output: &Output) -> Result<()> {
    finish_files(records, output.json.as_ref(), output.csv.as_ref())
}

/// [`finish`] for a command whose files are its only output options.
pub fn finish_files(records: &[Record], json: Option<&PathBuf>, csv: Option<&PathBuf>) -> Result<()> {
    let to_stdout = |p: Option<&PathBuf>| p.is_some_and(|p| p.as_os_str() == "-");
    if to_stdout(json) && to_stdout(csv) {
        return Err(Error::invalid("output", "--json - and --csv - both ask for standard output; give one of them a file"));
    }
    if to_stdout(json) || to_stdout(csv) {
        eprint!("{}", harness::table(records));
    } else {
        print!("{}", harness::table(records));
    }
    if let Some(p) = json {
        harness::write_json(p, records)?;
        if !to_stdout(json) {
            eprintln!("wrote {}", p.display());
        }
    }
    if let Some(p) = csv {
        harness::write_csv(p, records)?;
        if !to_stdout(csv) {
            eprintln!("wrote {}", p.display());
        }
    }
    let failed: Vec<&Record> = records.iter().filter(|r| !r.check.passed).collect();
    if let Some(r) = failed.first() {
        return Err(Error::CheckFailed {
            failed: failed.len(),
            total: records.len(),
            first: format!("{} {}: {}", r.kernel, r.variant, r.check.first_mismatch.as_deref().unwrap_or("see the table")),
        });
    }
    Ok(())
}

/// Draws the library's progress events as bars on standard error when it is a terminal;
/// otherwise only the lines meant for people are printed (CI logs stay clean).
pub struct TerminalProgress {
    bars: std::sync::Mutex<std::collections::HashMap<u64, indicatif::ProgressBar>>,
    terminal: bool,
}

impl TerminalProgress {
    /// Installs it for every sweep of this process.
    pub fn install() {
        use std::io::IsTerminal;
        let reporter = TerminalProgress { bars: Default::default(), terminal: std::io::stderr().is_terminal() };
        harness::progress::set_reporter(Some(std::sync::Arc::new(reporter)));
    }
}

impl harness::progress::Reporter for TerminalProgress {
    fn report(&self, sweep: u64, event: harness::progress::Event) {
        use harness::progress::Event;
        let mut bars = self.bars.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            Event::Start { what, total } => {
                // a sweep of no known length (a search's heartbeat) only has lines
                let bar = if self.terminal && total > 0 { indicatif::ProgressBar::new(total) } else { indicatif::ProgressBar::hidden() };
                if let Ok(style) = indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg} (eta {eta})") {
                    bar.set_style(style.progress_chars("=> "));
                }
                bar.set_prefix(what);
                bars.insert(sweep, bar);
            }
            Event::Step { next } => {
                if let Some(bar) = bars.get(&sweep) {
                    bar.set_message(next);
                    bar.inc(1);
                }
            }
            Event::Message { text } => {
                if let Some(bar) = bars.get(&sweep) {
                    bar.set_message(text);
                }
            }
            Event::Line { text } => match bars.get(&sweep).filter(|b| !b.is_hidden()) {
                Some(bar) => bar.println(text),
                None => eprintln!("{text}"),
            },
            Event::Finish => {
                if let Some(bar) = bars.remove(&sweep) {
                    bar.finish_and_clear();
                }
            }
        }
    }
}
