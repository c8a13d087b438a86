//! One error type for the whole library. Every variant says what was wrong and what to do.

use std::path::PathBuf;

/// `std::result::Result` with simtlab's [`Error`] as the default error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every failure the library reports. Match on the variant to react (for example retry with a
/// smaller size on [`Error::Limit`]); `Display` gives a message that says what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A WGSL file failed preprocessing or naga validation.
    #[error("{file}:{line}:{column}: {message}")]
    Shader {
        /// Path of the WGSL file under `shaders/` (or the name it was given), after mapping
        /// through `#import`s back to the file that holds the fault.
        file: String,
        /// 1-based line in `file`; 0 when the location is unknown.
        line: usize,
        /// 1-based column in `line`; 0 when unknown.
        column: usize,
        /// The preprocessor's or naga's message.
        message: String,
    },

    /// A request exceeds a device or model limit.
    #[error("{what}: {requested} exceeds the limit {limit}; {hint}")]
    Limit {
        /// The quantity that is too large (for example "threads per block").
        what: String,
        /// The value asked for, in the unit of `what`.
        requested: u64,
        /// The largest value allowed, in the same unit.
        limit: u64,
        /// Which option to lower or what to change.
        hint: String,
    },

    /// No adapter matched the user's choice.
    #[error("no GPU adapter matches: {wanted}. Adapters on this machine: {available}. {hint}")]
    NoAdapter {
        /// The adapter name and backend that were asked for.
        wanted: String,
        /// The adapters wgpu found, as names with their backends.
        available: String,
        /// Which fields choose the adapter ([`crate::gpu::GpuOptions`]' `adapter` and `backend`).
        hint: String,
    },

    /// The device lacks something a run needs.
    #[error("{what} is not supported on {adapter}; {hint}")]
    Unsupported {
        /// The missing feature, limit or capability.
        what: String,
        /// The adapter that lacks it.
        adapter: String,
        /// What to use or change instead.
        hint: String,
    },

    /// The GPU did not finish in time or reported an abort.
    #[error("{what} did not finish within {} s; {hint}", format_limit(*seconds))]
    Timeout {
        /// The run or wait that did not finish.
        what: String,
        /// The time limit that was exceeded, in seconds.
        seconds: f64,
        /// Why it may have stopped (for example the abort reason) and what to change.
        hint: String,
    },

    /// wgpu reported an error (validation, out of memory, device lost); `source` is wgpu's own
    /// error where there is one.
    #[error("GPU error in {context}: {source}")]
    Gpu {
        /// What simtlab was doing when the error came (creating a buffer, a dispatch, ...).
        context: String,
        /// wgpu's error, or a message where wgpu gave none.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },

    /// A GPU result differs from the CPU reference.
    #[error("{failed} of {total} configuration(s) differ from the CPU reference; {first}")]
    CheckFailed {
        /// How many configurations failed their check.
        failed: usize,
        /// How many configurations were checked.
        total: usize,
        /// The first failing configuration and its first mismatch.
        first: String,
    },

    /// Bad parameters from the user.
    #[error("invalid {what}: {message}")]
    Invalid {
        /// The parameter or input that is wrong.
        what: String,
        /// What is wrong with it and what is allowed.
        message: String,
    },

    /// The user interrupted a run; `kept` says what was kept and how to go on.
    #[error("{what} was interrupted; {kept}")]
    Cancelled {
        /// The run that was interrupted.
        what: String,
        /// What was kept (files, finished points) and how to resume.
        kept: String,
    },

    /// A workload name or parameter that does not exist or does not fit its type.
    #[error("{}{message}", if workload.is_empty() { String::new() } else { format!("workload '{workload}': ") })]
    InvalidParameter {
        /// The workload's registry name; empty when the name itself was not found.
        workload: String,
        /// What is wrong (unknown name or parameter, value of the wrong type) and what exists.
        message: String,
    },

    /// A file could not be read or parsed.
    #[error("{path}: {message}")]
    File {
        /// The file that failed.
        path: PathBuf,
        /// Why it could not be read or parsed.
        message: String,
    },

    /// The operating system refused a read, write or rename.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
}

/// Seconds as given (0.01 stays 0.01, 60 stays 60), not rounded to a misleading "0.0".
fn format_limit(seconds: f64) -> String {
    let s = format!("{seconds:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl Error {
    /// An [`Error::Invalid`]: `what` is the bad parameter or input, `message` what is wrong with it.
    pub fn invalid(what: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid { what: what.into(), message: message.into() }
    }

    /// A GPU error in `context`, keeping wgpu's error (or a message) as the source.
    pub fn gpu(context: impl Into<String>, source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>) -> Self {
        Error::Gpu { context: context.into(), source: source.into() }
    }

    /// An [`Error::Io`] on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}
