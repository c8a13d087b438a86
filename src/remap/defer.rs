//! Deferral: loops of at least `from` trips leave the kernel's first pass (their lanes idle
//! there) and run side by side in a second, dense pass (`DEFER` in
//! `shaders/micro/data_loop.wgsl`). Unlike a sort it needs no order of all elements: a few
//! rare long loops are all it has to move, and every subgroup of both passes runs loops of
//! one kind.

use super::gpu::equal_width;
use crate::divergence::{emulate_loops_with_idle_lanes, Divergence};
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
    if width == 0 {
        return Err(Error::invalid("warp width", "0; use the subgroup width (e.g. 32)"));
    }
    let (Some(&lo), Some(&hi)) = (trips.iter().min(), trips.iter().max()) else {
        return Ok(None);
    };
    let step = equal_width(lo, hi, classes);
    // Efficiency is work / (width × lock-step iterations), and the work does not change, so
    // the best threshold has the fewest lock-step iterations; the full emulation runs once.
    let mut best = (lockstep_iterations(trips, u32::MAX, width as usize), None);
    for k in 1..classes {
        let from = lo.saturating_add(step.saturating_mul(k));
        if from > hi {
            break;
        }
        let steps = lockstep_iterations(trips, from, width as usize);
        if steps < best.0 {
            best = (steps, Some(from));
        }
    }
    match best.1 {
        Some(from) => Ok(Some((from, emulate_loops_with_idle_lanes(&deferred_trips(trips, from), width)?))),
        None => Ok(None),
    }
}

/// Σ over the warps of both passes of their longest loop, for deferral from `from` trips.
fn lockstep_iterations(trips: &[u32], from: u32, width: usize) -> u64 {
    let first: u64 = trips.chunks(width).map(|w| w.iter().filter(|&&t| t < from).max().copied().unwrap_or(0) as u64).sum();
    let (mut second, mut in_warp, mut warp_max) = (0u64, 0usize, 0u32);
    for &t in trips.iter().filter(|&&t| t >= from) {
        warp_max = warp_max.max(t);
        in_warp += 1;
        if in_warp == width {
            second += warp_max as u64;
            (in_warp, warp_max) = (0, 0);
        }
    }
    first + second + warp_max as u64
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
        let before = crate::divergence::emulate_loops(&trips, 8).unwrap().simt_efficiency();
        assert!(before < 0.2 && d.simt_efficiency() > 0.85, "{before} -> {}", d.simt_efficiency());
        assert_eq!(d.divergent_warps, 0, "idle lanes do not diverge the loop");
        // the fast count agrees with the emulation it stands for
        for from in [5, 50, 100, 101, u32::MAX] {
            let d = emulate_loops_with_idle_lanes(&deferred_trips(&trips, from), 8).unwrap();
            assert_eq!(lockstep_iterations(&trips, from, 8), d.totals().taken_steps, "from {from}");
        }
        assert!(best_defer_threshold(&trips, 0, 10).is_err());
        // nothing to gain: no threshold
        assert!(best_defer_threshold(&[7; 64], 8, 10).unwrap().is_none());
        assert!(best_defer_threshold(&[], 8, 10).unwrap().is_none());
        assert!(best_defer_threshold(&trips, 8, 0).is_err());
    }
}
