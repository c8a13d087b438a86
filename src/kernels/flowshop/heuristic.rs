//! Start heuristics for the search: NEH, and Ruiz & Stützle's iterated greedy (EJOR 2007)
//! started from it. A B&B proves optimality fastest from an incumbent that is already
//! optimal: with NEH's 2308 on ta025 the H100 had not finished in 80 s (126.6 M nodes), from
//! 2292 it proves 2291 in 22 s (33.6 M nodes).
//!
//! Both evaluate insertions with Taillard's acceleration: the makespans of a job inserted at
//! every position of a sequence of length `len` cost O(len·m) together.

use super::Instance;
use crate::rng::Rng;

/// NEH (Nawaz, Enscore, Ham 1983): jobs by decreasing total time (ties: lower index first),
/// each inserted at its first best position. Returns (makespan, order).
pub fn neh(instance: &Instance) -> (u32, Vec<usize>) {
    neh_on(instance.jobs, instance.machines, &instance.p)
}

pub(super) fn neh_on(n: usize, m: usize, p: &[u32]) -> (u32, Vec<usize>) {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&j| std::cmp::Reverse((0..m).map(|k| p[k * n + j]).sum::<u32>()));
    let mut insertion = Insertion::new(n, m, p);
    let mut sequence = Vec::with_capacity(n);
    let mut value = 0;
    for &job in &order {
        let (position, makespan) = insertion.best(&sequence, job);
        sequence.insert(position, job);
        value = makespan;
    }
    (value, sequence)
}

/// Settings of the iterated-greedy start heuristic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IteratedGreedy {
    /// Destruction–construction rounds (0: NEH alone); `None`: [`IteratedGreedy::rounds`].
    pub iterations: Option<u32>,
    /// Jobs removed and reinserted per round (Ruiz & Stützle's d = 4).
    pub destroyed: usize,
    /// Acceptance temperature factor (their T = 0.4): a worse sequence is kept with
    /// probability exp(−Δ / (T · Σp / (10·n·m))).
    pub temperature: f64,
    /// Seed of the random choices (removed jobs, acceptance); chain c uses `seed + c`.
    pub seed: u64,
    /// Independent chains that share the rounds, each from NEH with its own seed; they run
    /// in parallel where there are threads, and the best schedule is kept (the lowest chain's
    /// on a tie), so the result does not depend on the machine's cores.
    pub chains: u32,
}

impl Default for IteratedGreedy {
    fn default() -> Self {
        Self { iterations: None, destroyed: 4, temperature: 0.4, seed: 1, chains: 8 }
    }
}

impl IteratedGreedy {
    /// Rounds for `n` jobs on `m` machines: `iterations`, or by default 10⁸ / (n²·m) (a
    /// round costs about n²·m) between 20 and 10000: 10000 up to 20 × 20, 2000 on 50 × 20,
    /// 20 on 500 × 20; about a second on one core for each.
    pub fn rounds(&self, n: usize, m: usize) -> u32 {
        self.iterations.unwrap_or_else(|| {
            let work = (n * n * m).max(1) as u64;
            (100_000_000 / work).clamp(20, 10_000) as u32
        })
    }
}

/// Iterated greedy from NEH with insertion local search, in `settings.chains` chains that
/// share `settings.rounds` rounds; stops as soon as `stop()` says so (checked before each
/// round). Deterministic for a seed when `stop` never fires. Returns the best (makespan,
/// order) met.
pub(super) fn iterated_greedy(
    n: usize,
    m: usize,
    p: &[u32],
    settings: &IteratedGreedy,
    stop: &(dyn Fn() -> bool + Sync),
) -> (u32, Vec<usize>) {
    let (neh_value, neh_order) = neh_on(n, m, p);
    let rounds = settings.rounds(n, m);
    if n < 2 || rounds == 0 {
        return (neh_value, neh_order);
    }
    let chains = settings.chains.clamp(1, rounds);
    let chain = |c: u32| {
        // the rounds split as evenly as they go, the first chains taking the remainder
        let own = rounds / chains + u32::from(c < rounds % chains);
        chain_from(n, m, p, settings, settings.seed.wrapping_add(u64::from(c)), own, (neh_value, neh_order.clone()), stop)
    };
    #[cfg(not(target_arch = "wasm32"))]
    let results: Vec<(u32, Vec<usize>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (1..chains).map(|c| scope.spawn(move || chain(c))).collect();
        let first = chain(0);
        std::iter::once(first)
            .chain(handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))))
            .collect()
    });
    // a browser page has one thread
    #[cfg(target_arch = "wasm32")]
    let results: Vec<(u32, Vec<usize>)> = (0..chains).map(chain).collect();
    results.into_iter().min_by_key(|(value, _)| *value).unwrap_or((neh_value, neh_order))
}

/// One chain of `rounds` rounds from `start`, with its own random stream.
#[allow(clippy::too_many_arguments, reason = "the heuristic's working arrays, passed down rather than reallocated")]
fn chain_from(
    n: usize,
    m: usize,
    p: &[u32],
    settings: &IteratedGreedy,
    seed: u64,
    rounds: u32,
    start: (u32, Vec<usize>),
    stop: &(dyn Fn() -> bool + Sync),
) -> (u32, Vec<usize>) {
    let mut rng = Rng::new(seed);
    let mut insertion = Insertion::new(n, m, p);
    let total: u64 = p.iter().map(|&t| u64::from(t)).sum();
    let temperature = settings.temperature * total as f64 / (10 * n * m) as f64;
    let destroyed = settings.destroyed.clamp(1, n - 1);

    let mut current = start.1;
    let mut current_value = insertion.local_search(&mut current, start.0, &mut rng);
    let (mut best_value, mut best) = (current_value, current.clone());
    let mut removed = Vec::with_capacity(destroyed);
    let mut candidate = Vec::with_capacity(n);
    for _ in 0..rounds {
        if stop() {
            break;
        }
        candidate.clone_from(&current);
        removed.clear();
        for _ in 0..destroyed {
            let at = (rng.next_u64() % candidate.len() as u64) as usize;
            removed.push(candidate.remove(at));
        }
        let mut value = 0;
        for &job in &removed {
            let (position, makespan) = insertion.best(&candidate, job);
            candidate.insert(position, job);
            value = makespan;
        }
        value = insertion.local_search(&mut candidate, value, &mut rng);
        let accept = value < current_value || rng.next_f64() < (-f64::from(value - current_value) / temperature).exp();
        if accept {
            std::mem::swap(&mut current, &mut candidate);
            current_value = value;
            if value < best_value {
                best_value = value;
                best.clone_from(&current);
            }
        }
    }
    (best_value, best)
}

/// Taillard's insertion evaluation with its scratch rows.
struct Insertion<'a> {
    n: usize,
    m: usize,
    p: &'a [u32],
    /// e[i][k]: completion of sequence[..=i] on machine k.
    heads: Vec<u32>,
    /// q[i][k]: time sequence[i..] needs from machine k on (row `len` is zero).
    tails: Vec<u32>,
}

impl<'a> Insertion<'a> {
    fn new(n: usize, m: usize, p: &'a [u32]) -> Self {
        Self { n, m, p, heads: vec![0; n * m], tails: vec![0; (n + 1) * m] }
    }

    fn time(&self, k: usize, j: usize) -> u32 {
        self.p[k * self.n + j]
    }

    /// The first position of `sequence` where inserting `job` gives the smallest makespan,
    /// and that makespan.
    fn best(&mut self, sequence: &[usize], job: usize) -> (usize, u32) {
        let (m, len) = (self.m, sequence.len());
        for (i, &j) in sequence.iter().enumerate() {
            for k in 0..m {
                let above = if i > 0 { self.heads[(i - 1) * m + k] } else { 0 };
                let left = if k > 0 { self.heads[i * m + k - 1] } else { 0 };
                self.heads[i * m + k] = above.max(left) + self.time(k, j);
            }
        }
        self.tails[len * m..(len + 1) * m].fill(0);
        for i in (0..len).rev() {
            let j = sequence[i];
            for k in (0..m).rev() {
                let below = self.tails[(i + 1) * m + k];
                let right = if k + 1 < m { self.tails[i * m + k + 1] } else { 0 };
                self.tails[i * m + k] = below.max(right) + self.time(k, j);
            }
        }
        let (mut best_position, mut best_value) = (0, u32::MAX);
        for position in 0..=len {
            let (mut finish, mut value) = (0u32, 0u32);
            for k in 0..m {
                let above = if position > 0 { self.heads[(position - 1) * m + k] } else { 0 };
                finish = finish.max(above) + self.time(k, job);
                value = value.max(finish + self.tails[position * m + k]);
            }
            if value < best_value {
                (best_position, best_value) = (position, value);
            }
        }
        (best_position, best_value)
    }

    /// Ruiz & Stützle's insertion local search: every job in random order is taken out and
    /// put back at its best position, in passes until a pass improves nothing. `value` is
    /// the makespan of `sequence`; returns the new one (never larger: the old position is
    /// one of the candidates).
    fn local_search(&mut self, sequence: &mut Vec<usize>, mut value: u32, rng: &mut Rng) -> u32 {
        let mut jobs = sequence.clone();
        loop {
            let before = value;
            rng.shuffle(&mut jobs);
            for &job in &jobs {
                let at = sequence.iter().position(|&j| j == job).unwrap_or(0);
                sequence.remove(at);
                let (position, makespan) = self.best(sequence, job);
                sequence.insert(position, job);
                value = makespan;
            }
            if value >= before {
                return value;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{cpu, taillard};
    use super::*;

    #[test]
    fn iterated_greedy_improves_on_neh_and_reports_its_order() {
        // Optima: ta001 1278, ta011 1582 (Taillard's upper bounds, proven).
        for (number, optimum) in [(1, 1278), (11, 1582)] {
            let instance = taillard(number).unwrap();
            let (n, m, p) = (instance.jobs, instance.machines, &instance.p);
            let settings = IteratedGreedy { iterations: Some(300), ..IteratedGreedy::default() };
            let (value, order) = iterated_greedy(n, m, p, &settings, &|| false);
            assert_eq!(cpu::makespan(&instance, &order).unwrap(), value);
            assert!(value >= optimum, "ta{number:03}: {value} below the optimum {optimum}");
            assert!(value < neh(&instance).0, "ta{number:03}: no better than NEH ({value})");
            // Same seed, same result; no rounds, NEH.
            assert_eq!(iterated_greedy(n, m, p, &settings, &|| false), (value, order));
            let none = IteratedGreedy { iterations: Some(0), ..settings };
            assert_eq!(iterated_greedy(n, m, p, &none, &|| false), neh(&instance));
        }
    }

    #[test]
    fn chains_share_the_rounds_and_the_best_chain_wins() {
        let instance = taillard(11).unwrap();
        let (n, m, p) = (instance.jobs, instance.machines, &instance.p[..]);
        let four = IteratedGreedy { iterations: Some(83), chains: 4, ..IteratedGreedy::default() };
        // chain c runs 21, 21, 21, 20 rounds with seed 1 + c
        let alone: Vec<(u32, Vec<usize>)> = (0..4u32)
            .map(|c| {
                let rounds = if c < 3 { 21 } else { 20 };
                let one = IteratedGreedy { iterations: Some(rounds), chains: 1, seed: 1 + u64::from(c), ..four };
                iterated_greedy(n, m, p, &one, &|| false)
            })
            .collect();
        let best = alone.iter().min_by_key(|(v, _)| *v).unwrap().clone();
        assert_eq!(iterated_greedy(n, m, p, &four, &|| false), best);
        assert!(alone.iter().any(|a| a.0 != best.0) || alone.iter().any(|a| a.1 != best.1), "the chains differ: {alone:?}");
        assert_eq!(cpu::completion(n, m, p, &best.1), best.0);
    }

    #[test]
    fn insertion_values_equal_full_evaluations() {
        let instance = taillard(21).unwrap();
        let (n, m) = (instance.jobs, instance.machines);
        let mut insertion = Insertion::new(n, m, &instance.p);
        let sequence: Vec<usize> = vec![4, 17, 0, 9, 12, 3];
        for job in [1, 5, 19] {
            let (position, value) = insertion.best(&sequence, job);
            let brute: Vec<u32> = (0..=sequence.len())
                .map(|at| {
                    let mut s = sequence.clone();
                    s.insert(at, job);
                    cpu::completion(n, m, &instance.p, &s)
                })
                .collect();
            let min = *brute.iter().min().unwrap();
            assert_eq!(value, min);
            assert_eq!(position, brute.iter().position(|&v| v == min).unwrap());
        }
    }
}
