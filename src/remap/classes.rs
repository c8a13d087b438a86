//! Per-thread classes: which threads should share a warp.
//!
//! Two threads are of one *type* when their path vectors are equal (Zhang et al. §2.2); LAM
//! and the redirect index work on R *classes* that approximate types, because packing exact
//! types can need many more distinct groups than the remap can afford. Loops are classed by
//! trip-count range (lanes of a warp then leave the loop at nearly the same step), `if`
//! conditions by clustering path vectors.

use std::collections::HashMap;

use serde::Serialize;

use crate::error::{Error, Result};

/// Most classes a classification may produce: keeps per-class tables small and dense.
pub const MAX_CLASSES: usize = 1 << 16;

/// Largest element count: index arrays are `u32` on the GPU.
pub const MAX_ELEMENTS: usize = u32::MAX as usize;

/// Samples taken to place quantile boundaries: enough for percent-level accuracy without
/// sorting the whole input.
const QUANTILE_SAMPLES: usize = 1 << 16;

/// Path vectors with at most this many conditions are counted in a dense table.
const DENSE_PATH_BITS: usize = 16;

/// What one class stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClassKey {
    /// Trip counts in `lo..=hi`.
    Trips {
        /// Smallest trip count in the class.
        lo: u32,
        /// Largest trip count in the class.
        hi: u32,
    },
    /// Path vectors merged around `representative`, the class's most populated vector.
    Path {
        /// The path vector (bit k = condition k taken) the class is built around.
        representative: u32,
    },
    /// A class id supplied by the caller.
    Given,
}

/// How trip counts are cut into ranges when they take more distinct values than classes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bucketing {
    /// R ranges of equal width between the smallest and largest trip count (the paper's
    /// sub-ranges); cheap, but skewed distributions leave most elements in a few ranges.
    #[default]
    EqualWidth,
    /// Ranges holding about n/R elements each, from a sample; balances classes so more of
    /// them fill whole warps.
    Quantile,
}

/// Dense class ids for arbitrary keys (e.g. exact path vectors, one class per distinct
/// vector): equal keys get equal ids, ids ordered like the keys. Returns (class per element,
/// number of classes), ready for [`super::redirect_index_of`].
pub fn dense_classes(keys: &[u32]) -> (Vec<u32>, u32) {
    let mut distinct = keys.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let classes = keys.iter().map(|k| distinct.binary_search(k).unwrap_or(0) as u32).collect();
    (classes, distinct.len() as u32)
}

/// Class of every element, in `0..count()`, with the population of each class.
///
/// Invariants (upheld by every constructor): each id is below `count()`, `sizes()` sums to
/// `len()`, and `len() <= MAX_ELEMENTS`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Classes {
    ids: Vec<u32>,
    sizes: Vec<usize>,
    keys: Vec<ClassKey>,
}

impl Classes {
    /// Wraps class ids computed by the caller; `count` is the number of classes.
    pub fn from_ids(ids: Vec<u32>, count: usize) -> Result<Classes> {
        check_len(ids.len())?;
        check_count(count)?;
        let sizes = class_sizes(&ids, count)?;
        Ok(Classes { ids, sizes, keys: vec![ClassKey::Given; count] })
    }

    /// Class id of each element.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// Elements in each class.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// What each class stands for.
    pub fn keys(&self) -> &[ClassKey] {
        &self.keys
    }

    /// Number of classes (R).
    pub fn count(&self) -> usize {
        self.sizes.len()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The class id of each element, without copying.
    pub fn into_ids(self) -> Vec<u32> {
        self.ids
    }
}

fn check_len(n: usize) -> Result<()> {
    if u32::try_from(n).is_err() {
        return Err(Error::invalid("element count", format!("{n} elements; index arrays are u32, so at most {MAX_ELEMENTS}")));
    }
    Ok(())
}

fn check_count(count: usize) -> Result<()> {
    if count > MAX_CLASSES {
        return Err(Error::invalid("class count", format!("{count}; use at most {MAX_CLASSES} classes")));
    }
    Ok(())
}

/// Counts the elements of each class; errors on an id outside `0..count`.
pub(crate) fn class_sizes(ids: &[u32], count: usize) -> Result<Vec<usize>> {
    let mut sizes = vec![0usize; count];
    for (i, &c) in ids.iter().enumerate() {
        match sizes.get_mut(c as usize) {
            Some(s) => *s += 1,
            None => {
                return Err(Error::invalid("class id", format!("element {i} has class {c}, but there are only {count} classes")));
            }
        }
    }
    Ok(sizes)
}

/// Population of each class of `ids` (all below `count`). Four interleaved tables: runs of
/// one class would otherwise chain every increment on the previous store.
fn histogram(ids: &[u32], count: usize) -> Vec<usize> {
    let mut tables = vec![[0u32; 4]; count];
    let mut quads = ids.chunks_exact(4);
    for q in &mut quads {
        tables[q[0] as usize][0] += 1;
        tables[q[1] as usize][1] += 1;
        tables[q[2] as usize][2] += 1;
        tables[q[3] as usize][3] += 1;
    }
    quads.remainder().iter().for_each(|&c| tables[c as usize][0] += 1);
    // u32 tables cannot overflow: at most u32::MAX elements in all
    tables.iter().map(|t| t.iter().map(|&x| x as usize).sum()).collect()
}

fn check_classes(classes: usize) -> Result<()> {
    if classes == 0 {
        return Err(Error::invalid("class count", "0; ask for at least 1 class (the paper uses 10)"));
    }
    check_count(classes)
}

/// Groups loop trip counts into at most `classes` ranges, ordered by ascending trip count.
///
/// When the input takes at most `classes` distinct values each value gets its own class
/// (exact classes: a warp of one class never diverges on the loop); otherwise `bucketing`
/// decides the ranges. Empty ranges are dropped, so `count()` may be below `classes`.
pub fn classify_loops(trips: &[u32], classes: usize, bucketing: Bucketing) -> Result<Classes> {
    check_classes(classes)?;
    check_len(trips.len())?;
    let (Some(&min), Some(&max)) = (trips.iter().min(), trips.iter().max()) else {
        return Ok(Classes { ids: Vec::new(), sizes: Vec::new(), keys: Vec::new() });
    };
    let span = max as u64 - min as u64 + 1;

    // Exact classes over a narrow range: direct table, no search.
    if span <= classes as u64 {
        let mut present = vec![false; span as usize];
        trips.iter().for_each(|&t| present[(t - min) as usize] = true);
        let cuts: Vec<u32> = (0..span as u32).filter(|&v| present[v as usize]).map(|v| min + v).collect();
        return Ok(classify_by_cuts_table(trips, &cuts, min, max, true));
    }
    if let Some(distinct) = distinct_at_most(trips, classes) {
        return Ok(classify_by_cuts(trips, &distinct, max, true));
    }
    Ok(match bucketing {
        Bucketing::EqualWidth => classify_equal_width(trips, min, max, span, classes),
        Bucketing::Quantile => classify_by_cuts(trips, &quantile_cuts(trips, min, classes), max, false),
    })
}

/// Equal-width ranges by division: cheaper than searching the range bounds.
fn classify_equal_width(values: &[u32], min: u32, max: u32, span: u64, classes: usize) -> Classes {
    // span > classes >= 1 here, so the width is at most 2^31 and fits a u32
    let width = span.div_ceil(classes as u64) as u32;
    let cuts: Vec<u32> =
        (0..classes as u64).map(|k| min as u64 + k * width as u64).filter(|&lo| lo <= max as u64).map(|lo| lo as u32).collect();
    // Division by the same width for every element: multiply by a 64-bit reciprocal instead
    // (exact for 32-bit operands and divisors >= 2; Lemire et al., "Faster remainder by
    // direct computation", 2019).
    let reciprocal = u64::MAX / width as u64 + 1;
    let ids: Vec<u32> = values.iter().map(|&v| ((reciprocal as u128 * (v - min) as u128) >> 64) as u32).collect();
    let sizes = histogram(&ids, cuts.len());
    finish_ranges(ids, sizes, &cuts, max, false)
}

/// Sorted distinct values, or None as soon as there are more than `limit`.
fn distinct_at_most(values: &[u32], limit: usize) -> Option<Vec<u32>> {
    let mut distinct: Vec<u32> = Vec::with_capacity(limit + 1);
    for &v in values {
        if let Err(at) = distinct.binary_search(&v) {
            if distinct.len() == limit {
                return None;
            }
            distinct.insert(at, v);
        }
    }
    Some(distinct)
}

/// Lower bounds of ranges holding about n/classes elements each, from a strided sample.
fn quantile_cuts(values: &[u32], min: u32, classes: usize) -> Vec<u32> {
    let stride = values.len().div_ceil(QUANTILE_SAMPLES).max(1);
    let mut sample: Vec<u32> = values.iter().step_by(stride).copied().collect();
    sample.sort_unstable();
    let mut cuts = vec![min];
    for k in 1..classes {
        let cut = sample[k * sample.len() / classes];
        if cut > *cuts.last().unwrap_or(&min) {
            cuts.push(cut);
        }
    }
    cuts
}

/// Classes from sorted range lower bounds `cuts` (cuts[0] <= every value); drops empty ranges.
fn classify_by_cuts(values: &[u32], cuts: &[u32], max: u32, exact: bool) -> Classes {
    // A branch-free count beats a binary search over a few bounds.
    let ids: Vec<u32> = if cuts.len() <= 16 {
        values.iter().map(|&v| cuts[1..].iter().map(|&c| (c <= v) as u32).sum()).collect()
    } else {
        values.iter().map(|&v| (cuts.partition_point(|&c| c <= v) - 1) as u32).collect()
    };
    let sizes = histogram(&ids, cuts.len());
    finish_ranges(ids, sizes, cuts, max, exact)
}

/// As `classify_by_cuts` for values in `min..=max` with a small span: one table lookup each.
fn classify_by_cuts_table(values: &[u32], cuts: &[u32], min: u32, max: u32, exact: bool) -> Classes {
    let mut table = vec![0u32; (max - min) as usize + 1];
    for (k, &lo) in cuts.iter().enumerate() {
        let hi = cuts.get(k + 1).map_or(max, |&next| next - 1);
        table[(lo - min) as usize..=(hi - min) as usize].fill(k as u32);
    }
    let ids: Vec<u32> = values.iter().map(|&v| table[(v - min) as usize]).collect();
    let sizes = histogram(&ids, cuts.len());
    finish_ranges(ids, sizes, cuts, max, exact)
}

fn finish_ranges(ids: Vec<u32>, sizes: Vec<usize>, cuts: &[u32], max: u32, exact: bool) -> Classes {
    let keys: Vec<ClassKey> = (0..cuts.len())
        .map(|k| {
            let lo = cuts[k];
            let hi = if exact { lo } else { cuts.get(k + 1).map_or(max, |&next| next - 1) };
            ClassKey::Trips { lo, hi }
        })
        .collect();
    compact(ids, sizes, keys)
}

/// Renumbers classes so that none is empty (empty equal-width ranges are common).
fn compact(mut ids: Vec<u32>, sizes: Vec<usize>, keys: Vec<ClassKey>) -> Classes {
    if sizes.iter().all(|&s| s > 0) {
        return Classes { ids, sizes, keys };
    }
    let mut renumber = vec![0u32; sizes.len()];
    let (mut kept_sizes, mut kept_keys) = (Vec::new(), Vec::new());
    for (k, (&size, key)) in sizes.iter().zip(keys).enumerate() {
        if size > 0 {
            renumber[k] = kept_sizes.len() as u32;
            kept_sizes.push(size);
            kept_keys.push(key);
        }
    }
    ids.iter_mut().for_each(|c| *c = renumber[*c as usize]);
    Classes { ids, sizes: kept_sizes, keys: kept_keys }
}

/// Groups path vectors of `conditions` binary conditions (bit k = outcome of condition k)
/// into at most `classes` classes.
///
/// With at most `classes` distinct vectors each vector is its own class (exact: no warp of
/// one class diverges). Otherwise the `classes` most populated vectors seed the classes and
/// every less populated vector merges into the nearest seed by Hamming distance, weighted per
/// condition by `weights` (e.g. the time spent in each guarded block) when given; ties go to
/// the more populated seed. Classes are ordered by representative vector.
pub fn classify_paths(paths: &[u32], conditions: usize, classes: usize, weights: Option<&[f64]>) -> Result<Classes> {
    check_classes(classes)?;
    check_len(paths.len())?;
    if conditions > 32 {
        return Err(Error::invalid("path vector", format!("{conditions} conditions; at most 32 fit in a u32 path vector")));
    }
    if let Some(w) = weights {
        if w.len() != conditions {
            return Err(Error::invalid("condition weights", format!("{} weights for {conditions} conditions", w.len())));
        }
        if let Some(k) = w.iter().position(|x| !x.is_finite() || *x < 0.0) {
            return Err(Error::invalid("condition weights", format!("weight {k} is {}; use finite values >= 0", w[k])));
        }
    }
    let unused = if conditions == 32 { 0 } else { !0u32 << conditions };
    if let Some(i) = paths.iter().position(|&p| p & unused != 0) {
        return Err(Error::invalid(
            "path vector",
            format!("element {i} is {:#x}, which sets bits beyond its {conditions} conditions", paths[i]),
        ));
    }

    let dense = conditions <= DENSE_PATH_BITS;
    let populations = if dense { dense_populations(paths, conditions) } else { sparse_populations(paths) };
    let (representatives, class_of) = cluster(populations, classes, weights);

    let keys: Vec<ClassKey> = representatives.iter().map(|&r| ClassKey::Path { representative: r }).collect();
    let ids: Vec<u32> = if dense {
        let mut table = vec![0u32; 1 << conditions];
        class_of.iter().for_each(|&(v, c)| table[v as usize] = c);
        paths.iter().map(|&p| table[p as usize]).collect()
    } else {
        let table: HashMap<u32, u32> = class_of.into_iter().collect();
        paths.iter().map(|p| table.get(p).copied().unwrap_or(0)).collect()
    };
    let sizes = histogram(&ids, keys.len());
    Ok(Classes { ids, sizes, keys })
}

/// (vector, population) of every distinct vector, for vectors of few bits.
fn dense_populations(paths: &[u32], conditions: usize) -> Vec<(u32, usize)> {
    let mut counts = vec![0usize; 1 << conditions];
    paths.iter().for_each(|&p| counts[p as usize] += 1);
    counts.iter().enumerate().filter(|(_, &c)| c > 0).map(|(v, &c)| (v as u32, c)).collect()
}

fn sparse_populations(paths: &[u32]) -> Vec<(u32, usize)> {
    let mut counts: HashMap<u32, usize> = HashMap::new();
    paths.iter().for_each(|&p| *counts.entry(p).or_default() += 1);
    counts.into_iter().collect()
}

/// Seeds the most populated vectors and merges the rest into the nearest seed. Returns the
/// representatives in class order and the class of every distinct vector.
fn cluster(mut populations: Vec<(u32, usize)>, classes: usize, weights: Option<&[f64]>) -> (Vec<u32>, Vec<(u32, u32)>) {
    // Most populated first; vector value breaks ties so the result is deterministic.
    populations.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let seeds = populations.len().min(classes);
    let mut representatives: Vec<u32> = populations[..seeds].iter().map(|p| p.0).collect();
    representatives.sort_unstable();
    // Seed order by population, for tie-breaking; mapped to class ids (sorted order).
    let seed_class: Vec<u32> = populations[..seeds].iter().map(|p| representatives.binary_search(&p.0).unwrap_or(0) as u32).collect();

    let distance = |a: u32, b: u32| -> f64 {
        match weights {
            None => (a ^ b).count_ones() as f64,
            Some(w) => {
                let (mut bits, mut d) = (a ^ b, 0.0);
                while bits != 0 {
                    d += w[bits.trailing_zeros() as usize];
                    bits &= bits - 1;
                }
                d
            }
        }
    };
    let class_of = populations
        .iter()
        .enumerate()
        .map(|(rank, &(v, _))| {
            if rank < seeds {
                return (v, seed_class[rank]);
            }
            let mut best = (f64::INFINITY, 0u32);
            for (s, &(seed, _)) in populations[..seeds].iter().enumerate() {
                let d = distance(v, seed);
                if d < best.0 {
                    best = (d, seed_class[s]);
                }
            }
            (v, best.1)
        })
        .collect();
    (representatives, class_of)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_classes_rank_keys() {
        let (c, k) = dense_classes(&[70, 5, 70, 9]);
        assert_eq!((c, k), (vec![2, 0, 2, 1], 3));
    }

    #[test]
    fn few_distinct_trips_get_exact_ascending_classes() {
        let c = classify_loops(&[1000, 3, 3, 70, 1000], 10, Bucketing::EqualWidth).unwrap();
        assert_eq!(c.ids(), &[2, 0, 0, 1, 2]);
        assert_eq!(c.sizes(), &[2, 1, 2]);
        assert_eq!(c.keys()[1], ClassKey::Trips { lo: 70, hi: 70 });
    }

    #[test]
    fn equal_width_ranges_cover_the_span_and_drop_empty_ones() {
        let trips: Vec<u32> = (0..100).chain(std::iter::once(999)).collect();
        let c = classify_loops(&trips, 10, Bucketing::EqualWidth).unwrap();
        // width 100: 0..=99 in class 0, 900..=999 in class 1; ranges in between are empty
        assert_eq!(c.count(), 2);
        assert_eq!(c.sizes(), &[100, 1]);
        assert_eq!(c.keys()[1], ClassKey::Trips { lo: 900, hi: 999 });
    }

    #[test]
    fn quantile_ranges_balance_a_skewed_distribution() {
        let trips: Vec<u32> = (0..10_000u32).map(|i| i * i % 9973).map(|v| v * v / 1000).collect();
        let c = classify_loops(&trips, 10, Bucketing::Quantile).unwrap();
        assert_eq!(c.count(), 10);
        assert!(c.sizes().iter().all(|&s| (800..1200).contains(&s)), "{:?}", c.sizes());
        // ranges are ascending: every element's class range contains it
        for (&t, &id) in trips.iter().zip(c.ids()) {
            let ClassKey::Trips { lo, hi } = c.keys()[id as usize] else { panic!() };
            assert!(lo <= t && t <= hi);
        }
    }

    #[test]
    fn paths_cluster_rare_vectors_into_the_nearest_seed() {
        // 0b000 x4, 0b111 x3, 0b001 x1 (nearest 0b000), 0b110 x1 (nearest 0b111)
        let paths = [0, 0, 0, 0, 7, 7, 7, 1, 6];
        let c = classify_paths(&paths, 3, 2, None).unwrap();
        assert_eq!(c.ids(), &[0, 0, 0, 0, 1, 1, 1, 0, 1]);
        assert_eq!(c.keys(), &[ClassKey::Path { representative: 0 }, ClassKey::Path { representative: 7 }]);
    }

    #[test]
    fn weights_change_which_seed_is_nearest() {
        // 0b01 is one bit from both seeds 0b00 and 0b11; weighting bit 1 heavily makes 0b00 closer
        let paths = [0, 0, 0, 3, 3, 1];
        let unweighted = classify_paths(&paths, 2, 2, None).unwrap();
        assert_eq!(unweighted.ids()[5], 0, "tie goes to the more populated seed");
        let w = classify_paths(&paths, 2, 2, Some(&[10.0, 1.0])).unwrap();
        assert_eq!(w.ids()[5], 1);
    }

    #[test]
    fn wide_path_vectors_use_the_sparse_table() {
        let paths: Vec<u32> = (0..1000u32).map(|i| (i % 7) << 20).collect();
        let c = classify_paths(&paths, 24, 10, None).unwrap();
        assert_eq!(c.count(), 7);
        assert!(c.ids().iter().zip(&paths).all(|(&id, &p)| id == p >> 20));
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(classify_loops(&[1, 2], 0, Bucketing::EqualWidth).is_err());
        assert!(classify_paths(&[0b100], 2, 4, None).is_err());
        assert!(classify_paths(&[0], 33, 4, None).is_err());
        assert!(classify_paths(&[0], 2, 4, Some(&[1.0])).is_err());
        assert!(classify_paths(&[0], 1, 4, Some(&[f64::NAN])).is_err());
        assert!(Classes::from_ids(vec![0, 3], 3).is_err());
        assert!(classify_loops(&[], 4, Bucketing::Quantile).unwrap().is_empty());
    }
}
