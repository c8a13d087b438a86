//! Host emulation of lock-step execution at a chosen warp width.

use super::{Divergence, SiteCounters};
use crate::error::{Error, Result};

fn check_width(width: u32) -> Result<()> {
    if width == 0 || width > 128 {
        return Err(Error::invalid("warp width", format!("{width} (use 1..=128; NVIDIA 32, AMD 32/64)")));
    }
    Ok(())
}

/// Emulates `if` sites: `paths[t]` holds thread t's path vector, bit k = outcome of condition k
/// (each condition evaluated once per thread by all lanes), for `sites` conditions (≤ 32).
pub fn emulate_paths(paths: &[u32], sites: usize, width: u32) -> Result<Divergence> {
    check_width(width)?;
    if sites > 32 {
        return Err(Error::invalid("path vector", format!("{sites} conditions; at most 32 fit in a path vector")));
    }
    let mut out = Divergence { width, sites: vec![SiteCounters::default(); sites], ..Default::default() };
    for warp in paths.chunks(width as usize) {
        let mut warp_div = 0u32;
        let (mut lanes, mut steps) = (0u64, 0u64);
        for (k, site) in out.sites.iter_mut().enumerate() {
            let taken = warp.iter().filter(|&&p| p >> k & 1 == 1).count() as u64;
            let divergent = taken != 0 && taken != warp.len() as u64;
            site.evaluations += 1;
            site.divergent += divergent as u64;
            site.taken_steps += (taken > 0) as u64;
            site.taken_lanes += taken;
            warp_div += divergent as u32;
            lanes += taken;
            steps += (taken > 0) as u64;
        }
        let differ = warp.iter().any(|&p| p != warp[0]);
        out.divergent_warps += differ as u64;
        out.warps += 1;
        out.per_warp_divergent.push(warp_div);
        out.per_warp_efficiency.push(lane_fraction(lanes, steps, width));
    }
    Ok(out)
}

/// Emulates one loop site: `trips[t]` is thread t's trip count. The loop test is evaluated by
/// the still-active lanes of a warp at each step until all have left: max(trips)+1 evaluations.
pub fn emulate_loops(trips: &[u32], width: u32) -> Result<Divergence> {
    check_width(width)?;
    Ok(emulate_loop_warps(trips.chunks(width as usize).map(|w| w.iter().copied()), width))
}

/// As [`emulate_loops`], where a `None` lane does not reach the loop (it took another branch,
/// e.g. its loop was deferred): it never evaluates the test and counts as a lost lane. A warp
/// whose lanes all skip the loop is no warp of this site.
pub fn emulate_loops_with_idle_lanes(lanes: &[Option<u32>], width: u32) -> Result<Divergence> {
    check_width(width)?;
    Ok(emulate_loop_warps(lanes.chunks(width as usize).map(|w| w.iter().flatten().copied()), width))
}

/// One loop site over warps given as the trip counts of their lanes that reach it.
fn emulate_loop_warps(warps: impl Iterator<Item = impl Iterator<Item = u32>>, width: u32) -> Divergence {
    let mut site = SiteCounters::default();
    let mut out = Divergence { width, ..Default::default() };
    let mut sorted = Vec::with_capacity(width as usize);
    for warp in warps {
        sorted.clear();
        sorted.extend(warp);
        if sorted.is_empty() {
            continue;
        }
        sorted.sort_unstable();
        let max = *sorted.last().unwrap_or(&0) as u64;
        // Distinct trip counts below the max each end one divergent evaluation (some lanes
        // leave while others stay); the final evaluation at `max` is uniform.
        let mut distinct_below_max = 0u64;
        for (i, &t) in sorted.iter().enumerate() {
            if (t as u64) < max && (i == 0 || sorted[i - 1] != t) {
                distinct_below_max += 1;
            }
        }
        let taken: u64 = sorted.iter().map(|&t| t as u64).sum();
        site.evaluations += max + 1;
        site.divergent += distinct_below_max;
        site.taken_steps += max;
        site.taken_lanes += taken;
        out.divergent_warps += (distinct_below_max > 0) as u64;
        out.warps += 1;
        out.per_warp_divergent.push(distinct_below_max as u32);
        out.per_warp_efficiency.push(lane_fraction(taken, max, width));
    }
    out.sites.push(site);
    out
}

fn lane_fraction(lanes: u64, steps: u64, width: u32) -> f32 {
    if steps == 0 {
        1.0
    } else {
        (lanes as f64 / (steps as f64 * width as f64)) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_one_long_lane_per_warp() {
        // width 4: trips [1,1,1,9] -> 10 evaluations, 2 divergent? no: distinct below max = {1} -> 1
        let d = emulate_loops(&[1, 1, 1, 9, 2, 2, 2, 2], 4).unwrap();
        let s = d.sites[0];
        assert_eq!(s.evaluations, 10 + 3);
        assert_eq!(s.divergent, 1);
        assert_eq!(s.taken_steps, 9 + 2);
        assert_eq!(s.taken_lanes, 12 + 8);
        assert!((d.simt_efficiency() - 20.0 / 44.0).abs() < 1e-12);
        assert_eq!(d.divergence_ratio(), 0.5);
        // idle lanes do not evaluate the test: no divergence, but they are lost lanes
        let idle = emulate_loops_with_idle_lanes(&[Some(2), None, Some(2), Some(2), None, None, None, None], 4).unwrap();
        assert_eq!((idle.warps, idle.divergent_warps, idle.sites[0].evaluations), (1, 0, 3));
        assert!((idle.simt_efficiency() - 0.75).abs() < 1e-12);
        assert_eq!(d.per_warp_divergent, vec![1, 0]);
    }

    #[test]
    fn loop_partial_last_warp_counts_missing_lanes_as_idle() {
        let d = emulate_loops(&[3, 3, 3], 4).unwrap();
        assert_eq!(d.sites[0].taken_steps, 3);
        assert!((d.simt_efficiency() - 0.75).abs() < 1e-12);
        assert_eq!(d.divergence_ratio(), 0.0);
    }

    #[test]
    fn paths_count_divergent_sites_and_warps() {
        // two conditions; warp 0 agrees on bit 1 but not bit 0; warp 1 uniform
        let d = emulate_paths(&[0b10, 0b11, 0b10, 0b10, 0b01, 0b01, 0b01, 0b01], 2, 4).unwrap();
        assert_eq!(d.sites[0].divergent, 1);
        assert_eq!(d.sites[1].divergent, 0);
        assert_eq!(d.sites[0].taken_lanes, 1 + 4);
        assert_eq!(d.divergent_warps, 1);
        assert_eq!(d.branch_efficiency(), 0.75);
    }

    #[test]
    fn bad_width_is_an_error() {
        assert!(emulate_loops(&[1], 0).is_err());
        assert!(emulate_paths(&[1], 33, 8).is_err());
    }
}
