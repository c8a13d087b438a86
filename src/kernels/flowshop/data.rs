//! What the bounds read: [`BoundData`], an instance flattened for upload, and the kernels'
//! uniform block [`KernelParams`] (bindings in the [module docs](super)).

use super::model::{Instance, GPU_MAX_MACHINES};
use super::{cpu, Pool};
use crate::error::{Error, Result};

/// Instance data the bounds need, flattened for upload (bindings in the [module docs](super)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundData {
    /// Jobs of the instance.
    pub jobs: usize,
    /// Machines of the instance.
    pub machines: usize,
    /// Machine-major processing times, `ptimes[k * jobs + j]` (binding 1).
    pub ptimes: Vec<u32>,
    /// Head of an empty prefix: `min_j Σ_{l<k} p[l][j]` per machine.
    pub min_heads: Vec<u32>,
    /// Tail of an empty suffix: `min_j Σ_{l>k} p[l][j]` per machine.
    pub min_tails: Vec<u32>,
    /// Machine pairs `(u, v)`, u < v, flattened (binding 5), by decreasing LB2 term at the
    /// root (ties: lexicographic).
    pub pairs: Vec<u32>,
    /// `lags[q * jobs + j]` = `Σ_{u<k<v} p[k][j]` for pair q.
    pub lags: Vec<u32>,
    /// `johnson[q * jobs + i]` = i-th job of Johnson's order for pair q.
    pub johnson: Vec<u32>,
    /// What the LB2 kernel reads per pair q and Johnson position i, as one 16-byte record
    /// at `4 * (q * jobs + i)`: `[job j, p[u][j], p[v][j], lags[q][j]]` (binding 6).
    pub sequences: Vec<u32>,
}

impl BoundData {
    /// Flattens `instance` and precomputes the per-machine minima, machine pairs and Johnson orders.
    pub fn new(instance: &Instance) -> Self {
        let (n, m) = (instance.jobs, instance.machines);
        let p = &instance.p;
        let mut min_heads = vec![u32::MAX; m];
        let mut min_tails = vec![u32::MAX; m];
        for j in 0..n {
            let mut before = 0;
            for (k, head) in min_heads.iter_mut().enumerate() {
                *head = (*head).min(before);
                before += p[k * n + j];
            }
            let mut after = 0;
            for (k, tail) in min_tails.iter_mut().enumerate().rev() {
                *tail = (*tail).min(after);
                after += p[k * n + j];
            }
        }

        let pair_count = m * (m.saturating_sub(1)) / 2;
        let mut pairs = Vec::with_capacity(2 * pair_count);
        let mut lags = Vec::with_capacity(pair_count * n);
        let mut johnson = Vec::with_capacity(pair_count * n);
        for u in 0..m {
            for v in u + 1..m {
                pairs.extend([u as u32, v as u32]);
                let lag: Vec<u32> = (0..n).map(|j| (u + 1..v).map(|k| p[k * n + j]).sum()).collect();
                let a = |j: usize| p[u * n + j] + lag[j];
                let b = |j: usize| p[v * n + j] + lag[j];
                // Johnson: a_j < b_j by increasing a_j first, then the rest by decreasing b_j;
                // job index breaks ties so the order is deterministic.
                let (mut first, mut last): (Vec<usize>, Vec<usize>) = (0..n).partition(|&j| a(j) < b(j));
                first.sort_by_key(|&j| (a(j), j));
                last.sort_by_key(|&j| (std::cmp::Reverse(b(j)), j));
                johnson.extend(first.iter().chain(&last).map(|&j| j as u32));
                lags.extend(lag);
            }
        }

        let mut data = Self { jobs: n, machines: m, ptimes: p.clone(), min_heads, min_tails, pairs, lags, johnson, sequences: Vec::new() };
        data.order_pairs_strongest_first();
        data.sequences = Vec::with_capacity(4 * pair_count * n);
        for q in 0..pair_count {
            let (u, v) = (data.pairs[2 * q] as usize, data.pairs[2 * q + 1] as usize);
            for &j in &data.johnson[q * n..(q + 1) * n] {
                let j = j as usize;
                data.sequences.extend([j as u32, p[u * n + j], p[v * n + j], data.lags[q * n + j]]);
            }
        }
        data
    }

    /// The root's node record, `[front, back, bound, perm, heads, tails]`: nothing scheduled,
    /// the identity permutation, the heads and tails of an empty prefix and suffix.
    pub fn root_record(&self) -> Vec<u32> {
        let n = self.jobs as u32;
        let mut record = vec![0, n, 0];
        record.extend(0..n);
        record.extend(self.min_heads.iter().chain(&self.min_tails));
        record
    }

    /// Reorders the pairs (with their lags and Johnson orders) by decreasing LB2 term at
    /// the root, so that a bound cut off at an incumbent (Bounder::bound_below) meets the
    /// strongest pairs first.
    fn order_pairs_strongest_first(&mut self) {
        let n = self.jobs;
        let (f, b) = (&self.min_heads, &self.min_tails);
        let mut order: Vec<usize> = (0..self.pair_count()).collect();
        order.sort_by_cached_key(|&q| (std::cmp::Reverse(cpu::pair_term(self, q, f, b, &|_| true)), q));
        let reorder =
            |words: &[u32], width: usize| -> Vec<u32> { order.iter().flat_map(|&q| &words[q * width..(q + 1) * width]).copied().collect() };
        (self.pairs, self.lags, self.johnson) = (reorder(&self.pairs, 2), reorder(&self.lags, n), reorder(&self.johnson, n));
    }

    pub(crate) fn pair_count(&self) -> usize {
        self.pairs.len() / 2
    }

    /// Processing time of `job` on `machine`.
    pub fn time(&self, machine: usize, job: usize) -> u32 {
        self.ptimes[machine * self.jobs + job]
    }

    /// Fails when the WGSL kernels cannot bound this instance.
    pub fn check_gpu(&self) -> Result<()> {
        if self.machines > GPU_MAX_MACHINES {
            return Err(Error::Limit {
                what: "machines for the flow-shop kernels".into(),
                requested: self.machines as u64,
                limit: GPU_MAX_MACHINES as u64,
                hint: "bound this instance on the CPU (`device=cpu`)".into(),
            });
        }
        Ok(())
    }

    /// The uniform block of both kernels (binding 0) for `pool`, bounds in full.
    pub fn kernel_params(&self, pool: &Pool) -> KernelParams {
        KernelParams::new(self.jobs, self.machines, self.pair_count(), pool, 0)
    }
}

/// Uniform block of the kernels (`struct Params` in WGSL), 32 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelParams {
    /// Jobs of the instance.
    pub jobs: u32,
    /// Machines of the instance.
    pub machines: u32,
    /// Machine pairs LB2 iterates over.
    pub pairs: u32,
    /// Children in the pool (threads of the per-child entry points).
    pub children: u32,
    /// Words per parent record ([`Pool::parent_stride`]).
    pub parent_stride: u32,
    /// Words of a parent's unscheduled bitmask ([`Pool::mask_words`]).
    pub mask_words: u32,
    /// Parents in the pool (threads of the per-parent entry points).
    pub parents: u32,
    /// LB2 stops at the first machine pair that reaches this value (the child is pruned
    /// whatever the other pairs give); 0 computes every bound in full.
    pub prune_at: u32,
}

impl KernelParams {
    /// For an instance of `jobs` × `machines` with `pairs` machine pairs, bounding `pool`.
    pub fn new(jobs: usize, machines: usize, pairs: usize, pool: &Pool, prune_at: u32) -> KernelParams {
        KernelParams {
            jobs: jobs as u32,
            machines: machines as u32,
            pairs: pairs as u32,
            children: pool.child_count() as u32,
            parent_stride: pool.parent_stride() as u32,
            mask_words: pool.mask_words() as u32,
            parents: pool.parent_count() as u32,
            prune_at,
        }
    }

    /// The eight words in WGSL field order, for upload.
    pub fn to_words(self) -> [u32; 8] {
        [self.jobs, self.machines, self.pairs, self.children, self.parent_stride, self.mask_words, self.parents, self.prune_at]
    }
}
