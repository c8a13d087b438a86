//! What a benchmark run will allocate, checked before its inputs are generated: each device
//! buffer against what the adapter can bind, and the host arrays against [`host_limit`]. A run
//! that does not fit is refused with an [`Error::Limit`] naming the field to lower, instead
//! of aborting in an allocation. Every kernel family's `bench` uses it.

use crate::error::{Error, Result};
use crate::gpu::Gpu;

/// Host memory assumed where the machine's cannot be read (`/proc/meminfo`).
pub const FALLBACK_HOST_MEMORY: u64 = 16 << 30;

/// The most host memory one run may plan to allocate: half of the machine's memory.
pub fn host_limit() -> u64 {
    machine_memory().unwrap_or(FALLBACK_HOST_MEMORY) / 2
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn machine_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// The memory a run needs. `option` is the configuration field the user lowers to make it fit,
/// backticked (`` `n` ``), `setting` the run in its fields' terms (`` lbm `n=512` ``).
#[derive(Clone, Debug)]
pub struct Footprint {
    /// The field that sizes the run, backticked (`` `n` ``).
    pub option: String,
    /// The run in the user's terms, for messages.
    pub setting: String,
    /// (label, bytes) of each device buffer.
    pub device: Vec<(&'static str, u64)>,
    /// Bytes of the host arrays the run keeps at once (inputs, reference, read-back results).
    pub host: u64,
}

/// `count` values of `bytes_each`, saturating (sizes come from user input).
pub fn bytes(count: usize, bytes_each: u64) -> u64 {
    (count as u64).saturating_mul(bytes_each)
}

impl Footprint {
    /// An empty footprint for the run `setting`, sized by the field `option`.
    pub fn new(option: impl Into<String>, setting: impl Into<String>) -> Self {
        Footprint { option: option.into(), setting: setting.into(), device: Vec::new(), host: 0 }
    }

    /// Adds a device buffer of `bytes`.
    pub fn device(mut self, label: &'static str, bytes: u64) -> Self {
        self.device.push((label, bytes));
        self
    }

    /// Adds `bytes` of host memory.
    pub fn host(mut self, bytes: u64) -> Self {
        self.host = self.host.saturating_add(bytes);
        self
    }

    /// Refuses the run when a device buffer exceeds the adapter's storage binding (or buffer)
    /// size, or the host arrays exceed [`host_limit`].
    pub fn check(&self, gpu: &Gpu) -> Result<()> {
        let limit = gpu.caps().max_storage_buffer_binding_size.min(gpu.caps().max_buffer_size);
        if let Some(&(label, requested)) = self.device.iter().filter(|(_, b)| *b > limit).max_by_key(|(_, b)| *b) {
            return Err(Error::Limit {
                what: format!("{}: GPU buffer '{label}' (bytes)", self.setting),
                requested,
                limit,
                hint: format!(
                    "{} binds at most {} MiB per storage buffer (max_storage_buffer_binding_size); lower {}",
                    gpu.adapter_name(),
                    limit >> 20,
                    self.option
                ),
            });
        }
        self.check_host()
    }

    /// The host part of [`Footprint::check`] (generators call it: it needs no adapter).
    pub fn check_host(&self) -> Result<()> {
        self.check_host_within(host_limit())
    }

    /// The host part of [`Footprint::check`] against `limit` bytes.
    fn check_host_within(&self, limit: u64) -> Result<()> {
        if self.host > limit {
            return Err(Error::Limit {
                what: format!("{}: host memory (bytes)", self.setting),
                requested: self.host,
                limit,
                hint: format!("a run may use at most half of this machine's memory; lower {}", self.option),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_limit_is_half_the_machine() {
        let limit = host_limit();
        assert!(limit >= 1 << 20, "{limit}");
        if let Some(total) = machine_memory() {
            assert_eq!(limit, total / 2);
        }
    }

    #[test]
    fn host_check_names_the_option() {
        let f = Footprint::new("`n`", "micro `n=4294967295`").host(bytes(u32::MAX as usize, 16));
        let e = f.check_host_within(1 << 30).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, Error::Limit { requested, limit, .. } if requested == 16 * u32::MAX as u64 && limit == 1 << 30), "{text}");
        assert!(text.contains("lower `n`") && text.starts_with("micro `n=4294967295`"), "{text}");
        assert!(Footprint::new("`n`", "micro `n=8`").host(64).check_host_within(1 << 30).is_ok());
        assert_eq!(bytes(usize::MAX, 8), u64::MAX);
    }
}
