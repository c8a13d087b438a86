//! Data layout transformation planned with LAM, label-assign-move (Zhang et al. §4.2,
//! Figure 5): a layout in which most warp segments are *pure* (one class only), reached by
//! moving as few elements as possible.
//!
//! - **Label**: class c may fill `quota = floor(n_c / W)` whole warps. Each full warp segment
//!   of the original array is labelled with its dominant class (ties: the lower class id)
//!   while that class has quota left, else MIXED. Locations in a labelled segment holding another class are *openings*
//!   (the paper's toFill list). The partial last segment is always MIXED.
//! - **Quota completion** (beyond the paper): the paper's labelling can leave a class short of
//!   its quota when its dominant segments came after the quota was spent elsewhere; its
//!   elements then scatter over mixed warps. Leftover quotas are therefore given to MIXED
//!   full segments, preferring the segment where the class is most present, so every class
//!   fills exactly `floor(n_c / W)` pure warps.
//! - **Assign**: elements at openings must move; each goes to an opening of its own class if
//!   one is left, else to the *toMix* list. Then elements of MIXED segments fill the
//!   remaining openings, and each place they vacate receives the next toMix element.
//! - **Move**: only elements whose destination differs from their position are copied.
//!
//! Every element of a class-c pure segment stays or arrives from elsewhere, and openings of
//! class c never outnumber the class-c elements outside its pure segments, so the assignment
//! always completes: the destination array is a permutation.

use serde::Serialize;

use super::classes::{class_sizes, Classes};
use super::control::Deadline;
use crate::error::{Error, Result};

/// Segments planned between two deadline checks: keeps the clock off the hot loop.
const SEGMENTS_PER_DEADLINE_CHECK: usize = 4096;

/// Label of one warp segment of the original array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// After the move, the segment holds only elements of this class.
    Pure(u32),
    /// The segment receives the leftovers of all classes.
    Mixed,
}

/// A LAM layout: element i of the original array moves to `destination()[i]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LamPlan {
    destination: Vec<u32>,
    labels: Vec<Label>,
    moved: usize,
    width: u32,
}

impl LamPlan {
    /// Plans the layout for warps (segments) of `width` elements.
    pub fn new(classes: &Classes, width: u32) -> Result<LamPlan> {
        check_width(width)?;
        plan(classes.ids(), classes.sizes(), width as usize, None).ok_or_else(unreachable_deadline)
    }

    /// [`LamPlan::new`] for class ids computed elsewhere; `count` is the number of classes.
    pub fn from_ids(ids: &[u32], count: usize, width: u32) -> Result<LamPlan> {
        check_width(width)?;
        if u32::try_from(ids.len()).is_err() {
            return Err(Error::invalid("element count", format!("{} elements do not fit u32 positions", ids.len())));
        }
        let sizes = class_sizes(ids, count)?;
        plan(ids, &sizes, width as usize, None).ok_or_else(unreachable_deadline)
    }

    /// As [`LamPlan::new`], but gives up (returns `None`) once `deadline` has passed: a plan
    /// that can no longer pay for itself is abandoned rather than finished.
    pub fn build_until(classes: &Classes, width: u32, deadline: &Deadline) -> Result<Option<LamPlan>> {
        check_width(width)?;
        Ok(plan(classes.ids(), classes.sizes(), width as usize, Some(deadline)))
    }

    /// Where each original element goes (a permutation of `0..n`).
    pub fn destination(&self) -> &[u32] {
        &self.destination
    }

    /// Label of each warp segment, `ceil(n / width)` of them.
    pub fn labels(&self) -> &[Label] {
        &self.labels
    }

    /// Elements whose destination differs from their position: the copies the move makes.
    pub fn moved(&self) -> usize {
        self.moved
    }

    /// Warp (segment) width the layout was planned for.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Number of elements the plan covers.
    pub fn len(&self) -> usize {
        self.destination.len()
    }

    /// True when the plan covers no elements.
    pub fn is_empty(&self) -> bool {
        self.destination.is_empty()
    }

    /// Pure warps of each class (`floor(n_c / width)` by construction).
    pub fn pure_warps(&self, classes: usize) -> Vec<usize> {
        let mut counts = vec![0usize; classes];
        for label in &self.labels {
            if let Label::Pure(c) = *label {
                if let Some(n) = counts.get_mut(c as usize) {
                    *n += 1;
                }
            }
        }
        counts
    }

    /// The new layout of `data` (an input array of the kernel).
    pub fn permute<T: Copy>(&self, data: &[T]) -> Result<Vec<T>> {
        self.check_len(data.len(), "permute")?;
        // Writing every element is cheaper than testing each one for a move: the unmoved
        // majority writes in order, and a data-dependent branch mispredicts on every stray.
        let mut out = data.to_vec();
        for (&d, &x) in self.destination.iter().zip(data) {
            out[d as usize] = x;
        }
        Ok(out)
    }

    /// The original order of `data` (an output array of the kernel run on the new layout):
    /// `restore(permute(x)) == x`.
    pub fn restore<T: Copy>(&self, data: &[T]) -> Result<Vec<T>> {
        self.check_len(data.len(), "restore")?;
        Ok(self.destination.iter().map(|&d| data[d as usize]).collect())
    }

    /// The equivalent redirect index (thread t works on original element `index()[t]`), for
    /// running the LAM layout through an index buffer instead of moving data.
    pub fn index(&self) -> Vec<u32> {
        let mut index = vec![0u32; self.destination.len()];
        for (i, &d) in self.destination.iter().enumerate() {
            index[d as usize] = i as u32;
        }
        index
    }

    fn check_len(&self, len: usize, what: &str) -> Result<()> {
        if len != self.destination.len() {
            return Err(Error::invalid(
                format!("LAM {what}"),
                format!("array of {len} elements, but the plan covers {}", self.destination.len()),
            ));
        }
        Ok(())
    }
}

fn check_width(width: u32) -> Result<()> {
    if width == 0 {
        return Err(Error::invalid("warp width", "0; use the subgroup size (32 on NVIDIA, 32 or 64 on AMD)"));
    }
    Ok(())
}

fn unreachable_deadline() -> Error {
    Error::invalid("LAM plan", "stopped without a deadline")
}

/// Per-class counts of one warp segment.
struct Coverage {
    /// Four interleaved counters per class: consecutive elements of one class would otherwise
    /// chain every increment on the previous store.
    counts: Vec<[u32; 4]>,
    /// Few classes: scan all of them for the maximum instead of revisiting the segment.
    scan_classes: bool,
}

impl Coverage {
    fn new(classes: usize, width: usize) -> Coverage {
        Coverage { counts: vec![[0; 4]; classes], scan_classes: classes <= width }
    }

    /// Most frequent class among those `eligible` in `segment` and its count ((0, 0) when
    /// none is); ties go to the lower class id.
    fn dominant(&mut self, segment: &[u32], eligible: impl Fn(u32) -> bool) -> (u32, u32) {
        let mut quads = segment.chunks_exact(4);
        for q in &mut quads {
            self.counts[q[0] as usize][0] += 1;
            self.counts[q[1] as usize][1] += 1;
            self.counts[q[2] as usize][2] += 1;
            self.counts[q[3] as usize][3] += 1;
        }
        quads.remainder().iter().for_each(|&c| self.counts[c as usize][0] += 1);

        let (mut best, mut best_count) = (0u32, 0u32);
        if self.scan_classes {
            for (c, k) in self.counts.iter_mut().enumerate() {
                let total = k.iter().sum::<u32>();
                if total > best_count && eligible(c as u32) {
                    (best, best_count) = (c as u32, total);
                }
                *k = [0; 4];
            }
        } else {
            for &c in segment {
                let total = self.counts[c as usize].iter().sum::<u32>();
                if (total > best_count || (total == best_count && c < best)) && eligible(c) {
                    (best, best_count) = (c, total);
                }
            }
            segment.iter().for_each(|&c| self.counts[c as usize] = [0; 4]);
        }
        (best, best_count)
    }
}

/// The whole LAM scheme; `None` only when `deadline` expires. `ids` must be below
/// `sizes.len()`, `sizes` their populations, and `ids.len() <= u32::MAX`.
fn plan(ids: &[u32], sizes: &[usize], width: usize, deadline: Option<&Deadline>) -> Option<LamPlan> {
    let n = ids.len();
    let full = n / width;
    let segments = n.div_ceil(width);
    let expired = |segment: usize| segment.is_multiple_of(SEGMENTS_PER_DEADLINE_CHECK) && deadline.is_some_and(|d| d.expired());

    // ---- label
    let mut quota: Vec<usize> = sizes.iter().map(|&s| s / width).collect();
    let mut quota_left: usize = quota.iter().sum();
    let mut labels = vec![Label::Mixed; segments];
    // openings[c]: locations in class-c segments that another class occupies
    let mut openings = vec![0usize; sizes.len()];
    let mut coverage = Coverage::new(sizes.len(), width);

    for (s, label) in labels.iter_mut().enumerate().take(full) {
        if expired(s) {
            return None;
        }
        let (best, best_count) = coverage.dominant(&ids[s * width..(s + 1) * width], |_| true);
        if quota[best as usize] > 0 {
            quota[best as usize] -= 1;
            quota_left -= 1;
            *label = Label::Pure(best);
            openings[best as usize] += width - best_count as usize;
        }
    }

    // ---- quota completion: Σ floor(n_c/W) <= floor(n/W), so enough MIXED full segments remain
    if quota_left > 0 {
        for (s, label) in labels.iter_mut().enumerate().take(full) {
            if quota_left == 0 {
                break;
            }
            if *label != Label::Mixed {
                continue;
            }
            let (best, best_count) = coverage.dominant(&ids[s * width..(s + 1) * width], |c| quota[c as usize] > 0);
            if best_count > 0 {
                quota[best as usize] -= 1;
                quota_left -= 1;
                *label = Label::Pure(best);
                openings[best as usize] += width - best_count as usize;
            }
        }
        // Classes absent from every remaining MIXED segment take any of them.
        let mut class = 0usize;
        for label in labels.iter_mut().take(full) {
            if quota_left == 0 {
                break;
            }
            if *label != Label::Mixed {
                continue;
            }
            while quota[class] == 0 {
                class += 1;
            }
            quota[class] -= 1;
            quota_left -= 1;
            *label = Label::Pure(class as u32);
            openings[class] += width;
        }
    }

    // ---- openings (toFill), grouped by class in segment order, in one flat array. Each class
    // region has one spare slot so the fill below can write unconditionally (random strays
    // make a branch per element mispredict often); the occupant's class is kept alongside so
    // the assign step reads sequentially instead of gathering from `ids`.
    let mut start = Vec::with_capacity(sizes.len());
    let mut region = 0usize;
    for &o in &openings {
        start.push(region);
        region += o + 1;
    }
    let mut open = vec![0u32; region];
    let mut open_class = vec![0u32; region];
    let mut filled = start.clone();
    for (s, label) in labels.iter().enumerate() {
        if let Label::Pure(c) = *label {
            let mut cursor = filled[c as usize];
            for (j, &id) in ids[s * width..(s + 1) * width].iter().enumerate() {
                open[cursor] = (s * width + j) as u32;
                open_class[cursor] = id;
                cursor += (id != c) as usize;
            }
            filled[c as usize] = cursor;
        }
    }
    if deadline.is_some_and(|d| d.expired()) {
        return None;
    }

    // ---- assign. `destination` has one spare entry, the target of the unconditional write
    // below once every displaced element is placed; it is dropped at the end.
    let mut destination: Vec<u32> = (0..=n as u32).collect();
    let end: Vec<usize> = start.iter().zip(&openings).map(|(&s, &o)| s + o).collect();
    // next[c]: next untaken opening of class c
    let mut next = start.clone();
    let mut unfilled: usize = openings.iter().sum();
    let total_openings = unfilled;
    let mut to_mix: Vec<u32> = Vec::with_capacity(total_openings + 1);
    for c in 0..sizes.len() {
        for k in start[c]..end[c] {
            let (from, l) = (open[k], open_class[k] as usize);
            if next[l] < end[l] {
                destination[from as usize] = open[next[l]];
                next[l] += 1;
                unfilled -= 1;
            } else {
                to_mix.push(from);
            }
        }
    }
    let mixed_needed = to_mix.len();
    to_mix.push(n as u32);
    let mut mixed_taken = 0usize;
    'segments: for (s, label) in labels.iter().enumerate() {
        if unfilled == 0 {
            break;
        }
        if *label != Label::Mixed {
            continue;
        }
        if expired(s) {
            return None;
        }
        let first = s * width;
        for (j, &id) in ids[first..n.min(first + width)].iter().enumerate() {
            let c = id as usize;
            let from = (first + j) as u32;
            // Branch-free: when class c has no opening left, the element stays, the write to
            // `to_mix[mixed_taken]` is overwritten by that element's real move later (or lands
            // in the spare entry), and nothing advances.
            let take = next[c] < end[c];
            destination[from as usize] = if take { open[next[c]] } else { from };
            destination[to_mix[mixed_taken] as usize] = from;
            next[c] += take as usize;
            mixed_taken += take as usize;
            unfilled -= take as usize;
            if unfilled == 0 {
                break 'segments;
            }
        }
    }
    debug_assert_eq!(unfilled, 0);
    debug_assert_eq!(mixed_taken, mixed_needed);
    destination.truncate(n);

    Some(LamPlan { destination, labels, moved: total_openings + mixed_taken, width: width as u32 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pure_segments_keep_their_elements_and_take_the_rest_from_mixed_ones() {
        // W=4: segment 0 mostly class 0, segment 1 mostly class 1, segment 2 (partial) mixed
        let ids = [0, 0, 1, 0, 1, 1, 0, 1, 0, 1];
        let plan = LamPlan::from_ids(&ids, 2, 4).unwrap();
        assert_eq!(plan.labels(), &[Label::Pure(0), Label::Pure(1), Label::Mixed]);
        let after = plan.permute(&ids).unwrap();
        assert_eq!(&after[..8], &[0, 0, 0, 0, 1, 1, 1, 1]);
        // the two foreign elements swap; nothing else moves
        assert_eq!(plan.moved(), 2);
        assert_eq!(plan.restore(&after).unwrap(), ids);
    }

    #[test]
    fn quota_completion_gives_a_class_its_warps_even_when_it_never_dominates() {
        // W=2: the paper's labelling gives class 0 both segments' turns and class 1 none
        let ids = [0, 1, 0, 1];
        let plan = LamPlan::from_ids(&ids, 2, 2).unwrap();
        assert_eq!(plan.pure_warps(2), vec![1, 1]);
        assert_eq!(plan.permute(&ids).unwrap(), vec![0, 0, 1, 1]);
    }

    #[test]
    fn leftovers_go_through_mixed_warps() {
        // class 2 is only in the first segment, which class 0 claims; it moves to the mixed warp
        let ids = [0, 0, 2, 0, 1, 1, 1, 1, 0, 1, 0];
        let plan = LamPlan::from_ids(&ids, 3, 4).unwrap();
        let after = plan.permute(&ids).unwrap();
        assert_eq!(&after[..8], &[0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(&after[8..], &[2, 1, 0]);
        assert_eq!(plan.moved(), 2);
    }

    #[test]
    fn index_matches_the_layout() {
        let ids = [1, 0, 1, 0, 0, 1, 1, 0];
        let plan = LamPlan::from_ids(&ids, 2, 4).unwrap();
        let data: Vec<u32> = (100..108).collect();
        let through_index: Vec<u32> = plan.index().iter().map(|&i| data[i as usize]).collect();
        assert_eq!(through_index, plan.permute(&data).unwrap());
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(LamPlan::from_ids(&[0, 1], 2, 0).is_err());
        assert!(LamPlan::from_ids(&[0, 2], 2, 4).is_err());
        let plan = LamPlan::from_ids(&[0, 1], 2, 4).unwrap();
        assert!(plan.permute(&[1u8]).is_err());
        assert!(plan.restore(&[1u8, 2, 3]).is_err());
    }

    #[test]
    fn an_expired_deadline_abandons_the_plan() {
        let classes = Classes::from_ids(vec![0, 1, 0, 1], 2).unwrap();
        assert!(LamPlan::build_until(&classes, 2, &Deadline::after_s(0.0)).unwrap().is_none());
        assert!(LamPlan::build_until(&classes, 2, &Deadline::none()).unwrap().is_some());
    }
}
