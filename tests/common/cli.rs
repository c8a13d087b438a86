//! Running the `simtlab` binary as a user does, and what a refusal must look like.

use std::process::{Command, Output};

/// The binary, with the adapter choice left to it (no WGPU_* from the environment).
pub fn simtlab() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_simtlab"));
    c.env_remove("WGPU_ADAPTER_NAME").env_remove("WGPU_BACKEND");
    c
}

/// Runs `simtlab ARGS` to the end.
pub fn run(args: &[&str]) -> Output {
    simtlab().args(args).output().expect("simtlab runs")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The command failed with a message naming `needle`, and did not panic.
pub fn assert_refused(out: &Output, needle: &str) {
    let err = text(&out.stderr);
    assert!(!out.status.success(), "accepted: {err}");
    assert!(!err.contains("panicked"), "panicked: {err}");
    assert!(err.contains(needle), "message lacks '{needle}': {err}");
}
