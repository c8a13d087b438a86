//! Shared set-up for the GPU integration tests: the default adapter (lavapipe in CI).

#![allow(dead_code, unreachable_pub, reason = "each test binary uses its own part of these helpers, and no other crate sees them")]

use simtlab::{Gpu, GpuOptions};

pub mod cli;
#[cfg(feature = "gui")]
pub mod explorer;

pub fn gpu() -> Gpu {
    Gpu::new(&GpuOptions::default()).unwrap_or_else(|e| panic!("no usable GPU adapter: {e}"))
}

/// The GPU when it has subgroups. In CI (CI=true) a missing feature fails the test instead of
/// skipping it, so a broken driver install cannot turn the suite green.
pub fn gpu_with_subgroups() -> Option<(Gpu, u32)> {
    let gpu = gpu();
    match gpu.caps().subgroup_size {
        Some(w) => Some((gpu, w)),
        None if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI needs subgroups but {} has none (install mesa-vulkan-drivers)", gpu.adapter_name())
        }
        None => {
            eprintln!("skipped: {} has no subgroups", gpu.adapter_name());
            None
        }
    }
}

/// A fresh, empty directory for one test (`simtlab-<name>-<pid>` under the temp dir).
pub fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("simtlab-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
