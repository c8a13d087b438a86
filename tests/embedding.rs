//! The library as another app embeds it (`default-features = false`): its dependency tree holds
//! none of the command line's crates nor the papers' side, on any target.
#![cfg(not(target_arch = "wasm32"))]

use std::process::Command;

/// Crates only the binary (`cli`) or the report (`report`) needs.
const NOT_EMBEDDED: &[&str] = &["clap", "indicatif", "plotters", "plotters-backend", "png", "toml"];

/// The package names of `cargo tree` for this package with `features` (normal edges, every
/// target), one per package.
fn dependency_names(features: &[&str]) -> Vec<String> {
    // the cargo that runs the tests; the one that built them where the run does not say
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_string());
    let output = Command::new(&cargo)
        .args(["tree", "-e", "normal", "--target", "all", "--prefix", "none", "--format", "{p}"])
        .args(features)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|e| panic!("could not run {cargo} tree: {e}; this test needs cargo to list the dependencies"));
    assert!(
        output.status.success(),
        "{cargo} tree failed (it needs the registry index, or a filled cache offline): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut names: Vec<String> =
        String::from_utf8_lossy(&output.stdout).lines().filter_map(|line| line.split_whitespace().next().map(str::to_string)).collect();
    names.sort();
    names.dedup();
    assert!(names.iter().any(|n| n == "wgpu"), "cargo tree listed no wgpu: {names:?}");
    names
}

#[test]
fn an_embedding_build_pulls_in_no_command_line_or_report_crates() {
    let names = dependency_names(&["--no-default-features"]);
    let pulled: Vec<&&str> = NOT_EMBEDDED.iter().filter(|c| names.iter().any(|n| n == *c)).collect();
    assert!(pulled.is_empty(), "`default-features = false` still pulls in {pulled:?}");
}

#[test]
fn the_default_build_keeps_the_command_line_and_report_crates() {
    // the check above means something only if the tree does name these crates when they are used
    let names = dependency_names(&[]);
    for c in NOT_EMBEDDED {
        assert!(names.iter().any(|n| n == c), "the default features no longer pull in {c}");
    }
}
