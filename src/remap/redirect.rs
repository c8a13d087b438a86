//! Reference redirection (Zhang et al. §3.1): an index array D where thread i works on the
//! original element D[i], so consecutive threads (hence warps) get elements of one class.
//!
//! The kernel change is one line: `let id = D[tid]` at the top, then `id` replaces `tid` in
//! every data reference. Where `tid` itself enters arithmetic (the *IDArray* rule, §3.2), it
//! is also replaced by the redirected id: the result then stays what the original thread
//! would have computed. Redirection keeps the data in place, so it needs no restore step,
//! but neighbouring threads now read scattered addresses: prefer it when the kernel reads
//! through a cache/texture path or when the redirected id drives computation rather than
//! loads, and prefer a layout transformation ([`super::LamPlan`]) otherwise.

use super::classes::{class_sizes, Classes};
use crate::error::{Error, Result};

/// Redirect index D: a stable counting sort of the elements by class (O(n + R)). Elements of
/// one class keep their relative order, which keeps runs deterministic and, within a class,
/// as coalesced as the original order was.
pub fn redirect_index(classes: &Classes) -> Vec<u32> {
    counting_sort(classes.ids(), classes.sizes())
}

/// [`redirect_index`] for class ids computed elsewhere; `count` is the number of classes.
pub fn redirect_index_of(ids: &[u32], count: usize) -> Result<Vec<u32>> {
    if u32::try_from(ids.len()).is_err() {
        return Err(Error::invalid("element count", format!("{} elements do not fit a u32 index array", ids.len())));
    }
    let sizes = class_sizes(ids, count)?;
    Ok(counting_sort(ids, &sizes))
}

/// Elements a workgroup of the library's tile-sorted kernels sorts at once by default (256
/// invocations × 4 elements, `TILE_ELEMENTS` in `shaders/shared/tile_sort.wgsl`).
pub const TILE_ELEMENTS: usize = 1024;

/// Classes the tile sort tells apart (`TILE_MAX_CLASSES`); higher ones join the last.
pub const MAX_TILE_CLASSES: usize = 32;

/// The order of the in-kernel tile sort (`shaders/shared/tile_sort.wgsl`): each run of `tile`
/// consecutive elements sorted by class on its own, so thread i of the tile's workgroup works
/// on element `D[i]` of its own tile. On the GPU the order inside a class follows atomic
/// arrival; here it is stable, which gives the same classes per subgroup.
pub fn tile_index(classes: &Classes, tile: usize) -> Result<Vec<u32>> {
    if tile == 0 {
        return Err(Error::invalid("tile size", "0; use the elements a workgroup sorts (e.g. 1024)"));
    }
    let mut index = Vec::with_capacity(classes.len());
    for (t, ids) in classes.ids().chunks(tile).enumerate() {
        let first = (t * tile) as u32;
        let sizes = class_sizes(ids, classes.count())?;
        index.extend(counting_sort(ids, &sizes).into_iter().map(|i| first + i));
    }
    Ok(index)
}

/// Stable counting sort; `sizes` must be the class populations of `ids`.
pub(crate) fn counting_sort(ids: &[u32], sizes: &[usize]) -> Vec<u32> {
    let mut next = Vec::with_capacity(sizes.len());
    let mut start = 0usize;
    for &s in sizes {
        next.push(start);
        start += s;
    }
    let mut index = vec![0u32; ids.len()];
    for (i, &c) in ids.iter().enumerate() {
        let slot = &mut next[c as usize];
        index[*slot] = i as u32;
        *slot += 1;
    }
    index
}

/// Inverse permutation: `inverse(D)[D[i]] == i`. Maps a redirected thread's result back to
/// the thread that would have produced it, and converts between an index array and a
/// destination array. Errors when `index` is not a permutation of `0..n`.
pub fn inverse(index: &[u32]) -> Result<Vec<u32>> {
    const UNSET: u32 = u32::MAX;
    if u32::try_from(index.len()).is_err() {
        return Err(Error::invalid("index array", format!("{} entries do not fit u32 positions", index.len())));
    }
    let mut inv = vec![UNSET; index.len()];
    for (i, &d) in index.iter().enumerate() {
        match inv.get_mut(d as usize) {
            Some(slot) if *slot == UNSET => *slot = i as u32,
            Some(_) => return Err(Error::invalid("index array", format!("element {d} appears twice (second at {i})"))),
            None => {
                return Err(Error::invalid("index array", format!("entry {i} is {d}, outside 0..{}", index.len())));
            }
        }
    }
    Ok(inv)
}

/// `out[i] = data[index[i]]`: what thread i sees through the index array (useful on the host
/// to predict the divergence of a redirected run, or to apply D as a layout).
pub fn gather<T: Copy>(data: &[T], index: &[u32]) -> Result<Vec<T>> {
    index
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            data.get(d as usize)
                .copied()
                .ok_or_else(|| Error::invalid("index array", format!("entry {i} is {d}, outside the {} data elements", data.len())))
        })
        .collect()
}

/// `values` in thread order under an optional index array (thread i sees
/// `values[order[i]]`); the original order when there is none. The index must be in range
/// (one built by [`redirect_index`] is); use [`gather`] for one that may not be.
pub fn in_order<T: Copy>(values: &[T], order: Option<&[u32]>) -> Vec<T> {
    match order {
        Some(o) => o.iter().map(|&i| values[i as usize]).collect(),
        None => values.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_by_class_and_keeps_order_within_a_class() {
        let d = redirect_index_of(&[2, 0, 1, 0, 2, 1], 3).unwrap();
        assert_eq!(d, vec![1, 3, 2, 5, 0, 4]);
        assert_eq!(gather(&[2, 0, 1, 0, 2, 1], &d).unwrap(), vec![0, 0, 1, 1, 2, 2]);
        let inv = inverse(&d).unwrap();
        assert!((0..6).all(|i| inv[d[i] as usize] == i as u32));
        assert_eq!(in_order(&[2, 0, 1, 0, 2, 1], Some(&d)), vec![0, 0, 1, 1, 2, 2]);
        assert_eq!(in_order(&[2, 0, 1], None), vec![2, 0, 1]);
    }

    #[test]
    fn the_tile_index_sorts_each_tile_on_its_own() {
        let classes = Classes::from_ids(vec![1, 0, 1, 0, 2, 0, 1], 3).unwrap();
        let d = tile_index(&classes, 3).unwrap();
        assert_eq!(d, vec![1, 0, 2, 3, 5, 4, 6]);
        assert_eq!(gather(classes.ids(), &d).unwrap(), vec![0, 1, 1, 0, 0, 2, 1]);
        assert_eq!(tile_index(&classes, 100).unwrap(), redirect_index(&classes));
        assert!(tile_index(&classes, 0).is_err());
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(redirect_index_of(&[0, 5], 3).is_err());
        assert!(inverse(&[0, 0]).is_err());
        assert!(inverse(&[0, 2]).is_err());
        assert!(gather(&[1, 2], &[2]).is_err());
    }
}
