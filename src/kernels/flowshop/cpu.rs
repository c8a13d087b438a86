//! CPU reference: heads, tails, LB1, LB2, makespan, and a
//! multi-threaded [`Bounder`]. [`lb1`] and [`lb2`] read a [`Pool`] exactly as the WGSL
//! kernels of the same names do, so GPU results can be compared bit for bit.

use super::{BoundData, Bounder, Direction, Instance, LowerBound, Node, Pool, MAX_MACHINES};
use crate::error::{Error, Result};

/// Completion times of `prefix` on each machine; for an empty prefix, the smallest
/// possible start `min_j Σ_{l<k} p[l][j]`.
pub fn heads(data: &BoundData, prefix: &[usize]) -> Vec<u32> {
    if prefix.is_empty() {
        return data.min_heads.clone();
    }
    let mut f = vec![0u32; data.machines];
    for &j in prefix {
        extend_heads(data, &mut f, j);
    }
    f
}

/// Time `suffix` needs after machine k becomes free for it (mirror of [`heads`]); for an
/// empty suffix, `min_j Σ_{l>k} p[l][j]`.
pub fn tails(data: &BoundData, suffix: &[usize]) -> Vec<u32> {
    if suffix.is_empty() {
        return data.min_tails.clone();
    }
    let mut b = vec![0u32; data.machines];
    for &j in suffix.iter().rev() {
        extend_tails(data, &mut b, j);
    }
    b
}

/// Heads after appending `job` to the prefix whose heads are `heads` (updated in place).
pub(super) fn extend_heads(data: &BoundData, heads: &mut [u32], job: usize) {
    let mut finish = 0;
    for (k, head) in heads.iter_mut().enumerate() {
        finish = finish.max(*head) + data.time(k, job);
        *head = finish;
    }
}

/// Tails after putting `job` in front of the suffix whose tails are `tails` (in place).
pub(super) fn extend_tails(data: &BoundData, tails: &mut [u32], job: usize) {
    let mut start = 0;
    for (k, tail) in tails.iter_mut().enumerate().rev() {
        start = start.max(*tail) + data.time(k, job);
        *tail = start;
    }
}

/// `r[k] = Σ_{j ∈ unscheduled} p[k][j]`.
pub fn remaining(data: &BoundData, unscheduled: &[usize]) -> Vec<u32> {
    (0..data.machines).map(|k| unscheduled.iter().map(|&j| data.time(k, j)).sum()).collect()
}

/// LB1 from heads f, remaining work r and tails b.
fn lb1_from(f: &[u32], r: &[u32], b: &[u32]) -> u32 {
    let mut t = f[0] + r[0];
    let mut lb = t + b[0];
    for k in 1..f.len() {
        t = t.max(f[k] + r[k]);
        lb = lb.max(t + b[k]);
    }
    lb
}

/// LB2 from heads f and tails b; `unscheduled(j)` tells whether job j is in U.
/// With a single machine there is no pair and LB1 (exact there) is returned.
fn lb2_from(data: &BoundData, f: &[u32], b: &[u32], unscheduled: impl Fn(usize) -> bool) -> u32 {
    (0..data.pair_count()).map(|q| pair_term(data, q, f, b, &unscheduled)).max().unwrap_or(0)
}

/// LB2's term for machine pair q: the unscheduled jobs in the pair's Johnson order on the
/// two machines, after heads f and before tails b.
pub(super) fn pair_term(data: &BoundData, q: usize, f: &[u32], b: &[u32], unscheduled: &impl Fn(usize) -> bool) -> u32 {
    let n = data.jobs;
    let (u, v) = (data.pairs[2 * q] as usize, data.pairs[2 * q + 1] as usize);
    let (pu, pv) = (&data.ptimes[u * n..(u + 1) * n], &data.ptimes[v * n..(v + 1) * n]);
    let lag = &data.lags[q * n..(q + 1) * n];
    let (mut tu, mut tv) = (f[u], f[v]);
    for &j in &data.johnson[q * n..(q + 1) * n] {
        let j = j as usize;
        if unscheduled(j) {
            tu += pu[j];
            tv = tv.max(tu + lag[j]) + pv[j];
        }
    }
    (tu + b[u]).max(tv + b[v])
}

/// LB1 of a node.
pub fn lb1_node(data: &BoundData, node: &Node) -> u32 {
    let f = heads(data, &node.prefix);
    let b = tails(data, &node.suffix);
    lb1_from(&f, &remaining(data, &node.unscheduled), &b)
}

/// LB2 of a node.
pub fn lb2_node(data: &BoundData, node: &Node) -> u32 {
    let f = heads(data, &node.prefix);
    let b = tails(data, &node.suffix);
    if data.pairs.is_empty() {
        return lb1_from(&f, &remaining(data, &node.unscheduled), &b);
    }
    let mut member = vec![false; data.jobs];
    for &j in &node.unscheduled {
        member[j] = true;
    }
    lb2_from(data, &f, &b, |j| member[j])
}

/// Writes the heads and tails of child `child` of `pool` into `f` and `b` (the first
/// `machines` entries), derived from its parent's record as the kernels do: a forward child
/// extends the parent's heads by its job, a backward child the parent's tails. Returns
/// `(parent, job)`.
fn child_ends(data: &BoundData, pool: &Pool, child: usize, f: &mut [u32], b: &mut [u32]) -> (usize, usize) {
    let (parent, job) = pool.child(child);
    let m = data.machines;
    f[..m].copy_from_slice(pool.heads(parent));
    b[..m].copy_from_slice(pool.tails(parent));
    match pool.direction(child) {
        Direction::Forward => extend_heads(data, &mut f[..m], job),
        Direction::Backward => extend_tails(data, &mut b[..m], job),
    }
    (parent, job)
}

/// LB1 of child `child` of `pool` (the `lb1` kernel).
pub fn lb1(data: &BoundData, pool: &Pool, child: usize) -> u32 {
    let (mut f, mut b) = ([0u32; MAX_MACHINES], [0u32; MAX_MACHINES]);
    let (parent, job) = child_ends(data, pool, child, &mut f, &mut b);
    let rest = pool.remaining(parent);
    let (mut t, mut lb) = (0u32, 0u32);
    for k in 0..data.machines {
        // The child no longer has `job` to schedule.
        t = t.max(f[k] + rest[k] - data.time(k, job));
        lb = lb.max(t + b[k]);
    }
    lb
}

/// LB2 of child `child` of `pool` (the `lb2` kernel).
pub fn lb2(data: &BoundData, pool: &Pool, child: usize) -> u32 {
    if data.pairs.is_empty() {
        return lb1(data, pool, child);
    }
    let (mut f, mut b) = ([0u32; MAX_MACHINES], [0u32; MAX_MACHINES]);
    let (parent, job) = child_ends(data, pool, child, &mut f, &mut b);
    let mask = pool.unscheduled_mask(parent);
    lb2_from(data, &f, &b, |j| j != job && (mask[j / 32] >> (j % 32)) & 1 == 1)
}

/// Bounds every child of `pool`, splitting the children over `threads` scoped threads.
pub fn bound_pool(data: &BoundData, pool: &Pool, bound: LowerBound, threads: usize) -> Vec<u32> {
    let count = pool.child_count();
    let per_child: fn(&BoundData, &Pool, usize) -> u32 = match bound {
        LowerBound::Lb1 => lb1,
        LowerBound::Lb2 => lb2,
    };
    // Spawning costs tens of microseconds: only split pools with enough work per thread.
    let work_per_child = match bound {
        LowerBound::Lb1 => data.machines,
        LowerBound::Lb2 => data.machines + data.pair_count() * data.jobs,
    };
    const MIN_WORK_PER_THREAD: usize = 100_000;
    let threads = threads.clamp(1, (count * work_per_child / MIN_WORK_PER_THREAD).max(1));
    let mut out = vec![0u32; count];
    if threads == 1 {
        for (child, slot) in out.iter_mut().enumerate() {
            *slot = per_child(data, pool, child);
        }
        return out;
    }
    let chunk = count.div_ceil(threads);
    std::thread::scope(|scope| {
        for (index, slice) in out.chunks_mut(chunk).enumerate() {
            scope.spawn(move || {
                for (offset, slot) in slice.iter_mut().enumerate() {
                    *slot = per_child(data, pool, index * chunk + offset);
                }
            });
        }
    });
    out
}

/// Multi-threaded CPU implementation of [`Bounder`].
#[derive(Debug)]
pub struct CpuBounder<'a> {
    data: &'a BoundData,
    bound: LowerBound,
    threads: usize,
}

impl<'a> CpuBounder<'a> {
    /// `threads == 0` uses every available core.
    pub fn new(data: &'a BoundData, bound: LowerBound, threads: usize) -> Self {
        let threads = if threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { threads };
        Self { data, bound, threads }
    }
}

impl Bounder for CpuBounder<'_> {
    fn bound(&mut self, pool: &Pool) -> Result<Vec<u32>> {
        Ok(bound_pool(self.data, pool, self.bound, self.threads))
    }
}

/// Makespan of a complete job order; errors unless `order` is a permutation of the jobs.
pub fn makespan(instance: &Instance, order: &[usize]) -> Result<u32> {
    permutation_makespan(instance.jobs, instance.machines, &instance.p, order)
}

/// [`makespan`] of `order` on the `n` × `m` machine-major processing times `p`.
pub(super) fn permutation_makespan(n: usize, m: usize, p: &[u32], order: &[usize]) -> Result<u32> {
    check_permutation(n, order)?;
    Ok(completion(n, m, p, order))
}

/// Completion time of every job of the complete order `order` on every machine, by position:
/// `times[i * machines + k]` is when machine k finishes `order[i]` (it starts
/// `instance.time(k, order[i])` earlier); the last value is [`makespan`]. Errors unless
/// `order` is a permutation of the jobs.
pub fn completion_times(instance: &Instance, order: &[usize]) -> Result<Vec<u32>> {
    check_permutation(instance.jobs, order)?;
    let mut finish = vec![0u32; instance.machines];
    let mut times = Vec::with_capacity(order.len() * instance.machines);
    for &j in order {
        append_job(&mut finish, instance.jobs, &instance.p, j);
        times.extend_from_slice(&finish);
    }
    Ok(times)
}

fn check_permutation(n: usize, order: &[usize]) -> Result<()> {
    let mut seen = vec![false; n];
    for &j in order {
        if j >= n || std::mem::replace(&mut seen[j], true) {
            return Err(Error::invalid("permutation", format!("job {j} is out of range or repeated ({n} jobs)")));
        }
    }
    if order.len() != n {
        return Err(Error::invalid("permutation", format!("{} jobs given, instance has {n}", order.len())));
    }
    Ok(())
}

/// Makespan of `order` (any subset of the jobs, in that order).
pub(super) fn completion(n: usize, m: usize, p: &[u32], order: &[usize]) -> u32 {
    let mut f = vec![0u32; m];
    for &j in order {
        append_job(&mut f, n, p, j);
    }
    f[m - 1]
}

/// Moves the machines' finish times `f` on by job `j` (a job starts on machine k once
/// machine k is free and the job has left machine k−1).
fn append_job(f: &mut [u32], n: usize, p: &[u32], j: usize) {
    let mut previous = 0;
    for (k, fk) in f.iter_mut().enumerate() {
        *fk = (*fk).max(previous) + p[k * n + j];
        previous = *fk;
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::{taillard, BoundData, Instance, Node, Pool};
    use super::*;

    /// Deterministic pseudo-random numbers for tests (64-bit LCG, high bits).
    pub(crate) struct TestRng(u64);
    impl TestRng {
        pub(crate) fn new(seed: u64) -> Self {
            Self(seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407))
        }
        pub(crate) fn below(&mut self, bound: usize) -> usize {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((self.0 >> 33) as usize) % bound
        }
        pub(crate) fn shuffle(&mut self, items: &mut [usize]) {
            for i in (1..items.len()).rev() {
                items.swap(i, self.below(i + 1));
            }
        }
    }

    /// Best makespan over all orders that start with `prefix` and end with `suffix`.
    pub(crate) fn brute_force(instance: &Instance, prefix: &[usize], suffix: &[usize]) -> u32 {
        let node = Node::new(instance.jobs, prefix.to_vec(), suffix.to_vec()).unwrap();
        let mut middle = node.unscheduled.clone();
        let mut best = u32::MAX;
        permute(&mut middle, 0, &mut |middle| {
            let order: Vec<usize> = prefix.iter().chain(middle.iter()).chain(suffix).copied().collect();
            best = best.min(makespan(instance, &order).unwrap());
        });
        best
    }

    fn permute(items: &mut [usize], start: usize, visit: &mut dyn FnMut(&[usize])) {
        if start == items.len() {
            visit(items);
            return;
        }
        for i in start..items.len() {
            items.swap(start, i);
            permute(items, start + 1, visit);
            items.swap(start, i);
        }
    }

    fn small_instance(seed: u32) -> Instance {
        let p = taillard::generate(6, 4, seed).unwrap();
        Instance::new("small", 6, 4, seed, p, 0, 0).unwrap()
    }

    #[test]
    fn root_lb1_of_ta001_is_taillards_bound() {
        let instance = taillard::taillard(1).unwrap();
        let data = BoundData::new(&instance);
        assert_eq!(lb1_node(&data, &Node::root(20)), 1232);
        // Taillard's file lower bounds of the 20-job instances are this same root bound.
        for number in 2..=30 {
            let instance = taillard::taillard(number).unwrap();
            let data = BoundData::new(&instance);
            assert_eq!(lb1_node(&data, &Node::root(20)), instance.lower_bound, "ta{number:03}");
        }
    }

    #[test]
    fn bounds_are_valid_against_exhaustive_search() {
        let mut rng = TestRng::new(7);
        for seed in [101, 202, 303] {
            let instance = small_instance(seed);
            let data = BoundData::new(&instance);
            for _ in 0..25 {
                let mut jobs: Vec<usize> = (0..6).collect();
                rng.shuffle(&mut jobs);
                let fixed_front = rng.below(5);
                let fixed_back = rng.below(6 - fixed_front);
                let prefix = jobs[..fixed_front].to_vec();
                let suffix = jobs[6 - fixed_back..].to_vec();
                let node = Node::new(6, prefix.clone(), suffix.clone()).unwrap();
                let best = brute_force(&instance, &prefix, &suffix);
                let (one, two) = (lb1_node(&data, &node), lb2_node(&data, &node));
                assert!(one <= two, "LB1 {one} > LB2 {two} for {prefix:?}/{suffix:?}");
                assert!(two <= best, "LB2 {two} > best completion {best} for {prefix:?}/{suffix:?}");
            }
        }
    }

    #[test]
    fn lb2_dominates_lb1_on_random_nodes() {
        let mut rng = TestRng::new(11);
        for number in [1, 12, 23, 45] {
            let instance = taillard::taillard(number).unwrap();
            let data = BoundData::new(&instance);
            let n = instance.jobs;
            for _ in 0..50 {
                let mut jobs: Vec<usize> = (0..n).collect();
                rng.shuffle(&mut jobs);
                let front = rng.below(n);
                let back = rng.below(n - front);
                let node = Node::new(n, jobs[..front].to_vec(), jobs[n - back..].to_vec()).unwrap();
                assert!(lb1_node(&data, &node) <= lb2_node(&data, &node));
            }
        }
    }

    #[test]
    fn pool_bounds_equal_node_bounds() {
        // Forward and backward children of random nodes (empty prefixes and suffixes
        // included) bounded from their parent's record equal the bounds of the child nodes.
        let mut rng = TestRng::new(5);
        for (number, jobs_subset) in [(1, 20), (41, 50), (2, 20)] {
            let instance = taillard::taillard(number).unwrap();
            let data = BoundData::new(&instance);
            let n = instance.jobs;
            let mut pool = Pool::for_data(&data);
            let mut expected = Vec::new();
            for round in 0..30 {
                let mut jobs: Vec<usize> = (0..n).collect();
                rng.shuffle(&mut jobs);
                let depth = rng.below(jobs_subset - 1);
                let suffix_len = if round % 3 == 0 { 0 } else { rng.below(n - depth - 1) };
                let prefix = jobs[..depth].to_vec();
                let suffix = jobs[n - suffix_len..].to_vec();
                let unscheduled = &jobs[depth..n - suffix_len];
                let parent = pool.add_parent(&heads(&data, &prefix), &tails(&data, &suffix), unscheduled, &data).unwrap();
                for (i, &job) in unscheduled.iter().take(6).enumerate() {
                    let (mut child_prefix, mut child_suffix) = (prefix.clone(), suffix.clone());
                    if i % 2 == 0 {
                        pool.add_child(parent, job).unwrap();
                        child_prefix.push(job);
                    } else {
                        pool.add_child_in(parent, job, Direction::Backward).unwrap();
                        child_suffix.insert(0, job);
                    }
                    let child = Node::new(n, child_prefix, child_suffix).unwrap();
                    expected.push((lb1_node(&data, &child), lb2_node(&data, &child)));
                }
            }
            assert!(pool.direction(1) == Direction::Backward && pool.child(1).1 < n);
            for threads in [1, 3] {
                let one = bound_pool(&data, &pool, LowerBound::Lb1, threads);
                let two = bound_pool(&data, &pool, LowerBound::Lb2, threads);
                let got: Vec<(u32, u32)> = one.into_iter().zip(two).collect();
                assert_eq!(got, expected, "ta{number:03}, {threads} threads");
            }
        }
    }

    #[test]
    fn single_machine_bounds_are_exact() {
        let p = vec![3, 1, 4, 1, 5];
        let instance = Instance::new("one", 5, 1, 1, p, 0, 0).unwrap();
        let data = BoundData::new(&instance);
        assert!(data.pairs.is_empty());
        assert_eq!(lb2_node(&data, &Node::root(5)), 14);
        let mut pool = Pool::for_data(&data);
        let parent = pool.add_parent(&[0], &data.min_tails, &[0, 1, 2, 3, 4], &data).unwrap();
        pool.add_child(parent, 2).unwrap();
        assert_eq!(bound_pool(&data, &pool, LowerBound::Lb2, 1), vec![14]);
    }

    #[test]
    fn makespan_checks_the_permutation() {
        let instance = small_instance(9);
        assert!(makespan(&instance, &[0, 1, 2, 3, 4]).is_err());
        assert!(makespan(&instance, &[0, 1, 2, 3, 4, 4]).is_err());
        assert!(makespan(&instance, &[0, 1, 2, 3, 4, 6]).is_err());
        let order = [5, 4, 3, 2, 1, 0];
        let value = makespan(&instance, &order).unwrap();
        assert_eq!(value, brute_force(&instance, &order, &[]));
    }
}
