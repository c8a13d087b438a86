//! `report merge`: shards from one adapter join with their header kept, missing shards are
//! named, mixed adapters are refused unless allowed, and the output is never one of the inputs.

mod common;

use simtlab::experiments::{self, OutputDir, RunInfo, Scale};
use simtlab::harness::Environment;
use std::path::{Path, PathBuf};

fn info(adapter: &str, index: usize, count: usize) -> RunInfo {
    let environment = Environment {
        adapter: adapter.into(),
        backend: "Vulkan".into(),
        device_type: "Cpu".into(),
        driver: "test".into(),
        subgroup_size: Some(8),
        git_hash: "abc123".into(),
        unix_time: 1,
        min_timed_s: 0.0,
    };
    RunInfo {
        header: vec![
            format!("adapter: {adapter} (Vulkan, Cpu), driver test"),
            "subgroup size: 8".into(),
            "command: simtlab reproduce".into(),
            "git: abc123; unix time 1; 3 s".into(),
            format!("mode: quick; shard {index}/{count}"),
        ],
        environment,
        scale: Scale::Quick,
        paper: "all".into(),
        shard_index: index,
        shard_count: count,
    }
}

/// A shard directory with no outcomes but a full description.
fn shard(root: &Path, name: &str, info: &RunInfo) -> PathBuf {
    let dir = root.join(name);
    OutputDir::open(&dir).unwrap().write(info, &[]).unwrap();
    dir
}

#[test]
fn shards_of_one_adapter_merge_with_their_header_and_name_the_missing_shards() {
    let root = common::scratch("merge-header");
    let a = shard(&root, "a", &info("llvmpipe", 1, 3));
    let c = shard(&root, "c", &info("llvmpipe", 3, 3));
    let (_, header) = experiments::merge_dirs(&[a, c], &root.join("out"), false).unwrap();
    assert!(header.iter().any(|l| l == "adapter: llvmpipe (Vulkan, Cpu), driver test"), "{header:?}");
    assert!(header.iter().any(|l| l == "subgroup size: 8"), "{header:?}");
    assert!(header.iter().any(|l| l.starts_with("git: abc123")), "{header:?}");
    assert!(header.iter().any(|l| l.starts_with("missing shards: 2/3 ")), "{header:?}");
}

#[test]
fn mixed_adapters_are_refused_unless_allowed() {
    let root = common::scratch("merge-mixed");
    let a = shard(&root, "a", &info("llvmpipe", 1, 2));
    let b = shard(&root, "b", &info("NVIDIA H100", 2, 2));
    let err = experiments::merge_dirs(&[a.clone(), b.clone()], &root.join("out"), false).unwrap_err().to_string();
    assert!(err.contains("different adapters") && err.contains("NVIDIA H100") && err.contains("`allow_mixed`"), "{err}");
    let (_, header) = experiments::merge_dirs(&[a, b], &root.join("out"), true).unwrap();
    assert!(header.iter().any(|l| l.starts_with("mixed adapters:") && l.contains("llvmpipe") && l.contains("NVIDIA H100")), "{header:?}");
    assert!(!header.iter().any(|l| l.starts_with("missing shards")), "{header:?}");
}

#[test]
fn the_output_may_not_be_an_input() {
    let root = common::scratch("merge-overwrite");
    let a = shard(&root, "a", &info("llvmpipe", 1, 2));
    let b = shard(&root, "b", &info("llvmpipe", 2, 2));
    let err = experiments::merge_dirs(&[a.clone(), b], &root.join("a/../a"), false).unwrap_err().to_string();
    assert!(err.contains("one of the inputs"), "{err}");
}

#[test]
fn an_output_directory_is_locked_while_in_use_and_a_file_is_refused() {
    let root = common::scratch("merge-lock");
    let first = OutputDir::open(&root.join("r")).unwrap();
    let err = OutputDir::open(&root.join("r")).unwrap_err().to_string();
    assert!(err.contains("another simtlab run"), "{err}");
    drop(first);
    OutputDir::open(&root.join("r")).unwrap();
    std::fs::write(root.join("file"), "x").unwrap();
    assert!(OutputDir::open(&root.join("file")).unwrap_err().to_string().contains("not a directory"));
}

#[test]
fn resume_keeps_only_what_ran_on_the_same_adapter_and_scale() {
    let root = common::scratch("merge-resume");
    let dir = OutputDir::open(&root.join("r")).unwrap();
    let now = info("llvmpipe", 1, 1);
    dir.write(&now, &[]).unwrap();
    let previous = dir.previous().unwrap();
    assert!(experiments::resumable(previous.clone(), &now).unwrap().is_empty());
    let other = info("NVIDIA H100", 1, 1);
    let err = experiments::resumable(previous.clone(), &other).unwrap_err().to_string();
    assert!(err.contains("NVIDIA H100") && err.contains("llvmpipe"), "{err}");
    let full = RunInfo { scale: Scale::Full, ..now };
    assert!(experiments::resumable(previous, &full).unwrap_err().to_string().contains("Full"));
}

#[test]
fn an_input_given_twice_or_runs_of_different_scales_are_refused() {
    let root = common::scratch("merge-twice");
    let a = shard(&root, "a", &info("llvmpipe", 1, 2));
    let err = experiments::merge_dirs(&[a.clone(), root.join("a/../a")], &root.join("out"), false).unwrap_err().to_string();
    assert!(err.contains("given twice"), "{err}");
    let full = shard(&root, "full", &RunInfo { scale: Scale::Full, ..info("llvmpipe", 2, 2) });
    let err = experiments::merge_dirs(&[a, full], &root.join("out"), false).unwrap_err().to_string();
    assert!(err.contains("different scales") && err.contains("Quick") && err.contains("Full"), "{err}");
}
