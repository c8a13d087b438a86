//! The problem: a flow-shop [`Instance`], a subproblem [`Node`], which [`LowerBound`] to
//! compute, the [`Direction`] a child fixes its job in, and the size limits.

use crate::error::{Error, Result};
use crate::harness::named;

/// Source of the `lb1` kernel (preprocessor directives included).
pub const LB1_WGSL: &str = include_str!("../../../shaders/flowshop/lb1.wgsl");
/// Source of the `lb2` kernel (preprocessor directives included).
pub const LB2_WGSL: &str = include_str!("../../../shaders/flowshop/lb2.wgsl");

/// Largest job count (job indices are stored as `u16`, and child records pack them in u32).
pub const MAX_JOBS: usize = 4096;
/// Largest machine count on the CPU.
pub const MAX_MACHINES: usize = 256;
/// Largest machine count the WGSL kernels accept (they keep a child's heads and tails in
/// private `array<u32, 32>`s).
pub const GPU_MAX_MACHINES: usize = 32;
/// Workgroup size of both kernels.
pub const WORKGROUP_SIZE: u32 = 64;
/// Sum of all processing times must stay below this so every bound fits in a u32
/// (bounds are at most twice that sum).
const MAX_TOTAL_TIME: u64 = 1 << 30;

pub(super) fn check_size(jobs: usize, machines: usize) -> Result<()> {
    if !(1..=MAX_JOBS).contains(&jobs) || !(1..=MAX_MACHINES).contains(&machines) {
        return Err(Error::invalid(
            "instance size",
            format!("{jobs} jobs × {machines} machines; supported: 1..={MAX_JOBS} jobs, 1..={MAX_MACHINES} machines"),
        ));
    }
    Ok(())
}

/// A permutation flow-shop instance.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Instance {
    /// Taillard name (`ta001`) or the file's name.
    pub name: String,
    /// Number of jobs (n).
    pub jobs: usize,
    /// Number of machines (m).
    pub machines: usize,
    /// Generator seed (Taillard) or the file's seed field.
    pub seed: u32,
    /// Processing times, machine-major: `p[i * jobs + j]` is job j on machine i.
    pub p: Vec<u32>,
    /// Best known upper bound (file header, or best known makespan for generated instances).
    pub upper_bound: u32,
    /// Lower bound from the file header / Taillard's table.
    pub lower_bound: u32,
}

impl Instance {
    /// An instance with processing times `p` (machine-major); Err ([`Error::Invalid`]) when the size is outside
    /// 1..=[`MAX_JOBS`] jobs and 1..=[`MAX_MACHINES`] machines, `p` does not hold jobs × machines times, or their sum is too
    /// large for 32-bit bounds.
    pub fn new(
        name: impl Into<String>,
        jobs: usize,
        machines: usize,
        seed: u32,
        p: Vec<u32>,
        upper_bound: u32,
        lower_bound: u32,
    ) -> Result<Self> {
        check_size(jobs, machines)?;
        if p.len() != jobs * machines {
            return Err(Error::invalid(
                "processing times",
                format!("{} values for {jobs} jobs × {machines} machines (expected {})", p.len(), jobs * machines),
            ));
        }
        let total: u64 = p.iter().map(|&v| u64::from(v)).sum();
        if total >= MAX_TOTAL_TIME {
            return Err(Error::invalid(
                "processing times",
                format!("their sum {total} must stay below {MAX_TOTAL_TIME} so bounds fit in 32 bits"),
            ));
        }
        Ok(Self { name: name.into(), jobs, machines, seed, p, upper_bound, lower_bound })
    }

    /// Processing time of `job` on `machine`.
    pub fn time(&self, machine: usize, job: usize) -> u32 {
        self.p[machine * self.jobs + job]
    }
}

/// A subproblem: prefix σ1 (jobs fixed at the start, in order), suffix σ2 (jobs fixed at
/// the end, in order) and the unscheduled rest U.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Jobs fixed at the start, in order.
    pub prefix: Vec<usize>,
    /// Jobs fixed at the end, in order.
    pub suffix: Vec<usize>,
    /// U, increasing job order.
    pub unscheduled: Vec<usize>,
}

impl Node {
    /// Checks that prefix and suffix hold distinct jobs of `0..jobs`.
    pub fn new(jobs: usize, prefix: Vec<usize>, suffix: Vec<usize>) -> Result<Self> {
        let mut seen = vec![false; jobs];
        for &j in prefix.iter().chain(&suffix) {
            if j >= jobs {
                return Err(Error::invalid("node", format!("job {j} does not exist (instance has {jobs} jobs)")));
            }
            if std::mem::replace(&mut seen[j], true) {
                return Err(Error::invalid("node", format!("job {j} is fixed twice")));
            }
        }
        let unscheduled = (0..jobs).filter(|&j| !seen[j]).collect();
        Ok(Self { prefix, suffix, unscheduled })
    }

    /// The root node: nothing fixed, every job unscheduled.
    pub fn root(jobs: usize) -> Self {
        Self { prefix: Vec::new(), suffix: Vec::new(), unscheduled: (0..jobs).collect() }
    }
}

/// Which lower bound to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LowerBound {
    /// One-machine bound, O(m) per child.
    Lb1,
    /// Two-machine Johnson bound over all machine pairs, O(m²n) per child.
    #[default]
    Lb2,
}

named!(LowerBound { Lb1 => "lb1", Lb2 => "lb2" });

impl LowerBound {
    /// WGSL source of the kernel, before preprocessing.
    pub fn wgsl(self) -> &'static str {
        match self {
            LowerBound::Lb1 => LB1_WGSL,
            LowerBound::Lb2 => LB2_WGSL,
        }
    }

    /// Kernel entry point, also the shader file stem under `shaders/flowshop/`.
    pub fn entry_point(self) -> &'static str {
        match self {
            LowerBound::Lb1 => "lb1",
            LowerBound::Lb2 => "lb2",
        }
    }

    /// Storage buffers the one-thread-per-child kernel binds without the probe
    /// (bindings 1..=6, see the [module docs](super)).
    pub fn storage_buffers(self) -> u32 {
        match self {
            LowerBound::Lb1 => 4,
            LowerBound::Lb2 => 6,
        }
    }
}

/// Where a child fixes its job (Lageweg's bidirectional branching).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Appended to the parent's prefix σ1.
    Forward,
    /// Put in front of the parent's suffix σ2.
    Backward,
}
