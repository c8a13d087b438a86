//! Deferral: loops of at least `from` trips leave the kernel's first pass (their lanes idle
//! there) and run side by side in a second, dense pass (`DEFER` in
//! `shaders/micro/data_loop.wgsl`). Unlike a sort it needs no order of all elements: a few
//! rare long loops are all it has to move, and every subgroup of both passes runs loops of
//! one kind.

use super::gpu::equal_width;
use crate::divergence::{emulate_loops, emulate_loops_with_idle_lanes, Divergence};
use crate::error::{Error, Result};

/// The trip counts SIMT lanes see under deferral: the first pass in thread order with the
/// deferred lanes idle (None), then the deferred loops packed in element order. (On the GPU
/// each workgroup appends its deferred loops in one block, so their order follows the
/// workgroups' arrival: the same loops, grouped a little differently when they differ.)
/// Emulate it with [`emulate_loops_with_idle_lanes`].
pub fn deferred_trips(trips: &[u32], from: u32) -> Vec<Option<u32>> {
    let mut out: Vec<Option<u32>> = trips.iter().map(|&t| (t < from).then_some(t)).collect();
    out.extend(trips.iter().filter(|&&t| t >= from).map(|&t| Some(t)));
    out
}

/// The deferral threshold worth using on `trips` at subgroup `width`: of the boundaries of
/// `classes` equal-width trip classes, the one whose deferral gives the highest emulated SIMT
/// efficiency, with its divergence. None when no boundary beats running every loop in place.
pub fn best_defer_threshold(trips: &[u32], width: u32, classes: u32) -> Result<Option<(u32, Divergence)>> {
    if classes == 0 {
        return Err(Error::invalid("deferral classes", "0; use at least 2 trip classes"));
    }
    let (Some(&lo), Some(&hi)) = (trips.iter().min(), trips.iter().max()) else {
        return Ok(None);
    };
    let step = equal_width(lo, hi, classes);
    let mut best: Option<(u32, Divergence)> = None;
    let mut best_efficiency = emulate_loops(trips, width)?.simt_efficiency();
    for k in 1..classes {
        let from = lo.saturating_add(step.saturating_mul(k));
        if from > hi {
            break;
        }
        let d = emulate_loops_with_idle_lanes(&deferred_trips(trips, from), width)?;
        if d.simt_efficiency() > best_efficiency {
            best_efficiency = d.simt_efficiency();
            best = Some((from, d));
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deferred_lanes_idle_in_place_and_run_packed_after() {
        let s = Some;
        assert_eq!(deferred_trips(&[1, 9, 2, 8, 1], 8), vec![s(1), None, s(2), None, s(1), s(9), s(8)]);
        assert_eq!(deferred_trips(&[1, 2], 3), vec![s(1), s(2)], "nothing deferred");
        assert_eq!(deferred_trips(&[5, 5], 0), vec![None, None, s(5), s(5)], "everything deferred");
    }

    #[test]
    fn the_threshold_separates_one_long_lane_per_warp() {
        // one lane in 8 runs 100 trips, the others 4: defer the long ones and both passes
        // are uniform but for the idle lanes
        let trips: Vec<u32> = (0..64).map(|i| if i % 8 == 3 { 100 } else { 4 }).collect();
        let (from, d) = best_defer_threshold(&trips, 8, 10).unwrap().unwrap();
        assert!(from > 4 && from <= 100, "{from}");
        let before = emulate_loops(&trips, 8).unwrap().simt_efficiency();
        assert!(before < 0.2 && d.simt_efficiency() > 0.85, "{before} -> {}", d.simt_efficiency());
        assert_eq!(d.divergent_warps, 0, "idle lanes do not diverge the loop");
        // nothing to gain: no threshold
        assert!(best_defer_threshold(&[7; 64], 8, 10).unwrap().is_none());
        assert!(best_defer_threshold(&[], 8, 10).unwrap().is_none());
        assert!(best_defer_threshold(&trips, 8, 0).is_err());
    }
}
