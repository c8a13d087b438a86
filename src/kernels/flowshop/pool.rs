//! A [`Pool`] of child nodes in the flat layout the kernels read, and the [`Bounder`] that
//! bounds it.

use super::model::{Direction, Node};
use super::{cpu, BoundData};
use crate::error::{Error, Result};

/// Bit of a child's job word (binding 3) that marks a [`Direction::Backward`] child.
pub const BACKWARD_CHILD: u32 = 1 << 31;

/// A batch of child nodes to bound, in the flat layout the kernels read (bindings 2, 3 and,
/// for the prefix-walking kernels, 10).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pool {
    jobs: usize,
    machines: usize,
    parents: Vec<u32>,
    children: Vec<u32>,
    /// Per parent `[length, jobs of the prefix in order, 0 …]`, `jobs + 1` words; length
    /// [`UNKNOWN_PREFIX`] for parents added by heads alone ([`Pool::add_parent`]).
    prefixes: Vec<u32>,
}

/// Prefix length of a parent added without its prefix.
pub const UNKNOWN_PREFIX: u32 = u32::MAX;

impl Pool {
    /// An empty pool for an instance of `jobs` × `machines`.
    pub fn new(jobs: usize, machines: usize) -> Self {
        Self { jobs, machines, parents: Vec::new(), children: Vec::new(), prefixes: Vec::new() }
    }

    /// An empty pool for the instance of `data`.
    pub fn for_data(data: &BoundData) -> Self {
        Self::new(data.jobs, data.machines)
    }

    /// Removes every parent and child, keeping the allocations.
    pub fn clear(&mut self) {
        self.parents.clear();
        self.children.clear();
        self.prefixes.clear();
    }

    /// Jobs of the instance.
    pub fn jobs(&self) -> usize {
        self.jobs
    }

    /// Machines of the instance.
    pub fn machines(&self) -> usize {
        self.machines
    }

    /// u32 words of the unscheduled bitmask, `ceil(jobs / 32)`.
    pub fn mask_words(&self) -> usize {
        self.jobs.div_ceil(32)
    }

    /// u32 words per parent record: `3 * machines + mask_words`.
    pub fn parent_stride(&self) -> usize {
        3 * self.machines + self.mask_words()
    }

    /// Parent records in the pool.
    pub fn parent_count(&self) -> usize {
        self.parents.len() / self.parent_stride()
    }

    /// Children to bound (each one bound).
    pub fn child_count(&self) -> usize {
        self.children.len() / 2
    }

    /// Parent records, `parent_count() * parent_stride()` words (binding 2).
    pub fn parents(&self) -> &[u32] {
        &self.parents
    }

    /// `(parent, job)` per child, `2 * child_count()` words (binding 3).
    pub fn children(&self) -> &[u32] {
        &self.children
    }

    /// Prefix records, `parent_count() * (jobs + 1)` words (binding 10).
    pub fn prefixes(&self) -> &[u32] {
        &self.prefixes
    }

    /// The jobs of `parent`'s prefix, None when it was added without them.
    pub fn prefix(&self, parent: usize) -> Option<&[u32]> {
        let record = self.prefix_record(parent);
        (record[0] != UNKNOWN_PREFIX).then(|| &record[1..1 + record[0] as usize])
    }

    fn prefix_record(&self, parent: usize) -> &[u32] {
        &self.prefixes[parent * (self.jobs + 1)..(parent + 1) * (self.jobs + 1)]
    }

    /// Appends `node` as a parent, its heads and tails computed from its prefix and suffix,
    /// its prefix kept for the prefix-walking kernels. Returns the parent index.
    pub fn add_node(&mut self, node: &Node, data: &BoundData) -> Result<u32> {
        if data.machines != self.machines || data.jobs != self.jobs {
            return Err(Error::invalid("pool parent", "the data is not of the pool's instance size"));
        }
        let node = Node::new(self.jobs, node.prefix.clone(), node.suffix.clone())?;
        let prefix: Vec<u32> = node.prefix.iter().map(|&j| j as u32).collect();
        self.push_parent(
            &cpu::heads(data, &node.prefix),
            &cpu::tails(data, &node.suffix),
            node.unscheduled.iter().copied(),
            Some(&prefix),
            data,
        );
        Ok((self.parent_count() - 1) as u32)
    }

    /// Appends a parent: its heads and tails as the bounds define them ([`cpu::heads`],
    /// [`cpu::tails`]; zero heads also serve an empty prefix with forward children only),
    /// and its unscheduled jobs. Returns the parent index.
    pub fn add_parent(&mut self, heads: &[u32], tails: &[u32], unscheduled: &[usize], data: &BoundData) -> Result<u32> {
        let m = self.machines;
        if heads.len() != m || tails.len() != m || data.machines != m || data.jobs != self.jobs {
            return Err(Error::invalid(
                "pool parent",
                format!("heads/tails need {m} values (got {}/{}) and data of the pool's size", heads.len(), tails.len()),
            ));
        }
        if let Some(&j) = unscheduled.iter().find(|&&j| j >= self.jobs) {
            return Err(Error::invalid("pool parent", format!("job {j} does not exist ({} jobs)", self.jobs)));
        }
        self.push_parent(heads, tails, unscheduled.iter().copied(), None, data);
        Ok((self.parent_count() - 1) as u32)
    }

    /// Appends child `(parent, job)`: the parent with `job` appended to its prefix.
    pub fn add_child(&mut self, parent: u32, job: usize) -> Result<()> {
        self.add_child_in(parent, job, Direction::Forward)
    }

    /// Appends child `(parent, job)` branching in `direction`: `job` appended to the
    /// parent's prefix, or put in front of its suffix.
    pub fn add_child_in(&mut self, parent: u32, job: usize, direction: Direction) -> Result<()> {
        let stride = self.parent_stride();
        let mask_at = parent as usize * stride + 3 * self.machines + job / 32;
        let unscheduled = parent < self.parent_count() as u32 && job < self.jobs && (self.parents[mask_at] >> (job % 32)) & 1 == 1;
        if !unscheduled {
            return Err(Error::invalid("pool child", format!("job {job} is not unscheduled in parent {parent}")));
        }
        self.push_child_unchecked(parent, job, direction);
        Ok(())
    }

    /// Appends parent `parent` of `from` (a pool of the same instance) with its record and
    /// prefix. Returns its index here.
    pub(super) fn copy_parent(&mut self, from: &Pool, parent: usize) -> u32 {
        self.parents.extend_from_slice(from.record(parent));
        self.prefixes.extend_from_slice(from.prefix_record(parent));
        (self.parent_count() - 1) as u32
    }

    pub(super) fn push_parent(
        &mut self,
        heads: &[u32],
        tails: &[u32],
        unscheduled: impl Iterator<Item = usize>,
        prefix: Option<&[u32]>,
        data: &BoundData,
    ) {
        let (n, m) = (self.jobs, self.machines);
        let at = self.prefixes.len();
        self.prefixes.resize(at + n + 1, 0);
        match prefix {
            Some(jobs) => {
                self.prefixes[at] = jobs.len() as u32;
                self.prefixes[at + 1..at + 1 + jobs.len()].copy_from_slice(jobs);
            }
            None => self.prefixes[at] = UNKNOWN_PREFIX,
        }
        self.parents.extend_from_slice(heads);
        self.parents.extend_from_slice(tails);
        let remaining_at = self.parents.len();
        self.parents.resize(remaining_at + m + self.mask_words(), 0);
        for j in unscheduled {
            for k in 0..m {
                self.parents[remaining_at + k] += data.ptimes[k * n + j];
            }
            self.parents[remaining_at + m + j / 32] |= 1 << (j % 32);
        }
    }

    pub(super) fn push_child_unchecked(&mut self, parent: u32, job: usize, direction: Direction) {
        let flag = if direction == Direction::Backward { BACKWARD_CHILD } else { 0 };
        self.children.extend([parent, job as u32 | flag]);
    }

    /// `(parent index, job)` of child `i`.
    pub fn child(&self, i: usize) -> (usize, usize) {
        (self.children[2 * i] as usize, (self.children[2 * i + 1] & !BACKWARD_CHILD) as usize)
    }

    /// Where child `i` puts its job.
    pub fn direction(&self, i: usize) -> Direction {
        if self.children[2 * i + 1] & BACKWARD_CHILD != 0 {
            Direction::Backward
        } else {
            Direction::Forward
        }
    }

    fn record(&self, parent: usize) -> &[u32] {
        let stride = self.parent_stride();
        &self.parents[parent * stride..(parent + 1) * stride]
    }

    /// Heads of `parent`, one per machine, as the bounds define them ([`cpu::heads`]).
    pub fn heads(&self, parent: usize) -> &[u32] {
        &self.record(parent)[..self.machines]
    }

    /// Tails of `parent`, one per machine, as the bounds define them ([`cpu::tails`]).
    pub fn tails(&self, parent: usize) -> &[u32] {
        &self.record(parent)[self.machines..2 * self.machines]
    }

    /// Per machine, the summed processing times of the parent's unscheduled jobs.
    pub fn remaining(&self, parent: usize) -> &[u32] {
        &self.record(parent)[2 * self.machines..3 * self.machines]
    }

    /// Bitmask of the parent's unscheduled jobs (bit j of word j / 32).
    pub fn unscheduled_mask(&self, parent: usize) -> &[u32] {
        &self.record(parent)[3 * self.machines..]
    }
}

/// Bounds a pool. The driver calls it once per iteration with a fresh pool of children
/// (never leaves) and expects exactly `pool.child_count()` bounds, in child order.
/// A GPU implementation uploads [`Pool::parents`] / [`Pool::children`] (and, once, the
/// [`BoundData`] arrays) and runs the `lb1` / `lb2` kernel; [`cpu::lb1`] / [`cpu::lb2`]
/// compute the same values bit for bit on the CPU.
pub trait Bounder {
    /// One lower bound per child of `pool`, in child order; Err when bounding fails (on the GPU: a device error or
    /// timeout).
    fn bound(&mut self, pool: &Pool) -> Result<Vec<u32>>;

    /// As [`Bounder::bound`] for a search whose incumbent is `incumbent`: a bound that
    /// reaches it may be any value ≥ `incumbent` (the child is pruned either way), which lets
    /// LB2 stop early. Bounds below `incumbent` are exact.
    fn bound_below(&mut self, pool: &Pool, incumbent: u32) -> Result<Vec<u32>> {
        let _ = incumbent;
        self.bound(pool)
    }

    /// Starts [`Bounder::bound_below`] on `pool`. A bounder that works in the background
    /// (the GPU) returns [`Started::Running`] at once and hands the bounds to the next
    /// [`Bounder::finish`], so the caller can prepare the next pool meanwhile; `pool` may be
    /// changed as soon as this returns. The default bounds at once.
    fn start(&mut self, pool: &Pool, incumbent: u32) -> Result<Started> {
        Ok(Started::Done(self.bound_below(pool, incumbent)?))
    }

    /// The bounds of the pool last started with [`Started::Running`].
    fn finish(&mut self) -> Result<Vec<u32>> {
        Err(Error::invalid("bounder", "finish() without a running start()"))
    }
}

/// What [`Bounder::start`] did.
#[derive(Debug)]
pub enum Started {
    /// Bounded already: the bounds, in child order.
    Done(Vec<u32>),
    /// Running; [`Bounder::finish`] returns the bounds.
    Running,
}

impl Started {
    /// The bounds, waiting for `bounder` if they are still running.
    pub fn bounds(self, bounder: &mut dyn Bounder) -> Result<Vec<u32>> {
        match self {
            Started::Done(bounds) => Ok(bounds),
            Started::Running => bounder.finish(),
        }
    }
}
