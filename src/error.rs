//! One error type for the whole library. Every variant says what was wrong and what to do.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A WGSL file failed preprocessing or naga validation.
    #[error("{file}:{line}:{column}: {message}")]
    Shader { file: String, line: usize, column: usize, message: String },

    /// A request exceeds a device or model limit.
    #[error("{what}: {requested} exceeds the limit {limit}; {hint}")]
    Limit { what: String, requested: u64, limit: u64, hint: String },

    /// No adapter matched the user's choice.
    #[error("no GPU adapter matches: {wanted}. Adapters on this machine: {available}. Set --adapter (or WGPU_ADAPTER_NAME) to part of one of these names, and --backend (or WGPU_BACKEND) to its backend")]
    NoAdapter { wanted: String, available: String },

    /// The device lacks something a run needs.
    #[error("{what} is not supported on {adapter}; {hint}")]
    Unsupported { what: String, adapter: String, hint: String },

    /// The GPU did not finish in time or reported an abort.
    #[error("{what} did not finish within {} s; {hint}", format_limit(*seconds))]
    Timeout { what: String, seconds: f64, hint: String },

    /// wgpu reported an error (validation, out of memory, device lost); `source` is wgpu's own
    /// error where there is one.
    #[error("GPU error in {context}: {source}")]
    Gpu {
        context: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },

    /// A GPU result differs from the CPU reference.
    #[error("{failed} of {total} configuration(s) differ from the CPU reference; {first}")]
    CheckFailed { failed: usize, total: usize, first: String },

    /// Bad parameters from the user.
    #[error("invalid {what}: {message}")]
    Invalid { what: String, message: String },

    /// The user interrupted a run; `kept` says what was kept and how to go on.
    #[error("{what} was interrupted; {kept}")]
    Cancelled { what: String, kept: String },

    /// A workload name or parameter that does not exist or does not fit its type.
    #[error("{}{message}", if workload.is_empty() { String::new() } else { format!("workload '{workload}': ") })]
    InvalidParameter { workload: String, message: String },

    /// A file could not be read or parsed.
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },

    #[error("I/O error on {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// Seconds as given (0.01 stays 0.01, 60 stays 60), not rounded to a misleading "0.0".
fn format_limit(seconds: f64) -> String {
    let s = format!("{seconds:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl Error {
    pub fn invalid(what: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid { what: what.into(), message: message.into() }
    }

    /// A GPU error in `context`, keeping wgpu's error (or a message) as the source.
    pub fn gpu(context: impl Into<String>, source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>) -> Self {
        Error::Gpu { context: context.into(), source: source.into() }
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}
